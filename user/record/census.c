// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "record/census.h"
#include "cuda.skel.h"
#include "record/cuda_probes.h"
#include "decode/decode.h"
#include "record/elf_syms.h"
#include "record/libcuda_finder.h"
#include "lib/log.h"
#include "record/bpf_log.h"

#define CENSUS_MAX 4096	/* GT_CENSUS_MAX in bpf/cuda.bpf.c */

struct census {
	struct cuda_bpf *skel;
	char *names[CENSUS_MAX];	/* symbol of each cookie */
	uint64_t offs[CENSUS_MAX];	/* its offset in its file */
	uint64_t cookies[CENSUS_MAX];	/* = its index */
	int n;
	int first;			/* first index of the file being read */
	int links[16];			/* one uprobe_multi link per file */
	int nlinks;
	const char *paths[16];		/* distinct files (device + inode) */
	struct stat st[16];
	int npaths;
	const char *only;		/* ",name,name," to count, NULL = all */
};

static int add_sym(void *ctx, const char *name, uint64_t off)
{
	struct census *c = ctx;
	int i;

	if (c->only) {
		char key[256];

		snprintf(key, sizeof(key), ",%s,", name);
		if (!strstr(c->only, key))
			return 0;
	}
	if (c->n >= CENSUS_MAX)
		return -E2BIG;
	for (i = c->first; i < c->n; i++) {
		if (c->offs[i] == off)
			return 0;	/* alias, or the .symtab copy of a .dynsym entry */
	}
	c->names[c->n] = strdup(name);
	c->offs[c->n] = off;
	c->cookies[c->n] = c->n;
	c->n++;
	return 0;
}

static int add_path(void *ctx, const char *path, const char *label)
{
	struct census *c = ctx;
	struct stat st;
	int i;

	(void)label;
	if (stat(path, &st) || c->npaths >= 16)
		return 0;
	for (i = 0; i < c->npaths; i++) {
		if (c->st[i].st_dev == st.st_dev && c->st[i].st_ino == st.st_ino)
			return 0;
	}
	c->st[c->npaths] = st;
	c->paths[c->npaths++] = strdup(path);
	return 0;
}

struct row {
	const char *name;
	uint64_t count;
};

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void report(struct census *c)
{
	struct row *rows = calloc(c->n ? c->n : 1, sizeof(*rows));
	int i, called = 0, unprobed = 0, fd = bpf_map__fd(c->skel->maps.census_counts);

	if (!rows)
		return;
	for (i = 0; i < c->n; i++) {
		__u32 k = i;

		rows[i].name = c->names[i];
		bpf_map_lookup_elem(fd, &k, &rows[i].count);
	}
	qsort(rows, c->n, sizeof(*rows), cmp_row);
	printf("%12s  %-8s %s\n", "calls", "probed", "function");
	for (i = 0; i < c->n && rows[i].count; i++) {
		bool probed = gt_api__by_name(rows[i].name) > 0;

		called++;
		unprobed += !probed;
		printf("%12llu  %-8s %s\n", (unsigned long long)rows[i].count, probed ? "yes" : "NO",
		       rows[i].name);
	}
	printf("%d of %d exported cu* functions called; %d of them not probed by the recorder\n",
	       called, c->n, unprobed);
	free(rows);
}

int census__run(const struct census_opts *o)
{
	struct census *c = calloc(1, sizeof(*c));
	int err = 0, status = 1, st, i;
	char *only = NULL;
	uint8_t one = 1;
	uint32_t pid;
	pid_t child;

	if (!c)
		return 1;
	if (o->functions) {
		/* ",a,b," so that a lookup of ",name," matches whole names only */
		if (asprintf(&only, ",%s,", o->functions) < 0) {
			free(c);
			return 1;
		}
		c->only = only;
	}
	bpf_log__setup();
	c->skel = cuda_bpf__open();
	if (!c->skel) {
		pr_err("failed to open BPF object: %s", strerror(errno));
		goto cleanup;
	}
	c->skel->rodata->filter_pids = true;
	cuda_probes__prepare_multi(c->skel, true);
	c->skel->rodata->self_pid = getpid();
	bpf_program__set_autoload(c->skel->progs.open_tp, false);
	err = cuda_bpf__load(c->skel);
	if (err) {
		pr_err("failed to load BPF programs: %s", strerror(-err));
		goto cleanup;
	}
	for (i = 0; i < (int)o->nlibcuda; i++)
		add_path(c, o->libcuda[i], NULL);
	if (!o->nlibcuda)
		libcuda_finder__scan_default(add_path, c);
	if (!c->npaths) {
		pr_err("no libcuda found; pass --libcuda PATH");
		goto cleanup;
	}
	for (i = 0; i < c->npaths; i++) {
		c->first = c->n;
		err = elf_syms__each(c->paths[i], "cu", add_sym, c);
		if (err >= 0 && c->n == c->first) {
			pr_err("no %s function in %s to count", o->functions ? "listed" : "cu*",
			       c->paths[i]);
			goto cleanup;
		}
		if (err >= 0)
			err = uprobe_multi__attach(bpf_program__fd(c->skel->progs.count_entry), c->paths[i],
						   c->offs + c->first, c->cookies + c->first,
						   c->n - c->first, false);
		if (err < 0) {
			pr_err("cannot count calls in %s: %s", c->paths[i], strerror(-err));
			goto cleanup;
		}
		c->links[c->nlinks++] = err;
	}
	if (!bpf_program__attach(c->skel->progs.proc_fork)) {
		pr_err("failed to attach the fork probe: %s", strerror(errno));
		goto cleanup;
	}
	pr_info("counting calls of %d functions in %d file(s)", c->n, c->npaths);
	child = fork();
	if (child == 0) {
		/* stopped until the parent has put our pid in the filter */
		raise(SIGSTOP);
		execvp(o->cmd[0], o->cmd);
		fprintf(stderr, "gtrace-bpf: cannot run %s: %s\n", o->cmd[0], strerror(errno));
		_exit(127);
	}
	if (child < 0) {
		pr_err("failed to start %s: %s", o->cmd[0], strerror(errno));
		goto cleanup;
	}
	waitpid(child, &st, WUNTRACED);
	pid = child;
	bpf_map__update_elem(c->skel->maps.pids, &pid, sizeof(pid), &one, sizeof(one), BPF_ANY);
	kill(child, SIGCONT);
	waitpid(child, &st, 0);
	status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	report(c);
cleanup:
	for (i = 0; i < c->nlinks; i++)
		close(c->links[i]);
	for (i = 0; i < c->n; i++)
		free(c->names[i]);
	for (i = 0; i < c->npaths; i++)
		free((char *)c->paths[i]);
	cuda_bpf__destroy(c->skel);
	free(c);
	free(only);
	return status;
}
