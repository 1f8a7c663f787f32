/*
 * What `run` says of a lock a forked child inherited held
 * (cli/run_fork_copies.c).
 */
#ifndef COROSCOPE_CLI_RUN_FORK_COPIES_H
#define COROSCOPE_CLI_RUN_FORK_COPIES_H

#include "cli/collect.h"
#include "cli/run_causes.h"

struct strbuf;

/*
 * A lock no thread of this process holds, in a child of a process `run`
 * dumped: fork copies a lock held, and not the thread holding it.
 * - An RLock whose owner ident is no thread here (graph_add_no_holder()
 *   says so): the parent's thread with that ident holding the parent's
 *   copy (the same address) now, where it took it; else the parent's
 *   thread with that ident, if any (glibc may give an ended thread's
 *   ident to a new one: "likely").
 * - A threading.Lock, which names no owner: the parent's thread holding
 *   the parent's copy now, and that, if it held it at the fork, nothing
 *   here will release it (a thread here may hold it by a bare acquire(),
 *   which no frame shows; the parent's may have taken it since).
 * Neither where the child was exec'd (not a copy: its AT_RANDOM bytes
 * differ), whose objects match the parent's addresses where ASLR is off.
 */
void run_fork_holder(struct run_cause *cause, const struct run_summary *s,
		     const struct collection *c, const struct py_prim *p,
		     struct strbuf *sb);

#endif
