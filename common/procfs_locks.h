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
};

/* Parse one line of /proc/locks (or what follows "lock:\t" in fdinfo):
 * 0, or -1 for a line that does not parse. */
int procfs_locks_line(const char *line, struct procfs_lock *out);

/* The lock process waiter's request on inode ino waits behind (ino 0:
 * its only waiting request, when it has one or all wait behind the same
 * lock) into *holder: 0, or -1 when /proc/locks lists no such request
 * (it was granted, or cannot be read) or not its holder. */
int procfs_locks_holder(int waiter, unsigned long ino,
			struct procfs_lock *holder);

/* The file descriptor of process pid through which it holds lock l
 * (its fdinfo's "lock:" lines, the first of its fds checked; bounded):
 * the fd, or -1 when none is found. */
int procfs_locks_holder_fd(int pid, const struct procfs_lock *l);

#endif
