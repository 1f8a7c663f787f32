#include "symbols/elfsyms.h"

#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/banned.h"

/*
 * Why two ways: indexing every symbol of libpython (14,000) and libc
 * (3,000) at each open was a quarter of a small dump's time, and the
 * names coroscope asks for are nearly all exported, so in .dynsym, which
 * .gnu.hash (the dynamic linker's own table) answers at once.
 */
/* A limit against absurd files: no real ELF file comes near it, and it
 * keeps the index proportional to something sane even when libelf has
 * checked that every table fits in the file. */
#define MAX_SYMBOLS (1u << 24)

struct elf_sym {
	const char *name;
	uint64_t value, size;
	uint32_t hash;
	unsigned rank;      /* lower wins when a name is defined twice */
};

/* .gnu.hash over .dynsym (words read unaligned: the file is untrusted).
 * nbuckets 0 when the file has none usable. */
struct gnu_hash {
	const unsigned char *buckets, *chain;
	uint32_t nbuckets, symoffset;
	size_t nchain;
	Elf_Data *dynsym;          /* gelf_getsym() takes it mutable */
	const Elf_Data *dynstr;
	size_t ndynsym;
};

struct elf_syms {
	Elf *elf;
	size_t shnum;
	uint64_t file_size;

	struct elf_sym *syms;
	size_t nsyms;
	uint32_t *slots;           /* open addressing: index + 1, 0 = empty */
	size_t nslots;             /* a power of two, > 2 * nsyms */
	size_t total;              /* entries of .dynsym and .symtab */
	int indexed;               /* syms and slots built */
	int has_symtab;

	struct gnu_hash gnu;
};

/* FNV-1a: cheap, and good enough for symbol names. */
static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

Elf_Data *elfsyms_section_data(Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *d;

	if (sh->sh_type == SHT_NOBITS || (sh->sh_flags & SHF_COMPRESSED))
		return NULL;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || d->d_size == 0)
		return NULL;
	return d;
}

const char *elfsyms_strtab_at(const Elf_Data *strtab, uint64_t off)
{
	const char *base;

	if (!strtab || off >= strtab->d_size)
		return NULL;
	base = (const char *)strtab->d_buf;
	if (!memchr(base + off, '\0', strtab->d_size - off))
		return NULL;
	return base + off;
}

Elf_Data *elfsyms_string_table(Elf *elf, size_t shnum, size_t idx)
{
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (idx == SHN_UNDEF || idx >= shnum)
		return NULL;
	scn = elf_getscn(elf, idx);
	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_STRTAB)
		return NULL;
	return elfsyms_section_data(scn, &sh);
}

static struct elf_sym *sym_slot_find(const struct elf_syms *t,
				     const char *name, uint32_t hash)
{
	size_t mask = t->nslots - 1;
	size_t i = hash & mask;
	size_t probes;

	/* nslots > nsyms, so there is always an empty slot to stop at. */
	for (probes = 0; probes < t->nslots; probes++) {
		uint32_t idx = t->slots[i];
		struct elf_sym *s;

		if (idx == 0)
			return NULL;
		s = &t->syms[idx - 1];
		if (s->hash == hash && strcmp(s->name, name) == 0)
			return s;
		i = (i + 1) & mask;
	}
	return NULL;
}

static void sym_insert(struct elf_syms *t, const struct elf_sym *sym)
{
	size_t mask = t->nslots - 1;
	size_t i = sym->hash & mask;
	size_t probes;

	for (probes = 0; probes < t->nslots; probes++) {
		uint32_t idx = t->slots[i];
		struct elf_sym *s;

		if (idx == 0) {
			t->syms[t->nsyms] = *sym;
			t->slots[i] = (uint32_t)(++t->nsyms);
			return;
		}
		s = &t->syms[idx - 1];
		if (s->hash == sym->hash && strcmp(s->name, sym->name) == 0) {
			if (sym->rank < s->rank)
				*s = *sym;
			return;
		}
		i = (i + 1) & mask;
	}
}

/*
 * Rank of a definition when a name is defined more than once: .dynsym
 * before .symtab (as the header promises), but a global or weak
 * definition anywhere before a local one -- static functions of the same
 * name in different source files are ambiguous, an exported one is not.
 */
static unsigned sym_rank(int in_dynsym, unsigned bind)
{
	return (bind == STB_LOCAL ? 2u : 0u) + (in_dynsym ? 0u : 1u);
}

static void index_symtab(struct elf_syms *t, Elf_Scn *scn,
			 const GElf_Shdr *sh)
{
	Elf_Data *data = elfsyms_section_data(scn, sh);
	Elf_Data *strtab;
	size_t count, i;

	if (!data || sh->sh_entsize != sizeof(Elf64_Sym))
		return;
	strtab = elfsyms_string_table(t->elf, t->shnum, sh->sh_link);
	if (!strtab)
		return;
	count = data->d_size / sizeof(Elf64_Sym);
	if (count > INT32_MAX)
		count = INT32_MAX;   /* gelf_getsym() takes an int */
	/* Entry 0 is the reserved null symbol. */
	for (i = 1; i < count && t->nsyms < t->total; i++) {
		GElf_Sym s;
		struct elf_sym e;
		unsigned type;

		if (!gelf_getsym(data, (int)i, &s))
			break;
		if (s.st_shndx == SHN_UNDEF)
			continue;
		type = GELF_ST_TYPE(s.st_info);
		if (type == STT_SECTION || type == STT_FILE)
			continue;
		e.name = elfsyms_strtab_at(strtab, s.st_name);
		if (!e.name || !*e.name)
			continue;
		e.value = s.st_value;
		e.size = s.st_size;
		e.hash = name_hash(e.name);
		e.rank = sym_rank(sh->sh_type == SHT_DYNSYM,
				  GELF_ST_BIND(s.st_info));
		sym_insert(t, &e);
	}
}

/* Count the entries of .dynsym and .symtab, so that one allocation
 * holds every candidate when they are indexed. */
static void count_symbols(struct elf_syms *t)
{
	Elf_Scn *scn = NULL;
	size_t total = 0, i;

	for (i = 0; i < t->shnum && (scn = elf_nextscn(t->elf, scn));
	     i++) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
			continue;
		if (sh.sh_entsize == 0 || sh.sh_offset > t->file_size ||
		    sh.sh_size > t->file_size - sh.sh_offset)
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			t->has_symtab = 1;
		if (sh.sh_size / sh.sh_entsize > MAX_SYMBOLS - total) {
			total = MAX_SYMBOLS;
			break;
		}
		total += sh.sh_size / sh.sh_entsize;
	}
	t->total = total;
}

/* Hash every symbol, once: on the first lookup .gnu.hash cannot answer. */
static void index_symbols(struct elf_syms *t)
{
	Elf_Scn *scn;
	size_t i;

	if (t->indexed)
		return;
	t->indexed = 1;
	if (t->total == 0)
		return;
	t->nslots = 16;
	while (t->nslots <= 2 * t->total)
		t->nslots *= 2;
	t->syms = xcalloc(t->total, sizeof(*t->syms));
	t->slots = xcalloc(t->nslots, sizeof(*t->slots));

	/* .dynsym first so that equal ranks keep its definition. */
	for (int pass = 0; pass < 2; pass++) {
		Elf64_Word want = pass == 0 ? SHT_DYNSYM : SHT_SYMTAB;

		scn = NULL;
		for (i = 0; i < t->shnum &&
			    (scn = elf_nextscn(t->elf, scn)); i++) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != want)
				continue;
			index_symtab(t, scn, &sh);
		}
	}
}

static uint32_t word_at(const unsigned char *p, size_t i)
{
	uint32_t w;

	memcpy(&w, p + i * 4, sizeof(w));
	return w;
}

/* The GNU hash function of the dynamic linker. */
static uint32_t gnu_name_hash(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

/*
 * Find .gnu.hash and the .dynsym and string table it serves.  Anything
 * that does not fit leaves nbuckets 0: lookups then use the index.
 * Layout: nbuckets, symoffset, bloom words, bloom shift (4 bytes each),
 * the bloom filter (8-byte words), the buckets, then the chain (4 bytes
 * each) for symbols symoffset and up.
 */
static void read_gnu_hash(struct elf_syms *t)
{
	struct gnu_hash *g = &t->gnu;
	Elf_Scn *scn = NULL, *sym_scn;
	GElf_Shdr sh, sym_sh;
	Elf_Data *d = NULL;
	uint64_t head;
	size_t i;
	uint32_t nbloom;

	for (i = 0; i < t->shnum && (scn = elf_nextscn(t->elf, scn)); i++)
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_GNU_HASH)
			break;
	if (!scn || i >= t->shnum || !(d = elf_rawdata(scn, NULL)) ||
	    !d->d_buf || d->d_size < 16)
		return;
	sym_scn = elf_getscn(t->elf, sh.sh_link);
	if (!sym_scn || !gelf_getshdr(sym_scn, &sym_sh) ||
	    sym_sh.sh_type != SHT_DYNSYM ||
	    sym_sh.sh_entsize != sizeof(Elf64_Sym))
		return;
	g->dynsym = elfsyms_section_data(sym_scn, &sym_sh);
	g->dynstr = elfsyms_string_table(t->elf, t->shnum, sym_sh.sh_link);
	if (!g->dynsym || !g->dynstr)
		return;
	g->ndynsym = g->dynsym->d_size / sizeof(Elf64_Sym);
	if (g->ndynsym > INT32_MAX)
		g->ndynsym = INT32_MAX;   /* gelf_getsym() takes an int */
	nbloom = word_at(d->d_buf, 2);
	head = 16 + (uint64_t)nbloom * 8 + (uint64_t)word_at(d->d_buf, 0) * 4;
	if (word_at(d->d_buf, 0) == 0 || head > d->d_size)
		return;
	g->buckets = (const unsigned char *)d->d_buf + 16 + (size_t)nbloom * 8;
	g->chain = (const unsigned char *)d->d_buf + head;
	g->nchain = (d->d_size - head) / 4;
	g->symoffset = word_at(d->d_buf, 1);
	g->nbuckets = word_at(d->d_buf, 0);
}

/*
 * Look name up through .gnu.hash: 1 with *out set to its first defined
 * global or weak entry (nothing in the index ranks above it), 0 when
 * .dynsym has no such name, -1 when only the index can tell (no usable
 * table, or a local definition that a .symtab one may outrank).
 */
static int gnu_find(const struct elf_syms *t, const char *name,
		    GElf_Sym *out)
{
	const struct gnu_hash *g = &t->gnu;
	uint32_t h, i;
	int local = 0;

	if (g->nbuckets == 0)
		return -1;
	h = gnu_name_hash(name);
	i = word_at(g->buckets, h % g->nbuckets);
	/* Bounded by the symbol table; a chain ends at its odd word. */
	for (; i >= g->symoffset && i < g->ndynsym &&
	       i - g->symoffset < g->nchain; i++) {
		uint32_t c = word_at(g->chain, i - g->symoffset);
		const char *sname;
		unsigned type;

		if ((c | 1) == (h | 1) && gelf_getsym(g->dynsym, (int)i, out) &&
		    (sname = elfsyms_strtab_at(g->dynstr, out->st_name)) &&
		    strcmp(sname, name) == 0 && out->st_shndx != SHN_UNDEF) {
			type = GELF_ST_TYPE(out->st_info);
			if (type != STT_SECTION && type != STT_FILE) {
				if (GELF_ST_BIND(out->st_info) != STB_LOCAL)
					return 1;
				local = 1;
			}
		}
		if (c & 1)
			break;
	}
	return local ? -1 : 0;
}

struct elf_syms *elf_syms_new(Elf *elf, size_t shnum, uint64_t file_size)
{
	struct elf_syms *t = xcalloc(1, sizeof(*t));

	t->elf = elf;
	t->shnum = shnum;
	t->file_size = file_size;
	count_symbols(t);
	read_gnu_hash(t);
	return t;
}

void elf_syms_free(struct elf_syms *t)
{
	if (!t)
		return;
	free(t->syms);
	free(t->slots);
	free(t);
}

int elf_syms_find(struct elf_syms *t, const char *name, uint64_t *value,
		  uint64_t *size)
{
	const struct elf_sym *s;
	GElf_Sym gs;
	int found;

	if (!t || !name || !*name)
		return -1;
	found = gnu_find(t, name, &gs);
	if (found == 1) {
		if (value)
			*value = gs.st_value;
		if (size)
			*size = gs.st_size;
		return 0;
	}
	if (found == 0 && !t->has_symtab)
		return -1;
	index_symbols(t);
	if (t->nslots == 0)
		return -1;
	s = sym_slot_find(t, name, name_hash(name));
	if (!s)
		return -1;
	if (value)
		*value = s->value;
	if (size)
		*size = s->size;
	return 0;
}

size_t elf_syms_count(struct elf_syms *t)
{
	index_symbols(t);
	return t->nsyms;
}
