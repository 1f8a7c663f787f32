/*
 * The build id comes from this process's own program headers, found with
 * dl_iterate_phdr(), which a static glibc executable supports too: no
 * file is opened, so it also works where /proc/self/exe is unreadable or
 * names a file that has since been replaced.
 */
#include "cli/version.h"

#include <elf.h>
#include <link.h>
#include <string.h>

#include "cli/commands.h"
#include "common/banned.h"

/* A SHA-1 build id is 20 bytes; anything longer is cut at this many. */
#define BUILD_ID_MAX 64

struct self_info {
	unsigned char id[BUILD_ID_MAX];
	size_t id_len;
	int has_interp;
	int seen;
};

static size_t align4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/* The NT_GNU_BUILD_ID descriptor in one PT_NOTE segment, if any. */
static void find_build_id(const unsigned char *p, size_t size,
			  struct self_info *self)
{
	size_t off = 0;

	while (size - off >= sizeof(ElfW(Nhdr))) {
		ElfW(Nhdr) nh;
		size_t name_off, desc_off;

		memcpy(&nh, p + off, sizeof(nh));
		name_off = off + sizeof(nh);
		if (nh.n_namesz > size - name_off)
			return;
		desc_off = name_off + align4(nh.n_namesz);
		if (desc_off > size || nh.n_descsz > size - desc_off)
			return;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(p + name_off, "GNU", 4) && nh.n_descsz > 0) {
			self->id_len = nh.n_descsz < BUILD_ID_MAX ?
				       nh.n_descsz : BUILD_ID_MAX;
			memcpy(self->id, p + desc_off, self->id_len);
			return;
		}
		off = desc_off + align4(nh.n_descsz);
	}
}

/* The first object dl_iterate_phdr() reports is the executable itself. */
static int visit_self(struct dl_phdr_info *info, size_t size, void *data)
{
	struct self_info *self = data;
	ElfW(Half) i;

	if (self->seen++)
		return 1;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_INTERP)
			self->has_interp = 1;
		else if (ph->p_type == PT_NOTE && !self->id_len)
			find_build_id((const unsigned char *)(info->dlpi_addr +
							      ph->p_vaddr),
				      ph->p_memsz, self);
	}
	return 1;
}

void cli_print_version(FILE *out)
{
	struct self_info self = { .id_len = 0 };
	size_t i;

	dl_iterate_phdr(visit_self, &self);
	fprintf(out, "coroscope %s\nbuild id ", COROSCOPE_VERSION);
	if (!self.id_len)
		fputs("none", out);
	for (i = 0; i < self.id_len; i++)
		fprintf(out, "%02x", self.id[i]);
	fprintf(out, " (%s linked)\n",
		self.has_interp ? "dynamically" : "statically");
}
