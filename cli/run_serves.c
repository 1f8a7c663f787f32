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

#include "cli/run_fds.h"
#include "cli/run_places.h"
#include "cli/run_probe.h"
#include "cli/run_seen.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "readers/code.h"
#include "readers/dicts.h"
#include "readers/sockets.h"
#include "common/banned.h"

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
}
