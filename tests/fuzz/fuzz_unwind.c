/*
 * libFuzzer harness for the native unwinder's inputs from the target:
 * the bytes of a module (its ELF and program headers, .eh_frame_hdr and
 * .eh_frame as mapped, and the same bytes as the module's file, whose
 * .debug_frame symbols/debug_frame.c rewrites), the stack bytes and the
 * registers.  libunwind reads all of it through symbols/unwind.c's
 * accessors; nothing may crash, hang or leak whatever the bytes say.
 * The rewrite of .debug_frame is also run on the whole input and its
 * output checked (sorted table, offsets inside the image).
 *
 * Input: a 16-byte header -- u16 L, u16 unused, u32 rip, u32 rsp,
 * u32 rbp -- then L bytes of module (mapped r-x at MOD, and its file),
 * then the stack (mapped rw- at STACK).  rip is MOD + rip % L, rsp and
 * rbp STACK + their value % the stack's size.
 *
 * Seeds (tests/fuzz/corpus/unwind): a small library built with
 * -fno-asynchronous-unwind-tables -g (CFI in .debug_frame only) and one
 * built with .eh_frame, each with a stack of three frames into it.
 * `make fuzz` builds and runs it with every tests/fuzz/fuzz_*.c.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "attach/memsrc.h"
#include "common/le.h"
#include "common/strbuf.h"
#include "symbols/debug_frame.h"
#include "symbols/unwind.h"

#define MOD 0x10000000ull
#define STACK 0x7ff000000000ull
#define HEADER 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The last input's frames (file scope, for a driver checking seeds). */
static struct native_pc pcs[NATIVE_MAX_FRAMES];
static size_t npcs;

struct input {
	const uint8_t *mod, *stack;
	size_t modlen, stacklen;
};

static int file_fd = -1;
static char file_path[64];

static long input_read(struct memsrc *ms, uint64_t addr, void *buf,
		       size_t len, struct cs_err *err)
{
	const struct input *in = ms->backend;
	const uint8_t *p;
	size_t have, n;

	(void)err;
	if (addr >= MOD && addr - MOD < in->modlen) {
		p = in->mod + (addr - MOD);
		have = in->modlen - (size_t)(addr - MOD);
	} else if (addr >= STACK && addr - STACK < in->stacklen) {
		p = in->stack + (addr - STACK);
		have = in->stacklen - (size_t)(addr - STACK);
	} else {
		return 0;
	}
	n = have < len ? have : len;
	memcpy(buf, p, n);
	return (long)n;
}

/* The module's file is the module's bytes, in a memfd. */
static char *input_host_path(const struct memsrc *ms, const char *path)
{
	(void)ms;
	return xstrdup(strcmp(path, "/fuzz/lib.so") ? "" : file_path);
}

static const struct memsrc_ops input_ops = {
	.read_raw = input_read,
	.host_path = input_host_path,
};

static void map(struct cs_mapping *m, uint64_t start, size_t len,
		const char *perms, const char *path)
{
	m->start = start;
	/* whole pages, as the kernel maps them */
	m->end = start + ((len + 4095) & ~(size_t)4095);
	memcpy(m->perms, perms, 5);
	m->path = path ? xstrdup(path) : NULL;
}

/* What the rewrite promises (symbols/debug_frame.h), or abort. */
static void check_rewrite(const uint8_t *data, size_t size)
{
	struct debug_frame_image img;
	uint64_t lo = MOD, hi = MOD + 0x100000, at = 0xffffa00000000000ull +
						      (MOD & 0xffffffffu);
	int32_t prev = INT32_MIN;
	uint64_t i;

	if (debug_frame_rewrite(data, size, MOD, at, lo, hi, &img) < 0) {
		if (img.data || img.len || img.nfdes)
			abort();
		return;
	}
	if (!img.nfdes || img.nfdes * 8 > img.len)
		abort();
	for (i = 0; i < img.nfdes; i++) {
		int32_t start = le_i32(img.data + i * 8);
		uint32_t fde = le_u32(img.data + i * 8 + 4), flen, cie;

		if (start < prev || start < 0 || (uint64_t)start >= hi - lo)
			abort();
		prev = start;
		/* the FDE and the CIE it points back to are in the image */
		if (fde < img.nfdes * 8 || (size_t)fde + 28 > img.len)
			abort();
		flen = le_u32(img.data + fde);
		cie = le_u32(img.data + fde + 4);
		if ((size_t)fde + 4 + flen > img.len || cie > fde + 4 ||
		    fde + 4 - cie < img.nfdes * 8)
			abort();
	}
	debug_frame_image_release(&img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in;
	struct memsrc *ms;
	struct native_unwinder *u;
	struct cs_thread t;
	struct cs_err err;
	size_t len;

	npcs = 0;
	check_rewrite(data, size);
	if (size < HEADER + 64)
		return 0;
	if (file_fd < 0) {
		file_fd = memfd_create("fuzz-unwind", MFD_CLOEXEC);
		if (file_fd < 0)
			abort();
		snprintf(file_path, sizeof(file_path), "/proc/self/fd/%d",
			 file_fd);
	}
	len = le_u16(data);
	if (len < 64 || len > size - HEADER)
		len = size - HEADER;
	in.mod = data + HEADER;
	in.modlen = len;
	in.stack = data + HEADER + len;
	in.stacklen = size - HEADER - len;
	if (ftruncate(file_fd, 0) < 0 ||
	    pwrite(file_fd, in.mod, in.modlen, 0) != (ssize_t)in.modlen)
		abort();

	cs_err_init(&err);
	ms = xcalloc(1, sizeof(*ms));
	memsrc_init(ms, &input_ops, &in);
	ms->maps = xcalloc(2, sizeof(*ms->maps));
	map(&ms->maps[0], MOD, in.modlen, "r-xp", "/fuzz/lib.so");
	ms->nmaps = 1;
	if (in.stacklen)
		map(&ms->maps[ms->nmaps++], STACK, in.stacklen, "rw-p", NULL);
	ms->root = xstrdup("");

	memset(&t, 0, sizeof(t));
	t.tid = 1;
	t.has_regs = 1;
	t.regs.r[CS_REG_RIP] = MOD + le_u32(data + 4) % in.modlen;
	if (in.stacklen) {
		t.regs.r[CS_REG_RSP] = STACK + le_u32(data + 8) % in.stacklen;
		t.regs.r[CS_REG_RBP] = STACK + le_u32(data + 12) % in.stacklen;
	}
	if (native_unwinder_new(&u, ms, &err) == 0) {
		npcs = native_unwind(u, &t, pcs, NATIVE_MAX_FRAMES);
		native_unwinder_free(u);
	}
	memsrc_free(ms);
	return 0;
}
