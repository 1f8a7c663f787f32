#include "attach/live.h"
#include "attach/live_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kcmp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/procfs.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

/*
 * Test aid, read from the environment (documented in the man page's
 * ENVIRONMENT section as an unsupported test hook):
 *   COROSCOPE_TEST_PROC_MEM=1  read through /proc/PID/mem from the start,
 *                              as when process_vm_readv() is refused, so
 *                              that tests cover the fallback.
 */
#define PROC_MEM_ENV "COROSCOPE_TEST_PROC_MEM"

#define LIVE_PAGE 4096u
#define MAX_THREADS 65536      /* tasks we are willing to list */
#define MAX_MAPS (1u << 20)    /* /proc/PID/maps lines we accept */
#define IOV_PAGES 1024         /* remote iovecs per process_vm_readv call */
#define CMDLINE_MAX 4096

/* ---- /proc helpers ---- */

/*
 * The innermost of the ids NSpid lists for a task of pid (tid 0: the
 * process; in a task's status NSpid gives its tid): its id in its own
 * PID namespace, 0 when unknown.  *depth (when given) says how many
 * namespaces, as coroscope's /proc sees them, the task is in: more than
 * 1 when it is not in coroscope's.
 */
static int own_ns_id(int pid, int tid, int *depth)
{
	char status[PROCFS_STATUS_MAX];
	long ids[32];
	size_t n = 0;

	if (procfs_status_read(pid, tid, status, sizeof(status)) == 0)
		n = procfs_status_ids(status, "NSpid", ids,
				      sizeof(ids) / sizeof(ids[0]));
	if (depth)
		*depth = (int)n;
	return n && ids[n - 1] > 0 && ids[n - 1] <= INT_MAX ?
	       (int)ids[n - 1] : 0;
}

int live_ns_tid_of(const struct live *lv, int tid)
{
	return lv->other_ns ? own_ns_id(lv->pid, tid, NULL) : tid;
}

int live_list_tasks(int pid, int **out, size_t *nout)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	return procfs_list_ids(path, MAX_THREADS, pid, out, nout);
}

/*
 * The task of pid to reach its memory and files through: pid itself,
 * unless its main thread is a zombie (it called pthread_exit() while
 * other threads run on), then the first live thread; 0 when none lives.
 */
static int live_task(int pid)
{
	char st = procfs_state(pid, 0);
	int *tids, id = 0;
	size_t n, i;

	if (!st)
		return errno == ENOENT || errno == ESRCH ? 0 :
		       (kill(pid, 0) == 0 || errno == EPERM) ? pid : 0;
	if (!procfs_state_dead(st))
		return pid;
	if (live_list_tasks(pid, &tids, &n) < 0)
		return 0;
	for (i = 0; i < n && !id; i++) {
		if (tids[i] == pid)
			continue;
		st = procfs_state(pid, tids[i]);
		if (st && !procfs_state_dead(st))
			id = tids[i];
	}
	free(tids);
	return id;
}

int live_pid_alive(int pid)
{
	return live_task(pid) != 0;
}

/* ---- memory reads ---- */

/*
 * process_vm_readv() with one remote iovec per page: it stops at the
 * first iovec it cannot read, so a short count ends at the first
 * unreadable page.  -1 with errno for a failure before any byte.
 */
static ssize_t vm_read_paged(struct live *lv, uint64_t addr, void *buf,
			     size_t len)
{
	size_t done = 0;

	while (done < len) {
		uint64_t a = addr + done;
		size_t chunk = 0, k = 0;
		struct iovec liov;
		ssize_t r;

		while (k < IOV_PAGES && done + chunk < len) {
			uint64_t ra = a + chunk;
			size_t l = LIVE_PAGE - (size_t)(ra % LIVE_PAGE);

			if (l > len - done - chunk)
				l = len - done - chunk;
			lv->riov[k].iov_base = (void *)(uintptr_t)ra;
			lv->riov[k].iov_len = l;
			chunk += l;
			k++;
		}
		liov.iov_base = (char *)buf + done;
		liov.iov_len = chunk;
		r = process_vm_readv(lv->mm_id, &liov, 1, lv->riov, k, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (done && errno == EFAULT)
				break;
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)r;
		if ((size_t)r < chunk)
			break;
	}
	return (ssize_t)done;
}

/*
 * Most reads are wholly readable: try the range as one remote iovec,
 * which the kernel walks far faster than a thousand page-sized ones, and
 * only when that comes back short ask page by page where readability
 * ends (partial counts within one iovec are not documented).
 */
static ssize_t vm_read(struct live *lv, uint64_t addr, void *buf, size_t len)
{
	struct iovec liov = { buf, len };
	struct iovec riov = { (void *)(uintptr_t)addr, len };
	ssize_t r;

	do
		r = process_vm_readv(lv->mm_id, &liov, 1, &riov, 1, 0);
	while (r < 0 && errno == EINTR);
	if (r == (ssize_t)len)
		return r;
	if (r < 0 && errno != EFAULT)
		return -1;
	return vm_read_paged(lv, addr, buf, len);
}

static long mem_read(struct memsrc *ms, struct live *lv, uint64_t addr,
		     void *buf, size_t len, struct cs_err *err)
{
	ssize_t r;

	if (lv->mem_fd < 0) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/mem", lv->mm_id);
		lv->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (lv->mem_fd < 0) {
			if (errno == EACCES || errno == EPERM)
				return live_fail_denied(err, lv->pid, "read");
			if (errno == ENOENT || errno == ESRCH)
				return live_exited(err, lv->pid);
			return cs_fail(err, CS_ERR_INTERNAL,
				       "cannot open '%s': %s", path,
				       strerror(errno));
		}
	}
	if (addr > (uint64_t)INT64_MAX)
		return 0;  /* not a user address; pread cannot express it */
	if (len > (uint64_t)INT64_MAX - addr)
		len = (size_t)((uint64_t)INT64_MAX - addr);
	do
		r = pread(lv->mem_fd, buf, len, (off_t)addr);
	while (r < 0 && errno == EINTR);
	if (r > 0)
		return r;
	if (r == 0 || errno == EIO || errno == EFAULT) {
		/* Also what a process whose memory is gone looks like. */
		return live_alive(ms) ? 0 : live_exited(err, lv->pid);
	}
	if (errno == ESRCH)
		return live_exited(err, lv->pid);
	if (errno == EPERM || errno == EACCES)
		return live_fail_denied(err, lv->pid, "read");
	return cs_fail(err, CS_ERR_INTERNAL,
		       "cannot read /proc/%d/mem at 0x%" PRIx64 ": %s",
		       lv->pid, addr, strerror(errno));
}

static long live_read_runs(struct memsrc *ms, const struct memsrc_run *runs,
			   unsigned char *const *bufs, size_t n)
{
	const struct live *lv = ms->backend;
	/* The caller's own, not lv's: another thread reads at once.  On
	 * the heap: a helper thread's stack may be small. */
	struct iovec *iov;
	size_t i;
	ssize_t r;

	if (lv->use_mem || n > MEMSRC_RUNS_MAX)
		return -1;
	iov = xmallocarray(2 * (n ? n : 1), sizeof(*iov));
	for (i = 0; i < n; i++) {
		iov[i].iov_base = bufs[i];
		iov[i].iov_len = runs[i].len;
		iov[n + i].iov_base = (void *)(uintptr_t)runs[i].addr;
		iov[n + i].iov_len = runs[i].len;
	}
	do
		r = process_vm_readv(lv->mm_id, iov, n, iov + n, n, 0);
	while (r < 0 && errno == EINTR);
	free(iov);
	if (r >= 0)
		return (long)r;
	/* The first run unreadable (gone since it was planned, a device's
	 * mapping): the caller goes on after it. */
	return errno == EFAULT ? 0 : -1;
}

static long live_read_raw(struct memsrc *ms, uint64_t addr, void *buf,
			  size_t len, struct cs_err *err)
{
	struct live *lv = ms->backend;
	ssize_t r;

	if (!lv->use_mem) {
		r = vm_read(lv, addr, buf, len);
		if (r >= 0)
			return r;
		switch (errno) {
		case EFAULT:
			return 0;
		case ESRCH:
			return live_exited(err, lv->pid);
		case ENOSYS:
		case EPERM:
		case EACCES:
			/* Kernels without it, or seccomp profiles refusing
			 * it while allowing ptrace: /proc/PID/mem does the
			 * same work with the access checks of ptrace. */
			lv->use_mem = 1;
			break;
		default:
			return cs_fail(err, CS_ERR_INTERNAL,
				       "cannot read process %d at 0x%" PRIx64
				       ": %s", lv->pid, addr, strerror(errno));
		}
	}
	return mem_read(ms, lv, addr, buf, len, err);
}

/* ---- opening ---- */

#define MAPS_BUF (64u << 10)  /* stdio buffer for /proc/PID/maps */

/* One line of /proc/PID/maps; pseudo names like [heap] and [stack] get
 * no path: they are no files to open.  0, or -1 (no mapping). */
static int parse_maps_line(char *line, struct cs_mapping *m)
{
	struct procfs_map pm;

	if (procfs_maps_line(line, &pm) < 0)
		return -1;
	memset(m, 0, sizeof(*m));
	m->start = pm.start;
	m->end = pm.end;
	m->offset = pm.offset;
	memcpy(m->perms, pm.perms, sizeof(m->perms));
	m->deleted = pm.deleted;
	m->dev = pm.dev;
	m->inode = pm.inode;
	if (pm.path)
		m->path = xstrdup(pm.path);
	return 0;
}

int live_read_maps(struct memsrc *ms, struct cs_err *err)
{
	char path[64];
	FILE *f;
	char *line = NULL;
	size_t cap = 0, alloc = 0;
	struct cs_mapping *maps = NULL;
	size_t n = 0;
	int ret = 0;
	char *buf;

	snprintf(path, sizeof(path), "/proc/%d/maps", ms->proc_id);
	f = fopen(path, "re");
	if (!f) {
		if (errno == EACCES || errno == EPERM)
			return live_fail_denied(err, ms->pid, "read the mappings of");
		if (errno == ENOENT || errno == ESRCH)
			return cs_fail(err, CS_ERR_NO_PROCESS,
				       "no such process: %d", ms->pid);
		return cs_fail(err, CS_ERR_INTERNAL, "cannot open '%s': %s",
			       path, strerror(errno));
	}
	/* Fewer, larger reads of a file of thousands of lines. */
	buf = xmalloc(MAPS_BUF);
	setvbuf(f, buf, _IOFBF, MAPS_BUF);
	while (getline(&line, &cap, f) > 0) {
		if (n == MAX_MAPS) {
			ret = cs_fail(err, CS_ERR_INTERNAL,
				      "more than %u mappings in '%s'",
				      MAX_MAPS, path);
			break;
		}
		maps = xgrow(maps, &alloc, n + 1, sizeof(*maps));
		if (parse_maps_line(line, &maps[n]) == 0)
			n++;
	}
	/* Reading maps of another user's process fails here, not at open. */
	if (!ret && ferror(f)) {
		ret = errno == EACCES || errno == EPERM ?
		      live_fail_denied(err, ms->pid, "read the mappings of") :
		      cs_fail(err, CS_ERR_INTERNAL, "cannot read '%s': %s",
			      path, strerror(errno));
	}
	free(line);
	fclose(f);
	free(buf);
	if (ret) {
		cs_mappings_free(maps, n);
		return ret;
	}
	cs_mappings_sort(maps, n);
	ms->maps = maps;
	ms->nmaps = n;
	return 0;
}

static int read_threads(struct memsrc *ms, struct cs_err *err)
{
	const struct live *lv = ms->backend;
	int *tids;
	size_t n, i;

	if (live_list_tasks(ms->pid, &tids, &n) < 0)
		return cs_fail(err, CS_ERR_NO_PROCESS, "no such process: %d",
			       ms->pid);
	ms->threads = xcalloc(n ? n : 1, sizeof(*ms->threads));
	/* Only the main thread is kept as a zombie once it exits (the
	 * others are reaped at once): then mm_id is another thread. */
	for (i = 0; i < n; i++) {
		ms->threads[i].tid = tids[i];
		ms->threads[i].ns_tid = live_ns_tid_of(ms->backend, tids[i]);
		ms->threads[i].exited = tids[i] == ms->pid && lv->mm_id != ms->pid;
	}
	ms->nthreads = n;
	free(tids);
	return 0;
}

static void live_close(struct memsrc *ms)
{
	struct live *lv = ms->backend;

	if (!lv)
		return;
	live_resume(ms);
	if (lv->mem_fd >= 0)
		close(lv->mem_fd);
	if (lv->pagemap_fd >= 0)
		close(lv->pagemap_fd);
	free(lv->riov);
	free(lv->th);
	live_left_free(lv);
	free(lv);
	ms->backend = NULL;
}

static const struct memsrc_ops live_ops = {
	.read_raw = live_read_raw,
	.read_runs = live_read_runs,
	.resident = live_resident,
	.written_bytes = live_written_bytes,
	.close = live_close,
};

/*
 * Does pid share its memory with its parent?  That is a vfork child (as
 * posix_spawn() makes) before it calls exec: it runs in its parent's
 * address space, so what it shows would be the parent's.  kcmp() says
 * whether two processes share one mm; unknown (no kcmp) counts as no.
 */
static int shares_parent_vm(int pid, long *ppid)
{
	if (procfs_status_field(pid, 0, "PPid", ppid) < 0 || *ppid <= 1 ||
	    *ppid > INT_MAX)
		return 0;
	return syscall(SYS_kcmp, (pid_t)pid, (pid_t)*ppid, KCMP_VM, 0UL,
		       0UL) == 0;
}

/*
 * The pid names a thread group; a thread id (which /proc also answers
 * to) is taken to mean its process.  *via: the task to reach it through
 * (live_task()).
 */
static int check_pid(int *pid, int *via, struct cs_err *err)
{
	char path[64];
	struct stat sb;
	long tgid, ppid, vmsize;

	if (*pid <= 0)
		return cs_fail(err, CS_ERR_NO_PROCESS, "no such process: %d",
			       *pid);
	snprintf(path, sizeof(path), "/proc/%d", *pid);
	if (stat(path, &sb) < 0)
		return cs_fail(err, CS_ERR_NO_PROCESS, "no such process: %d",
			       *pid);
	if (procfs_status_field(*pid, 0, "Tgid", &tgid) == 0 && tgid > 0 &&
	    tgid <= INT_MAX)
		*pid = (int)tgid;
	*via = live_task(*pid);
	if (!*via)
		return cs_fail(err, CS_ERR_NO_PROCESS,
			       "no such process: %d (it is a zombie)", *pid);
	/* (a kernel thread has no address space: kcmp() finds its and
	 * kthreadd's alike; asked of a live task of it, as a process
	 * whose main thread exited has none in that thread's status) */
	if (procfs_status_field(*pid, *via, "VmSize", &vmsize) < 0 &&
	    *via != *pid)
		/* (its main thread a zombie, the one left exiting, its
		 * memory gone: a kernel thread's is never dead) */
		return cs_fail(err, CS_ERR_NO_PROCESS,
			       "no such process: %d (it is exiting)", *pid);
	if (procfs_status_field(*pid, *via, "VmSize", &vmsize) < 0)
		return cs_fail(err, CS_ERR_NOT_PYTHON,
			       "process %d is a kernel thread: it has no "
			       "program of its own to show", *pid);
	if (shares_parent_vm(*pid, &ppid))
		return cs_fail(err, CS_ERR_NOT_PYTHON,
			       "process %d is a vfork child of process %ld "
			       "(posix_spawn) that has not called exec yet: it "
			       "runs in its parent's memory, so there is no "
			       "program of its own to show; dump process %ld",
			       *pid, ppid, ppid);
	return 0;
}

void live_reach_through(struct memsrc *ms, int id)
{
	struct live *lv = ms->backend;
	char buf[64];

	lv->mm_id = id;
	ms->proc_id = id;
	snprintf(buf, sizeof(buf), "/proc/%d/root", id);
	free(ms->root);
	ms->root = xstrdup(buf);
	snprintf(buf, sizeof(buf), "/proc/%d/exe", id);
	free(ms->exe_path);
	ms->exe_path = xstrdup(buf);
}

int live_open(struct memsrc **out, int pid, struct cs_err *err)
{
	struct memsrc *ms;
	struct live *lv;
	const char *env;
	int ret, via = 0, depth = 0;

	*out = NULL;
	ret = check_pid(&pid, &via, err);
	if (ret)
		return ret;
	ms = xcalloc(1, sizeof(*ms));
	lv = xcalloc(1, sizeof(*lv));
	lv->riov = xcalloc(IOV_PAGES, sizeof(*lv->riov));
	lv->pid = pid;
	lv->mem_fd = -1;
	lv->pagemap_fd = -1;
	env = getenv(PROC_MEM_ENV);
	lv->use_mem = env && *env && strcmp(env, "0");
	memsrc_init(ms, &live_ops, lv);
	ms->pid = pid;
	ms->ns_pid = own_ns_id(pid, 0, &depth);
	lv->other_ns = depth > 1;
	if (!ms->ns_pid || !lv->other_ns)
		ms->ns_pid = pid;
	live_reach_through(ms, via);
	ret = live_read_maps(ms, err);
	/*
	 * The mapping list may be readable where the files behind it are not
	 * (no ptrace access): say so now, not "not a Python process" later.
	 */
	if (!ret && access(ms->root, F_OK) < 0 &&
	    (errno == EACCES || errno == EPERM))
		ret = live_fail_denied(err, pid, "read the files of");
	if (!ret)
		ret = read_threads(ms, err);
	if (ret)
		goto fail;
	*out = ms;
	return 0;

fail:
	memsrc_free(ms);
	return ret;
}

char *live_cmdline(int pid)
{
	return procfs_cmdline(pid, CMDLINE_MAX);
}
