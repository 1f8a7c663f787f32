/*
 * `coroscope watch --json`'s summary, the JSON document described in
 * coroscope(1); and the members of an item `coroscope run`'s samples
 * write alike.
 */
#ifndef COROSCOPE_CLI_WATCH_JSON_H
#define COROSCOPE_CLI_WATCH_JSON_H

#include <stdio.h>

#include "cli/watch_track.h"
#include "cli/watch_view.h"

struct json;

void watch_summary_json(FILE *out, const struct watch_tracker *t,
			const struct watch_info *info);
/* An item's identity members: "address" (a thread: "tid") and "name";
 * for `coroscope run`'s samples too. */
void watch_json_identity(struct json *j, const struct watch_item *it);
/* `key: {file, line, function}` as the summary writes a place (null
 * when file is NULL); for `coroscope run`'s samples too. */
void watch_json_place(struct json *j, const char *key, const char *file,
		      int line, const char *function);

#endif
