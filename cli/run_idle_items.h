/*
 * `coroscope run`'s samples: what the list of the stuck and busy leaves
 * to one line of its own, "3 idle by design, not listed: ...": threads
 * idle by design (cli/thread_idle.h), schedulers' own tasks and
 * generators (cli/sched_idle.h), and a forked child's generators that
 * are copies of its parent's.
 */
#ifndef COROSCOPE_CLI_RUN_IDLE_ITEMS_H
#define COROSCOPE_CLI_RUN_IDLE_ITEMS_H

#include "cli/collect.h"
#include "cli/run_report.h"
#include "cli/watch_track.h"
#include "common/addrmap.h"

struct strbuf;

/* Distinct kinds of idle by design named on the line about them:
 * cli/thread_idle.c, cli/sched_idle.c, cli/watch_sample.c and
 * cli/watch_timers.c have fewer (about 20). */
#define IDLE_KINDS 32

/* A process's threads idle by design (cli/thread_idle.h) and its
 * schedulers' own tasks and generators (cli/sched_idle.h), which its
 * list of what is stuck leaves to one line of their own. */
struct idle_items {
	const struct collection *c;
	struct addrmap by_tid;    /* kernel tid -> thread index + 1 */
	/* A forked child's (multiprocessing's): its parent's generators,
	 * address -> index + 1, when the parent was dumped too */
	const struct collection *parent;
	struct addrmap parent_gens;
	size_t n;                 /* left out */
	size_t nthreads;          /* of them threads */
	const char *kinds[IDLE_KINDS];
	size_t count[IDLE_KINDS], nkinds;
};

/* parent: the collection of c's parent process, when dumped too (a
 * forked child's generators it also has are copies), or NULL. */
void run_idle_items_init(struct idle_items *w, const struct collection *c,
			 const struct collection *parent);
/* What item it is, if idle by design (or a copy): a thread as the dump
 * found it, a task or generator as the last sample did; NULL
 * otherwise. */
const char *run_idle_reason(const struct idle_items *w,
			    const struct watch_item *it);
/* Is item it idle by design (or a copy)?  Counted if so. */
int run_idle_item(struct idle_items *w, const struct watch_item *it);
/* Their line into sb: 0 when there are none. */
int run_idle_items_line(const struct idle_items *w, struct strbuf *sb);
void run_idle_items_release(struct idle_items *w);
/* The dumped parent of process pid in d, or NULL. */
const struct collection *run_dumped_parent_of(const struct run_dump *d, int pid);

#endif
