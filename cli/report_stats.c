#include "cli/report_stats.h"

#include "common/banned.h"

void report_json_stats(struct json *j, const struct collection *c)
{
	json_key(j, "stats");
	json_begin_object(j);
	json_key(j, "pause_ms");
	json_double(j, c->pause_ms);
	json_key(j, "wall_ms");
	json_double(j, c->wall_ms);
	json_key(j, "reads");
	json_uint(j, c->ms->stats.reads);
	json_key(j, "attempts");
	json_uint(j, (uint64_t)(c->attempts > 0 ? c->attempts : 1));
	json_key(j, "bytes_read");
	json_uint(j, c->ms->stats.bytes_read);
	json_key(j, "stop_ms");
	json_double(j, c->stop_ms);
	json_end_object(j);
}
