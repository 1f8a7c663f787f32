#include "attach/live.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kcmp.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/procfs.h"
#include "common/util.h"
#include "common/banned.h"

/*
 * Test aids, read from the environment (documented in the man page's
 * ENVIRONMENT section as unsupported test hooks):
 *   COROSCOPE_TEST_HOLD_MS=N   live_stop() keeps the target stopped N more
 *                              milliseconds once every thread is stopped,
 *                              so that tests can kill the target or
 *                              coroscope while it is attached.
 *   COROSCOPE_TEST_PROC_MEM=1  read through /proc/PID/mem from the start,
 *                              as when process_vm_readv() is refused, so
 *                              that tests cover the fallback.
 */
#define HOLD_ENV "COROSCOPE_TEST_HOLD_MS"
#define PROC_MEM_ENV "COROSCOPE_TEST_PROC_MEM"

#define LIVE_PAGE 4096u
#define MAX_THREADS 65536      /* tasks we are willing to list */
#define MAX_MAPS (1u << 20)    /* /proc/PID/maps lines we accept */
#define STOP_ROUNDS 64         /* listings of /proc/PID/task in live_stop */
#define STOP_WAIT_MS 1000      /* for every thread to report its stop */
#define DETACH_WAIT_MS 100     /* for a late stop before detaching */
#define IOV_PAGES 1024         /* remote iovecs per process_vm_readv call */
#define CMDLINE_MAX 4096

enum thread_state {
	TH_SEIZED,     /* seized and interrupted, stop not yet reported */
	TH_STOPPED,    /* in a ptrace-stop */
	TH_GONE,       /* exited, to be dropped */
};

struct live_thread {
	int tid;
	enum thread_state state;
	int sig;               /* signal to deliver on detach, or 0 */
	uint64_t fs_base;
	int has_fs_base;
	struct cs_regs regs;   /* valid when has_fs_base */
};

struct live {
	int pid;
	int mem_fd;            /* /proc/PID/mem, -1 until needed */
	int use_mem;           /* process_vm_readv refused: use mem_fd */
	struct iovec *riov;    /* IOV_PAGES remote iovecs */

	struct live_thread *th;  /* seized threads */
	size_t nth, ath;

	int other_ns;          /* in another PID namespace: tids differ there */

	int stopped;
	struct timespec since;   /* when the current stop completed */
	double paused_ms;        /* earlier stops */
};

/*
 * The signal guard's view of the seized threads.  A handler may run at any
 * point, so this is a fixed array of sig_atomic_t slots: a slot is claimed
 * by writing its tid last and released by writing 0.  A thread missing
 * from it (more than GUARD_MAX, or caught mid-update) is still detached by
 * the kernel when coroscope dies; only a signal we held for it is lost.
 */
#define GUARD_MAX 8192
static volatile sig_atomic_t guard_tid[GUARD_MAX];
static volatile sig_atomic_t guard_sig[GUARD_MAX];
static volatile sig_atomic_t guard_len;
static int guard_installed;

static void guard_add(int tid)
{
	sig_atomic_t i;

	for (i = 0; i < guard_len; i++)
		if (guard_tid[i] == 0)
			break;
	if (i >= GUARD_MAX)
		return;
	guard_sig[i] = 0;
	guard_tid[i] = tid;
	if (i == guard_len)
		guard_len = i + 1;
}

static void guard_set_sig(int tid, int sig)
{
	sig_atomic_t i;

	for (i = 0; i < guard_len; i++)
		if (guard_tid[i] == tid)
			guard_sig[i] = sig;
}

static void guard_remove(int tid)
{
	sig_atomic_t i;

	for (i = 0; i < guard_len; i++)
		if (guard_tid[i] == tid)
			guard_tid[i] = 0;
	while (guard_len > 0 && guard_tid[guard_len - 1] == 0)
		guard_len--;
}

/* Async-signal-safe: only the raw ptrace system call. */
static void guard_detach_all(void)
{
	sig_atomic_t i;

	for (i = 0; i < guard_len; i++) {
		int tid = guard_tid[i];

		if (tid > 0) {
			syscall(SYS_ptrace, PTRACE_DETACH, tid, NULL,
				(void *)(long)guard_sig[i]);
			guard_tid[i] = 0;
		}
	}
}

static void guard_handler(int sig)
{
	static struct sigaction sa;  /* zeroed: no memset in a handler */
	int saved = errno;

	guard_detach_all();
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	/* Pending until this handler returns (the signal is blocked while
	 * it runs); then the default action ends coroscope as if the
	 * handler had never been there. */
	raise(sig);
	errno = saved;
}

static void guard_atexit(void)
{
	guard_detach_all();
}

void live_install_signal_guard(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa, old;
	size_t i;

	if (guard_installed)
		return;
	guard_installed = 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = guard_handler;
	sigfillset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		/* Leave an ignored signal ignored (nohup, background jobs). */
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
	atexit(guard_atexit);
}

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

/* A thread's tid in the target's own PID namespace (0 when unknown). */
static int ns_tid_of(const struct live *lv, int tid)
{
	return lv->other_ns ? own_ns_id(lv->pid, tid, NULL) : tid;
}

/*
 * The thread ids in /proc/PID/task, the main thread first and the others
 * in ascending order.  -1 with errno set when the directory is gone.
 */
static int list_tasks(int pid, int **out, size_t *nout)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	return procfs_list_ids(path, MAX_THREADS, pid, out, nout);
}

/* Is the process alive: its main thread, or any thread, not a zombie. */
static int pid_alive(int pid)
{
	char st = procfs_state(pid, 0);
	int *tids;
	size_t n, i;
	int alive = 0;

	if (!st)
		return errno == ENOENT || errno == ESRCH ? 0 :
		       (kill(pid, 0) == 0 || errno == EPERM);
	if (!procfs_state_dead(st))
		return 1;
	/* A zombie main thread, but other threads may still run (the main
	 * thread called pthread_exit()). */
	if (list_tasks(pid, &tids, &n) < 0)
		return 0;
	for (i = 0; i < n && !alive; i++) {
		if (tids[i] == pid)
			continue;
		st = procfs_state(pid, tids[i]);
		alive = st && !procfs_state_dead(st);
	}
	free(tids);
	return alive;
}

static int has_cap_sys_ptrace(void)
{
	char buf[4096];
	size_t len;
	const char *p;
	unsigned long long caps;

	if (procfs_read("/proc/self/status", buf, sizeof(buf)) < 0)
		return geteuid() == 0;
	p = procfs_status_text(buf, "CapEff", &len);
	if (!p)
		return geteuid() == 0;
	caps = strtoull(p, NULL, 16);
	return (caps >> 19) & 1;  /* CAP_SYS_PTRACE */
}

/* Is the tracer, by its name, another coroscope? */
static int tracer_is_coroscope(int tracer)
{
	char comm[PROCFS_COMM_MAX];

	return procfs_comm(tracer, comm, sizeof(comm)) == 0 &&
	       !strcmp(comm, "coroscope");
}

/* The process already has a tracer (ptrace allows one). */
static int fail_traced(struct cs_err *err, int pid, const char *what,
		       long tracer)
{
	char comm[PROCFS_COMM_MAX];

	if (tracer == getpid())
		return cs_fail(err, CS_ERR_PERMISSION,
			       "permission denied: cannot %s process %d: "
			       "coroscope already traces it", what, pid);
	if (tracer_is_coroscope((int)tracer))
		return cs_fail(err, CS_ERR_PERMISSION,
			       "permission denied: cannot %s process %d: it is "
			       "already traced by process %ld, another "
			       "coroscope; try again when that one is done",
			       what, pid, tracer);
	procfs_comm((int)tracer, comm, sizeof(comm));
	return cs_fail(err, CS_ERR_PERMISSION,
		       "permission denied: cannot %s process %d: it is already "
		       "traced by process %ld (%s); detach that debugger first",
		       what, pid, tracer, comm[0] ? comm : "?");
}

/*
 * A process that is not dumpable (prctl(PR_SET_DUMPABLE, 0), or one that
 * changed credentials: a set-user-id or file-capability program): the
 * kernel then gives the files in its /proc/PID to root (not the
 * directory itself), whatever its own uid, and lets only CAP_SYS_PTRACE
 * trace it.
 */
static int non_dumpable(int pid, long uid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	return uid > 0 && stat(path, &st) == 0 && st.st_uid == 0;
}

/* What kernel.yama.ptrace_scope adds to a refusal, or "". */
static const char *ptrace_scope_hint(int cap)
{
	char buf[64];
	long scope;

	if (procfs_read("/proc/sys/kernel/yama/ptrace_scope", buf,
			sizeof(buf)) <= 0)
		return "";
	scope = strtol(buf, NULL, 10);
	if (scope == 1 && !cap)
		return "; kernel.yama.ptrace_scope is 1, which allows tracing "
		       "only descendants: run as root or set it to 0";
	if (scope == 2 && !cap)
		return "; kernel.yama.ptrace_scope is 2, which requires "
		       "CAP_SYS_PTRACE: run as root";
	if (scope >= 3)
		return "; kernel.yama.ptrace_scope is 3, which forbids ptrace "
		       "until reboot";
	return "";
}

/*
 * Why the kernel refused to let us trace (or read) pid, on one line:
 * the first reason that applies, from the most to the least certain.
 */
static int fail_denied(struct cs_err *err, int pid, const char *what)
{
	char status[PROCFS_STATUS_MAX];
	long tracer = 0, uid = -1;
	int cap = has_cap_sys_ptrace();

	if (procfs_status_read(pid, 0, status, sizeof(status)) < 0)
		status[0] = '\0';
	if (procfs_status_long(status, "TracerPid", &tracer) == 0 && tracer > 0)
		return fail_traced(err, pid, what, tracer);
	procfs_status_long(status, "Uid", &uid);
	if (!cap && uid >= 0 && (uid_t)uid != geteuid())
		return cs_fail(err, CS_ERR_PERMISSION,
			       "permission denied: cannot %s process %d: it belongs to uid %ld and "
			       "coroscope runs as uid %ld without "
			       "CAP_SYS_PTRACE; run it as that user or with "
			       "CAP_SYS_PTRACE (root has it, except in a "
			       "container started without --cap-add SYS_PTRACE)",
			       what, pid, uid, (long)geteuid());
	if (!cap && non_dumpable(pid, uid))
		return cs_fail(err, CS_ERR_PERMISSION,
			       "permission denied: cannot %s process %d: it is "
			       "not dumpable (prctl PR_SET_DUMPABLE 0, or a "
			       "set-user-id program), which only CAP_SYS_PTRACE "
			       "overrides; run coroscope as root", what, pid);
	return cs_fail(err, CS_ERR_PERMISSION,
		       "permission denied: cannot %s process %d: operation not permitted%s; in a "
		       "container, run with --cap-add SYS_PTRACE%s",
		       what, pid, ptrace_scope_hint(cap),
		       cap ? " (a seccomp filter or security module may also "
			     "refuse ptrace)" : "");
}

/* ---- memory reads ---- */

static double ms_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e3 +
	       (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

static long exited(struct cs_err *err, int pid)
{
	return cs_fail(err, CS_ERR_EXITED, "process %d exited", pid);
}

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
		r = process_vm_readv(lv->pid, &liov, 1, lv->riov, k, 0);
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
		r = process_vm_readv(lv->pid, &liov, 1, &riov, 1, 0);
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

		snprintf(path, sizeof(path), "/proc/%d/mem", lv->pid);
		lv->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (lv->mem_fd < 0) {
			if (errno == EACCES || errno == EPERM)
				return fail_denied(err, lv->pid, "read");
			if (errno == ENOENT || errno == ESRCH)
				return exited(err, lv->pid);
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
		return live_alive(ms) ? 0 : exited(err, lv->pid);
	}
	if (errno == ESRCH)
		return exited(err, lv->pid);
	if (errno == EPERM || errno == EACCES)
		return fail_denied(err, lv->pid, "read");
	return cs_fail(err, CS_ERR_INTERNAL,
		       "cannot read /proc/%d/mem at 0x%" PRIx64 ": %s",
		       lv->pid, addr, strerror(errno));
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
			return exited(err, lv->pid);
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

/* ---- stopping and resuming ---- */

static struct live_thread *find_thread(struct live *lv, int tid)
{
	size_t i;

	for (i = 0; i < lv->nth; i++)
		if (lv->th[i].tid == tid)
			return &lv->th[i];
	return NULL;
}

/*
 * Wait for a seized thread's stop.  PTRACE_INTERRUPT produces a
 * PTRACE_EVENT_STOP (as does a group-stop); but a signal arriving first
 * is reported as a signal-delivery-stop instead.  That is a ptrace-stop
 * too, so the thread counts as stopped, and the signal is kept in th->sig
 * and delivered again by PTRACE_DETACH: the target never loses a signal
 * to coroscope.  (The pending interrupt is cancelled by the detach.)
 */
/*
 * Wait for a seized thread's stop until deadline (CLOCK_MONOTONIC ms).
 * Polled, not blocking: a thread in uninterruptible sleep (a hung NFS
 * read, a vfork parent) takes no PTRACE_INTERRUPT until it wakes, and
 * must not keep coroscope, and the threads already stopped, waiting.
 * On timeout the thread stays TH_SEIZED.
 */
/*
 * Exits a tracer wait reaped.  When coroscope is also the real parent
 * (`coroscope run` dumping its command), that wait was the only report
 * of the exit: keep the status for live_reaped_status().
 */
#define MAX_REAPED 16
static struct { int pid, status; } reaped[MAX_REAPED];
static size_t nreaped;

static void note_exit(pid_t pid, int st)
{
	if (pid <= 0 || !(WIFEXITED(st) || WIFSIGNALED(st)))
		return;
	reaped[nreaped % MAX_REAPED].pid = pid;
	reaped[nreaped % MAX_REAPED].status = st;
	nreaped++;
}

int live_reaped_status(int pid, int *status)
{
	size_t i;

	for (i = 0; i < MAX_REAPED; i++) {
		if (reaped[i].pid == pid && pid > 0) {
			*status = reaped[i].status;
			reaped[i].pid = 0;
			return 1;
		}
	}
	return 0;
}

static void wait_stop(struct live_thread *th, double deadline)
{
	const struct timespec pause = { 0, 500 * 1000 };
	int st;

	for (;;) {
		pid_t r = waitpid(th->tid, &st, __WALL | WNOHANG);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			th->state = TH_GONE;  /* ECHILD: not our tracee now */
			return;
		}
		if (r == 0) {
			if (cs_now_ms() >= deadline)
				return;
			nanosleep(&pause, NULL);
			continue;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			note_exit(r, st);
			th->state = TH_GONE;
			return;
		}
		if (!WIFSTOPPED(st))
			continue;
		if ((st >> 16) == 0) {
			th->sig = WSTOPSIG(st);
			guard_set_sig(th->tid, th->sig);
		}
		/* Any other event cannot happen with options 0. */
		th->state = TH_STOPPED;
		return;
	}
}

/* Detach one thread (waiting for its stop first if need be). */
static void detach_thread(struct live_thread *th)
{
	int st;

	/* A thread that never stopped cannot be detached; the kernel lets
	 * it go when coroscope exits (seized, it is not left stopped). */
	if (th->state == TH_SEIZED)
		wait_stop(th, cs_now_ms() + DETACH_WAIT_MS);
	if (th->state == TH_STOPPED &&
	    ptrace(PTRACE_DETACH, th->tid, NULL, (void *)(long)th->sig) < 0)
		/* Killed while stopped: reap its exit report if it is ours. */
		if (waitpid(th->tid, &st, __WALL | WNOHANG) > 0)
			note_exit(th->tid, st);
	guard_remove(th->tid);
	th->state = TH_GONE;
}

static void drop_gone(struct live *lv)
{
	size_t i, j = 0;

	for (i = 0; i < lv->nth; i++) {
		if (lv->th[i].state == TH_GONE)
			guard_remove(lv->th[i].tid);
		else
			lv->th[j++] = lv->th[i];
	}
	lv->nth = j;
}

/* Seize and interrupt one thread; 0 also when it vanished meanwhile. */
static int seize_thread(struct live *lv, int tid, struct cs_err *err)
{
	struct live_thread *th;
	char st;

	if (lv->nth == lv->ath) {
		size_t na = lv->ath ? lv->ath * 2 : 16;
		struct live_thread *t = realloc(lv->th, na * sizeof(*t));

		if (!t)
			return cs_fail(err, CS_ERR_INTERNAL, "out of memory");
		lv->th = t;
		lv->ath = na;
	}
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) < 0) {
		if (errno == ESRCH)
			return 0;
		if (errno == EPERM) {
			/* Exiting threads refuse to be traced: not our
			 * problem.  Nor are threads that are gone. */
			st = procfs_state(lv->pid, tid);
			if (!st || procfs_state_dead(st))
				return 0;
			return fail_denied(err, lv->pid, "attach to");
		}
		return cs_fail(err, CS_ERR_INTERNAL,
			       "cannot attach to thread %d of process %d: %s",
			       tid, lv->pid, strerror(errno));
	}
	guard_add(tid);
	th = &lv->th[lv->nth++];
	memset(th, 0, sizeof(*th));
	th->tid = tid;
	th->state = TH_SEIZED;
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0) {
		int st2;

		/* It died between the two calls; collect its exit. */
		if (waitpid(tid, &st2, __WALL | WNOHANG) > 0)
			note_exit(tid, st2);
		th->state = TH_GONE;
	}
	return 0;
}

static void read_fs_base(struct live_thread *th)
{
#if defined(__x86_64__)
	struct user_regs_struct regs;

	if (ptrace(PTRACE_GETREGS, th->tid, NULL, &regs) == 0) {
		th->fs_base = regs.fs_base;
		th->has_fs_base = 1;
		/* All of them, for native unwinding: same call, no cost. */
		_Static_assert(sizeof(regs) == CS_REGS_IMAGE_SIZE,
			       "user_regs_struct is the pr_reg layout");
		cs_regs_from_image(&th->regs, &regs);
	} else if (errno == ESRCH) {
		th->state = TH_GONE;  /* SIGKILLed while stopped */
	}
#else
	(void)th;
#endif
}

static void hold_for_tests(void)
{
	const char *s = getenv(HOLD_ENV);
	struct timespec ts;
	char *end;
	long ms;

	if (!s || !*s)
		return;
	errno = 0;
	ms = strtol(s, &end, 10);
	if (errno || *end || ms <= 0)
		return;
	if (ms > 600000)
		ms = 600000;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void resume_threads(struct live *lv)
{
	size_t i;

	for (i = 0; i < lv->nth; i++)
		detach_thread(&lv->th[i]);
	lv->nth = 0;
}

static int read_maps(struct memsrc *ms, struct cs_err *err);

/* Re-read the mappings; on failure the old list stays. */
static int refresh_maps(struct memsrc *ms, struct cs_err *err)
{
	struct cs_mapping *old = ms->maps;
	size_t nold = ms->nmaps;
	int ret;

	ms->maps = NULL;
	ms->nmaps = 0;
	ret = read_maps(ms, err);
	if (ret) {
		ms->maps = old;
		ms->nmaps = nold;
		return ret;
	}
	cs_mappings_free(old, nold);
	return 0;
}

/*
 * One round of stopping: seize every listed thread not yet seized, wait
 * for all to stop.  *added says how many were new.  0 or a status.
 */
static int stop_round(struct live *lv, double deadline, size_t *added,
		      struct cs_err *err)
{
	int *tids;
	size_t ntids, i, n;
	int ret = 0;

	*added = 0;
	if (list_tasks(lv->pid, &tids, &ntids) < 0)
		return errno == ENOMEM ?
		       cs_fail(err, CS_ERR_INTERNAL, "out of memory") :
		       (int)exited(err, lv->pid);
	for (i = 0; i < ntids && !ret; i++) {
		if (find_thread(lv, tids[i]))
			continue;
		n = lv->nth;
		ret = seize_thread(lv, tids[i], err);
		*added += lv->nth - n;
	}
	free(tids);
	if (ret)
		return ret;
	for (i = 0; i < lv->nth; i++)
		if (lv->th[i].state == TH_SEIZED)
			wait_stop(&lv->th[i], deadline);
	for (i = 0; i < lv->nth; i++)
		if (lv->th[i].state == TH_SEIZED)
			return cs_fail(err, CS_ERR_MEMORY,
				       "thread %d of process %d did not stop "
				       "within %d ms (uninterruptible sleep?); "
				       "try --no-block", lv->th[i].tid,
				       lv->pid, STOP_WAIT_MS);
	drop_gone(lv);
	return 0;
}

/*
 * Stop every thread.  New threads can only be created by running
 * threads, so once every listed thread is stopped, one more listing that
 * finds nothing new means the whole process is stopped.  The bound only
 * matters for a process creating threads faster than we can catch them.
 */
static int stop_all(struct memsrc *ms, struct live *lv, struct cs_err *err)
{
	double deadline = cs_now_ms() + STOP_WAIT_MS;
	size_t round, added = 0;
	int ret;

	for (round = 0; round < STOP_ROUNDS; round++) {
		ret = stop_round(lv, deadline, &added, err);
		if (ret)
			return ret;
		if (!added)
			break;
	}
	if (!lv->nth || !live_alive(ms))
		return (int)exited(err, lv->pid);
	if (round == STOP_ROUNDS)
		return cs_fail(err, CS_ERR_MEMORY,
			       "process %d keeps creating threads faster than "
			       "they can be stopped; try --no-block", lv->pid);
	return 0;
}

/* The namespace tid of a thread listed before the stop, else read now
 * (reading /proc for every thread would lengthen the stop). */
static int known_ns_tid(const struct memsrc *ms, const struct live *lv,
			int tid)
{
	size_t i;

	if (!lv->other_ns)
		return tid;
	for (i = 0; i < ms->nthreads; i++)
		if (ms->threads[i].tid == tid && ms->threads[i].ns_tid)
			return ms->threads[i].ns_tid;
	return ns_tid_of(lv, tid);
}

/* The stopped threads, with their fs_base, as ms->threads. */
static int publish_threads(struct memsrc *ms, struct live *lv,
			   struct cs_err *err)
{
	struct cs_thread *threads;
	size_t i;

	for (i = 0; i < lv->nth; i++)
		read_fs_base(&lv->th[i]);
	drop_gone(lv);
	threads = calloc(lv->nth ? lv->nth : 1, sizeof(*threads));
	if (!threads)
		return cs_fail(err, CS_ERR_INTERNAL, "out of memory");
	for (i = 0; i < lv->nth; i++) {
		threads[i].tid = lv->th[i].tid;
		threads[i].ns_tid = known_ns_tid(ms, lv, lv->th[i].tid);
		threads[i].fs_base = lv->th[i].fs_base;
		threads[i].has_fs_base = lv->th[i].has_fs_base;
		threads[i].has_regs = lv->th[i].has_fs_base;
		threads[i].regs = lv->th[i].regs;
	}
	free(ms->threads);
	ms->threads = threads;
	ms->nthreads = lv->nth;
	return 0;
}

int live_stop(struct memsrc *ms, struct cs_err *err)
{
	struct live *lv = ms->backend;
	int ret;

	if (lv->stopped)
		return 0;
	if (lv->pid == getpid())
		return cs_fail(err, CS_ERR_PERMISSION,
			       "cannot stop process %d: it is coroscope itself",
			       lv->pid);
	ret = stop_all(ms, lv, err);
	/* The mappings as they are now that nothing runs: what was mapped
	 * or unmapped since live_open() must be read (and captured) too. */
	if (!ret)
		ret = refresh_maps(ms, err);
	if (!ret)
		ret = publish_threads(ms, lv, err);
	if (ret) {
		resume_threads(lv);
		return ret;
	}
	memsrc_cache_clear(ms);
	lv->stopped = 1;
	clock_gettime(CLOCK_MONOTONIC, &lv->since);
	hold_for_tests();
	return 0;
}

void live_resume(struct memsrc *ms)
{
	struct live *lv;

	if (!ms || !ms->backend)
		return;
	lv = ms->backend;
	resume_threads(lv);
	if (lv->stopped) {
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		lv->paused_ms += ms_between(&lv->since, &now);
		lv->stopped = 0;
		/* What we cached is only true while the target is stopped,
		 * unless all it can change was captured. */
		if (!ms->frozen)
			memsrc_cache_clear(ms);
	}
}

double live_paused_ms(const struct memsrc *ms)
{
	const struct live *lv = ms->backend;
	double total = lv->paused_ms;

	if (lv->stopped) {
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		total += ms_between(&lv->since, &now);
	}
	return total;
}

int live_alive(const struct memsrc *ms)
{
	return pid_alive(ms->pid);
}

/* ---- opening ---- */

/* One line of /proc/PID/maps; pseudo names like [heap] and [stack] get
 * no path: they are no files to open.  0, -1 (no mapping), -2 (no
 * memory). */
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
	if (!pm.path)
		return 0;
	m->path = strdup(pm.path);
	return m->path ? 0 : -2;
}

static int read_maps(struct memsrc *ms, struct cs_err *err)
{
	char path[64];
	FILE *f;
	char *line = NULL;
	size_t cap = 0, alloc = 0;
	struct cs_mapping *maps = NULL;
	size_t n = 0;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", ms->pid);
	f = fopen(path, "re");
	if (!f) {
		if (errno == EACCES || errno == EPERM)
			return fail_denied(err, ms->pid, "read the mappings of");
		if (errno == ENOENT || errno == ESRCH)
			return cs_fail(err, CS_ERR_NO_PROCESS,
				       "no such process: %d", ms->pid);
		return cs_fail(err, CS_ERR_INTERNAL, "cannot open '%s': %s",
			       path, strerror(errno));
	}
	while (getline(&line, &cap, f) > 0) {
		int r;

		if (n == MAX_MAPS) {
			ret = cs_fail(err, CS_ERR_INTERNAL,
				      "more than %u mappings in '%s'",
				      MAX_MAPS, path);
			break;
		}
		if (n == alloc) {
			size_t na = alloc ? alloc * 2 : 256;
			struct cs_mapping *t = realloc(maps, na * sizeof(*t));

			if (!t) {
				ret = cs_fail(err, CS_ERR_INTERNAL,
					      "out of memory");
				break;
			}
			maps = t;
			alloc = na;
		}
		r = parse_maps_line(line, &maps[n]);
		if (r == -2) {
			ret = cs_fail(err, CS_ERR_INTERNAL, "out of memory");
			break;
		}
		if (r == 0)
			n++;
	}
	/* Reading maps of another user's process fails here, not at open. */
	if (!ret && ferror(f)) {
		ret = errno == EACCES || errno == EPERM ?
		      fail_denied(err, ms->pid, "read the mappings of") :
		      cs_fail(err, CS_ERR_INTERNAL, "cannot read '%s': %s",
			      path, strerror(errno));
	}
	free(line);
	fclose(f);
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
	int *tids;
	size_t n, i;

	if (list_tasks(ms->pid, &tids, &n) < 0) {
		if (errno == ENOMEM)
			return cs_fail(err, CS_ERR_INTERNAL, "out of memory");
		return cs_fail(err, CS_ERR_NO_PROCESS, "no such process: %d",
			       ms->pid);
	}
	ms->threads = calloc(n ? n : 1, sizeof(*ms->threads));
	if (!ms->threads) {
		free(tids);
		return cs_fail(err, CS_ERR_INTERNAL, "out of memory");
	}
	for (i = 0; i < n; i++) {
		ms->threads[i].tid = tids[i];
		ms->threads[i].ns_tid = ns_tid_of(ms->backend, tids[i]);
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
	free(lv->riov);
	free(lv->th);
	free(lv);
	ms->backend = NULL;
}

static const struct memsrc_ops live_ops = {
	.read_raw = live_read_raw,
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
 * to) is taken to mean its process.
 */
static int check_pid(int *pid, struct cs_err *err)
{
	char path[64];
	struct stat sb;
	long tgid, ppid;

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
	if (!pid_alive(*pid))
		return cs_fail(err, CS_ERR_NO_PROCESS,
			       "no such process: %d (it is a zombie)", *pid);
	if (shares_parent_vm(*pid, &ppid))
		return cs_fail(err, CS_ERR_NOT_PYTHON,
			       "process %d is a vfork child of process %ld "
			       "(posix_spawn) that has not called exec yet: it "
			       "runs in its parent's memory, so there is no "
			       "program of its own to show; dump process %ld",
			       *pid, ppid, ppid);
	return 0;
}

int live_open(struct memsrc **out, int pid, struct cs_err *err)
{
	struct memsrc *ms;
	struct live *lv;
	char buf[64];
	const char *env;
	int ret, depth = 0;

	*out = NULL;
	ret = check_pid(&pid, err);
	if (ret)
		return ret;
	ms = calloc(1, sizeof(*ms));
	lv = calloc(1, sizeof(*lv));
	if (lv)
		lv->riov = calloc(IOV_PAGES, sizeof(*lv->riov));
	if (!ms || !lv || !lv->riov) {
		if (lv)
			free(lv->riov);
		free(lv);
		free(ms);
		return cs_fail(err, CS_ERR_INTERNAL, "out of memory");
	}
	lv->pid = pid;
	lv->mem_fd = -1;
	env = getenv(PROC_MEM_ENV);
	lv->use_mem = env && *env && strcmp(env, "0");
	ret = memsrc_init(ms, &live_ops, lv, err);
	if (ret) {
		free(lv->riov);
		free(lv);
		free(ms);
		return ret;
	}
	ms->pid = pid;
	ms->ns_pid = own_ns_id(pid, 0, &depth);
	lv->other_ns = depth > 1;
	if (!ms->ns_pid || !lv->other_ns)
		ms->ns_pid = pid;
	snprintf(buf, sizeof(buf), "/proc/%d/root", pid);
	ms->root = strdup(buf);
	snprintf(buf, sizeof(buf), "/proc/%d/exe", pid);
	ms->exe_path = strdup(buf);
	if (!ms->root || !ms->exe_path) {
		ret = cs_fail(err, CS_ERR_INTERNAL, "out of memory");
		goto fail;
	}
	ret = read_maps(ms, err);
	/*
	 * The mapping list may be readable where the files behind it are not
	 * (no ptrace access): say so now, not "not a Python process" later.
	 */
	if (!ret && access(ms->root, F_OK) < 0 &&
	    (errno == EACCES || errno == EPERM))
		ret = fail_denied(err, pid, "read the files of");
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
