/* Unit tests for cli/natural_order.c. */
#include "cli/natural_order.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check.h"

static int sign(int v)
{
	return (v > 0) - (v < 0);
}

/* a before b, and b after a. */
static void before(const char *a, const char *b)
{
	CHECK(sign(natural_cmp(a, b)) == -1 && sign(natural_cmp(b, a)) == 1,
	      "'%s' before '%s': %d, %d", a ? a : "(null)", b ? b : "(null)",
	      natural_cmp(a, b), natural_cmp(b, a));
}

int main(void)
{
	static const char *const sorted[] = {
		"", "0", "00", "01", "1", "2", "9", "10", "099", "100",
		"18446744073709551615", "18446744073709551616",
		"99999999999999999999999999999", "Task", "Task-", "Task-2",
		"Task-3", "Task-9", "Task-10", "Task-10a", "Task-10b",
		"Task-11", "Task-100", "Task-1000", "Task-10000", "a-q1",
		"a-q2", "a-q10", "w-0", "w-1", "w-9", "w-10", "\xc3\xa9", "\xff",
	};
	size_t n = sizeof(sorted) / sizeof(sorted[0]), i, j;
	char *big = malloc(100001);

	for (i = 0; i < n; i++) {
		CHECK(natural_cmp(sorted[i], sorted[i]) == 0, "'%s' equal",
		      sorted[i]);
		for (j = i + 1; j < n; j++)
			before(sorted[i], sorted[j]);
		before(sorted[i], NULL);
	}
	CHECK(natural_cmp(NULL, NULL) == 0, "two NULLs equal");
	/* Only equal strings are equal: leading zeros and the same number
	 * are told apart by the bytes. */
	CHECK(natural_cmp("x07", "x7") != 0 && natural_cmp("x7", "x07") ==
	      -natural_cmp("x07", "x7"), "x07 and x7 apart");
	/* A run of digits longer than any integer, and one of zeros. */
	if (!big)
		abort();
	memset(big, '9', 100000);
	big[100000] = 0;
	before("9", big);
	memset(big, '0', 100000);
	before(big, "1");
	free(big);
	return CHECK_DONE("test_natural_order");
}
