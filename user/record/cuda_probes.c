// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "cuda.skel.h"
#include "record/cuda_probes.h"
#include "record/elf_syms.h"
#include "format/api.h"
#include "lib/log.h"
#include "lib/vec.h"

/* The probed symbols are apis 1..NAPI of the table; probe i is api i + 1. */
#define NAPI ((size_t)GT_API__COUNT - 1)

struct attached_file {
	dev_t dev;
	ino_t ino;
	char *label;
	struct bpf_link **links;	/* per-probe mode: one link per probe */
	int *fds;			/* multi mode: one uprobe_multi link per program */
	size_t nlinks, nfds;
};

struct cuda_probes {
	struct cuda_bpf *skel;
	struct cuda_probes_opts opts;
	struct attached_file *files;
	size_t nfiles, files_cap;	/* files attached; room in files */
	size_t nprobes;
	size_t nfailed;
};

/* One probe point: which program, where, with which cookie. */
struct probe {
	struct bpf_program *prog;
	bool ret;
	uint64_t off;
	uint64_t cookie;
};

struct cuda_probes *cuda_probes__new(struct cuda_bpf *skel, const struct cuda_probes_opts *opts)
{
	struct cuda_probes *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->skel = skel;
	if (opts)
		p->opts = *opts;
	return p;
}

static struct bpf_program *entry_prog(struct cuda_bpf *s, int prog)
{
	switch (prog) {
	case GT_P_LAUNCH: return s->progs.launch_entry;
	case GT_P_LAUNCH_EX: return s->progs.launch_ex_entry;
	case GT_P_CALL_STR: return s->progs.call_str_entry;
	case GT_P_MEMCPY2D: return s->progs.memcpy2d_entry;
	case GT_P_MEMCPY3D: return s->progs.memcpy3d_entry;
	default: return s->progs.call_entry;
	}
}

bool cuda_probes__has_file(const struct cuda_probes *p, const char *path)
{
	struct stat st;
	size_t i;

	if (stat(path, &st))
		return false;
	for (i = 0; i < p->nfiles; i++) {
		if (p->files[i].dev == st.st_dev && p->files[i].ino == st.st_ino)
			return true;
	}
	return false;
}

/* The uprobe_multi link (kernel 6.6+) is created with the raw syscall:
 * the libbpf of Debian 12 predates it. Field offsets of union bpf_attr's
 * link_create as in the kernel's uapi. */
#define GT_BPF_LINK_CREATE		28
#define GT_BPF_TRACE_UPROBE_MULTI	48
#define GT_BPF_F_UPROBE_MULTI_RETURN	1

int uprobe_multi__attach(int prog_fd, const char *path, const uint64_t *offs,
			 const uint64_t *cookies, uint32_t cnt, bool ret)
{
	union {
		uint8_t b[64];
		struct {
			uint32_t prog_fd, target_fd, attach_type, flags;
			uint64_t path, offsets, ref_ctr_offsets, cookies;
			uint32_t cnt, um_flags, pid, _pad;
		} f;
	} attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.f.prog_fd = prog_fd;
	attr.f.attach_type = GT_BPF_TRACE_UPROBE_MULTI;
	attr.f.path = (uintptr_t)path;
	attr.f.offsets = (uintptr_t)offs;
	attr.f.cookies = (uintptr_t)cookies;
	attr.f.cnt = cnt;
	attr.f.um_flags = ret ? GT_BPF_F_UPROBE_MULTI_RETURN : 0;
	fd = syscall(__NR_bpf, GT_BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

void uprobe_multi__prepare(struct bpf_program *prog, bool multi)
{
	bpf_program__set_expected_attach_type(prog, multi ? GT_BPF_TRACE_UPROBE_MULTI : 0);
}

/* Multi mode: one link per (program, entry/exit) with all its offsets, so
 * that detaching costs one synchronization, not one per probe (with
 * per-probe links, detaching ~270 probes took about a minute). */
static int attach_multi(struct cuda_probes *p, struct attached_file *f, const char *path,
			struct probe *pr, size_t n)
{
	uint64_t *offs = calloc(n, sizeof(*offs)), *cookies = calloc(n, sizeof(*cookies));
	bool *done = calloc(n, sizeof(*done));
	int err = 0;
	size_t i, j, cnt;

	f->fds = calloc(n, sizeof(*f->fds));
	if (!offs || !cookies || !done || !f->fds) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		int fd;

		if (done[i])
			continue;
		for (cnt = 0, j = i; j < n; j++) {
			if (done[j] || pr[j].prog != pr[i].prog || pr[j].ret != pr[i].ret)
				continue;
			offs[cnt] = pr[j].off;
			cookies[cnt++] = pr[j].cookie;
			done[j] = true;
		}
		fd = uprobe_multi__attach(bpf_program__fd(pr[i].prog), path, offs, cookies, cnt,
					  pr[i].ret);
		if (fd < 0) {
			err = fd;
			p->nfailed += cnt;
			pr_verbose("failed to attach %zu %s to %s for %s: %s", cnt,
				   pr[i].ret ? "uretprobes" : "uprobes", f->label,
				   bpf_program__name(pr[i].prog), strerror(-fd));
			continue;
		}
		f->fds[f->nfds++] = fd;
		f->nlinks += cnt;
	}
out:
	free(offs);
	free(cookies);
	free(done);
	return f->nlinks ? 0 : err ? err : -ENOEXEC;
}

static int attach_each(struct cuda_probes *p, struct attached_file *f, const char *path,
		       struct probe *pr, size_t n)
{
	int first_err = 0;
	size_t i;

	f->links = calloc(n, sizeof(*f->links));
	if (!f->links)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = pr[i].cookie, .retprobe = pr[i].ret);
		struct bpf_link *l;

		/* pid -1: a uprobe on a file applies to every process mapping
		 * it; the pid filter, when asked for, is applied in BPF */
		l = bpf_program__attach_uprobe_opts(pr[i].prog, -1, path, pr[i].off, &o);
		if (!l) {
			first_err = first_err ? first_err : -errno;
			p->nfailed++;
			pr_verbose("failed to attach %s at 0x%llx of %s: %s", bpf_program__name(pr[i].prog),
				   (unsigned long long)pr[i].off, f->label, strerror(errno));
			continue;
		}
		f->links[f->nlinks++] = l;
	}
	return f->nlinks ? 0 : first_err ? first_err : -ENOEXEC;
}

static void detach_file(struct attached_file *f)
{
	size_t i;

	for (i = 0; f->links && i < f->nlinks; i++)
		bpf_link__destroy(f->links[i]);
	for (i = 0; i < f->nfds; i++)
		close(f->fds[i]);
	free(f->links);
	free(f->fds);
	free(f->label);
}

int cuda_probes__attach_file(struct cuda_probes *p, const char *path, const char *label)
{
	const char *names[NAPI];
	uint64_t offs[NAPI];
	struct probe pr[2 * NAPI];
	struct attached_file f = {0};
	struct stat st;
	size_t i, j, n = 0;
	int found, err;

	if (stat(path, &st))
		return -errno;
	if (cuda_probes__has_file(p, path))
		return 0;
	for (i = 0; i < NAPI; i++)
		names[i] = gt_api__name(i + 1);
	found = elf_syms__resolve(path, names, NAPI, offs);
	if (found < 0)
		return found;
	if (found == 0)
		return -ENOEXEC;
	f.dev = st.st_dev;
	f.ino = st.st_ino;
	f.label = strdup(label ? label : path);
	if (!f.label)
		return -ENOMEM;
	for (i = 0; i < NAPI; i++) {
		const struct gt_api_info *d = gt_api__info(i + 1);
		uint64_t cookie = GT_COOKIE_MAKE(i + 1, d->out, d->str, d->d);
		bool alias = false, entry_only;

		if (!offs[i]) {
			pr_debug("%s: no %s", f.label, d->name);
			continue;
		}
		/* two names at one address would report each call twice */
		for (j = 0; j < i; j++)
			alias |= offs[j] == offs[i];
		if (alias) {
			pr_verbose("%s: %s is an alias of an earlier symbol, not probed", f.label, d->name);
			continue;
		}
		if (d->cls == GT_CLS_LAUNCH && d->kind == 1)	/* a cooperative launch */
			cookie |= GT_COOKIE_COOP;
		entry_only = !p->opts.launch_exit &&
			     (d->prog == GT_P_LAUNCH || d->prog == GT_P_LAUNCH_EX);
		if (entry_only)
			cookie |= GT_COOKIE_NOEXIT;
		pr[n++] = (struct probe){ entry_prog(p->skel, d->prog), false, offs[i], cookie };
		if (d->ret == GT_R_NONE || entry_only)
			continue;
		pr[n++] = (struct probe){ d->ret == GT_R_RET_STR ? p->skel->progs.call_exit_str :
					  p->skel->progs.call_exit, true, offs[i], cookie };
	}
	err = p->opts.multi ? attach_multi(p, &f, path, pr, n) : attach_each(p, &f, path, pr, n);
	if (err)
		goto fail;
	if (f.nlinks < n)
		pr_warn("%zu of %zu probes could not be attached to %s: those calls are not recorded "
			"(-v tells which)", n - f.nlinks, n, f.label);
	if (vec__reserve(&p->files, &p->files_cap, p->nfiles, 1, 4)) {
		err = -ENOMEM;
		goto fail;
	}
	p->files[p->nfiles++] = f;
	p->nprobes += f.nlinks;
	pr_verbose("attached %zu probes to %s (%d of %zu symbols present)", f.nlinks, f.label,
		   found, NAPI);
	return f.nlinks;
fail:
	detach_file(&f);
	return err;
}

size_t cuda_probes__nfiles(const struct cuda_probes *p) { return p->nfiles; }
size_t cuda_probes__nprobes(const struct cuda_probes *p) { return p->nprobes; }
size_t cuda_probes__nfailed(const struct cuda_probes *p) { return p->nfailed; }

const char *cuda_probes__file_label(const struct cuda_probes *p, size_t i)
{
	return i < p->nfiles ? p->files[i].label : NULL;
}

void cuda_probes__free(struct cuda_probes *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nfiles; i++)
		detach_file(&p->files[i]);
	free(p->files);
	free(p);
}

void cuda_probes__prepare_multi(struct cuda_bpf *s, bool multi)
{
	struct bpf_program *progs[] = {
		s->progs.call_entry, s->progs.launch_entry, s->progs.launch_ex_entry,
		s->progs.call_str_entry, s->progs.memcpy2d_entry, s->progs.memcpy3d_entry,
		s->progs.call_exit, s->progs.call_exit_str,
	};
	size_t i;

	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
		uprobe_multi__prepare(progs[i], multi);
}
