/*
 * A memory source built by hand from /proc/PID/maps, for unit tests of
 * the layers above attach/ that must not depend on the live backend:
 * only its mapping list, pid, root and exe_path are filled (no ops: it
 * cannot read memory).
 */
#include "tests/support/proc_memsrc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/banned.h"

void proc_memsrc_release(struct memsrc *ms)
{
	size_t i;

	for (i = 0; i < ms->nmaps; i++)
		free(ms->maps[i].path);
	free(ms->maps);
	free(ms->root);
	free(ms->exe_path);
	memset(ms, 0, sizeof(*ms));
}

/* Fill ms->maps from /proc/PID/maps; 0 or -1. */
int proc_memsrc_init(struct memsrc *ms, int pid)
{
	char name[64], line[4096];
	FILE *f;
	size_t cap = 0;

	memset(ms, 0, sizeof(*ms));
	ms->pid = pid;
	ms->proc_id = pid;
	snprintf(name, sizeof(name), "/proc/%d/root", pid);
	ms->root = strdup(name);
	snprintf(name, sizeof(name), "/proc/%d/exe", pid);
	ms->exe_path = strdup(name);
	snprintf(name, sizeof(name), "/proc/%d/maps", pid);
	f = fopen(name, "r");
	if (!f || !ms->root || !ms->exe_path) {
		if (f)
			fclose(f);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct cs_mapping *m;
		uint64_t start, end, off;
		char perms[5];
		int pos = 0;
		char *path;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64
			   " %*s %*s %n", &start, &end, perms, &off, &pos) < 4
		    || pos == 0)
			continue;
		if (ms->nmaps == cap) {
			cap = cap ? 2 * cap : 64;
			m = realloc(ms->maps, cap * sizeof(*m));
			if (!m)
				break;
			ms->maps = m;
		}
		m = &ms->maps[ms->nmaps++];
		memset(m, 0, sizeof(*m));
		m->start = start;
		m->end = end;
		m->offset = off;
		memcpy(m->perms, perms, sizeof(perms));
		path = line + pos;
		path[strcspn(path, "\n")] = '\0';
		/* As the live backend does: the flag, not the suffix. */
		if (strlen(path) > 10 &&
		    !strcmp(path + strlen(path) - 10, " (deleted)")) {
			path[strlen(path) - 10] = '\0';
			m->deleted = 1;
		}
		m->path = *path ? strdup(path) : NULL;
	}
	fclose(f);
	return 0;
}

