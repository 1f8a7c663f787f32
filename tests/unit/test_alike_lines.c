/*
 * The grouping of alike lines of a report (cli/alike_lines.c): which
 * items make a group, the groups' order, and how a group's members are
 * written in each section's style.
 */
#include "cli/alike_lines.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "tests/unit/check.h"

/* The groups as text: "0,2,4|1,5,6|3". */
static char *groups_text(const struct alike_lines *g)
{
	struct strbuf sb;
	size_t k, i;

	strbuf_init(&sb);
	for (k = 0; k < g->ngroups; k++) {
		if (k)
			strbuf_addch(&sb, '|');
		for (i = g->first[k]; i < g->first[k + 1]; i++)
			strbuf_addf(&sb, "%s%zu", i > g->first[k] ? "," : "",
				    g->member[i]);
	}
	return strbuf_detach(&sb);
}

static void expect_groups(char *const *keys, size_t n, int apart,
			  const char *want)
{
	/* The groups take their keys: copies of them. */
	char **owned = xmallocarray(n ? n : 1, sizeof(*owned));
	struct alike_lines g;
	char *got;
	size_t i;

	for (i = 0; i < n; i++)
		owned[i] = xstrdup(keys[i]);

	alike_lines_group(&g, owned, n, apart);
	got = groups_text(&g);
	CHECK(!strcmp(got, want), "groups %s, want %s", got, want);
	CHECK(g.first[g.ngroups] == n, "every item in a group");
	free(got);
	alike_lines_release(&g);
}

static void test_group(void)
{
	char *mixed[] = { "a", "b", "a", "c", "a", "b", "b" };
	char *two[] = { "x", "y", "x" };
	char *same[] = { "s", "s", "s", "s" };
	char *apart[] = { "p", "q", "r", "s" };
	char *none[] = { NULL };

	/* In the order of each group's first member, members in order. */
	expect_groups(mixed, 7, 0, "0,2,4|1,5,6|3");
	/* Two alike stay apart (THREAD_ALIKE_MIN is 3). */
	expect_groups(two, 3, 0, "0|1|2");
	expect_groups(same, 4, 0, "0,1,2,3");
	expect_groups(apart, 4, 0, "0|1|2|3");
	/* --all: each on its own. */
	expect_groups(mixed, 7, 1, "0|1|2|3|4|5|6");
	expect_groups(none, 0, 0, "");
}

static void expect_members(const unsigned long long *ids,
			   const char *const *names, size_t n,
			   enum alike_style style, const char *want)
{
	struct strbuf sb;

	strbuf_init(&sb);
	alike_lines_members(&sb, ids, names, n, style);
	CHECK(!strcmp(sb.buf, want), "members [%s], want [%s]", sb.buf, want);
	strbuf_release(&sb);
}

static void test_members(void)
{
	const unsigned long long ids[] = { 11, 12, 13, 14, 15, 16, 17 };
	const char *names[] = { "a", NULL, "c\n\x1b[31m", "d", "e", "f", "g" };

	expect_members(ids, names, 3, ALIKE_QUOTED,
		       "11 \"a\", 12, 13 \"c\n\x1b[31m\"");
	/* run's causes from the graph: names as they are, in parentheses
	 * (every writer of the causes escapes them). */
	expect_members(ids, names, 3, ALIKE_GRAPH,
		       "11 (a), 12, 13 (c\n\x1b[31m)");
	/* watch's lines: single quotes, escaped. */
	expect_members(ids, names, 3, ALIKE_WATCH,
		       "11 'a', 12, 13 'c\\n\\x1b[31m'");
	expect_members(NULL, names, 2, ALIKE_WATCH, "'a', '?'");
	/* The first five are named, the rest counted. */
	expect_members(ids, names, 7, ALIKE_QUOTED,
		       "11 \"a\", 12, 13 \"c\n\x1b[31m\", 14 \"d\", "
		       "15 \"e\" and 2 more");
	/* Tasks: names only, "?" for one without. */
	expect_members(NULL, names, 2, ALIKE_QUOTED, "\"a\", \"?\"");
	expect_members(NULL, names, 2, ALIKE_GRAPH, "'a', '?'");
}

/* Tasks and greenlets, known by name alone, are named first to last in
 * counting order, whatever order the heap walk found them in; members
 * with ids keep the caller's order (the dump's). */
static void test_members_order(void)
{
	const char *walk[] = { "Task-9", "Task-3", NULL, "Task-10", "Task-2",
			       "Task-100", "Task-4", "Task-11", "Task-3" };
	const char *few[] = { "w-10", NULL, "w-9" };
	const unsigned long long ids[] = { 30, 10, 20 };
	const char *tnames[] = { "t-3", "t-1", "t-2" };
	const char *many[1000];
	char buf[1000][16];
	size_t k;

	expect_members(NULL, walk, 9, ALIKE_QUOTED,
		       "\"Task-2\", \"Task-3\", \"Task-3\", \"Task-4\", "
		       "\"Task-9\" and 4 more");
	expect_members(NULL, walk, 9, ALIKE_WATCH,
		       "'Task-2', 'Task-3', 'Task-3', 'Task-4', 'Task-9' "
		       "and 4 more");
	/* Fewer than five: all, the nameless last. */
	expect_members(NULL, few, 3, ALIKE_GRAPH, "'w-9', 'w-10', '?'");
	/* Threads: as given. */
	expect_members(ids, tnames, 3, ALIKE_QUOTED,
		       "30 \"t-3\", 10 \"t-1\", 20 \"t-2\"");
	/* A thousand, last to first: the five lowest, in order. */
	for (k = 0; k < 1000; k++) {
		snprintf(buf[k], sizeof(buf[k]), "job-%zu", 999 - k);
		many[k] = buf[k];
	}
	expect_members(NULL, many, 1000, ALIKE_QUOTED,
		       "\"job-0\", \"job-1\", \"job-2\", \"job-3\", "
		       "\"job-4\" and 995 more");
}

int main(void)
{
	test_group();
	test_members();
	test_members_order();
	return CHECK_DONE("test_alike_lines");
}
