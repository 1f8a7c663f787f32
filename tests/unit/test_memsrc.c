/*
 * Unit test of attach/memsrc.c and attach/live.c against a real child.
 *
 * The child (a fork of this program) starts three threads, maps a
 * buffer of four pages holding a known pattern followed by an unmapped
 * page, reports the buffer's address through a pipe, then counts in
 * shared memory: one counter per thread, plus the real-time signals it
 * receives.  The parent reads the child's memory, stops it, checks that
 * it is stopped, resumes it, checks that it runs, and checks that no
 * signal is lost while it stops and resumes it in a loop.
 */
#include "attach/live.h"
#include "attach/live_internal.h"
#include "attach/memsrc_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/hugeheap.h"
#include "common/util.h"
#include "tests/unit/check.h"
#include "common/banned.h"

#define PAGE 4096u
#define NPAGES 4          /* readable pattern pages, then a hole */
#define NTHREADS 4        /* main + 3 */
#define NSIGNALS 300
/* test_clusters()'s region: SPARSE_BLOCKS blocks of SPARSE_STRIDE pages,
 * each page's first word its index in the region. */
#define SPARSE_BLOCKS 200
#define SPARSE_STRIDE 16
/* test_plan_unwritten()'s region: HOLEY_PAGES pages, every HOLEY_EVERY-th
 * written (its first word its index + 1), the others never touched.  Far
 * enough apart that reading them is no sequential scan: once the
 * clusters' other pages prove unused, the reads take one page each, and
 * the pages between stay unwritten (a cluster read maps them in). */
#define HOLEY_PAGES 16384
#define HOLEY_EVERY 16

struct shared {
	volatile long counter[NTHREADS];
	volatile uint64_t self[NTHREADS];  /* pthread_self() of each */
	long sigcount;                     /* updated atomically */
	volatile int ready;
	/* test_guard_gives_back()'s raiser */
	long raised, raised_got;           /* updated atomically */
	volatile int stop_raising;
	/* test_guard_handed_signal_kept()'s steps */
	int deaf_ready, deaf_raised;       /* updated atomically */
};

static struct shared *sh;
static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static uint32_t pattern(size_t i)
{
	return 0xc0de0000u ^ (uint32_t)(i * 2654435761u);
}

/* Hold a target from a thread of its own whatever its size (1), or as
 * for a target of a few threads (0). */
static void tracer_thread(int on)
{
	if (on)
		setenv("COROSCOPE_TEST_TRACER", "thread", 1);
	else
		unsetenv("COROSCOPE_TEST_TRACER");
}

/* ---- the children ---- */

static void on_sigrtmin(void (*handler)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGRTMIN, &sa, NULL);
}

static void on_raised(int sig)
{
	(void)sig;
	__atomic_fetch_add(&sh->raised_got, 1, __ATOMIC_SEQ_CST);
}

/* Raise SIGRTMIN at itself until told to stop: when seized, it is
 * mostly caught taking one (a signal-delivery-stop holds it). */
static void raiser_main(void)
{
	long n;

	on_sigrtmin(on_raised);
	/* Bounded: a minute's worth at most, if the test dies. */
	for (n = 0; !sh->stop_raising && n < 100000000; n++) {
		__atomic_fetch_add(&sh->raised, 1, __ATOMIC_SEQ_CST);
		raise(SIGRTMIN);
	}
	_exit(0);
}

static void on_rt(int sig)
{
	(void)sig;
	__atomic_fetch_add(&sh->sigcount, 1, __ATOMIC_SEQ_CST);
}

static void *spin(void *arg)
{
	int i = (int)(long)arg;

	sh->self[i] = (uint64_t)pthread_self();
	for (;;) {
		sh->counter[i]++;
		sleep_ms(1);
	}
	return NULL;
}

static void child_main(int wfd)
{
	pthread_t t;
	uint32_t *buf;
	uint64_t addr;
	size_t i;
	long k;

	on_sigrtmin(on_rt);

	/* Threads first: their stacks must not land in the hole below. */
	for (k = 1; k < NTHREADS; k++)
		if (pthread_create(&t, NULL, spin, (void *)k))
			_exit(2);
	buf = mmap(NULL, (NPAGES + 2) * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		_exit(2);
	for (i = 0; i < NPAGES * PAGE / 4; i++)
		buf[i] = pattern(i);
	munmap((char *)buf + NPAGES * PAGE, PAGE);
	addr = (uint64_t)(uintptr_t)buf;
	if (write(wfd, &addr, sizeof(addr)) != sizeof(addr))
		_exit(2);
	buf = mmap(NULL, (size_t)SPARSE_BLOCKS * SPARSE_STRIDE * PAGE,
		   PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		_exit(2);
	for (i = 0; i < (size_t)SPARSE_BLOCKS * SPARSE_STRIDE; i++)
		buf[i * PAGE / 4] = (uint32_t)i;
	addr = (uint64_t)(uintptr_t)buf;
	if (write(wfd, &addr, sizeof(addr)) != sizeof(addr))
		_exit(2);
	buf = mmap(NULL, (size_t)HOLEY_PAGES * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		_exit(2);
	for (i = 0; i < HOLEY_PAGES; i += HOLEY_EVERY)
		buf[i * PAGE / 4] = (uint32_t)i + 1;
	addr = (uint64_t)(uintptr_t)buf;
	if (write(wfd, &addr, sizeof(addr)) != sizeof(addr))
		_exit(2);
	close(wfd);
	spin((void *)0);
}

/* ---- helpers for the parent ---- */

static void snapshot(long *c)
{
	int i;

	for (i = 0; i < NTHREADS; i++)
		c[i] = sh->counter[i];
}

/* Do all counters move within a second? */
static int all_running(void)
{
	long a[NTHREADS];
	int i, tries, moved = 0;

	snapshot(a);
	for (tries = 0; tries < 100 && moved != (1 << NTHREADS) - 1; tries++) {
		sleep_ms(10);
		for (i = 0; i < NTHREADS; i++)
			if (sh->counter[i] != a[i])
				moved |= 1 << i;
	}
	return moved == (1 << NTHREADS) - 1;
}

static int none_running(void)
{
	long a[NTHREADS], b[NTHREADS];

	snapshot(a);
	sleep_ms(50);
	snapshot(b);
	return !memcmp(a, b, sizeof(a));
}

/* /proc/PID/status (any thread's id will do) into buf, or -1. */
static int status_read(int pid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* A field of /proc/PID/status, or -1. */
static long status_field(int pid, const char *field)
{
	char buf[4096], *p;

	if (status_read(pid, buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, field);
	return p ? strtol(p + strlen(field), NULL, 10) : -1;
}

/* The thread tracing pid's main thread, 0 for none, -1 when unknown. */
static long raw_tracer_of(int pid)
{
	return status_field(pid, "TracerPid:");
}

/* The process tracing pid (TracerPid names a thread: coroscope's
 * tracer is one of its own), 0 for none, -1 when unknown. */
static long tracer_of(int pid)
{
	long tracer = raw_tracer_of(pid), tgid;

	if (tracer <= 0)
		return tracer;
	tgid = status_field((int)tracer, "Tgid:");
	return tgid > 0 ? tgid : tracer;
}

static int check_pattern(struct memsrc *ms, uint64_t addr, const char *what)
{
	static uint32_t got[NPAGES * PAGE / 4];
	struct cs_err err;
	size_t i;
	int ret;

	cs_err_init(&err);
	ret = memsrc_read(ms, addr, got, sizeof(got), &err);
	CHECK(ret == 0, "%s: read of the pattern: %d %s", what, ret, err.msg);
	if (ret)
		return 0;
	for (i = 0; i < NPAGES * PAGE / 4; i++)
		if (got[i] != pattern(i))
			break;
	CHECK(i == NPAGES * PAGE / 4, "%s: pattern differs at word %zu",
	      what, i);
	return 1;
}

/* The readable prefix of a read running into the hole. */
static void check_hole(struct memsrc *ms, uint64_t addr, const char *what)
{
	unsigned char b[200];
	uint64_t at = addr + NPAGES * PAGE - 96;
	uint32_t w;
	struct cs_err err;
	long got;
	int ret;

	cs_err_init(&err);
	ret = memsrc_read(ms, at, b, sizeof(b), &err);
	CHECK(ret == -CS_ERR_MEMORY && err.code == CS_ERR_MEMORY,
	      "%s: read across the hole gives %d (%s)", what, ret, err.msg);
	CHECK(strstr(err.msg, "0x") != NULL, "%s: message names an address: %s",
	      what, err.msg);
	cs_err_init(&err);
	got = memsrc_read_partial(ms, at, b, sizeof(b), &err);
	CHECK(got == 96, "%s: partial read gives %ld, not 96", what, got);
	memcpy(&w, b, 4);
	CHECK(w == pattern((NPAGES * PAGE - 96) / 4),
	      "%s: partial read data 0x%x", what, w);
	got = memsrc_read_partial(ms, addr + NPAGES * PAGE, b, 8, &err);
	CHECK(got == 0, "%s: read in the hole gives %ld", what, got);
}

/* ---- the tests ---- */

static void test_bad_pids(void)
{
	struct memsrc *ms = NULL;
	struct cs_err err;
	pid_t pid;
	int ret, st;

	cs_err_init(&err);
	ret = live_open(&ms, 0, &err);
	CHECK(ret == -CS_ERR_NO_PROCESS && !ms, "pid 0 gives %d", ret);
	cs_err_init(&err);
	ret = live_open(&ms, -5, &err);
	CHECK(ret == -CS_ERR_NO_PROCESS, "pid -5 gives %d", ret);

	/* A reaped child's pid is (for now) unused. */
	pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, &st, 0);
	cs_err_init(&err);
	ret = live_open(&ms, pid, &err);
	CHECK(ret == -CS_ERR_NO_PROCESS && strstr(err.msg, "no such process"),
	      "gone pid gives %d (%s)", ret, err.msg);

	/* A zombie. */
	pid = fork();
	if (pid == 0)
		_exit(0);
	sleep_ms(100);
	cs_err_init(&err);
	ret = live_open(&ms, pid, &err);
	CHECK(ret == -CS_ERR_NO_PROCESS, "zombie gives %d (%s)", ret, err.msg);
	waitpid(pid, &st, 0);
}

static void test_open(struct memsrc *ms, int pid, uint64_t addr,
		      const char *spaced, const char *deleted)
{
	const struct cs_mapping *m;
	char *s;
	size_t i;
	int found_spaced = 0, found_deleted = 0;

	CHECK(ms->pid == pid, "ms->pid %d", ms->pid);
	CHECK(ms->nthreads == NTHREADS, "%zu threads listed", ms->nthreads);
	CHECK(ms->nthreads && ms->threads[0].tid == pid,
	      "main thread listed first");
	CHECK(ms->nmaps > 5, "%zu mappings", ms->nmaps);
	for (i = 1; i < ms->nmaps; i++)
		if (ms->maps[i].start < ms->maps[i - 1].end)
			break;
	CHECK(i >= ms->nmaps, "mappings sorted and disjoint");

	m = memsrc_find_mapping(ms, addr + 5);
	CHECK(m && m->start <= addr && m->end == addr + NPAGES * PAGE &&
	      !strcmp(m->perms, "rw-p") && !m->path,
	      "mapping of the buffer");
	CHECK(!memsrc_find_mapping(ms, addr + NPAGES * PAGE),
	      "no mapping in the hole");
	CHECK(memsrc_find_mapping(ms, addr + (NPAGES + 1) * PAGE) != NULL,
	      "mapping after the hole");
	CHECK(!memsrc_find_mapping(ms, 0), "no mapping at 0");

	for (i = 0; i < ms->nmaps; i++) {
		const char *p = ms->maps[i].path;

		if (p && !strcmp(p, spaced) && !ms->maps[i].deleted)
			found_spaced = 1;
		if (p && !strcmp(p, deleted) && ms->maps[i].deleted)
			found_deleted = 1;
		if (p && p[0] != '/')
			break;
	}
	CHECK(i == ms->nmaps, "only absolute paths (no [heap] and such)");
	CHECK(found_spaced, "path with spaces '%s' found", spaced);
	CHECK(found_deleted, "deleted path '%s' found and flagged", deleted);

	s = memsrc_target_path(ms, "/usr/lib/x.so");
	{
		char want[64];

		snprintf(want, sizeof(want), "/proc/%d/root/usr/lib/x.so", pid);
		CHECK(s && !strcmp(s, want), "target path %s", s ? s : "NULL");
	}
	free(s);
	CHECK(ms->exe_path && strstr(ms->exe_path, "/exe"), "exe_path");
	CHECK(live_alive(ms), "live_alive while running");
	s = live_cmdline(pid);
	CHECK(s && strstr(s, "test_memsrc"), "cmdline '%s'", s ? s : "NULL");
	free(s);
}

static void test_cache(struct memsrc *ms, uint64_t addr)
{
	struct cs_err err;
	uint64_t v = 0, reads;
	uint32_t w;
	int i, bad = 0;

	memsrc_cache_clear(ms);
	reads = ms->stats.reads;
	cs_err_init(&err);
	for (i = 0; i < 2000; i++) {
		size_t word = (size_t)(i * 37) % (NPAGES * PAGE / 4 - 2);

		if (memsrc_read(ms, addr + word * 4, &w, 4, &err) ||
		    w != pattern(word))
			bad++;
	}
	CHECK(!bad, "%d of 2000 small reads wrong", bad);
	CHECK(ms->stats.reads - reads == 1,
	      "2000 small reads cost %llu backend reads",
	      (unsigned long long)(ms->stats.reads - reads));
	CHECK(ms->stats.bytes_read >= NPAGES * PAGE, "bytes_read counted");

	/* The unreadable page is remembered too. */
	check_hole(ms, addr, "cached");
	reads = ms->stats.reads;
	check_hole(ms, addr, "cached again");
	CHECK(ms->stats.reads == reads, "unreadable page is negatively cached");

	cs_err_init(&err);
	CHECK(memsrc_read_u64(ms, addr, &v, &err) == 0 &&
	      v == ((uint64_t)pattern(1) << 32 | pattern(0)),
	      "read_u64 0x%llx", (unsigned long long)v);
	CHECK(memsrc_read_partial(ms, addr, &w, 0, &err) == 0,
	      "zero-length read");
}

/* Read the first word of pages of the sparse region: the first `used`
 * pages of each block, blocks in order.  How many bytes it cost. */
static uint64_t read_blocks(struct memsrc *ms, uint64_t sparse, size_t used,
			    int *bad)
{
	uint64_t bytes = ms->stats.bytes_read;
	struct cs_err err;
	size_t b, p;
	uint32_t w;

	memsrc_cache_clear(ms);
	cs_err_init(&err);
	for (b = 0; b < SPARSE_BLOCKS; b++)
		for (p = 0; p < used; p++) {
			size_t page = b * SPARSE_STRIDE + p;

			if (memsrc_read(ms, sparse + page * PAGE, &w, 4, &err) ||
			    w != page)
				(*bad)++;
		}
	return ms->stats.bytes_read - bytes;
}

/* A miss reads a cluster of pages, unless the clusters' other pages go
 * unread (10,000 greenlets' data stack chunks): then one page, but for a
 * probe now and then. */
static void test_clusters(struct memsrc *ms, uint64_t sparse)
{
	const uint64_t cluster = CLUSTER_MIN * PAGE;
	uint64_t sparse_bytes, dense_bytes;
	int bad = 0;

	sparse_bytes = read_blocks(ms, sparse, 1, &bad);
	dense_bytes = read_blocks(ms, sparse, CLUSTER_MIN, &bad);
	CHECK(!bad, "%d of the sparse region's words read wrong", bad);
	/* The first CLUSTER_LAG + CLUSTER_WASTED misses read clusters, then
	 * every CLUSTER_PROBE-th, and the others one page. */
	CHECK(sparse_bytes <= (CLUSTER_LAG + CLUSTER_WASTED) * cluster +
	      SPARSE_BLOCKS / CLUSTER_PROBE * cluster + SPARSE_BLOCKS * PAGE &&
	      sparse_bytes >= SPARSE_BLOCKS * PAGE,
	      "one page used of each %u: %llu bytes read for %u misses",
	      SPARSE_STRIDE, (unsigned long long)sparse_bytes, SPARSE_BLOCKS);
	CHECK(dense_bytes == SPARSE_BLOCKS * cluster,
	      "a cluster's pages all used: %llu bytes read, %llu expected",
	      (unsigned long long)dense_bytes,
	      (unsigned long long)(SPARSE_BLOCKS * cluster));
	memsrc_cache_clear(ms);
}

static void test_stop(struct memsrc *ms, int pid, uint64_t addr)
{
	struct cs_err err;
	size_t i, j;
	int ret, ok;

	cs_err_init(&err);
	ret = live_stop(ms, &err);
	CHECK(ret == 0, "live_stop: %d %s", ret, err.msg);
	if (ret)
		return;
	CHECK(none_running(), "no thread runs while stopped");
	CHECK(tracer_of(pid) == getpid(), "we trace it");
	CHECK(ms->nthreads == NTHREADS, "%zu threads when stopped",
	      ms->nthreads);
	ok = 1;
	for (i = 0; i < ms->nthreads; i++) {
		int known = 0;

		if (!ms->threads[i].has_fs_base || !ms->threads[i].fs_base)
			ok = 0;
		for (j = 0; j < NTHREADS; j++)
			if (ms->threads[i].fs_base == sh->self[j])
				known = 1;
		if (!known)
			ok = 0;
	}
	CHECK(ok, "every thread has fs_base == its pthread_self()");
	CHECK(live_stop(ms, &err) == 0, "live_stop twice");
	check_pattern(ms, addr, "stopped");
	check_hole(ms, addr, "stopped");
	CHECK(live_paused_ms(ms) >= 50.0, "paused %.1f ms",
	      live_paused_ms(ms));

	/* The pid of any thread means its process. */
	{
		struct memsrc *ms2 = NULL;

		cs_err_init(&err);
		ret = live_open(&ms2, ms->threads[ms->nthreads - 1].tid, &err);
		CHECK(ret == 0 && ms2 && ms2->pid == pid,
		      "thread id opens the process: %d %s", ret, err.msg);
		if (ms2) {
			cs_err_init(&err);
			ret = live_stop(ms2, &err);
			CHECK(ret == -CS_ERR_PERMISSION &&
			      strstr(err.msg, "already"),
			      "second stop refused: %d %s", ret, err.msg);
		}
		memsrc_free(ms2);
	}

	live_resume(ms);
	CHECK(all_running(), "every thread runs after live_resume");
	CHECK(tracer_of(pid) == 0, "no tracer after resume");
	live_resume(ms);
	CHECK(all_running(), "still running after a second live_resume");

	/* The test hold. */
	setenv("COROSCOPE_TEST_HOLD_MS", "150", 1);
	{
		double before = live_paused_ms(ms);

		cs_err_init(&err);
		ret = live_stop(ms, &err);
		CHECK(ret == 0, "stop with hold: %d %s", ret, err.msg);
		CHECK(live_paused_ms(ms) - before >= 150.0,
		      "hold counted: %.1f ms", live_paused_ms(ms) - before);
		live_resume(ms);
	}
	unsetenv("COROSCOPE_TEST_HOLD_MS");
	CHECK(all_running(), "running after the held stop");
}

static void test_proc_mem(int pid, uint64_t addr)
{
	struct memsrc *ms = NULL;
	struct cs_err err;
	int ret;

	setenv("COROSCOPE_TEST_PROC_MEM", "1", 1);
	cs_err_init(&err);
	ret = live_open(&ms, pid, &err);
	unsetenv("COROSCOPE_TEST_PROC_MEM");
	CHECK(ret == 0, "open for /proc/PID/mem: %d %s", ret, err.msg);
	if (ret)
		return;
	check_pattern(ms, addr, "proc mem");
	check_hole(ms, addr, "proc mem");
	cs_err_init(&err);
	ret = live_stop(ms, &err);
	CHECK(ret == 0, "proc mem stop: %d %s", ret, err.msg);
	check_pattern(ms, addr, "proc mem stopped");
	memsrc_free(ms);  /* resumes */
	CHECK(all_running(), "running after memsrc_free");
}

/* Stop and resume in a loop while another process sends signals. */
static void test_signals(struct memsrc *ms, int pid)
{
	struct cs_err err;
	pid_t sender;
	int st, rounds = 0, bad = 0, i;
	long before = __atomic_load_n(&sh->sigcount, __ATOMIC_SEQ_CST);

	sender = fork();
	if (sender == 0) {
		union sigval v = { 0 };

		for (i = 0; i < NSIGNALS; i++) {
			sigqueue(pid, SIGRTMIN, v);
			usleep(500);
		}
		_exit(0);
	}
	while (waitpid(sender, &st, WNOHANG) == 0 && rounds < 100000) {
		cs_err_init(&err);
		if (live_stop(ms, &err))
			bad++;
		live_resume(ms);
		rounds++;
	}
	CHECK(!bad, "%d of %d stops failed", bad, rounds);
	for (i = 0; i < 300; i++) {
		if (__atomic_load_n(&sh->sigcount, __ATOMIC_SEQ_CST) - before
		    >= NSIGNALS)
			break;
		sleep_ms(10);
	}
	CHECK(__atomic_load_n(&sh->sigcount, __ATOMIC_SEQ_CST) - before ==
	      NSIGNALS, "%ld of %d signals arrived over %d stops",
	      __atomic_load_n(&sh->sigcount, __ATOMIC_SEQ_CST) - before,
	      NSIGNALS, rounds);
	CHECK(all_running(), "running after the signal loop");
}

/* The signals the guard takes, back to their default action: a test run
 * as a background job inherits SIGINT and SIGQUIT ignored, and the guard
 * leaves an ignored signal ignored. */
static void default_fatal_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	size_t i;

	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
}

/*
 * A process that stops pid and holds it for 20 s, its signal guard on,
 * returned once it traces pid (or 5 s later).  Exit status 3: it could
 * not stop pid; 4: the hold ended, no test killed it.
 */
static pid_t fork_holder(int pid)
{
	pid_t tracer = fork();
	int i;

	if (tracer == 0) {
		struct memsrc *tms = NULL;
		struct cs_err terr;

		default_fatal_signals();
		live_install_signal_guard();
		setenv("COROSCOPE_TEST_HOLD_MS", "20000", 1);
		cs_err_init(&terr);
		if (live_open(&tms, pid, &terr) || live_stop(tms, &terr))
			_exit(3);
		_exit(4);
	}
	for (i = 0; i < 500 && tracer_of(pid) != tracer; i++)
		sleep_ms(10);
	return tracer;
}

/* Where test_tracer_dies() sends its signal. */
enum aim { AIM_PROCESS, AIM_MAIN_THREAD, AIM_TRACER_THREAD };

/*
 * Another process stops the child and holds it; we must be refused with
 * a message naming it; then it dies of sig and the child must run on.
 * Aimed at its main thread, which waits in the hold, the guard there
 * must hand the signal to the thread that traces, and that one die of
 * it (if the hand-over failed, the hold would end: exit status 4).
 */
static void test_tracer_dies(struct memsrc *ms, int pid, int sig,
			     enum aim aim)
{
	struct cs_err err;
	pid_t tracer;
	int st, ret;
	char want[64];

	tracer = fork_holder(pid);
	CHECK(tracer_of(pid) == tracer, "tracer %d attached", tracer);
	sleep_ms(50);  /* let it reach the hold */
	CHECK(none_running(), "stopped by the tracer");

	cs_err_init(&err);
	ret = live_stop(ms, &err);
	snprintf(want, sizeof(want), "already traced by process %d", tracer);
	CHECK(ret == -CS_ERR_PERMISSION && strstr(err.msg, want),
	      "stop of a traced process: %d %s", ret, err.msg);
	CHECK(none_running(), "our failed stop did not resume it");

	if (aim == AIM_MAIN_THREAD)
		syscall(SYS_tgkill, tracer, tracer, sig);
	else if (aim == AIM_TRACER_THREAD)
		syscall(SYS_tgkill, tracer, (int)raw_tracer_of(pid), sig);
	else
		kill(tracer, sig);
	waitpid(tracer, &st, 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == sig,
	      "tracer died of signal %d (status 0x%x)", sig, st);
	CHECK(all_running(), "running after the tracer died of %d", sig);
	CHECK(tracer_of(pid) == 0, "no tracer left after signal %d", sig);
}

/*
 * A tracer process holds a thread that raises signals in a loop (at the
 * stop it is mostly taking one: a signal-delivery-stop holds it) and is
 * killed by SIGTERM aimed at its main thread.  The guard gives the held
 * signal back before it dies, on the main thread or, when a tracer
 * thread holds the target, on that one, to which it hands the SIGTERM:
 * every signal raised must arrive.  (The kernel's own detach, as the
 * tracer dies, would drop it.)
 */
static void test_guard_gives_back(void)
{
	int round, lost = 0, st;

	for (round = 0; round < 6; round++) {
		pid_t raiser, tracer;

		sh->stop_raising = 0;
		sh->raised = sh->raised_got = 0;
		raiser = fork();
		if (raiser == 0)
			raiser_main();
		sleep_ms(20);
		tracer = fork_holder(raiser);
		sleep_ms(30);  /* into the hold */
		syscall(SYS_tgkill, tracer, tracer, SIGTERM);
		waitpid(tracer, &st, 0);
		CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM,
		      "raiser's tracer died of SIGTERM (status 0x%x)", st);
		sh->stop_raising = 1;
		waitpid(raiser, &st, 0);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "raiser ran on to its end (status 0x%x)", st);
		if (__atomic_load_n(&sh->raised_got, __ATOMIC_SEQ_CST) !=
		    __atomic_load_n(&sh->raised, __ATOMIC_SEQ_CST))
			lost++;
	}
	CHECK(!lost, "signals lost in %d of 6 rounds", lost);
}

/* A tracer thread that takes no SIGTERM, then exits once the main
 * thread has raised one: the SIGTERM handed to it is dropped with it.
 * The two steps are told through the shared page (bounded waits). */
static void *deaf_tracer(void *arg)
{
	sigset_t term;
	int i;

	(void)arg;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, NULL);
	live_guard_set_tracer((int)syscall(SYS_gettid));
	__atomic_store_n(&sh->deaf_ready, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < 1000 && !__atomic_load_n(&sh->deaf_raised,
						     __ATOMIC_SEQ_CST); i++)
		sleep_ms(5);
	live_guard_set_tracer(0);
	return NULL;
}

/*
 * The guard hands a SIGTERM taken by another thread to the tracer; if the
 * tracer exits before taking it, live_guard_tracer_gone() must raise it
 * again: coroscope dies of it rather than running on as if never told.
 */
static void test_guard_handed_signal_kept(void)
{
	pid_t child;
	int st;

	sh->deaf_ready = sh->deaf_raised = 0;
	child = fork();
	if (child == 0) {
		pthread_t t;
		int i;

		default_fatal_signals();
		live_install_signal_guard();
		if (pthread_create(&t, NULL, deaf_tracer, NULL))
			_exit(3);
		for (i = 0; i < 1000 && !__atomic_load_n(&sh->deaf_ready,
							 __ATOMIC_SEQ_CST); i++)
			sleep_ms(5);
		if (!sh->deaf_ready)
			_exit(5);
		raise(SIGTERM);  /* handed to the deaf tracer */
		__atomic_store_n(&sh->deaf_raised, 1, __ATOMIC_SEQ_CST);
		pthread_join(t, NULL);
		live_guard_tracer_gone();
		_exit(0);
	}
	waitpid(child, &st, 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM,
	      "a SIGTERM handed to a tracer that exited ends coroscope "
	      "(status 0x%x)", st);
}

#define MANY_THREADS 100

static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* How many of pid's threads are traced or in a stop, -1 on error. */
static int held_threads(int pid)
{
	char path[64], buf[4096], *p;
	struct dirent *e;
	int held = 0, n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)) && n++ < 4096) {
		int tid = (int)strtol(e->d_name, NULL, 10);

		if (tid <= 0 || status_read(tid, buf, sizeof(buf)) < 0)
			continue;
		p = strstr(buf, "TracerPid:");
		if (p && strtol(p + 10, NULL, 10) != 0)
			held++;
		else if ((p = strstr(buf, "State:")) && strchr("tT", p[7]))
			held++;
	}
	closedir(d);
	return held;
}

/*
 * A child of MANY_THREADS + 1 threads is held by a tracer thread of
 * ours (64 threads or more: attach/live_tracer.c), not by this thread;
 * once live_resume() returns, none of its threads is traced or stopped.
 */
static void test_many_threads(void)
{
	struct memsrc *ms = NULL;
	struct cs_err err;
	int fds[2], ret, i;
	long raw;
	pid_t child;
	char c;

	if (pipe(fds) < 0)
		return;
	child = fork();
	if (child == 0) {
		pthread_t t;

		close(fds[0]);
		for (i = 0; i < MANY_THREADS; i++)
			if (pthread_create(&t, NULL, idle_thread, NULL))
				_exit(2);
		if (write(fds[1], "r", 1) != 1)
			_exit(2);
		for (;;)
			pause();
	}
	close(fds[1]);
	ret = read(fds[0], &c, 1) == 1 ? 0 : -1;
	close(fds[0]);
	CHECK(ret == 0, "the %d-thread child started", MANY_THREADS + 1);
	cs_err_init(&err);
	if (!ret)
		ret = live_open(&ms, child, &err);
	for (i = 0; !ret && i < 3; i++) {
		ret = live_stop(ms, &err);
		CHECK(ret == 0 && ms->nthreads == MANY_THREADS + 1,
		      "stop %d of the many threads: %d %s, %zu threads", i,
		      ret, err.msg, ret ? (size_t)0 : ms->nthreads);
		if (ret)
			break;
		raw = raw_tracer_of(child);
		CHECK(raw > 0 && raw != getpid() && tracer_of(child) == getpid(),
		      "held by a thread of ours, not the main one: %ld", raw);
		live_resume(ms);
		CHECK(held_threads(child) == 0,
		      "%d threads still traced or stopped after live_resume",
		      held_threads(child));
	}
	memsrc_free(ms);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

static void test_exit(struct memsrc *ms, int pid, uint64_t addr)
{
	struct cs_err err;
	unsigned char b[8];
	int ret, st;

	cs_err_init(&err);
	ret = live_stop(ms, &err);
	CHECK(ret == 0, "stop before kill: %d %s", ret, err.msg);
	kill(pid, SIGKILL);
	sleep_ms(100);
	memsrc_cache_clear(ms);
	cs_err_init(&err);
	ret = memsrc_read(ms, addr, b, sizeof(b), &err);
	CHECK(ret == -CS_ERR_EXITED, "read after kill: %d %s", ret, err.msg);
	CHECK(!live_alive(ms), "not alive after kill");
	live_resume(ms);
	cs_err_init(&err);
	ret = live_stop(ms, &err);
	CHECK(ret == -CS_ERR_EXITED || ret == -CS_ERR_NO_PROCESS,
	      "stop after kill: %d %s", ret, err.msg);
	live_resume(ms);
	waitpid(pid, &st, 0);
}

static char *make_file(const char *name_template, int do_unlink, void **map)
{
	char *path = strdup(name_template);
	int fd = mkstemp(path);

	if (fd < 0 || ftruncate(fd, PAGE) < 0) {
		perror("mkstemp");
		exit(2);
	}
	*map = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (do_unlink)
		unlink(path);
	return path;
}

static int u64_cmp_test(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int planned(const struct memsrc_cache *c, uint64_t page)
{
	size_t i;

	for (i = 0; i < c->nplan; i++)
		if (c->plan[i] == page)
			return 1;
	return 0;
}

/* The pages of page's 16 KiB block, but page itself, in its mapping,
 * that the plan has. */
static int block_planned(const struct memsrc *ms, uint64_t page)
{
	uint64_t start = page & ~(uint64_t)(4 * PAGE - 1), p;
	const struct cs_mapping *m = memsrc_find_mapping(ms, page);
	int n = 0;

	for (p = start; p < start + 4 * PAGE; p += PAGE)
		n += p != page && memsrc_find_mapping(ms, p) == m &&
		     planned(ms->cache, p);
	return n;
}

/* Planned pages outside the mappings holding sp[0..n). */
static size_t planned_elsewhere(const struct memsrc *ms, const uint64_t *sp,
				size_t n)
{
	size_t i, k, count = 0;

	for (i = 0; i < ms->cache->nplan; i++) {
		const struct cs_mapping *m =
			memsrc_find_mapping(ms, ms->cache->plan[i]);
		int stack = 0;

		for (k = 0; k < n; k++)
			stack |= m == memsrc_find_mapping(ms, sp[k]);
		count += !stack;
	}
	return count;
}

/* A plan learnt from reads of each stopped thread's stack at its stack
 * pointer and of the pattern buffer: memsrc_plan_trim_stacks() keeps the
 * pages read and everything planned outside the stacks (the buffer's
 * block), and drops the rest of each stack page's block. */
static void test_plan_trim(struct memsrc *ms, uint64_t addr)
{
	struct memsrc_cache *c = ms->cache;
	uint64_t sp[NTHREADS], v;
	struct cs_err err;
	size_t i, n, dropped;
	int ret, before = 0, after = 0, kept = 1;
	size_t others;

	cs_err_init(&err);
	ret = live_stop(ms, &err);
	CHECK(ret == 0, "live_stop: %d %s", ret, err.msg);
	if (ret)
		return;
	n = ms->nthreads < NTHREADS ? ms->nthreads : NTHREADS;
	for (i = 0; i < n; i++) {
		sp[i] = ms->threads[i].regs.r[CS_REG_RSP];
		CHECK(ms->threads[i].has_regs &&
		      memsrc_read_u64(ms, sp[i], &v, &err) == 0,
		      "read at thread %zu's stack pointer: %s", i, err.msg);
	}
	CHECK(memsrc_read_u64(ms, addr, &v, &err) == 0, "read the buffer");
	CHECK(memsrc_plan_learn(ms) > 0, "a plan was learnt");
	for (i = 0; i < n; i++)
		before += block_planned(ms, sp[i] & ~(uint64_t)(PAGE - 1));
	others = planned_elsewhere(ms, sp, n);
	dropped = memsrc_plan_trim_stacks(ms);
	for (i = 0; i < n; i++) {
		uint64_t page = sp[i] & ~(uint64_t)(PAGE - 1);

		kept &= planned(c, page);
		after += block_planned(ms, page);
	}
	CHECK(before >= (int)n, "the stack pages' blocks were planned: %d",
	      before);
	CHECK(kept, "every stack page read stays planned");
	CHECK(after == 0 && dropped >= (size_t)before,
	      "the rest of their blocks is dropped: %d left, %zu dropped",
	      after, dropped);
	CHECK(others > 0 && planned(c, addr) &&
	      planned_elsewhere(ms, sp, n) == others,
	      "the plan outside the stacks is kept: %zu of %zu pages",
	      planned_elsewhere(ms, sp, n), others);
	live_resume(ms);
	c->nplan = c->nplan_used = 0;
}

/* The first address at or after addr in no writable mapping. */
static uint64_t writable_run_end(const struct memsrc *ms, uint64_t addr)
{
	const struct cs_mapping *m;
	int k;

	/* Bounded: a few mappings touch each other at most, in a test. */
	for (k = 0; k < 64 && (m = memsrc_find_mapping(ms, addr)) &&
	     m->perms[1] == 'w'; k++)
		addr = m->end;
	return addr;
}

/* Each stopped thread's stack top planned as --native plans it: the
 * pages from below its stack pointer up to its stack's end, none past
 * it (the guard page, then the unused bottom of another thread's
 * stack, for threads 2 and 3 of the child). */
static void test_plan_stack_top(struct memsrc *ms)
{
	const uint64_t len = 64 << 10;
	struct memsrc_cache *c = ms->cache;
	struct cs_err err;
	size_t i, k, n, past = 0, missing = 0, neighbours = 0, guarded;
	int ret;

	cs_err_init(&err);
	ret = live_stop(ms, &err);
	CHECK(ret == 0, "live_stop: %d %s", ret, err.msg);
	if (ret)
		return;
	n = ms->nthreads;
	for (i = 0; i < n; i++) {
		uint64_t sp = ms->threads[i].regs.r[CS_REG_RSP] - 128, end, p;

		if (!ms->threads[i].has_regs)
			continue;
		c->nplan = 0;
		memsrc_plan_add(ms, sp, len);
		end = writable_run_end(ms, sp);
		/* Another writable mapping within reach past a gap: what
		 * the plan must not reach. */
		for (p = end; p < sp + len; p += PAGE) {
			const struct cs_mapping *m = memsrc_find_mapping(ms, p);

			if (m && m->perms[1] == 'w') {
				neighbours++;
				break;
			}
		}
		for (k = 0; k < c->nplan; k++)
			past += c->plan[k] >= end;
		for (p = sp & ~(uint64_t)(PAGE - 1); p < end && p < sp + len;
		     p += PAGE)
			missing += !planned(c, p);
	}
	CHECK(past == 0 && missing == 0,
	      "stack tops planned up to their stacks' ends: %zu pages past, "
	      "%zu missing", past, missing);
	CHECK(neighbours > 0, "%zu of %zu threads have another writable "
	      "mapping within 64 KiB past their stack", neighbours, n);
	/* A range that starts in the guard page below a stack (a stack
	 * pointer within the red zone of its end): the stack's pages. */
	guarded = 0;
	for (i = 0; i < n; i++) {
		const struct cs_mapping *m, *below;
		uint64_t p;

		m = memsrc_find_mapping(ms, ms->threads[i].regs.r[CS_REG_RSP]);
		if (!ms->threads[i].has_regs || !m || m->start < PAGE)
			continue;
		below = memsrc_find_mapping(ms, m->start - PAGE);
		if (below && below->perms[1] == 'w')
			continue;
		guarded++;
		c->nplan = 0;
		memsrc_plan_add(ms, m->start - 128, 4 * PAGE + 128);
		for (p = m->start; p < m->start + 4 * PAGE && p < m->end;
		     p += PAGE)
			missing += !planned(c, p);
	}
	CHECK(guarded > 0 && missing == 0,
	      "ranges from a guard page (%zu threads): %zu stack pages "
	      "missing", guarded, missing);
	live_resume(ms);
	c->nplan = c->nplan_used = 0;
}

/*
 * A capture of every writable mapping (the thread stacks make it more
 * than enough pages to be copied on two threads): every page of them is
 * cached, the pattern and the hole read as before, and the counters in
 * the shared mapping read as they were at the stop while the child's
 * threads move them on.
 */
#define CAPTURE_LIMIT ((size_t)1 << 30)

/* A sum over the first word of every captured page and the pattern,
 * read on one of the shared section's threads. */
struct share_reader {
	struct memsrc *ms;
	uint64_t addr;
	unsigned slot;
	uint64_t sum;
	size_t failed;
};

static void *share_read(void *arg)
{
	struct share_reader *r = arg;
	struct memsrc *ms = r->ms;
	uint32_t *pat = malloc(NPAGES * PAGE);
	struct cs_err err;
	uint64_t page, v;
	size_t i;

	memsrc_thread(r->slot);
	cs_err_init(&err);
	r->sum = 0;
	r->failed = 0;
	for (i = 0; i < ms->nmaps; i++) {
		if (!mcache_may_change(&ms->maps[i]))
			continue;
		for (page = ms->maps[i].start; page < ms->maps[i].end;
		     page += PAGE) {
			if (memsrc_read_u64(ms, page, &v, &err) != 0)
				r->failed++;
			else
				r->sum = r->sum * 31 + v;
		}
	}
	if (!pat || memsrc_read(ms, r->addr, pat, NPAGES * PAGE, &err) != 0)
		r->failed++;
	else
		for (i = 0; i < NPAGES * PAGE / 4; i++)
			r->failed += pat[i] != pattern(i);
	free(pat);
	memsrc_thread(0);
	return NULL;
}

/*
 * A captured cache shared by two threads: both find every page without
 * the lock and read what one thread alone reads; the table does not
 * grow while shared, and a fill that would need it to fails as missed.
 */
static void test_shared(struct memsrc *ms, uint64_t addr)
{
	struct memsrc_cache *c = ms->cache;
	struct share_reader alone = { ms, addr, 0, 0, 0 };
	struct share_reader two[2] = { { ms, addr, 0, 0, 0 },
				       { ms, addr, 1, 0, 0 } };
	uint64_t code = (uint64_t)(uintptr_t)&share_read, v;
	size_t cap, room, nentries;
	struct cs_err err;
	pthread_t t;
	int ret;

	share_read(&alone);
	CHECK(alone.failed == 0, "%zu reads of the capture failed",
	      alone.failed);
	memsrc_share(ms, 1);
	cap = c->cap;
	room = cap / 2 - c->nentries;
	CHECK(room >= SHARED_ROOM, "room for %zu pages when shared, not %d",
	      room, SHARED_ROOM);
	CHECK(mcache_table_reserve(c, room + 1) == -1 && c->cap == cap,
	      "the table grew while shared: %zu -> %zu", cap, c->cap);
	CHECK(mcache_table_reserve(c, room) == 0 && c->cap == cap,
	      "room within the table refused while shared");
	ret = pthread_create(&t, NULL, share_read, &two[1]);
	CHECK(ret == 0, "pthread_create: %d", ret);
	share_read(&two[0]);
	if (ret == 0)
		pthread_join(t, NULL);
	CHECK(two[0].failed == 0 && two[1].failed == 0,
	      "shared reads failed: %zu and %zu", two[0].failed,
	      two[1].failed);
	CHECK(two[0].sum == alone.sum && two[1].sum == alone.sum,
	      "shared reads differ from one thread's");
	CHECK(!ms->missed, "a shared read of the capture went to the target");
	/* Read-only pages not captured (the C library's code, the child's
	 * too), with room for two more in the table: the fill takes two
	 * pages of its cluster, and nothing counts as missed. */
	nentries = c->nentries;
	c->nentries = cap / 2 - 2;
	cs_err_init(&err);
	ret = memsrc_read_u64(ms, (uint64_t)(uintptr_t)&strlen, &v, &err);
	CHECK(ret == 0 && !ms->missed && c->nentries == cap / 2 &&
	      c->cap == cap,
	      "a fill with room for 2 while shared: %d, %llu missed, %zu "
	      "added: %s", ret, (unsigned long long)ms->missed,
	      c->nentries - (cap / 2 - 2), err.msg);
	nentries += c->nentries - (cap / 2 - 2);
	/* A page not captured (this program's code, the child's too), with
	 * the table full as far as a shared cache may fill it. */
	c->nentries = cap / 2;
	cs_err_init(&err);
	ret = memsrc_read_u64(ms, code, &v, &err);
	CHECK(ret == -CS_ERR_MEMORY && ms->missed == 1 && c->cap == cap &&
	      strstr(err.msg, "full") != NULL,
	      "a fill with no room while shared: %d, %llu missed, %s", ret,
	      (unsigned long long)ms->missed, err.msg);
	c->nentries = nentries;
	ms->missed = 0;
	memsrc_share(ms, 0);
	CHECK(mcache_table_reserve(c, room + 1) == 0 && c->cap == 2 * cap,
	      "the table does not grow once no longer shared");
	CHECK(memsrc_read_u64(ms, code, &v, &err) == 0 && !ms->missed,
	      "a read-only page read after the shared section: %s", err.msg);
}

/* Slab pages handed out since the cache was last cleared. */
static size_t room_end(const struct memsrc_cache *c)
{
	size_t k, n = c->used;

	for (k = 0; k < c->cur && k < c->nslabs; k++)
		n += c->slabs[k].pages;
	return n;
}

/*
 * A plan whose pages were mostly never written (the blocks around the
 * written pages of the holey region): its capture copies the written
 * ones only, and caches the others as zeros.
 */
static void test_plan_unwritten(struct memsrc *ms, uint64_t holey)
{
	struct memsrc_cache *c = ms->cache;
	struct cs_err err;
	size_t i, wrong = 0, uncached = 0;
	uint64_t v;
	int ret;

	memsrc_cache_clear(ms);
	c->nplan = c->nplan_used = 0;
	cs_err_init(&err);
	for (i = 0; i < HOLEY_PAGES; i += HOLEY_EVERY)
		wrong += memsrc_read_u64(ms, holey + i * PAGE, &v, &err) != 0 ||
			 (uint32_t)v != i + 1;
	CHECK(wrong == 0, "%zu written pages read wrong before", wrong);
	CHECK(memsrc_plan_learn(ms) >= HOLEY_PAGES / HOLEY_EVERY * PLAN_BLOCK,
	      "their blocks planned: %zu pages", c->nplan);
	CHECK(c->skip_unwritten, "never-written pages are most of the plan");
	ret = live_stop(ms, &err);
	CHECK(ret == 0, "live_stop: %d %s", ret, err.msg);
	if (ret)
		return;
	ret = memsrc_capture(ms, MEMSRC_CAPTURE_PLAN, CAPTURE_LIMIT, &err);
	live_resume(ms);
	CHECK(ret == 1, "capture of the plan: %d %s", ret, err.msg);
	for (i = 0; i < HOLEY_PAGES; i++) {
		uint64_t page = holey + i * PAGE;
		int in_plan = bsearch(&page, c->plan, c->nplan,
				      sizeof(*c->plan), u64_cmp_test) != NULL;

		if (!in_plan)
			continue;
		uncached += !mcache_lookup(c, page);
		wrong += memsrc_read_u64(ms, page, &v, &err) != 0 ||
			 v != (i % HOLEY_EVERY ? 0 : i + 1);
	}
	CHECK(uncached == 0 && wrong == 0 && !ms->missed,
	      "planned pages: %zu not captured, %zu read wrong, %llu missed",
	      uncached, wrong, (unsigned long long)ms->missed);
	/* Copied: the written pages, and what else the reads planned (the
	 * few pages of the plan outside the region). */
	CHECK(c->npages < c->nplan / 2 &&
	      c->npages >= HOLEY_PAGES / HOLEY_EVERY,
	      "%zu of %zu planned pages copied", c->npages, c->nplan);
	memsrc_cache_clear(ms);
	c->nplan = c->nplan_used = 0;
}

/* The writable private anonymous pages of the stopped target that its
 * /proc/PID/pagemap says it never wrote (neither in memory nor swapped
 * out), and whether each of them reads as zeros from the capture. */
static size_t unwritten_pages(struct memsrc *ms, size_t *not_zero)
{
	char path[64];
	size_t i, n = 0;
	uint64_t page, e, v;
	int fd;

	*not_zero = 0;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", ms->pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	for (i = 0; i < ms->nmaps; i++) {
		const struct cs_mapping *m = &ms->maps[i];
		struct cs_err err;

		if (m->perms[1] != 'w' || m->perms[3] != 'p' ||
		    (m->path && strcmp(m->path, "[heap]") &&
		     strcmp(m->path, "[stack]")))
			continue;
		for (page = m->start; page < m->end; page += PAGE) {
			if (pread(fd, &e, sizeof(e),
				  (off_t)(page / PAGE * sizeof(e))) !=
			    sizeof(e) || e >> 62)
				continue;
			n++;
			cs_err_init(&err);
			*not_zero += memsrc_read_u64(ms, page + PAGE - 8, &v,
						     &err) != 0 || v != 0;
		}
	}
	close(fd);
	return n;
}

/* What test_reserve_asks() lets memsrc_reserve_all() see. */
static int (*real_resident)(struct memsrc *, uint64_t, size_t,
			    unsigned char *);
static size_t asked_pages;
static int64_t told_written;

static int counting_resident(struct memsrc *ms, uint64_t page, size_t n,
			     unsigned char *out)
{
	asked_pages += n;
	return real_resident(ms, page, n, out);
}

static int64_t telling_written(struct memsrc *ms)
{
	(void)ms;
	return told_written;
}

/* Pages asked of resident() by memsrc_reserve_all() when the target is
 * said to have written `written` bytes. */
static size_t reserve_asks(struct memsrc *ms, int64_t written)
{
	asked_pages = 0;
	told_written = written;
	memsrc_reserve_all(ms, 0);
	return asked_pages;
}

/*
 * The child's writable memory is mostly pages it never wrote (the holey
 * region, its threads' stacks): memsrc_reserve_all() asks which, page by
 * page, unless the target's written bytes (RssAnon and VmSwap) leave too
 * few unwritten for the copy to leave out.
 */
static void test_reserve_asks(struct memsrc *ms)
{
	const struct memsrc_ops *real = ms->ops;
	struct memsrc_ops ops = *real;
	uint64_t writable = memsrc_writable_bytes(ms);
	long anon = status_field(ms->pid, "RssAnon:");
	long swap = status_field(ms->pid, "VmSwap:");
	int64_t written = real->written_bytes(ms);
	size_t asked;

	/* The child writes only to counters and stacks by now. */
	CHECK(anon > 0 && swap >= 0 &&
	      llabs(written - (int64_t)(anon + swap) * 1024) <= 256 * 1024,
	      "written bytes %lld, status says %ld kB + %ld kB",
	      (long long)written, anon, swap);
	if (writable > CAPTURE_LIMIT || written < 0 ||
	    (uint64_t)written * 2 >= writable) {
		printf("skip: reserve asks: %lld of %llu writable bytes written "
		       "(a sanitizer's shadow memory is too big to reserve)\n",
		       (long long)written, (unsigned long long)writable);
		return;
	}
	real_resident = real->resident;
	ops.resident = counting_resident;
	ops.written_bytes = telling_written;
	ms->ops = &ops;
	asked = reserve_asks(ms, written);
	CHECK(asked >= writable / PAGE / 2 && ms->cache->skip_unwritten,
	      "%zu pages asked of %llu writable bytes, %lld written, "
	      "skipping %d", asked, (unsigned long long)writable,
	      (long long)written, ms->cache->skip_unwritten);
	asked = reserve_asks(ms, -1);
	CHECK(asked >= writable / PAGE / 2 && ms->cache->skip_unwritten,
	      "%zu pages asked not knowing what was written", asked);
	asked = reserve_asks(ms, (int64_t)writable / 2 + 4096 * PAGE);
	CHECK(asked == 0 && !ms->cache->skip_unwritten,
	      "%zu pages asked though over half the writable bytes are "
	      "written, skipping %d", asked, ms->cache->skip_unwritten);
	ms->ops = real;
	memsrc_cache_clear(ms);
}

static void test_capture_all(struct memsrc *ms, uint64_t addr)
{
	struct cs_err err;
	long at_stop[NTHREADS];
	uint64_t page, v, total = 0;
	size_t i, missing = 0, differ = 0, unwritten, not_zero;
	int ret;

	if (memsrc_writable_bytes(ms) > CAPTURE_LIMIT) {
		printf("skip: capture: %llu writable bytes (a sanitizer's "
		       "shadow memory) are more than a capture copies\n",
		       (unsigned long long)memsrc_writable_bytes(ms));
		return;
	}
	cs_err_init(&err);
	/* As collect does: room set up ahead, for the pages written. */
	memsrc_reserve_all(ms, 1);
	ret = live_stop(ms, &err);
	CHECK(ret == 0, "live_stop: %d %s", ret, err.msg);
	if (ret)
		return;

	snapshot(at_stop);
	ret = memsrc_capture(ms, MEMSRC_CAPTURE_ALL, CAPTURE_LIMIT, &err);
	/* Still stopped: the pages it never wrote are the stop's. */
	unwritten = unwritten_pages(ms, &not_zero);
	live_resume(ms);
	CHECK(ret == 1 && ms->frozen == MEMSRC_FROZEN_ALL,
	      "capture of every writable mapping: %d %s", ret, err.msg);
	CHECK(unwritten > 0 && not_zero == 0,
	      "%zu pages never written (its threads' stacks), %zu of them "
	      "not read as zeros", unwritten, not_zero);
	for (i = 0; i < ms->nmaps; i++) {
		if (!mcache_may_change(&ms->maps[i]))
			continue;
		for (page = ms->maps[i].start; page < ms->maps[i].end;
		     page += PAGE, total++)
			missing += !mcache_lookup(ms->cache, page);
	}
	CHECK(total > 2048 && missing == 0,
	      "%zu of %llu writable pages not captured", missing,
	      (unsigned long long)total);
	/* The copy's room is all the slab pages from the start, no tail
	 * left unused, and none for the pages never written, which are
	 * cached as zeros, not copied. */
	CHECK(room_end(ms->cache) == total - unwritten,
	      "the copy took %zu slab pages for %llu pages, %zu never "
	      "written", room_end(ms->cache), (unsigned long long)total,
	      unwritten);
	CHECK(all_running(), "the child runs on after the capture");
	for (i = 0; i < NTHREADS; i++) {
		ret = memsrc_read_u64(ms, (uint64_t)(uintptr_t)&sh->counter[i],
				      &v, &err);
		differ += ret != 0 || (long)v != at_stop[i];
	}
	CHECK(differ == 0, "%zu counters read otherwise than at the stop",
	      differ);
	check_pattern(ms, addr, "captured");
	check_hole(ms, addr, "captured");
	CHECK(!ms->missed, "a captured read went to the target");
	test_shared(ms, addr);
	memsrc_cache_clear(ms);
}

/* A source on the child with a cache of its own, or NULL (failed). */
static struct memsrc *open_own(int pid)
{
	struct memsrc *ms = NULL;
	struct cs_err err;
	int ret;

	cs_err_init(&err);
	ret = live_open(&ms, pid, &err);
	CHECK(ret == 0, "live_open: %d %s", ret, err.msg);
	return ret ? NULL : ms;
}

/*
 * The reserve's thread faults the copy's memory in while the main thread
 * reads on (collect looks for the interpreter meanwhile): the main
 * thread's fills go on past the reserved pages, and the thread's touches
 * keep a page's bytes.  A cache of its own, its pattern pages filled
 * first and then counted as not faulted in, so that the thread surely
 * goes over them; each cached page's first byte (0 in the pattern)
 * marked, the byte a page's touch writes.  (That fills and touches never
 * meet is ThreadSanitizer's to see, in check-tsan's dumps.)
 */
static void test_reserve_keeps(int pid, uint64_t addr)
{
	struct memsrc *ms = open_own(pid);
	struct memsrc_cache *c;
	struct cache_entry *e;
	size_t pages, i, marked = 0, kept = 0;

	if (!ms)
		return;
	c = ms->cache;
	if (check_pattern(ms, addr, "before the reserve")) {
		pages = room_end(c);
		CHECK(pages >= NPAGES, "%zu slab pages used", pages);
		for (i = 0; i < NPAGES; i++)
			if ((e = mcache_lookup(c, addr + i * PAGE)) && e->data) {
				e->data[0] = 0x5a;
				marked++;
			}
		c->faulted = 0;
		mcache_reserve_start(c, pages + 1024);
		CHECK(cs_cpus() < 2 || c->filler,
		      "no thread faults the reserve in on %d CPUs", cs_cpus());
		/* Fills from now on go past the thread's pages. */
		CHECK(!c->filler || room_end(c) >= pages + 1024,
		      "fills go on at slab page %zu, in the reserve's %zu",
		      room_end(c), pages + 1024);
		mcache_reserve_wait(c);
		CHECK(!c->filler && c->faulted >= pages + 1024,
		      "the reserve is not done: %zu pages faulted", c->faulted);
		for (i = 0; i < NPAGES; i++)
			if ((e = mcache_lookup(c, addr + i * PAGE)) && e->data)
				kept += e->data[0] == 0x5a;
		CHECK(marked == NPAGES && kept == marked,
		      "%zu of %zu cached pages kept their bytes through the "
		      "reserve's thread", kept, marked);
	}
	memsrc_free(ms);
}

/*
 * The thread that waits for the reserve's thread faults pages in too,
 * from the same count: 64 MB (32 units, ~6 ms of faults here) waited
 * for at once leaves it some.  Only a waiter held off the CPU for the
 * whole reserve gets none: three tries, each with a cache of its own.
 */
static void test_wait_helps(int pid)
{
	struct memsrc *ms;
	size_t helped = 0, pages = (size_t)16384, tries;
	int started = 0;

	for (tries = 0; tries < 3 && !helped; tries++) {
		ms = open_own(pid);
		if (!ms)
			return;
		mcache_reserve_start(ms->cache, pages);
		started = ms->cache->filler != NULL;
		helped = mcache_reserve_wait(ms->cache);
		CHECK(ms->cache->faulted >= pages,
		      "the reserve is not done: %zu pages faulted",
		      ms->cache->faulted);
		memsrc_free(ms);
		if (!started)
			break;
	}
	if (!started)
		printf("skip: the wait helps the reserve: no thread started "
		       "(%d CPUs)\n", cs_cpus());
	else
		CHECK(helped > 0, "the waiting thread faulted none of %zu "
		      "pages in, %zu tries", pages, tries);
}

/* A stop waits for the reserve's thread: its faults are not to be the
 * target's pause.  (A cache of its own: one that has faulted its pages
 * in before starts no thread.  That the wait comes before the target
 * is stopped, not only before live_stop() returns, is read in the
 * code: live_stop() waits first.) */
static void test_stop_waits(int pid)
{
	struct memsrc *ms = open_own(pid);
	struct cs_err err;
	int ret;

	if (!ms)
		return;
	cs_err_init(&err);
	memsrc_reserve_all(ms, 1);
	if (!ms->cache->filler) {
		printf("skip: stop waits for the reserve: no thread started "
		       "(%d CPUs, %llu writable bytes)\n", cs_cpus(),
		       (unsigned long long)memsrc_writable_bytes(ms));
	} else {
		ret = live_stop(ms, &err);
		CHECK(ret == 0, "live_stop: %d %s", ret, err.msg);
		CHECK(!ms->cache->filler,
		      "stopped while the reserve's thread ran");
		live_resume(ms);
	}
	memsrc_free(ms);
}

/* Given up, the cache's memory, the faulted part of it in whole huge
 * pages, is kept for others (and still mapped); reads go on into new
 * slabs. */
static void test_give_up(struct memsrc *ms, uint64_t addr)
{
	const size_t huge = SLAB_HUGE_BYTES;
	struct memsrc_cache *c = ms->cache;
	unsigned char *first, *p;
	size_t faulted, expect, all = 0, i, taken = 0;

	memsrc_cache_clear(ms);
	check_pattern(ms, addr, "before giving up");
	CHECK(c->nslabs > 0 && c->faulted > 0, "%zu slabs, %zu faulted",
	      c->nslabs, c->faulted);
	if (!c->nslabs)
		return;
	CHECK(hugeheap_kept() == 0, "%zu kept before", hugeheap_kept());
	for (i = 0; i < c->nslabs; i++)
		all += c->slabs[i].pages * PAGE;
	first = c->slabs[0].mem;
	faulted = c->faulted * PAGE;
	expect = (faulted + huge - 1) / huge * huge;
	memsrc_cache_give_up(ms);
	CHECK(c->nslabs == 0 && c->faulted == 0 && c->nentries == 0,
	      "the cache still holds %zu slabs, %zu pages", c->nslabs,
	      c->nentries);
	CHECK(hugeheap_kept() == expect && expect <= all,
	      "%zu kept for %zu faulted bytes of %zu", hugeheap_kept(),
	      faulted, all);
	check_pattern(ms, addr, "after giving up");
	CHECK(c->nslabs > 0 && c->slabs[0].mem != first,
	      "new reads went to a given-up slab");
	/* Bounded: each take empties a huge page of what is kept. */
	while (hugeheap_kept() && taken < expect) {
		p = hugeheap_take(huge);
		CHECK(taken || p == first, "%p taken first, not the first slab "
		      "%p", (void *)p, (void *)first);
		memset(p, 0x5a, huge);
		munmap(p, huge);
		taken += huge;
	}
	CHECK(taken == expect && hugeheap_kept() == 0,
	      "%zu taken of %zu kept", taken, expect);
	memsrc_cache_clear(ms);
}

int main(void)
{
	struct memsrc *ms = NULL;
	struct cs_err err;
	int fds[2], ret;
	pid_t pid;
	uint64_t addr = 0, sparse = 0, holey = 0;
	char *spaced, *deleted;
	void *m1, *m2;

	setvbuf(stdout, NULL, _IOLBF, 0);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;

	test_bad_pids();
	test_many_threads();
	test_guard_handed_signal_kept();
	test_guard_gives_back();
	tracer_thread(1);
	test_guard_gives_back();
	tracer_thread(0);

	spaced = make_file("/tmp/coroscope test map XXXXXX", 0, &m1);
	deleted = make_file("/tmp/coroscope-deleted-XXXXXX", 1, &m2);
	if (pipe(fds) < 0)
		return 2;
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		child_main(fds[1]);
	}
	close(fds[1]);
	if (read(fds[0], &addr, sizeof(addr)) != sizeof(addr) ||
	    read(fds[0], &sparse, sizeof(sparse)) != sizeof(sparse) ||
	    read(fds[0], &holey, sizeof(holey)) != sizeof(holey)) {
		printf("FAIL: child did not start\n");
		return 1;
	}
	close(fds[0]);
	CHECK(all_running(), "child threads running");

	cs_err_init(&err);
	ret = live_open(&ms, pid, &err);
	CHECK(ret == 0, "live_open: %d %s", ret, err.msg);
	if (ret)
		goto out;
	test_open(ms, pid, addr, spaced, deleted);
	check_pattern(ms, addr, "running");
	test_cache(ms, addr);
	test_clusters(ms, sparse);
	test_stop(ms, pid, addr);
	tracer_thread(1);
	test_stop(ms, pid, addr);
	tracer_thread(0);
	test_plan_trim(ms, addr);
	test_plan_stack_top(ms);
	test_plan_unwritten(ms, holey);
	test_reserve_asks(ms);
	test_capture_all(ms, addr);
	test_reserve_keeps(pid, addr);
	test_wait_helps(pid);
	test_stop_waits(pid);
	test_give_up(ms, addr);
	test_proc_mem(pid, addr);
	test_signals(ms, pid);
	tracer_thread(1);
	test_signals(ms, pid);
	tracer_thread(0);
	test_tracer_dies(ms, pid, SIGTERM, AIM_PROCESS);
	test_tracer_dies(ms, pid, SIGKILL, AIM_PROCESS);
	test_tracer_dies(ms, pid, SIGINT, AIM_MAIN_THREAD);
	tracer_thread(1);
	test_tracer_dies(ms, pid, SIGTERM, AIM_PROCESS);
	test_tracer_dies(ms, pid, SIGTERM, AIM_MAIN_THREAD);
	test_tracer_dies(ms, pid, SIGINT, AIM_TRACER_THREAD);
	tracer_thread(0);
	test_exit(ms, pid, addr);
	memsrc_free(ms);

out:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	munmap(m1, PAGE);
	munmap(m2, PAGE);
	unlink(spaced);
	free(spaced);
	free(deleted);
	return CHECK_DONE("test_memsrc");
}
