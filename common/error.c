#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cs_err_init(struct cs_err *err)
{
	if (!err)
		return;
	err->code = 0;
	err->msg[0] = '\0';
}

static int record(struct cs_err *err, int code, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

static int record(struct cs_err *err, int code, const char *fmt, va_list ap)
{
	err->code = code;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	return -code;
}

int cs_fail(struct cs_err *err, int code, const char *fmt, ...)
{
	va_list ap;
	int ret = -code;

	if (err && err->code == 0) {
		va_start(ap, fmt);
		ret = record(err, code, fmt, ap);
		va_end(ap);
	}
	return ret;
}

int cs_refail(struct cs_err *err, int code, const char *fmt, ...)
{
	va_list ap;
	int ret = -code;

	if (err) {
		va_start(ap, fmt);
		ret = record(err, code, fmt, ap);
		va_end(ap);
	}
	return ret;
}

int cs_err_prefix(struct cs_err *err, const char *fmt, ...)
{
	char old[sizeof(err->msg)];
	va_list ap;
	int n;

	if (!err || !err->code)
		return 0;
	memcpy(old, err->msg, sizeof(old));
	va_start(ap, fmt);
	n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(err->msg))
		snprintf(err->msg + n, sizeof(err->msg) - (size_t)n, ": %s",
			 old);
	return -err->code;
}

void cs_bug(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "coroscope: BUG at %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}
