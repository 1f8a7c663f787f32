#include "cli/alike_lines.h"

#include <stdlib.h>
#include <string.h>

#include "cli/escape.h"
#include "cli/natural_order.h"
#include "common/strbuf.h"
#include "common/banned.h"

struct keyed {
	const char *key;
	size_t i;
};

/* By key, then by position: a run of equal keys starts with its first
 * item. */
static int keyed_cmp(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* lead[i]: the first item alike item i (i itself when none before it
 * is, or when its run is too short to group). */
static void find_leads(size_t *lead, char *const *keys, size_t n, int apart)
{
	struct keyed *k;
	size_t a, b, j;

	for (j = 0; j < n; j++)
		lead[j] = j;
	if (apart || n < ALIKE_LINES_MIN)
		return;
	k = xmallocarray(n, sizeof(*k));
	for (j = 0; j < n; j++) {
		k[j].key = keys[j];
		k[j].i = j;
	}
	qsort(k, n, sizeof(*k), keyed_cmp);
	/* Bounded: each turn moves a past one run. */
	for (a = 0; a < n; a = b) {
		for (b = a + 1; b < n && !strcmp(k[b].key, k[a].key); b++)
			;
		if (b - a >= ALIKE_LINES_MIN)
			for (j = a; j < b; j++)
				lead[k[j].i] = k[a].i;
	}
	free(k);
}

void alike_lines_group(struct alike_lines *g, char **keys, size_t n,
		       int apart)
{
	size_t *lead = xmallocarray(n ? n : 1, sizeof(*lead));
	size_t *fill = xcalloc(n ? n : 1, sizeof(*fill));
	size_t i, at = 0;

	memset(g, 0, sizeof(*g));
	g->keys = keys;
	g->nkeys = n;
	find_leads(lead, keys, n, apart);
	/* fill[leader]: its group's size, then where its next member goes */
	for (i = 0; i < n; i++)
		fill[lead[i]]++;
	g->first = xmallocarray(n + 1, sizeof(*g->first));
	for (i = 0; i < n; i++) {
		if (lead[i] != i)
			continue;
		g->first[g->ngroups++] = at;
		at += fill[i];
		fill[i] = g->first[g->ngroups - 1];
	}
	g->first[g->ngroups] = at;
	g->member = xmallocarray(n ? n : 1, sizeof(*g->member));
	for (i = 0; i < n; i++)
		g->member[fill[lead[i]]++] = i;
	free(fill);
	free(lead);
}

void alike_lines_release(struct alike_lines *g)
{
	size_t i;

	for (i = 0; i < g->nkeys; i++)
		free(g->keys[i]);
	free(g->keys);
	free(g->member);
	free(g->first);
	memset(g, 0, sizeof(*g));
}

void alike_lines_key_str(struct strbuf *sb, const char *s)
{
	strbuf_addf(sb, "%zu:%s", s ? strlen(s) : 0, s ? s : "");
}

/* One member's name in the style's quotes ("?" for a task without). */
static void add_name(struct strbuf *sb, const char *name, int has_id,
		     enum alike_style style)
{
	int paren = style == ALIKE_GRAPH && has_id;
	const char *open = style == ALIKE_QUOTED ? "\"" : paren ? "(" : "'";
	const char *close = style == ALIKE_QUOTED ? "\"" : paren ? ")" : "'";

	if (!name && has_id)
		return;
	strbuf_addf(sb, "%s%s", has_id ? " " : "", open);
	if (style == ALIKE_WATCH)
		esc_add(sb, name, ESC_NAME, 0);
	else
		esc_add_name_raw(sb, name);
	strbuf_addstr(sb, close);
}

/*
 * The members a line names, into pick[] (ALIKE_LINES_NAMED at most; the
 * count).  Those with ids (threads, generators) in the caller's order,
 * as the dump lists them; tasks and greenlets, known by name alone, the
 * first in counting order (cli/natural_order.h), as the dump's range
 * "Task-2 .. Task-10001" starts: in the heap walk's order, 10,000 tasks
 * read "'Task-9', 'Task-3', ...".  Ties keep the caller's order.
 */
static size_t pick_named(const unsigned long long *ids,
			 const char *const *names, size_t n, size_t *pick)
{
	size_t k, j, npick = 0;

	if (ids || !names) {
		for (k = 0; k < n && k < ALIKE_LINES_NAMED; k++)
			pick[k] = k;
		return k;
	}
	/* Bounded: n members, each placed among ALIKE_LINES_NAMED. */
	for (k = 0; k < n; k++) {
		j = npick;
		while (j > 0 && natural_cmp(names[k], names[pick[j - 1]]) < 0)
			j--;
		if (j >= ALIKE_LINES_NAMED)
			continue;
		if (npick < ALIKE_LINES_NAMED)
			npick++;
		memmove(pick + j + 1, pick + j, (npick - 1 - j) * sizeof(*pick));
		pick[j] = k;
	}
	return npick;
}

void alike_lines_members(struct strbuf *sb, const unsigned long long *ids,
			 const char *const *names, size_t n,
			 enum alike_style style)
{
	size_t pick[ALIKE_LINES_NAMED], npick = pick_named(ids, names, n, pick);
	size_t k;

	for (k = 0; k < npick; k++) {
		if (k)
			strbuf_addstr(sb, ", ");
		if (ids)
			strbuf_addf(sb, style == ALIKE_ADDRESS ? "0x%llx" :
				    "%llu", ids[pick[k]]);
		if (names)
			add_name(sb, names[pick[k]], ids != NULL, style);
	}
	if (n > ALIKE_LINES_NAMED)
		strbuf_addf(sb, " and %zu more",
			    n - (size_t)ALIKE_LINES_NAMED);
}
