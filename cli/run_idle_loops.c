/*
 * A thread in an asyncio event loop's run_forever() with nothing left
 * to run: no task of the loop, no callback ready, no timer, and no file
 * but its own wake-up pipe registered with its selector.  Only a signal
 * or another thread (call_soon_threadsafe()) can wake it, so a program
 * that forgot loop.stop(), or whose last task ended, runs forever.  The
 * thread sits in epoll_wait() under asyncio's and selectors' frames, and
 * nothing the wait-for graph knows waits: before, "no likely cause
 * stands out".  Seen stuck there, not driven by run_until_complete()
 * (whose future a thread may complete), an idle cause, ranked last:
 * 'idle: thread 12
 * "MainThread" runs an event loop with nothing left to do ...', then
 * where run_forever() was called.  And a loop asleep in its selector,
 * seen stuck there, with callbacks ready, which a thread scheduled
 * without waking it (asleep_with_ready()): a cause that blocks the
 * loop.  Only asyncio's own loop is read (its _ready, _scheduled and
 * _selector); uvloop's keeps them in C.
 */
#include "cli/run_idle_loops.h"

#include "cli/run_fds.h"
#include "cli/run_places.h"
#include "cli/run_probe.h"
#include "cli/run_reads.h"
#include "cli/run_seen.h"
#include "attach/regs.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "readers/code.h"
#include "readers/dicts.h"
#include "readers/objects.h"
#include "readers/sockets.h"
#include "common/banned.h"

/* The frame of th in asyncio's run_forever() when it waits in its
 * selector there (only asyncio's and selectors' frames inside it: one
 * running a callback or a task's step is that one's), or NULL. */
static const struct py_frame *looping(const struct py_thread *th)
{
	static const char *const inner[] = {
		"/selectors.py", "/asyncio/base_events.py",
	};

	return run_frame_waiting_in(th->frames, th->nframes,
				    "/asyncio/base_events.py", "run_forever",
				    inner, 2);
}

/* Does run_until_complete() drive the loop of frame `at` (run_forever()
 * in th's frames)?  It waits for the future it was given, which a
 * thread may complete (an executor's job): not a loop left idle. */
static int until_complete(const struct py_thread *th,
			  const struct py_frame *at)
{
	size_t k = (size_t)(at - th->frames) + 1;

	return k < th->nframes &&
	       py_code_is(th->frames[k].code, "/asyncio/base_events.py",
			  "run_until_complete");
}

/* The length of a list ('l') or deque ('q') attribute of obj, or -1
 * when it cannot be read. */
static long attr_len(struct pyproc *py, uint64_t obj, const char *name,
		     char kind)
{
	uint64_t v = obj ? pyobj_own_or_0(py, obj, name) : 0;
	struct cs_err err;
	size_t n = 0;
	int ret;

	if (!v)
		return -1;
	ret = kind == 'l' ? pyseq_items(py, v, NULL, 0, &n, &err) :
	      pydeque_items(py, v, NULL, 0, &n, &err);
	return ret < 0 || n > (size_t)0x7fffffff ? -1 : (long)n;
}

/* Files of an idle loop named at most. */
#define LOOP_FDS_NAMED 4

/* The fds registered with loop's selector but its wake-up pipe's, the
 * first max into fds: how many, or -1 when they cannot be read. */
static long loop_fds(struct pyproc *py, uint64_t loop, int64_t *fds,
		     size_t max)
{
	struct pydict_entry e[LOOP_FDS_NAMED + 1];
	uint64_t map = pyobj_own_or_0(py, pyobj_own_or_0(py, loop,
							 "_selector"),
				      "_fd_to_key");
	int64_t own = py_socket_fd(py, pyobj_own_or_0(py, loop, "_ssock"),
				   NULL), fd;
	struct cs_err err;
	size_t used = 0, k, n = 0;

	if (!map || own < 0 || pydict_entries(py, map, e, LOOP_FDS_NAMED + 1,
					      &used, &err) < 0 ||
	    used > 0x7fffffff || !used)
		return -1;
	for (k = 0; k < used && k < LOOP_FDS_NAMED + 1; k++) {
		if (pyobj_int_i64(py, e[k].key, &fd, &err) < 0)
			return -1;
		if (fd != own && n < max)
			fds[n++] = fd;
	}
	/* (the wake-up pipe among the first: the rest are all others) */
	return (long)used - 1;
}

/* Has asyncio loop `loop` nothing left to run: no task of it in c, no
 * callback ready, no timer, and no stop asked for?  The files it waits
 * on, the first max into fds: *nfds how many (-1 unknown). */
static int nothing_left(struct collection *c, uint64_t loop, int64_t *fds,
			size_t max, long *nfds)
{
	struct pyproc *py = &c->py;
	uint64_t stopping;
	size_t k;

	if (!loop || !py->types.false_)
		return 0;
	/* Bounded by the tasks. */
	for (k = 0; k < c->async.ntasks; k++)
		if (c->async.tasks[k].loop == loop)
			return 0;
	stopping = pyobj_own_or_0(py, loop, "_stopping");
	if (attr_len(py, loop, "_ready", 'q') != 0 ||
	    attr_len(py, loop, "_scheduled", 'l') != 0 ||
	    stopping != py->types.false_)
		return 0;
	*nfds = loop_fds(py, loop, fds, max);
	return *nfds >= 0;
}

/* "no task, callback, timer or file of its own (...)", or the files
 * it waits on: "it waits only on fd 6, a TCP listening socket ...". */
static void add_waits(struct strbuf *sb, const struct run_summary *s,
		      const struct collection *c, const int64_t *fds,
		      long nfds)
{
	long k;

	if (!nfds) {
		strbuf_addstr(sb, "nothing left to do: no task, callback, "
			      "timer or file of its own (only a signal or "
			      "another thread can wake it)");
		return;
	}
	strbuf_addstr(sb, "no task, callback or timer: it waits only on ");
	for (k = 0; k < nfds && k < LOOP_FDS_NAMED; k++) {
		strbuf_addstr(sb, k ? "; " : "");
		strbuf_addf(sb, "fd %lld", (long long)fds[k]);
		if (fds[k] >= 0 && fds[k] <= 0x7fffffff)
			(void)run_fds_describe(sb, ", ", s, c->pid,
					       collect_proc_pid(c),
					       (int)fds[k]);
	}
	if (nfds > LOOP_FDS_NAMED)
		strbuf_addf(sb, " and %ld more", nfds - LOOP_FDS_NAMED);
}

/*
 * Thread th, seen stuck in the selector of `loop`, with callbacks ready
 * to run: they were scheduled after it went to sleep (a loop with
 * callbacks ready polls without waiting), by another thread that did
 * not wake it -- an asyncio Event set, a Future's result set, a Queue
 * fed from a thread instead of through call_soon_threadsafe().  They run
 * only at the loop's next event, maybe never.  A cause that blocks the
 * loop: 1, or 0 when that is not so.
 */
static int asleep_with_ready(struct run_summary *s, struct collection *c,
			     const struct py_thread *th, uint64_t loop,
			     struct strbuf *sb)
{
	unsigned long long args[3];
	long ready, nr;

	if (!loop || th->tid <= 0 ||
	    (ready = attr_len(&c->py, loop, "_ready", 'q')) <= 0 ||
	    run_thread_call(c, collect_proc_pid(c), th->tid, &nr, args) < 0 ||
	    cs_syscall_polls(nr) == CS_POLL_NONE)
		return 0;
	strbuf_addstr(sb, "event loop asleep: ");
	run_add_thread_label(sb, th);
	strbuf_addf(sb, " waits in its selector with %ld callback%s ready, "
		    "scheduled after it went to sleep by another thread that "
		    "did not wake it (an asyncio Event, Future or Queue used "
		    "from a thread, not through call_soon_threadsafe()): they "
		    "run only at its next event", ready, ready == 1 ? "" : "s");
	(void)run_probe_cause_at_own(s, RUN_CAUSE_LOOP_BLOCKED, c, th, sb);
	return 1;
}

void run_summarize_idle_loops(struct run_summary *s, struct collection *c,
			      const struct watch_tracker *t)
{
	struct strbuf sb;
	size_t i;

	if (!c->is_live || c->async.copied_at_fork)
		return;
	strbuf_init(&sb);
	/* Bounded by the snapshot's threads. */
	for (i = 0; i < c->snap.nthreads; i++) {
		const struct py_thread *th = &c->snap.threads[i];
		const struct py_frame *at = looping(th);
		int64_t fds[LOOP_FDS_NAMED];
		struct run_seen seen;
		long nfds = -1;
		uint64_t loop;

		run_seen_thread(t, th, &seen);
		/* (a loop seen running between samples has work) */
		if (!at || seen.state != RUN_SEEN_STUCK ||
		    run_summary_explains(s, th))
			continue;
		loop = py_frame_local(&c->py, at, "self");
		if (asleep_with_ready(s, c, th, loop, &sb) ||
		    until_complete(th, at) ||
		    !nothing_left(c, loop, fds, LOOP_FDS_NAMED, &nfds))
			continue;
		strbuf_addstr(&sb, "idle: ");
		run_add_thread_label(&sb, th);
		strbuf_addstr(&sb, " runs an event loop with ");
		add_waits(&sb, s, c, fds, nfds);
		(void)run_probe_cause_at_own(s, RUN_CAUSE_IDLE, c, th, &sb);
	}
	strbuf_release(&sb);
}
