/*
 * `coroscope run`'s causes for threads of the program's own code asleep
 * in time.sleep() all along the samples (cli/run_sleeps.c): a test that
 * polls for a file that never appears, a forgotten long sleep.
 */
#ifndef COROSCOPE_CLI_RUN_SLEEPS_H
#define COROSCOPE_CLI_RUN_SLEEPS_H

#include "cli/collect.h"
#include "cli/run_causes.h"
#include "cli/watch_track.h"

/* Add c's causes of kind RUN_CAUSE_SLEEP to s (its facts: s->facts,
 * the sleeps' timers); t: the samples' tracker (only threads they saw
 * stuck), or NULL (none then). */
void run_summarize_sleeps(struct run_summary *s, const struct collection *c,
			  const struct watch_tracker *t);

#endif
