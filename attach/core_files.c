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
 * The files a core names, on this machine: looked for under the sysroot
 * and the library search path, checked against the build id the core
 * saved, opened for the memory the core left out; and which of them is
 * the executable.
 */

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

static void hex_id(struct strbuf *sb, const uint8_t *id, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		strbuf_addf(sb, "%02x", id[i]);
}

char *core_join_root(const char *root, const char *path)
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
 * when the core holds no build id for it.  Prints nothing: core_file_need()
 * warns when a missing file turns out to matter.
 */
void core_file_resolve(struct core *co, struct core_file *f)
{
	const struct elf_summary *mem = core_file_mem(co, f);
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
		add_candidate(&cand, &ncand, core_join_root(co->root, f->path));
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
				      core_join_root(co->root, co->execfn));
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
			core_summarize_file(cand[i], &disk);
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
int core_file_need(struct core *co, struct core_file *f)
{
	core_file_resolve(co, f);
	if (f->state == FILE_OK || f->state == FILE_UNVERIFIED)
		return 0;
	if (!f->warned) {
		f->warned = 1;
		core_warn(co, "%s '%s' (looked for %s); what the core did "
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

struct core_file *core_file_by_path(struct core *co, const char *path)
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
long core_read_from_file(struct core *co, uint64_t addr, void *buf,
			   size_t len, uint64_t limit)
{
	const struct fmap *fm = core_fmap_find(co, addr);
	struct core_file *f;
	uint64_t foff, mapped;
	size_t n, from_file;
	ssize_t r;

	if (!fm)
		return 0;
	f = &co->files[fm->file];
	if (core_file_need(co, f) < 0 || f->open_failed)
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
			core_warn(co, "cannot read '%s' for core '%s': %s",
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
	r = from_file ? core_pread_full(f->fd, buf, from_file, foff) : 0;
	if (r < 0)
		return 0;
	if ((size_t)r < from_file)
		return r;  /* the file shrank */
	memset((char *)buf + from_file, 0, n - from_file);
	return (long)n;
}


/* The executable: the mapped file holding AT_PHDR, else the first file
 * whose saved header is an executable's. */
void core_find_exe(struct core *co)
{
	uint64_t phdr = core_auxv_get(co, AUX_PHDR);
	const struct fmap *fm = phdr ? core_fmap_find(co, phdr) : NULL;
	size_t i;

	co->exe_file = -1;
	if (fm) {
		co->exe_file = (long)fm->file;
		return;
	}
	for (i = 0; i < co->nfmaps; i++) {
		struct core_file *f = &co->files[co->fmaps[i].file];
		const struct elf_summary *s = core_file_mem(co, f);

		if (s->valid && (s->type == ET_EXEC || s->has_interp)) {
			co->exe_file = (long)co->fmaps[i].file;
			return;
		}
	}
}

int core_resolve_exe(struct memsrc *ms, struct core *co,
		       const struct core_options *opt, struct cs_err *err)
{
	struct strbuf why;
	int ret;

	if (co->exe_file >= 0) {
		struct core_file *f = &co->files[co->exe_file];

		co->info.exe_target_path = xstrdup(f->path);
		core_file_resolve(co, f);
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
		core_warn(co, "cannot find the executable of core '%s' (%s)",
			    co->info.path, why.buf);
		ret = 0;
	} else {
		/* (one given that is not the core's: say so, not "pass
		 * it") */
		ret = cs_fail(err, CS_ERR_NO_EXE,
			      "cannot find the executable of core '%s' (%s); %s",
			      co->info.path, why.buf, co->exe_arg ?
			      "the file given is not the one the process ran: "
			      "give that, or use --sysroot" :
			      "pass it as the second argument or use --sysroot");
	}
	strbuf_release(&why);
	return ret;
}


void core_split_dirs(struct core *co, const char *list)
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


