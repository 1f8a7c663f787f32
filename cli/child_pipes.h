/*
 * The classic subprocess deadlock: a process waits for its child to end
 * (Popen.wait(), a multiprocessing join) while the child is blocked
 * writing to a pipe -- its stdout or stderr -- whose read end the
 * waiting process holds and does not read.  Read from /proc for a live
 * target's children the wait-for graph has it wait for (not a core's,
 * nor across PID namespaces, where the pid the target names is another
 * process here).
 */
#ifndef COROSCOPE_CLI_CHILD_PIPES_H
#define COROSCOPE_CLI_CHILD_PIPES_H

#include <stddef.h>
#include <stdint.h>

#include "readers/waitgraph.h"

struct child_pipe {
	int64_t pid;      /* the child */
	int child_fd;     /* the fd its write(2) or writev(2) is blocked on */
	int our_fd;       /* the target's fd on the pipe's read end */
};

/* The children of process pid that the graph's processes name, blocked
 * writing to a pipe pid holds the read end of: a malloc'd array (free
 * it), how many in *n. */
struct child_pipe *child_pipes_probe(int pid, const struct py_waitgraph *g,
				     size_t *n);
/* The entry of child `child` in v[0..n), or NULL. */
const struct child_pipe *child_pipe_of(const struct child_pipe *v, size_t n,
				       int64_t child);

/* "; blocked writing to its stdout, a pipe this process holds the read
 * end of as fd 3" after a child process's state; nothing for NULL. */
struct strbuf;
void child_pipe_say(struct strbuf *st, const struct child_pipe *cp);

#endif
