/*
 * The "second stack" in text and Graphviz form: an await tree per event
 * loop (tasks, their coroutine frames, and under the innermost frame the
 * tasks it awaits through gather or a TaskGroup), await cycles by name,
 * and the generators and coroutines that no task owns, grouped.
 */
#include "cli/report.h"

#include <stdlib.h>
#include <string.h>

#include "cli/escape.h"
#include "common/addrmap.h"
#include "common/strbuf.h"
#include "common/banned.h"

/*
 * Indentation stops growing at this many levels: an await chain of
 * 10,000 tasks, or 1,000 async generators deep, stays readable and its
 * size linear.  Deeper lines say their depth instead.
 */
#define TREE_MAX_INDENT 16

struct tree {
	FILE *out;
	const struct collection *c;
	const struct py_async *a;
	struct addrmap shown;        /* tasks already printed */
	size_t **children;           /* per task: indexes of tasks it awaits */
	size_t *nchildren;
};

/* One level per depth up to TREE_MAX_INDENT, then "(depth N) ". */
static void indent(FILE *out, int depth)
{
	int i;

	for (i = 0; i < depth && i < TREE_MAX_INDENT; i++)
		fputs("    ", out);
	if (depth > TREE_MAX_INDENT)
		fprintf(out, "(depth %d) ", depth);
}

static void task_line(struct tree *t, const struct py_task *task, int depth)
{
	indent(t->out, depth);
	fputs("(T) ", t->out);
	esc_text(t->out, task->name);
	fprintf(t->out, " 0x%llx %s", (unsigned long long)task->addr,
		task->running ? "running" : "pending");
	if (task->framework)
		fprintf(t->out, " [%s]", task->framework);
	if (task->waiter && !py_async_task(t->a, task->waiter)) {
		fputs(", awaits ", t->out);
		esc_text(t->out, task->waiter_type);
		fprintf(t->out, " 0x%llx", (unsigned long long)task->waiter);
	}
	fputc('\n', t->out);
}

/* The task's coroutine frames, outermost first, each one level deeper
 * than the last: the depth of the innermost. */
static int print_frames(struct tree *t, const struct py_task *task, int d)
{
	size_t i, k;

	for (i = task->nstack; i-- > 0;) {
		const struct py_gen *g = &t->a->gens[task->stack[i]];

		if (!g->has_frame)
			continue;
		indent(t->out, ++d);
		esc_text(t->out, g->qualname);
		fputs("  ", t->out);
		esc_text(t->out, g->frame.code->filename);
		if (g->frame.line >= 0)
			fprintf(t->out, ":%d\n", g->frame.line);
		else
			fputs(":?\n", t->out);
		for (k = 0; t->c->opt.locals && k < g->frame.nlocals; k++) {
			indent(t->out, d);
			report_text_local(t->out, "    ", &g->frame.locals[k]);
		}
	}
	return d;
}

/* A task on the walk of print_task(). */
struct tree_step {
	size_t idx;
	int child_depth;   /* where the tasks it awaits go */
	size_t next;       /* its next child to print */
};

/*
 * The task and, depth first, the tasks it awaits: each printed once (a
 * task met again says "shown above").  Iterative, so that a chain of any
 * length prints whole and in order; the walk holds each task at most
 * once, so it needs no more steps than there are tasks.
 */
static void print_task(struct tree *t, size_t root, int depth)
{
	struct tree_step *stack;
	size_t n = 0;

	stack = xmalloc((t->a->ntasks + 1) * sizeof(*stack));
	stack[n++] = (struct tree_step){ root, depth, 0 };
	stack[0].next = (size_t)-1;
	while (n) {
		struct tree_step *top = &stack[n - 1];
		const struct py_task *task = &t->a->tasks[top->idx];

		if (top->next == (size_t)-1) {
			if (!addrmap_add(&t->shown, task->addr)) {
				indent(t->out, top->child_depth);
				fputs("(T) ", t->out);
				esc_text(t->out, task->name);
				fprintf(t->out, " 0x%llx (shown above)\n",
					(unsigned long long)task->addr);
				n--;
				continue;
			}
			task_line(t, task, top->child_depth);
			top->child_depth = print_frames(t, task,
							top->child_depth) + 1;
			top->next = 0;
		}
		if (top->next >= t->nchildren[top->idx] || n > t->a->ntasks) {
			n--;
			continue;
		}
		stack[n] = (struct tree_step){
			t->children[top->idx][top->next++], top->child_depth,
			(size_t)-1 };
		n++;
	}
	free(stack);
}

static const char *thread_name_of(const struct collection *c, int tid)
{
	size_t i;

	for (i = 0; i < c->snap.nthreads; i++)
		if (c->snap.threads[i].tid == tid)
			return c->snap.threads[i].name;
	return NULL;
}

static void build_children(struct tree *t)
{
	const struct py_async *a = t->a;
	size_t i, j;

	t->children = xcalloc(a->ntasks ? a->ntasks : 1, sizeof(*t->children));
	t->nchildren = xcalloc(a->ntasks ? a->ntasks : 1, sizeof(*t->nchildren));
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

static void print_loops(struct tree *t)
{
	const struct py_async *a = t->a;
	struct addrmap loops_done;
	size_t i, j, n;

	addrmap_init(&loops_done);
	for (i = 0; i < a->ntasks; i++) {
		uint64_t loop = a->tasks[i].loop;
		const char *tname;

		/* tasks without a loop (0) form one group too */
		if (!addrmap_add(&loops_done, loop ? loop : 1))
			continue;
		for (n = 0, j = 0; j < a->ntasks; j++)
			n += a->tasks[j].loop == loop;
		fprintf(t->out, "\nTasks of %s 0x%llx",
			a->tasks[i].framework ? "trio run" : "loop",
			(unsigned long long)loop);
		if (a->tasks[i].tid) {
			fprintf(t->out, " (thread %d", a->tasks[i].tid);
			tname = thread_name_of(t->c, a->tasks[i].tid);
			if (tname) {
				fputs(" \"", t->out);
				esc_text(t->out, tname);
				fputc('"', t->out);
			}
			fputc(')', t->out);
		}
		fprintf(t->out, ": %zu pending\n", n);
		/* roots first: tasks nobody awaits */
		for (j = 0; j < a->ntasks; j++)
			if (a->tasks[j].loop == loop && !a->tasks[j].nawaited_by)
				print_task(t, j, 1);
		/* what is left is only reachable through a cycle */
		for (j = 0; j < a->ntasks; j++) {
			int found;

			addrmap_get(&t->shown, a->tasks[j].addr, &found);
			if (a->tasks[j].loop == loop && !found)
				print_task(t, j, 1);
		}
	}
	addrmap_release(&loops_done);
}

static void print_cycles(FILE *out, const struct py_async *a)
{
	size_t i, k;

	for (i = 0; i < a->ncycles; i++) {
		fputs("await cycle: ", out);
		for (k = 0; k <= a->cycle_len[i]; k++) {
			const struct py_task *task =
				py_async_task(a, a->cycles[i][k % a->cycle_len[i]]);

			fputs(k ? " -> " : "", out);
			esc_text(out, task ? task->name : "?");
		}
		fputc('\n', out);
	}
}

/*
 * Generators no task owns, as chains from their roots (the ones no other
 * orphan awaits) so that every link points to a line that is shown;
 * identical chains are grouped, so a thousand alike take one entry.
 */
struct gen_chain {
	const struct py_gen **v;   /* root first */
	size_t n;
	size_t count;
};

static int same_group(const struct py_gen *x, const struct py_gen *y)
{
	return x->state == y->state && x->kind == y->kind &&
	       !strcmp(x->qualname, y->qualname) &&
	       (x->code == y->code) &&
	       (x->has_frame ? x->frame.line : -1) ==
	       (y->has_frame ? y->frame.line : -1);
}

static int by_group_key(const struct py_gen *x, const struct py_gen *y)
{
	int lx = x->has_frame ? x->frame.line : -1;
	int ly = y->has_frame ? y->frame.line : -1;

	if (x->code != y->code)
		return (uintptr_t)x->code < (uintptr_t)y->code ? -1 : 1;
	if (lx != ly)
		return lx < ly ? -1 : 1;
	if (x->state != y->state)
		return x->state < y->state ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return strcmp(x->qualname, y->qualname);
}

static int same_chain(const struct gen_chain *x, const struct gen_chain *y)
{
	size_t i;

	if (x->n != y->n)
		return 0;
	for (i = 0; i < x->n; i++)
		if (!same_group(x->v[i], y->v[i]))
			return 0;
	/* where the chain ends must be alike too */
	return !x->v[x->n - 1]->awaiting == !y->v[y->n - 1]->awaiting;
}

static int by_chain_key(const void *pa, const void *pb)
{
	const struct gen_chain *x = pa, *y = pb;
	size_t i;
	int c;

	for (i = 0; i < x->n && i < y->n; i++)
		if ((c = by_group_key(x->v[i], y->v[i])))
			return c;
	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	return !x->v[x->n - 1]->awaiting - !y->v[y->n - 1]->awaiting;
}

static int by_count(const void *pa, const void *pb)
{
	const struct gen_chain *a = pa, *b = pb;

	return a->count < b->count ? 1 : a->count > b->count ? -1 : 0;
}

/* The orphan generator at addr, or NULL. */
static const struct py_gen *orphan_at(const struct py_async *a, uint64_t addr)
{
	uintptr_t k = addr ? (uintptr_t)addrmap_get(&a->gen_index, addr, NULL) : 0;

	return k && !a->gens[k - 1].task ? &a->gens[k - 1] : NULL;
}

/* Follow the awaits from root while they reach orphans not yet taken. */
static void chain_from(const struct py_async *a, const struct py_gen *root,
		       char *taken, struct gen_chain *ch)
{
	const struct py_gen *g = root;
	size_t alloc = 0;

	memset(ch, 0, sizeof(*ch));
	ch->count = 1;
	while (g && !taken[g - a->gens] && ch->n < PY_MAX_CHAIN) {
		taken[g - a->gens] = 1;
		ch->v = xgrow(ch->v, &alloc, ch->n + 1, sizeof(*ch->v));
		ch->v[ch->n++] = g;
		g = orphan_at(a, g->awaiting);
	}
}

static void print_gen_line(FILE *out, const struct py_async *a,
			   const struct py_gen *g, size_t count, int last,
			   int locals)
{
	size_t j;

	fprintf(out, "%-9s %-15s ", py_gen_state_name(g->state),
		py_code_kind_name(g->kind));
	esc_text(out, g->qualname);
	fputs("  ", out);
	esc_text(out, g->code ? g->code->filename : "?");
	fputc(':', out);
	if (g->has_frame && g->frame.line >= 0)
		fprintf(out, "%d", g->frame.line);
	else
		fputc('-', out);
	if (count == 1)
		fprintf(out, "  0x%llx", (unsigned long long)g->addr);
	/* The end of a chain: what it waits on, if that is not a line of
	 * this section (a task's coroutine, a future). */
	if (last && g->awaiting) {
		uintptr_t k = (uintptr_t)addrmap_get(&a->gen_index, g->awaiting,
						      NULL);
		const struct py_task *t = k ? py_async_task(a, a->gens[k - 1].task)
					    : py_async_task(a, g->awaiting);

		if (k && t) {
			fputs("  awaits ", out);
			esc_text(out, a->gens[k - 1].qualname);
			fputs(" of task ", out);
			esc_text(out, t->name);
		} else if (t) {
			fputs("  awaits task ", out);
			esc_text(out, t->name);
		} else if (count == 1)
			fprintf(out, "  awaits 0x%llx",
				(unsigned long long)g->awaiting);
	}
	fputc('\n', out);
	for (j = 0; locals && g->has_frame && j < g->frame.nlocals; j++)
		report_text_local(out, "      ", &g->frame.locals[j]);
}

static void print_orphans(FILE *out, const struct py_async *a, int locals)
{
	struct gen_chain *chains = NULL;
	size_t nchains = 0, alloc = 0, i, j, k, total = 0, ngroups;
	char *awaited, *taken;

	awaited = xcalloc(a->ngens ? a->ngens : 1, 1);
	taken = xcalloc(a->ngens ? a->ngens : 1, 1);
	for (i = 0; i < a->ngens; i++) {
		const struct py_gen *next;

		if (a->gens[i].task)
			continue;
		total++;
		next = orphan_at(a, a->gens[i].awaiting);
		if (next && next != &a->gens[i])
			awaited[next - a->gens] = 1;
	}
	/* Roots first; what is left is only reachable through a cycle. */
	for (k = 0; k < 2; k++)
		for (i = 0; i < a->ngens; i++) {
			if (a->gens[i].task || taken[i] || (!k && awaited[i]))
				continue;
			chains = xgrow(chains, &alloc, nchains + 1, sizeof(*chains));
			chain_from(a, &a->gens[i], taken, &chains[nchains++]);
		}
	free(awaited);
	free(taken);
	if (!total) {
		free(chains);
		return;
	}
	/* Alike chains become neighbours, then one entry with a count; with
	 * --locals each stands alone (their locals differ). */
	ngroups = nchains;
	if (!locals) {
		qsort(chains, nchains, sizeof(*chains), by_chain_key);
		for (i = 0, ngroups = 0; i < nchains; i = j) {
			for (j = i + 1; j < nchains &&
			     same_chain(&chains[i], &chains[j]); j++)
				free(chains[j].v);
			chains[i].count = j - i;
			chains[ngroups++] = chains[i];
		}
	}
	qsort(chains, ngroups, sizeof(*chains), by_count);
	fprintf(out, "\nGenerators and coroutines not owned by a task (%zu):\n",
		total);
	for (i = 0; i < ngroups; i++) {
		const struct gen_chain *ch = &chains[i];

		fputs("  ", out);
		if (ch->count > 1)
			fprintf(out, "%zu x ", ch->count);
		for (j = 0; j < ch->n; j++) {
			if (j)
				fputs("      -> ", out);
			print_gen_line(out, a, ch->v[j], ch->count,
				       j + 1 == ch->n, locals);
		}
		free(ch->v);
	}
	free(chains);
}

void report_text_async(FILE *out, const struct collection *c)
{
	struct tree t;
	size_t i;

	memset(&t, 0, sizeof(t));
	t.out = out;
	t.c = c;
	t.a = &c->async;
	addrmap_init(&t.shown);
	build_children(&t);
	if (t.a->ntasks)
		print_loops(&t);
	if (t.a->ncycles)
		fputc('\n', out);
	print_cycles(out, t.a);
	print_orphans(out, t.a, c->opt.locals);
	for (i = 0; i < t.a->ntasks; i++)
		free(t.children[i]);
	free(t.children);
	free(t.nchildren);
	addrmap_release(&t.shown);
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
	fputs("}\n", out);
}
