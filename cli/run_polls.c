/*
 * The fds of a select(), poll() or epoll_wait() a thread is blocked in:
 * read from the call's arguments, its fd sets or its array of pollfd in
 * the thread's own memory (its stack or heap, unchanged while it waits:
 * read through the collection's source), or the epoll instance's
 * fdinfo, which lists each fd it watches (as the process that added it
 * numbered it: one the file is no longer open as here, its inode told
 * apart, is left out).  A handful are named, each as run_fds.h says it,
 * the others counted.
 */
#include "cli/run_polls.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "attach/memsrc.h"
#include "attach/regs.h"
#include "cli/run_fds.h"
#include "cli/run_places.h"
#include "common/le.h"
#include "common/procfs.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

/* fds kept (the lowest of those told), and named */
#define MAX_FDS 64
#define NAMED 4
/* select()'s limit (FD_SETSIZE) */
#define SET_BITS 1024
/* pollfd entries read at most, a chunk at a time */
#define MAX_POLLFDS 4096
#define CHUNK 64

enum { WANTS_READ = 1, WANTS_WRITE = 2 };

/* The fds waited on, each once: fd[0..n) with what each is waited for,
 * of total in all. */
struct waited {
	int fd[MAX_FDS];
	unsigned char how[MAX_FDS];
	int n, total;
};

static void add_fd(struct waited *w, int fd, unsigned how)
{
	int i;

	for (i = 0; i < w->n; i++)
		if (w->fd[i] == fd) {
			w->how[i] |= (unsigned char)how;
			return;
		}
	w->total++;
	if (w->n < MAX_FDS) {
		w->fd[w->n] = fd;
		w->how[w->n++] = (unsigned char)how;
	}
}

int run_polls_direct(const struct py_thread *th)
{
	const struct py_frame *own = run_own_frame(th->frames, th->nframes);
	const char *file;

	if (!own || !th->nframes)
		return 0;
	if (own == &th->frames[0])
		return 1;
	/* (selectors' select(); a socket's method under a timeout, which
	 * waits in poll() inside the C call) */
	file = th->frames[0].code ? th->frames[0].code->filename : NULL;
	return own == &th->frames[1] && file &&
	       (cs_ends_with(file, "/selectors.py") ||
		cs_ends_with(file, "/socket.py"));
}

int run_polls_restarted(int pid, int tid, const char *native_call, long *nr)
{
	char wchan[128];

	if (!cs_syscall_is_restart(*nr))
		return 0;
	/* glibc's poll(), innermost: its own frame says it */
	if (native_call && (!strcmp(native_call, "__GI___poll") ||
			    !strcmp(native_call, "__poll") ||
			    !strcmp(native_call, "poll"))) {
		*nr = cs_syscall_poll_nr();
		return 1;
	}
	/* else the kernel's sleep, where it names one (wchan reads "0" on
	 * some kernels: no cause then) */
	if (procfs_thread_wchan(pid, tid, wchan, sizeof(wchan)) < 0 ||
	    strncmp(wchan, "poll_schedule_timeout", 21))
		return 0;
	*nr = cs_syscall_poll_nr();
	return 1;
}

/* The fds set in the first nfds bits of the fd_set at set, as how. */
static int select_set(const struct collection *c, unsigned long long nfds,
		      uint64_t set, unsigned how, struct waited *w)
{
	unsigned char bits[SET_BITS / 8];
	struct cs_err err;
	size_t i;

	if (!set)
		return 0;
	cs_err_init(&err);
	if (memsrc_read(c->ms, set, bits, (size_t)(nfds + 7) / 8, &err) < 0)
		return -1;
	for (i = 0; i < nfds; i++)
		if (bits[i / 8] >> (i % 8) & 1)
			add_fd(w, (int)i, how);
	return 0;
}

/* The fds of the first nfds pollfds at addr (8 bytes each: the fd,
 * events, revents); a negative fd, or one asked for no event, is one
 * poll() does not wait on. */
static int poll_fds(const struct collection *c, uint64_t addr,
		    unsigned long long nfds, struct waited *w)
{
	unsigned char buf[CHUNK * 8];
	size_t at, i, len, left;
	struct cs_err err;

	left = nfds < MAX_POLLFDS ? (size_t)nfds : MAX_POLLFDS;
	for (at = 0; at < left; at += len) {
		len = left - at < CHUNK ? left - at : CHUNK;
		cs_err_init(&err);
		if (memsrc_read(c->ms, addr + at * 8, buf, len * 8, &err) < 0)
			return -1;
		for (i = 0; i < len; i++) {
			int32_t fd = le_i32(buf + 8 * i);
			unsigned ev = le_u32(buf + 8 * i + 4) & 0xffff;
			/* POLLIN, POLLPRI, POLLRDNORM, POLLRDBAND; POLLOUT,
			 * POLLWRNORM, POLLWRBAND */
			unsigned how = (ev & 0xc3 ? WANTS_READ : 0) |
				       (ev & 0x304 ? WANTS_WRITE : 0);

			if (fd >= 0 && how)
				add_fd(w, fd, how);
		}
	}
	return 0;
}

/* The fds epoll instance epfd of pid watches, those it names that are
 * open here as the same file. */
static int epoll_fds(int pid, int epfd, struct waited *w)
{
	struct procfs_epoll_fd *e = xmallocarray(MAX_POLLFDS, sizeof(*e));
	uint64_t ino;
	int n, i;

	n = procfs_epoll_fds(pid, epfd, e, MAX_POLLFDS);
	for (i = 0; i < n && i < MAX_POLLFDS; i++) {
		/* EPOLLIN, EPOLLPRI, EPOLLRDNORM...; EPOLLOUT... */
		unsigned how = (e[i].events & 0xc3 ? WANTS_READ : 0) |
			       (e[i].events & 0x304 ? WANTS_WRITE : 0);

		if (e[i].ino && (procfs_fd_inode(pid, e[i].fd, &ino) < 0 ||
				 ino != e[i].ino))
			continue;
		add_fd(w, e[i].fd, how ? how : WANTS_READ);
	}
	free(e);
	return n < 0 ? -1 : 0;
}

static int by_fd(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int run_polls_describe(struct strbuf *sb, const struct run_summary *s,
		       const struct collection *c, int pid, long nr,
		       const unsigned long long args[3])
{
	static const char *const names[] = {
		[CS_POLL_SELECT] = "select", [CS_POLL_POLL] = "poll",
		[CS_POLL_EPOLL] = "epoll_wait",
	};
	enum cs_poll_call call = cs_syscall_polls(nr);
	struct waited w;
	int k, ret = -1;

	memset(&w, 0, sizeof(w));
	if (call == CS_POLL_SELECT && c->ms && args[0] &&
	    args[0] <= SET_BITS)
		ret = select_set(c, args[0], args[1], WANTS_READ, &w) < 0 ||
		      select_set(c, args[0], args[2], WANTS_WRITE, &w) < 0 ?
		      -1 : 0;
	else if (call == CS_POLL_POLL && c->ms && args[0])
		ret = poll_fds(c, args[0], args[1], &w);
	else if (call == CS_POLL_EPOLL && args[0] <= INT_MAX)
		ret = epoll_fds(pid, (int)args[0], &w);
	if (ret < 0 || w.n == 0)
		return -1;
	/* (sorted with what each is waited for) */
	for (k = 0; k < w.n; k++)
		w.fd[k] = w.fd[k] * 4 + w.how[k];
	qsort(w.fd, (size_t)w.n, sizeof(w.fd[0]), by_fd);
	strbuf_addf(sb, " blocked in %s() on ", names[call]);
	if (w.total > 1)
		strbuf_addf(sb, "%d fds: ", w.total);
	for (k = 0; k < w.n && k < NAMED; k++) {
		int fd = w.fd[k] / 4, how = w.fd[k] % 4;

		strbuf_addf(sb, "%sfd %d%s", k ? "; " : "", fd,
			    how == WANTS_WRITE ? " (to write)" :
			    how == (WANTS_READ | WANTS_WRITE) ?
			    " (to read or write)" : "");
		if (fd == 0)
			strbuf_addstr(sb, " (its stdin)");
		(void)run_fds_describe(sb, ", ", s, c->pid, pid, fd);
	}
	if (w.total > NAMED)
		strbuf_addf(sb, "; and %d more", w.total - NAMED);
	return 0;
}
