/*
 * libFuzzer harness for attach/syscall_deadline.c: a stopped thread's
 * registers and the memory its arguments point into, both the target's.
 *
 * Input: six little-endian words, the call's number and its first five
 * arguments (rdi, rsi, rdx, r10, r8), each reduced to a small call
 * number or an address near BASE; the rest is the memory at BASE.
 * Seeds: tests/fuzz/corpus/syscall_deadline/.
 *
 * Besides the sanitizers, it aborts when an answer breaks the contract:
 * a clock outside the enum, a time that is negative, not finite or past
 * what a clock keeps.
 */
#include "attach/syscall_deadline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/le.h"
#include "common/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BASE 0x10000u
#define MAX_MEM 8192u
#define WORDS 6

static const uint8_t *mem;
static size_t mem_len;

static long buf_read(struct memsrc *ms, uint64_t addr, void *buf, size_t len,
		     struct cs_err *err)
{
	(void)ms;
	(void)err;
	memset(buf, 0, len);
	if (addr < BASE || addr >= BASE + mem_len)
		return 0;
	if (len > BASE + mem_len - addr)
		len = BASE + mem_len - addr;
	memcpy(buf, mem + (addr - BASE), len);
	return (long)len;
}

static const struct memsrc_ops buf_ops = { .read_raw = buf_read };

/* The calls decoded, and the ones around them. */
static const long calls[] = { 23, 202, 219, 230, 270, 271, 449, 7, 35, -1 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct memsrc *ms;
	struct cs_thread t;
	struct cs_deadline d;
	uint64_t w[WORDS];
	size_t i;
	int k;

	if (size < WORDS * 8)
		return 0;
	for (i = 0; i < WORDS; i++)
		w[i] = le_u64(data + i * 8);
	mem = data + WORDS * 8;
	mem_len = size - WORDS * 8 < MAX_MEM ? size - WORDS * 8 : MAX_MEM;
	memset(&t, 0, sizeof(t));
	t.has_regs = 1;
	t.regs.r[CS_REG_ORIG_RAX] =
		(uint64_t)calls[w[0] % (sizeof(calls) / sizeof(calls[0]))];
	/* (an argument with its top bit set is an address near BASE) */
	for (i = 1; i < WORDS; i++)
		if (w[i] >> 63)
			w[i] = BASE + (w[i] & 0x3fff);
	t.regs.r[CS_REG_RDI] = w[1];
	t.regs.r[CS_REG_RSI] = w[2];
	t.regs.r[CS_REG_RDX] = w[3];
	t.regs.r[CS_REG_R10] = w[4];
	t.regs.r[CS_REG_R8] = w[5];
	/* (interrupted, or ended with a result; a bitset or none) */
	t.regs.r[CS_REG_RAX] = w[0] & 0x100 ? 0 : (uint64_t)-516;
	t.regs.r[CS_REG_R9] = w[0] & 0x200 ? 0 : 0xffffffffu;
	ms = calloc(1, sizeof(*ms));
	if (!ms)
		return 0;
	memsrc_init(ms, &buf_ops, NULL);
	cs_thread_deadline(ms, &t, &d);
	if ((int)d.clock < CS_DEADLINE_NONE || d.clock > CS_DEADLINE_LEFT)
		abort();
	if (d.clock != CS_DEADLINE_NONE &&
	    (!isfinite(d.at) || d.at < 0 || d.at > 1e12))
		abort();
	/* (a thread with registers is in a futex wait or not) */
	k = cs_thread_in_futex(ms, &t);
	if (k < -1 || k > 1 || (t.has_regs && k < 0))
		abort();
	memsrc_free(ms);
	return 0;
}
