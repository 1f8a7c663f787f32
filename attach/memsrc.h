/*
 * A memory source: the one interface through which readers/ see a target.
 *
 * A source is either a live process (attach/live.c) or a core file
 * (attach/core.c).  Readers only call memsrc_read() and look at the
 * mapping and thread lists; they never know which backend they use and
 * never call ptrace.
 *
 * Reads go through a page cache kept here, in front of the backend: a
 * dump touches the same pages (code objects, strings, type objects) over
 * and over, and each miss is filled with one batched backend read of a
 * cluster of pages, so a dump costs few system calls.  The cache is
 * valid as long as the target does not run; a live source clears it when
 * it stops the target.
 *
 * A capture lets a stopped target run on before it is decoded: during
 * the stop, memsrc_capture() copies into the cache either every writable
 * mapping or only the pages of a plan, learnt from what an earlier pass
 * of the readers used (memsrc_plan_learn()).  The source is then
 * `frozen`: the readers see the stop's picture, served from the cache.
 * After a planned capture a read may need a writable page that was not
 * copied; it is read from the running target and counted in `missed`,
 * and the caller, which alone knows what the read was for, reads again
 * (see cli/collect.c).
 */
#ifndef COROSCOPE_ATTACH_MEMSRC_H
#define COROSCOPE_ATTACH_MEMSRC_H

#include <stddef.h>
#include <stdint.h>

#include "attach/regs.h"
#include "common/error.h"

/* One mapping of the target's address space (a /proc/PID/maps line, or a
 * core's PT_LOAD segment joined with its NT_FILE entry). */
struct cs_mapping {
	uint64_t start, end;   /* [start, end) */
	uint64_t offset;       /* file offset of start, when path is set */
	char perms[5];         /* "r-xp" */
	char *path;            /* as the target names it; NULL if anonymous */
	int deleted;           /* the file was deleted: path may be stale */
	/* Its file's device (major << 32 | minor) and inode, the same in
	 * every process mapping it whatever the path says (a live target's;
	 * 0 unknown: a core's, an anonymous mapping) */
	uint64_t dev, inode;
};

/* One thread of the target. */
struct cs_thread {
	int tid;                /* kernel thread id, as coroscope sees it */
	int ns_tid;             /* the same in the target's own PID
				   namespace (what its gettid() returns);
				   equal to tid when that is coroscope's */
	uint64_t fs_base;       /* x86-64 TLS base == pthread_self() */
	int has_fs_base;        /* fs_base known (thread stopped, or core) */
	int has_regs;           /* regs known (thread stopped, or core) */
	struct cs_regs regs;    /* general registers at the stop */
	int exited;             /* a zombie kept until the process ends: a
				   main thread that called pthread_exit() */
	/* Live only: not stopped, because a stop would cut short the
	 * call it sleeps in (attach/live_writers.c): that call's number
	 * and its first argument, the file descriptor. */
	int left_running;
	long left_call;
	int left_fd;
	uint64_t left_switches;  /* its context switches when first seen
				    (UINT64_MAX unknown) */
};

/* The system call thread t sleeps in, from its registers at the stop or,
 * left running, from /proc: 1 with *nr set, else 0. */
static inline int cs_thread_syscall(const struct cs_thread *t, long *nr)
{
	if (t->left_running) {
		*nr = t->left_call;
		return 1;
	}
	if (!t->has_regs)
		return 0;
	*nr = (long)t->regs.r[CS_REG_ORIG_RAX];
	return 1;
}

struct memsrc;

/* Page-aligned bytes [addr, addr + len) of the target. */
struct memsrc_run {
	uint64_t addr;
	size_t len;
};

/* Runs one memsrc_ops.read_runs call takes at most (the kernel's
 * IOV_MAX). */
#define MEMSRC_RUNS_MAX 1024

struct memsrc_ops {
	/*
	 * Read up to len bytes at addr into buf.  Returns the number of bytes
	 * read from the start (a short count means the next byte is not
	 * readable) or a negative status with err filled.  Backends may
	 * assume addr and len are page aligned.
	 */
	long (*read_raw)(struct memsrc *ms, uint64_t addr, void *buf,
			 size_t len, struct cs_err *err);
	/* Release the backend: detach from a process, close files. */
	void (*close)(struct memsrc *ms);
	/*
	 * Optional: where to open the target's file named path on this
	 * machine, newly allocated; "" when the file must not be used (a
	 * core's file whose build id does not match), NULL when out of
	 * memory.  Without it, memsrc_target_path() gives root + path.
	 */
	char *(*host_path)(const struct memsrc *ms, const char *path);
	/*
	 * Optional: read n (<= MEMSRC_RUNS_MAX) runs, run i into bufs[i],
	 * in one call (a capture copies thousands of scattered pages).  It
	 * may run on several threads at once (a capture splits its copy
	 * between two): it reports no error and changes nothing of the
	 * backend's.  Returns the bytes read, counted through the runs in
	 * order (0 when the first run cannot be read), or -1 when the
	 * backend cannot read this way now; whatever came short is read
	 * again with read_raw.
	 */
	long (*read_runs)(struct memsrc *ms, const struct memsrc_run *runs,
			  unsigned char *const *bufs, size_t n);
	/*
	 * Optional: for n (<= MEMSRC_RESIDENT_MAX) pages from page, whether
	 * each holds anything the target wrote (in memory or swapped out):
	 * out[i] 1 or 0, where 0 means it reads as zeros.  0, or -1 when the
	 * backend cannot tell now (then every page may hold data).
	 */
	int (*resident)(struct memsrc *ms, uint64_t page, size_t n,
			unsigned char *out);
	/*
	 * Optional: the bytes of private memory the target wrote (in
	 * memory or swapped out), of all its mappings at once, in one cheap
	 * call; -1 when the backend cannot tell.  Asking resident() page by
	 * page costs ~0.3 us a page (2 ms of a 30 MB target's 35 ms dump),
	 * and is not worth it when this says few pages can be unwritten.
	 */
	int64_t (*written_bytes)(struct memsrc *ms);
};

#define MEMSRC_RESIDENT_MAX 512

struct memsrc_stats {
	uint64_t reads;        /* backend reads (system calls for live) */
	uint64_t bytes_read;   /* bytes brought in by them */
};

struct memsrc_cache;

enum memsrc_frozen {
	MEMSRC_LIVE,          /* reads go to the backend (target stopped,
				 or racy) */
	MEMSRC_FROZEN_ALL,    /* every writable mapping was captured */
	MEMSRC_FROZEN_PLAN,   /* the planned pages were captured */
};

struct memsrc {
	const struct memsrc_ops *ops;
	void *backend;              /* owned by the backend */

	int pid;                    /* target pid (from the core for cores) */
	int ns_pid;                 /* the pid in the target's own PID
				       namespace; equal to pid when that
				       is coroscope's (and for cores) */
	int proc_id;                /* live: the /proc/N that reaches its
				       memory and files (pid, or a live
				       thread's when the main thread has
				       exited); 0 for cores */
	struct cs_mapping *maps;    /* sorted by start */
	size_t nmaps;
	struct cs_thread *threads;
	size_t nthreads;

	/*
	 * Where the target's files are found: path names in maps are opened
	 * as root + path ("/proc/PID/root" for a live process, so that other
	 * mount namespaces work; "" or --sysroot for cores).  exe_path names
	 * the main executable directly ("/proc/PID/exe" for a live process).
	 */
	char *root;
	char *exe_path;

	struct memsrc_stats stats;
	struct memsrc_cache *cache;
	/*
	 * Set by memsrc_capture(): what may change is in the cache, so the
	 * cache stays a consistent picture of the stopped target after it
	 * runs on.  Read-only pages, which cannot change, are still read
	 * from it; a page in no mapping of the stop, or in one that cannot
	 * be read, reads as unreadable, as it did during the stop.
	 */
	enum memsrc_frozen frozen;
	/*
	 * Writable pages read while frozen that the capture did not hold
	 * (after a planned capture, or a cache that overflowed): read from
	 * the target as it runs, so what was decoded from them may not be
	 * what the stop showed.  Reset by each capture and clear.
	 */
	uint64_t missed;
};

/*
 * Read exactly len bytes at addr.  Fails with CS_ERR_MEMORY (message
 * names the address) when any byte is unreadable.
 */
int memsrc_read(struct memsrc *ms, uint64_t addr, void *buf, size_t len,
		struct cs_err *err);

/*
 * The fast path of memsrc_read() for the hottest loops (the GC walk): the
 * len bytes at addr, where this thread read their page shortly before,
 * without a copy; NULL otherwise (then memsrc_read() them).  Valid until
 * this thread's next read.
 */
const void *memsrc_peek(struct memsrc *ms, uint64_t addr, size_t len);

/*
 * Ask the CPU for the cache lines of up to len bytes (at most 256) at
 * addr ahead of a read of them, where their page is in the cache: most
 * of a large dump's reads wait on memory, and a loop over objects known
 * in advance (tasks, generators) can ask for the next ones' while it
 * reads one.  Reads nothing and fails never: a page not cached is left
 * to the read.
 */
void memsrc_prefetch(struct memsrc *ms, uint64_t addr, size_t len);

/* Read a pointer-sized (8 byte, little-endian) word. */
int memsrc_read_u64(struct memsrc *ms, uint64_t addr, uint64_t *out,
		    struct cs_err *err);

/*
 * Read as many bytes as are readable at addr, up to len.  Returns the
 * count (possibly 0) or a negative status for a backend failure other
 * than an unmapped address (for example the process exited).
 */
long memsrc_read_partial(struct memsrc *ms, uint64_t addr, void *buf,
			 size_t len, struct cs_err *err);

enum memsrc_capture_what {
	MEMSRC_CAPTURE_ALL,   /* every writable mapping */
	MEMSRC_CAPTURE_PLAN,  /* the planned pages */
};

/*
 * Copy what the (stopped) target can change into the cache, so that the
 * target can be resumed before the copy is decoded (when such pages
 * were half of it or more as its room was set up, a page of a private
 * anonymous mapping that the backend says was never written is cached
 * as zeros, not copied: idle threads' stacks are mostly such pages).
 * Returns
 * 1 when done (ms->frozen set), 0 when skipped because that adds up to
 * more than max_bytes (or than the cache holds), or a negative status
 * when the target cannot be read.
 */
int memsrc_capture(struct memsrc *ms, enum memsrc_capture_what what,
		   size_t max_bytes, struct cs_err *err);

/*
 * Plan a capture (the plan survives clearing the cache; each call adds
 * to it).  memsrc_plan_learn(): every page in a writable mapping that a
 * read used since the cache was last cleared, each with its aligned
 * 16 KiB block; it also sets up the cache's memory for the plan, so that
 * the capture during a stop waits for no page faults of coroscope's
 * own.  Returns the planned pages.  memsrc_plan_add(): the pages of a
 * range (a stopped thread's stack top) up to the first in no writable
 * mapping: past a thread's stack lie a guard page and the stack of
 * another thread, whose unused bottom is no one's to copy.
 */
size_t memsrc_plan_learn(struct memsrc *ms);
void memsrc_plan_add(struct memsrc *ms, uint64_t addr, uint64_t len);
/* Once the threads are stopped: in each mapping holding a thread's stack
 * pointer, plan only the pages a read used, not their blocks (the block
 * is for a heap's neighbouring allocations; a stack's next pages hold
 * nothing a read wanted).  Returns the pages dropped from the plan. */
size_t memsrc_plan_trim_stacks(struct memsrc *ms);

/* Bytes in the target's writable mappings (what MEMSRC_CAPTURE_ALL
 * copies). */
uint64_t memsrc_writable_bytes(const struct memsrc *ms);

/* Before a stop that MEMSRC_CAPTURE_ALL will follow: set up (fault in)
 * the cache's memory for that many bytes, as memsrc_plan_learn() does
 * for a plan.  With `ahead` (reading goes on before the stop), where
 * there are two CPUs, on a thread of its own that runs on while the
 * caller reads (attach/memsrc_reserve.c). */
void memsrc_reserve_all(struct memsrc *ms, int ahead);
/* Wait for memsrc_reserve_all()'s thread: a stop does, first (its
 * faults would be the target's pause). */
void memsrc_reserve_wait(struct memsrc *ms);

/* Forget cached pages (the target ran since they were read); the source
 * is no longer frozen. */
void memsrc_cache_clear(struct memsrc *ms);
/* Forget cached pages and hand the cache's memory, what of it is faulted
 * in, to hugeheap_keep(): for when nothing more is read from ms (a later
 * read would map new memory), so that the report's buffers reuse it
 * rather than fault in as much again. */
void memsrc_cache_give_up(struct memsrc *ms);

/*
 * Reading on several threads at once.  Between memsrc_share(ms, 1) and
 * memsrc_share(ms, 0) up to MEMSRC_THREADS threads may read ms, each
 * having called memsrc_thread(k) with its own k (the thread that shares
 * is 0, the default).  A read of a page already cached takes no lock;
 * a fill from the backend (a page the capture missed, a read-only one)
 * is made under the cache's lock.  A full cache is not dropped, nor its
 * table grown, meanwhile (a page another thread just found would go
 * with it): the read counts as missed (ms->missed), for the caller to
 * read again, stopped.
 */
#define MEMSRC_THREADS 2
void memsrc_share(struct memsrc *ms, int on);
void memsrc_thread(unsigned k);

/* The mapping containing addr, or NULL. */
const struct cs_mapping *memsrc_find_mapping(const struct memsrc *ms,
					     uint64_t addr);

/* Build "root + path" for opening one of the target's files (or ask the
 * backend's host_path); caller frees. */
char *memsrc_target_path(const struct memsrc *ms, const char *path);

/*
 * For backends: set up the generic part (cache) and tear it all down.
 * ms must be zero-filled (calloc) before memsrc_init().
 */
void memsrc_init(struct memsrc *ms, const struct memsrc_ops *ops,
		 void *backend);
/* Close the backend, free maps, threads, root, exe_path, cache and ms
 * itself (a backend's close must not free root or exe_path). */
void memsrc_free(struct memsrc *ms);
/* Only close the backend (a live target resumed and detached, its files
 * closed); nothing more can be read.  memsrc_free() still frees ms. */
void memsrc_close(struct memsrc *ms);

/* Helpers for backends filling maps and threads. */
void cs_mappings_sort(struct cs_mapping *maps, size_t n);
void cs_mappings_free(struct cs_mapping *maps, size_t n);

#endif
