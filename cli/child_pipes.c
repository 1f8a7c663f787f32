#include "cli/child_pipes.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attach/memsrc.h"
#include "attach/regs.h"
#include "common/procfs.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

#define MAX_CHILDREN 64        /* processes of the graph looked at */
#define MAX_CHILD_THREADS 64   /* threads of one child asked */
#define MAX_OUR_FDS 4096       /* the target's fds looked through */
#define LINK_MAX_LEN 64        /* "pipe:[4026531840]" */
#define MAX_SIBLINGS 64        /* a parent's other children looked at */
#define CHILDREN_LIST_LEN 1024 /* of one thread's children file read */
/* How long a pipe is watched at least before "nothing was read from
 * it" is said: past a slow reader's pause (a line every 5 - 50 ms). */
#define UNREAD_WATCH_MS 200

int child_pipes_end(int pid, const char *pipe, int want)
{
	char dir[64], link[LINK_MAX_LEN];
	int *fds = NULL, mode, found = -1;
	size_t n = 0, i;

	/* fd 0 first: the listing's ids are pids' kind, never 0 (and a
	 * pipeline's reader has the pipe as its stdin) */
	if (procfs_fd(pid, 0, link, sizeof(link), &mode) == 0 &&
	    !strcmp(link, pipe) && mode == want)
		return 0;
	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	if (procfs_list_ids(dir, MAX_OUR_FDS, 0, &fds, &n) < 0)
		return -1;
	for (i = 0; i < n && found < 0; i++)
		if (procfs_fd(pid, fds[i], link, sizeof(link), &mode) == 0 &&
		    !strcmp(link, pipe) && mode == want)
			found = fds[i];
	free(fds);
	return found;
}

static int read_end(int pid, const char *pipe)
{
	return child_pipes_end(pid, pipe, O_RDONLY);
}

/*
 * A thread of child blocked on a pipe whose other end pid holds: writing
 * to it (looked for first: the deadlock proper), else, where reading
 * says a read is worth saying, reading from it.
 * Its fd into *fd, pid's into *ours, *writing which: 0, or -1 when none.
 * A thread idle in a read of a pipe of its own does not hide another
 * blocked writing to pid's.
 */
static int blocked_io(int child, int pid, int reading, int *fd, int *ours,
		      int *writing)
{
	char pipe[LINK_MAX_LEN];
	unsigned long long arg0;
	int *tids = NULL, mode, pass;
	size_t n = 0, i;
	char dir[64];
	long nr;

	snprintf(dir, sizeof(dir), "/proc/%d/task", child);
	if (procfs_list_ids(dir, MAX_CHILD_THREADS, child, &tids, &n) < 0)
		return -1;
	for (pass = 1; pass >= !reading; pass--)
		for (i = 0; i < n; i++) {
			char state = procfs_state(child, tids[i]);

			if ((state != 'S' && state != 'D') ||
			    procfs_thread_syscall_arg0(child, tids[i], &nr,
						       &arg0) != 0 ||
			    !(pass ? cs_syscall_sends(nr) != NULL :
				     cs_syscall_reads(nr)) || arg0 > 65535 ||
			    procfs_fd(child, (int)arg0, pipe, sizeof(pipe),
				      &mode) < 0 ||
			    strncmp(pipe, "pipe:[", 6) ||
			    (*ours = child_pipes_end(pid, pipe, pass ? O_RDONLY :
							       O_WRONLY)) < 0)
				continue;
			*fd = (int)arg0;
			*writing = pass;
			free(tids);
			return 0;
		}
	free(tids);
	return -1;
}

/*
 * Does a child blocked reading a pipe the parent holds the write end of
 * wait for nothing?  Not a multiprocessing pool's worker (one a pool's
 * result waits for): it reads its tasks so, and the pool writes when it
 * has some.  (A Process joined while it waits for a message that never
 * comes is the deadlock, and writing to a pipe the parent does not read
 * is one for both: a Process whose queue's feeder fills the pipe while
 * the parent joins it, multiprocessing's well-known one.)
 */
static int reads_mean_blocked(const struct py_waitgraph *g, size_t node)
{
	size_t n, k;
	const size_t *in = py_waitgraph_in(g, node, &n);

	for (k = 0; k < n; k++) {
		const struct wg_edge *e = &g->edges[in[k]];

		if (e->kind == WG_WAITS_FOR && e->from < g->nnodes &&
		    g->nodes[e->from].kind == WG_OBJECT &&
		    g->prims[g->nodes[e->from].index].kind ==
		    PY_PRIM_POOL_RESULT)
			return 0;
	}
	return 1;
}

struct child_pipe *child_pipes_probe(int pid, const struct py_waitgraph *g,
				     size_t *n)
{
	struct child_pipe *v = NULL;
	size_t i, alloc = 0, seen = 0;

	*n = 0;
	for (i = 0; i < g->nnodes && seen < MAX_CHILDREN; i++) {
		const struct py_prim *p;
		struct procfs_stat st;
		int fd, ours, writing;

		if (g->nodes[i].kind != WG_OBJECT)
			continue;
		p = &g->prims[g->nodes[i].index];
		if (p->kind != PY_PRIM_PROCESS || p->pid <= 0 ||
		    p->pid > 0x3fffffff || p->exited == 1)
			continue;
		seen++;
		/* (the pid must be pid's own child: one the target
		 * reaped may be another process's now) */
		if (child_pipe_of(v, *n, p->pid) ||
		    procfs_stat((int)p->pid, 0, &st) < 0 || st.ppid != pid ||
		    blocked_io((int)p->pid, pid, reads_mean_blocked(g, i), &fd,
			       &ours, &writing) < 0)
			continue;
		v = xgrow(v, &alloc, *n + 1, sizeof(*v));
		v[*n].pid = p->pid;
		v[*n].child_fd = fd;
		v[*n].our_fd = ours;
		v[*n].reading = !writing;
		(*n)++;
	}
	return v;
}

const struct child_pipe *child_pipe_of(const struct child_pipe *v, size_t n,
				       int64_t child)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].pid == child)
			return &v[i];
	return NULL;
}

void child_pipe_say(struct strbuf *st, const struct child_pipe *cp)
{
	static const char *const std[] = { "stdin", "stdout", "stderr" };

	if (!cp)
		return;
	strbuf_addstr(st, cp->reading ? "; blocked reading its " :
			  "; blocked writing to its ");
	if (cp->child_fd >= 0 && cp->child_fd <= 2)
		strbuf_addstr(st, std[cp->child_fd]);
	else
		strbuf_addf(st, "fd %d", cp->child_fd);
	strbuf_addf(st, ", a pipe this process holds the %s end of as fd %d",
		    cp->reading ? "write" : "read", cp->our_fd);
}

/* Is thread tid of pid still in call nr on fd? */
static int still_in(int pid, int tid, long nr, int fd)
{
	unsigned long long arg0;
	long now;

	return procfs_thread_syscall_arg0(pid, tid, &now, &arg0) == 0 &&
	       now == nr && arg0 == (unsigned long long)fd;
}

/* Is t still in its call, not woken since the survey (nothing freed room
 * in the pipe)? */
static int still_unread(int pid, const struct cs_thread *t)
{
	uint64_t sw;

	return procfs_context_switches(pid, t->tid, &sw) == 0 &&
	       sw == t->left_switches &&
	       still_in(pid, t->tid, t->left_call, t->left_fd);
}

/* Another child of ppid than pid that holds the read end of pipe: its
 * pid, its fd into *fd; else 0.  From the children files of ppid's
 * threads (each lists the children that thread started). */
static int sibling_read_end(int pid, int ppid, const char *pipe, int *fd)
{
	char dir[64], list[CHILDREN_LIST_LEN];
	int *tids = NULL, found = 0;
	size_t n = 0, i, looked = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/task", ppid);
	if (procfs_list_ids(dir, MAX_CHILD_THREADS, ppid, &tids, &n) < 0)
		return 0;
	for (i = 0; i < n && !found && looked < MAX_SIBLINGS; i++) {
		char path[80], *p, *end;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", ppid,
			 tids[i]);
		if (procfs_read(path, list, sizeof(list)) <= 0)
			continue;
		/* Bounded by MAX_SIBLINGS and the list's length. */
		for (p = list; !found && looked < MAX_SIBLINGS; p = end) {
			long child = strtol(p, &end, 10);

			if (end == p || child <= 0 || child > INT32_MAX)
				break;
			looked++;
			if (child != pid &&
			    (*fd = read_end((int)child, pipe)) >= 0)
				found = (int)child;
		}
	}
	free(tids);
	return found;
}

/* Whether ppid, pid's parent, holds the read end of pipe, else (where
 * pid does not either) which of its other children does. */
static void other_holders(int pid, int ppid, const char *pipe,
			  struct left_pipe *lp)
{
	if ((lp->parent_fd = read_end(ppid, pipe)) >= 0) {
		lp->parent_pid = ppid;
		if (procfs_comm(ppid, lp->parent_comm,
				sizeof(lp->parent_comm)) < 0)
			lp->parent_comm[0] = '\0';
	} else if (lp->self_fd < 0 &&
		   (lp->sibling_pid = sibling_read_end(pid, ppid, pipe,
						       &lp->sibling_fd)) > 0 &&
		   procfs_comm(lp->sibling_pid, lp->sibling_comm,
			       sizeof(lp->sibling_comm)) < 0) {
		lp->sibling_comm[0] = '\0';
	}
}

/* What a thread left running writes to, and who holds a pipe's read
 * end: the target, its parent, or both (a fork's child keeps the read
 * end its parent reads), else a sibling.  Its files through task `via` (the process, or
 * a live thread once the main one has exited).  Read after the resume:
 * only while the thread is still in its call on that fd (else the fd
 * may be another file now). */
static void left_probe_one(int pid, int via, const struct cs_thread *t,
			   struct left_pipe *lp)
{
	char link[LINK_MAX_LEN];
	struct procfs_stat st;
	int mode;

	memset(lp, 0, sizeof(*lp));
	lp->tid = t->tid;
	lp->self_fd = -1;
	if (!still_in(pid, t->tid, t->left_call, t->left_fd) ||
	    procfs_fd(via, t->left_fd, link, sizeof(link), &mode) < 0 ||
	    !still_in(pid, t->tid, t->left_call, t->left_fd))
		return;
	if (!strncmp(link, "socket:[", 8))
		lp->file = LEFT_FILE_SOCKET;
	if (strncmp(link, "pipe:[", 6))
		return;
	lp->file = LEFT_FILE_PIPE;
	lp->self_fd = read_end(via, link);
	if (procfs_stat(pid, 0, &st) == 0 && st.ppid > 1)
		other_holders(pid, st.ppid, link, lp);
	lp->unread = still_unread(pid, t);
}

struct left_pipe *left_pipes_probe(int pid, const struct memsrc *ms,
				   size_t *n)
{
	struct left_pipe *v = NULL;
	size_t i, k, alloc = 0, unread = 0;

	*n = 0;
	/* Bounded: the source's threads (live_writers.c left 256 at
	 * most). */
	for (i = 0; i < ms->nthreads; i++) {
		if (!ms->threads[i].left_running)
			continue;
		v = xgrow(v, &alloc, *n + 1, sizeof(*v));
		left_probe_one(pid, ms->proc_id > 0 ? ms->proc_id : pid,
			       &ms->threads[i], &v[(*n)++]);
		unread += v[*n - 1].unread;
	}
	/* A dump of a small process takes a few milliseconds, less than
	 * a slow reader's pause between reads: "unread" holds only after
	 * UNREAD_WATCH_MS of watching, waited once for all. */
	if (unread) {
		const struct timespec watch = { 0, UNREAD_WATCH_MS * 1000000L };

		nanosleep(&watch, NULL);
		/* (v has the left threads in ms's order) */
		for (i = 0, k = 0; i < ms->nthreads && k < *n; i++)
			if (ms->threads[i].left_running) {
				v[k].unread = v[k].unread &&
					      still_unread(pid, &ms->threads[i]);
				k++;
			}
	}
	return v;
}

const struct left_pipe *left_pipe_of(const struct left_pipe *v, size_t n,
				     int tid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].tid == tid)
			return &v[i];
	return NULL;
}
