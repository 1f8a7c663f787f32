#include "cli/run_sample.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

/*
 * About eight samples over the window, but never closer than this: the
 * kernel's accounting over a few milliseconds cannot tell a blocked
 * thread from one sleeping in short steps, and each sample stops the
 * target.  Never further apart than a second, as `watch` by default.
 */
#define RUN_SAMPLES_PER_WINDOW 8
#define RUN_MIN_INTERVAL_MS 200.0
#define RUN_MAX_INTERVAL_MS 1000.0
/* Watching for wake-ups after a sample (watch_feed()'s probe). */
#define RUN_PROBE_MAX_MS 50.0
/* Processes followed at most (a fork bomb is not sampled forever). */
#define RUN_MAX_SAMPLED 256

void run_sampler_init(struct run_sampler *s, long long window_ms)
{
	double iv = (double)window_ms / RUN_SAMPLES_PER_WINDOW;

	memset(s, 0, sizeof(*s));
	s->window_s = (double)window_ms / 1000;
	if (iv < RUN_MIN_INTERVAL_MS)
		iv = RUN_MIN_INTERVAL_MS;
	if (iv > RUN_MAX_INTERVAL_MS)
		iv = RUN_MAX_INTERVAL_MS;
	s->interval_ms = iv;
}

static void sampled_release(struct run_sampled *p)
{
	watch_tracker_release(&p->t);
	watch_cpu_release(&p->cpu[0]);
	watch_cpu_release(&p->cpu[1]);
}

void run_sampler_release(struct run_sampler *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		sampled_release(&s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

int run_sampler_started(const struct run_sampler *s)
{
	return s->start_ms > 0;
}

double run_sampler_span_s(const struct run_sampler *s)
{
	double span = (s->last_ms - s->start_ms) / 1000;

	if (!run_sampler_started(s) || span < 0)
		return 0;
	return span < s->window_s ? span : s->window_s;
}

static struct run_sampled *find(const struct run_sampler *s, int pid)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i].pid == pid)
			return &s->v[i];
	return NULL;
}

/*
 * The tracker's threshold: what made no progress over half the window
 * is stuck (run_seen_item() also calls stuck what was never seen moving
 * at all, over however long it was watched).
 */
static void sampled_init(struct run_sampled *p, const struct run_sampler *s,
			 const struct proc_entry *e)
{
	memset(p, 0, sizeof(*p));
	p->pid = e->pid;
	p->start = e->start;
	watch_tracker_init(&p->t, run_sampler_stuck_s(s));
}

double run_sampler_stuck_s(const struct run_sampler *s)
{
	return s->window_s / 2;
}

/* The program pid runs ("?" when unknown: never equal to a path). */
static void exe_of(int pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, buf, len - 1);
	if (n <= 0)
		n = 0;
	buf[n] = '\0';
	if (!n)
		snprintf(buf, len, "?");
}

struct run_sampled *run_sampler_begin(struct run_sampler *s,
				      const struct proc_entry *e)
{
	struct run_sampled *p;

	if (!run_sampler_started(s) || e->state == 'Z')
		return NULL;
	p = find(s, e->pid);
	if (p && p->start != e->start) {
		/* the pid was reused: a new process */
		sampled_release(p);
		sampled_init(p, s, e);
	}
	if (!p) {
		if (s->n >= RUN_MAX_SAMPLED)
			return NULL;
		s->v = xgrow(s->v, &s->alloc, s->n + 1, sizeof(*s->v));
		p = &s->v[s->n++];
		sampled_init(p, s, e);
	}
	if (p->skip_exe[0]) {
		char exe[sizeof(p->skip_exe)];

		exe_of(p->pid, exe, sizeof(exe));
		if (!strcmp(exe, p->skip_exe))
			return NULL;
		p->skip_exe[0] = '\0';
	}
	watch_cpu_read(&p->cpu[!p->before], p->pid);
	return p;
}

static void end(struct run_sampler *s, struct run_sampled *p,
		struct collection *c, double probe_ms)
{
	const struct watch_cpu *now = &p->cpu[!p->before];

	if (c)
		watch_feed(&p->t, (now->at_ms - s->start_ms) / 1000, c,
			   &p->cpu[p->before], now, probe_ms);
	if (s->ticks == 1 && now->at_ms > s->first_ms)
		s->first_ms = now->at_ms;
	if (now->at_ms > s->last_ms)
		s->last_ms = now->at_ms;
	/* the next window starts now: the target runs again */
	p->before = !p->before;
	watch_cpu_read(&p->cpu[p->before], p->pid);
}

void run_sampler_end(struct run_sampler *s, struct run_sampled *p,
		     struct collection *c)
{
	if (p)
		end(s, p, c, 0);
}

void run_sampler_tick(struct run_sampler *s, const struct proc_list *tree)
{
	struct collect_options opt;
	double probe_ms = s->interval_ms / 10;
	size_t i;

	if (probe_ms > RUN_PROBE_MAX_MS)
		probe_ms = RUN_PROBE_MAX_MS;
	if (!s->start_ms)
		s->start_ms = cs_now_ms();
	s->ticks++;
	s->pause_ms = 0;
	/* Python frames and tasks only: what the tracker looks at. */
	memset(&opt, 0, sizeof(opt));
	opt.no_source = 1;
	for (i = 0; i < tree->n; i++) {
		struct run_sampled *p = run_sampler_begin(s, &tree->e[i]);
		struct collection c;
		struct cs_err err;
		int ok;

		if (!p)
			continue;
		cs_err_init(&err);
		/* its first sample: how long each thread had slept before
		 * any stop of ours (cli/watch_track.h, off_cpu_s) */
		opt.off_cpu = !p->t.samples;
		ok = collect_live(&c, p->pid, &opt, &err) == 0;
		if (c.pause_ms > s->pause_ms)
			s->pause_ms = c.pause_ms;
		/* A shell or make is not looked at again until it execs
		 * another program. */
		if (!ok && err.code == CS_ERR_NOT_PYTHON) {
			exe_of(p->pid, p->skip_exe, sizeof(p->skip_exe));
			/* an unknown program (its main thread exited)
			 * is asked about again */
			if (!strcmp(p->skip_exe, "?"))
				p->skip_exe[0] = '\0';
		}
		end(s, p, ok ? &c : NULL, ok ? probe_ms : 0);
		collection_release(&c);
	}
}

const struct watch_tracker *run_sampler_tracker(const struct run_sampler *s,
						int pid)
{
	const struct run_sampled *p;

	if (!s || !run_sampler_started(s))
		return NULL;
	p = find(s, pid);
	return p && p->t.samples ? &p->t : NULL;
}
