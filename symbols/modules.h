/*
 * The target's loaded ELF modules: the main executable and shared
 * libraries, each opened from disk (through the source's root, so other
 * mount namespaces and sysroots work) with its load bias computed from
 * the mappings.  A live process's module files are opened when first
 * asked about (module_image()): it maps twenty files or more, and a
 * dump needs two or three of them (~30 us an open here).  A core's are
 * all opened at once, so that its missing files are all named.
 *
 * Symbol lookups here return run-time addresses.  All of this happens
 * before the target is stopped: it only reads files and the mapping list.
 */
#ifndef COROSCOPE_SYMBOLS_MODULES_H
#define COROSCOPE_SYMBOLS_MODULES_H

#include <stdint.h>

#include "attach/memsrc.h"
#include "symbols/elfimage.h"

struct module_file;

struct module {
	char *path;              /* as the target names it */
	uint64_t start, end;     /* lowest and highest mapped address */
	int is_main;             /* the main executable */
	struct module_file *file;  /* modules.c's: opened on demand */
};

struct module_list {
	struct module *mods;
	size_t n;
};

/*
 * Group the source's file mappings into modules.  A file that cannot be
 * opened leaves its module without an image (a warning's worth, not an
 * error).  The main executable is opened through ms->exe_path when set.
 * ms must outlive the list (files are opened through it later).  Returns
 * 0: nothing here fails (out of memory exits, common/error.h).
 */
int module_list_load(struct module_list *list, struct memsrc *ms,
		     struct cs_err *err);
void module_list_release(struct module_list *list);

/* The module's ELF file, opened on the first call (from any thread), or
 * NULL when it cannot be. */
struct elf_image *module_image(const struct module *mod);
/* Run-time address - link-time address (0 without an image). */
uint64_t module_bias(const struct module *mod);

/* Run-time address of a symbol in one module: 0 found, -1 not. */
int module_symbol(const struct module *mod, const char *name,
		  uint64_t *addr, uint64_t *size);

/* Run-time address of a section in one module: 0 found, -1 not. */
int module_section(const struct module *mod, const char *name,
		   uint64_t *addr, uint64_t *size);

/* A module defining the symbol, or NULL: the main executable first,
 * then a libpython (the module nearly every lookup wants: the others'
 * files stay unopened), then the others in address order. */
const struct module *module_list_find_symbol(const struct module_list *list,
					     const char *name, uint64_t *addr);

/* The module whose path's basename starts with prefix, or NULL. */
const struct module *module_list_find_prefix(const struct module_list *list,
					     const char *prefix);

#endif
