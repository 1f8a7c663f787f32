/*
 * A process's open files, as /proc tells them without touching the
 * files (a stat() of a dead network mount's file could hang): which
 * process holds an fd on a pipe, and which device an open file is on.
 */
#include "common/procfs_fds.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/procfs.h"
#include "common/banned.h"

/* Processes, and fds of them all, looked through by procfs_find_fd(). */
#define FIND_MAX_PROCS 32768UL
#define FIND_MAX_FDS 16384UL

/* The fd of pid whose link is `link` and access mode `mode`, while
 * *budget lasts (one spent per fd), or -1. */
static int find_in(int pid, const char *link, int mode,
		   unsigned long *budget)
{
	char path[64], got[256];
	struct dirent *de;
	int fd = -1, m;
	ssize_t n;
	long num;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	if (!(d = opendir(path)))
		return -1;
	while (fd < 0 && *budget > 0 && (de = readdir(d))) {
		if ((num = procfs_id(de->d_name)) <= 0 && strcmp(de->d_name, "0"))
			continue;
		(*budget)--;
		snprintf(path, sizeof(path), "/proc/%d/fd/%ld", pid, num);
		n = readlink(path, got, sizeof(got) - 1);
		if (n < 0)
			continue;
		got[n] = '\0';
		if (!strcmp(got, link) &&
		    procfs_fd(pid, (int)num, got, sizeof(got), &m) == 0 &&
		    m == mode)
			fd = (int)num;
	}
	closedir(d);
	return fd;
}

int procfs_find_fd(const char *link, int mode, const int *skip,
		   size_t nskip, int *fd)
{
	unsigned long procs = 0, budget = FIND_MAX_FDS;
	struct dirent *de;
	int pid = 0;
	size_t k;
	DIR *d;

	*fd = -1;
	if (!(d = opendir("/proc")))
		return 0;
	while (*fd < 0 && procs++ < FIND_MAX_PROCS && budget > 0 &&
	       (de = readdir(d))) {
		if ((pid = procfs_id(de->d_name)) <= 0)
			continue;
		for (k = 0; k < nskip && skip[k] != pid; k++)
			;
		if (k == nskip)
			*fd = find_in(pid, link, mode, &budget);
	}
	closedir(d);
	return *fd >= 0 ? pid : 0;
}

/* A mountinfo line, "ID PARENT MAJOR:MINOR ROOT MOUNT ...": its ID and
 * device into *id, *major, *minor: 0, or -1. */
static int mount_line(const char *line, long *id, unsigned *major,
		      unsigned *minor)
{
	unsigned long maj, min;
	char *end;

	errno = 0;
	*id = strtol(line, &end, 10);
	if (errno || end == line || *end != ' ')
		return -1;
	(void)strtol(end, &end, 10);
	if (errno || *end != ' ' || !isdigit((unsigned char)end[1]))
		return -1;
	maj = strtoul(end + 1, &end, 10);
	if (errno || *end != ':' || !isdigit((unsigned char)end[1]))
		return -1;
	min = strtoul(end + 1, &end, 10);
	if (errno || *end != ' ' || maj > 0xfff || min > 0xfffff)
		return -1;
	*major = (unsigned)maj;
	*minor = (unsigned)min;
	return 0;
}

/* Lines of a mountinfo read at most: the mounts of a namespace. */
#define MOUNTINFO_LINES 65536

int procfs_fd_dev(int pid, int fd, unsigned *major, unsigned *minor)
{
	char path[64], info[512], line[4096];
	const char *m;
	unsigned long lines = 0;
	long id, want;
	int found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	if (procfs_read(path, info, sizeof(info)) <= 0 ||
	    !(m = strstr(info, "mnt_id:")))
		return -1;
	want = strtol(m + 7, NULL, 10);
	snprintf(path, sizeof(path), "/proc/%d/mountinfo", pid);
	if (want <= 0 || !(f = fopen(path, "re")))
		return -1;
	while (found < 0 && lines++ < MOUNTINFO_LINES &&
	       procfs_next_line(f, line, sizeof(line)))
		if (mount_line(line, &id, major, minor) == 0 && id == want)
			found = 0;
	fclose(f);
	return found;
}
