/*
 * Which kernel thread each Python thread state is, as coroscope sees it
 * (cli/collect.c, once the threads are read): CPython's own record (in
 * the target's PID namespace, mapped to ours), and for a main thread
 * that has exited, what elimination tells.
 */
#ifndef COROSCOPE_CLI_COLLECT_TIDS_H
#define COROSCOPE_CLI_COLLECT_TIDS_H

#include "cli/collect.h"

/* Set c->snap's thread ids (and their exited marks) and c->ns_tids. */
void collect_map_thread_ids(struct collection *c);

#endif
