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
#include "cli/run_file_locks.h"
#include "cli/run_places.h"
#include "cli/run_probe.h"
#include "cli/run_seen.h"
#include "cli/thread_idle.h"
#include "common/procfs.h"
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

/* Which of SQLite's locks l is, on a database file or (shm) its "-shm"
 * file: DB_NONE for none of them.  The kernel merges a process's
 * adjacent locks of one mode (PENDING and RESERVED, a read mark and the
 * next): a range is the strongest lock it covers. */
static enum db_lock classify(const struct procfs_lock *l, int shm)
{
	unsigned long long lo;

	if (strcmp(l->type, "POSIX") && strcmp(l->type, "OFDLCK"))
		return DB_NONE;
	if (shm) {
		if (l->start > WAL_READ_LAST || l->end < WAL_WRITE)
			return DB_NONE;
		lo = l->start < WAL_WRITE ? WAL_WRITE : l->start;
		if (lo >= WAL_READ_FIRST || !l->write)
			return l->end < WAL_READ_FIRST ? DB_NONE :
			       l->write ? WAL_MARK_RESET : WAL_READER;
		return lo == WAL_WRITE ? WAL_WRITER :
		       lo == WAL_CKPT ? WAL_CHECKPOINT : WAL_RECOVERY;
	}
	if (l->end < PENDING_BYTE || l->start > SHARED_LAST)
		return DB_NONE;
	if (!l->write)
		return l->end >= SHARED_FIRST ? DB_SHARED : DB_NONE;
	return l->end >= SHARED_FIRST ? DB_EXCLUSIVE :
	       l->start <= PENDING_BYTE ? DB_PENDING : DB_RESERVED;
}

/* One open file of the process with SQLite's locks on it. */
struct db_file {
	unsigned long ino;
	int fd, shm;
	char *path;       /* the database's (a "-shm" file's cut off) */
};

struct db_scan {
	struct db_file *files;
	size_t nfiles;
	struct procfs_lock locks[MAX_LOCKS];
	enum db_lock kinds[MAX_LOCKS];
	size_t nlocks;
};

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n >= m && !strcmp(s + n - m, tail);
}

/* The process's open files (paths), then the SQLite locks on them. */
static void scan(int pid, struct db_scan *d)
{
	char dir[64], link[1024];
	unsigned long *inos;
	size_t n, k, j;
	uint64_t ino;
	int *fds, mode;

	memset(d, 0, sizeof(*d));
	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	if (procfs_list_ids(dir, MAX_FDS, 0, &fds, &n) < 0)
		return;
	d->files = xcalloc(n + 1, sizeof(*d->files));
	inos = xcalloc(n + 1, sizeof(*inos));
	for (k = 0; k < n; k++) {
		struct db_file *f = &d->files[d->nfiles];

		if (procfs_fd(pid, fds[k], link, sizeof(link), &mode) < 0 ||
		    link[0] != '/' || procfs_fd_inode(pid, fds[k], &ino) < 0)
			continue;
		f->ino = (unsigned long)ino;
		f->fd = fds[k];
		f->shm = ends_with(link, "-shm");
		if (f->shm)
			link[strlen(link) - 4] = '\0';
		f->path = xstrdup(link);
		inos[d->nfiles++] = f->ino;
	}
	free(fds);
	n = procfs_locks_on(inos, d->nfiles, d->locks, MAX_LOCKS);
	free(inos);
	for (k = 0; k < n; k++) {
		for (j = 0; j < d->nfiles && d->files[j].ino != d->locks[k].ino;
		     j++)
			;
		if (j == d->nfiles ||
		    classify(&d->locks[k], d->files[j].shm) == DB_NONE)
			continue;
		d->locks[d->nlocks] = d->locks[k];
		d->kinds[d->nlocks++] = classify(&d->locks[k],
						 d->files[j].shm);
	}
}

static void scan_release(struct db_scan *d)
{
	size_t k;

	for (k = 0; k < d->nfiles; k++)
		free(d->files[k].path);
	free(d->files);
}

static const struct db_file *file_of(const struct db_scan *d,
				     unsigned long ino)
{
	size_t j;

	for (j = 0; j < d->nfiles; j++)
		if (d->files[j].ino == ino)
			return &d->files[j];
	return NULL;
}

/* The databases (by path) with locks, each once, at most max into out:
 * how many in all. */
static size_t databases(const struct db_scan *d, const char **out,
			size_t max)
{
	size_t k, j, n = 0;

	for (k = 0; k < d->nlocks; k++) {
		const struct db_file *f = file_of(d, d->locks[k].ino);

		for (j = 0; j < n && j < max && strcmp(out[j], f->path); j++)
			;
		if (j < n && j < max)
			continue;
		if (n < max)
			out[n] = f->path;
		n++;
	}
	return n;
}

/* "process 1235 (python3) as its fd 4", "this process itself: ...". */
static void add_process(struct strbuf *sb, const struct collection *c,
			const struct procfs_lock *l, enum db_lock kind)
{
	char comm[32];
	int fd;

	if (l->pid == c->pid && kind == DB_PENDING) {
		/* (SQLite holds PENDING only while it waits for readers
		 * to end, to commit: its own waiter's) */
		strbuf_addstr(sb, "this process itself");
		return;
	}
	if (l->pid == c->pid) {
		strbuf_addstr(sb, "this process itself: another of its "
			      "connections (a process's connections share "
			      "its locks)");
		return;
	}
	if (l->pid <= 0) {
		strbuf_addstr(sb, "an open file (an OFD lock names no process)");
		return;
	}
	strbuf_addf(sb, "process %ld", l->pid);
	if (procfs_comm((int)l->pid, comm, sizeof(comm)) == 0) {
		strbuf_addstr(sb, " (");
		esc_add_name_raw(sb, comm);
		strbuf_addch(sb, ')');
	}
	if ((fd = procfs_locks_holder_fd((int)l->pid, l)) >= 0)
		strbuf_addf(sb, " as its fd %d", fd);
}

/* A line for lock k of database path, and where a Python holder of the
 * run's tree is. */
static void lock_lines(struct run_cause *cause, const struct run_summary *s,
		       const struct collection *c, const struct db_scan *d,
		       size_t k, const char *path, struct strbuf *sb)
{
	esc_add_name_raw(sb, path);
	strbuf_addf(sb, ": its %s is held by ", lock_words[d->kinds[k]]);
	add_process(sb, c, &d->locks[k], d->kinds[k]);
	run_cause_detail(cause, sb);
	if (d->locks[k].pid > 0 && d->locks[k].pid != c->pid)
		run_file_lock_detail(cause, s, c, &d->locks[k], sb);
}

/* Does this process hold a lock of kind (any: DB_NONE) that keeps a
 * writer out, on database path? */
static int holds(const struct collection *c, const struct db_scan *d,
		 const char *path, enum db_lock kind)
{
	size_t k;

	for (k = 0; k < d->nlocks; k++)
		if (d->locks[k].pid == c->pid && writes(d->kinds[k]) &&
		    (kind == DB_NONE || d->kinds[k] == kind) &&
		    !strcmp(file_of(d, d->locks[k].ino)->path, path))
			return 1;
	return 0;
}

/*
 * The locks of each database (DBS_NAMED at most) that keep the waiters
 * out: those that keep a writer out, any process's (this one's, while
 * it holds PENDING, only that: its own commit waits); and where this
 * process holds one of those itself, the other processes' read locks,
 * which a commit waits for.
 */
static void db_lines(struct run_cause *cause, const struct run_summary *s,
		     const struct collection *c, const struct db_scan *d,
		     struct strbuf *sb)
{
	const char *dbs[DBS_NAMED];
	size_t ndb, i, k;

	ndb = databases(d, dbs, DBS_NAMED);
	for (i = 0; i < ndb && i < DBS_NAMED; i++) {
		int own_write = holds(c, d, dbs[i], DB_NONE);
		int committing = holds(c, d, dbs[i], DB_PENDING);

		for (k = 0; k < d->nlocks; k++) {
			if (strcmp(file_of(d, d->locks[k].ino)->path, dbs[i]) ||
			    !writes(d->kinds[k]) ||
			    (committing && d->locks[k].pid == c->pid &&
			     d->kinds[k] != DB_PENDING))
				continue;
			lock_lines(cause, s, c, d, k, dbs[i], sb);
		}
		for (k = 0; own_write && k < d->nlocks; k++)
			if (!strcmp(file_of(d, d->locks[k].ino)->path,
				    dbs[i]) && !writes(d->kinds[k]) &&
			    d->locks[k].pid != c->pid)
				lock_lines(cause, s, c, d, k, dbs[i], sb);
	}
	if (ndb > DBS_NAMED)
		strbuf_addf(sb, "and %zu more databases locked",
			    ndb - DBS_NAMED);
	if (ndb > DBS_NAMED)
		run_cause_detail(cause, sb);
}

/* Seen at one line all along: stuck, or retrying between samples. */
static int seen_waiting(const struct run_seen *seen)
{
	return seen->state == RUN_SEEN_STUCK ||
	       (seen->state == RUN_SEEN_MOVING && seen->same_all &&
		seen->same_for > 0);
}

/* " (stuck for at least 2.5s)", " (retrying at that line at every
 * sample, 1.5s)". */
static void add_seen(struct strbuf *sb, const struct run_seen *seen)
{
	if (seen->state == RUN_SEEN_MOVING) {
		strbuf_addf(sb, " (retrying at that line at every sample, "
			    "%.1fs)", seen->same_for);
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
	struct run_seen seen, first = { RUN_SEEN_UNKNOWN, 0, 0, 0, 0, 0 };
	struct run_cause *cause;
	const char *dbs[1];
	struct db_scan d;
	struct strbuf sb;

	if (!c->is_live || !t || !s->facts)
		return;
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
		run_probe_add_line(&sb, c, pid,
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
