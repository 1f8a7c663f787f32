/*
 * libFuzzer harness for symbols/debug_inflate.c: a debug file found on
 * disk (a core's --sysroot may come from anywhere) is untrusted input.
 * Each input is written to a memfd and given to debug_inflate() with the
 * build id its GNU note seems to hold (found by a plain byte search, so
 * that inputs reach the decompression) and with one it does not; what
 * comes back must be -1 or a file libelf reads section by section.
 *
 * Run by `make fuzz` (build/fuzz/fuzz_debug_inflate) on a copy of
 * tests/fuzz/corpus/debug_inflate: a small library and a debug-only
 * file, their DWARF compressed by objcopy.
 */
#include "symbols/debug_inflate.h"

#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* namesz 4, descsz 20, NT_GNU_BUILD_ID, "GNU" */
static const uint8_t note_head[16] = {
	4, 0, 0, 0, 20, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0,
};

static const uint8_t *find_id(const uint8_t *data, size_t size)
{
	size_t i;

	for (i = 0; i + sizeof(note_head) + 20 <= size; i += 4)
		if (!memcmp(data + i, note_head, sizeof(note_head)))
			return data + i + sizeof(note_head);
	return NULL;
}

static void try_id(const uint8_t *data, size_t size, const uint8_t *id,
		   size_t idn)
{
	int fd = memfd_create("fuzz-debug-inflate", MFD_CLOEXEC), r;
	Elf *e;
	Elf_Scn *s = NULL;
	size_t n = 0;

	if (fd < 0)
		return;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return;
	}
	r = debug_inflate(fd, id, idn);   /* closes fd unless it returns it */
	if (r < 0)
		return;
	e = elf_begin(r, ELF_C_READ, NULL);
	/* Bounded by the file's sections (and a ceiling). */
	while (e && (s = elf_nextscn(e, s)) && n++ < 100000) {
		Elf_Data *d = elf_getdata(s, NULL);

		if (d && d->d_buf && d->d_size) {
			volatile uint8_t sink = ((const uint8_t *)d->d_buf)[0] ^
				((const uint8_t *)d->d_buf)[d->d_size - 1];
			(void)sink;
		}
	}
	elf_end(e);
	close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t other[20] = { 1, 2, 3 };
	const uint8_t *id = find_id(data, size);

	elf_version(EV_CURRENT);
	if (id)
		try_id(data, size, id, 20);
	try_id(data, size, other, sizeof(other));
	return 0;
}
