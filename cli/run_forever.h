/*
 * `coroscope run`: a main task that waits for ever by design, on an
 * Event it made at that line, which nothing else can reach to set
 * (`await asyncio.Event().wait()`, as tornado's and aiohttp's guides
 * serve for ever).  Its cause is idle, ranked last, not what holds up
 * the program: the server's stuck handlers are.
 */
#ifndef COROSCOPE_CLI_RUN_FOREVER_H
#define COROSCOPE_CLI_RUN_FOREVER_H

#include <stddef.h>

#include "cli/collect.h"
#include "cli/run_causes.h"

struct strbuf;

/* Is graph node obj such an Event, waited on by w[0..nw): one task,
 * whose line (its source, read: never with --no-source) awaits the
 * wait() of an Event it makes there? */
int run_forever_by_design(const struct collection *c, size_t obj,
			  const size_t *w, size_t nw);

/* The cause's detail that says so. */
void run_forever_detail(struct run_cause *cause, struct strbuf *sb);

#endif
