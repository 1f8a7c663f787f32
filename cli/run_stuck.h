/*
 * `coroscope run`'s "stuck task" causes (RUN_CAUSE_STUCK_TASK): the tasks
 * at the bottom of the waits, alike ones as one cause.  asyncio's are
 * parked on a plain future rather than on another task; trio's (and
 * anyio's on trio) have no task in a nursery of theirs and no deadline.
 */
#ifndef COROSCOPE_CLI_RUN_STUCK_H
#define COROSCOPE_CLI_RUN_STUCK_H

#include "cli/run_causes.h"

struct watch_tracker;

/* The threads of the process, and what the kernel said of each (facts
 * may be NULL: none known). */
struct run_snap {
	const struct py_snapshot *snap;
	const struct run_thread_facts *facts;
};

/*
 * When the process was sampled before the dump (t not NULL), the tasks
 * seen making progress are left out and the longest stuck rank first; a
 * dump alone has no clock, so then the task that holds up the most
 * others is the one to look at first.  asyncio.sleep() is left out: its
 * timer will complete it, as trio.sleep() and its kin.  Three or more
 * alike are one cause unless s->apart: asyncio tasks waiting on the same
 * type of future at the same place, stuck as long, blocking as many (a
 * pool of workers' tasks); trio tasks parked in the same call of trio's
 * at the same place, stuck as long (siblings of one nursery, blocking
 * the same tasks, counted once).  Tasks in s->explained are left out
 * before any of that.  Each framework's first three causes are added,
 * the last saying how many tasks it left out.  With s->graph, a single
 * asyncio task's cause names the worker thread its wait leads to (the
 * job it waits for: run_in_executor, to_thread) and where that thread
 * is; rs holds the threads.  An asyncio cause says when the timeout its
 * tasks wait under ends the wait (s->clock_s).
 */
void run_summarize_stuck_tasks(struct run_summary *s, int pid,
			       const struct run_snap *rs,
			       const struct py_async *a,
			       const struct watch_tracker *t);

/* The tasks view's first causes (enum run_cause_kind), one per cycle of
 * tasks awaiting each other (RUN_CAUSE_AWAIT_CYCLE). */
void run_summarize_await_cycles(struct run_summary *s, int pid,
				const struct py_async *a);

#endif
