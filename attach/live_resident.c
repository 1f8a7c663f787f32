/*
 * Which pages of a live target hold anything it wrote, from
 * /proc/PID/pagemap: one 64-bit entry per page, bit 63 set when the
 * page is in memory, bit 62 when it is swapped out.  Neither means the
 * page was never written (or was given back): it reads as zeros.
 *
 * A capture plan grows each page the readers used to its 16 KiB block,
 * for the objects the target allocates next to it before the stop;
 * 10,000 greenlets each keep their frames in the first page of a 16 KiB
 * data stack chunk the rest of which they never touch, and copying
 * those zeros tripled the pause.
 *
 * Reading pagemap costs the kernel ~0.3 us a page, so a whole-process
 * count from /proc/PID/status first says whether it can be worth it.
 */
#include "attach/live_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "attach/memsrc.h"
#include "common/procfs.h"
#include "common/banned.h"

#define PM_PRESENT ((uint64_t)1 << 63)
#define PM_SWAPPED ((uint64_t)1 << 62)
#define PM_PAGE 4096u

int live_resident(struct memsrc *ms, uint64_t page, size_t n,
		  unsigned char *out)
{
	struct live *lv = ms->backend;
	uint64_t entries[MEMSRC_RESIDENT_MAX];
	uint64_t index = page / PM_PAGE;
	ssize_t r;
	size_t i;

	if (!lv || n > MEMSRC_RESIDENT_MAX || lv->pagemap_fd == -2 ||
	    index > (uint64_t)INT64_MAX / sizeof(uint64_t) - n)
		return -1;
	if (lv->pagemap_fd == -1) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/pagemap", lv->mm_id);
		lv->pagemap_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (lv->pagemap_fd < 0) {
			lv->pagemap_fd = -2;
			return -1;
		}
	}
	do
		r = pread(lv->pagemap_fd, entries, n * sizeof(uint64_t),
			  (off_t)(index * sizeof(uint64_t)));
	while (r < 0 && errno == EINTR);
	/* Short (past the end of the address space) or refused: unknown. */
	if (r != (ssize_t)(n * sizeof(uint64_t)))
		return -1;
	for (i = 0; i < n; i++)
		out[i] = (entries[i] & (PM_PRESENT | PM_SWAPPED)) != 0;
	return 0;
}

/*
 * RssAnon counts the anonymous pages in memory, VmSwap those swapped
 * out.  Nearly all of them lie in the private writable mappings a capture
 * copies (a few are copied-on-write pages of libraries' data), so the
 * writable bytes less this sum is about the most that can read as zeros.
 */
int64_t live_written_bytes(struct memsrc *ms)
{
	struct live *lv = ms->backend;
	char status[PROCFS_STATUS_MAX];
	long anon_kb, swap_kb;

	if (!lv || procfs_status_read(lv->mm_id, 0, status, sizeof(status)) < 0 ||
	    procfs_status_long(status, "RssAnon", &anon_kb) < 0 ||
	    procfs_status_long(status, "VmSwap", &swap_kb) < 0 ||
	    anon_kb < 0 || swap_kb < 0 ||
	    (uint64_t)anon_kb + (uint64_t)swap_kb > (uint64_t)INT64_MAX / 1024)
		return -1;
	return ((int64_t)anon_kb + swap_kb) * 1024;
}
