/*
 * The entries of a traceback as text (traceback.format_exception()'s
 * words): what a process pool's worker sends back with a job's
 * exception, its __cause__ a _RemoteTraceback (concurrent.futures) or a
 * RemoteTraceback (multiprocessing.pool) whose one argument is that
 * text.  The text comes from the target: every byte is untrusted, and
 * the entries point into it, lengths given.
 *
 * The text holds a block per exception of a chain ("Traceback (most
 * recent call last):", its entries, the exception's line), the cause's
 * before, and an exception group's block as "  + Exception Group
 * Traceback ..." with its lines after "  | ".  A message may quote
 * another traceback after the block's end.
 */
#ifndef COROSCOPE_READERS_REMOTE_TB_H
#define COROSCOPE_READERS_REMOTE_TB_H

#include <stddef.h>

struct remote_tb_entry {
	const char *file;          /* between `File "` and `", line ` */
	size_t file_len;
	const char *function;      /* after `, in `; length 0 when none */
	size_t function_len;
	long line;                 /* -1 when not a number */
	const char *source;        /* the next line's, its indent cut;
				      NULL when none */
	size_t source_len;
};

/*
 * The block of the exception itself: the last top-level block whose
 * closing line names type (its type's name, "ValueError": "ValueError:
 * x", "mod.ValueError: x", "ValueError"), else the last block.  The
 * blocks are the text's first and those a chain's separator line ("The
 * above exception was the direct cause ...", "During handling of the
 * above exception ...") comes before: a header right after a block is
 * in its message.  2 when a block names type, 1 when not (the last),
 * with *start its first line after the header and *prefix_len the
 * length of its lines' prefix (0, or 4 for a group's "  | "); 0 when
 * the text has no block.
 */
int remote_tb_block(const char *text, const char *end, const char *type,
		    const char **start, size_t *prefix_len);

/*
 * The next entry of the block at *pos (`  File "F", line N, in NAME`
 * and the source line under it), up to end: 1 and *pos past it, or 0 at
 * the block's end (*pos then at the first line that is no entry,
 * source, caret or "[Previous line repeated ...]", its closing line,
 * or at end when there is none).  A file name holding `", line ` is
 * cut at the last one of its line; one holding a newline is cut there,
 * its entry's line -1 and function empty, and the block ends there.
 * Each call moves *pos on by a line at least.
 */
int remote_tb_next(const char **pos, const char *end, size_t prefix_len,
		   struct remote_tb_entry *out);

#endif
