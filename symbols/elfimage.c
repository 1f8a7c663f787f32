#include "symbols/elfimage.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "symbols/elfsyms.h"
#include "common/banned.h"

/*
 * What a lookup needs is prepared at open time: the program headers are
 * copied, section names are resolved, and the symbols are made ready to
 * be found (symbols/elfsyms.c; they are indexed only when needed).
 * Names point into libelf's data for the file, which stays mapped until
 * elf_image_free(); the file descriptor itself is closed at the end of
 * elf_image_open() so that a target with hundreds of libraries does not
 * cost us hundreds of descriptors.
 */

struct elf_seg {
	uint64_t vaddr, offset, filesz;
};

struct elf_sect {
	const char *name;
	uint64_t addr, size;
	size_t index;       /* for elf_getscn() */
};

struct elf_image {
	char *path;
	Elf *elf;
	int type;
	uint64_t base_vaddr;
	uint64_t file_size;

	const unsigned char *raw;  /* the whole file, owned by libelf */
	size_t rawsize;

	struct elf_seg *loads;     /* PT_LOAD segments */
	size_t nloads;

	struct elf_sect *sects;
	size_t nsects;

	struct elf_syms *syms;

	uint8_t *build_id;
	size_t build_id_len;
};

/* A limit against absurd files: no real build id comes near it. */
#define MAX_BUILD_ID 64

/* 4 KiB pages: p_vaddr and p_offset agree modulo the page size. */
#define PAGE_MASK_4K (~(uint64_t)0xfff)

static int bad_file(struct elf_image *img, struct cs_err *err,
		    const char *what)
{
	return cs_fail(err, CS_ERR_MEMORY, "'%s' is not a usable ELF file: %s",
		       img->path, what);
}

static int elf_fail(struct elf_image *img, struct cs_err *err,
		    const char *what)
{
	return cs_fail(err, CS_ERR_MEMORY, "'%s' is corrupt: %s: %s",
		       img->path, what, elf_errmsg(-1));
}

static int read_segments(struct elf_image *img, struct cs_err *err)
{
	size_t phnum, i, lowest = SIZE_MAX;
	uint64_t lowest_off = UINT64_MAX;

	if (elf_getphdrnum(img->elf, &phnum) != 0)
		return elf_fail(img, err, "cannot count program headers");
	if (phnum == 0)
		return 0;
	/* libelf has checked that the table fits in the file. */
	img->loads = xcalloc(phnum, sizeof(*img->loads));

	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		struct elf_seg *seg;

		if (!gelf_getphdr(img->elf, (int)i, &ph))
			return elf_fail(img, err, "cannot read program header");
		if (ph.p_type != PT_LOAD)
			continue;
		seg = &img->loads[img->nloads++];
		seg->vaddr = ph.p_vaddr;
		seg->offset = ph.p_offset;
		seg->filesz = ph.p_filesz;
		if (ph.p_offset < lowest_off) {
			lowest_off = ph.p_offset;
			lowest = img->nloads - 1;
		}
	}

	/*
	 * The segment with the lowest file offset normally starts at offset
	 * 0 and holds the ELF header; the address of file offset 0 under its
	 * mapping is what a mapping at file offset 0 corresponds to.  Wrapping
	 * arithmetic is harmless here: a nonsense file gives a nonsense base.
	 */
	if (lowest != SIZE_MAX) {
		const struct elf_seg *seg = &img->loads[lowest];

		img->base_vaddr = (seg->vaddr - seg->offset) & PAGE_MASK_4K;
	}
	return 0;
}

static int read_sections(struct elf_image *img, size_t shnum,
			 struct cs_err *err)
{
	size_t shstrndx;
	Elf_Data *names = NULL;
	Elf_Scn *scn = NULL;
	size_t i;

	if (shnum == 0)
		return 0;
	/* A file without section names still has usable symbols. */
	if (elf_getshdrstrndx(img->elf, &shstrndx) == 0)
		names = elfsyms_string_table(img->elf, shnum, shstrndx);

	img->sects = xcalloc(shnum, sizeof(*img->sects));
	for (i = 0; i < shnum && (scn = elf_nextscn(img->elf, scn)); i++) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return elf_fail(img, err, "cannot read section header");
		name = elfsyms_strtab_at(names, sh.sh_name);
		if (!name || !*name)
			continue;
		img->sects[img->nsects].name = name;
		img->sects[img->nsects].addr = sh.sh_addr;
		img->sects[img->nsects].size = sh.sh_size;
		img->sects[img->nsects].index = elf_ndxscn(scn);
		img->nsects++;
	}
	return 0;
}

/* Look for NT_GNU_BUILD_ID in one block of notes; 1 when found. */
static int scan_notes(struct elf_image *img, Elf_Data *data)
{
	size_t off = 0, next;
	GElf_Nhdr nh;
	size_t name_off, desc_off;

	/* gelf_getnote() returns a strictly larger offset, or 0 at the end. */
	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > off) {
		off = next;
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4)
			continue;
		if (name_off > data->d_size || data->d_size - name_off < 4 ||
		    desc_off > data->d_size ||
		    data->d_size - desc_off < nh.n_descsz)
			continue;
		if (memcmp((const char *)data->d_buf + name_off, "GNU", 4) != 0)
			continue;
		if (nh.n_descsz == 0 || nh.n_descsz > MAX_BUILD_ID)
			continue;
		img->build_id = xmalloc(nh.n_descsz);
		memcpy(img->build_id, (const char *)data->d_buf + desc_off,
		       nh.n_descsz);
		img->build_id_len = nh.n_descsz;
		return 1;
	}
	return 0;
}

/* The build id is optional: any trouble finding it just leaves it unset. */
static void read_build_id(struct elf_image *img, size_t shnum)
{
	size_t phnum, i;
	Elf_Scn *scn = NULL;

	if (elf_getphdrnum(img->elf, &phnum) == 0) {
		for (i = 0; i < phnum; i++) {
			GElf_Phdr ph;
			Elf_Data *d;

			if (!gelf_getphdr(img->elf, (int)i, &ph) ||
			    ph.p_type != PT_NOTE || ph.p_filesz == 0 ||
			    ph.p_offset > INT64_MAX)
				continue;
			d = elf_getdata_rawchunk(img->elf, (int64_t)ph.p_offset,
						 ph.p_filesz,
						 ph.p_align == 8 ? ELF_T_NHDR8
								 : ELF_T_NHDR);
			if (d && d->d_buf && scan_notes(img, d) != 0)
				return;
		}
	}
	/* Files without program headers (separate debug files) keep it in a
	 * section. */
	for (i = 0; i < shnum && (scn = elf_nextscn(img->elf, scn)); i++) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elfsyms_section_data(scn, &sh);
		if (d && scan_notes(img, d) != 0)
			return;
	}
}

/* Does a table of count entries of entsize bytes at off fit in size? */
static int table_fits(uint64_t off, uint64_t count, uint64_t entsize,
		      uint64_t size)
{
	if (count == 0)
		return 1;
	if (off > size || entsize == 0 || count > (size - off) / entsize)
		return 0;
	return 1;
}

static int check_header(struct elf_image *img, uint64_t file_size,
			struct cs_err *err)
{
	GElf_Ehdr eh;

	if (elf_kind(img->elf) != ELF_K_ELF)
		return cs_fail(err, CS_ERR_MEMORY, "'%s' is not an ELF file",
			       img->path);
	if (gelf_getclass(img->elf) != ELFCLASS64)
		return cs_fail(err, CS_ERR_MEMORY,
			       "'%s' is not a 64-bit ELF file", img->path);
	if (!gelf_getehdr(img->elf, &eh))
		return elf_fail(img, err, "cannot read the ELF header");
	if (eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return cs_fail(err, CS_ERR_MEMORY,
			       "'%s' is not a little-endian ELF file",
			       img->path);
	/* aarch64 files are read fine; only x86-64 targets are supported
	 * elsewhere, but nothing here depends on the machine. */
	if (eh.e_machine != EM_X86_64 && eh.e_machine != EM_AARCH64)
		return cs_fail(err, CS_ERR_MEMORY,
			       "'%s' is for an unsupported machine (%u)",
			       img->path, (unsigned)eh.e_machine);
	/*
	 * libelf quietly sees fewer headers when the tables run past the end
	 * of the file; say so instead: a truncated copy of a library is not
	 * one without symbols.  (e_shnum 0 with e_shoff set means the count
	 * is in section 0, which must then at least fit.)
	 */
	if (!table_fits(eh.e_phoff, eh.e_phnum, eh.e_phentsize, file_size) ||
	    !table_fits(eh.e_shoff, eh.e_shoff && !eh.e_shnum ? 1 : eh.e_shnum,
			eh.e_shentsize, file_size))
		return cs_fail(err, CS_ERR_MEMORY,
			       "'%s' is truncated: its header tables end past "
			       "the end of the file", img->path);
	img->type = eh.e_type;
	return 0;
}

int elf_image_open(struct elf_image **out, const char *path,
		   struct cs_err *err)
{
	struct elf_image *img;
	struct stat st;
	size_t shnum = 0;
	int fd, ret;

	*out = NULL;
	img = xcalloc(1, sizeof(*img));
	img->path = xstrdup(path);

	/* O_NONBLOCK: a FIFO planted where a library was must not hang us. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		ret = cs_fail(err, CS_ERR_MEMORY, "cannot open '%s': %s", path,
			      strerror(errno));
		goto fail;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		ret = cs_fail(err, CS_ERR_MEMORY, "'%s' is not a regular file",
			      path);
		goto fail;
	}

	img->file_size = (uint64_t)st.st_size;
	elf_version(EV_CURRENT);
	img->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!img->elf) {
		close(fd);
		ret = elf_fail(img, err, "cannot read");
		goto fail;
	}

	ret = check_header(img, (uint64_t)st.st_size, err);
	if (ret == 0)
		ret = read_segments(img, err);
	if (ret == 0 && elf_getshdrnum(img->elf, &shnum) != 0)
		ret = elf_fail(img, err, "cannot count sections");
	if (ret == 0)
		ret = read_sections(img, shnum, err);
	if (ret == 0) {
		img->syms = elf_syms_new(img->elf, shnum, img->file_size);
		read_build_id(img, shnum);
	}
	if (ret == 0) {
		/* Brings the whole file in if it could not be mapped, so that
		 * the descriptor is no longer needed. */
		img->raw = (const unsigned char *)elf_rawfile(img->elf,
							      &img->rawsize);
		if (!img->raw)
			ret = elf_fail(img, err, "cannot read contents");
	}
	/* Only a file without segments (a separate debug file) needs its
	 * symbols counted now. */
	if (ret == 0 && img->nloads == 0) {
		if (elf_syms_count(img->syms) == 0)
			ret = bad_file(img, err,
				       "no loadable segments or symbols");
	}
	elf_cntl(img->elf, ELF_C_FDDONE);
	close(fd);
	if (ret < 0)
		goto fail;
	*out = img;
	return 0;

fail:
	elf_image_free(img);
	return ret;
}

void elf_image_free(struct elf_image *img)
{
	if (!img)
		return;
	if (img->elf)
		elf_end(img->elf);
	free(img->path);
	free(img->loads);
	free(img->sects);
	elf_syms_free(img->syms);
	free(img->build_id);
	free(img);
}

int elf_image_symbol(struct elf_image *img, const char *name,
		     uint64_t *value, uint64_t *size)
{
	return img ? elf_syms_find(img->syms, name, value, size) : -1;
}

static const struct elf_sect *sect_find(const struct elf_image *img,
					const char *name)
{
	size_t i;

	if (!img || !name)
		return NULL;
	for (i = 0; i < img->nsects; i++)
		if (strcmp(img->sects[i].name, name) == 0)
			return &img->sects[i];
	return NULL;
}

int elf_image_section(const struct elf_image *img, const char *name,
		      uint64_t *addr, uint64_t *size)
{
	const struct elf_sect *sect = sect_find(img, name);

	if (!sect)
		return -1;
	if (addr)
		*addr = sect->addr;
	if (size)
		*size = sect->size;
	return 0;
}

int elf_image_section_data(const struct elf_image *img, const char *name,
			   const void **data, size_t *len)
{
	const struct elf_sect *sect = sect_find(img, name);
	Elf_Scn *scn;
	Elf_Data *d;
	GElf_Shdr sh;

	if (!sect || !(scn = elf_getscn(img->elf, sect->index)) ||
	    !gelf_getshdr(scn, &sh) || !(d = elfsyms_section_data(scn, &sh)))
		return -1;
	*data = d->d_buf;
	*len = d->d_size;
	return 0;
}

uint64_t elf_image_base_vaddr(const struct elf_image *img)
{
	return img->base_vaddr;
}

int elf_image_read_vaddr(const struct elf_image *img, uint64_t vaddr,
			 void *buf, size_t len)
{
	size_t i;

	if (len == 0)
		return 0;
	for (i = 0; i < img->nloads; i++) {
		const struct elf_seg *seg = &img->loads[i];
		uint64_t rel, off;

		if (vaddr < seg->vaddr)
			continue;
		rel = vaddr - seg->vaddr;
		if (rel >= seg->filesz || len > seg->filesz - rel)
			continue;
		/* p_filesz comes from the file: check it against the file. */
		if (seg->offset > img->rawsize ||
		    rel > img->rawsize - seg->offset)
			return -1;
		off = seg->offset + rel;
		if (len > img->rawsize - off)
			return -1;
		memcpy(buf, img->raw + off, len);
		return 0;
	}
	return -1;
}

char *elf_build_id_debug_path(const uint8_t *id, size_t len)
{
	struct strbuf path;
	size_t i;

	if (!id || len < 2 || len > 64)
		return NULL;
	strbuf_init(&path);
	strbuf_addf(&path, "/usr/lib/debug/.build-id/%02x/", id[0]);
	for (i = 1; i < len; i++)
		strbuf_addf(&path, "%02x", id[i]);
	strbuf_addstr(&path, ".debug");
	return strbuf_detach(&path);
}

const uint8_t *elf_image_build_id(const struct elf_image *img, size_t *len)
{
	if (len)
		*len = img->build_id_len;
	return img->build_id;
}

int elf_image_type(const struct elf_image *img)
{
	return img->type;
}

const char *elf_image_path(const struct elf_image *img)
{
	return img->path;
}
