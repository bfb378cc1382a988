// SPDX-License-Identifier: MIT
/*
 * The native stacks of calls: raw return addresses to frames of files,
 * interned (ustacks.h). Per process, its executable file mappings as
 * /proc/PID/maps gave them, read at its first stack (BPF wakes the recorder
 * at once for it, while the process is in the call) and again when an
 * address is in none of them (a library loaded since; not again for 100 ms
 * after a reading that did not have it: JIT code); per file (device and
 * inode), its id, build id, the segments that turn a file offset into the
 * address its symbols use, an open descriptor (its symbols are read when a
 * frame first needs a name, which may be after the process exited), and its
 * function symbols, sorted. A process that exits before its first stack is
 * read leaves frames in no file, counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "lib/hash.h"
#include "lib/hmap.h"
#include "lib/vec.h"
#include "record/stacks/elf_symtab.h"
#include "record/stacks/pyconf.h"
#include "record/stacks/ustacks.h"
#include "lib/cmp.h"

#define REREAD_NS	100000000ull	/* a process' maps read again, after a reading that
					 * did not have an address, at most this often */
#define NAME_MAX_LEN	1024		/* a symbol's name is cut here (C++ names run long) */

struct seg {
	uint64_t off, vaddr, len;	/* a PT_LOAD: file bytes [off, off + len) at vaddr */
};

struct sym {
	uint64_t addr, size;
	char *name;
};

struct module {
	uint32_t id;
	bool emitted;			/* its GT_REC_MODULE written (at its first frame) */
	bool loaded;			/* segments read (or tried), at that time */
	bool syms_loaded;		/* symbols read (or tried), at its first frame's symbol */
	bool interp;			/* a Python interpreter BPF walks (pyconf) */
	uint32_t pid;			/* a process that maps it: its files are read through it */
	int fd;				/* the file, opened at its first frame (while a process
					 * that maps it lives), for its symbols later; -1 none */
	char *path;
	struct seg *segs;
	size_t nsegs;
	struct sym *syms;		/* by address */
	size_t nsyms;
};

struct map {
	uint64_t start, end, pgoff;
	struct module *m;
};

struct pmaps {
	struct map *v;
	size_t n, cap;
	uint64_t read_ns;		/* when read, 0 never */
	uint64_t miss_ns;		/* when a reading did not have an address looked for */
	bool python;			/* an interpreter BPF walks is among them */
};

#define FRAMES_MAX	(GT_USTACK_MAX + 1 + GT_PYSTACK_MAX)

struct stack_ent {
	uint32_t id;
	uint16_t n, flags;
	struct gt_stack_frame f[FRAMES_MAX];
};

/* A Python code object of a process, as BPF sent it (struct gt_pycode). */
struct pycode {
	uint32_t func;			/* its GT_REC_PYFUNC id */
	uint32_t version, firstlineno;
	uint32_t lines_len;
	uint8_t *lines;			/* co_linetable (cut short: later lines are 0, not known) */
};

/* A Python function of the trace (file, name, first line). */
struct pyfunc {
	uint32_t id;
	uint32_t firstlineno;
	char *text;			/* file NUL name NUL */
	size_t file_len, name_len;	/* with their NULs */
};

struct ustacks {
	ustacks_emit_fn emit;
	void *ctx;
	struct hmap procs;		/* (pid, 0) -> struct pmaps */
	struct hmap modules;		/* (inode, dev) -> struct module */
	struct hmap stacks;		/* (hash of the frames, 0) -> struct stack_ent */
	struct hmap symbols;		/* (offset, module) -> (void *)1: its GT_REC_SYMBOL written */
	struct hmap sites;		/* (hash of the call site's keys, tid) -> stack id as a
					 * pointer (--stacks all) */
	struct hmap codes;		/* (code address, pid) -> struct pycode */
	struct hmap funcs;		/* (hash of file, name and line, 0) -> struct pyfunc */
	struct pyconf *py;		/* the interpreters BPF walks, NULL: none */
	uint32_t next_module, next_stack, next_func;
	struct ustacks_counters c;
	uint64_t buf[(8192 + NAME_MAX_LEN) / 8];	/* a record being written */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct ustacks *ustacks__new(ustacks_emit_fn emit, void *ctx)
{
	struct ustacks *u = calloc(1, sizeof(*u));

	if (u) {
		u->emit = emit;
		u->ctx = ctx;
		elf_version(EV_CURRENT);
	}
	return u;
}

/* ---- a file: build id, segments, symbols ---------------------------------- */

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

/* m's file as its process sees it (through /proc/PID/root: a container's
 * own), opened once: a regular file only (the path is the traced
 * program's to change), never blocking. */
static void module_open(struct module *m)
{
	char path[4200];
	struct stat st;

	m->fd = -1;
	if (snprintf(path, sizeof(path), "/proc/%u/root%s", m->pid, m->path) >= (int)sizeof(path))
		return;
	m->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (m->fd >= 0 && (fstat(m->fd, &st) || !S_ISREG(st.st_mode))) {
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
static void module_load(struct module *m, uint8_t *build_id, uint8_t *build_id_len)
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
static const char *module_symbol(struct module *m, uint64_t off, uint64_t *delta)
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

static void module_free(void *v)
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

/* ---- a process' mappings --------------------------------------------------- */

/* m's GT_REC_MODULE, at its first frame (its segments and build id read). */
static int emit_module(struct ustacks *u, uint32_t pid, uint64_t ts, struct module *m)
{
	struct gt_module *r = (void *)u->buf;
	size_t len = strlen(m->path) + 1;

	if (sizeof(*r) + len > sizeof(u->buf) - 8)
		len = sizeof(u->buf) - 8 - sizeof(*r);
	memset(r, 0, sizeof(*r));
	m->emitted = true;
	module_load(m, r->build_id, &r->build_id_len);
	r->hdr.ts = ts;
	r->hdr.pid = pid;
	r->hdr.type = GT_REC_MODULE;
	r->hdr.size = (uint16_t)GT_REC_ALIGN(sizeof(*r) + len);
	r->id = m->id;
	r->len = (uint16_t)len;
	memcpy(r->path, m->path, len);
	r->path[len - 1] = 0;
	memset(r->path + len, 0, r->hdr.size - sizeof(*r) - len);
	return u->emit(u->ctx, &r->hdr);
}

/* The module of the file at (dev, ino), path: new ones get an id; their
 * record is written at their first frame. */
static struct module *module_of(struct ustacks *u, uint32_t pid, uint32_t dev, uint64_t ino, const char *path)
{
	bool created;
	struct module *m = hmap_get_or_new(&u->modules, ino, dev, sizeof(*m), &created);

	if (!m || !created)
		return m;
	m->id = ++u->next_module;
	m->pid = pid;
	m->path = strdup(path);
	if (!m->path) {
		m->path = strdup("?");
		if (!m->path)
			return NULL;
	}
	m->interp = pyconf__on_file(u->py, pid, path, dev, ino);
	return m;
}

static int cmp_map(const void *a, const void *b)
{
	const struct map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* pid's executable file mappings, read anew. */
static int maps_read(struct ustacks *u, uint32_t pid, struct pmaps *pm)
{
	char path[64], line[4352], perms[8], file[4200];
	FILE *f;
	int err = 0;

	pm->n = 0;
	pm->read_ns = now_ns();
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;	/* gone: its frames stay unmapped */
	while (fgets(line, sizeof(line), f) && !err) {
		unsigned long long start, end, pgoff, ino;
		unsigned maj, min;
		struct module *m;

		file[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4199[^\n]", &start, &end, perms, &pgoff, &maj,
			   &min, &ino, file) < 7 || !ino || perms[2] != 'x' || file[0] != '/')
			continue;
		m = module_of(u, pid, (maj << 20) | min, ino, file);
		if (!m || vec__reserve(&pm->v, &pm->cap, pm->n, 1, 32)) {
			err = err ? err : -ENOMEM;
			break;
		}
		pm->v[pm->n++] = (struct map){ start, end, pgoff, m };
		pm->python |= m->interp;
	}
	fclose(f);
	cmp__sort(pm->v, pm->n, sizeof(*pm->v), cmp_map);
	return err;
}

static const struct map *map_find(const struct pmaps *pm, uint64_t ip)
{
	size_t lo = 0, hi = pm->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (pm->v[mid].end <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < pm->n && pm->v[lo].start <= ip ? &pm->v[lo] : NULL;
}

/* ---- stacks -------------------------------------------------------------- */

static int emit_symbol(struct ustacks *u, const struct gt_hdr *at, struct module *m, uint64_t off,
		       bool ret)
{
	struct gt_symbol *r = (void *)u->buf;
	const char *name;
	uint64_t delta = 0;
	size_t len;
	void *old;

	if (hmap_get(&u->symbols, off, m->id))
		return 0;
	if (hmap_put(&u->symbols, off, m->id, (void *)1, &old))
		return -ENOMEM;
	/* a return address is the instruction after the call: its function is
	 * the one holding the byte before it */
	name = module_symbol(m, ret && off ? off - 1 : off, &delta);
	if (!name) {
		u->c.no_symbol++;
		return 0;
	}
	if (ret)
		delta++;
	len = strlen(name) + 1;
	memset(r, 0, sizeof(*r));
	r->hdr.ts = at->ts;
	r->hdr.pid = at->pid;
	r->hdr.type = GT_REC_SYMBOL;
	r->hdr.size = (uint16_t)GT_REC_ALIGN(sizeof(*r) + len);
	r->module = m->id;
	r->len = (uint16_t)len;
	r->offset = off;
	r->delta = delta;
	memcpy(r->name, name, len);
	memset(r->name + len, 0, r->hdr.size - sizeof(*r) - len);
	return u->emit(u->ctx, &r->hdr);
}

static int emit_stack(struct ustacks *u, const struct gt_hdr *at, const struct stack_ent *s)
{
	struct gt_stack *r = (void *)u->buf;
	size_t size = sizeof(*r) + s->n * sizeof(s->f[0]);

	memset(r, 0, sizeof(*r));
	r->hdr.ts = at->ts;
	r->hdr.pid = at->pid;
	r->hdr.type = GT_REC_STACK;
	r->hdr.size = (uint16_t)size;
	r->id = s->id;
	r->nframes = s->n;
	r->flags = s->flags;
	memcpy(r->frames, s->f, s->n * sizeof(s->f[0]));
	return u->emit(u->ctx, &r->hdr);
}

/* The interned id of s (new ones written with their modules' symbols); 0
 * and *err on failure. */
static uint32_t intern(struct ustacks *u, const struct gt_hdr *at, struct stack_ent *s,
		       struct module **mods, int *err)
{
	uint64_t h = hash__bytes(s->f, s->n * sizeof(s->f[0])) ^ hash__mix64((uint64_t)s->flags << 32 | s->n);
	struct stack_ent *e = hmap_get(&u->stacks, h, 0), *copy;
	void *old;

	if (e && e->n == s->n && e->flags == s->flags && !memcmp(e->f, s->f, s->n * sizeof(s->f[0])))
		return e->id;
	s->id = ++u->next_stack;
	u->c.interned++;
	for (uint16_t i = 0; i < s->n && !*err; i++)
		if (mods[i])
			*err = emit_symbol(u, at, mods[i], s->f[i].offset,
					   i > 0 || (s->flags & GT_STACK_AT_EXIT));
	if (!*err)
		*err = emit_stack(u, at, s);
	/* a hash taken already (by other frames) keeps its first stack */
	if (!e && !*err) {
		copy = malloc(sizeof(*copy));
		if (!copy || hmap_put(&u->stacks, h, 0, copy, &old)) {
			free(copy);
			*err = -ENOMEM;
			return 0;
		}
		*copy = *s;
	}
	return *err ? 0 : s->id;
}

/* The call's GT_REC_STACK_REF (at its entry's time, on its thread; at its
 * exit's for a stack taken there). */
static int emit_ref(struct ustacks *u, const struct gt_hdr *at, uint32_t id, uint32_t flags)
{
	struct gt_stack_ref ref;

	memset(&ref, 0, sizeof(ref));
	ref.hdr = *at;
	ref.hdr.type = GT_REC_STACK_REF;
	ref.hdr.size = sizeof(ref);
	ref.stack = id;
	ref.flags = flags;
	return u->emit(u->ctx, &ref.hdr);
}

/* A hot call's site: its native keys and its innermost Python frame. */
static uint64_t site_key(uint64_t caller, uint64_t site2, uint64_t pycode, uint32_t pyinstr)
{
	return hash__pair(hash__pair(caller, site2), hash__pair(pycode, pyinstr));
}

/* ---- Python frames --------------------------------------------------------- */

void ustacks__set_python(struct ustacks *u, struct pyconf *py)
{
	u->py = py;
}

/* A str BPF copied (kind bytes a character) as UTF-8 into out (NUL ended;
 * a NUL character becomes '?'); its length. */
static size_t utf8_of(const char *in, size_t bytes, unsigned kind, char *out, size_t cap)
{
	size_t o = 0;

	if (kind != 1 && kind != 2 && kind != 4) {
		snprintf(out, cap, "?");
		return 1;
	}
	for (size_t i = 0; i + kind <= bytes && o + 5 < cap; i += kind) {
		uint32_t c = 0;

		memcpy(&c, in + i, kind);
		if (!c)
			c = '?';
		if (c < 0x80) {
			out[o++] = (char)c;
		} else if (c < 0x800) {
			out[o++] = (char)(0xc0 | c >> 6);
			out[o++] = (char)(0x80 | (c & 63));
		} else if (c < 0x10000) {
			if (c >= 0xd800 && c < 0xe000)
				c = 0xfffd;	/* a lone surrogate */
			out[o++] = (char)(0xe0 | c >> 12);
			out[o++] = (char)(0x80 | ((c >> 6) & 63));
			out[o++] = (char)(0x80 | (c & 63));
		} else if (c < 0x110000) {
			out[o++] = (char)(0xf0 | c >> 18);
			out[o++] = (char)(0x80 | ((c >> 12) & 63));
			out[o++] = (char)(0x80 | ((c >> 6) & 63));
			out[o++] = (char)(0x80 | (c & 63));
		} else {
			out[o++] = '?';
		}
	}
	out[o] = 0;
	return o;
}

static int emit_func(struct ustacks *u, const struct gt_hdr *at, const struct pyfunc *f)
{
	struct gt_pyfunc *r = (void *)u->buf;
	size_t len = f->file_len + f->name_len;

	memset(r, 0, sizeof(*r));
	r->hdr.ts = at->ts;
	r->hdr.pid = at->pid;
	r->hdr.type = GT_REC_PYFUNC;
	r->hdr.size = (uint16_t)GT_REC_ALIGN(sizeof(*r) + len);
	r->id = f->id;
	r->firstlineno = f->firstlineno;
	r->file_len = (uint16_t)f->file_len;
	r->name_len = (uint16_t)f->name_len;
	memcpy(r->text, f->text, len);
	memset(r->text + len, 0, r->hdr.size - sizeof(*r) - len);
	return u->emit(u->ctx, &r->hdr);
}

int ustacks__on_pycode(struct ustacks *u, const struct gt_pycode *raw)
{
	char file[GT_PYCODE_FILE * 2 + 8], name[GT_PYCODE_NAME * 2 + 8];
	size_t fl, nl;
	struct pyfunc *f;
	struct pycode *c;
	uint64_t h;
	bool created;
	void *old;
	int err;

	if (raw->hdr.size < sizeof(*raw) || raw->file_len > GT_PYCODE_FILE || raw->name_len > GT_PYCODE_NAME ||
	    raw->lines_len > GT_PYCODE_LINES)
		return -EINVAL;
	u->c.py_codes++;
	/* a name cut at its start reads "...tail" */
	fl = (raw->flags & GT_PYCODE_FILE_CUT) ? (size_t)snprintf(file, sizeof(file), "...") : 0;
	fl += utf8_of(raw->file, raw->file_len, raw->file_kind, file + fl, sizeof(file) - fl);
	nl = utf8_of(raw->name, raw->name_len, raw->name_kind, name, sizeof(name));
	h = hash__bytes(file, fl) ^ hash__mix64(hash__bytes(name, nl) + raw->firstlineno);
	f = hmap_get_or_new(&u->funcs, h, 0, sizeof(*f), &created);
	if (!f)
		return -ENOMEM;
	if (created) {
		f->id = ++u->next_func;
		f->firstlineno = raw->firstlineno;
		f->file_len = fl + 1;
		f->name_len = nl + 1;
		f->text = malloc(fl + nl + 2);
		if (!f->text)
			return -ENOMEM;
		memcpy(f->text, file, fl + 1);
		memcpy(f->text + fl + 1, name, nl + 1);
		if ((err = emit_func(u, &raw->hdr, f)))
			return err;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->func = f->id;
	c->version = raw->version;
	c->firstlineno = raw->firstlineno;
	c->lines_len = raw->lines_len;
	c->lines = malloc(raw->lines_len ? raw->lines_len : 1);
	if (!c->lines) {
		free(c);
		return -ENOMEM;
	}
	memcpy(c->lines, raw->linetable, raw->lines_len);
	if (hmap_put(&u->codes, raw->code, raw->hdr.pid, c, &old)) {
		free(c->lines);
		free(c);
		return -ENOMEM;
	}
	if (old) {
		free(((struct pycode *)old)->lines);
		free(old);
	}
	return 0;
}

/* A Python frame of process pid as a stack frame; module 0 (no file) with
 * the code's address when its code object never came. */
static struct gt_stack_frame py_frame(struct ustacks *u, uint32_t pid, const struct gt_pyframe *pf)
{
	const struct pycode *c = hmap_get(&u->codes, pf->code, pid);
	uint32_t line;

	/* a frame BPF could not read the code or instruction of: its function
	 * when the code object came before, no line */
	if (c && pf->instr == 0xffffffffu && !(pf->line0 & ~GT_PYFRAME_ENTRY)) {
		u->c.py_no_line++;
		return (struct gt_stack_frame){ .module = GT_FRAME_PY | c->func, .offset = 0 };
	}
	if (!c || c->firstlineno != (pf->line0 & ~GT_PYFRAME_ENTRY)) {
		u->c.py_unknown++;
		return (struct gt_stack_frame){ .module = 0, .offset = pf->code };
	}
	line = pyconf__line(c->version, c->lines, c->lines_len, c->firstlineno, pf->instr);
	if (!line)
		u->c.py_no_line++;
	return (struct gt_stack_frame){ .module = GT_FRAME_PY | c->func, .offset = line };
}

/* Whether native frame i (a module's, not the first) runs the eval loop of
 * the interpreter: where a group of Python frames goes. */
static bool eval_frame(struct module *m, uint64_t off)
{
	uint64_t delta;
	const char *name;

	if (!m || !m->interp || !off)
		return false;
	if (!m->loaded) {
		uint8_t id[20], len;

		module_load(m, id, &len);
	}
	name = module_symbol(m, off - 1, &delta);
	return name && !strcmp(name, "_PyEval_EvalFrameDefault");
}

/* Puts the Python frames of raw among the native ones of s (mods[] their
 * modules): each run of the interpreter's own frames is replaced by the
 * Python frames its eval loop ran (a group ends at a frame a C function
 * called: GT_PYFRAME_ENTRY; on 3.10 every frame is a group); what the native
 * frames did not reach (a library without frame pointers) follows the last
 * of them, flagged. */
static void py_mix(struct ustacks *u, const struct gt_ustack *raw, struct stack_ent *s,
		   struct module **mods)
{
	struct gt_stack_frame out[FRAMES_MAX];
	struct module *omods[FRAMES_MAX];
	uint32_t npy = raw->npy > GT_PYSTACK_MAX ? GT_PYSTACK_MAX : raw->npy, p = 0, o = 0;
	bool per_frame = raw->pyversion == 0x030a;

	u->c.py_stacks++;
	s->flags |= GT_STACK_PYTHON | (raw->flags & (GT_STACK_PY_CUT | GT_STACK_PY_FAULT | GT_STACK_PY_MAIN |
						     GT_STACK_PY_SKIPPED));
	u->c.py_main += !!(raw->flags & GT_STACK_PY_MAIN);
	u->c.py_cut += !!(raw->flags & GT_STACK_PY_CUT);
	u->c.py_fault += !!(raw->flags & GT_STACK_PY_FAULT);
	for (uint16_t i = 0; i < s->n && o < FRAMES_MAX; i++) {
		if (!(mods[i] && mods[i]->interp)) {
			omods[o] = mods[i];
			out[o++] = s->f[i];
			continue;
		}
		if (i == 0 || !eval_frame(mods[i], s->f[i].offset))
			continue;	/* the interpreter's other frames: the Python ones say it */
		/* this eval loop's frames: up to the next that a C function called */
		while (p < npy && o < FRAMES_MAX) {
			bool entry = raw->py[p].line0 & GT_PYFRAME_ENTRY;

			omods[o] = NULL;
			out[o++] = py_frame(u, raw->hdr.pid, &raw->py[p++]);
			if (entry || per_frame)
				break;
		}
	}
	if (p < npy) {
		/* not reached by the native frames: after them */
		if (p == 0)
			s->flags |= GT_STACK_PY_AFTER;
		while (p < npy && o < FRAMES_MAX) {
			omods[o] = NULL;
			out[o++] = py_frame(u, raw->hdr.pid, &raw->py[p++]);
		}
	}
	memcpy(s->f, out, o * sizeof(out[0]));
	memcpy(mods, omods, o * sizeof(omods[0]));
	s->n = (uint16_t)o;
}

int ustacks__on_raw(struct ustacks *u, const struct gt_ustack *raw)
{
	struct stack_ent s = { 0 };
	struct module *mods[FRAMES_MAX] = { 0 };
	uint64_t ips[GT_USTACK_MAX + 1];
	struct pmaps *pm;
	bool created, reread = false;
	size_t n = raw->nframes;
	int err = 0;
	uint32_t id;

	if (raw->hdr.size < sizeof(*raw) || !n || n > GT_USTACK_MAX)
		return -EINVAL;
	u->c.stacks++;
	s.flags = raw->flags & (GT_STACK_CUT | GT_STACK_FAULT | GT_STACK_AT_EXIT);	/* SITE is the recorder's */
	u->c.cut += !!(s.flags & GT_STACK_CUT);
	u->c.fault += !!(s.flags & GT_STACK_FAULT);
	u->c.at_exit += !!(s.flags & GT_STACK_AT_EXIT);
	/* the caller the kernel's unwinder skipped at the probed entry */
	ips[0] = raw->ip[0];
	n = 1;
	if (raw->caller && !(raw->flags & GT_STACK_AT_EXIT) && (raw->nframes < 2 || raw->ip[1] != raw->caller)) {
		ips[n++] = raw->caller;
		s.flags |= GT_STACK_CALLER;
	}
	/* a zero return address ends what the unwinder found (a frame whose
	 * caller keeps no frame pointer) */
	for (size_t i = 1; i < raw->nframes && n < GT_USTACK_MAX + 1 && raw->ip[i]; i++)
		ips[n++] = raw->ip[i];
	pm = hmap_get_or_new(&u->procs, raw->hdr.pid, 0, sizeof(*pm), &created);
	if (!pm)
		return -ENOMEM;
	if (!pm->read_ns && (err = maps_read(u, raw->hdr.pid, pm)))
		return err;
	for (size_t i = 0; i < n; i++) {
		const struct map *mp = map_find(pm, ips[i]);

		/* a library loaded since: read again, once a stack; after a
		 * reading that did not help (JIT code), not for REREAD_NS */
		if (!mp && !reread && (!pm->miss_ns || now_ns() - pm->miss_ns >= REREAD_NS)) {
			reread = true;
			if ((err = maps_read(u, raw->hdr.pid, pm)))
				return err;
			mp = map_find(pm, ips[i]);
			pm->miss_ns = mp ? 0 : now_ns();
		}
		if (mp) {
			if (!mp->m->emitted && (err = emit_module(u, raw->hdr.pid, raw->hdr.ts, mp->m)))
				return err;
			mods[i] = mp->m;
			s.f[i] = (struct gt_stack_frame){ .module = mp->m->id,
							  .offset = ips[i] - mp->start + mp->pgoff };
		} else {
			u->c.unmapped++;
			s.f[i] = (struct gt_stack_frame){ .module = 0, .offset = ips[i] };
		}
	}
	s.n = (uint16_t)n;
	if (raw->pyversion && (raw->npy || (raw->flags & GT_STACK_PY_FAULT)))
		py_mix(u, raw, &s, mods);
	else if (pm->python)
		u->c.py_late += !raw->pyversion;
	id = intern(u, &raw->hdr, &s, mods, &err);
	if (err)
		return err;
	/* a hot call's site: later calls from it send only its keys */
	if (raw->flags & GT_STACK_SITE) {
		void *old;

		if (hmap_put(&u->sites, site_key(raw->caller, raw->site2, raw->npy ? raw->py[0].code : 0,
						 raw->npy ? raw->py[0].instr : 0),
			     raw->hdr.tid, (void *)(uintptr_t)id, &old))
			return -ENOMEM;
	}
	return emit_ref(u, &raw->hdr, id, (raw->flags & GT_STACK_AT_EXIT) ? GT_STACK_REF_EXIT : 0);
}

int ustacks__on_same(struct ustacks *u, const struct gt_ustack_same *same)
{
	uint32_t id = (uint32_t)(uintptr_t)hmap_get(&u->sites, site_key(same->caller, same->site2, same->pycode,
								       same->pyinstr),
						    same->hdr.tid);

	u->c.same++;
	if (!id) {
		u->c.same_unknown++;
		return 0;
	}
	return emit_ref(u, &same->hdr, id, 0);
}

void ustacks__forget(struct ustacks *u, uint32_t pid)
{
	struct pmaps *pm = hmap_del(&u->procs, pid, 0);

	if (pm) {
		free(pm->v);
		free(pm);
	}
}

const struct ustacks_counters *ustacks__counters(const struct ustacks *u)
{
	return &u->c;
}

static void pycode_free(void *v)
{
	free(((struct pycode *)v)->lines);
}

static void pyfunc_free(void *v)
{
	free(((struct pyfunc *)v)->text);
}

static void pmaps_free(void *v)
{
	free(((struct pmaps *)v)->v);
}

void ustacks__free(struct ustacks *u)
{
	if (!u)
		return;
	hmap_free_all(&u->procs, pmaps_free);
	hmap_free_all(&u->modules, module_free);
	hmap_free_all(&u->stacks, NULL);
	hmap_free_all(&u->codes, pycode_free);
	hmap_free_all(&u->funcs, pyfunc_free);
	/* values are markers and ids, not allocations */
	free(u->symbols.s);
	free(u->sites.s);
	free(u);
}
