/*
 * Unit tests for symbols/dwarf_scopes.c, against libdw itself: for pcs
 * spread over every compile unit of real modules, the functions and inlined calls that
 * scope_chain_at() finds must be the ones libdw's two walks find
 * (dwarf_getscopes() for the innermost, dwarf_getscopes_die() for the
 * concrete chain around it), in the same order.  Where libdw's walk
 * finds nothing (GCC's LTO units, this program's among them, stop it),
 * the functions must be the ones binutils' `addr2line -i -f` names,
 * innermost first.
 *
 * The modules: this test program (C, uncompressed DWARF), libc through
 * its separate debug file (libc6-dbg: compressed, C11), pyenv's
 * libpython3.12 (C, inlined functions in large units) when present, and
 * a C++ library built here with g++ and with clang++ (functions inlined
 * into a member function and into a function of a namespace) where
 * they are installed, and one whose shared DIEs dwz moved into imported
 * partial units, where dwz is.
 */
#include "symbols/dwarf_scopes.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/check.h"
#include "common/banned.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define LIBPYTHON312 "/root/.pyenv/versions/3.12.1/lib/libpython3.12.so.1.0"

/* libdw's walks cost milliseconds each in a large unit: a sample. */
#define PCS_PER_MODULE 600

static char *debuginfo_path;

static const Dwfl_Callbacks offline = {
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* What a chain holds: functions and inlined calls. */
static int code_scope(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

/* libdw's answer, innermost first, functions and inlined calls only:
 * how many. */
static size_t libdw_chain(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Off *out,
			  size_t max)
{
	Dwarf_Die *scopes = NULL, inner;
	size_t n = 0;
	int ns, i;

	ns = dwarf_getscopes(cu, pc, &scopes);
	if (ns <= 0) {
		free(scopes);
		return 0;
	}
	inner = scopes[0];
	free(scopes);
	scopes = NULL;
	ns = dwarf_getscopes_die(&inner, &scopes);
	for (i = 0; i < ns && n < max; i++)
		if (code_scope(dwarf_tag(&scopes[i])))
			out[n++] = dwarf_dieoffset(&scopes[i]);
	free(scopes);
	return n;
}

/* pcs libdw's walk found no scope for, asked of addr2line at the end. */
struct pending {
	Dwarf_Addr pc;
	char names[512];          /* ours, innermost first, one per line */
};

#define MAX_PENDING 1024

struct module_check {
	const char *what, *path;
	struct pending pending[MAX_PENDING];
	size_t npending;
	size_t checked_by_addr2line;
};

/* As addr2line -f names a function: its linkage name, else its name. */
static const char *scope_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr))
		name = dwarf_formstring(&attr);
	if (!name && dwarf_attr_integrate(die, DW_AT_name, &attr))
		name = dwarf_formstring(&attr);
	return name ? name : "??";
}

/* Our functions at pc, innermost first, a line each. */
static void our_names(Dwarf_Die *got, size_t ng, char *out, size_t size)
{
	size_t i = ng, len = 0;

	out[0] = '\0';
	while (i-- > 0) {
		int tag = dwarf_tag(&got[i]);

		if (tag != DW_TAG_subprogram &&
		    tag != DW_TAG_inlined_subroutine)
			continue;
		len += (size_t)snprintf(out + len, size - len, "%s\n",
					scope_name(&got[i]));
		if (len >= size) {
			out[size - 1] = '\0';
			return;
		}
	}
}

struct function_search {
	Dwarf_Addr pc;
	int found;
};

static int function_holds(Dwarf_Die *fn, void *arg)
{
	struct function_search *f = arg;

	if (dwarf_haspc(fn, f->pc) != 1)
		return DWARF_CB_OK;
	f->found = 1;
	return DWARF_CB_ABORT;
}

/* Does any function of cu (libdw's dwarf_getfuncs() finds those in
 * namespaces and classes too) hold pc? */
static int function_at(Dwarf_Die *cu, Dwarf_Addr pc)
{
	struct function_search f = { pc, 0 };

	dwarf_getfuncs(cu, function_holds, &f, 0);
	return f.found;
}

/* Compare the two at pc; 1 when the pc is in some function. */
static int compare_at(struct module_check *m, Dwarf_Die *cu, Dwarf_Addr pc)
{
	Dwarf_Off want[SCOPE_CHAIN_MAX];
	Dwarf_Die got[SCOPE_CHAIN_MAX];
	size_t nw, ng, i;
	int same;

	ng = scope_chain_at(cu, pc, got, SCOPE_CHAIN_MAX);
	for (i = 0; i < ng; i++)
		CHECK(dwarf_haspc(&got[i], pc) == 1 &&
		      code_scope(dwarf_tag(&got[i])),
		      "%s: pc 0x%llx: scope 0x%llx does not hold it", m->what,
		      (unsigned long long)pc,
		      (unsigned long long)dwarf_dieoffset(&got[i]));
	/* A chain with less room keeps its innermost. */
	if (ng >= 2) {
		Dwarf_Die cut[SCOPE_CHAIN_MAX];
		size_t nc = scope_chain_at(cu, pc, cut, ng - 1);

		CHECK(nc == ng - 1 && dwarf_dieoffset(&cut[0]) ==
		      dwarf_dieoffset(&got[1]) && dwarf_dieoffset(&cut[nc - 1]) ==
		      dwarf_dieoffset(&got[ng - 1]),
		      "%s: pc 0x%llx: a chain cut to %zu does not keep the "
		      "innermost", m->what, (unsigned long long)pc, ng - 1);
	}
	nw = libdw_chain(cu, pc, want, SCOPE_CHAIN_MAX);
	if (!nw && !ng) {
		CHECK(!function_at(cu, pc), "%s: pc 0x%llx: a function of "
		      "unit 0x%llx holds it, and no scope was found", m->what,
		      (unsigned long long)pc,
		      (unsigned long long)dwarf_dieoffset(cu));
		return 0;
	}
	if (!nw && m->npending < MAX_PENDING) {
		struct pending *p = &m->pending[m->npending++];

		p->pc = pc;
		our_names(got, ng, p->names, sizeof(p->names));
		return 1;
	}
	same = ng == nw;
	/* ours outermost first, libdw's innermost first */
	for (i = 0; same && i < ng; i++)
		same = dwarf_dieoffset(&got[ng - 1 - i]) == want[i];
	CHECK(same, "%s: pc 0x%llx in unit 0x%llx: %zu scopes, libdw %zu "
	      "(innermost 0x%llx, libdw 0x%llx)", m->what,
	      (unsigned long long)pc, (unsigned long long)dwarf_dieoffset(cu),
	      ng, nw, ng ? (unsigned long long)dwarf_dieoffset(&got[ng - 1]) : 0ull,
	      nw ? (unsigned long long)want[0] : 0ull);
	return nw > 0;
}

/* The pcs libdw had no answer for, against `addr2line -a -i -f`: for
 * each address it prints the address, then a function and a file:line
 * line for each inlined call and the function holding them. */
static void ask_addr2line(struct module_check *m)
{
	char cmd[32768], line[1024], names[512];
	size_t i, len, k = 0;
	FILE *f;
	int n;

	if (!m->npending)
		return;
	n = snprintf(cmd, sizeof(cmd), "addr2line -a -i -f -e '%s'", m->path);
	for (i = 0; i < m->npending && n > 0 && (size_t)n < sizeof(cmd) - 24;
	     i++)
		n += snprintf(cmd + n, sizeof(cmd) - (size_t)n, " 0x%llx",
			      (unsigned long long)m->pending[i].pc);
	f = popen(cmd, "r");
	if (!f) {
		CHECK(0, "%s: cannot run addr2line", m->what);
		return;
	}
	names[0] = '\0';
	len = 0;
	i = 0;
	/* After an address line: a function line, then its place, for
	 * each function.  Bounded by addr2line's output. */
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "0x", 2)) {
			if (k++ && i < m->npending) {
				CHECK(!strcmp(names, m->pending[i].names),
				      "%s: pc 0x%llx: ours\n%saddr2line\n%s",
				      m->what, (unsigned long long)m->pending[i].pc,
				      m->pending[i].names, names);
				m->checked_by_addr2line++;
				i++;
			}
			names[0] = '\0';
			len = 0;
			continue;
		}
		/* "??": no function (what ours says with no lines) */
		if (strcmp(line, "??\n") && len + strlen(line) < sizeof(names)) {
			memcpy(names + len, line, strlen(line) + 1);
			len += strlen(line);
		}
		if (!fgets(line, sizeof(line), f))   /* its file:line */
			break;
	}
	if (k && i < m->npending) {
		CHECK(!strcmp(names, m->pending[i].names),
		      "%s: pc 0x%llx: ours\n%saddr2line\n%s", m->what,
		      (unsigned long long)m->pending[i].pc,
		      m->pending[i].names, names);
		m->checked_by_addr2line++;
	}
	pclose(f);
	CHECK(m->checked_by_addr2line == m->npending,
	      "%s: addr2line answered %zu of %zu pcs", m->what,
	      m->checked_by_addr2line, m->npending);
}

/* Units of the module at path, and a sample of their line addresses. */
static void check_module(const char *what, const char *path)
{
	Dwfl *dwfl = dwfl_begin(&offline);
	struct module_check *m = calloc(1, sizeof(*m));
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;
	size_t units = 0, every, per, pcs = 0, inside = 0, inlined = 0, k;

	if (!m || !dwfl || !dwfl_report_offline(dwfl, what, path, -1)) {
		CHECK(0, "%s: cannot report %s: %s", what, path, dwfl_errmsg(-1));
		dwfl_end(dwfl);
		free(m);
		return;
	}
	m->what = what;
	m->path = path;
	dwfl_report_end(dwfl, NULL, NULL);
	/* Units with lines, each given an equal share of the pcs (four
	 * at least: most of libc's units are a function or two). */
	while ((cu = dwfl_nextcu(dwfl, cu, &bias))) {
		Dwarf_Lines *lines;
		size_t n;

		if (dwarf_getsrclines(cu, &lines, &n) == 0 && n)
			units++;
	}
	if (!units) {
		printf("%s: no DWARF found for %s: not checked\n", what, path);
		dwfl_end(dwfl);
		free(m);
		return;
	}
	per = PCS_PER_MODULE / units < 4 ? 4 : PCS_PER_MODULE / units;
	every = units * per / PCS_PER_MODULE + 1;
	for (k = 0; (cu = dwfl_nextcu(dwfl, cu, &bias));) {
		Dwarf_Lines *lines;
		size_t n, at;

		if (dwarf_getsrclines(cu, &lines, &n) != 0 || !n ||
		    k++ % every)
			continue;
		for (at = 0; at < per && at < n; at++) {
			Dwarf_Line *l = dwarf_onesrcline(lines, n * at /
							 (per < n ? per : n));
			Dwarf_Addr a;
			Dwarf_Die chain[SCOPE_CHAIN_MAX];
			size_t c, i;

			if (!l || dwarf_lineaddr(l, &a) != 0)
				continue;
			pcs++;
			inside += (size_t)compare_at(m, cu, a);
			c = scope_chain_at(cu, a, chain, SCOPE_CHAIN_MAX);
			for (i = 0; i < c; i++)
				inlined += dwarf_tag(&chain[i]) ==
					   DW_TAG_inlined_subroutine;
		}
	}
	ask_addr2line(m);
	printf("%s: %zu units, %zu pcs (%zu in functions, %zu of them "
	       "checked by addr2line; %zu inlined calls)\n", what, units,
	       pcs, inside, m->checked_by_addr2line, inlined);
	CHECK(inside > 0, "%s: no pc in a function", what);
	dwfl_end(dwfl);
	free(m);
}

/* A function of this program's first unit that has one: its unit in
 * *cu, its entry in *lo.  0 when none was found. */
static int first_function(Dwfl *dwfl, Dwarf_Die **cu, Dwarf_Addr *lo)
{
	Dwarf_Addr bias;
	Dwarf_Die fn;

	*cu = NULL;
	while ((*cu = dwfl_nextcu(dwfl, *cu, &bias))) {
		if (dwarf_child(*cu, &fn) != 0)
			continue;
		do {
			if (dwarf_tag(&fn) == DW_TAG_subprogram &&
			    dwarf_lowpc(&fn, lo) == 0)
				return 1;
		} while (dwarf_siblingof(&fn, &fn) == 0);
	}
	return 0;
}

static void check_bounds(const char *self)
{
	Dwfl *dwfl = dwfl_begin(&offline);
	Dwarf_Die *cu, chain[SCOPE_CHAIN_MAX];
	Dwarf_Addr lo;

	if (!dwfl || !dwfl_report_offline(dwfl, "self", self, -1)) {
		CHECK(0, "cannot open this program: %s", dwfl_errmsg(-1));
		dwfl_end(dwfl);
		return;
	}
	dwfl_report_end(dwfl, NULL, NULL);
	if (!first_function(dwfl, &cu, &lo)) {
		CHECK(0, "no function in this program's DWARF");
		dwfl_end(dwfl);
		return;
	}
	CHECK(scope_chain_at(cu, lo, chain, SCOPE_CHAIN_MAX) >= 1,
	      "a function's entry is in it");
	CHECK(scope_chain_at(cu, lo, chain, 1) == 1,
	      "a chain of room 1 holds the function");
	CHECK(dwarf_tag(&chain[0]) == DW_TAG_subprogram,
	      "the outermost scope is the function");
	CHECK(scope_chain_at(cu, lo, chain, 0) == 0,
	      "a chain of room 0 holds nothing");
	CHECK(scope_chain_at(cu, 0, chain, SCOPE_CHAIN_MAX) == 0,
	      "pc 0 is in no function");
	dwfl_end(dwfl);
}

/* Functions inlined into a member function and into a function of a
 * namespace: clang++ puts the latter's code inside the namespace's DIE,
 * g++ at the unit's top level. */
static const char cxx_source[] =
	"namespace outer { namespace inner {\n"
	"struct Box {\n"
	"  int v;\n"
	"  __attribute__((always_inline)) inline int twice(int x)\n"
	"  { return 2 * x + v; }\n"
	"  __attribute__((noinline)) int run(int n);\n"
	"};\n"
	"int Box::run(int n) {\n"
	"  int s = 0;\n"
	"  for (int i = 0; i < n; i++) { int t = twice(i); s += t * t; }\n"
	"  return s;\n"
	"}\n"
	"__attribute__((always_inline)) inline int square(volatile int *p)\n"
	"{ int x = *p; return x * x; }\n"
	"__attribute__((noinline)) int free_fn(volatile int *p)\n"
	"{ return square(p) + square(p + 1); }\n"
	"} }\n"
	"extern \"C\" int cs_cxx_entry(int n)\n"
	"{ outer::inner::Box b{3}; volatile int a[2] = {n, n};\n"
	"  return b.run(n) + outer::inner::free_fn(a); }\n";

/* The C++ library built by compiler (g++ or clang++), when present. */
static void check_cxx(const char *compiler)
{
	char dir[] = "/tmp/cs-dwarf-scopes-XXXXXX", src[64], lib[64],
	     cmd[256], what[64];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s --version > /dev/null 2>&1", compiler);
	if (system(cmd) != 0) {
		printf("C++: %s not found: not checked\n", compiler);
		return;
	}
	if (!mkdtemp(dir)) {
		CHECK(0, "cannot make a directory for the C++ library");
		return;
	}
	snprintf(src, sizeof(src), "%s/scopes.cpp", dir);
	snprintf(lib, sizeof(lib), "%s/libscopes.so", dir);
	f = fopen(src, "w");
	CHECK(f && fputs(cxx_source, f) >= 0 && fclose(f) == 0,
	      "cannot write %s", src);
	snprintf(cmd, sizeof(cmd), "%s -g -O2 -shared -fPIC -o %s %s",
		 compiler, lib, src);
	CHECK(system(cmd) == 0, "%s failed", cmd);
	snprintf(what, sizeof(what), "C++ (%s)", compiler);
	check_module(what, lib);
	unlink(src);
	unlink(lib);
	rmdir(dir);
}

/* Two units sharing a header, their common DIEs moved by dwz into
 * partial units that each unit imports. */
static const char dwz_header[] =
	"struct Point { int x, y; int sum() const { return x + y; } };\n"
	"static inline __attribute__((always_inline)) int\n"
	"twice(const Point &p) { return 2 * p.sum(); }\n";

static void check_dwz(void)
{
	char dir[] = "/tmp/cs-dwarf-scopes-XXXXXX", path[96], cmd[512];
	static const char *const units[] = {
		"int a_fn(int n) { Point p{n, n}; return twice(p); }\n",
		"int b_fn(int n) { Point p{n, 1}; return twice(p) + 1; }\n",
	};
	size_t i;
	FILE *f;

	if (system("dwz --version > /dev/null 2>&1") != 0 ||
	    system("g++ --version > /dev/null 2>&1") != 0) {
		printf("dwz: dwz or g++ not found: imported units not checked\n");
		return;
	}
	if (!mkdtemp(dir)) {
		CHECK(0, "cannot make a directory for the dwz library");
		return;
	}
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%c.cpp", dir, (char)('a' + i));
		f = fopen(path, "w");
		CHECK(f && fputs("#include \"h.h\"\n", f) >= 0 &&
		      fputs(units[i], f) >= 0 && fclose(f) == 0,
		      "cannot write %s", path);
	}
	snprintf(path, sizeof(path), "%s/h.h", dir);
	f = fopen(path, "w");
	CHECK(f && fputs(dwz_header, f) >= 0 && fclose(f) == 0,
	      "cannot write %s", path);
	snprintf(cmd, sizeof(cmd), "cd %s && g++ -g -O2 -shared -fPIC -o "
		 "libdwz.so a.cpp b.cpp && dwz libdwz.so && readelf "
		 "--debug-dump=info libdwz.so | grep -q DW_TAG_imported_unit",
		 dir);
	CHECK(system(cmd) == 0, "%s failed", cmd);
	snprintf(path, sizeof(path), "%s/libdwz.so", dir);
	check_module("C++ after dwz (imported units)", path);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0, "%s failed", cmd);
}

int main(void)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		self[n] = '\0';
		check_module("this program", self);
		check_bounds(self);
	}
	if (access(LIBC, R_OK) == 0)
		check_module("libc", LIBC);
	else
		printf("libc: %s not found: not checked\n", LIBC);
	if (access(LIBPYTHON312, R_OK) == 0)
		check_module("libpython3.12", LIBPYTHON312);
	else
		printf("libpython3.12: %s not found: not checked\n",
		       LIBPYTHON312);
	check_cxx("g++");
	check_cxx("clang++");
	check_dwz();
	return CHECK_DONE("test_dwarf_scopes");
}
