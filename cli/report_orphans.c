/*
 * The text report's section of the generators and coroutines that no
 * task owns: chains from their roots (the ones no other orphan awaits),
 * so that every link points to a line that is shown, identical chains
 * grouped, so a thousand alike take one entry.
 */
#include "cli/report_orphans.h"

#include <stdlib.h>
#include <string.h>

#include "cli/escape.h"
#include "cli/report_graph.h"
#include "common/addrmap.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "readers/waitgraph.h"
#include "common/banned.h"

/* One chain of orphans, root first, and how many alike it stands for. */
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

/* "  held open by a `with` of thread 12 (MainThread) at app.py:14 in
 * main": a generator-based context manager's generator, which goes on
 * when that block ends (readers/waitgraph.h). */
static void print_entered(FILE *out, const struct collection *c,
			  const struct py_gen *g)
{
	const struct wg_entered *e =
		py_waitgraph_entered_of(&c->graph, (size_t)(g - c->async.gens));
	struct strbuf sb;

	if (!e)
		return;
	strbuf_init(&sb);
	strbuf_addstr(&sb, "  held open by a `with` of ");
	graph_add_label(&sb, c, e->node, GRAPH_ESCAPED);
	strbuf_addstr(&sb, " at ");
	graph_add_place_line(&sb, e->at, e->line > 0 ? e->line : e->at->line,
			     GRAPH_ESCAPED);
	fputs(sb.buf, out);
	strbuf_release(&sb);
}

static void print_gen_line(FILE *out, const struct collection *c,
			   const struct py_gen *g, size_t count, int last,
			   int locals)
{
	const struct py_async *a = &c->async;
	size_t j;

	fprintf(out, "%-9s %-15s ", py_gen_state_name(g->state),
		py_code_kind_name(g->kind));
	esc_put(out, g->qualname, ESC_NAME, 0);
	fputs("  ", out);
	esc_put(out, g->code ? g->code->filename : "?", ESC_NAME, 0);
	fputc(':', out);
	if (g->has_frame && g->frame.line >= 0)
		fprintf(out, "%d", g->frame.line);
	else
		fputc('-', out);
	if (count == 1) {
		fprintf(out, "  0x%llx", (unsigned long long)g->addr);
		print_entered(out, c, g);
	}
	/* The end of a chain: what it waits on, if that is not a line of
	 * this section (a task's coroutine, a future). */
	if (last && g->awaiting) {
		uintptr_t k = (uintptr_t)addrmap_get(&a->gen_index, g->awaiting,
						      NULL);
		const struct py_task *t = k ? py_async_task(a, a->gens[k - 1].task)
					    : py_async_task(a, g->awaiting);

		if (k && t) {
			fputs("  awaits ", out);
			esc_put(out, a->gens[k - 1].qualname, ESC_NAME, 0);
			fputs(" of task ", out);
			esc_put(out, t->name, ESC_NAME, 0);
		} else if (t) {
			fputs("  awaits task ", out);
			esc_put(out, t->name, ESC_NAME, 0);
		} else if (count == 1)
			fprintf(out, "  awaits 0x%llx",
				(unsigned long long)g->awaiting);
	}
	fputc('\n', out);
	for (j = 0; locals && g->has_frame && j < g->frame.nlocals; j++)
		report_text_local(out, "      ", &g->frame.locals[j]);
}

/* Not owned by a task's chain, nor driven by one (tornado). */
static int orphan(const struct collection *c, size_t i)
{
	return !c->async.gens[i].task &&
	       !py_waitgraph_drive_of(&c->graph, i);
}

void report_text_orphans(FILE *out, const struct collection *c, int locals)
{
	const struct py_async *a = &c->async;
	struct gen_chain *chains = NULL;
	size_t nchains = 0, alloc = 0, i, j, k, total = 0, ngroups;
	char *awaited, *taken, *orphans;

	if (a->ngens_owned >= a->ngens)
		return;   /* every one has its task */
	/* One pass over the generators (6.4 MB of them at 50k), which
	 * mostly finds none: the rest goes by these bytes. */
	orphans = xcalloc(a->ngens ? a->ngens : 1, 1);
	for (i = 0; i < a->ngens; i++)
		if (orphan(c, i)) {
			orphans[i] = 1;
			total++;
		}
	if (!total) {
		free(orphans);
		return;
	}
	awaited = xcalloc(a->ngens, 1);
	taken = xcalloc(a->ngens, 1);
	for (i = 0; i < a->ngens; i++) {
		const struct py_gen *next;

		if (!orphans[i])
			continue;
		next = orphan_at(a, a->gens[i].awaiting);
		if (next && next != &a->gens[i])
			awaited[next - a->gens] = 1;
	}
	/* Roots first; what is left is only reachable through a cycle. */
	for (k = 0; k < 2; k++)
		for (i = 0; i < a->ngens; i++) {
			if (!orphans[i] || taken[i] || (!k && awaited[i]))
				continue;
			chains = xgrow(chains, &alloc, nchains + 1, sizeof(*chains));
			chain_from(a, &a->gens[i], taken, &chains[nchains++]);
		}
	free(orphans);
	free(awaited);
	free(taken);
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
			print_gen_line(out, c, ch->v[j], ch->count,
				       j + 1 == ch->n, locals);
		}
		free(ch->v);
	}
	free(chains);
}
