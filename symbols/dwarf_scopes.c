#include "symbols/dwarf_scopes.h"

#include <dwarf.h>

#include "common/banned.h"

/* DWARF 5's ISO C:2017, missing from older dwarf.h. */
#ifndef DW_LANG_C17
#define DW_LANG_C17 0x002c
#endif

/* DIEs one search looks at, at most: a real unit's top level holds a
 * few thousand. */
#define MAX_DIES (1u << 22)
/* Nesting of the DIEs a search goes down through, at most. */
#define MAX_DEPTH 256
/* Imported units on the way down, at most (a loop of imports is cut
 * where it comes back). */
#define MAX_IMPORTS 16

struct search {
	Dwarf_Addr pc;
	int c_unit;               /* no functions inside types */
	Dwarf_Die *chain;
	size_t max, n;
	size_t dies;              /* looked at so far */
	Dwarf_Off imports[MAX_IMPORTS];
	size_t nimports;
};

/* Scopes that can hold the pc: they have code ranges. */
static int is_code_scope(int tag)
{
	switch (tag) {
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_entry_point:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_with_stmt:
		return 1;
	}
	return 0;
}

/* DIEs without ranges of their own that may hold functions that have
 * some: C++'s namespaces and classes, Fortran's modules.  C's types
 * hold only members, and C units are most of what a dump looks up. */
static int may_hold_code(const struct search *s, int tag)
{
	switch (tag) {
	case DW_TAG_namespace:
	case DW_TAG_module:
		return 1;
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_interface_type:
		return !s->c_unit;
	}
	return 0;
}

/* A function or inlined call on the chain: when it is full, the
 * outermost makes room (the innermost are the ones a stack shows). */
static void add(struct search *s, const Dwarf_Die *die)
{
	size_t i;

	if (!s->max)
		return;
	if (s->n == s->max) {
		for (i = 1; i < s->n; i++)
			s->chain[i - 1] = s->chain[i];
		s->n--;
	}
	s->chain[s->n++] = *die;
}

static int descend(struct search *s, Dwarf_Die *parent, unsigned depth);

/* The partial unit an imported_unit DIE names, looked into unless it is
 * already on the way down (libdw follows only partial units too). */
static int descend_import(struct search *s, Dwarf_Die *die, unsigned depth)
{
	Dwarf_Attribute attr;
	Dwarf_Die unit;
	Dwarf_Off off;
	size_t i;
	int ret;

	if (!dwarf_attr(die, DW_AT_import, &attr) ||
	    !dwarf_formref_die(&attr, &unit) ||
	    dwarf_tag(&unit) != DW_TAG_partial_unit ||
	    s->nimports == MAX_IMPORTS)
		return 0;
	off = dwarf_dieoffset(&unit);
	for (i = 0; i < s->nimports; i++)
		if (s->imports[i] == off)
			return 0;
	s->imports[s->nimports++] = off;
	ret = descend(s, &unit, depth + 1);
	s->nimports--;
	return ret;
}

/*
 * Look for the pc among parent's children, and inside the one found
 * (each function or inlined call holding it is added to the chain).  1
 * when a code scope holding it was found.
 */
static int descend(struct search *s, Dwarf_Die *parent, unsigned depth)
{
	Dwarf_Die die;

	if (depth > MAX_DEPTH || dwarf_child(parent, &die) != 0)
		return 0;
	/* Bounded by MAX_DIES over the whole search. */
	do {
		int tag = dwarf_tag(&die);

		if (++s->dies > MAX_DIES)
			return 0;
		if (is_code_scope(tag)) {
			if (dwarf_haspc(&die, s->pc) != 1)
				continue;
			/* Scopes do not overlap: this is the one. */
			if (tag == DW_TAG_subprogram ||
			    tag == DW_TAG_inlined_subroutine)
				add(s, &die);
			descend(s, &die, depth + 1);
			return 1;
		}
		if (may_hold_code(s, tag) && descend(s, &die, depth + 1))
			return 1;
		if (tag == DW_TAG_imported_unit &&
		    descend_import(s, &die, depth))
			return 1;
	} while (dwarf_siblingof(&die, &die) == 0);
	return 0;
}

size_t scope_chain_at(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *chain,
		      size_t max)
{
	struct search s;
	int lang = dwarf_srclang(cu);

	s.pc = pc;
	s.c_unit = lang == DW_LANG_C89 || lang == DW_LANG_C ||
		   lang == DW_LANG_C99 || lang == DW_LANG_C11 ||
		   lang == DW_LANG_C17;
	s.chain = chain;
	s.max = max;
	s.n = 0;
	s.dies = 0;
	s.nimports = 0;
	descend(&s, cu, 0);
	return s.n;
}
