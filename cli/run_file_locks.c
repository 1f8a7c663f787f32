/*
 * A thread blocked in flock(2) or in fcntl(2)'s F_SETLKW (fcntl.flock(),
 * fcntl.lockf()): another process -- a second instance of the program,
 * a leftover daemon, a sibling test worker -- holds the file's lock,
 * and no object of this process shows it.  The kernel lists the request
 * under the lock it waits behind in /proc/locks; the holder's fdinfo
 * says through which of its files it holds it.  A flock() lock belongs
 * to an open file, not to a process, so a process that opens the file
 * twice waits for itself.
 */
#include "cli/run_file_locks.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/collect.h"
#include "cli/escape.h"
#include "cli/report_graph.h"
#include "cli/run_fds.h"
#include "cli/run_places.h"
#include "cli/run_probe.h"
#include "cli/run_report.h"
#include "common/procfs.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

/* Bytes of a holder's command line shown at most. */
#define CMDLINE_SHOWN 200

/* The last lock looked for through every process, and what was found:
 * the threads waiting for one lock look it up once.  (`run` looks at
 * one tree, once.) */
static struct {
	struct procfs_lock lock;
	long pid;
	int fd, set;
	double at_ms;     /* (watch looks again later: kept 2 s) */
} memo;

static int same_lock(const struct procfs_lock *a, const struct procfs_lock *b)
{
	return a->id == b->id && a->pid == b->pid && a->ino == b->ino &&
	       !strcmp(a->type, b->type) && !strcmp(a->range, b->range);
}

static int memo_of(const struct procfs_lock *h, long *pid, int *fd)
{
	if (!memo.set || !same_lock(&memo.lock, h) ||
	    cs_now_ms() - memo.at_ms > 2000)
		return 0;
	*pid = memo.pid;
	*fd = memo.fd;
	return 1;
}

static void memo_put(const struct procfs_lock *h, long pid, int fd)
{
	memo.lock = *h;
	memo.pid = pid;
	memo.fd = fd;
	memo.set = 1;
	memo.at_ms = cs_now_ms();
}

/* Who holds lock h now, and through which of its fds (*fd).  A POSIX
 * lock is its process's and ends with it: h->pid.  A
 * flock() or OFD lock is its open file's: the process /proc/locks
 * names (the one that took it) if it still has the file open, else the
 * first process of s's tree, this one first, that has (one with an fd
 * the kernel lists the lock under), else any process.  The pid; 0 when
 * none is found; -1 when h->pid's files cannot be listed (another
 * user's: it is named then, unchecked). */
static long find_holder(const struct run_summary *s,
			const struct collection *c,
			const struct procfs_lock *h, int *fd)
{
	int got = procfs_locks_holder_fd((int)h->pid, h);
	long pid;
	size_t j;

	*fd = got;
	if (got >= 0 || (h->pid > 0 && !strcmp(h->type, "POSIX")))
		return h->pid;
	if ((*fd = procfs_locks_holder_fd(c->pid, h)) >= 0)
		return c->pid;
	for (j = 0; j < s->nprocs; j++)
		if ((*fd = procfs_locks_holder_fd(s->procs[j].e.pid, h)) >= 0)
			return s->procs[j].e.pid;
	if (got == -2)
		return -1;
	/* (many threads wait for one lock: one look through all) */
	if (memo_of(h, &pid, fd))
		return pid;
	pid = procfs_locks_find_holder(h, fd);
	memo_put(h, pid, *fd);
	return pid;
}

/* "held exclusively by process 1235 (python3) as its fd 3"; h->pid
 * becomes the holder's pid, 0 when none is known. */
static void add_holder(struct strbuf *sb, const struct run_summary *s,
		       const struct collection *c, struct procfs_lock *h)
{
	long pid;
	int fd;

	strbuf_addf(sb, "held %s by ", h->write ? "exclusively" : "shared");
	pid = find_holder(s, c, h, &fd);
	if (pid == 0) {
		/* (its taker closed it, or ended: one it shared the file
		 * with, that this user cannot see, holds it) */
		if (h->pid > 0)
			strbuf_addf(sb, "an open file that process %ld locked "
				    "and no longer has open", h->pid);
		else
			strbuf_addstr(sb, "an open file of no process this "
				      "user can see (an OFD lock)");
		h->pid = 0;
		return;
	}
	if (pid < 0)
		pid = h->pid;
	h->pid = pid;
	if (pid == c->pid) {
		strbuf_addstr(sb, "this process itself");
	} else {
		run_fds_add_process(sb, pid);
	}
	if (fd >= 0)
		strbuf_addf(sb, " as %sfd %d", pid == c->pid ? "" : "its ", fd);
}

/* The request of thread's process c on inode ino, which a stop took
 * back until the thread resumed and made it again: its holder, after a
 * few short waits for it at most.  0, or procfs_locks_holder()'s -1 or
 * -2. */
static int find_request(const struct collection *c, unsigned long ino,
			int ofd, struct procfs_lock *holder)
{
	struct timespec pause = { 0, 5 * 1000 * 1000 };
	int tries, ret = -1;

	for (tries = 0; tries < 4 && ret == -1; tries++) {
		if ((ret = procfs_locks_holder(c->pid, ino, ofd, holder)) == -1)
			nanosleep(&pause, NULL);
	}
	return ret;
}

int run_file_lock_describe(struct strbuf *sb, const struct run_summary *s,
			   const struct collection *c, int pid, int fd,
			   const char *call, int ofd,
			   struct procfs_lock *holder)
{
	char path[64], link[1024];
	struct stat st;
	int mode, ret;

	memset(holder, 0, sizeof(*holder));
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	if (procfs_fd(pid, fd, link, sizeof(link), &mode) < 0 ||
	    stat(path, &st) < 0)
		return -1;
	strbuf_addstr(sb, ", ");
	esc_add_name_raw(sb, link);
	strbuf_addf(sb, ", with %s(): ", call);
	if ((ret = find_request(c, (unsigned long)st.st_ino, ofd,
				holder)) < 0) {
		memset(holder, 0, sizeof(*holder));
		strbuf_addstr(sb, ret == -2 ?
			      "holder not told apart: several requests on the "
			      "file wait behind different locks (an OFD one "
			      "names no process)" :
			      "no holder found in /proc/locks (it may have "
			      "been let go)");
		return 0;
	}
	add_holder(sb, s, c, holder);
	return 0;
}

/* The dumped Python process of s's tree with pid, or NULL. */
static const struct collection *tree_python(const struct run_summary *s,
					    long pid)
{
	size_t j;

	for (j = 0; j < s->nprocs; j++)
		if (s->procs[j].e.pid == pid && s->procs[j].dumped)
			return &s->procs[j].c;
	return NULL;
}

/* The node of hc's wait-for graph that a thread of it waits on for
 * process pid to end (a Popen, a Process), that thread into *th; or
 * SIZE_MAX. */
static size_t waits_for_process(const struct collection *hc, int pid,
				const struct py_thread **th)
{
	const struct py_waitgraph *g = &hc->graph;
	size_t i, w;

	if (hc->ns_pid && hc->ns_pid != hc->pid)
		return SIZE_MAX;  /* (its pids are another namespace's) */
	for (i = 0; i < g->nnodes; i++) {
		const struct py_prim *p;

		if (g->nodes[i].kind != WG_OBJECT ||
		    g->nodes[i].index >= g->nprims)
			continue;
		p = &g->prims[g->nodes[i].index];
		if (p->kind != PY_PRIM_PROCESS || p->pid != pid ||
		    p->exited == 1 || py_waitgraph_waiters(g, i, &w, 1) != 1 ||
		    g->nodes[w].kind != WG_THREAD ||
		    g->nodes[w].index >= hc->snap.nthreads)
			continue;
		*th = &hc->snap.threads[g->nodes[w].index];
		return i;
	}
	return SIZE_MAX;
}

/* The thread of hc to show as where it holds a lock (a process's, not a
 * thread's): its main thread when at a line of the program's own, else
 * the first such; NULL for none. */
static const struct py_thread *holding_thread(const struct collection *hc)
{
	const struct py_thread *first = NULL;
	size_t t;

	for (t = 0; t < hc->snap.nthreads; t++) {
		const struct py_thread *th = &hc->snap.threads[t];

		if (!run_own_frame(th->frames, th->nframes))
			continue;
		if (th->tid == hc->pid)
			return th;
		if (!first)
			first = th;
	}
	return first;
}

void run_add_python_holder(struct strbuf *sb, const struct collection *hc,
			   const struct py_thread *th)
{
	const struct py_frame *own = run_own_frame(th->frames, th->nframes);

	strbuf_addf(sb, "holder: process %d, ", hc->pid);
	run_add_thread_label(sb, th);
	if (!own)
		return;
	strbuf_addstr(sb, " at ");
	run_probe_add_line(sb, hc, own);
}

void run_file_lock_detail(struct run_cause *cause,
			  const struct run_summary *s,
			  const struct collection *c,
			  const struct procfs_lock *holder, struct strbuf *sb)
{
	const struct py_thread *th = NULL;
	const struct collection *hc;
	size_t node = SIZE_MAX;
	char *cmd;

	strbuf_reset(sb);
	if (holder->pid <= 0)
		return;
	if (holder->pid == c->pid) {
		/* (a POSIX lock is the process's: it never waits for its
		 * own) */
		strbuf_addstr(sb, "a flock() (or OFD) lock belongs to an open "
			      "file, not to a process: this process opened "
			      "the file again and waits for its own lock");
		run_cause_detail(cause, sb);
		return;
	}
	if ((hc = tree_python(s, holder->pid))) {
		/* Where it waits for this process, when it does. */
		node = waits_for_process(hc, c->pid, &th);
		if (node == SIZE_MAX)
			th = holding_thread(hc);
	}
	if (hc && th) {
		run_add_python_holder(sb, hc, th);
		run_cause_detail(cause, sb);
		if (node == SIZE_MAX)
			return;
		strbuf_addf(sb, "a deadlock: process %d waits for this "
			    "process to end (", hc->pid);
		graph_add_label(sb, hc, node, GRAPH_RAW);
		strbuf_addch(sb, ')');
		run_cause_detail(cause, sb);
		return;
	}
	if (!(cmd = procfs_cmdline((int)holder->pid, CMDLINE_SHOWN)))
		return;
	strbuf_addf(sb, "holder: process %ld: ", holder->pid);
	esc_add_name_raw(sb, cmd);
	free(cmd);
	run_cause_detail(cause, sb);
}
