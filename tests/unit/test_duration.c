/*
 * Unit test of common/duration.c: the spellings `coroscope run` accepts
 * for --timeout and --kill-after, the ones it must refuse, and the text
 * messages show them as.
 */
#include "common/duration.h"

#include <stdio.h>
#include <string.h>

#include "tests/unit/check.h"
#include "common/banned.h"

static void accepts(const char *s, long long want)
{
	struct cs_err err;
	long long ms = -1;
	int ret;

	cs_err_init(&err);
	ret = duration_parse(s, &ms, &err);
	CHECK(ret == 0 && ms == want, "'%s': want %lld ms, got %d/%lld (%s)",
	      s, want, ret, ms, err.msg);
}

static void refuses(const char *s, const char *needle)
{
	struct cs_err err;
	long long ms = 12345;
	int ret;

	cs_err_init(&err);
	ret = duration_parse(s, &ms, &err);
	CHECK(ret == -CS_ERR_USAGE && err.code == CS_ERR_USAGE,
	      "'%s': want a usage error, got %d", s, ret);
	CHECK(ms == 12345, "'%s': output written on error", s);
	CHECK(strstr(err.msg, needle) != NULL,
	      "'%s': message '%s' lacks '%s'", s, err.msg, needle);
}

static void formats(long long ms, const char *want)
{
	char buf[32];

	duration_format(ms, buf, sizeof(buf));
	CHECK(!strcmp(buf, want), "%lld ms: want '%s', got '%s'", ms, want, buf);
}

/* What duration_format() prints, duration_parse() reads back. */
static void round_trip(long long ms)
{
	struct cs_err err;
	char buf[32];
	long long back = -1;

	cs_err_init(&err);
	duration_format(ms, buf, sizeof(buf));
	CHECK(duration_parse(buf, &back, &err) == 0 && back == ms,
	      "%lld ms -> '%s' -> %lld", ms, buf, back);
}

int main(void)
{
	char small[4];
	long long ms;

	/* The spellings of the issue. */
	accepts("90", 90000);
	accepts("90s", 90000);
	accepts("15m", 15 * 60000);
	accepts("1h", 3600000);
	/* timeout(1)'s others. */
	accepts("2d", 2LL * 24 * 3600000);
	accepts("0", 0);
	accepts("0s", 0);
	accepts("1.5", 1500);
	accepts("1.5s", 1500);
	accepts("0.5m", 30000);
	accepts(".25", 250);
	accepts("3.", 3000);
	accepts("0.0015", 1);           /* below a millisecond: rounded down */
	/* a tiny nonzero duration is 1 ms, never 0 ("no timeout") */
	accepts("0.0009", 1);
	accepts("0.0000005d", 43);
	accepts("1.999999999999s", 1999);
	accepts("007", 7000);
	accepts("366d", 366LL * 24 * 3600000);

	refuses("", "invalid duration ''");
	refuses("s", "invalid duration 's'");
	refuses(".", "invalid duration");
	refuses("1x", "invalid duration '1x'");
	refuses("1ms", "invalid duration '1ms'");
	refuses("1 s", "invalid duration");
	refuses(" 1", "invalid duration");
	refuses("-1", "invalid duration '-1'");
	refuses("+1", "invalid duration");
	refuses("1e3", "invalid duration");
	refuses("0x10", "invalid duration");
	refuses("1.2.3", "invalid duration");
	refuses("1sm", "invalid duration");
	refuses("1S", "invalid duration");
	refuses("367d", "too long");
	refuses("100000h", "too long");
	refuses("99999999999999999999999999", "too long");
	refuses("9223372036854775807s", "too long");

	formats(0, "0s");
	formats(1, "0.001s");
	formats(500, "0.5s");
	formats(1500, "1.5s");
	formats(1250, "1.25s");
	formats(30000, "30s");
	formats(90000, "90s");
	formats(15 * 60000, "15m");
	formats(3600000, "1h");
	formats(90 * 60000, "90m");
	formats(24LL * 3600000, "1d");
	formats(-5, "0s");
	duration_format(3600000, small, sizeof(small));
	CHECK(!strcmp(small, "1h"), "small buffer: '%s'", small);
	duration_format(123456789, small, sizeof(small));
	CHECK(strlen(small) == sizeof(small) - 1, "truncated: '%s'", small);

	for (ms = 0; ms < 5000; ms += 7)
		round_trip(ms);
	round_trip(DURATION_MAX_MS);
	round_trip(61000);
	round_trip(3601000);

	return CHECK_DONE("test_duration");
}
