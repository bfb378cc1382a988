// SPDX-License-Identifier: MIT
/*
 * Where the recorder's probes go: the libcuda and libnccl files given with
 * --libcuda/--libnccl, the driver's usual copy, and the copies the traced
 * processes map (every process, the cgroup's, or -p's), found at the start,
 * at an exec or an open, and by the periodic rescan of --all.
 */
#include <errno.h>
#include <string.h>
#include "lib/log.h"
#include "record/cgroup_target.h"
#include "record/child.h"
#include "record/cuda_probes.h"
#include "record/libcuda_finder.h"
#include "record/nccl_probes.h"
#include "record/recorder.h"

int recorder__attach_found(void *ctx, const char *path, const char *label)
{
	struct recorder *r = ctx;
	int n;

	/* without --trace cuda (-t none, -t ioctl,sched) the copies found
	 * later, at an exec, an open or the rescan, get no probes either */
	if (!r->o->trace_cuda)
		return 0;
	if (libcuda_finder__is_libnccl(label)) {
		if (!r->nccl)
			return -ENOENT;
		n = nccl_probes__attach_file(r->nccl, path, label);
		if (n > 0)
			pr_verbose("tracing %s (%d NCCL probes)", label, n);
		else if (n < 0 && n != -ENOEXEC)
			pr_warn("failed to attach to %s: %s", label, strerror(-n));
		return n;
	}
	n = cuda_probes__attach_file(r->probes, path, label);
	if (n > 0)
		pr_verbose("tracing %s (%d probes)", label, n);
	else if (n < 0 && n != -ENOEXEC)
		pr_warn("failed to attach to %s: %s", label, strerror(-n));
	return n;
}

static bool in_cgroup(void *ctx, pid_t pid)
{
	return cgroup_target__holds_pid(ctx, pid);
}

/* Every process, or with --cgroup those of the cgroup: the probes go on
 * the libcuda files its processes map (and the driver's usual one), not on
 * a copy only processes outside it use */
static void scan_system(struct recorder *r)
{
	if (r->cgroup)
		libcuda_finder__scan_some(in_cgroup, r->cgroup, recorder__attach_found, r);
	else
		libcuda_finder__scan_all(recorder__attach_found, r);
}

int recorder__attach_libcuda(struct recorder *r)
{
	size_t i;
	int n;

	for (i = 0; i < r->o->nlibcuda; i++) {
		n = cuda_probes__attach_file(r->probes, r->o->libcuda[i], r->o->libcuda[i]);
		if (n < 0) {
			pr_err("cannot trace %s: %s", r->o->libcuda[i],
			       n == -ENOEXEC ? "not a libcuda (no CUDA driver API symbols)" : strerror(-n));
			return n;
		}
	}
	for (i = 0; i < r->o->nlibnccl; i++) {
		n = nccl_probes__attach_file(r->nccl, r->o->libnccl[i], r->o->libnccl[i]);
		if (n < 0) {
			pr_err("cannot trace %s: %s", r->o->libnccl[i],
			       n == -ENOEXEC ? "not a libnccl (no NCCL symbols)" : strerror(-n));
			return n;
		}
	}
	libcuda_finder__scan_default(recorder__attach_found, r);
	if (r->o->all) {
		scan_system(r);
	} else {
		for (i = 0; i < r->o->npids; i++)
			libcuda_finder__scan_pid(r->o->pids[i], recorder__attach_found, r);
	}
	/* after --delay CMD may have loaded its libcuda already */
	if (r->child && r->released)
		libcuda_finder__scan_pid(child__pid(r->child), recorder__attach_found, r);
	if (!cuda_probes__nfiles(r->probes) && r->o->cmd) {
		/* CMD may dlopen its own copy (a container's, a wheel's): the
		 * openat discovery attaches to it then, as in --all */
		pr_verbose("no libcuda found yet: tracing the one %s loads", r->o->cmd[0]);
		return 0;
	}
	if (!cuda_probes__nfiles(r->probes)) {
		pr_err("no libcuda found (looked in the usual driver locations%s); pass --libcuda PATH",
		       !r->o->all ? "" : r->cgroup ? " and the mappings of the cgroup's processes" : " and every process' mappings");
		return -ENOENT;
	}
	return 0;
}

void rescan(struct recorder *r, bool all)
{
	size_t i;

	if (all) {
		scan_system(r);
	} else {
		for (i = 0; i < r->nscan; i++)
			libcuda_finder__scan_pid(r->scan_queue[i], recorder__attach_found, r);
	}
	r->nscan = 0;
}
