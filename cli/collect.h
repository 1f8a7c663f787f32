/*
 * Collecting a dump: locate the interpreter, stop the target (live
 * sources, unless --no-block), take the snapshot, resume.  Shared by
 * every command that shows a process: dump (live), core (core files) and
 * run (each Python process of a command's tree).
 */
#ifndef COROSCOPE_CLI_COLLECT_H
#define COROSCOPE_CLI_COLLECT_H

#include "attach/memsrc.h"
#include "attach/offcpu.h"
#include "cli/source.h"
#include "common/warnings.h"
#include "readers/greenlets.h"
#include "readers/pyproc.h"
#include "readers/stacks.h"
#include "readers/tasks.h"
#include "symbols/native_stack.h"
#include "readers/waitgraph.h"

struct source_cache;

/* More tries of a --no-block collection when retries is 0, and at most. */
#define COLLECT_DEFAULT_RETRIES 3
#define COLLECT_MAX_RETRIES 100

struct collect_options {
	int locals;      /* read frame locals */
	int no_block;    /* live only: do not stop the target */
	/*
	 * --no-block only: how many more times to collect when a read
	 * failed because the running target changed under it; 0 means
	 * COLLECT_DEFAULT_RETRIES, a negative value none (for --retries 0);
	 * at most COLLECT_MAX_RETRIES.
	 */
	int retries;
	int native;      /* native frames: 1 --native, 2 --native-all */
	size_t max_frames;  /* Python frames kept per thread, 0: the default */
	/* Text output only (report.c). */
	int no_source;   /* --no-source: no source lines under frames */
	int expand_all;  /* --all: identical tasks one by one */
	/* --max-items: items of a container shown in --locals, 0 for
	 * PY_REPR_MAX_ITEMS, at most COLLECT_MAX_ITEMS_LIMIT. */
	int max_items;
	/* Live only: how long each thread has been off its CPU, read
	 * before the stop (attach/offcpu.h).  `dump` asks, and the first
	 * sample of `watch` and of `run`; not later ones, nor `run`'s
	 * dump, after stops of our own that made every thread run. */
	int off_cpu;
	/* A core's only: its process's user (cli/source.h), whose files
	 * its source lines may come from. */
	struct source_user core_user;
	/* A core's only: when it was written (its file's time, seconds
	 * since the epoch; 0 unknown): a source file changed since is not
	 * shown (cli/source.h). */
	double core_time;
};

/* --max-frames: at least, at most. */
#define COLLECT_MIN_FRAMES 16
#define COLLECT_MAX_FRAMES (1u << 20)

/* Two levels of containers are shown: 100 x 100 items at most. */
#define COLLECT_MAX_ITEMS_LIMIT 100

struct collection {
	int pid;                   /* the process (thread group) shown */
	int asked_pid;             /* the id given: pid, or one of its
				      threads (collect_live says so on
				      stderr) */
	int ns_pid;                /* pid in the target's own PID
				      namespace; == pid when it is ours */
	char *command;             /* the target's command line, or NULL */
	struct memsrc *ms;         /* owned */
	int is_live;
	int job_stopped;           /* live: stopped by a signal (job control,
				      state T) before coroscope came */
	struct pyproc py;
	int located;               /* py must be released */
	struct py_snapshot snap;
	/* Per snap.threads[i]: its tid in the target's own PID namespace
	 * (snap.threads[i].tid is as coroscope sees it); 0 unknown.  Equal
	 * to the tid outside namespaces.  NULL when there are no threads. */
	int *ns_tids;
	int attempts;              /* collections tried (--no-block retries,
				      or a thread left running that ran) */
	int left_ran;              /* one did, in this collection */
	int any_left;              /* some thread was left running */
	struct py_async async;     /* tasks and generators */
	struct native_stacks native;  /* when opt.native */
	struct py_greenlets greenlets;
	struct offcpu offcpu;      /* with opt.off_cpu; else empty */
	/* The heap walk failed: no task, generator or greenlet was read.
	 * A warning of the collection says why, at
	 * warnings.v[heap_unread - 1] (where it was kept); 0 when the walk
	 * read.  `watch` then counts the sample failed rather than call
	 * them all gone. */
	size_t heap_unread;
	/* The walk read but greenlets (or trio's tasks) could not be:
	 * a warning says why.  `watch` keeps those it saw before as they
	 * were, neither gone nor moved. */
	int greenlets_unread, trio_unread;
	/* What could not be shown and why, from every layer (a core's
	 * missing files; tasks and generators that could not be read). */
	struct cs_warnings warnings;
	struct py_waitgraph graph; /* who waits for and holds what */
	/* Its children the graph waits for that are blocked writing to a
	 * pipe it holds the read end of (a live target's; owned). */
	struct child_pipe *child_pipes;
	size_t nchild_pipes;
	/* What its threads left running write to (a live target's, read
	 * after the resume; owned). */
	struct left_pipe *left_pipes;
	size_t nleft_pipes;
	/* The target's source files, for the lines a text report shows
	 * under its frames; NULL with --no-source.  Owned. */
	struct source_cache *sources;
	double pause_ms, wall_ms;
	/* The target's CLOCK_MONOTONIC (time.monotonic(), asyncio's loop
	 * time) when what was read was current, in seconds: the stop, or a
	 * --no-block read's start; 0 unknown (a core; a target in another
	 * time namespace). */
	double clock_s;
	double stop_ms;            /* stopping the threads (live_stop_ms) */
	/* A core's: the thread that took the signal it was written for
	 * (0: none, or not known), and its name ("SIGSEGV"; the core's,
	 * valid as long as ms). */
	int signal_tid;
	const char *signal_name;
	/* A live target's threads whose sleep or timed wait ends of itself
	 * (cli/collect_deadlines.h); owned. */
	struct thread_deadline *deadlines;
	size_t ndeadlines, deadlines_alloc;
	struct collect_options opt;
};

/* When a stopped thread's sleep (time.sleep()) or timed wait (a lock's
 * acquire with a timeout) ends, in seconds from the stop. */
struct thread_deadline {
	int tid;
	int sleep;
	double in_s;
	/* how far off in_s may be: a time left, read at the thread's own
	 * stop, which came before the stop's moment by up to the time
	 * spent stopping the others, and restarted after the resume (the
	 * call's end moved on by the time it was held stopped); 0 for a
	 * deadline on a clock */
	double slack_s;
};

/*
 * A live process.  On failure the message has the context a user needs
 * (the process name for "not a Python process", "exited" when the
 * process went away mid-read, that a --no-block target changed while
 * being read).  A pid that is a thread of another process shows that
 * process, with one "coroscope: note:" line on stderr saying so.
 */
int collect_live(struct collection *c, int pid,
		 const struct collect_options *opt, struct cs_err *err);

/*
 * Any memory source (a core file): takes ownership of ms.  c comes from
 * collection_init(), and keeps the warnings already in c->warnings (the
 * source's own, added while it was opened: see core_options.warnings).
 */
int collect_source(struct collection *c, struct memsrc *ms,
		   const struct collect_options *opt, struct cs_err *err);

/* An empty collection (all zero is one too). */
void collection_init(struct collection *c);
/* Free everything, warnings too; c is empty again. */
void collection_release(struct collection *c);
/* Nothing more will be read (only reported): let a live target go (see
 * memsrc_close()) and give the page cache's memory to the report's
 * buffers (memsrc_cache_give_up()). */
void collection_done_reading(struct collection *c);
/* For a command about to exit: let the target go (see memsrc_close())
 * and leave the memory to exit (collection_release() in sanitizer
 * builds). */
void collection_leave(struct collection *c);
/* The pid to read a live c's /proc files under: the entry that still
 * has them when the main thread has exited (memsrc's proc_id), else
 * c->pid. */
int collect_proc_pid(const struct collection *c);

#endif
