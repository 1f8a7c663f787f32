#include "symbols/modules.h"

#include <elf.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

/*
 * How the module list is built:
 *
 *  1. File mappings (path starting with '/') are grouped by path.  A
 *     group none of whose mappings is executable is a data file
 *     (locale-archive, a mapped database...), not a module, and is
 *     dropped -- unless the source gives no permissions at all.
 *  2. The main executable is the group whose path is what exe_path
 *     (/proc/PID/exe) links to.  When exe_path is not a link (a core's
 *     executable named on the command line) it is the group with the same
 *     build id as exe_path, or failing that the lowest-addressed ELF
 *     module that is ET_EXEC or has an .interp section (the section of
 *     PT_INTERP; PIE executables are loaded below their libraries by the
 *     kernel), or failing that the lowest-addressed ELF module.
 *  3. Each ELF file is opened, when first asked for, through the
 *     source's root; the main
 *     executable through exe_path, which works even when its file was
 *     deleted or lives in another mount namespace.  Other deleted files
 *     of a live process are opened through /proc/PID/map_files.
 *  4. The bias is the address at which file offset 0 is mapped, minus
 *     the link-time address of file offset 0.  ET_EXEC files are never
 *     relocated: their bias is 0 whatever the mappings say.
 */

struct group {
	const char *path;          /* points into ms->maps */
	uint64_t start, end;
	uint64_t off0_start;       /* where file offset 0 is mapped */
	int has_off0;
	uint64_t low_start, low_offset;   /* the lowest mapping */
	uint64_t first_end;        /* end of the lowest mapping */
	int exec, perms_known;
	int deleted;               /* the backend saw "(deleted)" */
};

/* What opening a module's file takes, kept from the load. */
struct module_file {
	struct memsrc *ms;
	struct group g;            /* g.path: the module's own copy */
	int use_exe;
	int tried;                 /* under open_lock */
	struct elf_image *img;
	uint64_t bias;
};

/* Modules are asked about from the readers' threads too. */
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;

/* qsort context is not portable: sort pointers to mappings instead. */
static int cmp_map_by_path(const void *a, const void *b)
{
	const struct cs_mapping *x = *(const struct cs_mapping *const *)a;
	const struct cs_mapping *y = *(const struct cs_mapping *const *)b;
	int c = strcmp(x->path, y->path);

	if (c != 0)
		return c;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_group_by_start(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void group_add(struct group *g, const struct cs_mapping *m)
{
	if (m->deleted)
		g->deleted = 1;
	if (!g->path) {
		g->path = m->path;
		g->start = m->start;
		g->end = m->end;
		g->low_start = m->start;
		g->low_offset = m->offset;
		g->first_end = m->end;
	}
	if (m->start < g->start)
		g->start = m->start;
	if (m->end > g->end)
		g->end = m->end;
	if (m->offset == 0 && !g->has_off0) {
		g->off0_start = m->start;
		g->has_off0 = 1;
	}
	if (m->perms[0]) {
		g->perms_known = 1;
		if (m->perms[2] == 'x')
			g->exec = 1;
	}
}

/* Group file mappings by path, in address order: the count. */
static size_t make_groups(const struct memsrc *ms, struct group **out)
{
	const struct cs_mapping **byp;
	struct group *groups;
	size_t i, n = 0, ng = 0;

	*out = NULL;
	if (ms->nmaps == 0)
		return 0;
	byp = xcalloc(ms->nmaps, sizeof(*byp));
	groups = xcalloc(ms->nmaps, sizeof(*groups));
	for (i = 0; i < ms->nmaps; i++) {
		const struct cs_mapping *m = &ms->maps[i];

		if (m->path && m->path[0] == '/' && m->end > m->start)
			byp[n++] = m;
	}
	qsort(byp, n, sizeof(*byp), cmp_map_by_path);
	for (i = 0; i < n; i++) {
		if (ng == 0 || strcmp(groups[ng - 1].path, byp[i]->path) != 0)
			ng++;
		group_add(&groups[ng - 1], byp[i]);
	}
	free(byp);

	/* Drop data files; keep everything if permissions are unknown. */
	n = 0;
	for (i = 0; i < ng; i++)
		if (groups[i].exec || !groups[i].perms_known)
			groups[n++] = groups[i];
	qsort(groups, n, sizeof(*groups), cmp_group_by_start);
	*out = groups;
	return n;
}

/* Is a live process's /proc/PID/map_files usable for this source? */
static int has_map_files(const struct memsrc *ms)
{
	if (ms->proc_id <= 0)
		return 0;
	return (ms->root && strncmp(ms->root, "/proc/", 6) == 0) ||
	       (ms->exe_path && strncmp(ms->exe_path, "/proc/", 6) == 0);
}

/* Open one module's ELF file; *img NULL when it cannot be (not an
 * error: the module is kept without symbols). */
static void open_image(struct memsrc *ms, const struct group *g,
		       int use_exe, struct elf_image **img)
{
	char buf[128];
	char *path;

	*img = NULL;
	if (use_exe && ms->exe_path &&
	    elf_image_open(img, ms->exe_path, NULL) == 0)
		return;

	if (g->deleted) {
		/* The name now leads to nothing or to another file; only the
		 * kernel's link to the mapped file itself is trustworthy. */
		if (!has_map_files(ms))
			return;
		snprintf(buf, sizeof(buf),
			 "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, ms->proc_id,
			 g->low_start, g->first_end);
		elf_image_open(img, buf, NULL);
		return;
	}
	/* NULL only when memsrc.c runs out of memory: no image then. */
	path = memsrc_target_path(ms, g->path);
	if (path)
		elf_image_open(img, path, NULL);
	free(path);
}

static uint64_t compute_bias(const struct group *g,
			     const struct elf_image *img)
{
	uint64_t anchor;

	if (!img || elf_image_type(img) == ET_EXEC)
		return 0;
	/* Without a mapping of offset 0 (unmapped since), the lowest mapping
	 * stands in; exact when it belongs to the first segment. */
	anchor = g->has_off0 ? g->off0_start : g->low_start - g->low_offset;
	return anchor - elf_image_base_vaddr(img);
}

struct elf_image *module_image(const struct module *mod)
{
	struct module_file *f = mod->file;

	if (!f)
		return NULL;
	pthread_mutex_lock(&open_lock);
	if (!f->tried) {
		f->tried = 1;
		open_image(f->ms, &f->g, f->use_exe, &f->img);
		f->bias = compute_bias(&f->g, f->img);
	}
	pthread_mutex_unlock(&open_lock);
	return f->img;
}

uint64_t module_bias(const struct module *mod)
{
	return module_image(mod) ? mod->file->bias : 0;
}

/* The group that exe_path links to, or -1. */
static long main_by_link(const struct memsrc *ms, const struct group *groups,
			 size_t n)
{
	char buf[PATH_MAX + 1];
	ssize_t len;
	size_t i;

	if (!ms->exe_path)
		return -1;
	len = readlink(ms->exe_path, buf, sizeof(buf) - 1);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	for (i = 0; i < n; i++)
		if (strcmp(groups[i].path, buf) == 0)
			return (long)i;
	return -1;
}

static int same_build_id(const struct elf_image *a, const struct elf_image *b)
{
	size_t la, lb;
	const uint8_t *ia = elf_image_build_id(a, &la);
	const uint8_t *ib = elf_image_build_id(b, &lb);

	return ia && ib && la == lb && memcmp(ia, ib, la) == 0;
}

/* Step 2's fallbacks, once every image is open. */
static void guess_main(struct module_list *list, struct memsrc *ms)
{
	struct elf_image *exe = NULL;
	struct module *found = NULL;
	size_t i;

	if (ms->exe_path && elf_image_open(&exe, ms->exe_path, NULL) == 0) {
		for (i = 0; i < list->n && !found; i++)
			if (module_image(&list->mods[i]) &&
			    same_build_id(module_image(&list->mods[i]), exe))
				found = &list->mods[i];
		if (found) {
			elf_image_free(exe);
			exe = NULL;
		}
	}
	for (i = 0; i < list->n && !found; i++) {
		const struct elf_image *img = module_image(&list->mods[i]);

		if (img && (elf_image_type(img) == ET_EXEC ||
			    elf_image_section(img, ".interp", NULL, NULL) == 0))
			found = &list->mods[i];
	}
	/* A static PIE has neither: it is then the only ELF module. */
	for (i = 0; i < list->n && !found; i++)
		if (module_image(&list->mods[i]))
			found = &list->mods[i];
	if (found && exe) {
		/* The caller named the executable: trust it over the file
		 * found under the mapping's name. */
		elf_image_free(found->file->img);
		found->file->img = exe;
		found->file->bias = compute_bias(&found->file->g, exe);
		exe = NULL;
	}
	elf_image_free(exe);
	if (found)
		found->is_main = 1;
}

int module_list_load(struct module_list *list, struct memsrc *ms,
		     struct cs_err *err)
{
	struct group *groups;
	size_t i, ng;
	long main_idx;

	list->mods = NULL;
	list->n = 0;
	ng = make_groups(ms, &groups);
	if (ng == 0) {
		free(groups);
		return 0;
	}
	list->mods = xcalloc(ng, sizeof(*list->mods));

	main_idx = main_by_link(ms, groups, ng);
	for (i = 0; i < ng; i++) {
		struct module *mod = &list->mods[i];
		const struct group *g = &groups[i];

		mod->path = xstrdup(g->path);
		mod->start = g->start;
		mod->end = g->end;
		mod->is_main = (long)i == main_idx;
		mod->file = xcalloc(1, sizeof(*mod->file));
		mod->file->ms = ms;
		mod->file->g = *g;
		mod->file->g.path = mod->path;
		mod->file->use_exe = mod->is_main;
	}
	list->n = ng;
	/* A backend that finds the files itself (a core's: --sysroot,
	 * --lib-search-path, build ids) warns of each one it cannot find
	 * as it is asked: asked now for all, its warnings name every
	 * missing library, whatever the readers go on to need. */
	for (i = 0; ms->ops && ms->ops->host_path && i < ng; i++)
		(void)module_image(&list->mods[i]);
	if (main_idx < 0)
		guess_main(list, ms);
	free(groups);
	return 0;
}

void module_list_release(struct module_list *list)
{
	size_t i;

	for (i = 0; i < list->n; i++) {
		free(list->mods[i].path);
		if (list->mods[i].file)
			elf_image_free(list->mods[i].file->img);
		free(list->mods[i].file);
	}
	free(list->mods);
	list->mods = NULL;
	list->n = 0;
}

int module_symbol(const struct module *mod, const char *name,
		  uint64_t *addr, uint64_t *size)
{
	struct elf_image *img = module_image(mod);
	uint64_t value, sz;

	if (!img || elf_image_symbol(img, name, &value, &sz) != 0)
		return -1;
	if (addr)
		*addr = value + mod->file->bias;
	if (size)
		*size = sz;
	return 0;
}

int module_section(const struct module *mod, const char *name,
		   uint64_t *addr, uint64_t *size)
{
	const struct elf_image *img = module_image(mod);
	uint64_t a, sz;

	if (!img || elf_image_section(img, name, &a, &sz) != 0)
		return -1;
	if (addr)
		*addr = a + mod->file->bias;
	if (size)
		*size = sz;
	return 0;
}

const struct module *module_list_find_symbol(const struct module_list *list,
					     const char *name, uint64_t *addr)
{
	size_t i;
	int pass;

	/* Pass 0: the main executable; 1: a libpython; 2: the others. */
	for (pass = 0; pass < 3; pass++)
		for (i = 0; i < list->n; i++) {
			const struct module *m = &list->mods[i];
			int lib = !m->is_main &&
				  !strncmp(cs_base_name(m->path), "libpython", 9);
			int here = pass == 0 ? m->is_main :
				   pass == 1 ? lib : !m->is_main && !lib;

			if (here && module_symbol(m, name, addr, NULL) == 0)
				return m;
		}
	return NULL;
}

const struct module *module_list_find_prefix(const struct module_list *list,
					      const char *prefix)
{
	size_t i, len = strlen(prefix);

	for (i = 0; i < list->n; i++)
		if (strncmp(cs_base_name(list->mods[i].path), prefix, len) == 0)
			return &list->mods[i];
	return NULL;
}
