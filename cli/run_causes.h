/*
 * What a `coroscope run` hang report leads with: the likely causes of the
 * hang, read off each process's collection, most likely first.
 *
 * The causes come from the tasks view (await cycles, the tasks at the
 * bottom of the waits that hold up the most others) and from thread
 * stacks (threads blocked on locks, a lock deadlock between threads,
 * threads waiting on a condition, event or queue).  The analysis works
 * on plain data: the snapshot, the tasks, and what the kernel said of
 * each thread (struct run_thread_facts, gathered by cli/run_probe.c), so
 * that it can be tested without a process.
 */
#ifndef COROSCOPE_CLI_RUN_CAUSES_H
#define COROSCOPE_CLI_RUN_CAUSES_H

#include <stddef.h>
#include <stdint.h>

#include "common/addrmap.h"
#include "readers/stacks.h"
#include "readers/tasks.h"
#include "cli/run_places.h"

/* In order of likelihood: the summary lists lower values first. */
enum run_cause_kind {
	RUN_CAUSE_STOPPED,      /* a process stopped by a signal (job
				   control): cli/run_stopped.h */
	RUN_CAUSE_AWAIT_CYCLE,  /* tasks awaiting each other */
	RUN_CAUSE_LOCK_CYCLE,   /* a wait-for graph cycle through locks:
				   proven, where a deadlock is a guess */
	RUN_CAUSE_DEADLOCK,     /* two or more threads blocked on locks
				   the graph does not explain */
	RUN_CAUSE_LOOP_BLOCKED, /* an event loop's thread stuck in a task's
				   step: no other task of it can run */
	RUN_CAUSE_FAILED_TASK,  /* a task raised, and nothing retrieved its
				   exception: what waits for its work may
				   wait for ever */
	RUN_CAUSE_CANCELLED,    /* a task cancelled that goes on, stuck:
				   cli/run_cancelled.h */
	RUN_CAUSE_HELD,         /* an object others wait on, and its holder */
	RUN_CAUSE_FAILED_JOB,   /* an executor's or pool's job raised, and
				   no result() or get() raised it again (a
				   Future keeps no flag: less sure) */
	RUN_CAUSE_STUCK_TASK,   /* a task parked on a plain future, blocking others */
	RUN_CAUSE_LOCK,         /* one thread blocked acquiring a lock */
	RUN_CAUSE_FILE_LOCK,    /* one blocked taking a file's lock (flock) */
	RUN_CAUSE_WRITE,        /* a thread blocked writing to a pipe its
				   process or the parent holds unread */
	RUN_CAUSE_GIL_HELD,     /* threads waiting for the GIL, its holder
				   blocked in a C call */
	RUN_CAUSE_WAIT,         /* a thread waiting on a condition, event... */
	RUN_CAUSE_READ,         /* a thread blocked reading a socket */
	RUN_CAUSE_BUSY,         /* a thread using a CPU all along (sampled) */
	RUN_CAUSE_GIL,          /* threads waiting for the GIL (contention) */
	RUN_CAUSE_SLEEP,        /* a thread asleep at its own line all along
				   (a poll for what never comes) */
	RUN_CAUSE_IDLE,         /* a server's idle wait (accept, keep-alive) */
};

struct run_cause {
	enum run_cause_kind kind;
	int pid;
	char *headline;   /* one line, e.g. "await cycle: ping -> pong -> ping" */
	char **details;   /* further lines (one per thread or task involved) */
	size_t ndetails;
};

struct run_pool_job;
struct run_proc;
struct py_greenlets;
struct run_summary {
	struct run_cause *causes;
	size_t n, alloc;
	int apart;        /* --all: alike threads a cause each */
	/* Tasks (by address) and threads (by thread state) the wait-for
	 * graph's causes name (a lock's waiters and holders, an event's, a
	 * server's idle state: the named set of run_summarize_graph()), or
	 * NULL: they get no "stuck task" cause, and a thread no "waits in
	 * Event.wait" cause, which would say less.  Set by the caller for
	 * the process being summarized. */
	const struct addrmap *explained;
	/* What the kernel and the source files say of its threads (per
	 * thread of its snapshot), or NULL: the graph's causes show a
	 * thread's own line with its source.  Set with explained. */
	const struct run_thread_facts *facts;
	/* The process's wait-for graph, or NULL: a stuck task's cause
	 * names the worker thread its wait leads to (an executor's job).
	 * Set by the caller with explained. */
	const struct py_waitgraph *graph;
	/* Its greenlets, or NULL: a thread stuck in a greenlet other than
	 * its hub holds up the others.  Set by the caller with explained. */
	const struct py_greenlets *greenlets;
	/* The process's children that run a process pool's job (cli/
	 * run_pool.h): a stuck task's wait that leads to no thread of the
	 * process names them.  Set by the caller with explained. */
	const struct run_pool_job *jobs;
	size_t njobs;
	/* Every process of the tree `run` dumped (struct run_proc of
	 * cli/run_report.h), Python or not, or NULL: a thread blocked
	 * reading a pipe names those holding its write end.  Set once. */
	const struct run_proc *procs;
	size_t nprocs;
	/* Its parent's collection, when `run` dumped the parent, or NULL:
	 * an RLock held at a fork names the parent's thread holding it.
	 * Set by the caller with jobs. */
	const struct collection *parent;
	/* The process's monotonic clock at the read (collection.clock_s):
	 * a stuck task's cause says when its timeout ends the wait.  Set
	 * by the caller with explained. */
	double clock_s;
	/* The pid to read its /proc files under (collect_proc_pid(): a
	 * thread's, when its main thread has exited), 0 for the process's
	 * own: the fd a task or greenlet is parked on.  Set with clock_s. */
	int proc_pid;
	/* Threads (by thread state) of the process being summarized whose
	 * wait a cause of run_summarize() says, reset by it (owned): a
	 * blocked loop's, a job's worker named under the wait for the job
	 * ("its job runs in thread 12 ..."): a step or job asleep in
	 * time.sleep() is no sleep cause of its own too. */
	struct addrmap said_threads;
};

/* Lines of a lock's holders a thread's facts keep at most. */
#define RUN_LOCK_LINES 10

/* A lock a thread is blocked acquiring whose holder is known. */
struct run_lock_held {
	const char *name;     /* its class, "multiprocessing.Lock" */
	uint64_t addr;
	/* the lines saying who holds it (owned; NULL past the last) */
	char *lines[RUN_LOCK_LINES];
	int cycle;            /* 1: its holder is blocked on a lock this
				 thread holds (a deadlock, between
				 processes or threads) */
	int orphaned;         /* 1: taken, and held by no process dumped */
};

/* What the kernel and the source files say of one thread of a snapshot. */
struct run_thread_facts {
	int futex;        /* 1: sleeps in futex(2), where every Python lock,
			     condition and GIL wait ends up; 0: runs or sits
			     in another call; -1: unknown */
	int quiet;        /* 1: in futex(2) and not woken once during a
			     window of a few GIL switch intervals, as a
			     thread blocked on a lock (a thread waiting for
			     the GIL wakes every interval); -1: not asked */
	char *source;     /* the line of run_causes_own_frame(), or NULL */
	/* From the native frames, when they were read and name a blocking
	 * call (borrowed from the collection), else NULL:
	 * native_blocked_in()'s word ("lock", "gil", "sleep", "io",
	 * "wait", "futex"), and the C function it is blocked in. */
	const char *blocked_in;
	const char *native_call;
	/* The line of the frame the wait-for graph blames, where that is
	 * not run_causes_own_frame() and the graph has the thread wait
	 * for something: the program's own call past a library other than
	 * threading's (subprocess's communicate(), multiprocessing's
	 * join()); else NULL. */
	char *blame_source;
	/* When its sleep or timed wait ends (cli/collect_deadlines.h):
	 * RUN_TIMER_SLEEP or RUN_TIMER_TIMEOUT, timer_in_s seconds from the
	 * dump's stop; RUN_TIMER_NONE for none known. */
	int timer;
	double timer_in_s;
	/* --no-source: source and blame_source serve the analysis only (a
	 * lock's `with` line), and are not shown. */
	int hide_source;
	/* A multiprocessing lock it is blocked acquiring (cli/
	 * run_semlocks.h; owned), else NULL. */
	struct run_lock_held *lock;
	/* 1: asleep in SQLite's C code (its busy handler, retrying a
	 * database lock another connection holds: cli/run_sqlite.c). */
	int sqlite;
};

enum { RUN_TIMER_NONE, RUN_TIMER_SLEEP, RUN_TIMER_TIMEOUT };
/* ", sleeps in time.sleep, wakes in 597.0s", ", times out in 12.0s"
 * of a thread's facts; nothing for none (cli/run_causes.c). */
struct strbuf;
void run_add_thread_timer(struct strbuf *sb, const struct run_thread_facts *f);
/* The same of n alike threads' facts f[0..n), as a span (", time out in
 * 597.0s .. 599.1s"); nothing unless all have a timer of one kind. */
void run_add_threads_timer(struct strbuf *sb,
			   const struct run_thread_facts *const *f, size_t n);

void run_summary_init(struct run_summary *s);
void run_summary_release(struct run_summary *s);

/* Does a cause of the wait-for graph's name thread t (s->explained)? */
int run_summary_explains(const struct run_summary *s,
			 const struct py_thread *t);
/* Does a cause of run_summarize()'s say its wait (s->said_threads)? */
int run_summary_says_thread(const struct run_summary *s,
			    const struct py_thread *t);

/* The innermost frame of the program's own, below the machinery of
 * waiting (threading.py, queue.py...), or NULL. */
const struct py_frame *run_causes_own_frame(const struct py_thread *t);

/*
 * Add the causes process pid's snapshot and tasks suggest; facts has
 * one entry per thread of snap.  t: what sampling the process before
 * the dump saw (cli/run_sample.h), or NULL.  With it, what was seen
 * making progress is not called stuck, stuck tasks rank by how long
 * they made none, and the causes say how long; without it, a dump has
 * no clock, and the task holding up the most others ranks first.
 */
struct watch_tracker;
void run_summarize(struct run_summary *s, int pid,
		   const struct py_snapshot *snap, const struct py_async *a,
		   const struct run_thread_facts *facts,
		   const struct watch_tracker *t);

/* Greenlets (cli/run_greenlets.c), through the three below; trio's
 * tasks are among the stuck tasks of run_summarize(). */
struct strbuf;
struct py_greenlets;
/* t: the samples' tracker, or NULL (a greenlet seen moving at one line
 * all along, woken by a timeout each time, is said to poll). */
void run_summarize_greenlets(struct run_summary *s, int pid,
			     const struct py_greenlets *greenlets,
			     const struct watch_tracker *t);
struct run_cause *run_cause_add(struct run_summary *s, enum run_cause_kind kind,
				int pid, struct strbuf *headline);
void run_cause_detail(struct run_cause *cause, struct strbuf *line);
/* "test being run: test_app.py::test_x" (pytest's node id, test, when
 * not NULL), for a cause that holds up the thread running it, the
 * process's main thread (or a task of its loop). */
void run_cause_test(struct run_cause *cause, const char *test,
		    struct strbuf *line);
/* "thread 12 "name"" (the name raw, for the causes' writers). */
void run_add_thread_label(struct strbuf *sb, const struct py_thread *t);

/* Most likely first; causes of the same kind keep their order. */
void run_summary_sort(struct run_summary *s);

/* "kind" names used in JSON: "await_cycle", "deadlock", ... */
const char *run_cause_kind_name(enum run_cause_kind kind);

#endif
