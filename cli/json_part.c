#include "cli/json_part.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cli/json_writer.h"
#include "common/jobs.h"
#include "common/error.h"
#include "common/hugeheap.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

/*
 * Parts made by another thread.  A 10k-task dump is 34 MB of JSON, half
 * of its time spent making it; its "tasks" and "generators" arrays are
 * about the same size and made from data nothing changes any more, so
 * a second core makes the one while the first makes the other.
 *
 * Until the join the part's bytes wait in chunks on huge pages (small
 * pages would fault one by one as they fill), cut from kept memory
 * (hugeheap_take(): the page cache's, given up before the report) where
 * there is some, and given back to it once written; at most PART_AHEAD
 * of them: a 100k-task dump's generators are 130 MB, which coroscope
 * would hold at once (and pay for as fresh memory).  A part that gets
 * that far ahead waits for the join.  From the join on, with a writer thread,
 * the chunks are queued on it as they fill (the joining thread waits
 * for the part to end before it writes on); without one, they are kept
 * and copied once the part ends.  (A part the joining thread of the part
 * before it makes, meanwhile, keeps them all until its own join: that
 * thread cannot wait for itself.)
 */
#define PART_CHUNK ((size_t)2 << 20)
#define PART_AHEAD ((size_t)32 << 20)
/* Kept memory (hugeheap_kept()) enough for a part on two CPUs: a
 * 10k-task dump's generators take 6 chunks. */
#define PART_KEPT_MIN (4 * PART_CHUNK)

struct part_chunk {
	char *mem;
	size_t len;
};

struct json_part {
	struct json j;            /* the part's writer: j.part points back */
	json_part_fn *fn;
	const void *arg;
	int depth;                /* where it goes in the document */
	int threaded;
	/* The job that makes it, to be joined at its join; NULL for a part
	 * made after another on that one's thread (json_part_start_after()),
	 * whose job the last part of the chain joins. */
	struct cs_job *job;
	pthread_mutex_t lock;
	pthread_cond_t joined;
	/* The part the same job makes next (attached while this one is
	 * being made), and, set once this one's fn has returned, ended:
	 * from then on no part is attached to it. */
	struct json_part *next;
	int ended;
	pthread_cond_t end;
	/* A part attached after another (attached): begun, by that one's
	 * job or by the thread joining that one (under that one's lock).
	 * helped: by the joining thread, which waits for nothing while
	 * making it (its chunks are all kept until its own join, past
	 * PART_AHEAD: the graph's part, the one helped, is a tenth of a
	 * document). */
	int attached;
	int taken;
	int helped;
	/* Set at the join: the writer thread the chunks go to from then
	 * on, or, without one, keep them all. */
	int released;
	struct json_writer *to;
	struct part_chunk *chunks;  /* full ones waiting, in order */
	size_t nchunks, achunks;
};

static void part_map_chunk(struct json *j)
{
	j->buf = hugeheap_take(PART_CHUNK);
	if (!j->buf)
		xdie_out_of_memory();
	j->cap = PART_CHUNK;
	j->len = 0;
}

static void part_hand(struct json_writer *w, const struct part_chunk *c)
{
	json_writer_hand(w, c->mem, c->len, hugeheap_size(PART_CHUNK));
}

/* json_flush() of a part: keep the full chunk (or, once released to a
 * writer thread, queue it there), go on in a new one. */
void json_part_next_chunk(struct json *j)
{
	struct json_part *p = j->part;
	struct part_chunk c = { j->buf, j->len };

	if (!j->len)
		return;
	pthread_mutex_lock(&p->lock);
	while (!p->released && !p->helped &&
	       p->nchunks * PART_CHUNK >= PART_AHEAD)
		pthread_cond_wait(&p->joined, &p->lock);
	if (p->to) {
		part_hand(p->to, &c);
	} else {
		p->chunks = xgrow(p->chunks, &p->achunks, p->nchunks + 1,
				  sizeof(*p->chunks));
		p->chunks[p->nchunks++] = c;
	}
	pthread_mutex_unlock(&p->lock);
	part_map_chunk(j);
}

/* A job: its part, then each one attached after it. */
static void *part_run(void *arg)
{
	struct json_part *p = arg, *next;

	/* Bounded by the parts attached, each once, before its
	 * predecessor ended. */
	while (p) {
		p->fn(&p->j, p->arg);
		pthread_mutex_lock(&p->lock);
		p->ended = 1;
		next = p->next;
		if (next && next->taken)
			next = NULL;  /* its joiner's thread made it */
		else if (next)
			next->taken = 1;
		pthread_cond_broadcast(&p->end);
		/* p may be joined and freed from here on */
		pthread_mutex_unlock(&p->lock);
		p = next;
	}
	return NULL;
}

int json_parts_worth_it(int at_once)
{
	if (cs_cpus() >= 3)
		return 1;
	return cs_cpus() == 2 && at_once == 1 &&
	       hugeheap_kept() >= PART_KEPT_MIN;
}

static struct json_part *part_new(const struct json *j, json_part_fn *fn,
				  const void *arg)
{
	struct json_part *p = xcalloc(1, sizeof(*p));

	p->fn = fn;
	p->arg = arg;
	p->depth = j->depth;
	if (j->depth <= 0)
		CS_BUG("a json part outside any object or array");
	json_init(&p->j, NULL, j->pretty);
	/* where j is: the same depth and indent */
	p->j.depth = j->depth;
	p->j.indent = j->indent;
	p->j.need_comma[j->depth] = 1;
	p->j.part = p;
	part_map_chunk(&p->j);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->joined, NULL);
	pthread_cond_init(&p->end, NULL);
	return p;
}

struct json_part *json_part_start(const struct json *j, json_part_fn *fn,
				  const void *arg)
{
	struct json_part *p = part_new(j, fn, arg);

	/* It writes nothing to any stream. */
	p->threaded = cs_job_start(&p->job, part_run, p, 0) == 0;
	return p;
}

struct json_part *json_part_start_after(const struct json *j,
					struct json_part *after,
					json_part_fn *fn, const void *arg)
{
	struct json_part *p = part_new(j, fn, arg);
	int attached = 0;

	/* Not after a part itself attached: a join that makes that one
	 * (json_part_join()) makes no part after it. */
	if (after->threaded && !after->attached) {
		pthread_mutex_lock(&after->lock);
		if (!after->ended && !after->next && after->job) {
			after->next = p;
			p->attached = 1;
			/* The chain's job now ends with p. */
			p->job = after->job;
			after->job = NULL;
			attached = 1;
		}
		pthread_mutex_unlock(&after->lock);
	}
	if (attached)
		p->threaded = 1;
	else if (after->threaded)  /* too late: a job of its own (a
				      second thread for parts, which only
				      costs time) */
		p->threaded = cs_job_start(&p->job, part_run, p, 0) == 0;
	return p;
}

/* Make q, attached after a part still being made, on this thread.  (No
 * broadcast of its end: only its join waits for it, on this thread.) */
static void make_helped(struct json_part *q)
{
	q->helped = 1;
	q->fn(&q->j, q->arg);
	pthread_mutex_lock(&q->lock);
	q->ended = 1;
	pthread_mutex_unlock(&q->lock);
}

void json_part_join(struct json *j, struct json_part *p)
{
	struct json_part *help;
	struct part_chunk last;
	size_t i;

	if (j->depth != p->depth || j->need_comma[j->depth] != 1)
		CS_BUG("a json part joined at depth %d (made for %d, after "
		       "a member)", j->depth, p->depth);
	if (!p->threaded) {
		p->fn(j, p->arg);
	} else {
		/* What j made so far goes first (a writer thread may start
		 * here, a large document's first block being full). */
		json_flush(j);
		pthread_mutex_lock(&p->lock);
		if (j->writer) {
			for (i = 0; i < p->nchunks; i++)
				part_hand(j->writer, &p->chunks[i]);
			p->nchunks = 0;
			p->to = j->writer;
		}
		p->released = 1;
		pthread_cond_broadcast(&p->joined);
		/* The part after it, while p is still being made and that
		 * one not begun, is made here meanwhile rather than after
		 * p on p's thread, with this one's CPU idle. */
		help = p->next && !p->ended && !p->next->taken ? p->next : NULL;
		if (help)
			help->taken = 1;
		pthread_mutex_unlock(&p->lock);
		if (help)
			make_helped(help);
		pthread_mutex_lock(&p->lock);
		/* Its own end: a job may go on with the part after it. */
		while (!p->ended)
			pthread_cond_wait(&p->end, &p->lock);
		pthread_mutex_unlock(&p->lock);
		if (p->job)
			(void)cs_job_join(p->job);
		if (p->j.depth != p->depth)
			CS_BUG("a json part left open");
		/* Kept chunks (no writer thread): copied through j. */
		for (i = 0; i < p->nchunks; i++) {
			json_raw(j, p->chunks[i].mem, p->chunks[i].len, 1);
			hugeheap_keep(p->chunks[i].mem, PART_CHUNK);
		}
		last.mem = p->j.buf;
		last.len = p->j.len;
		json_raw(j, last.mem, last.len, 1);
	}
	hugeheap_keep(p->j.buf, PART_CHUNK);
	pthread_cond_destroy(&p->end);
	pthread_cond_destroy(&p->joined);
	pthread_mutex_destroy(&p->lock);
	free(p->chunks);
	free(p);
}
