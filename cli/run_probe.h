/*
 * What the native frames, the kernel and the target's source files say
 * of the threads of a process `coroscope run` dumped, for the cause
 * analysis (cli/run_causes.h).  Read through /proc/PID while the process
 * exists.  Where a thread's native frames were read they say what it is
 * blocked in, and the kernel is not asked.
 */
#ifndef COROSCOPE_CLI_RUN_PROBE_H
#define COROSCOPE_CLI_RUN_PROBE_H

#include "cli/collect.h"
#include "cli/run_causes.h"

/* One struct run_thread_facts per thread of c->snap (free with
 * run_probe_release()); they borrow from c. */
struct run_thread_facts *run_probe_threads(const struct collection *c);
void run_probe_release(struct run_thread_facts *facts, size_t n);
/* Does a future (a thread joined, a concurrent future's job) wait for
 * thread i of c's snapshot, or does it hold an object (a lock)?  A
 * cause of the graph's may end with it, at its line. */
int run_probe_ends_waits(const struct collection *c, size_t i);
/* Line `line` of c's process's file `filename` (as a frame names it),
 * from c's source cache (NULL under --no-source), trimmed and cut for
 * display (malloc'd), or NULL.  The text is the target's: the writers
 * escape it. */
char *run_probe_source(const struct collection *c, const char *filename,
		       int line);
/* "FILE:LINE in FUNC: SOURCE" of frame f of collection c, the source
 * where its source cache can read it (not --no-source). */
struct strbuf;
void run_probe_add_line(struct strbuf *sb, const struct collection *c,
			const struct py_frame *f);
/* sb, a headline, as a cause of kind to s, with a detail "at FILE:LINE
 * in FUNC: SOURCE" for thread th's innermost frame of the program's
 * own, if any: the cause. */
struct run_cause *run_probe_cause_at_own(struct run_summary *s,
					 enum run_cause_kind kind,
					 const struct collection *c,
					 const struct py_thread *th,
					 struct strbuf *sb);

#endif
