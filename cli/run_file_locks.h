/*
 * A thread blocked taking a file lock, in run's words (cli/
 * run_file_locks.c): the file, the call, and the process holding the
 * lock as /proc/locks names it, with where that process is when `run`
 * dumped it.
 */
#ifndef COROSCOPE_CLI_RUN_FILE_LOCKS_H
#define COROSCOPE_CLI_RUN_FILE_LOCKS_H

#include "cli/run_causes.h"
#include "common/procfs_locks.h"

struct strbuf;
struct collection;

/* ", /tmp/app.lock, with flock(): held exclusively by process 1235
 * (python3) as its fd 3": what fd of live process pid (c's, its files
 * at /proc/pid) waits for in system call `call` (ofd: an OFD lock's
 * F_OFD_SETLKW), its lock into *holder, whose pid is the holding
 * process found (0 when none is named; s: the tree looked through for
 * one sharing a flock()'s open file).  0, or -1 with nothing added when
 * fd cannot be read. */
int run_file_lock_describe(struct strbuf *sb, const struct run_summary *s,
			   const struct collection *c, int pid, int fd,
			   const char *call, int ofd,
			   struct procfs_lock *holder);

/* The cause's detail for *holder (run_file_lock_describe()'s): where a
 * Python process of s's tree holding it is, another's command line,
 * why a process can wait for its own flock(). */
void run_file_lock_detail(struct run_cause *cause,
			  const struct run_summary *s,
			  const struct collection *c,
			  const struct procfs_lock *holder, struct strbuf *sb);

/* "holder: process 1235, thread 1235 "MainThread" at app.py:4 in hold:
 * SOURCE": a thread of a Python process of the tree, at its own line. */
struct py_thread;
void run_add_python_holder(struct strbuf *sb, const struct collection *hc,
			   const struct py_thread *th);

#endif
