/*
 * The core-file backend of struct memsrc: an x86-64 ELF core written by
 * the kernel (a crash, os.abort()) or by gdb's gcore, read with pread()
 * and parsed by hand.  The core is untrusted input: every offset, size
 * and count in it is checked before use.
 *
 * Where things come from:
 *   maps      PT_LOAD segments (address, size, permissions from p_flags)
 *             joined with the NT_FILE note (path and file offset).  gcore
 *             leaves whole read-only file mappings out of the PT_LOAD
 *             list; those are listed from NT_FILE with the permissions of
 *             the file's own program header covering them (read from the
 *             ELF header page in the core, else from the file).
 *   threads   one per NT_PRSTATUS note: tid = pr_pid, fs_base from
 *             pr_reg (always known in a core).
 *   pid       NT_PRPSINFO pr_pid.
 *   root      --sysroot, or "".
 *   exe_path  the executable on this machine (see below).
 *
 * Memory: bytes saved in a PT_LOAD segment are read from the core.  Bytes
 * the core deliberately left out (past p_filesz, or a mapping with no
 * segment) belonged to file mappings never written to, so they are read
 * from the mapped file at its NT_FILE offset -- but only once that file's
 * build id matches the build id in the core's copy of its ELF header
 * (the first page of a mapped ELF file is saved by both the kernel and
 * gdb).  A missing or mismatched file gives one warning and its bytes are
 * unreadable.  A file whose header is not in the core cannot be checked
 * and is used as found.
 *
 * Files are looked for as sysroot + path, then as DIR/basename(path) for
 * each DIR of the library search path, in that order; the first one with
 * the right build id wins.  The executable is the NT_FILE file holding
 * AT_PHDR (from NT_AUXV), failing that the first mapped file whose saved
 * ELF header is ET_EXEC or has PT_INTERP; it is also looked for under
 * AT_EXECFN.  options.executable replaces that search, and must match the
 * core's build id when the core has one.
 *
 * Truncated cores: when the ELF header, program headers or notes are cut
 * off the core is unusable (CS_ERR_CORE "core file 'X' is truncated").
 * When only memory is cut off, core_open() succeeds: the missing bytes
 * are unreadable, not read from files (a written page differs from its
 * file), and core_info() reports truncated with both sizes so that the
 * command can explain a failure that follows.
 *
 * Paths named " (deleted)" in NT_FILE lose the suffix; their mappings are
 * not flagged deleted, because every file opened for a core is checked
 * against the core's build id, so a stale name cannot mislead.
 */
#ifndef COROSCOPE_ATTACH_CORE_H
#define COROSCOPE_ATTACH_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "attach/memsrc.h"
#include "common/warnings.h"

struct core_options {
	const char *sysroot;          /* prefix of the target's paths, or NULL */
	const char *lib_search_path;  /* "DIR:DIR...", searched by basename */
	const char *executable;       /* overrides the core's executable */
	/* Leave exe_path NULL (with a warning) rather than fail with
	 * CS_ERR_NO_EXE: for tools that only read memory (the fuzz harness). */
	int exe_optional;
	/*
	 * Where the core's warnings go (origin CS_WARN_CORE: a file that is
	 * missing or does not match), or NULL.  Appended to while the
	 * source is read, not only by core_open() (a file is looked for
	 * when first needed): must outlive the source.  The collection's
	 * list (cli/collect.h).
	 */
	struct cs_warnings *warnings;
};

/* How the process died and what the core says about it. */
struct core_info {
	const char *path;          /* the core file, as given */
	int pid;
	char comm[17];             /* pr_fname: the short process name */
	/* The command line, read from argv in the saved stack as
	 * /proc/PID/cmdline would give it; else NT_PRPSINFO's pr_psargs
	 * (at most 80 bytes); NULL when neither is there. */
	char *command;
	char *psargs;              /* NT_PRPSINFO's pr_psargs, or NULL */
	/* NT_PRPSINFO's pr_uid and pr_gid, the process's user, when
	 * has_ids */
	int has_ids;
	long uid, gid;

	int by_gdb;                /* gdb wrote it (gcore), not the kernel */
	int signal;                /* 0: no signal (gcore of a running process) */
	const char *signal_name;   /* "SIGSEGV"; NULL when signal is 0 */
	int signal_tid;            /* the thread that took it; 0 unknown */
	int si_code;               /* from NT_SIGINFO when has_siginfo */
	int has_siginfo;
	int has_fault_addr;        /* si_addr is meaningful (SIGSEGV...) */
	uint64_t fault_addr;
	int sender_pid;            /* kill()/tkill() by this process; 0 unknown */

	char *exe_target_path;     /* the executable as the target named it */

	/* Memory is missing from the end.  No warning is added for it: the
	 * command says it, or explains with it why reading failed. */
	int truncated;
	uint64_t size;             /* bytes in the core file */
	uint64_t expected_size;    /* bytes its program headers describe */
};

/*
 * Open a core file.  Errors: CS_ERR_CORE (not a core file, not x86-64,
 * truncated headers or notes, no thread or mapped-file notes),
 * CS_ERR_NO_EXE (the executable cannot be found, or the one given does
 * not match the core).
 */
int core_open(struct memsrc **out, const char *path,
	      const struct core_options *opt, struct cs_err *err);

/* The crash information of a source opened by core_open(), or NULL for
 * any other source.  Valid until memsrc_free(). */
const struct core_info *core_info(const struct memsrc *ms);

/*
 * The target's path of the first mapped file whose base name begins
 * with prefix that was looked for and could not be used, or NULL: *why
 * is "missing" (no copy found) or "mismatched" (no copy with the core's
 * build id).  So that a failure to find what a file held (libpython's
 * symbols) can name the file instead.  Valid until memsrc_free().
 */
const char *core_unusable_file(const struct memsrc *ms, const char *prefix,
			       const char **why);

/* "SIGSEGV" for 11 and so on (x86-64 Linux numbering), or NULL. */
const char *core_signal_name(int sig);

#endif
