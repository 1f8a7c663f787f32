/* Explaining why the kernel refused to let coroscope trace or read a
 * process: already traced, another user, not dumpable, ptrace_scope. */
#include "attach/live_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/procfs.h"
#include "common/banned.h"

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

/* Is the tracer, by its name, another coroscope: "coroscope", or this
 * one's own name (a copy installed under another)? */
static int tracer_is_coroscope(int tracer)
{
	char comm[PROCFS_COMM_MAX], own[PROCFS_COMM_MAX];

	if (procfs_comm(tracer, comm, sizeof(comm)) != 0)
		return 0;
	return !strcmp(comm, "coroscope") ||
	       (procfs_comm(getpid(), own, sizeof(own)) == 0 &&
		!strcmp(comm, own));
}

/* TracerPid names the tracing thread; its process is the thread group's
 * (coroscope traces from a thread of its own). */
static long tracer_process(long tracer)
{
	long tgid;

	return procfs_status_field((int)tracer, 0, "Tgid", &tgid) == 0 &&
	       tgid > 0 ? tgid : tracer;
}

/* The process, or its thread tid (0: the process), already has a
 * tracer (ptrace allows one).  A debugger may trace one thread alone
 * (strace -p TID): then the rest were ours already as that one failed. */
static int fail_traced(struct cs_err *err, int pid, int tid,
		       const char *what, long tracer)
{
	char comm[PROCFS_COMM_MAX], it[48];

	if (tid > 0 && tid != pid)
		(void)snprintf(it, sizeof(it), "its thread %d", tid);
	else
		(void)snprintf(it, sizeof(it), "it");
	tracer = tracer_process(tracer);
	if (tracer == getpid())
		return cs_fail(err, CS_ERR_PERMISSION,
			       "permission denied: cannot %s process %d: "
			       "coroscope already traces %s", what, pid, it);
	if (tracer_is_coroscope((int)tracer))
		return cs_fail(err, CS_ERR_PERMISSION,
			       "permission denied: cannot %s process %d: %s is "
			       "already traced by process %ld, another "
			       "coroscope; try again when that one is done",
			       what, pid, it, tracer);
	procfs_comm((int)tracer, comm, sizeof(comm));
	return cs_fail(err, CS_ERR_PERMISSION,
		       "permission denied: cannot %s process %d: %s is already "
		       "traced by process %ld (%s); detach that debugger first",
		       what, pid, it, tracer, comm[0] ? comm : "?");
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

int live_fail_denied(struct cs_err *err, int pid, const char *what)
{
	return live_fail_denied_thread(err, pid, 0, what);
}

int live_fail_denied_thread(struct cs_err *err, int pid, int tid,
			    const char *what)
{
	char status[PROCFS_STATUS_MAX];
	long tracer = 0, uid = -1;
	int cap = has_cap_sys_ptrace();

	/* (the thread refused: its own tracer, if any, says why) */
	if (tid > 0 && tid != pid &&
	    procfs_status_read(pid, tid, status, sizeof(status)) == 0 &&
	    procfs_status_long(status, "TracerPid", &tracer) == 0 &&
	    tracer > 0)
		return fail_traced(err, pid, tid, what, tracer);
	if (procfs_status_read(pid, 0, status, sizeof(status)) < 0)
		status[0] = '\0';
	if (procfs_status_long(status, "TracerPid", &tracer) == 0 && tracer > 0)
		return fail_traced(err, pid, 0, what, tracer);
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

long live_exited(struct cs_err *err, int pid)
{
	return cs_fail(err, CS_ERR_EXITED, "process %d exited", pid);
}

/*
 * Why a thread may not have stopped in time, from its state as the
 * wait ends: asleep in the kernel where no signal reaches it (a hung
 * NFS read, a vfork parent), or runnable but given no CPU (an
 * overloaded host, or a thread of the lowest priority).
 */
const char *live_stop_hint(char state)
{
	switch (state) {
	case 'D':
		return "in uninterruptible sleep";
	case 'R':
		return "runnable but given no CPU: an overloaded host?";
	case 0:
		return "its state is unknown";
	default:
		return "not stopped when asked";
	}
}
