#include "common/procfs_image.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/procfs.h"
#include "common/banned.h"

/* The auxiliary vector's key of the random bytes' address (elf.h's
 * AT_RANDOM), and the room for a whole vector (a few dozen pairs). */
#define AUX_RANDOM 25
#define AUXV_MAX 4096

int procfs_at_random(int pid, unsigned char out[16])
{
	char path[64], buf[AUXV_MAX];
	uint64_t pair[2];
	ssize_t n;
	size_t at;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	if ((n = procfs_read(path, buf, sizeof(buf))) <= 0)
		return -1;
	/* (64-bit pairs: key, value; AT_NULL ends it) */
	for (at = 0; at + sizeof(pair) <= (size_t)n; at += sizeof(pair)) {
		memcpy(pair, buf + at, sizeof(pair));
		if (pair[0] == 0)
			break;
		if (pair[0] == AUX_RANDOM)
			return pair[1] && procfs_mem_read(pid, pair[1], out,
							  16) == 0 ? 0 : -1;
	}
	return -1;
}

int procfs_same_image(int a, int b)
{
	unsigned char ra[16], rb[16];

	if (procfs_at_random(a, ra) < 0 || procfs_at_random(b, rb) < 0)
		return -1;
	return !memcmp(ra, rb, sizeof(ra));
}
