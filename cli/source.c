#include "cli/source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cli/escape.h"
#include "common/procfs.h"
#include "common/strbuf.h"
#include "common/banned.h"

#define MAX_GROUPS 64
/* statfs(2)'s f_type of /proc (linux/magic.h) */
#define PROC_FS_MAGIC 0x9fa0

struct source_file {
	char *name;          /* as the target names it */
	char *text;          /* NULL: not shown */
	size_t len;
	size_t *starts;      /* offset of each line, nlines of them */
	size_t nlines;
	char *line;          /* the last line handed out */
};

struct source_cache {
	const struct memsrc *ms;
	int pid;             /* a live target's, else 0 */
	int known;           /* uid and groups below are the target's */
	long uid;
	long gids[MAX_GROUPS];
	size_t ngids;
	/* The target's root as a path on this machine, symbolic links
	 * resolved ("/", a --sysroot's, a container's), or NULL: the
	 * directories checked above a file stop there. */
	char *root;
	struct source_file *files;
	size_t nfiles, alloc;
	/* A file changed after this (seconds since the epoch; 0: not
	 * known) is not shown: stale of them, the first first_stale. */
	double not_after;
	size_t stale;
	const char *first_stale;
};

/* Seconds a file's time may pass the start's: the start is known to a
 * clock tick, through two clocks read apart. */
#define STALE_SLACK_S 1.0

struct source_cache *source_cache_new(const struct memsrc *ms, int live_pid,
				      const struct source_user *core_user,
				      double core_time)
{
	struct source_cache *sc = xcalloc(1, sizeof(*sc));
	char status[PROCFS_STATUS_MAX];
	char *root;
	long ids[4];

	sc->ms = ms;
	sc->pid = live_pid > 0 ? live_pid : 0;
	if (live_pid > 0 &&
	    procfs_status_read(live_pid, 0, status, sizeof(status)) == 0 &&
	    procfs_status_ids(status, "Uid", ids, 4) >= 2) {
		/* Effective ids: the ones open(2) checks. */
		sc->uid = ids[1];
		if (procfs_status_ids(status, "Gid", ids, 4) >= 2) {
			sc->gids[sc->ngids++] = ids[1];
			sc->ngids += procfs_status_ids(status, "Groups",
						       sc->gids + 1,
						       MAX_GROUPS - 1);
			sc->known = 1;
		}
	} else if (live_pid <= 0 && core_user && core_user->known) {
		sc->uid = core_user->uid;
		sc->gids[sc->ngids++] = core_user->gid;
		sc->known = 1;
	}
	if (live_pid <= 0 || procfs_start_time(live_pid, &sc->not_after) < 0)
		sc->not_after = live_pid > 0 ? 0 : core_time;
	root = memsrc_target_path(ms, "/");
	if (root && *root)
		sc->root = realpath(root, NULL);
	free(root);
	return sc;
}

void source_cache_free(struct source_cache *sc)
{
	size_t i;

	if (!sc)
		return;
	for (i = 0; i < sc->nfiles; i++) {
		free(sc->files[i].name);
		free(sc->files[i].text);
		free(sc->files[i].starts);
		free(sc->files[i].line);
	}
	free(sc->files);
	free(sc->root);
	free(sc);
}

#define MAY_READ 4       /* the read bit of each of a mode's triples */
#define MAY_SEARCH 1     /* the execute (search) bit */

/* Could the target's user read (MAY_READ) a file, or look names up in
 * a directory (MAY_SEARCH), with this owner and mode? */
static int user_may(const struct source_cache *sc, const struct stat *st,
		    unsigned bit)
{
	size_t i;

	if (!sc->known)
		return (st->st_mode & bit) != 0;
	if (sc->uid == 0)
		return 1;
	if ((long)st->st_uid == sc->uid)
		return (st->st_mode & (bit << 6)) != 0;
	for (i = 0; i < sc->ngids; i++)
		if ((long)st->st_gid == sc->gids[i])
			return (st->st_mode & (bit << 3)) != 0;
	return (st->st_mode & bit) != 0;
}

/* Could the target's user search the directory at path (a path on this
 * machine)?  Never one of /proc: its PID/root and PID/cwd lead into
 * other processes' files whatever the modes say (the kernel asks for
 * the right to trace them). */
static int may_search(const struct source_cache *sc, const char *path)
{
	struct stat st;
	struct statfs fs;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
	       statfs(path, &fs) == 0 && fs.f_type != PROC_FS_MAGIC &&
	       user_may(sc, &st, MAY_SEARCH);
}

/* Could it search each directory above the last '/' of path[0..len),
 * up to "/", or up to stop (a directory it checks last)?  path is
 * rewritten.  With through_root, path is the target's name, each
 * directory looked at through its root (memsrc_target_path()); else a
 * path on this machine. */
static int may_search_above(const struct source_cache *sc, char *path,
			    size_t len, int through_root, const char *stop)
{
	size_t n = len;

	/* (bounded by the path's length: each turn cuts one name) */
	while (n > 0) {
		char *dir;
		int ok;

		while (n > 0 && path[n - 1] != '/')
			n--;
		if (n == 0)
			return 0;
		/* the directory path[0..n-1), "/" for the root */
		path[n > 1 ? n - 1 : 1] = '\0';
		dir = through_root ? memsrc_target_path(sc->ms, path) :
				     xstrdup(path);
		ok = dir && *dir && may_search(sc, dir);
		free(dir);
		if (!ok)
			return 0;
		if (stop && !strcmp(path, stop))
			return 1;
		n = n > 1 ? n - 1 : 0;
	}
	return 1;
}

/* Is path (on this machine) below the target's root? */
static int under_root(const struct source_cache *sc, const char *path)
{
	size_t n;

	if (!sc->root || !strcmp(sc->root, "/"))
		return 1;
	n = strlen(sc->root);
	return !strncmp(path, sc->root, n) && path[n] == '/';
}

/*
 * Could the target's user reach the file open on fd: search every
 * directory above it?  Its own mode is not enough: a file all may read,
 * in a directory only root may enter, is not the target's to show (a
 * name it sets in co_filename would have a root operator's dump print
 * it).  The directories are those of the path the kernel keeps for fd,
 * its symbolic links resolved, from the target's root down (not those
 * above a --sysroot); where that path names another file here, or one
 * outside the root (another mount namespace's), those of the target's
 * name, through its root.  (Checked by path after the open: a user who
 * may rename a parent could swap a directory in between.)
 */
static int user_may_reach(const struct source_cache *sc, int fd,
			  const struct stat *st, const char *name)
{
	char link[64], path[4096];
	struct stat now;
	ssize_t n;
	size_t len;
	char *copy;
	int ok;

	if (sc->known && sc->uid == 0)
		return 1;
	(void)snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n > 0 && (size_t)n < sizeof(path) - 1 && path[0] == '/') {
		path[n] = '\0';
		if (stat(path, &now) == 0 && now.st_dev == st->st_dev &&
		    now.st_ino == st->st_ino && under_root(sc, path))
			return may_search_above(sc, path, (size_t)n, 0,
						sc->root);
	}
	if (name[0] != '/')
		return 0;
	len = strlen(name);
	copy = xstrdup(name);
	ok = may_search_above(sc, copy, len, 1, NULL);
	free(copy);
	return ok;
}

static void load(struct source_cache *sc, struct source_file *f)
{
	char *path;
	struct stat st;
	struct statfs fs;
	size_t got = 0, i, alloc = 0;
	int fd;

	/* "<frozen ...>" and "<string>" are no files.  A relative name
	 * (the main script's before 3.9, run as `python x.py`) is found
	 * where the interpreter's own traceback would look for it: in the
	 * process's current directory, which a core does not record. */
	if (f->name[0] == '<')
		return;
	if (f->name[0] != '/') {
		struct strbuf sb;

		if (!sc->pid)
			return;
		strbuf_init(&sb);
		strbuf_addf(&sb, "/proc/%d/cwd/%s", sc->pid, f->name);
		path = strbuf_detach(&sb);
	} else {
		path = memsrc_target_path(sc->ms, f->name);
	}
	if (!path || !*path) {
		free(path);
		return;
	}
	/* Nonblocking: a name the target controls could be a FIFO. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return;
	/* The checks are on the file opened, after any symbolic link: a
	 * regular file, not one of /proc ("/proc/self/environ" would be
	 * ours). */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    fstatfs(fd, &fs) < 0 || fs.f_type == PROC_FS_MAGIC ||
	    st.st_size > (off_t)SOURCE_MAX_FILE ||
	    !user_may(sc, &st, MAY_READ) ||
	    !user_may_reach(sc, fd, &st, f->name)) {
		close(fd);
		return;
	}
	if (sc->not_after > 0 &&
	    (double)st.st_mtim.tv_sec > sc->not_after + STALE_SLACK_S) {
		close(fd);
		if (!sc->stale++)
			sc->first_stale = f->name;
		return;
	}
	f->text = xmalloc((size_t)st.st_size + 1);
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, f->text + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	f->len = got;
	f->text[got] = '\0';
	for (i = 0; i <= got; i++)
		if (i == 0 || f->text[i - 1] == '\n') {
			if (i == got)
				break;
			f->starts = xgrow(f->starts, &alloc, f->nlines + 1,
					  sizeof(*f->starts));
			f->starts[f->nlines++] = i;
		}
}

void source_warn_stale(FILE *out, const struct source_cache *sc, int live)
{
	if (!sc || !sc->stale)
		return;
	fprintf(out, "coroscope: warning: %zu source file%s changed after "
		"the %s (", sc->stale, sc->stale == 1 ? "" : "s",
		live ? "process started" : "core was written");
	esc_text(out, sc->first_stale);
	fprintf(out, "%s): %s lines are not shown\n",
		sc->stale > 1 ? ", ..." : "", sc->stale == 1 ? "its" : "their");
}

static struct source_file *file_of(struct source_cache *sc, const char *name)
{
	struct source_file *f;
	size_t i;

	/* Frames of one dump name few files; most lookups hit the last. */
	for (i = sc->nfiles; i-- > 0;)
		if (!strcmp(sc->files[i].name, name))
			return &sc->files[i];
	if (sc->nfiles >= SOURCE_MAX_FILES)
		return NULL;
	sc->files = xgrow(sc->files, &sc->alloc, sc->nfiles + 1,
			  sizeof(*sc->files));
	f = &sc->files[sc->nfiles++];
	memset(f, 0, sizeof(*f));
	f->name = xstrdup(name);
	load(sc, f);
	return f;
}

const char *source_line(struct source_cache *sc, const char *filename,
			int line, int *cut)
{
	struct source_file *f;
	size_t start, end;

	*cut = 0;
	if (!sc || !filename || line <= 0)
		return NULL;
	f = file_of(sc, filename);
	if (!f || !f->text || (size_t)line > f->nlines)
		return NULL;
	start = f->starts[line - 1];
	end = (size_t)line < f->nlines ? f->starts[line] : f->len;
	while (start < end && (f->text[start] == ' ' ||
			       f->text[start] == '\t'))
		start++;
	while (end > start && (f->text[end - 1] == '\n' ||
			       f->text[end - 1] == '\r'))
		end--;
	if (end == start)
		return NULL;
	if (end - start > SOURCE_MAX_LINE) {
		end = start + SOURCE_MAX_LINE;
		*cut = 1;
	}
	free(f->line);
	f->line = xstrndup(f->text + start, end - start);
	return f->line;
}
