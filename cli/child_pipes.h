/*
 * The classic subprocess deadlocks: a process waits for its child to end
 * (Popen.wait(), a multiprocessing join) while the child is blocked
 * writing to a pipe -- its stdout or stderr -- whose read end the
 * waiting process holds and does not read; or blocked reading one -- its
 * stdin, until EOF -- whose write end the waiting process holds open.  Read from /proc for a live
 * target's children the wait-for graph has it wait for (not a core's,
 * nor across PID namespaces, where the pid the target names is another
 * process here).
 */
#ifndef COROSCOPE_CLI_CHILD_PIPES_H
#define COROSCOPE_CLI_CHILD_PIPES_H

#include <stddef.h>
#include <stdint.h>

#include "common/procfs.h"
#include "readers/waitgraph.h"

struct child_pipe {
	int64_t pid;      /* the child */
	int child_fd;     /* the fd its write(2) or writev(2) is blocked on,
			     or its read(2) or readv(2) (reading) */
	int our_fd;       /* the target's fd on the pipe's read end (the
			     write end when reading) */
	int reading;      /* blocked reading a pipe the target could write
			     to or close, not writing to one */
};

/* The children of process pid that the graph's processes name, blocked
 * writing to a pipe pid holds the read end of (or else reading one it
 * holds the write end of): a malloc'd array (free it), how many in *n. */
struct child_pipe *child_pipes_probe(int pid, const struct py_waitgraph *g,
				     size_t *n);
/* pid's fd on the read end (mode O_RDONLY) or the write end (O_WRONLY)
 * of pipe ("pipe:[ino]", an fd's /proc link), or -1. */
int child_pipes_end(int pid, const char *pipe, int want);
/* The entry of child `child` in v[0..n), or NULL. */
const struct child_pipe *child_pipe_of(const struct child_pipe *v, size_t n,
				       int64_t child);

/* "; blocked writing to its stdout, a pipe this process holds the read
 * end of as fd 3" ("; blocked reading its stdin, a pipe this process
 * holds the write end of as fd 4") after a child process's state;
 * nothing for NULL. */
struct strbuf;
void child_pipe_say(struct strbuf *st, const struct child_pipe *cp);

/*
 * The other side: what a thread of the target left running, asleep in a
 * write (attach/live.h), writes to, and for a pipe, whether the target
 * itself or its parent holds the read end (the two that deadlock with
 * it: a pipe it means to read later, a Popen(stdout=PIPE) parent that
 * waits for it first), else which sibling (a shell pipeline's next
 * command, which does not read).  Read from /proc after the resume.
 */
enum left_file { LEFT_FILE_OTHER, LEFT_FILE_PIPE, LEFT_FILE_SOCKET };

struct left_pipe {
	int tid;              /* the thread left running */
	enum left_file file;  /* OTHER too when the thread is no longer in
				 that call on that fd (it may be reused) */
	int self_fd;          /* the target's fd on the read end, or -1 */
	int parent_pid;       /* its parent, when that holds the read end
				 (after a fork, both may), else 0 */
	int parent_fd;
	char parent_comm[PROCFS_COMM_MAX];  /* the parent's name */
	/* Where neither holds it: another child of its parent that does
	 * (`python app.py | sleep 1000` under a shell), else 0. */
	int sibling_pid;
	int sibling_fd;
	char sibling_comm[PROCFS_COMM_MAX];
	/* The writer was not woken from the survey to the probe: nothing
	 * freed room in the pipe, so no holder read from it meanwhile. */
	int unread;
};

struct memsrc;
/* For each thread of ms left running: a malloc'd array (free it), how
 * many in *n.  pid: the target's, in our namespace. */
struct left_pipe *left_pipes_probe(int pid, const struct memsrc *ms,
				   size_t *n);
/* The entry of thread tid in v[0..n), or NULL. */
const struct left_pipe *left_pipe_of(const struct left_pipe *v, size_t n,
				     int tid);

#endif
