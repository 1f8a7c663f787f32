/*
 * A live process's file descriptor in words, for run's causes
 * (cli/run_fds.c): "a TCP connection 10.0.0.2:51234 -> 10.0.0.9:80
 * (established)", "a pipe whose write end is held by process 1235
 * (sleep) as fd 1".
 */
#ifndef COROSCOPE_CLI_RUN_FDS_H
#define COROSCOPE_CLI_RUN_FDS_H

#include <stdint.h>

#include "cli/run_causes.h"

/* "process 12 (sleep)": its pid and comm (escaped), the comm left out
 * where it cannot be read. */
void run_fds_add_process(struct strbuf *sb, long pid);

/* sep then what fd of process self (its files at /proc/pid) is, when a
 * socket found in the process's tables or a pipe (with the processes of
 * s's tree holding its write end, three at most, self first): 0, else
 * -1 with nothing added. */
int run_fds_describe(struct strbuf *sb, const char *sep,
		     const struct run_summary *s, int self, int pid, int fd);
/* "fd 7: a TCP connection ...", a detail of cause for fd of live
 * process pid (what a task waits to read: asyncio's StreamReader,
 * trio's I/O manager; its files at /proc/s->proc_pid where that is
 * set): 1 when added. */
int run_fds_detail(struct run_cause *cause, const struct run_summary *s,
		   int pid, int64_t fd, struct strbuf *sb);

#endif
