/*
 * A thread serving forever: socketserver's serve_forever() (http.server,
 * wsgiref, xmlrpc.server, werkzeug's development server, a test's
 * fixture server), waiting for its next request.  A test that started
 * one and never shut it down hangs its run; the thread polls every half
 * second, so the samples see it run, and nothing the wait-for graph
 * knows waits: before, "no likely cause stands out".  An idle cause,
 * ranked last, names it and the socket it listens on (the server's
 * `socket`, its fd read from the C socket: readers/sockets.h): 'idle:
 * thread 12 "MainThread" serves forever (socketserver), listening on
 * fd 3, a TCP listening socket 127.0.0.1:8000', then where.  Left out:
 * a thread the graph's causes name (a join of it ends there), one the
 * samples saw busy.
 */
#include "cli/run_serves.h"

#include "cli/escape.h"
#include "cli/run_fds.h"
#include "cli/run_places.h"
#include "cli/run_probe.h"
#include "cli/run_seen.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "readers/code.h"
#include "readers/dicts.h"
#include "readers/objects.h"
#include "readers/usercode.h"
#include "readers/sockets.h"
#include "common/banned.h"

static void serving_tasks(struct run_summary *s, struct collection *c,
			  const struct watch_tracker *tr);

/* The frame of th in socketserver's serve_forever() when it waits for a
 * request there (only the selector's frames inside it: one stuck in its
 * handler is that handler's, a read's or a sleep's cause), or NULL. */
static const struct py_frame *serving(const struct py_thread *th)
{
	static const char *const inner[] = { "/selectors.py" };

	return run_frame_waiting_in(th->frames, th->nframes,
				    "/socketserver.py", "serve_forever", inner,
				    1);
}

void run_summarize_serves(struct run_summary *s, struct collection *c,
			  const struct watch_tracker *t)
{
	int pid = collect_proc_pid(c);
	struct strbuf sb;
	size_t i;

	if (!c->is_live)
		return;
	strbuf_init(&sb);
	/* Bounded by the snapshot's threads. */
	for (i = 0; i < c->snap.nthreads; i++) {
		const struct py_thread *th = &c->snap.threads[i];
		const struct py_frame *at = serving(th);
		struct run_seen seen;
		uint64_t server;
		int64_t fd;

		run_seen_thread(t, th, &seen);
		/* (a chain of waits the graph's causes end at it: a join
		 * of it, an idle cause of theirs, names it already) */
		if (!at || seen.state == RUN_SEEN_BUSY ||
		    run_summary_explains(s, th) || run_probe_ends_waits(c, i))
			continue;
		strbuf_addstr(&sb, "idle: ");
		run_add_thread_label(&sb, th);
		strbuf_addstr(&sb, " serves forever (socketserver)");
		/* (read from the copy the dump made) */
		server = py_frame_local(&c->py, at, "self");
		fd = server ? py_socket_fd(&c->py,
					   pyobj_own_or_0(&c->py, server,
							  "socket"), NULL) : -1;
		if (fd >= 0 && fd <= 0x7fffffff) {
			strbuf_addf(&sb, ", listening on fd %lld",
				    (long long)fd);
			(void)run_fds_describe(&sb, ", ", s, c->pid, pid,
					       (int)fd);
		}
		(void)run_probe_cause_at_own(s, RUN_CAUSE_IDLE, c, th, &sb);
	}
	strbuf_release(&sb);
	serving_tasks(s, c, t);
}

/* Server sockets named at most. */
#define SERVER_FDS 4

/* ", listening on fd 6, a TCP listening socket 127.0.0.1:8000": the
 * asyncio Server's sockets (3.8 on, TransportSocket wrappers of them),
 * read from c's copy. */
static void add_server_sockets(struct strbuf *sb, struct run_summary *s,
			       struct collection *c, uint64_t server)
{
	uint64_t items[SERVER_FDS], sock;
	size_t n = 0, i, named = 0;
	int64_t fd;

	if (!server || pyseq_items(&c->py, pyobj_own_or_0(&c->py, server,
							   "_sockets"),
				   items, SERVER_FDS, &n, NULL) < 0)
		return;
	for (i = 0; i < n && i < SERVER_FDS; i++) {
		sock = pyobj_own_or_0(&c->py, items[i], "_sock");
		fd = py_socket_fd(&c->py, sock ? sock : items[i], NULL);
		if (fd < 0 || fd > 0x7fffffff)
			continue;
		strbuf_addf(sb, "%s fd %lld", named++ ? "; on" :
			    ", listening on", (long long)fd);
		(void)run_fds_describe(sb, ", ", s, c->pid,
				       collect_proc_pid(c), (int)fd);
	}
	if (n > SERVER_FDS && named)
		strbuf_addf(sb, "; and %zu more sockets", n - SERVER_FDS);
}

/*
 * Tasks in asyncio's Server.serve_forever() (asyncio.start_server()'s
 * server, served until cancelled): parked on a future nothing sets by
 * design, no stuck task (run_stuck.c leaves them out).  An idle cause
 * names the task, the sockets, and the program's line.
 */
/* The program's own coroutine on task t's chain past its innermost,
 * or NULL. */
static const struct py_gen *own_awaiting(const struct py_async *a,
					 const struct py_task *t)
{
	const struct py_gen *own;
	size_t k;

	for (k = 1; k < t->nstack; k++) {
		own = py_task_gen(a, t, k);
		if (own && own->has_frame && own->frame.code &&
		    py_is_user_file(own->frame.code->filename, NULL))
			return own;
	}
	return NULL;
}

/* Where the program serves: its coroutine awaiting serve_forever() in
 * task t, else the task awaiting t's (a serve_forever() task of its
 * own, gathered or waited for). */
static void add_serving_place(struct collection *c, const struct py_task *t,
			      struct run_cause *cause)
{
	const struct py_async *a = &c->async;
	const struct py_gen *own = own_awaiting(a, t);
	const struct py_task *by = t->nawaited_by ?
				   py_async_task(a, t->awaited_by[0]) : NULL;
	struct strbuf sb;

	strbuf_init(&sb);
	if (own) {
		strbuf_addstr(&sb, "at ");
		run_probe_add_line(&sb, c, &own->frame);
	} else if (by) {
		strbuf_addstr(&sb, "awaited by ");
		run_add_task_place(&sb, a, by);
	}
	if (sb.len)
		run_cause_detail(cause, &sb);
	strbuf_release(&sb);
}

/* Was the thread running task t's loop seen busy (a server at work)? */
static int loop_busy(const struct collection *c, const struct py_task *t,
		     const struct watch_tracker *tr)
{
	struct run_seen seen;
	size_t i;

	for (i = 0; t->tid && i < c->snap.nthreads; i++) {
		if (c->snap.threads[i].tid != t->tid)
			continue;
		run_seen_thread(tr, &c->snap.threads[i], &seen);
		return seen.state == RUN_SEEN_BUSY;
	}
	return 0;
}

static void serving_tasks(struct run_summary *s, struct collection *c,
			  const struct watch_tracker *tr)
{
	const struct py_async *a = &c->async;
	struct run_cause *cause;
	struct strbuf sb;
	size_t i;

	if (a->copied_at_fork)
		return;
	strbuf_init(&sb);
	/* Bounded by the tasks read. */
	for (i = 0; i < a->ntasks; i++) {
		const struct py_task *t = &a->tasks[i];
		const struct py_gen *g = run_task_serving_forever(a, t);
		int found = 0;

		if (s->explained)
			addrmap_get(s->explained, t->addr, &found);
		/* (a server at work is no idle one) */
		if (!g || found || loop_busy(c, t, tr))
			continue;
		strbuf_addstr(&sb, "idle: task '");
		esc_add_name_raw(&sb, t->name);
		strbuf_addstr(&sb, "' serves forever (asyncio)");
		add_server_sockets(&sb, s, c,
				   py_frame_local(&c->py, &g->frame, "self"));
		cause = run_cause_add(s, RUN_CAUSE_IDLE, c->pid, &sb);
		add_serving_place(c, t, cause);
	}
	strbuf_release(&sb);
}
