/*
 * A thread the samples saw stuck, asleep in time.sleep() (the system
 * call it sat in at the stop was a sleep: cli/collect_deadlines.c; or,
 * due within 0.1 s, its C frames a sleep's) at a
 * line of the program's own: "thread 12 "MainThread" sleeps in
 * time.sleep, wakes in 0.3s (stuck for at least 5.0s)", then where,
 * and the test pytest runs.  So is one seen running between samples
 * but at that same line at every one of them: a loop that polls for
 * something that never comes (a file, a port, a flag), "(polling: ...)".
 * Before, with nothing else stuck, run said "no likely cause stands
 * out".  Ranked last but for idle waits.  Left out, as for
 * reads: a thread a cause of the graph's names (a job's worker, a
 * thread joined: those say it sleeps), a process pool's worker running
 * a job (the cause of the wait for it names its line), one idle by
 * design; one asleep in SQLite's busy handler (cli/run_sqlite.c); and
 * tasks in asyncio.sleep(), their loop's own timers.
 */
#include "cli/run_sleeps.h"

#include <string.h>


#include "cli/run_places.h"
#include "cli/run_pool.h"
#include "cli/run_probe.h"
#include "cli/run_seen.h"
#include "cli/thread_idle.h"
#include "common/strbuf.h"
#include "common/banned.h"

/* Seen moving (it ran) at some sample, but at the same line at every
 * one: a loop that sleeps, checks and sleeps again.  (Not within one
 * function at several lines, as the blocked-loop rule takes it: a
 * worker's loop that takes an item, then sleeps, is there too.) */
static int polls(const struct run_seen *seen)
{
	return (seen->state == RUN_SEEN_MOVING ||
		(seen->state == RUN_SEEN_STUCK && !seen->at_least)) &&
	       (seen->same_all || seen->same_late) &&
	       run_seen_same_for(seen) > 0;
}

/* Asleep at the stop: in a sleep whose deadline was read, or, one due
 * within 0.1 s (left out of the deadlines) or not read, in the C frames
 * of a sleep (--native's word "sleep"). */
static int asleep(const struct run_thread_facts *f)
{
	return f->timer == RUN_TIMER_SLEEP ||
	       (f->timer == RUN_TIMER_NONE && f->blocked_in &&
		!strcmp(f->blocked_in, "sleep"));
}

void run_summarize_sleeps(struct run_summary *s, const struct collection *c,
			  const struct watch_tracker *t)
{
	struct run_cause *cause;
	struct strbuf sb, timer;
	size_t i;

	if (!c->is_live || !t || !s->facts)
		return;
	strbuf_init(&sb);
	strbuf_init(&timer);
	/* Bounded by the snapshot's threads. */
	for (i = 0; i < c->snap.nthreads; i++) {
		const struct py_thread *th = &c->snap.threads[i];
		const struct run_thread_facts *f = &s->facts[i];
		const struct py_frame *own = run_own_frame(th->frames,
							   th->nframes);
		struct run_seen seen;

		run_seen_thread(t, th, &seen);
		if ((seen.state != RUN_SEEN_STUCK && !polls(&seen)) || !own ||
		    !asleep(f) || f->sqlite || thread_idle_by_design(th) ||
		    run_summary_explains(s, th) ||
		    run_summary_says_thread(s, th) || run_pool_runs_job(th))
			continue;
		/* ", sleeps in time.sleep, wakes in 0.3s", its comma cut;
		 * without the deadline, what the C frames say */
		strbuf_reset(&timer);
		run_add_thread_timer(&timer, f);
		if (timer.len < 2)
			strbuf_addstr(&timer, ", sleeps in time.sleep");
		run_add_thread_label(&sb, th);
		strbuf_addstr(&sb, timer.buf + 1);
		if (polls(&seen)) {
			strbuf_addf(&sb, " (polling: it woke and slept again "
				    "%s, %.1fs)", run_seen_same_place(&seen),
				    seen.same_for);
		} else {
			strbuf_addstr(&sb, " (");
			run_seen_add(&sb, &seen);
			strbuf_addch(&sb, ')');
		}
		cause = run_cause_add(s, RUN_CAUSE_SLEEP, c->pid, &sb);
		strbuf_addstr(&sb, "at ");
		run_probe_add_line(&sb, c, own);
		run_cause_detail(cause, &sb);
		run_cause_test(cause, c->graph.test, &sb);
	}
	strbuf_release(&timer);
	strbuf_release(&sb);
}
