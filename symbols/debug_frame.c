#include "symbols/debug_frame.h"

#include <stdlib.h>
#include <string.h>

#include "common/addrmap.h"
#include "common/le.h"
#include "common/strbuf.h"
#include "common/banned.h"

#define CIE_ID_32 0xffffffffu
#define DW_EH_PE_absptr 0x00
#define LEB_MAX 10              /* bytes of a 64-bit LEB128, at most */

/* A CIE as read from .debug_frame. */
struct cie {
	const unsigned char *aligns;  /* code then data alignment factors */
	size_t aligns_len;            /* (two LEB128s, copied as they are) */
	uint64_t ra;                  /* return address column */
	const unsigned char *insns;   /* initial instructions */
	size_t insns_len;
};

/* One FDE kept: where its function starts, where it was written. */
struct fde_ref {
	uint64_t start;
	size_t off;                   /* in the rewritten entries */
};

/* Bytes of the LEB128 at p[0..end), or 0 when it does not end there. */
static size_t leb_len(const unsigned char *p, const unsigned char *end)
{
	size_t n;

	for (n = 0; p + n < end && n < LEB_MAX; n++)
		if (!(p[n] & 0x80))
			return n + 1;
	return 0;
}

static int uleb(const unsigned char **p, const unsigned char *end,
		uint64_t *val)
{
	size_t n = leb_len(*p, end), i;

	if (!n)
		return -1;
	*val = 0;
	for (i = 0; i < n; i++)
		*val |= (uint64_t)((*p)[i] & 0x7f) << (7 * i < 64 ? 7 * i : 63);
	*p += n;
	return 0;
}

/* Read the CIE whose body (after the CIE id) is p[0..end). */
static int cie_parse(const unsigned char *p, const unsigned char *end,
		     struct cie *c)
{
	unsigned version;
	size_t n;

	if (p >= end)
		return -1;
	version = *p++;
	if (version != 1 && version != 3 && version != 4)
		return -1;
	/* augmentation: only "" (nothing else is defined for .debug_frame) */
	if (p >= end || *p++ != 0)
		return -1;
	if (version == 4) {
		if (end - p < 2 || p[0] != 8 || p[1] != 0)
			return -1;  /* address size 8, no segment selector */
		p += 2;
	}
	c->aligns = p;
	if (!(n = leb_len(p, end)))
		return -1;
	p += n;
	if (!(n = leb_len(p, end)))
		return -1;
	p += n;
	c->aligns_len = (size_t)(p - c->aligns);
	if (version == 1) {
		if (p >= end)
			return -1;
		c->ra = *p++;
	} else if (uleb(&p, end, &c->ra) < 0) {
		return -1;
	}
	if (c->ra > 0xff)
		return -1;
	c->insns = p;
	c->insns_len = (size_t)(end - p);
	return 0;
}

static void put_u32(struct strbuf *sb, uint32_t v)
{
	unsigned char b[4] = { v, v >> 8, v >> 16, v >> 24 };

	strbuf_add(sb, b, sizeof(b));
}

static void put_u64(struct strbuf *sb, uint64_t v)
{
	put_u32(sb, (uint32_t)v);
	put_u32(sb, (uint32_t)(v >> 32));
}

/* Pad the entry that started at `start` (its length field) to a multiple
 * of 8 with DW_CFA_nop and fill in its length. */
static void entry_end(struct strbuf *sb, size_t start)
{
	uint32_t len;

	while ((sb->len - start) % 8)
		strbuf_addch(sb, 0);
	len = (uint32_t)(sb->len - start - 4);
	memcpy(sb->buf + start, (unsigned char[4]){ len, len >> 8, len >> 16,
						    len >> 24 }, 4);
}

/* Write an .eh_frame CIE: version 1, "zR", addresses as 8-byte absptr. */
static size_t cie_write(struct strbuf *sb, const struct cie *c)
{
	size_t start = sb->len;

	put_u32(sb, 0);                 /* length, filled in below */
	put_u32(sb, 0);                 /* CIE id in .eh_frame */
	strbuf_addch(sb, 1);
	strbuf_add(sb, "zR", 3);
	strbuf_add(sb, c->aligns, c->aligns_len);
	strbuf_addch(sb, (int)c->ra);
	strbuf_addch(sb, 1);            /* augmentation data length */
	strbuf_addch(sb, DW_EH_PE_absptr);
	strbuf_add(sb, c->insns, c->insns_len);
	entry_end(sb, start);
	return start;
}

static int by_start(const void *a, const void *b)
{
	const struct fde_ref *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * The CIE at off, written once (cies maps off + 1 to its offset + 1 in
 * the output, or to 0 when it cannot be used).  Returns its offset in
 * the output, or -1.
 */
static long cie_at(const unsigned char *sec, size_t len, uint64_t off,
		   struct addrmap *cies, struct strbuf *eh)
{
	uint64_t got;
	uint32_t clen;
	struct cie c;
	int found;

	got = (uint64_t)(uintptr_t)addrmap_get(cies, off + 1, &found);
	if (found)
		return got ? (long)(got - 1) : -1;
	addrmap_put(cies, off + 1, NULL);
	if (off > len || len - off < 8)
		return -1;
	clen = le_u32(sec + off);
	if (clen < 4 || clen > len - off - 4 ||
	    le_u32(sec + off + 4) != CIE_ID_32 ||
	    cie_parse(sec + off + 8, sec + off + 4 + clen, &c) < 0)
		return -1;
	got = cie_write(eh, &c);
	addrmap_put(cies, off + 1, (void *)(uintptr_t)(got + 1));
	return (long)got;
}

int debug_frame_rewrite(const unsigned char *sec, size_t len, uint64_t bias,
			uint64_t at, uint64_t lo, uint64_t hi,
			struct debug_frame_image *out)
{
	struct strbuf eh;
	struct addrmap cies;
	struct fde_ref *fdes = NULL;
	size_t nfdes = 0, cap = 0, off = 0, i, table;

	memset(out, 0, sizeof(*out));
	if (!sec || len > DEBUG_FRAME_MAX)
		return -1;
	strbuf_init(&eh);
	addrmap_init(&cies);
	/* every entry is at least 4 bytes: the walk ends */
	while (len - off >= 4) {
		uint32_t elen = le_u32(sec + off);
		const unsigned char *body = sec + off + 4, *end;
		uint64_t start, range;
		long cie;
		size_t fstart;

		if (elen == 0xffffffffu)  /* 64-bit DWARF: not read */
			break;
		if (elen > len - off - 4)
			break;
		end = body + elen;
		off += 4 + (size_t)elen;
		if (elen < 20 || le_u32(body) == CIE_ID_32)
			continue;          /* a CIE, a terminator or too short */
		start = le_u64(body + 4) + bias;
		range = le_u64(body + 12);
		if (start < lo || start >= hi || range > hi - start || !range)
			continue;
		cie = cie_at(sec, len, le_u32(body), &cies, &eh);
		if (cie < 0)
			continue;
		fstart = eh.len;
		put_u32(&eh, 0);
		put_u32(&eh, (uint32_t)(fstart + 4 - (size_t)cie));
		put_u64(&eh, start);
		put_u64(&eh, range);
		strbuf_addch(&eh, 0);      /* augmentation data length */
		strbuf_add(&eh, body + 20, (size_t)(end - (body + 20)));
		entry_end(&eh, fstart);
		if (nfdes == cap) {
			cap = cap ? cap * 2 : 64;
			fdes = xrealloc(fdes, cap * sizeof(*fdes));
		}
		fdes[nfdes].start = start;
		fdes[nfdes].off = fstart;
		nfdes++;
	}
	addrmap_release(&cies);
	table = nfdes * 8;
	/* offsets from `at` are int32s */
	if (!nfdes || eh.len > 0x7fffffff - table) {
		free(fdes);
		strbuf_release(&eh);
		return -1;
	}
	qsort(fdes, nfdes, sizeof(*fdes), by_start);
	out->len = table + eh.len;
	out->data = xcalloc(1, out->len + 8);
	for (i = 0; i < nfdes; i++) {
		uint32_t s = (uint32_t)(fdes[i].start - at);
		uint32_t f = (uint32_t)(table + fdes[i].off);
		unsigned char *e = out->data + i * 8;

		memcpy(e, (unsigned char[8]){ s, s >> 8, s >> 16, s >> 24,
					      f, f >> 8, f >> 16, f >> 24 }, 8);
	}
	memcpy(out->data + table, eh.buf, eh.len);
	out->nfdes = nfdes;
	free(fdes);
	strbuf_release(&eh);
	return 0;
}

void debug_frame_image_release(struct debug_frame_image *img)
{
	free(img->data);
	memset(img, 0, sizeof(*img));
}
