/*
 * The process tree of a command `coroscope run` watches, read from /proc:
 * the command, coroscope's other children (orphans it adopted as a child
 * subreaper), the members of the command's process group, and every
 * process seen in the tree before that is still the same process.
 */
#ifndef COROSCOPE_CLI_RUN_TREE_H
#define COROSCOPE_CLI_RUN_TREE_H

#include <stddef.h>

/* One process, from /proc/PID/stat. */
struct proc_entry {
	int pid, ppid, pgid;
	char state;                /* 'R', 'S', 'Z'... */
	unsigned long long start;  /* start time: tells a reused pid apart */
};

struct proc_list {
	struct proc_entry *e;
	size_t n, alloc;
};

void proc_list_add(struct proc_list *l, const struct proc_entry *e);
void proc_list_release(struct proc_list *l);

/*
 * The tree of command `child` (also its process group) now, in tree
 * order (the command, then its descendants breadth first, then whatever
 * else belongs), without coroscope (`self`) itself.  Zombies are
 * included.  known is the tree as last seen: read, then replaced.
 */
void run_tree_collect(int self, int child, struct proc_list *known,
		      struct proc_list *tree);

/* 1 when a member of tree is not a zombie. */
int run_tree_alive(const struct proc_list *tree);

#endif
