/*
 * When a thread stopped inside a system call will come out of it of its
 * own accord: the timeout of the sleep or wait it is in, from its
 * registers at the stop and the time value its arguments point to
 * (x86-64; attach/syscall_deadline.c).
 */
#ifndef COROSCOPE_ATTACH_SYSCALL_DEADLINE_H
#define COROSCOPE_ATTACH_SYSCALL_DEADLINE_H

#include "attach/memsrc.h"

enum cs_deadline_clock {
	CS_DEADLINE_NONE,        /* no timeout, or none that can be known */
	CS_DEADLINE_MONOTONIC,   /* `at`: CLOCK_MONOTONIC seconds */
	CS_DEADLINE_REALTIME,    /* `at`: CLOCK_REALTIME seconds */
	CS_DEADLINE_LEFT,        /* `at`: seconds left at the stop */
};

struct cs_deadline {
	enum cs_deadline_clock clock;
	double at;
	int sleep;     /* a sleep (nothing to wait for but the time), not
			  a wait's timeout */
};

/* The deadline of stopped thread t, its time value read through ms:
 * out->clock CS_DEADLINE_NONE when it has none. */
void cs_thread_deadline(struct memsrc *ms, const struct cs_thread *t,
			struct cs_deadline *out);

/* Is stopped thread t in futex(2) or futex_waitv(2), where a lock's
 * acquire blocks: the call itself, or a timed futex wait an earlier stop
 * interrupted, which waits on in restart_syscall(2) (its registers still
 * the call's, checked as cs_thread_deadline() does)?  1 or 0, -1 when
 * not known: neither its registers nor /proc's number, or only /proc's
 * restart_syscall. */
int cs_thread_in_futex(struct memsrc *ms, const struct cs_thread *t);

/* The system call stopped thread t sat in when the stop interrupted it
 * (to be restarted when it resumes) and its first three arguments, from
 * its registers: 1 with *nr and args[0..2] set, else 0 (it ran, or had
 * left the call; not stopped).  A read, a flock() or a wait4() without
 * a timeout goes on as it was once resumed, so these say what it waits
 * for without the race of reading /proc after the resume. */
int cs_thread_interrupted_call(const struct cs_thread *t, long *nr,
			       unsigned long long args[3]);

#endif
