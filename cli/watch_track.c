#include "cli/watch_track.h"

#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "common/strbuf.h"
#include "common/banned.h"

/*
 * The sleeps and CPU time observed are the thread's own: the window
 * leaves out what our stop and resume cost it (cli/watch_cpu.c).  A
 * thread sleeping in short steps sleeps at every step but uses so little
 * CPU that the tick-based utime/stime may not grow for seconds: the
 * count of sleeps sees it; a thread busy in C never sleeps: its CPU
 * time does.
 */
#define WATCH_NOISE_CPU_S 0.002

void watch_tracker_init(struct watch_tracker *t, double stuck_s)
{
	int k;

	memset(t, 0, sizeof(*t));
	t->stuck_s = stuck_s;
	for (k = 0; k < WATCH_NKINDS; k++)
		addrmap_init(&t->index[k]);
}

static void place_set(char **file, char **function, int *line,
		      const struct watch_place *p)
{
	free(*file);
	free(*function);
	*file = p->file ? xstrdup(p->file) : NULL;
	*function = p->function ? xstrdup(p->function) : NULL;
	*line = p->line;
}

static void item_release(struct watch_item *it)
{
	free(it->name);
	free(it->where_file);
	free(it->where_function);
	free(it->inner_file);
	free(it->inner_function);
	free(it->waits_on);
	free(it->held_by);
	free(it->label);
	free(it->blocked_in);
	free(it->native_function);
	free(it->idle);
	free(it->blocked_on);
}

/* *dst becomes a copy of src (NULL stays NULL), unless equal already. */
static void str_set(char **dst, const char *src)
{
	if (*dst && src && !strcmp(*dst, src))
		return;
	free(*dst);
	*dst = src ? xstrdup(src) : NULL;
}

void watch_tracker_release(struct watch_tracker *t)
{
	size_t i;
	int k;

	for (i = 0; i < t->nitems; i++)
		item_release(&t->items[i]);
	free(t->items);
	free(t->events);
	for (k = 0; k < WATCH_NKINDS; k++)
		addrmap_release(&t->index[k]);
	memset(t, 0, sizeof(*t));
}

void watch_begin(struct watch_tracker *t, double now_s)
{
	size_t i;

	t->prev = t->samples ? t->now : 0;
	t->now = now_s;
	if (!t->samples)
		t->first = now_s;
	t->samples++;
	t->nevents = 0;
	for (i = 0; i < t->nitems; i++)
		t->items[i].seen = t->items[i].carried = 0;
}

void watch_carry(struct watch_tracker *t, enum watch_kind kind,
		 const char *label)
{
	size_t i;

	for (i = 0; i < t->nitems; i++)
		if (t->items[i].kind == kind && !t->items[i].seen &&
		    (!label || (t->items[i].label &&
				!strcmp(t->items[i].label, label))))
			t->items[i].carried = 1;
}

int watch_by_address(const struct watch_item *it)
{
	return it->kind == WATCH_GENERATOR || it->kind == WATCH_GREENLET;
}

const char *watch_kind_plural(enum watch_kind kind)
{
	static const char *const plural[WATCH_NKINDS] = {
		[WATCH_TASK] = "tasks",
		[WATCH_THREAD] = "threads",
		[WATCH_GENERATOR] = "generators",
		[WATCH_GREENLET] = "greenlets",
	};

	return (unsigned)kind < WATCH_NKINDS ? plural[kind] : "items";
}

const char *watch_kind_label(const struct watch_item *it)
{
	if (it->kind == WATCH_TASK)
		return it->label;
	/* (gevent's "Greenlet" says no more than "greenlet") */
	if (it->kind == WATCH_GREENLET && !it->name && it->label &&
	    strcasecmp(it->label, "greenlet"))
		return it->label;
	return NULL;
}

int watch_thread_ran(double cpu_s, long sleeps)
{
	if (sleeps > 0)
		return 1;
	return cpu_s >= WATCH_NOISE_CPU_S;
}

static void add_event(struct watch_tracker *t, enum watch_event_kind kind,
		      size_t item, double stuck_for)
{
	struct watch_event *ev;

	t->events = xgrow(t->events, &t->events_alloc, t->nevents + 1,
			  sizeof(*t->events));
	ev = &t->events[t->nevents++];
	ev->kind = kind;
	ev->item = item;
	ev->stuck_for = stuck_for;
	ev->at_least = watch_stuck_at_least(t, &t->items[item]);
}

static int str_differs(const char *a, const char *b)
{
	if (!a || !b)
		return a != b;
	return strcmp(a, b) != 0;
}

/* Item it, first seen at this sample (or again, after it went away: a
 * new object with its id), as o has it. */
static void start_over(const struct watch_tracker *t, struct watch_item *it,
		       const struct watch_obs *o)
{
	it->first_seen = t->now;
	it->own_progress = t->now;
	/* (a thread asleep since before the watch has been without
	 * progress that long: in whole seconds, down, so that threads
	 * parked alike within a second stay alike, one line, and "at
	 * least" stays true) */
	it->last_progress = t->now -
			    (o->off_cpu_s >= 1 ? floor(o->off_cpu_s) : 0);
	it->same_since = it->step_same_since = it->places_since = t->now;
	it->places = o->places;
	it->first_fingerprint = o->fingerprint;
	it->changes = it->nseen = it->nfirst = 0;
	it->gone = 0;
	it->reported = 0;
	it->cpu_s = it->window_s = 0;
	it->wait_s = it->wait_window_s = 0;
	memset(&it->slept, 0, sizeof(it->slept));
	memset(&it->waited, 0, sizeof(it->waited));
	it->timed_again = 0;
	str_set(&it->blocked_on, NULL);
}

/* A thread's running step: another task's, or the same task's after
 * its loop turned (another mark), is another step. */
static void note_step(const struct watch_tracker *t, struct watch_item *it,
		      const struct watch_obs *o)
{
	if (o->step != it->step || o->step_mark != it->step_mark)
		it->step_same_since = t->now;
	it->step = o->step;
	it->step_mark = o->step_mark;
}

/*
 * A thread asleep in time.sleep() at this sample and at an earlier one
 * (the last whose sleep's end was read), that one's sleep over by this
 * one and this one's ending later: it woke and slept again.
 * One wake of its own in a window is lost among our stop's (cli/
 * watch_cpu.c): a heartbeat that sleeps 3 s at one line was "stuck for
 * 4.0s", then "moved after 6.0s".  Both tests, since a time left (time.
 * sleep() to 3.10) is off by the reads' slack, and its end moves on by
 * each stop: by as long as the thread then waits for a CPU, on a busy
 * host.  Not for a timed wait: a lock's acquire retried with a timeout
 * waits on the same lock all along.
 */
#define SLEEP_AGAIN_S 0.005

/* Both timers on, with a due time read, and when from the sample. */
static int both_read(const struct watch_timer *a, const struct watch_timer *b)
{
	return a->on && a->timed && a->known && b->on && b->timed && b->known;
}

static int slept_again(const struct watch_timer *was,
		       const struct watch_timer *now)
{
	double slack = was->slack + now->slack + SLEEP_AGAIN_S;

	if (!both_read(was, now))
		return 0;
	return was->due <= now->due - now->in_s + slack &&
	       now->due > was->due + slack;
}

/*
 * A thread's timed wait whose end moved later before the one it had
 * ran out: that wait ended early, its object woke it (a queue's get()
 * fed, a notify(), a lock taken), and another began: it moved.  A
 * consumer fed every 0.2 s under get(timeout=0.5) was "stuck", one
 * wake in a window lost among our stop's (slept_again()).
 */
static int woken_early(const struct watch_timer *was,
		       const struct watch_timer *now)
{
	double slack = was->slack + now->slack + SLEEP_AGAIN_S;

	if (!both_read(was, now))
		return 0;
	return was->due > now->due - now->in_s + slack &&
	       now->due > was->due + slack;
}

/* A thread's timed wait that ran out, and another at the same place:
 * counted.  (Before it->fingerprint takes this sample's.) */
static void note_timed_again(struct watch_item *it, const struct watch_obs *o,
			     int fresh)
{
	if (o->kind != WATCH_THREAD)
		return;
	if (fresh || o->fingerprint != it->fingerprint)
		it->timed_again = 0;
	else if (slept_again(&it->waited, &o->timeout))
		it->timed_again++;
	/* (kept through samples that read none, one due within 0.1 s: a
	 * poll's count would be lost under a slow stop; a fed consumer's
	 * may then count a wait that ended early, only in its words) */
	if (o->timeout.on && o->timeout.timed && o->timeout.known)
		it->waited = o->timeout;
}

/* Since when at every sample it was seen cancelled (a task). */
static void note_cancelled(const struct watch_tracker *t,
			   struct watch_item *it, const struct watch_obs *o,
			   int fresh)
{
	if (!o->cancelled)
		it->cancelled_since = 0;
	else if (fresh || !it->cancelled_since)
		it->cancelled_since = t->now;
}

/* Did it move since the last sample (not at its first)? */
static int moved_since(const struct watch_item *it,
		       const struct watch_obs *o)
{
	if (o->fingerprint != it->fingerprint || o->woke ||
	    str_differs(o->name, it->name))
		return 1;
	return o->kind == WATCH_THREAD &&
	       (watch_thread_ran(o->cpu_s, o->sleeps) ||
		slept_again(&it->slept, &o->sleep) ||
		woken_early(&it->waited, &o->timeout));
}

/* What stays the same of it from sample to sample (its fingerprint,
 * its places): since when, and how often it changed. */
static void note_same(const struct watch_tracker *t, struct watch_item *it,
		      const struct watch_obs *o, int fresh)
{
	if (o->fingerprint != it->fingerprint) {
		it->same_since = t->now;
		if (!fresh)
			it->changes++;
	}
	if (o->places != it->places) {
		it->places = o->places;
		it->places_since = t->now;
	}
	it->nseen++;
	it->nfirst += o->fingerprint == it->first_fingerprint;
}

void watch_observe(struct watch_tracker *t, const struct watch_obs *o)
{
	struct addrmap *index;
	uintptr_t slot;
	struct watch_item *it;
	int moved, fresh = 0;

	if (o->id == 0 || (unsigned)o->kind >= WATCH_NKINDS)
		return;
	index = &t->index[o->kind];
	slot = (uintptr_t)addrmap_get(index, o->id, NULL);
	if (slot == 0) {
		t->items = xgrow(t->items, &t->alloc, t->nitems + 1,
				 sizeof(*t->items));
		it = &t->items[t->nitems++];
		memset(it, 0, sizeof(*it));
		it->kind = o->kind;
		it->id = o->id;
		addrmap_put(index, o->id, (void *)(uintptr_t)t->nitems);
		fresh = 1;
	} else {
		it = &t->items[slot - 1];
		/* Seen again after it went away: a new object that reuses
		 * the address (or the thread id). */
		if (it->gone)
			fresh = 1;
	}
	if (it->seen)
		return;     /* the same id twice in one sample: keep the first */
	if (fresh) {
		start_over(t, it, o);
		moved = 0;
	} else {
		moved = moved_since(it, o);
		if (moved)
			it->own_progress = t->now;
		moved |= o->awaited_moved;
	}
	if (str_differs(o->name, it->name)) {
		free(it->name);
		it->name = o->name ? xstrdup(o->name) : NULL;
	}
	note_same(t, it, o, fresh);
	note_step(t, it, o);
	note_timed_again(it, o, fresh);
	it->fingerprint = o->fingerprint;
	it->last_seen = t->now;
	it->seen = 1;
	if (o->kind == WATCH_THREAD && o->cpu_s >= 0 && o->window_s > 0) {
		it->cpu_s += o->cpu_s;
		it->window_s += o->window_s;
		if (o->wait_s >= 0) {
			it->wait_s += o->wait_s;
			it->wait_window_s += o->window_s;
		}
	}
	place_set(&it->where_file, &it->where_function, &it->where_line,
		  &o->where);
	place_set(&it->inner_file, &it->inner_function, &it->inner_line,
		  &o->inner);
	str_set(&it->waits_on, o->waits_on);
	str_set(&it->held_by, o->held_by);
	str_set(&it->label, o->label);
	str_set(&it->blocked_in, o->blocked_in);
	str_set(&it->native_function, o->native_function);
	str_set(&it->idle, o->idle);
	it->not_started = o->not_started;
	note_cancelled(t, it, o, fresh);
	it->sleep = o->sleep;
	it->timeout = o->timeout;
	if (o->sleep.on && o->sleep.timed && o->sleep.known)
		it->slept = o->sleep;
	if (moved) {
		str_set(&it->blocked_on, NULL);
		if (it->reported)
			add_event(t, WATCH_EV_MOVED, (size_t)(it - t->items),
				  t->now - it->last_progress);
		it->reported = 0;
		it->last_progress = t->now;
	}
}

void watch_end(struct watch_tracker *t)
{
	size_t i;

	for (i = 0; i < t->nitems; i++) {
		struct watch_item *it = &t->items[i];
		double stuck;

		if (it->gone || it->carried)
			continue;
		if (!it->seen) {
			it->gone = 1;
			if (it->reported)
				add_event(t, WATCH_EV_GONE, i,
					  it->last_seen - it->last_progress);
			it->reported = 0;
			continue;
		}
		stuck = t->now - it->last_progress;
		/* Idle: waiting for work is what it is for. */
		if (!it->reported && stuck >= t->stuck_s && !it->idle) {
			it->reported = 1;
			add_event(t, WATCH_EV_STUCK, i, stuck);
		}
	}
}

void watch_set_blocked_on(struct watch_tracker *t, size_t i,
			  const char *text)
{
	if (i < t->nitems)
		str_set(&t->items[i].blocked_on, text);
}

double watch_stuck_for(const struct watch_tracker *t,
		       const struct watch_item *it)
{
	if (it->gone)
		return 0;
	return it->last_seen - it->last_progress;
}

int watch_stuck_at_least(const struct watch_tracker *t,
			 const struct watch_item *it)
{
	return it->first_seen <= t->first &&
	       it->last_progress <= it->first_seen;
}

double watch_busy(const struct watch_item *it)
{
	double share;

	if (it->kind != WATCH_THREAD || it->window_s <= 0)
		return 0;
	share = it->cpu_s / it->window_s;
	return share < 0 ? 0 : share > 1 ? 1 : share;
}

double watch_demand(const struct watch_item *it)
{
	double share;

	if (it->kind != WATCH_THREAD || it->wait_window_s <= 0 ||
	    it->wait_window_s < it->window_s)
		return -1;
	share = (it->cpu_s + it->wait_s) / it->window_s;
	return share > 1 ? 1 : share;
}

enum watch_state watch_state_of(const struct watch_tracker *t,
				const struct watch_item *it)
{
	enum watch_state progress = watch_progress_of(t, it);

	/* A task asleep is idle where it would be stuck; one looping on
	 * short sleeps is seen moving, active. */
	if (!it->gone && it->idle &&
	    !(it->sleep.on && progress != WATCH_STUCK))
		return WATCH_IDLE;
	return progress;
}

enum watch_state watch_progress_of(const struct watch_tracker *t,
				   const struct watch_item *it)
{
	if (it->gone)
		return WATCH_GONE;
	if (watch_stuck_for(t, it) >= t->stuck_s)
		return WATCH_STUCK;
	/* Its share is over the watch; one that has sat still since the
	 * sample before is not busy now (a loop busy for seconds, then
	 * parked in its selector for the last few samples: "busy, 34% of
	 * a CPU at selectors.py:468 in EpollSelector.select"). */
	if ((watch_busy(it) >= WATCH_BUSY_SHARE ||
	     watch_demand(it) >= WATCH_BUSY_DEMAND) &&
	    it->last_progress >= t->prev)
		return WATCH_BUSY;
	return WATCH_ACTIVE;
}

const char *watch_state_name(enum watch_state s)
{
	switch (s) {
	case WATCH_STUCK:
		return "stuck";
	case WATCH_BUSY:
		return "busy";
	case WATCH_GONE:
		return "gone";
	case WATCH_IDLE:
		return "idle";
	case WATCH_ACTIVE:
		break;
	}
	return "active";
}

const struct watch_item *watch_find(const struct watch_tracker *t,
				    enum watch_kind kind, uint64_t id)
{
	uintptr_t slot;

	if (id == 0 || (unsigned)kind >= WATCH_NKINDS)
		return NULL;
	slot = (uintptr_t)addrmap_get(&t->index[kind], id, NULL);
	return slot ? &t->items[slot - 1] : NULL;
}

/* qsort has no context argument: the tracker being sorted. */
static const struct watch_tracker *sort_tracker;

static int by_stuck(const void *pa, const void *pb)
{
	const struct watch_tracker *t = sort_tracker;
	const struct watch_item *a = &t->items[*(const size_t *)pa];
	const struct watch_item *b = &t->items[*(const size_t *)pb];
	double sa = watch_stuck_for(t, a), sb = watch_stuck_for(t, b);
	double ba = watch_busy(a), bb = watch_busy(b);

	if (a->gone != b->gone)
		return a->gone - b->gone;
	if (!a->idle != !b->idle)
		return a->idle ? 1 : -1;
	if (sa != sb)
		return sa < sb ? 1 : -1;
	if (ba != bb)
		return ba < bb ? 1 : -1;
	if (a->kind != b->kind)
		return (int)a->kind - (int)b->kind;
	return a->id < b->id ? -1 : a->id > b->id;
}

size_t watch_sorted(const struct watch_tracker *t, size_t *order)
{
	size_t i;

	for (i = 0; i < t->nitems; i++)
		order[i] = i;
	sort_tracker = t;
	qsort(order, t->nitems, sizeof(*order), by_stuck);
	sort_tracker = NULL;
	return t->nitems;
}
