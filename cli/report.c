#include "cli/report.h"

#include "cli/json.h"
#include "common/banned.h"

static void text_frame(FILE *out, const struct py_frame *f, int locals)
{
	size_t i;

	fprintf(out, "  File \"%s\", line ", f->code->filename);
	if (f->line >= 0)
		fprintf(out, "%d", f->line);
	else
		fputs("?", out);
	fprintf(out, ", in %s\n", f->code->qualname);
	for (i = 0; locals && i < f->nlocals; i++)
		fprintf(out, "      %s = %s\n", f->locals[i].name, f->locals[i].repr);
}

static void text_thread(FILE *out, const struct py_thread *t, int locals)
{
	size_t i;

	fprintf(out, "\nThread %d", t->tid);
	if (t->name)
		fprintf(out, " \"%s\"", t->name);
	if (t->holds_gil == 1)
		fputs(" (holds the GIL)", out);
	fputc('\n', out);
	if (!t->nframes && !t->truncated) {
		fputs("  (no Python frames)\n", out);
		return;
	}
	fputs("Traceback (most recent call last):\n", out);
	if (t->truncated)
		fputs("  ... (older frames could not be read)\n", out);
	for (i = t->nframes; i-- > 0;)
		text_frame(out, &t->frames[i], locals);
}

void report_text(FILE *out, const struct collection *c)
{
	size_t i;

	fprintf(out, "Process %d: %s\n", c->pid, c->command ? c->command : "?");
	fprintf(out, "Python %s (%s)\n", c->py.version,
		c->py.executable ? c->py.executable : "?");
	for (i = 0; i < c->snap.nthreads; i++)
		text_thread(out, &c->snap.threads[i], c->opt.locals);
}

static void json_frame(struct json *j, const struct py_frame *f, int locals)
{
	size_t i;

	json_begin_object(j);
	json_key(j, "function");
	json_string(j, f->code->name);
	json_key(j, "qualname");
	json_string(j, f->code->qualname);
	json_key(j, "file");
	json_string(j, f->code->filename);
	json_key(j, "line");
	if (f->line >= 0)
		json_int(j, f->line);
	else
		json_null(j);
	json_key(j, "kind");
	json_string(j, py_code_kind_name(f->code->kind));
	if (locals) {
		json_key(j, "locals");
		json_begin_object(j);
		for (i = 0; i < f->nlocals; i++) {
			json_key(j, f->locals[i].name);
			json_string(j, f->locals[i].repr);
		}
		json_end_object(j);
	}
	json_end_object(j);
}

static void json_thread(struct json *j, const struct py_thread *t, int locals)
{
	size_t i;

	json_begin_object(j);
	json_key(j, "tid");
	json_int(j, t->tid);
	json_key(j, "thread_id");
	json_uint(j, t->thread_id);
	json_key(j, "name");
	json_string(j, t->name);
	json_key(j, "holds_gil");
	if (t->holds_gil < 0)
		json_null(j);
	else
		json_bool(j, t->holds_gil);
	json_key(j, "truncated");
	json_bool(j, t->truncated);
	json_key(j, "frames");
	json_begin_array(j);
	for (i = 0; i < t->nframes; i++)
		json_frame(j, &t->frames[i], locals);
	json_end_array(j);
	json_end_object(j);
}

void report_json_value(struct json *j, const struct collection *c)
{
	size_t i;

	json_begin_object(j);
	json_key(j, "schema");
	json_int(j, 1);
	json_key(j, "pid");
	json_int(j, c->pid);
	json_key(j, "command");
	json_string(j, c->command);
	json_key(j, "python");
	json_begin_object(j);
	json_key(j, "version");
	json_string(j, c->py.version);
	json_key(j, "executable");
	json_string(j, c->py.executable);
	json_end_object(j);
	json_key(j, "threads");
	json_begin_array(j);
	for (i = 0; i < c->snap.nthreads; i++)
		json_thread(j, &c->snap.threads[i], c->opt.locals);
	json_end_array(j);
	json_key(j, "stats");
	json_begin_object(j);
	json_key(j, "pause_ms");
	json_double(j, c->pause_ms);
	json_key(j, "wall_ms");
	json_double(j, c->wall_ms);
	json_key(j, "reads");
	json_uint(j, c->ms->stats.reads);
	json_key(j, "bytes_read");
	json_uint(j, c->ms->stats.bytes_read);
	json_end_object(j);
	json_end_object(j);
}

void report_json(FILE *out, const struct collection *c)
{
	struct json j;

	json_init(&j, out, 1);
	report_json_value(&j, c);
}
