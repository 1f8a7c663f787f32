/*
 * What the files of the core-file backend share (attach/core.c opens a
 * core and serves reads; core_elf.c parses its ELF headers, notes and
 * segments; core_files.c finds the files it names on this machine;
 * core_process.c says what the process was).  Private to attach/core*.c:
 * everything else goes through attach/core.h.
 */
#ifndef COROSCOPE_ATTACH_CORE_INTERNAL_H
#define COROSCOPE_ATTACH_CORE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "attach/core.h"

/*
 * Limits on what a core may ask of us.  A real core stays far below each
 * (the kernel caps a process at 65530 mappings by default); a crafted one
 * must not make us allocate or loop without end.
 */
#define MAX_SEGMENTS (1u << 20)        /* program headers */
#define MAX_FILE_ENTRIES (1u << 20)    /* NT_FILE entries */
#define MAX_THREADS 65536              /* NT_PRSTATUS notes */
#define MAX_NOTE_BYTES (256u << 20)    /* all PT_NOTE segments together */
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
#define PRPSINFO_UID 16                /* __kernel_uid_t, 32 bits */
#define PRPSINFO_GID 20
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
	struct cs_warnings *warnings;  /* core_options.warnings */
};
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
	/* A note whose sizes ran past its segment's end: the notes after
	 * it unread (it and they may have held NT_FILE). */
	int malformed;
};

/* ---- core.c: the core file and its saved memory ---- */

/* pread() until len bytes, EOF or an error: bytes read, or -1. */
ssize_t core_pread_full(int fd, void *buf, size_t len, uint64_t off);

/* Add a warning to core_options.warnings (see common/warnings.h for
 * the bounds). */
void core_warn(struct core *co, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Index of the last segment starting at or below addr, or -1. */
long core_seg_below(const struct core *co, uint64_t addr);

/* The NT_FILE entry containing addr, or NULL. */
const struct fmap *core_fmap_find(const struct core *co, uint64_t addr);

/*
 * Read from the core file only: the bytes of [addr, addr + len) that
 * PT_LOAD segments hold, up to the first that none holds.  Bytes read, or
 * -1 for an I/O error on the core.
 */
long core_read_saved(struct core *co, uint64_t addr, void *buf, size_t len);

/* ---- core_elf.c: headers, notes, segments, mappings ---- */

/* "'X' is not a core file" + what, as CS_ERR_CORE. */
int core_not_core(struct core *co, struct cs_err *err, const char *what);

/* The ELF header and program headers; *phdrs is newly allocated. */
int core_read_headers(struct core *co, unsigned char **phdrs,
		      size_t *phnum_out, struct cs_err *err);

/* PT_LOAD segments, and the notes parsed into ns; note buffers are kept
 * in *bufs (ns points into them) for the caller to free. */
int core_read_segments(struct core *co, const unsigned char *phdrs,
		       size_t phnum, struct note_state *ns,
		       unsigned char ***bufs, size_t *nbufs,
		       struct cs_err *err);

/* NT_FILE into co->fmaps and co->files. */
void core_parse_file_note(struct core *co, const unsigned char *d,
			  size_t len);

/* The value of an NT_AUXV key, or 0. */
uint64_t core_auxv_get(const struct core *co, uint64_t key);

/* The core's copy of a mapped file's ELF header, summarised once. */
const struct elf_summary *core_file_mem(struct core *co,
					struct core_file *f);

/* The ELF header of a file on this machine (s->valid 0 when none). */
void core_summarize_file(const char *path, struct elf_summary *s);

/* ms->maps from the segments and NT_FILE entries. */
void core_build_maps(struct memsrc *ms, struct core *co);

/* ---- core_files.c: the core's files on this machine ---- */

/* root + path without a doubled slash; newly allocated. */
char *core_join_root(const char *root, const char *path);

/* The library search path "DIR:DIR..." into co->dirs. */
void core_split_dirs(struct core *co, const char *list);

/* Find f on this machine, once (sets f->state, f->host or f->why). */
void core_file_resolve(struct core *co, struct core_file *f);

/* Resolve a file about to be used; 0, or -1 (warned once) if unusable. */
int core_file_need(struct core *co, struct core_file *f);

/* The core_file named path, or NULL. */
struct core_file *core_file_by_path(struct core *co, const char *path);

/*
 * Bytes at addr from the mapped file, for memory the core left out: at
 * most len and at most limit (where saved memory or the mapping ends).
 * 0 when they are not available.
 */
long core_read_from_file(struct core *co, uint64_t addr, void *buf,
			 size_t len, uint64_t limit);

/* Which mapped file is the executable (co->exe_file). */
void core_find_exe(struct core *co);

/* ms->exe_path, or CS_ERR_NO_EXE (a warning with opt->exe_optional). */
int core_resolve_exe(struct memsrc *ms, struct core *co,
		     const struct core_options *opt, struct cs_err *err);

/* ---- core_process.c: what the core says about the process ---- */

/* co->execfn from AT_EXECFN in the saved stack. */
void core_read_execfn(struct core *co);

/* co->info: pid, names, command line, signal. */
void core_fill_info(struct core *co, const struct note_state *ns);

/* ms->threads from the NT_PRSTATUS notes. */
int core_make_threads(struct memsrc *ms, const struct note_state *ns,
		      struct core *co, struct cs_err *err);

#endif
