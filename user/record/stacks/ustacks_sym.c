// SPDX-License-Identifier: MIT
/*
 * The files of the native stacks (ustacks_int.h): per file, its build id and
 * the segments that turn a file offset into the address its symbols use, read
 * at its first frame through a descriptor opened then (/proc/PID/root: a
 * container's own file; the process gone, the recorder's own path when it is
 * the same file), and its function symbols, read when a frame first needs a
 * name and sorted by address; the function holding an offset.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/kdev.h"
#include "lib/vec.h"
#include "record/stacks/elf_symtab.h"
#include "record/stacks/ustacks_int.h"
#include "lib/cmp.h"

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void read_build_id(Elf *e, uint8_t *id, uint8_t *len)
{
	Elf_Scn *scn = NULL;

	*len = 0;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + noff, "GNU", 4) && nh.n_descsz) {
				*len = nh.n_descsz > 20 ? 20 : (uint8_t)nh.n_descsz;
				memcpy(id, (char *)d->d_buf + doff, *len);
				return;
			}
		}
	}
}

struct syms_ctx {
	struct module *m;
	size_t cap;
	bool full;		/* out of memory: the symbols read so far stand */
};

static bool add_symbol(void *ctx, const GElf_Sym *s, const char *name)
{
	struct syms_ctx *c = ctx;
	struct module *m = c->m;

	if (GELF_ST_TYPE(s->st_info) != STT_FUNC || !s->st_value)
		return false;
	if (vec__reserve(&m->syms, &c->cap, m->nsyms, 1, 256)) {
		c->full = true;
		return true;
	}
	m->syms[m->nsyms].addr = s->st_value;
	m->syms[m->nsyms].size = s->st_size;
	m->syms[m->nsyms].name = strndup(name, NAME_MAX_LEN - 1);
	if (m->syms[m->nsyms].name)
		m->nsyms++;
	return false;
}

static void read_symbols(struct module *m, Elf *e)
{
	struct syms_ctx c = { m, 0, false };

	elf_symtab__each(e, add_symbol, &c);
	cmp__sort(m->syms, m->nsyms, sizeof(*m->syms), cmp_sym);
}

/* path opened as a regular file, never blocking (the path is the traced
 * program's to change): its descriptor, *st its status; -1 when none. */
static int open_regular(const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd >= 0 && (fstat(fd, st) || !S_ISREG(st->st_mode))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* m's file, opened once: as its process sees it (through /proc/PID/root: a
 * container's own); that process gone (a short one, its first stack read
 * by a recorder running behind it: the maps read, the process exited
 * before its files were opened), the path in the recorder's root when it
 * is the file mapped (same device and inode): a container's root may hold
 * another file at that path. */
static void module_open(struct module *m)
{
	char path[4200];
	struct stat st;

	m->fd = -1;
	if (snprintf(path, sizeof(path), "/proc/%u/root%s", m->pid, m->path) < (int)sizeof(path))
		m->fd = open_regular(path, &st);
	if (m->fd < 0 && m->path[0] == '/' && (m->fd = open_regular(m->path, &st)) >= 0 &&
	    (st.st_ino != m->ino || kdev__of(st.st_dev) != m->dev)) {
		close(m->fd);
		m->fd = -1;
	}
}

/* m's file as ELF; NULL when it cannot be read. */
static Elf *module_elf(const struct module *m)
{
	Elf *e;

	if (m->fd < 0)
		return NULL;
	e = elf_begin(m->fd, ELF_C_READ, NULL);
	if (e && elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		e = NULL;
	}
	return e;
}

/* m's build id and segments, read at its first frame; a file that cannot
 * be read leaves its frames without names. */
void ustacks_sym__load(struct module *m, uint8_t *build_id, uint8_t *build_id_len)
{
	size_t nph, cap = 0;
	Elf *e;

	m->loaded = true;
	*build_id_len = 0;
	module_open(m);
	e = module_elf(m);
	if (!e)
		return;
	if (!elf_getphdrnum(e, &nph)) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD ||
			    vec__reserve(&m->segs, &cap, m->nsegs, 1, 4))
				continue;
			m->segs[m->nsegs++] = (struct seg){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
		}
	}
	read_build_id(e, build_id, build_id_len);
	elf_end(e);
}

/* m's function symbols, read at the first frame that needs a name: a large
 * library's table is read only when a stack passes through it. */
static void module_symbols(struct module *m)
{
	Elf *e;

	m->syms_loaded = true;
	e = module_elf(m);
	if (!e)
		return;
	read_symbols(m, e);
	elf_end(e);
}

/* The function holding file offset off of m: its name, *delta the distance
 * from its start; NULL when none is known. */
const char *ustacks_sym__symbol(struct module *m, uint64_t off, uint64_t *delta)
{
	uint64_t addr = 0;
	size_t lo = 0, hi = m->nsyms;
	bool found = false;

	for (size_t i = 0; i < m->nsegs && !found; i++)
		if (off >= m->segs[i].off && off < m->segs[i].off + m->segs[i].len) {
			addr = off - m->segs[i].off + m->segs[i].vaddr;
			found = true;
		}
	if (!found)
		return NULL;
	if (!m->syms_loaded) {
		module_symbols(m);
		hi = m->nsyms;
	}
	while (lo < hi) {	/* the last symbol starting at or before addr */
		size_t mid = (lo + hi) / 2;

		if (m->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct sym *s = &m->syms[lo - 1];

	/* a sized symbol must cover it; an unsized one is taken as running on */
	if (s->size && addr >= s->addr + s->size)
		return NULL;
	*delta = addr - s->addr;
	return s->name;
}

void ustacks_sym__free(void *v)
{
	struct module *m = v;

	for (size_t i = 0; i < m->nsyms; i++)
		free(m->syms[i].name);
	free(m->syms);
	free(m->segs);
	free(m->path);
	if (m->emitted && m->fd >= 0)
		close(m->fd);
}
