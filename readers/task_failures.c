/*
 * Tasks that ended by raising, still referenced: what they raised and
 * where, from the exception object and its traceback.  The failure a
 * hung asyncio program most often hides: a producer task raised, the
 * consumer waits on its queue for ever, and the loop logs "Task
 * exception was never retrieved" only when the task is freed.
 */
#include <string.h>

#include "common/strbuf.h"
#include "common/util.h"
#include "readers/code.h"
#include "readers/fields.h"
#include "readers/objects.h"
#include "readers/repr.h"
#include "readers/tasks_internal.h"
#include "readers/usercode.h"
#include "common/banned.h"

/* Traceback entries followed at most: one per frame the exception
 * passed through, far past any recursion limit. */
#define MAX_TB_WALK 100000

/* The code object a traceback entry's frame runs (a PyFrameObject:
 * before 3.11 its f_code, since then its _PyInterpreterFrame's, which a
 * finished frame's object keeps a copy of), or 0. */
static uint64_t frame_code(struct pyproc *py, uint64_t frame)
{
	const struct py_layout *L = &py->layout;
	uint64_t iframe = 0, code = 0;

	if (L->f_code >= 0) {
		py_field_u64(py, frame, L->f_code, &code, NULL);
		return code;
	}
	if (py_field_u64(py, frame, L->f_frame, &iframe, NULL) != 1 ||
	    !iframe ||
	    py_field_u64(py, iframe, L->if_code, &code, NULL) != 1)
		return 0;
	return code & ~(uint64_t)L->stackref_tag_mask;
}

/* Traceback entry tb as a frame: its code and line (tb_lineno, or from
 * tb_lasti where the interpreter computes it lazily, 3.12 on).  0, or -1
 * when it cannot be read. */
static int tb_entry(struct pyproc *py, uint64_t tb, struct py_frame *out)
{
	const struct py_layout *L = &py->layout;
	uint64_t frame = 0, code;
	int32_t lasti = -1, line = -1;

	memset(out, 0, sizeof(*out));
	out->line = -1;
	if (py_field_u64(py, tb, L->tb_frame, &frame, NULL) != 1 || !frame)
		return -1;
	code = frame_code(py, frame);
	if (!code || py_code_get(py, code, &out->code, NULL) < 0) {
		out->code = NULL;
		return -1;
	}
	out->addr = frame;
	py_field_i32(py, tb, L->tb_lineno, &line, NULL);
	py_field_i32(py, tb, L->tb_lasti, &lasti, NULL);
	out->offset = lasti;
	out->line = line >= 0 ? line :
		    lasti >= 0 ? py_code_line(py, out->code, lasti) : -1;
	return 0;
}

void py_exception_sites(struct pyproc *py, uint64_t exc,
			struct py_frame *at, struct py_frame *own)
{
	const struct py_layout *L = &py->layout;
	uint64_t tb = 0, next;
	struct py_frame f;
	size_t n;

	memset(at, 0, sizeof(*at));
	memset(own, 0, sizeof(*own));
	at->line = own->line = -1;
	if (L->exc_traceback < 0 || L->tb_next < 0)
		return;
	py_field_u64(py, exc, L->exc_traceback, &tb, NULL);
	/* outermost first: each later entry is further in */
	for (n = 0; tb && tb != py->types.none && n < MAX_TB_WALK; n++) {
		if (tb_entry(py, tb, &f) == 0) {
			*at = f;
			if (py_is_user_file(f.code->filename, NULL))
				*own = f;
		}
		if (py_field_u64(py, tb, L->tb_next, &next, NULL) != 1 ||
		    next == tb)
			break;
		tb = next;
	}
}

void tasks_note_failure(struct builder *b, const struct found *found,
			const struct task_fields *f, int tid)
{
	struct py_async *a = b->out;
	struct py_failed_task *t;
	struct strbuf sb;

	if (a->nfailed >= PY_MAX_FAILED_TASKS) {
		a->failed_more++;
		return;
	}
	if (!a->failed)
		a->failed = xcalloc(PY_MAX_FAILED_TASKS, sizeof(*a->failed));
	t = &a->failed[a->nfailed++];
	memset(t, 0, sizeof(*t));
	t->addr = found->addr;
	t->loop = f->loop;
	t->exception = f->exception;
	t->tid = tid;
	t->interp_id = found->interp_id;
	t->interp_main = found->interp_id < 0 ? -1 : found->interp_id == 0;
	t->retrieved = !f->log_tb;
	t->name = tasks_task_name(b, f->name,
				  tasks_gen_at(b, f->coro, found->interp_id));
	strbuf_init(&sb);
	pyrepr_exception(b->py, f->exception, &sb);
	t->exc_repr = arena_strdup(&a->pool, sb.buf);
	strbuf_release(&sb);
	py_exception_sites(b->py, f->exception, &t->at, &t->own);
}
