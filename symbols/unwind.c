#include "symbols/unwind.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include <libunwind.h>

#include "symbols/debug_frame.h"
#include "symbols/elfimage.h"
#include "symbols/unwind_lib.h"
#include "common/le.h"
#include "common/strbuf.h"
#include "common/banned.h"

#define MAX_PHNUM 128          /* program headers read per module */
#define MAX_FDES (1u << 24)    /* table entries believed */

/*
 * Where the rewritten .debug_frame of module i is served to libunwind:
 * DF_REGION + i * 4 GiB + the low 32 bits of the module's base (see
 * symbols/debug_frame.h), in the kernel's half of the address space,
 * where no user mapping can be.
 */
#define DF_REGION 0xffffa00000000000ull
#define DF_SLOT_SHIFT 32

/* What one module's .eh_frame_hdr says, looked up once. */
struct unw_table {
	uint64_t base, end;      /* as in struct native_module */
	const char *path;
	int ok;                  /* has a usable binary-search table */
	uint64_t hdr;            /* .eh_frame_hdr, run-time address */
	uint64_t table;          /* its table of (pc, fde) pairs */
	uint64_t nfdes;
	int have_bias;
	uint64_t bias;           /* run-time - link-time address */
	/* .debug_frame, read from the file when .eh_frame has no entry
	 * for a pc (then df_tried); df.data NULL when there is none */
	int df_tried;
	uint64_t df_at;
	struct debug_frame_image df;
};

struct native_unwinder {
	const struct unwind_lib *lib;  /* symbols/unwind_lib.h */
	struct memsrc *ms;
	unw_addr_space_t as;
	struct native_modules mods;
	struct unw_table *tables;    /* by module index */
};

/* Per-thread argument of the accessors. */
struct unw_ctx {
	struct native_unwinder *u;
	const struct cs_thread *t;
};

/* Is pc in an executable mapping of ms? */
static int memsrc_exec_at(const struct memsrc *ms, uint64_t pc)
{
	const struct cs_mapping *m = memsrc_find_mapping(ms, pc);

	return m && strchr(m->perms, 'x') != NULL;
}

/* pc's module as mapped: see struct native_module. */
static int module_of(const struct memsrc *ms, uint64_t pc,
		     struct native_module *out)
{
	const struct cs_mapping *m = memsrc_find_mapping(ms, pc);
	size_t i;

	if (!m || !strchr(m->perms, 'x'))
		return -1;
	out->base = m->start;
	out->end = m->end;
	out->path = NULL;
	/* The vDSO ("[vdso]" live, no name in a core) and other anonymous
	 * code: one mapping, an ELF image only if it starts with one. */
	if (!m->path || m->path[0] == '[')
		return 0;
	out->path = m->path;
	/* A file: its offset-0 mapping at or below pc, and the mappings of
	 * the same file after it (maps are sorted by start). */
	for (i = 0; i < ms->nmaps; i++) {
		const struct cs_mapping *o = &ms->maps[i];

		if (!o->path || strcmp(o->path, m->path))
			continue;
		if (o->start <= pc && o->offset == 0)
			out->base = o->start;
		if (o->start >= out->base && o->end > out->end)
			out->end = o->end;
	}
	return 0;
}

long native_modules_index(struct native_modules *l, const struct memsrc *ms,
			  uint64_t pc, int *added)
{
	struct native_module m;
	size_t i;

	*added = 0;
	if (module_of(ms, pc, &m) < 0)
		return -1;
	for (i = 0; i < l->n; i++)
		if (l->mods[i].base == m.base)
			return (long)i;
	if (!l->mods)
		l->mods = xcalloc(NATIVE_MAX_MODULES, sizeof(*l->mods));
	if (l->n >= NATIVE_MAX_MODULES)
		return -1;
	l->mods[l->n] = m;
	*added = 1;
	return (long)l->n++;
}

void native_modules_release(struct native_modules *l)
{
	free(l->mods);
	l->mods = NULL;
	l->n = 0;
}

/* Bytes of an encoded .eh_frame_hdr field, or 0 for one we do not read. */
static size_t enc_size(unsigned enc)
{
	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c: return 8;  /* absptr, [us]data8 */
	case 0x03: case 0x0b: return 4;             /* [us]data4 */
	default: return 0;
	}
}

/* Find the module's .eh_frame_hdr through its mapped program headers. */
static void table_load(struct native_unwinder *u, struct unw_table *t)
{
	unsigned char eh[64], ph[56], hdr[4], cnt[8];
	uint64_t phoff, bias = 0, ehf = 0;
	unsigned phnum, phentsize, i;
	int have_load = 0;
	size_t skip, csize;

	if (memsrc_read(u->ms, t->base, eh, sizeof(eh), NULL) < 0 ||
	    memcmp(eh, "\177ELF", 4) || eh[4] != 2 /* ELFCLASS64 */)
		return;
	phoff = le_u64(eh + 32);
	phentsize = le_u16(eh + 54);
	phnum = le_u16(eh + 56);
	if (phentsize < sizeof(ph) || phnum > MAX_PHNUM ||
	    phoff > t->end - t->base)
		return;
	for (i = 0; i < phnum; i++) {
		uint32_t type;
		uint64_t vaddr;

		if (memsrc_read(u->ms, t->base + phoff + (uint64_t)i * phentsize,
				ph, sizeof(ph), NULL) < 0)
			return;
		type = le_u32(ph);
		vaddr = le_u64(ph + 16);
		if (type == PT_LOAD && !have_load) {
			/* The first PT_LOAD is mapped at base. */
			bias = t->base - (vaddr - le_u64(ph + 8));
			have_load = 1;
		} else if (type == PT_GNU_EH_FRAME) {
			ehf = vaddr;
		}
	}
	if (!have_load)
		return;
	t->have_bias = 1;
	t->bias = bias;
	if (!ehf)
		return;
	t->hdr = ehf + bias;
	if (t->hdr < t->base || t->hdr >= t->end ||
	    memsrc_read(u->ms, t->hdr, hdr, sizeof(hdr), NULL) < 0)
		return;
	/* version 1; the table must be datarel sdata4 pairs to be searched */
	if (hdr[0] != 1 || hdr[3] != 0x3b || (hdr[2] & 0x70) != 0)
		return;
	skip = enc_size(hdr[1]);
	csize = enc_size(hdr[2]);
	if (!skip || !csize ||
	    memsrc_read(u->ms, t->hdr + 4 + skip, cnt, csize, NULL) < 0)
		return;
	t->nfdes = csize == 4 ? le_u32(cnt) : le_u64(cnt);
	t->table = t->hdr + 4 + skip + csize;
	if (!t->nfdes || t->nfdes > MAX_FDES)
		return;
	t->ok = 1;
}

static struct unw_table *table_for(struct native_unwinder *u, uint64_t ip)
{
	int added;
	long i = native_modules_index(&u->mods, u->ms, ip, &added);
	struct unw_table *t;

	if (i < 0)
		return NULL;
	t = &u->tables[i];
	if (added) {
		memset(t, 0, sizeof(*t));
		t->base = u->mods.mods[i].base;
		t->end = u->mods.mods[i].end;
		t->path = u->mods.mods[i].path;
		t->df_at = DF_REGION + ((uint64_t)i << DF_SLOT_SHIFT) +
			   (t->base & 0xffffffffu);
		table_load(u, t);
	}
	return t;
}

/* Rewrite img's .debug_frame into t->df: 0, or -1 when it has none. */
static int df_rewrite(struct unw_table *t, const struct elf_image *img)
{
	const void *sec;
	size_t len;

	if (elf_image_section_data(img, ".debug_frame", &sec, &len) < 0)
		return -1;
	return debug_frame_rewrite(sec, len, t->bias, t->df_at, t->base,
				   t->end, &t->df);
}

/* The target's file at path, opened on this machine, or NULL. */
static struct elf_image *df_open(struct native_unwinder *u, const char *path)
{
	struct elf_image *img = NULL;
	struct cs_err err;
	char *host = memsrc_target_path(u->ms, path);

	if (host && *host && elf_image_open(&img, host, &err) < 0)
		img = NULL;
	free(host);
	return img;
}

/*
 * Read the module's .debug_frame, once: from its file, else from the
 * separate debug file its build id names (both through the source's
 * root, as for symbols).
 */
static void df_load(struct native_unwinder *u, struct unw_table *t)
{
	struct elf_image *img, *dbg;
	const uint8_t *id;
	size_t idlen = 0;
	char *path;

	t->df_tried = 1;
	if (!t->path || !t->have_bias || !(img = df_open(u, t->path)))
		return;
	id = elf_image_build_id(img, &idlen);
	if (df_rewrite(t, img) < 0 &&
	    (path = elf_build_id_debug_path(id, idlen))) {
		dbg = df_open(u, path);
		if (dbg) {
			df_rewrite(t, dbg);
			elf_image_free(dbg);
		}
		free(path);
	}
	elf_image_free(img);
}

/* libunwind's own search of a binary-search table in the target (what
 * its ptrace and coredump accessors call), which reads the table and the
 * FDEs with our access_mem. */
static int search(unw_addr_space_t as, unw_word_t ip, uint64_t base,
		  uint64_t end, uint64_t segbase, uint64_t table,
		  uint64_t nfdes, unw_proc_info_t *pi, int need_unwind_info,
		  void *arg)
{
	const struct unw_ctx *ctx = arg;
	unw_dyn_info_t di;

	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = base;
	di.end_ip = end;
	di.u.rti.segbase = segbase;
	di.u.rti.table_data = table;
	/* in words, as libunwind counts it: two 4-byte fields per entry */
	di.u.rti.table_len = nfdes * 8 / sizeof(unw_word_t);
	return ctx->u->lib->dwarf_search_unwind_table(as, ip, &di, pi,
						      need_unwind_info, arg);
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip,
			  unw_proc_info_t *pi, int need_unwind_info, void *arg)
{
	struct unw_ctx *ctx = arg;
	struct unw_table *t = table_for(ctx->u, ip);
	int ret = -UNW_ENOINFO;

	if (!t)
		return ret;
	if (t->ok)
		ret = search(as, ip, t->base, t->end, t->hdr, t->table,
			     t->nfdes, pi, need_unwind_info, arg);
	if (ret != -UNW_ENOINFO)
		return ret;
	/* No .eh_frame entry: code built without unwind tables may have
	 * its CFI in .debug_frame. */
	if (!t->df_tried)
		df_load(ctx->u, t);
	if (!t->df.data)
		return ret;
	return search(as, ip, t->base, t->end, t->df_at, t->df_at,
		      t->df.nfdes, pi, need_unwind_info, arg);
}

/* The rewritten .debug_frame holding [addr, addr + 8), or NULL. */
static const unsigned char *df_bytes(struct native_unwinder *u, uint64_t addr)
{
	uint64_t slot = (addr - DF_REGION) >> DF_SLOT_SHIFT;
	size_t k;

	/* an image starts in its slot and may run into the next one */
	for (k = 0; k < 2 && k <= slot; k++) {
		const struct unw_table *t;

		if (slot - k >= u->mods.n)
			continue;
		t = &u->tables[slot - k];
		if (t->df.data && addr >= t->df_at &&
		    addr - t->df_at < t->df.len)
			return t->df.data + (addr - t->df_at);
	}
	return NULL;
}

/* Table-format unwind info is freed by libunwind itself. */
static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi,
			    void *arg)
{
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr,
				  void *arg)
{
	return -UNW_ENOINFO;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val,
		      int write, void *arg)
{
	struct unw_ctx *ctx = arg;
	unsigned char b[8];

	if (write)
		return -UNW_EINVAL;
	if (addr >= DF_REGION) {
		/* images are padded with 8 bytes: a read may end past len */
		const unsigned char *p = df_bytes(ctx->u, addr);

		if (p) {
			*val = le_u64(p);
			return 0;
		}
		/* else the target's own, as the [vsyscall] page */
	}
	if (memsrc_read(ctx->u->ms, addr, b, sizeof(b), NULL) < 0)
		return -UNW_EINVAL;
	*val = le_u64(b);
	return 0;
}

/* libunwind's x86-64 register numbers, in the user_regs_struct. */
static int reg_index(unw_regnum_t reg)
{
	static const int map[] = {
		[UNW_X86_64_RAX] = CS_REG_RAX, [UNW_X86_64_RDX] = CS_REG_RDX,
		[UNW_X86_64_RCX] = CS_REG_RCX, [UNW_X86_64_RBX] = CS_REG_RBX,
		[UNW_X86_64_RSI] = CS_REG_RSI, [UNW_X86_64_RDI] = CS_REG_RDI,
		[UNW_X86_64_RBP] = CS_REG_RBP, [UNW_X86_64_RSP] = CS_REG_RSP,
		[UNW_X86_64_R8] = CS_REG_R8, [UNW_X86_64_R9] = CS_REG_R9,
		[UNW_X86_64_R10] = CS_REG_R10, [UNW_X86_64_R11] = CS_REG_R11,
		[UNW_X86_64_R12] = CS_REG_R12, [UNW_X86_64_R13] = CS_REG_R13,
		[UNW_X86_64_R14] = CS_REG_R14, [UNW_X86_64_R15] = CS_REG_R15,
		[UNW_X86_64_RIP] = CS_REG_RIP,
	};

	if (reg < 0 || (size_t)reg >= sizeof(map) / sizeof(map[0]))
		return -1;
	return map[reg];
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val,
		      int write, void *arg)
{
	struct unw_ctx *ctx = arg;
	int i = reg_index(reg);

	if (write || i < 0)
		return -UNW_EBADREG;
	*val = ctx->t->regs.r[i];
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg,
			unw_fpreg_t *val, int write, void *arg)
{
	return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf,
			 size_t len, unw_word_t *off, void *arg)
{
	return -UNW_ENOINFO;  /* symbols/native_symbols.c names frames */
}

static unw_accessors_t accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};

int native_unwinder_new(struct native_unwinder **out, struct memsrc *ms,
			struct cs_err *err)
{
	const struct unwind_lib *lib = unwind_lib(err);
	struct native_unwinder *u;

	*out = NULL;
	if (!lib)
		return -CS_ERR_INTERNAL;
	u = calloc(1, sizeof(*u));
	if (u)
		u->tables = calloc(NATIVE_MAX_MODULES, sizeof(*u->tables));
	if (!u || !u->tables) {
		free(u);
		return cs_fail(err, CS_ERR_INTERNAL, "out of memory");
	}
	u->lib = lib;
	u->ms = ms;
	u->as = lib->create_addr_space(&accessors, 0);
	if (!u->as) {
		free(u->tables);
		free(u);
		return cs_fail(err, CS_ERR_INTERNAL,
			       "libunwind cannot create an address space");
	}
	/* The target does not change while we read it: cache across
	 * threads (libunwind's cache is keyed by ip). */
	lib->set_caching_policy(u->as, UNW_CACHE_GLOBAL);
	*out = u;
	return 0;
}

void native_unwinder_free(struct native_unwinder *u)
{
	size_t i;

	if (!u)
		return;
	for (i = 0; i < u->mods.n; i++)
		debug_frame_image_release(&u->tables[i].df);
	u->lib->destroy_addr_space(u->as);
	native_modules_release(&u->mods);
	free(u->tables);
	free(u);
}

/*
 * A signal trampoline: x86-64 Linux's rt_sigreturn sequence,
 * "mov $15, %rax; syscall", at pc.  Checked here rather than with
 * unw_is_signal_frame(), which libunwind 1.6 only updates for the frame
 * it last stepped through, one frame late.
 */
static int is_sigreturn(struct native_unwinder *u, uint64_t pc)
{
	static const unsigned char code[] = {
		0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05,
	};
	unsigned char b[sizeof(code)];

	return memsrc_read(u->ms, pc, b, sizeof(b), NULL) == 0 &&
	       !memcmp(b, code, sizeof(code));
}

size_t native_unwind(struct native_unwinder *u, const struct cs_thread *t,
		     struct native_pc *pcs, size_t max)
{
	struct unw_ctx ctx = { u, t };
	unw_cursor_t cur;
	size_t n = 0;
	int exact = 1;

	if (!t->has_regs || !max ||
	    u->lib->init_remote(&cur, u->as, &ctx) < 0)
		return 0;
	while (n < max) {
		unw_word_t ip = 0, sp = 0;

		if (u->lib->get_reg(&cur, UNW_REG_IP, &ip) < 0 ||
		    u->lib->get_reg(&cur, UNW_REG_SP, &sp) < 0 || !ip)
			break;
		/* the same frame twice: a loop the CFI cannot get out of */
		if (n && pcs[n - 1].pc == ip && pcs[n - 1].sp == sp)
			break;
		/* A return address outside executable memory is no frame:
		 * a frame-pointer chain or a stack switched under the CFI
		 * (greenlet's g_initialstub) read words of data, 0x1, a
		 * stack canary.  (The innermost pc stays: a call through a
		 * bad pointer crashes there.) */
		if (n && !memsrc_exec_at(u->ms, ip))
			break;
		pcs[n].pc = ip;
		pcs[n].sp = sp;
		/* A trampoline's pc is where the handler returns to, not a
		 * call's return address; so is the pc the signal interrupted
		 * (the frame after it). */
		pcs[n].signal = is_sigreturn(u, ip);
		pcs[n].exact = exact || pcs[n].signal;
		exact = pcs[n].signal;
		n++;
		if (u->lib->step(&cur) <= 0)
			break;
	}
	return n;
}
