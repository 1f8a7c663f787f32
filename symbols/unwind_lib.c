#include "symbols/unwind_lib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common/banned.h"

/* Weak: 0 where the link has no libunwind (./coroscope), the functions
 * themselves where it has (UNWIND_LINKED in the Makefile).  libunwind.h
 * names them unw_*; these are its exported names for x86-64. */
#pragma weak _Ux86_64_create_addr_space
#pragma weak _Ux86_64_destroy_addr_space
#pragma weak _Ux86_64_set_caching_policy
#pragma weak _Ux86_64_init_remote
#pragma weak _Ux86_64_step
#pragma weak _Ux86_64_get_reg
#pragma weak _Ux86_64_dwarf_search_unwind_table
extern int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as,
					      unw_word_t ip,
					      unw_dyn_info_t *di,
					      unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);

static struct unwind_lib lib;
static int loaded;             /* 1: lib is whole */
static char why[256];          /* why not, when not */
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* The linked functions, if the link has every one of them. */
static int bind_linked(void)
{
	if (!_Ux86_64_create_addr_space || !_Ux86_64_destroy_addr_space ||
	    !_Ux86_64_set_caching_policy || !_Ux86_64_init_remote ||
	    !_Ux86_64_step || !_Ux86_64_get_reg ||
	    !_Ux86_64_dwarf_search_unwind_table)
		return 0;
	lib.create_addr_space = _Ux86_64_create_addr_space;
	lib.destroy_addr_space = _Ux86_64_destroy_addr_space;
	lib.set_caching_policy = _Ux86_64_set_caching_policy;
	lib.init_remote = _Ux86_64_init_remote;
	lib.step = _Ux86_64_step;
	lib.get_reg = _Ux86_64_get_reg;
	lib.dwarf_search_unwind_table = _Ux86_64_dwarf_search_unwind_table;
	return 1;
}

/* dlsym() of name into *slot, a function pointer (copied as POSIX
 * allows); 0 when missing. */
static int find(void *h, const char *name, void *slot)
{
	void *f = dlsym(h, name);

	if (!f) {
		snprintf(why, sizeof(why), "%s has no %s", UNWIND_LIB_SONAME,
			 name);
		return 0;
	}
	memcpy(slot, &f, sizeof(f));
	return 1;
}

#define FIND(h, name, field) find(h, name, &lib.field)

static void load(void)
{
	const char *e;
	void *h;

	if (bind_linked()) {
		loaded = 1;
		return;
	}
	/* Kept loaded for the process's life: unwinders come and go
	 * (watch --native makes one per sample). */
	h = dlopen(UNWIND_LIB_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		e = dlerror();
		snprintf(why, sizeof(why), "%.200s", e ? e : UNWIND_LIB_SONAME);
		return;
	}
	if (FIND(h, "_Ux86_64_create_addr_space", create_addr_space) &&
	    FIND(h, "_Ux86_64_destroy_addr_space", destroy_addr_space) &&
	    FIND(h, "_Ux86_64_set_caching_policy", set_caching_policy) &&
	    FIND(h, "_Ux86_64_init_remote", init_remote) &&
	    FIND(h, "_Ux86_64_step", step) &&
	    FIND(h, "_Ux86_64_get_reg", get_reg) &&
	    FIND(h, "_Ux86_64_dwarf_search_unwind_table",
		 dwarf_search_unwind_table)) {
		loaded = 1;
		return;
	}
	memset(&lib, 0, sizeof(lib));
	dlclose(h);
}

const struct unwind_lib *unwind_lib(struct cs_err *err)
{
	(void)pthread_once(&once, load);
	if (loaded)
		return &lib;
	cs_fail(err, CS_ERR_INTERNAL,
		"cannot load libunwind, which native frames need (Debian's "
		"libunwind8): %s", why);
	return NULL;
}
