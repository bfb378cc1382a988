// SPDX-License-Identifier: MIT
/*
 * The decoder's names: kernel names by (handle, pid), process and thread
 * names, and the names of GPU kernel records and demangle calls.  The
 * pairing of calls and the decoding of arguments are in decode.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "decode/decode_int.h"

/* ---- kernel names ------------------------------------------------------- */

struct proc *dec__proc(struct gt_decoder *d, uint32_t pid, bool create)
{
	struct proc *p = hmap_get(&d->procs, pid, 0);
	void *old;

	if (p || !create)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (hmap_put(&d->procs, pid, 0, p, &old)) {
		free(p);
		return NULL;
	}
	return p;
}

/* Binds (pid, handle) to k, taking over the caller's reference. */
int dec__kernel_bind(struct gt_decoder *d, uint32_t pid, uint64_t handle, struct kname *k)
{
	struct proc *p = dec__proc(d, pid, true);
	void *old;

	if (!p || hmap_put(&d->kernels, handle, pid, k, &old)) {
		kname_table__put(&d->names, k);
		return -ENOMEM;
	}
	if (old)
		kname_table__put(&d->names, old);
	else
		p->nkernels++;
	return 0;
}

int dec__kernel_learn(struct gt_decoder *d, uint32_t pid, uint64_t handle,
		      const char *s, size_t n)
{
	struct kname *k;

	if (!n)
		return 0;
	k = kname_table__get(&d->names, s, n);
	if (!k)
		return -ENOMEM;
	return dec__kernel_bind(d, pid, handle, k);
}

/* Forgets the kernels of a process that exited or exec'd: its handles mean
 * nothing any more, and long traces must not keep every pid's names. */
static void kernels_forget(struct gt_decoder *d, uint32_t pid)
{
	struct proc *p = dec__proc(d, pid, false);
	struct hmap *m = &d->kernels;
	uint32_t i = 0;

	if (!p || !p->nkernels)
		return;
	while (i < m->cap && p->nkernels) {
		if (m->s[i].used && m->s[i].k2 == pid) {
			kname_table__put(&d->names, m->s[i].v);
			/* The shift may pull a later entry into slot i: look
			 * again.  Entries it moves across the wrap land in
			 * slots already scanned, which hold no match any more. */
			hmap_del_at(m, i);
			p->nkernels--;
			continue;
		}
		i++;
	}
}

static void hex_u64(char *out, const char *prefix, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[16];
	int n = 0;

	while (*prefix)
		*out++ = *prefix++;
	do {
		tmp[n++] = digits[v & 0xf];
		v >>= 4;
	} while (v);
	while (n)
		*out++ = tmp[--n];
	*out = '\0';
}

void dec__launch_name(struct gt_decoder *d, struct gt_callrec *c)
{
	struct kname *k = hmap_get(&d->kernels, c->handle, c->pid);

	if (k) {
		c->kernel = kname__demangled(k);
		c->mangled = k->mangled;
		return;
	}
	hex_u64(d->placeholder, "unknown_kernel_0x", c->handle);
	c->kernel = d->placeholder;
	c->mangled = NULL;
	d->stats.placeholder_names++;
}

/* ---- process and thread names ------------------------------------------- */

/* Keeps the newest name; on a tie the command line (prio 2) beats comm. */
static int proc_name_set(struct gt_decoder *d, uint32_t pid, const char *s, size_t n,
			 uint64_t ts, uint8_t prio)
{
	struct proc *p = dec__proc(d, pid, true);
	char *name;

	if (!p)
		return -ENOMEM;
	if (!n)
		return 0;
	if (p->name && (ts < p->name_ts || (ts == p->name_ts && prio < p->name_prio)))
		return 0;
	name = strndup(s, n);
	if (!name)
		return -ENOMEM;
	free(p->name);
	p->name = name;
	p->name_ts = ts;
	p->name_prio = prio;
	return 0;
}

static int thread_name_set(struct gt_decoder *d, uint32_t tid, const char *s, size_t n)
{
	char *name = strndup(s, n);
	void *old;

	if (!name)
		return -ENOMEM;
	if (hmap_put(&d->thread_names, tid, 0, name, &old)) {
		free(name);
		return -ENOMEM;
	}
	free(old);
	return 0;
}

int dec__on_name(struct gt_decoder *d, const struct gt_hdr *rec)
{
	const struct gt_name *nm = (const void *)rec;
	size_t n = gt_rec_strlen(rec, nm->str, nm->len);

	switch (nm->kind) {
	case GT_NAME_KERNEL:	/* a naming call's name, kept by the daemon: as good as the call */
		return dec__kernel_learn(d, rec->pid, nm->key, nm->str, n);
	case GT_NAME_KERNEL_MEM:
		/* a recovered name never overrides what a naming call said */
		if (hmap_get(&d->kernels, nm->key, rec->pid))
			return 0;
		return dec__kernel_learn(d, rec->pid, nm->key, nm->str, n);
	case GT_NAME_PROCESS:
		return proc_name_set(d, (uint32_t)nm->key, nm->str, n, rec->ts, 2);
	case GT_NAME_THREAD:
		return n ? thread_name_set(d, (uint32_t)nm->key, nm->str, n) : 0;
	default:
		return 0;
	}
}

int dec__on_proc(struct gt_decoder *d, const struct gt_hdr *rec)
{
	const struct gt_proc_evt *pe = (const void *)rec;
	size_t n = strnlen(pe->comm, sizeof(pe->comm));
	struct proc *parent, *p;
	int rc = 0;

	switch (rec->type) {
	case GT_REC_EXEC:
		/* a new program: the old image's calls and handles are gone */
		rc = dec__flush_pid(d, rec->pid);
		kernels_forget(d, rec->pid);
		dec__devices_forget(d, rec->pid);
		dec__nccl_forget(d, rec->pid);
		if (!rc)
			rc = proc_name_set(d, rec->pid, pe->comm, n, rec->ts, 1);
		break;
	case GT_REC_FORK:
		/* the child runs the parent's program until it execs */
		p = dec__proc(d, rec->pid, false);
		if (p && p->name)
			break;
		parent = dec__proc(d, pe->ppid, false);
		if (parent && parent->name)
			rc = proc_name_set(d, rec->pid, parent->name, strlen(parent->name),
					   rec->ts, parent->name_prio);
		else
			rc = proc_name_set(d, rec->pid, pe->comm, n, rec->ts, 1);
		break;
	case GT_REC_EXIT:
		rc = dec__flush_pid(d, rec->pid);
		break;
	case GT_REC_PROC_INFO:
		/* a process started before the recorder: its comm, unless the
		 * command line is known already */
		p = dec__proc(d, rec->pid, false);
		if (!p || !p->name)
			rc = proc_name_set(d, rec->pid, pe->comm, n, rec->ts, 1);
		break;
	}
	if (!rc && pe->cgroup && (p = dec__proc(d, rec->pid, true)))
		p->cgroup = pe->cgroup;
	if (!rc && d->on_other)
		rc = d->on_other(d->ctx, rec);
	/* after on_other, which may still want the names */
	if (rec->type == GT_REC_EXIT) {
		kernels_forget(d, rec->pid);
		dec__devices_forget(d, rec->pid);
		dec__nccl_forget(d, rec->pid);
	}
	return rc;
}

const char *gt_decoder__process_name(const struct gt_decoder *d, uint32_t pid)
{
	const struct proc *p = hmap_get(&d->procs, pid, 0);

	return p ? p->name : NULL;
}

const char *gt_decoder__process_cmdline(const struct gt_decoder *d, uint32_t pid)
{
	const struct proc *p = hmap_get(&d->procs, pid, 0);

	return p && p->name_prio == 2 ? p->name : NULL;
}

uint64_t gt_decoder__process_cgroup(const struct gt_decoder *d, uint32_t pid)
{
	const struct proc *p = hmap_get(&d->procs, pid, 0);

	return p ? p->cgroup : 0;
}

const char *gt_decoder__thread_name(const struct gt_decoder *d, uint32_t tid)
{
	return hmap_get(&d->thread_names, tid, 0);
}

/* Interns n bytes of s in the GPU name table, keeping one reference per
 * name however often it is asked for; NULL when out of memory. */
static struct kname *gpu_name(struct gt_decoder *d, const char *s, size_t n)
{
	struct kname *k = kname_table__get(&d->gpu_names, s, n);

	/* a name seen before came back with one more reference: drop it */
	if (k && k->refs > 1)
		kname_table__put(&d->gpu_names, k);
	return k;
}

const char *gt_decoder__demangle(struct gt_decoder *d, const char *mangled)
{
	struct kname *k;

	if (!mangled)
		return NULL;
	k = gpu_name(d, mangled, strnlen(mangled, GT_STR_MAX - 1));
	return k ? kname__demangled(k) : mangled;
}

const char *gt_decoder__gpu_kernel_name(struct gt_decoder *d, const struct gt_gpu_kernel *gk,
					const char **mangled)
{
	size_t n = gk->len ? gt_rec_strlen(&gk->hdr, gk->name, gk->len) : 0;
	struct kname *k;

	*mangled = NULL;
	if (!n)
		return "unknown_kernel";
	k = gpu_name(d, gk->name, n);
	if (!k)
		return "unknown_kernel";
	*mangled = k->mangled;
	return kname__demangled(k);
}
