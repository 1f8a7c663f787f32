/*
 * Other schedulers in the text and JSON reports: greenlets grouped under
 * their thread (alike ones counted once), and the JSON `greenlets` array.
 * trio's tasks are in the tasks tree and array (report_tasks.c,
 * report.c), marked with their framework.
 */
#include "cli/report.h"

#include <stdlib.h>
#include <string.h>

#include "cli/escape.h"
#include "readers/tasks.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

/* Names listed for a group of alike greenlets before "...". */
#define GROUP_NAMES 5

static const struct py_thread *thread_of(const struct collection *c, int tid)
{
	size_t i;

	for (i = 0; tid && i < c->snap.nthreads; i++)
		if (c->snap.threads[i].tid == tid)
			return &c->snap.threads[i];
	return NULL;
}

/* Alike: same thread, state, kind and function, the same frames. */
static int same_greenlet(const struct py_greenlet *a, const struct py_greenlet *b)
{
	return a->tid == b->tid && a->state == b->state &&
	       a->is_main == b->is_main &&
	       cs_str_eq(a->type_name, b->type_name) &&
	       cs_str_eq(a->function, b->function) &&
	       a->nframes == b->nframes && a->truncated == b->truncated &&
	       py_frames_same_places(a->frames, b->frames, a->nframes);
}

/* "main greenlet", or its type's short name ("Greenlet", "Hub"). */
static const char *greenlet_kind(const struct py_greenlet *g)
{
	return g->is_main ? "main greenlet" :
	       g->type_name ? g->type_name : "greenlet";
}

static void greenlet_head(FILE *out, const struct py_greenlet *g,
			  size_t count)
{
	fputs("  ", out);
	if (count > 1)
		fprintf(out, "%zu x ", count);
	fprintf(out, "%s ", g->state == PY_GREENLET_NOT_STARTED ?
		"not started" : py_greenlet_state_name(g->state));
	esc_put(out, greenlet_kind(g), ESC_NAME, 0);
	if (g->function) {
		fputs(" running ", out);
		esc_put(out, g->function, ESC_NAME, 0);
		fputs("()", out);
	}
	if (count == 1)
		fprintf(out, " 0x%llx", (unsigned long long)g->addr);
}

static void print_group(FILE *out, const struct collection *c,
			const struct py_greenlet **members, size_t count)
{
	const struct py_greenlet *g = members[0];
	size_t i, named;

	greenlet_head(out, g, count);
	for (i = 0, named = 0; i < count; i++) {
		if (!members[i]->name)
			continue;
		if (named == GROUP_NAMES) {
			fputs(", ...", out);
			break;
		}
		fputs(named ? ", \"" : " \"", out);
		esc_put(out, members[i]->name, ESC_NAME, 0);
		fputc('"', out);
		named++;
	}
	/* (the socket a gevent socket's method waits on) */
	if (count == 1 && g->io_wait != PY_IO_NONE)
		fprintf(out, ", to %s fd %lld",
			g->io_wait == PY_IO_READ ? "read" : "write",
			(long long)g->io_fd);
	fputc('\n', out);
	if (g->state == PY_GREENLET_RUNNING) {
		fputs("    (its stack is the thread's stack above)\n", out);
		return;
	}
	if (!g->nframes && !g->truncated)
		return;
	if (g->truncated)
		fputs("    ... (older frames could not be read)\n", out);
	for (i = g->nframes; i-- > 0;) {
		fputs("  ", out);
		report_text_frame(out, c, &g->frames[i], c->opt.locals);
	}
}

/* The heading a greenlet is listed under: its thread's id; -1 for one
 * not started and so on no thread yet; 0 when its thread is unknown. */
static int bucket(const struct py_greenlet *g)
{
	return g->tid ? g->tid : g->state == PY_GREENLET_NOT_STARTED ? -1 : 0;
}

void report_text_greenlets(FILE *out, const struct collection *c)
{
	const struct py_greenlets *gs = &c->greenlets;
	const struct py_greenlet **group;
	char *done;
	size_t i, j, k, n;

	if (!gs->n)
		return;
	fputs("\nGreenlets (greenlet ", out);
	esc_text(out, gs->version);
	fprintf(out, "): %zu\n", gs->n);
	group = xmalloc(gs->n * sizeof(*group));
	done = xcalloc(gs->n, 1);
	/* Threads in the order their first greenlet was found; within one,
	 * each greenlet with the alike ones after it. */
	for (i = 0; i < gs->n; i++) {
		const struct py_thread *t = thread_of(c, gs->v[i].tid);
		int tid = bucket(&gs->v[i]);

		if (done[i])
			continue;
		if (tid > 0)
			fprintf(out, "Thread %d", tid);
		else
			fputs(tid ? "Not started, on no thread yet" :
			      "Thread unknown", out);
		if (t && t->name) {
			fputs(" \"", out);
			esc_put(out, t->name, ESC_NAME, 0);
			fputc('"', out);
		}
		fputs(":\n", out);
		for (j = i; j < gs->n; j++) {
			if (done[j] || bucket(&gs->v[j]) != tid)
				continue;
			for (n = 0, k = j; k < gs->n; k++) {
				if (done[k] || bucket(&gs->v[k]) != tid)
					continue;
				/* with --locals each stands alone */
				if (k != j && (c->opt.locals ||
					       !same_greenlet(&gs->v[j], &gs->v[k])))
					continue;
				done[k] = 1;
				group[n++] = &gs->v[k];
			}
			print_group(out, c, group, n);
		}
	}
	free(done);
	free(group);
}

void report_json_io(struct json *j, int io_wait, int64_t fd)
{
	if (io_wait == PY_IO_NONE)
		return;
	json_key(j, "fd");
	json_begin_object(j);
	json_key_int(j, "fd", fd);
	json_key_string(j, "for", io_wait == PY_IO_READ ? "read" : "write");
	json_end_object(j);
}

static void json_greenlet(struct json *j, const struct collection *c,
			  const struct py_greenlet *g)
{
	const struct py_thread *t = thread_of(c, g->tid);
	size_t i;

	json_begin_object(j);
	json_key(j, "id");
	report_json_hex(j, g->addr);
	json_key(j, "state");
	json_string(j, py_greenlet_state_name(g->state));
	json_key(j, "thread");
	if (g->tid)
		json_int(j, g->tid);
	else
		json_null(j);
	json_key(j, "parent");
	report_json_hex(j, g->parent);
	json_key(j, "main");
	json_bool(j, g->is_main);
	json_key(j, "type");
	json_string(j, g->type_name);
	json_key(j, "name");
	json_string(j, g->name);
	json_key(j, "function");
	json_string(j, g->function);
	json_key(j, "truncated");
	json_bool(j, g->truncated);
	/* (parked in a gevent socket's method) */
	report_json_io(j, g->io_wait, g->io_fd);
	/* A running greenlet's frames are its thread's. */
	json_key(j, "frames");
	json_begin_array(j);
	if (g->state == PY_GREENLET_RUNNING) {
		for (i = 0; t && i < t->nframes; i++)
			report_json_frame(j, &t->frames[i], c->opt.locals);
	} else {
		for (i = 0; i < g->nframes; i++)
			report_json_frame(j, &g->frames[i], c->opt.locals);
	}
	json_end_array(j);
	json_end_object(j);
}

void report_json_greenlets(struct json *j, const struct collection *c)
{
	size_t i;

	json_key(j, "greenlets");
	json_begin_array(j);
	for (i = 0; i < c->greenlets.n; i++)
		json_greenlet(j, c, &c->greenlets.v[i]);
	json_end_array(j);
}

static void dot_text(FILE *out, const char *s)
{
	esc_put(out, s, ESC_DOT, 0);
}

/*
 * Greenlets in the --format dot graph (report_dot() calls this before it
 * closes the graph): one node each -- kind, name and function, state,
 * thread and innermost frame -- and an edge to its parent, where control
 * goes when it finishes.  Not grouped: the graph shows every object.
 */
void report_dot_greenlets(FILE *out, const struct collection *c)
{
	const struct py_greenlets *gs = &c->greenlets;
	size_t i;

	for (i = 0; i < gs->n; i++) {
		const struct py_greenlet *g = &gs->v[i];
		const struct py_thread *t = thread_of(c, g->tid);
		const struct py_frame *f = g->nframes ? &g->frames[0] : NULL;

		if (g->state == PY_GREENLET_RUNNING && t && t->nframes)
			f = &t->frames[0];   /* its stack is the thread's */
		fprintf(out, "  \"0x%llx\" [shape=box, style=rounded, label=\"",
			(unsigned long long)g->addr);
		dot_text(out, greenlet_kind(g));
		if (g->name) {
			fputs(" \\\"", out);
			dot_text(out, g->name);
			fputs("\\\"", out);
		}
		if (g->function) {
			fputc(' ', out);
			dot_text(out, g->function);
			fputs("()", out);
		}
		fprintf(out, "\\n%s", py_greenlet_state_name(g->state));
		if (g->tid)
			fprintf(out, " in thread %d", g->tid);
		if (f && f->code) {
			fputs("\\n", out);
			dot_text(out, f->code->qualname);
			fprintf(out, ":%d", f->line);
		}
		fputs("\"];\n", out);
		if (g->parent)
			fprintf(out, "  \"0x%llx\" -> \"0x%llx\" [label=\"parent\", "
				"style=dotted];\n", (unsigned long long)g->addr,
				(unsigned long long)g->parent);
	}
}
