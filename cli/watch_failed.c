#include "cli/watch_failed.h"

#include "cli/escape.h"
#include "cli/run_failed.h"
#include "cli/watch_view.h"
#include "common/strbuf.h"
#include "common/banned.h"

void watch_failed_init(struct watch_failed *w)
{
	addrmap_init(&w->said);
	w->nsaid = 0;
	w->full = 0;
}

void watch_failed_release(struct watch_failed *w)
{
	addrmap_release(&w->said);
}

/* Said before (the same object with the same exception)?  Else note it
 * as said now; -1 when there is no room left. */
static int said_before(struct watch_failed *w, const struct py_failed_task *t)
{
	int found = 0;
	uint64_t exc = (uint64_t)(uintptr_t)addrmap_get(&w->said, t->addr,
							&found);

	if (found && exc == t->exception)
		return 1;
	if (!found && w->nsaid >= WATCH_FAILED_MAX)
		return -1;
	w->nsaid += !found;
	addrmap_put(&w->said, t->addr, (void *)(uintptr_t)t->exception);
	return 0;
}

void watch_failed_events(struct watch_failed *w, const struct collection *c,
			 void (*emit)(const char *line, void *arg), void *arg)
{
	const struct py_async *a = &c->async;
	struct strbuf sb, raw;
	size_t i;
	int r;

	if (a->copied_at_fork)
		return;
	strbuf_init(&sb);
	strbuf_init(&raw);
	/* Bounded by the failures a dump keeps (PY_MAX_FAILED_TASKS). */
	for (i = 0; i < a->nfailed; i++) {
		const struct py_failed_task *t = &a->failed[i];

		if (t->retrieved || t->gathered_by || w->full ||
		    (r = said_before(w, t)) > 0)
			continue;
		strbuf_reset(&sb);
		watch_add_clock(&sb);
		if (r < 0) {
			w->full = 1;
			strbuf_addf(&sb, "failed (past %d failures said, the "
				    "others are not)", WATCH_FAILED_MAX);
			emit(sb.buf, arg);
			continue;
		}
		/* In run's words, which leave the line's escaping to its
		 * writer (a repr's quotes are Python's own). */
		strbuf_reset(&raw);
		run_failed_subject(&raw, t);
		strbuf_addstr(&raw, ": ");
		strbuf_addstr(&raw, t->exc_repr);
		strbuf_addstr(&raw, t->job == PY_FAILED_POOL_JOB ?
			      ", no get() raised it; " : t->job ?
			      ", no result() raised it; " :
			      ", nothing retrieved it; ");
		run_failed_sites(&raw, t);
		run_failed_worker_sites(&raw, t, "; first raised at ");
		/* (a group's first exception: where the work failed) */
		if (t->nleaves) {
			strbuf_addstr(&raw, "; in the group: ");
			run_failed_leaf(&raw, &t->leaves[0]);
		}
		strbuf_addstr(&sb, "failed ");
		esc_add(&sb, raw.buf, ESC_TEXT, 0);
		emit(sb.buf, arg);
	}
	strbuf_release(&raw);
	strbuf_release(&sb);
}
