/*
 * Alike lines of a `coroscope run` report, shown once: a pool of 64
 * workers parked on one Event made 64 "likely cause" entries and 64
 * "stuck" lines, the last ones cut off after the first twenty, and
 * whatever else was stuck with them.  Items are alike when their keys
 * (the line without its subject: what, for how long, where) are equal;
 * THREAD_ALIKE_MIN of them or more become one group, the others stay on
 * their own.
 */
#ifndef COROSCOPE_CLI_RUN_ALIKE_H
#define COROSCOPE_CLI_RUN_ALIKE_H

#include <stddef.h>

struct strbuf;

/* Groups in the order of their first member; group g's members are
 * member[first[g]] .. member[first[g + 1] - 1], in their own order. */
struct run_alike {
	size_t *member;
	size_t *first;            /* ngroups + 1 entries */
	size_t ngroups;
};

/* Group the n items by key (keys[i] for item i, none NULL); with apart
 * (--all) every item is a group of its own. */
void run_alike_group(struct run_alike *g, char *const *keys, size_t n,
		     int apart);
void run_alike_release(struct run_alike *g);

/* How a section names its threads and tasks: 12 "name" and "name",
 * the names as they are (escaped on output: the causes' headlines); or
 * 12 (name) and 'name', escaped here (the wait-for graph's labels). */
enum run_alike_style { RUN_ALIKE_QUOTED, RUN_ALIKE_GRAPH };

/* The subject of a group of n items (n >= 2): "threads 12 "a", 13 "b",
 * 14 and 9 more (12 alike)"; ids[k], names[k] (NULL: none) for its
 * members in order, what: "threads" or "tasks" (tasks have no ids: ids
 * NULL).  The first THREAD_ALIKE_NAMES are named. */
void run_alike_subject(struct strbuf *sb, const char *what,
		       const unsigned long long *ids,
		       const char *const *names, size_t n,
		       enum run_alike_style style);

#endif
