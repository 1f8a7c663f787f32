/*
 * _Py_DebugOffsets: the block a 3.13+ target carries must override the
 * generated table, and a block that does not validate must be refused.
 *
 * The test starts a real 3.13 (and 3.14, where one is built) interpreter,
 * reads its block, and serves edited copies of it in place of the real
 * one through a memory source that otherwise reads the live process.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glob.h>

#include "attach/live.h"
#include "readers/debug_offsets.h"
#include "readers/pyproc.h"
#include "tests/unit/check.h"

#define BLOCK 1024

struct patched {
	struct memsrc *live;
	uint64_t at;
	uint8_t block[BLOCK];
};

static long patched_read(struct memsrc *ms, uint64_t addr, void *buf,
			 size_t len, struct cs_err *err)
{
	struct patched *p = ms->backend;
	size_t i;
	int ret = memsrc_read(p->live, addr, buf, len, err);

	if (ret < 0)
		return ret;
	for (i = 0; i < len; i++)
		if (addr + i >= p->at && addr + i < p->at + BLOCK)
			((uint8_t *)buf)[i] = p->block[addr + i - p->at];
	return (long)len;
}

static const struct memsrc_ops patched_ops = { .read_raw = patched_read };

/* Apply the (edited) block to a fresh copy of the table. */
static int apply_block(struct pyproc *py, struct patched *p,
		       struct cs_err *err)
{
	struct memsrc *ms = calloc(1, sizeof(*ms));
	struct memsrc *saved = py->ms;
	int ret;

	if (!ms)
		return -1;
	memsrc_init(ms, &patched_ops, p);
	py->ms = ms;
	/* the table pyproc_locate() chose: default or free-threaded */
	py->layout = *py_layout_for(py->major, py->minor,
				    py->layout.free_threaded);
	cs_err_init(err);
	ret = debug_offsets_apply(py, err);
	py->ms = saved;
	memsrc_free(ms);
	return ret;
}

static void put64(uint8_t *b, size_t off, uint64_t v)
{
	memcpy(b + off, &v, 8);
}

static void test_interpreter(const char *exe)
{
	struct patched p;
	struct pyproc py;
	struct memsrc *ms;
	struct cs_err err;
	uint64_t word;
	pid_t pid;
	int ret, tries;
	size_t off;

	pid = fork();
	if (pid == 0) {
		execl(exe, exe, "-c", "import time; time.sleep(60)", (char *)NULL);
		_exit(127);
	}
	/* wait until the interpreter is initialised */
	for (tries = 0; tries < 100; tries++) {
		usleep(50000);
		cs_err_init(&err);
		ms = NULL;
		if (live_open(&ms, pid, &err) == 0 &&
		    pyproc_locate(&py, ms, &err) == 0)
			break;
		if (ms) {
			pyproc_release(&py);
			memsrc_free(ms);
		}
		ms = NULL;
	}
	CHECK(ms != NULL, "cannot locate %s: %s", exe, err.msg);
	if (!ms)
		goto out;
	/* python3.14t is the free-threaded build: its own table */
	CHECK(py.layout.free_threaded == (strstr(exe, "3.14t") != NULL),
	      "%s: free_threaded %d", exe, py.layout.free_threaded);
	memset(&p, 0, sizeof(p));
	p.live = ms;
	p.at = py.runtime;
	CHECK(memsrc_read(ms, py.runtime, p.block, BLOCK, &err) == 0, "%s", err.msg);

	/* The block as it is: the table it gives is the one pyproc has. */
	ret = apply_block(&py, &p, &err);
	CHECK(ret == 0, "%s: real block refused: %s", exe, err.msg);

	/* Find thread_state.native_thread_id by its current value and move
	 * it: the table must follow the block, not the generated numbers. */
	for (off = 24; off + 8 <= BLOCK; off += 8) {
		memcpy(&word, p.block + off, 8);
		if (word == (uint64_t)py.layout.ts_native_thread_id &&
		    off > 24 + 8 * 16)
			break;
	}
	CHECK(off + 8 <= BLOCK, "native_thread_id not found in the block");
	if (off + 8 <= BLOCK) {
		put64(p.block, off, 8);
		ret = apply_block(&py, &p, &err);
		CHECK(ret == 0 && py.layout.ts_native_thread_id == 8,
		      "%s: override not applied (%d, %s)", exe,
		      py.layout.ts_native_thread_id, err.msg);
		put64(p.block, off, 1u << 30);   /* outside the struct */
		ret = apply_block(&py, &p, &err);
		CHECK(ret == -CS_ERR_UNSUPPORTED,
		      "%s: an offset past its struct was accepted", exe);
		put64(p.block, off, (uint64_t)py_layout_for(
			      py.major, py.minor, py.layout.free_threaded)
		      ->ts_native_thread_id);
	}

	/* A size of zero, a wrong version, a free-threaded build, no cookie. */
	memcpy(&word, p.block + 24, 8);
	put64(p.block, 24, 0);
	CHECK(apply_block(&py, &p, &err) == -CS_ERR_UNSUPPORTED,
	      "%s: zero runtime size accepted", exe);
	put64(p.block, 24, word);
	memcpy(&word, p.block + 8, 8);
	put64(p.block, 8, word + (1u << 16));
	CHECK(apply_block(&py, &p, &err) == -CS_ERR_UNSUPPORTED &&
	      strstr(err.msg, "_Py_DebugOffsets say"),
	      "%s: version mismatch accepted: %s", exe, err.msg);
	put64(p.block, 8, word);
	/* The flag chose the table: a block that now says the other build
	 * is not the one the table was chosen for. */
	put64(p.block, 16, !py.layout.free_threaded);
	CHECK(apply_block(&py, &p, &err) == -CS_ERR_UNSUPPORTED &&
	      strstr(err.msg, "free-threading flag"),
	      "%s: a block of the other build accepted: %s", exe, err.msg);
	put64(p.block, 16, (uint64_t)py.layout.free_threaded);
	p.block[0] ^= 0xff;
	CHECK(apply_block(&py, &p, &err) == -CS_ERR_UNSUPPORTED,
	      "%s: a block without the cookie accepted", exe);
	pyproc_release(&py);
	memsrc_free(ms);
out:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int main(void)
{
	const char *patterns[] = {
		"/root/.pyenv/versions/3.13.*/bin/python3.13",
		"/opt/python3.14/bin/python3.14",
		"/opt/python3.14t/bin/python3.14t",
	};
	size_t i, j, ran = 0;

	for (i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++) {
		glob_t g;

		if (glob(patterns[i], 0, NULL, &g) != 0)
			continue;
		for (j = 0; j < g.gl_pathc; j++, ran++)
			test_interpreter(g.gl_pathv[j]);
		globfree(&g);
	}
	if (!ran)
		printf("test_debug_offsets: skipped: no CPython 3.13+ installed\n");
	return CHECK_DONE("test_debug_offsets");
}
