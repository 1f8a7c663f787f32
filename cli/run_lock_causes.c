/*
 * `run`'s causes for threads blocked acquiring locks (from cli/
 * run_causes.c): a multiprocessing lock whose holder is known (cli/
 * run_semlocks.h) is a cause of its own, a deadlock when that holder
 * waits for the thread (three or more alike waiters one cause); the
 * only thread on a lock that is not known, one; two or more, a
 * possible deadlock.
 */
#include "cli/run_causes_internal.h"

#include <stdlib.h>

#include "cli/alike_lines.h"
#include "common/util.h"
#include "common/banned.h"

/* "multiprocessing.Lock 0x7f0a1b2c3d40" when the facts know the lock,
 * else "a lock". */
static void add_lock(struct strbuf *sb, const struct run_thread_facts *f)
{
	if (!f->lock) {
		strbuf_addstr(sb, "a lock");
		return;
	}
	strbuf_addf(sb, "%s 0x%llx", f->lock->name,
		    (unsigned long long)f->lock->addr);
}

/* The lines saying who holds the lock, where known. */
static void add_lock_lines(struct run_cause *cause,
			   const struct run_thread_facts *f, struct strbuf *sb)
{
	size_t k;

	for (k = 0; f->lock && k < RUN_LOCK_LINES && f->lock->lines[k];
	     k++) {
		strbuf_addstr(sb, f->lock->lines[k]);
		run_cause_detail(cause, sb);
	}
}

/* Thread b's cause of its own: the only one blocked on a lock that is
 * not known, or one whose lock's holder is (a multiprocessing lock's:
 * cli/run_semlocks.h), a deadlock when that holder waits for it. */
static void lock_cause(struct run_summary *s, int pid, const struct blocked *b,
		       struct strbuf *sb)
{
	struct run_cause *cause;

	if (b->f->lock && b->f->lock->cycle)
		strbuf_addstr(sb, "deadlock: ");
	run_add_thread_label(sb, b->t);
	strbuf_addstr(sb, " is blocked acquiring ");
	add_lock(sb, b->f);
	if (b->api) {
		strbuf_addstr(sb, " in ");
		blocked_add_api(sb, b->api);
	}
	blocked_add_native_call(sb, b);
	blocked_add_seen(sb, &b->seen);
	/* (acquire(timeout=...)) */
	run_add_thread_timer(sb, b->f);
	cause = run_cause_add(s, b->f->lock && b->f->lock->cycle ?
			      RUN_CAUSE_LOCK_CYCLE :
			      RUN_CAUSE_LOCK, pid, sb);
	blocked_add_where(sb, b);
	run_cause_detail(cause, sb);
	add_lock_lines(cause, b->f, sb);
}

/* Its holder is known: a cause of its own, not a guess's. */
static int holder_known(const struct blocked *b)
{
	return b->kind == BLOCKED_LOCK && b->f->lock && b->f->lock->lines[0];
}

/* What makes a waiter on a lock whose holder is known alike another: the
 * lock, where, who holds it, its timer's kind (not how long it has been
 * stuck: the group says the least). */
static char *lock_key(const struct blocked *b)
{
	struct strbuf sb;
	size_t k;

	strbuf_init(&sb);
	add_lock(&sb, b->f);
	strbuf_addch(&sb, ';');
	blocked_add_where(&sb, b);
	for (k = 0; k < RUN_LOCK_LINES && b->f->lock->lines[k]; k++)
		strbuf_addf(&sb, ";%s", b->f->lock->lines[k]);
	strbuf_addf(&sb, ";timer %d", b->f->timer);
	return strbuf_detach(&sb);
}

/* Three or more alike waiters (a pool's workers on their queue's lock)
 * as one cause unless --all: "12 threads are blocked acquiring
 * multiprocessing.Lock 0x... (stuck for at least 2.5s): 101 "w-0",
 * ...", where the first is, and who holds it. */
static void known_lock_causes(struct run_summary *s, int pid,
			      const struct blocked *b, size_t n,
			      struct strbuf *sb)
{
	size_t *w = xmallocarray(n ? n : 1, sizeof(*w));
	char **keys = xmallocarray(n ? n : 1, sizeof(*keys));
	const struct run_thread_facts **f;
	struct run_cause *cause;
	struct alike_lines g;
	size_t i, k, nw = 0;

	for (i = 0; i < n; i++)
		if (holder_known(&b[i])) {
			keys[nw] = lock_key(&b[i]);
			w[nw++] = i;
		}
	alike_lines_group(&g, keys, nw, s->apart);
	for (i = 0; i < g.ngroups; i++) {
		const size_t *m = g.member + g.first[i];
		size_t size = g.first[i + 1] - g.first[i];
		const struct blocked *first = &b[w[m[0]]], *least;

		if (size == 1) {
			lock_cause(s, pid, first, sb);
			continue;
		}
		if (first->f->lock->cycle)
			strbuf_addstr(sb, "deadlock: ");
		strbuf_addf(sb, "%zu threads are blocked acquiring ", size);
		add_lock(sb, first->f);
		least = first;
		for (k = 1; k < size; k++)
			if (b[w[m[k]]].seen.stuck_for < least->seen.stuck_for)
				least = &b[w[m[k]]];
		blocked_add_seen(sb, &least->seen);
		f = xmallocarray(size, sizeof(*f));
		for (k = 0; k < size; k++)
			f[k] = b[w[m[k]]].f;
		run_add_threads_timer(sb, f, size);
		free(f);
		strbuf_addstr(sb, ": ");
		blocked_add_members(sb, b, w, m, size);
		cause = run_cause_add(s, first->f->lock->cycle ?
				      RUN_CAUSE_LOCK_CYCLE : RUN_CAUSE_LOCK,
				      pid, sb);
		blocked_add_where(sb, first);
		run_cause_detail(cause, sb);
		add_lock_lines(cause, first->f, sb);
	}
	alike_lines_release(&g);
	free(w);
}

void run_causes_locks(struct run_summary *s, int pid, const struct blocked *b,
		      size_t n, struct strbuf *sb)
{
	size_t i, nlock = 0;
	struct run_cause *cause;

	known_lock_causes(s, pid, b, n, sb);
	for (i = 0; i < n; i++)
		nlock += b[i].kind == BLOCKED_LOCK && !holder_known(&b[i]);
	if (nlock == 1) {
		for (i = 0; b[i].kind != BLOCKED_LOCK || holder_known(&b[i]);
		     i++)
			;
		lock_cause(s, pid, &b[i], sb);
	}
	if (nlock < 2)
		return;
	/* Two threads blocked on locks the graph does not explain is the
	 * classic lock-order deadlock's sign; which lock each holds is not
	 * known, hence "possible". */
	strbuf_addf(sb, "possible deadlock: %zu threads are blocked "
		    "acquiring locks", nlock);
	cause = run_cause_add(s, RUN_CAUSE_DEADLOCK, pid, sb);
	for (i = 0; i < n; i++) {
		if (b[i].kind != BLOCKED_LOCK || holder_known(&b[i]))
			continue;
		run_add_thread_label(sb, b[i].t);
		strbuf_addch(sb, ' ');
		if (b[i].f->lock) {
			strbuf_addstr(sb, "acquiring ");
			add_lock(sb, b[i].f);
			strbuf_addch(sb, ' ');
		}
		blocked_add_where(sb, &b[i]);
		blocked_add_native_call(sb, &b[i]);
		blocked_add_seen(sb, &b[i].seen);
		run_add_thread_timer(sb, b[i].f);
		run_cause_detail(cause, sb);
		add_lock_lines(cause, b[i].f, sb);
	}
}
