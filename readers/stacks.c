#include "readers/stacks.h"

#include <stdlib.h>
#include <string.h>

#include "readers/fields.h"
#include "readers/objects.h"
#include "readers/repr.h"
#include "common/banned.h"

/* How far into glibc's struct pthread the kernel tid may sit. */
#define PTHREAD_SCAN_BYTES 2048

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
	struct cs_err err;
	size_t i;

	if (!code->nlocalsplus)
		return;
	cs_err_init(&err);
	slots = xmalloc(code->nlocalsplus * sizeof(*slots));
	if (memsrc_read(py->ms, localsplus, slots, code->nlocalsplus * 8, &err) < 0) {
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
		    pyobj_read_type(py, v, &type, &err) == 0 &&
		    type == py->types.cell) {
			if (memsrc_read_u64(py->ms, v + (uint64_t)L->cell_ref, &v,
					    &err) < 0 || !v)
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
	const struct py_layout *L = &py->layout;
	const struct py_code *code;
	uint64_t type;
	int ret;

	ret = raw_frame_read(py, frame, rf, err);
	if (ret < 0)
		return ret;
	if (frame_is_shim(L, rf->owner))
		return 0;
	/* 3.13+ frames may execute something other than code. */
	ret = pyobj_read_type(py, rf->code, &type, err);
	if (ret < 0)
		return ret;
	if (type != py->types.code)
		return 0;
	ret = py_code_get(py, rf->code, &code, err);
	if (ret < 0)
		return ret;
	if (rf->owner >= 0) {
		rf->offset = (long)((uint64_t)rf->offset - code->code_start);
		/* Not yet past its prologue: CPython hides it too. */
		if (rf->owner != L->owner_generator &&
		    rf->offset < (long)code->firsttraceable * 2)
			return 0;
	}
	memset(f, 0, sizeof(*f));
	f->addr = frame;
	f->code = code;
	f->line = py_code_line(py, code, rf->offset);
	f->entry = rf->is_entry == 1;
	if (opt && opt->locals)
		read_locals(py, code, rf->localsplus, f);
	return 1;
}

int py_frame_read(struct pyproc *py, uint64_t frame,
		  const struct py_stack_options *opt, struct py_frame *out,
		  struct cs_err *err)
{
	struct raw_frame rf;

	return decode_frame(py, frame, opt, &rf, out, err);
}

int py_frames_walk(struct pyproc *py, uint64_t frame, int follow,
		   const struct py_stack_options *opt,
		   struct py_frame **frames, size_t *nframes,
		   struct cs_err *err)
{
	struct py_frame *out = NULL, f;
	size_t n = 0, alloc = 0, steps;
	int ret = 0;

	for (steps = 0; frame && steps < PY_MAX_FRAMES; steps++) {
		struct raw_frame rf;

		ret = decode_frame(py, frame, opt, &rf, &f, err);
		if (ret < 0)
			break;
		if (ret > 0) {
			out = xgrow(out, &alloc, n + 1, sizeof(*out));
			out[n++] = f;
		} else if (n && rf.owner >= 0 &&
			   rf.owner == py->layout.owner_cstack) {
			/* 3.12+: each C eval call starts with a shim frame */
			out[n - 1].entry = 1;
		}
		ret = 0;
		if (!follow)
			break;
		frame = rf.next;
	}
	if (n && follow && !frame)
		out[n - 1].entry = 1;  /* the thread's first frame */
	*frames = out;
	*nframes = n;
	if (ret == 0 && frame && follow && steps >= PY_MAX_FRAMES)
		ret = cs_fail(err, CS_ERR_MEMORY, "more than %d frames: cycle?",
			      PY_MAX_FRAMES);
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
	struct cs_err err;
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
	cs_err_init(&err);
	got = memsrc_read_partial(py->ms, pthread, buf, sizeof(buf), &err);
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

/* The thread state that holds the GIL of interp, 0 if none, or -1. */
static int gil_holder(struct pyproc *py, uint64_t interp, uint64_t *holder)
{
	const struct py_layout *L = &py->layout;
	struct cs_err err;
	uint64_t gil;
	int32_t locked;

	cs_err_init(&err);
	*holder = 0;
	if (py->tstate_current_var)
		return memsrc_read_u64(py->ms, py->tstate_current_var, holder, &err);
	if (L->rt_gilstate_tstate_current >= 0 && py->runtime)
		return memsrc_read_u64(py->ms, py->runtime +
				       (uint64_t)L->rt_gilstate_tstate_current,
				       holder, &err);
	if (L->is_ceval_gil >= 0) {
		if (memsrc_read_u64(py->ms, interp + (uint64_t)L->is_ceval_gil,
				    &gil, &err) < 0 || !gil)
			return -1;
		if (memsrc_read(py->ms, gil + (uint64_t)L->gil_locked, &locked,
				sizeof(locked), &err) < 0)
			return -1;
		if (!locked)
			return 0;
		return memsrc_read_u64(py->ms, gil + (uint64_t)L->gil_last_holder,
				       holder, &err);
	}
	return -1;
}

/* threading._active of an interpreter, or 0. */
static uint64_t threading_active(struct pyproc *py, uint64_t interp)
{
	uint64_t mdict, active;
	struct cs_err err;

	cs_err_init(&err);
	if (pymodule_dict(py, interp, "threading", &mdict, &err) != 0)
		return 0;
	if (pydict_get_str(py, mdict, "_active", &active, &err) != 0)
		return 0;
	return active;
}

static char *thread_name(struct pyproc *py, uint64_t active,
			 uint64_t thread_id)
{
	uint64_t thread, name;
	const char *s;
	struct cs_err err;

	cs_err_init(&err);
	if (!active || thread_id > (uint64_t)INT64_MAX ||
	    pydict_get_int(py, active, (int64_t)thread_id, &thread, &err) != 0 ||
	    pyobj_get_attr(py, thread, "_name", &name, &err) != 0 ||
	    pystr_get(py, name, &s, &err) != 0)
		return NULL;
	return xstrdup(s);
}

static uint64_t first_frame(struct pyproc *py, uint64_t tstate,
			    struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint64_t frame = 0, cframe;

	if (L->ts_frame >= 0) {
		memsrc_read_u64(py->ms, tstate + (uint64_t)L->ts_frame, &frame, err);
	} else if (L->ts_current_frame >= 0) {
		memsrc_read_u64(py->ms, tstate + (uint64_t)L->ts_current_frame,
				&frame, err);
	} else if (memsrc_read_u64(py->ms, tstate + (uint64_t)L->ts_cframe,
				   &cframe, err) == 0 && cframe) {
		memsrc_read_u64(py->ms, cframe + (uint64_t)L->cf_current_frame,
				&frame, err);
	}
	return frame;
}

static int read_thread(struct pyproc *py, uint64_t interp, uint64_t tstate,
		       uint64_t active, uint64_t holder, int holder_known,
		       struct tid_finder *tf,
		       const struct py_stack_options *opt, struct py_thread *t,
		       struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	struct cs_err ferr;
	uint64_t frame;
	int32_t native = 0;
	int ret;

	memset(t, 0, sizeof(*t));
	t->tstate = tstate;
	t->interp = interp;
	ret = memsrc_read_u64(py->ms, tstate + (uint64_t)L->ts_thread_id,
			      &t->thread_id, err);
	if (ret < 0)
		return ret;
	if (L->ts_native_thread_id >= 0)
		ret = memsrc_read(py->ms, tstate + (uint64_t)L->ts_native_thread_id,
				  &native, sizeof(native), err);
	if (ret < 0)
		return ret;
	t->tid = native > 0 ? native : tid_of_pthread(py, tf, t->thread_id);
	t->name = thread_name(py, active, t->thread_id);
	t->holds_gil = holder_known ? holder == tstate : -1;
	cs_err_init(&ferr);
	frame = first_frame(py, tstate, &ferr);
	if (py_frames_walk(py, frame, 1, opt, &t->frames, &t->nframes, &ferr) < 0)
		t->truncated = 1;
	return 0;
}

int py_snapshot_take(struct pyproc *py, const struct py_stack_options *opt,
		     struct py_snapshot *snap, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	struct addrmap seen;
	struct tid_finder tf = { -1 };
	size_t alloc = 0, ninterp;
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
	for (ninterp = 0; interp && ninterp < PY_MAX_INTERPRETERS; ninterp++) {
		uint64_t tstate, active, holder;
		int holder_known, nthreads;

		if (!addrmap_add(&seen, interp))
			break;
		ret = memsrc_read_u64(py->ms, interp + (uint64_t)L->is_tstate_head,
				      &tstate, err);
		if (ret < 0)
			break;
		active = threading_active(py, interp);
		holder_known = gil_holder(py, interp, &holder) == 0;
		for (nthreads = 0; tstate && nthreads < PY_MAX_THREADS; nthreads++) {
			struct py_thread *t;

			if (!addrmap_add(&seen, tstate))
				break;
			snap->threads = xgrow(snap->threads, &alloc,
					      snap->nthreads + 1,
					      sizeof(*snap->threads));
			t = &snap->threads[snap->nthreads];
			ret = read_thread(py, interp, tstate, active, holder,
					  holder_known, &tf, opt, t, err);
			if (ret < 0)
				break;
			snap->nthreads++;
			ret = memsrc_read_u64(py->ms, tstate + (uint64_t)L->ts_next,
					      &tstate, err);
			if (ret < 0)
				break;
		}
		if (ret < 0)
			break;
		ret = memsrc_read_u64(py->ms, interp + (uint64_t)L->is_next,
				      &interp, err);
		if (ret < 0)
			break;
	}
	addrmap_release(&seen);
	if (ret < 0)
		py_snapshot_release(snap);
	return ret;
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
