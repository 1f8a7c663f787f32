#include "cli/watch_sample.h"

#include "cli/collect_deadlines.h"
#include "cli/escape.h"

#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/report_graph.h"
#include "cli/sched_idle.h"
#include "cli/thread_idle.h"
#include "cli/watch_awaits.h"
#include "cli/watch_probe.h"
#include "cli/watch_timers.h"
#include "common/hash.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "readers/loop_turns.h"
#include "readers/native_merge.h"
#include "readers/usercode.h"
#include "common/procfs.h"
#include "common/banned.h"

/* ---- one sample, reduced to observations ---- */

struct sample {
	struct collection *c;
	const struct watch_cpu *before;  /* read just after the last sample */
	const struct watch_cpu *now;     /* read just before this one */
	double quiet_s;                  /* python_quiet_s() */
	/* loop_waits() of the last thread asked (its tasks come one after
	 * another, and each asks): tid 0 when none yet. */
	int waits_tid, waits;
	/* the running tasks the probe saw end their step after the stop
	 * (cli/watch_probe.h) */
	const struct addrmap *ended;
};

/* The window of thread tid, which leaves out our own stop. */
static void thread_window(const struct sample *s, int tid,
			  struct watch_window *w)
{
	watch_cpu_window(s->before, s->now, tid, !s->c->opt.no_block, w);
}

/* Generators (and greenlets) whose locals are read per sample, at most:
 * beyond, their values are left out of every fingerprint. */
#define WATCH_LOCALS_MAX_OBJECTS 1000
/* Frames of one greenlet or one trio task's chain whose locals count. */
#define WATCH_LOCALS_MAX_FRAMES 32

static void frame_locals_free(struct py_frame *f)
{
	size_t i;

	for (i = 0; i < f->nlocals; i++)
		free(f->locals[i].repr);
	free(f->locals);
	f->locals = NULL;
	f->nlocals = 0;
}

/* The frame at addr with its locals, from the sample's copy: 1 when
 * read (free with frame_locals_free()). */
static int frame_with_locals(struct collection *c, uint64_t addr,
			     struct py_frame *f)
{
	struct py_stack_options opt;
	struct cs_err err;

	memset(&opt, 0, sizeof(opt));
	opt.locals = 1;
	memset(f, 0, sizeof(*f));
	cs_err_init(&err);
	/* reads the copy captured during the stop (or, for a target too
	 * large to copy or --no-block, racily: then it may just not tell) */
	if (py_frame_read(&c->py, addr, &opt, f, &err) == 1)
		return 1;
	frame_locals_free(f);
	return 0;
}

/*
 * h with the values of the frame's locals (their short reprs) added.  A
 * generator resumed between two samples is back at the same yield with
 * the same frame: what it computed meanwhile, in its locals, is what
 * tells.  (One whose locals never change looks unchanged.)
 */
static uint64_t locals_hash(struct collection *c, uint64_t h, uint64_t frame)
{
	struct py_frame f;
	size_t i;

	if (!frame_with_locals(c, frame, &f))
		return h;
	for (i = 0; i < f.nlocals; i++) {
		h = cs_fnv_str(h, f.locals[i].name);
		h = cs_fnv_str(h, f.locals[i].repr);
	}
	frame_locals_free(&f);
	return h;
}

/* Not "the user's code" (readers/usercode.h). */
static int is_library(const struct sample *s, const char *file)
{
	return !py_is_user_file(file, NULL);
}

static void frame_place(const struct py_frame *f, struct watch_place *p)
{
	p->file = f->code ? f->code->filename : NULL;
	p->function = f->code ? f->code->qualname : NULL;
	p->line = f->line;
}

/* A coroutine's qualname is its own (gi_qualname), also before 3.11. */
static void gen_place(const struct py_gen *g, struct watch_place *p)
{
	frame_place(&g->frame, p);
	if (g->qualname)
		p->function = g->qualname;
}

/* Native frames looked at for the innermost function, at most. */
#define NATIVE_SCAN 32

/*
 * The innermost native function a thread is in, before the eval loop:
 * the first whose name does not start with '_', since glibc's internals
 * (__futex_abstimed_wait_common64) say less than the call they serve
 * (sem_clockwait, pthread_cond_wait); else the innermost named one.
 */
static const char *native_innermost(const struct native_thread *nt)
{
	const char *first = NULL;
	size_t i;

	for (i = 0; nt && i < nt->nframes && i < NATIVE_SCAN; i++) {
		const struct native_frame *f = &nt->frames[i];

		if (native_is_eval_frame(f))
			break;
		if (!f->sym.function || !f->sym.function[0])
			continue;
		if (!first)
			first = f->sym.function;
		if (f->sym.function[0] != '_')
			return f->sym.function;
	}
	return first;
}

static void observe_thread(struct watch_tracker *t, const struct sample *s,
			   const struct py_thread *th)
{
	const struct py_task *running;
	int found_ended = 0;
	struct watch_obs o;
	struct watch_window w;
	size_t i, user = th->nframes;

	/* A main thread that called pthread_exit(): not stuck, gone, if
	 * the interpreter still lists it */
	if (th->exited)
		return;
	memset(&o, 0, sizeof(o));
	o.kind = WATCH_THREAD;
	o.off_cpu_s = offcpu_of(&s->c->offcpu, th->tid);
	/* the kernel id when known, which is also the /proc key */
	o.id = th->tid > 0 ? (uint64_t)th->tid : th->thread_id;
	o.name = th->name;
	o.fingerprint = CS_FNV_START;
	for (i = 0; i < th->nframes; i++) {
		const struct py_frame *f = &th->frames[i];

		o.fingerprint = cs_fnv_u64(o.fingerprint, f->addr);
		o.fingerprint = cs_fnv_u64(o.fingerprint,
					f->code ? f->code->addr : 0);
		o.fingerprint = cs_fnv_u64(o.fingerprint, (uint64_t)f->line);
		if (user == th->nframes && f->code &&
		    !is_library(s, f->code->filename))
			user = i;
	}
	o.where.line = o.inner.line = -1;
	/* (a step that ended after this stop is not the one the next
	 * sample finds, should the same task run again) */
	if ((running = py_async_running_task(&s->c->async, th->tid)) &&
	    !addrmap_get(s->ended, running->addr, &found_ended) &&
	    !found_ended) {
		o.step = running->addr;
		o.step_mark = py_loop_turn_mark(&s->c->py, running->loop);
	}
	if (th->nframes) {
		if (user == th->nframes)
			user = 0;
		frame_place(&th->frames[user], &o.where);
		if (user != 0)
			frame_place(&th->frames[0], &o.inner);
	}
	thread_window(s, th->tid, &w);
	o.cpu_s = w.cpu_s;
	o.wait_s = w.wait_s;
	o.sleeps = w.sleeps;
	o.window_s = w.window_s;
	if (s->c->opt.native && th->tid > 0) {
		const struct native_thread *nt =
			native_stacks_find(&s->c->native, th->tid);

		o.blocked_in = native_blocked_in(nt);
		o.native_function = native_innermost(nt);
	}
	o.idle = thread_idle_by_design(th);
	watch_thread_timers(&o, collect_deadline_of(s->c, th->tid),
			    s->c->clock_s);
	watch_observe(t, &o);
}

/*
 * A task parked in asyncio.sleep(d) awaits a new future after every d
 * seconds, and the allocator often hands the new future the old one's
 * address, so its fingerprint may not change.  So does a heartbeat's
 * asyncio.wait_for(event.wait(), d), which returns within d whether
 * the event was set or not (before 3.12 it awaits a new future of its
 * own too).  When d is shorter than the time since it was last seen
 * moving, it has woken up in between if its loop's thread waits in the
 * loop's selector now: a loop waits there no longer than until its next
 * timer, and runs the timers due before it waits again, so a timer
 * older than that has fired.  That the thread ran says nothing: a task
 * spinning in its step runs it and blocks the loop; nor does a loop
 * that runs on no thread (stopped) fire its timers.  (The samples cannot
 * tell a single wake in a window from the one their stop causes,
 * cli/watch_cpu.c; run samples every ~0.2 s, and a quarter-second
 * heartbeat was called stuck.)  From 3.12 wait_for() awaits what it
 * bounds in the same task, so the wait is looked for down the chain.
 * uvloop's loop runs in C, with no selector's frame: its thread in
 * epoll_wait(2) with no task's step running is its wait (c_loop_waits()).
 */
static const struct {
	const char *function, *local;
} timed_waits[] = {
	{ "sleep", "delay" },
	{ "wait_for", "timeout" },
};

/* The local of g's that bounds its wait, or NULL. */
static const char *timed_wait_local(const struct py_gen *g)
{
	size_t i;

	for (i = 0; g && g->has_frame &&
		    i < sizeof(timed_waits) / sizeof(timed_waits[0]); i++)
		if (py_code_is(g->code, "asyncio/tasks.py",
			       timed_waits[i].function))
			return timed_waits[i].local;
	return NULL;
}

/* The sample's thread of kernel id tid, or NULL. */
static const struct py_thread *sample_thread(const struct sample *s, int tid)
{
	size_t i;

	for (i = 0; tid > 0 && i < s->c->snap.nthreads; i++)
		if (s->c->snap.threads[i].tid == tid)
			return &s->c->snap.threads[i];
	return NULL;
}

/* Is thread tid in asyncio's wait for events (readers/stacks.h)? */
static int waits_in_selector(const struct sample *s, int tid)
{
	const struct py_thread *th = sample_thread(s, tid);

	return th && py_thread_in_loop_select(th);
}

/*
 * Is thread tid waiting for events in a loop that runs in C (uvloop's:
 * no frame of asyncio's base_events.py on its stack), with no task's
 * step running on it, in epoll_wait(2)?  A C loop waits there as long
 * as its next timer at most, as asyncio's selector does; a callback of
 * its blocked in C would sit in another call.
 */
static int c_loop_waits(const struct sample *s, int tid)
{
#if defined(__x86_64__)
	const struct py_thread *th = sample_thread(s, tid);
	long nr = -1;
	size_t i;

	if (!th || py_async_running_task(&s->c->async, tid))
		return 0;
	for (i = 0; i < th->nframes; i++)
		if (th->frames[i].code && th->frames[i].code->filename &&
		    cs_ends_with(th->frames[i].code->filename,
				 "asyncio/base_events.py"))
			return 0;
	if (procfs_thread_syscall(s->c->pid, tid, &nr) != 0)
		return 0;
	/* 232 epoll_wait, 281 epoll_pwait, 441 epoll_pwait2 */
	return nr == 232 || nr == 281 || nr == 441;
#else
	(void)s;
	(void)tid;
	return 0;
#endif
}

/* Does thread tid wait in its loop's wait for events, either way?
 * Once per thread per sample: the /proc read and the frame scans. */
static int loop_waits(struct sample *s, int tid)
{
	if (tid <= 0)
		return 0;
	if (s->waits_tid != tid) {
		s->waits_tid = tid;
		s->waits = waits_in_selector(s, tid) || c_loop_waits(s, tid);
	}
	return s->waits;
}

static int short_sleep_woke(const struct watch_tracker *t,
			    struct sample *s, const struct py_task *task)
{
	const struct watch_item *it = watch_find(t, WATCH_TASK, task->addr);
	const struct py_gen *timed = NULL;
	const char *local = NULL;
	struct py_frame f;
	double delay = -1;
	size_t i;

	/* The innermost timed wait of its chain (bounded by the chain). */
	for (i = 0; i < task->nstack && !local; i++) {
		timed = py_task_gen(&s->c->async, task, i);
		local = timed_wait_local(timed);
	}
	if (!it || it->gone || !local || !loop_waits(s, task->tid))
		return 0;
	if (frame_with_locals(s->c, timed->frame.addr, &f)) {
		for (i = 0; i < f.nlocals; i++) {
			char *end;
			double d;

			if (!f.locals[i].name || !f.locals[i].repr ||
			    strcmp(f.locals[i].name, local))
				continue;
			d = strtod(f.locals[i].repr, &end);
			if (end != f.locals[i].repr && *end == '\0' && d >= 0)
				delay = d;
		}
		frame_locals_free(&f);
	}
	return delay >= 0 && delay < t->now - it->last_progress;
}

/*
 * The task a running task's step waits for by running its loop again
 * (nest_asyncio's run_until_complete(), called inside the step, the
 * first such call inward, its `self` the task's loop): the future that
 * call's frame was given, a task, read from its locals (`f` the task
 * nest_asyncio made of it, `future` asyncio's), or NULL.
 */
static const struct py_task *nested_wait(struct sample *s,
					 const struct py_task *task)
{
	const struct py_thread *th = sample_thread(s, task->tid);
	const struct py_async *a = &s->c->async;
	static const char *const names[] = { "f", "future" };
	size_t i, k;

	if (!th || !task->run_at || task->run_at > th->nframes)
		return NULL;
	/* inward from the step's innermost coroutine, bounded by the
	 * thread's frames */
	for (i = task->run_at - 1; i-- > 0;) {
		const struct py_code *code = th->frames[i].code;

		if (!code || !code->name ||
		    strcmp(code->name, "run_until_complete"))
			continue;
		/* (another loop's, or a function of that name: no) */
		if (py_frame_local(&s->c->py, &th->frames[i], "self") !=
		    task->loop)
			return NULL;
		for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
			const struct py_task *t = py_async_task(
				a, py_frame_local(&s->c->py, &th->frames[i],
						  names[k]));

			if (t && t != task)
				return t;
		}
		return NULL;
	}
	return NULL;
}

static void task_waits_on(struct strbuf *sb, struct sample *s,
			  const struct py_task *task, const struct py_gen *inner,
			  int inner_is_library)
{
	const struct py_async *a = &s->c->async;
	const struct py_task *other;

	if (task->running) {
		if ((other = nested_wait(s, task))) {
			strbuf_addstr(sb, "task '");
			esc_add_name_raw(sb, other->name);
			strbuf_addstr(sb, "' (its loop run again inside "
				      "its step)");
			return;
		}
		strbuf_addstr(sb, "nothing (running)");
		return;
	}
	if (!task->waiter)
		return;
	other = py_async_task(a, task->waiter);
	if (other) {
		strbuf_addstr(sb, "task '");
		esc_add_name_raw(sb, other->name);
		strbuf_addch(sb, '\'');
	} else {
		esc_add_name_raw(sb, task->waiter_type ? task->waiter_type :
				 "object");
	}
	if (inner && inner_is_library && (inner->qualname || inner->code)) {
		strbuf_addstr(sb, " in ");
		esc_add_name_raw(sb, inner->qualname ? inner->qualname :
				 inner->code->qualname);
	}
}

/* What changes when a task moves: what it awaits, and its chain of
 * coroutines with their frames and lines. */
uint64_t watch_task_fingerprint(const struct py_async *a,
				const struct py_task *task)
{
	uint64_t fp = cs_fnv_u64(CS_FNV_START, task->waiter);
	size_t i;

	fp = cs_fnv_u64(fp, (uint64_t)task->running);
	for (i = 0; i < task->nstack; i++) {
		const struct py_gen *g;

		if (task->stack[i] >= a->ngens)
			continue;
		g = &a->gens[task->stack[i]];
		fp = cs_fnv_u64(fp, g->addr);
		if (!g->has_frame)
			continue;
		fp = cs_fnv_u64(fp, g->frame.addr);
		fp = cs_fnv_u64(fp, (uint64_t)g->frame.line);
	}
	return fp;
}

/* The coroutine of a task's chain named as its innermost: the first
 * past trio's traps (the call above them says more), or the innermost
 * when all are. */
static const struct py_gen *task_inner(const struct py_async *a,
				       const struct py_task *task)
{
	const struct py_gen *first = NULL, *g = NULL, *next;
	size_t i;

	for (i = 0; i < task->nstack; i++) {
		if (!(g = py_task_gen(a, task, i)))
			continue;
		if (!first)
			first = g;
		if (!g->code || !py_is_scheduler_trap(g->code->filename))
			break;
	}
	if (i == task->nstack || !g)
		return first;
	/* (trio.sleep() named, not the sleep_forever() it ends in) */
	for (; i + 1 < task->nstack && g->code &&
	     py_is_trio_sleep(g->code->filename); i++) {
		next = py_task_gen(a, task, i + 1);
		if (!next || !next->code ||
		    !py_is_trio_sleep(next->code->filename))
			break;
		g = next;
	}
	return g;
}

/*
 * How long no Python code of the process has run: the least of its
 * threads' times off their CPUs, 0 when one runs or was not read.  A
 * task, generator or greenlet moves only when a thread runs it, so none
 * has moved for that long: a first sample starts its time without
 * progress there, as a thread's (watch_track.c).
 */
static double python_quiet_s(const struct collection *c)
{
	double least = -1, v;
	size_t i;

	for (i = 0; i < c->snap.nthreads; i++) {
		const struct py_thread *th = &c->snap.threads[i];

		if (th->exited)
			continue;
		v = th->tid > 0 ? offcpu_of(&c->offcpu, th->tid) : OFFCPU_UNKNOWN;
		if (v < 0)
			return 0;
		if (least < 0 || v < least)
			least = v;
	}
	return least > 0 ? least : 0;
}

/* Who holds what the graph's node of kind and index waits on (a lock's
 * holder), its label into sb, and that object's class into *what; NULL
 * when no holder is known. */
static const char *held_by(struct strbuf *sb, const struct collection *c,
			   enum wg_kind kind, size_t index, const char **what)
{
	long node = py_waitgraph_node_of(&c->graph, kind, index);
	const struct py_prim *p;

	if (node < 0 || !graph_add_short_holder(sb, c, (size_t)node,
						GRAPH_RAW))
		return NULL;
	p = graph_short_wait_object(c, (size_t)node);
	*what = p->cls ? p->cls : p->name;
	return sb->buf;
}

static void observe_task(struct watch_tracker *t, struct sample *s,
			 const struct py_task *task, int woke)
{
	const struct py_async *a = &s->c->async;
	const struct py_gen *inner = task_inner(a, task), *user = NULL;
	struct watch_obs o;
	struct strbuf waits, holder;
	size_t i;

	memset(&o, 0, sizeof(o));
	o.kind = WATCH_TASK;
	o.id = task->addr;
	o.name = task->name;
	o.off_cpu_s = s->quiet_s;
	o.fingerprint = watch_task_fingerprint(a, task);
	/* A trio task has no future to watch: a task looping on
	 * trio.sleep() parks in new coroutines at the old addresses, but
	 * with a new deadline in sleep_until()'s locals. */
	o.label = task->framework;
	for (i = 0; task->framework && i < task->nstack &&
	     i < WATCH_LOCALS_MAX_FRAMES; i++)
		if (task->stack[i] < a->ngens &&
		    a->gens[task->stack[i]].has_frame)
			o.fingerprint = locals_hash(s->c, o.fingerprint,
				a->gens[task->stack[i]].frame.addr);
	for (i = 0; i < task->nstack; i++) {
		const struct py_gen *g;

		if (task->stack[i] >= a->ngens)
			continue;
		g = &a->gens[task->stack[i]];
		if (g->has_frame && !user && g->code &&
		    !is_library(s, g->code->filename))
			user = g;
	}
	o.cpu_s = o.wait_s = -1;
	o.sleeps = -1;
	o.where.line = o.inner.line = -1;
	if (!user)
		user = inner;
	if (user && user->has_frame)
		gen_place(user, &o.where);
	if (inner && inner != user && inner->has_frame)
		gen_place(inner, &o.inner);
	strbuf_init(&waits);
	task_waits_on(&waits, s, task, inner, inner && inner != user);
	o.waits_on = waits.len ? waits.buf : NULL;
	strbuf_init(&holder);
	/* (the lock it waits for, not the future its acquire() awaits) */
	o.held_by = held_by(&holder, s->c, WG_TASK, (size_t)(task - a->tasks),
			    &o.waits_on);
	o.woke = woke || (task->waiter && short_sleep_woke(t, s, task));
	o.awaited_moved = watch_awaited_moved(t, s->c, task - a->tasks);
	o.idle = task_idle_by_design(a, task);
	o.cancelled = task->cancels_requested > 0;
	o.not_started = inner && inner->state == PY_GEN_CREATED;
	watch_task_timers(&o, task, inner, s->c->clock_s);
	watch_observe(t, &o);
	strbuf_release(&waits);
	strbuf_release(&holder);
}

/* What a generator delegates to, in words, or nothing. */
static void gen_waits_on(struct strbuf *sb, const struct py_async *a,
			 const struct py_gen *g)
{
	uintptr_t k;
	const struct py_task *task;

	if (!g->awaiting)
		return;
	k = (uintptr_t)addrmap_get(&a->gen_index, g->awaiting, NULL);
	task = py_async_task(a, g->awaiting);
	if (k && k <= a->ngens) {
		strbuf_addf(sb, "%s '", py_code_kind_name(a->gens[k - 1].kind));
		esc_add_name_raw(sb, a->gens[k - 1].qualname);
		strbuf_addch(sb, '\'');
	} else if (task) {
		strbuf_addstr(sb, "task '");
		esc_add_name_raw(sb, task->name);
		strbuf_addch(sb, '\'');
	}
}

/*
 * A generator, coroutine or async generator no task owns, by address:
 * it moved when its frame, line or delegate changed, when its locals'
 * values changed (with_locals), or when it is running now.
 */
static void observe_generator(struct watch_tracker *t, const struct sample *s,
			      const struct py_gen *g, int with_locals)
{
	const struct py_async *a = &s->c->async;
	struct watch_obs o;
	struct strbuf waits;

	memset(&o, 0, sizeof(o));
	o.kind = WATCH_GENERATOR;
	o.id = g->addr;
	o.off_cpu_s = s->quiet_s;
	o.name = g->qualname ? g->qualname :
		 g->code ? g->code->qualname : NULL;
	o.label = py_code_kind_name(g->kind);
	o.fingerprint = cs_fnv_u64(CS_FNV_START, (uint64_t)g->state);
	o.fingerprint = cs_fnv_u64(o.fingerprint, g->awaiting);
	o.cpu_s = o.wait_s = -1;
	o.sleeps = -1;
	o.where.line = o.inner.line = -1;
	if (g->has_frame) {
		o.fingerprint = cs_fnv_u64(o.fingerprint, g->frame.addr);
		o.fingerprint = cs_fnv_u64(o.fingerprint, (uint64_t)g->frame.line);
		if (with_locals)
			o.fingerprint = locals_hash(s->c, o.fingerprint,
						    g->frame.addr);
		gen_place(g, &o.where);
	}
	o.woke = g->state == PY_GEN_RUNNING;
	o.idle = gen_idle_by_design(g);
	/* (a @contextmanager's generator goes on when the `with` that
	 * entered it ends: its thread or task is followed) */
	if (!o.idle && py_waitgraph_entered_of(&s->c->graph,
					       (size_t)(g - a->gens)))
		o.idle = "a context manager's generator, held open by a "
			 "`with`";
	strbuf_init(&waits);
	gen_waits_on(&waits, a, g);
	o.waits_on = waits.len ? waits.buf : NULL;
	watch_observe(t, &o);
	strbuf_release(&waits);
}

/* What the wait-for graph says a greenlet waits on: a primitive's
 * class ("gevent.event.Event"), else NULL.  (It lives as long as the
 * sample's collection; the tracker copies it.) */
static const char *greenlet_waits_on(const struct collection *c,
				     const struct py_greenlet *g)
{
	long node = py_waitgraph_node_of(&c->graph, WG_GREENLET,
					 (size_t)(g - c->greenlets.v));
	const struct py_prim *p = node >= 0 ?
		graph_short_wait_object(c, (size_t)node) : NULL;

	return p ? (p->cls ? p->cls : p->name) : NULL;
}

/* Followed like a generator: state, frames, and their locals' values. */
static void observe_greenlet(struct watch_tracker *t, const struct sample *s,
			     const struct py_greenlet *g, int with_locals)
{
	struct watch_obs o;
	const struct py_frame *frames = g->frames;
	const struct py_thread *th;
	size_t i, nframes = g->nframes, user;
	struct strbuf holder;

	/* running now: its frames are its thread's (the Hub in its loop) */
	if (g->state == PY_GREENLET_RUNNING && !nframes &&
	    (th = sample_thread(s, g->tid))) {
		frames = th->frames;
		nframes = th->nframes;
	}
	user = nframes;
	memset(&o, 0, sizeof(o));
	o.kind = WATCH_GREENLET;
	o.id = g->addr;
	/* it runs only on its thread */
	o.off_cpu_s = g->tid > 0 ? offcpu_of(&s->c->offcpu, g->tid) : -1;
	if (o.off_cpu_s < 0)
		o.off_cpu_s = s->quiet_s;
	o.name = g->name ? g->name : g->function;
	o.label = g->type_name;
	o.cpu_s = o.wait_s = -1;
	o.sleeps = -1;
	o.where.line = o.inner.line = -1;
	o.fingerprint = cs_fnv_u64(CS_FNV_START, (uint64_t)g->state);
	for (i = 0; i < nframes; i++) {
		const struct py_frame *f = &frames[i];

		o.fingerprint = cs_fnv_u64(o.fingerprint, f->addr);
		o.fingerprint = cs_fnv_u64(o.fingerprint,
					f->code ? f->code->addr : 0);
		o.fingerprint = cs_fnv_u64(o.fingerprint, (uint64_t)f->line);
		o.places = cs_fnv_u64(cs_fnv_u64(o.places ? o.places :
						 CS_FNV_START,
						 f->code ? f->code->addr : 0),
				      (uint64_t)f->line);
		if (with_locals && i < WATCH_LOCALS_MAX_FRAMES)
			o.fingerprint = locals_hash(s->c, o.fingerprint,
						    f->addr);
		if (user == nframes && f->code &&
		    !is_library(s, f->code->filename))
			user = i;
	}
	if (nframes) {
		if (user == nframes)
			user = 0;
		frame_place(&frames[user], &o.where);
		if (user != 0)
			frame_place(&frames[0], &o.inner);
	}
	o.woke = g->state == PY_GREENLET_RUNNING;
	o.not_started = g->state == PY_GREENLET_NOT_STARTED;
	o.waits_on = greenlet_waits_on(s->c, g);
	strbuf_init(&holder);
	o.held_by = held_by(&holder, s->c, WG_GREENLET,
			    (size_t)(g - s->c->greenlets.v), &o.waits_on);
	o.idle = greenlet_idle_by_design(g);
	/* the greenlet running on a thread that waits for work by design
	 * (a gevent threadpool's worker greenlet) is that thread's wait */
	if (!o.idle && g->state == PY_GREENLET_RUNNING &&
	    (th = sample_thread(s, g->tid)))
		o.idle = thread_idle_by_design(th);
	watch_greenlet_timers(&o, nframes ? &frames[0] : NULL);
	watch_observe(t, &o);
	strbuf_release(&holder);
}


void watch_feed(struct watch_tracker *t, double now_s, struct collection *c,
		const struct watch_cpu *before, const struct watch_cpu *now,
		double probe_ms)
{
	struct sample sm, *s = &sm;
	struct addrmap woke, ended;
	size_t i, n;

	sm.c = c;
	sm.before = before;
	sm.now = now;
	sm.quiet_s = python_quiet_s(c);
	sm.waits_tid = 0;
	sm.waits = 0;
	addrmap_init(&woke);
	addrmap_init(&ended);
	sm.ended = &ended;
	watch_probe_wakeups(t, c, probe_ms, &woke, &ended);
	watch_begin(t, now_s);
	for (i = 0; i < s->c->snap.nthreads; i++)
		observe_thread(t, s, &s->c->snap.threads[i]);
	for (i = 0; i < s->c->async.ntasks; i++) {
		const struct py_task *task = &s->c->async.tasks[i];
		int found = 0;

		addrmap_get(&woke, task->addr, &found);
		observe_task(t, s, task, found);
	}
	for (i = 0, n = 0; i < c->async.ngens; i++)
		n += !c->async.gens[i].task &&
		     c->async.gens[i].state != PY_GEN_CLOSED;
	for (i = 0; i < c->async.ngens; i++)
		if (!c->async.gens[i].task &&
		    c->async.gens[i].state != PY_GEN_CLOSED)
			observe_generator(t, s, &c->async.gens[i],
					  n <= WATCH_LOCALS_MAX_OBJECTS);
	for (i = 0; i < c->greenlets.n; i++)
		if (c->greenlets.v[i].state != PY_GREENLET_DEAD)
			observe_greenlet(t, s, &c->greenlets.v[i],
					 c->greenlets.n <=
					 WATCH_LOCALS_MAX_OBJECTS);
	if (c->greenlets_unread)
		watch_carry(t, WATCH_GREENLET, NULL);
	if (c->trio_unread)
		watch_carry(t, WATCH_TASK, "trio");
	watch_end(t);
	addrmap_release(&woke);
	addrmap_release(&ended);
}
