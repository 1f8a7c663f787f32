/*
 * Which socket a file descriptor is, from the tables of the process's
 * network namespace in /proc/PID/net (tcp, tcp6, udp, udp6, unix): its
 * protocol, addresses and TCP state, found by the socket's inode (the
 * "socket:[INODE]" of its /proc/PID/fd link).  The lines are the
 * kernel's, but a unix socket's path is the target's: callers print it
 * through the cleaning the rest of /proc text gets.
 */
#ifndef COROSCOPE_COMMON_PROCFS_NET_H
#define COROSCOPE_COMMON_PROCFS_NET_H

#include <stddef.h>

/* A "[ffff:...:1]:65535" address at most, with its NUL. */
#define PROCFS_NET_ADDR_MAX 56
/* sun_path's 108 bytes, with its NUL. */
#define PROCFS_NET_PATH_MAX 109

struct procfs_socket {
	const char *proto;      /* "TCP", "UDP", "Unix" (static) */
	char local[PROCFS_NET_ADDR_MAX], remote[PROCFS_NET_ADDR_MAX];
	const char *state;      /* TCP's, in lower case ("established"),
				   or NULL */
	unsigned long rx_queue; /* bytes received and not read (TCP, UDP) */
	char path[PROCFS_NET_PATH_MAX];  /* a unix socket's, "" for none;
				   an abstract one's starts with '@' */
	/* A unix socket's path is printed raw: one with a newline goes on
	 * as a line of its own, which does not parse (PROCFS_PATH_CUT: the
	 * path is its part before the newline), or which forges another
	 * socket's line, whose inode is then listed twice
	 * (PROCFS_PATH_TWICE: path left empty, it is either line's). */
	enum { PROCFS_PATH_WHOLE, PROCFS_PATH_CUT, PROCFS_PATH_TWICE } doubt;
};

/* The inode of a "socket:[123]" fd link: 0, or -1 for another link. */
int procfs_net_socket_inode(const char *link, unsigned long *ino);

/* Parse one line of /proc/net/tcp (udp: v6 0, tcp6 and udp6: 1) into
 * *out (proto and state left to the caller) and its inode: 0, or -1 for
 * a line that does not parse (the header). */
int procfs_net_inet_line(const char *line, int v6,
			 struct procfs_socket *out, unsigned long *ino);
/* Parse one line of /proc/net/unix: its path into out->path and its
 * inode: 0, or -1. */
int procfs_net_unix_line(const char *line, struct procfs_socket *out,
			 unsigned long *ino);

/* Socket inode `ino` in process pid's network namespace: 0 with *out
 * filled, or -1 when no table has it (or none can be read). */
int procfs_net_socket(int pid, unsigned long ino, struct procfs_socket *out);

#endif
