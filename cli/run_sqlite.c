/*
 * A thread waiting for a SQLite database's lock.  SQLite never blocks
 * in fcntl(2): it tries the lock, and its busy handler sleeps and tries
 * again until the connection's timeout (sqlite3.connect()'s, 5 s by
 * default; an hour is common).  So the thread looks asleep -- before,
 * `run` said "sleeps in time.sleep (polling ...)" -- and /proc/locks
 * lists no request.  What it does list is who holds the database's
 * locks: SQLite's unix VFS takes POSIX locks on fixed bytes, of the
 * database file past 1 GiB in rollback-journal mode, of its "-shm" file
 * in WAL mode.  A POSIX lock is its process's: two connections of one
 * process share theirs, and the kernel names the process only.
 */
#include "cli/run_sqlite.h"

#include <stdlib.h>
#include <string.h>

#include "cli/escape.h"
#include "cli/run_fds.h"
#include "cli/run_file_locks.h"
#include "cli/run_places.h"
#include "cli/run_probe.h"
#include "cli/run_seen.h"
#include "cli/thread_idle.h"
#include "common/procfs.h"
#include "common/procfs_fds.h"
#include "common/procfs_locks.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

/* SQLite's lock bytes (its unix VFS's: a fact of its file format).  In
 * the database file: PENDING, RESERVED, then 510 bytes for SHARED. */
#define PENDING_BYTE 0x40000000ULL
#define RESERVED_BYTE (PENDING_BYTE + 1)
#define SHARED_FIRST (PENDING_BYTE + 2)
#define SHARED_LAST (SHARED_FIRST + 509)
/* In the "-shm" file: the writer's, the checkpointer's and recovery's
 * locks, then five read marks' (128, past them, marks the file used:
 * no wait). */
#define WAL_WRITE 120
#define WAL_CKPT 121
#define WAL_RECOVER 122
#define WAL_READ_FIRST 123
#define WAL_READ_LAST 127

/* Open files of the process looked at, locks read, databases and
 * threads named at most. */
#define MAX_FDS 4096
#define MAX_LOCKS 256
#define DBS_NAMED 3
#define THREADS_NAMED 8

enum db_lock {
	DB_NONE, DB_PENDING, DB_RESERVED, DB_EXCLUSIVE, DB_SHARED,
	WAL_WRITER, WAL_CHECKPOINT, WAL_RECOVERY, WAL_MARK_RESET, WAL_READER,
};

static const char *const lock_words[] = {
	[DB_PENDING] = "PENDING lock (a writer waiting for the readers to "
		       "end, to commit)",
	[DB_RESERVED] = "write lock (RESERVED: a write transaction not yet "
			"committed)",
	[DB_EXCLUSIVE] = "EXCLUSIVE lock (committing)",
	[DB_SHARED] = "read lock (SHARED: a read transaction open)",
	[WAL_WRITER] = "WAL write lock (a write transaction open)",
	[WAL_CHECKPOINT] = "WAL checkpoint lock (a checkpoint running)",
	[WAL_RECOVERY] = "WAL recovery lock",
	[WAL_MARK_RESET] = "WAL read mark, exclusively (a checkpoint or a "
			   "writer resetting it)",
	[WAL_READER] = "WAL read lock (a read transaction open)",
};

/* Does it keep a writer out (not only a commit)? */
static int writes(enum db_lock k)
{
	return k != DB_NONE && k != DB_SHARED && k != WAL_READER;
}

/* Does [start, end] cover byte b? */
static int covers(const struct procfs_lock *l, unsigned long long b)
{
	return l->start <= b && b <= l->end;
}

/* Does it cover one of the bytes lo..hi? */
static int covers_any(const struct procfs_lock *l, unsigned long long lo,
		      unsigned long long hi)
{
	return l->start <= hi && lo <= l->end;
}

/*
 * Which of SQLite's locks l is, on a database file or (shm) its "-shm"
 * file: DB_NONE for none of them.  Only a range within SQLite's own
 * bytes is one (a whole-file lock, a pidfile's, is not).  The kernel
 * merges a process's adjacent locks of one mode (PENDING and RESERVED;
 * the WAL write and checkpoint locks a checkpoint takes; a read mark
 * and the byte after the marks, 128, which every connection reads): a
 * range is the strongest lock it covers.
 */
static enum db_lock classify(const struct procfs_lock *l, int shm)
{
	if (strcmp(l->type, "POSIX") && strcmp(l->type, "OFDLCK"))
		return DB_NONE;
	if (shm) {
		if (l->start < WAL_WRITE || l->end > WAL_READ_LAST + 1)
			return DB_NONE;
		if (l->write && covers(l, WAL_RECOVER))
			return WAL_RECOVERY;
		if (l->write && covers(l, WAL_CKPT))
			return WAL_CHECKPOINT;
		if (l->write && covers(l, WAL_WRITE))
			return WAL_WRITER;
		if (!covers_any(l, WAL_READ_FIRST, WAL_READ_LAST))
			return DB_NONE;
		return l->write ? WAL_MARK_RESET : WAL_READER;
	}
	if (l->start < PENDING_BYTE || l->end > SHARED_LAST)
		return DB_NONE;
	if (!l->write)
		return covers_any(l, SHARED_FIRST, SHARED_LAST) ? DB_SHARED :
		       DB_NONE;
	return covers_any(l, SHARED_FIRST, SHARED_LAST) ? DB_EXCLUSIVE :
	       covers(l, PENDING_BYTE) ? DB_PENDING : DB_RESERVED;
}

/* Does a lock of this kind wait for the readers to end (a commit, a
 * checkpoint)? */
static int waits_for_readers(enum db_lock k)
{
	return k == DB_PENDING || k == WAL_CHECKPOINT;
}

/* One open file of the process. */
struct db_file {
	struct procfs_file_id id;
	int shm;
	char *path;       /* the database's (a "-shm" file's cut off) */
};

/* One of SQLite's locks on such a file. */
struct db_lock_held {
	struct procfs_lock l;
	enum db_lock kind;
	const struct db_file *file;
};

struct db_scan {
	struct db_file *files;
	size_t nfiles;
	struct db_lock_held *locks;
	size_t nlocks;
};

/* With tail at its end, where tail starts; else NULL. */
static char *ends_with(char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n >= m && !strcmp(s + n - m, tail) ? s + n - m : NULL;
}

/* File k's path (its link: a path, maybe " (deleted)"), whether it is a
 * "-shm" file: the database's path, without that suffix, into f. */
static void file_path(struct db_file *f, char *link)
{
	char *del = ends_with(link, " (deleted)"), *shm;
	struct strbuf sb;

	if (del)
		*del = '\0';
	shm = ends_with(link, "-shm");
	f->shm = shm != NULL;
	if (shm)
		*shm = '\0';
	strbuf_init(&sb);
	strbuf_addstr(&sb, link);
	if (del)
		strbuf_addstr(&sb, " (deleted)");
	f->path = strbuf_detach(&sb);
}

/* The process's open files (paths), then SQLite's locks on them. */
static void scan(int pid, struct db_scan *d)
{
	struct procfs_lock *got;
	struct procfs_file_id *ids;
	char dir[64], link[1024];
	size_t n, k, j;
	uint64_t ino;
	int *fds, mode;

	memset(d, 0, sizeof(*d));
	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	if (procfs_list_ids(dir, MAX_FDS, 0, &fds, &n) < 0)
		return;
	d->files = xcalloc(n + 1, sizeof(*d->files));
	ids = xcalloc(n + 1, sizeof(*ids));
	for (k = 0; k < n; k++) {
		struct db_file *f = &d->files[d->nfiles];

		if (procfs_fd(pid, fds[k], link, sizeof(link), &mode) < 0 ||
		    link[0] != '/' || procfs_fd_inode(pid, fds[k], &ino) < 0 ||
		    procfs_fd_dev(pid, fds[k], &f->id.major, &f->id.minor) < 0)
			continue;
		f->id.ino = (unsigned long)ino;
		file_path(f, link);
		ids[d->nfiles++] = f->id;
	}
	free(fds);
	got = xcalloc(MAX_LOCKS, sizeof(*got));
	n = procfs_locks_on(ids, d->nfiles, got, MAX_LOCKS);
	free(ids);
	d->locks = xcalloc(n + 1, sizeof(*d->locks));
	for (k = 0; k < n; k++) {
		const struct db_file *f = NULL;
		enum db_lock kind;

		for (j = 0; j < d->nfiles && !f; j++)
			if (d->files[j].id.ino == got[k].ino &&
			    d->files[j].id.major == got[k].dev_major &&
			    d->files[j].id.minor == got[k].dev_minor)
				f = &d->files[j];
		if (!f || (kind = classify(&got[k], f->shm)) == DB_NONE)
			continue;
		d->locks[d->nlocks].l = got[k];
		d->locks[d->nlocks].kind = kind;
		d->locks[d->nlocks++].file = f;
	}
	free(got);
}

static void scan_release(struct db_scan *d)
{
	size_t k;

	for (k = 0; k < d->nfiles; k++)
		free(d->files[k].path);
	free(d->files);
	free(d->locks);
}

/* The databases (by path) with locks, each once, the first max into
 * out: how many in all. */
static size_t databases(const struct db_scan *d, const char **out,
			size_t max)
{
	size_t k, j, n = 0;

	/* (bounded: MAX_LOCKS squared) */
	for (k = 0; k < d->nlocks; k++) {
		for (j = 0; j < k && strcmp(d->locks[j].file->path,
					    d->locks[k].file->path); j++)
			;
		if (j < k)
			continue;
		if (n < max)
			out[n] = d->locks[k].file->path;
		n++;
	}
	return n;
}

/* "process 1235 (python3) as its fd 4", "this process itself: ...". */
static void add_process(struct strbuf *sb, const struct collection *c,
			const struct db_lock_held *h)
{
	int fd;

	/* (its words say it waits for readers: the commit or checkpoint
	 * of one of this process's connections) */
	if (h->l.pid == c->pid && waits_for_readers(h->kind)) {
		strbuf_addstr(sb, "this process itself");
		return;
	}
	if (h->l.pid == c->pid) {
		strbuf_addstr(sb, "this process itself: one of its "
			      "connections, maybe the waiting one (a "
			      "process's connections share its locks)");
		return;
	}
	if (h->l.pid <= 0) {
		strbuf_addstr(sb, "an open file (an OFD lock names no process)");
		return;
	}
	run_fds_add_process(sb, h->l.pid);
	if ((fd = procfs_locks_holder_fd((int)h->l.pid, &h->l)) >= 0)
		strbuf_addf(sb, " as its fd %d", fd);
}

/* A line for lock h, and where a Python holder of the run's tree is. */
static void lock_lines(struct run_cause *cause, const struct run_summary *s,
		       const struct collection *c,
		       const struct db_lock_held *h, struct strbuf *sb)
{
	esc_add_name_raw(sb, h->file->path);
	strbuf_addf(sb, ": its %s is held by ", lock_words[h->kind]);
	add_process(sb, c, h);
	run_cause_detail(cause, sb);
	if (h->l.pid > 0 && h->l.pid != c->pid)
		run_file_lock_detail(cause, s, c, &h->l, sb);
}

/* Does this process hold a lock of database path that waits for the
 * readers to end? */
static int committing(const struct collection *c, const struct db_scan *d,
		      const char *path)
{
	size_t k;

	for (k = 0; k < d->nlocks; k++)
		if (d->locks[k].l.pid == c->pid &&
		    waits_for_readers(d->locks[k].kind) &&
		    !strcmp(d->locks[k].file->path, path))
			return 1;
	return 0;
}

/* Where this process waits for readers of path: the other processes'
 * read locks (a commit waits for SHARED, a checkpoint for the WAL read
 * marks), else that the reader is a connection of this process. */
static void reader_lines(struct run_cause *cause, const struct run_summary *s,
			 const struct collection *c, const struct db_scan *d,
			 const char *path, struct strbuf *sb)
{
	enum db_lock reader = DB_SHARED;
	size_t k, n = 0;

	/* (in WAL mode, every connection holds SHARED on the database:
	 * its readers are the read marks') */
	for (k = 0; k < d->nlocks; k++)
		if (d->locks[k].file->shm &&
		    !strcmp(d->locks[k].file->path, path))
			reader = WAL_READER;
	for (k = 0; k < d->nlocks; k++) {
		const struct db_lock_held *h = &d->locks[k];

		if (strcmp(h->file->path, path) || h->l.pid == c->pid ||
		    h->kind != reader)
			continue;
		lock_lines(cause, s, c, h, sb);
		n++;
	}
	if (n)
		return;
	esc_add_name_raw(sb, path);
	strbuf_addstr(sb, ": no other process reads it: the reader is a "
		      "connection of this process");
	run_cause_detail(cause, sb);
}

/*
 * The locks of each database (DBS_NAMED at most) that keep the waiters
 * out: those that keep a writer out, any process's (this one's, while
 * it waits for the readers to end, only that one: its own commit or
 * checkpoint waits); then, where it does, the readers.
 */
static void db_lines(struct run_cause *cause, const struct run_summary *s,
		     const struct collection *c, const struct db_scan *d,
		     struct strbuf *sb)
{
	const char *dbs[DBS_NAMED];
	size_t ndb, i, k;

	ndb = databases(d, dbs, DBS_NAMED);
	for (i = 0; i < ndb && i < DBS_NAMED; i++) {
		int waits = committing(c, d, dbs[i]);

		for (k = 0; k < d->nlocks; k++) {
			const struct db_lock_held *h = &d->locks[k];

			if (strcmp(h->file->path, dbs[i]) ||
			    !writes(h->kind) ||
			    (waits && h->l.pid == c->pid &&
			     !waits_for_readers(h->kind)))
				continue;
			lock_lines(cause, s, c, h, sb);
		}
		if (waits)
			reader_lines(cause, s, c, d, dbs[i], sb);
	}
	if (ndb > DBS_NAMED) {
		strbuf_addf(sb, "and %zu more databases locked",
			    ndb - DBS_NAMED);
		run_cause_detail(cause, sb);
	}
}

/* Stuck, or retrying between samples at one line: all along, or since
 * it came there for the stuck threshold or more (a wait begun during
 * the samples, as a poll's, cli/run_seen.h). */
static int seen_waiting(const struct run_seen *seen)
{
	return seen->state == RUN_SEEN_STUCK ||
	       (seen->state == RUN_SEEN_MOVING && run_seen_same_for(seen) > 0);
}

/* " (stuck for at least 2.5s)", " (retrying at that line at every
 * sample, 1.5s)". */
static void add_seen(struct strbuf *sb, const struct run_seen *seen)
{
	if (seen->state == RUN_SEEN_MOVING) {
		strbuf_addf(sb, " (retrying %s, %.1fs)",
			    run_seen_same_place(seen),
			    run_seen_same_for(seen));
		return;
	}
	strbuf_addstr(sb, " (");
	run_seen_add(sb, seen);
	strbuf_addch(sb, ')');
}

void run_summarize_sqlite(struct run_summary *s, const struct collection *c,
			  const struct watch_tracker *t)
{
	int pid = collect_proc_pid(c);
	size_t i, n = 0, w[THREADS_NAMED], ndb;
	struct run_seen seen, first;
	struct run_cause *cause;
	const char *dbs[1];
	struct db_scan d;
	struct strbuf sb;

	if (!c->is_live || !t || !s->facts)
		return;
	memset(&first, 0, sizeof(first));
	/* Bounded by the snapshot's threads. */
	for (i = 0; i < c->snap.nthreads; i++) {
		const struct py_thread *th = &c->snap.threads[i];

		run_seen_thread(t, th, &seen);
		if (!s->facts[i].sqlite || !seen_waiting(&seen) ||
		    !run_own_frame(th->frames, th->nframes) ||
		    thread_idle_by_design(th) || run_summary_explains(s, th))
			continue;
		if (n < THREADS_NAMED)
			w[n] = i;
		if (!n)
			first = seen;
		n++;
	}
	if (!n)
		return;
	scan(pid, &d);
	strbuf_init(&sb);
	if (n == 1)
		run_add_thread_label(&sb, &c->snap.threads[w[0]]);
	else
		strbuf_addf(&sb, "%zu threads", n);
	strbuf_addstr(&sb, n == 1 ? " waits" : " wait");
	ndb = databases(&d, dbs, 1);
	if (ndb == 1) {
		strbuf_addstr(&sb, " for a lock of SQLite database ");
		esc_add_name_raw(&sb, dbs[0]);
	} else if (ndb) {
		strbuf_addf(&sb, " for a lock of one of %zu SQLite databases",
			    ndb);
	} else {
		strbuf_addstr(&sb, " for a SQLite database's lock");
	}
	strbuf_addstr(&sb, ": SQLite's busy handler sleeps and tries again "
		      "until the connection's timeout");
	if (n == 1)
		add_seen(&sb, &first);
	if (!ndb)
		strbuf_addstr(&sb, "; no lock on a database of this process "
			      "is held now (it may have been let go)");
	cause = run_cause_add(s, RUN_CAUSE_FILE_LOCK, c->pid, &sb);
	for (i = 0; i < n && i < THREADS_NAMED; i++) {
		const struct py_thread *th = &c->snap.threads[w[i]];

		if (n > 1) {
			run_add_thread_label(&sb, th);
			run_seen_thread(t, th, &seen);
			add_seen(&sb, &seen);
			strbuf_addch(&sb, ' ');
		}
		strbuf_addstr(&sb, "at ");
		run_probe_add_line(&sb, c,
				   run_own_frame(th->frames, th->nframes));
		run_cause_detail(cause, &sb);
	}
	if (n > THREADS_NAMED) {
		strbuf_addf(&sb, "and %zu more threads", n - THREADS_NAMED);
		run_cause_detail(cause, &sb);
	}
	db_lines(cause, s, c, &d, &sb);
	strbuf_release(&sb);
	scan_release(&d);
}
