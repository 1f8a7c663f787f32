#include "cli/collect.h"


#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attach/live.h"
#include "cli/child_pipes.h"
#include "cli/collect_deadlines.h"
#include "cli/collect_tids.h"
#include "cli/source.h"
#include "common/addrmap.h"
#include "common/jobs.h"
#include "common/procfs.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "readers/trio.h"
#include "readers/semlocks.h"
#include "readers/waitables.h"
#include "common/banned.h"

/* Memory copied during a stop, at most: a target needing more stays
 * stopped while it is read. */
#define CAPTURE_MAX_BYTES ((size_t)512 << 20)

/* Give the library's message the context only the command knows. */
static void explain_live(struct cs_err *err, struct memsrc *ms, int pid)
{
	char comm[PROCFS_COMM_MAX];

	/* A process that went away mid-read fails in any way at all (its
	 * files and memory vanish): say what happened, not what failed. */
	if (ms && err->code != CS_ERR_EXITED && !live_alive_settled(ms)) {
		cs_refail(err, CS_ERR_EXITED,
			  "process %d exited while being read", pid);
	} else if (err->code == CS_ERR_NOT_PYTHON && ms) {
		procfs_comm(pid, comm, sizeof(comm));
		cs_err_prefix(err, "process %d (%s) is not a Python process",
			      pid, comm);
	}
}

/*
 * Tasks, generators, greenlets and trio tasks, from one heap walk.  The
 * thread stacks stand on their own: a heap that cannot be walked (a racy
 * --no-block read, a corrupt list) costs only these, with a warning.
 */
/* Test aid (the man page's ENVIRONMENT): COROSCOPE_TEST_WALK_FAIL=N
 * makes the Nth heap walk of this process (1 the first; one per
 * collection, and each --no-block walk tried again) fail, as one that
 * met the target's lists mid-change would; =greenlets:N and =trio:N
 * fail only the reading of its greenlets or trio tasks after a walk
 * that read.  What fails now: "" the walk, "greenlets", "trio"; NULL
 * nothing. */
static const char *walk_fails_now(void)
{
	static const char *const parts[] = { "greenlets", "trio" };
	static long walks;
	const char *s = getenv("COROSCOPE_TEST_WALK_FAIL");
	size_t i, len;

	walks++;
	if (!s || !*s)
		return NULL;
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		len = strlen(parts[i]);
		if (!strncmp(s, parts[i], len) && s[len] == ':')
			return strtol(s + len + 1, NULL, 10) == walks ?
			       parts[i] : NULL;
	}
	return strtol(s, NULL, 10) == walks ? "" : NULL;
}

/* Did the test aid ask that part to fail now?  Then err says so. */
static int part_fails(const char *failing, const char *part,
		      struct cs_err *err)
{
	if (!failing || strcmp(failing, part))
		return 0;
	cs_fail(err, CS_ERR_MEMORY, "%s failed as COROSCOPE_TEST_WALK_FAIL "
		"asked", *part ? part : "the heap walk");
	return 1;
}

/* The tries again a read that the running target changed under may
 * make (--no-block only). */
static int retries_of(const struct collect_options *opt)
{
	int retries = opt->retries ? opt->retries : COLLECT_DEFAULT_RETRIES;

	if (retries < 0 || !opt->no_block)
		return 0;
	return retries < COLLECT_MAX_RETRIES ? retries : COLLECT_MAX_RETRIES;
}

/* What the heap walk kept less of than it found, said. */
static void warn_cut(struct collection *c)
{
	if (c->async.semlocks_cut)
		cs_warn(&c->warnings, CS_WARN_COLLECTION,
			"multiprocessing's locks past the first %u not read "
			"(no holder of one is named as none)",
			PY_MAX_SEMLOCKS);
	if (c->async.waitables_cut)
		cs_warn(&c->warnings, CS_WARN_COLLECTION,
			"tornado's and gevent's locks and queues past the "
			"first %u not looked at for their waiters",
			PY_MAX_WAITABLES);
	if (c->async.chains_cut)
		cs_warn(&c->warnings, CS_WARN_COLLECTION,
			"%zu await chains longer than %zu coroutines cut "
			"there (the rest listed as owned by no task)",
			c->async.chains_cut, PY_MAX_CHAIN);
}

static void collect_heap(struct collection *c,
			 const struct py_stack_options *sopt)
{
	struct py_greenlet_scan gscan;
	struct py_trio_scan tscan;
	struct py_waitables_scan wscan;
	struct py_semlock_scan mscan;
	struct py_gc_visit also[4];
	struct cs_err err;
	size_t nalso = 0;
	const char *failing = walk_fails_now();
	int gl, walked;

	cs_err_init(&err);
	/* A --no-block read: pages cached by the readers before are as old
	 * as the read, and a list walk over them meets objects the target
	 * has since linked or freed.  The walk reads its pages afresh
	 * (what pyproc decoded before, names and code, it keeps). */
	if (c->opt.no_block && c->ms && c->ms->frozen == MEMSRC_LIVE)
		memsrc_cache_clear(c->ms);
	c->greenlets_unread = c->trio_unread = 0;
	gl = py_greenlets_prepare(&c->py, &gscan, &also[nalso], &err);
	c->greenlets_unread = gl < 0;
	if (gl < 0)
		cs_warn(&c->warnings, CS_WARN_COLLECTION,
			"greenlets not shown: %.400s", err.msg);
	nalso += gl > 0;
	nalso += (size_t)py_trio_prepare(&c->py, &tscan, &also[nalso]);
	nalso += (size_t)py_waitables_prepare(&c->py, &wscan, &also[nalso]);
	nalso += (size_t)py_semlocks_prepare(&c->py, &mscan, &also[nalso]);
	cs_err_init(&err);
	/* (a capture that lacked a page reads again, its warnings dropped:
	 * this round's walk is the one that counts) */
	c->heap_unread = 0;
	walked = py_async_take_with(&c->py, &c->snap, sopt, also, nalso,
				    &c->async, &err) == 0;
	if (walked && part_fails(failing, "", &err)) {
		py_async_release(&c->async);
		walked = 0;
	}
	if (!walked) {
		cs_warn(&c->warnings, CS_WARN_COLLECTION,
			"tasks and generators%s%s not shown: %.400s",
			gl > 0 ? ", greenlets" : "",
			tscan.task_type ? ", trio tasks" : "", err.msg);
		c->heap_unread = c->warnings.n;
	}
	if (walked) {
		py_waitables_finish(&wscan, &c->async);
		py_semlocks_finish(&c->py, &mscan, &c->async);
	}
	if (walked && (cs_err_init(&err),
		       part_fails(failing, "trio", &err) ||
		       py_trio_finish(&tscan, &c->snap, &c->async, &err) < 0)) {
		cs_warn(&c->warnings, CS_WARN_COLLECTION,
			"trio tasks not shown: %.400s", err.msg);
		c->trio_unread = 1;
	}
	if (walked)
		warn_cut(c);
	cs_err_init(&err);
	if (walked && gl > 0 &&
	    (part_fails(failing, "greenlets", &err) ||
	     py_greenlets_finish(&gscan, &c->snap, sopt, &c->greenlets,
				 &err) < 0)) {
		cs_warn(&c->warnings, CS_WARN_COLLECTION,
			"greenlets not shown: %.400s", err.msg);
		c->greenlets_unread = 1;
	}
	py_trio_scan_release(&tscan);
	py_waitables_scan_release(&wscan);
	py_semlocks_scan_release(&mscan);
	py_greenlet_scan_release(&gscan);
}

/* A heap walk that failed gives back what it read and its warnings
 * (and so does a whole reading, drop_reading()). */
static void drop_heap(struct collection *c, size_t nwarnings,
		      const size_t *counts)
{
	size_t i;

	py_async_release(&c->async);
	py_greenlets_release(&c->greenlets);
	memset(&c->async, 0, sizeof(c->async));
	memset(&c->greenlets, 0, sizeof(c->greenlets));
	for (i = nwarnings; i < c->warnings.n; i++)
		free(c->warnings.v[i].text);
	c->warnings.n = nwarnings;
	memcpy(c->warnings.count, counts, sizeof(c->warnings.count));
	c->heap_unread = 0;
	c->greenlets_unread = c->trio_unread = 0;
	/* (what pyproc decoded stays: the threads' frames refer to it) */
}

/* The heap's units and the wait-for graph over them and the threads. */
static void read_heap(struct collection *c, const struct py_stack_options *sopt)
{
	struct cs_err err;
	size_t nwarnings = c->warnings.n, counts[CS_WARN_NORIGINS];
	int again = retries_of(&c->opt);

	/* A --no-block walk that failed (the threads were read), most
	 * often because it met the running target's lists mid-change,
	 * walks again, up to --retries times: a dump or a watch sample
	 * without its tasks is a poor answer, and the threads read
	 * stand.  (A walk that fails for good, a list too long, fails
	 * each time: bounded by the same count.) */
	memcpy(counts, c->warnings.count, sizeof(counts));
	for (;;) {
		collect_heap(c, sopt);
		if (!c->heap_unread || again-- <= 0 || !live_alive(c->ms))
			break;
		drop_heap(c, nwarnings, counts);
	}
	cs_err_init(&err);
	if (py_waitgraph_build(&c->py, &c->snap, &c->async, &c->greenlets,
			       &c->graph, &err) < 0)
		cs_warn(&c->warnings, CS_WARN_COLLECTION,
			"what waits for what not shown: %.400s", err.msg);
	else  /* an await cycle some other choice may end is none */
		py_waitgraph_keep_await_cycles(&c->graph, &c->async);
	/* (a child's pid is the target's namespace's: ours only when
	 * the two are one) */
	if (c->is_live && (!c->ns_pid || c->ns_pid == c->pid))
		c->child_pipes = child_pipes_probe(c->pid, &c->graph,
						   &c->nchild_pipes);
}

/*
 * Reading a stopped target, and letting it run again as soon as possible.
 *
 * A small target (writable mappings up to CAPTURE_ALL_MAX, or up to
 * CAPTURE_DENSE_MAX when at least half of it is resident: its heap is
 * mostly Python's, which the readers walk anyway) is stopped, all its
 * writable memory copied, and resumed; the copy is decoded.
 *
 * A large one (a production heap of caches and buffers, thousands of
 * thread stacks) would make that copy long and coroscope as big as the
 * target, so the readers first run once over the running target, racily,
 * and what they read is thrown away: it only tells memsrc_plan_learn()
 * which pages the readers use.  Then each round stops the target, copies
 * the planned pages, resumes it, and decodes the copy.  A round whose
 * readers needed a page the plan missed (the target changed between the
 * first pass and the stop) read that page from the running target
 * (ms->missed): its result is thrown away too and the next round's plan
 * includes the page.  A target that keeps changing what the readers
 * need (new objects, threads, frames between every two stops) would miss
 * pages in every round: after CAPTURE_ROUNDS, it is read as before plans
 * existed, by copying every writable mapping (up to CAPTURE_MAX_BYTES)
 * or, beyond that, while it stays stopped.  A plan too large to copy is
 * read stopped at once.  So every result kept is what a stop showed,
 * whichever readers ran.
 */
#define CAPTURE_ALL_MAX ((uint64_t)64 << 20)
#define CAPTURE_DENSE_MAX ((uint64_t)256 << 20)
#define CAPTURE_ROUNDS 2

/* Bytes above a stopped thread's stack pointer planned for the native
 * unwinder, which the first pass (without registers) cannot learn; it
 * reads below it only within the 128-byte red zone. */
#define STACK_PLAN_BYTES (64u << 10)
#define RED_ZONE 128u

/*
 * Test aids (the man page's ENVIRONMENT): COROSCOPE_TEST_NO_CAPTURE=1
 * reads every target stopped, without a capture.  COROSCOPE_TEST_CAPTURE
 * =plan learns a plan whatever the target's size; =miss also drops what
 * the first pass learnt, so that the first round misses pages and a
 * second is needed; =fallback drops it and allows one round, so that the
 * target is read as without a plan after it (with
 * COROSCOPE_TEST_NO_CAPTURE=1 too: stopped).
 */
enum capture_mode { CAP_AUTO, CAP_NONE, CAP_PLAN, CAP_MISS, CAP_FALLBACK };

static int no_capture(void)
{
	const char *s = getenv("COROSCOPE_TEST_NO_CAPTURE");

	return s && !strcmp(s, "1");
}

static enum capture_mode capture_mode(void)
{
	const char *s = getenv("COROSCOPE_TEST_CAPTURE");

	if (s && !strcmp(s, "plan"))
		return CAP_PLAN;
	if (s && !strcmp(s, "miss"))
		return CAP_MISS;
	if (s && !strcmp(s, "fallback"))
		return CAP_FALLBACK;
	return no_capture() ? CAP_NONE : CAP_AUTO;
}

/* Everything the readers take from the target, and the warnings they
 * added: what a pass whose result is thrown away must give back. */
static void drop_reading(struct collection *c, size_t nwarnings,
			 const size_t *counts)
{
	native_stacks_release(&c->native);
	py_waitgraph_release(&c->graph);
	free(c->child_pipes);
	c->child_pipes = NULL;
	c->nchild_pipes = 0;
	free(c->left_pipes);
	c->left_pipes = NULL;
	c->nleft_pipes = 0;
	drop_heap(c, nwarnings, counts);
	py_snapshot_release(&c->snap);
	memset(&c->native, 0, sizeof(c->native));
	memset(&c->graph, 0, sizeof(c->graph));
	memset(&c->snap, 0, sizeof(c->snap));
	free(c->ns_tids);
	c->ns_tids = NULL;
	/* What was decoded came from memory that may have changed. */
	pyproc_forget_objects(&c->py);
}

/* Run every reader over the source as it now is. */
static int read_target(struct collection *c, const struct collect_options *opt,
		       const struct py_stack_options *sopt, struct cs_err *err)
{
	int ret;

	ret = py_snapshot_take(&c->py, sopt, &c->snap, err);
	if (ret)
		return ret;
	collect_map_thread_ids(c);
	/* From the registers and stacks copied at the stop: the target may
	 * already run on. */
	if (opt->native) {
		struct cs_err nerr;

		/* Like the tasks: native stacks that cannot be unwound cost
		 * only themselves, with a warning. */
		cs_err_init(&nerr);
		if (native_stacks_take(&c->native, c->ms, &nerr) < 0)
			cs_warn(&c->warnings, CS_WARN_COLLECTION,
				"native frames not shown: %.400s", nerr.msg);
	}
	read_heap(c, sopt);
	return 0;
}

/* A pass whose result is thrown away: its errors do not matter either. */
static void read_and_drop(struct collection *c,
			  const struct collect_options *opt,
			  const struct py_stack_options *sopt)
{
	size_t n = c->warnings.n, counts[CS_WARN_NORIGINS];
	struct cs_err lerr;

	memcpy(counts, c->warnings.count, sizeof(counts));
	cs_err_init(&lerr);
	read_target(c, opt, sopt, &lerr);
	drop_reading(c, n, counts);
}

/* The native unwinder's pages: the top of each stopped thread's stack. */
static void plan_stacks(struct collection *c)
{
	size_t i;

	for (i = 0; i < c->ms->nthreads; i++) {
		const struct cs_thread *t = &c->ms->threads[i];
		uint64_t sp = t->regs.r[CS_REG_RSP];

		if (t->has_regs && sp > RED_ZONE)
			memsrc_plan_add(c->ms, sp - RED_ZONE,
					STACK_PLAN_BYTES + RED_ZONE);
	}
}

/*
 * Stop, copy what the plan (or, with `what` MEMSRC_CAPTURE_ALL, every
 * writable mapping) holds and resume the target.  1 when it runs again
 * on a frozen source, 0 when the copy would be too large: then it stays
 * stopped (collect() resumes it once everything is read).
 */
static int stop_and_capture(struct collection *c, enum memsrc_capture_what what,
			    struct cs_err *err)
{
	int ret;

	live_install_signal_guard();
	ret = live_stop(c->ms, err);
	if (ret)
		return ret;
	if (what == MEMSRC_CAPTURE_PLAN)
		(void)memsrc_plan_trim_stacks(c->ms);
	if (what == MEMSRC_CAPTURE_PLAN && c->opt.native)
		plan_stacks(c);
	ret = memsrc_capture(c->ms, what, CAPTURE_MAX_BYTES, err);
	if (ret == 1)
		live_resume(c->ms);
	return ret;
}

/* How read_captured_all() reads: stopped, without a copy; or through a
 * copy of every writable mapping, for which it reserves the memory, or
 * for which collect() did already. */
enum copy_all { COPY_NONE, COPY_RESERVE, COPY_RESERVED };

/*
 * Read the target stopped, copying every writable mapping first when
 * allowed and small enough (then it runs on while the copy is decoded).
 * A copy that still misses pages (only a cache that overflowed can) is
 * thrown away and the target read stopped.
 */
static int read_captured_all(struct collection *c,
			     const struct collect_options *opt,
			     const struct py_stack_options *sopt,
			     enum copy_all copy, struct cs_err *err)
{
	size_t n = c->warnings.n, counts[CS_WARN_NORIGINS];
	int ret;

	memcpy(counts, c->warnings.count, sizeof(counts));
	if (copy != COPY_NONE) {
		/* Only costs time while the target still runs. */
		if (copy == COPY_RESERVE)
			memsrc_reserve_all(c->ms, 0);
		ret = stop_and_capture(c, MEMSRC_CAPTURE_ALL, err);
		if (ret < 0)
			return ret;
		ret = read_target(c, opt, sopt, err);
		if (!c->ms->missed)
			return ret;
		drop_reading(c, n, counts);
		cs_err_init(err);
	}
	/* The stop clears the cache: nothing comes from a capture. */
	ret = live_stop(c->ms, err);
	return ret ? ret : read_target(c, opt, sopt, err);
}

/* Is copying every writable mapping cheaper than a first pass to learn
 * what to copy? */
static int copy_it_all(const struct collection *c)
{
	uint64_t writable = memsrc_writable_bytes(c->ms);
	long anon_kb;

	if (writable <= CAPTURE_ALL_MAX)
		return 1;
	return writable <= CAPTURE_DENSE_MAX &&
	       procfs_status_field(c->ms->proc_id, 0, "RssAnon", &anon_kb) == 0 &&
	       anon_kb > 0 && (uint64_t)anon_kb * 1024 * 2 >= writable;
}

/* Will read_stopped() copy every writable mapping? */
static int will_copy_all(const struct collection *c)
{
	return capture_mode() == CAP_AUTO && copy_it_all(c);
}

/* The stopped target's picture, the target resumed as early as it can
 * (copy: COPY_NONE unless will_copy_all()). */
static int read_stopped(struct collection *c, const struct collect_options *opt,
			const struct py_stack_options *sopt, enum copy_all copy,
			struct cs_err *err)
{
	enum capture_mode mode = capture_mode();
	size_t n, counts[CS_WARN_NORIGINS];
	int round, rounds = mode == CAP_FALLBACK ? 1 : CAPTURE_ROUNDS, ret;

	if (mode == CAP_NONE)
		return read_captured_all(c, opt, sopt, COPY_NONE, err);
	if (copy != COPY_NONE)
		return read_captured_all(c, opt, sopt, copy, err);
	read_and_drop(c, opt, sopt);
	if (mode == CAP_MISS || mode == CAP_FALLBACK)
		memsrc_cache_clear(c->ms);
	memsrc_plan_learn(c->ms);
	/* Bounded: CAPTURE_ROUNDS at most, then as without a plan. */
	for (round = 0; round < rounds; round++) {
		n = c->warnings.n;
		memcpy(counts, c->warnings.count, sizeof(counts));
		ret = stop_and_capture(c, MEMSRC_CAPTURE_PLAN, err);
		if (ret <= 0)  /* an error, or stopped: read it so */
			return ret < 0 ? ret : read_target(c, opt, sopt, err);
		ret = read_target(c, opt, sopt, err);
		if (!c->ms->missed)
			return ret;
		drop_reading(c, n, counts);
		cs_err_init(err);
		memsrc_plan_learn(c->ms);
	}
	/* The target keeps changing what the readers need. */
	return read_captured_all(c, opt, sopt,
				 no_capture() ? COPY_NONE : COPY_RESERVE, err);
}

static int any_left_running(const struct memsrc *ms)
{
	size_t i;

	for (i = 0; i < ms->nthreads; i++)
		if (ms->threads[i].left_running)
			return 1;
	return 0;
}

static int collect(struct collection *c, const struct collect_options *opt,
		   double start, struct cs_err *err)
{
	struct py_stack_options sopt;
	enum copy_all copy = COPY_NONE;
	double read_at, stopped_at;
	int ret;

	c->opt = *opt;
	memset(&sopt, 0, sizeof(sopt));
	sopt.locals = opt->locals;
	sopt.max_frames = opt->max_frames;
	/* The copy's memory is faulted in on a thread of its own while the
	 * interpreter is looked for (attach/memsrc_reserve.c), if it looks
	 * like one: not for nothing when it is not. */
	if (c->is_live && !opt->no_block && will_copy_all(c)) {
		copy = COPY_RESERVE;
		if (pyproc_likely(c->ms)) {
			memsrc_reserve_all(c->ms, 1);
			copy = COPY_RESERVED;
		}
	}
	/* (after: the faults start sooner) */
	if (!opt->no_source)
		c->sources = source_cache_new(c->ms, c->is_live ? c->pid : 0,
					      &opt->core_user, opt->core_time);
	ret = pyproc_locate(&c->py, c->ms, err);
	c->located = 1;
	if (ret == 0)
		c->py.repr_max_items = (size_t)opt->max_items;
	read_at = cs_now_ms();
	if (ret == 0 && c->is_live && !opt->no_block)
		ret = read_stopped(c, opt, &sopt, copy, err);
	else if (ret == 0)
		ret = read_target(c, opt, &sopt, err);
	/* Whatever happened, the target runs again (a no-op when it does). */
	if (c->is_live) {
		stopped_at = live_stopped_at_ms(c->ms);
		if (stopped_at > 0)
			read_at = stopped_at;
		/* (its threads still stopped in their calls) */
		if (ret == 0)
			collect_deadlines(c);
		live_resume(c->ms);
		c->clock_s = procfs_same_clock(c->pid) ? read_at / 1e3 : 0;
		c->left_ran = live_left_ran(c->ms);
		c->any_left = any_left_running(c->ms);
		if (c->any_left)
			c->left_pipes = left_pipes_probe(c->pid, c->ms,
							 &c->nleft_pipes);
		c->pause_ms = live_paused_ms(c->ms);
		c->stop_ms = live_stop_ms(c->ms);
	}
	c->wall_ms = cs_now_ms() - start;
	return ret;
}

/* One collection of a live process; stopping every thread when
 * stop_every (attach/live.h), with the off-CPU figures of *carried when
 * it has some (an earlier try's, read before stops of ours). */
static int collect_live_once(struct collection *c, int pid,
			     const struct collect_options *opt, int stop_every,
			     struct offcpu *carried, struct cs_err *err)
{
	double start = cs_now_ms();
	int ret;

	memset(c, 0, sizeof(*c));
	c->pid = pid;
	c->asked_pid = pid;
	c->is_live = 1;
	/* The capture's memory will be faulted in on another thread
	 * (collect()): one started now is waiting by then.  (Without it, a
	 * job starts its own thread then.) */
	if (!opt->no_block && cs_cpus() >= 2)
		(void)cs_jobs_ready();
	ret = live_open(&c->ms, pid, err);
	if (ret < 0)
		return ret;
	/* The thread group: live_open() takes a thread id to mean it. */
	c->pid = c->ms->pid;
	c->ns_pid = c->ms->ns_pid;
	c->command = live_cmdline(c->ms->proc_id);
	live_stop_every_thread(c->ms, stop_every);
	if (carried->tid) {
		c->offcpu = *carried;
		memset(carried, 0, sizeof(*carried));
	} else if (opt->off_cpu) {  /* before the stop, which makes them run */
		offcpu_read(c->pid, &c->offcpu);
	}
	ret = collect(c, opt, start, err);
	if (ret < 0)
		explain_live(err, c->ms, c->pid);
	return ret;
}

/*
 * Did a --no-block read fail because the running target changed under
 * it (a pointer followed after its object was freed or moved)?  The
 * same read of a stopped target would not have failed.
 */
static int changed_under_us(const struct collection *c,
			    const struct collect_options *opt,
			    const struct cs_err *err)
{
	return opt->no_block && c->ms && err->code == CS_ERR_MEMORY &&
	       live_alive(c->ms);
}

/*
 * Collections tried when a thread left running (attach/live.h) ran while
 * the target was read, which may have torn what was read.  The last
 * one's picture is kept, with a warning, rather than stop the writer
 * (which would cut its write short); only when that one failed too is
 * one more made, stopping every thread.
 */
#define LEFT_RAN_TRIES 3

/* Figures of the tries before the last, added to the last one's. */
struct tries_spent {
	double pause_ms, stop_ms, wall_ms;
};

/* Try again after a thread left running ran (0: keep this one)?  Then
 * *stop_every says whether the next try stops every thread. */
static int again_left_ran(const struct collection *c, int ret,
			  int left_tries, int *stop_every)
{
	if (!c->left_ran || *stop_every || !c->ms || !live_alive(c->ms))
		return 0;
	if (left_tries < LEFT_RAN_TRIES)
		return 1;
	/* (a torn read that failed: an error is worse than the stop) */
	*stop_every = ret < 0;
	return *stop_every;
}

int collect_live(struct collection *c, int pid,
		 const struct collect_options *opt, struct cs_err *err)
{
	int retries = retries_of(opt);
	int attempt, left_tries = 0, stop_every = 0, ret;
	struct offcpu carried;
	struct tries_spent spent = { 0, 0, 0 };
	/* (before our stop: traced, it reads 't') */
	char was = procfs_state(pid, 0);

	memset(&carried, 0, sizeof(carried));
	/* Bounded: one more try per retry, or per thread left running that
	 * ran (LEFT_RAN_TRIES + 1 in all), each a whole new collection. */
	for (attempt = 0; ; attempt++) {
		ret = collect_live_once(c, pid, opt, stop_every, &carried, err);
		c->attempts = attempt + 1;
		left_tries += c->left_ran;
		if (again_left_ran(c, ret, left_tries, &stop_every)) {
			spent.pause_ms += c->pause_ms;
			spent.stop_ms += c->stop_ms;
			spent.wall_ms += c->wall_ms;
			carried = c->offcpu;
			memset(&c->offcpu, 0, sizeof(c->offcpu));
			collection_release(c);
			cs_err_init(err);
			continue;
		}
		if (ret == 0 && c->left_ran)
			cs_warn(&c->warnings, CS_WARN_COLLECTION,
				"a thread left running (asleep in a write a "
				"stop would cut short) ran while the target "
				"was read, in %d tries: what it changed may "
				"read torn", left_tries);
		if (ret == 0 || !changed_under_us(c, opt, err))
			break;
		if (attempt == retries) {
			cs_err_prefix(err, "the target changed while being "
				      "read (--no-block; %d tries); try again "
				      "or drop --no-block", attempt + 1);
			break;
		}
		collection_release(c);
		cs_err_init(err);
	}
	offcpu_release(&carried);  /* an error before it was taken */
	c->pause_ms += spent.pause_ms;
	c->stop_ms += spent.stop_ms;
	c->wall_ms += spent.wall_ms;
	c->job_stopped = ret == 0 && was == 'T';
	if (ret == 0 && c->asked_pid != c->pid)
		fprintf(stderr, "coroscope: note: %d is a thread of process %d; "
			"showing the process\n", c->asked_pid, c->pid);
	return ret;
}

int collect_source(struct collection *c, struct memsrc *ms,
		   const struct collect_options *opt, struct cs_err *err)
{
	struct cs_warnings kept = c->warnings;

	memset(c, 0, sizeof(*c));
	c->warnings = kept;
	c->ms = ms;
	c->pid = ms->pid;
	c->asked_pid = ms->pid;
	c->ns_pid = ms->ns_pid ? ms->ns_pid : ms->pid;
	c->attempts = 1;
	return collect(c, opt, cs_now_ms(), err);
}

void collection_init(struct collection *c)
{
	memset(c, 0, sizeof(*c));
	cs_warnings_init(&c->warnings);
}

void collection_done_reading(struct collection *c)
{
	if (!c->ms)
		return;
	if (c->is_live)
		memsrc_close(c->ms);
	memsrc_cache_give_up(c->ms);
}

/*
 * Freeing a 10k-task collection's hundred thousand blocks one by one
 * took 2 ms before an exit that gives the whole heap back at once (as
 * compilers do: clang's -disable-free).  Under AddressSanitizer,
 * everything is freed, so that its leak check still sees every
 * allocation come back.
 */
void collection_leave(struct collection *c)
{
#ifdef __SANITIZE_ADDRESS__
	collection_release(c);
#else
	memsrc_close(c->ms);
#endif
}

void collection_release(struct collection *c)
{
	source_cache_free(c->sources);
	native_stacks_release(&c->native);
	py_waitgraph_release(&c->graph);
	free(c->child_pipes);
	free(c->left_pipes);
	free(c->deadlines);
	py_async_release(&c->async);
	py_greenlets_release(&c->greenlets);
	py_snapshot_release(&c->snap);
	if (c->located)
		pyproc_release(&c->py);
	if (c->ms)
		memsrc_free(c->ms);
	free(c->command);
	free(c->ns_tids);
	offcpu_release(&c->offcpu);
	cs_warnings_release(&c->warnings);
	collection_init(c);
}

int collect_proc_pid(const struct collection *c)
{
	return c->ms && c->ms->proc_id > 0 ? c->ms->proc_id : c->pid;
}
