// SPDX-License-Identifier: MIT
/*
 * What the recorder offers a stage that drives it (record/ext.h): its
 * figures, the processes it knows, the probes' cost and swap. Everything
 * here is read or done on the recording loop's thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cuda.skel.h"
#include "record/ext.h"
#include "record/procs/cgroup_target.h"
#include "record/probes/cuda_object.h"
#include "record/probes/cuda_probes.h"
#include "record/probes/nccl_probes.h"
#include "record/procs/proc_names.h"
#include "record/probes/sched_ioctl_sources.h"
#include "record/recorder.h"

const struct record_opts *recorder__opts(const struct recorder *r)
{
	return r->o;
}

int recorder__flush(struct recorder *r)
{
	return trace_writer__flush(r->w);
}

void recorder__drain(struct recorder *r)
{
	ring_buffer__consume(r->rb);
}

void recorder__figures(const struct recorder *r, struct recorder_figures *f)
{
	*f = (struct recorder_figures){
		.received = r->received,
		.nprocs = r->nprocs,
		.ring_bytes = cuda_object__ring_size(r->o->buffer_size),
		.windows = r->cap.windows,
		.period_ns = r->cap.period_ns,
		.next_window = r->cap.next_window,
		.window_end = r->cap.window_end,
	};
}

void recorder__cgroup_word(const struct recorder *r, char *buf, size_t len)
{
	snprintf(buf, len, "-");
	if (r->cgroup)
		cgroup_target__escape(r->cgroup->path, buf, len);
}

bool recorder__traced(const struct recorder *r, uint32_t pid)
{
	return proc_names__traced(r->procs, pid);
}

bool recorder__relevant(const struct recorder *r, uint32_t pid)
{
	return proc_names__relevant(r->procs, pid);
}

bool recorder__forget(struct recorder *r, uint32_t pid)
{
	if (!proc_names__exited(r->procs, pid))
		return false;
	bpf_map__delete_elem(r->skel->maps.active_pids, &pid, sizeof(pid), 0);
	return true;
}

struct gpu_metrics *recorder__gpum(const struct recorder *r)
{
	return r->gpum;
}

struct cupti_session *recorder__cupti(const struct recorder *r)
{
	return r->cupti;
}

int recorder__insn_class(const struct recorder *r, unsigned api)
{
	return r->probes ? cuda_probes__insn_class(r->probes, api) : -1;
}

static enum recorder_prog_kind prog_kind(const struct bpf_program *p)
{
	const char *sec = bpf_program__section_name(p);

	if (!strncmp(sec, "uretprobe", 9))
		return RECORDER_PROG_RET;
	if (!strncmp(sec, "uprobe", 6))
		return RECORDER_PROG_ENTRY;
	return RECORDER_PROG_KERN;
}

static size_t add_object(struct bpf_object *obj, struct recorder_prog *out, size_t n, size_t max)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, obj) {
		int fd = bpf_program__fd(p);

		if (fd < 0 || n == max)
			continue;
		out[n++] = (struct recorder_prog){ .fd = fd, .kind = prog_kind(p) };
	}
	return n;
}

size_t recorder__progs(const struct recorder *r, struct recorder_prog *out, size_t max)
{
	struct bpf_object *objs[4];
	size_t i, k, n = add_object(r->skel->obj, out, 0, max);

	k = kernel_sources__objects(r->ks, objs, 4);
	for (i = 0; i < k; i++)
		n = add_object(objs[i], out, n, max);
	/* the NCCL probes' hits cost the programs too */
	if (nccl_probes__object(r->nccl))
		n = add_object(nccl_probes__object(r->nccl), out, n, max);
	return n;
}

/* The sum over the CPUs of obj's own_runs (bpf/common.bpf.h), 0 without. */
static uint64_t own_runs_of(struct bpf_object *obj)
{
	struct bpf_map *m = obj ? bpf_object__find_map_by_name(obj, "own_runs") : NULL;
	int ncpu = libbpf_num_possible_cpus(), i;
	uint64_t sum = 0, *v;
	uint32_t k = 0;

	if (!m || bpf_map__fd(m) < 0 || ncpu <= 0 || !(v = calloc((size_t)ncpu, sizeof(*v))))
		return 0;
	if (!bpf_map_lookup_elem(bpf_map__fd(m), &k, v))
		for (i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}

uint64_t recorder__kern_own_runs(const struct recorder *r)
{
	struct bpf_object *objs[4];
	size_t i, k;
	uint64_t n = own_runs_of(r->skel->obj);

	k = kernel_sources__objects(r->ks, objs, 4);
	for (i = 0; i < k; i++)
		n += own_runs_of(objs[i]);
	return n;
}

bool recorder__multi(const struct recorder *r)
{
	return r->multi;
}

int recorder__bpf_stats(void)
{
	return bpf_enable_stats(BPF_STATS_RUN_TIME);
}

int recorder__swap_begin(struct recorder *r, unsigned api, bool shed)
{
	return cuda_probes__swap_begin(r->probes, api, shed);
}

int recorder__swap_commit(struct recorder *r)
{
	return cuda_probes__swap_commit(r->probes);
}

bool recorder__swap_done(struct recorder *r, bool wait, uint64_t *ns)
{
	return cuda_probes__swap_done(r->probes, wait, ns);
}

uint64_t recorder__swap_handed(const struct recorder *r)
{
	return r->skel->bss->n_swap_handed;
}
