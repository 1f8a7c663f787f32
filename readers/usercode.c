#include "readers/usercode.h"

#include <string.h>

#include "readers/code.h"
#include "readers/stacks.h"
#include "common/util.h"
#include "common/banned.h"

/* At p: "pythonX.Y/" or "pythonX.Yt/" (digits, at least one each). */
static int is_version_dir(const char *p)
{
	int digits;

	if (strncmp(p, "python", 6))
		return 0;
	p += 6;
	for (digits = 0; *p >= '0' && *p <= '9'; p++)
		digits++;
	if (!digits || *p++ != '.')
		return 0;
	for (digits = 0; *p >= '0' && *p <= '9'; p++)
		digits++;
	if (!digits)
		return 0;
	if (*p == 't')
		p++;
	return *p == '/';
}

/* Any "/lib/pythonX.Y/" or "/lib64/pythonX.Y/" in file. */
static int in_versioned_lib(const char *file)
{
	const char *p;

	for (p = strstr(file, "/lib"); p; p = strstr(p + 1, "/lib")) {
		const char *q = p + 4;

		if (!strncmp(q, "64", 2))
			q += 2;
		if (*q == '/' && is_version_dir(q + 1))
			return 1;
	}
	return 0;
}

int py_is_user_file(const char *file, const char *stdlib)
{
	if (!file || !*file || file[0] == '<')
		return 0;
	if (strstr(file, "/site-packages/") || strstr(file, "/dist-packages/"))
		return 0;
	if (stdlib && *stdlib && !strncmp(file, stdlib, strlen(stdlib)))
		return 0;
	return !in_versioned_lib(file);
}

int py_code_is_inline(const struct py_code *code)
{
	return code && code->filename && code->name &&
	       (!strcmp(code->filename, "<string>") ||
		!strcmp(code->filename, "<stdin>"));
}

const struct py_frame *py_inline_program_frame(
	const struct py_frame *const *f, size_t n)
{
	size_t i;

	if (!n || !py_code_is_inline(f[n - 1]->code) ||
	    strcmp(f[n - 1]->code->name, "<module>"))
		return NULL;
	/* Bounded by the frames. */
	for (i = n; i > 0 && py_code_is_inline(f[i - 1]->code); i--)
		;
	return f[i];
}

size_t py_stdlib_dir(const char *file, char *out, size_t len)
{
	const char *p;
	size_t n;

	if (!file || file[0] != '/')
		return 0;
	if (cs_ends_with(file, "/threading.py"))
		n = strlen(file) - strlen("threading.py");
	else if ((p = strstr(file, "/asyncio/")) != NULL)
		n = (size_t)(p - file) + 1;
	else
		return 0;
	/* an asyncio/ or threading.py of an installed package is no
	 * standard library */
	if (n >= len || strstr(file, "-packages/"))
		return 0;
	memcpy(out, file, n);
	out[n] = '\0';
	return n;
}

int py_is_scheduler_trap(const char *file)
{
	return file && (cs_ends_with(file, "/trio/_core/_traps.py") ||
			cs_ends_with(file, "/trio/_core/_parking_lot.py") ||
			cs_ends_with(file, "/asyncio/futures.py"));
}

int py_is_trio_sleep(const char *file)
{
	return file && cs_ends_with(file, "/trio/_timeouts.py");
}
