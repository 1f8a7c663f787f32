/*
 * The text report's Waits section (cli/report_graph.c draws the rest of
 * the graph): a row for each thread or task the wait-for graph has wait
 * for something, alike ones merged into one row, each with its timers.
 */
#include "cli/report_graph.h"

#include <stdlib.h>
#include <string.h>

#include "cli/escape.h"
#include "cli/natural_order.h"
#include "cli/report.h"
#include "cli/thread_alike.h"
#include "common/banned.h"

/*
 * One task or thread of the Waits section.  Tasks that wait in the same
 * place for the same object share a row, and so do threads, THREAD_ALIKE_MIN
 * or more of them of one interpreter (two stay apart, as in the Threads
 * section); never with --all, nor threads with --locals or of no known
 * kernel id.
 */
struct wait_row {
	char *key;      /* blame and wait: what makes rows alike */
	char *who;      /* label and blame of the first */
	char *what;     /* "waits for: ..." */
	size_t first;   /* node index of the first, for the order */
	size_t count;
	size_t last;    /* node index of the last alike */
	size_t *nodes;  /* a merged row's `count` nodes, in order */
};

static int row_by_key(const void *a, const void *b)
{
	const struct wait_row *x = a, *y = b;
	int d = strcmp(x->key, y->key);

	return d ? d : (x->first > y->first) - (x->first < y->first);
}

static int row_by_first(const void *a, const void *b)
{
	const struct wait_row *x = a, *y = b;

	return (x->first > y->first) - (x->first < y->first);
}

/* What makes node i's row alike another's, into key. */
static void row_key(struct strbuf *key, const struct collection *c,
		    size_t i, const char *what)
{
	const struct wg_node *n = &c->graph.nodes[i];

	if (c->opt.expand_all ||
	    (n->kind == WG_THREAD && (c->opt.locals ||
				      c->snap.threads[n->index].tid <= 0)))
		strbuf_addf(key, "%zu", i);
	else if (n->kind == WG_THREAD)  /* of one interpreter, as above */
		strbuf_addf(key, "thread %llx", (unsigned long long)
			    c->snap.threads[n->index].interp);
	else if (n->kind == WG_GREENLET)
		strbuf_addstr(key, "greenlet");
	graph_add_blame(key, c, i, GRAPH_ESCAPED);
	strbuf_addf(key, "\n%s", what);
}

static void row_free(struct wait_row *r)
{
	free(r->key);
	free(r->who);
	free(r->what);
	free(r->nodes);
}

/*
 * rows[from, to), one key's, merged into *into (from's row, which keeps
 * its place in the order).  Tasks and greenlets are shown as the first
 * and last of their labels in the order one counts them
 * (cli/natural_order.h; the labels differ only in the name): the row
 * takes the first one's label, and its last is the last one's node.
 */
static void row_merge(struct wait_row *into, struct wait_row *rows,
		      size_t from, size_t to, int thread)
{
	size_t k, lo = from, hi = from;
	char *who;

	for (k = from + 1; !thread && k < to; k++) {
		if (natural_cmp(rows[k].who, rows[lo].who) < 0)
			lo = k;
		if (natural_cmp(rows[k].who, rows[hi].who) > 0)
			hi = k;
	}
	who = rows[from].who;
	rows[from].who = rows[lo].who;
	rows[lo].who = who;
	*into = rows[from];
	into->count = to - from;
	into->last = thread ? rows[to - 1].last : rows[hi].last;
	/* (every member, for the row's ids and timers) */
	into->nodes = xcalloc(to - from, sizeof(*into->nodes));
	for (k = from; k < to; k++)
		into->nodes[k - from] = rows[k].first;
	for (k = from + 1; k < to; k++)
		row_free(&rows[k]);
}

/* The rows, alike tasks and threads merged; returns how many. */
static size_t wait_rows(const struct collection *c, struct wait_row **out)
{
	const struct py_waitgraph *g = &c->graph;
	struct wait_row *rows = xcalloc(g->nnodes ? g->nnodes : 1,
					sizeof(*rows));
	struct strbuf what, key, who;
	size_t i, e, k, n = 0, m = 0;

	for (i = 0; i < g->nnodes; i++) {
		if (g->nodes[i].kind == WG_OBJECT)
			continue;
		strbuf_init(&what);
		graph_add_wait(&what, c, i, GRAPH_ESCAPED);
		if (!what.len) {
			strbuf_release(&what);
			continue;
		}
		strbuf_init(&key);
		row_key(&key, c, i, what.buf);
		strbuf_init(&who);
		graph_add_label(&who, c, i, GRAPH_ESCAPED);
		graph_add_blame(&who, c, i, GRAPH_ESCAPED);
		rows[n].key = strbuf_detach(&key);
		rows[n].who = strbuf_detach(&who);
		rows[n].what = strbuf_detach(&what);
		rows[n].first = rows[n].last = i;
		rows[n].count = 1;
		rows[n].nodes = NULL;
		n++;
	}
	qsort(rows, n, sizeof(*rows), row_by_key);
	/* Each round takes one key's rows, [i, e). */
	for (i = 0; i < n; i = e) {
		int thread = g->nodes[rows[i].first].kind == WG_THREAD;

		for (e = i + 1; e < n && !strcmp(rows[e].key, rows[i].key);
		     e++)
			;
		if (thread && e - i < THREAD_ALIKE_MIN) {
			for (k = i; k < e; k++)
				rows[m++] = rows[k];
			continue;
		}
		row_merge(&rows[m++], rows, i, e, thread);
	}
	qsort(rows, m, sizeof(*rows), row_by_first);
	*out = rows;
	return m;
}

/* The sleeps' or timed waits' span of thread nodes nodes[0..n). */
static void add_row_threads_timer(struct strbuf *sb,
				  const struct collection *c,
				  const size_t *nodes, size_t n)
{
	int *tids = xmallocarray(n ? n : 1, sizeof(*tids));
	size_t k;

	for (k = 0; k < n; k++) {
		const struct wg_node *nd = &c->graph.nodes[nodes[k]];

		if (nd->kind != WG_THREAD || nd->index >= c->snap.nthreads)
			break;
		tids[k] = c->snap.threads[nd->index].tid;
	}
	if (k == n)
		report_add_threads_timer(sb, c, tids, n);
	free(tids);
}

/* "N threads at PLACE: TID (NAME), ..., TID": every kernel id, so that
 * one from top -H is found, and the first few names. */
static void thread_row(FILE *out, const struct collection *c,
		       const struct wait_row *r)
{
	struct strbuf sb;
	size_t k;

	strbuf_init(&sb);
	strbuf_addf(&sb, "%zu threads", r->count);
	graph_add_blame(&sb, c, r->first, GRAPH_ESCAPED);
	add_row_threads_timer(&sb, c, r->nodes, r->count);
	strbuf_addstr(&sb, ":");
	for (k = 0; k < r->count; k++) {
		const struct py_thread *t =
			&c->snap.threads[c->graph.nodes[r->nodes[k]].index];

		strbuf_addf(&sb, "%s %d", k ? "," : "", t->tid);
		if (t->name && k < THREAD_ALIKE_NAMES) {
			strbuf_addstr(&sb, " (");
			esc_add(&sb, t->name, ESC_NAME, 0);
			strbuf_addstr(&sb, ")");
		}
	}
	fprintf(out, "  %s\n    %s\n", sb.buf, r->what);
	strbuf_release(&sb);
}

/* What alike rows of node's kind are: "tasks", "greenlets". */
static const char *g_kind_plural(const struct collection *c, size_t node)
{
	return c->graph.nodes[node].kind == WG_GREENLET ? "greenlets" :
	       "tasks";
}

void report_text_waits(FILE *out, const struct collection *c)
{
	struct wait_row *rows;
	struct strbuf last;
	size_t i, n = wait_rows(c, &rows);

	for (i = 0; i < n; i++) {
		if (!i)
			fputs("\nWaits:\n", out);
		if (rows[i].nodes &&
		    c->graph.nodes[rows[i].first].kind == WG_THREAD) {
			thread_row(out, c, &rows[i]);
		} else if (rows[i].count > 1) {
			strbuf_init(&last);
			graph_add_label(&last, c, rows[i].last, GRAPH_ESCAPED);
			/* (the tasks' timers, as a span) */
			(void)graph_add_task_timers(&last, c, rows[i].nodes,
						    NULL, rows[i].count, 1);
			fprintf(out, "  %zu %s like %s .. %s\n    %s\n",
				rows[i].count,
				g_kind_plural(c, rows[i].first), rows[i].who,
				last.buf, rows[i].what);
			strbuf_release(&last);
		} else {
			/* (a task's timers, a thread's sleep or timeout) */
			strbuf_init(&last);
			(void)graph_add_task_timers(&last, c, &rows[i].first,
						    NULL, 1, 1);
			add_row_threads_timer(&last, c, &rows[i].first, 1);
			fprintf(out, "  %s%s\n    %s\n", rows[i].who,
				last.buf, rows[i].what);
			strbuf_release(&last);
		}
		row_free(&rows[i]);
	}
	free(rows);
}
