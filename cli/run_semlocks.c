/*
 * Who holds the multiprocessing lock a thread is blocked on: the
 * process of the tree whose SemLock of that semaphore counts an acquire
 * it has not released (its count, which the process keeps apart from the
 * semaphore shared by all), and its thread whose ident took it last.
 * The semaphore says only that it is taken; no process but the holder
 * knows by whom.
 */
#include "cli/run_semlocks.h"

#include <string.h>

#include "attach/regs.h"
#include "cli/escape.h"
#include "cli/run_file_locks.h"
#include "cli/run_reads.h"
#include "cli/run_report.h"
#include "common/strbuf.h"
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
	unsigned long long args[2];
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

/* The Locks and RLocks of the tree's processes on semaphore k that
 * count an acquire not released, into out (MAX_HOLDERS at most), one
 * per process. */
static size_t holders_of(const struct run_summary *s, const struct sem_at *k,
			 struct holder *out)
{
	size_t j, i, n = 0;
	struct sem_at hk;

	for (j = 0; j < s->nprocs && n < MAX_HOLDERS; j++) {
		const struct collection *hc = &s->procs[j].c;

		if (!s->procs[j].dumped)
			continue;
		/* Bounded by PY_MAX_SEMLOCKS. */
		for (i = 0; i < hc->async.nsemlocks; i++) {
			const struct py_semlock *l = &hc->async.semlocks[i];

			if (l->count <= 0 || l->maxvalue != 1)
				continue;
			sem_at(hc, l->handle, &hk);
			if (!same_sem(k, &hk))
				continue;
			out[n].c = hc;
			out[n].lock = l;
			out[n++].th = thread_of(hc, l->last_tid);
			break;
		}
	}
	return n;
}

static void add_lock(struct strbuf *sb, const struct py_semlock *l)
{
	strbuf_addf(sb, "%s 0x%llx", l->name, (unsigned long long)l->addr);
}

/* Is the lock thread h.th of h.c is blocked on held by thread th of c
 * (each waits for the other's)?  Its lock into *other. */
static int waits_back(const struct run_summary *s, const struct holder *h,
		      const struct collection *c, const struct py_thread *th,
		      const struct py_semlock **other)
{
	struct holder back[MAX_HOLDERS];
	struct sem_at k;
	size_t n, i;

	if (!h->th || !(*other = blocked_on(h->c, h->th)) ||
	    (*other)->value != 0)
		return 0;
	sem_at(h->c, (*other)->handle, &k);
	n = holders_of(s, &k, back);
	for (i = 0; i < n; i++)
		if (back[i].c == c && back[i].th == th)
			return 1;
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

/* The lines for thread th of c, blocked on lock l (its semaphore at
 * k), held by h[0..n). */
static void say_holders(struct run_lock_held *f,
			const struct run_summary *s,
			const struct collection *c, const struct py_thread *th,
			const struct holder *h, size_t n, struct strbuf *sb)
{
	const struct py_semlock *other;
	size_t i;

	if (n == 1 && h[0].c == c && h[0].th == th) {
		strbuf_addstr(sb, "this thread holds it itself (it acquired "
			      "it and has not released it): a "
			      "multiprocessing.Lock is not reentrant");
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
		add_line(f, sb);
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

		if (facts[i].futex == 0 || !(l = blocked_on(c, th)))
			continue;
		facts[i].lock = xcalloc(1, sizeof(*facts[i].lock));
		facts[i].lock->name = l->name;
		facts[i].lock->addr = l->addr;
		/* (taken: a value above 0 is a release under way) */
		if (l->value != 0 || l->maxvalue != 1)
			continue;
		sem_at(c, l->handle, &k);
		n = holders_of(s, &k, h);
		if (n) {
			say_holders(facts[i].lock, s, c, th, h, n, &sb);
			continue;
		}
		facts[i].lock->orphaned = 1;
		strbuf_addstr(&sb, "held by no process run dumped (none "
			      "counts an acquire it has not released): the "
			      "one that acquired it may have exited or been "
			      "killed holding it");
		add_line(facts[i].lock, &sb);
	}
	strbuf_release(&sb);
}
