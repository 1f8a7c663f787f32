/*
 * The one "user's own code" rule (readers/usercode.c) on file names as
 * CPython installs lay them out: pyenv, Debian, /opt, venvs, free-threaded
 * builds, frozen modules, and user code that only looks like them.
 */
#include "readers/usercode.h"

#include <string.h>

#include "tests/unit/check.h"

static void user(const char *file, const char *stdlib, int want)
{
	CHECK(py_is_user_file(file, stdlib) == want, "%s (stdlib %s): %s",
	      file ? file : "(null)", stdlib ? stdlib : "(none)",
	      want ? "the user's, said library" : "library, said the user's");
}

static void test_rule(void)
{
	/* the program's own */
	user("/app/server.py", NULL, 1);
	user("/home/u/proj/lib/tasks.py", NULL, 1);
	user("app.py", NULL, 1);  /* 3.6 - 3.8: a script run by relative name */
	/* look-alikes that are not a library */
	user("/home/u/lib/python-tools/x.py", NULL, 1);
	user("/home/u/lib/python3/x.py", NULL, 1);
	user("/srv/mylib/python3.11/x.py", NULL, 1);
	user("/home/u/lib/python3.x/x.py", NULL, 1);
	/* standard libraries, wherever installed */
	user("/root/.pyenv/versions/3.12.1/lib/python3.12/threading.py", NULL, 0);
	user("/usr/lib/python3.11/asyncio/locks.py", NULL, 0);
	user("/opt/python3.14t/lib/python3.14t/asyncio/tasks.py", NULL, 0);
	user("/usr/lib64/python3.9/queue.py", NULL, 0);
	user("/usr/lib/python3.11/concurrent/futures/thread.py", NULL, 0);
	/* packages */
	user("/usr/lib/python3/dist-packages/uvicorn/server.py", NULL, 0);
	user("/venv/lib/python3.12/site-packages/httpx/_client.py", NULL, 0);
	user("/home/u/.local/lib/site-packages/x.py", NULL, 0);
	/* not files */
	user("<frozen importlib._bootstrap>", NULL, 0);
	user("<string>", NULL, 0);
	user("", NULL, 0);
	user(NULL, NULL, 0);
	/* a learnt standard library in an unusual place */
	user("/opt/app/pylib/threading.py", "/opt/app/pylib/", 0);
	user("/opt/app/pylib/selectors.py", "/opt/app/pylib/", 0);
	user("/opt/app/src/main.py", "/opt/app/pylib/", 1);
	user("/opt/app/pylib/selectors.py", "", 1);
}

static void stdlib_dir(const char *file, const char *want)
{
	char out[64];
	size_t n;

	strcpy(out, "untouched");
	n = py_stdlib_dir(file, out, sizeof(out));
	if (!want)
		CHECK(n == 0 && !strcmp(out, "untouched"), "%s: got %s", file,
		      out);
	else
		CHECK(n == strlen(want) && !strcmp(out, want), "%s: got %s",
		      file, n ? out : "nothing");
}

static void test_stdlib_dir(void)
{
	stdlib_dir("/usr/lib/python3.11/threading.py", "/usr/lib/python3.11/");
	stdlib_dir("/usr/lib/python3.11/asyncio/locks.py",
		   "/usr/lib/python3.11/");
	stdlib_dir("/opt/app/pylib/threading.py", "/opt/app/pylib/");
	stdlib_dir("/app/server.py", NULL);
	stdlib_dir("threading.py", NULL);
	stdlib_dir("/venv/lib/python3.12/site-packages/x/asyncio/y.py", NULL);
	/* too long for out */
	stdlib_dir("/a/very/long/directory/name/that/does/not/fit/in/sixty-"
		   "four/bytes/threading.py", NULL);
}

/* The machinery under the call a task waits in, named past: trio's
 * traps and parking lot, and asyncio's Python Future (nest_asyncio's
 * Futures, whose __await__ has a frame); not the call itself. */
static void test_scheduler_trap(void)
{
	static const struct {
		const char *file;
		int want;
	} cases[] = {
		{ "/usr/lib/python3/dist-packages/trio/_core/_traps.py", 1 },
		{ "/usr/lib/python3/dist-packages/trio/_core/_parking_lot.py", 1 },
		{ "/usr/lib/python3.11/asyncio/futures.py", 1 },
		{ "/opt/python3.14t/lib/python3.14t/asyncio/futures.py", 1 },
		{ "/usr/lib/python3.11/asyncio/locks.py", 0 },
		{ "/usr/lib/python3.11/concurrent/futures/_base.py", 0 },
		{ "/usr/lib/python3/dist-packages/trio/_sync.py", 0 },
		{ "/app/futures.py", 0 },
		{ NULL, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(py_is_scheduler_trap(cases[i].file) == cases[i].want,
		      "%s: %s", cases[i].file ? cases[i].file : "(null)",
		      cases[i].want ? "a trap, said not" : "no trap, said one");
}

int main(void)
{
	test_rule();
	test_stdlib_dir();
	test_scheduler_trap();
	return CHECK_DONE("test_usercode");
}
