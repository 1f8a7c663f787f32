/*
 * Tasks that ended by raising and are still referenced, and executors'
 * jobs that did (readers/tasks.h, struct py_failed_task): in the text
 * report those whose exception nothing retrieved, as a traceback's
 * ends; in the JSON all of them, "failed_tasks".
 */
#include "cli/report.h"

#include <string.h>

#include "cli/escape.h"
#include "cli/json.h"
#include "common/banned.h"

static void text_thread(FILE *out, const struct collection *c, int tid)
{
	const char *name = tid ? report_thread_name(c, tid) : NULL;

	if (!tid)
		return;
	fprintf(out, ", thread %d", tid);
	if (name) {
		fputs(" \"", out);
		esc_put(out, name, ESC_NAME, 0);
		fputc('"', out);
	}
}

/* A process pool's job's entry, as its worker's traceback text has it
 * (source line included). */
static void text_remote_frame(FILE *out, const struct py_text_frame *f)
{
	fputs("  File \"", out);
	esc_put(out, f->file, ESC_NAME, 0);
	fputs("\", line ", out);
	if (f->line >= 0)
		fprintf(out, "%ld", f->line);
	else
		fputs("?", out);
	fputs(", in ", out);
	esc_put(out, f->function ? f->function : "?", ESC_NAME, 0);
	fputs(" (in the worker process)\n", out);
	if (f->source) {
		fputs("    ", out);
		esc_text(out, f->source);
		fputc('\n', out);
	}
}

/* A traceback's two ends: the program's line, then the innermost where
 * a library's is further in; 0, or -1 when it has no entry. */
static int text_sites(FILE *out, const struct collection *c,
		      const struct py_exc_sites *at)
{
	if (at->own.code && at->own.addr != at->at.addr)
		report_text_frame(out, c, &at->own, 0);
	if (!at->at.code)
		return -1;
	report_text_frame(out, c, &at->at, 0);
	return 0;
}

/* A group's exceptions, each with its traceback's ends. */
static void text_group(FILE *out, const struct collection *c,
		       const struct py_failed_task *t)
{
	size_t i;

	for (i = 0; i < t->nleaves; i++) {
		const struct py_exc_leaf *l = &t->leaves[i];

		fputs("  in the group: ", out);
		esc_text(out, l->exc_repr);
		fputc('\n', out);
		if (text_sites(out, c, &l->sites) < 0)
			fputs(l->sites.cut ? "  (where it was raised is not "
			      "known: its traceback is longer than was "
			      "followed)\n" : "  (where it was raised is not "
			      "known)\n", out);
	}
	if (t->leaves_more)
		fprintf(out, "  (and %zu more exception%s in the group)\n",
			t->leaves_more, t->leaves_more == 1 ? "" : "s");
}

/* Where a failed task's exception was raised, when its traceback has
 * no entry: its worker's text, or why it is not known. */
static void text_no_sites(FILE *out, const struct py_failed_task *t)
{
	const struct py_exc_sites *at = &t->sites;

	if (t->remote_at.file) {
		/* (the same pair, from the worker's text) */
		if (t->remote_own.file && t->remote_own.file != t->remote_at.file)
			text_remote_frame(out, &t->remote_own);
		text_remote_frame(out, &t->remote_at);
	} else if (at->cut)
		fputs("  (where it was raised is not known: its traceback "
		      "is longer than was followed)\n", out);
	else if (t->job && t->remote_cut)
		fputs("  (where it was raised is not known: the traceback's "
		      "text its worker sent is longer than was read)\n", out);
	else if (t->job)
		fputs("  (where it was raised is not known: no traceback "
		      "came with it, as from a process pool's worker)\n",
		      out);
	else
		fputs("  (where it was raised is not known)\n", out);
}

static void text_failed(FILE *out, const struct collection *c,
			const struct py_failed_task *t)
{
	const struct py_exc_sites *at = &t->sites;

	if (t->job) {
		fputs(t->job == PY_FAILED_POOL_JOB ? "  pool job " :
		      "  executor job ", out);
		if (t->name) {
			esc_put(out, t->name, ESC_NAME, 0);
			fputc(' ', out);
		}
		fprintf(out, "(%s 0x%llx) raised ",
			t->job == PY_FAILED_POOL_JOB ? "ApplyResult" : "Future",
			(unsigned long long)t->addr);
	} else {
		fputs("  ", out);
		esc_put(out, t->name, ESC_NAME, 0);
		fprintf(out, " 0x%llx (loop 0x%llx",
			(unsigned long long)t->addr,
			(unsigned long long)t->loop);
		text_thread(out, c, t->tid);
		fputs(") raised ", out);
	}
	/* (a repr: its quotes are Python's own) */
	esc_text(out, t->exc_repr);
	fputc('\n', out);
	if (t->gathered_by)
		fprintf(out, "  (a child of the gather task 0x%llx awaits: it "
			"asks for the exception once its other children "
			"end)\n", (unsigned long long)t->gathered_by);
	if (text_sites(out, c, at) < 0) {
		text_no_sites(out, t);
	} else if (t->remote_at.file) {
		/* (raised again here: first in its worker) */
		fputs("  first raised in its worker process:\n", out);
		text_no_sites(out, t);
	}
	text_group(out, c, t);
}

void report_text_failed_tasks(FILE *out, const struct collection *c)
{
	const struct py_async *a = &c->async;
	size_t i, n = 0;

	for (i = 0; i < a->nfailed; i++)
		n += !a->failed[i].retrieved;
	if (!n && !a->failed_more && !a->jobs_unread)
		return;
	fprintf(out, "\nFailed tasks and jobs whose exception nothing "
		"retrieved (%zu):\n", n);
	for (i = 0; i < a->nfailed; i++)
		if (!a->failed[i].retrieved)
			text_failed(out, c, &a->failed[i]);
	/* (those kept first: past the limit, only retrieved ones are
	 * left out while an unretrieved one was) */
	if (a->failed_more)
		fprintf(out, "  (and %zu more failed tasks or jobs not "
			"read)\n", a->failed_more);
	if (a->jobs_unread)
		fprintf(out, "  (%zu Futures and pool results past the first "
			"%d were not looked at)\n", a->jobs_unread,
			MAX_JOBS_LOOKED_AT);
}

/* A frame, or an entry of a worker's traceback text, or null. */
static void json_site(struct json *j, const struct py_frame *f,
		      const struct py_text_frame *remote)
{
	if (f->code) {
		report_json_frame(j, f, 0);
	} else if (remote->file) {
		json_begin_object(j);
		json_key_string(j, "file", remote->file);
		json_key(j, "line");
		if (remote->line >= 0)
			json_int(j, remote->line);
		else
			json_null(j);
		json_key_string(j, "function", remote->function);
		json_key_string(j, "source", remote->source);
		json_key(j, "in_worker_process");
		json_bool(j, 1);
		json_end_object(j);
	} else {
		json_null(j);
	}
}

/* Its group's exceptions ("group": null for an exception that is no
 * group), and how many more. */
static void json_group(struct json *j, const struct py_failed_task *t)
{
	static const struct py_text_frame none;
	size_t i;

	json_key(j, "group");
	if (!t->group) {
		json_null(j);
	} else {
		json_begin_array(j);
		for (i = 0; i < t->nleaves; i++) {
			const struct py_exc_leaf *l = &t->leaves[i];

			json_begin_object(j);
			json_key_string(j, "exception", l->exc_repr);
			json_key(j, "traceback_cut");
			json_bool(j, l->sites.cut);
			json_key(j, "raised_at");
			json_site(j, &l->sites.at, &none);
			json_key(j, "raised_in_program");
			json_site(j, &l->sites.own, &none);
			json_end_object(j);
		}
		json_end_array(j);
	}
	json_key(j, "group_more");
	json_uint(j, t->leaves_more);
}

void report_json_failed_tasks(struct json *j, const struct py_async *a)
{
	static const struct py_frame none_frame;
	size_t i;

	json_key(j, "failed_tasks");
	json_begin_array(j);
	for (i = 0; i < a->nfailed; i++) {
		const struct py_failed_task *t = &a->failed[i];

		json_begin_object(j);
		json_key_string(j, "kind", t->job == PY_FAILED_POOL_JOB ?
				"pool_job" : t->job ? "job" : "task");
		json_key_addr(j, "id", t->addr);
		json_key_string(j, "name", t->name);
		json_key_addr(j, "loop", t->loop);
		json_key(j, "thread");
		if (t->tid)
			json_int(j, t->tid);
		else
			json_null(j);
		json_key(j, "retrieved");
		json_bool(j, t->retrieved);
		json_key_addr(j, "gathered_by", t->gathered_by);
		json_key(j, "traceback_cut");
		json_bool(j, t->sites.cut || t->remote_cut);
		json_key_string(j, "exception", t->exc_repr);
		json_key(j, "raised_at");
		json_site(j, &t->sites.at, &t->remote_at);
		json_key(j, "raised_in_program");
		json_site(j, &t->sites.own, &t->remote_own);
		json_key(j, "worker_raised_at");
		json_site(j, &none_frame, &t->remote_at);
		json_key(j, "worker_raised_in_program");
		json_site(j, &none_frame, &t->remote_own);
		json_group(j, t);
		json_end_object(j);
	}
	json_end_array(j);
	json_key(j, "failed_tasks_not_read");
	json_uint(j, a->failed_more);
	json_key(j, "jobs_not_looked_at");
	json_uint(j, a->jobs_unread);
}
