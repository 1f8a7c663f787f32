/*
 * libFuzzer harness for the core-file reader (attach/core.c): a core is
 * untrusted input.  Each input is written to a memfd and opened through
 * /proc/self/fd as a core with no sysroot and no executable required;
 * then the mappings, threads and crash information are walked, every
 * mapping is read at its start, middle and end, and each mapped file is
 * looked up the way symbols/modules.c does.  Nothing may crash, leak or
 * loop; a failure must come with a message.
 *
 * `make fuzz` builds it (with every tests/fuzz/fuzz_*.c) and runs it on a
 * copy of tests/fuzz/corpus/core.  By hand:
 *   make fuzz FUZZ_TIME=300
 * or build/fuzz/fuzz_core -max_total_time=60 -max_len=65536 DIR SEEDS.
 *
 * The seeds are cut-down real cores (kernel and gcore, of python3 and of
 * sleep: headers and notes kept, memory reduced to the pages holding the
 * auxiliary vector, argv and the ELF headers) and small synthesized ones
 * (one thread and one mapping; the same with PN_XNUM program header
 * numbering; one whose memory lies past the end of the file).  NT_FILE
 * paths in them name files of the machine they were made on; on another
 * machine those are simply missing, which the reader must handle too.
 */
#include "attach/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd = -1;

static unsigned probe(struct memsrc *ms, uint64_t addr)
{
	static const size_t lens[] = { 1, 8, 100, 4096, 3 * 4096 + 5 };
	unsigned char buf[3 * 4096 + 5];
	struct cs_err err;
	unsigned sum = 0;
	size_t i;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		long got;

		cs_err_init(&err);
		got = memsrc_read_partial(ms, addr, buf, lens[i], &err);
		if (got < 0 && (err.code == 0 || !err.msg[0]))
			__builtin_trap();
		if (got > (long)lens[i])
			__builtin_trap();
		if (got > 0)
			sum += buf[0] + buf[got - 1];
	}
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct core_options opt;
	struct cs_warnings warnings;
	const struct core_info *in;
	struct memsrc *ms;
	struct cs_err err;
	char path[64];
	volatile unsigned sink = 0;
	size_t i;

	if (memfd < 0) {
		memfd = memfd_create("fuzz_core", MFD_CLOEXEC);
		if (memfd < 0)
			__builtin_trap();
	}
	if (ftruncate(memfd, 0) != 0 ||
	    pwrite(memfd, data, size, 0) != (ssize_t)size)
		__builtin_trap();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);

	memset(&opt, 0, sizeof(opt));
	opt.exe_optional = 1;
	cs_warnings_init(&warnings);
	opt.warnings = &warnings;
	cs_err_init(&err);
	if (core_open(&ms, path, &opt, &err) != 0) {
		if (ms || err.code == 0 || !err.msg[0])
			__builtin_trap();
		cs_warnings_release(&warnings);
		return 0;
	}
	in = core_info(ms);
	if (!in)
		__builtin_trap();
	for (i = 0; i < ms->nmaps; i++) {
		const struct cs_mapping *m = &ms->maps[i];

		if (m->end <= m->start || (i && m->start < ms->maps[i - 1].start))
			__builtin_trap();
		sink += probe(ms, m->start);
		sink += probe(ms, m->start + (m->end - m->start) / 2);
		sink += probe(ms, m->end - 1);
		if (m->path) {
			char *host = memsrc_target_path(ms, m->path);

			if (!host)
				__builtin_trap();
			sink += (unsigned)strlen(host);
			free(host);
		}
	}
	for (i = 0; i < ms->nthreads; i++) {
		sink += (unsigned)ms->threads[i].tid;
		sink += probe(ms, ms->threads[i].fs_base);
	}
	sink += (unsigned)in->pid + (unsigned)in->signal;
	if (in->signal_name)
		sink += (unsigned)strlen(in->signal_name);
	if (in->command)
		sink += (unsigned)strlen(in->command);
	if (in->psargs)
		sink += (unsigned)strlen(in->psargs);
	if (ms->exe_path)
		sink += (unsigned)strlen(ms->exe_path);
	memsrc_free(ms);
	for (i = 0; i < warnings.n; i++)
		sink += (unsigned)strlen(warnings.v[i].text);
	cs_warnings_release(&warnings);
	(void)sink;
	return 0;
}
