#include "cli/report.h"
#include "cli/report_graph.h"

#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/escape.h"
#include "cli/json.h"
#include "cli/json_memo.h"
#include "cli/report_native.h"
#include "cli/report_stats.h"
#include "cli/source.h"
#include "cli/thread_alike.h"
#include "common/banned.h"

const char *report_source_line(const struct collection *c,
			       const struct py_frame *f, int *cut)
{
	*cut = 0;
	if (!c->sources)
		return NULL;
	return source_line(c->sources, f->code->filename, f->line, cut);
}

static void text_source(FILE *out, const struct collection *c,
			const char *indent, const struct py_frame *f)
{
	const char *text;
	int cut;

	text = report_source_line(c, f, &cut);
	if (!text)
		return;
	fputs(indent, out);
	esc_text(out, text);
	fputs(cut ? "...\n" : "\n", out);
}

static void text_frame(FILE *out, const struct collection *c,
		       const struct py_frame *f, int locals)
{
	size_t i;

	fputs("  File \"", out);
	esc_put(out, f->code->filename, ESC_NAME, 0);
	fputs("\", line ", out);
	if (f->line >= 0)
		fprintf(out, "%d", f->line);
	else
		fputs("?", out);
	fputs(", in ", out);
	esc_put(out, f->code->qualname, ESC_NAME, 0);
	fputc('\n', out);
	text_source(out, c, "    ", f);
	for (i = 0; locals && i < f->nlocals; i++)
		report_text_local(out, "      ", &f->locals[i]);
}

static void text_thread_name(FILE *out, const struct py_thread *t)
{
	if (t->name) {
		fputs(" \"", out);
		esc_put(out, t->name, ESC_NAME, 0);
		fputc('"', out);
	}
}

/* A thread's Python frames, after its header line. */
static void text_thread_frames(FILE *out, const struct collection *c,
			       const struct py_thread *t, int locals)
{
	size_t i;

	if (!t->nframes) {
		fputs(t->truncated ? "  (its Python frames could not be read)\n"
			: "  (no Python frames)\n", out);
		return;
	}
	fputs("Traceback (most recent call last):\n", out);
	if (t->truncated)
		fputs("  ... (older frames could not be read)\n", out);
	for (i = t->nframes; i-- > 0;) {
		text_frame(out, c, &t->frames[i], locals);
		if (t->omitted && i == t->omitted_at)
			fprintf(out, "  ... %zu frames omitted ...\n", t->omitted);
	}
}

/* After a thread's id and name (or alike threads'): its marks, then its
 * frames. */
static void text_thread_rest(FILE *out, const struct collection *c,
			     const struct py_thread *t, int locals)
{
	if (t->holds_gil == 1)
		fputs(" (holds the GIL)", out);
	if (t->exited)
		fputs(" (exited; as the interpreter still lists it)", out);
	if (c->opt.native) {
		report_native_text_blocked(out, c, t->tid);
		fputc('\n', out);
		report_native_text_frames(out, c, t);
		return;
	}
	fputc('\n', out);
	text_thread_frames(out, c, t, locals);
}

static void text_thread(FILE *out, const struct collection *c,
			const struct py_thread *t, int locals)
{
	fprintf(out, "\nThread %d", t->tid);
	text_thread_name(out, t);
	report_text_thread_state(out, c, t->tid);
	text_thread_rest(out, c, t, locals);
}

/* Alike threads (cli/thread_alike.h) once, from the first: every id, the
 * first names. */
static void text_threads_alike(FILE *out, const struct collection *c,
			       size_t at, const size_t *next, size_t count)
{
	const struct py_thread *t = &c->snap.threads[at];
	int *tids = xmallocarray(count ? count : 1, sizeof(*tids));
	size_t i, shown = 0;

	fputs("\nThreads", out);
	/* Bounded by count: the group's members, linked in order. */
	for (i = at; i != THREAD_ALIKE_END && shown < count; i = next[i]) {
		fprintf(out, "%s %d", shown ? "," : "", c->snap.threads[i].tid);
		if (shown < THREAD_ALIKE_NAMES)
			text_thread_name(out, &c->snap.threads[i]);
		tids[shown++] = c->snap.threads[i].tid;
	}
	fprintf(out, " (%zu alike)", count);
	report_text_threads_timer(out, c, tids, shown);
	free(tids);
	text_thread_rest(out, c, t, 0);
}

void report_text(FILE *out, const struct collection *c)
{
	size_t i, *first = NULL, *next = NULL, *count = NULL;

	fprintf(out, "Process %d", c->pid);
	if (c->ns_pid && c->ns_pid != c->pid)
		fprintf(out, " (PID %d in its namespace)", c->ns_pid);
	fputs(": ", out);
	esc_text(out, c->command);
	fputs("\nPython ", out);
	esc_text(out, c->py.version);
	fputs(" (", out);
	esc_text(out, c->py.executable);
	fputs(")\n", out);
	report_text_stopped(out, c);
	/* Each with its locals, or asked for: alone. */
	if (!c->opt.locals && !c->opt.expand_all &&
	    c->snap.nthreads >= THREAD_ALIKE_MIN) {
		struct thread_alike_native nat = {
			&c->native, report_native_interp(c), c->opt.native == 2
		};

		first = xmallocarray(c->snap.nthreads, sizeof(*first));
		next = xmallocarray(c->snap.nthreads, sizeof(*next));
		count = xmallocarray(c->snap.nthreads, sizeof(*count));
		unsigned char *apart = report_threads_apart(c);

		thread_alike(&c->snap, c->opt.native ? &nat : NULL, apart,
			     first, next, count);
		free(apart);
	}
	for (i = 0; i < c->snap.nthreads; i++) {
		const struct py_thread *t = &c->snap.threads[i];
		int grouped = first && count[first[i]] >= THREAD_ALIKE_MIN;

		/* Shown with the first alike it, of the same interpreter. */
		if (grouped && first[i] != i)
			continue;
		if (c->snap.ninterps > 1 &&
		    (i == 0 || t->interp != t[-1].interp))
			fprintf(out, "\nInterpreter %lld%s\n",
				(long long)t->interp_id,
				t->interp_main ? " (main)" : "");
		if (grouped)
			text_threads_alike(out, c, i, next, count[i]);
		else
			text_thread(out, c, t, c->opt.locals);
	}
	free(first);
	free(next);
	free(count);
	if (c->opt.native)
		report_native_text_others(out, c);
	report_text_greenlets(out, c);
	report_text_async(out, c);
	report_text_graph(out, c);
	report_warnings(stderr, &c->warnings, CS_WARN_COLLECTION);
	source_warn_stale(stderr, c->sources, c->is_live);
}

void report_warnings(FILE *out, const struct cs_warnings *w,
		     enum cs_warn_origin origin)
{
	size_t i;

	for (i = 0; i < w->n; i++) {
		if (w->v[i].origin != origin)
			continue;
		fputs("coroscope: warning: ", out);
		esc_text(out, w->v[i].text);
		fputc('\n', out);
	}
}

void report_json_warnings(struct json *j, const struct cs_warnings *w,
			  enum cs_warn_origin origin)
{
	size_t i;

	json_begin_array(j);
	for (i = 0; i < w->n; i++)
		if (w->v[i].origin == origin)
			json_string(j, w->v[i].text);
	json_end_array(j);
}

void report_text_local(FILE *out, const char *indent,
		       const struct py_local *l)
{
	fputs(indent, out);
	esc_put(out, l->name, ESC_NAME, 0);
	fputs(" = ", out);
	esc_text(out, l->repr);
	fputc('\n', out);
}

/* An object's address, null when there is none. */
static void json_id(struct json *j, uint64_t v)
{
	if (v)
		json_hex(j, v);
	else
		json_null(j);
}

/* "locals": {name: repr}, empty for a frame we do not have. */
static void json_locals(struct json *j, const struct py_frame *f)
{
	size_t i;

	json_key(j, "locals");
	json_begin_object(j);
	for (i = 0; f && i < f->nlocals; i++) {
		json_key_str(j, f->locals[i].name);
		json_string(j, f->locals[i].repr);
	}
	json_end_object(j);
}

/* What a memo's key (cli/json_memo.h) starts with: which run it is. */
enum memo_run {
	MEMO_FRAME_CODE = 1, MEMO_FRAME_KIND, MEMO_FRAME, MEMO_GEN_HEAD,
	MEMO_GEN, MEMO_TASK_STATE, MEMO_TASK_AWAITING, MEMO_TASK_END
};

/* A frame's members that come from its code object, up to the key of
 * its line: the same for every frame of one code object. */
static void frame_code(struct json *j, const void *arg)
{
	const struct py_code *code = arg;

	json_key_string(j, "function", code->name);
	json_key_string(j, "qualname", code->qualname);
	json_key_string(j, "file", code->filename);
	json_key(j, "line");
}

static void frame_kind(struct json *j, const void *arg)
{
	const struct py_code *code = arg;

	json_key_string(j, "kind", py_code_kind_name(code->kind));
}

/* A frame of a task's stack, in the pieces around its holes (its
 * generator's address, its line): the same for every frame of one code
 * object. */
enum { FRAME_ID, FRAME_LINE, FRAME_HOLES };

static void frame_piece(struct json *j, const void *arg, size_t i)
{
	const struct py_code *code = arg;

	switch (i) {
	case FRAME_ID:
		json_begin_object(j);
		json_key(j, "id");
		break;
	case FRAME_LINE:
		frame_code(j, code);
		break;
	default:  /* the last */
		frame_kind(j, code);
		json_end_object(j);
		break;
	}
}

/* One frame, with its generator's address when id is not 0; memo may be
 * NULL (a few frames are not worth one). */
static void json_frame_id(struct json *j, const struct py_frame *f,
			  int locals, uint64_t id, struct json_memo *memo)
{
	uint64_t key[JSON_MEMO_KEY] = { MEMO_FRAME, (uintptr_t)f->code, 0 };
	const struct json_hole h[FRAME_HOLES] = {
		{ JSON_HOLE_ADDR, id, 0 },
		{ JSON_HOLE_NUM, 0, f->line },
	};

	/* A task's frame: all of it kept but the holes. */
	if (id && memo && !locals) {
		json_memo_write_holes(j, memo, key, frame_piece, f->code, h,
				      FRAME_HOLES);
		return;
	}
	key[0] = MEMO_FRAME_CODE;
	json_begin_object(j);
	if (id)
		json_key_addr(j, "id", id);
	if (memo)
		json_memo_write(j, memo, key, frame_code, f->code);
	else
		frame_code(j, f->code);
	json_hole(j, &h[FRAME_LINE]);
	key[0] = MEMO_FRAME_KIND;
	key[1] = (uint64_t)f->code->kind;
	if (memo)
		json_memo_write(j, memo, key, frame_kind, f->code);
	else
		frame_kind(j, f->code);
	if (locals) {
		json_locals(j, f);
	}
	json_end_object(j);
}

static void json_frame(struct json *j, const struct py_frame *f, int locals)
{
	json_frame_id(j, f, locals, 0, NULL);
}

/* For report_sched.c: one frame and one address, written as here. */
void report_text_frame(FILE *out, const struct collection *c,
		       const struct py_frame *f, int locals)
{
	text_frame(out, c, f, locals);
}

void report_json_frame(struct json *j, const struct py_frame *f, int locals)
{
	json_frame(j, f, locals);
}

void report_json_hex(struct json *j, uint64_t v)
{
	json_id(j, v);
}

static void json_interp(struct json *j, int64_t id)
{
	if (id >= 0) {
		json_key_int(j, "interpreter", id);
	} else {
		json_key(j, "interpreter");
		json_null(j);
	}
}

/* A task's members from its state to the key of its stack, in the
 * pieces around its holes (thread, interpreter, loop, coroutine): the
 * same for every task of one state. */
enum { TASK_THREAD, TASK_INTERP, TASK_LOOP, TASK_CORO, TASK_HOLES };

static void task_state_piece(struct json *j, const void *arg, size_t i)
{
	const struct py_task *t = arg;

	switch (i) {
	case TASK_THREAD:
		json_key_string(j, "state", t->running ? "running" : "pending");
		json_key(j, "thread");
		break;
	case TASK_INTERP:
		json_key(j, "interpreter");
		break;
	case TASK_LOOP:
		json_key(j, "loop");
		break;
	case TASK_CORO:
		json_key(j, "coro");
		break;
	default:  /* the last */
		json_key(j, "stack");
		break;
	}
}

/* The object a task awaits, around its address: the same for every
 * waiter of one type (a cached name: one address, one text). */
static void task_awaiting_piece(struct json *j, const void *arg, size_t i)
{
	const struct py_task *t = arg;

	if (i == 0) {
		json_begin_object(j);
		json_key(j, "id");
	} else {
		json_key_string(j, "type",
				t->waiter_type ? t->waiter_type : "?");
		json_end_object(j);
	}
}

/* A task's last members up to its nursery (the hole): the same for
 * every task of one framework.  (A run does not close what it did not
 * open: the task's brace is written apart.) */
static void task_end_piece(struct json *j, const void *arg, size_t i)
{
	const struct py_task *t = arg;

	if (i == 0) {
		struct json_hole h = { JSON_HOLE_NUM, 0, t->cancels_requested };

		json_key(j, "cancels_requested");
		json_hole(j, &h);
		json_key_string(j, "framework",
				t->framework ? t->framework : "asyncio");
		json_key(j, "nursery");
	}
}

struct gens_part {
	const struct py_async *a;
	int locals;
	double clock_s;           /* collection.clock_s */
};

static void json_task(struct json *j, const struct gens_part *gp,
		      const struct py_task *t, struct json_memo *memo)
{
	uint64_t key[JSON_MEMO_KEY] = { MEMO_TASK_STATE,
					(uint64_t)t->running, 0 };
	struct json_hole h[TASK_HOLES] = {
		/* null for no thread; any other tid as it is */
		{ t->tid ? JSON_HOLE_INT : JSON_HOLE_NUM, 0,
		  t->tid ? t->tid : -1 },
		{ JSON_HOLE_NUM, 0, t->interp_id },
		{ JSON_HOLE_ADDR, t->loop, 0 },
		{ JSON_HOLE_ADDR, t->coro, 0 },
	};
	size_t i;

	json_begin_object(j);
	json_key_addr(j, "id", t->addr);
	json_key_string(j, "name", t->name);
	json_memo_write_holes(j, memo, key, task_state_piece, t, h,
			      TASK_HOLES);
	json_begin_array(j);
	for (i = 0; i < t->nstack; i++) {
		const struct py_gen *g = &gp->a->gens[t->stack[i]];

		if (g->has_frame)
			json_frame_id(j, &g->frame, gp->locals, g->addr, memo);
	}
	json_end_array(j);
	json_key(j, "awaiting");
	if ((t->waiter || t->timer_scope) && (t->sleeps || t->times_out)) {
		report_json_timed_awaiting(j, t, gp->clock_s);
	} else if (t->waiter) {
		key[0] = MEMO_TASK_AWAITING;
		key[1] = (uintptr_t)t->waiter_type;
		h[0] = (struct json_hole){ JSON_HOLE_ADDR, t->waiter, 0 };
		json_memo_write_holes(j, memo, key, task_awaiting_piece, t,
				      h, 1);
	} else {
		json_null(j);
	}
	/* (a task parked on an fd: trio's, anyio's, aiohttp's reads) */
	report_json_io(j, t->io_wait, t->io_fd);
	json_key(j, "awaited_by");
	json_begin_array(j);
	for (i = 0; i < t->nawaited_by; i++)
		json_id(j, t->awaited_by[i]);
	json_end_array(j);
	key[0] = MEMO_TASK_END;
	key[1] = (uintptr_t)t->framework;
	key[2] = (uint64_t)((int64_t)t->cancels_requested + 2);
	h[0] = (struct json_hole){ JSON_HOLE_ADDR, t->nursery, 0 };
	json_memo_write_holes(j, memo, key, task_end_piece, t, h, 1);
	json_end_object(j);
}

/* A generator's members from its kind to the key of its line: the same
 * for every generator of one kind, state, qualname and file. */
static void gen_head(struct json *j, const void *arg)
{
	const struct py_gen *g = arg;

	json_key_string(j, "kind", py_code_kind_name(g->kind));
	json_key_string(j, "state", py_gen_state_name(g->state));
	json_key_string(j, "qualname", g->qualname);
	json_key_string(j, "file", g->code ? g->code->filename : NULL);
	json_key(j, "line");
}

/* A generator, in the pieces around its holes: its address, its line,
 * what it awaits, its task, its interpreter. */
enum { GEN_ID, GEN_LINE, GEN_AWAITING, GEN_TASK, GEN_INTERP, GEN_HOLES };

static void gen_piece(struct json *j, const void *arg, size_t i)
{
	switch (i) {
	case GEN_ID:
		json_begin_object(j);
		json_key(j, "id");
		break;
	case GEN_LINE:
		gen_head(j, arg);
		break;
	case GEN_AWAITING:
		json_key(j, "awaiting");
		break;
	case GEN_TASK:
		json_key(j, "task");
		break;
	case GEN_INTERP:
		json_key(j, "interpreter");
		break;
	default:  /* the last */
		json_end_object(j);
		break;
	}
}

static void json_gen(struct json *j, const struct py_gen *g, int locals,
		     struct json_memo *memo)
{
	/* The strings are the readers' cached ones: one address, one
	 * text (readers/objects.h, readers/code.h). */
	uint64_t kind_state = (uint64_t)g->kind << 8 |
			      (uint64_t)g->state << 16;
	uint64_t key[JSON_MEMO_KEY] = {
		MEMO_GEN | kind_state,
		(uintptr_t)g->qualname,
		(uintptr_t)(g->code ? g->code->filename : NULL),
	};
	const struct json_hole h[GEN_HOLES] = {
		{ JSON_HOLE_ADDR, g->addr, 0 },
		{ JSON_HOLE_NUM, 0, g->has_frame ? g->frame.line : -1 },
		{ JSON_HOLE_ADDR, g->awaiting, 0 },
		{ JSON_HOLE_ADDR, g->task, 0 },
		{ JSON_HOLE_NUM, 0, g->interp_id },
	};
	size_t i;

	if (!locals) {
		json_memo_write_holes(j, memo, key, gen_piece, g, h,
				      GEN_HOLES);
		return;
	}
	/* Its locals come before the closing brace: the same pieces, of
	 * which only the head is kept. */
	key[0] = MEMO_GEN_HEAD | kind_state;
	for (i = 0; i < GEN_HOLES; i++) {
		if (i == GEN_LINE)
			json_memo_write(j, memo, key, gen_head, g);
		else
			gen_piece(j, g, i);
		json_hole(j, &h[i]);
	}
	json_locals(j, g->has_frame ? &g->frame : NULL);
	json_end_object(j);
}

static void json_generators(struct json *j, const void *arg)
{
	/* Copied out of *gp once: on another thread, gp is on the stack of
	 * the thread making the tasks' array, whose every call writes the
	 * cache lines next to it, and each read of it would fetch one. */
	const struct gens_part gp = *(const struct gens_part *)arg;
	const struct py_gen *gens = gp.a->gens;
	size_t i, n = gp.a->ngens;
	struct json_memo memo;

	json_memo_init(&memo);
	json_key(j, "generators");
	json_begin_array(j);
	for (i = 0; i < n; i++)
		json_gen(j, &gens[i], gp.locals, &memo);
	json_end_array(j);
	json_memo_release(&memo);
}

/* Generators enough for their array to be made on another thread while
 * this one makes the tasks' (a thread costs ~0.1 ms to start). */
#define GENS_PART_MIN 2048

/*
 * A task's stack is generators anywhere in their array (in the order the
 * heap walk found them), two cache misses each: the JSON of 10,000 tasks
 * waited most of its time on them.  Ask for those of a task a few ahead.
 */
#define TASK_AHEAD 4
#define PREFETCH_GENS 8

static void prefetch_stack(const struct py_async *a, const struct py_task *t)
{
	size_t i;

	for (i = 0; i < t->nstack && i < PREFETCH_GENS; i++) {
		const char *g = (const char *)&a->gens[t->stack[i]];

		__builtin_prefetch(g);
		__builtin_prefetch(g + sizeof(struct py_gen) - 1);
		/* GCC 12 deletes a loop that only prefetches (it has no
		 * effect it counts); an empty volatile asm is one. */
		__asm__ volatile("");
	}
}

static void graph_part(struct json *j, const void *arg)
{
	report_json_graph(j, arg);
}

/* Nodes enough for the graph to be made on a thread of its own, while
 * the tasks and generators are (one per task, and per lock, event or
 * queue waited on). */
#define GRAPH_PART_MIN 2048

/*
 * The parts other threads make while this one makes the tasks' array
 * (NULL: made in line): the generators' and the graph, each on a thread
 * of its own where worth it; with two CPUs the graph after the generators
 * on theirs (tasks-10k: that thread made the generators in 2.5 ms, this
 * one the tasks in 3.9, then the graph in 0.75 with the other CPU idle).
 */
static void start_parts(struct json *j, const struct collection *c,
			const struct gens_part *gp, struct json_part **gens,
			struct json_part **graph)
{
	int big_graph = c->graph.nnodes >= GRAPH_PART_MIN;

	*gens = *graph = NULL;
	if (big_graph && json_parts_worth_it(2))
		*graph = json_part_start(j, graph_part, c);
	if (c->async.ngens >= GENS_PART_MIN &&
	    json_parts_worth_it(*graph ? 2 : 1))
		*gens = json_part_start(j, json_generators, gp);
	if (*gens && !*graph && big_graph)
		*graph = json_part_start_after(j, *gens, graph_part, c);
}

/* gens: the generators' array made by a part (start_parts()), or NULL. */
static void json_async(struct json *j, const struct gens_part *gp,
		       struct json_part *gens)
{
	const struct py_async *a = gp->a;
	struct json_memo memo;
	size_t i, k;

	json_memo_init(&memo);
	json_key(j, "tasks");
	json_begin_array(j);
	for (i = 0; i < a->ntasks; i++) {
		if (i + TASK_AHEAD < a->ntasks)
			prefetch_stack(a, &a->tasks[i + TASK_AHEAD]);
		json_task(j, gp, &a->tasks[i], &memo);
	}
	json_end_array(j);
	json_memo_release(&memo);
	if (gens)
		json_part_join(j, gens);
	else
		json_generators(j, gp);
	json_key(j, "await_cycles");
	json_begin_array(j);
	for (i = 0; i < a->ncycles; i++) {
		json_begin_array(j);
		for (k = 0; k < a->cycle_len[i]; k++)
			json_id(j, a->cycles[i][k]);
		json_end_array(j);
	}
	json_end_array(j);
	json_key(j, "tasks_copied_at_fork");
	json_bool(j, a->copied_at_fork);
	report_json_failed_tasks(j, a);
}

static void json_thread(struct json *j, const struct collection *c,
			const struct py_thread *t, int ns_tid, int locals)
{
	size_t i;

	json_begin_object(j);
	json_key_int(j, "tid", t->tid);
	json_key_int(j, "ns_tid", ns_tid);
	json_key(j, "thread_id");
	json_uint(j, t->thread_id);
	json_key_string(j, "name", t->name);
	json_interp(j, t->interp_id);
	json_key(j, "holds_gil");
	if (t->holds_gil < 0)
		json_null(j);
	else
		json_bool(j, t->holds_gil);
	json_key(j, "truncated");
	json_bool(j, t->truncated);
	json_key(j, "exited");
	json_bool(j, t->exited);
	json_key(j, "frames_omitted");
	json_uint(j, t->omitted);
	report_json_thread_state(j, c, t->tid);
	if (c->opt.native) {
		report_native_json_frames(j, c, t);
		json_end_object(j);
		return;
	}
	json_key(j, "frames");
	json_begin_array(j);
	for (i = 0; i < t->nframes; i++)
		json_frame(j, &t->frames[i], locals);
	json_end_array(j);
	json_end_object(j);
}

void report_json_members(struct json *j, const struct collection *c)
{
	struct gens_part gp = { &c->async, c->opt.locals, c->clock_s };
	struct json_part *gens, *graph;
	size_t i;

	json_key_int(j, "schema", 1);
	json_key_int(j, "pid", c->pid);
	json_key_int(j, "ns_pid", c->ns_pid ? c->ns_pid : c->pid);
	if (c->asked_pid && c->asked_pid != c->pid) {
		json_key_int(j, "asked_pid", c->asked_pid);
	}
	json_key_string(j, "command", c->command);
	json_key(j, "stopped");
	json_bool(j, c->job_stopped);
	json_key(j, "python");
	json_begin_object(j);
	json_key_string(j, "version", c->py.version);
	json_key_string(j, "executable", c->py.executable);
	json_end_object(j);
	json_key(j, "threads");
	json_begin_array(j);
	for (i = 0; i < c->snap.nthreads; i++)
		json_thread(j, c, &c->snap.threads[i],
			    c->ns_tids ? c->ns_tids[i] : 0, c->opt.locals);
	if (c->opt.native)
		report_native_json_others(j, c);
	json_end_array(j);
	start_parts(j, c, &gp, &gens, &graph);
	json_async(j, &gp, gens);
	report_json_greenlets(j, c);
	if (graph)
		json_part_join(j, graph);
	else
		report_json_graph(j, c);
	json_key(j, "warnings");
	report_json_warnings(j, &c->warnings, CS_WARN_COLLECTION);
	report_json_stats(j, c);
}

void report_json_value(struct json *j, const struct collection *c)
{
	json_begin_object(j);
	report_json_members(j, c);
	json_end_object(j);
}

void report_json(FILE *out, const struct collection *c)
{
	struct json *j = json_new(out, 1);

	json_background(j);
	report_json_value(j, c);
	free(j);
}
