#include "common/hugeheap.h"

#include <malloc.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/banned.h"

#define HUGE_PAGE ((uintptr_t)2 << 20)
/* glibc's largest mmap threshold on 64-bit: blocks below it come from
 * the heap. */
#define MMAP_THRESHOLD (32 << 20)
/* The heap grows by at least this much beyond what is asked... */
#define TOP_PAD (16 << 20)
/* ...and is trimmed only when this much is free at its top. */
#define TRIM_THRESHOLD (256 << 20)
/* Blocks this large mapped apart are advised on their own. */
#define BLOCK_ADVICE ((size_t)8 << 20)

static uintptr_t advised_end;  /* the heap is advised up to here */
static int enabled;

static uintptr_t up(uintptr_t a) { return (a + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1); }
static uintptr_t down(uintptr_t a) { return a & ~(HUGE_PAGE - 1); }

void hugeheap_init(void)
{
	void *brk = sbrk(0);

	if (brk == (void *)-1)
		return;
	(void)mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
	(void)mallopt(M_TOP_PAD, TOP_PAD);
	(void)mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD);
	/* The heap's first huge page boundary: below it, what the loader
	 * and libc placed there already. */
	advised_end = up((uintptr_t)brk);
	enabled = 1;
}

void hugeheap_grew(void)
{
	void *brk;
	uintptr_t end;

	if (!enabled)
		return;
	brk = sbrk(0);
	if (brk == (void *)-1)
		return;
	end = down((uintptr_t)brk);
	if (end <= advised_end)
		return;
	(void)madvise((void *)advised_end, end - advised_end, MADV_HUGEPAGE);
	advised_end = end;
}

void hugeheap_advise_block(void *p, size_t n)
{
	uintptr_t start = up((uintptr_t)p), end = down((uintptr_t)p + n);

	if (n >= BLOCK_ADVICE && end > start)
		(void)madvise((void *)start, end - start, MADV_HUGEPAGE);
}
