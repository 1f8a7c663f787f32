#include "cli/source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/procfs.h"
#include "common/strbuf.h"
#include "common/banned.h"

#define MAX_GROUPS 64

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
	struct source_file *files;
	size_t nfiles, alloc;
};

struct source_cache *source_cache_new(const struct memsrc *ms, int live_pid)
{
	struct source_cache *sc = xcalloc(1, sizeof(*sc));
	char status[PROCFS_STATUS_MAX];
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
	}
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
	free(sc);
}

/* Could the target's user open a file with this owner and mode? */
static int user_may_read(const struct source_cache *sc, const struct stat *st)
{
	size_t i;

	if (!sc->known)
		return (st->st_mode & S_IROTH) != 0;
	if (sc->uid == 0)
		return 1;
	if ((long)st->st_uid == sc->uid)
		return (st->st_mode & S_IRUSR) != 0;
	for (i = 0; i < sc->ngids; i++)
		if ((long)st->st_gid == sc->gids[i])
			return (st->st_mode & S_IRGRP) != 0;
	return (st->st_mode & S_IROTH) != 0;
}

static void load(struct source_cache *sc, struct source_file *f)
{
	char *path;
	struct stat st;
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
	/* The checks are on the file opened, after any symbolic link. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > (off_t)SOURCE_MAX_FILE || !user_may_read(sc, &st)) {
		close(fd);
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
