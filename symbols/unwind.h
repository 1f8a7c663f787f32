/*
 * Native (C) stacks: libunwind through its remote interface, over a
 * struct memsrc and the registers saved for each thread at the stop.
 *
 * One code path for a live process (its registers from PTRACE_GETREGS,
 * its stacks from the copy taken during the stop) and a core file (the
 * registers of each NT_PRSTATUS note).  Unwind tables come from the
 * .eh_frame_hdr of the module holding each pc, found through the
 * module's program headers as mapped in the target, so the vDSO (which
 * has no file) is handled like any library.  A module without
 * .eh_frame_hdr (only .debug_frame, or a JIT) has no table here, and
 * libunwind falls back to the frame-pointer chain for its pcs.  Signal
 * trampolines are recognised by their code (see native_unwind()).
 *
 * Nothing here prints; the unwinder only reads the source.
 */
#ifndef COROSCOPE_SYMBOLS_UNWIND_H
#define COROSCOPE_SYMBOLS_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "attach/memsrc.h"
#include "common/error.h"

/* Frames per thread, at most: a runaway chain stops here. */
#define NATIVE_MAX_FRAMES 256

struct native_pc {
	uint64_t pc;      /* the frame's instruction pointer */
	uint64_t sp;
	/* pc is where the thread was interrupted (the innermost frame, or
	 * the one a signal interrupted) or a signal trampoline, rather than
	 * a return address, so it is symbolized as is, not as pc - 1. */
	int exact;
	int signal;       /* this frame is a signal trampoline */
};

struct native_unwinder;

/* Errors: CS_ERR_INTERNAL (out of memory, libunwind refused, or not
 * loadable: symbols/unwind_lib.h). */
int native_unwinder_new(struct native_unwinder **out, struct memsrc *ms,
			struct cs_err *err);
void native_unwinder_free(struct native_unwinder *u);

/*
 * Unwind one thread into pcs[0..max), innermost first.  Returns the
 * number of frames (0 when the thread has no saved registers); the walk
 * ends quietly where the stack cannot be unwound further, at max, where
 * it would loop, or at a return address outside executable memory.
 */
size_t native_unwind(struct native_unwinder *u, const struct cs_thread *t,
		     struct native_pc *pcs, size_t max);

/* Modules holding code, as mapped, numbered as first met. */
#define NATIVE_MAX_MODULES 1024

struct native_module {
	uint64_t base;       /* its mapping with file offset 0 (ELF header) */
	uint64_t end;        /* the end of its last mapping */
	const char *path;    /* borrowed from the source's maps; NULL for
				the vDSO and other anonymous code */
};

struct native_modules {
	struct native_module *mods;   /* NATIVE_MAX_MODULES of them */
	size_t n;
};

/*
 * The index of the module holding pc, added (and *added set) when first
 * met; -1 when pc is in no executable mapping or the list is full.
 * mods must be zeroed; native_modules_release() frees it.
 */
long native_modules_index(struct native_modules *l, const struct memsrc *ms,
			  uint64_t pc, int *added);
void native_modules_release(struct native_modules *l);

#endif
