/*
 * File locks as the kernel lists them in /proc/locks (and, per open
 * file, in /proc/PID/fdinfo/FD's "lock:" lines): who holds the flock(2)
 * or fcntl(2) lock a process waits for.  A request blocked behind a
 * lock is listed under it with the same number and "->" ("2: -> FLOCK
 * ADVISORY WRITE 123 fe:00:456 0 EOF"), so the holder is the line of
 * that number without it.  The lines are the kernel's; pids are those
 * of the reader's PID namespace.
 */
#ifndef COROSCOPE_COMMON_PROCFS_LOCKS_H
#define COROSCOPE_COMMON_PROCFS_LOCKS_H

#include <stddef.h>

struct procfs_lock {
	long long id;        /* the line's number, shared with its waiters */
	int waiting;         /* "->": a request blocked behind lock id */
	char type[8];        /* "FLOCK", "POSIX", "OFDLCK", "LEASE", ... */
	int write;           /* 1: WRITE (exclusive), 0: READ or other */
	long pid;            /* -1 for an OFD lock (no process owns it), 0
				where the owner is outside the namespace */
	unsigned long ino;   /* the file's inode number, 0 for none */
	char range[48];      /* "START END" as listed ("0 EOF"): an OFD
				lock, which names no process, is told from
				another on the file by it */
	unsigned long long start, end;  /* its bytes, end ULLONG_MAX for
					   "EOF" */
	unsigned dev_major, dev_minor;  /* the file's device, where */
	int has_dev;                    /* ... the line names one */
};

/* A file as /proc/locks names it: its device and inode. */
struct procfs_file_id {
	unsigned major, minor;
	unsigned long ino;
};

/* Parse one line of /proc/locks (or what follows "lock:\t" in fdinfo):
 * 0, or -1 for a line that does not parse. */
int procfs_locks_line(const char *line, struct procfs_lock *out);

/* The lock process waiter's request on inode ino waits behind (ino 0:
 * its only waiting request, when it has one or all wait behind the same
 * lock) into *holder: 0; -1 when /proc/locks lists no such request (it
 * was granted, or cannot be read) or not its holder; -2 when several
 * such requests wait behind different locks.  With ofd, an
 * OFD request (F_OFD_SETLKW), which /proc/locks lists with pid -1: the
 * first such request on inode ino (which must be given). */
int procfs_locks_holder(int waiter, unsigned long ino, int ofd,
			struct procfs_lock *holder);

/* The file descriptor of process pid through which it holds lock l
 * (its fdinfo's "lock:" lines, the first of its fds checked; bounded):
 * the fd; -1 when none of its fds has it; -2 when its fds cannot be
 * listed (gone, another user's).  A flock() or OFD lock is listed under
 * every process that shares the open file holding it, with the pid of
 * the one that took it, which may have closed it since, or ended. */
int procfs_locks_holder_fd(int pid, const struct procfs_lock *l);

/* The process, of all those this one can see, with an fd whose fdinfo
 * lists lock l (within a budget of fdinfo reads, 16384), its fd into
 * *fd: the pid, or 0 when none is found (*fd -1). */
int procfs_locks_find_holder(const struct procfs_lock *l, int *fd);

/* The locks held (no requests) on any of the files ids[0..nids), as
 * /proc/locks lists them, at most max into out: how many (0 when it
 * cannot be read). */
size_t procfs_locks_on(const struct procfs_file_id *ids, size_t nids,
		       struct procfs_lock *out, size_t max);

#endif
