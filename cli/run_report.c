#include "cli/run_report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/escape.h"
#include "cli/json.h"
#include "cli/alike_lines.h"
#include "cli/report.h"
#include "cli/run_idle_items.h"
#include "cli/watch_timers.h"
#include "cli/watch_json.h"
#include "cli/watch_view.h"
#include "common/addrmap.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

/* The step summary stays short: the full report is in the log. */
#define MD_MAX_PROCS 20
#define MD_MAX_THREADS 10
/* Stuck or busy tasks and threads listed per process (the JSON report
 * has them all). */
#define TEXT_MAX_SEEN 20
#define MD_MAX_SEEN 10

/* "12 threads", "3 tasks", "4 trio tasks", '6 generators
 * "request_context"', '4 greenlets "serve"', "3 Hub greenlets": what a
 * group of n is. */
static void add_group_subject(struct strbuf *sb, const struct watch_item *it,
			      size_t n)
{
	const char *kind = watch_kind_label(it);

	strbuf_addf(sb, "%zu ", n);
	if (kind) {
		esc_add_name_raw(sb, kind);
		strbuf_addch(sb, ' ');
	}
	if (!watch_by_address(it)) {
		strbuf_addstr(sb, it->kind == WATCH_TASK ? "tasks" : "threads");
		return;
	}
	esc_add_name_raw(sb, it->kind == WATCH_GREENLET ? "greenlet" :
			 it->label ? it->label : "generator");
	strbuf_addch(sb, 's');
	if (it->name) {
		strbuf_addstr(sb, " \"");
		esc_add_name_raw(sb, it->name);
		strbuf_addch(sb, '"');
	}
}

/* One line for members m[0..n) of the items (alike when n > 1): the
 * one's subject, or how many, then what the first was seen doing, which
 * the others share; then a group's members. */
static void seen_group_line(struct strbuf *sb, const struct watch_tracker *t,
			    const size_t *items, const size_t *m, size_t n,
			    int with_addr)
{
	const struct watch_item *first = &t->items[items[m[0]]];
	int tasks = first->kind == WATCH_TASK, addr = watch_by_address(first);
	unsigned long long *ids;
	const char **names;
	size_t k;

	if (n == 1) {
		if (run_seen_describe(sb, t, first, with_addr))
			watch_add_timers(sb, t->items, items, m, 1, 1);
		return;
	}
	add_group_subject(sb, first, n);
	strbuf_addch(sb, ' ');
	(void)run_seen_what(sb, t, first);
	/* (their key has their timers' kinds: seen_of()) */
	watch_add_timers(sb, t->items, items, m, n, 1);
	strbuf_addstr(sb, ": ");
	ids = xmallocarray(n, sizeof(*ids));
	names = xmallocarray(n, sizeof(*names));
	for (k = 0; k < n; k++) {
		ids[k] = (unsigned long long)t->items[items[m[k]]].id;
		names[k] = t->items[items[m[k]]].name;
	}
	alike_lines_members(sb, tasks ? NULL : ids, addr ? NULL : names, n,
			    addr ? ALIKE_ADDRESS : ALIKE_QUOTED);
	free(ids);
	free(names);
}

/* The task on line k (one of g's groups) alone, and named as the one of
 * another of the first max lines is: two lines would read the same
 * (task names before 3.8 are their coroutines'). */
static int task_twin(const struct watch_tracker *t, const size_t *items,
		     const struct alike_lines *g, size_t k, size_t max)
{
	const struct watch_item *it = &t->items[items[g->member[g->first[k]]]];
	const struct watch_item *o;
	size_t i;

	if (it->kind != WATCH_TASK || g->first[k + 1] - g->first[k] != 1)
		return 0;
	/* Bounded: max lines (a constant of 20 at most). */
	for (i = 0; i < g->ngroups && i < max; i++) {
		if (i == k || g->first[i + 1] - g->first[i] != 1)
			continue;
		o = &t->items[items[g->member[g->first[i]]]];
		if (o->kind == WATCH_TASK && it->name && o->name &&
		    !strcmp(it->name, o->name))
			return 1;
	}
	return 0;
}

/*
 * One process's stuck or busy tasks and threads, longest stuck first,
 * three or more alike (the same kind, seen doing the same in the same
 * place: a pool's workers) on one line unless --all, through line(), at
 * most max lines, then how many tasks and threads were left out, and
 * the threads of c that wait for work by design on a line of their own.
 * Returns how many lines there were.
 */
static size_t seen_of(const struct run_dump *d, const struct watch_tracker *t,
		      const struct collection *c, int pid, size_t max,
		      FILE *out, void (*line)(FILE *out, int pid, const char *s))
{
	static const size_t zero;
	size_t *order = xcalloc(t->nitems, sizeof(*order));
	size_t *items = xcalloc(t->nitems, sizeof(*items));
	char **keys = xcalloc(t->nitems, sizeof(*keys));
	size_t k, nkeys = 0, left = 0, lines;
	struct idle_items idle;
	struct alike_lines g;
	struct strbuf sb;

	strbuf_init(&sb);
	run_idle_items_init(&idle, c, run_dumped_parent_of(d, pid));
	watch_sorted(t, order);
	for (k = 0; k < t->nitems; k++) {
		const struct watch_item *it = &t->items[order[k]];

		/* Generators and greenlets group too, with their kind and
		 * name in the key (as in watch): a library's context
		 * managers, suspended in each stuck thread, took a line
		 * each and pushed the rest past the cap.  The label keeps
		 * asyncio and trio tasks, and greenlets of two types, apart
		 * (as in watch). */
		strbuf_addf(&sb, "%d:", (int)it->kind);
		alike_lines_key_str(&sb, it->label);
		if (watch_by_address(it))
			alike_lines_key_str(&sb, it->name);
		if (run_seen_what(&sb, t, it) && !run_idle_item(&idle, it)) {
			/* (the kinds of its timers, not their times: a
			 * group's line says them as a range) */
			watch_add_timers(&sb, t->items, &order[k], &zero, 1,
					 0);
			if (it->timeout.on)
				strbuf_addstr(&sb, ";timeout");
			items[nkeys] = order[k];
			keys[nkeys++] = xstrdup(sb.buf);
		}
		strbuf_reset(&sb);
	}
	alike_lines_group(&g, keys, nkeys, d->all);
	for (k = 0; k < g.ngroups; k++) {
		if (k >= max) {
			left += g.first[k + 1] - g.first[k];
			continue;
		}
		seen_group_line(&sb, t, items, g.member + g.first[k],
				g.first[k + 1] - g.first[k],
				task_twin(t, items, &g, k, max));
		line(out, pid, sb.buf);
		strbuf_reset(&sb);
	}
	if (left) {
		strbuf_addf(&sb, "... and %zu more", left);
		line(out, pid, sb.buf);
		strbuf_reset(&sb);
	}
	lines = g.ngroups;
	if (run_idle_items_line(&idle, &sb)) {
		line(out, pid, sb.buf);
		lines++;
	}
	run_idle_items_release(&idle);
	alike_lines_release(&g);
	free(items);
	free(order);
	strbuf_release(&sb);
	return lines;
}

/* What the samples saw, per process (seen_of()).  Returns how many
 * processes had something. */
static size_t each_seen(const struct run_dump *d, size_t max, FILE *out,
			void (*line)(FILE *out, int pid, const char *s))
{
	size_t i, nproc = 0;

	if (!d->sampler)
		return 0;
	for (i = 0; i < d->n; i++) {
		const struct watch_tracker *t;

		if (!d->procs[i].dumped)
			continue;
		t = run_sampler_tracker(d->sampler, d->procs[i].e.pid);
		if (t && t->nitems)
			nproc += seen_of(d, t, &d->procs[i].c,
					 d->procs[i].e.pid, max, out, line) > 0;
	}
	return nproc;
}

static void text_seen_line(FILE *out, int pid, const char *s)
{
	fprintf(out, "  process %d: ", pid);
	esc_text(out, s);
	fputc('\n', out);
}

static void text_seen(FILE *out, const struct run_dump *d)
{
	if (!d->sampler)
		return;
	fprintf(out, "coroscope: sampled over the last %.1fs (%zu samples and "
		"the dump); stuck or busy:\n",
		run_sampler_span_s(d->sampler), d->sampler->ticks);
	/* (what sat still for less than the threshold is not listed: a
	 * hang that began late in the window; say how long it takes) */
	if (!each_seen(d, TEXT_MAX_SEEN, out, text_seen_line))
		fprintf(out, "  nothing: no task or thread was seen stuck "
			"(still for %gs, half that time, or more) or busy\n",
			run_sampler_stuck_s(d->sampler));
}

static void summary_text(FILE *out, const struct run_summary *s,
		      const char *indent)
{
	size_t i, k;

	for (i = 0; i < s->n; i++) {
		const struct run_cause *cause = &s->causes[i];

		fprintf(out, "%sprocess %d: ", indent, cause->pid);
		esc_text(out, cause->headline);
		fputc('\n', out);
		for (k = 0; k < cause->ndetails; k++) {
			fprintf(out, "%s    ", indent);
			esc_text(out, cause->details[k]);
			fputc('\n', out);
		}
	}
}

static void summary_json(struct json *j, const struct run_summary *s)
{
	size_t i, k;

	json_begin_array(j);
	for (i = 0; i < s->n; i++) {
		const struct run_cause *cause = &s->causes[i];

		json_begin_object(j);
		json_key(j, "pid");
		json_int(j, cause->pid);
		json_key(j, "kind");
		json_string(j, run_cause_kind_name(cause->kind));
		json_key(j, "summary");
		json_string(j, cause->headline);
		json_key(j, "details");
		json_begin_array(j);
		for (k = 0; k < cause->ndetails; k++)
			json_string(j, cause->details[k]);
		json_end_array(j);
		json_end_object(j);
	}
	json_end_array(j);
}

/*
 * s inside a Markdown code span, cut at max bytes.  A span shows its
 * text as it is, but for its fence: one backtick more than the longest
 * run of them in s, and a space inside it where s starts or ends with
 * one, or starts and ends with a space (which a span strips one of from
 * each end).
 */
static void md_code(FILE *out, const char *str, size_t max)
{
	const char *s = str ? str : "?";
	size_t n = esc_cut(s, max), run = 0, longest = 0, i;
	int cut = s[n] != '\0', pad;

	for (i = 0; i < n; i++) {
		run = s[i] == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	/* (a cut one ends with "...") */
	pad = n && ((longest && (s[0] == '`' || (s[n - 1] == '`' && !cut))) ||
		    (s[0] == ' ' && s[n - 1] == ' ' && !cut));
	for (i = 0; i <= longest; i++)
		fputc('`', out);
	if (pad)
		fputc(' ', out);
	esc_put(out, s, ESC_TEXT, max);
	if (cut)
		fputs("...", out);
	if (pad)
		fputc(' ', out);
	for (i = 0; i <= longest; i++)
		fputc('`', out);
}

/* s as Markdown text, its punctuation escaped, cut at max bytes. */
static void md_text(FILE *out, const char *s, size_t max)
{
	esc_put(out, s, ESC_MD, max);
	if (s && strlen(s) > max)
		fputs("...", out);
}

static void summary_markdown(FILE *out, const struct run_summary *s)
{
	size_t i, k;

	for (i = 0; i < s->n; i++) {
		const struct run_cause *cause = &s->causes[i];

		fprintf(out, "- process %d: ", cause->pid);
		md_text(out, cause->headline, 300);
		fputc('\n', out);
		for (k = 0; k < cause->ndetails; k++) {
			fputs("  - ", out);
			md_text(out, cause->details[k], 300);
			fputc('\n', out);
		}
	}
}

static char *join_argv(char **argv)
{
	struct strbuf sb;
	size_t i;

	strbuf_init(&sb);
	for (i = 0; argv[i]; i++) {
		if (i)
			strbuf_addch(&sb, ' ');
		strbuf_addstr(&sb, argv[i]);
	}
	return strbuf_detach(&sb);
}

static void text_process(FILE *out, const struct run_proc *p)
{
	fprintf(out, "\n=== process %d (parent %d) ===\n", p->e.pid, p->e.ppid);
	if (p->dumped) {
		report_text(out, &p->c);
		return;
	}
	fprintf(out, "Process %d: ", p->e.pid);
	esc_text(out, p->command);
	if (p->err.code == CS_ERR_NOT_PYTHON) {
		fputs("\n(not a Python process)\n", out);
	} else {
		fputs("\n(not dumped: ", out);
		esc_text(out, p->err.msg);
		fputs(")\n", out);
	}
}

static const char *seen_state_name(enum run_seen_state s)
{
	switch (s) {
	case RUN_SEEN_MOVING:
		return "moving";
	case RUN_SEEN_STUCK:
		return "stuck";
	case RUN_SEEN_BUSY:
		return "busy";
	case RUN_SEEN_UNKNOWN:
		break;
	}
	return "unknown";
}

/* One task or thread the samples followed. */
static void json_seen_item(struct json *j, const struct watch_tracker *t,
			   const struct watch_item *it, const char *idle)
{
	struct run_seen seen;

	run_seen_item(t, it, &seen);
	json_begin_object(j);
	watch_json_identity(j, it);
	if (it->kind == WATCH_GENERATOR) {
		json_key(j, "kind");
		json_string(j, it->label);
	} else if (it->kind == WATCH_GREENLET) {
		json_key(j, "type");
		json_string(j, it->label);
	}
	json_key(j, "state");
	json_string(j, seen_state_name(seen.state));
	json_key(j, "stuck_for");
	json_double(j, seen.state == RUN_SEEN_STUCK ? seen.stuck_for : 0);
	json_key(j, "at_least");
	json_bool(j, seen.state == RUN_SEEN_STUCK && seen.at_least);
	if (it->kind == WATCH_THREAD) {
		json_key(j, "busy");
		json_double(j, watch_busy(it));
	}
	json_key(j, "idle");
	json_string(j, idle);
	json_key(j, "watched_s");
	json_double(j, it->last_seen - it->first_seen);
	watch_json_place(j, "where", it->where_file, it->where_line,
			 it->where_function);
	watch_json_place(j, "innermost", it->inner_file, it->inner_line,
			 it->inner_function);
	json_key(j, "waits_on");
	json_string(j, it->waits_on);
	json_end_object(j);
}

/* "sampling": what the samples before the dump saw of the process. */
static void json_sampling(struct json *j, const struct run_sampler *smp,
			  const struct watch_tracker *t,
			  const struct collection *c,
			  const struct collection *parent)
{
	struct idle_items idle;
	int kind;
	size_t k, *order;

	json_key(j, "sampling");
	json_begin_object(j);
	json_key(j, "window_s");
	json_double(j, smp->window_s);
	json_key(j, "interval_s");
	json_double(j, smp->interval_ms / 1000);
	json_key(j, "samples");
	json_uint(j, t->samples);
	run_idle_items_init(&idle, c, parent);
	order = xcalloc(t->nitems ? t->nitems : 1, sizeof(*order));
	watch_sorted(t, order);
	for (kind = 0; kind < WATCH_NKINDS; kind++) {
		json_key_str(j, watch_kind_plural((enum watch_kind)kind));
		json_begin_array(j);
		for (k = 0; k < t->nitems; k++) {
			const struct watch_item *it = &t->items[order[k]];

			if (it->kind == (enum watch_kind)kind && !it->gone)
				json_seen_item(j, t, it,
					       run_idle_reason(&idle, it));
		}
		json_end_array(j);
	}
	run_idle_items_release(&idle);
	free(order);
	json_end_object(j);
}

static void json_process(struct json *j, const struct run_proc *p,
			 const struct run_dump *d)
{
	const struct watch_tracker *t;

	json_begin_object(j);
	if (p->dumped) {
		report_json_members(j, &p->c);
		json_key(j, "ppid");
		json_int(j, p->e.ppid);
		t = d->sampler ? run_sampler_tracker(d->sampler, p->e.pid) : NULL;
		if (t)
			json_sampling(j, d->sampler, t, &p->c,
				      run_dumped_parent_of(d, p->e.pid));
	} else {
		json_key(j, "pid");
		json_int(j, p->e.pid);
		json_key(j, "ppid");
		json_int(j, p->e.ppid);
		json_key(j, "command");
		json_string(j, p->command);
		json_key(j, "python");
		json_null(j);
		json_key(j, "error");
		json_string(j, p->err.code == CS_ERR_NOT_PYTHON ?
			    "not a Python process" : p->err.msg);
	}
	json_end_object(j);
}

void run_report_json(const char *path, const struct run_dump *d)
{
	struct json j;
	size_t i;
	FILE *f;

	f = fopen(path, "we");
	if (!f) {
		fprintf(stderr, "coroscope: cannot write report '%s': %s\n",
			path, strerror(errno));
		return;
	}
	json_init(&j, f, 1);
	json_background(&j);
	json_begin_object(&j);
	json_key(&j, "schema");
	json_int(&j, 1);
	json_key(&j, "timed_out");
	json_bool(&j, d->timed_out);
	json_key(&j, "reason");
	json_string(&j, d->why);
	json_key(&j, "command");
	json_begin_array(&j);
	for (i = 0; d->argv[i]; i++)
		json_string(&j, d->argv[i]);
	json_end_array(&j);
	json_key(&j, "causes");
	summary_json(&j, d->sum);
	json_key(&j, "processes");
	json_begin_array(&j);
	for (i = 0; i < d->n; i++)
		json_process(&j, &d->procs[i], d);
	json_end_array(&j);
	json_end_object(&j);
	/* A write that failed earlier leaves only the error indicator. */
	if ((ferror(f) != 0) | (fclose(f) != 0))
		fprintf(stderr, "coroscope: cannot write report '%s': %s\n",
			path, strerror(errno));
}

static void md_seen_line(FILE *out, int pid, const char *s)
{
	fprintf(out, "- process %d: ", pid);
	md_text(out, s, 300);
	fputc('\n', out);
}

static void md_thread(FILE *out, const struct py_thread *t)
{
	const struct py_frame *f = t->nframes ? &t->frames[0] : NULL;
	const char *slash;
	struct strbuf place;

	fprintf(out, "  - thread %d", t->tid);
	if (t->name) {
		fputc(' ', out);
		md_code(out, t->name, 60);
	}
	if (!f) {
		fputs(": no Python frames\n", out);
		return;
	}
	slash = strrchr(f->code->filename, '/');
	strbuf_init(&place);
	strbuf_addstr(&place, slash ? slash + 1 : f->code->filename);
	if (f->line >= 0)
		strbuf_addf(&place, ":%d", f->line);
	fputs(": ", out);
	md_code(out, place.buf, 100);
	strbuf_release(&place);
	fputs(" in ", out);
	md_code(out, f->code->qualname, 100);
	fputc('\n', out);
}

/* A short Markdown section for the GitHub job page; the full report is
 * in the log and the --report file. */
void run_report_step_summary(const char *path, const struct run_dump *d)
{
	char *cmd = join_argv(d->argv);
	size_t i, k;
	FILE *f;

	f = fopen(path, "ae");
	if (!f) {
		fprintf(stderr, "coroscope: cannot append to GITHUB_STEP_SUMMARY "
			"'%s': %s\n", path, strerror(errno));
		free(cmd);
		return;
	}
	fputs("### coroscope: ", f);
	md_text(f, d->why, 200);
	fputs("\n\nCommand: ", f);
	md_code(f, cmd, 200);
	fputs("\n\n", f);
	if (d->sum->n) {
		fputs("**Likely cause**, most likely first:\n\n", f);
		summary_markdown(f, d->sum);
		fputc('\n', f);
	}
	if (d->sampler) {
		fprintf(f, "**Stuck or busy**, sampled over the last %.1fs:\n\n",
			run_sampler_span_s(d->sampler));
		if (!each_seen(d, MD_MAX_SEEN, f, md_seen_line))
			fprintf(f, "- nothing: no task or thread was seen "
				"stuck (still for %gs, half that time, or "
				"more) or busy\n",
				run_sampler_stuck_s(d->sampler));
		fputc('\n', f);
	}
	fputs("**Processes** (innermost frame of each thread):\n\n", f);
	for (i = 0; i < d->n && i < MD_MAX_PROCS; i++) {
		const struct run_proc *p = &d->procs[i];

		fprintf(f, "- process %d (parent %d) ", p->e.pid, p->e.ppid);
		md_code(f, p->command ? p->command : "?", 120);
		if (!p->dumped) {
			fputs(p->err.code == CS_ERR_NOT_PYTHON ?
			      ": not Python\n" : ": not dumped\n", f);
			continue;
		}
		fputs(": Python ", f);
		md_text(f, p->c.py.version, 40);
		fputc('\n', f);
		for (k = 0; k < p->c.snap.nthreads && k < MD_MAX_THREADS; k++)
			md_thread(f, &p->c.snap.threads[k]);
		if (p->c.snap.nthreads > MD_MAX_THREADS)
			fprintf(f, "  - ... and %zu more threads\n",
				p->c.snap.nthreads - MD_MAX_THREADS);
	}
	if (d->n > MD_MAX_PROCS)
		fprintf(f, "- ... and %zu more processes\n", d->n - MD_MAX_PROCS);
	fputc('\n', f);
	free(cmd);
	if (fclose(f) != 0)
		fprintf(stderr, "coroscope: cannot append to GITHUB_STEP_SUMMARY "
			"'%s': %s\n", path, strerror(errno));
}

void run_report_text(FILE *out, const struct run_dump *d)
{
	size_t i;

	fprintf(out, "coroscope: %s; dumping %zu process%s (%zu Python)\n",
		d->why, d->n, d->n == 1 ? "" : "es", d->npy);
	if (d->sum->n) {
		fputs("coroscope: likely cause, most likely first:\n", out);
		summary_text(out, d->sum, "  ");
	} else if (d->npy) {
		fputs("coroscope: no likely cause stands out in the thread "
		      "stacks; every process follows\n", out);
	}
	text_seen(out, d);
	for (i = 0; i < d->n; i++)
		text_process(out, &d->procs[i]);
	fputc('\n', out);
	fflush(out);
}
