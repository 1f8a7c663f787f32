/*
 * The target's mappings as a memsrc knows them: which one holds an
 * address, where to open the file one names, and the list's order and
 * release for the backends that build it.
 */
#include "attach/memsrc.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/range.h"
#include "common/strbuf.h"
#include "common/banned.h"

const struct cs_mapping *memsrc_find_mapping(const struct memsrc *ms,
					     uint64_t addr)
{
	struct range_array ra = {
		ms->maps, ms->nmaps, sizeof(*ms->maps),
		offsetof(struct cs_mapping, start),
		offsetof(struct cs_mapping, end),
	};

	return range_find(&ra, addr);
}

char *memsrc_target_path(const struct memsrc *ms, const char *path)
{
	const char *root = ms->root ? ms->root : "";
	size_t rlen = strlen(root), plen = strlen(path);
	char *s;

	if (ms->ops && ms->ops->host_path)
		return ms->ops->host_path(ms, path);

	/* "/proc/PID/root" + "/usr/lib/x.so": avoid a doubled slash. */
	while (rlen && root[rlen - 1] == '/' && path[0] == '/')
		rlen--;
	s = xmalloc(rlen + plen + 1);
	memcpy(s, root, rlen);
	memcpy(s + rlen, path, plen + 1);
	return s;
}

static int mapping_cmp(const void *a, const void *b)
{
	const struct cs_mapping *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

void cs_mappings_sort(struct cs_mapping *maps, size_t n)
{
	size_t i;

	/* /proc/PID/maps comes sorted: check before sorting thousands. */
	for (i = 1; i < n; i++)
		if (mapping_cmp(&maps[i - 1], &maps[i]) > 0)
			break;
	if (i < n)
		qsort(maps, n, sizeof(*maps), mapping_cmp);
}

void cs_mappings_free(struct cs_mapping *maps, size_t n)
{
	size_t i;

	if (!maps)
		return;
	for (i = 0; i < n; i++)
		free(maps[i].path);
	free(maps);
}
