/*
 * Unit test of common/procfs_net.c: the network tables' line parsers on
 * fixed text, and this process's own sockets found by their inodes, as
 * getsockname() and getpeername() give their addresses.
 */
#include "common/procfs_net.h"
#include "common/procfs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "tests/unit/check.h"
#include "common/banned.h"

static void lines(void)
{
	struct procfs_socket so;
	unsigned long ino = 0;

	CHECK(procfs_net_inet_line("  sl  local_address rem_address   st "
				   "tx_queue rx_queue tr tm->when retrnsmt   "
				   "uid  timeout inode", 0, &so, &ino) < 0,
	      "the header");
	CHECK(procfs_net_inet_line("   0: 0100007F:1F90 0200000A:D2A4 01 "
				   "00000000:0000000C 00:00000000 00000000  "
				   "1000        0 54321 1 0000000000000000 20 "
				   "4 0 10 -1", 0, &so, &ino) == 0 &&
	      ino == 54321 && !strcmp(so.local, "127.0.0.1:8080") &&
	      !strcmp(so.remote, "10.0.0.2:53924") && so.state &&
	      !strcmp(so.state, "established") && so.rx_queue == 12,
	      "a TCP line: %s -> %s, %lu", so.local, so.remote, ino);
	CHECK(procfs_net_inet_line("   1: 00000000000000000000000001000000:"
				   "0050 0000000000000000FFFF00000100007F:"
				   "C000 0A 00000000:00000000 00:00000000 "
				   "00000000     0        0 99 1", 1, &so,
				   &ino) == 0 && ino == 99 &&
	      !strcmp(so.local, "[::1]:80") &&
	      !strcmp(so.remote, "[::ffff:127.0.0.1]:49152") &&
	      !strcmp(so.state, "listen"),
	      "a TCP6 line: %s -> %s", so.local, so.remote);
	CHECK(procfs_net_inet_line("   1: 0100007F:1F90", 0, &so, &ino) < 0,
	      "a line cut short");
	CHECK(procfs_net_unix_line("0000000000000000: 00000002 00000000 "
				   "00010000 0001 01 20001 /run/app.sock\n",
				   &so, &ino) == 0 && ino == 20001 &&
	      !strcmp(so.path, "/run/app.sock"), "a unix line: %s", so.path);
	CHECK(procfs_net_unix_line("000000008ec789d5: 00000003 00000000 "
				   "00000000 0001 03 4215833", &so,
				   &ino) == 0 && ino == 4215833 && !so.path[0],
	      "a unix line without a path");
	CHECK(procfs_net_unix_line("Num       RefCount Protocol Flags    "
				   "Type St Inode Path", &so, &ino) < 0,
	      "the unix header");
	CHECK(procfs_net_socket_inode("socket:[123]", &ino) == 0 &&
	      ino == 123, "a socket link");
	CHECK(procfs_net_socket_inode("pipe:[123]", &ino) < 0 &&
	      procfs_net_socket_inode("socket:[12", &ino) < 0 &&
	      procfs_net_socket_inode("socket:[]", &ino) < 0,
	      "other links");
}

/* fd's socket in this process's tables: 0, or -1. */
static int own_socket(int fd, struct procfs_socket *so)
{
	char link[64];
	unsigned long ino;
	int mode;

	if (procfs_fd(getpid(), fd, link, sizeof(link), &mode) < 0 ||
	    procfs_net_socket_inode(link, &ino) < 0)
		return -1;
	return procfs_net_socket(getpid(), ino, so);
}

static void own_sockets(void)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	struct procfs_socket so;
	char want[64];
	int srv, cli, pair[2];

	srv = socket(AF_INET, SOCK_STREAM, 0);
	cli = socket(AF_INET, SOCK_STREAM, 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (srv < 0 || cli < 0 || bind(srv, (struct sockaddr *)&a, len) ||
	    listen(srv, 1) || getsockname(srv, (struct sockaddr *)&a, &len) ||
	    connect(cli, (struct sockaddr *)&a, len)) {
		CHECK(0, "sockets: %s", strerror(errno));
		return;
	}
	snprintf(want, sizeof(want), "127.0.0.1:%u", ntohs(a.sin_port));
	CHECK(own_socket(srv, &so) == 0 && !strcmp(so.proto, "TCP") &&
	      !strcmp(so.local, want) && !strcmp(so.state, "listen"),
	      "the listener: %s", so.local);
	CHECK(own_socket(cli, &so) == 0 && !strcmp(so.remote, want) &&
	      !strcmp(so.state, "established"),
	      "the client: %s -> %s", so.local, so.remote);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0) {
		CHECK(own_socket(pair[0], &so) == 0 &&
		      !strcmp(so.proto, "Unix") && !so.path[0] && !so.state,
		      "a socketpair's end");
		close(pair[0]);
		close(pair[1]);
	}
	CHECK(own_socket(0x7fff, &so) < 0, "no such fd");
	close(cli);
	close(srv);
}

/* A unix socket bound to path (in a fresh temporary directory), or -1. */
static int bound_unix(const char *path)
{
	struct sockaddr_un a;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	if (fd < 0 || strlen(path) >= sizeof(a.sun_path)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	memcpy(a.sun_path, path, strlen(path));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Paths with a newline: /proc/net/unix prints them raw, so one is cut
 * there, and one may forge the line of another socket's inode. */
static void newline_paths(void)
{
	char dir[] = "/tmp/coroscope-net-XXXXXX", cut[96], forged[108];
	struct procfs_socket so;
	char link[64];
	unsigned long ino;
	int plain, nl, forger, mode;

	if (!mkdtemp(dir)) {
		CHECK(0, "a directory: %s", strerror(errno));
		return;
	}
	snprintf(cut, sizeof(cut), "%s/a\nb", dir);
	plain = socket(AF_UNIX, SOCK_STREAM, 0);
	nl = bound_unix(cut);
	if (plain < 0 || nl < 0 ||
	    procfs_fd(getpid(), plain, link, sizeof(link), &mode) < 0 ||
	    procfs_net_socket_inode(link, &ino) < 0) {
		CHECK(0, "unix sockets: %s", strerror(errno));
		return;
	}
	CHECK(own_socket(nl, &so) == 0 && so.doubt == PROCFS_PATH_CUT &&
	      !strncmp(so.path, dir, strlen(dir)) &&
	      !strchr(so.path, '\n'),
	      "a path with a newline is cut, and says so: %s", so.path);
	CHECK(own_socket(plain, &so) == 0 && so.doubt == PROCFS_PATH_WHOLE &&
	      !so.path[0], "an unbound socket: no doubt");
	/* a second line for `plain`'s inode */
	snprintf(forged, sizeof(forged), "%s/\n0: 00000002 00000000 00010000 "
		 "0001 01 %lu", dir, ino);
	forger = bound_unix(forged);
	CHECK(forger >= 0 && own_socket(plain, &so) == 0 &&
	      so.doubt == PROCFS_PATH_TWICE && !so.path[0],
	      "a forged line: the inode listed twice, no path: %s", so.path);
	if (forger >= 0)
		close(forger);
	close(nl);
	close(plain);
	unlink(cut);
	unlink(forged);
	rmdir(dir);
}

int main(void)
{
	lines();
	own_sockets();
	newline_paths();
	return CHECK_DONE("test_procfs_net");
}
