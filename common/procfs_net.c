#include "common/procfs_net.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/procfs.h"
#include "common/banned.h"

/* Lines read from one table at most: a busy server's connections are
 * tens of thousands. */
#define MAX_LINES (1UL << 20)
/* A line of any table: 150 bytes for tcp6, a unix one up to its path. */
#define LINE_MAX_LEN 512

int procfs_net_socket_inode(const char *link, unsigned long *ino)
{
	char *end;

	if (strncmp(link, "socket:[", 8) || link[8] < '0' || link[8] > '9')
		return -1;
	*ino = strtoul(link + 8, &end, 10);
	return *end == ']' && end[1] == '\0' ? 0 : -1;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* n hex digits at *s into *v, s moved past them: 0, or -1. */
static int hex_digits(const char **s, size_t n, unsigned long *v)
{
	size_t i;
	int d;

	*v = 0;
	for (i = 0; i < n; i++) {
		if ((d = hexval((*s)[i])) < 0)
			return -1;
		*v = (*v << 4) | (unsigned long)d;
	}
	*s += n;
	return 0;
}

/* "0100007F:1F90" (v6: 32 digits) at *s into "127.0.0.1:8080" ("[::1]:
 * 8080"), s moved past it.  The kernel prints each 32-bit word of the
 * address as the host's integer: its bytes are the word's, in the
 * host's (little-endian) order. */
static int parse_addr(const char **s, int v6, char *out)
{
	unsigned char bytes[16];
	char text[INET6_ADDRSTRLEN];
	unsigned long word, port;
	size_t w, nwords = v6 ? 4 : 1;

	for (w = 0; w < nwords; w++) {
		if (hex_digits(s, 8, &word) < 0)
			return -1;
		bytes[w * 4] = (unsigned char)(word & 0xff);
		bytes[w * 4 + 1] = (unsigned char)((word >> 8) & 0xff);
		bytes[w * 4 + 2] = (unsigned char)((word >> 16) & 0xff);
		bytes[w * 4 + 3] = (unsigned char)((word >> 24) & 0xff);
	}
	if (**s != ':')
		return -1;
	(*s)++;
	if (hex_digits(s, 4, &port) < 0 ||
	    !inet_ntop(v6 ? AF_INET6 : AF_INET, bytes, text, sizeof(text)))
		return -1;
	snprintf(out, PROCFS_NET_ADDR_MAX, v6 ? "[%s]:%lu" : "%s:%lu", text,
		 port);
	return 0;
}

static const char *skip_spaces(const char *s)
{
	while (*s == ' ')
		s++;
	return s;
}

static const char *const tcp_states[] = {
	NULL, "established", "syn_sent", "syn_recv", "fin_wait1",
	"fin_wait2", "time_wait", "close", "close_wait", "last_ack",
	"listen", "closing", "new_syn_recv",
};

int procfs_net_inet_line(const char *line, int v6,
			 struct procfs_socket *out, unsigned long *ino)
{
	const char *s = skip_spaces(line);
	unsigned long st, tx, rx, skip;
	char *end;
	int field;

	memset(out, 0, sizeof(*out));
	/* "  0: LOCAL REMOTE ST TX:RX TR:WHEN RETRNSMT UID TIMEOUT INODE" */
	while (*s >= '0' && *s <= '9')
		s++;
	if (*s++ != ':')
		return -1;
	s = skip_spaces(s);
	if (parse_addr(&s, v6, out->local) < 0)
		return -1;
	s = skip_spaces(s);
	if (parse_addr(&s, v6, out->remote) < 0)
		return -1;
	s = skip_spaces(s);
	if (hex_digits(&s, 2, &st) < 0)
		return -1;
	out->state = st < sizeof(tcp_states) / sizeof(tcp_states[0]) ?
		     tcp_states[st] : NULL;
	s = skip_spaces(s);
	if (hex_digits(&s, 8, &tx) < 0 || *s++ != ':' ||
	    hex_digits(&s, 8, &rx) < 0)
		return -1;
	out->rx_queue = rx;
	/* tr:when, retrnsmt, uid, timeout, then the inode */
	for (field = 0; field < 4; field++) {
		s = skip_spaces(s);
		if (!*s || *s == '-')
			return -1;
		skip = strtoul(s, &end, 16);
		(void)skip;
		if (end == s)
			return -1;
		s = end;
		if (field == 0 && *s == ':') {
			s++;
			(void)strtoul(s, &end, 16);
			if (end == s)
				return -1;
			s = end;
		}
	}
	s = skip_spaces(s);
	if (*s < '0' || *s > '9')
		return -1;
	*ino = strtoul(s, &end, 10);
	return end != s && (*end == ' ' || *end == '\0' || *end == '\n') ?
	       0 : -1;
}

int procfs_net_unix_line(const char *line, struct procfs_socket *out,
			 unsigned long *ino)
{
	const char *s = skip_spaces(line);
	char *end;
	size_t n;
	int field;

	memset(out, 0, sizeof(*out));
	/* "ADDR: REFS PROTO FLAGS TYPE ST INODE [PATH]" */
	while (hexval(*s) >= 0)
		s++;
	if (*s++ != ':')
		return -1;
	for (field = 0; field < 5; field++) {
		s = skip_spaces(s);
		(void)strtoul(s, &end, 16);
		if (end == s || *end != ' ')
			return -1;
		s = end;
	}
	s = skip_spaces(s);
	if (*s < '0' || *s > '9')
		return -1;
	*ino = strtoul(s, &end, 10);
	if (end == s || (*end != ' ' && *end != '\0' && *end != '\n'))
		return -1;
	s = skip_spaces(end);
	n = strcspn(s, "\n");
	if (n >= sizeof(out->path))
		n = sizeof(out->path) - 1;
	memcpy(out->path, s, n);
	out->path[n] = '\0';
	return 0;
}

/* Look through one table for ino: 1 found, 0 not, -1 unreadable.  The
 * unix table is read to its end, for the doubts about a path (struct
 * procfs_socket's doubt). */
static int search_table(int pid, const char *table, int v6, int is_unix,
			unsigned long ino, struct procfs_socket *out)
{
	char path[64], line[LINE_MAX_LEN];
	unsigned long lines = 0, got;
	struct procfs_socket cur;
	int found = 0, parsed, next_of_found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/net/%s", pid, table);
	if (!(f = fopen(path, "re")))
		return -1;
	while ((!found || is_unix) && lines++ < MAX_LINES &&
	       procfs_next_line(f, line, sizeof(line))) {
		parsed = (is_unix ? procfs_net_unix_line(line, &cur, &got) :
				    procfs_net_inet_line(line, v6, &cur,
							 &got)) == 0;
		if (next_of_found && !parsed)
			out->doubt = PROCFS_PATH_CUT;
		next_of_found = 0;
		if (!parsed || got != ino)
			continue;
		if (found) {
			out->path[0] = '\0';
			out->doubt = PROCFS_PATH_TWICE;
			break;
		}
		*out = cur;
		found = next_of_found = 1;
	}
	fclose(f);
	return found;
}

int procfs_net_socket(int pid, unsigned long ino, struct procfs_socket *out)
{
	static const struct {
		const char *table, *proto;
		int v6, is_unix, tcp;
	} tables[] = {
		{ "tcp", "TCP", 0, 0, 1 }, { "tcp6", "TCP", 1, 0, 1 },
		{ "udp", "UDP", 0, 0, 0 }, { "udp6", "UDP", 1, 0, 0 },
		{ "unix", "Unix", 0, 1, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		if (search_table(pid, tables[i].table, tables[i].v6,
				 tables[i].is_unix, ino, out) != 1)
			continue;
		out->proto = tables[i].proto;
		if (!tables[i].tcp)
			out->state = NULL;
		return 0;
	}
	return -1;
}
