/*
 * Unit test of common/procfs.c: the status, stat, cmdline, task list and
 * maps parsers, on this process's own /proc files and on fixed text.
 */
#include "attach/offcpu.h"
#include "common/procfs.h"
#include "common/procfs_fds.h"
#include "common/procfs_image.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "tests/unit/check.h"
#include "common/banned.h"

static const char status_text[] =
	"Name:\tpy thon\n"
	"State:\tS (sleeping)\n"
	"Tgid:\t1234\n"
	"NSpid:\t1234\t7\t1\n"
	"TracerPid:\t0\n"
	"Uid:\t1000\t1000\t1000\t1000\n"
	"CapEff:\t0000000000080000\n";

static void status_fields(void)
{
	long v = -1, ids[4];
	const char *p;
	size_t len = 0;

	CHECK(procfs_status_long(status_text, "Tgid", &v) == 0 && v == 1234,
	      "Tgid: %ld", v);
	CHECK(procfs_status_long(status_text, "TracerPid", &v) == 0 && v == 0,
	      "TracerPid");
	CHECK(procfs_status_long(status_text, "Uid", &v) == 0 && v == 1000,
	      "Uid: the first of four");
	CHECK(procfs_status_long(status_text, "Tgi", &v) < 0,
	      "a prefix of a name is not the name");
	CHECK(procfs_status_long(status_text, "Name", &v) < 0,
	      "text is not a number");
	CHECK(procfs_status_ids(status_text, "NSpid", ids, 4) == 3 &&
	      ids[0] == 1234 && ids[1] == 7 && ids[2] == 1, "NSpid: 3 ids");
	CHECK(procfs_status_ids(status_text, "NSpid", ids, 2) == 2,
	      "NSpid: bounded by max");
	CHECK(procfs_status_ids(status_text, "NStid", ids, 4) == 0,
	      "absent field: no ids");
	p = procfs_status_text(status_text, "Name", &len);
	CHECK(p && len == 7 && !strncmp(p, "py thon", 7), "Name text");
}

static double thread_cpu_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 1e9;  /* (no clock: stop spinning) */
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void own_files(void)
{
	struct procfs_stat st;
	char comm[PROCFS_COMM_MAX], path[64];
	long v = 0;
	int *ids = NULL;
	size_t n = 0;
	char *cmd;

	CHECK(procfs_status_field(getpid(), 0, "Tgid", &v) == 0 &&
	      v == getpid(), "own Tgid %ld", v);
	CHECK(procfs_status_field(getpid(), getpid(), "Pid", &v) == 0 &&
	      v == getpid(), "own main task's Pid");
	CHECK(procfs_stat(getpid(), 0, &st) == 0 && st.state == 'R' &&
	      st.ppid == getppid() && st.starttime > 0, "own stat");
	CHECK(procfs_state(getpid(), 0) == 'R', "own state");
	{
		struct procfs_schedstat ss;
		volatile unsigned long spin;

		/* Until this thread has used 50 ms of CPU (five ticks of
		 * USER_HZ 100): a fixed count of 50M turns took 17 ms on a
		 * fast host, which the kernel may round to 0 ticks.
		 * Bounded by 2,000M turns. */
		for (spin = 0; spin < 2000000000ul; spin++)
			if (!(spin % 1000000ul) && thread_cpu_ms() >= 50)
				break;
		CHECK(procfs_stat(getpid(), getpid(), &st) == 0 &&
		      st.utime + st.stime > 0, "own CPU ticks %llu+%llu",
		      st.utime, st.stime);
		CHECK(procfs_schedstat(getpid(), getpid(), &ss) == 0 &&
		      ss.cpu_ns > 0 && ss.runs > 0, "own schedstat");
	}
	CHECK(procfs_comm(getpid(), comm, sizeof(comm)) == 0 &&
	      !strncmp(comm, "test_procfs", 11), "own comm '%s'", comm);
	cmd = procfs_cmdline(getpid(), 4096);
	CHECK(cmd && strstr(cmd, "test_procfs"), "own cmdline");
	free(cmd);
	snprintf(path, sizeof(path), "/proc/%d/task", getpid());
	CHECK(procfs_list_ids(path, 100, getpid(), &ids, &n) == 0 && n >= 1 &&
	      ids[0] == getpid(), "own tasks, main first");
	free(ids);
	errno = 0;
	CHECK(procfs_status_field(0x3fffffff, 0, "Tgid", &v) < 0 &&
	      errno == ENOENT, "no such process: ENOENT");
	CHECK(procfs_state(0x3fffffff, 0) == 0, "no state of no process");
	CHECK(procfs_state_dead('Z') && !procfs_state_dead('S'), "dead");
}

static void maps_lines(void)
{
	char l1[] = "7f00-7f80 r-xp 00001000 08:01 42   /usr/lib/a b.so\n";
	char l2[] = "1000-2000 rw-p 00000000 00:00 0 \n";
	char l3[] = "3000-4000 r--p 00002000 08:01 7 /tmp/x (deleted)\n";
	char l4[] = "5000-6000 rw-p 00000000 00:00 0   [heap]\n";
	char bad[] = "zzz\n";
	char l5[] = "1000-2000 rw-p 00000000 00:00 0\n";
	char l6[] = "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n";
	char l7[] = "7000-8000 rw-s 00000000 fd:1b 18446744073709551615 /dev/shm/sem.x\n";
	const char *bads[] = {
		"1000-2000 rw-p 00000000 0000 0\n",   /* no colon */
		"1000-2000 rw-p 00000000 00:00 1x\n",  /* inode not a number */
		"1000-2000 rw-p 00000000 00:00 18446744073709551616\n",
		"1000-2000 rw-p 00000000 00:00\n",   /* no inode */
		"1000 2000 rw-p 00000000 00:00 0\n",  /* no dash */
		"2000-1000 rw-p 00000000 00:00 0\n",  /* backwards */
		"1000-2000 rw-pq 00000000 00:00 0\n", /* five perms */
		"1000-2000 rw-p 0000g000 00:00 0\n",  /* bad offset */
		"10000000000000000-2 rw-p 0 00:00 0\n", /* 17 digits */
		"-2000 rw-p 00000000 00:00 0\n",
		"",
	};
	struct procfs_map m;
	size_t i;

	CHECK(procfs_maps_line(l1, &m) == 0 && m.start == 0x7f00 &&
	      m.end == 0x7f80 && m.offset == 0x1000 &&
	      !strcmp(m.perms, "r-xp") && m.path &&
	      !strcmp(m.path, "/usr/lib/a b.so") && !m.deleted &&
	      m.dev == (8ull << 32 | 1) && m.inode == 42,
	      "file mapping, path with a space");
	CHECK(procfs_maps_line(l7, &m) == 0 && m.dev == (0xfdull << 32 | 0x1b) &&
	      m.inode == 18446744073709551615ull && m.path &&
	      !strcmp(m.path, "/dev/shm/sem.x"), "device and inode");
	CHECK(procfs_maps_line(l2, &m) == 0 && !m.path && !m.inode,
	      "anonymous");
	CHECK(procfs_maps_line(l3, &m) == 0 && m.deleted && m.path &&
	      !strcmp(m.path, "/tmp/x"), "deleted");
	CHECK(procfs_maps_line(l4, &m) == 0 && !m.path, "pseudo name");
	CHECK(procfs_maps_line(bad, &m) < 0, "garbage");
	CHECK(procfs_maps_line(l5, &m) == 0 && m.start == 0x1000 &&
	      m.end == 0x2000 && !m.path, "no blank after the inode");
	CHECK(procfs_maps_line(l6, &m) == 0 &&
	      m.start == 0xffffffffff600000ull && !strcmp(m.perms, "--xp") &&
	      !m.path, "16 digits, pseudo name");
	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		char buf[128];

		snprintf(buf, sizeof(buf), "%s", bads[i]);
		CHECK(procfs_maps_line(buf, &m) < 0, "malformed line refused");
	}
}

/* se.exec_start of a sched file: milliseconds and six digits of
 * nanoseconds; the first line is the task's comm, which may mimic a
 * field. */
static void sched_exec_start(void)
{
	static const char text[] =
		"se.exec_start : 9 (1, #threads: 1)\n"
		"-------------------------------------------------\n"
		"se.exec_start                                :"
		"      78511497.565477\n"
		"se.vruntime                                  :"
		"        222086.528878\n";
	static const char *const bad[] = {
		"",
		"x (1, #threads: 1)\nse.exec_start : \n",
		"x (1, #threads: 1)\nse.exec_start 12.5\n",
		"x (1, #threads: 1)\nse.exec_start : -1.5\n",
		"x (1, #threads: 1)\nse.exec_start : 99999999999999999999.0\n",
	};
	uint64_t ns = 0;
	struct procfs_stat st;
	size_t i;

	CHECK(procfs_sched_exec_start(text, &ns) == 0 &&
	      ns == 78511497565477ull, "exec_start %llu",
	      (unsigned long long)ns);
	CHECK(procfs_sched_exec_start(
		      "x (1, #threads: 1)\nse.exec_start : 12.5\n", &ns) == 0 &&
	      ns == 12500000ull, "short fraction: %llu",
	      (unsigned long long)ns);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(procfs_sched_exec_start(bad[i], &ns) < 0,
		      "malformed sched text %zu refused", i);
	/* this thread's own, and its CPU in stat */
	CHECK(procfs_exec_start(0, 0, &ns) == 0 && ns > 0 &&
	      procfs_exec_start(getpid(), getpid(), &ns) == 0,
	      "own exec_start");
	CHECK(procfs_stat(getpid(), 0, &st) == 0 && st.processor >= 0,
	      "own CPU %d", st.processor);
}

/* Off-CPU seconds from exec_start and "now" on its CPU: a zeroed
 * exec_start (the kernel's mark of a task moved to another CPU and not
 * run there yet) or a figure longer than the task's life is unknown,
 * not hours. */
static void off_cpu_seconds(void)
{
	CHECK(offcpu_seconds(5000000000ull, 7500000000ull, 10.0) == 2.5,
	      "2.5 s off its CPU");
	CHECK(offcpu_seconds(5000000000ull, 4000000000ull, 10.0) == 0,
	      "now before exec_start (another CPU's clock): 0");
	CHECK(offcpu_seconds(0, 51552000000000ull, 9.0) == OFFCPU_UNKNOWN,
	      "zeroed exec_start: unknown");
	CHECK(offcpu_seconds(5000000000ull, 0, 9.0) == OFFCPU_UNKNOWN,
	      "no now: unknown");
	CHECK(offcpu_seconds(1000000000ull, 61000000000ull, 30.0) ==
	      OFFCPU_UNKNOWN, "60 s off the CPU of a 30 s old task: unknown");
	CHECK(offcpu_seconds(1000000000ull, 61000000000ull, -1) == 60.0,
	      "age unknown: the figure");
}

/* The system call a thread sits in: this one, reading the file, in
 * read(2) (0 on x86_64); a child blocked in read(2) on an empty pipe
 * too, once it got there (asked for up to 2 s); no such process is
 * unknown. */
static void thread_syscall(void)
{
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	unsigned long long arg0 = 0;
	long nr = -2;
	int fds[2], tries, ret = -1;
	pid_t child;
	char c;

#if defined(__x86_64__)
	CHECK(procfs_thread_syscall(getpid(), getpid(), &nr) == 0 && nr == 0,
	      "own thread not in read: %ld", nr);
#endif
	CHECK(procfs_thread_syscall(0x7ffffff0, 0x7ffffff0, &nr) == -1,
	      "no such process read");
	if (pipe(fds) != 0 || (child = fork()) < 0) {
		CHECK(0, "pipe or fork: %s", strerror(errno));
		return;
	}
	if (child == 0) {
		close(fds[1]);
		_exit(read(fds[0], &c, 1) < 0);
	}
	close(fds[0]);
	for (tries = 0; tries < 200; tries++) {
		ret = procfs_thread_syscall(child, child, &nr);
		if (ret == 0 && nr >= 0)
			break;
		nanosleep(&pause, NULL);
	}
#if defined(__x86_64__)
	CHECK(ret == 0 && nr == 0, "child blocked in read: %d, %ld", ret, nr);
	/* its first argument: the fd it reads */
	CHECK(procfs_thread_syscall_arg0(child, child, &nr, &arg0) == 0 &&
	      nr == 0 && arg0 == (unsigned long long)fds[0],
	      "child reads fd %d: %llu", fds[0], arg0);
#else
	CHECK(ret == 0 && nr >= 0, "child in a system call: %d, %ld", ret, nr);
#endif
	close(fds[1]);
	waitpid(child, NULL, 0);
}

/* What an fd of this process is: both ends of a pipe name one pipe, the
 * read end O_RDONLY, the write end O_WRONLY; a closed fd is nothing. */
static void own_fds(void)
{
	char r[64], w[64];
	int fds[2], rmode = -2, wmode = -2;

	if (pipe(fds) != 0) {
		CHECK(0, "pipe: %s", strerror(errno));
		return;
	}
	CHECK(procfs_fd(getpid(), fds[0], r, sizeof(r), &rmode) == 0 &&
	      !strncmp(r, "pipe:[", 6) && rmode == O_RDONLY,
	      "read end: %s, mode %d", r, rmode);
	CHECK(procfs_fd(getpid(), fds[1], w, sizeof(w), &wmode) == 0 &&
	      !strcmp(r, w) && wmode == O_WRONLY,
	      "write end: %s, mode %d", w, wmode);
	CHECK(procfs_fd(getpid(), fds[0], r, 4, &rmode) == 0 &&
	      strlen(r) == 3, "cut to its buffer: '%s'", r);
	close(fds[0]);
	close(fds[1]);
	CHECK(procfs_fd(getpid(), fds[0], r, sizeof(r), &rmode) < 0 &&
	      rmode == -1, "a closed fd");
}

/* A child holding a pipe's write end, found through every process; not
 * where it is skipped, nor the read end this process holds. */
static void find_writer(void)
{
	char link[64];
	int fds[2], mode, fd = -2, self = getpid(), skip[2], found;
	pid_t child;

	if (pipe(fds) != 0 || procfs_fd(self, fds[0], link, sizeof(link),
					&mode) < 0) {
		CHECK(0, "pipe: %s", strerror(errno));
		return;
	}
	child = fork();
	if (child == 0) {
		close(fds[0]);
		alarm(10);
		pause();
		_exit(0);
	}
	close(fds[1]);
	skip[0] = self;
	skip[1] = (int)child;
	CHECK(child > 0 && procfs_find_fd(link, O_WRONLY, skip, 1, &fd) ==
	      child && fd == fds[1], "the child's write end: fd %d", fd);
	CHECK(procfs_find_fd(link, O_WRONLY, skip, 2, &fd) == 0 && fd == -1,
	      "the child skipped");
	/* (or the child's copy, before it closed it, with a pid below
	 * this one's after a wrap) */
	found = procfs_find_fd(link, O_RDONLY, NULL, 0, &fd);
	CHECK((found == self && fd == fds[0]) || found == (int)child,
	      "the read end, this process's: %d fd %d", found, fd);
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	close(fds[0]);
}

/* A forked child runs this program image, an exec'd one another (the
 * AT_RANDOM bytes). */
static void same_image(void)
{
	unsigned char r[16];
	pid_t forked, execd;
	int fds[2];
	char c;

	CHECK(procfs_at_random(getpid(), r) == 0, "AT_RANDOM read");
	forked = fork();
	if (forked == 0) {
		alarm(10);
		pause();
		_exit(0);
	}
	if (pipe(fds) != 0) {
		CHECK(0, "pipe: %s", strerror(errno));
		fds[0] = fds[1] = -1;
	}
	execd = fds[0] >= 0 ? fork() : -1;
	if (execd == 0) {
		close(fds[0]);
		/* (the pipe closes on exec: the parent then knows) */
		fcntl(fds[1], F_SETFD, FD_CLOEXEC);
		execl("/bin/sleep", "sleep", "10", (char *)NULL);
		_exit(127);
	}
	if (fds[0] >= 0) {
		close(fds[1]);
		while (execd > 0 && read(fds[0], &c, 1) < 0 && errno == EINTR)
			;
		close(fds[0]);
	}
	CHECK(forked > 0 && procfs_same_image(getpid(), forked) == 1,
	      "a forked child: the same image");
	CHECK(execd > 0 && procfs_same_image(getpid(), execd) == 0,
	      "an exec'd child: another");
	CHECK(procfs_same_image(getpid(), -1) == -1, "no such process");
	if (forked > 0) {
		kill(forked, SIGKILL);
		waitpid(forked, NULL, 0);
	}
	if (execd > 0) {
		kill(execd, SIGKILL);
		waitpid(execd, NULL, 0);
	}
}

/* An epoll instance's fdinfo: its "tfd:" lines name the fds it watches;
 * the other lines (pos, flags, mnt_id, ino) none. */
static void epoll_lines(void)
{
	struct procfs_epoll_fd e = { -7, 0, 0 };

	CHECK(procfs_epoll_line("tfd:        5 events:       19 data:  "
				"500000000 pos:0 ino:2a sdev:8\n", &e) == 0 &&
	      e.fd == 5 && e.events == 0x19 && e.ino == 0x2a, "tfd line");
	CHECK(procfs_epoll_line("tfd: 2147483647 events: 1 data: 0\n",
				&e) == 0 && e.fd == 2147483647 && !e.ino,
	      "largest fd, no inode");
	CHECK(procfs_epoll_line("tfd: 2147483648 events: 1\n", &e) < 0,
	      "past an int");
	CHECK(procfs_epoll_line("tfd: -1 events: 1\n", &e) < 0, "negative");
	CHECK(procfs_epoll_line("tfd: 5 data: 1\n", &e) < 0, "no events");
	CHECK(procfs_epoll_line("tfd: 5 events: 1ffffffff\n", &e) < 0,
	      "events past 32 bits");
	CHECK(procfs_epoll_line("tfd: 5\n", &e) < 0, "cut short");
	CHECK(procfs_epoll_line("pos:\t0\n", &e) < 0, "another line");
	CHECK(procfs_epoll_line("tfd:", &e) < 0, "empty");
}

int main(void)
{
	sched_exec_start();
	off_cpu_seconds();
	thread_syscall();
	status_fields();
	own_files();
	own_fds();
	find_writer();
	same_image();
	maps_lines();
	epoll_lines();
	return CHECK_DONE("test_procfs");
}
