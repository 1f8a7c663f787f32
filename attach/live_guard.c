/*
 * The signal guard: when SIGINT, SIGTERM, SIGHUP or SIGQUIT would end
 * coroscope while it holds a target stopped, give every thread that
 * reported a signal at its stop that signal back before dying.
 *
 * Only the thread that seized a tracee can detach it (the tracer thread,
 * attach/live_stop.c), so a handler running on any other thread sends
 * the signal on to the tracer, whose handler detaches and dies.  The
 * other tracees need nothing: the kernel detaches them when coroscope
 * dies (and they run on, as seized threads do), but a signal held at a
 * signal-delivery-stop is dropped by that detach, not delivered.
 */
#include "attach/live.h"
#include "attach/live_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/banned.h"

/*
 * The seized threads, as the handler sees them.  A handler may run at any
 * point, so this is a fixed array of sig_atomic_t slots, written by the
 * tracer thread only: a slot is claimed by writing its tid last and
 * released by writing 0.  A thread missing from it (more than GUARD_MAX,
 * or caught mid-update) is still detached by the kernel when coroscope
 * dies; only a signal we held for it is lost.
 */
#define GUARD_MAX 8192
static volatile sig_atomic_t guard_tid[GUARD_MAX];
static volatile sig_atomic_t guard_sig[GUARD_MAX];
static volatile sig_atomic_t guard_len;
static int guard_installed;

/* The tracer thread's tid while it holds threads, else 0.  Lock-free,
 * so usable in a handler. */
static atomic_int guard_tracer;
/* A signal handed to the tracer, which may have exited before taking it
 * (a signal pending on an exiting thread is dropped). */
static volatile sig_atomic_t guard_handed;

/* A slot for tid, or -1 when none is free.  The stop appends; the
 * resume clears every slot, and the array's length drops once its last
 * slot is clear.  So the search for a hole left by a vanished thread
 * only runs once the length has reached GUARD_MAX: each call is O(1)
 * for thousands of threads. */
int live_guard_add(int tid)
{
	sig_atomic_t i = guard_len;

	if (i >= GUARD_MAX)
		for (i = 0; i < GUARD_MAX; i++)
			if (guard_tid[i] == 0)
				break;
	if (i >= GUARD_MAX)
		return -1;
	guard_sig[i] = 0;
	guard_tid[i] = tid;
	if (i == guard_len)
		guard_len = i + 1;
	return (int)i;
}

void live_guard_set_sig(int slot, int tid, int sig)
{
	if (slot >= 0 && guard_tid[slot] == tid)
		guard_sig[slot] = sig;
}

void live_guard_remove(int slot, int tid)
{
	if (slot >= 0 && guard_tid[slot] == tid)
		guard_tid[slot] = 0;
	/* Bounded by GUARD_MAX. */
	while (guard_len > 0 && guard_tid[guard_len - 1] == 0)
		guard_len--;
}

void live_guard_set_tracer(int tid)
{
	atomic_store(&guard_tracer, tid);
}

/* Async-signal-safe: only the raw ptrace system call.  Run by the
 * tracer thread (another thread's detaches would fail with ESRCH). */
static void guard_give_back_signals(void)
{
	sig_atomic_t i;

	for (i = 0; i < guard_len; i++) {
		int tid = guard_tid[i];

		if (tid > 0 && guard_sig[i]) {
			syscall(SYS_ptrace, PTRACE_DETACH, tid, NULL,
				(void *)(long)guard_sig[i]);
			guard_tid[i] = 0;
		}
	}
}

static void guard_handler(int sig)
{
	static struct sigaction sa;  /* zeroed: no memset in a handler */
	int saved = errno, tracer = atomic_load(&guard_tracer);

	/* Not the tracer: hand the signal to it (it has the same mask as
	 * the thread that stopped the target, which took this signal). */
	if (tracer > 0 && tracer != (int)syscall(SYS_gettid)) {
		guard_handed = sig;
		if (syscall(SYS_tgkill, getpid(), tracer, sig) == 0) {
			errno = saved;
			return;
		}
	}
	guard_give_back_signals();
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	/* Pending until this handler returns (the signal is blocked while
	 * it runs); then the default action ends coroscope as if the
	 * handler had never been there. */
	raise(sig);
	errno = saved;
}

void live_guard_tracer_gone(void)
{
	int sig = guard_handed;

	/* The tracer exited with the signal handed to it pending: take it
	 * here (the handler, with no tracer left, ends coroscope). */
	if (sig) {
		guard_handed = 0;
		raise(sig);
	}
}

/* exit() while a target is held: let the tracers give it back. */
static void guard_atexit(void)
{
	live_release_all_held();
}

void live_install_signal_guard(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa, old;
	size_t i;

	if (guard_installed)
		return;
	guard_installed = 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = guard_handler;
	/* A thread that hands the signal to the tracer returns from the
	 * handler and runs on until the tracer ends coroscope: no system
	 * call of its should fail meanwhile with EINTR. */
	sa.sa_flags = SA_RESTART;
	sigfillset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		/* Leave an ignored signal ignored (nohup, background jobs). */
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
	atexit(guard_atexit);
}
