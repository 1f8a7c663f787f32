#include "cli/watch_view.h"

#include <curses.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/alike_lines.h"
#include "cli/term_cut.h"
#include "cli/watch_timers.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "cli/escape.h"
#include "common/banned.h"

/* Event lines kept for the bottom of the live view. */
#define VIEW_LOG 8

/* "task 'Task-2' (0x7f00..)", "trio task 'x' (0x..)", "coroutine 'f'
 * (0x..)", "greenlet 'Greenlet-0' (0x..)", or "thread 1234 'worker'" */
static void describe(struct strbuf *sb, const struct watch_item *it)
{
	if (it->kind != WATCH_THREAD) {
		const char *kind = watch_kind_label(it);

		if (kind) {
			esc_add(sb, kind, ESC_NAME, 0);
			strbuf_addch(sb, ' ');
		}
		if (it->kind == WATCH_TASK) {
			strbuf_addstr(sb, "task '");
		} else if (it->kind == WATCH_GENERATOR) {
			esc_add(sb, it->label ? it->label : "generator",
				ESC_NAME, 0);
			strbuf_addstr(sb, " '");
		} else if (!it->name) {
			/* unnamed: a thread's main greenlet, gevent's Hub */
			strbuf_addf(sb, "greenlet (0x%" PRIx64 ")", it->id);
			return;
		} else {
			strbuf_addstr(sb, "greenlet '");
		}
		esc_add(sb, it->name, ESC_NAME, 0);
		strbuf_addf(sb, "' (0x%" PRIx64 ")", it->id);
	} else {
		strbuf_addf(sb, "thread %" PRIu64, it->id);
		if (it->name) {
			strbuf_addstr(sb, " '");
			esc_add(sb, it->name, ESC_NAME, 0);
			strbuf_addch(sb, '\'');
		}
	}
}

/* "app.py:31 in wait" (the base name: the full path is in the JSON). */
static void place(struct strbuf *sb, const char *file, int line,
		  const char *function)
{
	if (!file) {
		strbuf_addstr(sb, "?");
		return;
	}
	esc_add(sb, cs_base_name(file), ESC_NAME, 0);
	if (line >= 0)
		strbuf_addf(sb, ":%d", line);
	if (function) {
		strbuf_addstr(sb, " in ");
		esc_add(sb, function, ESC_NAME, 0);
	}
}

/* ", waits on asyncio.Lock held by task 'holder'" (what it waits on, and
 * who holds that, as far as each is known). */
static void add_waits_on(struct strbuf *sb, const struct watch_item *it)
{
	if (!it->waits_on)
		return;
	strbuf_addstr(sb, ", waits on ");
	esc_add(sb, it->waits_on, ESC_TEXT, 0);
	if (it->held_by) {
		strbuf_addstr(sb, " held by ");
		esc_add(sb, it->held_by, ESC_TEXT, 0);
	}
}

static void where(struct strbuf *sb, const struct watch_item *it)
{
	place(sb, it->where_file, it->where_line, it->where_function);
	/* (a task's place is its coroutine's first line then) */
	if (it->not_started)
		strbuf_addstr(sb, " (not started)");
	if (it->inner_file) {
		strbuf_addstr(sb, " (innermost ");
		place(sb, it->inner_file, it->inner_line, it->inner_function);
		strbuf_addch(sb, ')');
	}
}

/* ", blocked reading fd 7, a TCP connection ...": what the kernel says
 * a stuck thread waits for; else ", blocked in lock (sem_clockwait)":
 * what --native says of it; after where it is. */
static void blocked(struct strbuf *sb, const struct watch_tracker *t,
		    const struct watch_item *it)
{
	if (watch_state_of(t, it) != WATCH_STUCK)
		return;
	if (it->blocked_on) {
		strbuf_addstr(sb, ", ");
		esc_add(sb, it->blocked_on, ESC_TEXT, 0);
		return;
	}
	if (!it->blocked_in)
		return;
	strbuf_addstr(sb, ", blocked in ");
	esc_add(sb, it->blocked_in, ESC_NAME, 0);
	if (it->native_function) {
		strbuf_addstr(sb, " (");
		esc_add(sb, it->native_function, ESC_NAME, 0);
		strbuf_addch(sb, ')');
	}
}

/* The event's word ("stuck ", "moved ", "gone  "). */
static const char *event_word(enum watch_event_kind kind)
{
	return kind == WATCH_EV_STUCK ? "stuck " :
	       kind == WATCH_EV_MOVED ? "moved " : "gone  ";
}

/* What an event says after its subject: " for 2.0s at app.py:31 in
 * wait, waits on Future". */
static void event_rest(struct strbuf *sb, const struct watch_tracker *t,
		       const struct watch_event *ev)
{
	const struct watch_item *it = &t->items[ev->item];
	static const size_t zero = 0;
	const char *least = ev->at_least ? "at least " : "";

	switch (ev->kind) {
	case WATCH_EV_STUCK:
		strbuf_addf(sb, " for %s%.1fs at ", least, ev->stuck_for);
		where(sb, it);
		blocked(sb, t, it);
		add_waits_on(sb, it);
		watch_add_timers(sb, t->items, &ev->item, &zero, 1, 0);
		break;
	case WATCH_EV_MOVED:
		strbuf_addf(sb, " after %s%.1fs stuck, now at ", least,
			    ev->stuck_for);
		where(sb, it);
		break;
	case WATCH_EV_GONE:
		strbuf_addf(sb, " after %s%.1fs stuck", least, ev->stuck_for);
		break;
	}
}

void watch_add_clock(struct strbuf *sb)
{
	char clock[16];
	time_t now = time(NULL);
	struct tm tm;

	if (localtime_r(&now, &tm) &&
	    strftime(clock, sizeof(clock), "%H:%M:%S", &tm) > 0)
		strbuf_addf(sb, "%s ", clock);
}

/* What makes an item's line alike another's: its kind and label (an
 * asyncio task is not a trio task, a coroutine not a generator), a
 * generator's or greenlet's name, where it is (whole file names: a line
 * shows base names; and where a "gone" line shows no place at all),
 * then the rest of its line. */
static char *alike_key(const struct watch_item *it, const char *rest)
{
	struct strbuf sb;

	strbuf_init(&sb);
	strbuf_addf(&sb, "%d ", (int)it->kind);
	alike_lines_key_str(&sb, it->label);
	if (watch_by_address(it))
		alike_lines_key_str(&sb, it->name);
	alike_lines_key_str(&sb, it->where_file);
	alike_lines_key_str(&sb, it->where_function);
	strbuf_addf(&sb, "%d ", it->where_line);
	alike_lines_key_str(&sb, it->inner_file);
	alike_lines_key_str(&sb, it->inner_function);
	strbuf_addf(&sb, "%d ", it->inner_line);
	strbuf_addstr(&sb, rest);
	return strbuf_detach(&sb);
}

/* The subject of alike items items[m[0..n)], n > 1: "12 threads",
 * "4 trio tasks", "6 coroutines 'f'", "3 greenlets 'serve'", "3 Hub
 * greenlets". */
static void group_subject(struct strbuf *sb, const struct watch_item *items,
			  const size_t *idx, const size_t *m, size_t n)
{
	const struct watch_item *first = &items[idx[m[0]]];
	const char *kind = watch_kind_label(first);

	strbuf_addf(sb, "%zu ", n);
	if (kind) {
		esc_add(sb, kind, ESC_NAME, 0);
		strbuf_addch(sb, ' ');
	}
	if (first->kind == WATCH_GENERATOR && first->label) {
		esc_add(sb, first->label, ESC_NAME, 0);
		strbuf_addch(sb, 's');
	} else {
		strbuf_addstr(sb, watch_kind_plural(first->kind));
	}
	if (watch_by_address(first) && first->name) {
		strbuf_addstr(sb, " '");
		esc_add(sb, first->name, ESC_NAME, 0);
		strbuf_addch(sb, '\'');
	}
}

/* ": 101 'w-0', 102 'w-1' ... and 7 more"; ": 0x7f12, 0x7f34 ..." */
static void group_members(struct strbuf *sb, const struct watch_item *items,
			  const size_t *idx, const size_t *m, size_t n)
{
	const struct watch_item *first = &items[idx[m[0]]];
	int threads = first->kind == WATCH_THREAD, addr = watch_by_address(first);
	unsigned long long *ids = xmallocarray(n, sizeof(*ids));
	const char **names = xmallocarray(n, sizeof(*names));
	size_t k;

	for (k = 0; k < n; k++) {
		ids[k] = (unsigned long long)items[idx[m[k]]].id;
		names[k] = items[idx[m[k]]].name;
	}
	strbuf_addstr(sb, ": ");
	alike_lines_members(sb, threads || addr ? ids : NULL,
			    addr ? NULL : names, n,
			    addr ? ALIKE_ADDRESS : ALIKE_WATCH);
	free(ids);
	free(names);
}

/* What an item's line says after its subject (event_rest() or
 * summary_rest()). */
typedef void line_rest_fn(struct strbuf *sb, const struct watch_tracker *t,
			  const void *arg);

/* The line of items idx[m[0..n)] from its subject on: the one's (or
 * how many), what they share (rest(arg)), then a group's members. */
static void alike_line(struct strbuf *sb, const struct watch_tracker *t,
		       const size_t *idx, const size_t *m, size_t n,
		       line_rest_fn *rest, const void *arg)
{
	if (n == 1)
		describe(sb, &t->items[idx[m[0]]]);
	else
		group_subject(sb, t->items, idx, m, n);
	rest(sb, t, arg);
	if (n > 1)
		group_members(sb, t->items, idx, m, n);
}

static void event_rest_of(struct strbuf *sb, const struct watch_tracker *t,
			  const void *ev)
{
	event_rest(sb, t, ev);
}

static char *event_key(const struct watch_tracker *t, size_t i)
{
	struct strbuf sb;
	char *key;

	strbuf_init(&sb);
	strbuf_addstr(&sb, event_word(t->events[i].kind));
	event_rest(&sb, t, &t->events[i]);
	key = alike_key(&t->items[t->events[i].item], sb.buf);
	strbuf_release(&sb);
	return key;
}

void watch_format_events(const struct watch_tracker *t, int apart,
			 void (*emit)(const char *line, void *arg), void *arg)
{
	size_t n = t->nevents, i;
	size_t *idx = xmallocarray(n ? n : 1, sizeof(*idx));
	char **keys = xmallocarray(n ? n : 1, sizeof(*keys));
	struct alike_lines g;
	struct strbuf sb;

	for (i = 0; i < n; i++) {
		idx[i] = t->events[i].item;
		keys[i] = event_key(t, i);
	}
	alike_lines_group(&g, keys, n, apart);
	strbuf_init(&sb);
	for (i = 0; i < g.ngroups; i++) {
		const size_t *m = g.member + g.first[i];
		const struct watch_event *ev = &t->events[m[0]];

		watch_add_clock(&sb);
		strbuf_addstr(&sb, event_word(ev->kind));
		alike_line(&sb, t, idx, m, g.first[i + 1] - g.first[i],
			   event_rest_of, ev);
		emit(sb.buf, arg);
		strbuf_reset(&sb);
	}
	alike_lines_release(&g);
	free(idx);
	strbuf_release(&sb);
}

/* "stuck 4.0s", "busy 93%", "active", "gone"; "stuck 4.0s+" for as
 * long as the watch or more (watch_stuck_at_least()) */
/* Whether the summary calls an active item "still": seen in more than
 * one sample, never moving, for less than the threshold (a watch shorter
 * than --stuck calls nothing stuck, and "active" would say it moved). */
static int still_all_watch(const struct watch_tracker *t,
			   const struct watch_item *it)
{
	return watch_state_of(t, it) == WATCH_ACTIVE && !it->gone &&
	       it->last_progress <= it->first_seen &&
	       it->last_seen > it->first_seen;
}

static void state_word(struct strbuf *sb, const struct watch_tracker *t,
		       const struct watch_item *it, int summary)
{
	enum watch_state s = watch_state_of(t, it);
	const char *plus = watch_stuck_at_least(t, it) ? "+" : "";

	if (summary && still_all_watch(t, it))
		strbuf_addf(sb, "still %.1fs%s", watch_stuck_for(t, it), plus);
	else if (s == WATCH_STUCK)
		strbuf_addf(sb, "stuck %.1fs%s", watch_stuck_for(t, it), plus);
	else if (s == WATCH_BUSY)
		strbuf_addf(sb, "busy %.0f%%", 100 * watch_busy(it));
	else
		strbuf_addstr(sb, watch_state_name(s));
}

static void summary_heading(struct strbuf *sb, const struct watch_tracker *t,
			    const struct watch_info *info)
{
	strbuf_addf(sb, "pid %d", info->pid);
	if (info->command) {
		/* its first 60 bytes, escaped: a process sets its own argv */
		strbuf_addstr(sb, " (");
		esc_add(sb, info->command, ESC_TEXT, 60);
		strbuf_addch(sb, ')');
	}
	strbuf_addf(sb, ": %zu samples every %gs over %.1fs, stuck after %gs",
		    t->samples, info->interval_s, info->elapsed_s,
		    info->stuck_s);
}

/* Is a time in the summary a floor (its "+")? */
static int any_at_least(const struct watch_tracker *t)
{
	size_t i;

	for (i = 0; i < t->nitems; i++) {
		const struct watch_item *it = &t->items[i];
		enum watch_state s = watch_state_of(t, it);

		if (watch_stuck_at_least(t, it) &&
		    (s == WATCH_STUCK || still_all_watch(t, it)))
			return 1;
	}
	return 0;
}

static size_t kind_count(const struct watch_tracker *t, enum watch_kind kind)
{
	size_t i, n = 0;

	for (i = 0; i < t->nitems; i++)
		n += t->items[i].kind == kind;
	return n;
}

/* The items a summary line is of: items[idx[m[0..n)]]; with times, the
 * line itself, else its key. */
struct summary_of {
	const struct watch_item *items;
	const size_t *idx, *m;
	size_t n;
	int times;
};

/* What the summary says of items after their subject. */
static void summary_rest(struct strbuf *sb, const struct watch_tracker *t,
			 const void *arg)
{
	const struct summary_of *of = arg;
	const struct watch_item *it = &of->items[of->idx[of->m[0]]];

	strbuf_addstr(sb, " at ");
	where(sb, it);
	blocked(sb, t, it);
	if (!it->gone)
		add_waits_on(sb, it);
	watch_add_timers(sb, of->items, of->idx, of->m, of->n, of->times);
	/* what the idle thread is: ", an executor's worker thread" (a
	 * sleep's words say it of a task asleep) */
	if (it->idle && !it->gone && !it->sleep.on) {
		strbuf_addstr(sb, ", ");
		esc_add(sb, it->idle, ESC_TEXT, 0);
	}
}

static char *summary_key(const struct watch_tracker *t, size_t item)
{
	static const size_t zero = 0;
	struct summary_of of = { t->items, &item, &zero, 1, 0 };
	struct strbuf sb;
	char *key;

	strbuf_init(&sb);
	state_word(&sb, t, &t->items[item], 1);
	strbuf_addch(&sb, '|');
	summary_rest(&sb, t, &of);
	key = alike_key(&t->items[item], sb.buf);
	strbuf_release(&sb);
	return key;
}

/* The summary's lines for the items of one kind (idx[0..n), in order):
 * "  stuck 4.0s   thread 12 'w' at app.py:9 in work", three or more alike
 * (in the same state as long, at the same place) on one line unless
 * apart. */
static void summary_kind(FILE *out, const struct watch_tracker *t,
			 const size_t *idx, size_t n, int apart)
{
	char **keys = xmallocarray(n ? n : 1, sizeof(*keys));
	struct alike_lines g;
	struct strbuf sb;
	size_t i;

	for (i = 0; i < n; i++)
		keys[i] = summary_key(t, idx[i]);
	alike_lines_group(&g, keys, n, apart);
	strbuf_init(&sb);
	for (i = 0; i < g.ngroups; i++) {
		const size_t *m = g.member + g.first[i];
		const struct watch_item *it = &t->items[idx[m[0]]];
		struct summary_of of = { t->items, idx, m,
					 g.first[i + 1] - g.first[i], 1 };

		state_word(&sb, t, it, 1);
		fprintf(out, "  %-12s ", sb.buf);
		strbuf_reset(&sb);
		alike_line(&sb, t, idx, m, of.n, summary_rest, &of);
		fprintf(out, "%s\n", sb.buf);
		strbuf_reset(&sb);
	}
	alike_lines_release(&g);
	strbuf_release(&sb);
}

void watch_summary_text(FILE *out, const struct watch_tracker *t,
			const struct watch_info *info)
{
	struct strbuf sb;
	size_t *order = xcalloc(t->nitems ? t->nitems : 1, sizeof(*order));
	size_t *idx = xcalloc(t->nitems ? t->nitems : 1, sizeof(*idx));
	int kind;
	size_t i, n;

	strbuf_init(&sb);
	summary_heading(&sb, t, info);
	fprintf(out, "watch summary: %s\n", sb.buf);
	if (info->elapsed_s < info->stuck_s)
		fprintf(out, "the watch was shorter than --stuck (%gs): nothing "
			"could be called stuck; \"still\" is what did not move "
			"in it\n", info->stuck_s);
	if (any_at_least(t))
		fputs("a time with \"+\" is a floor: that one sat there "
		      "unmoved when the watch began, maybe for longer\n", out);
	if (info->target_exited)
		fprintf(out, "the target exited during the watch\n");
	if (info->samples_failed) {
		fprintf(out, "%zu samples could not be read (last: ",
			info->samples_failed);
		esc_text(out, info->last_error);
		fputs(")\n", out);
	}
	watch_sorted(t, order);
	for (kind = 0; kind < WATCH_NKINDS; kind++) {
		/* tasks and threads always; the others where there are some */
		if (kind != WATCH_TASK && kind != WATCH_THREAD &&
		    !kind_count(t, (enum watch_kind)kind))
			continue;
		fprintf(out, "%s:\n", watch_kind_plural((enum watch_kind)kind));
		for (i = 0, n = 0; i < t->nitems; i++)
			if ((int)t->items[order[i]].kind == kind)
				idx[n++] = order[i];
		summary_kind(out, t, idx, n, info->apart);
	}
	strbuf_release(&sb);
	free(idx);
	free(order);
}

/* ---- the live view ---- */

struct watch_view {
	SCREEN *screen;
	int utf8;                /* the locale's: term_cut() */
	char *log[VIEW_LOG];     /* whole lines: the screen cuts them */
	size_t nlog;             /* lines ever logged */
};

struct watch_view *watch_view_open(void)
{
	struct watch_view *v = xcalloc(1, sizeof(*v));

	/* Before curses starts: it writes characters as the locale says. */
	v->utf8 = term_locale_utf8();
	v->screen = newterm(NULL, stdout, stdin);
	if (!v->screen) {
		free(v);
		return NULL;
	}
	set_term(v->screen);
	cbreak();      /* not raw: Ctrl-C still sends SIGINT */
	noecho();
	nodelay(stdscr, TRUE);
	keypad(stdscr, TRUE);
	curs_set(0);
	return v;
}

void watch_view_event(struct watch_view *v, const char *line)
{
	char **slot = &v->log[v->nlog % VIEW_LOG];

	/* Kept whole: a fixed-size copy cut grouped lines in the middle of
	 * a UTF-8 character or of an escape ("\x1b" shown as "\x1"). */
	free(*slot);
	*slot = xstrdup(line);
	v->nlog++;
}

/* One line at y, cut at the screen's width (no wrapping). */
static void put_line(const struct watch_view *v, int y, const char *s,
		     int bold)
{
	struct strbuf cut;

	if (y < 0 || y >= LINES)
		return;
	strbuf_init(&cut);
	(void)term_cut(&cut, s, COLS > 0 ? (size_t)COLS : 0, v->utf8);
	if (bold)
		attron(A_BOLD);
	mvaddstr(y, 0, cut.buf);
	if (bold)
		attroff(A_BOLD);
	strbuf_release(&cut);
}

void watch_view_draw(struct watch_view *v, const struct watch_tracker *t,
		     const struct watch_info *info)
{
	size_t *order = xcalloc(t->nitems ? t->nitems : 1, sizeof(*order));
	size_t i, nlog = v->nlog < VIEW_LOG ? v->nlog : VIEW_LOG;
	int y = 0, rows_end = LINES - (int)nlog - 2;
	static const size_t zero = 0;
	struct strbuf sb, st;

	strbuf_init(&sb);
	strbuf_init(&st);
	erase();
	summary_heading(&sb, t, info);
	strbuf_addstr(&sb, info->target_exited ? "  [target exited]" :
		      "  (q quits)");
	put_line(v, y++, sb.buf, 1);
	put_line(v, y++, "STATE        WHAT                                WHERE / WAITS ON", 1);
	watch_sorted(t, order);
	for (i = 0; i < t->nitems && y < rows_end; i++) {
		const struct watch_item *it = &t->items[order[i]];

		if (it->gone)
			continue;
		strbuf_reset(&sb);
		strbuf_reset(&st);
		state_word(&st, t, it, 0);
		strbuf_addf(&sb, "%-12s ", st.buf);
		strbuf_reset(&st);
		describe(&st, it);
		term_pad(&sb, st.buf, 35, v->utf8);
		strbuf_addch(&sb, ' ');
		where(&sb, it);
		blocked(&sb, t, it);
		add_waits_on(&sb, it);
		watch_add_timers(&sb, t->items, &order[i], &zero, 1, 1);
		if (it->idle && !it->sleep.on)
			{ strbuf_addstr(&sb, ", "); esc_add(&sb, it->idle, ESC_TEXT, 0); }
		put_line(v, y++, sb.buf, watch_state_of(t, it) == WATCH_STUCK);
	}
	if (nlog) {
		y = LINES - (int)nlog - 1;
		put_line(v, y++, "events:", 1);
		for (i = v->nlog - nlog; i < v->nlog; i++)
			put_line(v, y++, v->log[i % VIEW_LOG], 0);
	}
	refresh();
	strbuf_release(&sb);
	strbuf_release(&st);
	free(order);
}

int watch_view_keys(struct watch_view *v, const struct watch_tracker *t,
		    const struct watch_info *info)
{
	int c, n;

	/* bounded: a paste of a megabyte is not worth looping over */
	for (n = 0; n < 256 && (c = getch()) != ERR; n++) {
		if (c == 'q' || c == 'Q')
			return 1;
		if (c == KEY_RESIZE)
			watch_view_draw(v, t, info);
	}
	return 0;
}

void watch_view_close(struct watch_view *v)
{
	size_t i;

	if (!v)
		return;
	curs_set(1);
	endwin();
	delscreen(v->screen);
	for (i = 0; i < VIEW_LOG; i++)
		free(v->log[i]);
	free(v);
}
