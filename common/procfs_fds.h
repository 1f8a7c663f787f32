/*
 * A process's open files, read from /proc (common/procfs_fds.c).
 */
#ifndef COROSCOPE_COMMON_PROCFS_FDS_H
#define COROSCOPE_COMMON_PROCFS_FDS_H

#include <stddef.h>

/* The first process of all this one can see but those in
 * skip[0..nskip) (bounded: 32768 processes, 16384 fds read) with an fd
 * whose /proc link is `link` ("pipe:[123]") and whose access mode is
 * `mode` (O_RDONLY, O_WRONLY, O_RDWR): its pid, that fd into *fd; 0
 * when none is found (*fd -1). */
int procfs_find_fd(const char *link, int mode, const int *skip,
		   size_t nskip, int *fd);

/* The device fd of pid is on, as its mount (fdinfo's mnt_id, in pid's
 * mountinfo) has it, into *major and *minor: 0, or -1. */
int procfs_fd_dev(int pid, int fd, unsigned *major, unsigned *minor);

#endif
