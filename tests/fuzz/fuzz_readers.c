/*
 * libFuzzer harness for every reader of target memory: the input is a
 * memory image mapped at a fixed address, read as a CPython of the
 * version the first byte picks.  Interpreter and thread lists, frames,
 * code objects, line tables, strings, ints, containers, dicts,
 * generators, the GC lists, the task machinery (failed tasks'
 * exceptions and tracebacks too), greenlets and trio tasks,
 * multiprocessing's SemLocks,
 * the wait-for graph with the primitives of every kind and family and
 * the frames' open `with` blocks all parse it; none may crash, hang or
 * leak whatever the bytes say.
 *
 * Build: see the Makefile's fuzz target (clang -fsanitize=fuzzer,...).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attach/memsrc.h"
#include "common/strbuf.h"
#include "readers/gens.h"
#include "readers/greenlets.h"
#include "readers/loop_turns.h"
#include "readers/objects.h"
#include "readers/primitives.h"
#include "readers/pyproc.h"
#include "readers/repr.h"
#include "readers/semlocks.h"
#include "readers/stacks.h"
#include "readers/tasks.h"
#include "readers/trio.h"
#include "readers/waitgraph.h"
#include "readers/withblocks.h"
#include "tests/support/image_memsrc.h"

#define BASE IMAGE_BASE

static void fuzz_group(struct pyproc *py, uint64_t exc)
{
	struct py_failed_task t;
	struct arena pool;

	memset(&t, 0, sizeof(t));
	arena_init(&pool);
	py_exc_group_leaves(py, exc, &pool, &t);
	arena_release(&pool);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An address inside the image picked by 4 input bytes. */
static uint64_t pick(const uint8_t *data, size_t size, size_t at)
{
	uint32_t v;

	if (at + 4 > size)
		return BASE;
	memcpy(&v, data + at, 4);
	return BASE + (v % size & ~(uint64_t)7);
}

/* multiprocessing's locks (readers/semlocks.h), as if the heap walk had
 * found the object the input picks, of whatever class it is. */
static void fuzz_semlocks(struct pyproc *py, struct py_async *a,
			  const uint8_t *data, size_t size)
{
	struct py_semlock_scan s;
	struct cs_err err;
	uint64_t obj = pick(data, size, 53), type;

	memset(&s, 0, sizeof(s));
	cs_err_init(&err);
	if (pyobj_read_type(py, obj, &type, &err) < 0)
		return;
	s.types[0] = type;
	s.names[0] = "multiprocessing.Lock";
	s.owned[0] = 1;
	s.ntypes = 1;
	s.found = xmallocarray(1, sizeof(*s.found));
	s.found[0] = obj;
	s.n = s.alloc = 1;
	py_semlocks_finish(py, &s, a);
	py_semlocks_scan_release(&s);
}

/* The graph over what the image gave; then a primitive of each kind and
 * family (its classes in the image: the input decides what is one) and
 * the open `with` blocks of the threads' frames. */
static void fuzz_graph(struct pyproc *py, const struct py_snapshot *snap,
		       const struct py_async *a, const uint8_t *data,
		       size_t size)
{
	struct py_waitgraph g;
	struct py_prim_types t;
	struct py_with_blocks wb;
	struct py_prim p;
	struct cs_err err;
	uint64_t futs[300];
	struct py_gevent_waiter gw[64];
	size_t i, k;

	struct py_greenlet gr;
	struct py_greenlets gl = { &gr, 1, "" };

	/* one parked greenlet, at an address the input picks, suspended in
	 * the first thread's frames */
	memset(&gr, 0, sizeof(gr));
	gr.addr = pick(data, size, 45);
	gr.state = PY_GREENLET_SUSPENDED;
	if (snap->nthreads) {
		gr.frames = snap->threads[0].frames;
		gr.nframes = snap->threads[0].nframes;
	}
	/* the socket its frames may say it waits on (gevent's) */
	py_greenlets_read_io(py, &gl);
	cs_err_init(&err);
	memset(&g, 0, sizeof(g));
	if (py_waitgraph_build(py, snap, a, &gl, &g, &err) == 0)
		py_waitgraph_release(&g);
	memset(&t, 0, sizeof(t));
	for (i = 0; i < sizeof(t.type) / sizeof(t.type[0]); i++) {
		t.type[i] = BASE + 0x200 + 0x10 * (uint64_t)i;
		t.kind[i] = (enum py_prim_kind)(i % (PY_PRIM_STREAM + 1));
		t.family[i] = (enum py_prim_family)(i % (PY_PRIM_AIOHTTP + 1));
		t.name[i] = "fuzzed";
		/* a JoinableQueue's _cond is checked against gevent's Event
		 * by name */
		if (t.family[i] == PY_PRIM_GEVENT && t.kind[i] == PY_PRIM_EVENT)
			t.name[i] = "gevent.event.Event";
		if (t.family[i] == PY_PRIM_GEVENT && t.kind[i] == PY_PRIM_QUEUE)
			t.gevent_joinable = t.type[i];
	}
	t.n = i;
	t.c_future = BASE + 0x180;
	t.deque = BASE + 0x1c0;
	t.gevent = py_prim_gevent_row(0);
	t.gevent_waiter = BASE + 0x1e0;
	t.gevent_greenlet = BASE + 0x1f0;
	t.gevent_multiwaiter = BASE + 0x200;
	/* a Channel only as a subclass the fuzzed MRO names */
	t.gevent_channel = BASE + 0x210;
	/* aiohttp's: what holds a connection, anywhere */
	t.aiohttp_request_cm = BASE + 0x220;
	t.aiohttp_response = BASE + 0x230;
	t.aiohttp_connection = BASE + 0x240;
	{
		uint64_t key, conn = py_aiohttp_connector_of(
			py, &t, pick(data, size, 31), &key);

		if (conn && py_prim_read(py, &t, conn, &p))
			(void)py_aiohttp_key_blocks(py, &t, &p, key);
	}
	for (i = 0; i < 4; i++)
		if (py_prim_read(py, &t, pick(data, size, 13 + 4 * i), &p)) {
			py_prim_waiter_futures(py, &t, &p, futs,
					       sizeof(futs) / sizeof(futs[0]));
			py_prim_waiter_greenlets(py, &t, &p, gw,
						 sizeof(gw) / sizeof(gw[0]));
			py_gevent_joiners(py, &t, p.addr, gw,
					  sizeof(gw) / sizeof(gw[0]));
		}
	/* a deque anywhere: its chain of blocks followed */
	cs_err_init(&err);
	pydeque_items(py, pick(data, size, 29), futs,
		      sizeof(futs) / sizeof(futs[0]), &k, &err);
	/* a SimpleQueue anywhere: its list and position (3.7 - 3.12) or
	 * its ring (3.13+) */
	cs_err_init(&err);
	pysimplequeue_items(py, pick(data, size, 30), futs,
			    sizeof(futs) / sizeof(futs[0]), &k, &err);
	for (i = 0; i < snap->nthreads && i < 4; i++)
		for (k = 0; k < snap->threads[i].nframes && k < 8; k++) {
			cs_err_init(&err);
			py_with_blocks_read(py, &snap->threads[i].frames[k],
					    k == 0, &wb, &err);
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int minors[] = { 6, 7, 8, 9, 10, 11, 12, 13, 14 };
	const struct py_layout *layout;
	struct py_stack_options opt = { .locals = 1 };
	struct image im = { data, size };
	struct py_snapshot snap;
	struct py_async async;
	struct py_greenlets greenlets;
	struct pyproc py;
	struct memsrc *ms;
	struct cs_err err;
	struct strbuf sb;
	struct py_gen gen;
	struct py_exc_sites sites;
	struct py_frame *frames = NULL;
	size_t nframes = 0;
	uint64_t *types;
	int i;

	if (size < 64)
		return 0;
	/* One input in eight reads as free-threaded 3.14t: the mimalloc
	 * heap walk instead of the GC lists. */
	layout = data[0] >= 0xe0 ? py_layout_for(3, 14, 1) :
		 py_layout_for(3, minors[data[0] % 9], 0);
	if (!layout)
		return 0;
	cs_err_init(&err);
	ms = calloc(1, sizeof(*ms));
	if (!ms)
		return 0;
	memsrc_init(ms, &image_ops, &im);
	memset(&py, 0, sizeof(py));
	py.ms = ms;
	py.layout = *layout;
	addrmap_init(&py.codes);
	addrmap_init(&py.strs);
	addrmap_init(&py.typenames);
	py.major = 3;
	py.minor = layout->minor;
	/* The runtime and every type object sit at the image's start, so the
	 * input decides what matches them. */
	py.runtime = layout->rt_interpreters_head >= 0 ? BASE : 0;
	py.interp_head_var = py.runtime ? 0 : BASE;
	types = (uint64_t *)&py.types;
	for (i = 0; i < (int)(sizeof(py.types) / sizeof(uint64_t)); i++)
		types[i] = BASE + 0x40 + 0x10 * (uint64_t)i;

	strbuf_init(&sb);
	pyrepr(&py, pick(data, size, 1), &sb);
	/* (a failed task's exception and its traceback) */
	pyrepr_exception(&py, pick(data, size, 13), &sb);
	strbuf_release(&sb);
	py_exception_sites(&py, pick(data, size, 17), &sites);
	/* (and the exceptions in it, were it a group) */
	fuzz_group(&py, pick(data, size, 17));
	if (py_gen_read(&py, pick(data, size, 5), PY_CODE_COROUTINE, &opt, &gen,
			&err) == 0)
		py_gen_release(&gen);
	cs_err_init(&err);
	py_frames_walk(&py, pick(data, size, 9), 1, &opt, &frames, &nframes,
		       &err);
	py_frames_free(frames, nframes);
	cs_err_init(&err);
	if (py_snapshot_take(&py, &opt, &snap, &err) == 0) {
		cs_err_init(&err);
		if (py_async_take(&py, &snap, &opt, &async, &err) == 0) {
			cs_err_init(&err);
			py_trio_take(&py, &snap, &async, &err);
			/* objects whose deques of futures the graph reads
			 * (the heap walk's waitables) */
			async.waitables = xcalloc(3, sizeof(*async.waitables));
			async.waitables[0].addr = pick(data, size, 33);
			async.waitables[0].kind = data[41] % (PY_PRIM_CFUTURE + 1);
			async.waitables[1].addr = pick(data, size, 37);
			async.waitables[1].kind = PY_PRIM_LOCK;
			async.waitables[2].addr = pick(data, size, 49);
			async.waitables[2].kind = PY_PRIM_RLOCK;
			async.nwaitables = 3;
			fuzz_graph(&py, &snap, &async, data, size);
			/* (each task's loop's ready queue, and an address
			 * of the input's as a loop) */
			for (i = 0; (size_t)i < async.ntasks && i < 8; i++)
				(void)py_loop_turn_mark(&py,
							async.tasks[i].loop);
			(void)py_loop_turn_mark(&py, pick(data, size, 21));
			fuzz_semlocks(&py, &async, data, size);
			py_async_release(&async);
		}
		cs_err_init(&err);
		if (py_greenlets_take(&py, &snap, &opt, &greenlets, &err) == 0)
			py_greenlets_release(&greenlets);
		py_snapshot_release(&snap);
	}
	pyproc_forget_objects(&py);
	memsrc_free(ms);
	return 0;
}
