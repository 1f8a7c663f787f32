/*
 * What the parts of the live backend share (attach/live.c opens, reads
 * and closes; live_stop.c stops and resumes the threads; live_tracer.c
 * says which thread holds them and lets them go; live_guard.c guards
 * against signals; live_errors.c explains refusals; live_resident.c
 * tells pages the target never wrote).  Not for use outside
 * attach/live*.c.
 */
#ifndef COROSCOPE_ATTACH_LIVE_INTERNAL_H
#define COROSCOPE_ATTACH_LIVE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <time.h>

#include "attach/memsrc.h"

enum thread_state {
	TH_SEIZED,     /* seized and interrupted, stop not yet reported */
	TH_STOPPED,    /* in a ptrace-stop */
	TH_GONE,       /* exited, to be dropped */
};

struct live_thread {
	int tid;
	enum thread_state state;
	int sig;               /* signal to deliver on detach, or 0 */
	int guard_slot;        /* in the signal guard's array, or -1 */
	uint64_t fs_base;
	int has_fs_base;
	struct cs_regs regs;   /* valid when has_fs_base */
};

/* A thread left running, asleep in a call that sends bytes
 * (live_writers.c). */
struct live_left {
	int tid;
	long call;             /* the call's number */
	int fd;                /* its first argument */
	uint64_t switches;     /* its context switches when first seen */
	int64_t syscw;         /* its write calls ended, -1 unknown */
	uint64_t line_hash;    /* of its syscall line: call, args, sp, pc */
};

struct live {
	int pid;
	/* The task whose /proc entries and process_vm_readv() reach the
	 * address space: pid, or a live thread once the main thread has
	 * called pthread_exit() (a zombie has no memory, maps or files). */
	int mm_id;
	int mem_fd;            /* /proc/PID/mem, -1 until needed */
	int use_mem;           /* process_vm_readv refused: use mem_fd */
	int pagemap_fd;        /* /proc/PID/pagemap, -1 until needed, -2
				  when it cannot be read */
	struct iovec *riov;    /* IOV_PAGES remote iovecs */

	struct live_thread *th;  /* seized threads */
	size_t nth, ath;

	int other_ns;          /* in another PID namespace: tids differ there */

	/* Threads left running (live_writers.c): those seen asleep in a
	 * sending call before the stop (sorted), those left so during
	 * it, those the survey found running throughout; stop_every when
	 * the caller wants them stopped too; left_ran when one of them
	 * ran while the target was held. */
	struct live_left *sending;
	size_t nsending, asending;
	struct live_left *left;
	size_t nleft, aleft;
	int *running;          /* seen running at the survey's end, sorted */
	size_t nrunning;
	long keep_budget_us;   /* what live_left_keep() may still wait */
	int stop_every;
	int left_ran;

	struct tracer *tracer;   /* the thread holding them, while stopped */
	int stopped;
	struct timespec since;   /* when every thread was stopped */
	double paused_ms;        /* earlier stops */
	double stop_ms;          /* stopping the threads, every stop */
};

/* memsrc_ops.resident of a live target (live_resident.c). */
int live_resident(struct memsrc *ms, uint64_t page, size_t n,
		  unsigned char *out);
/* memsrc_ops.written_bytes of a live target (live_resident.c). */
int64_t live_written_bytes(struct memsrc *ms);

/* Threads left running (live_writers.c).  Before a stop, outside the
 * pause: note which threads sleep in a call that sends bytes.  During
 * it, before seizing tid: 1 when it still does and is left running
 * (recorded in lv->left), else 0.  After the read, still held: set
 * lv->left_ran when one of them ran meanwhile.  At close, free it all. */
void live_left_survey(struct live *lv);
int live_left_keep(struct live *lv, int tid);
void live_left_check(struct live *lv);
void live_left_free(struct live *lv);

/* qsort()/bsearch() order of thread ids (int). */
int live_tid_cmp(const void *a, const void *b);

/* The signal guard (live_guard.c): the seized threads and the signals
 * they hold, kept by the tracer thread, whose tid is set while it holds
 * them.  live_guard_add() returns a slot, or -1 when none is free. */
int live_guard_add(int tid);
void live_guard_set_sig(int slot, int tid, int sig);
void live_guard_remove(int slot, int tid);
void live_guard_set_tracer(int tid);
/* After a tracer thread is gone: a fatal signal handed to it that it
 * did not take is raised again on the caller's thread. */
void live_guard_tracer_gone(void);

/* Holding and letting go, on the holding thread (live_stop.c): stop
 * every thread of lv's target and read their registers (0 or a status;
 * either way they must be let go); detach those holding a signal, every
 * one when `each` (else the holding thread's exit detaches the rest). */
int live_hold_threads(struct live *lv, struct cs_err *err);
void live_let_go(struct live *lv, int each);

/* Who holds (live_tracer.c): hold lv's target on a tracer thread or the
 * caller's (0 or a status; either way live_tracer_release() lets it
 * go); let it go (idempotent); at exit, let every held target go. */
int live_tracer_start(struct memsrc *ms, struct live *lv,
		      struct cs_err *err);
void live_tracer_release(struct live *lv);
void live_release_all_held(void);

/*
 * The thread ids in /proc/PID/task, the main thread first and the others
 * in ascending order.  -1 with errno set when the directory is gone.
 */
int live_list_tasks(int pid, int **out, size_t *nout);

/* A thread's tid in the target's own PID namespace (0 when unknown). */
int live_ns_tid_of(const struct live *lv, int tid);


/* Read /proc/PID/maps into ms->maps (sorted).  0 or a status. */
int live_read_maps(struct memsrc *ms, struct cs_err *err);

/*
 * Why the kernel refused to let us trace (or read) pid, on one line:
 * the first reason that applies, from the most to the least certain.
 * what: "attach to", "read", ...  Returns CS_ERR_PERMISSION.
 */
int live_fail_denied(struct cs_err *err, int pid, const char *what);
/* The same when thread tid of pid refused (its own tracer first). */
int live_fail_denied_thread(struct cs_err *err, int pid, int tid,
			    const char *what);

/* Reach ms's memory and files through task id (lv->mm_id, ms->proc_id,
 * root, exe_path). */
void live_reach_through(struct memsrc *ms, int id);

/* Why a thread in state (a /proc state letter, 0: unknown) may not have
 * stopped when asked: a phrase for the error's parentheses. */
const char *live_stop_hint(char state);

/* CS_ERR_EXITED: "process N exited". */
long live_exited(struct cs_err *err, int pid);

#endif
