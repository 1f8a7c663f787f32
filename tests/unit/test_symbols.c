/*
 * Unit tests for symbols/elfimage.c and symbols/modules.c.
 *
 * The module list is checked against this very process (whose addresses
 * we know from the dynamic linker) and against child Python processes
 * when the interpreters are installed.  The memory source is built by
 * hand from /proc/PID/maps so that this test does not depend on the
 * live backend: only its mapping list, root and exe_path are used.
 */
#include "symbols/modules.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/proc_memsrc.h"
#include "tests/unit/check.h"
#include "common/banned.h"

/* Looked up by name in this executable's .symtab (not static on purpose). */
int test_symbols_marker = 42;
const char test_symbols_text[] = "coroscope-symbols-marker";
int test_symbols_function(int x);

int test_symbols_function(int x)
{
	return x + test_symbols_marker;
}

#define LIBPYTHON311 "/root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0"
#define PYENV311 "/root/.pyenv/versions/3.11.7/bin/python3.11"
#define DEBIAN311 "/usr/bin/python3.11"

/* ---- a hand-made memory source ---------------------------------- */

static int exists(const char *path)
{
	return access(path, R_OK) == 0;
}


static const struct module *module_at(const struct module_list *list,
				      uint64_t addr)
{
	size_t i;

	for (i = 0; i < list->n; i++)
		if (addr >= list->mods[i].start && addr < list->mods[i].end)
			return &list->mods[i];
	return NULL;
}

static int count_main(const struct module_list *list)
{
	size_t i;
	int n = 0;

	for (i = 0; i < list->n; i++)
		n += list->mods[i].is_main;
	return n;
}

/* ---- this process ------------------------------------------------ */

struct phdr_ctx {
	const struct module_list *list;
	int compared;
};

/* Every object the dynamic linker loaded: our bias must be its l_addr. */
static int each_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct phdr_ctx *ctx = arg;
	const struct module *mod;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD)
			break;
	if (i == info->dlpi_phnum)
		return 0;
	mod = module_at(ctx->list,
			info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!mod || !module_image(mod))
		return 0;   /* the vdso has no file */
	CHECK(module_bias(mod) == info->dlpi_addr,
	      "bias of %s is 0x%" PRIx64 ", loader says 0x%" PRIx64,
	      mod->path, module_bias(mod), (uint64_t)info->dlpi_addr);
	ctx->compared++;
	return 0;
}

static void test_self(void)
{
	struct memsrc ms;
	struct module_list list;
	struct cs_err err;
	const struct module *libc, *mod, *main_mod = NULL;
	char exe[4096];
	ssize_t len;
	uint64_t addr = 0, size = 0;
	void *handle, *real_printf;
	struct phdr_ctx ctx;
	char text[sizeof(test_symbols_text)];
	size_t i;

	cs_err_init(&err);
	if (proc_memsrc_init(&ms, getpid()) != 0) {
		CHECK(0, "cannot read /proc/self/maps");
		return;
	}
	CHECK(module_list_load(&list, &ms, &err) == 0, "load: %s", err.msg);
	CHECK(list.n > 2, "only %zu modules", list.n);

	/* The main module is this executable. */
	CHECK(count_main(&list) == 1, "%d main modules", count_main(&list));
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[len > 0 ? len : 0] = '\0';
	for (i = 0; i < list.n; i++)
		if (list.mods[i].is_main)
			main_mod = &list.mods[i];
	CHECK(main_mod && strcmp(main_mod->path, exe) == 0,
	      "main is %s, not %s", main_mod ? main_mod->path : "(none)", exe);
	for (i = 1; i < list.n; i++)
		CHECK(list.mods[i - 1].start < list.mods[i].start,
		      "modules out of order at %zu", i);

	/* A libc function, as the dynamic linker resolved it in libc itself
	 * (dlsym(RTLD_DEFAULT) could give a sanitizer's interceptor). */
	libc = module_list_find_prefix(&list, "libc.so.");
	CHECK(libc && module_image(libc), "libc not found or not opened");
	handle = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	real_printf = handle ? dlsym(handle, "printf") : NULL;
	CHECK(real_printf != NULL, "dlsym(printf): %s", dlerror());
	if (libc && real_printf) {
		CHECK(module_symbol(libc, "printf", &addr, &size) == 0,
		      "printf not in %s", libc->path);
		CHECK(addr == (uint64_t)(uintptr_t)real_printf,
		      "printf at 0x%" PRIx64 ", really at %p", addr,
		      real_printf);
		CHECK(size > 0, "printf has size 0");
		CHECK(module_symbol(libc, "no_such_symbol_xyzzy", &addr,
				    NULL) == -1, "a missing symbol was found");
		CHECK(module_section(libc, ".text", &addr, &size) == 0 &&
		      module_at(&list, addr) == libc,
		      ".text of libc at 0x%" PRIx64, addr);
	}
	if (handle)
		dlclose(handle);

	/* Our own globals, from .symtab, main module first. */
	mod = module_list_find_symbol(&list, "test_symbols_marker", &addr);
	CHECK(mod && mod->is_main, "marker not found in the main module");
	CHECK(addr == (uint64_t)(uintptr_t)&test_symbols_marker,
	      "marker at 0x%" PRIx64 ", really at %p", addr,
	      (void *)&test_symbols_marker);
	mod = module_list_find_symbol(&list, "test_symbols_function", &addr);
	CHECK(mod && addr == (uint64_t)(uintptr_t)&test_symbols_function,
	      "function at 0x%" PRIx64, addr);
	CHECK(module_list_find_symbol(&list, "no_such_symbol_xyzzy", &addr)
	      == NULL, "a missing symbol was found in the list");
	CHECK(module_list_find_prefix(&list, "no-such-prefix") == NULL,
	      "a missing prefix was found");

	/* The file image at a symbol's link-time address is what the
	 * process has there. */
	if (main_mod && module_image(main_mod)) {
		uint64_t v;
		char magic[4];

		CHECK(elf_image_symbol(module_image(main_mod), "test_symbols_text", &v,
				       &size) == 0 && size == sizeof(text),
		      "text symbol size %" PRIu64, size);
		memset(text, 0, sizeof(text));
		CHECK(elf_image_read_vaddr(module_image(main_mod), v, text,
					   sizeof(text)) == 0 &&
		      memcmp(text, test_symbols_text, sizeof(text)) == 0,
		      "read_vaddr gave '%.*s'", (int)sizeof(text), text);
		CHECK(elf_image_read_vaddr(module_image(main_mod),
					   elf_image_base_vaddr(module_image(main_mod)),
					   magic, 4) == 0 &&
		      memcmp(magic, ELFMAG, 4) == 0,
		      "no ELF header at the base address");
		CHECK(elf_image_read_vaddr(module_image(main_mod), UINT64_MAX - 2,
					   magic, 4) == -1,
		      "read past the address space");
		CHECK(elf_image_read_vaddr(module_image(main_mod), v, magic,
					   SIZE_MAX) == -1, "huge read");
	}

	ctx.list = &list;
	ctx.compared = 0;
	dl_iterate_phdr(each_object, &ctx);
	CHECK(ctx.compared >= 3, "compared only %d biases", ctx.compared);

	module_list_release(&list);
	CHECK(list.n == 0 && list.mods == NULL, "release left %zu", list.n);
	proc_memsrc_release(&ms);
}

/* Without a usable /proc/PID/exe link the main module is still found:
 * by build id when exe_path names the file itself (a core's --exe), by
 * the .interp section when there is no exe_path at all. */
static void test_main_guess(void)
{
	struct memsrc ms;
	struct module_list list;
	struct cs_err err;
	const struct module *mod;
	char exe[4096];
	ssize_t len;
	uint64_t addr = 0;
	int round;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[len > 0 ? len : 0] = '\0';
	for (round = 0; round < 2; round++) {
		if (proc_memsrc_init(&ms, getpid()) != 0) {
			CHECK(0, "cannot read /proc/self/maps");
			return;
		}
		free(ms.exe_path);
		ms.exe_path = round == 0 ? strdup(exe) : NULL;
		cs_err_init(&err);
		CHECK(module_list_load(&list, &ms, &err) == 0, "%s", err.msg);
		CHECK(count_main(&list) == 1, "round %d: %d main modules",
		      round, count_main(&list));
		mod = module_list_find_symbol(&list, "test_symbols_marker",
					      &addr);
		CHECK(mod && mod->is_main && strcmp(mod->path, exe) == 0 &&
		      addr == (uint64_t)(uintptr_t)&test_symbols_marker,
		      "round %d: marker in %s at 0x%" PRIx64, round,
		      mod ? mod->path : "(none)", addr);
		module_list_release(&list);
		proc_memsrc_release(&ms);
	}
}

#define LIBZ "/lib/x86_64-linux-gnu/libz.so.1"

/* A library whose file was deleted after loading is still read, through
 * /proc/PID/map_files. */
static void test_deleted(void)
{
	char tmp[] = "/tmp/test_symbols_XXXXXX";
	char want[64];
	struct memsrc ms;
	struct module_list list;
	struct cs_err err;
	void *handle, *fn;
	uint64_t addr = 0;
	size_t i;
	const struct module *mod = NULL;
	int fd, in;
	char buf[65536];
	ssize_t n;

	if (!exists(LIBZ)) {
		printf("skip: %s is absent\n", LIBZ);
		return;
	}
	fd = mkstemp(tmp);
	in = open(LIBZ, O_RDONLY);
	CHECK(fd >= 0 && in >= 0, "cannot copy %s", LIBZ);
	while (fd >= 0 && in >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n)
			break;
	if (in >= 0)
		close(in);
	if (fd < 0)
		return;
	close(fd);
	handle = dlopen(tmp, RTLD_NOW | RTLD_LOCAL);
	unlink(tmp);
	CHECK(handle != NULL, "dlopen %s: %s", tmp, dlerror());
	if (!handle)
		return;
	fn = dlsym(handle, "zlibVersion");
	snprintf(want, sizeof(want), "%s", tmp);
	if (proc_memsrc_init(&ms, getpid()) == 0) {
		cs_err_init(&err);
		CHECK(module_list_load(&list, &ms, &err) == 0, "%s", err.msg);
		for (i = 0; i < list.n; i++)
			if (strcmp(list.mods[i].path, want) == 0)
				mod = &list.mods[i];
		CHECK(mod && module_image(mod), "no module for '%s'", want);
		if (mod)
			CHECK(module_symbol(mod, "zlibVersion", &addr, NULL) == 0
			      && addr == (uint64_t)(uintptr_t)fn,
			      "zlibVersion at 0x%" PRIx64 ", really %p", addr, fn);
		module_list_release(&list);
		proc_memsrc_release(&ms);
	}
	dlclose(handle);
}

/* ---- bad files --------------------------------------------------- */

static void expect_open_fails(const char *path, const char *want)
{
	struct elf_image *img = (struct elf_image *)&img;
	struct cs_err err;
	int ret;

	cs_err_init(&err);
	ret = elf_image_open(&img, path, &err);
	CHECK(ret == -CS_ERR_MEMORY && img == NULL,
	      "opening %s returned %d", path, ret);
	CHECK(strstr(err.msg, path) && strstr(err.msg, want),
	      "message for %s: '%s'", path, err.msg);
	if (ret == 0)
		elf_image_free(img);
}

static int copy_prefix(const char *from, const char *to, size_t len)
{
	char buf[4096];
	int in, out;
	ssize_t n;

	if (len > sizeof(buf))
		return -1;
	in = open(from, O_RDONLY);
	if (in < 0)
		return -1;
	n = read(in, buf, len);
	close(in);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (out < 0 || n != (ssize_t)len || write(out, buf, len) != n) {
		if (out >= 0)
			close(out);
		return -1;
	}
	return close(out);
}

static void test_bad_files(void)
{
	char tmp[] = "/tmp/test_symbols_XXXXXX";
	int fd;

	expect_open_fails("/etc/passwd", "not an ELF file");
	expect_open_fails("/nonexistent/libfoo.so", "No such file or directory");
	expect_open_fails("/tmp", "not a regular file");

	fd = mkstemp(tmp);
	CHECK(fd >= 0, "mkstemp: %s", strerror(errno));
	if (fd < 0)
		return;
	close(fd);
	/* Cut off inside the program headers. */
	CHECK(copy_prefix("/bin/true", tmp, 100) == 0, "cannot copy /bin/true");
	expect_open_fails(tmp, "truncated");
	/* Just the ELF header: no segments, no sections. */
	CHECK(copy_prefix("/bin/true", tmp, 64) == 0, "cannot copy /bin/true");
	expect_open_fails(tmp, "truncated");
	/* Cut off inside the segments, section headers gone. */
	CHECK(copy_prefix("/bin/true", tmp, 4000) == 0, "cannot copy /bin/true");
	expect_open_fails(tmp, "truncated");
	/* Empty. */
	CHECK(copy_prefix("/bin/true", tmp, 0) == 0, "cannot truncate");
	expect_open_fails(tmp, tmp);
	unlink(tmp);
}

/* ---- real files -------------------------------------------------- */

static void test_true(void)
{
	struct elf_image *img;
	struct cs_err err;
	const uint8_t *id;
	size_t len = 0;

	cs_err_init(&err);
	CHECK(elf_image_open(&img, "/bin/true", &err) == 0, "%s", err.msg);
	if (!img)
		return;
	id = elf_image_build_id(img, &len);
	CHECK(id && len == 20, "build id length %zu", len);
	CHECK(elf_image_type(img) == ET_DYN, "type %d", elf_image_type(img));
	CHECK(elf_image_base_vaddr(img) == 0, "base 0x%" PRIx64,
	      elf_image_base_vaddr(img));
	CHECK(strcmp(elf_image_path(img), "/bin/true") == 0, "path %s",
	      elf_image_path(img));
	/* Stripped: only .dynsym, which has no local definitions. */
	CHECK(elf_image_symbol(img, "main", NULL, NULL) == -1, "main found");
	CHECK(elf_image_symbol(img, "", NULL, NULL) == -1, "empty name found");
	elf_image_free(img);
}

static void test_libpython(void)
{
	struct elf_image *img;
	struct cs_err err;
	uint64_t sym = 0, sect = 1, ssize = 0, size = 0;

	if (!exists(LIBPYTHON311)) {
		printf("skip: %s is absent\n", LIBPYTHON311);
		return;
	}
	cs_err_init(&err);
	CHECK(elf_image_open(&img, LIBPYTHON311, &err) == 0, "%s", err.msg);
	if (!img)
		return;
	CHECK(elf_image_symbol(img, "_PyRuntime", &sym, &ssize) == 0,
	      "_PyRuntime not found");
	CHECK(elf_image_section(img, ".PyRuntime", &sect, &size) == 0,
	      ".PyRuntime not found");
	CHECK(sym == sect && ssize == size,
	      "_PyRuntime 0x%" PRIx64 "+%" PRIu64 ", .PyRuntime 0x%" PRIx64
	      "+%" PRIu64, sym, ssize, sect, size);
	/* A static function: only in .symtab, as a local. */
	CHECK(elf_image_symbol(img, "_PyEval_EvalFrameDefault", &sym, NULL)
	      == 0, "_PyEval_EvalFrameDefault not found");
	CHECK(elf_image_type(img) == ET_DYN, "type %d", elf_image_type(img));
	elf_image_free(img);
}

/*
 * Every exported name of a real file, found by elf_image_symbol() (which
 * answers these from .gnu.hash), against this test's own reading of
 * .dynsym with <elf.h>: the first defined global or weak entry of each
 * name.  Returns how many names were compared.
 */
static size_t check_dynsym(const char *path)
{
	struct elf_image *img;
	struct cs_err err;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	unsigned char *file;
	struct stat st;
	size_t i, j, n = 0;
	FILE *f;

	if (!exists(path) || stat(path, &st) != 0)
		return 0;
	file = malloc((size_t)st.st_size);
	f = fopen(path, "rb");
	CHECK(file && f && fread(file, 1, (size_t)st.st_size, f) ==
	      (size_t)st.st_size, "cannot read %s", path);
	if (f)
		fclose(f);
	cs_err_init(&err);
	CHECK(elf_image_open(&img, path, &err) == 0, "%s", err.msg);
	eh = (const Elf64_Ehdr *)file;
	sh = (const Elf64_Shdr *)(file + eh->e_shoff);
	for (i = 0; img && i < eh->e_shnum; i++) {
		const Elf64_Sym *sym;
		const char *names;
		size_t count;

		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		sym = (const Elf64_Sym *)(file + sh[i].sh_offset);
		names = (const char *)file + sh[sh[i].sh_link].sh_offset;
		count = sh[i].sh_size / sizeof(*sym);
		for (j = 1; j < count; j++) {
			const char *name = names + sym[j].st_name;
			uint64_t value = 0, size = 0;
			size_t k;

			if (sym[j].st_shndx == SHN_UNDEF ||
			    ELF64_ST_BIND(sym[j].st_info) == STB_LOCAL ||
			    !*name)
				continue;
			/* Only the first definition of a name counts. */
			for (k = 1; k < j; k++)
				if (sym[k].st_shndx != SHN_UNDEF &&
				    ELF64_ST_BIND(sym[k].st_info) != STB_LOCAL &&
				    strcmp(names + sym[k].st_name, name) == 0)
					break;
			if (k < j)
				continue;
			CHECK(elf_image_symbol(img, name, &value, &size) == 0 &&
			      value == sym[j].st_value &&
			      size == sym[j].st_size,
			      "%s: %s is 0x%" PRIx64 "+%" PRIu64 ", not 0x%"
			      PRIx64 "+%" PRIu64, path, name, value, size,
			      (uint64_t)sym[j].st_value,
			      (uint64_t)sym[j].st_size);
			n++;
		}
	}
	elf_image_free(img);
	free(file);
	return n;
}

static void test_dynsym(void)
{
	static const char *const paths[] = {
		"/lib/x86_64-linux-gnu/libc.so.6", LIBPYTHON311, DEBIAN311,
		"/opt/python3.14/lib/libpython3.14.so.1.0",
	};
	size_t i, n;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		n = check_dynsym(paths[i]);
		if (!exists(paths[i]))
			printf("skip: %s is absent\n", paths[i]);
		else
			CHECK(n > 1000, "%s: only %zu exported names", paths[i],
			      n);
	}
}

static void test_debian_python(void)
{
	struct elf_image *img;
	struct cs_err err;
	uint64_t addr = 0, size = 0;
	uint32_t version = 0;

	if (!exists(DEBIAN311)) {
		printf("skip: %s is absent\n", DEBIAN311);
		return;
	}
	cs_err_init(&err);
	CHECK(elf_image_open(&img, DEBIAN311, &err) == 0, "%s", err.msg);
	if (!img)
		return;
	CHECK(elf_image_type(img) == ET_EXEC, "type %d", elf_image_type(img));
	CHECK(elf_image_base_vaddr(img) == 0x400000, "base 0x%" PRIx64,
	      elf_image_base_vaddr(img));
	CHECK(elf_image_symbol(img, "_PyRuntime", &addr, &size) == 0 &&
	      size > 0, "_PyRuntime not in .dynsym");
	CHECK(elf_image_symbol(img, "Py_Version", &addr, &size) == 0 &&
	      size == 8, "Py_Version not in .dynsym");
	CHECK(elf_image_read_vaddr(img, addr, &version, sizeof(version)) == 0
	      && version >> 16 == 0x030b, "Py_Version is 0x%08x", version);
	elf_image_free(img);
}

/* ---- child Python processes -------------------------------------- */

/* Start python waiting on its stdin; its pid, or -1. */
static int spawn_python(const char *python, int *to_child)
{
	int in[2], out[2];
	char c;
	pid_t pid;

	if (pipe(in) != 0)
		return -1;
	if (pipe(out) != 0) {
		close(in[0]);
		close(in[1]);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(python, python, "-S", "-c",
		      "import sys; sys.stdout.write('r'); sys.stdout.flush(); "
		      "sys.stdin.read()", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	if (pid < 0 || read(out[0], &c, 1) != 1) {
		close(out[0]);
		close(in[1]);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		return -1;
	}
	close(out[0]);
	*to_child = in[1];
	return pid;
}

static void reap(int pid, int to_child)
{
	close(to_child);   /* EOF on stdin lets it exit */
	waitpid(pid, NULL, 0);
}

static void test_child(const char *python, const char *libprefix)
{
	struct memsrc ms;
	struct module_list list;
	struct cs_err err;
	const struct module *mod, *lib;
	uint64_t addr = 0, sect = 0, size = 0;
	int pid, fd = -1;

	if (!exists(python)) {
		printf("skip: %s is absent\n", python);
		return;
	}
	pid = spawn_python(python, &fd);
	CHECK(pid > 0, "cannot start %s", python);
	if (pid <= 0)
		return;
	cs_err_init(&err);
	if (proc_memsrc_init(&ms, pid) != 0) {
		CHECK(0, "cannot read maps of %d", pid);
		reap(pid, fd);
		return;
	}
	CHECK(module_list_load(&list, &ms, &err) == 0, "%s", err.msg);
	CHECK(count_main(&list) == 1, "%d main modules", count_main(&list));

	mod = module_list_find_symbol(&list, "_PyRuntime", &addr);
	CHECK(mod != NULL, "_PyRuntime not found for %s", python);
	if (mod) {
		CHECK(module_at(&list, addr) == mod,
		      "_PyRuntime 0x%" PRIx64 " outside %s", addr, mod->path);
		CHECK(module_section(mod, ".PyRuntime", &sect, &size) == 0 &&
		      sect == addr, ".PyRuntime at 0x%" PRIx64, sect);
	}
	if (libprefix) {
		lib = module_list_find_prefix(&list, libprefix);
		CHECK(lib && lib == mod && !lib->is_main,
		      "%s* is not where _PyRuntime is", libprefix);
	} else {
		/* Statically linked, non-PIE: found in the main module, which
		 * is never relocated. */
		CHECK(mod && mod->is_main && module_bias(mod) == 0,
		      "_PyRuntime in %s, bias 0x%" PRIx64,
		      mod ? mod->path : "(none)", mod ? module_bias(mod) : 0);
	}
	module_list_release(&list);
	proc_memsrc_release(&ms);
	reap(pid, fd);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	test_self();
	test_main_guess();
	test_deleted();
	test_bad_files();
	test_true();
	test_libpython();
	test_dynsym();
	test_debian_python();
	test_child(DEBIAN311, NULL);
	test_child(PYENV311, "libpython3.");
	return CHECK_DONE("test_symbols");
}
