/*
 * Unit test of the error policy's pieces (common/error.c,
 * common/warnings.c): context added in front of a message keeps its code,
 * err may be NULL anywhere, and the warnings list keeps its bounds.
 */
#include "common/error.h"
#include "common/warnings.h"

#include <string.h>

#include "tests/unit/check.h"
#include "common/banned.h"

static void test_prefix(void)
{
	struct cs_err err;
	char big[600];
	int ret;

	cs_err_init(&err);
	CHECK(cs_err_prefix(&err, "ctx") == 0 && err.msg[0] == '\0',
	      "prefix with no error recorded adds nothing: '%s'", err.msg);
	ret = cs_fail(&err, CS_ERR_NOT_PYTHON, "no libpython in %s", "x");
	CHECK(ret == -CS_ERR_NOT_PYTHON, "cs_fail returns -code: %d", ret);
	ret = cs_err_prefix(&err, "process %d (%s)", 42, "py");
	CHECK(ret == -CS_ERR_NOT_PYTHON && err.code == CS_ERR_NOT_PYTHON,
	      "prefix keeps the code: %d %d", ret, err.code);
	CHECK(!strcmp(err.msg, "process 42 (py): no libpython in x"),
	      "context in front: '%s'", err.msg);
	cs_err_prefix(&err, "outer");
	CHECK(!strcmp(err.msg, "outer: process 42 (py): no libpython in x"),
	      "prefixes nest: '%s'", err.msg);

	/* Too long: cut to the buffer, still terminated. */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	cs_err_prefix(&err, "%s", big);
	CHECK(strlen(err.msg) == sizeof(err.msg) - 1,
	      "long prefix cut to the buffer: %zu", strlen(err.msg));
	cs_err_init(&err);
	cs_fail(&err, CS_ERR_MEMORY, "%s", big);
	cs_err_prefix(&err, "ctx");
	CHECK(!strncmp(err.msg, "ctx: aaa", 8) &&
	      strlen(err.msg) == sizeof(err.msg) - 1,
	      "long message cut after the prefix: %.12s", err.msg);

	/* The first error wins; cs_refail replaces it. */
	cs_err_init(&err);
	cs_fail(&err, CS_ERR_MEMORY, "inner");
	cs_fail(&err, CS_ERR_CORE, "outer");
	CHECK(err.code == CS_ERR_MEMORY && !strcmp(err.msg, "inner"),
	      "first error wins: %d '%s'", err.code, err.msg);
	cs_refail(&err, CS_ERR_EXITED, "gone");
	CHECK(err.code == CS_ERR_EXITED && !strcmp(err.msg, "gone"),
	      "refail replaces: %d '%s'", err.code, err.msg);
}

static void test_null_err(void)
{
	cs_err_init(NULL);
	CHECK(cs_fail(NULL, CS_ERR_MEMORY, "x") == -CS_ERR_MEMORY,
	      "cs_fail(NULL) still returns -code");
	CHECK(cs_refail(NULL, CS_ERR_CORE, "x") == -CS_ERR_CORE,
	      "cs_refail(NULL) still returns -code");
	CHECK(cs_err_prefix(NULL, "x") == 0, "cs_err_prefix(NULL) is a no-op");
}

static size_t count_origin(const struct cs_warnings *w,
			   enum cs_warn_origin origin)
{
	size_t i, n = 0;

	for (i = 0; i < w->n; i++)
		n += w->v[i].origin == origin;
	return n;
}

static void test_warnings(void)
{
	struct cs_warnings w;
	char big[CS_WARNING_MAX * 2];
	size_t i;

	cs_warnings_init(&w);
	cs_warn(NULL, CS_WARN_CORE, "nobody listens");
	cs_warn(&w, CS_WARN_COLLECTION, "tasks not shown: %s", "why");
	CHECK(w.n == 1 && !strcmp(w.v[0].text, "tasks not shown: why") &&
	      w.v[0].origin == CS_WARN_COLLECTION, "one warning, as formatted");
	for (i = 0; i < CS_WARNINGS_MAX + 10; i++)
		cs_warn(&w, CS_WARN_CORE, "cannot find 'lib%zu.so'", i);
	CHECK(count_origin(&w, CS_WARN_CORE) == CS_WARNINGS_MAX + 1,
	      "at most CS_WARNINGS_MAX and one more: %zu",
	      count_origin(&w, CS_WARN_CORE));
	CHECK(!strcmp(w.v[w.n - 1].text,
		      "more warnings about this core not shown"),
	      "the last says more were left out: '%s'", w.v[w.n - 1].text);
	cs_warn(&w, CS_WARN_COLLECTION, "another");
	CHECK(count_origin(&w, CS_WARN_COLLECTION) == 2,
	      "each origin has its own bound");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	cs_warn(&w, CS_WARN_COLLECTION, "%s", big);
	CHECK(strlen(w.v[w.n - 1].text) == CS_WARNING_MAX &&
	      !strcmp(w.v[w.n - 1].text + CS_WARNING_MAX - 3, "..."),
	      "a long warning is cut: %zu", strlen(w.v[w.n - 1].text));
	/* Raw text: escaping happens when printed. */
	cs_warn(&w, CS_WARN_COLLECTION, "name \"\x1b[31m\"");
	CHECK(!strcmp(w.v[w.n - 1].text, "name \"\x1b[31m\""),
	      "kept raw until output");
	cs_warnings_release(&w);
	CHECK(w.n == 0 && w.v == NULL && w.count[CS_WARN_CORE] == 0,
	      "release empties the list");
	cs_warn(&w, CS_WARN_CORE, "again");
	CHECK(w.n == 1, "usable after release");
	cs_warnings_release(&w);
}

int main(void)
{
	test_prefix();
	test_null_err();
	test_warnings();
	return CHECK_DONE("test_error");
}
