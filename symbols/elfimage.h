/*
 * An ELF file of the target, opened from disk with libelf: its symbols
 * (.dynsym and .symtab), sections, program headers and build id.
 *
 * Everything here is about the file, in link-time (unrelocated) virtual
 * addresses; struct module (symbols/modules.h) adds the load bias.
 * The file is untrusted: every size and offset is checked.
 */
#ifndef COROSCOPE_SYMBOLS_ELFIMAGE_H
#define COROSCOPE_SYMBOLS_ELFIMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

struct elf_image;

/* Errors: CS_ERR_NOT_PYTHON is never used here; a file that cannot be
 * opened or is not a 64-bit little-endian ELF gives CS_ERR_MEMORY with a
 * message naming the path. */
int elf_image_open(struct elf_image **out, const char *path,
		   struct cs_err *err);
void elf_image_free(struct elf_image *img);

/* Look a symbol up by exact name in .dynsym, then .symtab (either may be
 * absent: stripped files keep only .dynsym).  0 and value/size set when
 * found (defined symbols only), -1 when not.  Not const: the first name
 * that .gnu.hash cannot answer indexes every symbol of the file. */
int elf_image_symbol(struct elf_image *img, const char *name,
		     uint64_t *value, uint64_t *size);

/* A section by name: 0 with its address and size, -1 when absent. */
int elf_image_section(const struct elf_image *img, const char *name,
		      uint64_t *addr, uint64_t *size);

/* A section's contents by name: 0 with a pointer into the image (valid
 * until elf_image_free()) and its length; -1 when absent, empty, without
 * contents in the file (SHT_NOBITS) or compressed. */
int elf_image_section_data(const struct elf_image *img, const char *name,
			   const void **data, size_t *len);

/* p_vaddr - p_offset alignment base: the page-aligned vaddr of the
 * PT_LOAD segment with the lowest file offset.  A module mapped with its
 * file offset 0 at address A has load bias A - elf_image_base_vaddr(). */
uint64_t elf_image_base_vaddr(const struct elf_image *img);

/* Copy bytes stored in the file at link-time address vaddr (from a
 * PT_LOAD segment's file image).  0 on success, -1 when the range is not
 * fully backed by file contents. */
int elf_image_read_vaddr(const struct elf_image *img, uint64_t vaddr,
			 void *buf, size_t len);

/* The NT_GNU_BUILD_ID note: pointer into the image and its length, or
 * NULL/0. */
const uint8_t *elf_image_build_id(const struct elf_image *img, size_t *len);

/* Where a file's separate debug file is found by its build id:
 * /usr/lib/debug/.build-id/xx/rest.debug (malloc'd), or NULL for an id
 * shorter than 2 or longer than 64 bytes. */
char *elf_build_id_debug_path(const uint8_t *id, size_t len);

/* ET_EXEC, ET_DYN, ET_CORE ... (e_type) */
int elf_image_type(const struct elf_image *img);

const char *elf_image_path(const struct elf_image *img);

#endif
