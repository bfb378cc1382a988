/* SPDX-License-Identifier: MIT */
/*
 * What dump and the exports say about a call or a process event, kept in
 * one place so that a field has the same name and value everywhere: the
 * fields of a decoded call as a list of (field, value) in dump's order.
 * The text formats write them through lib/obuf.h.
 */
#ifndef GTRACE_FIELDS_H
#define GTRACE_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "decode/decode.h"
#include "lib/obuf.h"
#include "format/trace_file.h"

struct trace_reader;

/* Writes a number, boolean, dim3 or flags field at p (the caller made
 * room: a dim3 takes at most 3 * 20 + 4 bytes, flags 40); dims as [x,y,z]
 * and flags as ["exit","cut"] when brackets, else x,y,z and exit|cut.
 * Strings are the caller's. Returns the end. */
struct cf_val;
char *fields__scalar(char *p, const struct cf_val *f, bool brackets);

/* ------------------------------------------------------------ fields */

/* Every field a call or process event can have, named as in dump.  The
 * order is that of the CSV columns (grid and block take three each). */
enum cf_id {
	CF_TS, CF_PID, CF_TID, CF_CPU, CF_TYPE, CF_API, CF_DUR, CF_RET, CF_FAILED,
	CF_INCOMPLETE, CF_KERNEL, CF_MANGLED, CF_FUNC, CF_GRID, CF_BLOCK, CF_SHMEM,
	CF_STREAM, CF_BYTES, CF_KIND, CF_DST, CF_SRC, CF_PTR, CF_HANDLE, CF_PARENT,
	CF_NAME, CF_PATH,
	CF_EVENT,	/* sync calls: the event handle; process events: exec, fork or exit */
	CF_PPID, CF_COMM, CF_EXIT_CODE, CF_GRAPH, CF_CTX, CF_COOPERATIVE,
	CF_CGROUP,
	CF_DEVICE,	/* calls and GPU records: the device ordinal; ioctls: the device file */
	CF_CMD, CF_RM, CF_FD, CF_STATE, CF_NEXT_CPU,
	CF_SRC_DEVICE, CF_DST_DEVICE,	/* copies: the device of each side, when known */
	/* NCCL calls (their kind is CF_KIND, buffers CF_SRC and CF_DST) and a
	 * process' rank records */
	CF_NCCL_COMM, CF_UID, CF_RANK, CF_NRANKS, CF_SEQ, CF_COUNT, CF_DATATYPE, CF_OP,
	CF_PEER, CF_GROUP, CF_LOCAL_RANK, CF_WORLD_SIZE, CF_LOCAL_WORLD,
	CF_NCCL_TS,	/* a call made inside an NCCL call: that call's entry */
	/* GPU records (merged traces) */
	CF_CONTEXT,
	CF_STREAM_ID,	/* CUPTI's stream id, not the CUstream handle of calls (CF_STREAM) */
	CF_CORRELATION, CF_LAUNCH_TS, CF_LAUNCH_TID, CF_CAUSALITY, CF_BY_ORDER,
	CF_CLOCK_FIXED,	/* ts moved by the merger: the GPU clock drifted */
	/* capture records (GT_REC_RANGE, GT_REC_CAPTURE); their kind is CF_KIND */
	CF_SOURCE, CF_INDEX, CF_FLAGS, CF_LATENCY_NS,
	/* flight-recorder triggers (GT_REC_TRIGGER); their kind is CF_KIND */
	CF_CODE, CF_WAIT_NS, CF_SUPPRESSED,
	/* the daemon's overhead records (GT_REC_OVERHEAD), from CF_OVERHEAD_FIRST
	 * on: a CSV has these columns only when its trace holds such records */
	CF_REASON, CF_INTERVAL_NS, CF_HITS, CF_PROBE_NS, CF_TOTAL_NS, CF_BPF_NS,
	CF_ESTIMATE_PPM, CF_ESTIMATE_PCT, CF_BUDGET_PPM, CF_BUDGET_PCT, CF_DUTY_PPM,
	CF_DUTY_PCT, CF_PERIOD_MS, CF_HIT_NS, CF_RET_NS, CF_SAMPLER_PPM, CF_SAMPLER_PCT,
	CF_CUT,		/* shed and restore records: calls whose exit the swap could not record */
	/* GPU metrics (GT_REC_GPU_METRIC), from CF_GPUM_FIRST on: a CSV has these
	 * columns only when its trace was recorded with them; their GPU is
	 * CF_DEVICE */
	CF_METRIC, CF_VALUE, CF_UNIT,
	/* call stacks (--stacks), from CF_STACKS_FIRST on: a CSV has this column
	 * when the trace was recorded with them */
	CF_STACK,	/* calls: the id of their stack (dump's "stack" lines); kernels a
			 * CUDA graph ran: the stack of the launch that captured them */
	CF_GRAPH_NODE,	/* kernels a CUDA graph ran: CUPTI's node id */
	CF_CAPTURE_TS, CF_CAPTURE_TID,	/* ... the capturing launch's entry and thread */
	CF_CLONED_FROM,	/* a graph node record: the node it is a clone of */
	CF__COUNT,
};

#define CF_OVERHEAD_FIRST CF_REASON
#define CF_GPUM_FIRST CF_METRIC
#define CF_STACKS_FIRST CF_STACK

enum cf_kind {
	CF_K_U64,	/* u */
	CF_K_I64,	/* i */
	CF_K_STR,	/* s, len bytes, not NUL-terminated (a comm may fill its field) */
	CF_K_DIM3,	/* dim[3] */
	CF_K_BOOL,	/* b */
	CF_K_FLAGS,	/* u: GT_CAP_F_* bits, a list of their names (format/capture.h) */
	CF_K_MICRO,	/* i: millionths, written as the exact decimal: 87125000 as 87.125,
			 * -1500000 as -1.5 (at most six decimals, no trailing zeros) */
	CF_K_PPM,	/* u: parts per million, written as the exact percentage: 42500 as
			 * 4.25, 1000000 as 100 (at most four decimals, no trailing zeros) */
};

/* Whether a skip mask (bit 1 << id per field left out) leaves id out: masks
 * name the common fields, which come first; ids from 64 on are never left
 * out. */
static inline bool cf_skips(uint64_t skip, unsigned id)
{
	return id < 64 && (skip >> id & 1);
}

/* One field of a call: which, and its value. */
struct cf_val {
	uint8_t id;		/* enum cf_id */
	uint8_t kind;		/* enum cf_kind */
	uint32_t len;		/* CF_K_STR: bytes of s */
	union {
		uint64_t u;
		int64_t i;
		const char *s;
		const uint32_t *dim;
		bool b;
	};
};

#define CF_MAX 32		/* fields of one call or event, at most (an NCCL collective with its stack has over 24) */

/* Field names as dump writes them, indexed by enum cf_id. */
extern const char *const cf_names[CF__COUNT];

/* The fields of a call in dump's order, common ones first; returns how many.
 * Strings point into c (valid while c is). */
unsigned fields__call(const struct gt_callrec *c, struct cf_val v[CF_MAX]);
/* The same for an NCCL call: ts, pid, tid, cpu, type "nccl", api, dur, ret,
 * failed (ret neither 0 nor ncclInProgress) or incomplete, kind
 * ("collective", "p2p", "group", "init", "split", "free"), comm, and what
 * applies: uid, rank, nranks, seq (collectives), count, datatype, bytes,
 * op, peer, src (send buffer), dst (receive buffer), stream, device,
 * group (inside ncclGroupStart/End). */
unsigned fields__nccl(const struct gt_ncclrec *n, struct cf_val v[CF_MAX]);
/* The name a timeline shows for an NCCL call: "AllReduce bfloat16 4 MiB",
 * "Send float32 32 B to 1", "CommInitRankConfig rank 0/2", "GroupEnd".
 * Returns buf. */
char *fields__nccl_name(const struct gt_ncclrec *n, char *buf, size_t len);
/* The same for an exec, fork or exit record; 0 for any other record. */
unsigned fields__proc(const struct gt_hdr *rec, struct cf_val v[CF_MAX]);
/* The same for a GPU kernel, copy or set and an NVTX range (merged traces);
 * 0 for any other record (GT_REC_GPU_API, the agents' and merger's stats are
 * no lines).  Kernel names are demangled through d; strings point into rec
 * or into d's name table. */
unsigned fields__gpu(struct gt_decoder *d, const struct gt_hdr *rec, struct cf_val v[CF_MAX]);
/* The name a timeline shows for a GPU kernel, copy or set or an NVTX range:
 * the demangled kernel name, "memcpy HtoD 4 MiB", "memset 1 MiB", the NVTX
 * message (not NUL-terminated: *n is its length); NULL for other records.
 * May be built in buf (CF_NAME_BUF bytes). */
#define CF_NAME_BUF 64
const char *fields__gpu_name(struct gt_decoder *d, const struct gt_hdr *rec,
			      char buf[CF_NAME_BUF], size_t *n);
/* The name a timeline shows for a process: the decoder's name (command line
 * or comm, whole) and, when its rank is known, " [rank 1/2]"; *out NULL when
 * the decoder knows neither, else malloc'd.  Returns 0 or -ENOMEM. */
int fields__process_label(const struct gt_decoder *d, uint32_t pid, char **out);
/* A byte count for people: "512 B", "4 KiB", "1.5 MiB". Returns buf. */
char *fields__bytes(char *buf, size_t len, uint64_t bytes);
/* The same for a capture record (GT_REC_RANGE, GT_REC_CAPTURE); 0 for any
 * other record. */
unsigned fields__capture(const struct gt_hdr *rec, struct cf_val v[CF_MAX]);
/* The name a timeline shows for a capture span: "window 4", "range 2
 * (cudaProfilerApi)"; a range that opened before the hot probes were live
 * "range 2 (cudaProfilerApi, hot calls from +1.5 ms)", or "…, no hot
 * calls" when they never were while it was open; a refused one "range 3
 * (cudaProfilerApi, refused)".  Returns buf. */
struct capspan;
struct capture_hot;
char *fields__span_name(const struct capspan *s, char *buf, size_t len);
/* The same for a hot-probe change: "hot probes live (range 2)", "hot probes off". */
char *fields__hot_name(const struct capture_hot *h, char *buf, size_t len);

/* One argument of a capture span or hot-probe change on a timeline. */
struct span_arg {
	const char *name;	/* "number", "state", ... */
	enum { SA_U64, SA_STR, SA_FLAGS } kind;	/* SA_FLAGS: u holds GT_CAP_F_* bits */
	uint64_t u;
	const char *s;		/* SA_STR */
};
#define SPAN_ARGS_MAX 8
/* The arguments the Perfetto and JSON exports give a span (h NULL) or a
 * hot-probe change (s NULL), in order: number, source, state, flags (when
 * any), then a range's tid and, when it missed its hot start-up, live_ts
 * and hot_missing_ns, a window's attach_ns and detach_ns; a change's
 * latency_ns and range.  Returns how many. */
unsigned fields__span_args(const struct capspan *s, const struct capture_hot *h,
			   struct span_arg a[SPAN_ARGS_MAX]);
/* The same for a flight-recorder trigger (GT_REC_TRIGGER): ts, pid, tid,
 * type "trigger", kind, api (when the record names a call), code, wait_ns,
 * suppressed; 0 for any other record. */
unsigned fields__trigger(const struct gt_hdr *rec, struct cf_val v[CF_MAX]);
/* The name a timeline shows for a trigger: "trigger: sync 2.5 s
 * (cuStreamSynchronize)", "trigger: error 700 (cuMemcpyDtoH_v2)",
 * "trigger: exit status 256", "trigger: profiler (cuProfilerStart)",
 * "trigger: SIGUSR1", "trigger: unknown".  Returns buf. */
char *fields__trigger_name(const struct gt_trigger *t, char *buf, size_t len);
/* The same for an overhead record of the daemon (GT_REC_OVERHEAD): ts, pid,
 * tid (the thread that paid most), type "overhead", reason, interval_ns,
 * hits, probe_ns, total_ns, bpf_ns, estimate_ppm, estimate_pct, budget_ppm,
 * budget_pct, duty_ppm, duty_pct, period_ms, hit_ns, ret_ns; 0 for any other
 * record. */
unsigned fields__overhead(const struct gt_hdr *rec, struct cf_val v[CF_MAX]);
/* The name a timeline shows for an overhead record: "overhead: duty cycle
 * down to 10 % (estimated 7.9 %, budget 5 %)", "… up to 25 % (…)",
 * "overhead: over budget at the lowest duty cycle (estimated 7.9 %, budget
 * 5 %)", "overhead: probe hit calibrated (entry 310 ns, return 420 ns)",
 * "overhead: estimated 4.25 %" (the periodic estimate), "overhead:
 * unknown".  Returns buf. */
char *fields__overhead_name(const struct gt_overhead *o, char *buf, size_t len);
/* ppm as a percentage for people, three significant digits: "4.25 %",
 * "100 %", "0.05 %".  Returns buf. */
char *fields__ppm_text(uint32_t ppm, char *buf, size_t len);
/* The same for a GPU metric sample (GT_REC_GPU_METRIC): ts, pid, tid (0),
 * type "gpu_metric", device (the GPU's NVML index), metric (its name, or
 * "metric_N" for an id this build does not know), value (exact, in the
 * metric's unit), unit; 0 for any other record. */
unsigned fields__gpu_metric(const struct gt_hdr *rec, struct cf_val v[CF_MAX]);
/* Any of those above: the fields of any record that is no call. */
unsigned fields__record(struct gt_decoder *d, const struct gt_hdr *rec, struct cf_val v[CF_MAX]);
/* Which NVIDIA device majors the trace saw (from its header's options), so
 * that ioctl records get device and command names. Call after opening. */
void fields__set_trace_info(const struct gt_file_info *info);
/* The fields as JSON members, "name":value separated by commas, without
 * braces; those whose bit (1 << id) is set in skip are left out. */
void fields__json(struct obuf *o, const struct cf_val *v, unsigned n, uint64_t skip);
/* Stack id's frames as a JSON array of strings ("func+0x1c (file)", ...,
 * innermost first; null for a frame not known), dump's and the Chrome
 * JSON's. */
void fields__json_frames(struct obuf *o, const struct gt_decoder *d, uint32_t stack);

/* Names of the fields of struct gt_counters in order. */
extern const char *const gt_counter_names[];
extern const unsigned gt_counter_count;

/* The start every text export shares: the output buffer on out and a
 * decoder that feeds on_call / on_other with ctx. Returns 0, or -ENOMEM
 * with *why set and nothing left to free but what was already the
 * caller's. */
int fields__writer_open(struct obuf *ob, FILE *out, gt_call_cb on_call, gt_rec_cb on_other, void *ctx,
			struct gt_decoder **d, const char **why);
/* Feeds every record of r to d and finishes it: the read loop of dump and
 * the exports.  Returns 0 or the first error (reader, decoder, or what a
 * callback returned); *why then says which in one line. A truncated file
 * is not an error: trace_reader__truncated() tells. */
int fields__decode_all(struct trace_reader *r, struct gt_decoder *d, const char **why);

#endif
