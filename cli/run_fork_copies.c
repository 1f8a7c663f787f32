/*
 * Locks a forked child inherited held (cli/run_fork_copies.h): the
 * parent's copy, at the same address, names who held it.
 */
#include "cli/run_fork_copies.h"

#include "cli/report_graph.h"
#include "cli/run_causes_internal.h"
#include "common/procfs_image.h"
#include "common/banned.h"

/*
 * The parent's node for the object at p's address, of p's kind, with
 * exactly one holder, a thread (whose ident is `ident`, if not 0): the
 * copy the parent holds when the child was forked with it.
 */
static long parent_copy_held(const struct collection *pc,
			     const struct py_prim *p, uint64_t ident,
			     size_t *holder)
{
	const struct py_waitgraph *pg = &pc->graph;
	size_t i, h;

	for (i = 0; i < pg->nnodes; i++) {
		const struct py_prim *q;

		if (pg->nodes[i].kind != WG_OBJECT)
			continue;
		q = &pg->prims[pg->nodes[i].index];
		if (q->addr != p->addr || q->kind != p->kind ||
		    py_waitgraph_holders(pg, i, &h, 1) != 1 ||
		    pg->nodes[h].kind != WG_THREAD ||
		    pg->nodes[h].index >= pc->snap.nthreads ||
		    (ident && pc->snap.threads[pg->nodes[h].index].thread_id !=
				      ident))
			continue;
		*holder = h;
		return (long)i;
	}
	return -1;
}

void run_fork_holder(struct run_cause *cause, const struct run_summary *s,
		     const struct collection *c, const struct py_prim *p,
		     struct strbuf *sb)
{
	const struct collection *pc = s->parent;
	size_t h, t;
	long i;

	/* (not a copy: an exec'd child, its objects at the same addresses
	 * only where ASLR is off) */
	if (!pc || procfs_same_image(collect_proc_pid(c),
				     collect_proc_pid(pc)) == 0)
		return;
	if (p->kind == PY_PRIM_LOCK && p->family == PY_PRIM_THREADING &&
	    p->locked > 0) {
		i = parent_copy_held(pc, p, 0, &h);
		if (i < 0)
			return;
		strbuf_addf(sb, "held in parent %d: ", pc->pid);
		graph_add_label(sb, pc, h, GRAPH_RAW);
		strbuf_addstr(sb, " holds its copy");
		graph_add_holder_at(sb, pc, (size_t)i, h, GRAPH_RAW);
		strbuf_addstr(sb, "; if it held it when this process forked, "
			      "nothing here will release it");
		run_cause_detail(cause, sb);
		return;
	}
	if (!graph_owner_gone(c, p))
		return;
	i = parent_copy_held(pc, p, p->owner, &h);
	if (i >= 0) {
		strbuf_addf(sb, "held when this process forked: in parent %d, ",
			    pc->pid);
		graph_add_label(sb, pc, h, GRAPH_RAW);
		strbuf_addstr(sb, " holds it");
		graph_add_holder_at(sb, pc, (size_t)i, h, GRAPH_RAW);
		run_cause_detail(cause, sb);
		return;
	}
	for (t = 0; t < pc->snap.nthreads; t++) {
		const struct py_thread *th = &pc->snap.threads[t];

		if (th->thread_id != p->owner)
			continue;
		strbuf_addf(sb, "likely held when this process forked: in "
			    "parent %d, ", pc->pid);
		run_add_thread_label(sb, th);
		strbuf_addstr(sb, " has its owner's ident");
		if (th->nframes) {
			strbuf_addstr(sb, " (at ");
			run_add_frame_place(sb, &th->frames[0]);
			strbuf_addch(sb, ')');
		}
		run_cause_detail(cause, sb);
		return;
	}
}
