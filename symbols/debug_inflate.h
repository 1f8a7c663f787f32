/*
 * Separate debug files whose DWARF is compressed (SHF_COMPRESSED with
 * zlib, as Debian's -dbg packages ship them), decompressed before libdw
 * reads them.
 *
 * libdw decompresses every debug section of a file when it opens it,
 * through zlib: libc6-dbg's 3.7 MB of compressed sections took ~50 ms,
 * most of a `dump --native`.  libdeflate does the same in well under
 * half the time.  The decompressed file is built in memory (a memfd):
 * the original's bytes where they were, so program headers and notes
 * stay valid, and each compressed section's data decompressed after
 * them, its section header pointing there.
 */
#ifndef COROSCOPE_SYMBOLS_DEBUG_INFLATE_H
#define COROSCOPE_SYMBOLS_DEBUG_INFLATE_H

#include <stddef.h>

/*
 * fd: a separate debug file found by build id.  When the file is a
 * 64-bit little-endian ELF whose GNU build id note is id[0..id_len):
 * a descriptor of the same file with its zlib-compressed sections
 * decompressed (fd closed), or fd itself when nothing is compressed or
 * the decompression cannot be done (libdw then does it as before).
 * Otherwise -1, fd closed: not the file wanted, or not one this reads.
 */
int debug_inflate(int fd, const unsigned char *id, size_t id_len);

/*
 * The same for an installed debug file (found under /usr/lib/debug by
 * its build id), whose decompressed copy is kept until the process exits
 * (up to 8 files) and given again, as a descriptor of its own, when the
 * same file (device, inode, size, mtime) is asked for with the same
 * build id.  Not for files that may be rewritten in place.
 */
int debug_inflate_kept(int fd, const unsigned char *id, size_t id_len);

#endif
