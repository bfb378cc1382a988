// SPDX-License-Identifier: MIT
#include <string.h>
#include "format/records.h"

size_t gt_rec__min_size(uint16_t type)
{
	switch (type) {
	case GT_REC_CALL:	return sizeof(struct gt_call);
	case GT_REC_LAUNCH:	return sizeof(struct gt_launch);
	case GT_REC_RET:	return sizeof(struct gt_ret);
	case GT_REC_CALL_STR:	return sizeof(struct gt_call_str);
	case GT_REC_RET_STR:	return sizeof(struct gt_ret_str);
	case GT_REC_LIBOPEN:	return sizeof(struct gt_path);
	case GT_REC_EXEC:
	case GT_REC_FORK:
	case GT_REC_EXIT:
	case GT_REC_PROC_INFO:	return sizeof(struct gt_proc_evt);
	case GT_REC_IOCTL:	return sizeof(struct gt_ioctl);
	case GT_REC_OFFCPU:	return sizeof(struct gt_offcpu);
	case GT_REC_RANGE:
	case GT_REC_CAPTURE:	return sizeof(struct gt_capture);
	case GT_REC_NAME:	return sizeof(struct gt_name);
	case GT_REC_STATS:	return sizeof(struct gt_stats);
	case GT_REC_GPU_KERNEL:	return sizeof(struct gt_gpu_kernel);
	case GT_REC_GPU_MEMCPY:
	case GT_REC_GPU_MEMSET:	return sizeof(struct gt_gpu_copy);
	case GT_REC_GPU_API:	return sizeof(struct gt_gpu_api);
	case GT_REC_NVTX:	return sizeof(struct gt_nvtx);
	/* flags and the losses came later: a record without them is whole */
	case GT_REC_CUPTI_STATS: return offsetof(struct gt_cupti_stats, flags);
	case GT_REC_MERGE_STATS: return sizeof(struct gt_merge_stats);
	case GT_REC_TRIGGER:	return sizeof(struct gt_trigger);
	/* cut and the padding came later: a record without them is whole */
	case GT_REC_OVERHEAD:	return offsetof(struct gt_overhead, cut);
	case GT_REC_CUPTI_MARK:	return sizeof(struct gt_cupti_mark);
	case GT_REC_GPU_METRIC:	return sizeof(struct gt_gpu_metric);
	case GT_REC_NCCL:	return sizeof(struct gt_nccl);
	case GT_REC_NCCL_RET:	return sizeof(struct gt_ret);
	case GT_REC_PROC_RANK:	return sizeof(struct gt_proc_rank);
	case GT_REC_LIBLOAD:	return sizeof(struct gt_libload);
	case GT_REC_USTACK:	return sizeof(struct gt_ustack);
	case GT_REC_USTACK_SAME: return sizeof(struct gt_ustack_same);
	case GT_REC_STACK_REF:	return sizeof(struct gt_stack_ref);
	case GT_REC_STACK:	return sizeof(struct gt_stack);
	case GT_REC_MODULE:	return sizeof(struct gt_module);
	case GT_REC_SYMBOL:	return sizeof(struct gt_symbol);
	case GT_REC_PYCODE:	return sizeof(struct gt_pycode);
	case GT_REC_PYFUNC:	return sizeof(struct gt_pyfunc);
	case GT_REC_GPU_GRAPH_NODE: return sizeof(struct gt_gpu_graph_node);
	case GT_REC_CUPTI_ATTACH: return sizeof(struct gt_cupti_attach);
	case GT_REC_CLOCK:	return sizeof(struct gt_clock);
	case GT_REC_HOST:	return sizeof(struct gt_host);
	default:		return sizeof(struct gt_hdr);
	}
}

const char *gt_trigger_kind__name(uint32_t kind)
{
	static const char *const names[] = {
		[GT_TRIG_SYNC] = "sync", [GT_TRIG_ERROR] = "error", [GT_TRIG_EXIT] = "exit",
		[GT_TRIG_PROFILER] = "profiler", [GT_TRIG_SIGNAL] = "signal",
		[GT_TRIG_GPU_IDLE] = "gpu-idle",
	};

	return kind < sizeof(names) / sizeof(names[0]) && names[kind] ? names[kind] : "unknown";
}

const char *gt_attach_result__name(uint32_t result)
{
	static const char *const names[GT_ATTACH__COUNT] = {
		[GT_ATTACH_OK] = "attached", [GT_ATTACH_REFUSED] = "refused",
		[GT_ATTACH_CONFLICT] = "conflict", [GT_ATTACH_FAILED] = "failed", [GT_ATTACH_BUSY] = "busy",
		[GT_ATTACH_DIED] = "died",
	};

	return result < GT_ATTACH__COUNT ? names[result] : "unknown";
}

const char *gt_overhead_reason__name(uint32_t reason)
{
	static const char *const names[] = {
		[GT_OVH_ESTIMATE] = "estimate", [GT_OVH_CALIBRATED] = "calibrated",
		[GT_OVH_DUTY_DOWN] = "duty_down", [GT_OVH_DUTY_UP] = "duty_up",
		[GT_OVH_OVER] = "over_budget", [GT_OVH_SHED] = "shed", [GT_OVH_RESTORE] = "restore",
	};

	return reason < sizeof(names) / sizeof(names[0]) ? names[reason] : "unknown";
}

static const struct {
	const char *name, *text;
} libload_outcomes[GT_LL__COUNT] = {
	[GT_LL_HELD] = { "held", "held until its probes were attached" },
	[GT_LL_TIMEOUT] = { "timeout", "held, continued at the bound before its probes were attached" },
	[GT_LL_ATTACH_FAILED] = { "attach_failed", "its probes could not be attached" },
	[GT_LL_JOB] = { "job", "not held: a job of a job-control shell" },
	[GT_LL_TTY] = { "tty", "not held: in the foreground of its terminal" },
	[GT_LL_PTRACE] = { "ptrace", "not held: ptraced" },
	[GT_LL_RELAY] = { "relay", "not held: its parent relays stops (sudo, su)" },
	[GT_LL_STALE] = { "stale", "not held: the recorder was not answering" },
	[GT_LL_FULL] = { "full", "not held: too many processes held at once" },
	[GT_LL_SIGNAL] = { "signal", "not held: the stop signal failed or did not stop it" },
	[GT_LL_OFF] = { "off", "not held: holding was off" },
};

const char *gt_libload_outcome__name(uint32_t outcome)
{
	return outcome < GT_LL__COUNT && libload_outcomes[outcome].name ? libload_outcomes[outcome].name :
									  "unknown";
}

const char *gt_libload_outcome__text(uint32_t outcome)
{
	return outcome < GT_LL__COUNT && libload_outcomes[outcome].text ? libload_outcomes[outcome].text :
									  "unknown outcome";
}

bool gt_libload__gap(const struct gt_libload *l, uint64_t end, uint64_t *from, uint64_t *to)
{
	uint64_t f = l->hdr.ts, t = l->end_ts ? l->end_ts : end;

	/* held: the process ran from its continuation on */
	if (l->cont_ts)
		f = l->cont_ts;
	if (l->outcome == GT_LL_HELD || t <= f)
		return false;
	*from = f;
	*to = t;
	return true;
}

static const struct {
	const char *name, *unit;
} gpu_metrics[GT_GPUM_MAX] = {
	[GT_GPUM_GPU_UTIL] = { "gpu_util", "%" },
	[GT_GPUM_MEM_UTIL] = { "mem_util", "%" },
	[GT_GPUM_MEM_USED] = { "mem_used", "B" },
	[GT_GPUM_MEM_TOTAL] = { "mem_total", "B" },
	[GT_GPUM_SM_CLOCK] = { "sm_clock", "MHz" },
	[GT_GPUM_MEM_CLOCK] = { "mem_clock", "MHz" },
	[GT_GPUM_POWER] = { "power", "W" },
	[GT_GPUM_TEMP] = { "temperature", "C" },
	[GT_GPUM_THROTTLE] = { "throttle_reasons", "mask" },
	[GT_GPUM_PROC_MEM] = { "proc_mem_used", "B" },
	[GT_GPUM_LOST] = { "gpu_lost", "flag" },
	[GT_GPUM_SM_ACTIVE] = { "sm_active", "%" },
	[GT_GPUM_SM_OCCUPANCY] = { "sm_occupancy", "%" },
	[GT_GPUM_TENSOR_ACTIVE] = { "tensor_active", "%" },
	[GT_GPUM_FP16_ACTIVE] = { "fp16_active", "%" },
	[GT_GPUM_FP32_ACTIVE] = { "fp32_active", "%" },
	[GT_GPUM_FP64_ACTIVE] = { "fp64_active", "%" },
	[GT_GPUM_INT_ACTIVE] = { "int_active", "%" },
	[GT_GPUM_DRAM_BW] = { "dram_bw", "%" },
	[GT_GPUM_PCIE_TX] = { "pcie_tx", "MiB/s" },
	[GT_GPUM_PCIE_RX] = { "pcie_rx", "MiB/s" },
	[GT_GPUM_NVLINK_TX] = { "nvlink_tx", "MiB/s" },
	[GT_GPUM_NVLINK_RX] = { "nvlink_rx", "MiB/s" },
};

const char *gt_gpu_metric__name(uint32_t id)
{
	return id < GT_GPUM_MAX && gpu_metrics[id].name ? gpu_metrics[id].name : NULL;
}

const char *gt_gpu_metric__unit(uint32_t id)
{
	return id < GT_GPUM_MAX && gpu_metrics[id].unit ? gpu_metrics[id].unit : "";
}

struct gt_hdr *gt_name__fill(struct gt_name *n, size_t room, const struct gt_hdr *at,
			     uint16_t kind, uint64_t key, const char *s)
{
	size_t len = strnlen(s, room - 1) + 1;

	memset(n, 0, sizeof(*n) + GT_REC_ALIGN(len));
	n->hdr.ts = at->ts;
	n->hdr.pid = at->pid;
	n->hdr.tid = at->tid;
	n->hdr.type = GT_REC_NAME;
	n->hdr.size = GT_REC_ALIGN(sizeof(*n) + len);
	n->key = key;
	n->kind = kind;
	n->len = len;
	memcpy(n->str, s, len - 1);
	return &n->hdr;
}
