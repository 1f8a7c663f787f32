/*
 * What the kernel told of a thread, in its report line and JSON object:
 * how long it has been off its CPU (attach/offcpu.h, read before the
 * stop), and whether it was left running because a stop would cut its
 * write short (attach/live.h).
 */
#include "cli/report.h"

#include "attach/regs.h"
#include "cli/child_pipes.h"
#include "cli/escape.h"
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

unsigned char *report_left_apart(const struct collection *c)
{
	unsigned char *apart;
	size_t i;

	if (!c->any_left)
		return NULL;
	apart = xcalloc(c->snap.nthreads ? c->snap.nthreads : 1, 1);
	for (i = 0; i < c->snap.nthreads; i++)
		apart[i] = report_left_running(c, c->snap.threads[i].tid) != NULL;
	return apart;
}

/* The call's name: the table knows every number a thread is left in. */
static const char *call_name(const struct cs_thread *t)
{
	const char *name = cs_syscall_sends(t->left_call);

	return name ? name : "?";
}

/* ", a pipe its parent 12 (python3) holds the read end of as fd 5" */
static void text_left_file(FILE *out, const struct left_pipe *lp)
{
	if (!lp || lp->file == LEFT_FILE_OTHER)
		return;
	if (lp->file == LEFT_FILE_SOCKET) {
		fputs(", a socket", out);
		return;
	}
	fputs(", a pipe", out);
	if (!lp->reader_pid)
		return;
	if (lp->reader_is_parent) {
		fprintf(out, " its parent %d (", lp->reader_pid);
		esc_put(out, lp->reader_comm, ESC_NAME, 0);
		fputc(')', out);
	} else {
		fputs(" this process", out);
	}
	fprintf(out, " holds the read end of as fd %d", lp->reader_fd);
}

void report_text_thread_state(FILE *out, const struct collection *c, int tid)
{
	double s = offcpu_of(&c->offcpu, tid);
	const struct cs_thread *t = report_left_running(c, tid);

	if (s == OFFCPU_RUNNING)
		fputs(" (running)", out);
	else if (s >= 0)
		fprintf(out, " (last ran %.1fs ago)", s);
	if (!t)
		return;
	fprintf(out, " (left running: a stop would cut short its %s(2) to "
		"fd %d", call_name(t), t->left_fd);
	text_left_file(out, left_pipe_of(c->left_pipes, c->nleft_pipes, tid));
	fputc(')', out);
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

	json_key(j, "off_cpu_s");
	if (s == OFFCPU_RUNNING)
		json_double(j, 0);
	else if (s >= 0)
		json_double(j, s);
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
	json_key(j, "read_end");
	if (lp && lp->reader_pid) {
		json_begin_object(j);
		json_key_int(j, "pid", lp->reader_pid);
		json_key_int(j, "fd", lp->reader_fd);
		json_key(j, "parent");
		json_bool(j, lp->reader_is_parent);
		json_end_object(j);
	} else {
		json_null(j);
	}
	json_end_object(j);
}
