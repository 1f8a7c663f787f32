/*
 * The grouping of alike lines in a `coroscope run` report
 * (cli/run_alike.c): which items make a group, the groups' order, and
 * how a group's subject is written in each section's style.
 */
#include "cli/run_alike.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "tests/unit/check.h"

/* The groups as text: "0,2,4|1,5,6|3". */
static char *groups_text(const struct run_alike *g)
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
	struct run_alike g;
	char *got;

	run_alike_group(&g, keys, n, apart);
	got = groups_text(&g);
	CHECK(!strcmp(got, want), "groups %s, want %s", got, want);
	CHECK(g.first[g.ngroups] == n, "every item in a group");
	free(got);
	run_alike_release(&g);
}

static void test_group(void)
{
	char *mixed[] = { "a", "b", "a", "c", "a", "b", "b" };
	char *two[] = { "x", "y", "x" };
	char *same[] = { "s", "s", "s", "s" };
	char *none[] = { NULL };

	/* In the order of each group's first member, members in order. */
	expect_groups(mixed, 7, 0, "0,2,4|1,5,6|3");
	/* Two alike stay apart (THREAD_ALIKE_MIN is 3). */
	expect_groups(two, 3, 0, "0|1|2");
	expect_groups(same, 4, 0, "0,1,2,3");
	/* --all: each on its own. */
	expect_groups(mixed, 7, 1, "0|1|2|3|4|5|6");
	expect_groups(none, 0, 0, "");
}

static void expect_subject(const char *what,
			   const unsigned long long *ids,
			   const char *const *names, size_t n,
			   enum run_alike_style style, const char *want)
{
	struct strbuf sb;

	strbuf_init(&sb);
	run_alike_subject(&sb, what, ids, names, n, style);
	CHECK(!strcmp(sb.buf, want), "subject [%s], want [%s]", sb.buf, want);
	strbuf_release(&sb);
}

static void test_subject(void)
{
	const unsigned long long ids[] = { 11, 12, 13, 14, 15, 16, 17 };
	const char *names[] = { "a", NULL, "c\n\x1b[31m", "d", "e", "f", "g" };

	expect_subject("threads", ids, names, 3, RUN_ALIKE_QUOTED,
		       "threads 11 \"a\", 12, 13 \"c\n\x1b[31m\" (3 alike)");
	/* The graph's labels escape what the target named. */
	expect_subject("threads", ids, names, 3, RUN_ALIKE_GRAPH,
		       "threads 11 (a), 12, 13 (c\\n\\x1b[31m) (3 alike)");
	/* The first five are named, every member counted. */
	expect_subject("threads", ids, names, 7, RUN_ALIKE_QUOTED,
		       "threads 11 \"a\", 12, 13 \"c\n\x1b[31m\", 14 \"d\", "
		       "15 \"e\" and 2 more (7 alike)");
	/* Tasks: names only, "?" for one without. */
	expect_subject("tasks", NULL, names, 2, RUN_ALIKE_QUOTED,
		       "tasks \"a\", \"?\" (2 alike)");
	expect_subject("tasks", NULL, names, 2, RUN_ALIKE_GRAPH,
		       "tasks 'a', '?' (2 alike)");
}

int main(void)
{
	test_group();
	test_subject();
	return CHECK_DONE("test_run_alike");
}
