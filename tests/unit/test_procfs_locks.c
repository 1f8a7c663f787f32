/*
 * Unit test of common/procfs_locks.c: /proc/locks lines on fixed text,
 * and a lock this process holds found as the holder of the request a
 * child of it waits with, by the fd this process holds it through.
 */
#include "common/procfs_locks.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/check.h"
#include "common/banned.h"

static void lines(void)
{
	struct procfs_lock l;

	memset(&l, 0, sizeof(l));
	CHECK(procfs_locks_line("2: FLOCK  ADVISORY  WRITE 30661 "
				"fe:00:11035661 0 EOF\n", &l) == 0 &&
	      l.id == 2 && !l.waiting && !strcmp(l.type, "FLOCK") &&
	      l.write && l.pid == 30661 && l.ino == 11035661,
	      "a flock holder: %lld %s %ld %lu", l.id, l.type, l.pid, l.ino);
	CHECK(l.start == 0 && l.end == ULLONG_MAX, "to EOF: %llu %llu",
	      l.start, l.end);
	CHECK(l.has_dev && l.dev_major == 0xfe && l.dev_minor == 0,
	      "its device: %x:%x", l.dev_major, l.dev_minor);
	CHECK(procfs_locks_line("2: POSIX  ADVISORY  READ 4891 fe:00:11019663 "
				"1073741826 1073742335", &l) == 0 &&
	      l.start == 0x40000002ULL && l.end == 0x400001ffULL && !l.write,
	      "SQLite's SHARED range: %llx %llx", l.start, l.end);
	CHECK(procfs_locks_line("2: POSIX  ADVISORY  READ 1 fe:00:1 9 8",
				&l) < 0 &&
	      procfs_locks_line("2: POSIX  ADVISORY  READ 1 fe:00:1 -1 8",
				&l) < 0 &&
	      procfs_locks_line("2: POSIX  ADVISORY  READ 1 fe:00:1 0 9x",
				&l) < 0 &&
	      procfs_locks_line("2: POSIX  ADVISORY  READ 1 fe:00:1 0 "
				"99999999999999999999999", &l) < 0,
	      "ranges that do not parse");
	CHECK(procfs_locks_line("1: -> POSIX  ADVISORY  READ 30750 "
				"fe:00:11035662 0 9", &l) == 0 &&
	      l.id == 1 && l.waiting && !strcmp(l.type, "POSIX") &&
	      !l.write && l.pid == 30750 && l.ino == 11035662,
	      "a POSIX waiter");
	CHECK(procfs_locks_line("12:  -> FLOCK  ADVISORY  WRITE 5 "
				"00:1f:77 0 EOF", &l) == 0 && l.id == 12 &&
	      l.waiting && l.pid == 5 && l.ino == 77 && l.dev_major == 0 &&
	      l.dev_minor == 0x1f,
	      "a waiter behind a waiter (indented)");
	CHECK(procfs_locks_line("3: OFDLCK ADVISORY  WRITE -1 08:01:42 0 EOF",
				&l) == 0 && l.pid == -1 && l.ino == 42,
	      "an OFD lock: no process");
	CHECK(procfs_locks_line("4: LEASE  ACTIVE    READ 9 <none>:0 0 EOF",
				&l) == 0 && l.ino == 0 && l.pid == 9 &&
	      !l.has_dev, "a lease with no inode");
	CHECK(procfs_locks_line("5: FLOCK  ADVISORY  WRITE x fe:00:1 0 EOF",
				&l) < 0 &&
	      procfs_locks_line("5: FLOCK  ADVISORY  WRITE 1 fe00 0 EOF",
				&l) < 0 &&
	      procfs_locks_line("5: FLOCK  ADVISORY", &l) < 0 &&
	      procfs_locks_line("FLOCK ADVISORY WRITE 1 fe:00:1", &l) < 0 &&
	      procfs_locks_line("5: TOOLONGTYPE ADVISORY WRITE 1 fe:00:1",
				&l) < 0 &&
	      procfs_locks_line("", &l) < 0 &&
	      procfs_locks_line("2: FLOCK  ADVISORY  WRITE 30661 fe:00:110",
				&l) < 0 &&
	      procfs_locks_line("2: FLOCK  ADVISORY  WRITE 1 fg:00:1 0 EOF",
				&l) < 0 &&
	      procfs_locks_line("2: FLOCK  ADVISORY  WRITE 1 :00:1 0 EOF",
				&l) < 0 &&
	      procfs_locks_line("2: FLOCK  ADVISORY  WRITE 1 1000:0:1 0 EOF",
				&l) < 0,
	      "lines that do not parse");
}

/* Until child's request shows in /proc/locks (5 s at most): 0, or -1. */
static int wait_for_request(pid_t child, unsigned long ino,
			    struct procfs_lock *holder)
{
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	int i;

	for (i = 0; i < 500; i++) {
		if (procfs_locks_holder(child, ino, 0, holder) == 0)
			return 0;
		nanosleep(&pause, NULL);
	}
	return -1;
}

static void own_lock(void)
{
	char path[] = "/tmp/coroscope-locks-XXXXXX";
	struct procfs_lock h;
	struct stat st;
	pid_t child;
	int fd = mkstemp(path), other;

	memset(&h, 0, sizeof(h));
	if (fd < 0 || fstat(fd, &st) || flock(fd, LOCK_EX)) {
		CHECK(0, "a locked file: %s", strerror(errno));
		return;
	}
	/* a second fd first: the holder's fd is the one it locked by */
	other = open(path, O_RDONLY);
	child = fork();
	if (child == 0) {
		int mine = open(path, O_RDWR);

		alarm(10);
		_exit(mine < 0 || flock(mine, LOCK_EX) ? 1 : 0);
	}
	CHECK(child > 0 && wait_for_request(child, (unsigned long)st.st_ino,
					    &h) == 0 &&
	      h.pid == getpid() && !strcmp(h.type, "FLOCK") && h.write &&
	      h.ino == (unsigned long)st.st_ino && !h.waiting,
	      "the child's request waits behind this process's lock");
	CHECK(procfs_locks_holder_fd(getpid(), &h) == fd,
	      "held through fd %d", fd);
	CHECK(child > 0 && procfs_locks_holder(child, 0, 0, &h) == 0 &&
	      h.pid == getpid(), "without the inode: its only request");
	CHECK(procfs_locks_holder(getpid(), 0, 0, &h) < 0,
	      "this process waits for no lock");
	{
		struct procfs_file_id ids[2] = {
			{ major(st.st_dev) + 1, minor(st.st_dev),
			  (unsigned long)st.st_ino },
			{ major(st.st_dev), minor(st.st_dev),
			  (unsigned long)st.st_ino },
		};
		struct procfs_lock on[4];
		size_t n = procfs_locks_on(ids, 2, on, 4);

		CHECK(n == 1 && on[0].pid == getpid() && !on[0].waiting &&
		      on[0].ino == (unsigned long)st.st_ino,
		      "the locks on the file: its one lock, not the request "
		      "(%zu)", n);
		CHECK(procfs_locks_on(ids, 1, on, 4) == 0,
		      "none on the same inode of another device");
	}
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	if (other >= 0)
		close(other);
	close(fd);
	unlink(path);
}

int main(void)
{
	lines();
	own_lock();
	return CHECK_DONE("test_procfs_locks");
}
