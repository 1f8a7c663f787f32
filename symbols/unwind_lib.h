/*
 * libunwind's functions that symbols/unwind.c calls, found at run time.
 *
 * Only --native unwinds, and loading libunwind (with the libunwind and
 * liblzma it needs) at every start cost ./coroscope about 0.5 ms of each
 * run (its page faults: ~12 us each in a VM), a twentieth of a small
 * target's dump.  So ./coroscope does not link it: the first unwinder
 * loads it with dlopen().  A link that has it (`make static`, the unit
 * tests and the fuzz harnesses: the Makefile's UNWIND_LINKED) binds the
 * same functions directly, through weak references, and loads nothing.
 */
#ifndef COROSCOPE_SYMBOLS_UNWIND_LIB_H
#define COROSCOPE_SYMBOLS_UNWIND_LIB_H

#include <libunwind.h>

#include "common/error.h"

/* The shared library dlopen() asks for (Debian's libunwind8). */
#define UNWIND_LIB_SONAME "libunwind-x86_64.so.8"

struct unwind_lib {
	unw_addr_space_t (*create_addr_space)(unw_accessors_t *a, int order);
	void (*destroy_addr_space)(unw_addr_space_t as);
	int (*set_caching_policy)(unw_addr_space_t as,
				  unw_caching_policy_t policy);
	int (*init_remote)(unw_cursor_t *c, unw_addr_space_t as, void *arg);
	int (*step)(unw_cursor_t *c);
	int (*get_reg)(unw_cursor_t *c, int reg, unw_word_t *val);
	/* Exported by libunwind 1.6 but not declared by its headers: its
	 * own search of a binary-search table in the target. */
	int (*dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					 unw_dyn_info_t *di,
					 unw_proc_info_t *pi,
					 int need_unwind_info, void *arg);
};

/*
 * The functions, bound or loaded once (thread-safe); NULL with err set
 * (CS_ERR_INTERNAL: "cannot load libunwind ...") when the library or one
 * of them is missing.
 */
const struct unwind_lib *unwind_lib(struct cs_err *err);

#endif
