/*
 * A task that raised and that nothing awaited: a producer whose consumer
 * waits on its queue, a task whose result an Event would have announced.
 * asyncio says "Task exception was never retrieved" only when the task
 * is freed; one still referenced fails silently.  Its exception and
 * where it was raised come from the dump (readers/task_failures.c).
 */
#include "cli/run_failed.h"

#include "cli/escape.h"
#include "cli/run_places.h"
#include "common/strbuf.h"
#include "common/banned.h"

/* Causes of one process at most: past a few, the first say enough. */
#define MAX_FAILED_CAUSES 4

/* "app.py:5 in producer" from a worker's traceback text. */
static void add_remote_place(struct strbuf *sb, const struct py_text_frame *f)
{
	run_add_place_text(sb, f->file, f->line, f->function);
}

/* A process pool's job: where its worker process says it raised,
 * after lead ("raised at "). */
static void add_remote_sites(struct strbuf *sb,
			     const struct py_failed_task *t, const char *lead)
{
	const struct py_text_frame *own = t->remote_own.file ?
					  &t->remote_own : NULL;

	strbuf_addstr(sb, lead);
	add_remote_place(sb, own ? own : &t->remote_at);
	if (own && own->file != t->remote_at.file) {
		strbuf_addstr(sb, " (innermost ");
		add_remote_place(sb, &t->remote_at);
		strbuf_addch(sb, ')');
	}
	strbuf_addstr(sb, ", in its worker process (the traceback's text "
		      "it sent)");
}

/* "raised at app.py:5 in producer (innermost ...)" from a traceback's
 * sites (it has an entry). */
static void add_frame_sites(struct strbuf *sb, const struct py_exc_sites *t)
{
	const struct py_frame *own = t->own.code ? &t->own : NULL;

	strbuf_addstr(sb, "raised at ");
	run_add_frame_place(sb, own ? own : &t->at);
	if (own && own->addr != t->at.addr) {
		strbuf_addstr(sb, " (innermost ");
		run_add_frame_place(sb, &t->at);
		strbuf_addch(sb, ')');
	}
}

void run_failed_leaf(struct strbuf *sb, const struct py_exc_leaf *l)
{
	/* (a repr, quoted by Python's rules; the writer escapes the
	 * line) */
	strbuf_addstr(sb, l->exc_repr);
	strbuf_addch(sb, ' ');
	if (l->sites.at.code)
		add_frame_sites(sb, &l->sites);
	else
		strbuf_addstr(sb, l->sites.cut ? "(where it was raised is not "
			      "known: its traceback is longer than was "
			      "followed)" : "(where it was raised is not "
			      "known)");
}

void run_failed_sites(struct strbuf *sb, const struct py_failed_task *f)
{
	const struct py_exc_sites *t = &f->sites;

	if (!t->at.code && f->remote_at.file) {
		add_remote_sites(sb, f, "raised at ");
		return;
	}
	if (!t->at.code) {
		strbuf_addstr(sb, t->cut ? "where it was raised is not "
			      "known: its traceback is longer than was "
			      "followed" : f->remote_cut ? "where it was "
			      "raised is not known: the traceback's text its "
			      "worker sent is longer than was read" : f->job ?
			      "where it was raised is not "
			      "known: no traceback came with it (a process "
			      "pool's job raises in its worker process)" :
			      "where it was raised is not known");
		return;
	}
	add_frame_sites(sb, t);
}

int run_failed_worker_sites(struct strbuf *sb, const struct py_failed_task *f,
			    const char *lead)
{
	if (!f->sites.at.code || !f->remote_at.file)
		return 0;
	add_remote_sites(sb, f, lead);
	return 1;
}

void run_failed_subject(struct strbuf *sb, const struct py_failed_task *t)
{
	if (!t->job) {
		strbuf_addstr(sb, "task '");
		esc_add_name_raw(sb, t->name);
		strbuf_addch(sb, '\'');
		return;
	}
	strbuf_addstr(sb, t->job == PY_FAILED_POOL_JOB ? "pool job" :
		      "executor job");
	if (t->name) {
		strbuf_addch(sb, ' ');
		esc_add_name_raw(sb, t->name);
	}
}

/* A group's exceptions, a detail each, and how many more. */
static void add_group_details(struct run_cause *cause,
			      const struct py_failed_task *t,
			      struct strbuf *sb)
{
	size_t i;

	for (i = 0; i < t->nleaves; i++) {
		strbuf_addstr(sb, "in the group: ");
		run_failed_leaf(sb, &t->leaves[i]);
		run_cause_detail(cause, sb);
	}
	if (t->leaves_more) {
		strbuf_addf(sb, "and %zu more exception%s in the group",
			    t->leaves_more, t->leaves_more == 1 ? "" : "s");
		run_cause_detail(cause, sb);
	}
}

void run_summarize_failed(struct run_summary *s, const struct collection *c)
{
	const struct py_async *a = &c->async;
	struct run_cause *cause = NULL;
	struct strbuf sb;
	size_t i, n = 0, more = 0;

	/* (a forked child's tasks are its parent's copies) */
	if (a->copied_at_fork)
		return;
	strbuf_init(&sb);
	for (i = 0; i < a->nfailed; i++) {
		const struct py_failed_task *t = &a->failed[i];

		/* (a gather collects it once its other children end) */
		if (t->retrieved || t->gathered_by)
			continue;
		if (n++ >= MAX_FAILED_CAUSES) {
			more++;
			continue;
		}
		run_failed_subject(&sb, t);
		/* (a job: no result() raised it again, no done callback
		 * took it; its exception() may have been asked) */
		strbuf_addstr(&sb, t->job == PY_FAILED_POOL_JOB ? " failed, "
			      "and no get() raised its exception: " : t->job ?
			      " failed, and no result() raised its "
			      "exception: " : " failed, and nothing retrieved "
			      "its exception: ");
		/* (a repr, quoted by Python's rules; the writer escapes
		 * the line) */
		strbuf_addstr(&sb, t->exc_repr);
		cause = run_cause_add(s, t->job ? RUN_CAUSE_FAILED_JOB :
				      RUN_CAUSE_FAILED_TASK, c->pid, &sb);
		run_failed_sites(&sb, t);
		run_cause_detail(cause, &sb);
		if (run_failed_worker_sites(&sb, t, "first raised at "))
			run_cause_detail(cause, &sb);
		add_group_details(cause, t, &sb);
	}
	if (cause && more) {
		strbuf_addf(&sb, "and %zu more failed tasks or jobs whose "
			    "exception nothing retrieved (the dump lists "
			    "them)", more);
		run_cause_detail(cause, &sb);
	}
	if (cause && a->failed_more) {
		strbuf_addf(&sb, "and %zu failed tasks or jobs past the %d "
			    "read", a->failed_more, PY_MAX_FAILED_TASKS);
		run_cause_detail(cause, &sb);
	}
	strbuf_release(&sb);
}
