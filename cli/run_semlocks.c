/*
 * Who holds the multiprocessing lock a thread is blocked on: the
 * process of the tree whose SemLock of that semaphore counts an acquire
 * it has not released (its count, which the process keeps apart from the
 * semaphore shared by all), and its thread whose ident took it last.
 * The semaphore says only that it is taken; no process but the holder
 * knows by whom.
 */
#include "cli/run_semlocks.h"

#include <stdint.h>
#include <string.h>

#include "attach/regs.h"
#include "cli/escape.h"
#include "cli/run_file_locks.h"
#include "cli/run_places.h"
#include "cli/run_probe.h"
#include "cli/run_reads.h"
#include "cli/run_report.h"
#include "common/procfs.h"
#include "common/strbuf.h"
#include "readers/withblocks.h"
#include "common/banned.h"

/* Holders named at most (a Lock has one; more are copies a fork made). */
#define MAX_HOLDERS 4

/* Where a semaphore is, the same in every process that maps it: its
 * file (device and inode: the path differs, glibc's sem_open() maps a
 * file it then links under the name) and the offset in it; without a
 * file, its address in process pid. */
struct sem_at {
	uint64_t dev, inode, off;
	int pid;
};

struct holder {
	const struct collection *c;
	const struct py_semlock *lock;
	const struct py_thread *th;   /* its thread with last_tid, or NULL */
	int copied_from;   /* a dumped parent whose copy names the same
			      ident: the count may be one a fork copied
			      (os.fork() keeps it); else 0 */
};

static void sem_at(const struct collection *c, uint64_t handle,
		   struct sem_at *k)
{
	const struct cs_mapping *m = c->ms ? memsrc_find_mapping(c->ms, handle)
					   : NULL;

	memset(k, 0, sizeof(*k));
	if (m && m->inode) {
		k->dev = m->dev;
		k->inode = m->inode;
		k->off = handle - m->start + m->offset;
	} else {
		k->pid = c->pid;
		k->off = handle;
	}
}

static int same_sem(const struct sem_at *a, const struct sem_at *b)
{
	return a->dev == b->dev && a->inode == b->inode && a->off == b->off &&
	       a->pid == b->pid;
}

/* The SemLock of c whose semaphore thread th waits on in futex(2) (a
 * timed wait restarted after a stop too: its registers still the
 * call's), or NULL. */
static const struct py_semlock *blocked_on(const struct collection *c,
					   const struct py_thread *th)
{
	unsigned long long args[3];
	long nr;
	size_t i;

	if (th->tid <= 0 ||
	    run_thread_call(c, collect_proc_pid(c), th->tid, &nr, args) < 0 ||
	    (!cs_syscall_is_futex(nr) && !cs_syscall_is_restart(nr)))
		return NULL;
	/* Bounded by PY_MAX_SEMLOCKS. */
	for (i = 0; i < c->async.nsemlocks; i++)
		if (c->async.semlocks[i].handle == args[0])
			return &c->async.semlocks[i];
	return NULL;
}

static const struct py_thread *thread_of(const struct collection *c,
					 uint64_t ident)
{
	size_t i;

	for (i = 0; ident && i < c->snap.nthreads; i++)
		if (c->snap.threads[i].thread_id == ident)
			return &c->snap.threads[i];
	return NULL;
}

/* The process entry of dumped collection c in s, or NULL. */
static const struct run_proc *proc_of(const struct run_summary *s,
				      const struct collection *c)
{
	size_t j;

	for (j = 0; j < s->nprocs; j++)
		if (&s->procs[j].c == c)
			return &s->procs[j];
	return NULL;
}

/* hc's next copy of the Lock's or RLock's semaphore k at index *at or
 * after (*at moved past it), or NULL. */
static const struct py_semlock *next_copy(const struct collection *hc,
					  const struct sem_at *k, size_t *at)
{
	struct sem_at hk;

	/* Bounded by PY_MAX_SEMLOCKS. */
	for (; *at < hc->async.nsemlocks; (*at)++) {
		const struct py_semlock *l = &hc->async.semlocks[*at];

		if (!l->owned)
			continue;
		sem_at(hc, l->handle, &hk);
		if (same_sem(k, &hk)) {
			(*at)++;
			return l;
		}
	}
	return NULL;
}

/* hc's copy of semaphore k that counts an acquire (any: whatever it
 * counts), or NULL (a Lock's or RLock's: only their counts name a
 * holder). */
static const struct py_semlock *counted(const struct collection *hc,
					const struct sem_at *k, int any)
{
	const struct py_semlock *l;
	size_t at = 0;

	while ((l = next_copy(hc, k, &at)))
		if (any || l->count > 0)
			return l;
	return NULL;
}

/* For hc, a process os.fork() made (multiprocessing's _MainProcess,
 * in a child), the dumped parent whose copy of semaphore k was last
 * acquired by a thread of the same ident as l's (the thread that forked
 * hc, as the child knows it): l's count may be the fork's copy.  Its
 * pid, or 0. */
static int copied_from(const struct run_summary *s,
		       const struct collection *hc, const struct sem_at *k,
		       const struct py_semlock *l)
{
	const struct run_proc *me = proc_of(s, hc);
	const struct py_semlock *pl;
	size_t j;

	/* (a multiprocessing child reset its counts when it started) */
	if (hc->async.mp_child != 0)
		return 0;
	for (j = 0; me && j < s->nprocs; j++)
		if (s->procs[j].e.pid == me->e.ppid && s->procs[j].dumped &&
		    (pl = counted(&s->procs[j].c, k, 1)) &&
		    pl->last_tid == l->last_tid)
			return s->procs[j].e.pid;
	return 0;
}

/* The Locks and RLocks of the tree's processes on semaphore k that
 * count an acquire not released, into out (MAX_HOLDERS at most), one
 * per process. */
static size_t holders_of(const struct run_summary *s, const struct sem_at *k,
			 struct holder *out)
{
	const struct py_semlock *l;
	size_t j, n = 0;

	for (j = 0; j < s->nprocs && n < MAX_HOLDERS; j++) {
		const struct collection *hc = &s->procs[j].c;

		if (!s->procs[j].dumped || !(l = counted(hc, k, 0)))
			continue;
		out[n].c = hc;
		out[n].lock = l;
		out[n].th = thread_of(hc, l->last_tid);
		out[n++].copied_from = copied_from(s, hc, k, l);
	}
	return n;
}

/* Could a process of the tree hold semaphore k without `run` knowing:
 * one whose heap was not read, or not all its locks; a Python process
 * not dumped; or one that counts it now, having taken it since its
 * dump (the tree runs while each process is read in turn)? */
static int holder_may_hide(const struct run_summary *s,
			   const struct sem_at *k)
{
	const struct py_semlock *l;
	int32_t count;
	size_t j, at;

	for (j = 0; j < s->nprocs; j++) {
		const struct run_proc *p = &s->procs[j];
		const struct collection *hc = &p->c;

		if (!p->dumped) {
			if (p->err.code != CS_ERR_NOT_PYTHON)
				return 1;
			continue;
		}
		if (hc->heap_unread || hc->async.semlocks_cut)
			return 1;
		at = 0;
		while ((l = next_copy(hc, k, &at)))
			if (procfs_mem_read(collect_proc_pid(hc), l->semlock +
					    (uint64_t)hc->py.layout.semlock_count,
					    &count, sizeof(count)) < 0 ||
			    count > 0)
				return 1;
	}
	return 0;
}

static void add_lock(struct strbuf *sb, const struct py_semlock *l)
{
	strbuf_addf(sb, "%s 0x%llx", l->name, (unsigned long long)l->addr);
}

/* Is the lock thread h.th of h.c is blocked on held by thread th of c
 * alone (each waits for the other's)?  Its lock into *other. */
static int waits_back(const struct run_summary *s, const struct holder *h,
		      const struct collection *c, const struct py_thread *th,
		      const struct py_semlock **other)
{
	struct holder back[MAX_HOLDERS];
	struct sem_at k;

	if (!h->th || h->copied_from || !(*other = blocked_on(h->c, h->th)) ||
	    !(*other)->owned || (*other)->value != 0)
		return 0;
	sem_at(h->c, (*other)->handle, &k);
	return holders_of(s, &k, back) == 1 && back[0].c == c &&
	       back[0].th == th && !back[0].copied_from;
}

/* The line of the `with` on thread th's stack that holds lock l (the
 * frame entering one, innermost, left out), or 0 for none: its count
 * names th by ident only, which a new thread may have been given. */
static int with_line(const struct collection *c, const struct py_thread *th,
		     const struct py_semlock *l)
{
	/* (reading caches what it decodes: the collection is as it was) */
	struct pyproc *py = (struct pyproc *)&c->py;
	struct py_with_blocks wb;
	struct cs_err err;
	size_t i, k;

	/* Bounded by the thread's frames. */
	for (i = 0; i < th->nframes; i++) {
		cs_err_init(&err);
		if (py_with_blocks_read(py, &th->frames[i], i == 0, &wb,
					&err) < 0)
			continue;
		for (k = 0; k < wb.nheld; k++)
			if (wb.held[k] == l->addr)
				return wb.held_line[k] > 0 ? wb.held_line[k] :
				       th->frames[i].line;
	}
	return 0;
}

static void add_line(struct run_lock_held *f, struct strbuf *sb)
{
	size_t i;

	for (i = 0; i < RUN_LOCK_LINES && f->lines[i]; i++)
		;
	if (i < RUN_LOCK_LINES)
		f->lines[i] = strbuf_detach(sb);
	strbuf_reset(sb);
}

/* How sure the holder is: taken in a `with` on its stack, or named by
 * its ident only, which matters for a thread of waiter c's own process
 * (a thread that ended holding it may have had the ident a new one was
 * given: the process is right, the thread may not be). */
static void add_how_sure(struct strbuf *sb, const struct holder *h,
			 const struct collection *c)
{
	int line = h->th ? with_line(h->c, h->th, h->lock) : 0;

	if (line > 0)
		strbuf_addf(sb, " (taken in a `with` at line %d)", line);
	else if (h->th && h->c == c)
		strbuf_addstr(sb, " (by its ident: a thread that ended "
			      "holding it may have had the same)");
}

/* A line of its own when h's count may be a copy a fork made. */
static void add_copied(struct run_lock_held *f, const struct holder *h,
		       struct strbuf *sb)
{
	if (!h->copied_from)
		return;
	strbuf_addf(sb, "process %d's count may be a copy: process %d forked "
		    "it from a thread of that ident, and os.fork() keeps the "
		    "count", h->c->pid, h->copied_from);
	add_line(f, sb);
}

/* The lines for thread th of c, blocked on lock l (its semaphore at
 * k), held by h[0..n). */
static void say_holders(struct run_lock_held *f,
			const struct run_summary *s,
			const struct collection *c, const struct py_thread *th,
			const struct holder *h, size_t n, struct strbuf *sb)
{
	const struct py_semlock *other;
	size_t i;

	if (n == 1 && h[0].c == c && h[0].th == th && h[0].copied_from) {
		strbuf_addf(sb, "this process counts it acquired by this "
			    "thread, but the count may be a copy: process %d "
			    "forked this one from a thread of that ident, and "
			    "os.fork() keeps the count (else this thread "
			    "holds it itself: a Lock is not reentrant)",
			    h[0].copied_from);
		add_line(f, sb);
		return;
	}
	if (n == 1 && h[0].c == c && h[0].th == th) {
		strbuf_addstr(sb, "this thread holds it itself (it acquired "
			      "it and has not released it): a "
			      "multiprocessing.Lock is not reentrant");
		add_how_sure(sb, &h[0], c);
		add_line(f, sb);
		return;
	}
	if (n > 1) {
		strbuf_addf(sb, "%zu processes count it acquired and not "
			    "released, where only one can hold it: a process "
			    "forked while holding it keeps the count", n);
		add_line(f, sb);
	}
	for (i = 0; i < n; i++) {
		if (h[i].th) {
			run_add_python_holder(sb, h[i].c, h[i].th);
		} else {
			strbuf_addf(sb, "holder: process %d, by a thread that "
				    "has ended (ident 0x%llx)", h[i].c->pid,
				    (unsigned long long)h[i].lock->last_tid);
		}
		add_how_sure(sb, &h[i], c);
		add_line(f, sb);
		add_copied(f, &h[i], sb);
	}
	if (n == 1 && waits_back(s, &h[0], c, th, &other)) {
		f->cycle = 1;
		strbuf_addf(sb, "a deadlock: process %d's thread %d is "
			    "blocked acquiring ", h[0].c->pid, h[0].th->tid);
		add_lock(sb, other);
		strbuf_addstr(sb, ", which this thread holds");
		add_line(f, sb);
	}
}

void run_semlocks_facts(struct run_thread_facts *facts,
			const struct run_summary *s,
			const struct collection *c)
{
	struct holder h[MAX_HOLDERS];
	struct strbuf sb;
	struct sem_at k;
	size_t i, n;

	if (!c->is_live || !c->async.nsemlocks)
		return;
	strbuf_init(&sb);
	for (i = 0; i < c->snap.nthreads; i++) {
		const struct py_thread *th = &c->snap.threads[i];
		const struct py_semlock *l;

		/* (a semaphore's wait, a Condition's or an Event's: no
		 * lock's) */
		if (facts[i].futex == 0 || !(l = blocked_on(c, th)) ||
		    !l->owned)
			continue;
		facts[i].lock = xcalloc(1, sizeof(*facts[i].lock));
		facts[i].lock->name = l->name;
		facts[i].lock->addr = l->addr;
		/* (taken: a value above 0 is a release under way) */
		if (l->value != 0)
			continue;
		sem_at(c, l->handle, &k);
		n = holders_of(s, &k, h);
		if (n) {
			say_holders(facts[i].lock, s, c, th, h, n, &sb);
			continue;
		}
		if (holder_may_hide(s, &k))
			continue;
		facts[i].lock->orphaned = 1;
		strbuf_addstr(&sb, "held by no process run dumped (none "
			      "counts an acquire it has not released): the "
			      "one that acquired it may have exited or been "
			      "killed holding it");
		add_line(facts[i].lock, &sb);
	}
	strbuf_release(&sb);
}
