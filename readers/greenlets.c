#include "readers/greenlets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/addrmap.h"
#include "common/le.h"
#include "common/strbuf.h"
#include "readers/dicts.h"
#include "readers/fields.h"
#include "readers/gc.h"
#include "readers/funcs.h"
#include "readers/gens.h"
#include "readers/objects.h"
#include "readers/tasks.h"
#include "common/banned.h"

/* Hops along a saved _PyCFrame.previous chain before giving up. */
#define MAX_CFRAME_HOPS 64

/*
 * greenlet's private layout: the PyGreenlet object, its C++
 * implementation object ("P", UserGreenlet or MainGreenlet, reached
 * through pimpl) and the per-thread ThreadState.  One row per greenlet
 * major.minor version and CPython minor version, each read off the DWARF
 * of a greenlet (2.0.2; 3.0.3 and 3.1.1 for 3.12, 3.1.1 for 3.13) built
 * with -g from its source
 * against that CPython's headers (gdb's ptype /o of greenlet::UserGreenlet,
 * MainGreenlet, ThreadState and _PyCFrame), and tested against gr_frame
 * inside real processes (tests/test_sched.py).  The 3.11 row is also what
 * Debian's stripped python3-greenlet 2.0.2 holds (compared with id(),
 * gr_frame and gr_parent in a running process).  Other versions are
 * refused: greenlet's private layout moves between its minor versions.
 */
struct gl_layout {
	int greenlet_major;
	int greenlet_minor;
	int py_minor;
	int pimpl;            /* PyGreenlet.pimpl */
	int stack_start;      /* StackState._stack_start (char *) */
	int stack_stop;       /* StackState.stack_stop; (char *)-1 for main */
	int stack_copy;       /* StackState.stack_copy: the spilled C stack */
	int stack_saved;      /* StackState._stack_saved: its length */
	int top_frame;        /* PythonState._top_frame (PyFrameObject *) */
	int cframe;           /* PythonState.cframe (3.10+), -1 if none */
	int current_frame;    /* PythonState.current_frame (3.11+), -1 */
	int self;             /* Greenlet._self: back to the PyGreenlet */
	int main_greenlet;    /* UserGreenlet._main_greenlet */
	int run_callable;     /* UserGreenlet._run_callable */
	int parent;           /* UserGreenlet._parent */
	int thread_state;     /* MainGreenlet._thread_state */
	int p_size;           /* bytes of P that hold all of the above */
	int ts_main;          /* ThreadState.main_greenlet */
	int ts_current;       /* ThreadState.current_greenlet */
	int cf_previous;      /* _PyCFrame.previous, where greenlet points a
				 new greenlet's chain at the thread state's
				 root_cframe (3.11); -1 not followed */
};

static const struct gl_layout gl_layouts[] = {
	/* maj min py pimpl  start stop copy saved  top cframe cur
	   self main run parent ts  size  ts_main ts_cur cf_prev */
	{ 2, 0, 8, 32,  64, 72, 80, 88,  112, -1, -1,
	  128, 136, 144, 152, 136,  160,  0, 8, -1 },
	{ 2, 0, 9, 32,  64, 72, 80, 88,  112, -1, -1,
	  128, 136, 144, 152, 136,  160,  0, 8, -1 },
	/* 3.10 has a cframe, but greenlet 2.0 leaves its previous chain
	 * running through C frames that have since returned: not followed
	 * (cf_previous -1); threads come from the TLS (threads_by_tls()). */
	{ 2, 0, 10, 32,  64, 72, 80, 88,  112, 120, -1,
	  144, 152, 160, 168, 152,  176,  0, 8, -1 },
	{ 2, 0, 11, 32,  48, 56, 64, 72,  96, 104, 128,
	  160, 168, 176, 184, 168,  192,  0, 8, 16 },
	/* greenlet 3.0 on 3.12: 3.11's offsets; _PyCFrame lost use_tracing
	 * (previous at 8). */
	{ 3, 0, 12, 32,  48, 56, 64, 72,  96, 104, 128,
	  160, 168, 176, 184, 168,  192,  0, 8, 8 },
	/* greenlet 3.1 (3.1.1) put Greenlet._self first (at 8) and moved
	 * everything after it; on 3.13 there is no cframe. */
	{ 3, 1, 12, 32,  56, 64, 72, 80,  104, 112, 136,
	  8, 168, 176, 184, 176,  192,  0, 8, 8 },
	{ 3, 1, 13, 32,  56, 64, 72, 80,  104, -1, 128,
	  8, 160, 168, 176, 168,  184,  0, 8, -1 },
};

/* What one greenlet's P holds, decoded. */
struct gl_raw {
	uint64_t p;
	uint64_t stack_start, stack_stop, stack_copy, stack_saved;
	uint64_t top_frame, cframe, current_frame, self;
	uint64_t main_greenlet, thread_state, run_callable, parent;
};

const char *py_greenlet_state_name(enum py_greenlet_state state)
{
	static const char *const names[] = {
		[PY_GREENLET_NOT_STARTED] = "not_started",
		[PY_GREENLET_SUSPENDED] = "suspended",
		[PY_GREENLET_RUNNING] = "running",
	};

	return (unsigned)state < PY_GREENLET_DEAD ? names[state] : "dead";
}

static int is_greenlet_type(struct py_greenlet_scan *b, uint64_t type)
{
	int found;
	uintptr_t k;

	if (!type)
		return 0;
	if (type == b->last_type)
		return b->last_is;
	k = (uintptr_t)addrmap_get(&b->types, type, &found);
	if (!found) {
		k = pytype_is_subtype(b->py, type, b->gl_type) ? 1 : 2;
		addrmap_put(&b->types, type, (void *)k);
	}
	b->last_type = type;
	b->last_is = k == 1;
	return b->last_is;
}

static int visit(uint64_t obj, uint64_t type, uint64_t interp, void *data)
{
	struct py_greenlet_scan *b = data;

	if (!is_greenlet_type(b, type))
		return 0;
	if (b->n >= PY_MAX_GREENLETS) {
		b->too_many = 1;
		return 1;
	}
	b->addrs = xgrow(b->addrs, &b->alloc, b->n + 1, sizeof(*b->addrs));
	b->addrs[b->n++] = obj;
	return 0;
}

/* "2.0.2" -> 2 and 0; -1 when it is not a version. */
static int version_of(const char *v, int *major, int *minor)
{
	int part[2] = { 0, 0 }, i, digits;

	for (i = 0; i < 2; i++) {
		for (digits = 0; *v >= '0' && *v <= '9' && digits < 4;
		     v++, digits++)
			part[i] = part[i] * 10 + (*v - '0');
		if (!digits || (i == 0 && *v++ != '.'))
			return -1;
	}
	*major = part[0];
	*minor = part[1];
	return 0;
}

static const struct gl_layout *gl_layout_for(const char *version, int py_minor)
{
	int major, minor;
	size_t i;

	if (version_of(version, &major, &minor) < 0)
		return NULL;
	for (i = 0; i < sizeof(gl_layouts) / sizeof(gl_layouts[0]); i++)
		if (gl_layouts[i].greenlet_major == major &&
		    gl_layouts[i].greenlet_minor == minor &&
		    gl_layouts[i].py_minor == py_minor)
			return &gl_layouts[i];
	return NULL;
}

static int raw_read(struct py_greenlet_scan *b, uint64_t addr, struct gl_raw *r,
		    struct cs_err *err)
{
	const struct gl_layout *G = b->G;
	size_t size = (size_t)G->p_size;
	uint8_t buf[256];
	int ret;

	if (size > sizeof(buf))
		CS_BUG("greenlet layout of %zu bytes", size);
	memset(r, 0, sizeof(*r));
	ret = memsrc_read_u64(b->py->ms, addr + (uint64_t)G->pimpl, &r->p, err);
	if (ret < 0 || !r->p)
		return ret;
	ret = memsrc_read(b->py->ms, r->p, buf, size, err);
	if (ret < 0)
		return ret;
	r->stack_start = field_u64(buf, size, G->stack_start);
	r->stack_stop = field_u64(buf, size, G->stack_stop);
	r->stack_copy = field_u64(buf, size, G->stack_copy);
	r->stack_saved = field_u64(buf, size, G->stack_saved);
	r->top_frame = field_u64(buf, size, G->top_frame);
	r->cframe = field_u64(buf, size, G->cframe);
	r->current_frame = field_u64(buf, size, G->current_frame);
	r->self = field_u64(buf, size, G->self);
	/* Which of the two a P has depends on its kind (raw_is_main()). */
	r->main_greenlet = field_u64(buf, size, G->main_greenlet);
	r->thread_state = field_u64(buf, size, G->thread_state);
	r->run_callable = field_u64(buf, size, G->run_callable);
	r->parent = field_u64(buf, size, G->parent);
	return 0;
}

static int raw_is_main(const struct gl_raw *r)
{
	return r->stack_stop == UINT64_MAX;
}

/*
 * A word on a greenlet's C stack: the part that was spilled to the heap
 * when another greenlet needed the room is read from the copy.
 */
static int stack_word(struct pyproc *py, const struct gl_raw *r,
		      uint64_t addr, uint64_t *out, struct cs_err *err)
{
	if (r->stack_copy && r->stack_saved && addr >= r->stack_start &&
	    addr - r->stack_start < r->stack_saved &&
	    r->stack_saved - (addr - r->stack_start) >= 8)
		return memsrc_read_u64(py->ms, r->stack_copy +
				       (addr - r->stack_start), out, err);
	return memsrc_read_u64(py->ms, addr, out, err);
}

/*
 * The thread of a suspended greenlet: its saved cframe chain ends at
 * &tstate->root_cframe, inside exactly one thread state.
 */
static int tid_of_cframe(struct py_greenlet_scan *b, const struct gl_raw *r,
			 const struct py_snapshot *snap)
{
	const struct py_layout *L = &b->py->layout;
	uint64_t cf = r->cframe, prev;
	struct cs_err err;
	size_t i;
	int hops;

	if (b->G->cframe < 0 || b->G->cf_previous < 0)
		return 0;
	cs_err_init(&err);
	for (hops = 0; cf && hops < MAX_CFRAME_HOPS; hops++) {
		if (stack_word(b->py, r, cf + (uint64_t)b->G->cf_previous,
			       &prev, &err) < 0)
			return 0;
		if (!prev)
			break;
		cf = prev;
	}
	for (i = 0; cf && i < snap->nthreads; i++)
		if (cf >= snap->threads[i].tstate &&
		    cf - snap->threads[i].tstate < (uint64_t)L->ts_size)
			return snap->threads[i].tid;
	return 0;
}

/* The instance dict of a type with a fixed tp_dictoffset, or 0. */
static uint64_t fixed_dict(struct pyproc *py, uint64_t obj)
{
	const struct py_layout *L = &py->layout;
	uint64_t type, dict;
	int64_t off;
	struct cs_err err;

	cs_err_init(&err);
	if (pyobj_read_type(py, obj, &type, &err) < 0 ||
	    memsrc_read(py->ms, type + (uint64_t)L->tp_dictoffset, &off,
			sizeof(off), &err) < 0 ||
	    off <= 0 || off >= 4096 ||
	    memsrc_read_u64(py->ms, obj + (uint64_t)off, &dict, &err) < 0)
		return 0;
	return dict;
}

static char *str_dup(struct pyproc *py, uint64_t obj)
{
	const char *s;
	struct cs_err err;

	cs_err_init(&err);
	return obj && pystr_get(py, obj, &s, &err) == 0 ? xstrdup(s) : NULL;
}

/* gevent's Greenlet (gevent 22.10, Cython): name and spawn function. */
#define GEVENT_GREENLET_SIZE 144   /* tp_basicsize of the verified build */
#define GEVENT_IDENT 136           /* its _ident slot */

static void gevent_details(struct py_greenlet_scan *b, uint64_t addr,
			   struct py_greenlet *g)
{
	struct pyproc *py = b->py;
	uint64_t dict = fixed_dict(py, addr), v, type;
	struct cs_err err;
	int64_t basicsize, ident;
	const char *q;

	cs_err_init(&err);
	if (dict && pydict_get_str(py, dict, "name", &v, &err) == 0)
		g->name = str_dup(py, v);
	/* The default name comes from _ident, a C slot of the verified
	 * build; any other build keeps its greenlets unnamed. */
	if (!g->name && pyobj_read_type(py, addr, &type, &err) == 0 &&
	    memsrc_read(py->ms, type + (uint64_t)py->layout.tp_basicsize,
			&basicsize, sizeof(basicsize), &err) == 0 &&
	    basicsize == GEVENT_GREENLET_SIZE &&
	    memsrc_read_u64(py->ms, addr + GEVENT_IDENT, &v, &err) == 0 &&
	    pyobj_read_type(py, v, &type, &err) == 0 &&
	    type == py->types.int_ && pyint_read_i64(py, v, &ident, &err) == 0) {
		struct strbuf sb;

		strbuf_init(&sb);
		strbuf_addf(&sb, "Greenlet-%lld", (long long)ident);
		g->name = strbuf_detach(&sb);
	}
	if (dict && pydict_get_str(py, dict, "_run", &v, &err) == 0 &&
	    (q = py_function_qualname(py, v)))
		g->function = xstrdup(q);
}

/* The state greenlet's own fields imply: a running one is refined later
 * by the thread it runs on. */
static enum py_greenlet_state raw_state(const struct gl_raw *r, int is_main)
{
	if (!r->stack_stop)
		return PY_GREENLET_NOT_STARTED;
	if (is_main ? !r->thread_state : !r->stack_start)
		return PY_GREENLET_DEAD;
	if (!r->top_frame)
		return PY_GREENLET_RUNNING;
	return PY_GREENLET_SUSPENDED;
}

static int read_greenlet(struct py_greenlet_scan *b, uint64_t addr,
			 const struct py_stack_options *opt,
			 struct py_greenlet *g, struct gl_raw *r,
			 struct cs_err *err)
{
	struct pyproc *py = b->py;
	uint64_t type, start, fframe, ftype, cur;
	struct cs_err ferr;
	int ret;

	memset(g, 0, sizeof(*g));
	g->addr = addr;
	ret = raw_read(b, addr, r, err);
	if (ret < 0)
		return ret;
	if (!r->p)
		return 1;   /* being created or torn down: nothing to show */
	if (r->self != addr)
		return cs_fail(err, CS_ERR_UNSUPPORTED,
			       "greenlet 0x%llx does not point back at itself",
			       (unsigned long long)addr);
	if (pyobj_read_type(py, addr, &type, err) == 0)
		g->type_name = py_short_type_name(py_type_name_cached(py, type));
	g->is_main = raw_is_main(r);
	if (g->is_main) {
		g->main_greenlet = addr;
		if (r->thread_state) {
			ret = memsrc_read_u64(py->ms, r->thread_state +
					      (uint64_t)b->G->ts_main, &cur, err);
			if (ret < 0)
				return ret;
			if (cur != addr)
				return cs_fail(err, CS_ERR_UNSUPPORTED,
					       "main greenlet 0x%llx is not "
					       "its thread's",
					       (unsigned long long)addr);
		}
	} else {
		g->main_greenlet = r->main_greenlet;
		g->parent = r->parent;
	}
	g->state = raw_state(r, g->is_main);
	if (b->gevent_type && pyobj_read_type(py, addr, &type, err) == 0 &&
	    pytype_is_subtype(py, type, b->gevent_type))
		gevent_details(b, addr, g);
	if (!g->function && r->run_callable) {
		const char *q = py_function_qualname(py, r->run_callable);

		g->function = q ? xstrdup(q) : NULL;
	}
	if (g->state != PY_GREENLET_SUSPENDED)
		return 0;
	/* gr_frame semantics: the saved top frame is a live frame object,
	 * and from 3.11 its f_frame is the saved interpreter frame. */
	ret = pyobj_read_type(py, r->top_frame, &ftype, err);
	if (ret < 0)
		return ret;
	if (strcmp(py_type_name_cached(py, ftype), "frame"))
		return cs_fail(err, CS_ERR_UNSUPPORTED,
			       "greenlet 0x%llx: its saved frame is a '%s'",
			       (unsigned long long)addr,
			       py_type_name_cached(py, ftype));
	start = r->top_frame;
	if (py->layout.f_frame >= 0) {
		ret = memsrc_read_u64(py->ms, r->top_frame +
				      (uint64_t)py->layout.f_frame, &fframe, err);
		if (ret < 0)
			return ret;
		if (fframe != r->current_frame)
			return cs_fail(err, CS_ERR_UNSUPPORTED,
				       "greenlet 0x%llx: saved frames disagree",
				       (unsigned long long)addr);
		start = r->current_frame;
	}
	cs_err_init(&ferr);
	if (py_frames_walk(py, start, 1, opt, &g->frames, &g->nframes,
			   &ferr) < 0)
		g->truncated = 1;
	return 0;
}

/*
 * A started greenlet without a saved frame is running only if its
 * thread says so (ThreadState.current_greenlet); otherwise it is
 * suspended outside Python code.
 */
static void mark_running(struct py_greenlet_scan *b, struct py_greenlets *out,
			 const struct gl_raw *raws)
{
	struct addrmap current;
	struct cs_err err;
	size_t i;

	addrmap_init(&current);
	cs_err_init(&err);
	for (i = 0; i < out->n; i++) {
		uint64_t cur;

		if (out->v[i].is_main && raws[i].thread_state &&
		    memsrc_read_u64(b->py->ms, raws[i].thread_state +
				    (uint64_t)b->G->ts_current, &cur, &err) == 0 &&
		    cur)
			addrmap_add(&current, cur);
	}
	for (i = 0; i < out->n; i++) {
		int found;

		if (out->v[i].state != PY_GREENLET_RUNNING)
			continue;
		addrmap_get(&current, out->v[i].addr, &found);
		if (!found)
			out->v[i].state = PY_GREENLET_SUSPENDED;
	}
	addrmap_release(&current);
}

/* The index of the snapshot's thread tid, or -1. */
static long snap_index(const struct py_snapshot *snap, int tid)
{
	size_t i;

	for (i = 0; tid && i < snap->nthreads; i++)
		if (snap->threads[i].tid == tid)
			return (long)i;
	return -1;
}

/* The kernel thread id of the snapshot thread whose own namespace's id
 * is ns_tid (what the target's threading.get_native_id() said), or 0. */
static int snap_tid_of(const struct pyproc *py,
		       const struct py_snapshot *snap, int64_t ns_tid)
{
	const struct memsrc *ms = py->ms;
	size_t k;

	for (k = 0; k < ms->nthreads; k++)
		if (ms->threads[k].ns_tid == ns_tid)
			return snap_index(snap, ms->threads[k].tid) >= 0 ?
			       ms->threads[k].tid : 0;
	return 0;
}

/*
 * greenlet 2 keeps each thread's ThreadState in a C++ thread_local of its
 * extension module: the pointer is one of the two words of that module's
 * 16-byte TLS block (at +8 on Debian's build, after a flag).  A thread's
 * blocks are listed by its dtv: on x86-64 the TCB at fs_base holds the
 * dtv pointer at +8, dtv[-1] the number of entries, and entry i (16
 * bytes) starts with the block's address (-1 while not allocated).  So a
 * stopped thread (or a core's) says which ThreadState is its own, for
 * any CPython version and whatever its greenlets are doing.
 */
#define TLS_TCB_DTV 8
#define TLS_DTV_ENTRY 16
#define TLS_MAX_MODULES 1024
#define TLS_AMBIGUOUS ((void *)(uintptr_t)1)

/* Every word of the first 16 bytes of every TLS block of every thread
 * whose TLS base is known -> its tid + 2 (TLS_AMBIGUOUS when two threads
 * hold it). */
static void index_tls_words(struct pyproc *py, const struct py_snapshot *snap,
			    struct addrmap *words)
{
	const struct memsrc *ms = py->ms;
	size_t k;

	for (k = 0; k < ms->nthreads; k++) {
		const struct cs_thread *th = &ms->threads[k];
		uint64_t dtv, n, i;
		struct cs_err err;

		cs_err_init(&err);
		if (!th->has_fs_base || snap_index(snap, th->tid) < 0 ||
		    memsrc_read_u64(py->ms, th->fs_base + TLS_TCB_DTV, &dtv,
				    &err) < 0 || !dtv ||
		    memsrc_read_u64(py->ms, dtv - TLS_DTV_ENTRY, &n, &err) < 0)
			continue;
		for (i = 1; i <= n && i <= TLS_MAX_MODULES; i++) {
			uint64_t block, word;
			uint8_t w[16];
			int j;

			if (memsrc_read_u64(py->ms, dtv + i * TLS_DTV_ENTRY, &block,
					    &err) < 0)
				break;
			if (!block || block == UINT64_MAX ||
			    memsrc_read(py->ms, block, w, sizeof(w), &err) < 0)
				continue;
			for (j = 0; j < 2; j++) {
				void *mine = (void *)(uintptr_t)(th->tid + 2), *had;
				int found;

				word = le_u64(w + 8 * j);
				if (word < 4096)
					continue;   /* flags and counts */
				had = addrmap_get(words, word, &found);
				addrmap_put(words, word, found && had != mine ?
					    TLS_AMBIGUOUS : mine);
			}
		}
	}
}

/* Each main greenlet whose thread state a thread's TLS holds: its tid. */
static void threads_by_tls(struct py_greenlet_scan *b, struct py_greenlets *out,
			   const struct gl_raw *raws,
			   const struct py_snapshot *snap, struct addrmap *tids)
{
	struct addrmap words;
	size_t i;
	int indexed = 0;

	addrmap_init(&words);
	for (i = 0; i < out->n; i++) {
		uintptr_t k;

		if (!out->v[i].is_main || !raws[i].thread_state ||
		    addrmap_get(tids, out->v[i].addr, NULL))
			continue;
		if (!indexed++)
			index_tls_words(b->py, snap, &words);
		k = (uintptr_t)addrmap_get(&words, raws[i].thread_state, NULL);
		if (k >= 2)
			addrmap_put(tids, out->v[i].addr,
				    (void *)(uintptr_t)(k - 1));
	}
	addrmap_release(&words);
}

/*
 * gevent's monkey-patching makes threading's idents greenlet ids, so
 * threading._active is keyed by id() of a greenlet: a real thread's
 * main greenlet (its _MainThread or _DummyThread, whose _native_id is
 * the OS thread's) or the greenlet a patched Thread runs as.  stacks.c
 * looked the thread up by its pthread ident and found nothing; from
 * here a main greenlet gets its thread (when nothing else placed it),
 * that thread its name, and a patched Thread's greenlet its name.  The
 * dict is walked once: a busy server has thousands of greenlets.
 */
static void patched_threading(struct py_greenlet_scan *b,
			      struct py_greenlets *out,
			      struct py_snapshot *snap, struct addrmap *tids)
{
	struct pyproc *py = b->py;
	uint64_t active = py_module_attr(py, "threading", "_active");
	struct addrmap ids;
	size_t i;

	addrmap_init(&ids);
	if (active)
		(void)pydict_int_index(py, active, &ids, NULL);
	for (i = 0; active && i < out->n; i++) {
		struct py_greenlet *g = &out->v[i];
		uint64_t thread, v;
		const char *name = NULL;
		struct cs_err err;
		int64_t native;
		long t;
		int tid = 0;

		cs_err_init(&err);
		thread = (uintptr_t)addrmap_get(&ids, g->addr, NULL);
		if (g->state == PY_GREENLET_DEAD || !thread)
			continue;
		if (pyobj_get_attr(py, thread, "_name", &v, &err) != 0 ||
		    pystr_get(py, v, &name, &err) != 0)
			name = NULL;
		if (!g->is_main) {
			if (!g->name && name)
				g->name = xstrdup(name);
			continue;
		}
		tid = (int)((uintptr_t)addrmap_get(tids, g->addr, NULL));
		tid = tid ? tid - 1 : 0;
		if (!tid && pyobj_get_attr(py, thread, "_native_id", &v,
					   &err) == 0 &&
		    pyobj_int_i64(py, v, &native, &err) == 0 &&
		    (tid = snap_tid_of(py, snap, native)))
			addrmap_put(tids, g->addr, (void *)(uintptr_t)(tid + 1));
		t = snap_index(snap, tid);
		if (t >= 0 && !snap->threads[t].name && name)
			snap->threads[t].name = xstrdup(name);
	}
	addrmap_release(&ids);
}

/* Thread of each greenlet: by main greenlet (NO_THREAD: a dead one's) */
#define NO_THREAD UINTPTR_MAX
static void assign_threads(struct py_greenlet_scan *b, struct py_greenlets *out,
			   struct gl_raw *raws, struct py_snapshot *snap)
{
	struct addrmap tids;     /* main greenlet -> tid + 1 */
	size_t i;

	addrmap_init(&tids);
	for (i = 0; i < out->n; i++) {
		struct py_greenlet *g = &out->v[i];
		int tid, found;

		if (g->is_main && g->state == PY_GREENLET_DEAD)  /* orphans */
			addrmap_put(&tids, g->addr, (void *)NO_THREAD);
		if (g->state != PY_GREENLET_SUSPENDED || !g->main_greenlet)
			continue;
		addrmap_get(&tids, g->main_greenlet, &found);
		if (found)
			continue;
		tid = tid_of_cframe(b, &raws[i], snap);
		if (tid)
			addrmap_put(&tids, g->main_greenlet,
				    (void *)(uintptr_t)(tid + 1));
	}
	threads_by_tls(b, out, raws, snap, &tids);
	patched_threading(b, out, snap, &tids);
	for (i = 0; i < out->n; i++) {
		struct py_greenlet *g = &out->v[i];
		uintptr_t k = g->main_greenlet ?
			(uintptr_t)addrmap_get(&tids, g->main_greenlet, NULL) : 0;

		if (k && k != NO_THREAD)
			g->tid = (int)(k - 1);
		else if (!k && snap->nthreads == 1 && g->main_greenlet &&
			 g->state != PY_GREENLET_DEAD)
			g->tid = snap->threads[0].tid;  /* only one there is */
	}
	addrmap_release(&tids);
}

static void greenlet_release(struct py_greenlet *g)
{
	free(g->name);
	free(g->function);
	py_frames_free(g->frames, g->nframes);
}

int py_greenlets_prepare(struct pyproc *py, struct py_greenlet_scan *b,
			 struct py_gc_visit *v, struct cs_err *err)
{
	uint64_t ver;
	const char *vs = NULL;
	struct cs_err verr;

	memset(b, 0, sizeof(*b));
	addrmap_init(&b->types);
	b->py = py;
	b->gl_type = py_module_attr(py, "greenlet", "greenlet");
	if (!b->gl_type)
		return 0;
	ver = py_module_attr(py, "greenlet", "__version__");
	cs_err_init(&verr);
	if (!ver || pystr_get(py, ver, &vs, &verr) < 0)
		vs = "?";
	snprintf(b->version, sizeof(b->version), "%s", vs);
	b->G = gl_layout_for(b->version, py->minor);
	if (!b->G)
		return cs_fail(err, CS_ERR_UNSUPPORTED,
			       "greenlet %s on Python %d.%d is not understood "
			       "(verified: greenlet 2.0 on 3.8 - 3.11, "
			       "3.0 on 3.12, 3.1 on 3.12 - 3.13)",
			       b->version, py->major, py->minor);
	b->gevent_type = py_module_attr(py, "gevent._gevent_cgreenlet",
					"Greenlet");
	if (!b->gevent_type)
		b->gevent_type = py_module_attr(py, "gevent.greenlet", "Greenlet");
	v->fn = visit;
	v->data = b;
	return 1;
}

void py_greenlet_scan_release(struct py_greenlet_scan *b)
{
	addrmap_release(&b->types);
	free(b->addrs);
	memset(b, 0, sizeof(*b));
}

/* A user greenlet's main greenlet must be one we found. */
static int check_mains(const struct py_greenlets *out, struct cs_err *err)
{
	struct addrmap mains;
	size_t i;
	int ret = 0;

	addrmap_init(&mains);
	for (i = 0; i < out->n; i++)
		if (out->v[i].is_main)
			addrmap_add(&mains, out->v[i].addr);
	for (i = 0; i < out->n && ret == 0; i++) {
		int found = 1;

		if (!out->v[i].is_main && out->v[i].main_greenlet)
			addrmap_get(&mains, out->v[i].main_greenlet, &found);
		if (!found)
			ret = cs_fail(err, CS_ERR_UNSUPPORTED,
				      "greenlet 0x%llx: its main greenlet "
				      "is not a main greenlet",
				      (unsigned long long)out->v[i].addr);
	}
	addrmap_release(&mains);
	return ret;
}

int py_greenlets_finish(struct py_greenlet_scan *b,
			struct py_snapshot *snap,
			const struct py_stack_options *opt,
			struct py_greenlets *out, struct cs_err *err)
{
	struct gl_raw *raws;
	size_t i;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (!b->G)
		return 0;
	if (b->too_many)
		return cs_fail(err, CS_ERR_MEMORY, "more than %u greenlets",
			       PY_MAX_GREENLETS);
	snprintf(out->version, sizeof(out->version), "%s", b->version);
	out->v = xcalloc(b->n ? b->n : 1, sizeof(*out->v));
	raws = xcalloc(b->n ? b->n : 1, sizeof(*raws));
	for (i = 0; i < b->n && ret == 0; i++) {
		ret = read_greenlet(b, b->addrs[i], opt, &out->v[out->n],
				    &raws[out->n], err);
		if (ret == 0)
			out->n++;
		else if (ret > 0)
			ret = 0;
		else
			greenlet_release(&out->v[out->n]);
	}
	if (ret == 0 && (ret = check_mains(out, err)) == 0) {
		mark_running(b, out, raws);
		assign_threads(b, out, raws, snap);
		py_greenlets_read_io(b->py, out);
	}
	free(raws);
	if (ret < 0)
		py_greenlets_release(out);
	return ret;
}

int py_greenlets_take(struct pyproc *py, struct py_snapshot *snap,
		      const struct py_stack_options *opt,
		      struct py_greenlets *out, struct cs_err *err)
{
	struct py_greenlet_scan s;
	struct py_gc_visit v;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = py_greenlets_prepare(py, &s, &v, err);
	if (ret > 0)
		ret = py_gc_walk_each(py, &v, 1, err);
	if (ret == 0)
		ret = py_greenlets_finish(&s, snap, opt, out, err);
	py_greenlet_scan_release(&s);
	return ret;
}

void py_greenlets_release(struct py_greenlets *g)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		greenlet_release(&g->v[i]);
	free(g->v);
	memset(g, 0, sizeof(*g));
}
