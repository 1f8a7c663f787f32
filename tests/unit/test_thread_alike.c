/* cli/thread_alike.c: which threads the text report shows once. */
#include "cli/thread_alike.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check.h"

#define NFRAMES 3
#define MANY 3000

/* Two code objects stand for any: only their addresses are compared. */
static struct py_code code_a, code_b;

/* Kernel ids for the threads set up: each its own, as in a process. */
static int next_tid = 100;

static void set_stack(struct py_thread *t, struct py_frame *frames, int line)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	t->tid = next_tid++;
	t->interp = 0x1000;
	t->frames = frames;
	t->nframes = NFRAMES;
	for (i = 0; i < NFRAMES; i++) {
		memset(&frames[i], 0, sizeof(frames[i]));
		frames[i].code = &code_a;
		frames[i].line = line + (int)i;
	}
}

/* Thread 0 and each thread that differs from it in one way; then a copy
 * of thread 0 and a copy of thread 1. */
static void test_each_difference(void)
{
	enum { N = 10 };
	struct py_frame frames[N][NFRAMES];
	struct py_thread th[N];
	struct py_snapshot snap = { th, N, 1 };
	size_t first[N], next[N], count[N], i;

	for (i = 0; i < N; i++)
		set_stack(&th[i], frames[i], 10);
	frames[1][2].line = 99;        /* another line */
	frames[2][0].code = &code_b;   /* another code object */
	th[3].interp = 0x2000;         /* another interpreter */
	th[4].truncated = 1;           /* older frames unread */
	th[5].omitted = 7;             /* frames left out */
	th[5].omitted_at = 1;
	th[6].holds_gil = 1;           /* holds the GIL */
	th[7].nframes = NFRAMES - 1;   /* a frame fewer */
	/* th[8]: alike 0; th[9]: alike 1 */
	frames[9][2].line = 99;
	th[8].name = "other";          /* names do not matter */
	thread_alike(&snap, NULL, NULL, first, next, count);
	for (i = 0; i < 8; i++)
		CHECK(first[i] == i, "thread %zu alike thread %zu", i, first[i]);
	CHECK(first[8] == 0 && first[9] == 1, "copies: first %zu and %zu",
	      first[8], first[9]);
	CHECK(count[0] == 2 && count[1] == 2, "counts %zu and %zu", count[0],
	      count[1]);
	CHECK(next[0] == 8 && next[8] == THREAD_ALIKE_END && next[1] == 9 &&
	      next[2] == THREAD_ALIKE_END, "links: %zu %zu %zu %zu", next[0],
	      next[8], next[1], next[2]);
	/* A thread whose kernel id is unknown stays apart. */
	th[8].tid = 0;
	thread_alike(&snap, NULL, NULL, first, next, count);
	CHECK(first[8] == 8 && count[0] == 1 && next[0] == THREAD_ALIKE_END,
	      "unknown tid: first %zu, count %zu", first[8], count[0]);
	for (i = 2; i < 8; i++)
		CHECK(count[i] == 1, "thread %zu counted %zu", i, count[i]);
	/* So does one set apart (a thread left running, whose mark its
	 * own entry shows). */
	{
		unsigned char apart[N] = { 0 };

		apart[9] = 1;
		thread_alike(&snap, NULL, apart, first, next, count);
		CHECK(first[9] == 9 && count[1] == 1 &&
		      next[1] == THREAD_ALIKE_END,
		      "apart: first %zu, count %zu", first[9], count[1]);
	}
}

/* Thousands of threads in a few groups, interleaved: each finds its
 * group, and the counts add up. */
static void test_many(void)
{
	struct py_frame (*frames)[NFRAMES] = calloc(MANY, sizeof(*frames));
	struct py_thread *th = calloc(MANY, sizeof(*th));
	size_t *first = calloc(MANY, sizeof(*first));
	size_t *count = calloc(MANY, sizeof(*count));
	size_t *next = calloc(MANY, sizeof(*next));
	struct py_snapshot snap = { th, MANY, 1 };
	size_t i, k, wrong = 0, total = 0, linked = 0;

	if (!frames || !th || !first || !count || !next)
		return;
	for (i = 0; i < MANY; i++)
		set_stack(&th[i], frames[i], (int)(i % 7) * 100);
	thread_alike(&snap, NULL, NULL, first, next, count);
	for (i = 0; i < MANY; i++) {
		wrong += first[i] != i % 7;
		if (first[i] == i)
			total += count[i];
	}
	/* Each group's links: its members in order, bounded by MANY. */
	for (i = 0; i < 7; i++)
		for (k = i; k != THREAD_ALIKE_END && linked <= MANY; k = next[k])
			linked += first[k] == i &&
				  (next[k] == THREAD_ALIKE_END || next[k] == k + 7);
	CHECK(linked == MANY, "%zu of %d threads linked in order", linked,
	      MANY);
	CHECK(wrong == 0 && total == MANY, "%zu threads in the wrong group, "
	      "%zu counted of %d", wrong, total, MANY);
	CHECK(count[0] == (MANY + 6) / 7, "group 0: %zu", count[0]);
	free(frames);
	free(th);
	free(first);
	free(count);
	free(next);
}

/* No threads, one thread, no frames at all. */
static void test_edges(void)
{
	struct py_thread th[3];
	struct py_snapshot snap = { th, 0, 0 };
	size_t first[3] = { 9, 9, 9 }, next[3], count[3] = { 9, 9, 9 };

	thread_alike(&snap, NULL, NULL, first, next, count);
	CHECK(first[0] == 9, "nothing written for no threads");
	memset(th, 0, sizeof(th));
	snap.nthreads = 3;
	th[0].tid = 1;
	th[1].tid = 2;
	th[2].tid = 3;
	th[2].truncated = 1;
	thread_alike(&snap, NULL, NULL, first, next, count);
	CHECK(first[0] == 0 && first[1] == 0 && first[2] == 2 &&
	      count[0] == 2 && count[2] == 1,
	      "frameless threads: first %zu %zu %zu, count %zu %zu",
	      first[0], first[1], first[2], count[0], count[2]);
}

/* A C frame named as the symbolizer names it. */
static void set_native(struct native_frame *f, uint64_t pc,
		       const char *function, const char *file, int line)
{
	memset(f, 0, sizeof(*f));
	f->pc = pc;
	f->sym.function = function;
	f->sym.file = file;
	f->sym.line = line;
	f->sym.library = "/usr/lib/libpython3.14.so";
	f->sym.offset = pc - 0x1000;
}

/*
 * With native stacks, threads are alike when their C frames show the
 * same: a futex wait under the eval loop, which the report hides (its
 * pc differs as each thread's bytecode called from its own place) unless
 * every C frame is shown, when its line shows.
 */
static void test_native(void)
{
	enum { N = 5, NF = 3 };
	struct py_frame frames[N][NFRAMES];
	struct native_frame nframes[N][NF];
	struct native_thread nts[N];
	struct py_thread th[N];
	struct py_snapshot snap = { th, N, 1 };
	struct native_stacks stacks = { nts, N, NULL, NULL };
	struct thread_alike_native nat = { &stacks, NULL, 0 };
	size_t first[N], next[N], count[N], i;

	for (i = 0; i < N; i++) {
		set_stack(&th[i], frames[i], 10);
		th[i].nframes = 1;
		frames[i][0].entry = 1;
		memset(&nts[i], 0, sizeof(nts[i]));
		nts[i].tid = th[i].tid;
		nts[i].frames = nframes[i];
		nts[i].nframes = NF;
		nts[i].has_regs = 1;
		set_native(&nframes[i][0], 0x5000, "futex_wait", "futex.c", 10);
		set_native(&nframes[i][1], 0x7000 + i * 0x10,
			   "_PyEval_EvalFrameDefault", "ceval.c", 100);
		set_native(&nframes[i][2], 0x9000, "start_thread", "thread.c",
			   40);
	}
	nframes[2][1].sym.line = 200;          /* shows with --native-all */
	nframes[3][0].sym.function = "sleep";  /* another wait */
	nts[4].tid = 999;                      /* no C stack for thread 4 */
	thread_alike(&snap, &nat, NULL, first, next, count);
	CHECK(first[1] == 0 && first[2] == 0 && count[0] == 3,
	      "eval loop pcs hidden: first %zu %zu, count %zu", first[1],
	      first[2], count[0]);
	CHECK(first[3] == 3 && first[4] == 4,
	      "another C frame, no C stack: first %zu %zu", first[3],
	      first[4]);
	nat.all = 1;
	thread_alike(&snap, &nat, NULL, first, next, count);
	CHECK(first[1] == 0 && first[2] == 2 && count[0] == 2,
	      "every C frame shown: first %zu %zu, count %zu", first[1],
	      first[2], count[0]);
	nframes[1][1].sym.file = NULL;        /* named by offset: its pc */
	nframes[0][1].sym.file = NULL;
	thread_alike(&snap, &nat, NULL, first, next, count);
	CHECK(first[1] == 1, "offsets shown differ: first %zu", first[1]);
}

/*
 * Threads with no Python thread state, by their C stacks alone: alike
 * when those show the same, with the same marks; one that has a Python
 * thread state (shown with it) or no known kernel id stays apart.
 */
static void test_native_only(void)
{
	enum { N = 7, NF = 2 };
	struct native_frame nframes[N][NF];
	struct native_thread nts[N];
	struct native_stacks stacks = { nts, N, NULL, NULL };
	struct thread_alike_native nat = { &stacks, NULL, 0 };
	unsigned char has_py[N] = { 0, 0, 0, 0, 1, 0, 0 };
	size_t first[N], next[N], count[N], i;

	for (i = 0; i < N; i++) {
		memset(&nts[i], 0, sizeof(nts[i]));
		nts[i].tid = 200 + (int)i;
		nts[i].frames = nframes[i];
		nts[i].nframes = NF;
		nts[i].has_regs = 1;
		set_native(&nframes[i][0], 0x5000, "pause", "pause.c", 29);
		set_native(&nframes[i][1], 0x9000, "start_thread", "thread.c",
			   40);
	}
	nframes[3][0].sym.function = "nanosleep";  /* another wait */
	nts[5].tid = 0;                             /* unknown id */
	nts[6].has_regs = 0;                        /* not stopped */
	thread_alike_native_only(&nat, has_py, first, next, count);
	CHECK(first[1] == 0 && first[2] == 0 && count[0] == 3 &&
	      next[0] == 1 && next[1] == 2 && next[2] == THREAD_ALIKE_END,
	      "pause() threads: first %zu %zu, count %zu, next %zu %zu %zu",
	      first[1], first[2], count[0], next[0], next[1], next[2]);
	for (i = 3; i < N; i++)
		CHECK(first[i] == i && count[i] == 1,
		      "thread %zu grouped with %zu", i, first[i]);
}

/* The index by kernel id finds what a scan finds: the first of a tid
 * named twice, none for a tid not there, none in no threads. */
static void test_find_by_tid(void)
{
	enum { N = 6 };
	static const int tids[N] = { 50, 7, 300, 7, 0, 120 };
	struct native_thread nts[N];
	struct native_stacks stacks = { nts, N, NULL, NULL };
	struct native_stacks none = { nts, 0, NULL, NULL };
	const struct native_thread *want[401];
	size_t i, differ = 0;
	int tid;

	memset(nts, 0, sizeof(nts));
	for (i = 0; i < N; i++)
		nts[i].tid = tids[i];
	for (tid = -1; tid < 400; tid++)
		want[tid + 1] = native_stacks_find(&stacks, tid);
	CHECK(want[7 + 1] == &nts[1] && want[0 + 1] == &nts[4] &&
	      want[8 + 1] == NULL, "the scan");
	native_stacks_index(&stacks);
	for (tid = -1; tid < 400; tid++)
		differ += native_stacks_find(&stacks, tid) != want[tid + 1];
	CHECK(differ == 0, "%zu tids found otherwise than by a scan", differ);
	CHECK(native_stacks_find(&stacks, 7) == &nts[1] &&
	      native_stacks_find(&stacks, 300) == &nts[2] &&
	      native_stacks_find(&stacks, INT_MAX) == NULL,
	      "indexed lookups");
	native_stacks_index(&none);
	CHECK(native_stacks_find(&none, 0) == NULL &&
	      native_stacks_find(&none, 7) == NULL, "no threads");
	free(stacks.by_tid);
	free(none.by_tid);
}

int main(void)
{
	test_each_difference();
	test_many();
	test_edges();
	test_native();
	test_native_only();
	test_find_by_tid();
	return CHECK_DONE("test_thread_alike");
}
