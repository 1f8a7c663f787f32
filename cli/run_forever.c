#include "cli/run_forever.h"

#include <string.h>

#include "cli/report.h"
#include "common/strbuf.h"
#include "readers/waitgraph.h"
#include "common/banned.h"

/* Does the code of source (up to a comment) await the wait() of an
 * Event made in the same expression: "await asyncio.Event().wait()",
 * "await Event().wait()"?  Nothing but that expression ever held the
 * Event, so nothing can set it. */
static int awaits_a_new_event(const char *source)
{
	static const char call[] = "Event().wait()";
	const char *hash = strchr(source, '#'), *at = source, *p;
	size_t n = hash ? (size_t)(hash - source) : strlen(source);

	while ((at = memmem(at, n - (size_t)(at - source), call,
			    sizeof(call) - 1)) != NULL) {
		/* back over the module path, "asyncio." */
		for (p = at; p > source && (p[-1] == '.' || p[-1] == '_' ||
					    (p[-1] >= 'a' && p[-1] <= 'z') ||
					    (p[-1] >= 'A' && p[-1] <= 'Z') ||
					    (p[-1] >= '0' && p[-1] <= '9'));
		     p--)
			;
		/* then blanks, and "await" as a word of its own */
		if (p > source && (p[-1] == ' ' || p[-1] == '\t')) {
			while (p > source && (p[-1] == ' ' || p[-1] == '\t'))
				p--;
			if (p - source >= 5 && !memcmp(p - 5, "await", 5) &&
			    (p - source == 5 || p[-6] == ' ' || p[-6] == '(' ||
			     p[-6] == '\t' || p[-6] == '='))
				return 1;
		}
		at += sizeof(call) - 1;
	}
	return 0;
}

int run_forever_by_design(const struct collection *c, size_t obj,
			  const size_t *w, size_t nw)
{
	const struct py_waitgraph *g = &c->graph;
	const struct wg_node *waiter;
	const struct py_prim *p;
	const char *source;
	int cut = 0;

	if (obj >= g->nnodes || g->nodes[obj].kind != WG_OBJECT || nw != 1 ||
	    w[0] >= g->nnodes)
		return 0;
	p = &g->prims[g->nodes[obj].index];
	waiter = &g->nodes[w[0]];
	if (p->kind != PY_PRIM_EVENT || p->set != 0 ||
	    (p->family != PY_PRIM_ASYNCIO && p->family != PY_PRIM_ANYIO) ||
	    waiter->kind != WG_TASK || !waiter->blame || !c->sources)
		return 0;
	source = report_source_line(c, waiter->blame, &cut);
	return source && !cut && awaits_a_new_event(source);
}

void run_forever_detail(struct run_cause *cause, struct strbuf *sb)
{
	strbuf_addstr(sb, "its Event is made at that line and waited on "
			  "there: nothing else can set it (a way to run for "
			  "ever)");
	run_cause_detail(cause, sb);
}
