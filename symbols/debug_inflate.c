#include "symbols/debug_inflate.h"

#include <elf.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/banned.h"

#ifndef ELFCOMPRESS_ZLIB
#define ELFCOMPRESS_ZLIB 1
#endif

/* Sections of one file, at most (a real file has a few dozen). */
#define MAX_SECTIONS 65536
/* Compressed sections handled in one file, at most. */
#define MAX_ZSECTIONS 256
/* Decompressed bytes of one file, at most (libc's are 10 MB). */
#define MAX_OUT ((uint64_t)1 << 30)
/* deflate cannot compress better than 1032 to 1: a section that claims
 * more is not what its header says. */
#define MAX_RATIO 1032
#define PAGE 4096

struct zsection {
	size_t index;             /* in the section header table */
	int drop;                 /* not decompressed: left as NOBITS */
	uint64_t in_off, in_size; /* the compressed stream in the file */
	uint64_t out_off, out_size, align;
};

struct image {
	const unsigned char *in;
	uint64_t size;
	Elf64_Ehdr eh;
	uint64_t shnum;
	struct zsection z[MAX_ZSECTIONS];
	size_t nz;
};

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* [off, off + len) inside the file, without overflow. */
static int inside(const struct image *im, uint64_t off, uint64_t len)
{
	return off <= im->size && len <= im->size - off;
}

static int read_shdr(const struct image *im, uint64_t i, Elf64_Shdr *sh)
{
	uint64_t at = im->eh.e_shoff + i * sizeof(*sh);

	if (!inside(im, at, sizeof(*sh)))
		return -1;
	memcpy(sh, im->in + at, sizeof(*sh));
	return 0;
}

/* The ELF header and the section count: 0, or -1 for a file not read
 * here. */
static int read_header(struct image *im)
{
	Elf64_Shdr first;
	uint64_t table;

	if (im->size < sizeof(im->eh))
		return -1;
	memcpy(&im->eh, im->in, sizeof(im->eh));
	if (memcmp(im->eh.e_ident, ELFMAG, SELFMAG) ||
	    im->eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    im->eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    im->eh.e_ident[EI_VERSION] != EV_CURRENT ||
	    im->eh.e_shentsize != sizeof(Elf64_Shdr) || !im->eh.e_shoff)
		return -1;
	im->shnum = im->eh.e_shnum;
	/* Past SHN_LORESERVE sections, the count is in the first header. */
	if (!im->shnum) {
		if (read_shdr(im, 0, &first) < 0)
			return -1;
		im->shnum = first.sh_size;
	}
	if (!im->shnum || im->shnum > MAX_SECTIONS)
		return -1;
	table = im->shnum * sizeof(Elf64_Shdr);
	return inside(im, im->eh.e_shoff, table) ? 0 : -1;
}

/*
 * Debug sections coroscope never asks libdw about: variables' locations
 * and macros.  Nothing reads them (libdw passes over NOBITS sections),
 * so they are not decompressed: libc's location lists are a sixth of
 * its compressed DWARF.
 */
static const char *const unread[] = {
	".debug_loc", ".debug_loclists", ".debug_macro", ".debug_macinfo",
};

/* The section names' table: its bounds, or 0 for none usable. */
static int names_table(const struct image *im, uint64_t *off, uint64_t *size)
{
	uint64_t ndx = im->eh.e_shstrndx;
	Elf64_Shdr sh;

	if (ndx == SHN_XINDEX) {
		if (read_shdr(im, 0, &sh) < 0)
			return 0;
		ndx = sh.sh_link;
	}
	if (ndx >= im->shnum || read_shdr(im, ndx, &sh) < 0 ||
	    sh.sh_type != SHT_STRTAB || !inside(im, sh.sh_offset, sh.sh_size))
		return 0;
	*off = sh.sh_offset;
	*size = sh.sh_size;
	return 1;
}

static int is_unread(const struct image *im, uint64_t names, uint64_t size,
		     uint32_t name)
{
	size_t k, len;

	if (!size || name >= size)
		return 0;
	len = strnlen((const char *)im->in + names + name, (size_t)(size - name));
	if (len == size - name)
		return 0;   /* not terminated inside the table */
	for (k = 0; k < sizeof(unread) / sizeof(unread[0]); k++)
		if (!strcmp((const char *)im->in + names + name, unread[k]))
			return 1;
	return 0;
}

/* Does a note section hold the GNU build id id[0..len)? */
static int has_build_id(const struct image *im, const unsigned char *id,
			size_t len)
{
	uint64_t i;

	/* Bounded by MAX_SECTIONS, and each note moves `at` on. */
	for (i = 0; i < im->shnum; i++) {
		Elf64_Shdr sh;
		uint64_t at, end;

		if (read_shdr(im, i, &sh) < 0)
			return 0;
		if (sh.sh_type != SHT_NOTE || !inside(im, sh.sh_offset, sh.sh_size))
			continue;
		at = sh.sh_offset;
		end = sh.sh_offset + sh.sh_size;
		while (end - at >= sizeof(Elf64_Nhdr)) {
			Elf64_Nhdr nh;
			uint64_t name, desc;

			memcpy(&nh, im->in + at, sizeof(nh));
			name = at + sizeof(nh);
			desc = name + align_up(nh.n_namesz, 4);
			if (desc > end || align_up(nh.n_descsz, 4) > end - desc)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp(im->in + name, "GNU", 4))
				return nh.n_descsz == len &&
				       !memcmp(im->in + desc, id, len);
			at = desc + align_up(nh.n_descsz, 4);
		}
	}
	return 0;
}

/* Does [off, off + len) meet a compressed stream? */
static int meets_stream(const struct image *im, uint64_t off, uint64_t len)
{
	size_t k;

	for (k = 0; k < im->nz; k++)
		if (off < im->z[k].in_off + im->z[k].in_size &&
		    im->z[k].in_off < off + len)
			return 1;
	return 0;
}

/*
 * The zlib-compressed sections and where their data will go: after the
 * original bytes, each from a page of its own (which meets every
 * alignment a section may ask for, PAGE at most).  Location lists and
 * macros are marked to be dropped.  How many, or -1 when the file says
 * something impossible (the caller then leaves it to libdw).
 */
static int plan(struct image *im, uint64_t *out_size)
{
	uint64_t i, end = align_up(im->size, PAGE), total = 0, names = 0,
		 names_size = 0;

	im->nz = 0;
	if (!names_table(im, &names, &names_size))
		names_size = 0;
	/* Bounded by MAX_SECTIONS. */
	for (i = 0; i < im->shnum; i++) {
		struct zsection *z;
		Elf64_Shdr sh;
		Elf64_Chdr ch;

		if (read_shdr(im, i, &sh) < 0)
			return -1;
		if (!(sh.sh_flags & SHF_COMPRESSED) || sh.sh_type == SHT_NOBITS)
			continue;
		if (!inside(im, sh.sh_offset, sh.sh_size) ||
		    sh.sh_size < sizeof(ch))
			return -1;
		memcpy(&ch, im->in + sh.sh_offset, sizeof(ch));
		if (ch.ch_type != ELFCOMPRESS_ZLIB)
			continue;   /* another kind: libdw's */
		if (im->nz == MAX_ZSECTIONS || !ch.ch_size ||
		    ch.ch_size > MAX_OUT - total ||
		    ch.ch_size / MAX_RATIO > sh.sh_size ||
		    (ch.ch_addralign & (ch.ch_addralign - 1)) ||
		    ch.ch_addralign > PAGE)
			return -1;
		z = &im->z[im->nz++];
		z->index = (size_t)i;
		z->drop = is_unread(im, names, names_size, sh.sh_name);
		z->in_off = sh.sh_offset + sizeof(ch);
		z->in_size = sh.sh_size - sizeof(ch);
		z->align = ch.ch_addralign ? ch.ch_addralign : 1;
		if (z->drop)
			continue;
		/* A page of its own: populated on its own (fill()). */
		z->out_off = align_up(end, PAGE);
		z->out_size = ch.ch_size;
		end = z->out_off + z->out_size;
		total += ch.ch_size;
	}
	/* The headers are copied (and the section headers patched): no
	 * stream may hold them. */
	if (meets_stream(im, 0, sizeof(im->eh)) ||
	    meets_stream(im, im->eh.e_shoff, im->shnum * sizeof(Elf64_Shdr)) ||
	    (im->eh.e_phoff &&
	     meets_stream(im, im->eh.e_phoff,
			  (uint64_t)im->eh.e_phnum * im->eh.e_phentsize)))
		return -1;
	*out_size = end;
	return (int)im->nz;
}

/* The original's bytes, less the compressed streams (never read again:
 * their pages stay holes). */
static void copy_around_streams(const struct image *im, unsigned char *out)
{
	uint64_t at = 0;

	/* Bounded by the file's size: each pass moves `at` forward. */
	while (at < im->size) {
		uint64_t next = im->size, skip_to = im->size;
		size_t k;

		for (k = 0; k < im->nz; k++) {
			const struct zsection *z = &im->z[k];

			if (z->in_off + z->in_size > at && z->in_off < next) {
				next = z->in_off > at ? z->in_off : at;
				skip_to = z->in_off + z->in_size;
			}
		}
		memcpy(out + at, im->in + at, next - at);
		at = next < skip_to ? skip_to : im->size;
		if (next == im->size)
			break;
	}
}

/* Pages a stream of in_size bytes gets faulted in ahead, at most: real
 * DWARF decompresses to 3-10 times its size, and a stream that claims
 * more is written page by page (as libdeflate proves it). */
#define POPULATE_RATIO 32

/* Decompress every planned section and point its header at it: 0, or
 * -1 when a stream is not what its header says. */
static int fill(const struct image *im, unsigned char *out)
{
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	size_t k;
	int ret = 0;

	if (!d)
		return -1;
	for (k = 0; k < im->nz && ret == 0; k++) {
		const struct zsection *z = &im->z[k];
		uint64_t at = im->eh.e_shoff + z->index * sizeof(Elf64_Shdr);
		size_t got = 0;
		Elf64_Shdr sh;

		memcpy(&sh, out + at, sizeof(sh));
		if (z->drop) {
			sh.sh_type = SHT_NOBITS;
			sh.sh_flags &= ~(uint64_t)SHF_COMPRESSED;
			sh.sh_size = 0;
			memcpy(out + at, &sh, sizeof(sh));
			continue;
		}
		/* Its pages in one call, not one fault each: memfd pages are
		 * small, and 2,500 faults (libc's DWARF) took 40 ms. */
		(void)madvise(out + z->out_off,
			      (size_t)(z->out_size < z->in_size * POPULATE_RATIO ?
				       z->out_size : z->in_size * POPULATE_RATIO),
			      MADV_POPULATE_WRITE);
		if (libdeflate_zlib_decompress(d, im->in + z->in_off,
					       (size_t)z->in_size,
					       out + z->out_off,
					       (size_t)z->out_size, &got) !=
		    LIBDEFLATE_SUCCESS || got != z->out_size) {
			ret = -1;
			break;
		}
		sh.sh_flags &= ~(uint64_t)SHF_COMPRESSED;
		sh.sh_offset = z->out_off;
		sh.sh_size = z->out_size;
		sh.sh_addralign = z->align;
		memcpy(out + at, &sh, sizeof(sh));
	}
	libdeflate_free_decompressor(d);
	return ret;
}

/*
 * Files decompressed by debug_inflate_kept() before, kept for the life
 * of the process: `watch
 * --native` reads its target ten times a second, and each sample
 * decompressed libc6-dbg's sections again (29 % of a `dump --native`'s
 * CPU).  An entry is the original file's identity and build id and a
 * descriptor of the memfd; each use opens the memfd anew (its own file
 * offset) through /proc/self/fd.  A file replaced since (a package
 * upgrade) is another inode or mtime: decompressed again.
 */
#define CACHE_FILES 8
#define CACHE_ID_MAX 64

struct inflated {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	unsigned char id[CACHE_ID_MAX];
	size_t id_len;
	int mfd;
};

static struct inflated cache[CACHE_FILES];
static size_t ncache;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static int same_file(const struct inflated *e, const struct stat *st,
		     const unsigned char *id, size_t id_len)
{
	return e->dev == st->st_dev && e->ino == st->st_ino &&
	       e->size == st->st_size &&
	       e->mtime.tv_sec == st->st_mtim.tv_sec &&
	       e->mtime.tv_nsec == st->st_mtim.tv_nsec &&
	       e->id_len == id_len && !memcmp(e->id, id, id_len);
}

/* A new descriptor of the memfd kept for this file, or -1. */
static int cache_find(const struct stat *st, const unsigned char *id,
		      size_t id_len)
{
	char path[64];
	size_t i;
	int fd = -1;

	pthread_mutex_lock(&cache_lock);
	for (i = 0; i < ncache && fd < 0; i++)
		if (same_file(&cache[i], st, id, id_len)) {
			snprintf(path, sizeof(path), "/proc/self/fd/%d",
				 cache[i].mfd);
			fd = open(path, O_RDONLY | O_CLOEXEC);
		}
	pthread_mutex_unlock(&cache_lock);
	return fd;
}

static void cache_add(const struct stat *st, const unsigned char *id,
		      size_t id_len, int mfd)
{
	struct inflated *e;

	if (id_len > CACHE_ID_MAX)
		return;
	pthread_mutex_lock(&cache_lock);
	if (ncache < CACHE_FILES) {
		e = &cache[ncache];
		e->mfd = fcntl(mfd, F_DUPFD_CLOEXEC, 0);
		if (e->mfd >= 0) {
			e->dev = st->st_dev;
			e->ino = st->st_ino;
			e->size = st->st_size;
			e->mtime = st->st_mtim;
			memcpy(e->id, id, id_len);
			e->id_len = id_len;
			ncache++;
		}
	}
	pthread_mutex_unlock(&cache_lock);
}

static int inflate(int fd, const unsigned char *id, size_t id_len, int keep)
{
	struct image *im = NULL;
	unsigned char *out = MAP_FAILED;
	void *in = MAP_FAILED;
	uint64_t out_size = 0;
	struct stat st;
	int mfd = -1, ret = -1, nz;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size < (off_t)sizeof(Elf64_Ehdr))
		goto done;
	mfd = keep ? cache_find(&st, id, id_len) : -1;
	if (mfd >= 0) {
		ret = mfd;
		goto done;
	}
	in = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	im = calloc(1, sizeof(*im));
	if (in == MAP_FAILED || !im)
		goto done;
	im->in = in;
	im->size = (uint64_t)st.st_size;
	if (read_header(im) < 0 || !has_build_id(im, id, id_len))
		goto done;
	ret = fd;   /* the file wanted: from here on, at worst as it is */
	nz = plan(im, &out_size);
	if (nz <= 0)
		goto done;
	mfd = memfd_create("coroscope-debuginfo", MFD_CLOEXEC);
	if (mfd < 0 || ftruncate(mfd, (off_t)out_size) < 0)
		goto done;
	out = mmap(NULL, (size_t)out_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   mfd, 0);
	if (out == MAP_FAILED)
		goto done;
	copy_around_streams(im, out);
	if (fill(im, out) == 0) {
		ret = mfd;
		if (keep)
			cache_add(&st, id, id_len, mfd);
	}
done:
	if (out != MAP_FAILED)
		munmap(out, (size_t)out_size);
	if (in != MAP_FAILED)
		munmap(in, (size_t)st.st_size);
	free(im);
	if (mfd >= 0 && ret != mfd)
		close(mfd);
	if (ret != fd)
		close(fd);
	return ret;
}

int debug_inflate(int fd, const unsigned char *id, size_t id_len)
{
	return inflate(fd, id, id_len, 0);
}

int debug_inflate_kept(int fd, const unsigned char *id, size_t id_len)
{
	return inflate(fd, id, id_len, 1);
}
