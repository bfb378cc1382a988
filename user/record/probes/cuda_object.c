// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "cuda.skel.h"
#include "record/probes/cuda_object.h"
#include "record/probes/cuda_probes.h"
#include "lib/log.h"
#include "record/probes/uprobe_ladder.h"

/* The openat tracepoint needs tracefs; mount it where the kernel has it
 * but nobody mounted it (seen on the GPU machine). */
static bool have_openat_tracepoint(void)
{
	static const char *const ids[] = {
		"/sys/kernel/tracing/events/syscalls/sys_enter_openat/id",
		"/sys/kernel/debug/tracing/events/syscalls/sys_enter_openat/id",
	};

	if (!access(ids[0], R_OK) || !access(ids[1], R_OK))
		return true;
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0)
		pr_verbose("mounted tracefs at /sys/kernel/tracing");
	return !access(ids[0], R_OK);
}

uint64_t cuda_object__ring_size(uint64_t v)
{
	uint64_t p = 4096;

	while (p < v && p < (1ull << 40))
		p <<= 1;
	return p;
}

struct load_ctx {
	const struct cuda_object_opts *o;	/* configuration */
	bool tp;				/* the openat tracepoint exists */
	struct cuda_bpf **skel;			/* where the object goes */
	const char **open_probe;		/* which openat probe it has */
};

static int load_once(void *ctx, bool multi)
{
	struct load_ctx *l = ctx;
	uint64_t size = cuda_object__ring_size(l->o->buffer_size);
	struct cuda_bpf *s;
	int err;

	s = *l->skel = cuda_bpf__open();
	if (!s) {
		err = -errno;
		pr_err("failed to open BPF object: %s", strerror(-err));
		return err;
	}
	s->rodata->filter_pids = l->o->filter;
	s->rodata->wakeup_bytes = size / 8;
	s->rodata->self_pid = getpid();
	s->rodata->capture_ranges = l->o->capture_ranges;
	s->rodata->gate_hot = l->o->gate_hot;
	s->rodata->swap_gate = l->o->swap_gate;
	s->rodata->range_max = l->o->range_max;
	s->rodata->filter_cgroup = l->o->filter_cgroup;
	s->rodata->cgroup_id = l->o->cgroup_id;
	s->rodata->cgroup_level = l->o->cgroup_level;
	s->rodata->hold_cmd_tree = l->o->hold_cmd_tree;
	/* measurement only: tools/gpu/hot_cost.sh times the parts of a hot
	 * call's stack key by leaving them out (bpf/ustack.bpf.h) */
	if (getenv("GTRACE_BENCH_STACK_SKIP"))
		s->rodata->stack_bench_skip = (uint32_t)strtoul(getenv("GTRACE_BENCH_STACK_SKIP"), NULL, 0);
	err = bpf_map__set_max_entries(s->maps.rb, size);
	if (err) {
		pr_err("failed to size the ring buffer to %llu bytes: %s", (unsigned long long)size,
		       strerror(-err));
		return err;
	}
	bpf_program__set_autoload(l->tp ? s->progs.open_raw : s->progs.open_tp, false);
	bpf_program__set_autoload(l->tp ? s->progs.open_exit_raw : s->progs.open_exit_tp, false);
	*l->open_probe = l->tp ? "tracepoint" : "raw_tp";
	cuda_probes__prepare_multi(s, multi);
	return cuda_bpf__load(s);
}

static void unload(void *ctx)
{
	struct load_ctx *l = ctx;

	cuda_bpf__destroy(*l->skel);
	*l->skel = NULL;
}

int cuda_object__load(const struct cuda_object_opts *o, struct cuda_bpf **skel, bool *multi,
		      const char **open_probe)
{
	static const struct uprobe_ladder_ops ops = { .load = load_once, .unload = unload };
	struct load_ctx l = { .o = o, .tp = have_openat_tracepoint(), .skel = skel,
			      .open_probe = open_probe };

	return uprobe_ladder__load(&ops, &l, multi);
}

/* Attaches a program, keeping its link in the skeleton, which destroys it. */
static int attach_into(struct bpf_program *prog, struct bpf_link **slot)
{
	*slot = bpf_program__attach(prog);
	return *slot ? 0 : -errno;
}

int cuda_object__attach_static(struct cuda_bpf *s, const char **open_probe)
{
	bool tp = !strcmp(*open_probe, "tracepoint");
	int err;

	if ((err = attach_into(s->progs.proc_exec, &s->links.proc_exec)) ||
	    (err = attach_into(s->progs.proc_fork, &s->links.proc_fork)) ||
	    (err = attach_into(s->progs.proc_exit, &s->links.proc_exit))) {
		pr_err("failed to attach the process lifecycle probes: %s", strerror(-err));
		return err;
	}
	/* thread renames after a thread's first record; its name at exit is
	 * taken without it */
	err = attach_into(s->progs.thread_rename, &s->links.thread_rename);
	if (err)
		pr_verbose("failed to attach the task_rename probe: %s; a thread renamed after its "
			   "first call keeps its first name", strerror(-err));
	/* the open's exit before its entry: an entry that keeps a path for an
	 * exit never run would leave it there. Without it the entry reports
	 * the open itself, and nobody is held. */
	err = tp ? attach_into(s->progs.open_exit_tp, &s->links.open_exit_tp) :
		   attach_into(s->progs.open_exit_raw, &s->links.open_exit_raw);
	if (err)
		pr_warn("failed to attach the openat exit probe (%s): %s; processes that open a libcuda "
			"without probes are not held, their first calls may be missing", *open_probe,
			strerror(-err));
	/* discovery of libcuda copies opened later; a rescan covers its absence */
	err = tp ? attach_into(s->progs.open_tp, &s->links.open_tp) :
		   attach_into(s->progs.open_raw, &s->links.open_raw);
	if (err) {
		pr_warn("failed to attach the openat probe (%s): %s; new libcuda copies are found by "
			"rescanning only", *open_probe, strerror(-err));
		*open_probe = "none";
	}
	return 0;
}
