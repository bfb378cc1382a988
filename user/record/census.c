// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "record/census.h"
#include "census.skel.h"
#include "record/child.h"
#include "record/probes/cuda_probes.h"
#include "format/api.h"
#include "record/probes/elf_syms.h"
#include "record/probes/libcuda_finder.h"
#include "lib/log.h"
#include "record/probes/bpf_log.h"
#include "record/probes/uprobe_ladder.h"
#include "lib/cmp.h"

#define CENSUS_MAX 4096	/* GT_CENSUS_MAX in bpf/census.bpf.c */

struct census {
	struct census_bpf *skel;
	bool multi;			/* uprobe_multi links, else one perf-event link per function */
	struct bpf_link *plinks[CENSUS_MAX];	/* those links, by index, when not multi */
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
	char *found;			/* ",name," of each listed function seen (aliases too) */
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
		if (!c->found || !strstr(c->found, key)) {
			char *f;

			if (asprintf(&f, "%s%s", c->found ? c->found : ",", key + 1) < 0)
				return -ENOMEM;
			free(c->found);
			c->found = f;
		}
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
	cmp__sort(rows, c->n, sizeof(*rows), cmp_row);
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

static int load_once(void *ctx, bool multi)
{
	struct census *c = ctx;
	int err;

	c->skel = census_bpf__open();
	if (!c->skel) {
		err = -errno;
		pr_err("failed to open BPF object: %s", strerror(-err));
		return err;
	}
	c->skel->rodata->filter_pids = true;
	c->skel->rodata->self_pid = getpid();
	/* the shared maps' ring buffer: census writes no records into it */
	err = bpf_map__set_max_entries(c->skel->maps.rb, getpagesize());
	if (err) {
		pr_err("failed to size the ring buffer: %s", strerror(-err));
		return err;
	}
	uprobe_multi__prepare(c->skel->progs.count_entry, multi);
	return census_bpf__load(c->skel);
}

static void unload(void *ctx)
{
	struct census *c = ctx;

	census_bpf__destroy(c->skel);
	c->skel = NULL;
}

/* The counting probes of the functions first..n-1 of path: one
 * uprobe_multi link, else one link each. Returns 0 or a negative errno. */
static int attach_file(struct census *c, const char *path)
{
	int i, fd, err;

	if (c->multi) {
		fd = uprobe_multi__attach(bpf_program__fd(c->skel->progs.count_entry), path,
					  c->offs + c->first, c->cookies + c->first, c->n - c->first,
					  false);
		if (fd < 0)
			return fd;
		c->links[c->nlinks++] = fd;
		return 0;
	}
	for (i = c->first; i < c->n; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = c->cookies[i]);

		c->plinks[i] = bpf_program__attach_uprobe_opts(c->skel->progs.count_entry, -1, path,
							       c->offs[i], &uo);
		if (!c->plinks[i]) {
			err = -errno;
			return err ? err : -EINVAL;
		}
	}
	return 0;
}

/* Starts CMD with its pid in the filter, waits for it; its status. */
static int run_cmd(struct census *c, char **cmd)
{
	static const uint8_t one = 1;
	struct child *ch;
	uint32_t pid;
	int err, status;

	err = child__start(cmd, NULL, NULL, &ch);
	if (err) {
		pr_err("failed to start %s: %s", cmd[0], strerror(-err));
		return -1;
	}
	pid = child__pid(ch);
	err = bpf_map__update_elem(c->skel->maps.pids, &pid, sizeof(pid), &one, sizeof(one), BPF_ANY);
	if (err) {
		pr_err("failed to add pid %u to the filter: %s", pid, strerror(-err));
		child__free(ch);
		return -1;
	}
	err = child__release(ch);
	if (err)
		pr_warn("failed to start %s: %s", cmd[0], strerror(-err));
	status = child__wait(ch);
	child__free(ch);
	return status;
}

/* --functions: a name that is in no libcuda is a typo, not a zero to
 * report. Returns 0 or -ENOENT after one line naming it. */
static int check_listed(const struct census *c, const char *list)
{
	char *copy = strdup(list), *tok, *save = NULL, key[256];
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save)) {
		snprintf(key, sizeof(key), ",%s,", tok);
		if (!c->found || !strstr(c->found, key)) {
			pr_err("--functions: no function '%s' in %s%s", tok, c->paths[0],
			       c->npaths > 1 ? " or the other libcuda files" : "");
			err = -ENOENT;
		}
	}
	free(copy);
	return err;
}

int census__run(const struct census_opts *o)
{
	static const struct uprobe_ladder_ops ops = { .load = load_once, .unload = unload };
	struct census *c = calloc(1, sizeof(*c));
	int err = 0, status = 1, i;
	char *only = NULL;

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
	if (uprobe_ladder__load(&ops, c, &c->multi))
		goto cleanup;
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
			if (o->functions && check_listed(c, o->functions))
				goto cleanup;
			pr_err("no %s function in %s to count", o->functions ? "listed" : "cu*",
			       c->paths[i]);
			goto cleanup;
		}
		if (err >= 0)
			err = attach_file(c, c->paths[i]);
		if (err < 0) {
			pr_err("cannot count calls in %s: %s", c->paths[i], strerror(-err));
			goto cleanup;
		}
	}
	if (o->functions && (err = check_listed(c, o->functions)))
		goto cleanup;
	c->skel->links.census_fork = bpf_program__attach(c->skel->progs.census_fork);
	if (!c->skel->links.census_fork) {
		pr_err("failed to attach the fork probe: %s", strerror(errno));
		goto cleanup;
	}
	pr_info("counting calls of %d functions in %d file(s)", c->n, c->npaths);
	status = run_cmd(c, o->cmd);
	if (status < 0) {
		status = 1;
		goto cleanup;
	}
	report(c);
cleanup:
	for (i = 0; i < c->nlinks; i++)
		close(c->links[i]);
	for (i = 0; i < c->n; i++)
		bpf_link__destroy(c->plinks[i]);
	for (i = 0; i < c->n; i++)
		free(c->names[i]);
	for (i = 0; i < c->npaths; i++)
		free((char *)c->paths[i]);
	census_bpf__destroy(c->skel);
	free(c->found);
	free(c);
	free(only);
	return status;
}
