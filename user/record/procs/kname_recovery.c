// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include "format/api.h"
#include "record/procs/kname_recovery.h"
#include "lib/demangle.h"
#include "lib/log.h"
#include "lib/u64map.h"

/* a recovered name is checked against the longest string a record carries */
_Static_assert(GT_SYMBOL_NAME_MAX == GT_STR_MAX, "symbol name limit is not the record string limit");

/* value of `known` for a handle already looked at that has no usable name */
#define SEEN_NO_NAME 1ull

struct kernel_names {
	kernel_names_emit_fn emit;
	kernel_names_read_fn read;
	void *ctx;
	struct u64map known;	/* (pid gen, handle) -> char * name, or SEEN_NO_NAME */
	struct u64map pending;	/* (tid, api) -> handle argument of a call in flight */
	struct u64map pending_str;/* (tid, api) -> char * name argument of a lookup in flight */
	struct u64map gen;	/* pid -> generation, bumped when the process exits */
	uint64_t recovered, rejected, verified, mismatch;
	kernel_names_learned_fn learned;	/* kernel_names__on_learn, NULL = none */
};

struct kernel_names *kernel_names__new(kernel_names_emit_fn emit, kernel_names_read_fn read,
				       void *ctx)
{
	struct kernel_names *kn = malloc(sizeof(*kn));

	if (kn)
		*kn = (struct kernel_names){ .emit = emit, .read = read, .ctx = ctx };
	return kn;
}

long kernel_names__read_process(void *ctx, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	(void)ctx;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	return n < 0 ? -errno : n;
}

static uint64_t handle_key(struct kernel_names *kn, uint32_t pid, uint64_t handle)
{
	uint64_t *g = u64map__get(&kn->gen, (uint64_t)pid + 1);

	return u64map__key2(pid, handle ^ (g ? *g << 48 : 0));
}

/* Reads the mangled name the driver keeps for a function or kernel handle.
 * Reads page by page so a name near the end of a mapping is still found. */
static int read_driver_name(struct kernel_names *kn, uint32_t pid, uint64_t handle, char *buf,
			    size_t len)
{
	uint64_t p;
	size_t got = 0;

	if (kn->read(kn->ctx, pid, handle + 8, &p, sizeof(p)) != sizeof(p) || !p)
		return -EFAULT;
	while (got < len - 1) {
		size_t want = 4096 - ((p + got) & 4095);
		long n;

		if (want > len - 1 - got)
			want = len - 1 - got;
		n = kn->read(kn->ctx, pid, p + got, buf + got, want);
		if (n <= 0)
			break;
		if (memchr(buf + got, 0, n))
			return 0;
		got += n;
	}
	return -ENAMETOOLONG;
}

static void set_known(struct kernel_names *kn, uint32_t pid, uint64_t handle, const char *name)
{
	uint64_t key = handle_key(kn, pid, handle), *old = u64map__get(&kn->known, key);
	char *dup = name ? strdup(name) : NULL;

	if (old && *old != SEEN_NO_NAME)
		free((char *)(uintptr_t)*old);
	u64map__set(&kn->known, key, dup ? (uint64_t)(uintptr_t)dup : SEEN_NO_NAME);
}

/* Checks the driver layout: the name read from the handle's structure
 * (buf) against the name the program itself looked the handle up with. */
static void verify(struct kernel_names *kn, uint64_t handle, const char *name, const char *buf)
{
	if (!strcmp(buf, name)) {
		kn->verified++;
		return;
	}
	if (!kn->mismatch++)
		pr_verbose("kernel name layout check failed for handle 0x%llx (%s vs %s): "
			   "names of kernels loaded before tracing will be placeholders",
			   (unsigned long long)handle, name, buf);
}

static void learn(struct kernel_names *kn, const struct gt_hdr *h, uint64_t handle, const char *name)
{
	if (!handle || !name || !name[0])
		return;
	set_known(kn, h->pid, handle, name);
	if (kn->learned)
		kn->learned(kn->ctx, h, handle, name);
}

void kernel_names__on_learn(struct kernel_names *kn, kernel_names_learned_fn fn)
{
	kn->learned = fn;
}

static const char *known_name(struct kernel_names *kn, uint32_t pid, uint64_t handle)
{
	uint64_t *v = u64map__get(&kn->known, handle_key(kn, pid, handle));

	return v && *v != SEEN_NO_NAME ? (const char *)(uintptr_t)*v : NULL;
}

/* A handle seen launched for the first time, with the name BPF read from its
 * driver structure (raw, may be NULL: then read it from the process now).
 * A name the program looked up itself wins and serves as the layout check;
 * otherwise a recovered name is written if it passes the checks. */
static int recover(struct kernel_names *kn, const struct gt_hdr *at, uint64_t handle,
		   const char *raw)
{
	struct {
		struct gt_name n;
		char str[GT_STR_MAX];
	} rec;
	uint32_t pid = at->pid;
	const char *looked_up;
	size_t len;

	if (!handle)
		return 0;
	if (raw) {
		snprintf(rec.str, sizeof(rec.str), "%s", raw);
	} else if (read_driver_name(kn, pid, handle, rec.str, sizeof(rec.str))) {
		rec.str[0] = 0;
	}
	looked_up = known_name(kn, pid, handle);
	if (looked_up) {
		if (rec.str[0])
			verify(kn, handle, looked_up, rec.str);
		return 0;
	}
	if (kn->mismatch || !gt_symbol_name_valid(rec.str, sizeof(rec.str))) {
		kn->rejected++;
		set_known(kn, pid, handle, NULL);
		return 0;
	}
	kn->recovered++;
	set_known(kn, pid, handle, rec.str);
	len = strlen(rec.str) + 1;
	memset(&rec.n, 0, sizeof(rec.n));
	rec.n.hdr = *at;
	rec.n.hdr.type = GT_REC_NAME;
	rec.n.hdr.api = 0;
	rec.n.hdr.size = GT_REC_ALIGN(sizeof(rec.n) + len);
	rec.n.key = handle;
	rec.n.kind = GT_NAME_KERNEL_MEM;
	rec.n.len = len;
	memset(rec.str + len, 0, rec.n.hdr.size - sizeof(rec.n) - len);
	return kn->emit(kn->ctx, &rec.n.hdr);
}

static uint64_t pending_key(const struct gt_hdr *h)
{
	return u64map__key2(h->tid, h->api);
}

static void pending_set(struct u64map *m, const struct gt_hdr *h, uint64_t v)
{
	u64map__set(m, pending_key(h), v);
}

static uint64_t pending_take(struct u64map *m, const struct gt_hdr *h)
{
	uint64_t *v = u64map__get(m, pending_key(h)), r;

	if (!v)
		return 0;
	r = *v;
	*v = 0;
	return r;
}

int kernel_names__on_record(struct kernel_names *kn, const struct gt_hdr *h)
{
	static const struct gt_api_info none = { .cls = GT_CLS_NONE, .a = GT_NA };
	const struct gt_api_info *ai = gt_api__info(h->api) ?: &none;
	const struct gt_ret *r = (const void *)h;
	uint64_t v;
	char *s;

	switch (h->type) {
	case GT_REC_LAUNCH: {
		const struct gt_launch *l = (const void *)h;

		/* normally BPF sent the name first; not when its LRU forgot the
		 * handle or the pid was reused */
		if (l->func && !u64map__get(&kn->known, handle_key(kn, h->pid, l->func)))
			return recover(kn, h, l->func, NULL);
		return 0;
	}
	case GT_REC_NAME: {
		const struct gt_name *nm = (const void *)h;

		if (!(nm->flags & GT_NAME_F_RAW) || nm->kind != GT_NAME_KERNEL_MEM)
			return 0;
		if (u64map__get(&kn->known, handle_key(kn, h->pid, nm->key)) &&
		    !known_name(kn, h->pid, nm->key))
			return 0;	/* already looked at, nothing usable */
		return recover(kn, h, nm->key, nm->len && !nm->str[nm->len - 1] ? nm->str : NULL);
	}
	case GT_REC_EXIT:
		kernel_names__forget_pid(kn, h->pid);
		return 0;
	case GT_REC_CALL_STR:
		if (ai->cls == GT_CLS_GET_FUNC) {
			const struct gt_call_str *c = (const void *)h;

			free((char *)(uintptr_t)pending_take(&kn->pending_str, h));
			if (c->len)
				pending_set(&kn->pending_str, h,
					    (uint64_t)(uintptr_t)strndup(c->str, c->len));
		}
		return 0;
	case GT_REC_CALL:
		if ((ai->cls == GT_CLS_KERNEL_FUNC || ai->cls == GT_CLS_FUNC_NAME) && ai->a >= 0)
			pending_set(&kn->pending, h, ((const struct gt_call *)h)->args[ai->a]);
		return 0;
	case GT_REC_RET:
		if (ai->cls == GT_CLS_GET_FUNC) {
			s = (char *)(uintptr_t)pending_take(&kn->pending_str, h);
			if (s && r->ret == 0 && (r->flags & GT_RET_OUT))
				learn(kn, h, r->out, s);
			free(s);
		} else if (ai->cls == GT_CLS_KERNEL_FUNC) {
			v = pending_take(&kn->pending, h);
			if (v && r->ret == 0 && (r->flags & GT_RET_OUT)) {
				const char *kname = known_name(kn, h->pid, v);
				char *copy = kname ? strdup(kname) : NULL;

				learn(kn, h, r->out, copy);
				free(copy);
			}
		}
		return 0;
	case GT_REC_RET_STR: {
		const struct gt_ret_str *rs = (const void *)h;

		v = pending_take(&kn->pending, h);
		if (ai->cls == GT_CLS_FUNC_NAME && v && rs->ret == 0 && rs->len)
			learn(kn, h, v, rs->str);
		return 0;
	}
	default:
		return 0;
	}
}

void kernel_names__forget_pid(struct kernel_names *kn, uint32_t pid)
{
	uint64_t *g = u64map__get(&kn->gen, (uint64_t)pid + 1);

	u64map__set(&kn->gen, (uint64_t)pid + 1, g ? *g + 1 : 1);
}

void kernel_names__counters(const struct kernel_names *kn, struct gt_counters *c)
{
	c->names_mem = kn->recovered;
	c->names_mem_rejected = kn->rejected;
	c->names_mem_verified = kn->verified;
	c->names_mem_mismatch = kn->mismatch;
}

uint64_t kernel_names__checked(const struct kernel_names *kn)
{
	return kn->mismatch || kn->rejected ? 0 : kn->verified + kn->recovered;
}

void kernel_names__free(struct kernel_names *kn)
{
	size_t i;

	if (!kn)
		return;
	for (i = 0; i < kn->known.cap; i++) {
		if (kn->known.keys[i] && kn->known.vals[i] != SEEN_NO_NAME)
			free((char *)(uintptr_t)kn->known.vals[i]);
	}
	for (i = 0; i < kn->pending_str.cap; i++)
		free((char *)(uintptr_t)kn->pending_str.vals[i]);
	u64map__free(&kn->known);
	u64map__free(&kn->pending);
	u64map__free(&kn->pending_str);
	u64map__free(&kn->gen);
	free(kn);
}
