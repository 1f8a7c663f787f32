#include "cli/natural_order.h"

#include <string.h>

#include "common/banned.h"

static int is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* The digit run at *s: its leading zeros skipped, its length left. */
static const unsigned char *digits(const unsigned char *s, size_t *len)
{
	size_t n = 0;

	while (*s == '0' && is_digit(s[1]))
		s++;
	while (is_digit(s[n]))
		n++;
	*len = n;
	return s;
}

int natural_cmp(const char *a, const char *b)
{
	const unsigned char *x = (const unsigned char *)a;
	const unsigned char *y = (const unsigned char *)b;
	size_t nx, ny;
	int d;

	if (!a || !b)
		return (a == NULL) - (b == NULL);
	/* Bounded: each turn moves both past at least one byte. */
	while (*x && *y) {
		if (is_digit(*x) && is_digit(*y)) {
			x = digits(x, &nx);
			y = digits(y, &ny);
			if (nx != ny)
				return nx < ny ? -1 : 1;
			d = memcmp(x, y, nx);
			if (d)
				return d;
			x += nx;
			y += ny;
			continue;
		}
		if (*x != *y)
			return *x < *y ? -1 : 1;
		x++;
		y++;
	}
	if (*x || *y)
		return *x ? 1 : -1;
	return strcmp(a, b);
}
