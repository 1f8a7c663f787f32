/*
 * What a thread `watch` saw stuck waits for in the kernel, in run's
 * words (cli/run_reads.h): the socket or pipe it reads, the file lock
 * it waits for and its holder, the child it waits to end; and the
 * socket a stuck task or greenlet waits on where its library's frames
 * name its fd (readers/task_io.c, trio_io.c, gevent_io.c).  Read from
 * /proc once per stuck item, when its STUCK event is out, not at every
 * sample: the network tables of a busy server are long.
 */
#include "cli/watch_blocked.h"

#include "cli/run_fds.h"
#include "cli/run_reads.h"
#include "common/strbuf.h"
#include "readers/waitgraph.h"
#include "common/banned.h"

/* The fd of the asyncio StreamReader task i of c waits on, as the
 * wait-for graph has it, into *fd: PY_IO_READ, else PY_IO_NONE. */
static int stream_of(const struct collection *c, size_t i, int64_t *fd)
{
	const struct py_waitgraph *g = &c->graph;
	const size_t *out;
	long node = py_waitgraph_node_of(g, WG_TASK, i);
	size_t k, m;

	if (node < 0)
		return PY_IO_NONE;
	out = py_waitgraph_out(g, (size_t)node, &m);
	for (k = 0; k < m; k++) {
		const struct wg_node *to = &g->nodes[g->edges[out[k]].to];

		if (g->edges[out[k]].kind == WG_WAITS_FOR &&
		    to->kind == WG_OBJECT && to->index < g->nprims &&
		    g->prims[to->index].kind == PY_PRIM_STREAM &&
		    g->prims[to->index].fd >= 0) {
			*fd = g->prims[to->index].fd;
			return PY_IO_READ;
		}
	}
	return PY_IO_NONE;
}

/* The fd task or greenlet `id` of c is parked on, to read (PY_IO_READ)
 * or to write, into *fd: its io_wait, PY_IO_NONE for none known. */
static int parked_on(const struct collection *c, enum watch_kind kind,
		     uint64_t id, int64_t *fd)
{
	size_t i;

	/* Bounded by the tasks or greenlets (a STUCK event's, rare). */
	if (kind == WATCH_TASK)
		for (i = 0; i < c->async.ntasks; i++)
			if (c->async.tasks[i].addr == id) {
				*fd = c->async.tasks[i].io_fd;
				return c->async.tasks[i].io_wait != PY_IO_NONE ?
				       c->async.tasks[i].io_wait :
				       stream_of(c, i, fd);
			}
	if (kind == WATCH_GREENLET)
		for (i = 0; i < c->greenlets.n; i++)
			if (c->greenlets.v[i].addr == id) {
				*fd = c->greenlets.v[i].io_fd;
				return c->greenlets.v[i].io_wait;
			}
	return PY_IO_NONE;
}

/* "to read fd 7, a TCP connection ... (established)" of a task or
 * greenlet parked on an fd, into sb: 0, or -1 for none known. */
static int add_parked(struct strbuf *sb, const struct run_summary *s,
		      const struct collection *c, const struct watch_item *it)
{
	int64_t fd = -1;
	int io = parked_on(c, it->kind, it->id, &fd);

	if (io == PY_IO_NONE || fd < 0 || fd > 0x7fffffff)
		return -1;
	strbuf_addf(sb, "to %s fd %lld", io == PY_IO_READ ? "read" : "write",
		    (long long)fd);
	/* (an fd that is no socket or pipe: its number alone) */
	(void)run_fds_describe(sb, ", ", s, c->pid, collect_proc_pid(c),
			       (int)fd);
	return 0;
}

void watch_note_blocked(struct watch_tracker *t, const struct collection *c)
{
	struct procfs_lock holder;
	struct run_summary s;
	struct strbuf sb;
	size_t i;

	if (!c->is_live)
		return;
	run_summary_init(&s);
	strbuf_init(&sb);
	/* Bounded by the events of this sample. */
	for (i = 0; i < t->nevents; i++) {
		const struct watch_event *ev = &t->events[i];
		const struct watch_item *it = &t->items[ev->item];

		if (ev->kind != WATCH_EV_STUCK)
			continue;
		strbuf_reset(&sb);
		if (it->kind != WATCH_THREAD) {
			if (add_parked(&sb, &s, c, it) == 0)
				watch_set_blocked_on(t, ev->item, sb.buf);
			continue;
		}
		if (it->id > 0 && it->id <= 0x7fffffff &&
		    run_reads_call(&sb, &s, c, collect_proc_pid(c),
				   (int)it->id, NULL, &holder) >= 0 && sb.len > 1)
			watch_set_blocked_on(t, ev->item, sb.buf + 1);
	}
	strbuf_release(&sb);
	run_summary_release(&s);
}
