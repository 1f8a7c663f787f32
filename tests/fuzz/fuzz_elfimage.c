/*
 * libFuzzer harness for symbols/elfimage.c: the target's ELF files are
 * untrusted input.  Each input is written to a memfd and opened through
 * /proc/self/fd, exactly the path elf_image_open() takes for a real file,
 * then every query is run on it.
 *
 * Build and run (from the top of the tree):
 *   clang -g -O1 -std=c11 -D_GNU_SOURCE -I. \
 *       -fsanitize=fuzzer,address,undefined \
 *       tests/fuzz/fuzz_elfimage.c symbols/elfimage.c symbols/elfsyms.c \
 *       common/error.c common/strbuf.c common/hugeheap.c \
 *       -lelf -o build/fuzz_elfimage
 *   mkdir -p build/fuzz-corpus
 *   build/fuzz_elfimage -max_total_time=60 -max_len=65536 \
 *       build/fuzz-corpus tests/fuzz/corpus/elfimage
 */
#include "symbols/elfimage.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const symbols[] = {
	"_start", "main", "_PyRuntime", "Py_Version", "printf", "a", "",
	"_DYNAMIC", "tiny_data", "tiny_func",
};

static const char *const sections[] = {
	".text", ".data", ".PyRuntime", ".dynsym", ".symtab", "", ".bss",
};

static int memfd = -1;

/* Read from the image around an address; the result only feeds ASan. */
static unsigned probe(const struct elf_image *img, uint64_t vaddr)
{
	static const size_t lens[] = { 1, 8, 64, 4096, (size_t)-1 };
	uint8_t buf[4096];
	unsigned sum = 0;
	size_t i;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		size_t len = lens[i] > sizeof(buf) ? sizeof(buf) : lens[i];

		if (lens[i] == (size_t)-1) {
			/* A length that cannot fit anywhere must just fail. */
			if (elf_image_read_vaddr(img, vaddr, NULL, lens[i]) == 0)
				__builtin_trap();
			continue;
		}
		if (elf_image_read_vaddr(img, vaddr, buf, len) == 0)
			sum += buf[0] + buf[len - 1];
	}
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_image *img;
	struct cs_err err;
	char path[64];
	const uint8_t *id;
	size_t len, i;
	uint64_t value, sz;
	volatile unsigned sink = 0;

	if (memfd < 0) {
		memfd = memfd_create("fuzz_elfimage", MFD_CLOEXEC);
		if (memfd < 0)
			__builtin_trap();
	}
	if (ftruncate(memfd, 0) != 0 ||
	    pwrite(memfd, data, size, 0) != (ssize_t)size)
		__builtin_trap();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);

	cs_err_init(&err);
	if (elf_image_open(&img, path, &err) != 0) {
		/* Failure must be reported, and with a message. */
		if (img || err.code == 0 || !err.msg[0])
			__builtin_trap();
		return 0;
	}

	sink += probe(img, elf_image_base_vaddr(img));
	for (i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
		if (elf_image_symbol(img, symbols[i], &value, &sz) == 0)
			sink += probe(img, value) + (unsigned)sz;
	}
	for (i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		if (elf_image_section(img, sections[i], &value, &sz) == 0)
			sink += probe(img, value) + (unsigned)sz;
	}
	id = elf_image_build_id(img, &len);
	if (!id != !len)
		__builtin_trap();
	for (i = 0; i < len; i++)
		sink += id[i];
	sink += (unsigned)elf_image_type(img);
	sink += (unsigned)strlen(elf_image_path(img));
	elf_image_free(img);
	(void)sink;
	return 0;
}
