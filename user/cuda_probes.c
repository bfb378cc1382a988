// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
#include "cuda.skel.h"
#include "cuda_probes.h"
#include "elf_syms.h"
#include "gtrace_api.h"
#include "log.h"

struct api_desc {
	const char *name;
	int prog, ret, out, str, stream, coop;
};

#define GT_DESC(sym, cls, prog, ret, out, str, a, b, c, d, kind) \
	{ #sym, GT_P_##prog, GT_R_##ret, out, str, d, \
	  GT_CLS_##cls == GT_CLS_LAUNCH && (kind) == 1 },
static const struct api_desc descs[] = { GT_API_TABLE(GT_DESC) };
#undef GT_DESC
#define NAPI (sizeof(descs) / sizeof(descs[0]))

struct attached_file {
	dev_t dev;
	ino_t ino;
	char *label;
	struct bpf_link **links;	/* up to 2 per api: entry and exit */
	size_t nlinks;
};

struct cuda_probes {
	struct cuda_bpf *skel;
	struct cuda_probes_opts opts;
	struct attached_file *files;
	size_t nfiles;
	size_t nprobes;
	size_t nfailed;
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

static struct bpf_link *attach_one(struct bpf_program *prog, const char *path, uint64_t off,
				   uint64_t cookie, bool ret)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = cookie, .retprobe = ret);

	/* pid -1: a uprobe on a file applies to every process mapping it; the
	 * pid filter, when asked for, is applied in BPF */
	return bpf_program__attach_uprobe_opts(prog, -1, path, off, &o);
}

int cuda_probes__attach_file(struct cuda_probes *p, const char *path, const char *label)
{
	const char *names[NAPI];
	uint64_t offs[NAPI];
	struct attached_file f = {0}, *nf;
	struct stat st;
	int found, err = 0, first_err = 0;
	size_t i, j;

	if (stat(path, &st))
		return -errno;
	if (cuda_probes__has_file(p, path))
		return 0;
	for (i = 0; i < NAPI; i++)
		names[i] = descs[i].name;
	found = elf_syms__resolve(path, names, NAPI, offs);
	if (found < 0)
		return found;
	if (found == 0)
		return -ENOEXEC;
	f.dev = st.st_dev;
	f.ino = st.st_ino;
	f.label = strdup(label ? label : path);
	f.links = calloc(2 * NAPI, sizeof(*f.links));
	if (!f.label || !f.links) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < NAPI; i++) {
		const struct api_desc *d = &descs[i];
		uint64_t cookie = GT_COOKIE_MAKE(i + 1, d->out, d->str, d->stream);
		struct bpf_link *l;
		bool alias = false;

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
		if (d->coop)
			cookie |= GT_COOKIE_COOP;
		l = attach_one(entry_prog(p->skel, d->prog), path, offs[i], cookie, false);
		if (!l) {
			first_err = first_err ? first_err : -errno;
			p->nfailed++;
			pr_verbose("failed to attach uprobe %s:%s: %s", f.label, d->name, strerror(errno));
			continue;
		}
		f.links[f.nlinks++] = l;
		if (d->ret == GT_R_NONE || (p->opts.no_launch_exit &&
					    (d->prog == GT_P_LAUNCH || d->prog == GT_P_LAUNCH_EX)))
			continue;
		l = attach_one(d->ret == GT_R_RET_STR ? p->skel->progs.call_exit_str :
			       p->skel->progs.call_exit, path, offs[i], cookie, true);
		if (!l) {
			first_err = first_err ? first_err : -errno;
			p->nfailed++;
			pr_verbose("failed to attach uretprobe %s:%s: %s", f.label, d->name, strerror(errno));
			continue;
		}
		f.links[f.nlinks++] = l;
	}
	if (!f.nlinks) {
		err = first_err ? first_err : -ENOEXEC;
		goto fail;
	}
	nf = realloc(p->files, (p->nfiles + 1) * sizeof(*nf));
	if (!nf) {
		err = -ENOMEM;
		goto fail;
	}
	p->files = nf;
	p->files[p->nfiles++] = f;
	p->nprobes += f.nlinks;
	pr_verbose("attached %zu probes to %s (%d of %zu symbols present)", f.nlinks, f.label,
		   found, NAPI);
	return f.nlinks;
fail:
	for (i = 0; i < f.nlinks; i++)
		bpf_link__destroy(f.links[i]);
	free(f.links);
	free(f.label);
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
	size_t i, j;

	if (!p)
		return;
	for (i = 0; i < p->nfiles; i++) {
		for (j = 0; j < p->files[i].nlinks; j++)
			bpf_link__destroy(p->files[i].links[j]);
		free(p->files[i].links);
		free(p->files[i].label);
	}
	free(p->files);
	free(p);
}
