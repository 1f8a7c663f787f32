/*
 * What the kernel told of a thread, in its report line and JSON object:
 * how long it has been off its CPU (attach/offcpu.h, read before the
 * stop), and whether it was left running because a stop would cut its
 * write short (attach/live.h).
 */
#include "cli/report.h"

#include <stdio.h>
#include <string.h>

#include "cli/collect_deadlines.h"
#include "attach/regs.h"
#include "cli/child_pipes.h"
#include "cli/escape.h"
#include "cli/timer_text.h"
#include "common/strbuf.h"
#include "common/banned.h"

const struct cs_thread *report_left_running(const struct collection *c,
					    int tid)
{
	const struct memsrc *ms = c->ms;
	size_t i;

	/* A scan per thread only when some thread was left running. */
	for (i = 0; c->any_left && ms && tid > 0 && i < ms->nthreads; i++)
		if (ms->threads[i].tid == tid && ms->threads[i].left_running)
			return &ms->threads[i];
	return NULL;
}

void report_text_stopped(FILE *out, const struct collection *c)
{
	if (c->job_stopped)
		fputs("Stopped by a signal (job control: SIGSTOP, SIGTSTP, "
		      "SIGTTIN or SIGTTOU): none of its threads runs until a "
		      "SIGCONT\n", out);
}

unsigned char *report_threads_apart(const struct collection *c)
{
	unsigned char *apart;
	size_t i;

	if (!c->any_left && !c->signal_tid)
		return NULL;
	apart = xcalloc(c->snap.nthreads ? c->snap.nthreads : 1, 1);
	for (i = 0; i < c->snap.nthreads; i++) {
		int tid = c->snap.threads[i].tid;

		apart[i] = report_left_running(c, tid) != NULL ||
			   (tid > 0 && tid == c->signal_tid);
	}
	return apart;
}

/* The call's name: the table knows every number a thread is left in. */
static const char *call_name(const struct cs_thread *t)
{
	const char *name = cs_syscall_sends(t->left_call);

	return name ? name : "?";
}

/* ", a pipe its parent 12 (python3) holds the read end of as fd 5",
 * ", a pipe its sibling process 13 (sleep) (another child of its
 * parent) holds the read end of as fd 0",
 * ", a pipe this process (fd 3) and its parent 12 (python3) (fd 5) hold
 * the read end of", then "; nothing read from it while coroscope
 * looked" when so. */
static void text_left_file(FILE *out, const struct left_pipe *lp)
{
	if (!lp || lp->file == LEFT_FILE_OTHER)
		return;
	if (lp->file == LEFT_FILE_SOCKET) {
		fputs(", a socket", out);
		return;
	}
	fputs(", a pipe", out);
	if (lp->self_fd >= 0 && lp->parent_pid) {
		fprintf(out, " this process (fd %d) and its parent %d (",
			lp->self_fd, lp->parent_pid);
		esc_put(out, lp->parent_comm, ESC_NAME, 0);
		fprintf(out, ") (fd %d) hold the read end of", lp->parent_fd);
	} else if (lp->parent_pid) {
		fprintf(out, " its parent %d (", lp->parent_pid);
		esc_put(out, lp->parent_comm, ESC_NAME, 0);
		fprintf(out, ") holds the read end of as fd %d", lp->parent_fd);
	} else if (lp->self_fd >= 0) {
		fprintf(out, " this process holds the read end of as fd %d",
			lp->self_fd);
	} else if (lp->sibling_pid) {
		fprintf(out, " its sibling process %d (", lp->sibling_pid);
		esc_put(out, lp->sibling_comm, ESC_NAME, 0);
		fprintf(out, ") holds the read end of as fd %d",
			lp->sibling_fd);
	}
	if (lp->unread)
		fputs("; nothing read from it while coroscope looked", out);
}

void report_text_thread_state(FILE *out, const struct collection *c, int tid)
{
	double s = offcpu_of(&c->offcpu, tid);
	const struct cs_thread *t = report_left_running(c, tid);

	const struct thread_deadline *d = collect_deadline_of(c, tid);

	if (tid > 0 && tid == c->signal_tid)
		fprintf(out, " (took %s)", c->signal_name ?
			c->signal_name : "the signal");
	if (s == OFFCPU_RUNNING)
		fputs(" (running)", out);
	else if (s >= 0)
		fprintf(out, " (last ran %.1fs ago)", s);
	if (d)
		fprintf(out, d->sleep ? " (sleeps, wakes in %.1fs)" :
			" (times out in %.1fs)", d->in_s);
	if (!t)
		return;
	fprintf(out, " (left running: a stop would cut short its %s(2) to "
		"fd %d", call_name(t), t->left_fd);
	text_left_file(out, left_pipe_of(c->left_pipes, c->nleft_pipes, tid));
	fputc(')', out);
}

/* A thread's timer kind, as a timer_span's clock (0: none). */
enum { SPAN_SLEEP = 1, SPAN_TIMEOUT };

void report_add_threads_timer(struct strbuf *sb, const struct collection *c,
			      const int *tids, size_t n)
{
	const struct thread_deadline *d;
	struct timer_span sp;
	char a[64], b[64];
	size_t k;

	/* (its kind as the span's clock) */
	memset(&sp, 0, sizeof(sp));
	for (k = 0; k < n; k++) {
		d = collect_deadline_of(c, tids[k]);
		timer_span_add(&sp, !d ? 0 : d->sleep ? SPAN_SLEEP : SPAN_TIMEOUT,
			       0, d ? d->in_s : 0);
	}
	if (!sp.n || sp.mixed)
		return;
	/* (as the single thread's words; a span only where the tenths
	 * differ, as cli/timer_text.c's) */
	snprintf(a, sizeof(a), "%.1f", sp.lo);
	snprintf(b, sizeof(b), "%.1f", sp.hi);
	if (n == 1)
		strbuf_addstr(sb, sp.clock == SPAN_SLEEP ? " (sleeps, wakes in " :
			      " (times out in ");
	else
		strbuf_addstr(sb, sp.clock == SPAN_SLEEP ? " (sleep, wake in " :
			      " (time out in ");
	strbuf_addf(sb, "%ss", a);
	if (strcmp(a, b))
		strbuf_addf(sb, " .. %ss", b);
	strbuf_addch(sb, ')');
}

void report_text_threads_timer(FILE *out, const struct collection *c,
			       const int *tids, size_t n)
{
	struct strbuf sb;

	strbuf_init(&sb);
	report_add_threads_timer(&sb, c, tids, n);
	fputs(sb.buf, out);
	strbuf_release(&sb);
}

enum read_end_of { END_SELF, END_PARENT, END_SIBLING };

static void json_read_end(struct json *j, int pid, int fd,
			  enum read_end_of of)
{
	json_begin_object(j);
	json_key_int(j, "pid", pid);
	json_key_int(j, "fd", fd);
	json_key(j, "parent");
	json_bool(j, of == END_PARENT);
	json_key(j, "sibling");
	json_bool(j, of == END_SIBLING);
	json_end_object(j);
}

/* "off_cpu_s": seconds since it last ran, 0 running or runnable, null
 * unknown (a core, `run`, a kernel without sched files, past
 * OFFCPU_MAX_THREADS).  "left_running": the call and file descriptor of
 * a thread left running, else null. */
void report_json_thread_state(struct json *j, const struct collection *c,
			      int tid)
{
	double s = offcpu_of(&c->offcpu, tid);
	const struct cs_thread *t = report_left_running(c, tid);
	const struct left_pipe *lp;

	const struct thread_deadline *d = collect_deadline_of(c, tid);

	json_key(j, "off_cpu_s");
	if (s == OFFCPU_RUNNING)
		json_double(j, 0);
	else if (s >= 0)
		json_double(j, s);
	else
		json_null(j);
	/* (cli/collect_deadlines.c) */
	json_key(j, "wakes_in_s");
	if (d && d->sleep)
		json_double(j, d->in_s);
	else
		json_null(j);
	json_key(j, "times_out_in_s");
	if (d && !d->sleep)
		json_double(j, d->in_s);
	else
		json_null(j);
	json_key(j, "left_running");
	if (!t) {
		json_null(j);
		return;
	}
	lp = left_pipe_of(c->left_pipes, c->nleft_pipes, tid);
	json_begin_object(j);
	json_key_string(j, "call", call_name(t));
	json_key_int(j, "fd", t->left_fd);
	json_key_string(j, "file", !lp || lp->file == LEFT_FILE_OTHER ? NULL :
			lp->file == LEFT_FILE_PIPE ? "pipe" : "socket");
	json_key(j, "read_ends");
	json_begin_array(j);
	if (lp && lp->self_fd >= 0)
		json_read_end(j, c->pid, lp->self_fd, END_SELF);
	if (lp && lp->parent_pid)
		json_read_end(j, lp->parent_pid, lp->parent_fd, END_PARENT);
	if (lp && lp->sibling_pid)
		json_read_end(j, lp->sibling_pid, lp->sibling_fd, END_SIBLING);
	json_end_array(j);
	json_key(j, "unread");
	if (lp && lp->file == LEFT_FILE_PIPE)
		json_bool(j, lp->unread);
	else
		json_null(j);
	json_end_object(j);
}
