/*
 * `coroscope run`'s causes for threads blocked reading a socket or a
 * pipe, or waiting for a child in wait4(2) (cli/run_reads.c): the
 * commonest hang of a client, a peer that never answers (an HTTP
 * request without a timeout), which no Python object the wait-for
 * graph sees waits on.
 */
#ifndef COROSCOPE_CLI_RUN_READS_H
#define COROSCOPE_CLI_RUN_READS_H

#include "cli/collect.h"
#include "cli/run_causes.h"
#include "cli/watch_track.h"
#include "common/procfs_locks.h"

/* Add c's causes of kind RUN_CAUSE_READ (a thread blocked reading a
 * socket or pipe), RUN_CAUSE_FILE_LOCK (taking a file's lock) and
 * RUN_CAUSE_WAIT (one in wait4(2) for a child) to
 * s; t: the samples' tracker (only threads they saw stuck), or NULL
 * (none then). */
void run_summarize_reads(struct run_summary *s, const struct collection *c,
			 const struct watch_tracker *t);

/* " blocked reading fd 7, a TCP connection ... (established)", " waits
 * for child process 12 (sleep) to end", " blocked locking fd 3, ...",
 * " waits for a connection on fd 3, ...", with polls (not NULL) " blocked
 * in select() on fd 3, ..." (cli/run_polls.h): what thread tid of live
 * process c (its files at /proc/pid) waits for in the system call it
 * sits in, into sb, a file lock's holder into *holder (pid 0 for none);
 * s names the holders of a pipe's write end (its tree).  The cause's
 * kind, or -1 with sb as it was. */
struct run_polls_ask;
int run_reads_call(struct strbuf *sb, const struct run_summary *s,
		   const struct collection *c, int pid, int tid,
		   const struct run_polls_ask *polls,
		   struct procfs_lock *holder);

/* For Process node `node` of c's graph (a Popen, a multiprocessing
 * Process) whose process ended (a zombie not reaped, or gone): a detail
 * line of cause for each thread waiting on it that is blocked reading a
 * pipe (communicate() reads the output to its end, which a grandchild
 * holding the write end keeps from coming; a multiprocessing join()
 * polls the process's sentinel), with who holds that end. */
void run_reads_exited_child(struct run_cause *cause,
			    const struct run_summary *s,
			    const struct collection *c, size_t node,
			    struct strbuf *sb);

/* The call thread tid of c sits in and its first three arguments: from
 * its registers at the dump's stop, where that interrupted one; else
 * from /proc/pid after the resume.  0, or -1 when neither says. */
int run_thread_call(const struct collection *c, int pid, int tid, long *nr,
		    unsigned long long args[3]);

/* run_fds_detail() for fd of c, when c is a live process's (an
 * asyncio StreamReader's socket). */
int run_reads_socket_detail(struct run_cause *cause,
			    const struct run_summary *s,
			    const struct collection *c, int64_t fd,
			    struct strbuf *sb);
/* The same for the socket graph node `node` of c (a task or greenlet)
 * is parked reading or writing in a library's stream or gevent's
 * socket call, when it is one: "fd 11: a TCP socket ...".  With
 * streams, also an asyncio StreamReader's it waits on (the graph's
 * object, which the cause of its waiters says itself). */
void run_reads_unit_fd(struct run_cause *cause, const struct run_summary *s,
		       const struct collection *c, size_t node, int streams,
		       struct strbuf *sb);
/* For thread node `node` of live c's graph blocked reading a socket
 * or a pipe (in C: a recv() the graph sees no object of), a detail line
 * "thread 13 (poller) blocked reading fd 4, a TCP connection ...": the
 * peer a thread joined, or a job's thread, waits for. */
void run_reads_unit_call(struct run_cause *cause,
			 const struct run_summary *s,
			 const struct collection *c, size_t node,
			 struct strbuf *sb);
/* The sockets tasks waiting on graph node `node` read through a
 * library's stream (an anyio SocketStream's Event, aiohttp's
 * DataQueue): a detail each, for the first few. */
void run_reads_waiter_fds(struct run_cause *cause,
			  const struct run_summary *s,
			  const struct collection *c, size_t node,
			  struct strbuf *sb);

#endif
