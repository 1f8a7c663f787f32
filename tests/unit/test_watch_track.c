/*
 * The watch tracker on plain observations: what counts as progress for
 * a task and for a thread, when "stuck" and "moved again" events come,
 * what happens to objects that go away, the display order, and threads
 * idle by design (never stuck).
 */
#include "cli/watch_track.h"

#include <string.h>

#include "tests/unit/check.h"

static struct watch_obs task(uint64_t addr, uint64_t fp)
{
	struct watch_obs o;

	memset(&o, 0, sizeof(o));
	o.kind = WATCH_TASK;
	o.id = addr;
	o.name = "Task-1";
	o.fingerprint = fp;
	o.cpu_s = -1;
	o.wait_s = -1;
	o.sleeps = -1;
	o.where.file = "app.py";
	o.where.function = "main";
	o.where.line = 10;
	o.inner.line = -1;
	o.waits_on = "Future";
	return o;
}

static struct watch_obs thread(int tid, uint64_t fp, double cpu, long sleeps)
{
	struct watch_obs o = task((uint64_t)tid, fp);

	o.kind = WATCH_THREAD;
	o.wait_s = cpu >= 0 ? 0.001 : -1;
	o.name = "worker";
	o.cpu_s = cpu;
	o.sleeps = sleeps;
	o.window_s = 1.0;
	o.waits_on = NULL;
	return o;
}

static size_t count_events(const struct watch_tracker *t,
			   enum watch_event_kind kind)
{
	size_t i, n = 0;

	for (i = 0; i < t->nevents; i++)
		n += t->events[i].kind == kind;
	return n;
}

static void test_task_progress(void)
{
	struct watch_tracker t;
	struct watch_obs parked = task(0x1000, 7), looping = task(0x2000, 8);
	const struct watch_item *a, *b;
	int s;

	watch_tracker_init(&t, 2.0);
	for (s = 0; s <= 6; s++) {
		watch_begin(&t, s * 0.5);
		watch_observe(&t, &parked);
		/* a new awaited future each time */
		looping.fingerprint = 100 + (uint64_t)s;
		watch_observe(&t, &looping);
		watch_end(&t);
		if (s == 4) {
			CHECK(t.nevents == 1 && t.events[0].kind == WATCH_EV_STUCK,
			      "stuck event at 2 s (%zu events)", t.nevents);
			CHECK(t.nevents == 1 && t.events[0].stuck_for >= 2.0,
			      "stuck_for %g", t.nevents ? t.events[0].stuck_for : -1);
		} else {
			CHECK(t.nevents == 0, "no event at sample %d (%zu)", s,
			      t.nevents);
		}
	}
	a = watch_find(&t, WATCH_TASK, 0x1000);
	b = watch_find(&t, WATCH_TASK, 0x2000);
	CHECK(a && watch_stuck_for(&t, a) == 3.0, "parked task stuck 3 s");
	CHECK(a && watch_state_of(&t, a) == WATCH_STUCK, "parked task stuck");
	CHECK(b && watch_stuck_for(&t, b) == 0, "looping task never stuck");
	CHECK(b && watch_state_of(&t, b) == WATCH_ACTIVE, "looping task active");
	CHECK(a && a->where_line == 10 && !strcmp(a->where_file, "app.py"),
	      "where kept");

	/* the same fingerprint but the caller saw it wake */
	watch_begin(&t, 3.5);
	parked.woke = 1;
	watch_observe(&t, &parked);
	watch_observe(&t, &looping);
	watch_end(&t);
	CHECK(count_events(&t, WATCH_EV_MOVED) == 1, "moved event");
	CHECK(t.nevents == 1 && t.events[0].stuck_for == 3.5,
	      "moved after 3.5 s without progress");
	CHECK(a && watch_stuck_for(&t, a) == 0, "0 s after moving");

	/* the looping task finishes: gone, with no event (never stuck) */
	watch_begin(&t, 4.0);
	watch_observe(&t, &parked);
	watch_end(&t);
	CHECK(t.nevents == 0, "no event for a task that was never stuck");
	b = watch_find(&t, WATCH_TASK, 0x2000);
	CHECK(b && b->gone && watch_state_of(&t, b) == WATCH_GONE, "gone");
	CHECK(b && watch_stuck_for(&t, b) == 0, "gone: stuck_for 0");
	watch_tracker_release(&t);
}

static void test_gone_after_stuck(void)
{
	struct watch_tracker t;
	struct watch_obs o = task(0x3000, 1);
	const struct watch_item *it;

	watch_tracker_init(&t, 1.0);
	watch_begin(&t, 0);
	watch_observe(&t, &o);
	watch_end(&t);
	watch_begin(&t, 1.0);
	watch_observe(&t, &o);
	watch_end(&t);
	CHECK(count_events(&t, WATCH_EV_STUCK) == 1, "stuck at 1 s");
	watch_begin(&t, 2.0);
	watch_end(&t);
	CHECK(count_events(&t, WATCH_EV_GONE) == 1, "gone event");
	/* a new task at the same address starts afresh */
	watch_begin(&t, 3.0);
	watch_observe(&t, &o);
	watch_end(&t);
	it = watch_find(&t, WATCH_TASK, 0x3000);
	CHECK(it && !it->gone && watch_stuck_for(&t, it) == 0,
	      "reused address: a new object");
	CHECK(t.nitems == 1, "one item per identity (%zu)", t.nitems);
	watch_tracker_release(&t);
}

static void test_threads(void)
{
	struct watch_tracker t;
	int s;
	const struct watch_item *blocked, *spinning, *napping, *unknown;
	size_t order[8];

	CHECK(!watch_thread_ran(0, 0), "idle thread did not run");
	/* our stop's own sleep is left out by the window (watch_cpu.c) */
	CHECK(watch_thread_ran(0.0001, 1), "one sleep of its own: ran");
	CHECK(watch_thread_ran(0.0001, 10), "short sleeps ran");
	CHECK(watch_thread_ran(0.5, 0), "CPU time grew");
	CHECK(!watch_thread_ran(0, -1), "nothing known: did not run");

	watch_tracker_init(&t, 2.0);
	for (s = 0; s <= 8; s++) {
		struct watch_obs a = thread(11, 5, 0.00001, 0);
		struct watch_obs b = thread(12, 5, 0.9, 40);
		struct watch_obs c = thread(13, 5, 0.0003, 10);
		struct watch_obs d = thread(14, 5, -1, -1);

		watch_begin(&t, s * 0.5);
		watch_observe(&t, &a);
		watch_observe(&t, &b);
		watch_observe(&t, &c);
		watch_observe(&t, &d);
		watch_end(&t);
	}
	blocked = watch_find(&t, WATCH_THREAD, 11);
	spinning = watch_find(&t, WATCH_THREAD, 12);
	napping = watch_find(&t, WATCH_THREAD, 13);
	unknown = watch_find(&t, WATCH_THREAD, 14);
	CHECK(blocked && watch_state_of(&t, blocked) == WATCH_STUCK &&
	      watch_stuck_for(&t, blocked) == 4.0, "blocked thread stuck 4 s");
	CHECK(spinning && watch_state_of(&t, spinning) == WATCH_BUSY,
	      "spinning thread busy");
	CHECK(spinning && watch_busy(spinning) > 0.89 &&
	      watch_busy(spinning) < 0.91, "busy share %g",
	      spinning ? watch_busy(spinning) : -1);
	CHECK(spinning && watch_stuck_for(&t, spinning) == 0,
	      "spinning thread never stuck");
	CHECK(napping && watch_state_of(&t, napping) == WATCH_ACTIVE,
	      "napping thread active");
	CHECK(unknown && watch_state_of(&t, unknown) == WATCH_STUCK,
	      "no accounting, unchanged stack: stuck");
	CHECK(watch_busy(watch_find(&t, WATCH_THREAD, 14)) == 0,
	      "no accounting: busy 0");

	CHECK(watch_demand(watch_find(&t, WATCH_THREAD, 14)) < 0,
	      "no accounting: demand unknown");
	CHECK(watch_sorted(&t, order) == 4, "all sorted");
	CHECK(t.items[order[0]].id == 11 || t.items[order[0]].id == 14,
	      "stuck ones first");
	CHECK(t.items[order[2]].id == 12, "then the busy one");
	CHECK(t.items[order[3]].id == 13, "then the rest");
	watch_tracker_release(&t);
}

/* A spinning thread on a crowded machine: 3% of a CPU, the rest of the
 * time waiting for one.  A napping one waits too, a little. */
static void test_crowded(void)
{
	struct watch_tracker t;
	const struct watch_item *spin, *nap;
	int s;

	watch_tracker_init(&t, 2.0);
	for (s = 0; s <= 4; s++) {
		struct watch_obs a = thread(21, 5, 0.03, 30);
		struct watch_obs b = thread(22, 5, 0.001, 20);

		a.wait_s = 0.95;
		b.wait_s = 0.2;
		watch_begin(&t, s * 1.0);
		watch_observe(&t, &a);
		watch_observe(&t, &b);
		watch_end(&t);
	}
	spin = watch_find(&t, WATCH_THREAD, 21);
	nap = watch_find(&t, WATCH_THREAD, 22);
	CHECK(spin && watch_state_of(&t, spin) == WATCH_BUSY,
	      "crowded spinner busy");
	CHECK(spin && watch_busy(spin) < 0.04 && watch_demand(spin) > 0.9,
	      "busy is the CPU share, demand includes the wait");
	CHECK(nap && watch_state_of(&t, nap) == WATCH_ACTIVE,
	      "a napper that waits a little is active");
	watch_tracker_release(&t);
}

/* Generators and greenlets are kinds of their own: the same address as
 * a task is another item, and they are judged like tasks (no CPU). */
static void test_other_kinds(void)
{
	struct watch_tracker t;
	const struct watch_item *gen, *gl, *tk;
	int s;

	watch_tracker_init(&t, 2.0);
	for (s = 0; s <= 3; s++) {
		struct watch_obs g = task(0x3000, 1), l = task(0x3000, 100 + s);
		struct watch_obs k = task(0x3000, 2), bad = task(0x4000, 3);

		g.kind = WATCH_GENERATOR;
		g.label = "coroutine";
		l.kind = WATCH_GREENLET;
		l.label = "Greenlet";
		bad.kind = (enum watch_kind)WATCH_NKINDS;
		watch_begin(&t, s * 1.0);
		watch_observe(&t, &g);
		watch_observe(&t, &l);
		watch_observe(&t, &k);
		watch_observe(&t, &bad);
		watch_end(&t);
	}
	gen = watch_find(&t, WATCH_GENERATOR, 0x3000);
	gl = watch_find(&t, WATCH_GREENLET, 0x3000);
	tk = watch_find(&t, WATCH_TASK, 0x3000);
	CHECK(t.nitems == 3, "three items for one address, got %zu", t.nitems);
	CHECK(gen && gen != tk && watch_state_of(&t, gen) == WATCH_STUCK &&
	      watch_stuck_for(&t, gen) == 3.0, "unchanged generator stuck 3s");
	CHECK(gen && gen->label && !strcmp(gen->label, "coroutine"),
	      "the label is kept");
	CHECK(gl && watch_state_of(&t, gl) == WATCH_ACTIVE,
	      "a greenlet whose fingerprint changes is active");
	CHECK(watch_busy(gen) == 0 && watch_demand(gen) < 0, "no CPU figures");
	CHECK(!watch_find(&t, (enum watch_kind)WATCH_NKINDS, 0x4000),
	      "an unknown kind is not followed");
	watch_tracker_release(&t);
}

/* A thread waiting for work by design: idle however long it waits, no
 * "stuck" event, listed after the stuck and the active ones; by its
 * progress alone (what `run` asks) stuck.  Once it runs the program's
 * job it is the job's thread again. */
static void test_idle_thread(void)
{
	struct watch_tracker t;
	struct watch_obs pool = thread(21, 5, 0, 0), blocked = thread(22, 6, 0, 0);
	struct watch_obs napping = thread(23, 7, 0, 1);
	const struct watch_item *it;
	size_t order[3];
	int s;

	pool.idle = "an executor's worker thread";
	watch_tracker_init(&t, 1.0);
	for (s = 0; s <= 4; s++) {
		watch_begin(&t, s * 0.5);
		watch_observe(&t, &pool);
		watch_observe(&t, &blocked);
		watch_observe(&t, &napping);
		watch_end(&t);
		if (s == 2)
			CHECK(t.nevents == 1 && t.events[0].kind == WATCH_EV_STUCK &&
			      t.items[t.events[0].item].id == 22,
			      "only the blocked thread's stuck event (%zu)",
			      t.nevents);
		else
			CHECK(t.nevents == 0, "no event at %d (%zu)", s, t.nevents);
	}
	it = watch_find(&t, WATCH_THREAD, 21);
	CHECK(it && watch_state_of(&t, it) == WATCH_IDLE, "idle");
	CHECK(it && watch_progress_of(&t, it) == WATCH_STUCK,
	      "stuck by its progress");
	CHECK(it && watch_stuck_for(&t, it) == 2.0, "no progress for 2 s");
	CHECK(!strcmp(watch_state_name(WATCH_IDLE), "idle"), "its name");
	CHECK(watch_sorted(&t, order) == 3, "all sorted");
	CHECK(t.items[order[0]].id == 22 && t.items[order[1]].id == 23 &&
	      t.items[order[2]].id == 21, "stuck, active, then idle");

	/* it takes a job that blocks: its frames change, it is no longer
	 * idle, and stuck after the threshold like any thread */
	pool.idle = NULL;
	pool.fingerprint = 50;
	for (s = 5; s <= 8; s++) {
		watch_begin(&t, s * 0.5);
		watch_observe(&t, &pool);
		watch_observe(&t, &blocked);
		watch_observe(&t, &napping);
		watch_end(&t);
		/* it moved at 2.5 s: stuck from 3.5 */
		if (s == 7)
			CHECK(t.nevents == 1 &&
			      t.items[t.events[0].item].id == 21,
			      "its stuck event (%zu)", t.nevents);
	}
	it = watch_find(&t, WATCH_THREAD, 21);
	CHECK(it && watch_state_of(&t, it) == WATCH_STUCK && !it->idle,
	      "the job's thread is stuck");
	watch_tracker_release(&t);
}

/* A sample that could not read trio's tasks carries them: not gone,
 * their stuck time going on; the asyncio task it did not see is gone. */
static void test_carried(void)
{
	struct watch_tracker t;
	struct watch_obs trio = task(0x4000, 1), aio = task(0x5000, 2);
	const struct watch_item *it;
	size_t stuck = 0;
	int s;

	trio.label = "trio";
	watch_tracker_init(&t, 2.0);
	for (s = 0; s <= 6; s++) {
		watch_begin(&t, s * 0.5);
		if (s != 3) {
			watch_observe(&t, &trio);
			watch_observe(&t, &aio);
		} else {
			watch_carry(&t, WATCH_TASK, "trio");
		}
		watch_end(&t);
		stuck += count_events(&t, WATCH_EV_STUCK);
		CHECK(count_events(&t, WATCH_EV_GONE) == 0, "no gone event");
	}
	it = watch_find(&t, WATCH_TASK, 0x4000);
	CHECK(it && !it->gone && watch_stuck_for(&t, it) == 3.0,
	      "carried trio task stuck 3 s (%g)",
	      it ? watch_stuck_for(&t, it) : -1);
	CHECK(stuck == 1, "the carried task's stuck event, once, and no "
	      "other (%zu)", stuck);
	/* the asyncio task went at sample 3 and came back as a new one */
	it = watch_find(&t, WATCH_TASK, 0x5000);
	CHECK(it && watch_stuck_for(&t, it) == 1.0,
	      "uncarried task fresh after sample 3 (%g)",
	      it ? watch_stuck_for(&t, it) : -1);
	watch_tracker_release(&t);
}

/* What a line calls an unnamed greenlet's kind: its class, unless that
 * is only "greenlet" again (gevent's Greenlet). */
static void test_kind_label(void)
{
	struct watch_item it;

	memset(&it, 0, sizeof(it));
	it.kind = WATCH_GREENLET;
	it.label = (char *)"Hub";
	CHECK(watch_kind_label(&it) && !strcmp(watch_kind_label(&it), "Hub"),
	      "Hub greenlet");
	it.label = (char *)"Greenlet";
	CHECK(!watch_kind_label(&it), "no \"Greenlet greenlet\"");
	it.label = (char *)"greenlet";
	CHECK(!watch_kind_label(&it), "no \"greenlet greenlet\"");
}

/* A thread first seen after 5 s off its CPU has been without progress
 * that long: stuck at the first sample; one running (off_cpu_s < 0)
 * counts from now. */
static void test_off_cpu_first(void)
{
	struct watch_tracker t;
	struct watch_obs slept = thread(700, 1, 0, 0);
	struct watch_obs ran = thread(701, 2, 0, 0);
	const struct watch_item *it;

	slept.off_cpu_s = 5.7;  /* counted as 5: whole seconds */
	ran.off_cpu_s = -2.0;
	watch_tracker_init(&t, 2.0);
	watch_begin(&t, 10.0);
	watch_observe(&t, &slept);
	watch_observe(&t, &ran);
	watch_end(&t);
	it = watch_find(&t, WATCH_THREAD, 700);
	CHECK(it && watch_stuck_for(&t, it) == 5.0 &&
	      count_events(&t, WATCH_EV_STUCK) == 1 &&
	      t.events[0].item == (size_t)(it - t.items),
	      "stuck 5 s at the first sample");
	it = watch_find(&t, WATCH_THREAD, 701);
	CHECK(it && watch_stuck_for(&t, it) == 0, "running: from now");
	watch_tracker_release(&t);
}

/* Only what was there, unmoved, since the first sample has a time that
 * is a floor: not one that came later, nor one that moved; an event
 * says which. */
static void test_at_least(void)
{
	struct watch_tracker t;
	struct watch_obs early = task(0x1000, 1), late = task(0x2000, 2);
	struct watch_obs moving = task(0x3000, 3);
	const struct watch_item *a, *b, *c;
	size_t i, floors = 0;
	int s;

	watch_tracker_init(&t, 1.0);
	for (s = 0; s <= 6; s++) {
		watch_begin(&t, s * 0.5);
		watch_observe(&t, &early);
		if (s >= 1)
			watch_observe(&t, &late);
		moving.fingerprint = s == 2 ? 30 : 3;
		watch_observe(&t, &moving);
		watch_end(&t);
		for (i = 0; i < t.nevents; i++) {
			const struct watch_event *ev = &t.events[i];
			int first = t.items[ev->item].id == 0x1000;

			if (ev->kind == WATCH_EV_STUCK)
				floors += first == ev->at_least;
		}
	}
	a = watch_find(&t, WATCH_TASK, 0x1000);
	b = watch_find(&t, WATCH_TASK, 0x2000);
	c = watch_find(&t, WATCH_TASK, 0x3000);
	CHECK(a && watch_stuck_at_least(&t, a) && watch_stuck_for(&t, a) == 3.0,
	      "there from the first sample: at least 3 s");
	CHECK(b && !watch_stuck_at_least(&t, b) &&
	      watch_stuck_for(&t, b) == 2.5, "came later: 2.5 s, no floor");
	CHECK(c && !watch_stuck_at_least(&t, c), "moved: no floor");
	CHECK(floors == 3, "each stuck event says whether (%zu)", floors);
	watch_tracker_release(&t);
}

/* A loop polling at one line, seen once at its check's: away once and
 * back, two changes, at its first place again. */
static void test_polling_away_once(void)
{
	static const uint64_t fps[] = { 1, 1, 2, 1, 1 };
	struct watch_tracker t;
	struct watch_obs o;
	const struct watch_item *it;
	size_t i;

	watch_tracker_init(&t, 2.0);
	for (i = 0; i < sizeof(fps) / sizeof(fps[0]); i++) {
		o = thread(800, fps[i], 0.001, 3);
		watch_begin(&t, (double)i);
		watch_observe(&t, &o);
		watch_end(&t);
	}
	it = watch_find(&t, WATCH_THREAD, 800);
	CHECK(it && it->same_since == 3.0 && it->changes == 2 &&
	      it->nseen == 5 && it->nfirst == 4 &&
	      it->first_fingerprint == 1 && it->fingerprint == 1,
	      "away once and back");
	watch_tracker_release(&t);
}

/* A loop's thread runs a task's step at each sample: the same task's
 * (one long step) or a new one's each time (a busy loop that turns). */
static void test_running_step(void)
{
	static const uint64_t steps[] = { 0x10, 0x10, 0x10, 0x20, 0x30 };
	struct watch_tracker t;
	struct watch_obs o;
	const struct watch_item *it;
	size_t i;

	watch_tracker_init(&t, 2.0);
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		o = thread(900, 5, 0.9, 0);
		o.step = steps[i];
		watch_begin(&t, (double)i);
		watch_observe(&t, &o);
		if (i == 2)
			CHECK(watch_find(&t, WATCH_THREAD, 900)->
			      step_same_since == 0.0, "one step since the first");
		watch_end(&t);
	}
	it = watch_find(&t, WATCH_THREAD, 900);
	CHECK(it && it->step == 0x30 && it->step_same_since == 4.0,
	      "a new task's step: from now");
	watch_tracker_release(&t);
}

/* The same task's step at each sample, but its loop's mark (its ready
 * queue's left end) moved between two: the loop turned, and the step
 * is another; a mark that stays, one step. */
static void test_step_mark(void)
{
	static const uint64_t marks[] = { 7, 7, 7, 9, 9 };
	struct watch_tracker t;
	struct watch_obs o;
	const struct watch_item *it;
	size_t i;

	watch_tracker_init(&t, 2.0);
	for (i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
		o = thread(901, 5, 0.9, 0);
		o.step = 0x10;
		o.step_mark = marks[i];
		watch_begin(&t, (double)i);
		watch_observe(&t, &o);
		if (i == 2)
			CHECK(watch_find(&t, WATCH_THREAD, 901)->
			      step_same_since == 0.0, "one mark: one step");
		watch_end(&t);
	}
	it = watch_find(&t, WATCH_THREAD, 901);
	CHECK(it && it->step == 0x10 && it->step_mark == 9 &&
	      it->step_same_since == 3.0, "the loop turned: a new step");
	watch_tracker_release(&t);
}

/* A thread in time.sleep() at every sample, at one line, its one wake
 * in a window lost among the stop's (sleeps 0): a heartbeat whose sleep
 * read at one sample is over by a later one, which finds a later end,
 * woke; one whose end only moves on by each stop's slack (a time left
 * restarted after the resume, 3.6 to 3.10) did not; nor one whose end,
 * though moved on by more than that, is still ahead. */
static struct watch_obs asleep(int tid, double due, double now, double slack)
{
	struct watch_obs o = thread(tid, 5, 0, 0);

	o.sleep.on = o.sleep.timed = o.sleep.known = 1;
	o.sleep.due = due;
	o.sleep.in_s = due - now;
	o.sleep.slack = slack;
	return o;
}

static void test_slept_again(void)
{
	struct watch_tracker t;
	const struct watch_item *beat, *still, *pushed;
	int s;

	watch_tracker_init(&t, 1.0);
	for (s = 0; s <= 12; s++) {
		double now = s * 0.2;
		/* heartbeat: 0.7 s sleeps ending at 0.7, 1.4, 2.1 ... */
		double beat_due = 0.7 * (1 + (int)(now / 0.7));
		struct watch_obs a = asleep(21, beat_due, now, 0);
		/* an hour's sleep, its end moved on by 3 ms a stop, each
		 * stop's slack 2 ms */
		struct watch_obs b = asleep(22, 3600 + s * 0.003, now, 0.002);
		/* its end moved on by 50 ms a stop (a host slow to run it
		 * after the resume), still far ahead */
		struct watch_obs c = asleep(23, 10 + s * 0.05, now, 0.002);

		/* (one due within 0.1 s is not read: no sleep seen) */
		if (beat_due - now < 0.1)
			memset(&a.sleep, 0, sizeof(a.sleep));
		watch_begin(&t, now);
		watch_observe(&t, &a);
		watch_observe(&t, &b);
		watch_observe(&t, &c);
		watch_end(&t);
	}
	beat = watch_find(&t, WATCH_THREAD, 21);
	still = watch_find(&t, WATCH_THREAD, 22);
	pushed = watch_find(&t, WATCH_THREAD, 23);
	CHECK(beat && watch_state_of(&t, beat) == WATCH_ACTIVE &&
	      watch_stuck_for(&t, beat) < 0.7, "heartbeat active, stuck %g",
	      beat ? watch_stuck_for(&t, beat) : -1);
	CHECK(still && watch_state_of(&t, still) == WATCH_STUCK &&
	      watch_stuck_for(&t, still) > 2.39, "slack only: stuck %g",
	      still ? watch_stuck_for(&t, still) : -1);
	CHECK(pushed && watch_state_of(&t, pushed) == WATCH_STUCK,
	      "end still ahead: stuck");
	watch_tracker_release(&t);
}

/* A thread in a timed wait at one place (its wakes lost among our
 * stops: no CPU seen).  One whose wait ends early each time, a new one
 * beginning before the last ran out (get(timeout=0.5) fed every 0.2 s),
 * moved; one whose waits run out, 0.4 s each (a poll of an Event nobody
 * sets), did not, and counts them; one in one long wait, neither.
 * (Before woken_early(), the fed one was stuck.) */
static struct watch_obs timed(int tid, double due, double now)
{
	struct watch_obs o = thread(tid, 5, 0, 0);

	o.timeout.on = o.timeout.timed = o.timeout.known = 1;
	o.timeout.due = due;
	o.timeout.in_s = due - now;
	if (due - now < 0.1)   /* (not read: cli/collect_deadlines.c) */
		memset(&o.timeout, 0, sizeof(o.timeout));
	return o;
}

static void test_timed_waits(void)
{
	struct watch_tracker t;
	const struct watch_item *fed, *poll, *long_wait;
	int s;

	watch_tracker_init(&t, 1.0);
	for (s = 0; s <= 12; s++) {
		double now = s * 0.3;
		/* fed: a new get(timeout=0.5) 0.2 s after each began */
		double fed_start = 0.2 * (int)(now / 0.2);
		struct watch_obs a = timed(41, fed_start + 0.5, now);
		struct watch_obs b = timed(42, 0.4 * (1 + (int)(now / 0.4)),
					   now);
		struct watch_obs c = timed(43, 700, now);

		watch_begin(&t, now);
		watch_observe(&t, &a);
		watch_observe(&t, &b);
		watch_observe(&t, &c);
		watch_end(&t);
	}
	fed = watch_find(&t, WATCH_THREAD, 41);
	poll = watch_find(&t, WATCH_THREAD, 42);
	long_wait = watch_find(&t, WATCH_THREAD, 43);
	/* (its count may grow: two waits between samples, the second
	 * ending early, look like one that ran out) */
	CHECK(fed && watch_state_of(&t, fed) == WATCH_ACTIVE,
	      "fed: moving, stuck %g", fed ? watch_stuck_for(&t, fed) : -1);
	CHECK(poll && watch_state_of(&t, poll) == WATCH_STUCK &&
	      poll->timed_again >= 4, "poll: stuck, again %d",
	      poll ? poll->timed_again : -1);
	CHECK(long_wait && watch_state_of(&t, long_wait) == WATCH_STUCK &&
	      long_wait->timed_again == 0, "one wait: stuck, never again");
	watch_tracker_release(&t);
}

/* A thread that spun for the first half of the watch, then sat still
 * (under the stuck threshold): its share over the watch is a half, but
 * it is not busy now; one that still spins is. */
static void test_busy_then_still(void)
{
	struct watch_tracker t;
	const struct watch_item *parked, *spinning;
	int s;

	watch_tracker_init(&t, 5.0);
	for (s = 0; s <= 8; s++) {
		struct watch_obs a = thread(31, 5, s <= 4 ? 0.9 : 0, 0);
		struct watch_obs b = thread(32, 5, 0.9, 0);

		watch_begin(&t, s * 0.5);
		watch_observe(&t, &a);
		watch_observe(&t, &b);
		watch_end(&t);
	}
	parked = watch_find(&t, WATCH_THREAD, 31);
	spinning = watch_find(&t, WATCH_THREAD, 32);
	CHECK(parked && watch_busy(parked) > 0.3, "its share %g",
	      parked ? watch_busy(parked) : -1);
	CHECK(parked && watch_state_of(&t, parked) == WATCH_ACTIVE,
	      "still since: not busy");
	CHECK(spinning && watch_state_of(&t, spinning) == WATCH_BUSY,
	      "still spinning: busy");
	watch_tracker_release(&t);
}

int main(void)
{
	test_slept_again();
	test_timed_waits();
	test_busy_then_still();
	test_off_cpu_first();
	test_at_least();
	test_polling_away_once();
	test_running_step();
	test_step_mark();
	test_kind_label();
	test_carried();
	test_other_kinds();
	test_crowded();
	test_task_progress();
	test_gone_after_stuck();
	test_threads();
	test_idle_thread();
	return CHECK_DONE("test_watch_track");
}
