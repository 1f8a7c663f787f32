/*
 * libFuzzer harness for the parsers of /proc text (common/procfs.c): a
 * /proc/PID/maps line (the target names the files in it), a status
 * file's fields (the target names its threads), and a sched file's
 * se.exec_start (after the target's comm).
 *
 * Input: the text; each line is parsed as a maps line, and the whole as
 * a status file.  Seeds: tests/fuzz/corpus/procfs/.
 *
 * Besides the sanitizers, it aborts when an answer breaks the contract:
 * a mapping that ends before it starts, permissions that are not four
 * characters, a path outside the line or not starting with '/', or a
 * status text outside the input.
 */
#include "common/procfs.h"

#include <stdlib.h>
#include <string.h>

#include "common/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_INPUT 65536

static void one_line(const char *s, size_t n)
{
	char *line = malloc(n + 1);
	struct procfs_map m;

	if (!line)
		return;
	memcpy(line, s, n);
	line[n] = '\0';
	if (procfs_maps_line(line, &m) == 0) {
		if (m.end < m.start || strlen(m.perms) != 4)
			abort();
		if (m.path && (m.path < line || m.path > line + n ||
			       m.path[0] != '/'))
			abort();
	}
	free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;
	const char *s, *end, *nl, *v;
	long val, ids[8];
	uint64_t ns;
	size_t len;

	if (size > MAX_INPUT)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	/* Each line, up to a NUL too: the parsers get C strings. */
	end = text + strlen(text);
	for (s = text; s < end; s = nl + 1) {
		nl = memchr(s, '\n', (size_t)(end - s));
		if (!nl)
			nl = end;
		one_line(s, (size_t)(nl - s) + (nl < end));
	}
	v = procfs_status_text(text, "Name", &len);
	if (v && (v < text || v + len > end))
		abort();
	(void)procfs_status_long(text, "Tgid", &val);
	if (procfs_status_ids(text, "NSpid", ids, 8) > 8)
		abort();
	/* a sched file: its first line is the target's comm */
	(void)procfs_sched_exec_start(text, &ns);
	free(text);
	return 0;
}
