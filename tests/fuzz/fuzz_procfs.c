/*
 * libFuzzer harness for the parsers of /proc text (common/procfs.c): a
 * /proc/PID/maps line (the target names the files in it), a status
 * file's fields (the target names its threads), a sched file's
 * se.exec_start (after the target's comm), the lines of the network
 * tables (common/procfs_net.c: a unix socket's path is the target's),
 * and /proc/locks lines (common/procfs_locks.c, as fdinfo's "lock:"
 * lines give them too).
 *
 * Input: the text; each line is parsed as a maps line, as a line of
 * each network table and as a lock's, and the whole as a status file.  Seeds:
 * tests/fuzz/corpus/procfs/.
 *
 * Besides the sanitizers, it aborts when an answer breaks the contract:
 * a mapping that ends before it starts, permissions that are not four
 * characters, a path outside the line or not starting with '/', or a
 * status text outside the input.
 */
#include "common/procfs.h"
#include "common/procfs_net.h"
#include "common/procfs_locks.h"

#include <stdlib.h>
#include <string.h>

#include "common/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_INPUT 65536

/* A network table's line, every way: the texts NUL-terminated in
 * their arrays. */
static void net_line(const char *line)
{
	struct procfs_socket so;
	unsigned long ino;
	int v6;

	for (v6 = 0; v6 < 2; v6++)
		if (procfs_net_inet_line(line, v6, &so, &ino) == 0 &&
		    (!memchr(so.local, '\0', sizeof(so.local)) ||
		     !memchr(so.remote, '\0', sizeof(so.remote)) ||
		     so.path[0]))
			abort();
	if (procfs_net_unix_line(line, &so, &ino) == 0 &&
	    (!memchr(so.path, '\0', sizeof(so.path)) || so.local[0]))
		abort();
	(void)procfs_net_socket_inode(line, &ino);
}

/* A /proc/locks line: its type a word NUL-terminated in its array. */
static void lock_line(const char *line)
{
	struct procfs_lock l;

	if (procfs_locks_line(line, &l) == 0 &&
	    (!memchr(l.type, '\0', sizeof(l.type)) || !l.type[0] ||
	     strpbrk(l.type, " \t\n") || (l.waiting != 0 && l.waiting != 1)))
		abort();
}

static void one_line(const char *s, size_t n)
{
	char *line = malloc(n + 1);
	struct procfs_map m;
	struct procfs_epoll_fd ep;

	if (!line)
		return;
	memcpy(line, s, n);
	line[n] = '\0';
	net_line(line);
	lock_line(line);
	if (procfs_epoll_line(line, &ep) == 0 && ep.fd < 0)
		abort();
	if (procfs_maps_line(line, &m) == 0) {
		if (m.end < m.start || strlen(m.perms) != 4)
			abort();
		if (m.path && (m.path < line || m.path > line + n ||
			       m.path[0] != '/'))
			abort();
	}
	free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;
	const char *s, *end, *nl, *v;
	long val, ids[8];
	uint64_t ns;
	size_t len;

	if (size > MAX_INPUT)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	/* Each line, up to a NUL too: the parsers get C strings. */
	end = text + strlen(text);
	for (s = text; s < end; s = nl + 1) {
		nl = memchr(s, '\n', (size_t)(end - s));
		if (!nl)
			nl = end;
		one_line(s, (size_t)(nl - s) + (nl < end));
	}
	v = procfs_status_text(text, "Name", &len);
	if (v && (v < text || v + len > end))
		abort();
	(void)procfs_status_long(text, "Tgid", &val);
	if (procfs_status_ids(text, "NSpid", ids, 8) > 8)
		abort();
	/* a sched file: its first line is the target's comm */
	(void)procfs_sched_exec_start(text, &ns);
	free(text);
	return 0;
}
