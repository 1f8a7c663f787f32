/*
 * The dump's "stats" object: what its read cost (the pause, the wall
 * time, the reads and bytes, the tries), for `make bench` and users
 * who watch what a dump does to their process.
 */
#ifndef COROSCOPE_CLI_REPORT_STATS_H
#define COROSCOPE_CLI_REPORT_STATS_H

#include "cli/collect.h"
#include "cli/json.h"

/* "stats": { "pause_ms", "wall_ms", "reads", "attempts", "bytes_read",
 * "stop_ms" } of c, key and value. */
void report_json_stats(struct json *j, const struct collection *c);

#endif
