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
 */
#include "symbols/debug_inflate.h"

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
		close(ours);
	}
	close(fd);
}

/* The debug file libdwfl would find for libc, by its build id. */
static int libc_debug_path(char *path, size_t size)
{
	unsigned char id[64];
	int fd = open(LIBC, O_RDONLY);
	size_t n, i, len;

	if (fd < 0)
		return 0;
	n = build_id_of(fd, id, sizeof(id));
	close(fd);
	if (n < 2)
		return 0;
	len = (size_t)snprintf(path, size, "/usr/lib/debug/.build-id/%02x/",
			       id[0]);
	for (i = 1; i < n && len < size; i++)
		len += (size_t)snprintf(path + len, size - len, "%02x", id[i]);
	snprintf(path + len, size - len, ".debug");
	return access(path, R_OK) == 0;
}

/* What debug_inflate() gave back, if anything, read section by section
 * (ASan watches), then closed. */
static void read_all(int fd)
{
	Elf *e;
	Elf_Scn *s = NULL;
	size_t k = 0;

	if (fd < 0)
		return;
	e = elf_begin(fd, ELF_C_READ, NULL);
	/* Bounded by the file's sections (and a ceiling). */
	while (e && (s = elf_nextscn(e, s)) && k++ < 100000)
		(void)elf_getdata(s, NULL);
	elf_end(e);
	close(fd);
}

/* Damaged copies of bytes: whatever comes back, libelf can read it, and
 * the function closed or returned what it was given. */
static void check_damaged(const unsigned char *bytes, size_t n,
			  const unsigned char *id, size_t idn)
{
	unsigned char *copy = malloc(n);
	Elf64_Ehdr eh;
	size_t i, cuts[] = { 0, 4, 16, 63, 64, 65, 200, 1000 }, tried = 0;

	if (!copy || n < sizeof(eh)) {
		CHECK(0, "no copy to damage");
		free(copy);
		return;
	}
	memcpy(&eh, bytes, sizeof(eh));
	/* cut short */
	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]) + 8; i++) {
		size_t len = i < sizeof(cuts) / sizeof(cuts[0]) ? cuts[i] :
			     n - n / (i - 6);
		int fd = open_copy(bytes, len < n ? len : n);

		if (fd < 0)
			continue;
		read_all(debug_inflate(fd, id, idn));
		tried++;
	}
	/* every byte of the ELF header and of each section header flipped */
	for (i = 0; i < sizeof(eh) + (size_t)eh.e_shnum * sizeof(Elf64_Shdr);
	     i++) {
		size_t at = i < sizeof(eh) ? i :
			    (size_t)eh.e_shoff + (i - sizeof(eh));
		int fd;

		if (at >= n)
			break;
		memcpy(copy, bytes, n);
		copy[at] ^= 0x80;
		fd = open_copy(copy, n);
		if (fd < 0)
			continue;
		read_all(debug_inflate(fd, id, idn));
		tried++;
	}
	CHECK(tried > 100, "only %zu damaged copies tried", tried);
	printf("damaged copies: %zu tried\n", tried);
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
		 "-Wl,--build-id -o %s %s && objcopy "
		 "--compress-debug-sections=zlib %s", lib, src, lib);
	CHECK(system(cmd) == 0, "%s failed", cmd);
	check_real("small library (gcc -g3, objcopy)", lib);
	fd = open(lib, O_RDONLY);
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0) {
		n = build_id_of(fd, id, sizeof(id));
		bytes = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE,
			     fd, 0);
		if (bytes != MAP_FAILED) {
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

int main(void)
{
	char path[256];

	elf_version(EV_CURRENT);
	check_not_elf();
	check_small();
	if (libc_debug_path(path, sizeof(path)))
		check_real("libc's debug file", path);
	else
		printf("libc's debug file: not installed (libc6-dbg): not "
		       "checked\n");
	return CHECK_DONE("test_debug_inflate");
}
