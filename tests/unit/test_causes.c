/*
 * The cause analysis of `coroscope run` (cli/run_causes.c) on snapshots
 * and task sets built by hand: which causes it finds, how it names them,
 * and the ranking.
 */
#include "cli/run_causes.h"

#include <stdlib.h>
#include <string.h>

#include "cli/run_seen.h"
#include "readers/greenlets.h"
#include "cli/watch_track.h"
#include "common/strbuf.h"
#include "common/addrmap.h"
#include "tests/unit/check.h"

static const struct py_code prog_take = {
	.name = "take", .qualname = "take", .filename = "/app/prog.py",
};
static const struct py_code stdlib_wait = {
	.name = "wait", .qualname = "Condition.wait",
	.filename = "/usr/lib/python3.12/threading.py",
};
static const struct py_code event_wait = {
	.name = "wait", .qualname = "Event.wait",
	.filename = "/usr/lib/python3.12/threading.py",
};
static const struct py_code coro_code = {
	.name = "work", .qualname = "work", .filename = "/app/tasks.py",
};

static struct py_frame frames[8];

/* A thread whose innermost frames are f[0..n). */
static struct py_thread thread(int tid, const char *name, int gil,
			       struct py_frame *f, size_t n)
{
	struct py_thread t;

	memset(&t, 0, sizeof(t));
	t.tid = tid;
	t.name = (char *)name;
	t.holds_gil = gil;
	t.frames = f;
	t.nframes = n;
	return t;
}

static void frame(struct py_frame *f, const struct py_code *code, int line)
{
	memset(f, 0, sizeof(*f));
	f->code = code;
	f->line = line;
}

static const struct run_cause *find(const struct run_summary *s,
				    enum run_cause_kind kind)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->causes[i].kind == kind)
			return &s->causes[i];
	return NULL;
}

static void test_lock_deadlock(void)
{
	struct py_async a = { 0 };
	struct py_thread t[3];
	struct py_snapshot snap = { .threads = t, .nthreads = 3 };
	struct run_thread_facts facts[3] = {
		{ 1, 0, "with lock_b:" , NULL, NULL, NULL, 0, 0, 0, NULL, 0 }, { 1, 0, "lock_a.acquire()" , NULL, NULL, NULL, 0, 0, 0, NULL, 0 },
		{ 0, 0, NULL , NULL, NULL, NULL, 0, 0, 0, NULL, 0 },
	};
	struct run_summary s;
	const struct run_cause *c;

	frame(&frames[0], &prog_take, 10);
	frame(&frames[1], &prog_take, 20);
	frame(&frames[2], &prog_take, 30);
	t[0] = thread(11, "worker-a", 0, &frames[0], 1);
	t[1] = thread(12, "worker-b", 0, &frames[1], 1);
	t[2] = thread(13, NULL, 1, &frames[2], 1);
	run_summary_init(&s);
	run_summarize(&s, 42, &snap, &a, facts, NULL);
	CHECK(s.n == 1, "one cause, got %zu", s.n);
	c = find(&s, RUN_CAUSE_DEADLOCK);
	CHECK(c != NULL, "a deadlock");
	if (c) {
		CHECK(c->pid == 42, "pid %d", c->pid);
		CHECK(!strcmp(c->headline, "possible deadlock: 2 threads are "
			      "blocked acquiring locks"), "%s", c->headline);
		CHECK(c->ndetails == 2, "%zu details", c->ndetails);
		CHECK(c->ndetails == 2 && !strcmp(c->details[0],
			"thread 11 \"worker-a\" at /app/prog.py:10 in take: "
			"with lock_b:"), "%s", c->details[0]);
	}
	run_summary_release(&s);
}

/* Threads blocked on multiprocessing locks whose holders are known
 * (cli/run_semlocks.c) have causes of their own, a deadlock's ranked
 * first; the one left on a lock not known is no "possible deadlock". */
static void test_lock_holders_known(void)
{
	struct py_async a = { 0 };
	struct py_thread t[3];
	struct py_snapshot snap = { .threads = t, .nthreads = 3 };
	struct run_lock_held held = {
		.name = "multiprocessing.Lock", .addr = 0x1000,
		.lines = { "holder: process 7, thread 7" } };
	struct run_lock_held cycle = {
		.name = "multiprocessing.RLock", .addr = 0x2000,
		.lines = { "holder: process 8, thread 8", "a deadlock: ..." },
		.cycle = 1 };
	struct run_thread_facts facts[3] = {
		{ 1, 1, "with a:", NULL, NULL, NULL, 0, 0, 0, &held, 0 },
		{ 1, 1, "with b:", NULL, NULL, NULL, 0, 0, 0, &cycle, 0 },
		{ 1, 1, "with c:", NULL, NULL, NULL, 0, 0, 0, NULL, 0 },
	};
	struct run_summary s;
	const struct run_cause *c;

	frame(&frames[0], &prog_take, 10);
	frame(&frames[1], &prog_take, 20);
	frame(&frames[2], &prog_take, 30);
	t[0] = thread(11, "a", 0, &frames[0], 1);
	t[1] = thread(12, "b", 0, &frames[1], 1);
	t[2] = thread(13, "c", 0, &frames[2], 1);
	run_summary_init(&s);
	run_summarize(&s, 5, &snap, &a, facts, NULL);
	CHECK(s.n == 3, "three causes, got %zu", s.n);
	CHECK(!find(&s, RUN_CAUSE_DEADLOCK), "no possible deadlock");
	c = find(&s, RUN_CAUSE_LOCK_CYCLE);
	CHECK(c && !strcmp(c->headline, "deadlock: thread 12 \"b\" is "
			   "blocked acquiring multiprocessing.RLock 0x2000"),
	      "%s", c ? c->headline : "(none)");
	CHECK(c && c->ndetails == 3 &&
	      !strcmp(c->details[1], "holder: process 8, thread 8") &&
	      !strcmp(c->details[2], "a deadlock: ..."), "cycle's details");
	run_summary_sort(&s);
	CHECK(s.n == 3 && s.causes[0].kind == RUN_CAUSE_LOCK_CYCLE,
	      "the deadlock first");
	CHECK(s.n == 3 && !strcmp(s.causes[1].headline, "thread 11 \"a\" is "
				  "blocked acquiring multiprocessing.Lock "
				  "0x1000") &&
	      s.causes[1].ndetails == 2 &&
	      !strcmp(s.causes[1].details[0],
		      "at /app/prog.py:10 in take: with a:") &&
	      !strcmp(s.causes[1].details[1], "holder: process 7, thread 7"),
	      "%s", s.n == 3 ? s.causes[1].headline : "");
	CHECK(s.n == 3 && !strcmp(s.causes[2].headline, "thread 13 \"c\" is "
				  "blocked acquiring a lock"),
	      "%s", s.n == 3 ? s.causes[2].headline : "");
	run_summary_release(&s);
}

/* A pool's worker waiting for a task waits by design, on its task
 * queue's lock too; unless no process holds that lock (its killed
 * predecessor took it), when no task ever comes. */
static void test_idle_worker_lock_orphaned(void)
{
	static const struct py_code enter = {
		.name = "__enter__", .qualname = "SemLock.__enter__",
		.filename = "/usr/lib/python3.11/multiprocessing/synchronize.py",
	};
	static const struct py_code get = {
		.name = "get", .qualname = "SimpleQueue.get",
		.filename = "/usr/lib/python3.11/multiprocessing/queues.py",
	};
	static const struct py_code worker = {
		.name = "worker", .qualname = "worker",
		.filename = "/usr/lib/python3.11/multiprocessing/pool.py",
	};
	struct py_async a = { 0 };
	struct py_thread t[1];
	struct py_snapshot snap = { .threads = t, .nthreads = 1 };
	struct run_lock_held lock = {
		.name = "multiprocessing.Lock", .addr = 0x1000,
		.lines = { "held by no process run dumped" } };
	struct run_thread_facts facts[1] = {
		{ 1, 1, NULL, NULL, NULL, NULL, 0, 0, 0, &lock, 0 },
	};
	struct run_summary s;
	int orphaned;

	for (orphaned = 0; orphaned < 2; orphaned++) {
		frame(&frames[0], &enter, 95);
		frame(&frames[1], &get, 364);
		frame(&frames[2], &worker, 114);
		t[0] = thread(21, "MainThread", 0, frames, 3);
		lock.orphaned = orphaned;
		run_summary_init(&s);
		run_summarize(&s, 5, &snap, &a, facts, NULL);
		CHECK(s.n == (size_t)orphaned, "%zu causes (orphaned %d)", s.n,
		      orphaned);
		CHECK(!orphaned || (s.causes[0].kind == RUN_CAUSE_LOCK &&
				    s.causes[0].ndetails == 2 &&
				    !strcmp(s.causes[0].details[1],
					    "held by no process run dumped")),
		      "its lock's cause");
		run_summary_release(&s);
	}
}

/* Issue 16.11: a lock is a lock however its line reads; a GIL waiter
 * (in futex, but woken during the window) is not blocked. */
static void test_lock_whatever_the_layout(void)
{
	struct py_async a = { 0 };
	struct py_thread t[3];
	struct py_snapshot snap = { .threads = t, .nthreads = 3 };
	struct run_thread_facts facts[3] = {
		{ 1, 1, "with lock_b: pass" , NULL, NULL, NULL, 0, 0, 0, NULL, 0 }, { 1, 1, NULL , NULL, NULL, NULL, 0, 0, 0, NULL, 0 },
		{ 1, 0, "x = compute()" , NULL, NULL, NULL, 0, 0, 0, NULL, 0 },
	};
	struct run_summary s;
	const struct run_cause *c;

	frame(&frames[0], &prog_take, 10);
	frame(&frames[1], &prog_take, 20);
	frame(&frames[2], &prog_take, 30);
	t[0] = thread(11, NULL, 0, &frames[0], 1);
	t[1] = thread(12, NULL, 0, &frames[1], 1);
	t[2] = thread(13, NULL, 0, &frames[2], 1);
	run_summary_init(&s);
	run_summarize(&s, 5, &snap, &a, facts, NULL);
	c = find(&s, RUN_CAUSE_DEADLOCK);
	CHECK(s.n == 1 && c, "one deadlock, got %zu causes", s.n);
	CHECK(c && c->ndetails == 2, "two threads in it");
	CHECK(c && c->ndetails == 2 && !strcmp(c->details[1],
		"thread 12 at /app/prog.py:20 in take"), "%s",
	      c && c->ndetails == 2 ? c->details[1] : "(none)");
	run_summary_release(&s);
}

static void test_running_and_gil(void)
{
	struct py_async a = { 0 };
	struct py_thread t[2];
	struct py_snapshot snap = { .threads = t, .nthreads = 2 };
	/* not in futex; holding the GIL: neither is blocked */
	struct run_thread_facts facts[2] = { { 0, 1, "with a:" , NULL, NULL, NULL, 0, 0, 0, NULL, 0 },
					     { 1, 1, "with b:" , NULL, NULL, NULL, 0, 0, 0, NULL, 0 } };
	struct run_summary s;

	frame(&frames[0], &prog_take, 10);
	t[0] = thread(11, NULL, 0, &frames[0], 1);
	t[1] = thread(12, NULL, 1, &frames[0], 1);
	run_summary_init(&s);
	run_summarize(&s, 1, &snap, &a, facts, NULL);
	CHECK(s.n == 0, "nothing blocked, got %zu causes", s.n);
	run_summary_release(&s);
}

static void test_single_lock_and_wait(void)
{
	struct py_async a = { 0 };
	struct py_thread t[2];
	struct py_snapshot snap = { .threads = t, .nthreads = 2 };
	struct run_thread_facts facts[2] = { { 1, 0, "x.acquire()" , NULL, NULL, NULL, 0, 0, 0, NULL, 0 },
					     { 1, 0, "ev.wait()" , NULL, NULL, NULL, 0, 0, 0, NULL, 0 } };
	struct run_summary s;
	const struct run_cause *c;

	frame(&frames[0], &prog_take, 5);
	frame(&frames[1], &stdlib_wait, 300);
	frame(&frames[2], &event_wait, 600);
	frame(&frames[3], &prog_take, 7);
	t[0] = thread(21, NULL, 0, &frames[0], 1);
	t[1] = thread(22, "waiter", 0, &frames[1], 3);
	run_summary_init(&s);
	run_summarize(&s, 7, &snap, &a, facts, NULL);
	run_summary_sort(&s);
	CHECK(s.n == 2, "two causes, got %zu", s.n);
	c = find(&s, RUN_CAUSE_LOCK);
	CHECK(c && !strcmp(c->headline, "thread 21 is blocked acquiring a lock"),
	      "%s", c ? c->headline : "(none)");
	c = find(&s, RUN_CAUSE_WAIT);
	CHECK(c && !strcmp(c->headline, "thread 22 \"waiter\" waits in "
			   "Event.wait (threading.py)"),
	      "%s", c ? c->headline : "(none)");
	CHECK(c && c->ndetails == 1 && !strcmp(c->details[0],
		"called at /app/prog.py:7 in take: ev.wait()"),
	      "%s", c && c->ndetails ? c->details[0] : "(none)");
	CHECK(s.n == 2 && s.causes[0].kind == RUN_CAUSE_LOCK &&
	      s.causes[1].kind == RUN_CAUSE_WAIT, "lock ranks before wait");
	run_summary_release(&s);

	/* The same with timeouts (cli/collect_deadlines.h): each says
	 * when it ends the wait. */
	facts[0].timer = RUN_TIMER_TIMEOUT;
	facts[0].timer_in_s = 12.04;
	facts[1].timer = RUN_TIMER_SLEEP;   /* (not a wait's: as told) */
	facts[1].timer_in_s = 597.0;
	run_summary_init(&s);
	run_summarize(&s, 7, &snap, &a, facts, NULL);
	c = find(&s, RUN_CAUSE_LOCK);
	CHECK(c && !strcmp(c->headline, "thread 21 is blocked acquiring a "
			   "lock, times out in 12.0s"),
	      "%s", c ? c->headline : "(none)");
	c = find(&s, RUN_CAUSE_WAIT);
	CHECK(c && !strcmp(c->headline, "thread 22 \"waiter\" waits in "
			   "Event.wait (threading.py), sleeps in time.sleep, "
			   "wakes in 597.0s"),
	      "%s", c ? c->headline : "(none)");
	run_summary_release(&s);
}

/* Threads 41-47 in Event.wait: four called from take:7 (a pool), one
 * from take:9, two more from take:11 (two alike stay apart).  One
 * cause for the pool, one each for the others; with apart (--all), one
 * for every thread. */
static void test_alike_waits(void)
{
	static const int line_of[7] = { 7, 7, 7, 7, 9, 11, 11 };
	static const char *const names[7] = { "p0", "p1", NULL, "p3", "x",
					       "y0", "y1" };
	struct py_frame f[7][2];
	struct py_thread t[7];
	struct run_thread_facts facts[7];
	struct py_snapshot snap = { .threads = t, .nthreads = 7 };
	struct py_async a = { 0 };
	struct run_summary s;
	int apart, i;

	for (i = 0; i < 7; i++) {
		frame(&f[i][0], &event_wait, 600);
		frame(&f[i][1], &prog_take, line_of[i]);
		t[i] = thread(41 + i, names[i], 0, f[i], 2);
		facts[i] = (struct run_thread_facts){ 1, 0, "ev.wait()",
						      NULL, NULL, NULL, 0, 0,
						      0, NULL, 0 };
	}
	for (apart = 0; apart < 2; apart++) {
		run_summary_init(&s);
		s.apart = apart;
		run_summarize(&s, 7, &snap, &a, facts, NULL);
		CHECK(s.n == (apart ? 7u : 4u), "%zu causes with apart %d",
		      s.n, apart);
		for (i = 0; i < (int)s.n; i++)
			CHECK(s.causes[i].kind == RUN_CAUSE_WAIT &&
			      s.causes[i].ndetails == 1, "cause %d: a wait",
			      i);
		if (!apart && s.n == 4) {
			CHECK(!strcmp(s.causes[0].headline,
				      "4 threads wait in Event.wait "
				      "(threading.py): 41 \"p0\", 42 \"p1\", "
				      "43, 44 \"p3\""),
			      "%s", s.causes[0].headline);
			CHECK(!strcmp(s.causes[0].details[0], "called at "
				      "/app/prog.py:7 in take: ev.wait()"),
			      "%s", s.causes[0].details[0]);
			CHECK(!strcmp(s.causes[1].headline, "thread 45 \"x\" "
				      "waits in Event.wait (threading.py)"),
			      "%s", s.causes[1].headline);
			CHECK(!strncmp(s.causes[2].headline, "thread 46 ", 10) &&
			      !strncmp(s.causes[3].headline, "thread 47 ", 10),
			      "two alike apart: %s / %s",
			      s.causes[2].headline, s.causes[3].headline);
		}
		if (apart && s.n == 7)
			CHECK(!strcmp(s.causes[2].headline, "thread 43 waits in "
				      "Event.wait (threading.py)"),
			      "%s", s.causes[2].headline);
		run_summary_release(&s);
	}
}

static void add_task(struct py_async *a, struct py_task *t)
{
	a->tasks[a->ntasks] = *t;
	addrmap_put(&a->task_index, t->addr, (void *)(uintptr_t)(a->ntasks + 1));
	a->ntasks++;
}

static void test_tasks(void)
{
	struct py_async a = { 0 };
	struct py_task tasks[4], t;
	struct py_gen gen;
	size_t stack0 = 0;
	uint64_t cycle[2] = { 0x100, 0x200 }, *cycles[1] = { cycle };
	uint64_t by_300[1] = { 0x400 }, by_100[1] = { 0x200 },
		 by_200[1] = { 0x100 };
	size_t cycle_len[1] = { 2 };
	struct py_snapshot snap = { .threads = NULL };
	struct run_summary s;
	const struct run_cause *c;

	memset(&gen, 0, sizeof(gen));
	gen.addr = 0x900;
	gen.code = &coro_code;
	gen.has_frame = 1;
	frame(&gen.frame, &coro_code, 33);
	a.gens = &gen;
	a.ngens = 1;
	a.tasks = tasks;
	addrmap_init(&a.task_index);
	memset(&t, 0, sizeof(t));
	t.addr = 0x100, t.name = "ping", t.waiter = 0x200;
	t.awaited_by = by_100, t.nawaited_by = 1;
	add_task(&a, &t);
	t.addr = 0x200, t.name = "pong", t.waiter = 0x100;
	t.awaited_by = by_200, t.nawaited_by = 1;
	add_task(&a, &t);
	/* stuck: parked on a plain future, task 0x400 behind it */
	memset(&t, 0, sizeof(t));
	t.addr = 0x300, t.name = "fetch", t.waiter = 0x777;
	t.waiter_type = "Future", t.stack = &stack0, t.nstack = 1;
	t.awaited_by = by_300, t.nawaited_by = 1;
	add_task(&a, &t);
	memset(&t, 0, sizeof(t));
	t.addr = 0x400, t.name = "main", t.waiter = 0x300;
	add_task(&a, &t);
	a.cycles = cycles;
	a.cycle_len = cycle_len;
	a.ncycles = 1;

	run_summary_init(&s);
	run_summarize(&s, 3, &snap, &a, NULL, NULL);
	run_summary_sort(&s);
	CHECK(s.n == 2, "cycle and stuck task, got %zu", s.n);
	c = find(&s, RUN_CAUSE_AWAIT_CYCLE);
	CHECK(c && !strcmp(c->headline, "await cycle: ping -> pong -> ping"),
	      "%s", c ? c->headline : "(none)");
	CHECK(c && c->ndetails == 2 && !strcmp(c->details[0], "task ping"),
	      "%s", c && c->ndetails ? c->details[0] : "(none)");
	c = find(&s, RUN_CAUSE_STUCK_TASK);
	CHECK(c && !strcmp(c->headline, "stuck task: fetch waits on Future "
			   "0x777, blocking 1 other task"),
	      "%s", c ? c->headline : "(none)");
	CHECK(c && c->ndetails == 1 && !strcmp(c->details[0],
		"task fetch at /app/tasks.py:33 in work"),
	      "%s", c && c->ndetails ? c->details[0] : "(none)");
	CHECK(s.n == 2 && s.causes[0].kind == RUN_CAUSE_AWAIT_CYCLE,
	      "the cycle ranks first");
	CHECK(!strcmp(run_cause_kind_name(RUN_CAUSE_STUCK_TASK), "stuck_task"),
	      "kind name");
	run_summary_release(&s);
	addrmap_release(&a.task_index);
}


/* Count the causes of a kind. */
static size_t count_kind(const struct run_summary *s, enum run_cause_kind kind)
{
	size_t i, n = 0;

	for (i = 0; i < s->n; i++)
		n += s->causes[i].kind == kind;
	return n;
}

/* Alike stuck tasks (a pool's, parked on a Future each at one line) are
 * one cause; two at another line stay apart; --all, a cause each.  Those
 * the graph explains are left out of the group, not the group dropped. */
static void test_alike_stuck_tasks(void)
{
	/* (" at " in a name: the place is not found in the line) */
	static char names[8][8] = { "w at 0", "w at 1", "w at 2", "w at 3",
				    "w at 4", "w at 5", "p-0", "p-1" };
	struct py_async a = { 0 };
	struct py_task tasks[8], t;
	struct py_gen gens[2];
	size_t stacks[2] = { 0, 1 }, i;
	struct py_snapshot snap = { .threads = NULL };
	struct run_summary s;
	const struct run_cause *c;
	struct addrmap explained;
	int apart;

	memset(gens, 0, sizeof(gens));
	for (i = 0; i < 2; i++) {
		gens[i].code = &coro_code;
		gens[i].has_frame = 1;
		frame(&gens[i].frame, &coro_code, i ? 40 : 33);
	}
	a.gens = gens;
	a.ngens = 2;
	a.tasks = tasks;
	addrmap_init(&explained);
	addrmap_add(&explained, 0x100);   /* "w at 0" and "w at 1" */
	addrmap_add(&explained, 0x200);
	/* 2: grouped, with two of the group explained */
	for (apart = 0; apart <= 2; apart++) {
		a.ntasks = 0;
		addrmap_init(&a.task_index);
		for (i = 0; i < 8; i++) {
			memset(&t, 0, sizeof(t));
			t.addr = 0x100 * (i + 1), t.name = names[i];
			t.waiter = 0x7000 + i, t.waiter_type = "Future";
			t.stack = &stacks[i >= 6], t.nstack = 1;
			add_task(&a, &t);
		}
		run_summary_init(&s);
		s.apart = apart == 1;
		s.explained = apart == 2 ? &explained : NULL;
		run_summarize(&s, 3, &snap, &a, NULL, NULL);
		if (apart == 2) {
			c = find(&s, RUN_CAUSE_STUCK_TASK);
			CHECK(count_kind(&s, RUN_CAUSE_STUCK_TASK) == 3 && c &&
			      !strcmp(c->headline, "4 stuck tasks wait on "
				      "Future: \"w at 2\", \"w at 3\", "
				      "\"w at 4\", \"w at 5\""),
			      "the rest of the group: %s",
			      c ? c->headline : "(none)");
		} else if (apart) {
			CHECK(count_kind(&s, RUN_CAUSE_STUCK_TASK) == 3,
			      "--all: three causes, got %zu",
			      count_kind(&s, RUN_CAUSE_STUCK_TASK));
			c = find(&s, RUN_CAUSE_STUCK_TASK);
			CHECK(c && !strcmp(c->headline, "stuck task: w at 0 "
					   "waits on Future 0x7000"), "%s",
			      c ? c->headline : "(none)");
		} else {
			CHECK(count_kind(&s, RUN_CAUSE_STUCK_TASK) == 3,
			      "the group and the pair, got %zu",
			      count_kind(&s, RUN_CAUSE_STUCK_TASK));
			c = find(&s, RUN_CAUSE_STUCK_TASK);
			CHECK(c && !strcmp(c->headline, "6 stuck tasks wait on "
					   "Future: \"w at 0\", \"w at 1\", "
					   "\"w at 2\", \"w at 3\", \"w at 4\" "
					   "and 1 more"), "%s",
			      c ? c->headline : "(none)");
			CHECK(c && c->ndetails == 1 && !strcmp(c->details[0],
				"tasks at /app/tasks.py:33 in work"), "%s",
			      c && c->ndetails ? c->details[0] : "(none)");
			c = &s.causes[s.n - 1];
			CHECK(!strcmp(c->headline, "stuck task: p-1 waits on "
				      "Future 0x7007"), "%s", c->headline);
		}
		/* the last shown says what it left out: 5 tasks with --all,
		 * none grouped */
		c = &s.causes[s.n - 1];
		CHECK(apart == 1 ? c->ndetails == 2 &&
			      !strcmp(c->details[1], "and 5 more stuck tasks") :
			      c->ndetails == 1,
		      "left out: %zu details", c->ndetails);
		run_summary_release(&s);
		addrmap_release(&a.task_index);
	}
	addrmap_release(&explained);
}

/* trio tasks at the bottom of the nursery tree: alike ones (parked in one
 * call of trio's at one place) one cause, counting the tasks they block
 * once; one on a deadline none; --all, a cause each and what is left. */
static void test_trio_stuck_tasks(void)
{
	static const struct py_code trap = {
		.name = "_async_yield", .qualname = "_async_yield",
		.filename = "/usr/lib/python3/dist-packages/trio/_core/_traps.py",
	}, wait = {
		.name = "wait", .qualname = "Event.wait",
		.filename = "/usr/lib/python3/dist-packages/trio/_sync.py",
	}, sleep_until = {
		.name = "sleep_until", .qualname = "sleep_until",
		.filename = "/usr/lib/python3/dist-packages/trio/_timeouts.py",
	};
	static char names[6][8] = { "w-0", "w-1", "w-2", "w-3", "other",
				    "napper" };
	const struct py_code *codes[5] = { &trap, &wait, &coro_code,
					   &coro_code, &sleep_until };
	/* innermost first: the workers at line 33, other at 40 */
	size_t stacks[4][3] = { { 0, 1, 2 }, { 0, 1, 3 }, { 4, 2 } };
	uint64_t by_root[1] = { 0x10 }, by_main[1] = { 0x20 };
	struct py_snapshot snap = { .threads = NULL };
	struct py_async a = { 0 };
	struct py_task tasks[8], t;
	struct py_gen gens[5];
	struct run_summary s;
	const struct run_cause *c;
	size_t i;
	int apart;

	memset(gens, 0, sizeof(gens));
	for (i = 0; i < 5; i++) {
		gens[i].code = codes[i];
		gens[i].qualname = codes[i]->qualname;
		gens[i].has_frame = 1;
		frame(&gens[i].frame, codes[i], i == 3 ? 40 : 33);
	}
	a.gens = gens;
	a.ngens = 5;
	a.tasks = tasks;
	for (apart = 0; apart <= 1; apart++) {
		a.ntasks = 0;
		addrmap_init(&a.task_index);
		memset(&t, 0, sizeof(t));
		t.framework = "trio";
		t.addr = 0x10, t.name = "<init>";
		add_task(&a, &t);
		t.addr = 0x20, t.name = "main", t.awaited_by = by_root;
		t.nawaited_by = 1;
		add_task(&a, &t);
		t.awaited_by = by_main;
		for (i = 0; i < 6; i++) {
			t.addr = 0x100 * (i + 1), t.name = names[i];
			t.stack = stacks[i < 4 ? 0 : i - 3];
			t.nstack = i == 5 ? 2 : 3;
			add_task(&a, &t);
		}
		run_summary_init(&s);
		s.apart = apart;
		run_summarize(&s, 3, &snap, &a, NULL, NULL);
		c = find(&s, RUN_CAUSE_STUCK_TASK);
		if (!apart) {
			CHECK(count_kind(&s, RUN_CAUSE_STUCK_TASK) == 2 && c &&
			      !strcmp(c->headline, "4 stuck trio tasks parked "
				      "in Event.wait, blocking 2 other tasks: "
				      "\"w-0\", \"w-1\", \"w-2\", \"w-3\""),
			      "the group and other: %s",
			      c ? c->headline : "(none)");
			CHECK(c && c->ndetails == 1 && !strcmp(c->details[0],
				"tasks at /app/tasks.py:33 in work"), "%s",
			      c && c->ndetails ? c->details[0] : "(none)");
			c = &s.causes[s.n - 1];
			CHECK(!strcmp(c->headline, "stuck trio task: other "
				      "parked in Event.wait, blocking 2 other "
				      "tasks"), "%s", c->headline);
			CHECK(c->ndetails == 1 && !strcmp(c->details[0],
				"task other at /app/tasks.py:40 in work"), "%s",
			      c->ndetails ? c->details[0] : "(none)");
		} else {
			CHECK(count_kind(&s, RUN_CAUSE_STUCK_TASK) == 3 && c &&
			      !strcmp(c->headline, "stuck trio task: w-0 parked "
				      "in Event.wait, blocking 2 other tasks"),
			      "--all: %s", c ? c->headline : "(none)");
			c = &s.causes[s.n - 1];
			CHECK(c->ndetails == 2 && !strcmp(c->details[1],
				"and 2 more stuck trio tasks"), "left out: %s",
			      c->ndetails > 1 ? c->details[1] : "(none)");
		}
		for (i = 0; i < s.n; i++)
			CHECK(!strstr(s.causes[i].headline, "napper") &&
			      !strstr(s.causes[i].headline, "main"),
			      "%s", s.causes[i].headline);
		run_summary_release(&s);
		addrmap_release(&a.task_index);
	}
}

/* Issue 9: native frames say what a thread waits in; they replace the
 * futex and source-line guess. */
static void test_native_frames(void)
{
	struct py_async a = { 0 };
	struct py_thread t[4];
	struct py_snapshot snap = { .threads = t, .nthreads = 4 };
	struct run_thread_facts facts[4] = {
		/* a lock in C, its line no clue, never asked to the kernel */
		{ 1, -1, "x = get()", "lock", "sem_clockwait", NULL, 0, 0, 0, NULL, 0 },
		/* reading a pipe: the line's acquire( is no lock */
		{ 0, -1, "data = acquire(fd)", "io", "read", NULL, 0, 0, 0, NULL, 0 },
		/* waiting for the GIL, whose holder sleeps in C */
		{ 1, -1, NULL, "gil", "take_gil", NULL, 0, 0, 0, NULL, 0 },
		{ 0, 0, NULL, "sleep", "clock_nanosleep", NULL, 0, 0, 0, NULL, 0 },
	};
	struct run_summary s;
	const struct run_cause *c;

	frame(&frames[0], &prog_take, 10);
	frame(&frames[1], &prog_take, 20);
	frame(&frames[2], &prog_take, 30);
	frame(&frames[3], &prog_take, 40);
	t[0] = thread(11, "worker", 0, &frames[0], 1);
	t[1] = thread(12, "reader", 0, &frames[1], 1);
	t[2] = thread(13, "waiter", 0, &frames[2], 1);
	t[3] = thread(14, "holder", 1, &frames[3], 1);
	run_summary_init(&s);
	run_summarize(&s, 9, &snap, &a, facts, NULL);
	run_summary_sort(&s);
	CHECK(s.n == 2, "a lock and the GIL, got %zu causes", s.n);
	c = find(&s, RUN_CAUSE_LOCK);
	CHECK(c && !strcmp(c->headline, "thread 11 \"worker\" is blocked "
			   "acquiring a lock, in C: sem_clockwait()"),
	      "%s", c ? c->headline : "(none)");
	c = find(&s, RUN_CAUSE_GIL_HELD);
	CHECK(c && !strcmp(c->headline, "1 thread waits for the GIL, held by "
			   "thread 14 \"holder\", which is blocked in "
			   "clock_nanosleep at /app/prog.py:40 in take"),
	      "%s", c ? c->headline : "(none)");
	CHECK(c && c->ndetails == 1 && !strcmp(c->details[0],
		"thread 13 \"waiter\" waits for the GIL, in C: take_gil() "
		"at /app/prog.py:30 in take"),
	      "%s", c && c->ndetails ? c->details[0] : "(none)");
	CHECK(!strcmp(run_cause_kind_name(RUN_CAUSE_GIL_HELD), "gil_held"),
	      "kind name");
	run_summary_release(&s);

	/* a holder running Python: contention, ranked after a wait */
	facts[3].blocked_in = NULL;
	run_summary_init(&s);
	run_summarize(&s, 9, &snap, &a, facts, NULL);
	c = find(&s, RUN_CAUSE_GIL);
	CHECK(c && !strcmp(c->headline, "1 thread waits for the GIL, held by "
			   "thread 14 \"holder\" at /app/prog.py:40 in take"),
	      "%s", c ? c->headline : "(none)");
	CHECK(RUN_CAUSE_GIL > RUN_CAUSE_WAIT && RUN_CAUSE_GIL_HELD < RUN_CAUSE_WAIT,
	      "GIL ranks");
	run_summary_release(&s);
}

static void observe(struct watch_tracker *tr, enum watch_kind kind,
		    uint64_t id, uint64_t fingerprint, double cpu_s, long sleeps)
{
	struct watch_obs o;

	memset(&o, 0, sizeof(o));
	o.kind = kind;
	o.id = id;
	o.fingerprint = fingerprint;
	o.cpu_s = cpu_s;
	o.wait_s = -1;
	o.sleeps = sleeps;
	o.window_s = cpu_s >= 0 ? 1 : 0;
	o.where.line = o.inner.line = -1;
	watch_observe(tr, &o);
}

/* Issue 14: with samples, what moved is no cause, what was stuck ranks
 * by how long, what used a CPU all along is busy. */
static void test_sampled(void)
{
	struct py_async a = { 0 };
	struct py_task tasks[3], t;
	struct py_thread th[2];
	struct py_snapshot snap = { .threads = th, .nthreads = 2 };
	struct run_thread_facts facts[2] = {
		{ 1, 1, "with lock:", NULL, NULL, NULL, 0, 0, 0, NULL, 0 },
		{ 1, 1, "with lock:", NULL, NULL, NULL, 0, 0, 0, NULL, 0 },
	};
	uint64_t by_a[1] = { 0x300 };
	struct watch_tracker tr;
	struct run_summary s;
	const struct run_cause *c;
	int k;

	a.tasks = tasks;
	addrmap_init(&a.task_index);
	memset(&t, 0, sizeof(t));
	t.waiter_type = "Future";
	/* 0x100 moves at every sample; 0x200 is stuck since the first;
	 * 0x300 waits on 0x100 (which would rank 0x100 first unsampled) */
	t.addr = 0x100, t.name = "moving", t.waiter = 0x701;
	t.awaited_by = by_a, t.nawaited_by = 1;
	add_task(&a, &t);
	t.awaited_by = NULL, t.nawaited_by = 0;
	t.addr = 0x200, t.name = "parked", t.waiter = 0x702;
	add_task(&a, &t);
	t.addr = 0x300, t.name = "parent", t.waiter = 0x100;
	add_task(&a, &t);
	frame(&frames[0], &prog_take, 10);
	frame(&frames[1], &prog_take, 20);
	th[0] = thread(31, "spin", 0, &frames[0], 1);
	th[1] = thread(32, "blocked", 0, &frames[1], 1);

	watch_tracker_init(&tr, 2);
	for (k = 0; k < 5; k++) {
		watch_begin(&tr, k);
		observe(&tr, WATCH_TASK, 0x100, 1000 + k, -1, -1);
		observe(&tr, WATCH_TASK, 0x200, 7, -1, -1);
		observe(&tr, WATCH_TASK, 0x300, 8, -1, -1);
		observe(&tr, WATCH_THREAD, 31, 9, k ? 0.9 : -1, k ? 50 : -1);
		observe(&tr, WATCH_THREAD, 32, 10, k ? 0 : -1, k ? 0 : -1);
		watch_end(&tr);
	}
	run_summary_init(&s);
	run_summarize(&s, 4, &snap, &a, facts, &tr);
	run_summary_sort(&s);
	c = find(&s, RUN_CAUSE_STUCK_TASK);
	CHECK(c && !strcmp(c->headline, "stuck task: parked waits on Future "
			   "0x702, stuck for at least 4.0s"),
	      "%s", c ? c->headline : "(none)");
	CHECK(c && (c + 1 == s.causes + s.n ||
		    c[1].kind != RUN_CAUSE_STUCK_TASK),
	      "the moving task is no cause");
	c = find(&s, RUN_CAUSE_LOCK);
	CHECK(c && !strcmp(c->headline, "thread 32 \"blocked\" is blocked "
			   "acquiring a lock (stuck for at least 4.0s)"),
	      "%s", c ? c->headline : "(none)");
	c = find(&s, RUN_CAUSE_BUSY);
	CHECK(c && !strcmp(c->headline, "thread 31 \"spin\" is busy, 90% of "
			   "a CPU at /app/prog.py:10 in take"),
	      "%s", c ? c->headline : "(none)");
	CHECK(s.n == 3, "stuck task, lock, busy; got %zu", s.n);
	run_summary_release(&s);
	watch_tracker_release(&tr);
	addrmap_release(&a.task_index);
}

/* The sampled section's line of each kind: a generator or greenlet is
 * named by its kind and address, not taken for a thread. */
static void test_seen_subjects(void)
{
	static const struct {
		enum watch_kind kind;
		uint64_t id;
		const char *name, *label, *want;
	} cases[] = {
		{ WATCH_TASK, 0x100, "t", NULL, "task \"t\" stuck for" },
		{ WATCH_THREAD, 42, "w", NULL, "thread 42 \"w\" stuck for" },
		{ WATCH_THREAD, 43, NULL, NULL, "thread 43 stuck for" },
		{ WATCH_GENERATOR, 0x7f00, "request_context", "generator",
		  "generator \"request_context\" (0x7f00) stuck for" },
		{ WATCH_GENERATOR, 0x7f40, "f", "coroutine",
		  "coroutine \"f\" (0x7f40) stuck for" },
		{ WATCH_GREENLET, 0x7f80, "g-1", "Greenlet",
		  "greenlet \"g-1\" (0x7f80) stuck for" },
		{ WATCH_GREENLET, 0x7fc0, NULL, NULL,
		  "greenlet (0x7fc0) stuck for" },
		/* a framework's tasks and an unnamed greenlet's type say
		 * so; a plain greenlet's type and a named one's do not */
		{ WATCH_TASK, 0x140, "n", "trio", "trio task \"n\" stuck for" },
		{ WATCH_GREENLET, 0x8000, NULL, "Hub",
		  "Hub greenlet (0x8000) stuck for" },
		{ WATCH_GREENLET, 0x8040, NULL, "greenlet",
		  "greenlet (0x8040) stuck for" },
	};
	struct watch_tracker tr;
	struct strbuf sb;
	size_t i;
	int k;

	watch_tracker_init(&tr, 2);
	for (k = 0; k < 5; k++) {
		watch_begin(&tr, k);
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			struct watch_obs o;

			memset(&o, 0, sizeof(o));
			o.kind = cases[i].kind;
			o.id = cases[i].id;
			o.name = cases[i].name;
			o.label = cases[i].label;
			o.fingerprint = 7;
			o.cpu_s = o.wait_s = -1;
			o.sleeps = -1;
			o.where.line = o.inner.line = -1;
			watch_observe(&tr, &o);
		}
		watch_end(&tr);
	}
	strbuf_init(&sb);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct watch_item *it = watch_find(&tr, cases[i].kind,
							 cases[i].id);

		strbuf_reset(&sb);
		CHECK(it && run_seen_describe(&sb, &tr, it, 0) &&
		      !strncmp(sb.buf, cases[i].want, strlen(cases[i].want)),
		      "[%s], want [%s...]", sb.buf, cases[i].want);
	}
	/* a task whose name another listed task has: with its address */
	strbuf_reset(&sb);
	CHECK(run_seen_describe(&sb, &tr, watch_find(&tr, WATCH_TASK, 0x140),
				1) &&
	      !strncmp(sb.buf, "trio task \"n\" (0x140) stuck for", 31),
	      "[%s]", sb.buf);
	strbuf_release(&sb);
	watch_tracker_release(&tr);
}

/* run_summarize_greenlets() of gs: one cause, with headline want. */
static void check_group(const struct py_greenlets *gs, const char *want)
{
	struct run_summary s;

	run_summary_init(&s);
	run_summarize_greenlets(&s, 3, gs, NULL);
	CHECK(s.n == 1 && !strcmp(s.causes[0].headline, want),
	      "group headline '%s', want '%s'",
	      s.n ? s.causes[0].headline : "", want);
	run_summary_release(&s);
}

/* Greenlets parked alike: every named one by name, and how many have
 * none (not "2 greenlets 'alpha'" for 'alpha' and another). */
static void test_greenlet_group_names(void)
{
	struct py_greenlet gv[3];
	struct py_greenlets gs = { gv, 3, "" };
	size_t i;

	memset(gv, 0, sizeof(gv));
	for (i = 0; i < 3; i++) {
		gv[i].addr = 0x1000 + 0x100 * i;
		gv[i].state = PY_GREENLET_SUSPENDED;
		gv[i].function = (char *)"reader";
		gv[i].frames = &frames[0];
		gv[i].nframes = 1;
	}
	frame(&frames[0], &prog_take, 12);
	gv[0].name = (char *)"alpha";
	check_group(&gs, "3 greenlets 'alpha' and 2 without a name "
		    "parked at /app/prog.py:12 in take");
	gv[1].name = (char *)"beta";
	gv[2].name = (char *)"gamma";
	check_group(&gs, "3 greenlets 'alpha', 'beta', 'gamma' "
		    "parked at /app/prog.py:12 in take");
}

/* A thread observed at `at` seconds, fingerprint fp (no CPU used), its
 * sleep due in sleep_in s (< 0: none). */
/* A thread's observation at one place, running nothing: no sleep. */
static struct watch_obs thread_obs(uint64_t tid, uint64_t fp)
{
	struct watch_obs o;

	memset(&o, 0, sizeof(o));
	o.kind = WATCH_THREAD;
	o.id = tid;
	o.fingerprint = fp;
	o.cpu_s = 0;
	o.wait_s = -1;
	o.window_s = 0.2;
	o.sleeps = -1;
	o.where.line = o.inner.line = -1;
	return o;
}

static void see_thread(struct watch_tracker *tr, uint64_t tid, uint64_t fp,
		       double sleep_in)
{
	struct watch_obs o = thread_obs(tid, fp);

	if (sleep_in >= 0) {
		o.sleep.on = o.sleep.timed = o.sleep.known = 1;
		o.sleep.in_s = sleep_in;
	}
	watch_observe(tr, &o);
}

/* Threads started during the samples (cli/run_seen.c): one seen at the
 * last sample and the dump only is too young to judge, unless its sleep
 * ends far ahead; seen at three, it is judged, but is no poll while
 * watched for less than the threshold.  A thread of the first sample
 * is judged from its second. */
static void test_young_threads(void)
{
	struct watch_tracker tr;
	struct run_seen seen;
	int k;

	watch_tracker_init(&tr, 0.75);
	for (k = 0; k <= 8; k++) {
		double at = 0.2 * k;

		watch_begin(&tr, at);
		see_thread(&tr, 1, 5, -1);          /* from the first */
		if (k >= 6)
			see_thread(&tr, 2, 5, -1);  /* at three */
		if (k >= 7) {
			see_thread(&tr, 3, 5, 0.01); /* a short job's */
			see_thread(&tr, 4, 5, 3600); /* an hour's sleep */
		}
		watch_end(&tr);
	}
	run_seen_item(&tr, watch_find(&tr, WATCH_THREAD, 1), &seen);
	CHECK(seen.state == RUN_SEEN_STUCK && seen.at_least &&
	      !seen.young && run_seen_same_for(&seen) > 1.5,
	      "the first sample's: stuck, at its line all along (%d)",
	      (int)seen.state);
	run_seen_item(&tr, watch_find(&tr, WATCH_THREAD, 2), &seen);
	CHECK(seen.state == RUN_SEEN_STUCK && seen.young &&
	      run_seen_same_for(&seen) == 0,
	      "young, at three samples: judged, no poll (%d)",
	      (int)seen.state);
	run_seen_item(&tr, watch_find(&tr, WATCH_THREAD, 3), &seen);
	CHECK(seen.state == RUN_SEEN_UNKNOWN,
	      "young, at two samples, a short sleep: too young (%d)",
	      (int)seen.state);
	run_seen_item(&tr, watch_find(&tr, WATCH_THREAD, 4), &seen);
	CHECK(seen.state == RUN_SEEN_STUCK && seen.at_least,
	      "young, at two samples, asleep for an hour: judged (%d)",
	      (int)seen.state);
	watch_tracker_release(&tr);
}

/* A thread elsewhere at the first samples, then at one line asleep in a
 * 0.5 s poll, woken between samples (its sleep's ends say so): moving,
 * and at that line since a sample for longer than the threshold, a
 * poll (same_late); before, it was a poll only if there all along. */
static void test_poll_begun_late(void)
{
	struct watch_tracker tr;
	struct run_seen seen;
	int k;

	watch_tracker_init(&tr, 0.75);
	for (k = 0; k <= 8; k++) {
		double at = 0.2 * k;
		struct watch_obs o = thread_obs(7, k < 3 ? 100 + (uint64_t)k : 9);

		o.sleeps = 0;
		if (k >= 3) {
			/* sleeps ending at 0.9, 1.4, 1.9 */
			o.sleep.on = o.sleep.timed = o.sleep.known = 1;
			o.sleep.due = at < 0.9 ? 0.9 : at < 1.4 ? 1.4 : 1.9;
			o.sleep.in_s = o.sleep.due - at;
		}
		watch_begin(&tr, at);
		watch_observe(&tr, &o);
		watch_end(&tr);
	}
	run_seen_item(&tr, watch_find(&tr, WATCH_THREAD, 7), &seen);
	CHECK(seen.state == RUN_SEEN_MOVING && !seen.same_all &&
	      seen.same_late && run_seen_same_for(&seen) > 0.99 &&
	      !strcmp(run_seen_same_place(&seen),
		      "at that line at every sample since it came there"),
	      "a poll begun during the samples (%d, %g)", (int)seen.state,
	      run_seen_same_for(&seen));
	watch_tracker_release(&tr);
}

int main(void)
{
	test_poll_begun_late();
	test_young_threads();
	test_greenlet_group_names();
	test_lock_deadlock();
	test_lock_holders_known();
	test_idle_worker_lock_orphaned();
	test_lock_whatever_the_layout();
	test_running_and_gil();
	test_single_lock_and_wait();
	test_alike_waits();
	test_tasks();
	test_alike_stuck_tasks();
	test_trio_stuck_tasks();
	test_native_frames();
	test_sampled();
	test_seen_subjects();
	return CHECK_DONE("test_causes");
}
