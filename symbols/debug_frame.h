/*
 * A module's .debug_frame made readable by libunwind's remote table
 * search, which knows only .eh_frame: the CIEs and FDEs rewritten in
 * .eh_frame's format, with run-time (biased) addresses, behind a sorted
 * binary-search table like .eh_frame_hdr's.  symbols/unwind.c serves the
 * image to libunwind at an address no user mapping can have.
 *
 * Image layout, at run-time address `at` (= segbase for the table):
 *   nfdes pairs of int32 (start - at, fde - at), sorted by start;
 *   then the rewritten entries.
 * The start offsets are taken modulo 2^32, which libunwind does too
 * (ip - segbase as an int32): the caller picks `at` with the low 32 bits
 * of the module's base, so that they grow with the address over a module
 * smaller than 2 GiB.
 *
 * The section is read from the module's file and is untrusted: every
 * length is checked, FDEs outside [lo, hi) or whose CIE cannot be
 * rewritten are left out.  Read: 32-bit DWARF entries, CIE versions 1, 3
 * and 4 with no augmentation and 8-byte addresses.  Not rewritten: a
 * DW_CFA_set_loc operand (an unrelocated address; compilers do not emit
 * it in .debug_frame).
 */
#ifndef COROSCOPE_SYMBOLS_DEBUG_FRAME_H
#define COROSCOPE_SYMBOLS_DEBUG_FRAME_H

#include <stddef.h>
#include <stdint.h>

/* The largest .debug_frame rewritten. */
#define DEBUG_FRAME_MAX ((size_t)64 << 20)

struct debug_frame_image {
	unsigned char *data;   /* malloc'd; padded with 8 zero bytes */
	size_t len;            /* bytes of the image proper */
	uint64_t nfdes;        /* entries of the table at its start */
};

/*
 * Rewrite sec[0..len) (link-time addresses; run time = link + bias) for
 * an image at `at`, keeping FDEs inside [lo, hi).  0 on success with at
 * least one FDE; -1 when nothing usable (out is then empty).
 */
int debug_frame_rewrite(const unsigned char *sec, size_t len, uint64_t bias,
			uint64_t at, uint64_t lo, uint64_t hi,
			struct debug_frame_image *out);
void debug_frame_image_release(struct debug_frame_image *img);

#endif
