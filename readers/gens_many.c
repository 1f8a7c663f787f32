#include "readers/gens_many.h"

#include <stdatomic.h>
#include <string.h>

#include "attach/memsrc.h"
#include "readers/code.h"
#include "readers/pyproc.h"
#include "common/jobs.h"
#include "common/util.h"
#include "common/banned.h"

/*
 * Below this many, a thread (~0.1 ms to start) and a second set of
 * caches cost more than half the reading saves.
 */
#define MANY_MIN 4096
/* Generators a thread takes at a time.  The walk's order is the heap's:
 * its first half, the oldest objects, spans twice the pages of the
 * second, so halves fixed in advance left one thread waiting. */
#define BLOCK 256
/* Generators whose memory is asked for ahead of their reading, and how
 * much of each: the object with its frame's head (3.11+'s frame is
 * part of it). */
#define AHEAD 8
#define GEN_BYTES 256

struct reader {
	struct pyproc *py;
	unsigned memsrc_slot;
	unsigned char mark;       /* what ok[i] is set to */
	struct shared *sh;
};

struct shared {
	size_t n;
	_Atomic size_t next;      /* the first generator no thread took */
	py_gen_at_fn *at;
	const void *ctx;
	const struct py_stack_options *opt;
	struct py_gen *gens;
	unsigned char *ok;
};

static void *read_blocks(void *arg)
{
	/* Copied once, as cli/report.c's json_generators() copies its
	 * argument: both structures are on the stack of the thread that
	 * started this job, beside the frames its calls write, and reading
	 * them each time round could fetch those lines from the other CPU
	 * (measured in the report; within noise here). */
	const struct reader r = *(const struct reader *)arg;
	struct shared *sh = r.sh;
	const struct shared s = { sh->n, 0, sh->at, sh->ctx, sh->opt,
				  sh->gens, sh->ok };

	memsrc_thread(r.memsrc_slot);
	/* Each round takes BLOCK more: bounded by n / BLOCK + 1. */
	for (;;) {
		size_t from = atomic_fetch_add(&sh->next, BLOCK), i;

		if (from >= s.n)
			break;
		for (i = from; i < s.n && i < from + BLOCK; i++) {
			uint64_t addr;
			enum py_code_kind kind;

			/* Each generator a cache miss or more (the object
			 * and its frame): ask for later ones' meanwhile. */
			if (i + AHEAD < s.n && i + AHEAD < from + BLOCK) {
				s.at(s.ctx, i + AHEAD, &addr, &kind);
				memsrc_prefetch(r.py->ms, addr, GEN_BYTES);
			}
			s.at(s.ctx, i, &addr, &kind);
			if (py_gen_read_raw(r.py, addr, kind, s.opt,
					    &s.gens[i], NULL) == 0) {
				s.ok[i] = r.mark;
			} else {
				s.ok[i] = 0;
				py_gen_release(&s.gens[i]);
			}
		}
	}
	return NULL;
}

/* The original's code object for one the clone read (the same address;
 * read by py now if it has not met it): frames are told apart, and
 * alike generators grouped, by their code objects. */
static void adopt_code(struct pyproc *py, const struct py_code **code)
{
	const struct py_code *mine;

	if (*code && py_code_get(py, (*code)->addr, &mine, NULL) == 0)
		*code = mine;
}

void py_gens_read_many(struct pyproc *py, size_t n, py_gen_at_fn *at,
		       const void *ctx, const struct py_stack_options *opt,
		       struct py_gen *gens, unsigned char *ok,
		       struct pyproc **helper, py_gens_first_fn *first,
		       void *fctx)
{
	struct shared sh = { n, 0, at, ctx, opt, gens, ok };
	struct reader main_reader = { py, 0, 1, &sh }, second;
	struct cs_job *job;
	size_t i;
	int threaded = 0;

	*helper = NULL;
	/*
	 * Only a captured source: every page the readers need of what may
	 * change is in the cache, so the two threads mostly share pages
	 * found there, and a full cache (never dropped while shared) is
	 * read again by the caller, stopped, as after any page the capture
	 * missed.
	 */
	if (n >= MANY_MIN && py->ms->frozen != MEMSRC_LIVE && cs_cpus() >= 2) {
		second.py = pyproc_clone(py);
		second.memsrc_slot = 1;
		second.mark = 2;
		second.sh = &sh;
		memsrc_share(py->ms, 1);
		threaded = cs_job_start(&job, read_blocks, &second, 0) == 0;
		if (!threaded) {
			memsrc_share(py->ms, 0);
			pyproc_clone_free(second.py);
		}
	}
	if (first)
		first(fctx);
	read_blocks(&main_reader);
	if (!threaded)
		return;
	(void)cs_job_join(job);
	memsrc_share(py->ms, 0);
	for (i = 0; i < n; i++) {
		if (ok[i] != second.mark)
			continue;
		adopt_code(py, &gens[i].code);
		if (gens[i].has_frame)
			adopt_code(py, &gens[i].frame.code);
	}
	*helper = second.py;
}
