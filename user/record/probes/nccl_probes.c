// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "nccl.skel.h"
#include "bpf/gtrace_api.h"
#include "format/nccl.h"
#include "lib/log.h"
#include "lib/vec.h"
#include "record/probes/cuda_probes.h"
#include "record/probes/elf_syms.h"
#include "record/probes/nccl_probes.h"
#include "record/probes/shared_maps.h"

#define NAPI ((size_t)GT_NCCL_API__COUNT - 1)

/* One libnccl attached: its entry and exit probes. */
struct nccl_file {
	dev_t dev;
	ino_t ino;
	int fds[2];			/* multi mode: the entry and exit links, -1 none */
	struct bpf_link **links;	/* per-probe mode: nlinks links */
	size_t nlinks;
};

struct nccl_probes {
	struct nccl_bpf *skel;
	bool multi;
	bool stacks_sync, stacks_all;
	struct nccl_file *files;
	size_t nfiles, cap;
	size_t nprobes;
};

int nccl_probes__new(const struct nccl_probes_opts *o, struct nccl_probes **out)
{
	struct nccl_probes *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	p->multi = o->multi;
	p->skel = nccl_bpf__open();
	if (!p->skel) {
		err = -errno;
		goto fail;
	}
	err = SHARE_MAPS(p->skel, o);
	p->stacks_sync = o->stacks_sync;
	p->stacks_all = o->stacks_all;
	if (!err && (o->stacks_sync || o->stacks_all)) {
		/* one stack table and one view of the interpreters for both */
		const struct { struct bpf_map *m; int fd; } share[] = {
			{ p->skel->maps.stack_pids, o->stack_pids_fd }, { p->skel->maps.stack_sites, o->stack_sites_fd },
			{ p->skel->maps.py_cfgs, o->py_cfgs_fd }, { p->skel->maps.py_files, o->py_files_fd },
			{ p->skel->maps.py_procs, o->py_procs_fd }, { p->skel->maps.py_threads, o->py_threads_fd },
			{ p->skel->maps.py_seen, o->py_seen_fd }, { p->skel->maps.py_fast, o->py_fast_fd },
			{ p->skel->maps.py_epoch, o->py_epoch_fd },
		};

		for (size_t i = 0; i < sizeof(share) / sizeof(share[0]) && !err; i++)
			err = bpf_map__reuse_fd(share[i].m, share[i].fd);
	}
	uprobe_multi__prepare(p->skel->progs.nccl_entry, o->multi);
	uprobe_multi__prepare(p->skel->progs.nccl_exit, o->multi);
	if (!err)
		err = nccl_bpf__load(p->skel);
	if (err)
		goto fail;
	*out = p;
	return 0;
fail:
	pr_err("failed to load the NCCL probes: %s", strerror(-err));
	nccl_probes__free(p);
	return err;
}

static bool has_file(const struct nccl_probes *p, const struct stat *st)
{
	for (size_t i = 0; i < p->nfiles; i++)
		if (p->files[i].dev == st->st_dev && p->files[i].ino == st->st_ino)
			return true;
	return false;
}

/* The probes of one side (entry or exit) at the n offsets; the count attached. */
static size_t attach_side(struct nccl_probes *p, struct nccl_file *f, const char *path, bool ret,
			  const uint64_t *offs, const uint64_t *cookies, size_t n)
{
	struct bpf_program *prog = ret ? p->skel->progs.nccl_exit : p->skel->progs.nccl_entry;
	size_t live = 0;

	if (p->multi) {
		int fd = uprobe_multi__attach(bpf_program__fd(prog), path, offs, cookies, (uint32_t)n, ret);

		if (fd < 0) {
			pr_verbose("failed to attach %zu NCCL %s: %s", n, ret ? "uretprobes" : "uprobes",
				   strerror(-fd));
			return 0;
		}
		f->fds[ret] = fd;
		return n;
	}
	for (size_t i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = cookies[i], .retprobe = ret);
		struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, -1, path, offs[i], &uo);

		if (!l) {
			pr_verbose("failed to attach an NCCL probe at 0x%llx: %s",
				   (unsigned long long)offs[i], strerror(errno));
			continue;
		}
		f->links[f->nlinks++] = l;
		live++;
	}
	return live;
}

static void file_detach(struct nccl_file *f)
{
	for (int i = 0; i < 2; i++)
		if (f->fds[i] >= 0)
			close(f->fds[i]);
	for (size_t i = 0; i < f->nlinks; i++)
		bpf_link__destroy(f->links[i]);
	free(f->links);
}

int nccl_probes__attach_file(struct nccl_probes *p, const char *path, const char *label)
{
	const char *names[NAPI];
	uint64_t offs[NAPI], found_offs[NAPI], cookies[NAPI];
	struct nccl_file f = { .fds = { -1, -1 } };
	struct stat st;
	size_t i, n = 0, live;
	int found;

	if (stat(path, &st))
		return -errno;
	if (has_file(p, &st))
		return 0;
	for (i = 0; i < NAPI; i++)
		names[i] = gt_nccl__name((unsigned)i + 1);
	found = elf_syms__resolve(path, names, NAPI, offs);
	if (found <= 0)
		return found ? found : -ENOEXEC;
	for (i = 0; i < NAPI; i++) {
		const struct gt_nccl_info *in = gt_nccl__info((unsigned)i + 1);
		bool setup = in && (in->kind == GT_NCCL_K_INIT || in->kind == GT_NCCL_K_SPLIT ||
				    in->kind == GT_NCCL_K_FREE);

		if (!offs[i])
			continue;
		found_offs[n] = offs[i];
		cookies[n] = i + 1;
		/* the communicators' making and ending always; the calls made
		 * per step (collectives, sends, groups) once per call site */
		if ((p->stacks_sync && setup) || p->stacks_all)
			cookies[n] |= GT_COOKIE_STACK;
		if (p->stacks_all && !setup)
			cookies[n] |= GT_COOKIE_STACK_CACHE;
		/* a failed call's stack at its exit, whatever its kind */
		if (p->stacks_sync || p->stacks_all)
			cookies[n] |= GT_COOKIE_STACK_FAIL;
		n++;
	}
	if (!p->multi && !(f.links = calloc(2 * n, sizeof(*f.links))))
		return -ENOMEM;
	live = attach_side(p, &f, path, false, found_offs, cookies, n);
	live += attach_side(p, &f, path, true, found_offs, cookies, n);
	if (!live || vec__reserve(&p->files, &p->cap, p->nfiles, 1, 4)) {
		file_detach(&f);
		return live ? -ENOMEM : -ENOEXEC;
	}
	f.dev = st.st_dev;
	f.ino = st.st_ino;
	p->files[p->nfiles++] = f;
	p->nprobes += live;
	pr_verbose("attached %zu NCCL probes to %s (%d of %zu symbols present)", live, label, found, NAPI);
	return (int)live;
}

size_t nccl_probes__nfiles(const struct nccl_probes *p)
{
	return p ? p->nfiles : 0;
}

size_t nccl_probes__nprobes(const struct nccl_probes *p)
{
	return p ? p->nprobes : 0;
}

void nccl_probes__py_globals(struct nccl_probes *p, volatile uint32_t **nfiles, volatile uint32_t **gen)
{
	*nfiles = p && p->skel->bss ? &p->skel->bss->py_nfiles : NULL;
	*gen = p && p->skel->bss ? &p->skel->bss->py_gen : NULL;
}

void nccl_probes__stack_counts(const struct nccl_probes *p, uint64_t v[6])
{
	const struct nccl_bpf__bss *b;

	if (!p || !p->skel || !p->skel->bss)
		return;
	b = p->skel->bss;
	v[0] += __atomic_load_n(&b->n_stack_fault, __ATOMIC_RELAXED);
	v[1] += __atomic_load_n(&b->n_py_fault, __ATOMIC_RELAXED);
	v[2] += __atomic_load_n(&b->n_py_code_drop, __ATOMIC_RELAXED);
	v[3] += __atomic_load_n(&b->n_py_nothread, __ATOMIC_RELAXED);
	v[4] += __atomic_load_n(&b->n_py_busy, __ATOMIC_RELAXED);
	v[5] += __atomic_load_n(&b->n_py_slowkey, __ATOMIC_RELAXED);
}

void nccl_probes__counters(const struct nccl_probes *p, struct gt_counters *c)
{
	const struct nccl_bpf__bss *b;

	if (!p || !p->skel || !p->skel->bss)
		return;
	b = p->skel->bss;
	c->drop_ringbuf += __atomic_load_n(&b->n_drop_ringbuf, __ATOMIC_RELAXED);
	c->args_fault += __atomic_load_n(&b->n_nccl_args_fault, __ATOMIC_RELAXED);
	c->drop_stash += __atomic_load_n(&b->n_nccl_drop_stash, __ATOMIC_RELAXED);
	c->attach_files += p->nfiles;
	c->attach_probes += p->nprobes;
}

struct bpf_object *nccl_probes__object(const struct nccl_probes *p)
{
	return p && p->skel ? p->skel->obj : NULL;
}

void nccl_probes__free(struct nccl_probes *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nfiles; i++)
		file_detach(&p->files[i]);
	free(p->files);
	nccl_bpf__destroy(p->skel);
	free(p);
}
