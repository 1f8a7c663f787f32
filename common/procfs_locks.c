#include "common/procfs_locks.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/procfs.h"
#include "common/banned.h"

/* Lines of /proc/locks read at most: every lock of the machine. */
#define MAX_LINES (1UL << 20)
/* A line: "123: -> POSIX  ADVISORY  WRITE 1234 fe:00:1234567 0 EOF"
 * and a nested waiter's indent, one space per request queued before
 * it: a line longer than this is skipped. */
#define LINE_MAX_LEN 4096
/* Open files of a holder looked through for its lock, at most. */
#define MAX_FDS 4096
/* Processes, and open files of them all (their fdinfo read), looked
 * through for the holder of a lock no process of the run's tree has. */
#define MAX_PROCS 32768UL
#define MAX_READS 16384UL

static const char *skip_spaces(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* The word at *s into buf (size bytes with its NUL), s moved past it:
 * 0, or -1 for none or one too long. */
static int word(const char **s, char *buf, size_t size)
{
	const char *w = skip_spaces(*s);
	size_t n = strcspn(w, " \t\n");

	if (!n || n >= size)
		return -1;
	memcpy(buf, w, n);
	buf[n] = '\0';
	*s = w + n;
	return 0;
}

/* The device of "fe:00:123" (major and minor in hex) up to its last
 * colon, into out: 0, or -1. */
static int lock_dev(const char *dev, const char *last, struct procfs_lock *out)
{
	unsigned long maj, min;
	char *end;

	if (!isxdigit((unsigned char)dev[0]))
		return -1;
	errno = 0;
	maj = strtoul(dev, &end, 16);
	if (errno || *end != ':' || !isxdigit((unsigned char)end[1]))
		return -1;
	min = strtoul(end + 1, &end, 16);
	if (errno || end != last || maj > 0xfff || min > 0xfffff)
		return -1;
	out->dev_major = (unsigned)maj;
	out->dev_minor = (unsigned)min;
	out->has_dev = 1;
	return 0;
}

int procfs_locks_line(const char *line, struct procfs_lock *out)
{
	const char *s = skip_spaces(line), *colon;
	char flavor[16], mode[8], num[24], dev[40], start[24], stop[24];
	char *end;

	memset(out, 0, sizeof(*out));
	/* "ID: [-> ]TYPE FLAVOR MODE PID MAJ:MIN:INO START END", a nested
	 * waiter's "->" indented further */
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	out->id = strtoll(s, &end, 10);
	if (errno || *end != ':')
		return -1;
	s = skip_spaces(end + 1);
	if (!strncmp(s, "->", 2)) {
		out->waiting = 1;
		s += 2;
	}
	if (word(&s, out->type, sizeof(out->type)) < 0 ||
	    word(&s, flavor, sizeof(flavor)) < 0 ||
	    word(&s, mode, sizeof(mode)) < 0 ||
	    word(&s, num, sizeof(num)) < 0 || word(&s, dev, sizeof(dev)) < 0 ||
	    word(&s, start, sizeof(start)) < 0 ||
	    word(&s, stop, sizeof(stop)) < 0)
		return -1;  /* (a line cut short included) */
	out->write = !strcmp(mode, "WRITE");
	snprintf(out->range, sizeof(out->range), "%s %s", start, stop);
	errno = 0;
	out->start = strtoull(start, &end, 10);
	if (errno || *end || start[0] == '-')
		return -1;
	if (!strcmp(stop, "EOF")) {
		out->end = ULLONG_MAX;
	} else {
		out->end = strtoull(stop, &end, 10);
		if (errno || *end || stop[0] == '-' || out->end < out->start)
			return -1;
	}
	errno = 0;
	out->pid = strtol(num, &end, 10);
	if (errno || *end || end == num)
		return -1;
	/* "fe:00:123" (device in hex, inode in decimal), or "<none>:0" */
	if (!strcmp(dev, "<none>:0"))
		return 0;
	if (!(colon = strrchr(dev, ':')) || colon == dev ||
	    !memchr(dev, ':', (size_t)(colon - dev)) || colon[1] < '0' ||
	    colon[1] > '9')
		return -1;
	errno = 0;
	out->ino = strtoul(colon + 1, &end, 10);
	if (errno || *end)
		return -1;
	return lock_dev(dev, colon, out);
}

int procfs_locks_holder(int waiter, unsigned long ino, int ofd,
			struct procfs_lock *holder)
{
	struct procfs_lock cur, held;
	char line[LINE_MAX_LEN];
	unsigned long lines = 0;
	int have_held = 0, found = 0;
	FILE *f;

	if (!(f = fopen("/proc/locks", "re")))
		return -1;
	memset(&held, 0, sizeof(held));
	while (lines++ < MAX_LINES && procfs_next_line(f, line, sizeof(line))) {
		/* (a line longer than the buffer: its fields cut short) */
		if (!strchr(line, '\n') || procfs_locks_line(line, &cur) < 0)
			continue;
		/* A lock's waiters follow it, under its number. */
		if (!cur.waiting) {
			held = cur;
			have_held = 1;
			continue;
		}
		/* (an OFD request's pid is -1, whoever made it) */
		if ((ofd ? cur.pid != -1 || !ino : cur.pid != waiter) ||
		    (ino && cur.ino != ino) || !have_held || held.id != cur.id)
			continue;
		/* Without the inode, two requests behind two locks say
		 * nothing of which one is meant. */
		if (found && (holder->id != held.id || holder->ino != held.ino)) {
			found = -1;
			break;
		}
		*holder = held;
		found = 1;
	}
	fclose(f);
	return found == 1 ? 0 : found == -1 ? -2 : -1;
}

size_t procfs_locks_on(const struct procfs_file_id *ids, size_t nids,
		       struct procfs_lock *out, size_t max)
{
	char line[LINE_MAX_LEN];
	unsigned long lines = 0;
	size_t n = 0, k;
	FILE *f;

	if (!nids || !max || !(f = fopen("/proc/locks", "re")))
		return 0;
	while (n < max && lines++ < MAX_LINES &&
	       procfs_next_line(f, line, sizeof(line))) {
		const struct procfs_lock *l = &out[n];

		if (!strchr(line, '\n') || procfs_locks_line(line, &out[n]) < 0 ||
		    l->waiting || !l->ino || !l->has_dev)
			continue;
		for (k = 0; k < nids && (ids[k].ino != l->ino ||
					 ids[k].major != l->dev_major ||
					 ids[k].minor != l->dev_minor); k++)
			;
		n += k < nids;
	}
	fclose(f);
	return n;
}

/* Does the fdinfo text hold lock l in one of its "lock:" lines? */
static int fdinfo_holds(const char *text, const struct procfs_lock *l)
{
	struct procfs_lock got;
	const char *s = text;

	/* Bounded by the text. */
	while ((s = strstr(s, "lock:"))) {
		s += 5;
		if ((s - text == 5 || s[-6] == '\n') &&
		    procfs_locks_line(s, &got) == 0 && !got.waiting &&
		    got.pid == l->pid && got.ino == l->ino &&
		    !strcmp(got.type, l->type) && !strcmp(got.range, l->range))
			return 1;
	}
	return 0;
}

/* A numeric name of /proc or of a process's fdinfo directory: its
 * value, or -1. */
static long number(const char *name)
{
	char *end;
	long n = strtol(name, &end, 10);

	return end == name || *end || n < 0 || n > 1L << 30 ? -1 : n;
}

/* The fd of process pid whose fdinfo lists lock l, its fds' fdinfo read
 * (never the files themselves: a stat() could hang on a dead network
 * mount) while *budget lasts, one spent per read; procfs_locks_holder_
 * fd()'s -1 and -2 otherwise. */
static int scan_fds(int pid, const struct procfs_lock *l,
		    unsigned long *budget)
{
	char path[64], text[4096];
	struct dirent *de;
	int fd = -1;
	long n;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", pid);
	if (pid <= 0 || !(d = opendir(path)))
		return pid > 0 && (errno == EACCES || errno == EPERM) ? -2 : -1;
	while (fd < 0 && *budget > 0 && (de = readdir(d))) {
		if ((n = number(de->d_name)) < 0)
			continue;
		(*budget)--;
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%ld", pid, n);
		if (procfs_read(path, text, sizeof(text)) > 0 &&
		    fdinfo_holds(text, l))
			fd = (int)n;
	}
	closedir(d);
	return fd;
}

int procfs_locks_holder_fd(int pid, const struct procfs_lock *l)
{
	unsigned long budget = MAX_FDS;

	return scan_fds(pid, l, &budget);
}

int procfs_locks_find_holder(const struct procfs_lock *l, int *fd)
{
	unsigned long procs = 0, budget = MAX_READS;
	struct dirent *de;
	long pid = 0;
	DIR *d;

	*fd = -1;
	if (!(d = opendir("/proc")))
		return 0;
	while (*fd < 0 && procs++ < MAX_PROCS && budget > 0 &&
	       (de = readdir(d)))
		if ((pid = number(de->d_name)) > 0)
			*fd = scan_fds((int)pid, l, &budget);
	closedir(d);
	if (*fd < 0)
		*fd = -1;
	return *fd >= 0 ? (int)pid : 0;
}
