/*
 * Unit tests for common/hugeheap.c, against the kernel's own account of
 * this process's memory (/proc/self/smaps): the heap above its first
 * page, its first huge page whole, and the mappings of hugeheap_map() are advised (VmFlags "hg"), aligned,
 * and where transparent huge pages are on, backed by huge pages.
 */
#include "common/hugeheap.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/strbuf.h"
#include "tests/unit/check.h"
#include "common/banned.h"

#define HUGE ((uintptr_t)2 << 20)

#ifdef __SANITIZE_ADDRESS__
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

struct vma {
	int found, advised;
	long huge_kb;
};

/* The smaps entry of the mapping holding addr. */
static struct vma vma_of(const void *addr)
{
	struct vma v = { 0, 0, 0 };
	char line[512];
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return v;
	while (fgets(line, sizeof(line), f)) {
		uintptr_t lo, hi;

		/* A mapping's first line; its fields follow. */
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) == 2) {
			if (in)
				break;
			in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
			v.found |= in;
			continue;
		}
		if (!in)
			continue;
		if (strncmp(line, "AnonHugePages:", 14) == 0)
			v.huge_kb = strtol(line + 14, NULL, 10);
		if (strncmp(line, "VmFlags:", 8) == 0)
			v.advised = strstr(line, " hg") != NULL;
	}
	fclose(f);
	return v;
}

/* kB on huge pages in all of malloc's heap (it is several mappings:
 * its first page apart, and each part as it is advised). */
static long heap_huge_kb(void)
{
	char line[512];
	long kb = 0;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		uintptr_t lo, hi;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) == 2)
			in = strstr(line, "[heap]") != NULL;
		else if (in && strncmp(line, "AnonHugePages:", 14) == 0)
			kb += strtol(line + 14, NULL, 10);
	}
	fclose(f);
	return kb;
}

/* Transparent huge pages given on advice ("always" or "madvise")? */
static int thp_on(void)
{
	char buf[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
	}
	return strstr(buf, "[always]") || strstr(buf, "[madvise]");
}

static void test_heap(int thp)
{
	/* hugeheap_init() made malloc's first block, in the one page it
	 * left below a huge page boundary; what comes next is above it, in
	 * the part of the heap advised before anything touched it. */
	unsigned char *small = xmalloc(64), *next = xmalloc(8192);
	uintptr_t boundary = ((uintptr_t)small + HUGE - 1) & ~(HUGE - 1);
	struct vma v;

	CHECK(boundary - (uintptr_t)small < 4096,
	      "the heap's first block %p is not in the page below a huge page "
	      "boundary", (void *)small);
	small[0] = 1;
	memset(next, 1, 8192);
	v = vma_of(next + 4096);
	CHECK((uintptr_t)next + 4096 >= boundary && v.found && v.advised,
	      "the heap holding %p is not advised", (void *)(next + 4096));
	/* Nothing else of the heap is touched yet: the huge page there is
	 * the first one, whole (not faulted in page by page). */
	if (thp)
		CHECK(v.huge_kb >= 2048,
		      "the heap has %ld kB on huge pages", v.huge_kb);
	free(next);
	free(small);
}

/* Large blocks from the heap: calloc's and realloc's work done after the
 * advice (see hugeheap_heap_block()), with the same results. */
static void test_large_blocks(int thp)
{
	const size_t n = (size_t)24 << 20;  /* more than the heap has spare */
	unsigned char *small = xmalloc(100), *big, *grown;
	long before, after;
	size_t i, nonzero = 0;

	memset(small, 0xab, 100);
	before = heap_huge_kb();
	big = xcalloc(n / 8, 8);
	for (i = 0; i < n; i++)
		nonzero += big[i] != 0;
	CHECK(nonzero == 0, "%zu bytes of xcalloc() not zero", nonzero);
	after = heap_huge_kb();
	if (thp)
		CHECK(after >= before + 20480,
		      "xcalloc(24 MiB): %ld kB of the heap on huge pages, %ld "
		      "before", after, before);
	grown = xrealloc(small, (size_t)3 << 20);
	for (i = 0, nonzero = 0; i < 100; i++)
		nonzero += grown[i] != 0xab;
	CHECK(nonzero == 0, "xrealloc() lost %zu of 100 bytes", nonzero);
	free(grown);
	free(big);
}

static void test_map(int thp)
{
	static const size_t sizes[] = { 1, 4096, HUGE, HUGE + 1, 5 << 20 };
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = hugeheap_size(sizes[i]);
		unsigned char *p = hugeheap_map(sizes[i]);
		struct vma v;

		CHECK(n >= sizes[i] && n % HUGE == 0 && n - sizes[i] < HUGE,
		      "size %zu for %zu", n, sizes[i]);
		CHECK(p && (uintptr_t)p % HUGE == 0, "%p for %zu", (void *)p,
		      sizes[i]);
		if (!p)
			continue;
		CHECK(p[0] == 0 && p[n - 1] == 0, "not zeroed");
		memset(p, 7, n);
		v = vma_of(p);
		CHECK(v.found && v.advised, "mapping %p not advised", (void *)p);
		if (thp)
			CHECK(v.huge_kb == (long)(n >> 10),
			      "%ld of %zu kB on huge pages", v.huge_kb, n >> 10);
		CHECK(munmap(p, n) == 0, "munmap");
	}
	CHECK(hugeheap_map(SIZE_MAX) == NULL, "SIZE_MAX mapped");
}

/* Is [p, p + n) mapped?  (msync() fails with ENOMEM where it is not.) */
static int mapped(const void *p, size_t n)
{
	return msync((void *)p, n, MS_ASYNC) == 0;
}

/* Kept memory comes back as it was left, cut from the front of the
 * first range that fits; what cannot be noted is unmapped, and once all
 * is taken, a take maps new zeroed memory. */
static void test_keep(void)
{
	unsigned char *a = hugeheap_map(3 * HUGE), *b = hugeheap_map(HUGE);
	unsigned char *p, *q, *r, *fresh;
	unsigned char *extra[HUGEHEAP_KEPT_MAX + 1];
	size_t i, lost = 0;

	CHECK(hugeheap_kept() == 0, "%zu kept at the start", hugeheap_kept());
	CHECK(a && b, "hugeheap_map()");
	if (!a || !b)
		return;
	memset(a, 0xa1, 3 * HUGE);
	memset(b, 0xb2, HUGE);
	hugeheap_keep(a, 3 * HUGE);
	hugeheap_keep(b, HUGE);
	hugeheap_keep(NULL, HUGE);
	CHECK(hugeheap_kept() == 4 * HUGE, "%zu kept", hugeheap_kept());
	/* 2 MiB + 1 is two huge pages: a's first two. */
	p = hugeheap_take(HUGE + 1);
	CHECK(p == a, "%p taken, %p kept first", (void *)p, (void *)a);
	CHECK(p && p[0] == 0xa1 && p[2 * HUGE - 1] == 0xa1,
	      "kept bytes not left as they were");
	/* Two more do not fit a's last: they come from nowhere kept. */
	q = hugeheap_take(2 * HUGE);
	CHECK(q && q != a + 2 * HUGE && q != b && q[0] == 0 &&
	      q[2 * HUGE - 1] == 0, "2 huge pages: %p, not new", (void *)q);
	r = hugeheap_take(1);
	CHECK(r == a + 2 * HUGE, "%p, not a's last huge page", (void *)r);
	CHECK(hugeheap_take(HUGE) == b, "b not taken");
	CHECK(hugeheap_kept() == 0, "%zu still kept", hugeheap_kept());
	fresh = hugeheap_take(HUGE);
	CHECK(fresh && fresh[0] == 0 && fresh[HUGE - 1] == 0,
	      "nothing kept: not a new zeroed mapping");
	hugeheap_keep(fresh, HUGE);
	CHECK(hugeheap_kept() == HUGE, "%zu kept", hugeheap_kept());
	/* Past HUGEHEAP_KEPT_MAX ranges, what is kept is unmapped. */
	for (i = 0; i < HUGEHEAP_KEPT_MAX; i++) {
		extra[i] = hugeheap_map(HUGE);
		hugeheap_keep(extra[i], HUGE);
	}
	CHECK(hugeheap_kept() == HUGEHEAP_KEPT_MAX * HUGE, "%zu kept",
	      hugeheap_kept());
	CHECK(!mapped(extra[HUGEHEAP_KEPT_MAX - 1], HUGE),
	      "a range past the limit still mapped");
	for (i = 0; i < HUGEHEAP_KEPT_MAX - 1; i++)
		lost += !mapped(extra[i], HUGE);
	CHECK(lost == 0, "%zu kept ranges unmapped", lost);
	/* Bounded: every take empties one range of one huge page. */
	for (i = 0; i < HUGEHEAP_KEPT_MAX && hugeheap_kept(); i++)
		CHECK(munmap(hugeheap_take(HUGE), HUGE) == 0, "munmap");
	CHECK(hugeheap_kept() == 0, "%zu left kept", hugeheap_kept());
	munmap(p, 2 * HUGE);
	munmap(q, 2 * HUGE);
	munmap(r, HUGE);
	munmap(b, HUGE);
}

int main(void)
{
	int thp;

	hugeheap_init();
	thp = thp_on();
	if (!thp)
		printf("skip: huge page backing (transparent huge pages are "
		       "off here); alignment and advice still checked\n");
	if (SANITIZED)
		printf("skip: the heap (AddressSanitizer's malloc has its "
		       "own)\n");
	else
		test_heap(thp);
	test_large_blocks(thp && !SANITIZED);
	test_map(thp);
	test_keep();
	return CHECK_DONE("test_hugeheap");
}
