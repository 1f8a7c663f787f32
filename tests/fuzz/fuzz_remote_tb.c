/*
 * libFuzzer harness for readers/remote_tb.c: the traceback text a
 * process pool's worker sends back with a job's exception, every byte
 * the target's.
 *
 * Input: the text.  Seeds: tests/fuzz/corpus/remote_tb/.
 *
 * Its block (remote_tb_block(), for a ValueError), then its entries.
 * Besides the sanitizers, it aborts when an answer breaks the contract:
 * a block outside the text, an entry's pieces outside it or holding a
 * line break, a line number other than -1 or a non-negative one, a call
 * that does not move on.
 */
#include "readers/remote_tb.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Is [p, p+n) within [base, end) and free of '\n'? */
static int piece_ok(const char *base, const char *end, const char *p,
		    size_t n)
{
	return p >= base && p <= end && n <= (size_t)(end - p) &&
	       !memchr(p, '\n', n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size ? size : 1);
	const char *pos, *end, *before;
	struct remote_tb_entry e;
	size_t n = 0, prefix = 0;

	if (!text)
		return 0;
	if (size)
		memcpy(text, data, size);
	end = text + size;
	if (!remote_tb_block(text, end, "ValueError", &pos, &prefix))
		pos = text;
	if (pos < text || pos > end || (prefix != 0 && prefix != 4))
		abort();
	for (before = pos; remote_tb_next(&pos, end, prefix, &e);
	     before = pos) {
		if (pos <= before || pos > end || ++n > size ||
		    !piece_ok(text, end, e.file, e.file_len) ||
		    !piece_ok(text, end, e.function, e.function_len) ||
		    (e.source && !piece_ok(text, end, e.source,
					   e.source_len)) ||
		    e.line < -1)
			abort();
	}
	if (pos < before || pos > end)
		abort();
	free(text);
	return 0;
}
