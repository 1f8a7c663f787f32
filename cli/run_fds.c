/*
 * What a file descriptor of a live process is, in the words of run's
 * causes: a socket as the process's network namespace's tables have it
 * (common/procfs_net.h), or a pipe with the processes of the run's tree
 * holding its write end.  Read from /proc while the process lives.
 */
#include "cli/run_fds.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/child_pipes.h"
#include "cli/escape.h"
#include "cli/run_report.h"
#include "common/procfs.h"
#include "common/procfs_fds.h"
#include "common/procfs_net.h"
#include "common/strbuf.h"
#include "common/banned.h"

/* "a TCP connection 1.2.3.4:5 -> 6.7.8.9:80 (established)" */
static void add_socket(struct strbuf *sb, const struct procfs_socket *so)
{
	strbuf_addf(sb, "a %s ", so->proto);
	if (so->path[0] || !so->local[0]) {
		strbuf_addstr(sb, "socket");
		if (so->path[0]) {
			strbuf_addstr(sb, " ");
			esc_add_name_raw(sb, so->path);
		}
		if (so->doubt == PROCFS_PATH_CUT)
			strbuf_addstr(sb, " (its path goes on past a newline)");
		else if (so->doubt == PROCFS_PATH_TWICE)
			strbuf_addstr(sb, " (path unknown: /proc lists its "
				      "inode twice, one line forged by a "
				      "path with a newline)");
		return;
	}
	if (so->state && !strcmp(so->state, "listen")) {
		/* (its rx_queue is the accept backlog) */
		strbuf_addf(sb, "listening socket %s", so->local);
		if (so->rx_queue)
			strbuf_addf(sb, " (%lu connection%s waiting to be "
				    "accepted)", so->rx_queue,
				    so->rx_queue == 1 ? "" : "s");
	} else if (so->state) {
		strbuf_addf(sb, "connection %s -> %s (%s", so->local,
			    so->remote, so->state);
		if (so->rx_queue)
			strbuf_addf(sb, ", %lu bytes unread", so->rx_queue);
		strbuf_addch(sb, ')');
	} else {
		strbuf_addf(sb, "socket %s", so->local);
		if (strncmp(so->remote, "0.0.0.0:", 8) &&
		    strncmp(so->remote, "[::]:", 5))
			strbuf_addf(sb, " -> %s", so->remote);
	}
}

/* fd of process pid's socket, from its network namespace's tables:
 * 0, or -1 when fd is no socket found there. */
static int socket_of(int pid, int fd, struct procfs_socket *so)
{
	unsigned long ino;
	char link[64];
	int mode;

	return procfs_fd(pid, fd, link, sizeof(link), &mode) < 0 ||
	       procfs_net_socket_inode(link, &ino) < 0 ||
	       procfs_net_socket(pid, ino, so) < 0 ? -1 : 0;
}

/* Holders of a pipe's write end named at most. */
#define PIPE_WRITERS_NAMED 3

/* The last pipe looked for through every process, and what was found:
 * the threads reading one pipe look it up once (`run` looks once). */
static struct {
	char link[64];
	int pid, fd;
} memo;

/* The process outside s's tree holding pipe link's write end (a CI
 * runner, a shell pipeline's writer): its pid, its fd into *fd; 0. */
static int writer_outside(const struct run_summary *s, int self, int pid,
			  const char *link, int *fd)
{
	int *skip;
	size_t j, n = 0;
	int found;

	if (!strcmp(memo.link, link)) {
		*fd = memo.fd;
		return memo.pid;
	}
	skip = xcalloc(s->nprocs + 2, sizeof(*skip));
	skip[n++] = self;
	skip[n++] = pid;
	for (j = 0; j < s->nprocs; j++)
		skip[n++] = s->procs[j].e.pid;
	found = procfs_find_fd(link, O_WRONLY, skip, n, fd);
	free(skip);
	snprintf(memo.link, sizeof(memo.link), "%s", link);
	memo.pid = found;
	memo.fd = *fd;
	return found;
}

void run_fds_add_process(struct strbuf *sb, long pid)
{
	char comm[32];

	strbuf_addf(sb, "process %ld", pid);
	if (pid > 0 && pid <= INT_MAX &&
	    procfs_comm((int)pid, comm, sizeof(comm)) == 0) {
		strbuf_addstr(sb, " (");
		esc_add_name_raw(sb, comm);
		strbuf_addch(sb, ')');
	}
}

/* ", process 12 (sleep) as fd 1" (sep first). */
static void add_writer(struct strbuf *sb, const char *sep, int pid, int fd)
{
	strbuf_addstr(sb, sep);
	run_fds_add_process(sb, pid);
	strbuf_addf(sb, " as fd %d", fd);
}

/* "a pipe whose write end is held by this process as fd 6, process 12
 * (sleep) as fd 1": the holders among the processes of the run's tree
 * (the process itself first); for `run`, where none of them holds it,
 * a process outside it that does; else "a pipe". */
static void add_pipe(struct strbuf *sb, const struct run_summary *s,
		     int self, int pid, const char *link)
{
	size_t j, named = 0;
	int wfd, outside;

	strbuf_addstr(sb, "a pipe");
	if ((wfd = child_pipes_end(pid, link, O_WRONLY)) >= 0) {
		strbuf_addf(sb, " whose write end is held by this process as "
			    "fd %d", wfd);
		named++;
	}
	for (j = 0; j < s->nprocs && named < PIPE_WRITERS_NAMED; j++) {
		int other = s->procs[j].e.pid;

		if (other <= 0 || other == self || other == pid ||
		    (wfd = child_pipes_end(other, link, O_WRONLY)) < 0)
			continue;
		add_writer(sb, named ? ", " : " whose write end is held by ",
			   other, wfd);
		named++;
	}
	if (named || !s->nprocs ||
	    !(outside = writer_outside(s, self, pid, link, &wfd)))
		return;
	add_writer(sb, " whose write end is held by ", outside, wfd);
	strbuf_addstr(sb, ", not one of the command's processes");
}

int run_fds_describe(struct strbuf *sb, const char *sep,
		     const struct run_summary *s, int self, int pid, int fd)
{
	struct procfs_socket so;
	char link[64];
	int mode;

	if (procfs_fd(pid, fd, link, sizeof(link), &mode) < 0)
		return -1;
	if (!strncmp(link, "pipe:[", 6)) {
		strbuf_addstr(sb, sep);
		add_pipe(sb, s, self, pid, link);
		return 0;
	}
	if (socket_of(pid, fd, &so) < 0)
		return -1;
	strbuf_addstr(sb, sep);
	add_socket(sb, &so);
	return 0;
}

int run_fds_detail(struct run_cause *cause, const struct run_summary *s,
		   int pid, int64_t fd, struct strbuf *sb)
{
	if (fd < 0 || fd > INT_MAX)
		return 0;
	if (s->proc_pid > 0)
		pid = s->proc_pid;
	strbuf_addf(sb, "fd %lld", (long long)fd);
	if (run_fds_describe(sb, ": ", s, pid, pid, (int)fd) < 0) {
		strbuf_reset(sb);
		return 0;
	}
	run_cause_detail(cause, sb);
	return 1;
}
