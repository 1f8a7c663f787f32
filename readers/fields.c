#include "readers/fields.h"

#include <string.h>

#include "common/le.h"
#include "readers/pyproc.h"
#include "common/banned.h"

int py_field_u64(struct pyproc *py, uint64_t obj, int off, uint64_t *out,
		 struct cs_err *err)
{
	int ret;

	*out = 0;
	if (off < 0)
		return 0;
	ret = memsrc_read_u64(py->ms, obj + (uint64_t)off, out, err);
	if (ret < 0) {
		*out = 0;
		return ret;
	}
	return 1;
}

int py_field_i32(struct pyproc *py, uint64_t obj, int off, int32_t *out,
		 struct cs_err *err)
{
	unsigned char b[4];
	int ret;

	*out = 0;
	if (off < 0)
		return 0;
	ret = memsrc_read(py->ms, obj + (uint64_t)off, b, sizeof(b), err);
	if (ret < 0)
		return ret;
	*out = le_i32(b);
	return 1;
}

int py_read_words(struct pyproc *py, uint64_t addr, uint64_t *out, size_t n,
		  struct cs_err *err)
{
	size_t i;
	int ret;

	/* Read into the array's own bytes, then decode each word in place. */
	ret = memsrc_read(py->ms, addr, out, n * 8, err);
	for (i = 0; ret == 0 && i < n; i++)
		out[i] = le_u64((const unsigned char *)&out[i]);
	return ret;
}
