#include "attach/core_internal.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/le.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

/*
 * The ELF side of a core: its headers, PT_LOAD segments and notes
 * (threads, NT_PRPSINFO, NT_SIGINFO, NT_AUXV, NT_FILE), the ELF headers
 * of the files it maps (for build ids and permissions), and the mapping
 * list built from them.  Every offset, size and count is checked.
 */

typedef long (*range_reader)(void *ctx, uint64_t off, void *buf, size_t len);

struct mem_ctx {
	struct core *co;
	uint64_t base;
};

static long mem_reader(void *ctx, uint64_t off, void *buf, size_t len)
{
	struct mem_ctx *m = ctx;

	if (off > UINT64_MAX - m->base)
		return 0;
	return core_read_saved(m->co, m->base + off, buf, len);
}

static long fd_reader(void *ctx, uint64_t off, void *buf, size_t len)
{
	return core_pread_full(*(int *)ctx, buf, len, off);
}

static int read_exact(range_reader rd, void *ctx, uint64_t off, void *buf,
		      size_t len)
{
	return rd(ctx, off, buf, len) == (long)len ? 0 : -1;
}

/* Look for NT_GNU_BUILD_ID in one PT_NOTE's bytes. */
static void find_build_id(const unsigned char *p, size_t len, size_t align,
			  struct elf_summary *s)
{
	size_t off = 0;

	while (len - off >= 12) {
		uint32_t namesz = le_u32(p + off), descsz = le_u32(p + off + 4);
		uint32_t type = le_u32(p + off + 8);
		size_t name_off = off + 12, desc_off, next;

		if (namesz > len - name_off)
			return;
		desc_off = name_off + ((namesz + align - 1) & ~(align - 1));
		if (desc_off > len || descsz > len - desc_off)
			return;
		next = desc_off + ((descsz + align - 1) & ~(align - 1));
		if (type == NT_GNU_BUILD_ID && namesz == 4 &&
		    !memcmp(p + name_off, "GNU", 4) && descsz > 0 &&
		    descsz <= BUILD_ID_MAX) {
			memcpy(s->id, p + desc_off, descsz);
			s->idlen = descsz;
			return;
		}
		if (next <= off || next > len)
			return;
		off = next;
	}
}

/*
 * Summarise the ELF header and program headers readable through rd,
 * whose bytes end at limit.  s->valid is 0 when there is no ELF header.
 */
static void summarize(range_reader rd, void *ctx, uint64_t limit,
		      struct elf_summary *s)
{
	unsigned char eh[64], ph[56];
	unsigned char *notes;
	uint64_t phoff;
	unsigned phnum, i;

	memset(s, 0, sizeof(*s));
	if (limit < sizeof(eh) || read_exact(rd, ctx, 0, eh, sizeof(eh)) < 0 ||
	    memcmp(eh, ELFMAG, SELFMAG) || eh[EI_CLASS] != ELFCLASS64 ||
	    eh[EI_DATA] != ELFDATA2LSB)
		return;
	s->valid = 1;
	s->type = le_u16(eh + 16);
	phoff = le_u64(eh + 32);
	phnum = le_u16(eh + 56);
	if (le_u16(eh + 54) != sizeof(ph) || phnum > HDR_PHNUM_MAX ||
	    phoff > limit || phnum * sizeof(ph) > limit - phoff)
		return;
	for (i = 0; i < phnum; i++) {
		uint32_t type, flags;
		uint64_t off, filesz, align;

		if (read_exact(rd, ctx, phoff + i * sizeof(ph), ph,
			       sizeof(ph)) < 0)
			return;
		type = le_u32(ph);
		flags = le_u32(ph + 4);
		off = le_u64(ph + 8);
		filesz = le_u64(ph + 32);
		align = le_u64(ph + 48);
		if (type == PT_INTERP)
			s->has_interp = 1;
		if (type == PT_LOAD && s->nloads < HDR_LOADS) {
			s->loads[s->nloads].offset = off;
			s->loads[s->nloads].filesz = filesz;
			s->loads[s->nloads].flags = flags;
			s->nloads++;
		}
		if (type != PT_NOTE || s->idlen || filesz > HDR_NOTE_MAX ||
		    off > limit || filesz > limit - off || filesz < 12)
			continue;
		notes = xmalloc((size_t)filesz);
		if (read_exact(rd, ctx, off, notes, (size_t)filesz) == 0)
			find_build_id(notes, (size_t)filesz, align == 8 ? 8 : 4,
				      s);
		free(notes);
	}
}


/* The core's copy of a mapped file's ELF header, summarised once. */
const struct elf_summary *core_file_mem(struct core *co,
					  struct core_file *f)
{
	struct mem_ctx m;

	if (!f->mem_done) {
		f->mem_done = 1;
		memset(&f->mem, 0, sizeof(f->mem));
		if (f->has_hdr) {
			m.co = co;
			m.base = f->hdr_addr;
			summarize(mem_reader, &m, f->hdr_len, &f->mem);
		}
	}
	return &f->mem;
}

void core_summarize_file(const char *path, struct elf_summary *s)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;

	memset(s, 0, sizeof(*s));
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
		summarize(fd_reader, &fd, (uint64_t)st.st_size, s);
	close(fd);
}


/* ---- opening ---- */

int core_not_core(struct core *co, struct cs_err *err, const char *what)
{
	return cs_fail(err, CS_ERR_CORE, "'%s' is not a core file%s",
		       co->info.path, what);
}

static int truncated(struct core *co, struct cs_err *err, const char *what,
		     uint64_t end)
{
	return cs_fail(err, CS_ERR_CORE,
		       "core file '%s' is truncated: its %s end at byte %" PRIu64
		       " but it has %" PRIu64 " bytes", co->info.path, what, end,
		       co->size);
}



static void note_thread(struct note_state *ns, const unsigned char *d,
			size_t len)
{
	struct note_thread *t;

	if (len < PRSTATUS_MIN || ns->nthreads >= MAX_THREADS)
		return;
	ns->th = xgrow(ns->th, &ns->alloc, ns->nthreads + 1, sizeof(*ns->th));
	t = &ns->th[ns->nthreads++];
	memset(t, 0, sizeof(*t));
	t->tid = le_i32(d + PRSTATUS_PID);
	t->fs_base = le_u64(d + PRSTATUS_REG + REG_FS_BASE * 8);
	cs_regs_from_image(&t->regs, d + PRSTATUS_REG);
	t->cursig = (int16_t)le_u16(d + PRSTATUS_CURSIG);
}

/* Walk one PT_NOTE segment's bytes (4-byte aligned, as cores are). */
static void parse_notes(struct core *co, struct note_state *ns,
			const unsigned char *p, size_t len)
{
	size_t off = 0;

	while (len - off >= 12) {
		uint32_t namesz = le_u32(p + off), descsz = le_u32(p + off + 4);
		uint32_t type = le_u32(p + off + 8);
		size_t name_off = off + 12, desc_off, next;
		const unsigned char *name = p + name_off, *d;
		int is_core;

		desc_off = name_off + (((size_t)namesz + 3) & ~(size_t)3);
		if (namesz > len - name_off || desc_off > len ||
		    descsz > len - desc_off) {
			ns->malformed = 1;
			return;
		}
		next = desc_off + (((size_t)descsz + 3) & ~(size_t)3);
		if (next > len)
			next = len;
		d = p + desc_off;
		is_core = namesz == 5 && !memcmp(name, "CORE", 5);
		if (namesz == 4 && !memcmp(name, "GDB", 4))
			co->info.by_gdb = 1;
		if (is_core && type == NT_PRSTATUS) {
			note_thread(ns, d, descsz);
		} else if (is_core && type == NT_PRPSINFO &&
			   descsz >= PRPSINFO_SIZE && !ns->has_prpsinfo) {
			memcpy(ns->prpsinfo, d, PRPSINFO_SIZE);
			ns->has_prpsinfo = 1;
		} else if (is_core && type == NT_SIGINFO &&
			   descsz >= SIGINFO_MIN && ns->nthreads &&
			   !ns->th[ns->nthreads - 1].has_siginfo) {
			/* Both the kernel and gdb write a thread's siginfo
			 * after its NT_PRSTATUS. */
			memcpy(ns->th[ns->nthreads - 1].siginfo, d, SIGINFO_MIN);
			ns->th[ns->nthreads - 1].has_siginfo = 1;
		} else if (is_core && type == NT_AUXV && !co->auxv &&
			   descsz >= 16) {
			co->auxv_len = descsz & ~(size_t)15;
			co->auxv = xmalloc(co->auxv_len);
			memcpy(co->auxv, d, co->auxv_len);
		} else if (is_core && type == NT_FILE && !ns->file_note) {
			ns->file_note = d;
			ns->file_len = descsz;
		}
		if (next <= off)
			return;
		off = next;
	}
}

uint64_t core_auxv_get(const struct core *co, uint64_t key)
{
	size_t i;

	for (i = 0; i + 16 <= co->auxv_len; i += 16) {
		uint64_t k = le_u64(co->auxv + i);

		if (k == AUX_NULL)
			break;
		if (k == key)
			return le_u64(co->auxv + i + 8);
	}
	return 0;
}

static int fmap_cmp(const void *a, const void *b)
{
	const struct fmap *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int seg_cmp(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* An NT_FILE path (its own copy, " (deleted)" stripped) and its entry. */
struct name_ref {
	char *name;
	size_t entry;
};

static int name_ref_cmp(const void *a, const void *b)
{
	const struct name_ref *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

static char *strip_deleted(const char *name)
{
	static const char deleted[] = " (deleted)";
	size_t l = strlen(name), dl = sizeof(deleted) - 1;

	if (l > dl && !strcmp(name + l - dl, deleted))
		l -= dl;
	return xstrndup(name, l);
}

/*
 * NT_FILE: count, page size, count x (start, end, page offset), then
 * count NUL-terminated paths.  A malformed note keeps its well-formed
 * prefix; one with no page size it could have (a power of two up to
 * PAGESZ_MAX) none.  gdb writes a page size of 1 (offsets in bytes).
 */
#define PAGESZ_MAX ((uint64_t)1 << 30)
void core_parse_file_note(struct core *co, const unsigned char *d,
			    size_t len)
{
	uint64_t count, pagesz;
	const char *names, *end;
	struct name_ref *refs;
	size_t n = 0, i, j;

	if (len < 16)
		return;
	count = le_u64(d);
	pagesz = le_u64(d + 8);
	/* (a page is a power of two: the kernel's, or gdb's 1) */
	if (count > MAX_FILE_ENTRIES || count > (len - 16) / 24 ||
	    pagesz == 0 || pagesz > PAGESZ_MAX || (pagesz & (pagesz - 1)))
		return;
	names = (const char *)d + 16 + count * 24;
	end = (const char *)d + len;
	refs = xcalloc(count ? (size_t)count : 1, sizeof(*refs));
	co->fmaps = xcalloc(count ? (size_t)count : 1, sizeof(*co->fmaps));
	for (i = 0; i < count; i++) {
		const unsigned char *e = d + 16 + i * 24;
		const char *nul = memchr(names, '\0', (size_t)(end - names));
		uint64_t start = le_u64(e), stop = le_u64(e + 8);
		uint64_t pgoff = le_u64(e + 16);

		if (!nul)
			break;
		if (stop > start && names[0] == '/' &&
		    pgoff <= UINT64_MAX / pagesz) {
			co->fmaps[n].start = start;
			co->fmaps[n].end = stop;
			co->fmaps[n].offset = pgoff * pagesz;
			refs[n].name = strip_deleted(names);
			refs[n].entry = n;
			n++;
		}
		names = nul + 1;
	}
	/* One core_file per distinct path, sorted by path. */
	qsort(refs, n, sizeof(*refs), name_ref_cmp);
	co->files = xcalloc(n ? n : 1, sizeof(*co->files));
	for (i = 0; i < n; i++) {
		if (co->nfiles &&
		    !strcmp(co->files[co->nfiles - 1].path, refs[i].name)) {
			free(refs[i].name);
		} else {
			struct core_file *f = &co->files[co->nfiles++];

			f->path = refs[i].name;
			f->fd = -1;
		}
		co->fmaps[refs[i].entry].file = co->nfiles - 1;
	}
	free(refs);
	qsort(co->fmaps, n, sizeof(*co->fmaps), fmap_cmp);
	/* Overlapping entries cannot both be right: keep the first. */
	for (i = 0, j = 0; i < n; i++) {
		if (j && co->fmaps[i].start < co->fmaps[j - 1].end)
			continue;
		co->fmaps[j++] = co->fmaps[i];
	}
	co->nfmaps = j;
	/* Where each file's offset 0 is mapped: its ELF header. */
	for (i = 0; i < co->nfmaps; i++) {
		struct core_file *f = &co->files[co->fmaps[i].file];

		if (co->fmaps[i].offset == 0 && !f->has_hdr) {
			f->has_hdr = 1;
			f->hdr_addr = co->fmaps[i].start;
			f->hdr_len = co->fmaps[i].end - co->fmaps[i].start;
		}
	}
}


static void perms_of(uint32_t flags, char perms[5])
{
	perms[0] = flags & PF_R ? 'r' : '-';
	perms[1] = flags & PF_W ? 'w' : '-';
	perms[2] = flags & PF_X ? 'x' : '-';
	perms[3] = 'p';
	perms[4] = '\0';
}

/*
 * Permissions of a mapping the core left out (gcore omits read-only file
 * mappings whole): those of the file's PT_LOAD covering its offset, from
 * the core's copy of the header, else from the file.  "" when unknown.
 */
static void infer_perms(struct core *co, struct core_file *f, uint64_t off,
			char perms[5])
{
	const struct elf_summary *s = core_file_mem(co, f);
	size_t i;

	perms[0] = '\0';
	if (!s->valid || !s->nloads) {
		core_file_resolve(co, f);
		if (!f->host)
			return;
		if (!f->disk_done) {
			f->disk_done = 1;
			core_summarize_file(f->host, &f->disk);
		}
		s = &f->disk;
	}
	for (i = 0; i < s->nloads; i++) {
		uint64_t lo = s->loads[i].offset & ~(uint64_t)(PAGE - 1);
		uint64_t hi = s->loads[i].offset + s->loads[i].filesz;

		if (hi >= s->loads[i].offset && off >= lo && off < hi) {
			perms_of(s->loads[i].flags, perms);
			return;
		}
	}
}

static struct cs_mapping *new_mapping(struct cs_mapping **maps, size_t *n,
				      size_t *alloc)
{
	struct cs_mapping *m;

	*maps = xgrow(*maps, alloc, *n + 1, sizeof(**maps));
	m = &(*maps)[(*n)++];
	memset(m, 0, sizeof(*m));
	return m;
}

/* PT_LOAD segments with the path of the NT_FILE entry each starts in,
 * then the parts of NT_FILE entries no segment covers. */
void core_build_maps(struct memsrc *ms, struct core *co)
{
	struct cs_mapping *maps = NULL, *m;
	size_t n = 0, alloc = 0, i;

	for (i = 0; i < co->nsegs; i++) {
		const struct seg *s = &co->segs[i];
		const struct fmap *fm = core_fmap_find(co, s->start);

		m = new_mapping(&maps, &n, &alloc);
		m->start = s->start;
		m->end = s->end;
		perms_of(s->flags, m->perms);
		if (fm) {
			m->path = xstrdup(co->files[fm->file].path);
			m->offset = fm->offset + (s->start - fm->start);
		}
	}
	for (i = 0; i < co->nfmaps; i++) {
		const struct fmap *fm = &co->fmaps[i];
		uint64_t a = fm->start;
		long k = core_seg_below(co, a);

		if (k >= 0 && co->segs[k].end > a)
			a = co->segs[k].end;
		k++;
		/* Each pass moves a forward or k on to the next segment. */
		while (a < fm->end) {
			uint64_t next = (size_t)k < co->nsegs ?
					co->segs[k].start : UINT64_MAX, b;

			if (next <= a) {
				if (co->segs[k].end > a)
					a = co->segs[k].end;
				k++;
				continue;
			}
			b = next < fm->end ? next : fm->end;
			m = new_mapping(&maps, &n, &alloc);
			m->start = a;
			m->end = b;
			m->path = xstrdup(co->files[fm->file].path);
			m->offset = fm->offset + (a - fm->start);
			infer_perms(co, &co->files[fm->file], m->offset, m->perms);
			a = b;
		}
	}
	cs_mappings_sort(maps, n);
	ms->maps = maps;
	ms->nmaps = n;
}

/* The ELF header and program headers; *phdrs is newly allocated. */
int core_read_headers(struct core *co, unsigned char **phdrs,
			size_t *phnum_out, struct cs_err *err)
{
	unsigned char eh[64], sh[64];
	uint64_t phoff;
	size_t phnum;
	int type, machine;

	*phdrs = NULL;
	if (co->size < sizeof(eh) ||
	    core_pread_full(co->fd, eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh, ELFMAG, SELFMAG))
		return core_not_core(co, err, "");
	if (eh[EI_CLASS] != ELFCLASS64 || eh[EI_DATA] != ELFDATA2LSB)
		return core_not_core(co, err, " of a 64-bit little-endian machine");
	type = le_u16(eh + 16);
	machine = le_u16(eh + 18);
	if (type != ET_CORE)
		return core_not_core(co, err,
				type == ET_EXEC ? " (it is an ELF executable)" :
				type == ET_DYN ? " (it is an ELF shared object "
						 "or executable)" :
				type == ET_REL ? " (it is an ELF object file)" :
				" (it is an ELF file of another type)");
	if (machine != EM_X86_64)
		return cs_fail(err, CS_ERR_CORE,
			       "core file '%s' is for ELF machine %d; coroscope "
			       "reads x86-64 cores", co->info.path, machine);
	if (le_u16(eh + 54) != 56)
		return cs_fail(err, CS_ERR_CORE,
			       "core file '%s' is malformed: program headers of "
			       "%u bytes", co->info.path, le_u16(eh + 54));
	phoff = le_u64(eh + 32);
	phnum = le_u16(eh + 56);
	if (phnum == PN_XNUM) {
		/* More than 65534 segments: the count is in section 0. */
		uint64_t shoff = le_u64(eh + 40);

		if (le_u16(eh + 58) < sizeof(sh) || shoff == 0)
			return cs_fail(err, CS_ERR_CORE,
				       "core file '%s' is malformed: no section "
				       "header holds its segment count",
				       co->info.path);
		if (shoff > co->size || co->size - shoff < sizeof(sh))
			return truncated(co, err, "section headers",
					 shoff + sizeof(sh));
		if (core_pread_full(co->fd, sh, sizeof(sh), shoff) != (ssize_t)sizeof(sh))
			return truncated(co, err, "section headers",
					 shoff + sizeof(sh));
		phnum = le_u32(sh + 44);
	}
	if (phnum == 0)
		return cs_fail(err, CS_ERR_CORE,
			       "core file '%s' has no program headers",
			       co->info.path);
	if (phnum > MAX_SEGMENTS)
		return cs_fail(err, CS_ERR_CORE,
			       "core file '%s' is malformed: %zu program headers",
			       co->info.path, phnum);
	if (phoff > co->size || phnum * 56 > co->size - phoff)
		return truncated(co, err, "program headers",
				 phoff > UINT64_MAX - phnum * 56 ? UINT64_MAX :
				 phoff + phnum * 56);
	*phdrs = xmalloc(phnum * 56);
	if (core_pread_full(co->fd, *phdrs, phnum * 56, phoff) != (ssize_t)(phnum * 56)) {
		free(*phdrs);
		*phdrs = NULL;
		return cs_fail(err, CS_ERR_CORE, "cannot read core file '%s': %s",
			       co->info.path, errno ? strerror(errno) : "short read");
	}
	*phnum_out = phnum;
	return 0;
}

/* PT_LOAD segments, and the notes parsed into ns; note buffers are kept
 * in *bufs (ns points into them) for the caller to free. */
int core_read_segments(struct core *co, const unsigned char *phdrs,
			 size_t phnum, struct note_state *ns,
			 unsigned char ***bufs, size_t *nbufs,
			 struct cs_err *err)
{
	uint64_t note_total = 0;
	size_t i, j;

	co->segs = xcalloc(phnum, sizeof(*co->segs));
	for (i = 0; i < phnum; i++) {
		const unsigned char *ph = phdrs + i * 56;
		uint32_t type = le_u32(ph);
		uint64_t off = le_u64(ph + 8), vaddr = le_u64(ph + 16);
		uint64_t filesz = le_u64(ph + 32), memsz = le_u64(ph + 40);
		uint64_t end = off + filesz;

		if (end < off)
			end = UINT64_MAX;
		if ((type == PT_LOAD || type == PT_NOTE) &&
		    end > co->info.expected_size)
			co->info.expected_size = end;
		if (type == PT_NOTE && filesz) {
			unsigned char *buf;

			if (off > co->size || filesz > co->size - off)
				return truncated(co, err, "notes", end);
			note_total += filesz;
			if (note_total > MAX_NOTE_BYTES)
				return cs_fail(err, CS_ERR_CORE,
					       "core file '%s' is malformed: "
					       "notes of more than %u MiB",
					       co->info.path, MAX_NOTE_BYTES >> 20);
			buf = xmalloc((size_t)filesz);
			*bufs = xrealloc(*bufs, (*nbufs + 1) * sizeof(**bufs));
			(*bufs)[(*nbufs)++] = buf;
			if (core_pread_full(co->fd, buf, (size_t)filesz, off) !=
			    (ssize_t)filesz)
				return truncated(co, err, "notes", end);
			parse_notes(co, ns, buf, (size_t)filesz);
		}
		if (type != PT_LOAD || memsz == 0 || vaddr + memsz < vaddr)
			continue;
		co->segs[co->nsegs].start = vaddr;
		co->segs[co->nsegs].end = vaddr + memsz;
		co->segs[co->nsegs].offset = off;
		co->segs[co->nsegs].filesz = filesz < memsz ? filesz : memsz;
		co->segs[co->nsegs].flags = le_u32(ph + 4);
		if (off < co->size)
			co->segs[co->nsegs].avail = co->size - off;
		if (co->segs[co->nsegs].avail > co->segs[co->nsegs].filesz)
			co->segs[co->nsegs].avail = co->segs[co->nsegs].filesz;
		if (co->segs[co->nsegs].avail < co->segs[co->nsegs].filesz)
			co->info.truncated = 1;
		co->nsegs++;
	}
	qsort(co->segs, co->nsegs, sizeof(*co->segs), seg_cmp);
	/* Overlapping segments cannot both be right: keep the first. */
	for (i = 0, j = 0; i < co->nsegs; i++) {
		if (j && co->segs[i].start < co->segs[j - 1].end)
			continue;
		co->segs[j++] = co->segs[i];
	}
	co->nsegs = j;
	return 0;
}


