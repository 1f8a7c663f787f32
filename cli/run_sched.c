/*
 * The likely causes `coroscope run` reads off greenlets and trio tasks:
 * trio tasks at the bottom of the nursery tree parked on something other
 * than a timer (ranked by how many tasks wait on them through their
 * nurseries), and greenlets parked outside gevent.sleep(), alike ones
 * counted together.
 */
#include "cli/run_causes.h"

#include <stdlib.h>
#include <string.h>

#include "common/addrmap.h"
#include "common/strbuf.h"
#include "readers/greenlets.h"
#include "common/banned.h"

#define MAX_SCHED_CAUSES 3
#define MAX_GREENLET_CAUSES 5
#define GROUP_NAMES 5

/* Is any coroutine of the chain waiting on a clock (trio.sleep*)? */
static int trio_timed(const struct py_async *a, const struct py_task *t)
{
	size_t k;

	for (k = 0; k < t->nstack; k++) {
		const struct py_gen *g = &a->gens[t->stack[k]];

		if (g->code && !strcmp(g->code->name, "sleep_until") &&
		    strstr(g->code->filename, "/trio/"))
			return 1;
	}
	return 0;
}

/* The program's own innermost frame (outside trio), and what of trio's
 * it is parked in. */
static const struct py_gen *own_frame(const struct py_async *a,
				      const struct py_task *t,
				      const struct py_gen **in)
{
	size_t k;

	*in = NULL;
	for (k = 0; k < t->nstack; k++) {
		const struct py_gen *g = &a->gens[t->stack[k]];

		if (!g->has_frame || !g->code)
			continue;
		if (!strstr(g->code->filename, "/trio/") &&
		    !strstr(g->code->filename, "/anyio/"))
			return g;
		*in = g;   /* the outermost of trio's so far */
	}
	return NULL;
}

/* Tasks waiting on t through their nurseries (one parent each). */
static size_t trio_behind(const struct py_async *a, const struct py_task *t)
{
	size_t n = 0;

	while (t && t->nawaited_by && n < a->ntasks) {
		t = py_async_task(a, t->awaited_by[0]);
		n += t != NULL;
	}
	return n;
}

static void summarize_trio(struct run_summary *s, int pid,
			   const struct py_async *a)
{
	const struct py_task *best[MAX_SCHED_CAUSES];
	size_t behind[MAX_SCHED_CAUSES], nbest = 0, i, k;
	struct addrmap parents;
	struct strbuf sb;

	run_tasks_awaiting(a, &parents);
	for (i = 0; i < a->ntasks; i++) {
		const struct py_task *t = &a->tasks[i];
		int found;
		size_t n;

		addrmap_get(&parents, t->addr, &found);
		/* system tasks are named "<...>" */
		if (!t->framework || t->running || found ||
		    (t->name && t->name[0] == '<') || trio_timed(a, t))
			continue;
		n = trio_behind(a, t);
		for (k = nbest; k > 0 && behind[k - 1] < n; k--) {
			if (k < MAX_SCHED_CAUSES) {
				best[k] = best[k - 1];
				behind[k] = behind[k - 1];
			}
		}
		if (k < MAX_SCHED_CAUSES) {
			best[k] = t;
			behind[k] = n;
			if (nbest < MAX_SCHED_CAUSES)
				nbest++;
		}
	}
	addrmap_release(&parents);
	strbuf_init(&sb);
	for (i = 0; i < nbest; i++) {
		const struct py_gen *in, *own = own_frame(a, best[i], &in);
		struct run_cause *cause;

		strbuf_addf(&sb, "stuck trio task: %s", best[i]->name);
		if (in)
			strbuf_addf(&sb, " parked in %s", in->qualname);
		if (behind[i])
			strbuf_addf(&sb, ", blocking %zu other task%s", behind[i],
				    behind[i] == 1 ? "" : "s");
		cause = run_cause_add(s, RUN_CAUSE_STUCK_TASK, pid, &sb);
		if (own) {
			strbuf_addf(&sb, "task %s at ", best[i]->name);
			run_add_frame_place(&sb, &own->frame);
			run_cause_detail(cause, &sb);
		}
	}
	strbuf_release(&sb);
}

/* A greenlet worth naming: parked, not a hub, not in gevent.sleep(). */
static int greenlet_parked(const struct py_greenlet *g)
{
	const struct py_code *top;

	if (g->state != PY_GREENLET_SUSPENDED || g->is_main || !g->nframes ||
	    (g->type_name && !strcmp(g->type_name, "Hub")))
		return 0;
	top = g->frames[0].code;
	return !(!strcmp(top->name, "sleep") &&
		 strstr(top->filename, "gevent/hub.py"));
}

/* One cause for gs->v[first] and the greenlets parked where it is. */
static void add_greenlet_group(struct run_summary *s, int pid,
			       const struct py_greenlets *gs, size_t first,
			       char *done)
{
	const struct py_greenlet *g = &gs->v[first];
	size_t j, count = 0, named = 0;
	struct run_cause *cause;
	struct strbuf sb, names;

	strbuf_init(&sb);
	strbuf_init(&names);
	/* alike: parked at the same line of the same code */
	for (j = first; j < gs->n; j++) {
		const struct py_greenlet *h = &gs->v[j];

		if (done[j] || !greenlet_parked(h) ||
		    h->frames[0].code != g->frames[0].code ||
		    h->frames[0].line != g->frames[0].line)
			continue;
		done[j] = 1;
		count++;
		if (h->name && named++ < GROUP_NAMES)
			strbuf_addf(&names, "%s%s", named > 1 ? ", " : "",
				    h->name);
	}
	if (count == 1)
		strbuf_addstr(&sb, "greenlet");
	else
		strbuf_addf(&sb, "%zu greenlets", count);
	if (names.len)
		strbuf_addf(&sb, " %s%s", names.buf,
			    named > GROUP_NAMES ? ", ..." : "");
	strbuf_addstr(&sb, " parked at ");
	run_add_frame_place(&sb, &g->frames[0]);
	cause = run_cause_add(s, RUN_CAUSE_WAIT, pid, &sb);
	if (g->function) {
		strbuf_addf(&sb, "spawned to run %s()", g->function);
		run_cause_detail(cause, &sb);
	}
	strbuf_release(&names);
	strbuf_release(&sb);
}

static void summarize_greenlets(struct run_summary *s, int pid,
				const struct py_greenlets *gs)
{
	char *done = xcalloc(gs->n ? gs->n : 1, 1);
	size_t i, ncauses = 0;
	int pass;

	/* What was spawned to run a function (gevent) before greenlets that
	 * were only switched away from. */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < gs->n && ncauses < MAX_GREENLET_CAUSES; i++) {
			if (done[i] || !greenlet_parked(&gs->v[i]) ||
			    (!pass && !gs->v[i].function))
				continue;
			add_greenlet_group(s, pid, gs, i, done);
			ncauses++;
		}
	}
	free(done);
}

void run_summarize_sched(struct run_summary *s, int pid,
			 const struct py_async *a,
			 const struct py_greenlets *greenlets)
{
	summarize_trio(s, pid, a);
	summarize_greenlets(s, pid, greenlets);
}
