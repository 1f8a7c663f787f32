#include "cli/json_writer.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "common/error.h"
#include "common/hugeheap.h"
#include "common/strbuf.h"
#include "common/banned.h"

/* Blocks in all: the producer's, and up to NBLOCKS - 1 queued, the
 * oldest of which is being written. */
#define NBLOCKS 4

struct json_writer {
	FILE *out;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t changed;   /* a block queued or written, or the end */
	char *mem;                /* the blocks, one after another */
	size_t mem_size;
	char *blocks[NBLOCKS];
	size_t len[NBLOCKS];
	/* blocks[head], ... (queued of them, in order, modulo NBLOCKS) wait
	 * to be written; the producer fills the one after them. */
	size_t head, queued;
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
		const char *b;
		size_t n;
		int skip;

		while (!w->queued && !w->done)
			pthread_cond_wait(&w->changed, &w->lock);
		if (!w->queued)
			break;
		b = w->blocks[w->head];
		n = w->len[w->head];
		skip = w->failed;
		pthread_mutex_unlock(&w->lock);
		if (!skip && n && fwrite(b, 1, n, w->out) != n) {
			int e = errno;

			pthread_mutex_lock(&w->lock);
			w->failed = 1;
			w->err = e ? e : EIO;
		} else {
			pthread_mutex_lock(&w->lock);
		}
		w->head = (w->head + 1) % NBLOCKS;
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
	munmap(w->mem, w->mem_size);
	free(w);
}

struct json_writer *json_writer_start(FILE *out, size_t block, char **first)
{
	struct json_writer *w = xcalloc(1, sizeof(*w));
	sigset_t all, old;
	size_t i;
	int ret;

	w->out = out;
	/* On huge pages: small ones would fault one by one as the blocks
	 * are first filled (~15 us each in a VM). */
	w->mem_size = hugeheap_size(NBLOCKS * block);
	w->mem = hugeheap_map(NBLOCKS * block);
	if (!w->mem)
		xdie_out_of_memory();
	for (i = 0; i < NBLOCKS; i++)
		w->blocks[i] = w->mem + i * block;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->changed, NULL);
	/* The signals coroscope handles (the detach guard's) stay with the
	 * main thread.  SIGPIPE belongs to the write that raised it, as it
	 * would have in the main thread: unblocked only where the caller
	 * had it so (`run` blocks it, to be told EPIPE instead). */
	pthread_sigmask(SIG_SETMASK, NULL, &old);
	sigfillset(&all);
	if (!sigismember(&old, SIGPIPE))
		sigdelset(&all, SIGPIPE);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	ret = pthread_create(&w->thread, NULL, write_blocks, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret != 0) {
		writer_free(w);
		return NULL;
	}
	*first = w->blocks[0];
	return w;
}

/* Queue the producer's block (the one after the queue); lock held. */
static void queue(struct json_writer *w, char *full, size_t len)
{
	size_t slot = (w->head + w->queued) % NBLOCKS;

	if (full != w->blocks[slot])
		CS_BUG("json_writer_swap() of a block it did not give out");
	w->len[slot] = len;
	w->queued++;
	pthread_cond_broadcast(&w->changed);
}

char *json_writer_swap(struct json_writer *w, char *full, size_t len)
{
	char *next;

	pthread_mutex_lock(&w->lock);
	queue(w, full, len);
	while (w->queued == NBLOCKS)
		pthread_cond_wait(&w->changed, &w->lock);
	next = w->blocks[(w->head + w->queued) % NBLOCKS];
	pthread_mutex_unlock(&w->lock);
	return next;
}

int json_writer_stop(struct json_writer *w, char *last, size_t len)
{
	int failed, err;

	pthread_mutex_lock(&w->lock);
	if (last && len)
		queue(w, last, len);
	w->done = 1;
	pthread_cond_broadcast(&w->changed);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	failed = w->failed;
	err = w->err;
	writer_free(w);
	if (failed) {
		errno = err;
		return -1;
	}
	return 0;
}
