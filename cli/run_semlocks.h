/*
 * A thread blocked acquiring a multiprocessing Lock or RLock, and which
 * process of `run`'s tree holds it (cli/run_semlocks.c).  Its futex(2)
 * wait is on the semaphore of a SemLock the heap walk found
 * (readers/semlocks.h); the holder is the process whose SemLock of the
 * same semaphore counts an acquire it has not released, its thread the
 * one that acquired it last.  A semaphore is the same one in two
 * processes when it is the same file (device and inode) at the same
 * offset in their mappings (/dev/shm/sem.*: a forked child maps it
 * where its parent does, a spawned one where it can).
 */
#ifndef COROSCOPE_CLI_RUN_SEMLOCKS_H
#define COROSCOPE_CLI_RUN_SEMLOCKS_H

#include "cli/collect.h"
#include "cli/run_causes.h"

/* Into facts[i].lock (one per thread of c's snapshot) of each thread
 * blocked on such a lock: which, and the lines saying who holds it, for
 * the lock causes of cli/run_causes.c; s: the tree's processes
 * (s->procs), looked through for holders. */
void run_semlocks_facts(struct run_thread_facts *facts,
			const struct run_summary *s,
			const struct collection *c);

#endif
