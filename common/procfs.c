#include "common/procfs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "common/banned.h"

/* /proc/PID/stat is one line of 52 fields; the comm in it is at most 16
 * bytes, so this holds every field we parse. */
#define STAT_MAX 1024
/* A sched file is 2-3 KiB; se.exec_start is on its third line. */
#define SCHED_MAX 8192
/* Milliseconds of a CPU clock: 300 years, well within uint64_t ns. */
#define SCHED_MAX_MS 10000000000000ULL

ssize_t procfs_read(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -1;
	while (len + 1 < size) {
		ssize_t r = read(fd, buf + len, size - 1 - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			close(fd);
			errno = e;
			return -1;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	if (size)
		buf[len] = '\0';
	return (ssize_t)len;
}

/* "/proc/PID/NAME" or "/proc/PID/task/TID/NAME". */
static void task_path(char *path, size_t size, int pid, int tid,
		      const char *name)
{
	if (tid)
		snprintf(path, size, "/proc/%d/task/%d/%s", pid, tid, name);
	else
		snprintf(path, size, "/proc/%d/%s", pid, name);
}

int procfs_status_read(int pid, int tid, char *buf, size_t size)
{
	char path[64];

	task_path(path, sizeof(path), pid, tid, "status");
	return procfs_read(path, buf, size) < 0 ? -1 : 0;
}

const char *procfs_status_text(const char *status, const char *name,
			       size_t *len)
{
	size_t n = strlen(name);
	const char *p = status;

	/* Each pass moves p to the next line: bounded by the text. */
	while (p && *p) {
		if (!strncmp(p, name, n) && p[n] == ':') {
			p += n + 1;
			while (*p == ' ' || *p == '\t')
				p++;
			*len = strcspn(p, "\n");
			return p;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

size_t procfs_status_ids(const char *status, const char *name, long *ids,
			 size_t max)
{
	size_t len, n = 0;
	const char *p = procfs_status_text(status, name, &len);
	const char *end = p ? p + len : NULL;

	while (p && p < end && n < max) {
		char *stop;
		long v;

		errno = 0;
		v = strtol(p, &stop, 10);
		if (errno || stop == p || stop > end)
			break;
		ids[n++] = v;
		p = stop;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
	}
	return n;
}

int procfs_status_long(const char *status, const char *name, long *out)
{
	long v;

	if (procfs_status_ids(status, name, &v, 1) != 1)
		return -1;
	*out = v;
	return 0;
}

int procfs_status_field(int pid, int tid, const char *name, long *out)
{
	char status[PROCFS_STATUS_MAX];

	if (procfs_status_read(pid, tid, status, sizeof(status)) < 0)
		return -1;
	if (procfs_status_long(status, name, out) < 0) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* Printable text: NUL, tab and newline as spaces, other controls '?'. */
static void clean_controls(char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\0' || c == '\n' || c == '\t')
			s[i] = ' ';
		else if (c < 0x20 || c == 0x7f)
			s[i] = '?';
	}
}

int procfs_comm(int pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	n = procfs_read(path, buf, len);
	if (n < 0) {
		buf[0] = '\0';
		return -1;
	}
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	clean_controls(buf, (size_t)n);
	return 0;
}

int procfs_stat(int pid, int tid, struct procfs_stat *st)
{
	char path[64], buf[STAT_MAX];
	const char *p;

	task_path(path, sizeof(path), pid, tid, "stat");
	if (procfs_read(path, buf, sizeof(buf)) < 0)
		return -1;
	/* The comm in parentheses may itself hold ") ": the last ')' ends
	 * it.  Then: state ppid pgrp session tty_nr tpgid flags minflt
	 * cminflt majflt cmajflt utime stime cutime cstime priority nice
	 * num_threads itrealvalue starttime. */
	p = strrchr(buf, ')');
	memset(st, 0, sizeof(*st));
	st->processor = -1;
	/* ... then 16 more fields (vsize to exit_signal) and processor. */
	if (!p || p[1] != ' ' ||
	    sscanf(p + 2, "%c %d %d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu "
		   "%*d %*d %*d %*d %*d %*d %llu %*s %*s %*s %*s %*s %*s %*s "
		   "%*s %*s %*s %*s %*s %*s %*s %*s %*s %d", &st->state,
		   &st->ppid, &st->pgid, &st->utime, &st->stime,
		   &st->starttime, &st->processor) < 6) {
		errno = EINVAL;
		return -1;
	}
	if (st->processor < 0)
		st->processor = -1;
	return 0;
}

int procfs_sched_exec_start(const char *text, uint64_t *ns)
{
	static const char key[] = "\nse.exec_start";
	const char *p = strstr(text, key);
	unsigned long long whole = 0;
	unsigned long frac = 0;
	int digits = 0;

	if (!p)
		goto bad;
	p += sizeof(key) - 1;
	while (*p == ' ')
		p++;
	if (*p++ != ':')
		goto bad;
	while (*p == ' ')
		p++;
	if (*p < '0' || *p > '9')
		goto bad;
	/* milliseconds, '.', six digits of nanoseconds (the kernel's
	 * SPLIT_NS) */
	for (; *p >= '0' && *p <= '9'; p++) {
		whole = whole * 10 + (unsigned long long)(*p - '0');
		if (whole > SCHED_MAX_MS)
			goto bad;
	}
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9' && digits < 6; p++, digits++)
			frac = frac * 10 + (unsigned long)(*p - '0');
	for (; digits < 6; digits++)
		frac *= 10;
	*ns = whole * 1000000 + frac;
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

int procfs_exec_start(int pid, int tid, uint64_t *ns)
{
	char path[64], buf[SCHED_MAX];

	if (pid)
		task_path(path, sizeof(path), pid, tid, "sched");
	else
		snprintf(path, sizeof(path), "/proc/thread-self/sched");
	if (procfs_read(path, buf, sizeof(buf)) < 0)
		return -1;
	return procfs_sched_exec_start(buf, ns);
}

int procfs_schedstat(int pid, int tid, struct procfs_schedstat *st)
{
	char path[64], buf[128];

	task_path(path, sizeof(path), pid, tid, "schedstat");
	if (procfs_read(path, buf, sizeof(buf)) < 0)
		return -1;
	if (sscanf(buf, "%llu %llu %llu", &st->cpu_ns, &st->wait_ns,
		   &st->runs) != 3) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

char procfs_state(int pid, int tid)
{
	struct procfs_stat st;

	if (procfs_stat(pid, tid, &st) < 0)
		return 0;
	return st.state;
}

int procfs_state_dead(char state)
{
	return state == 'Z' || state == 'X' || state == 'x';
}

char *procfs_cmdline(int pid, size_t max)
{
	char path[64], *buf;
	ssize_t n;
	size_t i;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	buf = xmalloc(max + 1);
	n = procfs_read(path, buf, max + 1);
	/* Drop the terminating NUL(s) of the last argument. */
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	if (n <= 0) {
		free(buf);
		return NULL;  /* kernel thread, zombie, or gone */
	}
	/* The arguments' NUL separators as spaces; the rest as it is,
	 * escaped where it is shown (cli/escape.h). */
	for (i = 0; i < (size_t)n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return buf;
}

static int id_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int procfs_id(const char *name)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)name[0]))
		return 0;
	errno = 0;
	v = strtol(name, &end, 10);
	if (errno || *end || v <= 0 || v > INT_MAX)
		return 0;
	return (int)v;
}

/* Move first, when present, to the front of the sorted ids. */
static void put_first(int *ids, size_t n, int first)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (ids[i] == first) {
			memmove(ids + 1, ids, i * sizeof(*ids));
			ids[0] = first;
			return;
		}
	}
}

int procfs_list_ids(const char *dir, size_t max, int first, int **out,
		    size_t *nout)
{
	struct dirent *de;
	int *ids = NULL;
	size_t n = 0, alloc = 0;
	DIR *d = opendir(dir);

	if (!d)
		return -1;
	while ((de = readdir(d)) != NULL && n < max) {
		int id = procfs_id(de->d_name);

		if (!id)
			continue;
		ids = xgrow(ids, &alloc, n + 1, sizeof(*ids));
		ids[n++] = id;
	}
	closedir(d);
	if (n > 1)
		qsort(ids, n, sizeof(*ids), id_cmp);
	if (first > 0)
		put_first(ids, n, first);
	*out = ids;
	*nout = n;
	return 0;
}

/* A hex number of 1 to 16 digits at *p, then the separator sep. */
static int maps_hex(const char **p, char sep, unsigned long long *out)
{
	unsigned long long v = 0;
	const char *s = *p;
	int n;

	for (n = 0; n < 16 && isxdigit((unsigned char)s[n]); n++) {
		int c = (unsigned char)s[n];

		v = v << 4 | (unsigned)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	if (n == 0 || s[n] != sep)
		return -1;
	*out = v;
	*p = s + n + 1;
	return 0;
}

/* A decimal field at *p, ended by a blank, a tab, a newline or the
 * end; *p moves past the digits. */
static int maps_dec(const char **p, unsigned long long *out)
{
	unsigned long long v = 0;
	const char *s = *p;
	int n;

	for (n = 0; n < 20 && isdigit((unsigned char)s[n]); n++) {
		unsigned d = (unsigned)(s[n] - '0');

		if (v > (ULLONG_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (n == 0 || (s[n] != ' ' && s[n] != '\t' && s[n] != '\n' &&
		       s[n] != '\0'))
		return -1;
	*out = v;
	*p = s + n;
	return 0;
}

/*
 * start-end perms offset major:minor inode   path
 * The path is the rest of the line and may contain spaces; the kernel
 * appends " (deleted)" to the path of a deleted file.
 */
int procfs_maps_line(char *line, struct procfs_map *m)
{
	static const char deleted[] = " (deleted)";
	const size_t dlen = sizeof(deleted) - 1;
	unsigned long long start, end, offset, major, minor, inode;
	const char *p = line;
	char *path;
	size_t len;

	/* By hand, not sscanf(): thousands of threads mean thousands of
	 * lines, parsed while the target is stopped. */
	if (maps_hex(&p, '-', &start) < 0 || maps_hex(&p, ' ', &end) < 0 ||
	    end < start || strcspn(p, " \t\n") != 4 || p[4] != ' ')
		return -1;
	memset(m, 0, sizeof(*m));
	memcpy(m->perms, p, 4);
	p += 5;
	/* The device, a blank, the inode: the path follows any blanks. */
	if (maps_hex(&p, ' ', &offset) < 0 || maps_hex(&p, ':', &major) < 0 ||
	    maps_hex(&p, ' ', &minor) < 0 || maps_dec(&p, &inode) < 0)
		return -1;
	m->dev = major << 32 | (minor & 0xffffffffu);
	m->inode = inode;
	m->start = start;
	m->end = end;
	m->offset = offset;
	path = line + (p - line);
	while (*path == ' ' || *path == '\t')
		path++;
	len = strcspn(path, "\n");
	path[len] = '\0';
	if (path[0] != '/')
		return 0;
	if (len > dlen && !strcmp(path + len - dlen, deleted)) {
		path[len - dlen] = '\0';
		m->deleted = 1;
	}
	m->path = path;
	return 0;
}

int procfs_next_line(FILE *f, char *line, size_t size)
{
	char rest[256];
	size_t len;

	if (size < 2 || size > INT_MAX || !fgets(line, (int)size, f))
		return 0;
	len = strlen(line);
	/* (bounded by the file) */
	if (len && line[len - 1] != '\n')
		while (fgets(rest, sizeof(rest), f)) {
			len = strlen(rest);
			if (len && rest[len - 1] == '\n')
				break;
		}
	return 1;
}

int procfs_thread_syscall(int pid, int tid, long *nr)
{
	unsigned long long arg0;

	return procfs_thread_syscall_arg0(pid, tid, nr, &arg0);
}

int procfs_thread_syscall_args(int pid, int tid, long *nr,
			       unsigned long long *args, size_t nargs)
{
	char path[64], buf[256], *end, *p;
	size_t i;
	long v;

	for (i = 0; i < nargs; i++)
		args[i] = 0;
	task_path(path, sizeof(path), pid, tid, "syscall");
	if (procfs_read(path, buf, sizeof(buf)) <= 0)
		return -1;
	if (!strncmp(buf, "running", 7))
		return 1;
	v = strtol(buf, &end, 10);
	if (end == buf || (*end != ' ' && *end != '\n' && *end) || v < -1)
		return -1;
	*nr = v;
	/* "NR ARG0 ... ARG5 SP PC", the arguments in hex */
	for (i = 0; i < nargs && *end == ' '; i++, end = p) {
		errno = 0;
		args[i] = strtoull(end + 1, &p, 16);
		if (errno || p == end + 1) {
			args[i] = 0;
			break;
		}
	}
	return 0;
}

int procfs_thread_syscall_arg0(int pid, int tid, long *nr,
			       unsigned long long *arg0)
{
	return procfs_thread_syscall_args(pid, tid, nr, arg0, 1);
}

int procfs_fd(int pid, int fd, char *buf, size_t len, int *accmode)
{
	char path[64], info[256];
	const char *flags;
	ssize_t n;

	*accmode = -1;
	if (len < 2 || fd < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	n = readlink(path, buf, len - 1);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	if (procfs_read(path, info, sizeof(info)) > 0 &&
	    (flags = strstr(info, "flags:")) != NULL)
		*accmode = (int)(strtol(flags + 6, NULL, 8) & 3);
	return 0;
}

int procfs_mem_read(int pid, uint64_t addr, void *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	if (addr > (uint64_t)INT64_MAX - len)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = pread(fd, buf, len, (off_t)addr);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

int procfs_thread_wchan(int pid, int tid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", pid, tid);
	if ((n = procfs_read(path, buf, len)) <= 0)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* The number after key (hex or decimal) in line, past blanks. */
static int field_after(const char *line, const char *key, int base,
		       unsigned long long *out)
{
	const char *p = strstr(line, key);
	char *end;

	if (!p)
		return -1;
	p += strlen(key);
	while (*p == ' ' || *p == '\t')
		p++;
	if (!isxdigit((unsigned char)*p))
		return -1;
	errno = 0;
	*out = strtoull(p, &end, base);
	return errno || end == p ? -1 : 0;
}

int procfs_epoll_line(const char *line, struct procfs_epoll_fd *out)
{
	unsigned long long events = 0, ino = 0;
	char *end;
	long v;

	if (strncmp(line, "tfd:", 4))
		return -1;
	line += 4;
	while (*line == ' ' || *line == '\t')
		line++;
	if (*line < '0' || *line > '9')
		return -1;
	errno = 0;
	v = strtol(line, &end, 10);
	if (errno || v < 0 || v > INT_MAX || (*end != ' ' && *end != '\t'))
		return -1;
	if (field_after(end, "events:", 16, &events) < 0 ||
	    events > UINT32_MAX)
		return -1;
	if (field_after(end, " ino:", 16, &ino) < 0)
		ino = 0;
	out->fd = (int)v;
	out->events = (unsigned)events;
	out->ino = ino;
	return 0;
}

int procfs_epoll_fds(int pid, int epfd, struct procfs_epoll_fd *out,
		     size_t max)
{
	char path[64], line[256];
	struct procfs_epoll_fd one;
	int n = 0, lines;
	FILE *f;

	if (epfd < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, epfd);
	if (!(f = fopen(path, "re")))
		return -1;
	for (lines = 0; lines < 65536 && n < INT_MAX &&
	     procfs_next_line(f, line, sizeof(line)); lines++) {
		if (procfs_epoll_line(line, &one) < 0)
			continue;
		if ((size_t)n < max)
			out[n] = one;
		n++;
	}
	fclose(f);
	return n;
}

int procfs_fd_inode(int pid, int fd, uint64_t *ino)
{
	char path[64], buf[512];
	unsigned long long v;
	const char *b;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	if (procfs_read(path, buf, sizeof(buf)) > 0 &&
	    field_after(buf, "\nino:", 10, &v) == 0) {
		*ino = v;
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	if ((n = readlink(path, buf, sizeof(buf) - 1)) <= 0)
		return -1;
	buf[n] = '\0';
	if (!(b = strchr(buf, '[')) || buf[n - 1] != ']' ||
	    field_after(b + 1, "", 10, &v) < 0)
		return -1;
	*ino = v;
	return 0;
}

int procfs_context_switches(int pid, int tid, uint64_t *out)
{
	char status[PROCFS_STATUS_MAX];
	long vol, invol;

	if (procfs_status_read(pid, tid, status, sizeof(status)) < 0 ||
	    procfs_status_long(status, "voluntary_ctxt_switches", &vol) < 0 ||
	    procfs_status_long(status, "nonvoluntary_ctxt_switches",
			       &invol) < 0)
		return -1;
	*out = (uint64_t)vol + (uint64_t)invol;
	return 0;
}

int procfs_same_clock(int pid)
{
	char mine[64], theirs[64], path[48];
	ssize_t n, m;

	/* A kernel without time namespaces (before 5.6) has one clock. */
	n = readlink("/proc/self/ns/time", mine, sizeof(mine) - 1);
	if (n < 0)
		return errno == ENOENT;
	snprintf(path, sizeof(path), "/proc/%d/ns/time", pid);
	m = readlink(path, theirs, sizeof(theirs) - 1);
	return m == n && memcmp(mine, theirs, (size_t)n) == 0;
}

int procfs_start_time(int pid, double *out)
{
	struct procfs_stat st;
	struct timespec now;
	char buf[128];
	long tick = sysconf(_SC_CLK_TCK);
	double up;

	if (tick <= 0 || procfs_stat(pid, 0, &st) < 0 ||
	    procfs_read("/proc/uptime", buf, sizeof(buf)) <= 0 ||
	    sscanf(buf, "%lf", &up) != 1 ||
	    clock_gettime(CLOCK_REALTIME, &now) < 0)
		return -1;
	*out = (double)now.tv_sec + (double)now.tv_nsec / 1e9 - up +
	       (double)st.starttime / (double)tick;
	return 0;
}
