/*
 * What a thread `watch` saw stuck waits for in the kernel, in run's
 * words (cli/run_reads.h): the socket or pipe it reads, the file lock
 * it waits for and its holder, the child it waits to end.  Read from
 * /proc once per stuck item, when its STUCK event is out, not at every
 * sample: the network tables of a busy server are long.
 */
#include "cli/watch_blocked.h"

#include "cli/run_reads.h"
#include "common/strbuf.h"
#include "common/banned.h"

void watch_note_blocked(struct watch_tracker *t, const struct collection *c)
{
	struct procfs_lock holder;
	struct run_summary s;
	struct strbuf sb;
	size_t i;

	if (!c->is_live)
		return;
	run_summary_init(&s);
	strbuf_init(&sb);
	/* Bounded by the events of this sample. */
	for (i = 0; i < t->nevents; i++) {
		const struct watch_event *ev = &t->events[i];
		const struct watch_item *it = &t->items[ev->item];

		if (ev->kind != WATCH_EV_STUCK || it->kind != WATCH_THREAD ||
		    it->id == 0 || it->id > 0x7fffffff)
			continue;
		strbuf_reset(&sb);
		if (run_reads_call(&sb, &s, c, collect_proc_pid(c),
				   (int)it->id, &holder) >= 0 && sb.len > 1)
			watch_set_blocked_on(t, ev->item, sb.buf + 1);
	}
	strbuf_release(&sb);
	run_summary_release(&s);
}
