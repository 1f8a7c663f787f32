#include "attach/core.h"
#include "attach/core_internal.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/range.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

/*
 * The core-file backend: opening a core (the parsing is in core_elf.c,
 * core_files.c and core_process.c) and serving reads of its memory.
 */

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

ssize_t core_pread_full(int fd, void *buf, size_t len, uint64_t off)
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

void core_warn(struct core *co, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cs_vwarn(co->warnings, CS_WARN_CORE, fmt, ap);
	va_end(ap);
}

/* The two sorted range arrays of a core, for range_below()/range_find(). */
static struct range_array segs_of(const struct core *co)
{
	struct range_array ra = {
		co->segs, co->nsegs, sizeof(*co->segs),
		offsetof(struct seg, start), offsetof(struct seg, end),
	};

	return ra;
}

static struct range_array fmaps_of(const struct core *co)
{
	struct range_array ra = {
		co->fmaps, co->nfmaps, sizeof(*co->fmaps),
		offsetof(struct fmap, start), offsetof(struct fmap, end),
	};

	return ra;
}

long core_seg_below(const struct core *co, uint64_t addr)
{
	struct range_array ra = segs_of(co);

	return range_below(&ra, addr);
}

const struct fmap *core_fmap_find(const struct core *co, uint64_t addr)
{
	struct range_array ra = fmaps_of(co);

	return range_find(&ra, addr);
}

long core_read_saved(struct core *co, uint64_t addr, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		uint64_t a = addr + done, rel;
		long i = core_seg_below(co, a);
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
		r = core_pread_full(co->fd, (char *)buf + done, n, s->offset + rel);
		if (r < 0)
			return -1;
		done += (size_t)r;
		if ((size_t)r < n)
			break;  /* the core shrank since we opened it */
	}
	return (long)done;
}

static long core_read_raw(struct memsrc *ms, uint64_t addr, void *buf,
			  size_t len, struct cs_err *err)
{
	struct core *co = ms->backend;
	size_t done = 0;

	while (done < len) {
		uint64_t a = addr + done, limit = UINT64_MAX;
		long i = core_seg_below(co, a), got;
		size_t want = len - done;

		if (a < addr)
			break;
		if (i >= 0 && a < co->segs[i].end) {
			const struct seg *s = &co->segs[i];
			uint64_t rel = a - s->start;

			if (rel < s->avail) {
				got = core_read_saved(co, a, (char *)buf + done,
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
		got = core_read_from_file(co, a, (char *)buf + done, want, limit);
		if (got <= 0)
			break;
		done += (size_t)got;
	}
	return (long)done;
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
		return core_not_core(co, err, S_ISDIR(st.st_mode) ?
				" (it is a directory)" : " (not a regular file)");
	co->size = (uint64_t)st.st_size;
	co->info.size = co->size;
	return 0;
}

/* Why a core lists no mapped file, which coroscope needs to find the
 * interpreter's: a malformed NT_FILE, a malformed note before one, or
 * none at all. */
static int no_mapped_files(const struct core *co, const struct note_state *ns,
			   struct cs_err *err)
{
	if (ns->file_note)
		return cs_fail(err, CS_ERR_CORE,
			       "core file '%s' has a malformed NT_FILE note "
			       "(its mapped files): no usable entry",
			       co->info.path);
	if (ns->malformed)
		return cs_fail(err, CS_ERR_CORE,
			       "core file '%s' has a malformed note (sizes "
			       "past its segment's end): the notes after it, "
			       "NT_FILE among them, cannot be read",
			       co->info.path);
	return cs_fail(err, CS_ERR_CORE,
		       "core file '%s' lists no mapped files (no NT_FILE "
		       "note; Linux writes one since 3.7)", co->info.path);
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
	co->warnings = opt->warnings;
	memsrc_init(ms, &core_ops, co);
	/* From here memsrc_free() releases everything. */
	memset(&ns, 0, sizeof(ns));
	ms->root = xstrdup(opt->sysroot ? opt->sysroot : "");
	co->root = ms->root;
	core_split_dirs(co, opt->lib_search_path);
	if (opt->executable)
		co->exe_arg = xstrdup(opt->executable);

	ret = open_core_file(co, err);
	if (!ret)
		ret = core_read_headers(co, &phdrs, &phnum, err);
	if (!ret)
		ret = core_read_segments(co, phdrs, phnum, &ns, &bufs, &nbufs, err);
	if (!ret && ns.file_note)
		core_parse_file_note(co, ns.file_note, ns.file_len);
	if (!ret && !co->nfmaps)
		ret = no_mapped_files(co, &ns, err);
	if (!ret)
		ret = core_make_threads(ms, &ns, co, err);
	if (!ret) {
		core_read_execfn(co);
		core_find_exe(co);
		core_fill_info(co, &ns);
		ms->pid = co->info.pid;
		ms->ns_pid = co->info.pid;
		ret = core_resolve_exe(ms, co, opt, err);
	}
	if (!ret)
		core_build_maps(ms, co);

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

const char *core_unusable_file(const struct memsrc *ms, const char *prefix,
			       const char **why)
{
	const struct core *co;
	size_t i, n = strlen(prefix);

	*why = NULL;
	if (!core_info(ms))
		return NULL;
	co = ms->backend;
	for (i = 0; i < co->nfiles; i++) {
		const struct core_file *f = &co->files[i];

		if ((f->state != FILE_MISSING && f->state != FILE_MISMATCH) ||
		    strncmp(cs_base_name(f->path), prefix, n))
			continue;
		*why = f->state == FILE_MISSING ? "missing" : "mismatched";
		return f->path;
	}
	return NULL;
}

static char *core_host_path(const struct memsrc *ms, const char *path)
{
	struct core *co = ms->backend;
	struct core_file *f;

	if (!co)
		return core_join_root(ms->root ? ms->root : "", path);
	f = core_file_by_path(co, path);
	if (!f)
		return core_join_root(co->root, path);
	if (core_file_need(co, f) < 0)
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
	free(co->path);
	free(co);
	ms->backend = NULL;
}

static const struct memsrc_ops core_ops = {
	.read_raw = core_read_raw,
	.close = core_close,
	.host_path = core_host_path,
};

