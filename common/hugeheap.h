/*
 * coroscope's own heap on huge pages.
 *
 * A dump of ten thousand tasks allocates some 20 MB of its own (the
 * generators, frames, hash maps and graph over them), each 4 KiB page
 * faulted in on first touch.  A page fault is not cheap anywhere and in
 * a virtual machine can cost 15 us (measured on the firecracker VM of
 * bench/README.md): 4,400 of them were 40 % of such a dump's time.  With
 * transparent huge pages set to "madvise", advised memory faults in
 * 2 MiB at a time instead.
 *
 * hugeheap_init() makes malloc take blocks up to 32 MiB from its heap
 * (for every thread: one arena), grow it in large steps and not give it
 * back; hugeheap_grew(), called after each allocation of the x*alloc
 * helpers, advises whatever part of the heap is new.  Larger blocks (mmap'd by malloc) are advised by
 * the helpers themselves.  Everything here is advice: where huge pages
 * are off, or malloc is another (a sanitizer's), nothing changes.
 */
#ifndef COROSCOPE_COMMON_HUGEHEAP_H
#define COROSCOPE_COMMON_HUGEHEAP_H

#include <stddef.h>

void hugeheap_init(void);
void hugeheap_grew(void);
/* Would a block of n bytes come from the heap and be large?  Then calloc
 * and realloc should not fill it themselves: they would touch the
 * heap's new part before hugeheap_grew() advised it, and it would stay
 * on small pages.  The helpers malloc, advise, then clear or copy. */
int hugeheap_heap_block(size_t n);
/* A new zeroed mapping of bytes rounded up to whole huge pages, aligned
 * to one and advised onto them: free it with munmap() of the rounded
 * size (hugeheap_size()).  NULL when the system has no memory left. */
void *hugeheap_map(size_t bytes);
size_t hugeheap_size(size_t bytes);
/* Advise the 2 MiB-aligned inside of the block [p, p + n) when it is
 * large (a block malloc mapped apart from its heap). */
void hugeheap_advise_block(void *p, size_t n);

/*
 * Memory already paid for.  A page the process touches for the first
 * time is cleared by the kernel, and in a virtual machine that gave its
 * free pages back to the host, also supplied again by the host: 0.1 to
 * 3 ms per MiB measured (bench/README.md), a third of a 10k-task JSON
 * dump.  Memory done with but still faulted in (the page cache's slabs
 * once nothing more is read, an output block once written) is kept
 * here, and a buffer whose contents do not matter is cut from it.
 */
/* Keep [mem, mem + bytes), whole huge pages from hugeheap_map() or
 * hugeheap_take(), for hugeheap_take(); unmapped instead when there is
 * no room to note it (HUGEHEAP_KEPT_MAX ranges), or when mem is not on a
 * huge page boundary (not such memory). */
#define HUGEHEAP_KEPT_MAX 64
void hugeheap_keep(void *mem, size_t bytes);
/* hugeheap_size(bytes) bytes (a huge page for 0) of kept memory, whose
 * contents are left over from its earlier use, or else a new mapping
 * (hugeheap_map()).
 * Free it with hugeheap_keep() or munmap() of that size.  NULL when the
 * system has no memory left. */
void *hugeheap_take(size_t bytes);
/* Bytes kept now. */
size_t hugeheap_kept(void);

#endif
