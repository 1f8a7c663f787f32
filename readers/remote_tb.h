/*
 * The entries of a traceback as text (traceback.format_exception()'s
 * words): what a process pool's worker sends back with a job's
 * exception, its __cause__ a _RemoteTraceback (concurrent.futures) or a
 * RemoteTraceback (multiprocessing.pool) whose one argument is that
 * text.  The text comes from the target: every byte is untrusted, and
 * the entries point into it, lengths given.
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
 * The next entry (`  File "F", line N, in NAME` and the source line
 * under it) at or after *pos, up to end: 1 and *pos past it, or 0 when
 * there is none.  A file name holding `", line ` is cut at the last
 * one of its line; one holding a newline is cut there, its entry's
 * line -1 and function empty (the rest of it, on the next line, is
 * not an entry).  Each call moves *pos on by a line at least.
 */
int remote_tb_next(const char **pos, const char *end,
		   struct remote_tb_entry *out);

#endif
