/*
 * Collecting a dump: locate the interpreter, stop the target (live
 * sources, unless --no-block), take the snapshot, resume.  Shared by
 * every command that shows a process: dump (live), core (core files) and
 * run (each Python process of a command's tree).
 */
#ifndef COROSCOPE_CLI_COLLECT_H
#define COROSCOPE_CLI_COLLECT_H

#include "attach/memsrc.h"
#include "readers/greenlets.h"
#include "readers/pyproc.h"
#include "readers/stacks.h"
#include "readers/tasks.h"
#include "readers/waitgraph.h"

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
};

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
	struct pyproc py;
	int located;               /* py must be released */
	struct py_snapshot snap;
	/* Per snap.threads[i]: its tid in the target's own PID namespace
	 * (snap.threads[i].tid is as coroscope sees it); 0 unknown.  Equal
	 * to the tid outside namespaces.  NULL when there are no threads. */
	int *ns_tids;
	int attempts;              /* collections tried (--no-block retries) */
	struct py_async async;     /* tasks and generators */
	char async_warning[512];   /* why tasks/generators are missing, or "" */
	struct py_greenlets greenlets;
	struct py_waitgraph graph; /* who waits for and holds what */
	char sched_warning[512];   /* why greenlets/trio tasks are missing */
	double pause_ms, wall_ms;
	struct collect_options opt;
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

/* Any memory source (a core file): takes ownership of ms. */
int collect_source(struct collection *c, struct memsrc *ms,
		   const struct collect_options *opt, struct cs_err *err);

void collection_release(struct collection *c);

#endif
