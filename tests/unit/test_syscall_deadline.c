/*
 * attach/syscall_deadline.c: which system calls, stopped in, tell when
 * they end, and how.  Registers as a stop leaves them, and a memory
 * source of two pages serving the time values their arguments point to.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/syscall_deadline.h"
#include "tests/unit/check.h"

#define BASE 0x10000u
#define SIZE 8192u

static uint8_t mem[SIZE];

static long buf_read(struct memsrc *ms, uint64_t addr, void *buf, size_t len,
		     struct cs_err *err)
{
	(void)ms;
	(void)err;
	if (addr < BASE || addr >= BASE + SIZE)
		return 0;
	if (len > BASE + SIZE - addr)
		len = BASE + SIZE - addr;
	memcpy(buf, mem + (addr - BASE), len);
	return (long)len;
}

static const struct memsrc_ops buf_ops = { .read_raw = buf_read };

static void put64(uint64_t addr, uint64_t v)
{
	size_t i;

	for (i = 0; i < 8; i++)
		mem[addr - BASE + i] = (uint8_t)(v >> (8 * i));
}

/* A thread stopped in call nr with arguments a[0..5] (rdi, rsi, rdx,
 * r10, r8, r9). */
static struct cs_thread stopped(long nr, const uint64_t *a)
{
	struct cs_thread t;

	memset(&t, 0, sizeof(t));
	t.tid = 1;
	t.has_regs = 1;
	t.regs.r[CS_REG_ORIG_RAX] = (uint64_t)nr;
	t.regs.r[CS_REG_RDI] = a[0];
	t.regs.r[CS_REG_RSI] = a[1];
	t.regs.r[CS_REG_RDX] = a[2];
	t.regs.r[CS_REG_R10] = a[3];
	t.regs.r[CS_REG_R8] = a[4];
	t.regs.r[CS_REG_R9] = a[5];
	/* (interrupted, to be restarted: ERESTART_RESTARTBLOCK) */
	t.regs.r[CS_REG_RAX] = (uint64_t)-516;
	return t;
}

static struct cs_deadline deadline(struct memsrc *ms, long nr,
				   uint64_t a0, uint64_t a1, uint64_t a2,
				   uint64_t a3, uint64_t a4)
{
	/* (r9: a futex wait's bitset, all ones as glibc's) */
	const uint64_t a[6] = { a0, a1, a2, a3, a4, 0xffffffffu };
	struct cs_thread t = stopped(nr, a);
	struct cs_deadline d;

	cs_thread_deadline(ms, &t, &d);
	return d;
}

#define TS (BASE + 0x100u)      /* a timespec: 1234.5 s */
#define TV (BASE + 0x200u)      /* a timeval: 12.25 s */
#define WORD (BASE + 0x300u)    /* a futex word holding 7 */
#define BAD (BASE + 0x400u)     /* nanoseconds out of range */
#define NEG (BASE + 0x500u)     /* negative seconds */

int main(void)
{
	struct memsrc *ms = calloc(1, sizeof(*ms));
	struct cs_deadline d;

	memsrc_init(ms, &buf_ops, NULL);
	put64(TS, 1234);
	put64(TS + 8, 500000000);
	put64(TV, 12);
	put64(TV + 8, 250000);
	mem[WORD - BASE] = 7;
	put64(BAD, 5);
	put64(BAD + 8, 1000000000);
	put64(NEG, (uint64_t)-5);
	put64(NEG + 8, 0);
	/* (all set before the first read: memsrc caches what it read) */

	/* clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts): a sleep */
	d = deadline(ms, 230, 1, 1, TS, 0, 0);
	CHECK(d.clock == CS_DEADLINE_MONOTONIC && d.at == 1234.5 && d.sleep,
	      "clock_nanosleep abs monotonic: %d %f %d", d.clock, d.at,
	      d.sleep);
	d = deadline(ms, 230, 0, 1, TS, 0, 0);
	CHECK(d.clock == CS_DEADLINE_REALTIME, "abs realtime: %d", d.clock);
	/* relative, or another clock: not known */
	d = deadline(ms, 230, 1, 0, TS, 0, 0);
	CHECK(d.clock == CS_DEADLINE_NONE, "relative: %d", d.clock);
	d = deadline(ms, 230, 7, 1, TS, 0, 0);
	CHECK(d.clock == CS_DEADLINE_NONE, "boottime: %d", d.clock);

	/* futex(FUTEX_WAIT_BITSET | PRIVATE [| CLOCK_REALTIME]) */
	d = deadline(ms, 202, WORD, 9 | 128, 7, TS, 0);
	CHECK(d.clock == CS_DEADLINE_MONOTONIC && d.at == 1234.5 && !d.sleep,
	      "futex bitset: %d %f", d.clock, d.at);
	d = deadline(ms, 202, WORD, 9 | 128 | 256, 7, TS, 0);
	CHECK(d.clock == CS_DEADLINE_REALTIME, "futex realtime: %d", d.clock);
	d = deadline(ms, 202, WORD, 0 | 128, 7, TS, 0);
	CHECK(d.clock == CS_DEADLINE_NONE, "FUTEX_WAIT (relative): %d",
	      d.clock);
	d = deadline(ms, 202, WORD, 9 | 128, 7, 0, 0);
	CHECK(d.clock == CS_DEADLINE_NONE, "no timeout: %d", d.clock);

	/* restart_syscall with a futex wait's registers */
	d = deadline(ms, 219, WORD, 9 | 128 | 256, 7, TS, 0);
	CHECK(d.clock == CS_DEADLINE_REALTIME && d.at == 1234.5,
	      "restarted futex: %d %f", d.clock, d.at);
	/* ... but not one whose word no longer holds the value, nor a
	 * poll() of 9 descriptors (rsi 9, its fds' first not its timeout),
	 * nor an unaligned word or time value, nor another op's bits */
	d = deadline(ms, 219, WORD, 9 | 128, 8, TS, 0);
	CHECK(d.clock == CS_DEADLINE_NONE, "word changed: %d", d.clock);
	d = deadline(ms, 219, WORD, 9, 1000, TS, 0);
	CHECK(d.clock == CS_DEADLINE_NONE, "poll of 9: %d", d.clock);
	d = deadline(ms, 219, WORD + 1, 9, 7, TS, 0);
	CHECK(d.clock == CS_DEADLINE_NONE, "unaligned word: %d", d.clock);
	d = deadline(ms, 219, WORD, 9, 7, TS + 4, 0);
	CHECK(d.clock == CS_DEADLINE_NONE, "unaligned time: %d", d.clock);
	d = deadline(ms, 219, WORD, 9 | 512, 7, TS, 0);
	CHECK(d.clock == CS_DEADLINE_NONE, "other bits: %d", d.clock);
	d = deadline(ms, 219, 0, 9, 0, TS, 0);
	CHECK(d.clock == CS_DEADLINE_NONE, "null word: %d", d.clock);

	/* select(0, ..., &tv): time left, a sleep; with descriptors, a
	 * wait; pselect6 and ppoll with timespecs */
	d = deadline(ms, 23, 0, 0, 0, 0, TV);
	CHECK(d.clock == CS_DEADLINE_LEFT && d.at == 12.25 && d.sleep,
	      "select sleep: %d %f %d", d.clock, d.at, d.sleep);
	d = deadline(ms, 23, 5, BASE, 0, 0, TV);
	CHECK(d.clock == CS_DEADLINE_LEFT && !d.sleep, "select: %d", d.clock);
	d = deadline(ms, 270, 5, BASE, 0, 0, TS);
	CHECK(d.clock == CS_DEADLINE_LEFT && d.at == 1234.5, "pselect6: %f",
	      d.at);
	d = deadline(ms, 271, BASE, 1, TS, 0, 0);
	CHECK(d.clock == CS_DEADLINE_LEFT && d.at == 1234.5, "ppoll: %f",
	      d.at);
	d = deadline(ms, 23, 0, 0, 0, 0, 0);
	CHECK(d.clock == CS_DEADLINE_NONE, "select forever: %d", d.clock);

	/* futex_waitv(waiters, n, flags, &ts, clockid) */
	d = deadline(ms, 449, BASE, 1, 0, TS, 1);
	CHECK(d.clock == CS_DEADLINE_MONOTONIC, "futex_waitv: %d", d.clock);

	/* time values out of range, or unreadable: none */
	d = deadline(ms, 230, 1, 1, BAD, 0, 0);
	CHECK(d.clock == CS_DEADLINE_NONE, "nsec 1e9: %d", d.clock);
	d = deadline(ms, 230, 1, 1, BASE + SIZE - 8, 0, 0);
	CHECK(d.clock == CS_DEADLINE_NONE, "half readable: %d", d.clock);
	d = deadline(ms, 230, 1, 1, NEG, 0, 0);
	CHECK(d.clock == CS_DEADLINE_NONE, "negative: %d", d.clock);

	/* a futex wait with no bitset (the kernel refuses it): no futex
	 * wait, restarted or not */
	{
		const uint64_t a[6] = { WORD, 9 | 128, 7, TS, 0, 0 };
		struct cs_thread t = stopped(219, a);

		cs_thread_deadline(ms, &t, &d);
		CHECK(d.clock == CS_DEADLINE_NONE, "no bitset: %d", d.clock);
	}
	/* a call that ended (its result in rax, not a restart): none */
	{
		const uint64_t a[6] = { 1, 1, TS, 0, 0, 0 };
		struct cs_thread t = stopped(230, a);

		t.regs.r[CS_REG_RAX] = 0;
		cs_thread_deadline(ms, &t, &d);
		CHECK(d.clock == CS_DEADLINE_NONE, "ended: %d", d.clock);
		t.regs.r[CS_REG_RAX] = (uint64_t)-514;   /* ERESTARTNOHAND */
		cs_thread_deadline(ms, &t, &d);
		CHECK(d.clock == CS_DEADLINE_MONOTONIC, "interrupted: %d",
		      d.clock);
	}
	/* in a futex wait, for the wait-for graph: futex(), futex_waitv()
	 * and a restarted timed futex wait; not a restarted call of another
	 * shape, nor another call; unknown without registers, /proc's
	 * number for a thread left running */
	{
		const uint64_t fw[6] = { WORD, 9 | 128, 7, TS, 0, 0xffffffffu };
		const uint64_t other[6] = { 9, 9, 7, TS, 0, 0 };
		struct cs_thread t = stopped(202, fw);

		CHECK(cs_thread_in_futex(ms, &t) == 1, "futex");
		t = stopped(449, other);
		CHECK(cs_thread_in_futex(ms, &t) == 1, "futex_waitv");
		t = stopped(219, fw);
		CHECK(cs_thread_in_futex(ms, &t) == 1, "restarted futex");
		t = stopped(219, other);
		CHECK(cs_thread_in_futex(ms, &t) == 0, "restarted poll");
		t = stopped(230, fw);
		CHECK(cs_thread_in_futex(ms, &t) == 0, "clock_nanosleep");
		t.has_regs = 0;
		CHECK(cs_thread_in_futex(ms, &t) == -1, "no registers");
		t.left_running = 1;
		t.left_call = 202;
		CHECK(cs_thread_in_futex(ms, &t) == 1, "left running in futex");
		t.left_call = 219;
		CHECK(cs_thread_in_futex(ms, &t) == -1, "left running, restart");
		/* stopped on its way out of a restarted wait that ended */
		t = stopped(219, fw);
		t.regs.r[CS_REG_RAX] = 0;
		CHECK(cs_thread_in_futex(ms, &t) == 0, "restart ended");
	}
	/* upper halves the kernel ignores: the clock id is 32-bit */
	d = deadline(ms, 230, 1 | (1ull << 32), 1, TS, 0, 0);
	CHECK(d.clock == CS_DEADLINE_MONOTONIC, "clock id's upper half: %d",
	      d.clock);

	/* not stopped in a call, or another call: none */
	d = deadline(ms, (long)-1, 1, 1, TS, 0, 0);
	CHECK(d.clock == CS_DEADLINE_NONE, "user space: %d", d.clock);
	d = deadline(ms, 7, BASE, 1, 1000, 0, 0);
	CHECK(d.clock == CS_DEADLINE_NONE, "poll: %d", d.clock);

	memsrc_free(ms);
	return CHECK_DONE("test_syscall_deadline");
}
