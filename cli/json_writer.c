#include "cli/json_writer.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "common/jobs.h"
#include "common/error.h"
#include "common/hugeheap.h"
#include "common/strbuf.h"
#include "common/banned.h"

/* Blocks of the writer's own: the producer's, and up to NBLOCKS - 1
 * queued, the oldest of which is being written. */
#define NBLOCKS 4
/* Queued blocks at most, own and handed over (json_writer_hand()); and
 * bytes of handed-over blocks queued at most (one block may exceed it):
 * a part that makes its blocks faster than a file or a pipe takes them
 * waits rather than mapping more. */
#define QUEUE_MAX 64
#define HANDED_MAX ((size_t)32 << 20)

struct queued {
	const char *p;
	size_t len;
	size_t keep;              /* a handed-over block's mapping, else 0 */
	char *own;                /* an own block, back to `spare` once written */
};

struct json_writer {
	FILE *out;
	struct cs_job *job;
	pthread_mutex_t lock;
	pthread_cond_t changed;   /* a block queued or written, or the end */
	char *mem;                /* the own blocks, one after another */
	size_t mem_size, block;
	char *spare[NBLOCKS];     /* own blocks neither queued nor filled */
	size_t nspare;
	/* q[head], ... (queued of them, in order, modulo QUEUE_MAX) wait to
	 * be written. */
	struct queued q[QUEUE_MAX];
	size_t head, queued;
	size_t handed;            /* bytes of handed-over blocks queued */
	int done;                 /* nothing more will be queued */
	int failed, err;          /* a write failed, with this errno */
};

static void *write_blocks(void *arg)
{
	struct json_writer *w = arg;

	pthread_mutex_lock(&w->lock);
	/* Each round writes one queued block; it ends once the producer
	 * said it is done and the queue is empty. */
	for (;;) {
		struct queued b;
		int skip;

		while (!w->queued && !w->done)
			pthread_cond_wait(&w->changed, &w->lock);
		if (!w->queued)
			break;
		b = w->q[w->head];
		skip = w->failed;
		pthread_mutex_unlock(&w->lock);
		if (!skip && b.len && fwrite(b.p, 1, b.len, w->out) != b.len) {
			int e = errno;

			pthread_mutex_lock(&w->lock);
			w->failed = 1;
			w->err = e ? e : EIO;
		} else {
			pthread_mutex_lock(&w->lock);
		}
		if (b.keep) {
			hugeheap_keep((void *)b.p, b.keep);
			w->handed -= b.keep;
		}
		if (b.own)
			w->spare[w->nspare++] = b.own;
		w->head = (w->head + 1) % QUEUE_MAX;
		w->queued--;
		pthread_cond_broadcast(&w->changed);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Everything json_writer_start() set up, once its thread is gone. */
static void writer_free(struct json_writer *w)
{
	pthread_cond_destroy(&w->changed);
	pthread_mutex_destroy(&w->lock);
	hugeheap_keep(w->mem, w->mem_size);
	free(w);
}

struct json_writer *json_writer_start(FILE *out, size_t block, char **first)
{
	struct json_writer *w = xcalloc(1, sizeof(*w));
	size_t i;

	w->out = out;
	/* On huge pages: small ones would fault one by one as the blocks
	 * are first filled (~15 us each in a VM); and kept ones where
	 * there are (see common/hugeheap.h). */
	w->mem_size = hugeheap_size(NBLOCKS * block);
	w->mem = hugeheap_take(NBLOCKS * block);
	if (!w->mem)
		xdie_out_of_memory();
	w->block = block;
	/* The first block goes to the producer now. */
	for (i = 1; i < NBLOCKS; i++)
		w->spare[w->nspare++] = w->mem + i * block;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->changed, NULL);
	/* SIGPIPE as the caller has it, as a write in the main thread would
	 * have (`run` blocks it, to be told EPIPE instead). */
	if (cs_job_start(&w->job, write_blocks, w, 1) != 0) {
		writer_free(w);
		return NULL;
	}
	*first = w->mem;
	return w;
}

/* Queue a block, waiting for room in the queue; lock held. */
static void queue(struct json_writer *w, const char *p, size_t len,
		  size_t keep, char *own)
{
	struct queued *b;

	while (w->queued == QUEUE_MAX ||
	       (keep && w->handed && w->handed + keep > HANDED_MAX))
		pthread_cond_wait(&w->changed, &w->lock);
	w->handed += keep;
	b = &w->q[(w->head + w->queued) % QUEUE_MAX];
	b->p = p;
	b->len = len;
	b->keep = keep;
	b->own = own;
	w->queued++;
	pthread_cond_broadcast(&w->changed);
}

static void check_own(const struct json_writer *w, const char *full)
{
	if (full < w->mem || full >= w->mem + NBLOCKS * w->block ||
	    (size_t)(full - w->mem) % w->block)
		CS_BUG("json_writer_swap() of a block it did not give out");
}

char *json_writer_swap(struct json_writer *w, char *full, size_t len)
{
	char *next;

	check_own(w, full);
	pthread_mutex_lock(&w->lock);
	queue(w, full, len, 0, full);
	while (!w->nspare)
		pthread_cond_wait(&w->changed, &w->lock);
	next = w->spare[--w->nspare];
	pthread_mutex_unlock(&w->lock);
	return next;
}

void json_writer_hand(struct json_writer *w, char *mem, size_t len,
		      size_t map_size)
{
	pthread_mutex_lock(&w->lock);
	queue(w, mem, len, map_size, NULL);
	pthread_mutex_unlock(&w->lock);
}

int json_writer_stop(struct json_writer *w, char *last, size_t len)
{
	int failed, err;

	if (last)
		check_own(w, last);
	pthread_mutex_lock(&w->lock);
	if (last && len)
		queue(w, last, len, 0, last);
	w->done = 1;
	pthread_cond_broadcast(&w->changed);
	pthread_mutex_unlock(&w->lock);
	(void)cs_job_join(w->job);
	failed = w->failed;
	err = w->err;
	writer_free(w);
	if (failed) {
		errno = err;
		return -1;
	}
	return 0;
}
