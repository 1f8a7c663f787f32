/*
 * A memory source built by hand from /proc/PID/maps (see
 * tests/support/proc_memsrc.c): its mappings, pid, root and exe_path.
 */
#ifndef COROSCOPE_TESTS_SUPPORT_PROC_MEMSRC_H
#define COROSCOPE_TESTS_SUPPORT_PROC_MEMSRC_H

#include "attach/memsrc.h"

/* Fill ms from /proc/PID/maps; 0 or -1. */
int proc_memsrc_init(struct memsrc *ms, int pid);
void proc_memsrc_release(struct memsrc *ms);

#endif
