#include "cli/report_native.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/escape.h"
#include "cli/report.h"
#include "cli/thread_alike.h"
#include "common/util.h"
#include "readers/native_merge.h"
#include "common/banned.h"

const char *report_native_interp(const struct collection *c)
{
	return c->py.pymod ? c->py.pymod->path : NULL;
}

static const struct native_thread *native_of(const struct collection *c,
					     int tid)
{
	return tid > 0 ? native_stacks_find(&c->native, tid) : NULL;
}

static void text_native(FILE *out, const struct native_frame *f)
{
	fputs("  (C) ", out);
	esc_put(out, f->sym.function ? f->sym.function : "??", ESC_NAME, 0);
	if (f->sym.file) {
		fputs(" at ", out);
		esc_put(out, f->sym.file, ESC_NAME, 0);
		if (f->sym.line > 0)
			fprintf(out, ":%d", f->sym.line);
	} else if (f->sym.library) {
		fputs("  ", out);
		esc_put(out, cs_base_name(f->sym.library), ESC_NAME, 0);
		fprintf(out, "+0x%" PRIx64, f->sym.offset);
	} else {
		fprintf(out, "  0x%" PRIx64, f->pc);
	}
	if (f->sym.inlined)
		fputs(" [inlined]", out);
	if (f->signal)
		fputs(" [signal handler called]", out);
	fputc('\n', out);
}

void report_native_text_blocked(FILE *out, const struct collection *c,
				int tid)
{
	const char *b = native_blocked_in(native_of(c, tid));

	if (b)
		fprintf(out, " [blocked in: %s]", b);
}

/* The merged stack, outermost first as in a Python traceback. */
static void text_merged(FILE *out, const struct collection *c,
			const struct py_thread *pt,
			const struct native_thread *nt)
{
	struct merged_frame *m;
	size_t n, i;

	native_merge(pt, nt, report_native_interp(c), c->opt.native == 2, &m, &n);
	for (i = n; i-- > 0;) {
		if (!m[i].py) {
			text_native(out, m[i].native);
			continue;
		}
		report_text_frame(out, c, m[i].py, c->opt.locals);
		/* (as without --native: where --max-frames cut the stack) */
		if (pt->omitted && m[i].py == &pt->frames[pt->omitted_at])
			fprintf(out, "  ... %zu frames omitted ...\n",
				pt->omitted);
	}
	free(m);
}

void report_native_text_frames(FILE *out, const struct collection *c,
			       const struct py_thread *t)
{
	const struct native_thread *nt = native_of(c, t->tid);

	if (!t->nframes && !t->truncated && (!nt || !nt->nframes)) {
		fputs("  (no Python frames)\n", out);
		return;
	}
	fputs("Traceback (most recent call last):\n", out);
	if (t->truncated)
		fputs("  ... (older frames could not be read)\n", out);
	if (t->exited)
		fputs("  (native frames not read: the thread has exited)\n",
		      out);
	else if (report_left_running(c, t->tid))
		fputs("  (native frames not read: the thread was left "
		      "running)\n", out);
	else if (!nt || !nt->has_regs)
		fputs("  (native frames not read: the thread was not stopped)\n",
		      out);
	text_merged(out, c, t, nt);
}

/* has_py[i]: whether native thread i has a Python thread state (an entry
 * of its own above): each Python thread looked up in the stacks' index
 * by tid (a scan per native thread was 4 million comparisons for 2,000
 * threads).  Caller frees. */
static unsigned char *native_has_py(const struct collection *c)
{
	size_t n = c->native.nthreads, i;
	unsigned char *has = xcalloc(n ? n : 1, 1);

	for (i = 0; i < c->snap.nthreads; i++) {
		const struct native_thread *nt =
			native_of(c, c->snap.threads[i].tid);

		if (nt)
			has[nt - c->native.threads] = 1;
	}
	return has;
}

/* "Thread N (no Python thread state)", or for a group, "Threads N, M,
 * ... (no Python thread state, K alike)"; then its C stack. */
static void text_other(FILE *out, const struct collection *c, size_t at,
		       const size_t *next, size_t count)
{
	const struct native_thread *nt = &c->native.threads[at];
	const char *b;
	size_t i, shown = 0;

	if (count < THREAD_ALIKE_MIN) {
		fprintf(out, "\nThread %d (no Python thread state)", nt->tid);
	} else {
		fputs("\nThreads", out);
		/* Bounded by count: the group's members, linked in order. */
		for (i = at; i != THREAD_ALIKE_END && shown < count;
		     i = next[i])
			fprintf(out, "%s %d", shown++ ? "," : "",
				c->native.threads[i].tid);
		fprintf(out, " (no Python thread state, %zu alike)", count);
	}
	/* This thread's, not the first of its tid's (a tid may be 0). */
	b = native_blocked_in(nt);
	if (b)
		fprintf(out, " [blocked in: %s]", b);
	fputc('\n', out);
	if (!nt->nframes) {
		fputs("  (no native frames)\n", out);
		return;
	}
	fputs("Native stack (most recent call last):\n", out);
	text_merged(out, c, NULL, nt);
}

void report_native_text_others(FILE *out, const struct collection *c)
{
	size_t n = c->native.nthreads, i, *first, *next, *count;
	unsigned char *has_py = native_has_py(c);
	struct thread_alike_native nat = {
		&c->native, report_native_interp(c), c->opt.native == 2
	};

	first = xmallocarray(n ? n : 1, sizeof(*first));
	next = xmallocarray(n ? n : 1, sizeof(*next));
	count = xmallocarray(n ? n : 1, sizeof(*count));
	/* With --all, each on its own (nothing grouped, nothing read). */
	if (!c->opt.expand_all)
		thread_alike_native_only(&nat, has_py, first, next, count);
	for (i = 0; i < n; i++) {
		int grouped = !c->opt.expand_all &&
			      count[first[i]] >= THREAD_ALIKE_MIN;

		if (has_py[i] || (grouped && first[i] != i))
			continue;
		text_other(out, c, i, next, grouped ? count[i] : 1);
	}
	free(first);
	free(next);
	free(count);
	free(has_py);
}

static void json_native(struct json *j, const struct native_frame *f)
{
	json_begin_object(j);
	json_key(j, "kind");
	json_string(j, "native");
	json_key(j, "function");
	json_string(j, f->sym.function);
	json_key(j, "library");
	json_string(j, f->sym.library);
	json_key(j, "address");
	json_hex(j, f->pc);
	json_key(j, "offset");
	if (f->sym.library)
		json_hex(j, f->sym.offset);
	else
		json_null(j);
	if (f->sym.file) {
		json_key(j, "file");
		json_string(j, f->sym.file);
		json_key(j, "line");
		if (f->sym.line > 0)
			json_int(j, f->sym.line);
		else
			json_null(j);
	}
	if (f->sym.inlined) {
		json_key(j, "inlined");
		json_bool(j, 1);
	}
	if (f->signal) {
		json_key(j, "signal_frame");
		json_bool(j, 1);
	}
	json_end_object(j);
}

static void json_merged(struct json *j, const struct collection *c,
			const struct py_thread *pt,
			const struct native_thread *nt)
{
	struct merged_frame *m;
	size_t n, i;

	json_key(j, "blocked_in");
	json_string(j, native_blocked_in(nt));
	json_key(j, "frames");
	json_begin_array(j);
	native_merge(pt, nt, report_native_interp(c), c->opt.native == 2, &m, &n);
	for (i = 0; i < n; i++) {
		if (m[i].py)
			report_json_frame(j, m[i].py, c->opt.locals);
		else
			json_native(j, m[i].native);
	}
	json_end_array(j);
	free(m);
}

void report_native_json_frames(struct json *j, const struct collection *c,
			       const struct py_thread *t)
{
	json_merged(j, c, t, native_of(c, t->tid));
}

void report_native_json_others(struct json *j, const struct collection *c)
{
	unsigned char *has_py = native_has_py(c);
	size_t i;

	for (i = 0; i < c->native.nthreads; i++) {
		const struct native_thread *nt = &c->native.threads[i];

		if (has_py[i])
			continue;
		json_begin_object(j);
		json_key(j, "tid");
		json_int(j, nt->tid);
		json_key(j, "thread_id");
		json_null(j);
		json_key(j, "name");
		json_null(j);
		json_key(j, "holds_gil");
		json_null(j);
		json_key(j, "truncated");
		json_bool(j, 0);
		json_merged(j, c, NULL, nt);
		json_end_object(j);
	}
	free(has_py);
}
