/*
 * Collecting a dump: locate the interpreter, stop the target (live
 * sources, unless --no-block), take the snapshot, resume.  Shared by
 * every command that shows a process: dump (live), core (core files) and
 * run (each Python process of a command's tree).
 */
#ifndef COROSCOPE_CLI_COLLECT_H
#define COROSCOPE_CLI_COLLECT_H

#include "attach/memsrc.h"
#include "readers/pyproc.h"
#include "readers/stacks.h"
#include "readers/tasks.h"
#include "symbols/native_stack.h"

struct collect_options {
	int locals;      /* read frame locals */
	int no_block;    /* live only: do not stop the target */
	int native;      /* native frames: 1 --native, 2 --native-all */
};

struct collection {
	int pid;
	char *command;             /* the target's command line, or NULL */
	struct memsrc *ms;         /* owned */
	int is_live;
	struct pyproc py;
	int located;               /* py must be released */
	struct py_snapshot snap;
	struct py_async async;     /* tasks and generators */
	struct native_stacks native;  /* when opt.native */
	char async_warning[512];   /* why tasks/generators are missing, or "" */
	double pause_ms, wall_ms;
	struct collect_options opt;
};

/* A live process.  On failure the message has the context a user needs
 * (the process name for "not a Python process", "exited" when the
 * process went away mid-read). */
int collect_live(struct collection *c, int pid,
		 const struct collect_options *opt, struct cs_err *err);

/* Any memory source (a core file): takes ownership of ms. */
int collect_source(struct collection *c, struct memsrc *ms,
		   const struct collect_options *opt, struct cs_err *err);

void collection_release(struct collection *c);

#endif
