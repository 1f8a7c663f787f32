#include "readers/stacks.h"

#include <stdlib.h>
#include <string.h>

#include "readers/fields.h"
#include "readers/dicts.h"
#include "readers/objects.h"
#include "readers/repr.h"
#include "common/util.h"
#include "common/banned.h"

/* How far into glibc's struct pthread the kernel tid may sit. */
#define PTHREAD_SCAN_BYTES 2048
/* How far below the end of a thread's stack mapping glibc puts its
 * descriptor (static TLS, then struct pthread). */
#define STACK_TOP_BYTES (1u << 20)

const char *py_code_kind_name(enum py_code_kind kind)
{
	switch (kind) {
	case PY_CODE_GENERATOR:
		return "generator";
	case PY_CODE_COROUTINE:
		return "coroutine";
	case PY_CODE_ASYNC_GENERATOR:
		return "async_generator";
	case PY_CODE_FUNCTION:
		break;
	}
	return "function";
}

/* One frame, decoded just enough to know where it is and what follows. */
struct raw_frame {
	uint64_t code;       /* code object address */
	uint64_t next;       /* the calling frame */
	uint64_t localsplus; /* address of the fast-locals array */
	long offset;         /* byte offset of the current instruction */
	int owner;           /* _PyInterpreterFrame.owner, -1 before 3.11 */
	int is_entry;        /* .is_entry (3.11), -1 when the version has none */
};

/* 3.11+: the _PyInterpreterFrame at addr from its first size bytes. */
static void raw_iframe_parse(const struct py_layout *L, uint64_t addr,
			     const uint8_t *buf, size_t size,
			     struct raw_frame *rf)
{
	rf->code = field_u64(buf, size, L->if_code) &
		   ~(uint64_t)L->stackref_tag_mask;
	rf->next = field_u64(buf, size, L->if_previous);
	rf->localsplus = addr + (uint64_t)L->if_localsplus;
	rf->owner = field_i8(buf, size, L->if_owner);
	rf->is_entry = L->if_is_entry >= 0 ?
		       field_i8(buf, size, L->if_is_entry) != 0 : -1;
	/* The offset needs the code object: the caller fills it in. */
	rf->offset = (long)field_u64(buf, size, L->if_prev_instr >= 0 ?
				     L->if_prev_instr : L->if_instr_ptr);
}

static int raw_frame_read(struct pyproc *py, uint64_t addr,
			  struct raw_frame *rf, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint8_t buf[PY_LAYOUT_MAX_STRUCT];
	size_t size;
	int ret;

	if (L->f_back >= 0) {
		/* PyFrameObject, up to its f_localsplus array. */
		size = (size_t)L->f_localsplus;
		if (size > sizeof(buf))
			CS_BUG("PyFrameObject of %zu bytes", size);
		ret = memsrc_read(py->ms, addr, buf, size, err);
		if (ret < 0)
			return ret;
		rf->code = field_u64(buf, size, L->f_code);
		rf->next = field_u64(buf, size, L->f_back);
		rf->localsplus = addr + (uint64_t)L->f_localsplus;
		rf->offset = field_i32(buf, size, L->f_lasti);
		/* 3.10 counts f_lasti in 2-byte code units. */
		if (L->linetable == PY_LINETABLE_310)
			rf->offset *= 2;
		rf->owner = -1;
		rf->is_entry = 1;
		return 0;
	}
	size = (size_t)L->if_localsplus;
	if (size > sizeof(buf))
		CS_BUG("_PyInterpreterFrame of %zu bytes", size);
	ret = memsrc_read(py->ms, addr, buf, size, err);
	if (ret < 0)
		return ret;
	raw_iframe_parse(L, addr, buf, size, rf);
	return 0;
}

/* Frames that CPython itself hides from tracebacks. */
static int frame_is_shim(const struct py_layout *L, int owner)
{
	return owner >= 0 && (owner == L->owner_cstack ||
			      owner == L->owner_interpreter);
}

static void read_locals(struct pyproc *py, const struct py_code *code,
			uint64_t localsplus, struct py_frame *f)
{
	const struct py_layout *L = &py->layout;
	uint64_t *slots;
	size_t i;

	if (!code->nlocalsplus)
		return;
	slots = xmalloc(code->nlocalsplus * sizeof(*slots));
	if (py_read_words(py, localsplus, slots, code->nlocalsplus, NULL) < 0) {
		free(slots);
		return;
	}
	f->locals = xcalloc(code->nlocalsplus, sizeof(*f->locals));
	for (i = 0; i < code->nlocalsplus; i++) {
		uint64_t v = slots[i] & ~(uint64_t)L->stackref_tag_mask, type;
		struct strbuf sb;

		if (!v || !code->localnames[i] ||
		    code->localkinds[i] == PY_LOCAL_HIDDEN)
			continue;
		if (code->localkinds[i] == PY_LOCAL_CELL &&
		    pyobj_read_type(py, v, &type, NULL) == 0 &&
		    type == py->types.cell) {
			if (py_field_u64(py, v, L->cell_ref, &v, NULL) < 0 || !v)
				continue;
		}
		strbuf_init(&sb);
		pyrepr(py, v, &sb);
		f->locals[f->nlocals].name = code->localnames[i];
		f->locals[f->nlocals].repr = strbuf_detach(&sb);
		f->nlocals++;
	}
	free(slots);
}

void py_frames_free(struct py_frame *frames, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < frames[i].nlocals; j++)
			free(frames[i].locals[j].repr);
		free(frames[i].locals);
	}
	free(frames);
}

int py_frames_same_places(const struct py_frame *a, const struct py_frame *b,
			  size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i].code != b[i].code || a[i].line != b[i].line)
			return 0;
	return 1;
}

/* decode_frame() once the frame's own fields are in rf. */
static int decode_raw(struct pyproc *py, uint64_t frame,
		      const struct py_stack_options *opt,
		      struct raw_frame *rf, struct py_frame *f,
		      struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	const struct py_code *code;
	uint64_t type;
	int ret;

	if (frame_is_shim(L, rf->owner))
		return 0;
	/* 3.13+ frames may execute something other than code: known code
	 * (most frames) was checked when it was cached. */
	code = py_code_cached(py, rf->code);
	if (!code) {
		ret = pyobj_read_type(py, rf->code, &type, err);
		if (ret < 0)
			return ret;
		if (type != py->types.code)
			return 0;
		ret = py_code_get(py, rf->code, &code, err);
		if (ret < 0)
			return ret;
	}
	if (rf->owner >= 0) {
		rf->offset = py_code_offset(py, code, (uint64_t)rf->offset);
		/* Not yet past its prologue: CPython hides it too. */
		if (rf->owner != L->owner_generator &&
		    rf->offset < (long)code->firsttraceable * 2)
			return 0;
	}
	memset(f, 0, sizeof(*f));
	f->addr = frame;
	f->code = code;
	f->line = py_code_line(py, code, rf->offset);
	f->offset = rf->offset;
	f->entry = rf->is_entry == 1;
	if (opt && opt->locals)
		read_locals(py, code, rf->localsplus, f);
	return 1;
}

/*
 * Decode the frame at `frame` into f: 1 when it is one to show, 0 when it
 * is not (a shim, or a frame running something other than code), or a
 * negative status.  rf->next is set in every case but an error.
 */
static int decode_frame(struct pyproc *py, uint64_t frame,
			const struct py_stack_options *opt,
			struct raw_frame *rf, struct py_frame *f,
			struct cs_err *err)
{
	int ret = raw_frame_read(py, frame, rf, err);

	return ret < 0 ? ret : decode_raw(py, frame, opt, rf, f, err);
}

int py_frame_read(struct pyproc *py, uint64_t frame,
		  const struct py_stack_options *opt, struct py_frame *out,
		  struct cs_err *err)
{
	struct raw_frame rf;

	return decode_frame(py, frame, opt, &rf, out, err);
}

int py_frame_decode(struct pyproc *py, uint64_t frame, const uint8_t *bytes,
		    size_t n, const struct py_stack_options *opt,
		    struct py_frame *out, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	struct raw_frame rf;

	if (L->f_back >= 0 || n < (size_t)L->if_localsplus)
		return decode_frame(py, frame, opt, &rf, out, err);
	raw_iframe_parse(L, frame, bytes, (size_t)L->if_localsplus, &rf);
	return decode_raw(py, frame, opt, &rf, out, err);
}

/*
 * A frame chain being read.  The innermost `head` shown frames are kept
 * as they come; past them only the addresses of the last `outer` shown
 * frames are remembered (a ring), and decoded with their locals once the
 * chain ends, so a 50,000-deep recursion costs one light decode per
 * frame and keeps both of its ends.
 */
struct chain {
	struct pyproc *py;
	const struct py_stack_options *opt;
	struct py_frame *frames;
	size_t n, alloc;
	size_t head, outer;
	uint64_t ring[PY_OUTER_FRAMES];
	size_t past;              /* shown frames met past the head */
};

static void chain_add(struct chain *c, const struct py_frame *f)
{
	c->frames = xgrow(c->frames, &c->alloc, c->n + 1, sizeof(*c->frames));
	c->frames[c->n++] = *f;
}

/* Decode one frame of the chain: kept, or noted in the ring.  Returns
 * what decode_frame() does; rf->next is the next frame. */
static int chain_step(struct chain *c, uint64_t frame, struct raw_frame *rf,
		      struct cs_err *err)
{
	struct py_frame f;
	int ret;

	if (c->n < c->head) {
		ret = decode_frame(c->py, frame, c->opt, rf, &f, err);
		if (ret > 0)
			chain_add(c, &f);
		else if (ret == 0 && c->n && rf->owner >= 0 &&
			 rf->owner == c->py->layout.owner_cstack)
			/* 3.12+: each C eval call starts with a shim frame */
			c->frames[c->n - 1].entry = 1;
		return ret;
	}
	/* Past the head: no locals, only whether it is a frame to show. */
	ret = decode_frame(c->py, frame, NULL, rf, &f, err);
	if (ret > 0 && c->outer)
		c->ring[c->past % c->outer] = frame;
	if (ret > 0)
		c->past++;
	return ret;
}

/* Append the outermost frames remembered in the ring, in chain order. */
static void chain_finish(struct chain *c, size_t *omitted,
			 size_t *omitted_at)
{
	size_t kept = c->past < c->outer ? c->past : c->outer, k;
	struct py_frame f;
	struct raw_frame rf;

	*omitted = c->past - kept;
	*omitted_at = *omitted ? c->n : 0;
	for (k = 0; k < kept; k++) {
		uint64_t frame = c->ring[(c->past - kept + k) % c->outer];

		if (decode_frame(c->py, frame, c->opt, &rf, &f, NULL) > 0)
			chain_add(c, &f);
	}
}

static int walk_chain(struct pyproc *py, uint64_t frame, int follow,
		      const struct py_stack_options *opt, struct py_thread *t,
		      struct cs_err *err)
{
	struct chain c;
	struct raw_frame rf;
	uint64_t mark = 0;
	size_t steps, power = 1, lap = 0, max;
	int ret = 0;

	memset(&c, 0, sizeof(c));
	c.py = py;
	c.opt = opt;
	max = opt && opt->max_frames ? opt->max_frames : PY_MAX_FRAMES;
	c.outer = max >= 2 * PY_OUTER_FRAMES ? PY_OUTER_FRAMES : max / 2;
	c.head = max - c.outer;
	for (steps = 0; frame && steps < PY_MAX_FRAME_WALK; steps++) {
		/* Brent's cycle check: a chain that comes back to a frame
		 * is corrupt (or changing under a --no-block read). */
		if (frame == mark) {
			ret = cs_fail(err, CS_ERR_MEMORY,
				      "the frame chain loops at 0x%llx",
				      (unsigned long long)frame);
			break;
		}
		if (++lap == power) {
			mark = frame;
			power *= 2;
			lap = 0;
		}
		ret = chain_step(&c, frame, &rf, err);
		if (ret < 0)
			break;
		ret = 0;
		if (!follow)
			break;
		frame = rf.next;
	}
	chain_finish(&c, &t->omitted, &t->omitted_at);
	if (c.n && follow && !frame)
		c.frames[c.n - 1].entry = 1;  /* the thread's first frame */
	t->frames = c.frames;
	t->nframes = c.n;
	if (ret == 0 && frame && follow && steps >= PY_MAX_FRAME_WALK)
		ret = cs_fail(err, CS_ERR_MEMORY, "more than %u frames: a loop?",
			      PY_MAX_FRAME_WALK);
	return ret;
}

int py_frames_walk(struct pyproc *py, uint64_t frame, int follow,
		   const struct py_stack_options *opt,
		   struct py_frame **frames, size_t *nframes,
		   struct cs_err *err)
{
	struct py_thread t;
	int ret;

	memset(&t, 0, sizeof(t));
	ret = walk_chain(py, frame, follow, opt, &t, err);
	*frames = t.frames;
	*nframes = t.nframes;
	return ret;
}

/* Maps a pthread_t to a kernel tid when the thread state has no
 * native_thread_id (before 3.11). */
struct tid_finder {
	int offset;   /* of the tid in struct pthread, -1 until found */
};

static int known_tid(const struct memsrc *ms, int tid)
{
	size_t i;

	for (i = 0; tid > 0 && i < ms->nthreads; i++)
		if (ms->threads[i].tid == tid)
			return 1;
	return 0;
}

static int tid_of_pthread(struct pyproc *py, struct tid_finder *tf,
			  uint64_t pthread)
{
	const struct memsrc *ms = py->ms;
	uint8_t buf[PTHREAD_SCAN_BYTES];
	long got;
	size_t i;

	/* A stopped thread's fs_base is its pthread_t (x86-64 TLS). */
	for (i = 0; i < ms->nthreads; i++)
		if (ms->threads[i].has_fs_base && ms->threads[i].fs_base == pthread)
			return ms->threads[i].tid;
	/*
	 * Without registers (--no-block), look inside glibc's struct pthread
	 * for a field holding one of the process's tids; the offset found
	 * for one thread must hold for the others.
	 */
	got = memsrc_read_partial(py->ms, pthread, buf, sizeof(buf), NULL);
	if (got <= 0)
		return 0;
	if (tf->offset >= 0) {
		int32_t v = field_i32(buf, (size_t)got, tf->offset);

		return known_tid(ms, v) ? v : 0;
	}
	for (i = 0; i + 4 <= (size_t)got; i += 4) {
		int32_t v = field_i32(buf, (size_t)got, (int)i);

		if (known_tid(ms, v)) {
			tf->offset = (int)i;
			return v;
		}
	}
	return 0;
}

/*
 * The kernel tid of the thread whose stack holds addr, or 0: the one
 * thread whose glibc descriptor (fs_base, at the top of its stack block)
 * lies at the top of the same mapping.  Only threads with known
 * registers count (a stopped target, or a core).
 */
static int tid_of_stack(struct pyproc *py, uint64_t addr)
{
	const struct memsrc *ms = py->ms;
	const struct cs_mapping *m = memsrc_find_mapping(ms, addr);
	size_t i;

	for (i = 0; m && i < ms->nthreads; i++) {
		uint64_t fs = ms->threads[i].fs_base;

		if (ms->threads[i].has_fs_base && fs > addr && fs < m->end &&
		    m->end - fs <= STACK_TOP_BYTES)
			return ms->threads[i].tid;
	}
	return 0;
}

/*
 * 3.11 and 3.12 keep the running thread's _PyCFrame on its C stack, so
 * a thread state that runs code says which thread runs it.  That beats
 * native_thread_id, which is the thread that created the state: 3.12's
 * _xxsubinterpreters runs code in a subinterpreter's first thread state,
 * created by the main thread, from whatever thread calls run_string().
 * 0 when it does not tell.
 */
static int tid_running(struct pyproc *py, uint64_t tstate)
{
	const struct py_layout *L = &py->layout;
	uint64_t cframe;

	if (py_field_u64(py, tstate, L->ts_cframe, &cframe, NULL) != 1 ||
	    !cframe)
		return 0;
	/* An idle state points at its own root_cframe. */
	if (cframe >= tstate && cframe - tstate < (uint64_t)L->ts_size)
		return 0;
	return tid_of_stack(py, cframe);
}

/* The thread state that holds the GIL of interp, 0 if none, or -1. */
static int gil_holder(struct pyproc *py, uint64_t interp, uint64_t *holder)
{
	const struct py_layout *L = &py->layout;
	uint64_t gil;
	int32_t locked;

	*holder = 0;
	if (py->tstate_current_var)
		return memsrc_read_u64(py->ms, py->tstate_current_var, holder,
				       NULL) < 0 ? -1 : 0;
	if (L->rt_gilstate_tstate_current >= 0 && py->runtime)
		return py_field_u64(py, py->runtime, L->rt_gilstate_tstate_current,
				    holder, NULL) < 0 ? -1 : 0;
	if (py_field_u64(py, interp, L->is_ceval_gil, &gil, NULL) != 1)
		return -1;
	if (!gil || py_field_i32(py, gil, L->gil_locked, &locked, NULL) < 0)
		return -1;
	if (!locked)
		return 0;
	return py_field_u64(py, gil, L->gil_last_holder, holder, NULL) < 0 ?
	       -1 : 0;
}

/* threading._active of an interpreter, or 0. */
static uint64_t threading_active(struct pyproc *py, uint64_t interp)
{
	uint64_t mdict, active;

	if (pymodule_dict(py, interp, "threading", &mdict, NULL) != 0)
		return 0;
	if (pydict_get_str(py, mdict, "_active", &active, NULL) != 0)
		return 0;
	return active;
}

/* The name of the threading.Thread that _active (by ident, as
 * pydict_int_index() gave it) has for thread_id, or NULL. */
static char *thread_name(struct pyproc *py, const struct addrmap *active,
			 uint64_t thread_id)
{
	uint64_t thread, name;
	const char *s;

	if (!thread_id || thread_id > (uint64_t)INT64_MAX)
		return NULL;
	thread = (uintptr_t)addrmap_get(active, thread_id, NULL);
	if (!thread ||
	    pyobj_get_attr(py, thread, "_name", &name, NULL) != 0 ||
	    pystr_get(py, name, &s, NULL) != 0)
		return NULL;
	return xstrdup(s);
}

/*
 * The thread's innermost frame, 0 if none; -1 if it could not be read.
 * 3.11 and 3.12 reach it through the _PyCFrame on the thread's C stack,
 * which a core may have lost (cut short): its frames are then unknown,
 * not absent.
 */
static int first_frame(struct pyproc *py, uint64_t tstate, uint64_t *frame)
{
	const struct py_layout *L = &py->layout;
	uint64_t cframe;
	int ret = 0;

	*frame = 0;
	if (L->ts_frame >= 0)
		ret = py_field_u64(py, tstate, L->ts_frame, frame, NULL);
	else if (L->ts_current_frame >= 0)
		ret = py_field_u64(py, tstate, L->ts_current_frame, frame, NULL);
	else if ((ret = py_field_u64(py, tstate, L->ts_cframe, &cframe,
				     NULL)) == 1 && cframe)
		ret = py_field_u64(py, cframe, L->cf_current_frame, frame,
				   NULL);
	return ret < 0 ? -1 : 0;
}

/* What the threads of one interpreter share. */
struct interp_walk {
	uint64_t addr;
	int64_t id;
	struct addrmap active;    /* threading._active: ident -> Thread */
	uint64_t holder;          /* the GIL holder, when holder_known */
	int holder_known;
	struct tid_finder *tf;
	const struct py_stack_options *opt;
};

static int read_thread(struct pyproc *py, const struct interp_walk *iw,
		       uint64_t tstate, struct py_thread *t, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint64_t frame;
	int32_t native = 0;
	int ret;

	memset(t, 0, sizeof(*t));
	t->tstate = tstate;
	t->interp = iw->addr;
	t->interp_id = iw->id;
	t->interp_main = iw->id == 0;
	ret = py_field_u64(py, tstate, L->ts_thread_id, &t->thread_id, err);
	if (ret >= 0)
		ret = py_field_i32(py, tstate, L->ts_native_thread_id, &native, err);
	if (ret < 0)
		return ret;
	t->tid = tid_running(py, tstate);
	if (!t->tid)
		t->tid = native > 0 ? native :
			 tid_of_pthread(py, iw->tf, t->thread_id);
	t->name = thread_name(py, &iw->active, t->thread_id);
	t->holds_gil = iw->holder_known ? iw->holder == tstate : -1;
	if (first_frame(py, tstate, &frame) < 0 ||
	    walk_chain(py, frame, 1, iw->opt, t, NULL) < 0)
		t->truncated = 1;
	return 0;
}

/* The thread states of one interpreter, appended to snap. */
static int read_interp(struct pyproc *py, struct interp_walk *iw,
		       struct addrmap *seen, struct py_snapshot *snap,
		       size_t *alloc, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint64_t tstate, id, active;
	int nthreads, ret;

	ret = py_field_u64(py, iw->addr, L->is_tstate_head, &tstate, err);
	if (ret >= 0)
		ret = py_field_u64(py, iw->addr, L->is_id, &id, err);
	if (ret < 0)
		return ret;
	iw->id = (int64_t)id;     /* 3.6 has no ids: one interpreter, 0 */
	active = threading_active(py, iw->addr);
	/* Best effort: a dict that cannot be walked names no thread. */
	if (active)
		(void)pydict_int_index(py, active, &iw->active, NULL);
	iw->holder_known = gil_holder(py, iw->addr, &iw->holder) == 0;
	for (nthreads = 0; tstate && nthreads < PY_MAX_THREADS; nthreads++) {
		if (!addrmap_add(seen, tstate))
			break;
		snap->threads = xgrow(snap->threads, alloc, snap->nthreads + 1,
				      sizeof(*snap->threads));
		ret = read_thread(py, iw, tstate,
				  &snap->threads[snap->nthreads], err);
		if (ret < 0)
			return ret;
		snap->nthreads++;
		ret = py_field_u64(py, tstate, L->ts_next, &tstate, err);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int py_snapshot_take(struct pyproc *py, const struct py_stack_options *opt,
		     struct py_snapshot *snap, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	struct addrmap seen;
	struct tid_finder tf = { -1 };
	struct interp_walk iw;
	size_t alloc = 0;
	uint64_t interp;
	int ret;

	memset(snap, 0, sizeof(*snap));
	ret = pyproc_interp_head(py, &interp, err);
	if (ret < 0)
		return ret;
	if (!interp)
		return cs_fail(err, CS_ERR_MEMORY,
			       "the interpreter list is empty (the target is "
			       "starting up or shutting down)");
	addrmap_init(&seen);
	while (interp && snap->ninterps < PY_MAX_INTERPRETERS) {
		if (!addrmap_add(&seen, interp))
			break;
		memset(&iw, 0, sizeof(iw));
		addrmap_init(&iw.active);
		iw.addr = interp;
		iw.tf = &tf;
		iw.opt = opt;
		ret = read_interp(py, &iw, &seen, snap, &alloc, err);
		addrmap_release(&iw.active);
		if (ret < 0)
			break;
		snap->ninterps++;
		ret = py_field_u64(py, interp, L->is_next, &interp, err);
		if (ret < 0)
			break;
	}
	addrmap_release(&seen);
	if (ret < 0)
		py_snapshot_release(snap);
	return ret < 0 ? ret : 0;
}

void py_snapshot_release(struct py_snapshot *snap)
{
	size_t i;

	for (i = 0; i < snap->nthreads; i++) {
		free(snap->threads[i].name);
		py_frames_free(snap->threads[i].frames, snap->threads[i].nframes);
	}
	free(snap->threads);
	memset(snap, 0, sizeof(*snap));
}

/* 1: thread t is the one the fork copied (its frames go through it),
 * with no loop running inside it; -1: it runs a loop of this process;
 * 0: neither. */
static int fork_side(const struct py_thread *t)
{
	size_t i;

	/* Innermost first: a loop inside the fork is the child's. */
	for (i = 0; i < t->nframes; i++) {
		if (py_code_is(t->frames[i].code, "asyncio/base_events.py",
			       "run_forever"))
			return -1;
		if (i + 1 < t->nframes &&
		    py_code_is(t->frames[i].code,
			       "multiprocessing/process.py", "_bootstrap") &&
		    py_code_is(t->frames[i + 1].code,
			       "multiprocessing/popen_fork.py", "_launch"))
			return 1;
	}
	return 0;
}

int py_thread_in_loop_select(const struct py_thread *t)
{
	const struct py_code *run = t->nframes >= 2 ? t->frames[1].code : NULL;

	return run && run->name && !strcmp(run->name, "_run_once") &&
	       py_code_is(t->frames[0].code, "/selectors.py", "select");
}

int py_snapshot_forked_child(const struct py_snapshot *snap)
{
	size_t i;
	int forked = 0, side;

	/* (threads the child started since have their own frames: one
	 * running a loop makes the tasks possibly its own) */
	for (i = 0; i < snap->nthreads; i++) {
		side = fork_side(&snap->threads[i]);
		if (side < 0)
			return 0;
		forked |= side;
	}
	return forked;
}

const char *py_frame_local_str(struct pyproc *py, const struct py_frame *f,
			       const char *name)
{
	uint64_t v = py_frame_local(py, f, name);
	const char *s;

	return v && pystr_get(py, v, &s, NULL) == 0 ? s : NULL;
}

/* The raw value of a frame's local `name`, cells opened; 0 if none. */
uint64_t py_frame_local(struct pyproc *py, const struct py_frame *f,
			const char *name)
{
	const struct py_layout *L = &py->layout;
	const struct py_code *code = f->code;
	uint64_t base, v = 0, type;
	struct cs_err err;
	size_t i;

	base = f->addr + (uint64_t)(L->f_back >= 0 ? L->f_localsplus :
				    L->if_localsplus);
	cs_err_init(&err);
	for (i = 0; code && i < code->nlocalsplus; i++) {
		if (!code->localnames[i] || strcmp(code->localnames[i], name))
			continue;
		if (py_read_words(py, base + 8 * i, &v, 1, &err) < 0)
			return 0;
		v &= ~(uint64_t)L->stackref_tag_mask;
		/* Before 3.11 an argument a closure keeps is a cell of its
		 * own, after the locals; its local slot is cleared. */
		if (!v)
			continue;
		if (code->localkinds[i] == PY_LOCAL_CELL &&
		    pyobj_read_type(py, v, &type, &err) == 0 &&
		    type == py->types.cell &&
		    py_field_u64(py, v, L->cell_ref, &v, &err) < 0)
			return 0;
		return v;
	}
	return 0;
}
