/*
 * `watch`'s words for what a stuck thread waits for in the kernel
 * (cli/watch_blocked.c).
 */
#ifndef COROSCOPE_CLI_WATCH_BLOCKED_H
#define COROSCOPE_CLI_WATCH_BLOCKED_H

#include "cli/collect.h"
#include "cli/watch_track.h"

/* For each thread of this sample's STUCK events (t's, after
 * watch_end()), read off live collection c: its blocked_on, when it
 * sits in a read or connect of a socket or pipe, a file lock's wait or
 * wait4(2); for each task or greenlet, when it is parked on a socket or
 * pipe whose fd its frames name ("to read fd 7, a TCP connection ..."). */
void watch_note_blocked(struct watch_tracker *t, const struct collection *c);

#endif
