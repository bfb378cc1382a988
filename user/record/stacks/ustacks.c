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
 * read leaves frames in no file, counted. A file's build id, segments and
 * symbols are read in ustacks_sym.c; the Python frames are put in by
 * ustacks_py.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/hash.h"
#include "lib/hmap.h"
#include "lib/vec.h"
#include "record/stacks/pyconf.h"
#include "record/stacks/ustacks.h"
#include "record/stacks/ustacks_int.h"
#include "lib/cmp.h"

#define REREAD_NS	100000000ull	/* a process' maps read again, after a reading that
					 * did not have an address, at most this often */

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
	ustacks_sym__load(m, r->build_id, &r->build_id_len);
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
	m->dev = dev;
	m->ino = ino;
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
	name = ustacks_sym__symbol(m, ret && off ? off - 1 : off, &delta);
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
		ustacks_py__mix(u, raw, &s, mods);
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
	hmap_free_all(&u->modules, ustacks_sym__free);
	hmap_free_all(&u->stacks, NULL);
	hmap_free_all(&u->codes, pycode_free);
	hmap_free_all(&u->funcs, pyfunc_free);
	/* values are markers and ids, not allocations */
	free(u->symbols.s);
	free(u->sites.s);
	free(u);
}
