/*
 * symbols/debug_frame.c: .debug_frame rewritten in .eh_frame's format
 * behind a sorted table, from a section built here byte by byte; and
 * symbols/demangle.c on names with a known demangling.
 */
#include "symbols/debug_frame.h"

#include <stdlib.h>
#include <string.h>

#include "common/le.h"
#include "common/strbuf.h"
#include "symbols/demangle.h"
#include "tests/unit/check.h"

#define BIAS 0x7f0000000000ull
#define AT (0xffffa00000000000ull + (BIAS & 0xffffffffu))

static void u32(struct strbuf *sb, uint32_t v)
{
	unsigned char b[4] = { v, v >> 8, v >> 16, v >> 24 };

	strbuf_add(sb, b, 4);
}

static void u64(struct strbuf *sb, uint64_t v)
{
	u32(sb, (uint32_t)v);
	u32(sb, (uint32_t)(v >> 32));
}

/* A version-1 CIE: code 1, data -8, RA 16, "def_cfa rsp+8; rip at cfa-8" */
static size_t cie(struct strbuf *sb, unsigned version)
{
	static const unsigned char insns[] = { 0x0c, 7, 8, 0x90, 1 };
	size_t at = sb->len;

	u32(sb, version == 4 ? 16 : 14);
	u32(sb, 0xffffffffu);
	strbuf_addch(sb, (int)version);
	strbuf_addch(sb, 0);            /* augmentation "" */
	if (version == 4) {
		strbuf_addch(sb, 8);
		strbuf_addch(sb, 0);
	}
	strbuf_addch(sb, 1);
	strbuf_addch(sb, 0x78);         /* -8 */
	strbuf_addch(sb, 16);
	strbuf_add(sb, insns, sizeof(insns));
	return at;
}

static void fde(struct strbuf *sb, uint32_t cie_off, uint64_t start,
		uint64_t range)
{
	static const unsigned char insns[] = { 0x44, 0x0e, 0x40 };

	u32(sb, 20 + sizeof(insns));
	u32(sb, cie_off);
	u64(sb, start);
	u64(sb, range);
	strbuf_add(sb, insns, sizeof(insns));
}

static void test_rewrite(void)
{
	struct debug_frame_image img;
	struct strbuf sb;
	size_t c1, c4, i;
	uint32_t f, back;
	int32_t prev = -1;

	strbuf_init(&sb);
	c1 = cie(&sb, 1);
	fde(&sb, (uint32_t)c1, 0x2000, 0x40);    /* out of order */
	fde(&sb, (uint32_t)c1, 0x1000, 0x20);
	fde(&sb, 9999, 0x3000, 0x10);            /* no CIE there: left out */
	fde(&sb, (uint32_t)c1, 0x900000, 0x10);  /* outside [lo, hi): out */
	c4 = cie(&sb, 4);
	fde(&sb, (uint32_t)c4, 0x1800, 0x30);
	fde(&sb, (uint32_t)c1, 0x2800, 0);       /* empty range: out */

	CHECK(debug_frame_rewrite((const unsigned char *)sb.buf, sb.len, BIAS,
				  AT, BIAS, BIAS + 0x100000, &img) == 0,
	      "rewrite failed");
	CHECK(img.nfdes == 3, "%llu FDEs kept, want 3",
	      (unsigned long long)img.nfdes);
	for (i = 0; i < img.nfdes && img.data; i++) {
		int32_t start = le_i32(img.data + i * 8);

		f = le_u32(img.data + i * 8 + 4);
		CHECK(start > prev, "table not sorted at %zu", i);
		prev = start;
		CHECK(f >= img.nfdes * 8 && f + 28 <= img.len,
		      "FDE %zu at %u outside the image", i, f);
		if (f + 28 > img.len)
			continue;
		/* pc_begin: absolute run-time address, as its offset says */
		CHECK(le_u64(img.data + f + 8) - BIAS == (uint32_t)start,
		      "FDE %zu starts at %#llx", i,
		      (unsigned long long)le_u64(img.data + f + 8));
		back = le_u32(img.data + f + 4);
		CHECK(back <= f + 4 && f + 4 - back >= img.nfdes * 8,
		      "FDE %zu's CIE pointer %u", i, back);
		if (back > f + 4)
			continue;
		/* the CIE: id 0, version 1, "zR", absptr addresses */
		CHECK(le_u32(img.data + f + 4 - back + 4) == 0 &&
		      img.data[f + 4 - back + 8] == 1 &&
		      !memcmp(img.data + f + 4 - back + 9, "zR", 3),
		      "FDE %zu's CIE is not an .eh_frame CIE", i);
	}
	CHECK(img.data && le_u64(img.data + le_u32(img.data + 4) + 8) ==
	      BIAS + 0x1000, "first FDE is not the lowest");
	debug_frame_image_release(&img);

	/* nothing usable: -1 and an empty image */
	CHECK(debug_frame_rewrite((const unsigned char *)sb.buf, sb.len, BIAS,
				  AT, BIAS + 0x200000, BIAS + 0x300000,
				  &img) < 0 && !img.data && !img.nfdes,
	      "FDEs outside the module kept");
	/* a truncated section: whatever is whole is kept, nothing more */
	CHECK(debug_frame_rewrite((const unsigned char *)sb.buf, c1 + 17 + 30,
				  BIAS, AT, BIAS, BIAS + 0x100000, &img) == 0 &&
	      img.nfdes == 1, "truncated section");
	debug_frame_image_release(&img);
	strbuf_release(&sb);
}

static void test_demangle(void)
{
	char *d = demangle("_ZN4csns6Waiter4waitEi");
	char *long_name = malloc(DEMANGLE_MAX_IN + 8);

	/* no C++ runtime on the machine: names stay as they are */
	if (d)
		CHECK(!strcmp(d, "csns::Waiter::wait(int)"), "got '%s'", d);
	free(d);
	CHECK(!demangle("main"), "a C name demangled");
	CHECK(!demangle("_Z"), "an invalid name demangled");
	CHECK(!demangle(NULL), "NULL demangled");
	if (long_name) {
		memset(long_name, 'x', DEMANGLE_MAX_IN + 7);
		memcpy(long_name, "_Z3foo", 6);
		long_name[DEMANGLE_MAX_IN + 7] = 0;
		CHECK(!demangle(long_name), "an over-long name demangled");
		free(long_name);
	}
}

int main(void)
{
	test_rewrite();
	test_demangle();
	return CHECK_DONE("test_debug_frame");
}
