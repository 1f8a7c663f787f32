/*
 * The one home for reading Linux's /proc: status fields, comm, stat,
 * cmdline, task lists and maps lines.  Every file is read whole into a
 * bounded buffer (no stdio, no blocking) and parsed here, so the rest of
 * coroscope never splits a /proc line itself.
 *
 * The text comes from the kernel, but parts of it are the target's own
 * (comm, cmdline, paths): callers print them only through the cleaning
 * these functions do, or their own escaping.
 *
 * Errors: -1 with errno set (ENOENT or ESRCH: no such process; EACCES or
 * EPERM: not allowed; EINVAL: the file does not parse), so that callers
 * can give the cause in their own terms.  Nothing here prints.
 */
#ifndef COROSCOPE_COMMON_PROCFS_H
#define COROSCOPE_COMMON_PROCFS_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

/* Big enough for any status file (a few hundred bytes to ~1.5 KiB). */
#define PROCFS_STATUS_MAX 4096
/* Big enough for comm (TASK_COMM_LEN is 16) plus a newline. */
#define PROCFS_COMM_MAX 64

/* A name of /proc ("123", a process's or an fd's): its value, or 0 for
 * another name, one past an int, or "0". */
int procfs_id(const char *name);

/* Read a small file into buf (size bytes, NUL-terminated): its length,
 * or -1.  The rest of a longer file is not read. */
ssize_t procfs_read(const char *path, char *buf, size_t size);

/* /proc/PID/status, or /proc/PID/task/TID/status when tid != 0, into buf
 * (at least PROCFS_STATUS_MAX bytes is enough): 0 or -1. */
int procfs_status_read(int pid, int tid, char *buf, size_t size);

/* The text of field name in a status buffer ("Name", "CapEff"): the
 * value after "name:" and its blanks, len bytes up to the newline;
 * NULL when the field is absent. */
const char *procfs_status_text(const char *status, const char *name,
			       size_t *len);

/* The first number of field name ("Tgid", "TracerPid", "Uid"): 0, or -1
 * when absent or not a number. */
int procfs_status_long(const char *status, const char *name, long *out);

/*
 * Every number of a field, up to max ("NSpid": the pid, or in a task's
 * status its tid, in each PID namespace the task is in, from the one
 * /proc belongs to, first, to the task's own, last): how many were
 * stored, 0 when absent.
 */
size_t procfs_status_ids(const char *status, const char *name, long *ids,
			 size_t max);

/* One numeric field of /proc/PID[/task/TID]/status: 0 or -1. */
int procfs_status_field(int pid, int tid, const char *name, long *out);

/* A thread's context switches, voluntary and not, added up (its status
 * file's two counts): 0, or -1 when they cannot be read. */
int procfs_context_switches(int pid, int tid, uint64_t *out);

/* /proc/PID/comm without its newline, controls replaced by '?'; "" and
 * -1 when it cannot be read.  len >= 2. */
int procfs_comm(int pid, char *buf, size_t len);

/* The fields of /proc/PID[/task/TID]/stat that coroscope uses. */
struct procfs_stat {
	char state;                    /* 'R', 'S', 'D', 'Z', 't'... */
	int ppid, pgid;
	unsigned long long utime, stime;  /* CPU time, in clock ticks */
	unsigned long long starttime;  /* clock ticks after boot: tells a
					* reused pid apart */
	int processor;                 /* the CPU it last ran on, -1
					  unknown */
};

/* Parse /proc/PID/stat (tid 0) or /proc/PID/task/TID/stat: 0 or -1. */
int procfs_stat(int pid, int tid, struct procfs_stat *st);

/* /proc/PID/task/TID/schedstat (tid 0: the process's): exact figures,
 * in kernels built with schedstats. */
struct procfs_schedstat {
	unsigned long long cpu_ns;     /* on a CPU */
	unsigned long long wait_ns;    /* runnable, waiting for a CPU */
	unsigned long long runs;       /* times put on a CPU */
};

int procfs_schedstat(int pid, int tid, struct procfs_schedstat *st);

/*
 * se.exec_start of /proc/PID/task/TID/sched (kernels with sched debug
 * files), in nanoseconds of the clock of the CPU the task last ran on
 * (that CPU's run queue clock, less its interrupt and stolen time):
 * when a sleeping task last stopped running, or a running one last
 * started.  The clocks of two CPUs differ (by seconds, after days), so
 * only a value read on the same CPU compares.  pid 0: the calling
 * thread's own (/proc/thread-self/sched).  0 or -1 with errno.
 */
int procfs_exec_start(int pid, int tid, uint64_t *ns);
/* The same, parsed from a sched file's text (NUL-terminated; its first
 * line holds the task's comm, the target's text). */
int procfs_sched_exec_start(const char *text, uint64_t *ns);

/* The state letter alone, or 0 with errno set. */
char procfs_state(int pid, int tid);

/* A dead task: a zombie or being reaped ('Z', 'X', 'x'). */
int procfs_state_dead(char state);

/*
 * The command line, NUL-separated arguments joined by spaces, the rest
 * as the process has it (a target's: escape it to show it), at most max
 * bytes read; newly allocated, or NULL (a kernel thread, a zombie,
 * gone).
 */
char *procfs_cmdline(int pid, size_t max);

/*
 * The numeric names in dir ("/proc/PID/task", "/proc"), at most max,
 * ascending; with first > 0, first is moved to the front when present.
 * 0, or -1 with errno when dir cannot be opened.
 */
int procfs_list_ids(const char *dir, size_t max, int first, int **out,
		    size_t *nout);

/*
 * Does process pid read the same CLOCK_MONOTONIC as this one?  Not when
 * it runs in another time namespace (Linux 5.6+, which may offset it):
 * 1 same, 0 other or unknown.
 */
int procfs_same_clock(int pid);

/* When process pid started, in seconds since the epoch (the system's
 * clock now, less its uptime, plus the start's ticks after boot): 0, or
 * -1 when unknown. */
int procfs_start_time(int pid, double *out);

/* One /proc/PID/maps line, parsed in place. */
struct procfs_map {
	uint64_t start, end, offset;
	char perms[5];             /* "r-xp" */
	const char *path;          /* into the line; NULL for anonymous and
				    * pseudo names ([heap], [stack]...) */
	int deleted;               /* " (deleted)" was cut off path */
	uint64_t dev;              /* major << 32 | minor */
	uint64_t inode;            /* 0 for anonymous */
};

/* The next line of f into line (size bytes, NUL-terminated, with its
 * newline), the first size - 1 bytes of a longer one, whose rest is
 * read past: 1, or 0 at the end of f. */
int procfs_next_line(FILE *f, char *line, size_t size);

/* Parse one line (its newline and " (deleted)" are cut off in place):
 * 0, or -1 for a line that does not parse. */
int procfs_maps_line(char *line, struct procfs_map *m);

/* The system call thread tid of pid sits in (/proc/PID/task/TID/
 * syscall's first field, the architecture's number; -1 blocked outside
 * one) into *nr: 0; 1 when it runs in user space ("running"); -1 when
 * the file cannot be read or does not parse. */
int procfs_thread_syscall(int pid, int tid, long *nr);
/* The same, and the call's first argument (a file descriptor for
 * write(2)) into *arg0 when it sits in one. */
int procfs_thread_syscall_arg0(int pid, int tid, long *nr,
			       unsigned long long *arg0);
/* The same with its first nargs arguments (at most six; 0 for those
 * not read). */
int procfs_thread_syscall_args(int pid, int tid, long *nr,
			       unsigned long long *args, size_t nargs);

/* len bytes at addr of live process pid, read now through /proc/PID/mem
 * (not a collection's copy): 0, or -1 when they cannot all be read. */
int procfs_mem_read(int pid, uint64_t addr, void *buf, size_t len);

/* Where thread tid of pid sleeps in the kernel (/proc/PID/task/TID/
 * wchan: a kernel function's name, "0" when it runs) into buf: 0, or
 * -1 when it cannot be read. */
int procfs_thread_wchan(int pid, int tid, char *buf, size_t len);

/* One fd an epoll instance watches, from a line of its /proc/PID/
 * fdinfo/EPFD ("tfd:       5 events:       19 data: ... ino:2a ..."):
 * the fd as the process that added it numbered it, the events asked
 * for, the watched file's inode (0 where the line names none). */
struct procfs_epoll_fd {
	int fd;
	unsigned events;
	uint64_t ino;
};
/* 0 with *out set, -1 for another line. */
int procfs_epoll_line(const char *line, struct procfs_epoll_fd *out);
/* The fds epoll instance epfd of pid watches, the first max of them in
 * its fdinfo's order into out: how many lines name one (counted on
 * past max, 65536 lines read at most), or -1 when it cannot be read. */
int procfs_epoll_fds(int pid, int epfd, struct procfs_epoll_fd *out,
		     size_t max);
/* The inode of the file fd of pid has open (fdinfo's "ino:", else the
 * number of its link's "socket:[N]", "pipe:[N]"): 0, or -1 when
 * neither says. */
int procfs_fd_inode(int pid, int fd, uint64_t *ino);

/* What file descriptor fd of pid is: its /proc/PID/fd link's target
 * ("pipe:[123]", a path), NUL-terminated and cut to len - 1 bytes, and
 * its access mode (O_RDONLY, O_WRONLY or O_RDWR, from fdinfo's flags;
 * -1 unknown).  0, or -1 when it cannot be read. */
int procfs_fd(int pid, int fd, char *buf, size_t len, int *accmode);

#endif
