/*
 * Alike lines of a report, shown once: a pool of 64 workers parked on
 * one Event made 64 "likely cause" entries of a `coroscope run` report
 * and 64 "stuck" lines, the last ones cut off after the first twenty,
 * with whatever else was stuck.  Items are alike when their keys (what
 * their line says but for its subject: what, for how long, where, and
 * anything else that tells them apart) are equal; ALIKE_LINES_MIN of
 * them or more become one line, the others keep one each.
 */
#ifndef COROSCOPE_CLI_ALIKE_LINES_H
#define COROSCOPE_CLI_ALIKE_LINES_H

#include <stddef.h>

#include "cli/thread_alike.h"

struct strbuf;

/* As the dump groups threads (cli/thread_alike.h): two stay apart. */
#define ALIKE_LINES_MIN THREAD_ALIKE_MIN
/* Members named on a group's line, the rest counted: the line leads
 * with what they share, and the dump (or the JSON) lists them all. */
#define ALIKE_LINES_NAMED 5

/* Groups in the order of their first member; group g's members are
 * member[first[g]] .. member[first[g + 1] - 1], in their own order. */
struct alike_lines {
	size_t *member;
	size_t *first;            /* ngroups + 1 entries */
	size_t ngroups;
	char **keys;              /* owned: freed by alike_lines_release() */
	size_t nkeys;
};

/* Group the n items by key (keys[i] for item i, none NULL); with apart
 * (--all) every item is a group of its own.  Takes keys: the array and
 * each key, malloc'd, are freed with the groups. */
void alike_lines_group(struct alike_lines *g, char **keys, size_t n,
		       int apart);
void alike_lines_release(struct alike_lines *g);
/* Add s (NULL: none) to a key after its length, so that no string the
 * target chose can make two different keys one. */
void alike_lines_key_str(struct strbuf *sb, const char *s);

/*
 * How a section names threads and tasks: 12 "name" and "name", the
 * names as they are (escaped on output: run's causes and samples); 12
 * (name) and 'name', likewise (run's causes from the wait-for graph);
 * 12 'name' and 'name', escaped here (watch's lines); and generators
 * and greenlets, which share a name, by address: 0x7f12 (ids only).
 */
enum alike_style { ALIKE_QUOTED, ALIKE_GRAPH, ALIKE_WATCH, ALIKE_ADDRESS };

/* The members of a group of n, to end its line: '12 "a", 13, 14 "c",
 * 15, 16 and 7 more'; ids[k], names[k] (NULL: none) for each in order;
 * tasks have no ids (ids NULL) and a task without a name is "?";
 * ALIKE_ADDRESS takes ids and no names (NULL). */
void alike_lines_members(struct strbuf *sb, const unsigned long long *ids,
			 const char *const *names, size_t n,
			 enum alike_style style);

#endif
