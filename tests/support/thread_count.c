#include "tests/support/thread_count.h"

#include <stdio.h>
#include <time.h>

#include "common/banned.h"

int thread_count(void)
{
	char line[256];
	int n = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

int thread_count_settled(int want)
{
	struct timespec ms = { 0, 1000000 };
	int n = thread_count(), i;

	/* Bounded: 2,000 looks, a millisecond apart. */
	for (i = 0; i < 2000 && n != want; i++) {
		nanosleep(&ms, NULL);
		n = thread_count();
	}
	return n;
}
