/*
 * What `coroscope watch` shows: one line per event (plain output), the
 * live curses view on a terminal, and the summary at the end in text
 * (cli/watch_json.h: in JSON).
 */
#ifndef COROSCOPE_CLI_WATCH_VIEW_H
#define COROSCOPE_CLI_WATCH_VIEW_H

#include <stdio.h>

#include "cli/watch_track.h"

struct strbuf;

/* What the view and the summary say about the watch as a whole. */
struct watch_info {
	int pid;
	const char *command;       /* the target's command line, or NULL */
	const char *python;        /* "3.11.7", or NULL */
	double interval_s, stuck_s;
	double elapsed_s;          /* since the first sample */
	int target_exited;         /* the target went away during the watch */
	size_t samples_failed;     /* samples that could not be read */
	const char *last_error;    /* why the last failed one failed, or NULL */
	int apart;                 /* --all: alike tasks and threads not
				      grouped */
};

/* An event line's start: the local time, "12:00:03 ". */
void watch_add_clock(struct strbuf *sb);

/*
 * Every event of the last sample, a line each through emit() ("12:03:04
 * stuck task 'Task-2' (0x7f..) for 2.0s at app.py:31 in wait, waits on
 * Future in Event.wait"), three or more alike (the same event of alike
 * tasks or threads at the same place: a pool's workers) as one unless
 * apart (--all): "12:03:04 stuck 12 threads for 2.0s at app.py:9 in
 * work: 101 'w-0', ... and 7 more".
 */
void watch_format_events(const struct watch_tracker *t, int apart,
			 void (*emit)(const char *line, void *arg), void *arg);

void watch_summary_text(FILE *out, const struct watch_tracker *t,
			const struct watch_info *info);
/* The live view, on the terminal of stdout (and keys from stdin). */
struct watch_view;

/* NULL when the terminal cannot be driven (unknown TERM). */
struct watch_view *watch_view_open(void);
void watch_view_event(struct watch_view *v, const char *line);
void watch_view_draw(struct watch_view *v, const struct watch_tracker *t,
		     const struct watch_info *info);
/* Read pending keys: 1 when the user asked to quit (q, Q). */
int watch_view_keys(struct watch_view *v, const struct watch_tracker *t,
		    const struct watch_info *info);
/* Restore the terminal as it was. */
void watch_view_close(struct watch_view *v);

#endif
