#include "common/hugeheap.h"

#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/banned.h"

#define HUGE_PAGE ((uintptr_t)2 << 20)
#define PAGE ((uintptr_t)4096)
/* glibc's largest mmap threshold on 64-bit: blocks below it come from
 * the heap. */
#define MMAP_THRESHOLD (32 << 20)
/* The heap grows by at least this much beyond what is asked... */
#define TOP_PAD (16 << 20)
/* ...and is trimmed only when this much is free at its top. */
#define TRIM_THRESHOLD (256 << 20)
/* Blocks this large from the heap are cleared or copied by the x*alloc
 * helpers after the heap's new part is advised (hugeheap_heap_block()). */
#define HEAP_BLOCK_MIN ((size_t)1 << 20)
/* Linux 6.1; older kernels refuse it (EINVAL), which costs nothing. */
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

/* The heap is advised up to here.  Atomic: the helper threads (the JSON
 * writer's and parts, cli/json.c) allocate too, if rarely. */
static _Atomic uintptr_t advised_end;
static int enabled;
/* The first huge page of the heap, which nothing touched before its
 * advice (hugeheap_init()). */
static uintptr_t fresh;

static uintptr_t up(uintptr_t a) { return (a + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1); }
static uintptr_t down(uintptr_t a) { return a & ~(HUGE_PAGE - 1); }

void hugeheap_init(void)
{
	void *brk = sbrk(0);
	void *volatile block;
	uintptr_t first;

	if (brk == (void *)-1)
		return;
	(void)mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
	(void)mallopt(M_TOP_PAD, TOP_PAD);
	(void)mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD);
	/* One arena: a helper thread's allocations would otherwise come
	 * from an arena of its own, mapped apart and on small pages, one
	 * fault per 4 KiB (some 300 of a 10k-task dump's 480).  The
	 * helpers allocate rarely (their small blocks come from their
	 * own caches), so sharing the heap's lock costs nothing. */
	(void)mallopt(M_ARENA_MAX, 1);
	/* Start malloc's heap one page below a huge page boundary.  The
	 * part of a huge page below the break (up to 2 MiB) can only have
	 * small pages, and malloc would fill it first, 4 KiB and one fault
	 * at a time (some 90 faults of a small dump); nothing ever touches
	 * the gap.  The one page left is for malloc's first writes, its
	 * first chunk and the header of the rest, made here before the
	 * heap above the boundary is advised: had they gone above it, the
	 * huge page there would have come in small, page by page (475
	 * faults of a 10k-task dump), and making it one huge page after
	 * the fact (MADV_COLLAPSE) takes 0.2-2 ms here.  Should malloc have
	 * begun already, it takes the moved break for another program's,
	 * and carries on past it. */
	first = up((uintptr_t)brk + PAGE) - PAGE;
	if ((uintptr_t)brk != first &&
	    sbrk((intptr_t)(first - (uintptr_t)brk)) != (void *)-1)
		brk = sbrk(0);
	fresh = up((uintptr_t)brk);
	atomic_store(&advised_end, fresh);
	enabled = 1;
	/* (Through a volatile: the compiler drops a malloc freed unused.) */
	block = malloc(1);
	free(block);
	hugeheap_grew();
	/* Not advised here (malloc began before, and its heap is below; or
	 * the heap did not grow): whatever first grows past the boundary
	 * may touch that huge page before its advice, as later parts. */
	if (atomic_load(&advised_end) <= fresh)
		fresh = 0;
}

void hugeheap_grew(void)
{
	void *brk;
	uintptr_t end, from;

	if (!enabled)
		return;
	brk = sbrk(0);
	if (brk == (void *)-1)
		return;
	end = down((uintptr_t)brk);
	from = atomic_load_explicit(&advised_end, memory_order_relaxed);
	/* Whoever moves advised_end advises what it passed over. */
	if (end <= from ||
	    !atomic_compare_exchange_strong(&advised_end, &from, end))
		return;
	(void)madvise((void *)from, end - from, MADV_HUGEPAGE);
	/* The first huge page of a later new part was touched before this
	 * advice: the blocks in the part below the break's last boundary,
	 * which the previous call left unadvised.  Those pages came in
	 * small, and with them the rest of their huge page would too, one
	 * fault per 4 KiB.  Make it one huge page now. */
	if (from != fresh)
		(void)madvise((void *)from, HUGE_PAGE, MADV_COLLAPSE);
}

int hugeheap_heap_block(size_t n)
{
	return enabled && n >= HEAP_BLOCK_MIN && n < MMAP_THRESHOLD;
}

size_t hugeheap_size(size_t bytes)
{
	return (size_t)up(bytes);
}

void *hugeheap_map(size_t bytes)
{
	uintptr_t start, end;
	unsigned char *mem;

	if (bytes > SIZE_MAX / 2)
		return NULL;
	bytes = hugeheap_size(bytes);
	/* A huge page's worth more, to cut an aligned block out of. */
	mem = mmap(NULL, bytes + HUGE_PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return NULL;
	start = up((uintptr_t)mem);
	end = start + bytes;
	if (start > (uintptr_t)mem)
		(void)munmap(mem, start - (uintptr_t)mem);
	if ((uintptr_t)mem + bytes + HUGE_PAGE > end)
		(void)munmap((void *)end,
			     (uintptr_t)mem + bytes + HUGE_PAGE - end);
	(void)madvise((void *)start, bytes, MADV_HUGEPAGE);
	return (void *)start;
}

void hugeheap_advise_block(void *p, size_t n)
{
	uintptr_t start = up((uintptr_t)p), end = down((uintptr_t)p + n);

	/* Only a block malloc mapped apart: one from the heap lies in what
	 * hugeheap_grew() advised (advising it again split and merged the
	 * heap's mapping for nothing, for every block of 8 to 32 MiB). */
	if (n >= MMAP_THRESHOLD && end > start)
		(void)madvise((void *)start, end - start, MADV_HUGEPAGE);
}

/* Kept ranges, in the order kept: taken from the front of the first
 * that fits (a slab's first pages are the ones faulted in).  The JSON
 * writer's and a part's threads keep and take too. */
static struct kept_range {
	uintptr_t start, end;
} kept[HUGEHEAP_KEPT_MAX];
static size_t nkept;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

void hugeheap_keep(void *mem, size_t bytes)
{
	uintptr_t start = (uintptr_t)mem;

	if (!mem || !bytes)
		return;
	bytes = hugeheap_size(bytes);
	pthread_mutex_lock(&kept_lock);
	if (nkept < HUGEHEAP_KEPT_MAX && start == up(start)) {
		kept[nkept].start = start;
		kept[nkept].end = start + bytes;
		nkept++;
		mem = NULL;
	}
	pthread_mutex_unlock(&kept_lock);
	if (mem)
		(void)munmap(mem, bytes);
}

void *hugeheap_take(size_t bytes)
{
	void *p = NULL;
	size_t i;

	if (bytes > SIZE_MAX / 2)
		return NULL;
	/* At least a huge page: no range is handed out while kept. */
	bytes = hugeheap_size(bytes ? bytes : 1);
	pthread_mutex_lock(&kept_lock);
	for (i = 0; i < nkept; i++) {
		struct kept_range *r = &kept[i];

		if (r->end - r->start < bytes)
			continue;
		p = (void *)r->start;
		r->start += bytes;
		if (r->start == r->end) {
			memmove(r, r + 1, (nkept - i - 1) * sizeof(*r));
			nkept--;
		}
		break;
	}
	pthread_mutex_unlock(&kept_lock);
	return p ? p : hugeheap_map(bytes);
}

size_t hugeheap_kept(void)
{
	size_t i, n = 0;

	pthread_mutex_lock(&kept_lock);
	for (i = 0; i < nkept; i++)
		n += kept[i].end - kept[i].start;
	pthread_mutex_unlock(&kept_lock);
	return n;
}
