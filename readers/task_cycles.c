#include "readers/task_cycles.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "readers/cycles.h"
#include "common/banned.h"

/*
 * Await cycles: task A awaits task B when A is in B's awaited_by.  The
 * graph goes to readers/cycles.c as task indexes, each task's out-edges
 * in the order of the tasks they lead to.
 */
void py_async_find_cycles(struct py_async *a)
{
	size_t *first, *to, *fill, i, j, nedges = 0;
	struct cycle_graph g;
	struct cycle_list l;

	if (!a->ntasks)
		return;
	first = xcalloc(a->ntasks + 1, sizeof(*first));
	fill = xcalloc(a->ntasks, sizeof(*fill));
	for (i = 0; i < a->ntasks; i++)
		for (j = 0; j < a->tasks[i].nawaited_by; j++) {
			const struct py_task *w = py_async_task(a,
						a->tasks[i].awaited_by[j]);

			if (w) {
				first[w - a->tasks + 1]++;
				nedges++;
			}
		}
	for (i = 0; i < a->ntasks; i++)
		first[i + 1] += first[i];
	to = xmalloc((nedges ? nedges : 1) * sizeof(*to));
	for (i = 0; i < a->ntasks; i++)
		for (j = 0; j < a->tasks[i].nawaited_by; j++) {
			const struct py_task *w = py_async_task(a,
						a->tasks[i].awaited_by[j]);
			size_t k = w ? (size_t)(w - a->tasks) : 0;

			if (w)
				to[first[k] + fill[k]++] = i;
		}
	g.n = a->ntasks;
	g.first = first;
	g.to = to;
	cycle_list_init(&l);
	cycles_find(&g, &l);
	a->cycles = xcalloc(l.n ? l.n : 1, sizeof(*a->cycles));
	a->cycle_len = xcalloc(l.n ? l.n : 1, sizeof(*a->cycle_len));
	for (i = 0; i < l.n; i++) {
		a->cycles[i] = xmalloc((l.len[i] ? l.len[i] : 1) * sizeof(uint64_t));
		for (j = 0; j < l.len[i]; j++)
			a->cycles[i][j] = a->tasks[l.cycles[i][j]].addr;
		a->cycle_len[i] = l.len[i];
	}
	a->ncycles = l.n;
	cycle_list_release(&l);
	free(first);
	free(fill);
	free(to);
}

/* Longer cycles are named with addresses without comparing names. */
#define CYCLE_NAMES_COMPARED 64

int py_async_cycle_names_clash(const struct py_async *a, size_t i)
{
	size_t len = i < a->ncycles ? a->cycle_len[i] : 0, k, m;
	const struct py_task *tk, *tm;

	if (len > CYCLE_NAMES_COMPARED)
		return 1;
	for (k = 0; k < len; k++) {
		tk = py_async_task(a, a->cycles[i][k]);
		if (!tk || !tk->name)
			return 1;
		for (m = k + 1; m < len; m++) {
			tm = py_async_task(a, a->cycles[i][m]);
			if (!tm || !tm->name || !strcmp(tk->name, tm->name))
				return 1;
		}
	}
	return 0;
}
