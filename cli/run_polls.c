/*
 * The fds of a select(), poll() or epoll_wait() a thread is blocked in:
 * read from the call's arguments, an fd_set or an array of pollfd in the
 * thread's own memory (its stack, unchanged while it waits: read through
 * the collection's source), or the epoll instance's fdinfo, which lists
 * each fd it watches.  A handful are named, each as run_fds.h says it.
 */
#include "cli/run_polls.h"

#include <limits.h>
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

/* fds read at most, and named at most */
#define MAX_FDS 64
#define NAMED 4
/* select()'s limit (FD_SETSIZE) */
#define SET_BITS 1024

int run_polls_direct(const struct py_thread *th)
{
	const struct py_frame *own = run_own_frame(th->frames, th->nframes);

	if (!own || !th->nframes)
		return 0;
	return own == &th->frames[0] ||
	       (own == &th->frames[1] && th->frames[0].code &&
		th->frames[0].code->filename &&
		cs_ends_with(th->frames[0].code->filename, "/selectors.py"));
}

int run_polls_restarted(int pid, int tid, long *nr)
{
	char wchan[128];

	if (!cs_syscall_is_restart(*nr) ||
	    procfs_thread_wchan(pid, tid, wchan, sizeof(wchan)) < 0 ||
	    strncmp(wchan, "poll_schedule_timeout", 21))
		return 0;
	*nr = cs_syscall_poll_nr();
	return 1;
}

/* The fds set in the first nfds bits of the fd_set at set. */
static int select_fds(const struct collection *c, unsigned long long nfds,
		      uint64_t set, int *fds)
{
	unsigned char bits[SET_BITS / 8];
	struct cs_err err;
	size_t i;
	int n = 0;

	if (!nfds || nfds > SET_BITS || !set)
		return -1;
	cs_err_init(&err);
	if (memsrc_read(c->ms, set, bits, (size_t)(nfds + 7) / 8, &err) < 0)
		return -1;
	for (i = 0; i < nfds && n < MAX_FDS; i++)
		if (bits[i / 8] >> (i % 8) & 1)
			fds[n++] = (int)i;
	return n;
}

/* The fds of the first nfds pollfds at addr (8 bytes each: the fd,
 * events, revents); a negative fd is one poll() skips. */
static int poll_fds(const struct collection *c, uint64_t addr,
		    unsigned long long nfds, int *fds)
{
	unsigned char buf[MAX_FDS * 8];
	struct cs_err err;
	size_t i, len = nfds < MAX_FDS ? (size_t)nfds : MAX_FDS;
	int n = 0;

	if (!len || !addr)
		return -1;
	cs_err_init(&err);
	if (memsrc_read(c->ms, addr, buf, len * 8, &err) < 0)
		return -1;
	for (i = 0; i < len; i++) {
		int32_t fd = (int32_t)le_u32(buf + 8 * i);

		if (fd >= 0)
			fds[n++] = fd;
	}
	return n;
}

int run_polls_describe(struct strbuf *sb, const struct run_summary *s,
		       const struct collection *c, int pid, long nr,
		       const unsigned long long args[2])
{
	static const char *const names[] = {
		[CS_POLL_SELECT] = "select", [CS_POLL_POLL] = "poll",
		[CS_POLL_EPOLL] = "epoll_wait",
	};
	enum cs_poll_call call = cs_syscall_polls(nr);
	int fds[MAX_FDS], n = -1, k;

	if (call == CS_POLL_SELECT && c->ms)
		n = select_fds(c, args[0], args[1], fds);
	else if (call == CS_POLL_POLL && c->ms)
		n = poll_fds(c, args[0], args[1], fds);
	else if (call == CS_POLL_EPOLL && args[0] <= INT_MAX)
		n = procfs_epoll_fds(pid, (int)args[0], fds, MAX_FDS);
	if (n <= 0)
		return -1;
	strbuf_addf(sb, " blocked in %s() on ", names[call]);
	if (n > 1)
		strbuf_addf(sb, "%d fds: ", n);
	for (k = 0; k < n && k < NAMED; k++) {
		strbuf_addf(sb, "%sfd %d", k ? "; " : "", fds[k]);
		if (fds[k] == 0)
			strbuf_addstr(sb, " (its stdin)");
		(void)run_fds_describe(sb, ", ", s, c->pid, pid, fds[k]);
	}
	if (n > NAMED)
		strbuf_addf(sb, "; and %d more", n - NAMED);
	return 0;
}
