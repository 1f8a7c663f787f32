#include "attach/core.h"

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

#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

/*
 * Limits on what a core may ask of us.  A real core stays far below each
 * (the kernel caps a process at 65530 mappings by default); a crafted one
 * must not make us allocate or loop without end.
 */
#define MAX_SEGMENTS (1u << 20)        /* program headers */
#define MAX_FILE_ENTRIES (1u << 20)    /* NT_FILE entries */
#define MAX_THREADS 65536              /* NT_PRSTATUS notes */
#define MAX_NOTE_BYTES (256u << 20)    /* all PT_NOTE segments together */
#define MAX_WARNINGS 32
#define CMDLINE_MAX 4096               /* as live_cmdline() reads */
#define AUXV_SEARCH (256u * 1024)      /* stack searched for the auxv */
#define MAX_ARGS 65536
#define EXECFN_MAX 4096
#define BUILD_ID_MAX 64
#define HDR_PHNUM_MAX 512              /* program headers of a mapped file */
#define HDR_NOTE_MAX (64u * 1024)      /* bytes of one PT_NOTE read for ids */
#define HDR_LOADS 16
#define PAGE 4096u

/* struct elf_prstatus on x86-64. */
#define PRSTATUS_CURSIG 12             /* short */
#define PRSTATUS_PID 32                /* int */
#define PRSTATUS_REG 112               /* struct user_regs_struct */
#define REG_FS_BASE 21                 /* index of fs_base in it */
#define PRSTATUS_MIN (PRSTATUS_REG + 27 * 8)
/* struct elf_prpsinfo on x86-64. */
#define PRPSINFO_PID 24
#define PRPSINFO_FNAME 40              /* char[16] */
#define PRPSINFO_PSARGS 56             /* char[80] */
#define PRPSINFO_SIZE 136
/* siginfo_t. */
#define SIGINFO_SIGNO 0
#define SIGINFO_CODE 8
#define SIGINFO_FIELDS 16              /* si_addr, or si_pid for kill() */
#define SIGINFO_MIN 24
/* Auxiliary vector keys (bits/auxv.h). */
#define AUX_NULL 0
#define AUX_PHDR 3
#define AUX_RANDOM 25
#define AUX_EXECFN 31

struct seg {                   /* one PT_LOAD segment */
	uint64_t start, end;   /* p_vaddr, p_vaddr + p_memsz */
	uint64_t offset;       /* p_offset */
	uint64_t filesz;       /* p_filesz, at most p_memsz */
	uint64_t avail;        /* how much of filesz the core file holds */
	uint32_t flags;        /* p_flags */
};

struct fmap {                  /* one NT_FILE entry */
	uint64_t start, end;
	uint64_t offset;       /* file offset of start */
	size_t file;           /* index into core.files */
};

/* What the program headers of a mapped ELF file say. */
struct elf_summary {
	int valid;
	int type;              /* e_type */
	int has_interp;
	uint8_t id[BUILD_ID_MAX];
	size_t idlen;          /* 0: no build id */
	size_t nloads;
	struct {
		uint64_t offset, filesz;
		uint32_t flags;
	} loads[HDR_LOADS];
};

enum file_state {
	FILE_UNRESOLVED,
	FILE_OK,               /* found, build id matches */
	FILE_UNVERIFIED,       /* found; the core has no build id to check */
	FILE_MISSING,
	FILE_MISMATCH,
};

struct core_file {
	char *path;            /* as the target named it */
	int has_hdr;           /* hdr_addr is where offset 0 is mapped */
	uint64_t hdr_addr, hdr_len;
	int mem_done;
	struct elf_summary mem;    /* from the core's copy of the header */
	enum file_state state;
	char *host;            /* the file on this machine (OK, UNVERIFIED) */
	char *why;             /* MISSING, MISMATCH: what was looked at */
	int fd;                /* -1 until first read */
	int open_failed;
	uint64_t host_size;
	int warned;
	int disk_done;
	struct elf_summary disk;   /* from the file found, when needed */
};

struct core {
	int fd;
	char *path;            /* the core file, as given */
	uint64_t size;
	struct seg *segs;      /* sorted by start, no overlaps */
	size_t nsegs;
	struct fmap *fmaps;    /* sorted by start, no overlaps */
	size_t nfmaps;
	struct core_file *files;   /* sorted by path, unique */
	size_t nfiles;
	long exe_file;         /* index into files, or -1 */
	char *root;            /* sysroot, "" for none */
	char **dirs;           /* the library search path */
	size_t ndirs;
	char *exe_arg;         /* options.executable */
	char *execfn;          /* AT_EXECFN, read from the stack */
	unsigned char *auxv;   /* NT_AUXV */
	size_t auxv_len;
	struct core_info info;
};

static const struct memsrc_ops core_ops;

static const char *const signal_names[] = {
	NULL, "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT",
	"SIGBUS", "SIGFPE", "SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2",
	"SIGPIPE", "SIGALRM", "SIGTERM", "SIGSTKFLT", "SIGCHLD", "SIGCONT",
	"SIGSTOP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG", "SIGXCPU",
	"SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO", "SIGPWR",
	"SIGSYS",
};

const char *core_signal_name(int sig)
{
	if (sig <= 0 || (size_t)sig >= sizeof(signal_names) /
					sizeof(signal_names[0]))
		return NULL;
	return signal_names[sig];
}

/* ---- little-endian fields of untrusted buffers ---- */

static uint64_t get_u64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static uint32_t get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static int32_t get_i32(const unsigned char *p)
{
	return (int32_t)get_u32(p);
}

static uint16_t get_u16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* ---- files ---- */

/* pread() until len bytes, EOF or an error: bytes read, or -1. */
static ssize_t pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	if (off > (uint64_t)INT64_MAX)
		return 0;
	if (len > (uint64_t)INT64_MAX - off)
		len = (size_t)((uint64_t)INT64_MAX - off);
	while (done < len) {
		ssize_t r = pread(fd, (char *)buf + done, len - done,
				  (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return done ? (ssize_t)done : -1;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

/*
 * A regular file with something in it.  Anything else named by a core
 * (a device, a FIFO that would block, a /proc file that reads our own
 * memory) cannot be what the target had mapped.
 */
static int usable_file(const char *path, uint64_t *size)
{
	struct stat st;

	if (!path[0] || stat(path, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size <= 0)
		return 0;
	if (size)
		*size = (uint64_t)st.st_size;
	return 1;
}

static void add_warning(struct core *co, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add_warning(struct core *co, const char *fmt, ...)
{
	struct core_info *in = &co->info;
	struct strbuf sb;
	va_list ap;

	if (in->nwarnings > MAX_WARNINGS)
		return;
	strbuf_init(&sb);
	if (in->nwarnings == MAX_WARNINGS) {
		strbuf_addstr(&sb, "more warnings about this core not shown");
	} else {
		va_start(ap, fmt);
		strbuf_vaddf(&sb, fmt, ap);
		va_end(ap);
	}
	in->warnings = xrealloc(in->warnings,
				(in->nwarnings + 1) * sizeof(*in->warnings));
	in->warnings[in->nwarnings++] = strbuf_detach(&sb);
}

/* ---- segments and mapped files ---- */

/* Index of the last segment starting at or below addr, or -1. */
static long seg_below(const struct core *co, uint64_t addr)
{
	size_t lo = 0, hi = co->nsegs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (co->segs[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

static const struct fmap *fmap_find(const struct core *co, uint64_t addr)
{
	size_t lo = 0, hi = co->nfmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (co->fmaps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= co->fmaps[lo - 1].end)
		return NULL;
	return &co->fmaps[lo - 1];
}

/*
 * Read from the core file only: the bytes of [addr, addr + len) that
 * PT_LOAD segments hold, up to the first that none holds.  Bytes read, or
 * -1 for an I/O error on the core.
 */
static long read_saved(struct core *co, uint64_t addr, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		uint64_t a = addr + done, rel;
		long i = seg_below(co, a);
		const struct seg *s;
		size_t n;
		ssize_t r;

		if (a < addr || i < 0)
			break;
		s = &co->segs[i];
		if (a >= s->end)
			break;
		rel = a - s->start;
		if (rel >= s->avail)
			break;
		n = len - done;
		if (n > s->avail - rel)
			n = (size_t)(s->avail - rel);
		r = pread_full(co->fd, (char *)buf + done, n, s->offset + rel);
		if (r < 0)
			return -1;
		done += (size_t)r;
		if ((size_t)r < n)
			break;  /* the core shrank since we opened it */
	}
	return (long)done;
}

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
	return read_saved(m->co, m->base + off, buf, len);
}

static long fd_reader(void *ctx, uint64_t off, void *buf, size_t len)
{
	return pread_full(*(int *)ctx, buf, len, off);
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
		uint32_t namesz = get_u32(p + off), descsz = get_u32(p + off + 4);
		uint32_t type = get_u32(p + off + 8);
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
	s->type = get_u16(eh + 16);
	phoff = get_u64(eh + 32);
	phnum = get_u16(eh + 56);
	if (get_u16(eh + 54) != sizeof(ph) || phnum > HDR_PHNUM_MAX ||
	    phoff > limit || phnum * sizeof(ph) > limit - phoff)
		return;
	for (i = 0; i < phnum; i++) {
		uint32_t type, flags;
		uint64_t off, filesz, align;

		if (read_exact(rd, ctx, phoff + i * sizeof(ph), ph,
			       sizeof(ph)) < 0)
			return;
		type = get_u32(ph);
		flags = get_u32(ph + 4);
		off = get_u64(ph + 8);
		filesz = get_u64(ph + 32);
		align = get_u64(ph + 48);
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
		notes = malloc((size_t)filesz);
		if (!notes)
			continue;
		if (read_exact(rd, ctx, off, notes, (size_t)filesz) == 0)
			find_build_id(notes, (size_t)filesz, align == 8 ? 8 : 4,
				      s);
		free(notes);
	}
}

/* The core's copy of a mapped file's ELF header, summarised once. */
static const struct elf_summary *file_mem(struct core *co,
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

static void summarize_file(const char *path, struct elf_summary *s)
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

static void hex_id(struct strbuf *sb, const uint8_t *id, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		strbuf_addf(sb, "%02x", id[i]);
}

static char *join_root(const char *root, const char *path)
{
	struct strbuf sb;
	size_t rlen = strlen(root);

	while (rlen && root[rlen - 1] == '/' && path[0] == '/')
		rlen--;
	strbuf_init(&sb);
	strbuf_add(&sb, root, rlen);
	strbuf_addstr(&sb, path);
	return strbuf_detach(&sb);
}

static void add_candidate(char ***list, size_t *n, char *path)
{
	size_t i;

	for (i = 0; i < *n; i++) {
		if (!strcmp((*list)[i], path)) {
			free(path);
			return;
		}
	}
	*list = xrealloc(*list, (*n + 1) * sizeof(**list));
	(*list)[(*n)++] = path;
}

/*
 * Find the file on this machine, once: the first candidate whose build
 * id matches the core's copy of the header, or the first that exists
 * when the core holds no build id for it.  Prints nothing: file_need()
 * warns when a missing file turns out to matter.
 */
static void file_resolve(struct core *co, struct core_file *f)
{
	const struct elf_summary *mem = file_mem(co, f);
	int is_exe = co->exe_file >= 0 && f == &co->files[co->exe_file];
	struct strbuf why;
	char **cand = NULL;
	size_t ncand = 0, i;
	int mismatch = 0;

	if (f->state != FILE_UNRESOLVED)
		return;
	if (is_exe && co->exe_arg) {
		add_candidate(&cand, &ncand, xstrdup(co->exe_arg));
	} else {
		add_candidate(&cand, &ncand, join_root(co->root, f->path));
		for (i = 0; i < co->ndirs; i++) {
			struct strbuf sb;

			strbuf_init(&sb);
			strbuf_addf(&sb, "%s/%s", co->dirs[i],
				    cs_base_name(f->path));
			add_candidate(&cand, &ncand, strbuf_detach(&sb));
		}
		/* The name it was started by (a symlink the kernel resolved
		 * may exist where the real path does not). */
		if (is_exe && co->execfn && co->execfn[0] == '/')
			add_candidate(&cand, &ncand,
				      join_root(co->root, co->execfn));
	}

	strbuf_init(&why);
	for (i = 0; i < ncand && !f->host; i++) {
		struct elf_summary disk;
		uint64_t size;

		if (why.len)
			strbuf_addstr(&why, ", ");
		strbuf_addf(&why, "'%s'", cand[i]);
		if (!usable_file(cand[i], &size))
			continue;
		if (!mem->idlen) {
			f->state = FILE_UNVERIFIED;
		} else {
			summarize_file(cand[i], &disk);
			if (disk.idlen != mem->idlen ||
			    memcmp(disk.id, mem->id, mem->idlen)) {
				strbuf_addstr(&why, " with build id ");
				if (disk.idlen)
					hex_id(&why, disk.id, disk.idlen);
				else
					strbuf_addstr(&why, "none");
				strbuf_addstr(&why, ", not ");
				hex_id(&why, mem->id, mem->idlen);
				mismatch = 1;
				continue;
			}
			f->state = FILE_OK;
		}
		f->host = cand[i];
		f->host_size = size;
		cand[i] = NULL;
	}
	if (!f->host) {
		f->state = mismatch ? FILE_MISMATCH : FILE_MISSING;
		f->why = strbuf_detach(&why);
	} else {
		strbuf_release(&why);
	}
	for (i = 0; i < ncand; i++)
		free(cand[i]);
	free(cand);
}

/* Resolve a file we are about to use; warn once if it is unusable. */
static int file_need(struct core *co, struct core_file *f)
{
	file_resolve(co, f);
	if (f->state == FILE_OK || f->state == FILE_UNVERIFIED)
		return 0;
	if (!f->warned) {
		f->warned = 1;
		add_warning(co, "%s '%s' (looked for %s); what the core did "
			    "not save of it is unreadable",
			    f->state == FILE_MISMATCH ? "no copy matches" :
			    "cannot find", f->path, f->why);
	}
	return -1;
}

static int file_cmp(const void *a, const void *b)
{
	const struct core_file *x = a, *y = b;

	return strcmp(x->path, y->path);
}

static struct core_file *file_by_path(struct core *co, const char *path)
{
	struct core_file key;

	if (!co->nfiles)
		return NULL;
	key.path = (char *)path;
	return bsearch(&key, co->files, co->nfiles, sizeof(*co->files),
		       file_cmp);
}

/*
 * Bytes at addr from the mapped file, for memory the core left out: at
 * most len and at most limit (where saved memory or the mapping ends).
 * 0 when they are not available.
 */
static long read_from_file(struct core *co, uint64_t addr, void *buf,
			   size_t len, uint64_t limit)
{
	const struct fmap *fm = fmap_find(co, addr);
	struct core_file *f;
	uint64_t foff, mapped;
	size_t n, from_file;
	ssize_t r;

	if (!fm)
		return 0;
	f = &co->files[fm->file];
	if (file_need(co, f) < 0 || f->open_failed)
		return 0;
	if (f->fd < 0) {
		struct stat st;
		const char *why = NULL;

		f->fd = open(f->host, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (f->fd < 0 || fstat(f->fd, &st) < 0)
			why = strerror(errno);
		else if (!S_ISREG(st.st_mode))
			why = "not a regular file";
		if (why) {
			if (f->fd >= 0)
				close(f->fd);
			f->fd = -1;
			f->open_failed = 1;
			add_warning(co, "cannot read '%s' for core '%s': %s",
				    f->host, co->info.path, why);
			return 0;
		}
		f->host_size = (uint64_t)st.st_size;
	}
	if (fm->end - addr < limit)
		limit = fm->end - addr;
	if (addr - fm->start > UINT64_MAX - fm->offset)
		return 0;
	foff = fm->offset + (addr - fm->start);
	/* The page holding the end of the file is mapped, zero-filled past
	 * the end; further pages would fault in the process. */
	mapped = (f->host_size + PAGE - 1) / PAGE * PAGE;
	if (foff >= mapped)
		return 0;
	if (mapped - foff < limit)
		limit = mapped - foff;
	n = len < limit ? len : (size_t)limit;
	from_file = foff < f->host_size ?
		    (f->host_size - foff < n ? (size_t)(f->host_size - foff) : n) :
		    0;
	r = from_file ? pread_full(f->fd, buf, from_file, foff) : 0;
	if (r < 0)
		return 0;
	if ((size_t)r < from_file)
		return r;  /* the file shrank */
	memset((char *)buf + from_file, 0, n - from_file);
	return (long)n;
}

static long core_read_raw(struct memsrc *ms, uint64_t addr, void *buf,
			  size_t len, struct cs_err *err)
{
	struct core *co = ms->backend;
	size_t done = 0;

	while (done < len) {
		uint64_t a = addr + done, limit = UINT64_MAX;
		long i = seg_below(co, a), got;
		size_t want = len - done;

		if (a < addr)
			break;
		if (i >= 0 && a < co->segs[i].end) {
			const struct seg *s = &co->segs[i];
			uint64_t rel = a - s->start;

			if (rel < s->avail) {
				got = read_saved(co, a, (char *)buf + done,
						 want < s->avail - rel ? want :
						 (size_t)(s->avail - rel));
				if (got < 0)
					return cs_fail(err, CS_ERR_CORE,
						       "cannot read core file "
						       "'%s': %s", co->info.path,
						       strerror(errno));
				if (got == 0)
					break;
				done += (size_t)got;
				continue;
			}
			/* Cut off by truncation: the page was saved, so it
			 * may differ from the file. */
			if (rel < s->filesz)
				break;
			limit = s->end - a;
		} else if ((size_t)(i + 1) < co->nsegs) {
			limit = co->segs[i + 1].start - a;
		}
		got = read_from_file(co, a, (char *)buf + done, want, limit);
		if (got <= 0)
			break;
		done += (size_t)got;
	}
	return (long)done;
}

/* ---- the notes ---- */

struct note_thread {
	int tid;
	int cursig;                    /* pr_cursig */
	uint64_t fs_base;
	struct cs_regs regs;           /* pr_reg */
	int has_siginfo;
	unsigned char siginfo[SIGINFO_MIN];
};

struct note_state {
	struct note_thread *th;
	size_t nthreads, alloc;
	int has_prpsinfo;
	unsigned char prpsinfo[PRPSINFO_SIZE];
	const unsigned char *file_note;  /* the first NT_FILE, in a notes buffer */
	size_t file_len;
};

static void note_thread(struct note_state *ns, const unsigned char *d,
			size_t len)
{
	struct note_thread *t;

	if (len < PRSTATUS_MIN || ns->nthreads >= MAX_THREADS)
		return;
	ns->th = xgrow(ns->th, &ns->alloc, ns->nthreads + 1, sizeof(*ns->th));
	t = &ns->th[ns->nthreads++];
	memset(t, 0, sizeof(*t));
	t->tid = get_i32(d + PRSTATUS_PID);
	t->fs_base = get_u64(d + PRSTATUS_REG + REG_FS_BASE * 8);
	cs_regs_from_image(&t->regs, d + PRSTATUS_REG);
	t->cursig = (int16_t)get_u16(d + PRSTATUS_CURSIG);
}

/* Walk one PT_NOTE segment's bytes (4-byte aligned, as cores are). */
static void parse_notes(struct core *co, struct note_state *ns,
			const unsigned char *p, size_t len)
{
	size_t off = 0;

	while (len - off >= 12) {
		uint32_t namesz = get_u32(p + off), descsz = get_u32(p + off + 4);
		uint32_t type = get_u32(p + off + 8);
		size_t name_off = off + 12, desc_off, next;
		const unsigned char *name = p + name_off, *d;
		int is_core;

		if (namesz > len - name_off)
			return;
		desc_off = name_off + (((size_t)namesz + 3) & ~(size_t)3);
		if (desc_off > len || descsz > len - desc_off)
			return;
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

static uint64_t auxv_get(const struct core *co, uint64_t key)
{
	size_t i;

	for (i = 0; i + 16 <= co->auxv_len; i += 16) {
		uint64_t k = get_u64(co->auxv + i);

		if (k == AUX_NULL)
			break;
		if (k == key)
			return get_u64(co->auxv + i + 8);
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
 * prefix.  gdb writes a page size of 1 (offsets in bytes).
 */
static void parse_file_note(struct core *co, const unsigned char *d,
			    size_t len)
{
	uint64_t count, pagesz;
	const char *names, *end;
	struct name_ref *refs;
	size_t n = 0, i, j;

	if (len < 16)
		return;
	count = get_u64(d);
	pagesz = get_u64(d + 8);
	if (count > MAX_FILE_ENTRIES || count > (len - 16) / 24)
		return;
	names = (const char *)d + 16 + count * 24;
	end = (const char *)d + len;
	refs = xcalloc(count ? (size_t)count : 1, sizeof(*refs));
	co->fmaps = xcalloc(count ? (size_t)count : 1, sizeof(*co->fmaps));
	for (i = 0; i < count; i++) {
		const unsigned char *e = d + 16 + i * 24;
		const char *nul = memchr(names, '\0', (size_t)(end - names));
		uint64_t start = get_u64(e), stop = get_u64(e + 8);
		uint64_t pgoff = get_u64(e + 16);

		if (!nul)
			break;
		if (stop > start && names[0] == '/' &&
		    (pagesz == 0 || pgoff <= UINT64_MAX / pagesz)) {
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

/* ---- mappings, threads and what the process was ---- */

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
	const struct elf_summary *s = file_mem(co, f);
	size_t i;

	perms[0] = '\0';
	if (!s->valid || !s->nloads) {
		file_resolve(co, f);
		if (!f->host)
			return;
		if (!f->disk_done) {
			f->disk_done = 1;
			summarize_file(f->host, &f->disk);
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
static void build_maps(struct memsrc *ms, struct core *co)
{
	struct cs_mapping *maps = NULL, *m;
	size_t n = 0, alloc = 0, i;

	for (i = 0; i < co->nsegs; i++) {
		const struct seg *s = &co->segs[i];
		const struct fmap *fm = fmap_find(co, s->start);

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
		long k = seg_below(co, a);

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

/*
 * Printable text from the target, as live_cmdline() makes it: trailing
 * NULs dropped (and spaces, with trim_spaces: the kernel turns the NULs
 * of pr_psargs into spaces), separators to spaces, controls to '?'.
 */
static char *clean_text(const char *s, size_t n, int trim_spaces)
{
	char *out;
	size_t i;

	while (n > 0 && (s[n - 1] == '\0' || (trim_spaces && s[n - 1] == ' ')))
		n--;
	if (n == 0)
		return NULL;
	out = xmalloc(n + 1);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\0' || c == '\n' || c == '\t')
			out[i] = ' ';
		else if (c < 0x20 || c == 0x7f)
			out[i] = '?';
		else
			out[i] = (char)c;
	}
	out[n] = '\0';
	return out;
}

static uint64_t word_at(const unsigned char *win, size_t k)
{
	return get_u64(win + k * 8);
}

/*
 * The command line as /proc/PID/cmdline showed it: the argv strings in
 * the saved stack.  The kernel put the auxiliary vector just below the
 * AT_RANDOM bytes, and below it envp[], NULL, argv[], NULL, argc; the
 * auxv is found by its copy in NT_AUXV, then the arrays are walked down.
 * NULL when any of it does not add up.
 */
static char *cmdline_from_stack(struct core *co)
{
	uint64_t anchor = auxv_get(co, AUX_RANDOM), lo, arg_start, len;
	unsigned char *win, *buf;
	size_t wlen, p, k, argv_end, nul_end, envc = 0;
	long i, got;
	char *out;

	if (!anchor)
		anchor = auxv_get(co, AUX_EXECFN);
	anchor &= ~(uint64_t)7;
	if (!anchor || co->auxv_len < 32)
		return NULL;
	i = seg_below(co, anchor);
	if (i < 0 || anchor > co->segs[i].end)
		return NULL;
	lo = co->segs[i].start;
	if (anchor - lo > AUXV_SEARCH)
		lo = anchor - AUXV_SEARCH;
	wlen = (size_t)(anchor - lo);
	if (wlen < co->auxv_len + 32)
		return NULL;
	win = xmalloc(wlen);
	got = read_saved(co, lo, win, wlen);
	if (got != (long)wlen) {
		free(win);
		return NULL;
	}
	/* lo is 8-aligned (anchor is, and so are segments), so every
	 * multiple of 8 in win is an aligned word of the target. */
	for (p = (wlen - co->auxv_len) & ~(size_t)7; ; p -= 8) {
		if (!memcmp(win + p, co->auxv, co->auxv_len))
			break;
		if (p < 8) {
			free(win);
			return NULL;
		}
	}
	/* Word indexes below the auxv: envp's NULL, envp, argv's NULL... */
	k = p / 8;
	if (k < 3 || word_at(win, k - 1) != 0)
		goto fail;
	k--;
	while (k > 0 && word_at(win, k - 1) != 0) {
		k--;
		envc++;
	}
	if (k == 0)
		goto fail;
	argv_end = --k;       /* index of argv's NULL */
	for (;;) {
		size_t argc;

		if (k == 0)
			goto fail;
		k--;
		argc = argv_end - k - 1;
		if (word_at(win, k) == argc)
			break;
		if (word_at(win, k) == 0 || argc > MAX_ARGS)
			goto fail;
	}
	if (argv_end - k - 1 == 0)
		goto fail;
	arg_start = word_at(win, k + 1);
	len = CMDLINE_MAX;
	if (envc) {
		uint64_t env_start = word_at(win, argv_end + 1);

		if (env_start <= arg_start)
			goto fail;
		if (env_start - arg_start < len)
			len = env_start - arg_start;
	}
	free(win);
	buf = xmalloc((size_t)len);
	got = read_saved(co, arg_start, buf, (size_t)len);
	if (got <= 0) {
		free(buf);
		return NULL;
	}
	nul_end = (size_t)got;
	if (!envc) {
		/* Without an environment the arguments end at argc NULs. */
		size_t argc = 0, j;

		for (j = 0; j < (size_t)got; j++) {
			if (buf[j] == '\0' && ++argc == argv_end - k - 1) {
				nul_end = j + 1;
				break;
			}
		}
	}
	out = clean_text((const char *)buf, nul_end, 0);
	free(buf);
	return out;

fail:
	free(win);
	return NULL;
}

static void read_execfn(struct core *co)
{
	uint64_t a = auxv_get(co, AUX_EXECFN);
	char *buf;
	long got;

	if (!a)
		return;
	buf = xmalloc(EXECFN_MAX);
	got = read_saved(co, a, buf, EXECFN_MAX - 1);
	if (got > 0) {
		buf[got] = '\0';
		if (strlen(buf) < (size_t)got && buf[0])
			co->execfn = xstrdup(buf);
	}
	free(buf);
}

/* The executable: the mapped file holding AT_PHDR, else the first file
 * whose saved header is an executable's. */
static void find_exe(struct core *co)
{
	uint64_t phdr = auxv_get(co, AUX_PHDR);
	const struct fmap *fm = phdr ? fmap_find(co, phdr) : NULL;
	size_t i;

	co->exe_file = -1;
	if (fm) {
		co->exe_file = (long)fm->file;
		return;
	}
	for (i = 0; i < co->nfmaps; i++) {
		struct core_file *f = &co->files[co->fmaps[i].file];
		const struct elf_summary *s = file_mem(co, f);

		if (s->valid && (s->type == ET_EXEC || s->has_interp)) {
			co->exe_file = (long)co->fmaps[i].file;
			return;
		}
	}
}

static int resolve_exe(struct memsrc *ms, struct core *co,
		       const struct core_options *opt, struct cs_err *err)
{
	struct strbuf why;
	int ret;

	if (co->exe_file >= 0) {
		struct core_file *f = &co->files[co->exe_file];

		co->info.exe_target_path = xstrdup(f->path);
		file_resolve(co, f);
		if (f->host) {
			ms->exe_path = xstrdup(f->host);
			return 0;
		}
		f->warned = 1;  /* reported here, not again on reads */
		strbuf_init(&why);
		strbuf_addf(&why, "looked for %s", f->why);
	} else if (co->exe_arg) {
		if (usable_file(co->exe_arg, NULL)) {
			ms->exe_path = xstrdup(co->exe_arg);
			return 0;
		}
		strbuf_init(&why);
		strbuf_addf(&why, "looked for '%s'", co->exe_arg);
	} else {
		strbuf_init(&why);
		strbuf_addstr(&why, "the core does not say which mapped file it is");
	}
	if (opt->exe_optional) {
		add_warning(co, "cannot find the executable of core '%s' (%s)",
			    co->info.path, why.buf);
		ret = 0;
	} else {
		ret = cs_fail(err, CS_ERR_NO_EXE,
			      "cannot find the executable of core '%s' (%s); pass "
			      "it as the second argument or use --sysroot",
			      co->info.path, why.buf);
	}
	strbuf_release(&why);
	return ret;
}

static int fault_has_addr(int sig)
{
	return sig == 4 || sig == 5 || sig == 7 || sig == 8 || sig == 11;
}

static void fill_info(struct core *co, const struct note_state *ns)
{
	struct core_info *in = &co->info;
	char *psargs = NULL;
	size_t i;

	if (ns->has_prpsinfo) {
		const char *fname = (const char *)ns->prpsinfo + PRPSINFO_FNAME;
		char *c;

		in->pid = get_i32(ns->prpsinfo + PRPSINFO_PID);
		c = clean_text(fname, strnlen(fname, 16), 1);
		if (c) {
			memcpy(in->comm, c, strlen(c) + 1);
			free(c);
		}
		psargs = clean_text((const char *)ns->prpsinfo + PRPSINFO_PSARGS,
				    strnlen((const char *)ns->prpsinfo +
					    PRPSINFO_PSARGS, 80), 1);
	}
	if (in->pid <= 0) {
		/* The main thread's tid is the pid, and the lowest. */
		in->pid = 0;
		for (i = 0; i < ns->nthreads; i++)
			if (ns->th[i].tid > 0 &&
			    (!in->pid || ns->th[i].tid < in->pid))
				in->pid = ns->th[i].tid;
	}
	in->psargs = psargs;
	in->command = cmdline_from_stack(co);
	if (!in->command && psargs)
		in->command = xstrdup(psargs);

	/*
	 * The kernel lists the thread that took the signal first and gives
	 * every thread its number in pr_cursig; gdb gives it only to a
	 * thread stopped by a signal, and 0 to all when it saved a running
	 * process (its SIGSTOP siginfo is its own doing, not the target's).
	 */
	for (i = 0; i < ns->nthreads && !in->signal; i++) {
		const struct note_thread *t = &ns->th[i];

		if (t->cursig <= 0)
			continue;
		in->signal = t->cursig;
		in->signal_tid = t->tid;
		if (!t->has_siginfo ||
		    get_i32(t->siginfo + SIGINFO_SIGNO) != t->cursig)
			continue;
		in->has_siginfo = 1;
		in->si_code = get_i32(t->siginfo + SIGINFO_CODE);
		if (in->si_code > 0 && fault_has_addr(in->signal)) {
			in->has_fault_addr = 1;
			in->fault_addr = get_u64(t->siginfo + SIGINFO_FIELDS);
		} else if (in->si_code == 0 /* SI_USER: kill() */ ||
			   in->si_code == -1 /* SI_QUEUE: sigqueue() */ ||
			   in->si_code == -3 /* SI_MESGQ */ ||
			   in->si_code == -4 /* SI_ASYNCIO */ ||
			   in->si_code == -6 /* SI_TKILL: tkill(), abort() */) {
			/* These carry si_pid; SI_TIMER and SI_SIGIO put other
			 * fields in that place. */
			in->sender_pid = get_i32(t->siginfo + SIGINFO_FIELDS);
		}
	}
	in->signal_name = core_signal_name(in->signal);
}

/* ---- opening ---- */

static int not_core(struct core *co, struct cs_err *err, const char *what)
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

/* The ELF header and program headers; *phdrs is newly allocated. */
static int read_headers(struct core *co, unsigned char **phdrs,
			size_t *phnum_out, struct cs_err *err)
{
	unsigned char eh[64], sh[64];
	uint64_t phoff;
	size_t phnum;
	int type, machine;

	*phdrs = NULL;
	if (co->size < sizeof(eh) ||
	    pread_full(co->fd, eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh, ELFMAG, SELFMAG))
		return not_core(co, err, "");
	if (eh[EI_CLASS] != ELFCLASS64 || eh[EI_DATA] != ELFDATA2LSB)
		return not_core(co, err, " of a 64-bit little-endian machine");
	type = get_u16(eh + 16);
	machine = get_u16(eh + 18);
	if (type != ET_CORE)
		return not_core(co, err,
				type == ET_EXEC ? " (it is an ELF executable)" :
				type == ET_DYN ? " (it is an ELF shared object "
						 "or executable)" :
				type == ET_REL ? " (it is an ELF object file)" :
				" (it is an ELF file of another type)");
	if (machine != EM_X86_64)
		return cs_fail(err, CS_ERR_CORE,
			       "core file '%s' is for ELF machine %d; coroscope "
			       "reads x86-64 cores", co->info.path, machine);
	if (get_u16(eh + 54) != 56)
		return cs_fail(err, CS_ERR_CORE,
			       "core file '%s' is malformed: program headers of "
			       "%u bytes", co->info.path, get_u16(eh + 54));
	phoff = get_u64(eh + 32);
	phnum = get_u16(eh + 56);
	if (phnum == PN_XNUM) {
		/* More than 65534 segments: the count is in section 0. */
		uint64_t shoff = get_u64(eh + 40);

		if (get_u16(eh + 58) < sizeof(sh) || shoff == 0)
			return cs_fail(err, CS_ERR_CORE,
				       "core file '%s' is malformed: no section "
				       "header holds its segment count",
				       co->info.path);
		if (shoff > co->size || co->size - shoff < sizeof(sh))
			return truncated(co, err, "section headers",
					 shoff + sizeof(sh));
		if (pread_full(co->fd, sh, sizeof(sh), shoff) != (ssize_t)sizeof(sh))
			return truncated(co, err, "section headers",
					 shoff + sizeof(sh));
		phnum = get_u32(sh + 44);
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
	if (pread_full(co->fd, *phdrs, phnum * 56, phoff) != (ssize_t)(phnum * 56)) {
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
static int read_segments(struct core *co, const unsigned char *phdrs,
			 size_t phnum, struct note_state *ns,
			 unsigned char ***bufs, size_t *nbufs,
			 struct cs_err *err)
{
	uint64_t note_total = 0;
	size_t i, j;

	co->segs = xcalloc(phnum, sizeof(*co->segs));
	for (i = 0; i < phnum; i++) {
		const unsigned char *ph = phdrs + i * 56;
		uint32_t type = get_u32(ph);
		uint64_t off = get_u64(ph + 8), vaddr = get_u64(ph + 16);
		uint64_t filesz = get_u64(ph + 32), memsz = get_u64(ph + 40);
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
			if (pread_full(co->fd, buf, (size_t)filesz, off) !=
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
		co->segs[co->nsegs].flags = get_u32(ph + 4);
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

static int make_threads(struct memsrc *ms, const struct note_state *ns,
			struct core *co, struct cs_err *err)
{
	size_t i;

	if (!ns->nthreads)
		return cs_fail(err, CS_ERR_CORE,
			       "core file '%s' has no thread (NT_PRSTATUS) notes",
			       co->info.path);
	ms->threads = xcalloc(ns->nthreads, sizeof(*ms->threads));
	for (i = 0; i < ns->nthreads; i++) {
		ms->threads[i].tid = ns->th[i].tid;
		ms->threads[i].fs_base = ns->th[i].fs_base;
		ms->threads[i].has_fs_base = 1;
		ms->threads[i].regs = ns->th[i].regs;
		ms->threads[i].has_regs = 1;
	}
	ms->nthreads = ns->nthreads;
	return 0;
}

static void split_dirs(struct core *co, const char *list)
{
	const char *p = list;

	/* Bounded by the string: each pass consumes one element. */
	while (p && *p) {
		size_t n = strcspn(p, ":");

		if (n) {
			co->dirs = xrealloc(co->dirs,
					    (co->ndirs + 1) * sizeof(*co->dirs));
			co->dirs[co->ndirs++] = xstrndup(p, n);
		}
		p += n;
		if (*p == ':')
			p++;
	}
}

static int open_core_file(struct core *co, struct cs_err *err)
{
	struct stat st;

	co->fd = open(co->info.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (co->fd < 0)
		return cs_fail(err, CS_ERR_CORE, "cannot open core file '%s': %s",
			       co->info.path, strerror(errno));
	if (fstat(co->fd, &st) < 0)
		return cs_fail(err, CS_ERR_CORE, "cannot open core file '%s': %s",
			       co->info.path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return not_core(co, err, S_ISDIR(st.st_mode) ?
				" (it is a directory)" : " (not a regular file)");
	co->size = (uint64_t)st.st_size;
	co->info.size = co->size;
	return 0;
}

int core_open(struct memsrc **out, const char *path,
	      const struct core_options *opt, struct cs_err *err)
{
	static const struct core_options no_options;
	struct memsrc *ms = xcalloc(1, sizeof(*ms));
	struct core *co = xcalloc(1, sizeof(*co));
	struct note_state ns;
	unsigned char *phdrs = NULL, **bufs = NULL;
	size_t phnum = 0, nbufs = 0, i;
	int ret;

	*out = NULL;
	if (!opt)
		opt = &no_options;
	co->fd = -1;
	co->exe_file = -1;
	co->path = xstrdup(path);
	co->info.path = co->path;
	ret = memsrc_init(ms, &core_ops, co, err);
	if (ret) {
		free(co->path);
		free(co);
		free(ms);
		return ret;
	}
	/* From here memsrc_free() releases everything. */
	memset(&ns, 0, sizeof(ns));
	ms->root = xstrdup(opt->sysroot ? opt->sysroot : "");
	co->root = ms->root;
	split_dirs(co, opt->lib_search_path);
	if (opt->executable)
		co->exe_arg = xstrdup(opt->executable);

	ret = open_core_file(co, err);
	if (!ret)
		ret = read_headers(co, &phdrs, &phnum, err);
	if (!ret)
		ret = read_segments(co, phdrs, phnum, &ns, &bufs, &nbufs, err);
	if (!ret && ns.file_note)
		parse_file_note(co, ns.file_note, ns.file_len);
	if (!ret && !co->nfmaps)
		ret = cs_fail(err, CS_ERR_CORE,
			      "core file '%s' lists no mapped files (no NT_FILE "
			      "note; Linux writes one since 3.7)", co->info.path);
	if (!ret)
		ret = make_threads(ms, &ns, co, err);
	if (!ret) {
		read_execfn(co);
		find_exe(co);
		fill_info(co, &ns);
		ms->pid = co->info.pid;
		ret = resolve_exe(ms, co, opt, err);
	}
	if (!ret)
		build_maps(ms, co);

	free(phdrs);
	for (i = 0; i < nbufs; i++)
		free(bufs[i]);
	free(bufs);
	free(ns.th);
	if (ret) {
		memsrc_free(ms);
		return ret;
	}
	*out = ms;
	return 0;
}

const struct core_info *core_info(const struct memsrc *ms)
{
	const struct core *co;

	if (!ms || ms->ops != &core_ops || !ms->backend)
		return NULL;
	co = ms->backend;
	return &co->info;
}

static char *core_host_path(const struct memsrc *ms, const char *path)
{
	struct core *co = ms->backend;
	struct core_file *f;

	if (!co)
		return join_root(ms->root ? ms->root : "", path);
	f = file_by_path(co, path);
	if (!f)
		return join_root(co->root, path);
	if (file_need(co, f) < 0)
		return xstrdup("");
	return xstrdup(f->host);
}

static void core_close(struct memsrc *ms)
{
	struct core *co = ms->backend;
	size_t i;

	if (!co)
		return;
	if (co->fd >= 0)
		close(co->fd);
	for (i = 0; i < co->nfiles; i++) {
		struct core_file *f = &co->files[i];

		if (f->fd >= 0)
			close(f->fd);
		free(f->path);
		free(f->host);
		free(f->why);
	}
	free(co->files);
	free(co->segs);
	free(co->fmaps);
	for (i = 0; i < co->ndirs; i++)
		free(co->dirs[i]);
	free(co->dirs);
	free(co->exe_arg);
	free(co->execfn);
	free(co->auxv);
	free(co->info.command);
	free(co->info.psargs);
	free(co->info.exe_target_path);
	for (i = 0; i < co->info.nwarnings; i++)
		free(co->info.warnings[i]);
	free(co->info.warnings);
	free(co->path);
	free(co);
	ms->backend = NULL;
}

static const struct memsrc_ops core_ops = {
	.read_raw = core_read_raw,
	.close = core_close,
	.host_path = core_host_path,
};
