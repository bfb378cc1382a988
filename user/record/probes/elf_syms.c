// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "record/probes/elf_syms.h"
#include "lib/cmp.h"

/* Virtual address -> file offset through the PT_LOAD segment holding it. */
static uint64_t vaddr_to_offset(Elf *elf, uint64_t addr)
{
	size_t i, nph;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &nph))
		return 0;
	for (i = 0; i < nph; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (addr >= ph.p_vaddr && addr < ph.p_vaddr + ph.p_memsz)
			return addr - ph.p_vaddr + ph.p_offset;
	}
	return 0;
}

/* Where a uprobe on the function at file offset off should go. A function
 * compiled for CET starts with endbr64, which the kernel does not emulate:
 * a probe there costs a second trap (a single step out of line) on every
 * hit, several microseconds in a VM. endbr64 changes no register and no
 * memory, so a probe on the next instruction sees the same arguments and
 * return address and fires on every call just the same. */
static uint64_t probe_offset(const unsigned char *file, size_t size, uint64_t off)
{
	static const unsigned char endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

	if (file && off + sizeof(endbr64) < size && !memcmp(file + off, endbr64, sizeof(endbr64)))
		return off + sizeof(endbr64);
	return off;
}

/* Visits every defined function symbol: .dynsym first (what a stripped
 * driver library has), then .symtab. A visitor returning non-zero stops. */
static int walk(const char *path, elf_syms_fn visit, void *ctx)
{
	int fd, err = 0, pass;
	const unsigned char *file;
	size_t file_size = 0;
	GElf_Ehdr eh;
	Elf_Scn *scn;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto cleanup;
	}
	/* the endbr64 bytes mean that only in x86-64 code */
	file = gelf_getehdr(elf, &eh) && eh.e_machine == EM_X86_64 ?
		       (const unsigned char *)elf_rawfile(elf, &file_size) : NULL;
	for (pass = 0; pass < 2 && !err; pass++) {
		Elf32_Word want = pass == 0 ? SHT_DYNSYM : SHT_SYMTAB;

		scn = NULL;
		while (!err && (scn = elf_nextscn(elf, scn))) {
			Elf_Data *data;
			size_t i, count;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != want || !sh.sh_entsize)
				continue;
			data = elf_getdata(scn, NULL);
			if (!data)
				continue;
			count = sh.sh_size / sh.sh_entsize;
			for (i = 0; i < count && !err; i++) {
				const char *name;
				uint64_t off;

				if (!gelf_getsym(data, i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
					continue;
				if (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
				    GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)
					continue;
				name = elf_strptr(elf, sh.sh_link, sym.st_name);
				off = name ? vaddr_to_offset(elf, sym.st_value) : 0;
				if (off)
					err = visit(ctx, name, probe_offset(file, file_size, off));
			}
		}
	}
cleanup:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

struct resolve_ctx {
	const char *const *names;	/* caller's names */
	const char **sorted;		/* the same, sorted for bsearch */
	size_t n;
	uint64_t *offsets;		/* caller's output, by caller's index */
	int found;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int resolve_visit(void *ctx, const char *name, uint64_t off)
{
	struct resolve_ctx *c = ctx;
	const char **hit = bsearch(&name, c->sorted, c->n, sizeof(*c->sorted), cmp_str);
	size_t idx;

	if (!hit)
		return 0;
	for (idx = 0; idx < c->n; idx++) {
		if (c->names[idx] == *hit)
			break;
	}
	if (idx < c->n && !c->offsets[idx]) {
		c->offsets[idx] = off;
		c->found++;
	}
	return 0;
}

int elf_syms__resolve(const char *path, const char *const *names, size_t n, uint64_t *offsets)
{
	struct resolve_ctx c = { .names = names, .n = n, .offsets = offsets };
	int err;

	memset(offsets, 0, n * sizeof(*offsets));
	c.sorted = malloc(n * sizeof(*c.sorted));
	if (!c.sorted)
		return -ENOMEM;
	memcpy(c.sorted, names, n * sizeof(*c.sorted));
	cmp__sort(c.sorted, n, sizeof(*c.sorted), cmp_str);
	err = walk(path, resolve_visit, &c);
	free(c.sorted);
	return err ? err : c.found;
}

struct each_ctx {
	const char *prefix;
	size_t plen;
	elf_syms_fn fn;
	void *ctx;
	int count;
};

static int each_visit(void *ctx, const char *name, uint64_t off)
{
	struct each_ctx *c = ctx;

	if (strncmp(name, c->prefix, c->plen))
		return 0;
	c->count++;
	return c->fn(c->ctx, name, off);
}

int elf_syms__each(const char *path, const char *prefix, elf_syms_fn fn, void *ctx)
{
	struct each_ctx c = { prefix, strlen(prefix), fn, ctx, 0 };
	int err = walk(path, each_visit, &c);

	return err ? err : c.count;
}

int elf_syms__exports(const char *path, const char *name)
{
	int fd, found = 0;
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		found = -ENOEXEC;
		goto cleanup;
	}
	if (eh.e_type != ET_DYN)
		goto cleanup;
	/* what the dynamic linker can find: .dynsym, defined, global or
	 * weak, visible */
	while (!found && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t i, count;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		count = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < count && !found; i++) {
			const char *n;

			if (!gelf_getsym(data, i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    (GELF_ST_BIND(sym.st_info) != STB_GLOBAL && GELF_ST_BIND(sym.st_info) != STB_WEAK) ||
			    GELF_ST_VISIBILITY(sym.st_other) != STV_DEFAULT)
				continue;
			n = elf_strptr(elf, sh.sh_link, sym.st_name);
			found = n && !strcmp(n, name);
		}
	}
cleanup:
	if (elf)
		elf_end(elf);
	close(fd);
	return found;
}

enum uprobe_insn uprobe_insn__class(const unsigned char *c, size_t len)
{
	if (!len)
		return UPROBE_INSN_STEP;
	if (c[0] >= 0x50 && c[0] <= 0x57)
		return UPROBE_INSN_PUSH;
	if (len >= 2 && c[0] == 0x41 && c[1] >= 0x50 && c[1] <= 0x57)
		return UPROBE_INSN_PUSH;
	if (c[0] == 0xe8 || c[0] == 0xe9 || c[0] == 0xeb || c[0] == 0x90 || (c[0] >= 0x70 && c[0] <= 0x7f))
		return UPROBE_INSN_BRANCH;
	if (len >= 2 && c[0] == 0x0f && c[1] >= 0x80 && c[1] <= 0x8f)
		return UPROBE_INSN_BRANCH;
	return UPROBE_INSN_STEP;
}

int elf_syms__insn_classes(const char *path, const uint64_t *offs, size_t n, uint8_t *cls)
{
	unsigned char code[4];
	size_t i;
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		if (!offs[i])
			continue;
		got = pread(fd, code, sizeof(code), (off_t)offs[i]);
		cls[i] = (uint8_t)uprobe_insn__class(code, got > 0 ? (size_t)got : 0);
	}
	close(fd);
	return 0;
}

int elf_syms__data(const char *path, const char *name, uint64_t *value, uint64_t *base)
{
	Elf_Scn *scn = NULL;
	bool found = false, based = false;
	size_t nph;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf *elf;
	int fd, err = 0;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nph)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	for (size_t i = 0; i < nph && !based; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
			if (ph.p_offset > (ph.p_vaddr & 0xfff))
				break;	/* offset 0 is not in the first segment */
			*base = ph.p_vaddr & ~0xfffull;
			based = true;
		}
	}
	while (based && !found && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t i, count;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		count = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < count && !found; i++) {
			const char *n;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			n = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (n && !strcmp(n, name)) {
				*value = sym.st_value;
				found = true;
			}
		}
	}
	if (!found)
		err = -ENOENT;
cleanup:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}
