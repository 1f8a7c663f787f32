#include "tests/support/image_memsrc.h"

#include <string.h>

static long image_read(struct memsrc *ms, uint64_t addr, void *buf,
		       size_t len, struct cs_err *err)
{
	const struct image *im = ms->backend;
	size_t off, n;

	(void)err;
	if (addr < IMAGE_BASE || addr - IMAGE_BASE >= im->size)
		return 0;
	off = (size_t)(addr - IMAGE_BASE);
	n = im->size - off < len ? im->size - off : len;
	memcpy(buf, im->data + off, n);
	return (long)n;
}

const struct memsrc_ops image_ops = { .read_raw = image_read };
