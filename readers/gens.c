#include "readers/gens.h"

#include <stdlib.h>
#include <string.h>

#include "readers/fields.h"
#include "readers/objects.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

/* Largest value stack index we believe. */
#define MAX_STACK_DEPTH (1 << 20)

const char *py_gen_state_name(enum py_gen_state state)
{
	switch (state) {
	case PY_GEN_CREATED:
		return "created";
	case PY_GEN_RUNNING:
		return "running";
	case PY_GEN_SUSPENDED:
		return "suspended";
	case PY_GEN_CLOSED:
		break;
	}
	return "closed";
}

int py_gen_kind_of_type(const struct pyproc *py, uint64_t type)
{
	if (!type)
		return -1;
	if (type == py->types.gen)
		return PY_CODE_GENERATOR;
	if (type == py->types.coro)
		return PY_CODE_COROUTINE;
	if (type == py->types.asyncgen)
		return PY_CODE_ASYNC_GENERATOR;
	return -1;
}

const char *py_type_name_cached(struct pyproc *py, uint64_t type)
{
	struct strbuf sb;
	struct cs_err err;
	char *name = addrmap_get(&py->typenames, type, NULL);

	if (name || !type)
		return name ? name : "?";
	strbuf_init(&sb);
	cs_err_init(&err);
	if (pytype_name(py, type, &sb, &err) < 0 || !sb.len) {
		strbuf_reset(&sb);
		strbuf_addstr(&sb, "?");
	}
	name = strbuf_detach(&sb);
	addrmap_put(&py->typenames, type, name);
	return name;
}

/*
 * The value on top of a suspended frame's stack, or 0.  hdr holds the
 * frame's fixed part as py_gen_read() copied it (size bytes, up to its
 * localsplus): the stack's depth or pointer is taken from there, which
 * saves a read of the target per generator; only the slot itself, past
 * the copy, is read.  field_*() yield 0 outside the copy.
 */
static uint64_t stack_top(struct pyproc *py, uint64_t frame,
			  const uint8_t *hdr, size_t size)
{
	const struct py_layout *L = &py->layout;
	uint64_t top = 0, base;
	int32_t depth;

	if (L->f_stacktop >= 0) {
		/* 3.6 - 3.9: f_stacktop points past the top, NULL while running */
		base = field_u64(hdr, size, L->f_stacktop);
		if (!base)
			return 0;
		memsrc_read_u64(py->ms, base - 8, &top, NULL);
	} else if (L->f_stackdepth >= 0) {
		/* 3.10: f_valuestack[f_stackdepth - 1] */
		base = field_u64(hdr, size, L->f_valuestack);
		depth = field_i32(hdr, size, L->f_stackdepth);
		if (L->f_valuestack < 0 || depth <= 0 || depth > MAX_STACK_DEPTH)
			return 0;
		memsrc_read_u64(py->ms, base + (uint64_t)(depth - 1) * 8, &top, NULL);
	} else if (L->if_stacktop >= 0) {
		/* 3.11 - 3.13: localsplus[stacktop - 1] */
		depth = field_i32(hdr, size, L->if_stacktop);
		if (depth <= 0 || depth > MAX_STACK_DEPTH)
			return 0;
		py_field_u64(py, frame + (uint64_t)(depth - 1) * 8,
			     L->if_localsplus, &top, NULL);
	} else if (L->if_stackpointer >= 0) {
		/* 3.14: stackpointer[-1], a tagged stack reference */
		base = field_u64(hdr, size, L->if_stackpointer);
		if (!base)
			return 0;
		memsrc_read_u64(py->ms, base - 8, &top, NULL);
	}
	return top & ~(uint64_t)L->stackref_tag_mask;
}

static int is_resume(const struct py_layout *L, int op)
{
	return op >= 0 && (op == L->op_resume || op == L->op_resume_quick ||
			   op == L->op_instrumented_resume ||
			   op == L->op_resume_check);
}

/* Where a generator is, decoded from its object (and frame). */
struct gen_where {
	uint64_t frame;
	uint64_t code;
	int frame_state;
	long ip;              /* f_lasti, or the instruction pointer; -1 */
	const uint8_t *hdr;   /* the frame's fixed part, copied: hdr_size */
	size_t hdr_size;      /* bytes (0 without a frame) */
};

/* len (1 or 2) bytes of bytecode at at, remembered by address: what a
 * stopped target holds there does not change until the caches are
 * cleared (code_cache_clear()). */
static int read_insn(struct pyproc *py, uint64_t at, size_t len,
		     uint8_t insn[2])
{
	struct py_insn_memo *m =
		&py->insn_memo[py_code_memo_slot(at, (long)len, PY_INSN_MEMO)];

	if (!at || m->at != at || m->len != len) {
		insn[1] = 0;
		if (memsrc_read(py->ms, at, insn, len, NULL) < 0)
			return -1;
		m->at = at;
		m->len = (uint8_t)len;
		m->insn[0] = insn[0];
		m->insn[1] = insn[1];
	}
	insn[0] = m->insn[0];
	insn[1] = m->insn[1];
	return 0;
}

/*
 * What a suspended generator delegates to.  CPython answers this three
 * ways over the versions we read; this is the one place that knows:
 *   3.13+        the frame state SUSPENDED_YIELD_FROM says so;
 *   3.11, 3.12   the next instruction is RESUME with oparg >= 2;
 *   3.6 - 3.10   the next instruction is YIELD_FROM.
 * The delegate is then the top of the frame's value stack.
 */
static uint64_t gen_delegate(struct pyproc *py, const struct py_gen *gen,
			     const struct gen_where *w)
{
	const struct py_layout *L = &py->layout;
	uint8_t insn[2];
	uint64_t at;
	long lasti_or_ip = w->ip;

	if (gen->state == PY_GEN_CLOSED || gen->state == PY_GEN_CREATED ||
	    !gen->code)
		return 0;
	if (L->gs_suspended_yield_from != PY_GEN_STATE_NONE)
		return w->frame_state == L->gs_suspended_yield_from ?
		       stack_top(py, w->frame, w->hdr, w->hdr_size) : 0;
	if (L->op_resume >= 0) {
		/* lasti_or_ip is prev_instr: the next instruction follows it */
		at = (uint64_t)lasti_or_ip + 2;
		if (read_insn(py, at, 2, insn) < 0 ||
		    !is_resume(L, insn[0]) || insn[1] < 2)
			return 0;
		return stack_top(py, w->frame, w->hdr, w->hdr_size);
	}
	if (lasti_or_ip < 0 || L->op_yield_from < 0)
		return 0;
	/* f_lasti is in bytes before 3.10 and in code units from 3.10 */
	at = gen->code->bytecode + (uint64_t)lasti_or_ip *
	     (L->linetable == PY_LINETABLE_310 ? 2 : 1) + 2;
	if (read_insn(py, at, 1, insn) < 0 ||
	    insn[0] != (uint8_t)L->op_yield_from)
		return 0;
	return stack_top(py, w->frame, w->hdr, w->hdr_size);
}

/* Where a wrapper of this type keeps what it wraps: an offset, or -1
 * when the type wraps nothing (or the version lacks the member). */
static int wrapped_at(struct pyproc *py, uint64_t type)
{
	const struct py_layout *L = &py->layout;
	const char *name = py_type_name_cached(py, type);

	if (!strcmp(name, "async_generator_asend") ||
	    !strcmp(name, "async_generator_athrow"))
		return L->asend_gen;
	/* what coro.__await__() returns, as custom awaitables do */
	if (!strcmp(name, "coroutine_wrapper"))
		return L->corowrapper_coro;
	if (cs_ends_with(name, "FutureIter"))
		return L->futureiter_future;
	return -1;
}

/* Remove the wrappers between a coroutine and what it really awaits. */
static uint64_t unwrap(struct pyproc *py, uint64_t obj)
{
	uint64_t type, inner = 0;

	if (!obj || pyobj_read_type(py, obj, &type, NULL) < 0 ||
	    py_gen_kind_of_type(py, type) >= 0)
		return obj;
	/* Coroutines mostly await one type (a Future's iterator): its
	 * answer is kept, not found by name again for each of them. */
	if (type != py->unwrap_type || !type) {
		py->unwrap_type = type;
		py->unwrap_at = wrapped_at(py, type);
	}
	py_field_u64(py, obj, py->unwrap_at, &inner, NULL);
	return inner ? inner : obj;
}

/* 3.11+: the frame lives inside the generator, with its state. */
static void where_311(const struct py_layout *L, uint64_t addr,
		      const uint8_t *buf, size_t size, struct py_gen *gen,
		      struct gen_where *w)
{
	w->frame = addr + (uint64_t)L->gen_iframe;
	/* py_gen_read() copied the generator up to the frame's localsplus. */
	w->hdr = buf + L->gen_iframe;
	w->hdr_size = size - (size_t)L->gen_iframe;
	w->frame_state = field_i8(buf, size, L->gen_frame_state);
	w->code = L->gen_code >= 0 ? field_u64(buf, size, L->gen_code) :
		  field_u64(buf, size, L->gen_iframe + L->if_code) &
		  ~(uint64_t)L->stackref_tag_mask;
	w->ip = (long)field_u64(buf, size, L->gen_iframe +
				(L->if_prev_instr >= 0 ? L->if_prev_instr :
				 L->if_instr_ptr));
	if (w->frame_state == L->gs_created)
		gen->state = PY_GEN_CREATED;
	else if (w->frame_state == L->gs_executing)
		gen->state = PY_GEN_RUNNING;
	else if (w->frame_state >= L->gs_completed)
		gen->state = PY_GEN_CLOSED;
	else
		gen->state = PY_GEN_SUSPENDED;
}

/* Before 3.11: a separate frame object, NULL once finished, copied
 * into fbuf (PY_LAYOUT_MAX_STRUCT bytes, the caller's: w->hdr). */
static int where_before_311(struct pyproc *py, const uint8_t *buf,
			    size_t size, uint8_t *fbuf, struct py_gen *gen,
			    struct gen_where *w, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	int running, ret;

	w->frame = field_u64(buf, size, L->gen_frame);
	w->code = field_u64(buf, size, L->gen_code);
	if (!w->frame) {
		gen->state = PY_GEN_CLOSED;
		return 0;
	}
	if ((size_t)L->f_localsplus > PY_LAYOUT_MAX_STRUCT)
		CS_BUG("frame object of %d bytes", L->f_localsplus);
	ret = memsrc_read(py->ms, w->frame, fbuf, (size_t)L->f_localsplus, err);
	if (ret < 0)
		return ret;
	w->hdr = fbuf;
	w->hdr_size = (size_t)L->f_localsplus;
	w->ip = field_i32(fbuf, w->hdr_size, L->f_lasti);
	if (L->gen_running >= 0) {
		running = field_u8(buf, size, L->gen_running);
	} else {
		w->frame_state = field_i8(fbuf, w->hdr_size, L->f_state);
		running = w->frame_state == L->gs_executing;
	}
	if (running)
		gen->state = PY_GEN_RUNNING;
	else if (L->gen_running < 0 && w->frame_state >= L->gs_completed)
		gen->state = PY_GEN_CLOSED;
	else if (w->ip == -1)
		gen->state = PY_GEN_CREATED;
	else
		gen->state = PY_GEN_SUSPENDED;
	return 0;
}

int py_gen_read_raw(struct pyproc *py, uint64_t addr, enum py_code_kind kind,
		    const struct py_stack_options *opt, struct py_gen *gen,
		    struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint8_t buf[PY_LAYOUT_MAX_STRUCT], fbuf[PY_LAYOUT_MAX_STRUCT];
	size_t size = (size_t)L->gen_size;
	struct gen_where w = { 0, 0, 0, -1, NULL, 0 };
	int ret;

	memset(gen, 0, sizeof(*gen));
	gen->addr = addr;
	gen->kind = kind;
	if (L->gen_iframe >= 0 && (size_t)(L->gen_iframe + L->if_localsplus) > size)
		size = (size_t)(L->gen_iframe + L->if_localsplus);
	if (kind == PY_CODE_ASYNC_GENERATOR && L->agen_running_async >= 0 &&
	    (size_t)L->agen_running_async >= size)
		size = (size_t)L->agen_running_async + 1;
	if (size > sizeof(buf))
		CS_BUG("generator object of %zu bytes", size);
	ret = memsrc_read(py->ms, addr, buf, size, err);
	if (ret < 0)
		return ret;
	ret = pystr_get(py, field_u64(buf, size, L->gen_qualname),
			&gen->qualname, err);
	if (ret < 0)
		return ret;
	if (L->gen_iframe >= 0)
		where_311(L, addr, buf, size, gen, &w);
	else if ((ret = where_before_311(py, buf, size, fbuf, gen, &w,
					 err)) < 0)
		return ret;
	/* An async generator between asend() and its result counts as
	 * running for inspect (ag_running is ag_running_async, 3.8+), even
	 * while its frame is suspended in an await. */
	if (kind == PY_CODE_ASYNC_GENERATOR && L->agen_running_async >= 0 &&
	    gen->state == PY_GEN_SUSPENDED &&
	    field_u8(buf, size, L->agen_running_async))
		gen->state = PY_GEN_RUNNING;
	if (w.code && py_code_get(py, w.code, &gen->code, err) < 0)
		return -CS_ERR_MEMORY;
	if (gen->state != PY_GEN_CLOSED && w.frame && L->gen_iframe >= 0)
		gen->has_frame = py_frame_decode(py, w.frame,
						 buf + L->gen_iframe,
						 size - (size_t)L->gen_iframe,
						 opt, &gen->frame, NULL) == 1;
	else if (gen->state != PY_GEN_CLOSED && w.frame)
		gen->has_frame = py_frame_read(py, w.frame, opt, &gen->frame,
					       NULL) == 1;
	gen->awaiting_raw = gen_delegate(py, gen, &w);
	gen->awaiting = gen->awaiting_raw;
	return 0;
}

uint64_t py_gen_unwrap(struct pyproc *py, struct py_gen *gen)
{
	gen->awaiting = unwrap(py, gen->awaiting_raw);
	return gen->awaiting;
}

int py_gen_read(struct pyproc *py, uint64_t addr, enum py_code_kind kind,
		const struct py_stack_options *opt, struct py_gen *gen,
		struct cs_err *err)
{
	int ret = py_gen_read_raw(py, addr, kind, opt, gen, err);

	if (ret == 0)
		(void)py_gen_unwrap(py, gen);
	return ret;
}

void py_gen_release(struct py_gen *gen)
{
	size_t i;

	if (gen->has_frame) {
		for (i = 0; i < gen->frame.nlocals; i++)
			free(gen->frame.locals[i].repr);
		free(gen->frame.locals);
	}
	memset(gen, 0, sizeof(*gen));
}
