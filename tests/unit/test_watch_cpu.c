/*
 * A thread's window between two reads of the kernel's accounting: what
 * is the thread's own doing and what our stop and resume cost it
 * (cli/watch_cpu.c), on tables made by hand, and one read of a real
 * thread of our own.
 */
#include "cli/watch_cpu.h"

#include <string.h>
#include <unistd.h>

#include "tests/unit/check.h"

struct acct {
	char state;
	long long sleeps, runs;
	double cpu_s, wait_s;
};

/* The window of thread 7 from a at 0 ms to b at window_ms, after a stop
 * (stop 1) or with --no-block (0). */
static struct watch_window window_of(struct acct a, struct acct b,
				     double window_ms, int stop)
{
	struct watch_thread_cpu va = { 7, a.cpu_s, a.wait_s, a.runs, a.sleeps,
				       a.state };
	struct watch_thread_cpu vb = { 7, b.cpu_s, b.wait_s, b.runs, b.sleeps,
				       b.state };
	struct watch_cpu before = { &va, 1, 1, 1000 };
	struct watch_cpu now = { &vb, 1, 1, 1000 + window_ms };
	struct watch_window w;

	watch_cpu_window(&before, &now, 7, stop, &w);
	return w;
}

static struct watch_window window(struct acct a, struct acct b,
				  double window_ms)
{
	return window_of(a, b, window_ms, 1);
}

static void noise(void)
{
	struct watch_window w;

	/* back asleep before `before` was read: nothing in the window */
	w = window((struct acct){ 'S', 10, 20, 1.0, 0.5 },
		   (struct acct){ 'S', 10, 20, 1.0, 0.5 }, 166);
	CHECK(w.sleeps == 0 && w.cpu_s == 0 && w.wait_s == 0 &&
	      w.window_s > 0.165 && w.window_s < 0.167, "settled, quiet");
	/* not yet: it goes back to sleep in the window, preempted twice
	 * on the way and kept waiting 80 ms for a CPU (a busy host) */
	w = window((struct acct){ 'R', 10, 20, 1.0, 0.5 },
		   (struct acct){ 'S', 11, 23, 1.00005, 0.58 }, 166);
	CHECK(w.sleeps == 0 && w.cpu_s == 0 && w.wait_s == 0,
	      "our resume is not the thread's: %ld %g %g", w.sleeps,
	      w.cpu_s, w.wait_s);
	/* the host charged it 12 ms on the way */
	w = window((struct acct){ 'R', 10, 20, 1.0, 0.5 },
		   (struct acct){ 'S', 11, 21, 1.012, 0.5 }, 166);
	CHECK(w.sleeps == 0 && w.cpu_s == 0, "stolen time left out");
}

static void own_doing(void)
{
	struct watch_window w;

	/* "asleep" as `before` was read may be a thread about to give up
	 * the CPU, its sleep not yet counted: one sleep is always ours */
	w = window((struct acct){ 'S', 10, 20, 1.0, 0.5 },
		   (struct acct){ 'S', 11, 21, 1.0001, 0.5 }, 166);
	CHECK(w.sleeps == 0 && w.cpu_s == 0, "one sleep: ours");
	w = window((struct acct){ 'R', 10, 20, 1.0, 0.5 },
		   (struct acct){ 'S', 12, 22, 1.0001, 0.5 }, 166);
	CHECK(w.sleeps == 1 && w.cpu_s > 0, "resume and a wake of its own");
	/* --no-block: no stop, nothing of ours */
	w = window_of((struct acct){ 'R', 10, 20, 1.0, 0.5 },
		      (struct acct){ 'S', 11, 21, 1.01, 0.5 }, 166, 0);
	CHECK(w.sleeps == 1 && w.cpu_s > 0.009, "no stop: its one sleep");
	w = window_of((struct acct){ 0, -1, 20, 1.0, -1 },
		      (struct acct){ 0, -1, 21, 1.0, -1 }, 166, 0);
	CHECK(w.sleeps == 1, "no stop, no status: its one run");
	w = window((struct acct){ 'R', 10, 20, 1.0, 0.5 },
		   (struct acct){ 'R', 10, 30, 1.15, 0.51 }, 166);
	CHECK(w.sleeps == 0 && w.cpu_s > 0.149 && w.cpu_s < 0.151 &&
	      w.wait_s > 0.009, "busy: running, its CPU time kept");
	w = window((struct acct){ 'R', 10, 20, 1.0, 0.5 },
		   (struct acct){ 'S', 11, 21, 1.1, 0.5 }, 166);
	CHECK(w.cpu_s > 0.09, "busy, then asleep: its CPU time kept");
	w = window((struct acct){ 'S', 10, 20, 1.0, 0.5 },
		   (struct acct){ 'S', 410, 420, 1.001, 0.5 }, 166);
	CHECK(w.sleeps == 399, "napping in short steps");
}

static void unknown(void)
{
	struct watch_window w;
	struct watch_thread_cpu va = { 5, 1, 1, 1, 1, 'S' };
	struct watch_cpu before = { &va, 1, 1, 1000 };
	struct watch_cpu empty = { NULL, 0, 0, 1166 };

	/* without status: times put on a CPU, one of them ours */
	w = window((struct acct){ 0, -1, 20, 1.0, -1 },
		   (struct acct){ 0, -1, 21, 1.0, -1 }, 166);
	CHECK(w.sleeps == 0 && w.wait_s < 0, "no status, run once: ours");
	w = window((struct acct){ 0, -1, 20, 1.0, -1 },
		   (struct acct){ 0, -1, 25, 1.0, -1 }, 166);
	CHECK(w.sleeps == 4, "no status: runs beyond ours");
	w = window((struct acct){ 0, -1, -1, 1.0, -1 },
		   (struct acct){ 0, -1, -1, 1.0, -1 }, 166);
	CHECK(w.sleeps == -1 && w.cpu_s == 0, "nothing but CPU time");
	watch_cpu_window(&before, &empty, 5, 1, &w);
	CHECK(w.sleeps == -1 && w.cpu_s < 0 && w.window_s == 0,
	      "gone: nothing known");
	/* counters that went backwards (a reused tid) */
	w = window((struct acct){ 'S', 10, 20, 1.0, 0.5 },
		   (struct acct){ 'S', 3, 4, 0.1, 0.1 }, 166);
	CHECK(w.sleeps <= 0 && w.cpu_s == 0, "backwards: nothing of its own");
}

static void own_process(void)
{
	struct watch_cpu t;
	const struct watch_thread_cpu *me;

	memset(&t, 0, sizeof(t));
	watch_cpu_read(&t, getpid());
	me = watch_cpu_find(&t, getpid());
	CHECK(t.n >= 1 && me && me->state == 'R' && me->sleeps >= 0 &&
	      me->cpu_s >= 0, "our own thread read: n %zu state %c sleeps %lld cpu %g",
	      t.n, me ? me->state : 0, me ? me->sleeps : -2, me ? me->cpu_s : -2);
	watch_cpu_release(&t);
	watch_cpu_read(&t, 0x3fffffff);
	CHECK(t.n == 0, "no such process: empty");
	watch_cpu_release(&t);
}

int main(void)
{
	noise();
	own_doing();
	unknown();
	own_process();
	return CHECK_DONE("test_watch_cpu");
}
