/*
 * `coroscope watch --json`: the summary as the JSON document described
 * in coroscope(1), and the place and identity members `coroscope run`'s
 * samples share with it.
 */
#include "cli/watch_json.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/json.h"
#include "cli/watch_timers.h"
#include "common/strbuf.h"
#include "common/banned.h"

static void json_place(struct json *j, const char *key, const char *file,
		       int line, const char *function)
{
	json_key_str(j, key);
	if (!file) {
		json_null(j);
		return;
	}
	json_begin_object(j);
	json_key(j, "file");
	json_string(j, file);
	json_key(j, "line");
	if (line >= 0)
		json_int(j, line);
	else
		json_null(j);
	json_key(j, "function");
	json_string(j, function);
	json_end_object(j);
}

void watch_json_place(struct json *j, const char *key, const char *file,
		      int line, const char *function)
{
	json_place(j, key, file, line, function);
}

void watch_json_identity(struct json *j, const struct watch_item *it)
{
	char addr[32];

	if (it->kind != WATCH_THREAD) {
		snprintf(addr, sizeof(addr), "0x%" PRIx64, it->id);
		json_key(j, "address");
		json_string(j, addr);
	} else {
		json_key(j, "tid");
		json_uint(j, it->id);
	}
	json_key(j, "name");
	json_string(j, it->name);
}

static void json_item(struct json *j, const struct watch_tracker *t,
		      const struct watch_item *it)
{
	json_begin_object(j);
	watch_json_identity(j, it);
	if (it->kind == WATCH_TASK) {
		json_key(j, "framework");
		json_string(j, it->label ? it->label : "asyncio");
	} else if (it->kind == WATCH_GENERATOR) {
		json_key(j, "kind");
		json_string(j, it->label);
	} else if (it->kind == WATCH_GREENLET) {
		json_key(j, "type");
		json_string(j, it->label);
	}
	json_key(j, "state");
	json_string(j, watch_state_name(watch_state_of(t, it)));
	json_key(j, "stuck_for");
	json_double(j, watch_stuck_for(t, it));
	json_key(j, "at_least");
	json_bool(j, !it->gone && watch_stuck_at_least(t, it));
	if (it->kind == WATCH_THREAD) {
		json_key(j, "busy");
		json_double(j, watch_busy(it));
		json_key(j, "demand");
		if (watch_demand(it) >= 0)
			json_double(j, watch_demand(it));
		else
			json_null(j);
		json_key(j, "blocked_in");
		json_string(j, it->blocked_in);
		json_key(j, "native_function");
		json_string(j, it->native_function);
		json_key(j, "idle");
		json_string(j, it->gone ? NULL : it->idle);
	}
	json_place(j, "where", it->where_file, it->where_line,
		   it->where_function);
	if (it->inner_file)
		json_place(j, "innermost", it->inner_file, it->inner_line,
			   it->inner_function);
	else
		json_place(j, "innermost", it->where_file, it->where_line,
			   it->where_function);
	json_key(j, "waits_on");
	json_string(j, it->waits_on);
	json_key(j, "held_by");
	json_string(j, it->held_by);
	json_key(j, "blocked_on");
	json_string(j, watch_state_of(t, it) == WATCH_STUCK ? it->blocked_on :
		    NULL);
	if (it->kind == WATCH_TASK || it->kind == WATCH_GREENLET) {
		/* (what an idle task is: asleep, trio's system task; an
		 * idle greenlet: a threadpool worker thread's) */
		json_key(j, "idle");
		json_string(j, watch_state_of(t, it) == WATCH_IDLE ?
			    it->idle : NULL);
	}
	if (it->kind == WATCH_TASK) {
		watch_json_timers(j, it);
	} else if (it->kind == WATCH_THREAD) {
		/* (its sleep or timed wait: cli/collect_deadlines.h) */
		watch_json_timers(j, it);
	}
	json_key(j, "first_seen_s");
	json_double(j, it->first_seen);
	json_key(j, "last_seen_s");
	json_double(j, it->last_seen);
	json_end_object(j);
}

void watch_summary_json(FILE *out, const struct watch_tracker *t,
			const struct watch_info *info)
{
	struct json j;
	size_t *order = xcalloc(t->nitems ? t->nitems : 1, sizeof(*order));
	int kind;
	size_t i;

	watch_sorted(t, order);
	json_init(&j, out, 1);
	json_begin_object(&j);
	json_key(&j, "schema");
	json_int(&j, 1);
	json_key(&j, "pid");
	json_int(&j, info->pid);
	json_key(&j, "command");
	json_string(&j, info->command);
	json_key(&j, "python");
	json_string(&j, info->python);
	json_key(&j, "samples");
	json_uint(&j, t->samples);
	json_key(&j, "samples_failed");
	json_uint(&j, info->samples_failed);
	json_key(&j, "last_error");
	json_string(&j, info->samples_failed ? info->last_error : NULL);
	json_key(&j, "interval_s");
	json_double(&j, info->interval_s);
	json_key(&j, "stuck_threshold_s");
	json_double(&j, info->stuck_s);
	json_key(&j, "duration_s");
	json_double(&j, info->elapsed_s);
	json_key(&j, "target_exited");
	json_bool(&j, info->target_exited);
	for (kind = 0; kind < WATCH_NKINDS; kind++) {
		json_key_str(&j, watch_kind_plural((enum watch_kind)kind));
		json_begin_array(&j);
		for (i = 0; i < t->nitems; i++)
			if ((int)t->items[order[i]].kind == kind)
				json_item(&j, t, &t->items[order[i]]);
		json_end_array(&j);
	}
	json_end_object(&j);
	fputc('\n', out);
	free(order);
}
