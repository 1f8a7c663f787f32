#include "cli/run_tree.h"

#include <stdlib.h>
#include <string.h>

#include "attach/live.h"
#include "common/procfs.h"
#include "common/strbuf.h"
#include "common/banned.h"

/* Bounds on the walks over /proc. */
#define MAX_PROCS (1 << 22)
#define MAX_TREE 4096

static int read_stat(int pid, struct proc_entry *e)
{
	struct procfs_stat st;

	if (procfs_stat(pid, 0, &st) < 0)
		return -1;
	memset(e, 0, sizeof(*e));
	e->pid = pid;
	e->state = st.state;
	/* A zombie main thread, other threads running on (it called
	 * pthread_exit()): the process is alive. */
	if (procfs_state_dead(st.state) && live_pid_alive(pid))
		e->state = 'S';
	e->ppid = st.ppid;
	e->pgid = st.pgid;
	e->start = st.starttime;
	return 0;
}

void proc_list_add(struct proc_list *l, const struct proc_entry *e)
{
	l->e = xgrow(l->e, &l->alloc, l->n + 1, sizeof(*l->e));
	l->e[l->n++] = *e;
}

void proc_list_release(struct proc_list *l)
{
	free(l->e);
	memset(l, 0, sizeof(*l));
}

/* Every process of the system (none when /proc cannot be listed). */
static void scan_procs(struct proc_list *all)
{
	struct proc_entry e;
	int *pids = NULL;
	size_t i, n = 0;

	all->n = 0;
	if (procfs_list_ids("/proc", MAX_PROCS, 0, &pids, &n) < 0)
		return;
	for (i = 0; i < n; i++)
		if (read_stat(pids[i], &e) == 0)
			proc_list_add(all, &e);
	free(pids);
}

static int known_same(const struct proc_list *known,
		      const struct proc_entry *e)
{
	size_t i;

	for (i = 0; i < known->n; i++)
		if (known->e[i].pid == e->pid && known->e[i].start == e->start)
			return 1;
	return 0;
}

/* Breadth first from tree->e[*q] on: tree doubles as the queue, in[]
 * marks what all holds that is in the tree already. */
static void add_descendants(struct proc_list *tree,
			    const struct proc_list *all, unsigned char *in,
			    size_t *q)
{
	size_t k;

	for (; *q < tree->n && tree->n < MAX_TREE; (*q)++) {
		int parent = tree->e[*q].pid;

		for (k = 0; k < all->n && tree->n < MAX_TREE; k++) {
			if (in[k] || all->e[k].ppid != parent)
				continue;
			in[k] = 1;
			proc_list_add(tree, &all->e[k]);
		}
	}
}

static int is_seed(int pass, const struct proc_entry *e, int self, int child,
		   const struct proc_list *known)
{
	switch (pass) {
	case 0:
		return e->pid == child;
	case 1:
		return e->ppid == self;
	case 2:
		return e->pgid == child;
	default:
		return known_same(known, e);
	}
}

void run_tree_collect(int self, int child, struct proc_list *known,
		      struct proc_list *tree)
{
	struct proc_list all = { 0 };
	unsigned char *in;
	size_t i, pass, q = 0;

	tree->n = 0;
	scan_procs(&all);
	in = xcalloc(all.n ? all.n : 1, 1);
	for (i = 0; i < all.n; i++)
		if (all.e[i].pid == self)
			in[i] = 1;
	/*
	 * Seeds in order of importance: the command, coroscope's other
	 * children (orphans it adopted), the command's group, processes
	 * seen in the tree before.  Each seed's subtree is added before
	 * the next seed, so that the listing reads as a tree.
	 */
	for (pass = 0; pass < 4; pass++) {
		for (i = 0; i < all.n && tree->n < MAX_TREE; i++) {
			if (in[i] || !is_seed((int)pass, &all.e[i], self, child,
					      known))
				continue;
			in[i] = 1;
			proc_list_add(tree, &all.e[i]);
			add_descendants(tree, &all, in, &q);
		}
	}
	free(in);
	proc_list_release(&all);
	known->n = 0;
	for (i = 0; i < tree->n; i++)
		proc_list_add(known, &tree->e[i]);
}

int run_tree_alive(const struct proc_list *tree)
{
	size_t i;

	for (i = 0; i < tree->n; i++)
		if (tree->e[i].state != 'Z')
			return 1;
	return 0;
}
