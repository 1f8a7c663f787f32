/*
 * The list of `run`'s likely causes (cli/run_causes.h): its causes, each
 * a headline and detail lines, and the names of their kinds (the JSON
 * report's "kind").  The analyses that add them are in run_causes.c,
 * run_graph.c, run_stuck.c, run_greenlets.c and run_writes.c.
 */
#include "cli/run_causes.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

void run_summary_init(struct run_summary *s)
{
	memset(s, 0, sizeof(*s));
}

static void cause_release(struct run_cause *cause)
{
	size_t k;

	free(cause->headline);
	for (k = 0; k < cause->ndetails; k++)
		free(cause->details[k]);
	free(cause->details);
}

void run_summary_release(struct run_summary *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		cause_release(&s->causes[i]);
	free(s->causes);
	addrmap_release(&s->said_threads);
	run_summary_init(s);
}

struct run_cause *run_cause_add(struct run_summary *s, enum run_cause_kind kind,
				int pid, struct strbuf *headline)
{
	struct run_cause *cause;

	s->causes = xgrow(s->causes, &s->alloc, s->n + 1, sizeof(*s->causes));
	cause = &s->causes[s->n++];
	memset(cause, 0, sizeof(*cause));
	cause->kind = kind;
	cause->pid = pid;
	cause->headline = strbuf_detach(headline);
	return cause;
}

void run_cause_detail(struct run_cause *cause, struct strbuf *line)
{
	cause->details = xrealloc(cause->details,
				  (cause->ndetails + 1) * sizeof(*cause->details));
	cause->details[cause->ndetails++] = strbuf_detach(line);
}

void run_cause_test(struct run_cause *cause, const char *test,
		    struct strbuf *line)
{
	if (!test)
		return;
	strbuf_addstr(line, "test being run: ");
	strbuf_addstr(line, test);
	run_cause_detail(cause, line);
}

const char *run_cause_kind_name(enum run_cause_kind kind)
{
	switch (kind) {
	case RUN_CAUSE_STOPPED:
		return "stopped";
	case RUN_CAUSE_AWAIT_CYCLE:
		return "await_cycle";
	case RUN_CAUSE_DEADLOCK:
		return "deadlock";
	case RUN_CAUSE_STUCK_TASK:
		return "stuck_task";
	case RUN_CAUSE_LOCK:
		return "lock";
	case RUN_CAUSE_FILE_LOCK:
		return "file_lock";
	case RUN_CAUSE_WRITE:
		return "write";
	case RUN_CAUSE_WAIT:
		return "wait";
	case RUN_CAUSE_READ:
		return "read";
	case RUN_CAUSE_LOCK_CYCLE:
		return "lock_cycle";
	case RUN_CAUSE_LOOP_BLOCKED:
		return "loop_blocked";
	case RUN_CAUSE_FAILED_TASK:
		return "failed_task";
	case RUN_CAUSE_CANCELLED:
		return "cancelled";
	case RUN_CAUSE_FAILED_JOB:
		return "failed_job";
	case RUN_CAUSE_HELD:
		return "held";
	case RUN_CAUSE_IDLE:
		return "idle";
	case RUN_CAUSE_GIL:
		return "gil";
	case RUN_CAUSE_GIL_HELD:
		return "gil_held";
	case RUN_CAUSE_SLEEP:
		return "sleep";
	case RUN_CAUSE_BUSY:
		return "busy";
	}
	return "unknown";
}

void run_summary_sort(struct run_summary *s)
{
	size_t i, k;

	/* Insertion sort: stable, and summaries are short. */
	for (i = 1; i < s->n; i++) {
		struct run_cause tmp = s->causes[i];

		for (k = i; k > 0 && s->causes[k - 1].kind > tmp.kind; k--)
			s->causes[k] = s->causes[k - 1];
		s->causes[k] = tmp;
	}
}
