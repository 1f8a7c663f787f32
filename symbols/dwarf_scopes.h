/*
 * The functions that hold a pc, the inlined calls among them, found in
 * one pass down a compile unit's DWARF tree.
 *
 * libdw answers this with dwarf_getscopes() and then, for the concrete
 * chain of inlined calls, dwarf_getscopes_die(): two walks of the unit,
 * the second of which enters every structure type.  In a C unit of
 * libpython or libc that is most of the unit, and it was a third of
 * `dump --native`'s instructions.  Scopes nest and do not overlap, so a
 * descent that enters only the one child holding the pc finds the same
 * chain.  It finds more where libdw's first walk gives up: a unit whose
 * own DIE has no ranges (GCC's LTO units), functions inside C++
 * namespaces and classes (where clang puts them) and Fortran modules.
 */
#ifndef COROSCOPE_SYMBOLS_DWARF_SCOPES_H
#define COROSCOPE_SYMBOLS_DWARF_SCOPES_H

#include <stddef.h>

#include <elfutils/libdw.h>

/* Room a caller needs for any chain: deeper ones keep their innermost. */
#define SCOPE_CHAIN_MAX 64

/*
 * The subprogram and inlined calls of cu holding pc, outermost first,
 * into chain[0..max): how many.  A deeper chain keeps its innermost max
 * (the ones a stack shows first).  Blocks are looked through,
 * namespaces and, outside C units, classes, structures and unions
 * looked into, and imported partial units followed (each once on the
 * way down).  The work is bounded whatever the unit holds.
 */
size_t scope_chain_at(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *chain,
		      size_t max);

#endif
