// SPDX-License-Identifier: MIT
/*
 * The decoder's stack table (--stacks): GT_REC_STACK, _MODULE and _SYMBOL
 * kept by id, and each thread's GT_REC_STACK_REF held until its call's
 * entry (same thread, same time) takes it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "decode/decode_int.h"
#include "lib/hmap.h"

#define PENDING 256	/* threads whose reference waits for its entry: direct-mapped by tid */

struct pending {
	uint64_t ts;
	uint32_t pid, tid, stack;
	bool exit;		/* for the next exit (GT_STACK_REF_EXIT), not the next entry */
};

struct dec_stacks {
	struct hmap stacks;	/* (id, 0) -> struct gt_stack (a copy of the record) */
	struct hmap modules;	/* (id, 0) -> char * path */
	struct hmap symbols;	/* (offset, module) -> struct dsym */
	struct hmap funcs;	/* (id, 0) -> struct dfunc: Python functions */
	struct pending pend[PENDING];
};

struct dsym {
	uint64_t delta;
	const char *shown;	/* demangled (the decoder's cache keeps it), else name */
	char name[];
};

struct dfunc {
	const char *name;	/* in text, after the file */
	char text[];		/* the file NUL the name NUL */
};

static struct dec_stacks *table(struct gt_decoder *d)
{
	if (!d->stacks)
		d->stacks = calloc(1, sizeof(*d->stacks));
	return d->stacks;
}

/* rec's variable part, whole: its length n within the record, NUL-ended */
static char *copy_str(const struct gt_hdr *rec, const char *s, size_t n)
{
	size_t max = (const char *)rec + rec->size - s;

	if (n > max)
		n = max;
	return strndup(s, n);
}

int dec__on_stack_rec(struct gt_decoder *d, const struct gt_hdr *rec)
{
	struct dec_stacks *t = table(d);
	void *old = NULL;
	int err = 0;

	if (!t)
		return -ENOMEM;
	switch (rec->type) {
	case GT_REC_STACK_REF: {
		const struct gt_stack_ref *r = (const void *)rec;
		struct pending *p = &t->pend[rec->tid % PENDING];

		*p = (struct pending){ rec->ts, rec->pid, rec->tid, r->stack, r->flags & GT_STACK_REF_EXIT };
		return 0;
	}
	case GT_REC_STACK: {
		const struct gt_stack *s = (const void *)rec;
		struct gt_stack *c;

		if (sizeof(*s) + (size_t)s->nframes * sizeof(s->frames[0]) > rec->size || !s->id) {
			d->stats.unknown_records++;
			return 0;
		}
		c = malloc(rec->size);
		if (!c)
			return -ENOMEM;
		memcpy(c, rec, rec->size);
		err = hmap_put(&t->stacks, s->id, 0, c, &old);
		break;
	}
	case GT_REC_MODULE: {
		const struct gt_module *m = (const void *)rec;
		char *path = copy_str(rec, m->path, m->len);

		if (!path)
			return -ENOMEM;
		err = hmap_put(&t->modules, m->id, 0, path, &old);
		break;
	}
	case GT_REC_PYFUNC: {
		const struct gt_pyfunc *p = (const void *)rec;
		size_t max = rec->size - sizeof(*p), fl = p->file_len, nl = p->name_len;
		struct dfunc *y;

		if (!p->id || fl > max || nl > max - fl) {
			d->stats.unknown_records++;
			return 0;
		}
		y = malloc(sizeof(*y) + fl + nl + 2);
		if (!y)
			return -ENOMEM;
		/* each ends at its length whatever the record holds */
		memcpy(y->text, p->text, fl);
		y->text[fl] = 0;
		y->name = y->text + strlen(y->text) + 1;
		memcpy((char *)y->name, p->text + fl, nl);
		((char *)y->name)[nl] = 0;
		err = hmap_put(&t->funcs, p->id, 0, y, &old);
		break;
	}
	case GT_REC_SYMBOL: {
		const struct gt_symbol *s = (const void *)rec;
		size_t max = rec->size - sizeof(*s), n = s->len > max ? max : s->len;
		struct dsym *y = malloc(sizeof(*y) + n + 1);

		if (!y)
			return -ENOMEM;
		y->delta = s->delta;
		memcpy(y->name, s->name, n);
		y->name[n] = 0;
		y->shown = gt_decoder__demangle(d, y->name);
		if (!y->shown)
			y->shown = y->name;
		err = hmap_put(&t->symbols, s->offset, s->module, y, &old);
		break;
	}
	}
	free(old);	/* a repeated id: the last one stands */
	return err;
}

static uint32_t stack_taken(struct gt_decoder *d, const struct gt_hdr *rec, bool exit)
{
	struct pending *p;
	uint32_t id;

	if (!d->stacks)
		return 0;
	p = &d->stacks->pend[rec->tid % PENDING];
	if (!p->stack || p->tid != rec->tid || p->pid != rec->pid || p->ts != rec->ts || p->exit != exit)
		return 0;
	id = p->stack;
	p->stack = 0;
	return id;
}

uint32_t dec__stack_of_entry(struct gt_decoder *d, const struct gt_hdr *rec)
{
	return stack_taken(d, rec, false);
}

uint32_t dec__stack_of_exit(struct gt_decoder *d, const struct gt_hdr *rec)
{
	return stack_taken(d, rec, true);
}

size_t gt_decoder__stack(const struct gt_decoder *d, uint32_t id, uint16_t *flags)
{
	const struct gt_stack *s = d->stacks ? hmap_get(&d->stacks->stacks, id, 0) : NULL;

	if (flags)
		*flags = s ? s->flags : 0;
	return s ? s->nframes : 0;
}

bool gt_decoder__frame(const struct gt_decoder *d, uint32_t id, size_t i, struct gt_frame *f)
{
	const struct gt_stack *s = d->stacks ? hmap_get(&d->stacks->stacks, id, 0) : NULL;
	const struct gt_stack_frame *fr;
	const struct dsym *y;

	if (!s || i >= s->nframes)
		return false;
	fr = &s->frames[i];
	*f = (struct gt_frame){ .offset = fr->offset };
	if (!fr->module)
		return true;
	if (fr->module & GT_FRAME_PY) {
		const struct dfunc *y = hmap_get(&d->stacks->funcs, fr->module & ~GT_FRAME_PY, 0);

		f->python = true;
		f->module = y ? y->text : "?";
		f->symbol = y ? y->name : "?";
		return true;
	}
	f->module = hmap_get(&d->stacks->modules, fr->module, 0);
	y = hmap_get(&d->stacks->symbols, fr->offset, fr->module);
	if (y) {
		f->symbol = y->shown;
		f->delta = y->delta;
	}
	return true;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

const char *gt_frame__str(const struct gt_frame *f, char *buf, size_t len)
{
	if (f->python && f->offset)
		snprintf(buf, len, "%s (%s:%llu)", f->symbol, f->module, (unsigned long long)f->offset);
	else if (f->python)
		snprintf(buf, len, "%s (%s)", f->symbol, f->module);
	else if (f->symbol && f->module)
		snprintf(buf, len, "%s+0x%llx (%s)", f->symbol, (unsigned long long)f->delta,
			 base_name(f->module));
	else if (f->module)
		snprintf(buf, len, "%s+0x%llx", base_name(f->module), (unsigned long long)f->offset);
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)f->offset);
	return buf;
}

/* A library of CUDA's own (or of a framework's CUDA layer): a call site is
 * the first frame past them. */
static bool cuda_library(const char *path)
{
	static const char *const libs[] = { "libcuda.", "libcudart", "libcublas", "libcudnn", "libnccl",
					    "libcufft", "libcurand", "libcusparse", "libcusolver",
					    "libnvrtc", "libnvJitLink", "libcupti", NULL };
	const char *b = base_name(path);

	for (int i = 0; libs[i]; i++)
		if (!strncmp(b, libs[i], strlen(libs[i])))
			return true;
	return false;
}

/* A Python file of a library (the standard one, an installed package) or
 * of the interpreter itself, not the program's own. */
static bool python_library(const char *file)
{
	return strstr(file, "/site-packages/") || strstr(file, "/dist-packages/") ||
	       strstr(file, "/lib/python3") || !strncmp(file, "<frozen", 7);
}

bool gt_decoder__call_site(const struct gt_decoder *d, uint32_t id, struct gt_frame *f)
{
	uint16_t flags;
	size_t n = gt_decoder__stack(d, id, &flags);

	/* with Python frames: the program's innermost line, else the
	 * innermost Python line (a library's own) */
	if (flags & GT_STACK_PYTHON) {
		struct gt_frame first = { 0 };

		for (size_t i = 0; i < n; i++) {
			if (!gt_decoder__frame(d, id, i, f) || !f->python)
				continue;
			if (!python_library(f->module))
				return true;
			if (!first.python)
				first = *f;
		}
		if (first.python) {
			*f = first;
			return true;
		}
	}
	/* frame 0 is the probed function, except in a stack taken at a failed
	 * call's exit: there it is the caller */
	size_t first = (flags & GT_STACK_AT_EXIT) ? 0 : 1;

	for (size_t i = first; i < n; i++)
		if (gt_decoder__frame(d, id, i, f) && (!f->module || !cuda_library(f->module)))
			return true;
	return n > first && gt_decoder__frame(d, id, first, f);
}

uint64_t gt_frame__key(const struct gt_frame *f)
{
	/* the decoder keeps one path per module: its address names the file */
	return hash__pair(f->offset, (uint64_t)(uintptr_t)f->module);
}

void dec__stacks_free(struct gt_decoder *d)
{
	if (!d->stacks)
		return;
	hmap_free_all(&d->stacks->stacks, NULL);
	hmap_free_all(&d->stacks->modules, NULL);
	hmap_free_all(&d->stacks->symbols, NULL);
	hmap_free_all(&d->stacks->funcs, NULL);
	free(d->stacks);
	d->stacks = NULL;
}
