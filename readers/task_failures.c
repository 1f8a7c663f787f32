/*
 * Tasks that ended by raising, still referenced, and executors' and
 * multiprocessing pools' jobs that did: what they raised and where, from the exception object and
 * its traceback.  The failure a hung program most often hides: a
 * producer raised, the consumer waits on its queue for ever, and the
 * loop logs "Task exception was never retrieved" only when the task is
 * freed; a job's Future logs nothing ever.
 */
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/util.h"
#include "readers/code.h"
#include "readers/dicts.h"
#include "readers/fields.h"
#include "readers/objects.h"
#include "readers/remote_tb.h"
#include "readers/repr.h"
#include "readers/tasks_internal.h"
#include "readers/usercode.h"
#include "common/banned.h"

/* Traceback entries followed at most: one per frame the exception
 * passed through, twenty times the default recursion limit (one
 * deeper is said to be cut, not read wrong). */
#define MAX_TB_WALK 20000

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

/* The frame of an executor's or a multiprocessing pool's worker that
 * calls a job's function (concurrent.futures' _WorkItem.run(), pool.py's
 * worker()): the next entry of a job's traceback is the job's. */
static int job_worker(const struct py_code *code)
{
	return py_code_is(code, "concurrent/futures/thread.py", "run") ||
	       py_code_is(code, "multiprocessing/pool.py", "worker");
}

/* A frame of an executor's or a multiprocessing pool's own. */
static int job_machinery(const struct py_code *code)
{
	return strstr(code->filename, "/concurrent/futures/") ||
	       strstr(code->filename, "/multiprocessing/");
}

/* The call that hands a job's exception to its caller by raising it:
 * a Future's result() (and its __get_result()), a pool result's get(). */
static int reraising(const struct py_code *code)
{
	return cs_ends_with(code->filename, "concurrent/futures/_base.py") ||
	       py_code_is(code, "multiprocessing/pool.py", "get");
}

static void no_frame(struct py_frame *f)
{
	memset(f, 0, sizeof(*f));
	f->line = -1;
}

/*
 * The traceback's entries, outermost first, at most max of them: 0, or
 * -1 when there were more.  A job's result() or get() raising it again
 * puts its caller's and its own frames before the worker's: re-raised
 * only by those (one a job made itself of another Future, further in,
 * is no result() of this one's), the job's function the first entry
 * after the first worker's outside the machinery.  early: stop at the first worker's entry (only
 * `reraised` wanted).
 */
static int walk_sites(struct pyproc *py, uint64_t exc, size_t max,
		      int early, struct py_exc_sites *out)
{
	const struct py_layout *L = &py->layout;
	uint64_t tb = 0, next;
	int worker = 0, want_outer = 0;
	struct py_frame f;
	size_t n;

	if (L->exc_traceback < 0 || L->tb_next < 0)
		return 0;
	py_field_u64(py, exc, L->exc_traceback, &tb, NULL);
	for (n = 0; tb && tb != py->types.none; n++) {
		if (n == max)
			return -1;
		if (tb_entry(py, tb, &f) == 0) {
			out->at = f;
			if (py_is_user_file(f.code->filename, NULL))
				out->own = f;
			/* (3.14's worker runs it through a WorkerContext) */
			if (want_outer && !job_machinery(f.code)) {
				out->outer = f;
				want_outer = 0;
			}
			if (!worker && job_worker(f.code)) {
				if (early)
					return 0;
				worker = want_outer = 1;
			}
			out->reraised |= !worker && reraising(f.code);
		}
		if (py_field_u64(py, tb, L->tb_next, &next, NULL) != 1 ||
		    next == tb)
			break;
		tb = next;
	}
	return 0;
}

void py_exception_sites(struct pyproc *py, uint64_t exc,
			struct py_exc_sites *out)
{
	memset(out, 0, sizeof(*out));
	no_frame(&out->at);
	no_frame(&out->own);
	no_frame(&out->outer);
	if (walk_sites(py, exc, MAX_TB_WALK, 0, out) < 0) {
		/* (its innermost entries were not reached) */
		no_frame(&out->at);
		no_frame(&out->own);
		out->cut = 1;
	}
}

/* Entries looked at for a job's result() or get() raising it again:
 * they come first, before the worker's. */
#define MAX_RERAISE_WALK 64

/* Did a result() or get() of its own raise job exception exc again?
 * Asked before a slot is given, so that a program's many handled jobs
 * cost no repr and whole traceback each. */
static int job_reraised(struct pyproc *py, uint64_t exc)
{
	struct py_exc_sites s;

	memset(&s, 0, sizeof(s));
	(void)walk_sites(py, exc, MAX_RERAISE_WALK, 1, &s);
	return s.reraised;
}

/* The slot for a new failed task, retrieved or not: a free one, else,
 * for one whose exception nothing retrieved, that of a task whose
 * exception was (those matter less: a server's handled failures must
 * not hide the one that hangs it); NULL when it is left out. */
static struct py_failed_task *failed_slot(struct py_async *a, int retrieved)
{
	size_t i;

	if (!a->failed)
		a->failed = xcalloc(PY_MAX_FAILED_TASKS, sizeof(*a->failed));
	if (a->nfailed < PY_MAX_FAILED_TASKS)
		return &a->failed[a->nfailed++];
	a->failed_more++;
	for (i = 0; !retrieved && i < a->nfailed; i++)
		if (a->failed[i].retrieved)
			return &a->failed[i];
	return NULL;
}

/* A new failed task or job at addr, its exception exc read, into a
 * slot; NULL when it is left out. */
static struct py_failed_task *note(struct builder *b, uint64_t addr,
				   uint64_t exc, int retrieved)
{
	struct py_async *a = b->out;
	struct py_failed_task *t = failed_slot(a, retrieved);
	struct strbuf sb;

	if (!t)
		return NULL;
	memset(t, 0, sizeof(*t));
	t->addr = addr;
	t->exception = exc;
	t->retrieved = retrieved;
	strbuf_init(&sb);
	pyrepr_exception(b->py, exc, &sb);
	t->exc_repr = arena_strdup(&a->pool, sb.buf);
	strbuf_release(&sb);
	py_exception_sites(b->py, exc, &t->sites);
	py_exc_group_leaves(b->py, exc, &a->pool, t);
	return t;
}

static void note_remote_sites(struct builder *b, struct py_failed_task *t);

void tasks_note_failure(struct builder *b, const struct found *found,
			const struct task_fields *f, int tid)
{
	struct py_failed_task *t = note(b, found->addr, f->exception,
					!f->log_tb);

	if (!t)
		return;
	t->loop = f->loop;
	t->coro = f->coro;
	t->tid = tid;
	t->name = tasks_task_name(b, f->name,
				  tasks_gen_at(b, f->coro, found->interp_id));
	/* (a task that awaited a process pool's job: where its worker
	 * raised, past the await; for a cause, so only where nothing
	 * retrieved it) */
	if (!t->retrieved)
		note_remote_sites(b, t);
}

/* Done callbacks looked at: one is enough to say. */
#define MAX_CALLBACKS 1

/* A concurrent.futures Future's exception when its state is FINISHED
 * with one, else 0; *taken: a done callback takes it (asyncio's chained
 * future, a program's). */
static uint64_t future_failure(struct pyproc *py, uint64_t fut, int *taken)
{
	uint64_t state = pyobj_own_or_0(py, fut, "_state");
	uint64_t cb[MAX_CALLBACKS];
	const char *s;
	size_t ncb = 0;

	if (!state || pystr_get(py, state, &s, NULL) < 0 ||
	    strcmp(s, "FINISHED"))
		return 0;
	if (pyseq_items(py, pyobj_own_or_0(py, fut, "_done_callbacks"), cb,
			MAX_CALLBACKS, &ncb, NULL) < 0)
		ncb = 0;
	*taken = ncb > 0;
	return pyobj_own_or_0(py, fut, "_exception");
}

/* A multiprocessing pool's result's exception when it is ready and
 * failed (_success False, _value the exception), else 0; *taken: an
 * error_callback took it. */
static uint64_t pool_failure(struct pyproc *py, uint64_t res, int *taken)
{
	uint64_t cb = pyobj_own_or_0(py, res, "_error_callback");

	if (pyobj_own_or_0(py, res, "_success") != py->types.false_)
		return 0;
	*taken = cb && cb != py->types.none;
	return pyobj_own_or_0(py, res, "_value");
}

/* Code points of a remote traceback's text read at most: its innermost
 * entries are last. */
#define MAX_REMOTE_TB_CHARS (256 * 1024)

/* The worker's entry of a remote traceback: concurrent.futures'
 * _process_worker(), multiprocessing.pool's worker(). */
static int remote_worker(const struct py_text_frame *f)
{
	return f->function &&
	       ((cs_ends_with(f->file, "concurrent/futures/process.py") &&
		 !strcmp(f->function, "_process_worker")) ||
		(cs_ends_with(f->file, "multiprocessing/pool.py") &&
		 !strcmp(f->function, "worker")));
}

static char *pool_strndup(struct arena *a, const char *s, size_t n)
{
	struct strbuf sb;
	char *out;

	strbuf_init(&sb);
	strbuf_add(&sb, s, n);
	out = arena_strdup(a, sb.buf);
	strbuf_release(&sb);
	return out;
}

/* The traceback text of exc's __cause__ when it is a process pool's
 * _RemoteTraceback (concurrent.futures) or RemoteTraceback
 * (multiprocessing.pool), as UTF-8 into *text; -1 when not. */
static int remote_text(struct pyproc *py, uint64_t exc, struct strbuf *text,
		       int *cut)
{
	const struct py_layout *L = &py->layout;
	uint64_t cause = 0, type = 0, args = 0, arg;
	uint32_t *cps;
	size_t n = 0, len = 0, i, nargs = 0;
	struct strbuf name;
	int ok;

	if (L->exc_cause < 0 || L->exc_args < 0 ||
	    py_field_u64(py, exc, L->exc_cause, &cause, NULL) != 1 ||
	    !cause || cause == py->types.none ||
	    pyobj_read_type(py, cause, &type, NULL) < 0)
		return -1;
	strbuf_init(&name);
	ok = pytype_name(py, type, &name, NULL) == 0 &&
	     (!strcmp(name.buf, "_RemoteTraceback") ||
	      !strcmp(name.buf, "RemoteTraceback"));
	strbuf_release(&name);
	if (!ok || py_field_u64(py, cause, L->exc_args, &args, NULL) != 1 ||
	    pyseq_items(py, args, &arg, 1, &nargs, NULL) < 0 || nargs != 1)
		return -1;
	cps = xmallocarray(MAX_REMOTE_TB_CHARS, sizeof(*cps));
	if (pystr_decode(py, arg, MAX_REMOTE_TB_CHARS, cps, &n, &len,
			 NULL) < 0) {
		free(cps);
		return -1;
	}
	for (i = 0; i < n; i++)
		pystr_add_codepoint(text, cps[i]);
	free(cps);
	*cut = len > n;
	return 0;
}

/*
 * A process pool's job raised in its worker process, and its exception
 * came back with no traceback here, but with the traceback's text as
 * its __cause__: where it was raised (the innermost entry, the
 * innermost of the program's own), and the job's function (the first
 * entry after the worker's outside the machinery).  An exception raised
 * again here (a task awaited the job, a result() raised it) has a
 * traceback of its own: there the text's block must name its type, and
 * the job keeps the name its own traceback gives.  Bounded by the text
 * read: each entry takes a line of it at least.
 */
static void note_remote_sites(struct builder *b, struct py_failed_task *t)
{
	/* (raised again here, with a traceback of its own: only a block
	 * of its own type is its worker's) */
	int again = t->sites.at.code != NULL;
	struct arena *pool = &b->out->pool;
	struct remote_tb_entry e;
	struct py_text_frame f;
	struct strbuf text, type;
	const char *pos, *end, *dot;
	uint64_t tp = 0;
	size_t prefix;
	int worker = 0, cut = 0, want_outer = 0;

	strbuf_init(&text);
	strbuf_init(&type);
	if (remote_text(b->py, t->exception, &text, &cut) < 0) {
		strbuf_release(&text);
		return;
	}
	/* (a static type's tp_name has its module: the text's closing
	 * line may name it either way) */
	if (pyobj_read_type(b->py, t->exception, &tp, NULL) < 0 ||
	    pytype_name(b->py, tp, &type, NULL) < 0)
		strbuf_reset(&type);
	dot = strrchr(type.buf, '.');
	end = text.buf + text.len;
	if (remote_tb_block(text.buf, end, dot ? dot + 1 : type.buf, &pos,
			    &prefix) < 1 + again)
		pos = end;
	strbuf_release(&type);
	while (remote_tb_next(&pos, end, prefix, &e)) {
		f.file = pool_strndup(pool, e.file, e.file_len);
		f.function = e.function_len ?
			     pool_strndup(pool, e.function, e.function_len) :
			     NULL;
		f.source = e.source ? pool_strndup(pool, e.source,
						   e.source_len) : NULL;
		f.line = e.line;
		t->remote_at = f;
		if (py_is_user_file(f.file, NULL))
			t->remote_own = f;
		if (want_outer && !strstr(f.file, "/concurrent/futures/") &&
		    !strstr(f.file, "/multiprocessing/")) {
			want_outer = 0;
			if (t->job && !again && !t->name && f.function) {
				struct strbuf sb;

				strbuf_init(&sb);
				strbuf_addf(&sb, "%s()", f.function);
				t->name = arena_strdup(pool, sb.buf);
				strbuf_release(&sb);
			}
		}
		if (!worker && remote_worker(&f))
			worker = want_outer = 1;
	}
	/* (the block ran past the text read: its innermost entries are
	 * not known; a long message after it leaves them be) */
	cut = cut && pos >= end;
	if (cut) {
		memset(&t->remote_at, 0, sizeof(t->remote_at));
		memset(&t->remote_own, 0, sizeof(t->remote_own));
	}
	t->remote_cut = cut;
	strbuf_release(&text);
}

/* A job's Future or pool result, when it failed. */
static void note_job(struct builder *b, const struct found *job)
{
	struct pyproc *py = b->py;
	int pool = job->what == AIO_MP_RESULT, taken = 0;
	uint64_t exc = pool ? pool_failure(py, job->addr, &taken) :
			      future_failure(py, job->addr, &taken);
	struct py_failed_task *t;
	struct strbuf sb;

	if (!exc || exc == py->types.none)
		return;
	/* (its result() or get() raised it again: its traceback says so) */
	t = note(b, job->addr, exc,
		 taken || job_reraised(py, exc));
	if (!t)
		return;
	t->job = pool ? PY_FAILED_POOL_JOB : PY_FAILED_JOB;
	/* (a process pool's job raised in its child: no frame here, but
	 * the text its worker sent; a Future made by hand: no worker's;
	 * the text is there too where a result() raised it again) */
	if (!t->sites.cut)
		note_remote_sites(b, t);
	if (!t->sites.outer.code)
		return;
	strbuf_init(&sb);
	strbuf_addstr(&sb, t->sites.outer.code->qualname);
	strbuf_addstr(&sb, "()");
	t->name = arena_strdup(&b->out->pool, sb.buf);
	strbuf_release(&sb);
}

/* Children of one gather looked at, gathers within gathers, and the
 * children looked at in all (gather() keeps a future it was given
 * twice twice: gathers of gathers of one repeated future would
 * multiply). */
#define MAX_GATHERED 4096
#define MAX_GATHER_DEPTH 4
#define MAX_GATHERED_ALL 65536

struct gathered {
	struct addrmap seen;      /* gathers looked at */
	size_t budget;            /* children left to look at */
};

/* Mark the failed tasks among gather future fut's children (and its
 * children gathers') as gathered by task. */
static void mark_gathered(struct builder *b, struct gathered *g,
			  uint64_t fut, uint64_t task, int depth)
{
	struct py_async *a = b->out;
	uint64_t *items, type;
	size_t n = 0, i, k;

	if (depth >= MAX_GATHER_DEPTH || !g->budget ||
	    !addrmap_add(&g->seen, fut))
		return;
	items = xmallocarray(MAX_GATHERED, sizeof(*items));
	if (pyseq_items(b->py, pyobj_own_or_0(b->py, fut, "_children"), items,
			MAX_GATHERED, &n, NULL) < 0)
		n = 0;
	for (i = 0; i < n && i < MAX_GATHERED && g->budget; i++, g->budget--) {
		for (k = 0; k < a->nfailed; k++)
			if (a->failed[k].addr == items[i])
				a->failed[k].gathered_by = task;
		if (pyobj_read_type(b->py, items[i], &type, NULL) == 0 &&
		    !strcmp(py_short_type_name(py_type_name_cached(b->py, type)),
			    "_GatheringFuture"))
			mark_gathered(b, g, items[i], task, depth + 1);
	}
	free(items);
}

/* Failed jobs sharing one exception object: a job that called another
 * Future's result(), which raised the other's exception in it (the
 * other's traceback is the same object, the outer's).  One of them
 * stands for all: the others' exceptions were retrieved. */
static void shared_exceptions(struct py_async *a)
{
	size_t i, k;

	for (i = 0; i < a->nfailed; i++)
		for (k = i + 1; a->failed[i].job && k < a->nfailed; k++)
			if (a->failed[k].job &&
			    a->failed[k].exception == a->failed[i].exception)
				a->failed[k].retrieved = 1;
}

void tasks_finish_failures(struct builder *b)
{
	struct py_async *a = b->out;
	struct gathered g;
	uintptr_t k;
	size_t i;

	for (i = 0; i < b->njob; i++)
		note_job(b, &b->jobs[i]);
	a->jobs_unread = b->jobs_more;
	shared_exceptions(a);

	/* a closed coroutine a failed task keeps (up to 3.11) is its */
	for (i = 0; i < a->nfailed; i++) {
		k = (uintptr_t)addrmap_get(&a->gen_index, a->failed[i].coro,
					   NULL);
		if (k)
			py_async_set_owner(a, k - 1, a->failed[i].addr);
	}
	addrmap_init(&g.seen);
	g.budget = MAX_GATHERED_ALL;
	for (i = 0; a->nfailed && i < a->ntasks; i++) {
		const struct py_task *t = &a->tasks[i];

		if (t->waiter && t->waiter_type &&
		    !strcmp(t->waiter_type, "_GatheringFuture"))
			mark_gathered(b, &g, t->waiter, t->addr, 0);
	}
	addrmap_release(&g.seen);
}
