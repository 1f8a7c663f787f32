/*
 * Names for native pcs: the function (from DWARF when the module or its
 * separate debug file has it, else .symtab, else .dynsym), source file
 * and line, and the functions inlined at the pc, with libdwfl.
 *
 * Modules are the target's mapped ELF files, opened through the source's
 * root (so a core's --sysroot and build-id checks apply), and the vDSO,
 * whose image is copied from the target.  Separate debug files are found
 * by build id under /usr/lib/debug/.build-id/ (their compressed DWARF
 * decompressed by symbols/debug_inflate.h) and by .gnu_debuglink.
 * C++ names are demangled (symbols/demangle.h).  A pc no symbol covers has no name: the
 * caller shows it as library+offset, never as the nearest symbol.
 */
#ifndef COROSCOPE_SYMBOLS_NATIVE_SYMBOLS_H
#define COROSCOPE_SYMBOLS_NATIVE_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "attach/memsrc.h"
#include "common/error.h"

/* Inlined functions reported per pc, at most. */
#define NATIVE_MAX_INLINED 16

/* One function at a pc: inlined ones first (innermost first), then the
 * real function that contains them. */
struct native_sym {
	const char *function;  /* NULL when unknown; owned by the symbolizer */
	const char *library;   /* the module as the target names it, or NULL */
	uint64_t offset;       /* pc - the module's load address */
	const char *file;      /* source file, or NULL; owned by libdw */
	int line;              /* 0 when unknown */
	int inlined;           /* inlined into the next entry */
};

struct native_symbolizer;

/* Errors: CS_ERR_INTERNAL (out of memory). */
int native_symbolizer_new(struct native_symbolizer **out, struct memsrc *ms,
			  struct cs_err *err);
void native_symbolizer_free(struct native_symbolizer *s);

/*
 * Describe pc into out[0..max) (max >= 1) and return how many entries
 * (at least 1).  `exact` as in struct native_pc: a return address is
 * looked up as pc - 1, inside the call instruction.  Strings stay valid
 * until native_symbolizer_free().
 */
size_t native_symbolize(struct native_symbolizer *s, uint64_t pc, int exact,
			struct native_sym *out, size_t max);

/*
 * Do s's answers hold for ms: the same backend, process and root, and
 * the same code mappings (place, offset, file, permissions)?  Then
 * native_symbolizer_rebind() points s at ms (the source s was made for
 * may be gone), and the DWARF s has loaded is used again (`watch
 * --native` reads its target ten times a second; each new symbolizer
 * loaded the same DWARF again): 0, or -1 when a module's file is no
 * longer mapped at its base (then free s and make another).
 */
int native_symbolizer_fits(const struct native_symbolizer *s,
			   const struct memsrc *ms);
int native_symbolizer_rebind(struct native_symbolizer *s, struct memsrc *ms);

#endif
