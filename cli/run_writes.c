/*
 * `coroscope run`'s causes for threads blocked writing to a pipe whose
 * read end their own process or its parent holds, or another child of
 * its parent (a shell pipeline's next command) (RUN_CAUSE_WRITE):
 * the thread was left running by the stop (attach/live.h), asleep in
 * its write, and cli/child_pipes.c found who holds the read end, and
 * that nothing was read from the pipe while coroscope looked (a reader
 * freeing room would have woken the writer).  The
 * two deadlock with it: a Popen(stdout=PIPE) parent that waits for its
 * child before it reads, a process that means to read its own pipe
 * once the write is done.
 */
#include "cli/run_writes.h"

#include "cli/child_pipes.h"
#include "cli/escape.h"
#include "cli/report.h"
#include "cli/report_graph.h"
#include "cli/run_places.h"
#include "common/strbuf.h"
#include "readers/waitgraph.h"
#include "common/banned.h"

/* "its stdout", "its stderr", "fd 7" */
static void add_fd(struct strbuf *sb, int fd)
{
	if (fd == 1 || fd == 2)
		strbuf_addstr(sb, fd == 1 ? "its stdout" : "its stderr");
	else
		strbuf_addf(sb, "fd %d", fd);
}

static void write_cause(struct run_summary *s, const struct collection *c,
			const struct py_thread *t, const struct cs_thread *ct,
			const struct left_pipe *lp, struct strbuf *sb)
{
	const struct py_frame *own = run_causes_own_frame(t);
	long tn = py_waitgraph_node_of(&c->graph, WG_THREAD,
				       (size_t)(t - c->snap.threads));

	run_add_thread_label(sb, t);
	strbuf_addstr(sb, " blocked writing to ");
	add_fd(sb, ct->left_fd);
	/* (the program's line, as the graph blames it: not the library's
	 * send it writes in) */
	if (tn >= 0 && c->graph.nodes[tn].blame) {
		graph_add_blame(sb, c, (size_t)tn, GRAPH_RAW);
	} else if (own) {
		strbuf_addstr(sb, " at ");
		run_add_frame_place(sb, own);
	}
	strbuf_addstr(sb, ": a pipe ");
	if (lp->self_fd >= 0)
		strbuf_addf(sb, "this process (fd %d)%s", lp->self_fd,
			    lp->parent_pid ? " and " : "");
	if (lp->parent_pid) {
		strbuf_addf(sb, "its parent %d (", lp->parent_pid);
		esc_add_name_raw(sb, lp->parent_comm);
		strbuf_addf(sb, ") (fd %d)", lp->parent_fd);
	} else if (lp->sibling_pid && lp->self_fd < 0) {
		strbuf_addf(sb, "its sibling process %d (", lp->sibling_pid);
		esc_add_name_raw(sb, lp->sibling_comm);
		strbuf_addf(sb, ") (fd %d)", lp->sibling_fd);
	}
	strbuf_addf(sb, " %s the read end of, read none of it while "
		    "coroscope looked", lp->self_fd >= 0 && lp->parent_pid ?
		    "hold" : "holds");
	(void)run_cause_add(s, RUN_CAUSE_WRITE, c->pid, sb);
}

void run_summarize_writes(struct run_summary *s, const struct collection *c)
{
	struct strbuf sb;
	size_t i;

	if (!c->nleft_pipes)
		return;
	strbuf_init(&sb);
	/* Bounded by the snapshot's threads. */
	for (i = 0; i < c->snap.nthreads; i++) {
		const struct py_thread *t = &c->snap.threads[i];
		const struct cs_thread *ct = report_left_running(c, t->tid);
		const struct left_pipe *lp =
			left_pipe_of(c->left_pipes, c->nleft_pipes, t->tid);

		/* (a reader that read meanwhile is slow, no cause; nor is
		 * what a torn last try says) */
		if (ct && lp && lp->file == LEFT_FILE_PIPE && lp->unread &&
		    (lp->self_fd >= 0 || lp->parent_pid || lp->sibling_pid) &&
		    !c->left_ran)
			write_cause(s, c, t, ct, lp, &sb);
	}
	strbuf_release(&sb);
}
