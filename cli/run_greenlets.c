/*
 * The likely causes `coroscope run` reads off greenlets: those parked
 * outside gevent.sleep() whose wait the graph does not explain (a
 * gevent primitive's waiters and holders are its causes), alike ones
 * counted together.  (trio's stuck
 * tasks are cli/run_stuck.c's, with asyncio's.)
 */
#include "cli/run_causes.h"
#include "cli/escape.h"

#include <stdlib.h>
#include <string.h>

#include "cli/run_causes_internal.h"
#include "cli/run_fds.h"
#include "cli/run_places.h"
#include "cli/run_seen.h"
#include "common/strbuf.h"
#include "readers/code.h"
#include "readers/greenlets.h"
#include "readers/tasks.h"
#include "readers/waitgraph.h"
#include "common/banned.h"

#define MAX_GREENLET_CAUSES 5
#define GROUP_NAMES 5

/* The first greenlet in state `state` that g waits for to end (join(),
 * joinall(), get()), as the wait-for graph says; NULL if none. */
static const struct py_greenlet *awaited(const struct run_summary *s,
					 const struct py_greenlets *gs,
					 const struct py_greenlet *g,
					 enum py_greenlet_state state)
{
	const struct py_waitgraph *wg = s->graph;
	const struct py_greenlet *to;
	const size_t *out;
	size_t k, m;
	long node;

	node = wg ? py_waitgraph_node_of(wg, WG_GREENLET,
					 (size_t)(g - gs->v)) : -1;
	if (node < 0)
		return NULL;
	out = py_waitgraph_out(wg, (size_t)node, &m);
	for (k = 0; k < m; k++) {
		if (wg->edges[out[k]].kind != WG_WAITS_FOR ||
		    wg->nodes[wg->edges[out[k]].to].kind != WG_GREENLET)
			continue;
		to = &gs->v[wg->nodes[wg->edges[out[k]].to].index];
		if (to->state == state)
			return to;
	}
	return NULL;
}

/* Does g wait for another, parked, greenlet?  Then it is not at the
 * bottom of the waits, as a task awaiting a task is not
 * (cli/run_stuck.c).  One waiting for a greenlet not started is: its
 * cause says so. */
static int waits_for_greenlet(const struct run_summary *s,
			      const struct py_greenlets *gs,
			      const struct py_greenlet *g)
{
	return awaited(s, gs, g, PY_GREENLET_SUSPENDED) != NULL;
}

/* A member of a group: gevent's name, else the function it runs, else
 * its address. */
static void add_member(struct strbuf *sb, const struct py_greenlet *h)
{
	if (h->name) {
		strbuf_addch(sb, '\'');
		esc_add_name_raw(sb, h->name);
		strbuf_addch(sb, '\'');
	} else if (h->function) {
		esc_add_name_raw(sb, h->function);
		strbuf_addstr(sb, "()");
	}
	else
		strbuf_addf(sb, "0x%llx", (unsigned long long)h->addr);
}

/* A greenlet worth naming: parked, not a hub, not in gevent.sleep(),
 * not in a gevent server's serve_forever() (its rest, an idle cause of
 * the graph's), not one the wait-for graph's causes name already (what
 * it waits on and who holds that, s->explained). */
static int greenlet_parked(const struct run_summary *s,
			   const struct py_greenlets *gs,
			   const struct py_greenlet *g)
{
	const struct py_code *top;
	int found = 0;

	if (g->state != PY_GREENLET_SUSPENDED || g->is_main || !g->nframes ||
	    py_greenlet_is_hub(g))
		return 0;
	if (s->explained)
		addrmap_get(s->explained, g->addr, &found);
	if (found || waits_for_greenlet(s, gs, g))
		return 0;
	top = g->frames[0].code;
	return !py_code_is(top, "/gevent/hub.py", "sleep") &&
	       !py_code_is(top, "/gevent/baseserver.py", "serve_forever");
}

/* The program's own innermost frame of greenlet g (gevent's socket and
 * lock frames are further in), or NULL. */
static const struct py_frame *own_frame(const struct py_greenlet *g)
{
	return run_own_frame(g->frames, g->nframes);
}

/* Are greenlets g (own: own_frame(g)) and h parked alike: at the same
 * line of the same code, from the same line of the program's own? */
static int parked_alike(const struct py_greenlet *g,
			const struct py_frame *own, const struct py_greenlet *h)
{
	const struct py_frame *b;

	if (h->frames[0].code != g->frames[0].code ||
	    h->frames[0].line != g->frames[0].line)
		return 0;
	b = own_frame(h);
	return own == b ||
	       (own && b && own->code == b->code && own->line == b->line);
}

/* Is greenlet g in a gevent socket's accept(), waiting for a client: a
 * server's rest, idle as a thread's accept() is (cli/run_reads.c)? */
static int accepts(const struct py_greenlet *g)
{
	return g->nframes && g->io_wait == PY_IO_READ &&
	       py_code_is(g->frames[0].code, "/gevent/_socket3.py", "accept");
}

/* How long greenlet g has polled at one place: seen moving (its locals
 * changing), its frames at the same lines at every sample; 0 when
 * not. */
static double polls_for(const struct watch_tracker *tr,
			const struct py_greenlet *g)
{
	const struct watch_item *it = tr ?
		watch_find(tr, WATCH_GREENLET, g->addr) : NULL;
	struct run_seen seen;

	run_seen_item(tr, it, &seen);
	if (seen.state != RUN_SEEN_MOVING || !it->places ||
	    it->places_since > it->first_seen)
		return 0;
	return it->last_seen - it->first_seen;
}

/* One cause for gs->v[first] and the greenlets parked where it is. */
static void add_greenlet_group(struct run_summary *s, int pid,
			       const struct py_greenlets *gs, size_t first,
			       const struct watch_tracker *tr, char *done)
{
	const struct py_greenlet *g = &gs->v[first], *h;
	const struct py_frame *own;
	size_t j, count = 0, named = 0;
	struct run_cause *cause;
	struct strbuf sb, names;
	int idle = accepts(g);
	double polls;

	strbuf_init(&sb);
	strbuf_init(&names);
	/* alike: parked at the same line of the same code, from the same
	 * line of the program's own */
	own = own_frame(g);
	for (j = first; j < gs->n; j++) {
		h = &gs->v[j];

		if (done[j] || !greenlet_parked(s, gs, h) ||
		    !parked_alike(g, own, h))
			continue;
		done[j] = 1;
		count++;
		if (h->name && named++ < GROUP_NAMES) {
			strbuf_addstr(&names, named > 1 ? ", " : "");
			add_member(&names, h);
		}
	}
	if (idle)
		strbuf_addstr(&sb, "idle: ");
	if (count == 1)
		strbuf_addstr(&sb, "greenlet");
	else
		strbuf_addf(&sb, "%zu greenlets", count);
	/* the named ones, and how many are not: two greenlets of which
	 * one is named are not "2 greenlets 'alpha'" */
	if (names.len)
		strbuf_addf(&sb, " %s%s", names.buf,
			    named > GROUP_NAMES ? ", ..." : "");
	if (names.len && named < count)
		strbuf_addf(&sb, " and %zu without a name", count - named);
	/* (a lone one, woken at the same line all along: a wait with a
	 * timeout, retried, `while not ev.wait(0.3)`) */
	polls = count == 1 ? polls_for(tr, g) : 0;
	/* the program's own line first, the library's it is parked in
	 * after, as a task's */
	strbuf_addstr(&sb, polls > 0 ? " polls at " : " parked at ");
	run_add_frame_place(&sb, own ? own : &g->frames[0]);
	if (own && own != &g->frames[0]) {
		strbuf_addstr(&sb, " (innermost ");
		run_add_frame_place(&sb, &g->frames[0]);
		strbuf_addch(&sb, ')');
	}
	if (polls > 0)
		strbuf_addf(&sb, " (polling: it woke and waited again at "
			    "that line at every sample, %.1fs)", polls);
	/* (a lone one's socket: gevent's socket method it is in) */
	if (count == 1 && idle)
		strbuf_addf(&sb, ", waits for a connection on fd %lld",
			    (long long)g->io_fd);
	else if (count == 1 && g->io_wait != PY_IO_NONE)
		strbuf_addf(&sb, ", to %s fd %lld",
			    g->io_wait == PY_IO_READ ? "read" : "write",
			    (long long)g->io_fd);
	cause = run_cause_add(s, idle ? RUN_CAUSE_IDLE : RUN_CAUSE_WAIT, pid,
			      &sb);
	if (count == 1 && g->io_wait != PY_IO_NONE)
		(void)run_fds_detail(cause, s, pid, g->io_fd, &sb);
	if ((h = awaited(s, gs, g, PY_GREENLET_NOT_STARTED)) != NULL) {
		strbuf_addstr(&sb, "waits for greenlet ");
		add_member(&sb, h);
		strbuf_addstr(&sb, ", not started");
		run_cause_detail(cause, &sb);
	}
	if (g->function) {
		strbuf_addstr(&sb, "spawned to run ");
		esc_add_name_raw(&sb, g->function);
		strbuf_addstr(&sb, "()");
		run_cause_detail(cause, &sb);
	}
	strbuf_release(&names);
	strbuf_release(&sb);
}

/* Thread tid's gevent hub, the greenlet running on it, and how many
 * others it has that wait to run (not started, or suspended). */
static void thread_greenlets(const struct py_greenlets *gs, int tid,
			     const struct py_greenlet **hub,
			     const struct py_greenlet **running,
			     size_t *others)
{
	size_t k;

	*hub = *running = NULL;
	*others = 0;
	/* Bounded by the greenlets read. */
	for (k = 0; k < gs->n; k++) {
		const struct py_greenlet *g = &gs->v[k];

		if (g->tid != tid)
			continue;
		if (py_greenlet_is_hub(g))
			*hub = g;
		else if (g->state == PY_GREENLET_RUNNING)
			*running = g;
		else if (g->state == PY_GREENLET_SUSPENDED ||
			 g->state == PY_GREENLET_NOT_STARTED)
			(*others)++;
	}
}

/*
 * gevent's hub runs the other greenlets of its thread only when the one
 * running switches back to it (a patched blocking call, gevent.sleep(),
 * a gevent lock).  A thread stuck or busy in another greenlet -- an
 * unpatched time.sleep(), a C call gevent cannot wait for, a loop that
 * never yields -- stops every other greenlet of it: asyncio's blocked
 * loop, in gevent's words.
 */
void run_causes_blocked_hubs(struct run_summary *s, int pid,
			     const struct blocked *b, size_t n)
{
	const struct py_greenlets *gs = s->greenlets;
	const struct py_greenlet *hub, *running;
	struct strbuf sb;
	size_t i, others;

	if (!gs || !gs->n)
		return;
	strbuf_init(&sb);
	for (i = 0; i < n; i++) {
		const struct py_thread *t = b[i].t;

		if ((b[i].seen.state != RUN_SEEN_STUCK &&
		     b[i].seen.state != RUN_SEEN_BUSY) || t->tid <= 0 ||
		    !t->nframes)
			continue;
		thread_greenlets(gs, t->tid, &hub, &running, &others);
		if (!hub || hub->state != PY_GREENLET_SUSPENDED || !running ||
		    !others)
			continue;
		strbuf_addstr(&sb, "gevent hub blocked: ");
		run_add_thread_label(&sb, t);
		strbuf_addstr(&sb, " runs ");
		if (running->is_main) {
			strbuf_addstr(&sb, "its main greenlet");
		} else {
			strbuf_addstr(&sb, "greenlet ");
			add_member(&sb, running);
		}
		strbuf_addstr(&sb, " and has not gone back to its hub");
		blocked_add_seen(&sb, &b[i].seen);
		strbuf_addf(&sb, "; %zu other greenlet%s of the thread cannot "
			    "run", others, others == 1 ? "" : "s");
		run_causes_loop_blocked(s, pid, &b[i], &sb);
	}
	strbuf_release(&sb);
}

void run_summarize_greenlets(struct run_summary *s, int pid,
			     const struct py_greenlets *gs,
			     const struct watch_tracker *t)
{
	char *done = xcalloc(gs->n ? gs->n : 1, 1);
	size_t i, ncauses = 0;
	int pass;

	/* What was spawned to run a function (gevent) before greenlets that
	 * were only switched away from. */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < gs->n && ncauses < MAX_GREENLET_CAUSES; i++) {
			if (done[i] || !greenlet_parked(s, gs, &gs->v[i]) ||
			    (!pass && !gs->v[i].function))
				continue;
			add_greenlet_group(s, pid, gs, i, t, done);
			ncauses++;
		}
	}
	free(done);
}
