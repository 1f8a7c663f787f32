/*
 * What cli/run_causes.c knows of a thread blocked on something, and the
 * phrases its causes say it with, shared with the lock causes (cli/
 * run_lock_causes.c).
 */
#ifndef COROSCOPE_CLI_RUN_CAUSES_INTERNAL_H
#define COROSCOPE_CLI_RUN_CAUSES_INTERNAL_H

#include <stddef.h>

#include "cli/run_causes.h"
#include "cli/run_seen.h"
#include "common/strbuf.h"

enum blocked_kind {
	BLOCKED_NO, BLOCKED_LOCK, BLOCKED_WAIT, BLOCKED_JOIN, BLOCKED_GIL,
};

struct blocked {
	enum blocked_kind kind;
	const struct py_thread *t;
	const struct run_thread_facts *f;
	struct run_seen seen;          /* what sampling saw of it */
	const struct py_frame *api;    /* the call into a sync module, or NULL */
	const char *c_wait;            /* else a wait in C it is in, or NULL */
	const struct py_frame *where;  /* the first frame of the program's own */
	const char *source;            /* where's source line, or NULL */
};

/* "at FILE:LINE in FUNC: SOURCE" (or the sync call when there is no
 * frame of the program's own). */
void blocked_add_where(struct strbuf *sb, const struct blocked *b);
/* "Event.wait (threading.py)": a call into a sync module. */
void blocked_add_api(struct strbuf *sb, const struct py_frame *api);
/* ", in C: sem_clockwait()": the native call it waits in, when read. */
void blocked_add_native_call(struct strbuf *sb, const struct blocked *b);
/* A loop_blocked cause of headline sb (emptied) for thread b, which
 * runs a task's step or a greenlet: a line of where it stands ("at
 * FILE:LINE in FUNC: SOURCE", the program's own frame, else its
 * innermost; ", busy", the C call and its timer, when known), and its
 * wait said (s->said_threads). */
void run_causes_loop_blocked(struct run_summary *s, int pid,
			     const struct blocked *b, struct strbuf *sb);
/* " (stuck for at least 4.0s)", when sampled. */
void blocked_add_seen(struct strbuf *sb, const struct run_seen *seen);
/* 'thread 101 "w-0", ... and 7 more': the threads b[w[m[0..n)]]. */
void blocked_add_members(struct strbuf *sb, const struct blocked *b,
			 const size_t *w, const size_t *m, size_t n);

/* The causes of the threads b[0..n) of process pid blocked on locks:
 * one each whose holder is known (three or more alike as one), the
 * only one on a lock not known, or a possible deadlock of two or more
 * (cli/run_lock_causes.c). */
void run_causes_locks(struct run_summary *s, int pid, const struct blocked *b,
		      size_t n, struct strbuf *sb);

/* The threads b[0..n) of process pid stuck or busy in a greenlet other
 * than their gevent hub, while other greenlets of theirs wait: the
 * hub cannot run them (cli/run_greenlets.c). */
void run_causes_blocked_hubs(struct run_summary *s, int pid,
			     const struct blocked *b, size_t n);

#endif
