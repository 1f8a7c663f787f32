/*
 * The timeout a stopped thread's system call ends at, on x86-64.
 *
 * Our stop interrupts the call, and the kernel restarts it when the
 * thread goes on; at the stop its registers still hold the call's number
 * (orig_rax) and its arguments.  Which calls tell their end:
 *
 * - clock_nanosleep(clock, TIMER_ABSTIME, &t): the absolute time t on
 *   CLOCK_MONOTONIC or CLOCK_REALTIME (time.sleep() from 3.11).  A
 *   relative one (nanosleep(), C's sleep()) writes the time left to its
 *   `rem` when interrupted, but then waits on in restart_syscall(),
 *   whose registers cannot be told from another call's: not read;
 * - futex(FUTEX_WAIT_BITSET) with a timeout, and futex_waitv(): an
 *   absolute time, on CLOCK_REALTIME where FUTEX_CLOCK_REALTIME says so
 *   (sem_timedwait(), a lock's acquire with a timeout up to 3.10), else
 *   CLOCK_MONOTONIC (sem_clockwait(), from 3.11; PyMutex's parking);
 *   FUTEX_WAIT's is relative, its end not readable.  Once a stop
 *   interrupted it, it waits on in restart_syscall(), its registers
 *   still the futex call's (restarted_futex_wait());
 * - select(), pselect6() and ppoll(): interrupted, the kernel wrote the
 *   time left back into their time value before our stop (so that the
 *   restarted call waits only that long): seconds left at the stop
 *   (time.sleep() up to 3.10 is select() of no descriptors).
 *
 * Others (poll()'s and epoll_wait()'s milliseconds, relative) say
 * nothing.  Every value is checked: a time value out of its range is
 * none.
 */
#include "attach/syscall_deadline.h"

#include <string.h>

#include "common/le.h"
#include "common/banned.h"

enum {
	NR_SELECT = 23, NR_FUTEX = 202, NR_RESTART_SYSCALL = 219,
	NR_CLOCK_NANOSLEEP = 230, NR_PSELECT6 = 270, NR_PPOLL = 271,
	NR_FUTEX_WAITV = 449,
};

#define CLOCK_ID_REALTIME 0
#define CLOCK_ID_MONOTONIC 1
#define TIMER_ABSTIME_FLAG 1
#define FUTEX_WAIT_BITSET_CMD 9
#define FUTEX_PRIVATE_FLAG 128
#define FUTEX_CLOCK_REALTIME_FLAG 256

/* No clock keeps seconds beyond this (as readers/tasks.h's timers). */
#define MAX_SECONDS 1e12

/* A timespec (sub 1e9: nanoseconds) or timeval (sub 1e6) at addr, as
 * seconds: 0, or -1 where unreadable or out of range. */
static int time_value(struct memsrc *ms, uint64_t addr, double sub,
		      double *out)
{
	uint8_t b[16];
	int64_t sec, frac;

	if (!addr || memsrc_read(ms, addr, b, sizeof(b), NULL) < 0)
		return -1;
	sec = (int64_t)le_u64(b);
	frac = (int64_t)le_u64(b + 8);
	if (sec < 0 || (double)sec > MAX_SECONDS || frac < 0 ||
	    (double)frac >= sub)
		return -1;
	*out = (double)sec + (double)frac / sub;
	return 0;
}

/* The futex(2) command in op, its flags off. */
static uint64_t futex_cmd(uint64_t op)
{
	return op & ~(uint64_t)(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME_FLAG);
}

/* A FUTEX_WAIT_BITSET wait's registers: the op exactly that (its flags
 * aside) and a bitset, which the kernel refuses to be 0 (glibc passes
 * all ones). */
static int futex_bitset_wait(const uint64_t *r)
{
	return futex_cmd((uint32_t)r[CS_REG_RSI]) == FUTEX_WAIT_BITSET_CMD &&
	       (uint32_t)r[CS_REG_R9] != 0;
}

/*
 * A thread in restart_syscall(2) whose registers are a futex(2) wait's:
 * a timed futex wait that a stop interrupted (ours, an earlier dump's)
 * is restarted through the kernel's restart block, but its registers
 * keep the call's arguments.  So does any call restarted so (a
 * relative nanosleep(), a poll()), whose arguments could look alike:
 * the op must be FUTEX_WAIT_BITSET with no other bit and a bitset, the
 * futex word aligned and still holding the value waited on (a wait ends
 * when it changes), the time value aligned.
 */
static int restarted_futex_wait(struct memsrc *ms, const uint64_t *r)
{
	uint8_t word[4];

	if (!futex_bitset_wait(r) || !r[CS_REG_RDI] || (r[CS_REG_RDI] & 3) ||
	    !r[CS_REG_R10] || (r[CS_REG_R10] & 7) ||
	    memsrc_read(ms, r[CS_REG_RDI], word, sizeof(word), NULL) < 0)
		return 0;
	return le_u32(word) == (uint32_t)r[CS_REG_RDX];
}

/* The kernel reads these arguments as 32-bit ints. */
static enum cs_deadline_clock clock_of(uint64_t id)
{
	return (uint32_t)id == CLOCK_ID_MONOTONIC ? CS_DEADLINE_MONOTONIC :
	       (uint32_t)id == CLOCK_ID_REALTIME ? CS_DEADLINE_REALTIME :
	       CS_DEADLINE_NONE;
}

/* Is rax at the stop a call's "to be restarted" (ERESTARTSYS,
 * ERESTARTNOINTR, ERESTARTNOHAND, ERESTART_RESTARTBLOCK): the stop
 * interrupted it?  A thread stopped on its way out of a call that had
 * ended (a futex wait woken) keeps the call's number in orig_rax too,
 * and its result in rax: it waits no longer. */
static int interrupted(uint64_t rax)
{
	int64_t e = (int64_t)rax;

	return e == -512 || e == -513 || e == -514 || e == -516;
}

void cs_thread_deadline(struct memsrc *ms, const struct cs_thread *t,
			struct cs_deadline *out)
{
#if defined(__x86_64__)
	const uint64_t *r = t->regs.r;
	enum cs_deadline_clock clock = CS_DEADLINE_NONE;
	uint64_t at = 0;
	double sub = 1e9;
	long nr;

	memset(out, 0, sizeof(*out));
	if (!t->has_regs || t->left_running || !cs_thread_syscall(t, &nr) ||
	    !interrupted(r[CS_REG_RAX]))
		return;
	switch (nr) {
	case NR_CLOCK_NANOSLEEP:
		if ((uint32_t)r[CS_REG_RSI] & TIMER_ABSTIME_FLAG) {
			clock = clock_of(r[CS_REG_RDI]);
			at = r[CS_REG_RDX];
		}
		out->sleep = 1;
		break;
	case NR_RESTART_SYSCALL:
	case NR_FUTEX:
		/* (a restarted call: only a futex wait's registers) */
		if (nr == NR_RESTART_SYSCALL && !restarted_futex_wait(ms, r))
			return;
		if (futex_bitset_wait(r)) {
			clock = r[CS_REG_RSI] & FUTEX_CLOCK_REALTIME_FLAG ?
				CS_DEADLINE_REALTIME : CS_DEADLINE_MONOTONIC;
			at = r[CS_REG_R10];
		}
		break;
	case NR_FUTEX_WAITV:
		clock = clock_of(r[CS_REG_R8]);
		at = r[CS_REG_R10];
		break;
	case NR_SELECT:
	case NR_PSELECT6:
		/* (the same arguments: select()'s a timeval) */
		sub = nr == NR_SELECT ? 1e6 : 1e9;
		clock = CS_DEADLINE_LEFT;
		at = r[CS_REG_R8];
		out->sleep = (uint32_t)r[CS_REG_RDI] == 0; /* no descriptors */
		break;
	case NR_PPOLL:
		clock = CS_DEADLINE_LEFT;
		at = r[CS_REG_RDX];
		break;
	default:
		return;
	}
	if (clock != CS_DEADLINE_NONE && time_value(ms, at, sub, &out->at) == 0)
		out->clock = clock;
#else
	(void)ms;
	(void)t;
	memset(out, 0, sizeof(*out));
#endif
}

int cs_thread_in_futex(struct memsrc *ms, const struct cs_thread *t)
{
#if defined(__x86_64__)
	long nr;

	if (!cs_thread_syscall(t, &nr))
		return -1;
	/* (left running: no registers, only /proc's number; stopped, as
	 * cs_thread_deadline(): still in the call, and a futex wait's
	 * registers) */
	if (nr == NR_RESTART_SYSCALL)
		return t->left_running ? -1 :
		       interrupted(t->regs.r[CS_REG_RAX]) &&
		       restarted_futex_wait(ms, t->regs.r);
	return nr == NR_FUTEX || nr == NR_FUTEX_WAITV;
#else
	(void)ms;
	(void)t;
	return -1;
#endif
}

int cs_thread_interrupted_call(const struct cs_thread *t, long *nr,
			       unsigned long long args[3])
{
#if defined(__x86_64__)
	if (!t->has_regs || t->left_running ||
	    (int64_t)t->regs.r[CS_REG_ORIG_RAX] < 0 ||
	    !interrupted(t->regs.r[CS_REG_RAX]))
		return 0;
	*nr = (long)t->regs.r[CS_REG_ORIG_RAX];
	args[0] = t->regs.r[CS_REG_RDI];
	args[1] = t->regs.r[CS_REG_RSI];
	args[2] = t->regs.r[CS_REG_RDX];
	return 1;
#else
	(void)t;
	(void)nr;
	(void)args;
	return 0;
#endif
}
