/*
 * The DWARF scopes that contain a pc, found in one pass down a compile
 * unit's tree.
 *
 * libdw answers this with dwarf_getscopes() and then, for the concrete
 * chain of inlined calls, dwarf_getscopes_die(): two walks of the unit,
 * each of which also enters every structure type.  In a C unit of
 * libpython or libc that is most of the unit, and it was a third of
 * `dump --native`'s instructions.  Scopes nest and do not overlap, so a
 * descent that enters only the one child containing the pc finds the
 * same chain.
 */
#ifndef COROSCOPE_SYMBOLS_DWARF_SCOPES_H
#define COROSCOPE_SYMBOLS_DWARF_SCOPES_H

#include <stddef.h>

#include <elfutils/libdw.h>

/* Deeper nests of scopes than this are cut at this depth. */
#define DWARF_SCOPES_MAX 64

/*
 * The scopes of cu containing pc (subprograms, inlined calls, lexical
 * and other blocks), outermost first, into chain[0..max): how many.
 * Namespaces, and in a unit not written in C classes, structures and
 * unions, are looked into; imported (partial) units are followed.  The
 * work is bounded whatever the unit holds.
 */
size_t dwarf_pc_scopes(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *chain,
		       size_t max);

#endif
