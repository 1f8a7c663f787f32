/*
 * The wait-for graph (readers/waitgraph.h) in text and JSON, and the
 * phrases `run` builds its causes from.
 */
#ifndef COROSCOPE_CLI_REPORT_GRAPH_H
#define COROSCOPE_CLI_REPORT_GRAPH_H

#include <stdio.h>

#include "cli/collect.h"
#include "cli/json.h"
#include "common/strbuf.h"

/* How the phrases below add names read from the target: escaped for the
 * text they go into, or as they are, for `run`'s causes, which every
 * writer (text, JSON, Markdown) escapes its own way. */
enum graph_names { GRAPH_ESCAPED, GRAPH_RAW };

/* "thread 1234 (worker)", "task 'holder'", "asyncio.Lock 0x7f.. (locked,
 * 2 waiters)". */
void graph_add_label(struct strbuf *sb, const struct collection *c,
		     size_t node, enum graph_names names);
/* "app.py:42 in hold" of a frame; "?" when NULL. */
void graph_add_place(struct strbuf *sb, const struct py_frame *f,
		     enum graph_names names);
/* The same at another line of f's code (-1: none). */
void graph_add_place_line(struct strbuf *sb, const struct py_frame *f,
			  int line, enum graph_names names);
/* " at USERFILE:LINE in FUNC (innermost FILE:LINE in FUNC)" of a thread
 * or task node. */
void graph_add_blame(struct strbuf *sb, const struct collection *c,
		     size_t node, enum graph_names names);
/* After an owner ident that is no thread's of the process. */
#define GRAPH_GONE "no thread of this process (it ended holding it, or " \
	"the process forked while it held it)"
/* After a holder only an RLock's owner ident names (wg_edge.by_ident). */
#define GRAPH_BY_IDENT " (the RLock names its thread ident, but no `with` " \
	"on its stack took it: a bare acquire(), or a thread that exited " \
	"holding it, whose ident this one reuses)"
/* " at app.py:42 in hold (taken at line 40)" of holder's hold of object
 * node obj: where the frame that entered the with block is, and the
 * line of the with that took it where that is another; else
 * graph_add_blame() of holder. */
void graph_add_holder_at(struct strbuf *sb, const struct collection *c,
			 size_t obj, size_t holder, enum graph_names names);
/* The frame whose with statement at *line took holder's hold of obj, or
 * NULL (*line 0) when that line is not known. */
const struct py_frame *graph_took_at(const struct collection *c, size_t obj,
				     size_t holder, int *line);
/* What future node fut (gather, concurrent future, a thread joined, a
 * pool's result) waits for: " for thread 12 (w) at app.py:4 in work",
 * its pending children, the task or thread that will complete it, a
 * pool's workers (a ThreadPool's by their threads). */
void graph_add_future_waits(struct strbuf *sb, const struct collection *c,
			    size_t fut, enum graph_names names);
/* "waits for: X held by Y at ..." of a waiting node, or "" when it waits
 * for nothing the graph knows. */
void graph_add_wait(struct strbuf *sb, const struct collection *c,
		    size_t node, enum graph_names names);
/* One short phrase for a task's line in the tree: "waits for
 * asyncio.Lock (locked, 2 waiters) held by task 'holder'", "waits for
 * gather of 3 (1 done)"; "" when it waits for no object the graph
 * knows (a task it awaits is drawn under it). */
/* The object graph_add_short_wait() names for node, or NULL. */
const struct py_prim *graph_short_wait_object(const struct collection *c,
					      size_t node);
void graph_add_short_wait(struct strbuf *sb, const struct collection *c,
			  size_t node);
/* The holder of that object ("task 'holder'", " and N more" when it
 * has more), without its place; whether it has one (a future has
 * none: what completes it is no holder). */
int graph_add_short_holder(struct strbuf *sb, const struct collection *c,
			   size_t node, enum graph_names names);
/* sep then "holder unknown", for a lock that may be held and whose
 * holder is no node: or "held by task 'leaker' 0x.. (ended)", when the
 * lock names as owner a trio Task that no task of the dump is (it took
 * the lock and returned); or "held by thread ident 0x..., no thread of
 * this process ...", when an RLock's owner ident is no thread's of c
 * (one that ended holding it, or one of the parent's when it forked:
 * none here will release it). */
/* Is p's owner ident (an RLock's) no thread's of c, every thread's
 * ident read and listed? */
int graph_owner_gone(const struct collection *c, const struct py_prim *p);
void graph_add_no_holder(struct strbuf *sb, const struct collection *c,
			 const struct py_prim *p, const char *sep,
			 enum graph_names names);
/* The cycle's nodes joined by " -> " (tasks with their addresses too
 * when two nodes have the same label). */
void graph_add_cycle(struct strbuf *sb, const struct collection *c,
		     size_t cycle, enum graph_names names);
/* (cli/report_holders.c, as the two above) The holder of hold edge e,
 * where it entered the holding block, else at its blame. */
void graph_add_hold(struct strbuf *sb, const struct collection *c,
		    const struct wg_edge *e, enum graph_names names);
/* Was hold e taken inside a library the program called (anyio's
 * to_thread.run_sync() taking its CapacityLimiter), so that the two
 * above say the holder's own line and where the library took it? */
int graph_hold_in_library(const struct collection *c, const struct wg_edge *e);
/* Are these nholders of obj more than can hold it at once (a lock two
 * `with` blocks entered, one having released it by hand)? */
int graph_holders_exclusive(const struct collection *c, size_t obj,
			    size_t nholders);
/* " held by X at ..., Y at ..." of obj's holders (n of them, the first
 * max named, " and N more"), " held by one of X, Y" where only one of
 * them can. */
void graph_add_holders(struct strbuf *sb, const struct collection *c,
		       size_t obj, const size_t *holders, size_t n,
		       size_t max, enum graph_names names);

/* ", sleeps in asyncio.sleep, wakes in 3596.9s", ", times out in 12.0s"
 * (cli/timer_text.h) of task nodes nodes[m[0..n)] (m NULL:
 * nodes[0..n)), alike ones as a span; without times, only which timers
 * they have (an alike key).  Nothing when one is no task; whether
 * anything was added. */
int graph_add_task_timers(struct strbuf *sb, const struct collection *c,
			  const size_t *nodes, const size_t *m, size_t n,
			  int times);

void report_text_graph(FILE *out, const struct collection *c);
/* The "graph" member of the dump's JSON object. */
void report_json_graph(struct json *j, const struct collection *c);

/* The text report's Waits section (cli/report_waits.c). */
void report_text_waits(FILE *out, const struct collection *c);

#endif
