// SPDX-License-Identifier: MIT
/*
 * The Python frames of the stacks (ustacks_int.h): the code objects BPF sends
 * once, their functions (file, name and first line, as UTF-8) interned and
 * written as GT_REC_PYFUNC records, and a stack's Python frames put among its
 * native ones in place of the interpreter's eval loop, each with its line
 * from its code object's line table (pyconf__line).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hash.h"
#include "lib/hmap.h"
#include "record/stacks/pyconf.h"
#include "record/stacks/ustacks_int.h"

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

		ustacks_sym__load(m, id, &len);
	}
	name = ustacks_sym__symbol(m, off - 1, &delta);
	return name && !strcmp(name, "_PyEval_EvalFrameDefault");
}

/* Puts the Python frames of raw among the native ones of s (mods[] their
 * modules): each run of the interpreter's own frames is replaced by the
 * Python frames its eval loop ran (a group ends at a frame a C function
 * called: GT_PYFRAME_ENTRY; on 3.10 every frame is a group); what the native
 * frames did not reach (a library without frame pointers) follows the last
 * of them, flagged. */
void ustacks_py__mix(struct ustacks *u, const struct gt_ustack *raw, struct stack_ent *s,
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
