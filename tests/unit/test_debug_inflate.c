/*
 * Unit tests for symbols/debug_inflate.c, against libelf: every section
 * of the file debug_inflate() makes must be the section libelf itself
 * decompresses (elf_compress()) from the original, byte for byte, but
 * for location lists and macros, which become empty NOBITS sections.
 *
 * The files: libc's separate debug file (libc6-dbg, compressed with
 * zlib) when installed, and a small library built here with gcc and
 * compressed with objcopy, whose damaged copies (cut short, section
 * sizes and offsets changed, every header byte flipped) must come back
 * as a file libelf reads, or as the original, or as -1: never a crash.
 * Last, that the symbolizer (symbols/native_symbols.c's find_debuginfo)
 * has libdw read the decompressed copy of libc's debug file.
 */
#include "symbols/debug_inflate.h"

#include <dlfcn.h>
#include <elf.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/elfimage.h"
#include "symbols/native_symbols.h"
#include "tests/support/proc_memsrc.h"
#include "tests/unit/check.h"
#include "common/banned.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

static const char *const unread[] = {
	".debug_loc", ".debug_loclists", ".debug_macro", ".debug_macinfo",
};

static int is_unread(const char *name)
{
	size_t k;

	for (k = 0; name && k < sizeof(unread) / sizeof(unread[0]); k++)
		if (!strcmp(name, unread[k]))
			return 1;
	return 0;
}

/* The GNU build id of the file at fd, copied into id: its length. */
static size_t build_id_of(int fd, unsigned char *id, size_t max)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *bits;
	ssize_t n = e ? dwelf_elf_gnu_build_id(e, &bits) : -1;

	if (n > 0 && (size_t)n <= max)
		memcpy(id, bits, (size_t)n);
	elf_end(e);
	return n > 0 && (size_t)n <= max ? (size_t)n : 0;
}

static int open_copy(const unsigned char *bytes, size_t n)
{
	int fd = memfd_create("test-debug-inflate", MFD_CLOEXEC);

	if (fd >= 0 && write(fd, bytes, n) != (ssize_t)n) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Every section of ours against libelf's own decompression of the
 * original's. */
static void compare(const char *what, int orig_fd, int ours_fd)
{
	Elf *a = elf_begin(orig_fd, ELF_C_READ, NULL);
	Elf *b = elf_begin(ours_fd, ELF_C_READ_MMAP, NULL);
	size_t na = 0, nb = 0, stra = 0, strb = 0, i, inflated = 0;

	CHECK(a && b, "%s: libelf cannot open %s", what, a ? "ours" : "it");
	if (!a || !b)
		goto out;
	CHECK(elf_getshdrnum(a, &na) == 0 && elf_getshdrnum(b, &nb) == 0 &&
	      na == nb, "%s: %zu sections, ours %zu", what, na, nb);
	if (na != nb || elf_getshdrstrndx(a, &stra) || elf_getshdrstrndx(b, &strb))
		goto out;
	for (i = 1; i < na; i++) {
		Elf_Scn *sa = elf_getscn(a, i), *sb = elf_getscn(b, i);
		GElf_Shdr ha, hb;
		Elf_Data *da, *db;
		const char *name;

		if (!sa || !sb || !gelf_getshdr(sa, &ha) || !gelf_getshdr(sb, &hb)) {
			CHECK(0, "%s: section %zu unreadable", what, i);
			continue;
		}
		name = elf_strptr(a, stra, ha.sh_name);
		CHECK(!(hb.sh_flags & SHF_COMPRESSED) ||
		      !(ha.sh_flags & SHF_COMPRESSED),
		      "%s: %s still compressed", what, name);
		if (ha.sh_flags & SHF_COMPRESSED && is_unread(name)) {
			CHECK(hb.sh_type == SHT_NOBITS && hb.sh_size == 0,
			      "%s: %s not left out", what, name);
			continue;
		}
		CHECK(ha.sh_type == hb.sh_type, "%s: %s type changed", what,
		      name);
		if (ha.sh_type == SHT_NOBITS)
			continue;
		if (ha.sh_flags & SHF_COMPRESSED) {
			inflated++;
			CHECK(elf_compress(sa, 0, 0) == 1,
			      "%s: libelf cannot decompress %s", what, name);
		}
		da = elf_getdata(sa, NULL);
		db = elf_getdata(sb, NULL);
		CHECK(da && db && da->d_size == db->d_size &&
		      (!da->d_size || !memcmp(da->d_buf, db->d_buf, da->d_size)),
		      "%s: %s differs (%zu bytes, ours %zu)", what, name,
		      da ? da->d_size : 0, db ? db->d_size : 0);
	}
	CHECK(inflated > 0, "%s: no section was compressed", what);
	printf("%s: %zu sections, %zu decompressed\n", what, na, inflated);
out:
	elf_end(a);
	elf_end(b);
}

/* The same file asked for again (`watch --native`, every sample): the
 * decompressed copy kept, given as a descriptor of its own; another
 * build id still refused.  ours: debug_inflate()'s copy. */
static void check_kept(const char *what, int fd, const unsigned char *id,
		       size_t n, int ours)
{
	unsigned char wrong[64];
	struct stat a, b;
	int first = debug_inflate_kept(dup(fd), id, n);
	int again = debug_inflate_kept(dup(fd), id, n);

	CHECK(first >= 0 && first != ours, "%s: refused to be kept", what);
	if (first >= 0) {
		int orig = dup(fd);

		compare(what, orig, first);
		close(orig);
	}
	CHECK(again >= 0 && again != first && fstat(first, &a) == 0 &&
	      fstat(again, &b) == 0 && a.st_ino == b.st_ino &&
	      a.st_dev == b.st_dev && a.st_size == b.st_size,
	      "%s: asked again, not the copy kept", what);
	CHECK(again < 0 || lseek(again, 0, SEEK_CUR) == 0,
	      "%s: the copy kept given with a shared offset", what);
	if (again >= 0)
		close(again);
	/* debug_inflate() keeps nothing (damaged copies are decompressed
	 * each on its own). */
	CHECK(fstat(ours, &b) == 0 && first >= 0 && a.st_ino != b.st_ino,
	      "%s: debug_inflate() gave the copy kept", what);
	if (first >= 0)
		close(first);
	memcpy(wrong, id, n);
	wrong[n - 1] ^= 1;
	CHECK(debug_inflate_kept(dup(fd), wrong, n) == -1,
	      "%s: once kept, taken for a file of another build id", what);
}

static void check_real(const char *what, const char *path)
{
	unsigned char id[64], wrong[64];
	int fd = open(path, O_RDONLY), ours, orig;
	size_t n;

	if (fd < 0) {
		CHECK(0, "%s: cannot open %s", what, path);
		return;
	}
	n = build_id_of(fd, id, sizeof(id));
	CHECK(n > 0, "%s: no build id", what);
	memcpy(wrong, id, n);
	wrong[n - 1] ^= 1;
	CHECK(debug_inflate(dup(fd), wrong, n) == -1,
	      "%s: taken for a file of another build id", what);
	CHECK(debug_inflate(dup(fd), id, n - 1) == -1,
	      "%s: taken for a shorter build id", what);
	ours = debug_inflate(dup(fd), id, n);
	CHECK(ours >= 0, "%s: refused", what);
	if (ours >= 0) {
		orig = open(path, O_RDONLY);
		compare(what, orig, ours);
		close(orig);
		check_kept(what, fd, id, n, ours);
		close(ours);
	}
	close(fd);
}

/* The debug file libdwfl would find for libc, by its build id. */
static int libc_debug_path(char *path, size_t size)
{
	unsigned char id[64];
	int fd = open(LIBC, O_RDONLY);
	size_t n;
	char *p;

	if (fd < 0)
		return 0;
	n = build_id_of(fd, id, sizeof(id));
	close(fd);
	p = elf_build_id_debug_path(id, n);
	if (!p || strlen(p) >= size) {
		free(p);
		return 0;
	}
	memcpy(path, p, strlen(p) + 1);
	free(p);
	return access(path, R_OK) == 0;
}

/* Open descriptors of this process. */
static int open_fds(void)
{
	char path[64];
	int fd, n = 0;

	for (fd = 0; fd < 1024; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n += access(path, F_OK) == 0;
	}
	return n;
}

/* Can libelf give section i of e (decompressing it when it is
 * compressed)? */
static int section_readable(Elf *e, size_t i)
{
	Elf_Scn *s = elf_getscn(e, i);
	GElf_Shdr sh;

	if (!s || !gelf_getshdr(s, &sh))
		return 0;
	if (sh.sh_type == SHT_NOBITS || !sh.sh_size)
		return 1;
	if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(s, 0, 0) < 0)
		return 0;
	return elf_getdata(s, NULL) != NULL;
}

/*
 * What debug_inflate(given, ...) gave back for the file orig[0..n): -1,
 * `given` itself, or a new file libelf opens, each section of which it
 * can give where it could give the original's; closed.
 */
static void check_result(int given, int r, const char *what,
			 const unsigned char *orig, size_t n)
{
	int ofd;
	Elf *e, *o;
	size_t i, ns = 0, bad = 0;

	if (r < 0 || r == given) {
		if (r >= 0)
			close(r);
		return;
	}
	ofd = open_copy(orig, n);
	o = ofd >= 0 ? elf_begin(ofd, ELF_C_READ, NULL) : NULL;
	e = elf_begin(r, ELF_C_READ, NULL);
	CHECK(!o || elf_kind(o) != ELF_K_ELF ||
	      (e && elf_kind(e) == ELF_K_ELF), "%s: made a file libelf "
	      "cannot open: %s", what, elf_errmsg(-1));
	if (o && e && elf_getshdrnum(o, &ns) == 0)
		/* Bounded by the original's sections. */
		for (i = 1; i < ns && i < 100000; i++)
			bad += section_readable(o, i) && !section_readable(e, i);
	CHECK(!bad, "%s: %zu sections unreadable that were not", what, bad);
	elf_end(e);
	elf_end(o);
	if (ofd >= 0)
		close(ofd);
	close(r);
}

/* Damaged copies of bytes: whatever comes back, libelf can read it, and
 * the function closed or returned what it was given. */
static void check_damaged(const unsigned char *bytes, size_t n,
			  const unsigned char *id, size_t idn)
{
	unsigned char *copy = malloc(n);
	Elf64_Ehdr eh;
	size_t i, cuts[] = { 0, 4, 16, 63, 64, 65, 200, 1000 }, tried = 0;
	int fds;

	if (!copy || n < sizeof(eh)) {
		CHECK(0, "no copy to damage");
		free(copy);
		return;
	}
	memcpy(&eh, bytes, sizeof(eh));
	fds = open_fds();
	/* cut short */
	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]) + 8; i++) {
		size_t len = i < sizeof(cuts) / sizeof(cuts[0]) ? cuts[i] :
			     n - n / (i - 6);
		size_t cut = len < n ? len : n;
		int fd = open_copy(bytes, cut);

		if (fd < 0)
			continue;
		check_result(fd, debug_inflate(fd, id, idn), "a cut copy",
			     bytes, cut);
		tried++;
	}
	/* every byte of the ELF header and of each section header flipped */
	for (i = 0; i < sizeof(eh) + (size_t)eh.e_shnum * sizeof(Elf64_Shdr);
	     i++) {
		size_t at = i < sizeof(eh) ? i :
			    (size_t)eh.e_shoff + (i - sizeof(eh));
		char what[64];
		int fd;

		if (at >= n)
			break;
		memcpy(copy, bytes, n);
		copy[at] ^= 0x80;
		fd = open_copy(copy, n);
		if (fd < 0)
			continue;
		snprintf(what, sizeof(what), "a copy damaged at byte %zu", at);
		check_result(fd, debug_inflate(fd, id, idn), what, copy, n);
		tried++;
	}
	CHECK(tried > 100, "only %zu damaged copies tried", tried);
	CHECK(open_fds() == fds, "descriptors leaked: %d, then %d", fds,
	      open_fds());
	printf("damaged copies: %zu tried\n", tried);
	free(copy);
}

/* The header of the first zlib-compressed section of an ELF file's
 * bytes (known good: the test's own): its offset in bytes, or 0. */
static size_t first_compressed(const unsigned char *bytes, size_t n)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh;
	size_t i;

	memcpy(&eh, bytes, sizeof(eh));
	for (i = 1; i < eh.e_shnum; i++) {
		size_t at = (size_t)eh.e_shoff + i * sizeof(sh);

		if (at + sizeof(sh) > n)
			return 0;
		memcpy(&sh, bytes + at, sizeof(sh));
		if (sh.sh_flags & SHF_COMPRESSED)
			return at;
	}
	return 0;
}

/* One damage, on purpose: the result must be the given descriptor
 * (the right file, left to libdw to decompress), none leaked. */
static void check_left_to_libdw(const char *what, const unsigned char *bytes,
				size_t n, const unsigned char *id, size_t idn)
{
	int fds = open_fds(), fd = open_copy(bytes, n), r;

	if (fd < 0) {
		CHECK(0, "%s: no copy", what);
		return;
	}
	r = debug_inflate(fd, id, idn);
	CHECK(r == fd, "%s: gave %d for %d", what, r, fd);
	if (r >= 0)
		close(r);
	CHECK(open_fds() == fds, "%s: a descriptor leaked", what);
}

static void check_targeted(const unsigned char *bytes, size_t n,
			   const unsigned char *id, size_t idn)
{
	unsigned char *copy = malloc(n);
	size_t at = first_compressed(bytes, n);
	Elf64_Shdr sh;
	Elf64_Chdr ch;

	CHECK(copy && at, "no compressed section to damage");
	if (!copy || !at) {
		free(copy);
		return;
	}
	memcpy(&sh, bytes + at, sizeof(sh));
	/* claims more than deflate can give */
	memcpy(copy, bytes, n);
	memcpy(&ch, copy + sh.sh_offset, sizeof(ch));
	ch.ch_size = (sh.sh_size + 1) * 2000;
	memcpy(copy + sh.sh_offset, &ch, sizeof(ch));
	check_left_to_libdw("a section claiming 2000 to 1", copy, n, id, idn);
	/* claims a little more than the stream gives */
	memcpy(copy, bytes, n);
	ch.ch_size = ((const Elf64_Chdr *)(const void *)(bytes + sh.sh_offset))->ch_size + 1;
	memcpy(copy + sh.sh_offset, &ch, sizeof(ch));
	check_left_to_libdw("a section one byte short", copy, n, id, idn);
	/* a damaged stream */
	memcpy(copy, bytes, n);
	copy[sh.sh_offset + sizeof(ch) + (sh.sh_size - sizeof(ch)) / 2] ^= 0x55;
	check_left_to_libdw("a damaged stream", copy, n, id, idn);
	free(copy);
}

static const char small_source[] =
	"static int square(int x) { return x * x; }\n"
	"int cs_small(int n) { int s = 0; for (int i = 0; i < n; i++)\n"
	"  s += square(i); return s; }\n";

static void check_small(void)
{
	char dir[] = "/tmp/cs-debug-inflate-XXXXXX", src[64], lib[64],
	     cmd[512];
	unsigned char id[64], *bytes;
	struct stat st;
	int fd;
	size_t n;
	FILE *f;

	if (system("gcc --version > /dev/null 2>&1") != 0 ||
	    system("objcopy --version > /dev/null 2>&1") != 0) {
		printf("small library: gcc or objcopy not found: not checked\n");
		return;
	}
	if (!mkdtemp(dir)) {
		CHECK(0, "cannot make a directory");
		return;
	}
	snprintf(src, sizeof(src), "%s/small.c", dir);
	snprintf(lib, sizeof(lib), "%s/libsmall.so", dir);
	f = fopen(src, "w");
	CHECK(f && fputs(small_source, f) >= 0 && fclose(f) == 0,
	      "cannot write %s", src);
	snprintf(cmd, sizeof(cmd), "gcc -g3 -O2 -shared -fPIC "
		 "-Wl,--build-id -o %s %s", lib, src);
	CHECK(system(cmd) == 0, "%s failed", cmd);
	/* nothing compressed yet: left as it is */
	fd = open(lib, O_RDONLY);
	n = fd >= 0 ? build_id_of(fd, id, sizeof(id)) : 0;
	if (fd >= 0) {
		int r = debug_inflate(fd, id, n);

		CHECK(r == fd, "a file with nothing compressed: gave %d for %d",
		      r, fd);
		if (r >= 0)
			close(r);
	}
	snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=zlib %s",
		 lib);
	CHECK(system(cmd) == 0, "%s failed", cmd);
	check_real("small library (gcc -g3, objcopy)", lib);
	fd = open(lib, O_RDONLY);
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0) {
		n = build_id_of(fd, id, sizeof(id));
		bytes = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE,
			     fd, 0);
		if (bytes != MAP_FAILED) {
			check_targeted(bytes, (size_t)st.st_size, id, n);
			check_damaged(bytes, (size_t)st.st_size, id, n);
			munmap(bytes, (size_t)st.st_size);
		}
	}
	if (fd >= 0)
		close(fd);
	unlink(src);
	unlink(lib);
	rmdir(dir);
}

static void check_not_elf(void)
{
	static const unsigned char junk[4096] = { 0x7f, 'E', 'L', 'F', 1, 1 };
	unsigned char id[4] = { 1, 2, 3, 4 };
	int fd = open_copy(junk, sizeof(junk));

	CHECK(fd >= 0 && debug_inflate(fd, id, sizeof(id)) == -1,
	      "a 32-bit header taken for a debug file");
	fd = open_copy(junk, 10);
	CHECK(fd >= 0 && debug_inflate(fd, id, sizeof(id)) == -1,
	      "ten bytes taken for a debug file");
}

/* Is a memfd of debug_inflate()'s mapped into this process? */
static int inflated_file_mapped(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	while (f && fgets(line, sizeof(line), f))
		found |= strstr(line, "coroscope-debuginfo") != NULL;
	if (f)
		fclose(f);
	return found;
}

/* Pointed at another source of the same target (the next sample), the
 * symbolizer gives the same answer, its library named from the new
 * source's mappings: the old one's may be freed. */
static void check_rebind(struct native_symbolizer *s, struct memsrc *ms,
			 uint64_t pc, const struct native_sym *first, size_t n)
{
	struct native_sym out[NATIVE_MAX_INLINED];
	struct memsrc next;
	size_t k, i;
	int in_next = 0;

	if (proc_memsrc_init(&next, getpid()) != 0) {
		CHECK(0, "no second source of this process");
		return;
	}
	CHECK(native_symbolizer_fits(s, &next) &&
	      native_symbolizer_rebind(s, &next) == 0,
	      "not rebound to the same process read again");
	k = native_symbolize(s, pc, 1, out, NATIVE_MAX_INLINED);
	for (i = 0; i < next.nmaps; i++)
		in_next |= out[0].library == next.maps[i].path;
	CHECK(k == n && out[n - 1].function == first[n - 1].function &&
	      out[0].library && in_next &&
	      !strcmp(out[0].library, first[0].library),
	      "rebound: %zu entries, library %s from the new source: %d", k,
	      out[0].library ? out[0].library : "none", in_next);
	CHECK(native_symbolizer_rebind(s, ms) == 0, "not rebound back");
	proc_memsrc_release(&next);
}

/* Which targets a symbolizer's answers hold for: the one it was made
 * for, not one whose code moved, another process, or other files. */
static void check_fits(struct native_symbolizer *s, struct memsrc *ms)
{
	size_t i, code = ms->nmaps;
	char *path;

	CHECK(native_symbolizer_fits(s, ms), "not for its own target");
	for (i = 0; i < ms->nmaps && code == ms->nmaps; i++)
		if (ms->maps[i].perms[2] == 'x' && ms->maps[i].path)
			code = i;
	if (code == ms->nmaps) {
		CHECK(0, "no code mapping with a file");
		return;
	}
	ms->maps[code].offset += 4096;
	CHECK(!native_symbolizer_fits(s, ms), "fits code mapped elsewhere");
	ms->maps[code].offset -= 4096;
	path = ms->maps[code].path;
	ms->maps[code].path = "/elsewhere/lib.so";
	CHECK(!native_symbolizer_fits(s, ms), "fits another file");
	ms->maps[code].path = path;
	ms->maps[code].perms[2] = '-';
	CHECK(!native_symbolizer_fits(s, ms), "fits with a code mapping gone");
	ms->maps[code].perms[2] = 'x';
	ms->pid++;
	CHECK(!native_symbolizer_fits(s, ms), "fits another process");
	ms->pid--;
	CHECK(native_symbolizer_fits(s, ms), "not for its target restored");
}

static int same_syms(const struct native_sym *a, const struct native_sym *b,
		     size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i].function != b[i].function ||
		    a[i].library != b[i].library ||
		    a[i].offset != b[i].offset || a[i].file != b[i].file ||
		    a[i].line != b[i].line || a[i].inlined != b[i].inlined)
			return 0;
	return 1;
}

/* A pc asked again (2,000 threads ask for the same few dozen) gets the
 * first answer, as a return address too; asked with another max, the
 * answer for that max. */
static void check_memo(struct native_symbolizer *s, uint64_t pc,
		       const struct native_sym *first, size_t n)
{
	struct native_sym again[NATIVE_MAX_INLINED], ret1[NATIVE_MAX_INLINED];
	struct native_sym ret2[NATIVE_MAX_INLINED], one[1];
	size_t n2, r1, r2, n1;

	n2 = native_symbolize(s, pc, 1, again, NATIVE_MAX_INLINED);
	CHECK(n2 == n && same_syms(first, again, n),
	      "the same pc twice: %zu and %zu entries", n, n2);
	r1 = native_symbolize(s, pc + 1, 0, ret1, NATIVE_MAX_INLINED);
	r2 = native_symbolize(s, pc + 1, 0, ret2, NATIVE_MAX_INLINED);
	CHECK(r1 == n && r2 == n && same_syms(ret1, ret2, n) &&
	      ret1[n - 1].function == first[n - 1].function &&
	      ret1[0].offset == first[0].offset + 1,
	      "its return address twice: %zu and %zu entries", r1, r2);
	n1 = native_symbolize(s, pc, 1, one, 1);
	CHECK(n1 == 1 && one[0].function == first[0].function &&
	      one[0].offset == first[0].offset,
	      "the same pc with max 1: %zu entries", n1);
}

/* The symbolizer names a libc function of this process from libc's
 * separate debug file, and the file libdw reads is the decompressed
 * copy (its memfd is mapped), not libc6-dbg's own. */
static void check_symbolizer(void)
{
	void *fn = dlsym(RTLD_DEFAULT, "getpid");
	struct native_sym out[NATIVE_MAX_INLINED];
	struct native_symbolizer *s = NULL;
	struct memsrc ms;
	struct cs_err err;
	size_t n;

	cs_err_init(&err);
	if (!fn || proc_memsrc_init(&ms, getpid()) != 0) {
		CHECK(0, "no getpid or no mappings of this process");
		return;
	}
	CHECK(!inflated_file_mapped(), "a decompressed file mapped already");
	if (native_symbolizer_new(&s, &ms, &err) == 0) {
		n = native_symbolize(s, (uint64_t)(uintptr_t)fn, 1, out,
				     NATIVE_MAX_INLINED);
		CHECK(n >= 1 && out[n - 1].function &&
		      strstr(out[n - 1].function, "getpid") &&
		      out[n - 1].file, "getpid: named %s, file %s",
		      n ? out[n - 1].function : "nothing",
		      n && out[n - 1].file ? out[n - 1].file : "none");
		CHECK(inflated_file_mapped(), "libdw reads libc6-dbg's own "
		      "file, not the decompressed copy");
		check_memo(s, (uint64_t)(uintptr_t)fn, out, n);
		check_fits(s, &ms);
		check_rebind(s, &ms, (uint64_t)(uintptr_t)fn, out, n);
		printf("the symbolizer: getpid is %s (%s:%d)\n",
		       n ? out[n - 1].function : "?",
		       n && out[n - 1].file ? out[n - 1].file : "?",
		       n ? out[n - 1].line : 0);
		native_symbolizer_free(s);
	} else {
		CHECK(0, "no symbolizer: %s", err.msg);
	}
	CHECK(!inflated_file_mapped(), "the decompressed file outlives the "
	      "symbolizer");
	proc_memsrc_release(&ms);
}

int main(void)
{
	char path[256];

	elf_version(EV_CURRENT);
	check_not_elf();
	check_small();
	if (libc_debug_path(path, sizeof(path))) {
		check_real("libc's debug file", path);
		check_symbolizer();
	} else
		printf("libc's debug file: not installed (libc6-dbg): not "
		       "checked\n");
	return CHECK_DONE("test_debug_inflate");
}
