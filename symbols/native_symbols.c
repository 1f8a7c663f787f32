#include "symbols/native_symbols.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "symbols/debug_inflate.h"
#include "symbols/demangle.h"
#include "symbols/dwarf_scopes.h"
#include "symbols/elfimage.h"
#include "symbols/unwind.h"
#include "common/addrmap.h"
#include "common/arena.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

#define VDSO_MAX ((size_t)1 << 20)

struct native_symbolizer {
	struct memsrc *ms;
	Dwfl *dwfl;
	struct native_modules mods;
	Dwfl_Module **dmods;     /* by module index; NULL: file not usable */
	/* a name's address (libdw's strings do not move) -> its demangled
	 * copy, owned here; NULL when it does not demangle */
	struct addrmap demangled;
	/* pc -> its struct memo, one map for return addresses and one for
	 * exact pcs: 2,000 threads blocked alike are some 60,000 frames of
	 * a few dozen pcs, and each lookup walks a unit's DWARF tree. */
	struct addrmap memo[2];
	struct arena memo_mem;
	/* What its answers hold for (native_symbolizer_fits()): the
	 * backend, process, root and code mappings it was made for. */
	const struct memsrc_ops *ops;
	int pid;
	char *root;
	struct cs_mapping *code;
	size_t ncode;
};

struct memo {
	size_t max;               /* what it was asked for with */
	size_t n;
	struct native_sym sym[];
};

/* libdwfl's default search: the file's directory, its .debug/, and
 * /usr/lib/debug (by build id under .build-id/, then by debuglink). */
static char *debuginfo_path;

/*
 * The module's separate debug file by build id, decompressed by us
 * (symbols/debug_inflate.h) rather than by libdw; else libdwfl's own
 * search.  libdwfl's build id search cannot be used and then
 * decompressed: it opens the file to check it and keeps that handle.
 *
 * libdwfl also calls this for the DWZ file a module's DWARF refers to,
 * with no CRC and that file's name as the debug link: that one it
 * finds, and checks against the build id the DWARF names, itself.
 *
 * libdw takes the directory of the file it reads for where to find
 * split DWARF (.dwo) named by relative paths; a memfd has none, so
 * split DWARF next to a compressed separate debug file is not found.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata,
			  const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	int alt = debuglink_crc == 0 && debuglink_file != NULL;
	const unsigned char *id = NULL;
	GElf_Addr vaddr;
	int len = alt ? 0 : dwfl_module_build_id(mod, &id, &vaddr);
	char *path = len > 0 ? elf_build_id_debug_path(id, (size_t)len) : NULL;
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;

	if (fd >= 0)
		fd = debug_inflate_kept(fd, id, (size_t)len);
	if (fd >= 0) {
		*debuginfo_file_name = path;   /* libdwfl frees it */
		return fd;
	}
	free(path);
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base,
					    file_name, debuglink_file,
					    debuglink_crc, debuginfo_file_name);
}

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static void memo_init(struct native_symbolizer *s)
{
	addrmap_init(&s->memo[0]);
	addrmap_init(&s->memo[1]);
	arena_init(&s->memo_mem);
}

static void memo_release(struct native_symbolizer *s)
{
	addrmap_release(&s->memo[0]);
	addrmap_release(&s->memo[1]);
	arena_release(&s->memo_mem);
}

static int is_code(const struct cs_mapping *m)
{
	return m->perms[2] == 'x';
}

/* The target the symbolizer is made for: its modules and their places
 * are read from ms's code mappings as pcs come. */
static void note_target(struct native_symbolizer *s, const struct memsrc *ms)
{
	size_t i, k = 0;

	s->ops = ms->ops;
	s->pid = ms->pid;
	s->root = ms->root ? xstrdup(ms->root) : NULL;
	for (i = 0; i < ms->nmaps; i++)
		s->ncode += is_code(&ms->maps[i]);
	s->code = xcalloc(s->ncode ? s->ncode : 1, sizeof(*s->code));
	for (i = 0; i < ms->nmaps && k < s->ncode; i++) {
		const struct cs_mapping *m = &ms->maps[i];

		if (!is_code(m))
			continue;
		s->code[k] = *m;
		s->code[k].path = m->path ? xstrdup(m->path) : NULL;
		k++;
	}
}

static void forget_target(struct native_symbolizer *s)
{
	size_t i;

	for (i = 0; i < s->ncode; i++)
		free(s->code[i].path);
	free(s->code);
	free(s->root);
}

int native_symbolizer_fits(const struct native_symbolizer *s,
			   const struct memsrc *ms)
{
	size_t i, k = 0;

	if (s->ops != ms->ops || s->pid != ms->pid ||
	    !cs_str_eq(s->root, ms->root))
		return 0;
	/* Bounded by the mappings. */
	for (i = 0; i < ms->nmaps; i++) {
		const struct cs_mapping *m = &ms->maps[i], *c;

		if (!is_code(m))
			continue;
		if (k == s->ncode)
			return 0;
		c = &s->code[k++];
		if (c->start != m->start || c->end != m->end ||
		    c->offset != m->offset || c->deleted != m->deleted ||
		    strcmp(c->perms, m->perms) || !cs_str_eq(c->path, m->path))
			return 0;
	}
	return k == s->ncode;
}

int native_symbolizer_rebind(struct native_symbolizer *s, struct memsrc *ms)
{
	size_t i;

	/* Its modules' paths point into the old source's mappings, and so
	 * do the answers kept: paths from ms's, the answers asked again
	 * (DWARF loaded stays loaded). */
	for (i = 0; i < s->mods.n; i++) {
		struct native_module *m = &s->mods.mods[i];
		const struct cs_mapping *now;

		if (!m->path)
			continue;
		now = memsrc_find_mapping(ms, m->base);
		if (!now || !now->path || now->path[0] != '/')
			return -1;
		m->path = now->path;
	}
	s->ms = ms;
	memo_release(s);
	memo_init(s);
	return 0;
}

int native_symbolizer_new(struct native_symbolizer **out, struct memsrc *ms,
			  struct cs_err *err)
{
	struct native_symbolizer *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (s)
		s->dmods = calloc(NATIVE_MAX_MODULES, sizeof(*s->dmods));
	if (s && s->dmods)
		s->dwfl = dwfl_begin(&callbacks);
	if (!s || !s->dmods || !s->dwfl) {
		if (s)
			free(s->dmods);
		free(s);
		return cs_fail(err, CS_ERR_INTERNAL, "out of memory");
	}
	s->ms = ms;
	note_target(s, ms);
	addrmap_init(&s->demangled);
	memo_init(s);
	*out = s;
	return 0;
}

void native_symbolizer_free(struct native_symbolizer *s)
{
	uint64_t key;
	void *val;
	size_t pos = 0;

	if (!s)
		return;
	while (addrmap_next(&s->demangled, &pos, &key, &val))
		free(val);
	addrmap_release(&s->demangled);
	memo_release(s);
	forget_target(s);
	dwfl_end(s->dwfl);
	native_modules_release(&s->mods);
	free(s->dmods);
	free(s);
}

/* The vDSO has no file: copy its image from the target into a memfd. */
static int vdso_fd(struct native_symbolizer *s, const struct native_module *m)
{
	size_t len = (size_t)(m->end - m->base);
	void *buf;
	int fd;

	if (len > VDSO_MAX)
		return -1;
	buf = malloc(len);
	if (!buf)
		return -1;
	if (memsrc_read(s->ms, m->base, buf, len, NULL) < 0 ||
	    memcmp(buf, "\177ELF", 4)) {
		free(buf);
		return -1;
	}
	fd = memfd_create("coroscope-vdso", MFD_CLOEXEC);
	if (fd >= 0 && write(fd, buf, len) != (ssize_t)len) {
		close(fd);
		fd = -1;
	}
	free(buf);
	return fd;
}

static Dwfl_Module *report(struct native_symbolizer *s,
			   const struct native_module *m)
{
	Dwfl_Module *mod = NULL;
	char *host = NULL;
	int fd = -1;

	if (m->path) {
		host = memsrc_target_path(s->ms, m->path);
		if (host && *host)
			fd = open(host, O_RDONLY | O_CLOEXEC);
	} else {
		fd = vdso_fd(s, m);
	}
	if (fd >= 0) {
		const char *name = m->path ? m->path : "[vdso]";

		dwfl_report_begin_add(s->dwfl);
		/* base: where the offset-0 mapping is; libdwfl computes the
		 * bias from the first PT_LOAD (and ignores it for ET_EXEC).
		 * On success libdwfl owns fd. */
		mod = dwfl_report_elf(s->dwfl, name, host ? host : name, fd,
				      m->base, 0);
		dwfl_report_end(s->dwfl, NULL, NULL);
		if (!mod)
			close(fd);
	}
	free(host);
	return mod;
}

/* A C++ name as the reader knows it, or the name as it is. */
static const char *readable(struct native_symbolizer *s, const char *name)
{
	int found;
	char *d;

	if (!name || strncmp(name, "_Z", 2))
		return name;
	d = addrmap_get(&s->demangled, (uint64_t)(uintptr_t)name, &found);
	if (!found) {
		d = demangle(name);
		addrmap_put(&s->demangled, (uint64_t)(uintptr_t)name, d);
	}
	return d ? d : name;
}

static const char *die_name(struct native_symbolizer *s, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name;

	/* Through DW_AT_abstract_origin / DW_AT_specification.  A C++
	 * function's DW_AT_name is bare ("wait"); its linkage name says
	 * which namespace, class and overload. */
	if ((dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	     dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr)) &&
	    (name = dwarf_formstring(&attr)) && (name = readable(s, name)) &&
	    strncmp(name, "_Z", 2))
		return name;
	if (dwarf_attr_integrate(die, DW_AT_name, &attr))
		return dwarf_formstring(&attr);
	return NULL;
}

/* Where an inlined call was made: its call_file and call_line. */
static void call_site(Dwarf_Die *cu, Dwarf_Die *inl, const char **file,
		      int *line)
{
	Dwarf_Attribute attr;
	Dwarf_Files *files;
	Dwarf_Word idx, ln;
	size_t nfiles;

	*file = NULL;
	*line = 0;
	if (dwarf_attr(inl, DW_AT_call_line, &attr) &&
	    dwarf_formudata(&attr, &ln) == 0 && ln <= 0x7fffffff)
		*line = (int)ln;
	if (dwarf_attr(inl, DW_AT_call_file, &attr) &&
	    dwarf_formudata(&attr, &idx) == 0 &&
	    dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && idx < nfiles)
		*file = dwarf_filesrc(files, idx, NULL, NULL);
}

/* DWARF's view: inlined functions and the one containing them. */
static size_t from_dwarf(struct native_symbolizer *s, Dwfl_Module *mod,
			 uint64_t a, struct native_sym *out, size_t max)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, a, &bias);
	Dwarf_Die scopes[SCOPE_CHAIN_MAX];
	Dwfl_Line *l;
	const char *file = NULL;
	int line = 0;
	size_t n = 0, i;

	if (!cu)
		return 0;
	l = dwfl_module_getsrc(mod, a);
	if (l)
		file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	/* The concrete chain, each inlined call inside its caller: from
	 * the innermost, up to the function they are all inlined into. */
	for (i = scope_chain_at(cu, a - bias, scopes, SCOPE_CHAIN_MAX);
	     i-- > 0 && n < max;) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag != DW_TAG_inlined_subroutine &&
		    tag != DW_TAG_subprogram)
			continue;
		out[n] = out[0];
		out[n].function = die_name(s, &scopes[i]);
		out[n].file = file;
		out[n].line = line;
		out[n].inlined = tag == DW_TAG_inlined_subroutine;
		n++;
		if (tag == DW_TAG_subprogram)
			break;
		call_site(cu, &scopes[i], &file, &line);
	}
	/* a pc in a CU but in no function's ranges: lines only */
	if (!n && file && max) {
		out[0].file = file;
		out[0].line = line;
	}
	return n;
}

static size_t symbolize(struct native_symbolizer *s, uint64_t pc, int exact,
			struct native_sym *out, size_t max)
{
	uint64_t a = exact ? pc : pc - 1;
	int added;
	long i = native_modules_index(&s->mods, s->ms, a, &added);
	const struct native_module *m;
	Dwfl_Module *mod;
	GElf_Sym sym;
	GElf_Off off;
	const char *name;
	size_t n;

	memset(&out[0], 0, sizeof(out[0]));
	if (i < 0)
		return 1;
	m = &s->mods.mods[i];
	if (added)
		s->dmods[i] = report(s, m);
	mod = s->dmods[i];
	out[0].library = m->path ? m->path : "[vdso]";
	out[0].offset = pc - m->base;
	if (!mod)
		return 1;
	n = from_dwarf(s, mod, a, out, max);
	if (n && out[n - 1].function)
		return n;
	/* The symbol tables: only a symbol that covers the pc (a sized one
	 * that ends before it is not a name for it). */
	name = dwfl_module_addrinfo(mod, a, &off, &sym, NULL, NULL, NULL);
	if (name && (sym.st_size == 0 || off < sym.st_size) &&
	    GELF_ST_TYPE(sym.st_info) != STT_OBJECT) {
		if (!n)
			n = 1;
		out[n - 1].function = readable(s, name);
	}
	return n ? n : 1;
}

size_t native_symbolize(struct native_symbolizer *s, uint64_t pc, int exact,
			struct native_sym *out, size_t max)
{
	struct addrmap *memo = &s->memo[exact != 0];
	struct memo *m = pc ? addrmap_get(memo, pc, NULL) : NULL;
	size_t n;

	/* The same pc asked with another max may be cut elsewhere: asked
	 * afresh (no caller does). */
	if (m && m->max == max) {
		memcpy(out, m->sym, m->n * sizeof(*out));
		return m->n;
	}
	n = symbolize(s, pc, exact, out, max);
	if (pc && !m) {
		m = arena_alloc(&s->memo_mem, sizeof(*m) + n * sizeof(*out));
		m->max = max;
		m->n = n;
		memcpy(m->sym, out, n * sizeof(*out));
		addrmap_put(memo, pc, m);
	}
	return n;
}
