/*
 * The symbols of one ELF file (symbols/elfimage.c's): looked up by name
 * in the file's .gnu.hash table over .dynsym, or in an index of .dynsym
 * and .symtab built on the first lookup that the table cannot answer.
 * Plus the few libelf helpers both files use.  The file is untrusted:
 * every size, offset and chain is checked.
 */
#ifndef COROSCOPE_SYMBOLS_ELFSYMS_H
#define COROSCOPE_SYMBOLS_ELFSYMS_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

struct elf_syms;

/* For elf, open until elf_syms_free(): names point into its data. */
struct elf_syms *elf_syms_new(Elf *elf, size_t shnum, uint64_t file_size);
void elf_syms_free(struct elf_syms *t);
/* 0 with value and size (either may be NULL) of the definition of name
 * that ranks first (see sym_rank()), -1 when there is none. */
int elf_syms_find(struct elf_syms *t, const char *name, uint64_t *value,
		  uint64_t *size);
/* How many defined symbols the file has (indexing them all). */
size_t elf_syms_count(struct elf_syms *t);

/* A section's data, or NULL for sections without file contents. */
Elf_Data *elfsyms_section_data(Elf_Scn *scn, const GElf_Shdr *sh);
/* A NUL-terminated string at off in a string table, or NULL. */
const char *elfsyms_strtab_at(const Elf_Data *strtab, uint64_t off);
/* The data of string table number idx, or NULL if it is not one. */
Elf_Data *elfsyms_string_table(Elf *elf, size_t shnum, size_t idx);

#endif
