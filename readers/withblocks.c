#include "readers/withblocks.h"

#include <string.h>

#include "readers/code.h"
#include "readers/dicts.h"
#include "readers/fields.h"
#include "readers/funcs.h"
#include "readers/gens.h"
#include "readers/objects.h"
#include "readers/tasks.h"
#include "common/banned.h"

#define SETUP_FINALLY_BLOCK 122   /* b_type of with and try blocks, 3.6-3.10 */
#define PY_MAX_BLOCKS 20          /* CO_MAXBLOCKS */
#define PY_MAX_EXC_TABLE 65536    /* bytes of exception table read */
#define PY_MAX_CODE 65536         /* bytes of co_code scanned (<= 3.10) */
#define PY_MAX_STACK 4096         /* value-stack slots looked at */
#define PY_MAX_HOPS 64            /* handler entries followed outwards */
#define PY_MAX_WRAPPED 4          /* decorators looked through */

/* The frame's fields that say where its value stack is. */
struct with_frame {
	const struct py_code *code;
	uint64_t stack;     /* first value-stack slot */
	long depth;         /* live slots, -1 unknown (executing) */
	long offset;        /* byte offset of the current instruction */
	int iblock;         /* <= 3.10 */
	uint8_t blocks[PY_MAX_BLOCKS * 12];
};

static int is_exit_name(const char *name)
{
	return name && (!strcmp(name, "__exit__") || !strcmp(name, "__aexit__"));
}

/* The name of function fn's code, or of the function a decorator wraps
 * when that one's is named(): trio's __aexit__ runs under a decorator
 * (enable_ki_protection) whose code is its own, and functools.wraps
 * keeps the function it wraps in __wrapped__. */
static const char *function_name(struct pyproc *py, uint64_t fn,
				 int (*named)(const char *))
{
	const struct py_code *code = py_function_code(py, fn);
	int hops;

	for (hops = 0; code && !named(code->name) &&
		       hops < PY_MAX_WRAPPED; hops++) {
		struct cs_err err;
		uint64_t inner;

		cs_err_init(&err);
		if (pyobj_get_attr(py, fn, "__wrapped__", &inner, &err) != 0)
			break;
		fn = inner;
		code = py_function_code(py, fn);
	}
	return code ? code->name : NULL;
}

int py_bound_to(struct pyproc *py, uint64_t exit,
		int (*named)(const char *), uint64_t *mgr)
{
	const struct py_layout *L = &py->layout;
	struct cs_err err;
	uint64_t type, fn = 0, self = 0;
	const char *tn, *name = NULL;
	char buf[16];

	*mgr = 0;
	cs_err_init(&err);
	if (!exit || pyobj_read_type(py, exit, &type, &err) < 0)
		return 0;
	tn = py_type_name_cached(py, type);
	if (!tn)
		return 0;
	/* PyCFunctionObject: m_ml just before m_self (stable since
	 * 3.0). */
	if (!strcmp(tn, "method")) {
		if (py_bound_method(py, exit, &fn, &self) < 0)
			return 0;
		name = function_name(py, fn, named);
		/* a Cython class's __exit__ (gevent's Semaphore): a
		 * cyfunction bound as a method; a C class's, taken from
		 * the class and bound (ExitStack's MethodType(type(lock).
		 * __exit__, lock)) */
		if (!name && pyobj_read_type(py, fn, &type, &err) == 0 &&
		    (tn = py_type_name_cached(py, type)) != NULL &&
		    ((!strcmp(py_short_type_name(tn),
			      "cython_function_or_method") &&
		      py_cfunction_name(py, fn, buf, sizeof(buf), &err) == 0) ||
		     (!strcmp(tn, "method_descriptor") &&
		      py_method_descr_name(py, fn, buf, sizeof(buf),
					   &err) == 0)))
			name = buf;
	} else if (!strcmp(tn, "builtin_function_or_method")) {
		if (py_cfunction_name(py, exit, buf, sizeof(buf), &err) < 0 ||
		    py_field_u64(py, exit, L->cfunction_self, &self, &err) < 0)
			return 0;
		name = buf;
	}
	if (!name || !named(name))
		return 0;
	*mgr = self;
	return self != 0;
}

int py_exit_manager(struct pyproc *py, uint64_t exit, uint64_t *mgr)
{
	return py_bound_to(py, exit, is_exit_name, mgr);
}

/* The rest of wf (its code and offset set from the decoded frame):
 * where the frame's value stack is, how deep, and before 3.11 its block
 * stack. */
static int frame_read(struct pyproc *py, uint64_t frame,
		      struct with_frame *wf, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint8_t buf[PY_LAYOUT_MAX_STRUCT];
	size_t size;
	int ret;

	/* Not blocks[]: iblock says how much of it is read. */
	wf->stack = 0;
	wf->depth = -1;
	wf->iblock = 0;
	size = (size_t)(L->f_back >= 0 ? L->f_localsplus : L->if_localsplus);
	if (size > sizeof(buf))
		CS_BUG("frame of %zu bytes", size);
	ret = memsrc_read(py->ms, frame, buf, size, err);
	if (ret < 0)
		return ret;
	if (L->f_back >= 0) {
		uint64_t top;

		wf->stack = field_u64(buf, size, L->f_valuestack);
		if (L->f_stackdepth >= 0) {
			wf->depth = field_i32(buf, size, L->f_stackdepth);
		} else if ((top = field_u64(buf, size, L->f_stacktop)) &&
			   top >= wf->stack) {
			wf->depth = (long)((top - wf->stack) / 8);
		}
		wf->iblock = field_i32(buf, size, L->f_iblock);
		if (wf->iblock < 0 || wf->iblock > PY_MAX_BLOCKS)
			wf->iblock = 0;
		if (wf->iblock &&
		    memsrc_read(py->ms, frame + (uint64_t)L->f_blockstack,
				wf->blocks, (size_t)wf->iblock * 12, err) < 0)
			return -1;
		return 0;
	}
	wf->stack = frame + (uint64_t)L->if_localsplus +
		    8 * (uint64_t)wf->code->nlocalsplus;
	if (L->if_stacktop >= 0) {
		int32_t top = field_i32(buf, size, L->if_stacktop);

		if (top >= (int32_t)wf->code->nlocalsplus)
			wf->depth = top - (long)wf->code->nlocalsplus;
	} else if (L->if_stackpointer >= 0) {
		uint64_t sp = field_u64(buf, size, L->if_stackpointer);

		if (sp >= wf->stack)
			wf->depth = (long)((sp - wf->stack) / 8);
	}
	return 0;
}

/* (blocks come innermost first from the table, outermost first from a
 * block stack: a manager entered twice keeps the outer with's line) */
static void add_held(struct py_with_blocks *out, uint64_t mgr, int line,
		     int outer_first)
{
	size_t i;

	for (i = 0; i < out->nheld; i++)
		if (out->held[i] == mgr) {
			if (!outer_first && line > 0)
				out->held_line[i] = line;
			return;
		}
	if (out->nheld < PY_MAX_WITH) {
		out->held_line[out->nheld] = line > 0 ? line : 0;
		out->held[out->nheld++] = mgr;
	}
}

/* The manager whose exit sits in value-stack slot i, or 0. */
static uint64_t slot_manager(struct pyproc *py, const struct with_frame *wf,
			     long i)
{
	struct cs_err err;
	uint64_t v, mgr;

	cs_err_init(&err);
	if (i < 0 || i >= PY_MAX_STACK ||
	    py_read_words(py, wf->stack + 8 * (uint64_t)i, &v, 1, &err) < 0)
		return 0;
	v &= ~(uint64_t)py->layout.stackref_tag_mask;
	return py_exit_manager(py, v, &mgr) ? mgr : 0;
}

/*
 * Up to 3.10: the line of the SETUP_WITH (or SETUP_ASYNC_WITH) whose
 * jump goes to `handler`, the b_handler of the block it pushed (both in
 * bytes before 3.10, in code units in 3.10), or 0.  The instructions
 * before the handler are scanned from the start, PY_MAX_CODE bytes at
 * most; memoised per code and handler.
 */
static int setup_line(struct pyproc *py, const struct py_code *code,
		      int32_t handler)
{
	static uint8_t insns[PY_MAX_CODE];
	const struct py_layout *L = &py->layout;
	struct py_line_memo *m =
		&py->setup_memo[py_code_memo_slot(code->addr, handler,
						  PY_SETUP_MEMO)];
	int units = L->linetable == PY_LINETABLE_310;
	/* The jump is forward: the instructions before the handler. */
	size_t before = (size_t)handler * (units ? 2 : 1), n = 0, i;
	uint32_t arg, ext = 0;
	struct cs_err err;
	int line = 0;

	if (m->code == code->addr && m->offset == handler)
		return m->line;
	cs_err_init(&err);
	if (handler > 0 && code->bytecode > (uint64_t)L->bytes_sval &&
	    pybytes_read(py, code->bytecode - (uint64_t)L->bytes_sval, insns,
			 before < sizeof(insns) ? before : sizeof(insns), &n,
			 &err) == 0) {
		if (n > before)
			n = before;
		if (n > sizeof(insns))
			n = sizeof(insns);
		for (i = 0; i + 1 < n; i += 2) {
			arg = ext | insns[i + 1];
			ext = 0;
			if (insns[i] == L->op_extended_arg) {
				ext = arg << 8;
			} else if ((insns[i] == L->op_setup_with ||
				    insns[i] == L->op_setup_async_with) &&
				   (units ? i / 2 + 1 : i + 2) + arg ==
				   (uint64_t)handler) {
				line = py_code_line(py, code, (long)i);
				break;
			}
		}
	}
	m->code = code->addr;
	m->offset = handler;
	m->line = line > 0 ? line : 0;
	return m->line;
}

static void blocks_held(struct pyproc *py, const struct with_frame *wf,
			struct py_with_blocks *out, long *top)
{
	int b;

	for (b = 0; b < wf->iblock; b++) {
		const uint8_t *blk = wf->blocks + 12 * b;
		int32_t type = field_i32(blk, 12, 0), level = field_i32(blk, 12, 8);
		uint64_t mgr;

		if (type != SETUP_FINALLY_BLOCK || level < 1 ||
		    (wf->depth >= 0 && level > wf->depth))
			continue;
		mgr = slot_manager(py, wf, level - 1);
		if (mgr) {
			add_held(out, mgr,
				 setup_line(py, wf->code,
					    field_i32(blk, 12, 4)), 1);
			if (level > *top)
				*top = level;
		}
	}
}

/* One varint of the exception table (6-bit groups, 0x40 continues). */
static int exc_varint(const uint8_t *t, size_t n, size_t *pos, uint32_t *out)
{
	uint32_t v = 0;
	int k;

	for (k = 0; k < 6 && *pos < n; k++) {
		uint8_t b = t[(*pos)++];

		v = (v << 6) | (b & 0x3f);
		if (!(b & 0x40)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

struct exc_entry {
	uint32_t start, end, target, depth;
};

static int exc_find(const uint8_t *t, size_t n, uint32_t at,
		    struct exc_entry *e)
{
	size_t pos = 0;

	while (pos < n) {
		uint32_t start, len, target, dl;

		if (!(t[pos] & 0x80))
			return 0;      /* not at an entry's first byte */
		if (exc_varint(t, n, &pos, &start) < 0 ||
		    exc_varint(t, n, &pos, &len) < 0 ||
		    exc_varint(t, n, &pos, &target) < 0 ||
		    exc_varint(t, n, &pos, &dl) < 0)
			return 0;
		if (at >= start && at < start + len) {
			e->start = start;
			e->end = start + len;
			e->target = target;
			e->depth = dl >> 1;
			return 1;
		}
	}
	return 0;
}

/* Does the handler at code unit `target` start PUSH_EXC_INFO,
 * WITH_EXCEPT_START (a with's cleanup, not a try's)? */
static int is_with_handler(struct pyproc *py, const struct with_frame *wf,
			   uint32_t target)
{
	const struct py_layout *L = &py->layout;
	uint8_t op[4];
	struct cs_err err;

	cs_err_init(&err);
	if (!wf->code->bytecode ||
	    memsrc_read(py->ms, wf->code->bytecode + 2 * (uint64_t)target, op,
			sizeof(op), &err) < 0)
		return 0;
	return op[0] == L->op_push_exc_info && op[2] == L->op_with_except_start;
}

/* The depths of the with handlers covering the frame's instruction,
 * innermost first, at most PY_MAX_HOPS: each handler entry covering it,
 * followed through its target.  Frame-independent (the table and the
 * handlers' first instructions never change), so the caller memoizes. */
static size_t with_handler_depths(struct pyproc *py,
				  const struct with_frame *wf,
				  uint32_t depths[PY_MAX_HOPS],
				  uint32_t targets[PY_MAX_HOPS])
{
	static uint8_t table[PY_MAX_EXC_TABLE];
	struct exc_entry e;
	struct cs_err err;
	uint64_t obj;
	size_t n = 0, found = 0;
	uint32_t at;
	int hop;

	cs_err_init(&err);
	if (py_field_u64(py, wf->code->addr, py->layout.co_exceptiontable,
			 &obj, &err) <= 0 || !obj ||
	    pybytes_read(py, obj, table, sizeof(table), &n, &err) < 0 ||
	    n > sizeof(table))
		return 0;
	at = (uint32_t)(wf->offset / 2);
	for (hop = 0; hop < PY_MAX_HOPS && exc_find(table, n, at, &e); hop++) {
		if (e.depth >= 1 && is_with_handler(py, wf, e.target)) {
			targets[found] = e.target;
			depths[found++] = e.depth;
		}
		if (e.target == at)
			break;     /* a handler covering itself: stop */
		at = e.target;
	}
	return found;
}

/* The with handlers covering an instruction, innermost first: the
 * stack depth each keeps its exit at, and its first code unit. */
struct with_handlers {
	uint32_t depths[PY_MAX_HOPS], targets[PY_MAX_HOPS];
};

/* The with handlers open at wf's instruction (*depths and *targets: the
 * memo's, or spill's), memoised per code and offset. */
static size_t with_depths(struct pyproc *py, const struct with_frame *wf,
			  const uint32_t **depths, const uint32_t **targets,
			  struct with_handlers *spill)
{
	struct py_with_memo *m =
		&py->with_memo[py_code_memo_slot(wf->code->addr, wf->offset,
						 PY_WITH_MEMO)];
	size_t n;

	if (m->code == wf->code->addr && m->offset == wf->offset) {
		*depths = m->depths;
		*targets = m->targets;
		return m->n;
	}
	n = with_handler_depths(py, wf, spill->depths, spill->targets);
	*depths = spill->depths;
	*targets = spill->targets;
	if (n <= PY_WITH_MEMO_DEPTHS) {
		m->code = wf->code->addr;
		m->offset = wf->offset;
		m->n = (uint8_t)n;
		memcpy(m->depths, spill->depths, n * sizeof(m->depths[0]));
		memcpy(m->targets, spill->targets, n * sizeof(m->targets[0]));
	}
	return n;
}

static void table_held(struct pyproc *py, const struct with_frame *wf,
		       struct py_with_blocks *out, long *top)
{
	struct with_handlers spill;
	const uint32_t *depths, *targets;
	struct cs_err err;
	size_t i, n;

	if (wf->offset < 0)
		return;
	n = with_depths(py, wf, &depths, &targets, &spill);
	cs_err_init(&err);
	for (i = 0; i < n; i++) {
		long d = (long)depths[i];
		uint64_t mgr, raw;

		if (wf->depth >= 0 && d > wf->depth)
			continue;
		mgr = slot_manager(py, wf, d - 1);
		/* 3.14 keeps [exit, self] per with: self is the manager. */
		if (!mgr && py->layout.op_load_special >= 0 &&
		    py_read_words(py, wf->stack + 8 * (uint64_t)(d - 1),
				  &raw, 1, &err) == 0)
			mgr = raw & ~(uint64_t)py->layout.stackref_tag_mask;
		if (mgr) {
			/* (the handler is given the with statement's line) */
			add_held(out, mgr,
				 py_code_line(py, wf->code,
					      2 * (long)targets[i]), 0);
			if (d > *top)
				*top = d;
		}
	}
}

static int is_acquire_name(const char *name)
{
	return !strcmp(name, "acquire") || !strcmp(name, "acquire_lock") ||
	       !strcmp(name, "__enter__");
}

/*
 * The object whose acquire() the callable in value-stack slot i is, or 0:
 * an unbound C method (what LOAD_METHOD / LOAD_ATTR push from 3.7 on, as
 * [method, self]: the object is in slot i + 1) or a bound one (3.6's
 * LOAD_ATTR; `f = lock.acquire; f()`).  A call's result is stored over
 * its callable's slot (or the NULL below it), so an acquire() that
 * returned leaves no such slot behind; one that raised, or an older
 * frame's in the same memory, may: the caller weighs the thread's
 * state (readers/waitgraph_threads.c).
 */
static uint64_t slot_acquires(struct pyproc *py, const struct with_frame *wf,
			      long i, long limit)
{
	const struct py_layout *L = &py->layout;
	uint64_t v, type, def, self = 0;
	struct cs_err err;
	const char *tn;
	char name[16];

	cs_err_init(&err);
	if (py_read_words(py, wf->stack + 8 * (uint64_t)i, &v, 1, &err) < 0)
		return 0;
	v &= ~(uint64_t)L->stackref_tag_mask;
	if (!v || pyobj_read_type(py, v, &type, &err) < 0 ||
	    !(tn = py_type_name_cached(py, type)))
		return 0;
	if (!strcmp(tn, "method_descriptor")) {
		if (i + 1 >= limit ||
		    py_method_descr_name(py, v, name, sizeof(name), &err) < 0 ||
		    !is_acquire_name(name) ||
		    py_read_words(py, wf->stack + 8 * (uint64_t)(i + 1), &self,
				  1, &err) < 0)
			return 0;
		self &= ~(uint64_t)L->stackref_tag_mask;
		/* Called as a function, its object the first argument: from
		 * 3.13 [method, NULL, object] (ExitStack.enter_context()'s
		 * `_enter(cm)`). */
		if (!self && i + 2 < limit &&
		    py_read_words(py, wf->stack + 8 * (uint64_t)(i + 2), &self,
				  1, &err) == 0)
			self &= ~(uint64_t)L->stackref_tag_mask;
		return self;
	}
	if (strcmp(tn, "builtin_function_or_method") ||
	    py_cfunction_name(py, v, name, sizeof(name), &err) < 0 ||
	    !is_acquire_name(name))
		return 0;
	/* A bound one whose call returned stays in its slot where the
	 * result went to the NULL below it: only with that NULL is it
	 * being called. */
	if (L->call_null_below &&
	    (i < 1 || py_read_words(py, wf->stack + 8 * (uint64_t)(i - 1),
				    &def, 1, &err) < 0 || def))
		return 0;
	return py_field_u64(py, v, L->cfunction_self, &self, &err) > 0 ?
	       self : 0;
}

/* The objects the executing frame is calling acquire() of, in slots
 * from..limit - 1, the call's first: the lowest where the live depth is
 * not known (any above it are older values no call has written over
 * yet), else the topmost. */
static void find_acquiring(struct pyproc *py, const struct with_frame *wf,
			   long from, long limit, struct py_with_blocks *out)
{
	/* Where the live depth is known (3.14), every slot below it is
	 * live: the call is the topmost, a bound acquire lower down only a
	 * value (`(lk.acquire, other.acquire())`). */
	long step = wf->depth >= 0 ? -1 : 1;
	long i = step < 0 ? limit - 1 : from;

	for (; i >= from && i < limit && out->nentering < PY_MAX_WITH;
	     i += step) {
		uint64_t obj = slot_acquires(py, wf, i, limit);

		if (obj)
			out->entering[out->nentering++] = obj;
	}
}

/* Is the current instruction the one that calls __enter__? */
static int at_enter(struct pyproc *py, const struct with_frame *wf)
{
	const struct py_layout *L = &py->layout;
	uint8_t op[4];
	struct cs_err err;

	cs_err_init(&err);
	if (wf->offset < 2 || !wf->code->bytecode ||
	    memsrc_read(py->ms, wf->code->bytecode + (uint64_t)wf->offset - 2,
			op, sizeof(op), &err) < 0)
		return 0;
	if (op[2] == L->op_setup_with || op[2] == L->op_before_with)
		return 1;
	/* 3.14: CALL 0 right after LOAD_SPECIAL __enter__. */
	return L->op_load_special >= 0 && op[0] == L->op_load_special;
}

int py_with_blocks_read(struct pyproc *py, const struct py_frame *f,
			int innermost, struct py_with_blocks *out,
			struct cs_err *err)
{
	struct with_frame wf;
	struct with_handlers spill;
	const uint32_t *depths, *targets;
	long top = 0, i, limit;
	int ret;

	/* The counts say what is filled: the arrays need no clearing. */
	out->nheld = out->nentering = 0;
	out->entering_by_call = 0;
	/* The decoded frame's code and offset: the ones its line came from
	 * (up to 3.10, f_lasti in bytes, as the block stack wants it). */
	wf.code = f->code;
	wf.offset = f->offset;
	if (!wf.code)
		return 0;
	/* Away from the top, a frame whose exception table has no with
	 * handler at its instruction has no block open (most frames): its
	 * value stack need not be read. */
	if (!innermost && py->layout.f_blockstack < 0 &&
	    py->layout.co_exceptiontable >= 0 && wf.offset >= 0 &&
	    with_depths(py, &wf, &depths, &targets, &spill) == 0)
		return 0;
	ret = frame_read(py, f->addr, &wf, err);
	if (ret < 0)
		return ret;
	if (!wf.stack)
		return 0;
	if (py->layout.f_blockstack >= 0)
		blocks_held(py, &wf, out, &top);
	else if (py->layout.co_exceptiontable >= 0)
		table_held(py, &wf, out, &top);
	if (!innermost)
		return 0;
	limit = wf.depth >= 0 ? wf.depth : PY_MAX_STACK;
	{
		int32_t ss = 0;

		if (py_field_i32(py, wf.code->addr, py->layout.co_stacksize, &ss,
				 err) > 0 && ss >= 0 && ss < limit)
			limit = ss;
	}
	if (!at_enter(py, &wf)) {
		find_acquiring(py, &wf, top, limit, out);
		out->entering_by_call = 1;
		return 0;
	}
	/* The exit being entered is the first one above the held blocks. */
	for (i = top; i < limit && out->nentering < PY_MAX_WITH; i++) {
		struct cs_err e2;
		uint64_t v, mgr = slot_manager(py, &wf, i);
		size_t k;
		int known = 0;

		cs_err_init(&e2);
		if (!mgr && py_read_words(py, wf.stack + 8 * (uint64_t)i, &v, 1,
					  &e2) == 0)
			mgr = v & ~(uint64_t)py->layout.stackref_tag_mask;
		if (!mgr)
			continue;
		for (k = 0; k < out->nheld; k++)
			known |= out->held[k] == mgr;
		if (!known)
			out->entering[out->nentering++] = mgr;
	}
	return 0;
}
