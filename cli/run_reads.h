/*
 * `coroscope run`'s causes for threads blocked reading a socket
 * (cli/run_reads.c): the commonest hang of a client, a peer that never
 * answers (an HTTP request without a timeout), which no Python object
 * the wait-for graph sees waits on.
 */
#ifndef COROSCOPE_CLI_RUN_READS_H
#define COROSCOPE_CLI_RUN_READS_H

#include "cli/collect.h"
#include "cli/run_causes.h"
#include "cli/watch_track.h"

/* Add c's causes of kind RUN_CAUSE_READ to s; t: the samples' tracker
 * (only threads they saw stuck), or NULL (none then). */
void run_summarize_reads(struct run_summary *s, const struct collection *c,
			 const struct watch_tracker *t);

/* "fd 7: a TCP connection 10.0.0.2:51234 -> 10.0.0.9:80 (established)"
 * ("fd 3: a pipe whose write end is held by ..."), a detail of cause for
 * fd of live process pid when it is a socket found in the process's
 * tables or a pipe (what a task waits to read: asyncio's StreamReader,
 * trio's wait_readable()): 1 when added. */
int run_reads_fd_detail(struct run_cause *cause,
			const struct run_summary *s, int pid, int64_t fd,
			struct strbuf *sb);
/* The same for fd of c, when c is a live process's. */
int run_reads_socket_detail(struct run_cause *cause,
			    const struct run_summary *s,
			    const struct collection *c, int64_t fd,
			    struct strbuf *sb);

#endif
