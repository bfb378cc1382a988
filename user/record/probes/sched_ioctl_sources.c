// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "ioctl.skel.h"
#include "ioctl_fentry.skel.h"
#include "record/probes/sched_ioctl_sources.h"
#include "record/probes/shared_maps.h"
#include "lib/log.h"
#include "sched.skel.h"

#define MAX_LINKS 8

struct kernel_sources {
	struct ioctl_bpf *ioctl;
	struct ioctl_fentry_bpf *fentry;
	struct sched_bpf *sched;
	struct bpf_link *links[MAX_LINKS];
	int nlinks;
	enum gt_ioctl_rung rung;
};

#define SET_MAJORS(skel, o)                                                            \
	do {                                                                           \
		size_t i_;                                                             \
		for (i_ = 0; i_ < (o)->nmajors && i_ < 8; i_++)                        \
			(skel)->rodata->majors[i_] = (o)->majors[i_];                  \
		(skel)->rodata->nmajors = i_;                                          \
		(skel)->rodata->frontend_major = (o)->frontend_major;                  \
	} while (0)

static int add_link(struct kernel_sources *ks, struct bpf_link *l)
{
	if (!l)
		return -errno;
	if (ks->nlinks >= MAX_LINKS) {
		bpf_link__destroy(l);
		return -E2BIG;
	}
	ks->links[ks->nlinks++] = l;
	return 0;
}

static void drop_links(struct kernel_sources *ks, int keep)
{
	while (ks->nlinks > keep)
		bpf_link__destroy(ks->links[--ks->nlinks]);
}

static int try_kprobe(struct kernel_sources *ks, const struct ioctl_caps *c)
{
	const char *fns[2] = { c->nv_sym ? GT_NV_IOCTL_FN : NULL, c->uvm_sym ? GT_UVM_IOCTL_FN : NULL };
	int i, keep = ks->nlinks, err = -ENOENT;

	for (i = 0; i < 2; i++) {
		if (!fns[i])
			continue;
		err = add_link(ks, bpf_program__attach_kprobe(ks->ioctl->progs.ioctl_kprobe, false, fns[i]));
		if (!err)
			err = add_link(ks, bpf_program__attach_kprobe(ks->ioctl->progs.ioctl_kretprobe, true,
								       fns[i]));
		if (err)
			break;
	}
	if (err) {
		pr_verbose("ioctl rung kprobe: %s; trying the next", strerror(-err));
		drop_links(ks, keep);
	}
	return err;
}

static int try_fentry(struct kernel_sources *ks, const struct kernel_sources_opts *o,
		      const struct ioctl_caps *c)
{
	struct ioctl_fentry_bpf *f = ioctl_fentry_bpf__open();
	bool nv = c->nv_sym && c->nv_btf, uvm = c->uvm_sym && c->uvm_btf;
	int err, keep = ks->nlinks;

	if (!f)
		return -errno;
	err = SHARE_MAPS(f, o);
	SET_MAJORS(f, o);
	bpf_program__set_autoload(f->progs.nv_ioctl_entry, nv);
	bpf_program__set_autoload(f->progs.nv_ioctl_exit, nv);
	bpf_program__set_autoload(f->progs.uvm_ioctl_entry, uvm);
	bpf_program__set_autoload(f->progs.uvm_ioctl_exit, uvm);
	if (!err)
		err = ioctl_fentry_bpf__load(f);
	if (!err && nv) {
		err = add_link(ks, bpf_program__attach(f->progs.nv_ioctl_entry));
		if (!err)
			err = add_link(ks, bpf_program__attach(f->progs.nv_ioctl_exit));
	}
	if (!err && uvm) {
		err = add_link(ks, bpf_program__attach(f->progs.uvm_ioctl_entry));
		if (!err)
			err = add_link(ks, bpf_program__attach(f->progs.uvm_ioctl_exit));
	}
	if (err) {
		pr_verbose("ioctl rung fentry: %s; trying the next", strerror(-err));
		drop_links(ks, keep);
		ioctl_fentry_bpf__destroy(f);
		return err;
	}
	ks->fentry = f;
	return 0;
}

static int try_syscall(struct kernel_sources *ks, const struct ioctl_caps *c)
{
	struct ioctl_bpf *s = ks->ioctl;
	int err, keep = ks->nlinks;

	err = add_link(ks, bpf_program__attach(c->syscall_tp ? s->progs.ioctl_tp_enter :
					       s->progs.ioctl_raw_enter));
	if (!err)
		err = add_link(ks, bpf_program__attach(c->syscall_tp ? s->progs.ioctl_tp_exit :
						       s->progs.ioctl_raw_exit));
	if (err)
		drop_links(ks, keep);
	return err;
}

static int start_ioctl(struct kernel_sources *ks, const struct kernel_sources_opts *o,
		       const struct ioctl_caps *c)
{
	enum gt_ioctl_rung plan[3];
	int i, n, err;

	ks->ioctl = ioctl_bpf__open();
	if (!ks->ioctl)
		return -errno;
	err = SHARE_MAPS(ks->ioctl, o);
	SET_MAJORS(ks->ioctl, o);
	/* the syscall rung: tracepoints on ioctl only, or every syscall filtered */
	bpf_program__set_autoload(ks->ioctl->progs.ioctl_tp_enter, c->syscall_tp);
	bpf_program__set_autoload(ks->ioctl->progs.ioctl_tp_exit, c->syscall_tp);
	bpf_program__set_autoload(ks->ioctl->progs.ioctl_raw_enter, !c->syscall_tp);
	bpf_program__set_autoload(ks->ioctl->progs.ioctl_raw_exit, !c->syscall_tp);
	if (!err)
		err = ioctl_bpf__load(ks->ioctl);
	if (err)
		return err;
	n = ioctl_ladder__plan(c, plan, 3);
	for (i = 0; i < n; i++) {
		switch (plan[i]) {
		case GT_RUNG_KPROBE: err = try_kprobe(ks, c); break;
		case GT_RUNG_FENTRY: err = try_fentry(ks, o, c); break;
		default: err = try_syscall(ks, c); break;
		}
		if (!err) {
			ks->rung = plan[i];
			pr_verbose("ioctl rung: %s%s", ioctl_ladder__rung_name(plan[i]),
				   plan[i] == GT_RUNG_SYSCALL ? (c->syscall_tp ? " (tracepoints)" :
								 " (raw_tp sys_enter/sys_exit)") : "");
			return 0;
		}
	}
	return err;
}

static int start_sched(struct kernel_sources *ks, const struct kernel_sources_opts *o)
{
	int err;

	ks->sched = sched_bpf__open();
	if (!ks->sched)
		return -errno;
	err = SHARE_MAPS(ks->sched, o);
	if (!err)
		err = sched_bpf__load(ks->sched);
	if (!err)
		err = add_link(ks, bpf_program__attach(ks->sched->progs.on_switch));
	if (!err)
		err = add_link(ks, bpf_program__attach(ks->sched->progs.on_thread_exit));
	return err;
}

int kernel_sources__start(const struct kernel_sources_opts *o, struct kernel_sources **out)
{
	struct kernel_sources *ks = calloc(1, sizeof(*ks));
	struct ioctl_caps caps;
	int err = 0;

	if (!ks)
		return -ENOMEM;
	if (o->ioctl && o->nmajors) {
		/* the ladder is looked at only when there are ioctls to record:
		 * its look through /proc/kallsyms is most of a second of the
		 * start on a small machine */
		if (o->caps)
			caps = *o->caps;
		else
			ioctl_ladder__probe(&caps, NULL, NULL, NULL, NULL);
		err = start_ioctl(ks, o, &caps);
		if (err) {
			pr_err("failed to start ioctl recording: %s", strerror(-err));
			goto fail;
		}
	}
	if (o->sched) {
		err = start_sched(ks, o);
		if (err) {
			pr_err("failed to start scheduler recording: %s", strerror(-err));
			goto fail;
		}
	}
	*out = ks;
	return 0;
fail:
	kernel_sources__free(ks);
	return err;
}

enum gt_ioctl_rung kernel_sources__rung(const struct kernel_sources *ks)
{
	return ks ? ks->rung : GT_RUNG_NONE;
}

#define ADD_BSS(skel, c)                                                                   \
	do {                                                                               \
		if (skel) {                                                                \
			(c)->drop_ringbuf +=                                               \
				__atomic_load_n(&(skel)->bss->n_drop_ringbuf, __ATOMIC_RELAXED); \
			(c)->drop_state +=                                                 \
				__atomic_load_n(&(skel)->bss->n_drop_state, __ATOMIC_RELAXED); \
		}                                                                          \
	} while (0)

void kernel_sources__counters(const struct kernel_sources *ks, struct gt_counters *c)
{
	if (!ks)
		return;
	ADD_BSS(ks->ioctl, c);
	ADD_BSS(ks->fentry, c);
	ADD_BSS(ks->sched, c);
}

size_t kernel_sources__objects(const struct kernel_sources *ks, struct bpf_object **objs, size_t max)
{
	size_t n = 0;

	if (!ks)
		return 0;
	if (ks->ioctl && n < max)
		objs[n++] = ks->ioctl->obj;
	if (ks->fentry && n < max)
		objs[n++] = ks->fentry->obj;
	if (ks->sched && n < max)
		objs[n++] = ks->sched->obj;
	return n;
}

void kernel_sources__free(struct kernel_sources *ks)
{
	if (!ks)
		return;
	drop_links(ks, 0);
	ioctl_fentry_bpf__destroy(ks->fentry);
	ioctl_bpf__destroy(ks->ioctl);
	sched_bpf__destroy(ks->sched);
	free(ks);
}
