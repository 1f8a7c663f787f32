#include "cli/run_retries.h"

#include "cli/run_units.h"
#include "readers/primitives.h"
#include "common/banned.h"

int run_retry_holders_stuck(const struct collection *c,
			    const struct watch_tracker *t, size_t obj)
{
	size_t h[4], nh, k;
	struct run_seen sn;

	nh = py_waitgraph_holders(&c->graph, obj, h, 4);
	/* Bounded by h[]'s 4. */
	for (k = 0; k < nh && k < 4; k++) {
		run_node_seen(c, t, h[k], &sn);
		if (sn.state != RUN_SEEN_STUCK)
			return 0;
	}
	return nh > 0;
}

int run_retry_polls_unset_event(const struct py_waitgraph *g, size_t obj,
				const struct run_seen *sn)
{
	const struct py_prim *p;

	if (obj >= g->nnodes || g->nodes[obj].kind != WG_OBJECT)
		return 0;
	p = &g->prims[g->nodes[obj].index];
	return sn->state == RUN_SEEN_MOVING && p->kind == PY_PRIM_EVENT &&
	       p->set == 0 && sn->timed_again >= 2 &&
	       run_seen_same_for(sn) > 0;
}
