#include "cli/run_seen.h"
#include "cli/escape.h"

#include <string.h>

#include "common/strbuf.h"
#include "common/banned.h"

/* The samples that saw it elsewhere than at its one place: back at its
 * first place, those elsewhere (away once or more, and back); at
 * another since one change, the fewer of the two runs; -1 when not
 * known (the first sample odd, and more than one change). */
static int samples_away(const struct watch_item *it)
{
	int rest = it->nseen - it->nfirst;

	if (it->fingerprint == it->first_fingerprint)
		return rest;
	if (it->changes == 1)
		return it->nfirst < rest ? it->nfirst : rest;
	return -1;
}

/* Is the thread in a sleep or a timed wait whose end, as the last
 * sample read it, is the stuck threshold away or more?  A young thread
 * in one (a lock's holder asleep for an hour) is judged all the same:
 * a short job's sleeps and selects end within 0.1 s. */
static int far_sleep(const struct watch_tracker *t,
		     const struct watch_item *it)
{
	return it->sleep.on && it->sleep.known && it->sleep.in_s >= t->stuck_s;
}

static int far_wait(const struct watch_tracker *t,
		    const struct watch_item *it)
{
	return far_sleep(t, it) ||
	       (it->timeout.on && it->timeout.known &&
		it->timeout.in_s >= t->stuck_s);
}

void run_seen_item(const struct watch_tracker *t, const struct watch_item *it,
		   struct run_seen *out)
{
	int young;

	memset(out, 0, sizeof(*out));
	/* Seen in one sample only: nothing to compare. */
	if (!t || !it || it->gone || it->last_seen <= it->first_seen)
		return;
	/* A thread started during the samples, seen at two only (the last
	 * and the dump): too young to tell stuck from at work (a program
	 * that starts a thread for each short job has one in its first
	 * step, or its first sleep, there: "stuck for at least 0.0s"),
	 * unless it is in a wait that ends far ahead (far_wait()).
	 * Seen at three, it is judged as any other, but for polls (below).
	 * A process read late has its first threads in its first sample,
	 * not young. */
	young = it->kind == WATCH_THREAD && it->first_seen > t->first;
	if (young && it->nseen < 3 && !far_wait(t, it))
		return;
	out->young = young && it->last_seen - it->first_seen < t->stuck_s;
	out->stuck_for = watch_stuck_for(t, it);
	out->busy = watch_busy(it);
	out->at_least = it->last_progress <= it->first_seen;
	out->same_all = it->same_since <= it->first_seen;
	out->same_for = it->last_seen - it->same_since;
	out->same_late = it->kind == WATCH_THREAD && !out->same_all &&
			 out->same_for >= t->stuck_s;
	out->away = samples_away(it);
	out->all_but_one = it->kind == WATCH_THREAD && !out->same_all &&
			   out->away == 1 && it->nseen >= 5;
	out->watched_for = it->last_seen - it->first_seen;
	out->step = it->kind == WATCH_THREAD ? it->step : 0;
	out->timed_again = it->kind == WATCH_THREAD ? it->timed_again : 0;
	if (it->cancelled_since > 0) {
		out->cancelled_for = it->last_seen - it->cancelled_since;
		out->cancelled_at_least = it->cancelled_since <= it->first_seen;
	}
	out->step_for = it->last_seen - it->step_same_since;
	out->step_marked = out->step && it->step_mark;
	/* (An idle thread is stuck or not here: the caller says what it
	 * is apart, cli/thread_idle.h.) */
	switch (watch_progress_of(t, it)) {
	case WATCH_STUCK:
		out->state = RUN_SEEN_STUCK;
		break;
	case WATCH_BUSY:
		out->state = RUN_SEEN_BUSY;
		break;
	case WATCH_ACTIVE:
		/* Watched for less than the threshold (a task that
		 * started late), never seen moving: stuck, at least
		 * that long.  A thread that came to its place lately but
		 * sleeps there for the threshold or more will be: stuck
		 * now (a loop's thread that started during the samples
		 * and went to sleep for an hour in a task's step; the
		 * place's "wakes in" says so).  Not a timed wait: it may
		 * end early. */
		out->state = out->at_least ? RUN_SEEN_STUCK : RUN_SEEN_MOVING;
		if (it->kind == WATCH_THREAD && far_sleep(t, it))
			out->state = RUN_SEEN_STUCK;
		break;
	case WATCH_GONE:
	case WATCH_IDLE:
		break;
	}
}

void run_seen_add_timed_again(struct strbuf *sb, const struct run_seen *seen)
{
	if (seen->timed_again > 0)
		strbuf_addf(sb, ", then waits again (seen %d time%s)",
			    seen->timed_again,
			    seen->timed_again == 1 ? "" : "s");
}

double run_seen_same_for(const struct run_seen *seen)
{
	/* (a thread started a moment ago, at its one line since: a short
	 * job's sleep as much as a poll) */
	if (seen->young)
		return 0;
	if (seen->same_all && seen->same_for > 0)
		return seen->same_for;
	if (seen->all_but_one && seen->watched_for > 0)
		return seen->watched_for;
	/* (away once and back says more than since the last change) */
	if (seen->same_late && seen->same_for > 0)
		return seen->same_for;
	return 0;
}

const char *run_seen_same_place(const struct run_seen *seen)
{
	if (seen->same_all && seen->same_for > 0)
		return "at that line at every sample";
	if (seen->all_but_one && seen->watched_for > 0)
		return "at that line at every sample but one";
	return "at that line at every sample since it came there";
}

void run_seen_task(const struct watch_tracker *t, uint64_t addr,
		   struct run_seen *out)
{
	run_seen_item(t, t ? watch_find(t, WATCH_TASK, addr) : NULL, out);
}

void run_seen_thread(const struct watch_tracker *t, const struct py_thread *th,
		     struct run_seen *out)
{
	/* The key watch_feed() follows a thread by. */
	uint64_t id = th->tid > 0 ? (uint64_t)th->tid : th->thread_id;

	run_seen_item(t, t ? watch_find(t, WATCH_THREAD, id) : NULL, out);
}

int run_seen_add(struct strbuf *sb, const struct run_seen *seen)
{
	switch (seen->state) {
	case RUN_SEEN_STUCK:
		strbuf_addf(sb, "stuck for %s%.1fs",
			    seen->at_least ? "at least " : "", seen->stuck_for);
		return 1;
	case RUN_SEEN_BUSY:
		strbuf_addf(sb, "busy, %.0f%% of a CPU", seen->busy * 100);
		return 1;
	case RUN_SEEN_UNKNOWN:
	case RUN_SEEN_MOVING:
		break;
	}
	return 0;
}

static void add_place(struct strbuf *sb, const char *file,
		      const char *function, int line)
{
	esc_add_name_raw(sb, file);
	if (line >= 0)
		strbuf_addf(sb, ":%d", line);
	if (function) {
		strbuf_addstr(sb, " in ");
		esc_add_name_raw(sb, function);
	}
}

/* Is the item one the report lists (stuck or busy)?  *seen says. */
static int listed(const struct watch_tracker *t, const struct watch_item *it,
		  struct run_seen *seen)
{
	run_seen_item(t, it, seen);
	return seen->state == RUN_SEEN_STUCK || seen->state == RUN_SEEN_BUSY;
}

/* 'task "name"', 'trio task "name"', 'thread 12 "name"', 'coroutine "f"
 * (0x7f..)', 'greenlet "name" (0x7f..)', 'Hub greenlet (0x7f..)': a
 * generator or greenlet by its address. */
static void add_subject(struct strbuf *sb, const struct watch_item *it,
			int with_addr)
{
	const char *name = it->name, *kind = watch_kind_label(it);

	if (kind) {
		esc_add_name_raw(sb, kind);
		strbuf_addch(sb, ' ');
	}
	switch (it->kind) {
	case WATCH_TASK:
		strbuf_addstr(sb, "task \"");
		esc_add_name_raw(sb, name);
		strbuf_addch(sb, '"');
		if (with_addr)
			strbuf_addf(sb, " (0x%llx)", (unsigned long long)it->id);
		return;
	case WATCH_THREAD:
		strbuf_addf(sb, "thread %llu", (unsigned long long)it->id);
		break;
	case WATCH_GENERATOR:
		esc_add_name_raw(sb, it->label ? it->label : "generator");
		break;
	default:
		strbuf_addstr(sb, "greenlet");
		break;
	}
	if (name) {
		strbuf_addstr(sb, " \"");
		esc_add_name_raw(sb, name);
		strbuf_addch(sb, '"');
	}
	if (it->kind != WATCH_THREAD)
		strbuf_addf(sb, " (0x%llx)", (unsigned long long)it->id);
}

int run_seen_describe(struct strbuf *sb, const struct watch_tracker *t,
		      const struct watch_item *it, int with_addr)
{
	struct run_seen seen;

	if (!listed(t, it, &seen))
		return 0;
	add_subject(sb, it, with_addr);
	strbuf_addch(sb, ' ');
	return run_seen_what(sb, t, it);
}

int run_seen_what(struct strbuf *sb, const struct watch_tracker *t,
		  const struct watch_item *it)
{
	struct run_seen seen;

	if (!listed(t, it, &seen))
		return 0;
	run_seen_add(sb, &seen);
	if (it->where_file) {
		strbuf_addstr(sb, " at ");
		add_place(sb, it->where_file, it->where_function,
			  it->where_line);
	}
	/* (never ran: its loop never came to it) */
	if (it->not_started)
		strbuf_addstr(sb, " (not started)");
	if (it->inner_file) {
		strbuf_addstr(sb, " (innermost ");
		add_place(sb, it->inner_file, it->inner_function,
			  it->inner_line);
		strbuf_addch(sb, ')');
	}
	if (it->waits_on && seen.state == RUN_SEEN_STUCK)
		strbuf_addf(sb, ", waits on %s", it->waits_on);
	return 1;
}
