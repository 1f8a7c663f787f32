/*
 * pydeque_items() (readers/objects.c) on deques laid out by hand in a
 * byte image: items over several blocks from a first index past 0, the
 * bound of max, and the chains a hostile target can give (a block chain
 * that ends early, an index out of its block, a negative or huge size):
 * errors, never a read past them.
 */
#include "readers/objects.h"

#include <stdlib.h>
#include <string.h>

#include "attach/memsrc.h"
#include "readers/layout.h"
#include "readers/pyproc.h"
#include "tests/support/image_memsrc.h"
#include "tests/unit/check.h"

#define BASE IMAGE_BASE
#define SIZE (64 * 1024)
#define DEQUE (BASE + 0x100)
#define BLOCKS (BASE + 0x1000)     /* block k at BLOCKS + k * 0x400 */

static uint8_t image[SIZE];

static void put64(uint64_t addr, uint64_t v)
{
	memcpy(image + (addr - BASE), &v, 8);
}

/* A deque of n items 0x5000 + i from slot `first` of block 0 on; its
 * blocks linked in a row.  How many blocks it uses. */
static size_t make(const struct py_layout *L, int64_t n, uint64_t first)
{
	size_t blocklen = (size_t)(L->block_rightlink - L->block_data) / 8;
	size_t k = 0, at = (size_t)first, i;

	memset(image, 0, sizeof(image));
	put64(DEQUE + (uint64_t)L->ob_size, (uint64_t)n);
	put64(DEQUE + (uint64_t)L->deque_leftblock, BLOCKS);
	put64(DEQUE + (uint64_t)L->deque_leftindex, first);
	for (i = 0; i < (size_t)(n > 0 ? n : 0); i++) {
		uint64_t block = BLOCKS + k * 0x400;

		put64(block + (uint64_t)L->block_data + 8 * at, 0x5000 + i);
		if (++at == blocklen) {
			put64(block + (uint64_t)L->block_rightlink,
			      BLOCKS + (k + 1) * 0x400);
			k++;
			at = 0;
		}
	}
	return k + 1;
}

/* pydeque_items() over the image as it is now: a new memory source each
 * time (a source keeps the pages it read). */
static int items(uint64_t *out, size_t max, size_t *size)
{
	static struct image im = { image, SIZE };
	const struct py_layout *L = py_layout_for(3, 12, 0);
	struct memsrc *ms = calloc(1, sizeof(*ms));
	struct pyproc py;
	struct cs_err err;
	int ret;

	if (!ms)
		abort();
	memsrc_init(ms, &image_ops, &im);
	ms->maps = calloc(1, sizeof(*ms->maps));
	if (!ms->maps)
		abort();
	ms->nmaps = 1;
	ms->maps[0].start = BASE;
	ms->maps[0].end = BASE + SIZE;
	memcpy(ms->maps[0].perms, "rw-p", 5);
	memset(&py, 0, sizeof(py));
	py.ms = ms;
	py.layout = *L;
	py.major = 3;
	py.minor = 12;
	addrmap_init(&py.codes);
	addrmap_init(&py.strs);
	addrmap_init(&py.typenames);
	cs_err_init(&err);
	ret = pydeque_items(&py, DEQUE, out, max, size, &err);
	pyproc_release(&py);
	memsrc_free(ms);
	return ret;
}

int main(void)
{
	const struct py_layout *L = py_layout_for(3, 12, 0);
	uint64_t out[300];
	size_t size, i, nblocks;
	int ok;

	if (!L)
		abort();
	CHECK(L->block_rightlink - L->block_data == 64 * 8, "BLOCKLEN 64");
	/* 200 items from slot 60: over 5 blocks */
	nblocks = make(L, 200, 60);
	CHECK(nblocks == 5, "%zu blocks", nblocks);
	CHECK(items(out, 300, &size) == 0 && size == 200, "read 200");
	for (i = 0, ok = 1; i < 200; i++)
		ok &= out[i] == 0x5000 + i;
	CHECK(ok, "every item, in order");
	memset(out, 0, sizeof(out));
	CHECK(items(out, 10, &size) == 0 && size == 200 &&
	      out[9] == 0x5009 && out[10] == 0, "max 10: ten, size 200");
	make(L, 0, 0);
	CHECK(items(out, 300, &size) == 0 && size == 0, "empty");

	/* hostile: the chain ends early, the index is out of its block,
	 * the size is negative or too big */
	make(L, 200, 60);
	put64(BLOCKS + 2 * 0x400 + (uint64_t)L->block_rightlink, 0);
	CHECK(items(out, 300, &size) < 0, "chain ends early");
	make(L, 3, 0);
	put64(DEQUE + (uint64_t)L->deque_leftindex, 64);
	CHECK(items(out, 300, &size) < 0, "index past its block");
	make(L, 3, 0);
	put64(DEQUE + (uint64_t)L->ob_size, (uint64_t)-1);
	CHECK(items(out, 300, &size) < 0, "negative size");
	put64(DEQUE + (uint64_t)L->ob_size, 1ull << 40);
	CHECK(items(out, 300, &size) < 0, "huge size");
	make(L, 100, 0);
	put64(BLOCKS + (uint64_t)L->block_rightlink, BASE + SIZE + 0x1000);
	CHECK(items(out, 300, &size) < 0, "block outside memory");
	/* a cycle of blocks stops at max, not in an endless loop */
	make(L, 200, 0);
	put64(BLOCKS + 0x400 + (uint64_t)L->block_rightlink, BLOCKS);
	CHECK(items(out, 300, &size) == 0 && out[199] == 0x5000 + 199 - 128,
	      "cycle: bounded by the size");

	return CHECK_DONE("test_deque_items");
}
