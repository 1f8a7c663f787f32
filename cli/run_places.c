/*
 * Where a frame, a task or a coroutine is, as run's causes and its
 * samples' lines say it: "FILE:LINE in QUALNAME", a task by the program's
 * own innermost coroutine and the library's innermost beyond it.
 */
#include "cli/run_places.h"

#include <string.h>

#include "cli/escape.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "readers/code.h"
#include "readers/tasks.h"
#include "readers/usercode.h"
#include "common/banned.h"

void run_add_place_text(struct strbuf *sb, const char *file, long line,
			const char *function)
{
	esc_add_name_raw(sb, file);
	if (line >= 0)
		strbuf_addf(sb, ":%ld", line);
	else
		strbuf_addstr(sb, ":?");
	strbuf_addstr(sb, " in ");
	esc_add_name_raw(sb, function);
}

void run_add_place_as(struct strbuf *sb, const struct py_frame *f,
		      const char *qualname)
{
	run_add_place_text(sb, f->code->filename, f->line, qualname);
}

void run_add_frame_place(struct strbuf *sb, const struct py_frame *f)
{
	run_add_place_as(sb, f, f->code->qualname);
}

void run_tasks_awaiting(const struct py_async *a, struct addrmap *out)
{
	size_t i, k;

	addrmap_init(out);
	for (i = 0; i < a->ntasks; i++)
		for (k = 0; k < a->tasks[i].nawaited_by; k++)
			addrmap_add(out, a->tasks[i].awaited_by[k]);
}

void run_add_task_place(struct strbuf *sb, const struct py_async *a,
			const struct py_task *task)
{
	strbuf_addstr(sb, "task ");
	esc_add_name_raw(sb, task->name);
	run_add_task_where(sb, a, task);
}

/* A coroutine's frame as run_add_frame_place() says it, named by its own
 * qualname (gi_qualname: before 3.11 a code object has only its name,
 * "wait" for Event.wait), as the sampled lines name it. */
static void add_gen_place(struct strbuf *sb, const struct py_gen *g)
{
	run_add_place_as(sb, &g->frame,
		     g->qualname ? g->qualname : g->frame.code->qualname);
}

/*
 * Where it is parked: its own code's innermost coroutine with a frame
 * (task->stack is innermost first), the line the user changes, then
 * the library's innermost when that is another: " at app.py:4 in handle
 * (innermost .../asyncio/streams.py:522 in StreamReader._wait_for_data)",
 * as the sampled lines say it.  Only the innermost when none is the
 * program's own.
 */
void run_add_task_where(struct strbuf *sb, const struct py_async *a,
			const struct py_task *task)
{
	const struct py_gen *inner = NULL, *own = NULL;
	size_t k;

	for (k = 0; k < task->nstack && !own; k++) {
		const struct py_gen *g = py_task_gen(a, task, k);

		if (!g || !g->has_frame || !g->frame.code)
			continue;
		/* the first past a scheduler's trap (readers/usercode.h:
		 * trio's, a Python Future's __await__), as the graph names
		 * it; a trap when all are */
		if (!inner ||
		    (py_is_scheduler_trap(inner->frame.code->filename) &&
		     !py_is_scheduler_trap(g->frame.code->filename)))
			inner = g;
		if (py_is_user_file(g->frame.code->filename, NULL))
			own = g;
	}
	if (!inner)
		return;
	strbuf_addstr(sb, " at ");
	add_gen_place(sb, own ? own : inner);
	if (own && own != inner) {
		strbuf_addstr(sb, " (innermost ");
		add_gen_place(sb, inner);
		strbuf_addch(sb, ')');
	}
}

const struct py_frame *run_own_frame(const struct py_frame *frames,
				     size_t n)
{
	size_t i;

	/* Bounded by the frames, as read. */
	for (i = 0; i < n; i++)
		if (frames[i].code && frames[i].code->filename &&
		    py_is_user_file(frames[i].code->filename, NULL))
			return &frames[i];
	/* None in a file: a program given as `python -c CODE` or on stdin
	 * runs as "<string>" or "<stdin>", from its module frame (the
	 * outermost) in; its innermost frame there is the program's. */
	for (i = n; i > 0 && py_code_is_inline(frames[i - 1].code); i--)
		;
	return i < n && !strcmp(frames[n - 1].code->name, "<module>") ?
	       &frames[i] : NULL;
}

const struct py_frame *run_frame_waiting_in(const struct py_frame *frames,
					    size_t n, const char *file,
					    const char *func,
					    const char *const *inner,
					    size_t ninner)
{
	const struct py_code *code;
	size_t k, j;

	/* Bounded by the frames, as read. */
	for (k = 0; k < n; k++) {
		code = frames[k].code;
		if (py_code_is(code, file, func))
			return &frames[k];
		if (!code || !code->filename)
			return NULL;
		for (j = 0; j < ninner &&
			    !cs_ends_with(code->filename, inner[j]); j++)
			;
		if (j == ninner)
			return NULL;
	}
	return NULL;
}

const struct py_gen *run_task_serving_forever(const struct py_async *a,
					      const struct py_task *t)
{
	const struct py_gen *g = py_task_gen(a, t, 0);

	if (t->framework || !g || !g->has_frame || !g->frame.code ||
	    !py_code_is(g->frame.code, "asyncio/base_events.py",
			"serve_forever"))
		return NULL;
	return g;
}
