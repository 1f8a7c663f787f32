/*
 * The cause analysis of `coroscope run` (cli/run_causes.c) on snapshots
 * and task sets built by hand: which causes it finds, how it names them,
 * and the ranking.
 */
#include "cli/run_causes.h"

#include <stdlib.h>
#include <string.h>

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
		{ 1, 0, "with lock_b:" }, { 1, 0, "lock_a.acquire()" },
		{ 0, 0, NULL },
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
	run_summarize(&s, 42, &snap, &a, facts);
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

/* Issue 16.11: a lock is a lock however its line reads; a GIL waiter
 * (in futex, but woken during the window) is not blocked. */
static void test_lock_whatever_the_layout(void)
{
	struct py_async a = { 0 };
	struct py_thread t[3];
	struct py_snapshot snap = { .threads = t, .nthreads = 3 };
	struct run_thread_facts facts[3] = {
		{ 1, 1, "with lock_b: pass" }, { 1, 1, NULL },
		{ 1, 0, "x = compute()" },
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
	run_summarize(&s, 5, &snap, &a, facts);
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
	struct run_thread_facts facts[2] = { { 0, 1, "with a:" },
					     { 1, 1, "with b:" } };
	struct run_summary s;

	frame(&frames[0], &prog_take, 10);
	t[0] = thread(11, NULL, 0, &frames[0], 1);
	t[1] = thread(12, NULL, 1, &frames[0], 1);
	run_summary_init(&s);
	run_summarize(&s, 1, &snap, &a, facts);
	CHECK(s.n == 0, "nothing blocked, got %zu causes", s.n);
	run_summary_release(&s);
}

static void test_single_lock_and_wait(void)
{
	struct py_async a = { 0 };
	struct py_thread t[2];
	struct py_snapshot snap = { .threads = t, .nthreads = 2 };
	struct run_thread_facts facts[2] = { { 1, 0, "x.acquire()" },
					     { 1, 0, "ev.wait()" } };
	struct run_summary s;
	const struct run_cause *c;

	frame(&frames[0], &prog_take, 5);
	frame(&frames[1], &stdlib_wait, 300);
	frame(&frames[2], &event_wait, 600);
	frame(&frames[3], &prog_take, 7);
	t[0] = thread(21, NULL, 0, &frames[0], 1);
	t[1] = thread(22, "waiter", 0, &frames[1], 3);
	run_summary_init(&s);
	run_summarize(&s, 7, &snap, &a, facts);
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
	run_summarize(&s, 3, &snap, &a, NULL);
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

int main(void)
{
	test_lock_deadlock();
	test_lock_whatever_the_layout();
	test_running_and_gil();
	test_single_lock_and_wait();
	test_tasks();
	return CHECK_DONE("test_causes");
}
