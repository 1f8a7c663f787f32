/*
 * One sample of `coroscope watch` (or of any command that samples a
 * process over time) reduced to tracker observations: the threads and
 * tasks (and generators no task owns, and greenlets) of a collection,
 * and what the kernel accounted to each thread between two samples.
 *
 * For each sample:
 *	watch_cpu_read(&now, pid);          just before collect_live()
 *	collect_live(&c, pid, ...);
 *	watch_feed(&tracker, now_s, &c, &before, &now, probe_ms);
 *	collection_release(&c);
 *	watch_cpu_read(&before, pid);       just after: the target runs on
 * so that the window the kernel's figures cover leaves our stop out.
 */
#ifndef COROSCOPE_CLI_WATCH_SAMPLE_H
#define COROSCOPE_CLI_WATCH_SAMPLE_H

#include "cli/collect.h"
#include "cli/watch_cpu.h"
#include "cli/watch_track.h"

/*
 * watch_begin(), an observation per thread and task of c, watch_end().
 * before: read after the previous sample (empty for the first one);
 * now: read just before this one.  c must not be released yet (a short
 * asyncio.sleep is told by reading the frame's locals from its copy).
 * For up to probe_ms (0: not at all) it then watches, without stopping
 * the target, the tasks that look unchanged for a wake-up that left no
 * trace in the sample (cli/watch_probe.h).
 */
void watch_feed(struct watch_tracker *t, double now_s, struct collection *c,
		const struct watch_cpu *before, const struct watch_cpu *now,
		double probe_ms);

/* What changes when a task moves: what it awaits, and its chain of
 * coroutines with their frames and lines. */
uint64_t watch_task_fingerprint(const struct py_async *a,
				const struct py_task *task);

#endif
