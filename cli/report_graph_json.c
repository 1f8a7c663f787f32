/*
 * The wait-for graph as JSON (the "graph" member of a dump's document):
 * its nodes with their places, its edges and cycles.  The text sections
 * and the labels both share are in cli/report_graph.c.
 */
#include "cli/report_graph.h"

#include <stdlib.h>
#include <string.h>

#include "cli/child_pipes.h"
#include "cli/json_memo.h"
#include "common/banned.h"

/* What a memo's key (cli/json_memo.h) starts with: which run it is. */
enum memo_run { MEMO_PLACE = 1 };

/* A place, in the pieces around its line: its file, its function, from
 * its code object. */
static void place_piece(struct json *j, const void *arg, size_t i)
{
	const struct py_code *code = arg;

	if (i == 0) {
		json_begin_object(j);
		json_key_string(j, "file", code->filename);
		json_key(j, "line");
	} else {
		json_key_string(j, "function", code->qualname);
		json_end_object(j);
	}
}

/* The value of a place's key (which the caller writes, as a literal:
 * there is one for every node and edge). */
static void json_place(struct json *j, const struct py_frame *f,
		       struct json_memo *memo)
{
	uint64_t mkey[JSON_MEMO_KEY] = { MEMO_PLACE, 0, 0 };
	struct json_hole line = { JSON_HOLE_INT, 0, 0 };

	if (!f || !f->code) {
		json_null(j);
		return;
	}
	mkey[1] = (uintptr_t)f->code;
	line.num = f->line;
	json_memo_write_holes(j, memo, mkey, place_piece, f->code, &line, 1);
}

static void json_int_or_null(struct json *j, const char *key, int64_t v)
{
	json_key_str(j, key);
	if (v < 0)
		json_null(j);
	else
		json_int(j, v);
}

/* An object's type, address (under addr_key) and state. */
static void json_prim(struct json *j, const struct py_prim *p,
		      const char *addr_key)
{
	struct strbuf st;

	json_key_string(j, "type", p->name);
	if (p->cls)
		json_key_string(j, "class", p->cls);
	json_key_str(j, addr_key);
	json_hex(j, p->addr);
	strbuf_init(&st);
	py_prim_state(p, &st);
	json_key_string(j, "state", st.buf);
	strbuf_release(&st);
}

/* A child process's "blocked_writing" (to a pipe the target holds the
 * read end of: "read_end_fd") or "blocked_reading" (from one it holds
 * the write end of: "write_end_fd"): the one cp is, else null. */
static void json_child_end(struct json *j, const struct child_pipe *cp,
			   int reading)
{
	if (reading)
		json_key(j, "blocked_reading");
	else
		json_key(j, "blocked_writing");
	if (!cp || cp->reading != reading) {
		json_null(j);
		return;
	}
	json_begin_object(j);
	json_key_int(j, "fd", cp->child_fd);
	if (reading)
		json_key_int(j, "write_end_fd", cp->our_fd);
	else
		json_key_int(j, "read_end_fd", cp->our_fd);
	json_end_object(j);
}

/* An object node's fields: what the primitive's own fields say. */
static void json_object_fields(struct json *j, const struct collection *c,
			       const struct py_prim *p)
{
	json_prim(j, p, "address");
	json_key(j, "locked");
	if (p->locked < 0)
		json_null(j);
	else
		json_bool(j, p->locked);
	json_key(j, "set");
	if (p->set < 0)
		json_null(j);
	else
		json_bool(j, p->set);
	json_int_or_null(j, "value", p->value);
	json_int_or_null(j, "qsize", p->qsize);
	json_int_or_null(j, "maxsize", p->maxsize);
	json_int_or_null(j, "unfinished", p->unfinished);
	json_int_or_null(j, "waiters", p->waiters);
	/* (a Condition's whose lock keeps a count: not every
	 * object's) */
	if (p->lock_waiters >= 0)
		json_int_or_null(j, "lock_waiters", p->lock_waiters);
	/* (aiohttp's connector: its connections) */
	if (p->in_use >= 0) {
		json_int_or_null(j, "in_use", p->in_use);
		json_int_or_null(j, "limit", p->limit);
		json_int_or_null(j, "limit_per_host",
				 p->limit_per_host);
	}
	json_key(j, "owner");
	/* (a thread's ident; gevent's owner is a greenlet, which
	 * its holds edge names) */
	if (py_prim_thread_owned(p) && p->locked >= 0)
		json_uint(j, p->owner);
	else
		json_null(j);
	/* (trio's and anyio's Lock: a task, which may have ended
	 * and be no node) */
	json_key(j, "owner_task");
	if (p->owner_task && (p->owner_name ||
			      py_async_task(&c->async, p->owner_task)))
		json_hex(j, p->owner_task);
	else
		json_null(j);
	json_key(j, "owner_name");
	json_string(j, p->owner_name);
	json_int_or_null(j, "count", p->count);
	json_int_or_null(j, "children", p->children);
	json_int_or_null(j, "done", p->done);
	json_int_or_null(j, "pid", p->pid);
	/* (run_coroutine_threadsafe()'s future: the coroutine no task
	 * runs yet) */
	if (p->kind == PY_PRIM_CFUTURE) {
		json_key(j, "scheduled_coroutine");
		if (p->scheduled_coro)
			json_hex(j, p->scheduled_coro);
		else
			json_null(j);
	}
	if (p->kind == PY_PRIM_STREAM) {
		json_int_or_null(j, "fd", p->fd);
		json_key(j, "server_side");
		if (p->server_side >= 0)
			json_bool(j, p->server_side);
		else
			json_null(j);
	}
	if (p->kind == PY_PRIM_PROCESS) {
		const struct child_pipe *cp =
			child_pipe_of(c->child_pipes, c->nchild_pipes, p->pid);

		json_child_end(j, cp, 0);
		json_child_end(j, cp, 1);
	}
}

static void json_node(struct json *j, const struct collection *c, size_t i,
		      struct json_memo *memo)
{
	const struct wg_node *n = &c->graph.nodes[i];
	static const char *const kinds[] = { "thread", "task", "object",
					     "greenlet" };

	json_begin_object(j);
	json_key(j, "id");
	json_uint(j, i);
	json_key_string(j, "kind", kinds[n->kind]);
	if (n->kind == WG_THREAD) {
		json_key_int(j, "tid", c->snap.threads[n->index].tid);
		json_key_string(j, "name", c->snap.threads[n->index].name);
	} else if (n->kind == WG_TASK) {
		json_key(j, "task");
		json_hex(j, c->async.tasks[n->index].addr);
		json_key_string(j, "name", c->async.tasks[n->index].name);
	} else if (n->kind == WG_GREENLET) {
		json_key(j, "greenlet");
		json_hex(j, c->greenlets.v[n->index].addr);
		json_key_string(j, "name", c->greenlets.v[n->index].name);
		json_key_string(j, "function",
				c->greenlets.v[n->index].function);
		json_key(j, "main");
		json_bool(j, c->greenlets.v[n->index].is_main);
		json_key_string(j, "state", py_greenlet_state_name(
					c->greenlets.v[n->index].state));
	} else {
		json_object_fields(j, c, &c->graph.prims[n->index]);
	}
	if (n->kind != WG_OBJECT) {
		json_key(j, "blame");
		json_place(j, n->blame, memo);
		json_key(j, "innermost");
		json_place(j, n->inner, memo);
		json_key(j, "idle");
		json_bool(j, n->idle);
	}
	json_end_object(j);
}

/* "drives": the generators a task runs through another framework's
 * driver (tornado). */
static void json_drives(struct json *j, const struct collection *c,
			struct json_memo *memo)
{
	const struct py_waitgraph *g = &c->graph;
	size_t i;

	json_key(j, "drives");
	json_begin_array(j);
	for (i = 0; i < g->ndrives; i++) {
		const struct py_gen *gen = &c->async.gens[g->drives[i].gen];
		long node = py_waitgraph_node_of(g, WG_TASK, g->drives[i].task);

		json_begin_object(j);
		json_key(j, "task");
		json_uint(j, node < 0 ? 0 : (uint64_t)node);
		json_key(j, "generator");
		json_hex(j, gen->addr);
		json_key(j, "at");
		json_place(j, gen->has_frame ? &gen->frame : NULL, memo);
		json_key_string(j, "by", g->drives[i].by);
		json_end_object(j);
	}
	json_end_array(j);
}

/* "entered": the context managers' generators a `with` keeps entered. */
static void json_entered(struct json *j, const struct collection *c,
			 struct json_memo *memo)
{
	const struct py_waitgraph *g = &c->graph;
	size_t i;

	json_key(j, "entered");
	json_begin_array(j);
	for (i = 0; i < g->nentered; i++) {
		const struct wg_entered *e = &g->entered[i];

		json_begin_object(j);
		json_key(j, "generator");
		json_hex(j, c->async.gens[e->gen].addr);
		json_key(j, "by");
		json_uint(j, e->node);
		json_key(j, "at");
		json_place(j, e->at, memo);
		json_key(j, "line");
		if (e->line > 0)
			json_int(j, e->line);
		else
			json_null(j);
		json_end_object(j);
	}
	json_end_array(j);
}

void report_json_graph(struct json *j, const struct collection *c)
{
	const struct py_waitgraph *g = &c->graph;
	struct json_memo memo;
	size_t i, k;

	json_memo_init(&memo);
	json_key(j, "graph");
	json_begin_object(j);
	json_key(j, "nodes");
	json_begin_array(j);
	for (i = 0; i < g->nnodes; i++)
		json_node(j, c, i, &memo);
	json_end_array(j);
	json_key(j, "edges");
	json_begin_array(j);
	for (i = 0; i < g->nedges; i++) {
		const struct wg_edge *e = &g->edges[i];

		json_begin_object(j);
		json_key_string(j, "kind",
				e->kind == WG_HOLDS ? "holds" : "waits_for");
		json_key(j, "from");
		json_uint(j, e->from);
		json_key(j, "to");
		json_uint(j, e->to);
		if (e->any) {
			json_key(j, "any");
			json_bool(j, 1);
		}
		if (e->any && e->maybe_all) {
			json_key(j, "maybe_all");
			json_bool(j, 1);
		}
		if (g->nodes[e->to].kind == WG_OBJECT) {
			json_prim(j, &g->prims[g->nodes[e->to].index], "object");
		}
		if (e->kind == WG_HOLDS) {
			json_key(j, "at");
			json_place(j, e->at, &memo);
			json_key(j, "taken_line");
			if (e->took_line > 0)
				json_uint(j, (uint64_t)e->took_line);
			else
				json_null(j);
			/* (only where set: documents stay as they were) */
			if (e->by_ident) {
				json_key(j, "by_ident");
				json_bool(j, 1);
			}
		}
		json_end_object(j);
	}
	json_end_array(j);
	json_key(j, "cycles");
	json_begin_array(j);
	for (i = 0; i < g->cycles.n; i++) {
		json_begin_array(j);
		for (k = 0; k < g->cycles.len[i]; k++)
			json_uint(j, g->cycles.cycles[i][k]);
		json_end_array(j);
	}
	json_end_array(j);
	json_drives(j, c, &memo);
	json_entered(j, c, &memo);
	json_key_string(j, "test", g->test);
	json_end_object(j);
	json_memo_release(&memo);
}
