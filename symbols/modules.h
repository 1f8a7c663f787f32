/*
 * The target's loaded ELF modules: the main executable and shared
 * libraries, each opened from disk (through the source's root, so other
 * mount namespaces and sysroots work) with its load bias computed from
 * the mappings.
 *
 * Symbol lookups here return run-time addresses.  All of this happens
 * before the target is stopped: it only reads files and the mapping list.
 */
#ifndef COROSCOPE_SYMBOLS_MODULES_H
#define COROSCOPE_SYMBOLS_MODULES_H

#include <stdint.h>

#include "attach/memsrc.h"
#include "symbols/elfimage.h"

struct module {
	char *path;              /* as the target names it */
	uint64_t start, end;     /* lowest and highest mapped address */
	uint64_t bias;           /* run-time address - link-time address */
	struct elf_image *img;   /* NULL when the file could not be opened */
	int is_main;             /* the main executable */
};

struct module_list {
	struct module *mods;
	size_t n;
};

/*
 * Group the source's file mappings into modules and open each ELF file.
 * Files that cannot be opened are kept with img == NULL (a warning's
 * worth, not an error).  The main executable is opened through
 * ms->exe_path when set.  Returns 0: nothing here fails (out of memory
 * exits, common/error.h).
 */
int module_list_load(struct module_list *list, struct memsrc *ms,
		     struct cs_err *err);
void module_list_release(struct module_list *list);

/* Run-time address of a symbol in one module: 0 found, -1 not. */
int module_symbol(const struct module *mod, const char *name,
		  uint64_t *addr, uint64_t *size);

/* Run-time address of a section in one module: 0 found, -1 not. */
int module_section(const struct module *mod, const char *name,
		   uint64_t *addr, uint64_t *size);

/* The first module defining the symbol (main executable first), or NULL. */
const struct module *module_list_find_symbol(const struct module_list *list,
					     const char *name, uint64_t *addr);

/* The module whose path's basename starts with prefix, or NULL. */
const struct module *module_list_find_prefix(const struct module_list *list,
					     const char *prefix);

#endif
