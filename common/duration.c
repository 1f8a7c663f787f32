#include "common/duration.h"

#include <stdio.h>

#include "common/banned.h"

static long long unit_ms(char unit)
{
	switch (unit) {
	case '\0':
	case 's':
		return 1000;
	case 'm':
		return 60 * 1000;
	case 'h':
		return 3600 * 1000;
	case 'd':
		return 24 * 3600 * 1000;
	default:
		return 0;
	}
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * By hand rather than strtod(): no locale decides what the decimal point
 * is, no exponent or hex forms sneak in, and no rounding surprises in
 * "0.1s".  The whole part is bounded before it can overflow.
 */
int duration_parse(const char *s, long long *ms, struct cs_err *err)
{
	const char *p = s;
	long long whole = 0, frac_num = 0, frac_den = 1, unit, total;
	int digits = 0;

	while (is_digit(*p)) {
		whole = whole * 10 + (*p++ - '0');
		digits++;
		if (whole > DURATION_MAX_MS)
			return cs_fail(err, CS_ERR_USAGE,
				       "duration '%s' is too long", s);
	}
	if (*p == '.') {
		p++;
		while (is_digit(*p)) {
			/* Ten digits keep a day's fraction to the millisecond
			 * (8.64e7 ms x 1e10 still fits); later ones cannot
			 * matter. */
			if (frac_den < 10000000000LL) {
				frac_num = frac_num * 10 + (*p - '0');
				frac_den *= 10;
			}
			p++;
			digits++;
		}
	}
	unit = *p ? unit_ms(*p) : 1000;
	if (!digits || !unit || (*p && p[1]))
		return cs_fail(err, CS_ERR_USAGE,
			       "invalid duration '%s' (use e.g. 90, 90s, 15m, 1h)",
			       s);
	if (whole > DURATION_MAX_MS / unit)
		return cs_fail(err, CS_ERR_USAGE, "duration '%s' is too long", s);
	total = whole * unit + frac_num * unit / frac_den;
	/* A tiny nonzero duration must not turn into 0, "no timeout". */
	if (total == 0 && (whole || frac_num))
		total = 1;
	if (total > DURATION_MAX_MS)
		return cs_fail(err, CS_ERR_USAGE, "duration '%s' is too long", s);
	*ms = total;
	return 0;
}

void duration_format(long long ms, char *buf, size_t len)
{
	static const struct { long long ms; char unit; } units[] = {
		{ 24LL * 3600 * 1000, 'd' },
		{ 3600LL * 1000, 'h' },
		{ 60LL * 1000, 'm' },
	};
	size_t i;

	if (ms < 0)
		ms = 0;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (ms >= units[i].ms && ms % units[i].ms == 0) {
			snprintf(buf, len, "%lld%c", ms / units[i].ms,
				 units[i].unit);
			return;
		}
	}
	if (ms % 1000 == 0) {
		snprintf(buf, len, "%llds", ms / 1000);
	} else {
		char frac[8];
		size_t n;

		/* "1.500" -> "1.5": trailing zeros say nothing. */
		snprintf(frac, sizeof(frac), "%03lld", ms % 1000);
		n = 3;
		while (n > 1 && frac[n - 1] == '0')
			frac[--n] = '\0';
		snprintf(buf, len, "%lld.%ss", ms / 1000, frac);
	}
}
