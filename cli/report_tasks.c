/*
 * The "second stack" in text and Graphviz form: an await tree per event
 * loop (tasks, their coroutine frames, and under the innermost frame the
 * tasks it awaits through gather or a TaskGroup), await cycles by name,
 * then the generators and coroutines that no task owns
 * (cli/report_orphans.c).
 */
#include "cli/report.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/escape.h"
#include "cli/natural_order.h"
#include "cli/report_graph.h"
#include "cli/report_orphans.h"
#include "cli/task_kind.h"
#include "cli/term_cut.h"
#include "cli/timer_text.h"
#include "common/addrmap.h"
#include "common/strbuf.h"
#include "readers/task_cycles.h"
#include "common/banned.h"

#define TREE_MAX_INDENT 16

/* The tree's lines: box drawing on a UTF-8 terminal, ASCII elsewhere. */
enum { G_BAR, G_TEE, G_ELL, G_BLANK };
static const char *const box_glyphs[] = {
	"\u2502  ", "\u251c\u2500 ", "\u2514\u2500 ", "   " };
static const char *const ascii_glyphs[] = { "|  ", "|- ", "`- ", "   " };

/* A run of identical sibling tasks (or one task): printed as one entry. */
struct entry {
	size_t first, last;   /* task indexes; members linked by group_next */
	size_t count;
	size_t named_last;    /* a group's: the member whose name is last
				 (cli/natural_order.h); first's is first */
};

struct tree {
	FILE *out;
	const struct collection *c;
	const struct py_async *a;
	unsigned char *shown;        /* per task: already printed */
	size_t **children;           /* per task: indexes of tasks it awaits */
	size_t *nchildren;
	size_t *group_next;          /* per task: next of its entry, or -1 */
	/* Per task: a hash of the objects it holds (the graph's), 0 for
	 * none.  Alike tasks that hold different locks (two transfer()s
	 * each holding the lock the other waits for) are not one entry. */
	uint64_t *holds;
	const char *const *glyph;
	/* Per level: more siblings follow the node printed last there. */
	unsigned char more[TREE_MAX_INDENT + 1];
	struct task_kind_memo kinds;   /* zeroed: empty */
};

static int utf8_terminal(FILE *out)
{
	return isatty(fileno(out)) && term_locale_utf8();
}

/*
 * The start of a line at depth (the loop header is 0): a node's line
 * gets its connector, a line under a node (its source, its locals) the
 * node's continuation.  Levels stop growing at TREE_MAX_INDENT, so that
 * an await chain of 10,000 tasks or 1,000 async generators stays
 * readable and its size linear; deeper lines say their depth instead.
 */
static void prefix(struct tree *t, int depth, int node)
{
	int l;

	for (l = 1; l < depth && l <= TREE_MAX_INDENT; l++)
		fputs(t->glyph[t->more[l] ? G_BAR : G_BLANK], t->out);
	if (depth >= 1 && depth <= TREE_MAX_INDENT) {
		int more = t->more[depth];

		fputs(t->glyph[node ? (more ? G_TEE : G_ELL)
				    : (more ? G_BAR : G_BLANK)], t->out);
	}
	if (depth > TREE_MAX_INDENT)
		fprintf(t->out, "(depth %d) ", depth);
}

static void node_prefix(struct tree *t, int depth, int more)
{
	if (depth >= 1 && depth <= TREE_MAX_INDENT)
		t->more[depth] = (unsigned char)!!more;
	prefix(t, depth, 1);
}

/*
 * Do the tasks of group e (whose first is at node) wait for one object?
 * Alike frames can wait on two queues, of two classes, or two locks held
 * by two tasks: then the group's line speaks for its first task only.
 */
static int group_waits_alike(const struct tree *t, const struct entry *e,
			     long node)
{
	const struct py_prim *p = graph_short_wait_object(t->c, (size_t)node);
	const struct py_prim *q;
	size_t m;
	long n;

	/* Bounded by the group's tasks (group_next ends at -1). */
	for (m = t->group_next[e->first]; m != (size_t)-1;
	     m = t->group_next[m]) {
		n = py_waitgraph_node_of(&t->c->graph, WG_TASK, m);
		q = n >= 0 ? graph_short_wait_object(t->c, (size_t)n) : NULL;
		if (!q || q->addr != p->addr)
			return 0;
	}
	return 1;
}

/* One timer of an entry's tasks (its sleep, or its timeout) said on
 * out (cli/timer_text.c): 1 said, 0 when one of them has none, or one
 * on another kind of clock. */
static int group_timer(const struct tree *t, const struct entry *e,
		       int timeout)
{
	struct timer_span span;
	struct strbuf sb;
	size_t m = e->first;
	int said;

	memset(&span, 0, sizeof(span));
	/* Bounded by the group's tasks (group_next ends at -1). */
	for (;;) {
		const struct py_task *k = &t->a->tasks[m];

		timer_span_task(&span, k, timeout);
		if (e->count == 1 || (m = t->group_next[m]) == (size_t)-1)
			break;
	}
	strbuf_init(&sb);
	said = timer_text_span(&sb, &span, !timeout, t->c->clock_s);
	fputs(sb.buf, t->out);
	strbuf_release(&sb);
	return said;
}

/* A task's name in the tree, quoted where it would not show: empty, or
 * blank at an end ("(T) '' 0x7f.. pending"). */
static void put_name(FILE *out, const char *name)
{
	size_t n = name ? strlen(name) : 1;
	int quote = n == 0 || (name && (name[0] == ' ' || name[n - 1] == ' ' ||
					name[0] == '\t' || name[n - 1] == '\t'));

	if (quote)
		fputc('\'', out);
	esc_put(out, name, ESC_NAME, 0);
	if (quote)
		fputc('\'', out);
}

static void task_line(struct tree *t, const struct entry *e, int depth,
		      int more)
{
	const struct py_task *task = &t->a->tasks[e->first];
	struct strbuf wait;
	long node;

	node_prefix(t, depth, more);
	fputs("(T) ", t->out);
	if (e->count > 1) {
		fprintf(t->out, "%zu tasks like this: ", e->count);
		put_name(t->out, task->name);
		fputs(" .. ", t->out);
		put_name(t->out, t->a->tasks[e->named_last].name);
		fprintf(t->out, " %s", task->running ? "running" : "pending");
	} else {
		put_name(t->out, task->name);
		fprintf(t->out, " 0x%llx %s", (unsigned long long)task->addr,
			task->running ? "running" : "pending");
	}
	if (task->framework)
		fprintf(t->out, " [%s]", task->framework);
	/* (alike tasks are all cancelled, or none: cli/task_kind.c) */
	if (task->cancels_requested > 0) {
		fputs(", cancel requested", t->out);
		if (e->count == 1 && task->cancels_requested > 1)
			fprintf(t->out, " %d times", task->cancels_requested);
	}
	node = py_waitgraph_node_of(&t->c->graph, WG_TASK, e->first);
	strbuf_init(&wait);
	if (node >= 0)
		graph_add_short_wait(&wait, t->c, (size_t)node);
	if (wait.len) {
		/* (graph_add_label escaped the names in it) */
		fprintf(t->out, ", %s%s",
			e->count > 1 && !group_waits_alike(t, e, node) ?
			"the first " : "", wait.buf);
	} else if (!group_timer(t, e, 0) && task->waiter &&
		   !py_async_task(t->a, task->waiter)) {
		fputs(", awaits ", t->out);
		esc_put(t->out, task->waiter_type, ESC_NAME, 0);
		if (e->count == 1)
			fprintf(t->out, " 0x%llx",
				(unsigned long long)task->waiter);
	}
	/* (the socket or pipe it waits on, where its library's frames
	 * say: trio's I/O manager, anyio's and aiohttp's streams) */
	if (e->count == 1 && task->io_wait != PY_IO_NONE)
		fprintf(t->out, ", to %s fd %lld",
			task->io_wait == PY_IO_READ ? "read" : "write",
			(long long)task->io_fd);
	/* (as in JSON, where the "awaiting" object says it) */
	if (py_task_wait_timeout(task))
		(void)group_timer(t, e, 1);
	strbuf_release(&wait);
	fputc('\n', t->out);
}

/* One coroutine or generator frame of a task at depth d; `by` names
 * the driver of a generator the task's own chain does not hold. */
static void print_gen_frame(struct tree *t, const struct py_gen *g, int d,
			    const char *by)
{
	const char *src;
	size_t k;
	int cut;

	node_prefix(t, d, 0);
	if (by)
		fprintf(t->out, "[%s] ", by);
	esc_put(t->out, g->qualname, ESC_NAME, 0);
	fputs("  ", t->out);
	esc_put(t->out, g->frame.code->filename, ESC_NAME, 0);
	if (g->frame.line >= 0)
		fprintf(t->out, ":%d\n", g->frame.line);
	else
		fputs(":?\n", t->out);
	/* Under the frame, as a traceback would: its line, locals. */
	src = report_source_line(t->c, &g->frame, &cut);
	if (src) {
		prefix(t, d, 0);
		fputs("    ", t->out);
		esc_text(t->out, src);
		fputs(cut ? "...\n" : "\n", t->out);
	}
	for (k = 0; t->c->opt.locals && k < g->frame.nlocals; k++) {
		prefix(t, d, 0);
		report_text_local(t->out, "    ", &g->frame.locals[k]);
	}
}

/* The task's coroutine frames, outermost first, each one level deeper
 * than the last, then the generators it drives (tornado's): the depth
 * of the innermost. */
static int print_frames(struct tree *t, const struct py_task *task, int d)
{
	const struct py_waitgraph *wg = &t->c->graph;
	size_t i, self = (size_t)(task - t->a->tasks);

	for (i = task->nstack; i-- > 0;)
		if (t->a->gens[task->stack[i]].has_frame)
			print_gen_frame(t, &t->a->gens[task->stack[i]], ++d,
					NULL);
	for (i = 0; i < wg->ndrives; i++)
		if (wg->drives[i].task == self &&
		    t->a->gens[wg->drives[i].gen].has_frame)
			print_gen_frame(t, &t->a->gens[wg->drives[i].gen], ++d,
					wg->drives[i].by);
	return d;
}

/*
 * A group is shown as its first and last name in the order one counts
 * them (cli/natural_order.h), and by the first of them: that one moves
 * to the head of its members (the group's other lines speak for it).
 */
static void name_order(struct tree *t, struct entry *e)
{
	const struct py_task *tasks = t->a->tasks;
	size_t m, prev = (size_t)-1, lo = e->first, lo_prev = (size_t)-1;

	e->named_last = e->first;
	/* Bounded by the group's members (the chain ends at -1). */
	for (m = e->first; m != (size_t)-1; prev = m, m = t->group_next[m]) {
		if (natural_cmp(tasks[m].name, tasks[lo].name) < 0) {
			lo = m;
			lo_prev = prev;
		}
		if (natural_cmp(tasks[m].name, tasks[e->named_last].name) > 0)
			e->named_last = m;
	}
	if (lo == e->first)
		return;
	t->group_next[lo_prev] = t->group_next[lo];
	if (lo == e->last)
		e->last = lo_prev;
	t->group_next[lo] = e->first;
	e->first = lo;
}

/*
 * The entries of the sibling tasks idx[0..n): in order of first
 * appearance, alike leaf tasks (awaiting no other task, not yet shown)
 * merged into one, unless --all.  Tasks with tasks under them stay
 * alone: a group would hide what differs below them.
 */
static struct entry *plan(struct tree *t, const size_t *idx, size_t n,
			  size_t *nentries)
{
	struct entry *e = xmalloc((n ? n : 1) * sizeof(*e));
	struct addrmap kinds;
	size_t i, ne = 0;
	uintptr_t before = 0;  /* the entry (+ 1) of the task before, when
				  it went through kinds; else 0 */

	addrmap_init(&kinds);
	for (i = 0; i < n; i++) {
		const struct py_task *task = &t->a->tasks[idx[i]];
		uint64_t key = 0;
		uintptr_t k;

		t->group_next[idx[i]] = (size_t)-1;
		if (!t->c->opt.expand_all && !t->nchildren[idx[i]] &&
		    !t->shown[idx[i]]) {
			/* Alike tasks mostly come in a row: one like the
			 * task before has its hash, and goes where it
			 * went, without hashing or a lookup. */
			int like_before = before &&
				t->holds[idx[i - 1]] == t->holds[idx[i]] &&
				task_same_kind(t->a, &t->a->tasks[idx[i - 1]],
					       task);

			k = before;
			if (!like_before) {
				key = task_kind_hash(&t->kinds, t->a, task) ^
				      t->holds[idx[i]];
				k = (uintptr_t)addrmap_get(&kinds, key, NULL);
			}
			if (k && (like_before ||
				  (t->holds[e[k - 1].first] == t->holds[idx[i]] &&
				   task_same_kind(t->a,
						  &t->a->tasks[e[k - 1].first],
						  task)))) {
				t->group_next[e[k - 1].last] = idx[i];
				e[k - 1].last = idx[i];
				e[k - 1].count++;
				before = k;
				continue;
			}
			if (k)
				key = 0;   /* a collision: this one stays alone */
		}
		e[ne] = (struct entry){ idx[i], idx[i], 1, idx[i] };
		ne++;
		before = key ? ne : 0;
		if (key)
			addrmap_put(&kinds, key, (void *)(uintptr_t)ne);
	}
	addrmap_release(&kinds);
	for (i = 0; i < ne; i++)
		if (e[i].count > 1)
			name_order(t, &e[i]);
	*nentries = ne;
	return e;
}

/* A task on the walk of print_entries(). */
struct tree_step {
	struct entry *entries;   /* its children's, owned */
	size_t nentries;
	size_t next;             /* the next of them to print */
	int child_depth;         /* where they go */
};

/*
 * Print one entry: its task line (or the group's) and frames, and
 * return 1 when the walk must descend into the children of its task
 * (*step set up), 0 when it is done with it.
 */
static int print_entry(struct tree *t, const struct entry *e, int depth,
		       int more, struct tree_step *step)
{
	const struct py_task *task = &t->a->tasks[e->first];
	size_t m;

	if (e->count == 1 && t->shown[e->first]) {
		node_prefix(t, depth, more);
		fputs("(T) ", t->out);
		esc_put(t->out, task->name, ESC_NAME, 0);
		fprintf(t->out, " 0x%llx (shown above)\n",
			(unsigned long long)task->addr);
		return 0;
	}
	t->shown[e->first] = 1;
	for (m = e->first; e->count > 1 && m != (size_t)-1;
	     m = t->group_next[m])
		t->shown[m] = 1;
	task_line(t, e, depth, more);
	step->child_depth = print_frames(t, task, depth) + 1;
	if (!t->nchildren[e->first])
		return 0;
	step->entries = plan(t, t->children[e->first],
			     t->nchildren[e->first], &step->nentries);
	step->next = 0;
	return 1;
}

/*
 * The entries and, depth first, the tasks each awaits: each task printed
 * once (a task met again says "shown above").  Iterative, so that a
 * chain of any length prints whole and in order; the walk holds each
 * task at most once, so it needs no more steps than there are tasks.
 */
static void print_entries(struct tree *t, struct entry *roots, size_t n,
			  int depth, int more_after)
{
	struct tree_step *stack;
	size_t top = 0;

	stack = xmalloc((t->a->ntasks + 2) * sizeof(*stack));
	stack[0] = (struct tree_step){ roots, n, 0, depth };
	while (1) {
		struct tree_step *s = &stack[top];
		const struct entry *e;
		int more;

		if (s->next >= s->nentries || top > t->a->ntasks) {
			if (top)
				free(s->entries);
			if (!top--)
				break;
			continue;
		}
		e = &s->entries[s->next++];
		/* (siblings printed by a later call count at the top) */
		more = s->next < s->nentries || (!top && more_after);
		if (print_entry(t, e, s->child_depth, more, &stack[top + 1]))
			top++;
	}
	free(stack);
}

/* Mark in reached the tasks print_entries() shows from task `from` (it
 * and, through t->children, every task it awaits).  Bounded: each task
 * enters the queue (room for all of them) once. */
static void reach_from(const struct tree *t, size_t from,
		       unsigned char *reached, size_t *queue)
{
	size_t head = 0, tail = 0, k, c;

	if (reached[from])
		return;
	reached[from] = 1;
	queue[tail++] = from;
	while (head < tail) {
		size_t cur = queue[head++];

		for (k = 0; k < t->nchildren[cur]; k++) {
			c = t->children[cur][k];
			if (!reached[c]) {
				reached[c] = 1;
				queue[tail++] = c;
			}
		}
	}
}

const char *report_thread_name(const struct collection *c, int tid)
{
	size_t i;

	for (i = 0; i < c->snap.nthreads; i++)
		if (c->snap.threads[i].tid == tid)
			return c->snap.threads[i].name;
	return NULL;
}

/* t->holds, from the graph's holds edges of tasks. */
static void build_holds(struct tree *t)
{
	const struct py_waitgraph *g = &t->c->graph;
	size_t i;

	t->holds = xcalloc(t->a->ntasks ? t->a->ntasks : 1, sizeof(*t->holds));
	for (i = 0; i < g->nedges; i++) {
		const struct wg_edge *e = &g->edges[i];
		const struct wg_node *from, *to;

		if (e->kind != WG_HOLDS || e->from >= g->nnodes ||
		    e->to >= g->nnodes)
			continue;
		from = &g->nodes[e->from];
		to = &g->nodes[e->to];
		if (from->kind != WG_TASK || from->index >= t->a->ntasks ||
		    to->kind != WG_OBJECT)
			continue;
		/* (a sum: the same set in any order; never 0 for one) */
		t->holds[from->index] += (g->prims[to->index].addr | 1) *
					 0x9E3779B97F4A7C15ull;
	}
}

static void build_children(struct tree *t)
{
	const struct py_async *a = t->a;
	size_t i, j;

	t->children = xcalloc(a->ntasks ? a->ntasks : 1, sizeof(*t->children));
	t->nchildren = xcalloc(a->ntasks ? a->ntasks : 1, sizeof(*t->nchildren));
	t->group_next = xcalloc(a->ntasks ? a->ntasks : 1,
				sizeof(*t->group_next));
	for (i = 0; i < a->ntasks; i++) {
		for (j = 0; j < a->tasks[i].nawaited_by; j++) {
			const struct py_task *p = py_async_task(a, a->tasks[i].awaited_by[j]);
			size_t pi;

			if (!p)
				continue;
			pi = (size_t)(p - a->tasks);
			t->children[pi] = xrealloc(t->children[pi],
						   (t->nchildren[pi] + 1) *
						   sizeof(**t->children));
			t->children[pi][t->nchildren[pi]++] = i;
		}
	}
}

static void loop_header(struct tree *t, const struct py_task *first,
			size_t n)
{
	const char *tname;

	fprintf(t->out, "\nTasks of %s 0x%llx",
		first->framework ? "trio run" : "loop",
		(unsigned long long)first->loop);
	if (first->tid) {
		fprintf(t->out, " (thread %d", first->tid);
		tname = report_thread_name(t->c, first->tid);
		if (tname) {
			fputs(" \"", t->out);
			esc_put(t->out, tname, ESC_NAME, 0);
			fputc('"', t->out);
		}
		fputc(')', t->out);
	}
	fprintf(t->out, ": %zu pending\n", n);
}

static void print_loops(struct tree *t)
{
	const struct py_async *a = t->a;
	struct addrmap loops_done;
	size_t *idx = xmalloc(a->ntasks * sizeof(*idx));
	size_t *heads = xmalloc(a->ntasks * sizeof(*heads));
	size_t *queue = xmalloc(a->ntasks * sizeof(*queue));
	unsigned char *reached = xmalloc(a->ntasks);
	size_t i, j, n, nroots, nheads;

	addrmap_init(&loops_done);
	for (i = 0; i < a->ntasks; i++) {
		uint64_t loop = a->tasks[i].loop;
		struct entry *roots;

		/* tasks without a loop (0) form one group too */
		if (!addrmap_add(&loops_done, loop ? loop : 1))
			continue;
		for (n = 0, nroots = 0, j = 0; j < a->ntasks; j++) {
			if (a->tasks[j].loop != loop)
				continue;
			n++;
			/* roots first: tasks nobody awaits */
			if (!a->tasks[j].nawaited_by)
				idx[nroots++] = j;
		}
		loop_header(t, &a->tasks[i], n);
		/* What is not reached from the roots is only reachable
		 * through a cycle: one more top-level entry per cycle (the
		 * first task of it not reached yet), found before the roots
		 * print, so that the last root's connector says more follow. */
		/* (those shown under another loop's tree print nowhere
		 * again, and nothing is printed under them again) */
		memcpy(reached, t->shown, a->ntasks);
		for (j = 0; j < nroots; j++)
			reach_from(t, idx[j], reached, queue);
		for (nheads = 0, j = 0; j < a->ntasks; j++)
			if (a->tasks[j].loop == loop && !reached[j]) {
				heads[nheads++] = j;
				reach_from(t, j, reached, queue);
			}
		roots = plan(t, idx, nroots, &n);
		print_entries(t, roots, n, 1, nheads > 0);
		free(roots);
		for (j = 0; j < nheads; j++) {
			struct entry one = { heads[j], heads[j], 1, heads[j] };

			print_entries(t, &one, 1, 1, j + 1 < nheads);
		}
	}
	free(idx);
	free(heads);
	free(queue);
	free(reached);
	addrmap_release(&loops_done);
}

static void print_cycles(FILE *out, const struct py_async *a)
{
	size_t i, k;

	for (i = 0; i < a->ncycles; i++) {
		int addr = py_async_cycle_names_clash(a, i);

		fputs("await cycle: ", out);
		for (k = 0; k <= a->cycle_len[i]; k++) {
			uint64_t at = a->cycles[i][k % a->cycle_len[i]];
			const struct py_task *task = py_async_task(a, at);

			fputs(k ? " -> " : "", out);
			esc_put(out, task ? task->name : "?", ESC_NAME, 0);
			if (addr)
				fprintf(out, " 0x%llx", (unsigned long long)at);
		}
		fputc('\n', out);
	}
}

void report_text_async(FILE *out, const struct collection *c)
{
	struct tree t;
	size_t i;

	memset(&t, 0, sizeof(t));
	t.out = out;
	t.c = c;
	t.a = &c->async;
	t.glyph = utf8_terminal(out) ? box_glyphs : ascii_glyphs;
	/* Tasks are told apart by index (one per address, the readers'
	 * task_index), not looked up by address. */
	t.shown = xcalloc(t.a->ntasks ? t.a->ntasks : 1, sizeof(*t.shown));
	build_children(&t);
	build_holds(&t);
	if (t.a->copied_at_fork)
		fputs("\nThis process is a child multiprocessing forked: its "
		      "tasks are copies of its parent's at the fork, which it "
		      "never runs.\n", out);
	if (t.a->ntasks)
		print_loops(&t);
	if (t.a->ncycles)
		fputc('\n', out);
	print_cycles(out, t.a);
	report_text_failed_tasks(out, c);
	report_text_orphans(out, c, c->opt.locals);
	for (i = 0; i < t.a->ntasks; i++)
		free(t.children[i]);
	free(t.children);
	free(t.nchildren);
	free(t.group_next);
	free(t.holds);
	free(t.shown);
}

static void dot_escape(FILE *out, const char *s)
{
	esc_put(out, s, ESC_DOT, 0);
}

void report_dot(FILE *out, const struct collection *c)
{
	const struct py_async *a = &c->async;
	size_t i, k;

	fprintf(out, "digraph coroscope {\n"
		"  label=\"await graph of process %d\";\n"
		"  node [fontname=\"monospace\"];\n", c->pid);
	for (i = 0; i < a->ntasks; i++) {
		const struct py_task *t = &a->tasks[i];

		uint64_t from = t->addr;

		fprintf(out, "  \"0x%llx\" [shape=box, style=bold, label=\"",
			(unsigned long long)t->addr);
		dot_escape(out, t->name);
		if (t->framework)
			fprintf(out, " [%s]", t->framework);
		fputs("\"];\n", out);
		/* the task runs its outermost coroutine, which awaits the next */
		for (k = t->nstack; k-- > 0;) {
			const struct py_gen *g = &a->gens[t->stack[k]];

			fprintf(out, "  \"0x%llx\" [shape=ellipse, label=\"",
				(unsigned long long)g->addr);
			dot_escape(out, g->qualname);
			if (g->has_frame)
				fprintf(out, ":%d", g->frame.line);
			fprintf(out, "\"];\n  \"0x%llx\" -> \"0x%llx\" [label=\"%s\"];\n",
				(unsigned long long)from,
				(unsigned long long)g->addr,
				from == t->addr ? "runs" : "awaits");
			from = g->addr;
		}
		if (t->waiter && !py_async_task(a, t->waiter)) {
			fprintf(out, "  \"0x%llx\" [shape=diamond, label=\"",
				(unsigned long long)t->waiter);
			dot_escape(out, t->waiter_type);
			fputs("\"];\n", out);
		}
		if (t->waiter)
			fprintf(out, "  \"0x%llx\" -> \"0x%llx\" [label=\"awaits\"];\n",
				(unsigned long long)from,
				(unsigned long long)t->waiter);
		/* awaits through gather, TaskGroup, wait...: task to task */
		for (k = 0; k < t->nawaited_by; k++) {
			const struct py_task *p = py_async_task(a, t->awaited_by[k]);

			if (p && p->waiter == t->addr)
				continue;  /* drawn from its innermost frame */
			fprintf(out, "  \"0x%llx\" -> \"0x%llx\" [label=\"awaits\", style=dashed];\n",
				(unsigned long long)t->awaited_by[k],
				(unsigned long long)t->addr);
		}
	}
	for (i = 0; i < a->ngens; i++) {
		const struct py_gen *g = &a->gens[i];

		if (g->task || !g->awaiting)
			continue;
		fprintf(out, "  \"0x%llx\" [shape=ellipse, label=\"",
			(unsigned long long)g->addr);
		dot_escape(out, g->qualname);
		fprintf(out, "\"];\n  \"0x%llx\" -> \"0x%llx\" [label=\"awaits\"];\n",
			(unsigned long long)g->addr,
			(unsigned long long)g->awaiting);
	}
	report_dot_greenlets(out, c);
	fputs("}\n", out);
}
