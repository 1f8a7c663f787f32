/*
 * watch's plain-text lines (cli/watch_view.c) over a tracker fed by
 * hand: which events and summary lines share a line (three or more
 * alike tasks, threads or generators of one kind and label, at one
 * place; generators of one name, by address), which keep their own
 * (two alike, other places, other files), and that --all keeps every
 * one apart.
 */
#include "cli/watch_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "tests/unit/check.h"

#define MAX_OBS 40

static char names[MAX_OBS][32];

static struct watch_obs obs(enum watch_kind kind, uint64_t id, const char *name,
			    const char *label, const char *file, int line)
{
	struct watch_obs o;

	memset(&o, 0, sizeof(o));
	o.kind = kind;
	o.id = id;
	o.name = name;
	o.fingerprint = 1;
	o.cpu_s = -1;
	o.wait_s = -1;
	o.sleeps = -1;
	o.where.file = file;
	o.where.function = "work";
	o.where.line = line;
	o.inner.line = -1;
	o.label = label;
	return o;
}

static void emit(const char *line, void *arg)
{
	struct strbuf *sb = arg;

	/* Without the clock ("12:03:04 "): it varies. */
	strbuf_addstr(sb, strlen(line) > 9 ? line + 9 : line);
	strbuf_addch(sb, '\n');
}

/* Lines of text containing needle. */
static size_t count(const char *text, const char *needle)
{
	size_t n = 0;
	const char *p = text;

	while ((p = strstr(p, needle)) != NULL) {
		n++;
		p += strlen(needle);
	}
	return n;
}

/* The scenario; n observations into o. */
static size_t scenario(struct watch_obs *o)
{
	size_t n = 0, i;

	for (i = 0; i < MAX_OBS; i++)
		snprintf(names[i], sizeof(names[i]), "w-%zu\n\x1b[31m", i);
	/* 7 threads alike; 2 alike (apart); 4 asyncio and 4 trio tasks at
	 * one place; 3 generators; 3 unnamed tasks; 3 unnamed greenlets;
	 * 3 threads "x" at three lines; 3 threads at one line of two files
	 * of one base name */
	for (i = 0; i < 7; i++)
		o[n++] = obs(WATCH_THREAD, 100 + i, names[i], NULL,
			     "/x/app.py", 9);
	for (i = 0; i < 2; i++)
		o[n++] = obs(WATCH_THREAD, 200 + i, names[i], NULL,
			     "/x/app.py", 10);
	for (i = 0; i < 4; i++)
		o[n++] = obs(WATCH_TASK, 0x1000 + i, names[i], NULL,
			     "/x/app.py", 9);
	for (i = 0; i < 4; i++)
		o[n++] = obs(WATCH_TASK, 0x2000 + i, names[i], "trio",
			     "/x/app.py", 9);
	for (i = 0; i < 3; i++)
		o[n++] = obs(WATCH_GENERATOR, 0x3000 + i, "g", "coroutine",
			     "/x/app.py", 9);
	for (i = 0; i < 3; i++)
		o[n++] = obs(WATCH_TASK, 0x4000 + i, NULL, NULL, "/x/app.py",
			     11);
	for (i = 0; i < 3; i++)
		o[n++] = obs(WATCH_THREAD, 400 + i, "x", NULL, "/x/app.py",
			     50 + (int)i);
	/* unnamed greenlets (gevent's hubs) of a hostile type name */
	for (i = 0; i < 3; i++)
		o[n++] = obs(WATCH_GREENLET, 0x5000 + i, NULL, "Hub\x1b[1m",
			     "/x/app.py", 12);
	o[n++] = obs(WATCH_THREAD, 500, "y", NULL, "/a/lib.py", 7);
	o[n++] = obs(WATCH_THREAD, 501, "y", NULL, "/b/lib.py", 7);
	o[n++] = obs(WATCH_THREAD, 502, "y", NULL, "/b/lib.py", 7);
	return n;
}

/* Feed 7 samples half a second apart (stuck after 2 s); in the last,
 * threads 100-102 and 400-402 are gone.  Events of every sample go to
 * events, the summary to *summary (malloc'd). */
static void watch(int apart, struct strbuf *events, char **summary)
{
	struct watch_obs o[MAX_OBS];
	struct watch_info info;
	struct watch_tracker t;
	size_t n = scenario(o), i, len = 0;
	FILE *f;
	int s;

	watch_tracker_init(&t, 2.0);
	for (s = 0; s <= 6; s++) {
		watch_begin(&t, s * 0.5);
		for (i = 0; i < n; i++)
			if (s < 6 || !((o[i].id >= 100 && o[i].id <= 102) ||
				       (o[i].id >= 400 && o[i].id <= 402)))
				watch_observe(&t, &o[i]);
		watch_end(&t);
		len = events->len;
		watch_format_events(&t, apart, emit, events);
		/* The first sample has no events, and emits nothing. */
		if (s == 0)
			CHECK(t.nevents == 0 && events->len == len,
			      "no events, no lines");
	}
	memset(&info, 0, sizeof(info));
	info.pid = 1;
	info.apart = apart;
	*summary = NULL;
	f = open_memstream(summary, &len);
	watch_summary_text(f, &t, &info);
	fclose(f);
	watch_tracker_release(&t);
}

static void test_grouped(void)
{
	struct strbuf ev;
	char *sum;

	strbuf_init(&ev);
	watch(0, &ev, &sum);
	CHECK(!strchr(ev.buf, '\x1b') && !strchr(sum, '\x1b'), "escaped");
	CHECK(count(ev.buf, "stuck 7 threads for at least 2.0s at app.py:9 in work: "
			    "100 'w-0\\n\\x1b[31m', 101 'w-1\\n\\x1b[31m', "
			    "102 'w-2\\n\\x1b[31m', 103 'w-3\\n\\x1b[31m', "
			    "104 'w-4\\n\\x1b[31m' and 2 more\n") == 1,
	      "the 7 threads' event:\n%s", ev.buf);
	CHECK(count(ev.buf, "stuck thread 20") == 2, "the pair apart");
	CHECK(count(ev.buf, "stuck 4 tasks for at least 2.0s at app.py:9 in work: "
			    "'w-0\\n\\x1b[31m', ") == 1 &&
	      count(ev.buf, "stuck 4 trio tasks for at least 2.0s at app.py:9") == 1,
	      "asyncio and trio tasks apart:\n%s", ev.buf);
	CHECK(count(ev.buf, "stuck 3 coroutines 'g' for at least 2.0s at app.py:9 in "
			    "work: 0x300") == 1 &&
	      !strstr(ev.buf, "stuck coroutine 'g'"),
	      "generators by address:\n%s", ev.buf);
	CHECK(count(sum, "  stuck 3.0s+  3 coroutines 'g' at app.py:9 in "
			 "work: 0x300") == 1, "the summary's generators:\n%s",
	      sum);
	CHECK(count(ev.buf, "stuck 3 tasks for at least 2.0s at app.py:11 in "
			    "work: '?', '?', '?'\n") == 1, "unnamed tasks");
	CHECK(count(ev.buf, "stuck 3 Hub\\x1b[1m greenlets for at least 2.0s "
			    "at "
			    "app.py:12 in work: 0x5000, 0x5001, 0x5002\n") == 1,
	      "unnamed greenlets by their type:\n%s", ev.buf);
	CHECK(count(ev.buf, "stuck thread 40") == 3, "other lines apart");
	/* lib.py:7 in two directories: 500 apart, 501 and 502 too few */
	CHECK(count(ev.buf, "stuck thread 50") == 3, "other files apart");
	/* gone: 100-102 from one place are one line; 400-402, each from a
	 * place of its own, are not, though the line shows no place */
	CHECK(count(ev.buf, "gone  3 threads after at least 2.5s stuck: 100 ") == 1,
	      "gone alike:\n%s", ev.buf);
	CHECK(count(ev.buf, "gone  thread 40") == 3, "gone apart:\n%s", ev.buf);
	CHECK(count(sum, "  stuck 3.0s+  4 threads at app.py:9 in work: "
			 "103 'w-3\\n\\x1b[31m', ") == 1,
	      "the summary's group:\n%s", sum);
	CHECK(count(sum, "  gone         3 threads at app.py:9 in work: 100 ")
	      == 1 && count(sum, "  gone         thread 40") == 3,
	      "gone threads in the summary:\n%s", sum);
	free(sum);
	strbuf_release(&ev);
}

static void test_apart(void)
{
	struct strbuf ev;
	char *sum;

	strbuf_init(&ev);
	watch(1, &ev, &sum);
	CHECK(!strstr(ev.buf, " threads ") && !strstr(ev.buf, " tasks ") &&
	      !strstr(sum, " threads at") && !strstr(sum, " tasks at"),
	      "--all: nothing grouped:\n%s%s", ev.buf, sum);
	CHECK(count(ev.buf, "stuck thread 10") == 7 &&
	      count(ev.buf, "gone  thread 10") == 3 &&
	      count(ev.buf, "stuck coroutine 'g' (0x300") == 3 &&
	      count(ev.buf, "stuck Hub\\x1b[1m greenlet (0x500") == 3,
	      "--all: a line each:\n%s", ev.buf);
	free(sum);
	strbuf_release(&ev);
}

int main(void)
{
	test_grouped();
	test_apart();
	return CHECK_DONE("test_watch_lines");
}
