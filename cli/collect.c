#include "cli/collect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attach/live.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

/* Writable memory copied whole during the stop, at most. */
#define CAPTURE_MAX_BYTES ((size_t)512 << 20)

/* The process's short name, for messages ("sleep"). */
static void comm_of(int pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	buf[0] = '\0';
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* Give the library's message the context only the command knows. */
static void explain_live(struct cs_err *err, struct memsrc *ms, int pid)
{
	char comm[64];
	struct strbuf msg;

	if (err->code == CS_ERR_NOT_PYTHON) {
		comm_of(pid, comm, sizeof(comm));
		strbuf_init(&msg);
		strbuf_addf(&msg, "process %d (%s) is not a Python process: %s",
			    pid, comm, err->msg);
		cs_refail(err, CS_ERR_NOT_PYTHON, "%.*s",
			  (int)sizeof(err->msg) - 1, msg.buf);
		strbuf_release(&msg);
	} else if (ms && err->code != CS_ERR_EXITED && !live_alive(ms)) {
		cs_refail(err, CS_ERR_EXITED,
			  "process %d exited while being read", pid);
	}
}

static int collect(struct collection *c, const struct collect_options *opt,
		   double start, struct cs_err *err)
{
	struct py_stack_options sopt;
	int ret;

	c->opt = *opt;
	ret = pyproc_locate(&c->py, c->ms, err);
	c->located = 1;
	/* Room for the reads, while the time it takes is not the target's
	 * (only a target about to be stopped waits for it). */
	if (ret == 0 && c->is_live && !opt->no_block)
		memsrc_prepare(c->ms, 1);
	if (ret == 0 && c->is_live && !opt->no_block) {
		live_install_signal_guard();
		ret = live_stop(c->ms, err);
		/* Copy what the target can change and let it run on at once;
		 * a target too large to copy stays stopped while we read. */
		if (ret == 0) {
			/* test aid: exercise the stay-stopped path */
			const char *nocap = getenv("COROSCOPE_TEST_NO_CAPTURE");
			size_t max = nocap && *nocap == '1' ? 0 : CAPTURE_MAX_BYTES;

			ret = memsrc_capture(c->ms, max, err);
			if (ret == 1) {
				live_resume(c->ms);
				ret = 0;
			}
		}
	}
	if (ret == 0) {
		memset(&sopt, 0, sizeof(sopt));
		sopt.locals = opt->locals;
		ret = py_snapshot_take(&c->py, &sopt, &c->snap, err);
	}
	/* From the registers and stacks copied at the stop: the target may
	 * already run on. */
	if (ret == 0 && opt->native)
		ret = native_stacks_take(&c->native, c->ms, err);
	if (ret == 0) {
		struct cs_err aerr;

		/* The thread stacks stand on their own: a heap that cannot be
		 * walked (a racy --no-block read, a corrupt list) costs only
		 * the tasks and generators, with a warning. */
		cs_err_init(&aerr);
		if (py_async_take(&c->py, &c->snap, &sopt, &c->async, &aerr) < 0)
			snprintf(c->async_warning, sizeof(c->async_warning),
				 "tasks and generators not shown: %.400s", aerr.msg);
	}
	if (c->is_live) {
		live_resume(c->ms);
		c->pause_ms = live_paused_ms(c->ms);
	}
	c->wall_ms = cs_now_ms() - start;
	return ret;
}

int collect_live(struct collection *c, int pid,
		 const struct collect_options *opt, struct cs_err *err)
{
	double start = cs_now_ms();
	int ret;

	memset(c, 0, sizeof(*c));
	c->pid = pid;
	c->is_live = 1;
	ret = live_open(&c->ms, pid, err);
	if (ret < 0)
		return ret;
	c->command = live_cmdline(pid);
	ret = collect(c, opt, start, err);
	if (ret < 0)
		explain_live(err, c->ms, pid);
	return ret;
}

int collect_source(struct collection *c, struct memsrc *ms,
		   const struct collect_options *opt, struct cs_err *err)
{
	memset(c, 0, sizeof(*c));
	c->ms = ms;
	c->pid = ms->pid;
	return collect(c, opt, cs_now_ms(), err);
}

void collection_release(struct collection *c)
{
	native_stacks_release(&c->native);
	py_async_release(&c->async);
	py_snapshot_release(&c->snap);
	if (c->located)
		pyproc_release(&c->py);
	if (c->ms)
		memsrc_free(c->ms);
	free(c->command);
	memset(c, 0, sizeof(*c));
}
