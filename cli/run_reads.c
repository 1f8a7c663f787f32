/*
 * A thread the samples saw stuck, blocked in a read of a socket or a
 * pipe (read, recv and their kin, the call /proc says it sleeps in and
 * its first argument, the fd), or in a socket's connect(), with a frame
 * of the program's own: "thread 12 blocked reading fd 5, a TCP
 * connection 10.0.0.2:51234 -> 10.0.0.9:80 (established) (stuck for at
 * least 2.5s)", then where.  A peer that never answers is the
 * commonest client hang, and the wait-for graph sees no object it
 * waits on.  A pipe's cause names the processes of the run's tree
 * holding its write end: a child's output read until its end, a child
 * that hangs.  A thread in wait4(2) (os.waitpid(), os.wait(): no Popen
 * or Process object the graph sees) waits for the child it names to
 * end, a cause of kind "wait".  Left out: a thread a cause of the
 * graph's names (a holder, a joined thread, a job's worker: those say
 * its C call already), one idle by design, one left running (a writer,
 * cli/run_writes.c).  A live target's only: the call and its fd are
 * the registers' at the stop (or /proc's after the resume, for a thread
 * the stop did not interrupt in one), and what the fd is, /proc's after
 * the resume, while the thread still sleeps in its call (the stop
 * restarts a read, a lock's wait or a wait4() as it was).  So, too, a
 * thread blocked taking a file's lock (cli/run_file_locks.c).
 */
#include "cli/run_reads.h"

#include <limits.h>
#include <string.h>

#include "attach/memsrc.h"
#include "attach/regs.h"
#include "attach/syscall_deadline.h"
#include "cli/escape.h"
#include "cli/report.h"
#include "cli/report_graph.h"
#include "cli/run_places.h"
#include "cli/run_polls.h"
#include "cli/run_fds.h"
#include "cli/run_file_locks.h"
#include "cli/run_probe.h"
#include "cli/run_seen.h"
#include "cli/thread_idle.h"
#include "common/procfs.h"
#include "common/strbuf.h"
#include "common/banned.h"

/* What system call nr does with the fd its first argument names:
 * "reading" (read, recv and their kin), "connecting" (a peer that
 * never answers the handshake), or NULL for neither. */
static const char *on_fd(long nr)
{
	return cs_syscall_receives(nr) ? "reading" :
	       cs_syscall_connects(nr) ? "connecting" : NULL;
}

int run_reads_socket_detail(struct run_cause *cause,
			    const struct run_summary *s,
			    const struct collection *c, int64_t fd,
			    struct strbuf *sb)
{
	return c->is_live ?
	       run_fds_detail(cause, s, collect_proc_pid(c), fd, sb) : 0;
}

void run_reads_unit_fd(struct run_cause *cause, const struct run_summary *s,
		       const struct collection *c, size_t node, int streams,
		       struct strbuf *sb)
{
	const struct py_waitgraph *g = &c->graph;
	const struct wg_node *n = &g->nodes[node];
	const size_t *out;
	size_t k, m;

	if (n->kind == WG_TASK && n->index < c->async.ntasks &&
	    c->async.tasks[n->index].io_wait != PY_IO_NONE) {
		(void)run_reads_socket_detail(
			cause, s, c, c->async.tasks[n->index].io_fd, sb);
		return;
	}
	if (n->kind == WG_GREENLET && n->index < c->greenlets.n &&
	    c->greenlets.v[n->index].io_wait != PY_IO_NONE) {
		(void)run_reads_socket_detail(
			cause, s, c, c->greenlets.v[n->index].io_fd, sb);
		return;
	}
	/* an asyncio StreamReader it waits on, the graph's object */
	out = streams ? py_waitgraph_out(g, node, &m) : NULL;
	for (k = 0; out && k < m; k++) {
		const struct wg_edge *e = &g->edges[out[k]];

		if (e->kind == WG_WAITS_FOR && g->nodes[e->to].kind == WG_OBJECT &&
		    g->prims[g->nodes[e->to].index].kind == PY_PRIM_STREAM) {
			(void)run_reads_socket_detail(
				cause, s, c, g->prims[g->nodes[e->to].index].fd,
				sb);
			return;
		}
	}
}

static int named_by_graph(const struct run_summary *s,
			  const struct collection *c, size_t i)
{
	return run_summary_explains(s, &c->snap.threads[i]) ||
	       run_probe_ends_waits(c, i);
}

/* " waits for child process 12 (sleep) to end": what wait4()'s first
 * argument, arg0, names, a pid of c's own PID namespace (its command
 * read only where that is ours). */
static void add_child(struct strbuf *sb, const struct collection *c,
		      unsigned long long arg0)
{
	long long child = (long long)(int)arg0;
	char comm[32];

	if (child == -1) {
		strbuf_addstr(sb, " waits for any child process to end");
		return;
	}
	if (child == 0) {
		strbuf_addstr(sb, " waits for any child process of its "
			      "process group to end");
		return;
	}
	if (child < 0) {
		strbuf_addf(sb, " waits for any child process of process "
			    "group %lld to end", -child);
		return;
	}
	strbuf_addf(sb, " waits for child process %lld", child);
	if (c->ns_pid && c->ns_pid != c->pid) {
		strbuf_addstr(sb, " (a pid of its PID namespace)");
	} else if (procfs_comm((int)child, comm, sizeof(comm)) == 0) {
		strbuf_addstr(sb, " (");
		esc_add_name_raw(sb, comm);
		strbuf_addch(sb, ')');
	}
	strbuf_addstr(sb, " to end");
}

int run_thread_call(const struct collection *c, int pid, int tid,
		       long *nr, unsigned long long args[3])
{
	size_t i;

	/* Bounded by the threads the source lists. */
	for (i = 0; c->ms && i < c->ms->nthreads; i++)
		if (c->ms->threads[i].tid == tid)
			break;
	if (c->ms && i < c->ms->nthreads &&
	    cs_thread_interrupted_call(&c->ms->threads[i], nr, args))
		return 0;
	return procfs_thread_syscall_args(pid, tid, nr, args, 3) ? -1 : 0;
}

int run_reads_call(struct strbuf *sb, const struct run_summary *s,
		   const struct collection *c, int pid, int tid,
		   const struct run_polls_ask *polls,
		   struct procfs_lock *holder)
{
	unsigned long long args[3];
	const char *doing, *locks;
	size_t len = sb->len;
	long nr;

	holder->pid = 0;
	if (run_thread_call(c, pid, tid, &nr, args) < 0)
		return -1;
	if (cs_syscall_waits_child(nr)) {
		add_child(sb, c, args[0]);
		return RUN_CAUSE_WAIT;
	}
	/* (a server no client comes to: idle, as socketserver's) */
	if (cs_syscall_accepts(nr) && args[0] <= INT_MAX) {
		strbuf_addf(sb, " waits for a connection on fd %llu", args[0]);
		if (run_fds_describe(sb, ", ", s, c->pid, pid,
				     (int)args[0]) < 0) {
			strbuf_truncate(sb, len);
			return -1;
		}
		return RUN_CAUSE_IDLE;
	}
	if (polls && (cs_syscall_polls(nr) != CS_POLL_NONE ||
		      run_polls_restarted(pid, tid, polls->native_call, &nr)))
		return run_polls_describe(sb, s, c, pid, nr, args) < 0 ? -1 :
		       RUN_CAUSE_READ;
	doing = on_fd(nr);
	locks = cs_syscall_locks_file(nr, args[1]);
	if ((!doing && !locks) || args[0] > INT_MAX)
		return -1;
	strbuf_addf(sb, " blocked %s fd %llu%s", doing ? doing : "locking",
		    args[0], args[0] == 0 ? " (its stdin)" : "");
	if (locks ? run_file_lock_describe(sb, s, c, pid, (int)args[0], locks,
					   cs_syscall_locks_ofd(nr, args[1]),
					   holder) < 0 :
		    run_fds_describe(sb, ", ", s, c->pid, pid,
				     (int)args[0]) < 0) {
		strbuf_truncate(sb, len);
		return -1;
	}
	return locks ? RUN_CAUSE_FILE_LOCK : RUN_CAUSE_READ;
}

void run_reads_exited_child(struct run_cause *cause,
			    const struct run_summary *s,
			    const struct collection *c, size_t node,
			    struct strbuf *sb)
{
	const struct py_waitgraph *g = &c->graph;
	const struct py_prim *p = &g->prims[g->nodes[node].index];
	int pid = collect_proc_pid(c);
	struct run_polls_ask ask;
	struct procfs_lock holder;
	size_t w[4], nw, k;
	char state;

	if (!c->is_live || p->kind != PY_PRIM_PROCESS || p->pid <= 0 ||
	    p->pid > INT_MAX || p->exited == 1 ||
	    ((state = procfs_state((int)p->pid, 0)) &&
	     !procfs_state_dead(state)))
		return;
	nw = py_waitgraph_waiters(g, node, w, 4);
	for (k = 0; k < nw && k < 4; k++) {
		const struct wg_node *n = &g->nodes[w[k]];
		const struct py_thread *th;
		size_t len;

		if (n->kind != WG_THREAD || n->index >= c->snap.nthreads)
			continue;
		th = &c->snap.threads[n->index];
		strbuf_addf(sb, "process %lld ended, but ", (long long)p->pid);
		run_add_thread_label(sb, th);
		len = sb->len;
		ask.native_call = s->facts ? s->facts[n->index].native_call :
				  NULL;
		if (th->tid <= 0 ||
		    run_reads_call(sb, s, c, pid, th->tid, &ask, &holder) !=
		    RUN_CAUSE_READ || sb->len == len) {
			strbuf_reset(sb);
			continue;
		}
		/* (a multiprocessing Process's join() polls its sentinel,
		 * a pipe only its process should hold) */
		strbuf_addstr(sb, p->name && !strncmp(p->name, "subprocess.", 11) ?
			      " (its output is read to the end: every process "
			      "holding the write end must close it)" :
			      " (join() waits for its sentinel pipe to close: "
			      "every process holding the write end must end or "
			      "close it)");
		run_cause_detail(cause, sb);
	}
}

void run_summarize_reads(struct run_summary *s, const struct collection *c,
			 const struct watch_tracker *t)
{
	int pid = collect_proc_pid(c);
	struct run_cause *cause;
	struct run_polls_ask ask;
	struct strbuf sb, call;
	size_t i;

	if (!c->is_live || !t)
		return;
	strbuf_init(&sb);
	strbuf_init(&call);
	/* Bounded by the snapshot's threads. */
	for (i = 0; i < c->snap.nthreads; i++) {
		const struct py_thread *th = &c->snap.threads[i];
		const struct py_frame *own = run_own_frame(th->frames,
							   th->nframes);
		struct procfs_lock holder;
		struct run_seen seen;
		int kind;

		run_seen_thread(t, th, &seen);
		if (seen.state != RUN_SEEN_STUCK || !own || th->tid <= 0 ||
		    thread_idle_by_design(th) || named_by_graph(s, c, i) ||
		    report_left_running(c, th->tid))
			continue;
		ask.native_call = s->facts ? s->facts[i].native_call : NULL;
		if ((kind = run_reads_call(&call, s, c, pid, th->tid,
					   run_polls_direct(th) ? &ask : NULL,
					   &holder)) < 0) {
			strbuf_reset(&call);
			continue;
		}
		if (kind == RUN_CAUSE_IDLE)
			strbuf_addstr(&sb, "idle: ");
		run_add_thread_label(&sb, th);
		strbuf_add(&sb, call.buf, call.len);
		strbuf_reset(&call);
		strbuf_addstr(&sb, " (");
		run_seen_add(&sb, &seen);
		strbuf_addch(&sb, ')');
		/* (a timed wait, a select() in a loop: when it ends) */
		if (s->facts)
			run_add_thread_timer(&sb, &s->facts[i]);
		cause = run_cause_add(s, (enum run_cause_kind)kind, c->pid,
				      &sb);
		strbuf_addstr(&sb, "at ");
		run_probe_add_line(&sb, c, own);
		run_cause_detail(cause, &sb);
		if (kind == RUN_CAUSE_FILE_LOCK)
			run_file_lock_detail(cause, s, c, &holder, &sb);
		if (th->tid == c->pid)
			run_cause_test(cause, c->graph.test, &sb);
	}
	strbuf_release(&call);
	strbuf_release(&sb);
}

/* The sockets tasks waiting on node read through a library's stream
 * (an anyio SocketStream's Event, aiohttp's DataQueue): a detail each,
 * for the first few. */
void run_reads_waiter_fds(struct run_cause *cause,
			  const struct run_summary *s,
			  const struct collection *c, size_t node,
			  struct strbuf *sb)
{
	size_t w[4], nw, k;

	nw = py_waitgraph_waiters(&c->graph, node, w, 4);
	for (k = 0; k < nw && k < 4; k++)
		if (c->graph.nodes[w[k]].kind == WG_TASK)
			run_reads_unit_fd(cause, s, c, w[k], 0, sb);
}

void run_reads_unit_call(struct run_cause *cause,
			 const struct run_summary *s,
			 const struct collection *c, size_t node,
			 struct strbuf *sb)
{
	const struct wg_node *nd;
	struct procfs_lock holder;
	const struct py_thread *th;
	size_t len;

	if (!c->is_live || node >= c->graph.nnodes)
		return;
	nd = &c->graph.nodes[node];
	if (nd->kind != WG_THREAD || nd->index >= c->snap.nthreads)
		return;
	th = &c->snap.threads[nd->index];
	graph_add_label(sb, c, node, GRAPH_RAW);
	len = sb->len;
	if (run_reads_call(sb, s, c, c->pid, th->tid, NULL, &holder) !=
	    RUN_CAUSE_READ || sb->len == len) {
		strbuf_reset(sb);
		return;
	}
	run_cause_detail(cause, sb);
}
