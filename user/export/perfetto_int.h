/* SPDX-License-Identifier: MIT */
/*
 * Internal to `export -f perfetto`: the state its files share.
 * perfetto.c writes calls, threads and processes and drives the
 * export; perfetto_order.c decides when a thread's calls are written,
 * perfetto_args.c writes their events with their arguments;
 * perfetto_gpu.c writes the GPU side of merged traces (GPU stream and NVTX
 * tracks) and keeps the flows from calls to GPU records.
 */
#ifndef GTRACE_EXPORT_PERFETTO_INT_H
#define GTRACE_EXPORT_PERFETTO_INT_H

#include <stdbool.h>
#include <stdint.h>
#include "export/fields.h"
#include "decode/capture_spans.h"
#include "decode/decode.h"
#include "lib/hmap.h"
#include "export/perfetto/pftrace.h"

#define FLOW_SHIFT	16	/* flow id = call's base << FLOW_SHIFT | its GPU record's index */
#define FLOW_PER_CALL	((1u << FLOW_SHIFT) - 1)	/* GPU records of one call with an arrow */
/* A launch recorded at entry only is drawn as a slice this long at its
 * entry: an instant in one viewer is no end of an arrow in another (the
 * JSON export draws it the same). */
#define ENTRY_ONLY_NS	1

/* What the exporter keeps of an entry the decoder holds open, in the
 * entry's cookie (0 when taken; see gt_decoder__open_entries): bit 0, the
 * exporter stopped waiting for it (see perfetto_order.c); bits 1-16, the GPU
 * records linked to it so far; bits 17-63, their flows' base, valid when
 * there are some.  The call comes back with it. */
#define CK_GIVEN_UP	1ull
#define CK_NFLOW_ONE	2ull
#define CK_BASE_SHIFT	(1 + FLOW_SHIFT)
#define CK_BASE_MAX	(UINT64_MAX >> CK_BASE_SHIFT)	/* flow bases a cookie holds */

static inline uint32_t ck_nflow(uint64_t ck)
{
	return (uint32_t)(ck >> 1) & FLOW_PER_CALL;
}

static inline uint64_t ck_flow_base(uint64_t ck)
{
	return ck >> CK_BASE_SHIFT;
}

/* Debug annotation names (their strings: ann_names in perfetto.c). */
enum ann {
	A_API, A_GRID, A_BLOCK, A_SHMEM, A_STREAM, A_FUNC, A_MANGLED, A_COOP, A_GRAPH,
	A_BYTES, A_KIND, A_DST, A_SRC, A_PTR, A_EVENT, A_CTX, A_HANDLE, A_PARENT, A_PATH,
	A_NAME, A_RET, A_FAILED, A_INCOMPLETE, A_PPID, A_COMM, A_EXIT_CODE,
	A_DEVICE, A_CMD, A_RM, A_FD, A_STATE, A_SRC_DEVICE, A_DST_DEVICE, A__COUNT,
};

#define ANN_UINT(x, a, v)	pftrace__ann_uint((x)->w, (x)->ann[a], v)
#define ANN_INT(x, a, v)	pftrace__ann_int((x)->w, (x)->ann[a], v)
#define ANN_BOOL(x, a, v)	pftrace__ann_bool((x)->w, (x)->ann[a], v)
#define ANN_PTR(x, a, v)	pftrace__ann_ptr((x)->w, (x)->ann[a], v)
#define ANN_STR(x, a, id)	pftrace__ann_str((x)->w, (x)->ann[a], id)

/* What an item is: a libcuda call, or a kernel-side record that sits on the
 * thread's track inside the call that caused it, or a libnccl call (whose
 * launches sit inside it). */
enum item_kind { IK_CALL, IK_IOCTL, IK_OFFCPU, IK_NCCL };

/* A call ready to be written: the decoder's record with its strings
 * replaced by string ids (the decoder's strings die with the callback). */
struct item {
	struct gt_callrec c;	/* string pointers cleared */
	uint64_t end;		/* ts + dur; ts for an instant */
	uint64_t order;		/* emission order: at equal ts and end, the later one is the parent */
	uint32_t name;		/* slice name */
	uint32_t mangled, str;	/* kernel mangled name; string argument or copy kind; 0 = none */
	uint64_t flow_base;	/* flows of its GPU records: ids flow_base << FLOW_SHIFT | 0 … */
	uint32_t nflow;		/* … | nflow - 1; 0 = none */
	uint8_t kind;		/* enum item_kind */
	uint32_t dev, rm;	/* ioctl: device and RM command/class names; off-CPU: rm = state */
	uint64_t cmd;		/* ioctl: request number */
	int32_t fd;		/* ioctl: file descriptor, -1 unknown */
	struct gt_ncclrec *nccl;	/* IK_NCCL: a copy of the call, freed once written */
};

/* A call that completed, or a launch recorded at entry only (a slice of
 * ENTRY_ONLY_NS: arrows start from it), is a slice; one whose exit was
 * lost an instant. */
static inline bool item_slice(const struct item *it)
{
	return it->c.has_exit || it->c.entry_only;
}

struct thr {
	uint32_t pid, tid;
	struct pf_track tr;
	char *name;			/* as written in the descriptor, NULL if none */
	struct thr *next;		/* of the same process */
	struct item *buf;		/* completed calls waiting for W, sorted by begin */
	uint32_t nbuf, capbuf;
	uint64_t *ends;			/* ends of written slices not ended yet, innermost last */
	uint32_t depth, capends;
};

/* A process event (exec, fork, exit) waiting for its process' descriptor. */
struct proc_ev {
	uint64_t ts;
	uint32_t ppid, comm;		/* comm: string id */
	int32_t exit_code;
	uint8_t type;			/* GT_REC_EXEC, _FORK, _EXIT */
};

/* A process is described once, when first needed (see perfetto.c): its
 * events wait in evs until then. */
struct proc {
	uint32_t pid;
	struct pf_track tr;
	bool described;			/* its ProcessDescriptor is written */
	struct proc_ev *evs;		/* its events while not described, in order */
	uint32_t nev, capev;
	struct thr *threads;
};

/* A track of complete slices that come in begin order: a GPU stream's work,
 * a thread's NVTX ranges (see perfetto_gpu.c). */
struct span {
	struct pf_track tr;
	uint64_t *ends;			/* ends of written slices not ended yet, innermost last */
	uint32_t depth, capends;
};

/* The root tracks of the daemon's overhead records (perfetto_capture.c):
 * four counter tracks (the sampler's only with --gpu-metrics) and one of
 * instants, the changes. */
enum pf_ovh_track { PF_OVH_ESTIMATE, PF_OVH_BUDGET, PF_OVH_DUTY, PF_OVH_SAMPLER, PF_OVH_CHANGES, PF_OVH__COUNT };

struct pf_gpum;

struct pf {
	struct pftrace *w;
	struct gt_decoder *d;
	int err;			/* first error of our own (the writer keeps its own) */
	const char *why;
	uint32_t ann[A__COUNT];		/* string ids of the annotation names */
	uint32_t api_name[GT_API__COUNT];	/* string ids of the api names, 0 until used */
	uint32_t ev_name[GT_REC_EXIT + 1];	/* "exec", "fork", "exit" */
	struct hmap procs;		/* (pid, 0) -> struct proc */
	struct hmap thrs;		/* (tid, pid) -> struct thr */
	struct thr *last;		/* the thread of the previous lookup */
	uint64_t order;			/* calls seen */
	uint64_t abandoned, clamped;	/* ordering repairs (see perfetto_order.c) */
	struct u64map ended;		/* pid + 1 -> uuid of the track of an exited process */
	struct hmap gpu;		/* (context << 32 | stream, pid) -> struct span */
	struct hmap gdevs;		/* (process track uuid, device) -> struct pf_track:
					 * the group "GPU N" of its stream tracks */
	struct u64map ncomms;		/* communicator key -> struct pf_comm * (perfetto_nccl.c) */
	struct u64map nranks;		/* (communicator, lane) key -> struct pf_track * */
	struct pf_track **ntracks;	/* every NCCL track, to free */
	size_t nntracks, capntracks;
	uint32_t ncomm_count;		/* communicators numbered */
	struct hmap nvtx;		/* (tid, pid) -> struct span */
	uint64_t flow_bases;		/* flow bases handed out */
	uint32_t cf_ann[CF__COUNT];	/* string ids of the field names of export/fields.h, 0 until used */
	/* The latest launch recorded at entry only, held back from its track
	 * until the records after its entry are read: the merger puts its GPU
	 * records there, after the decoder emitted it, and the slice must
	 * carry their flow ids (see perfetto_gpu.c). */
	struct item held;
	bool holding;			/* held is set */
	struct capture_spans *cap;	/* capture ranges and windows, written at the end */
	struct pf_track triggers;	/* the root track "Triggers", described at the first */
	bool triggers_live;		/* triggers is described */
	struct pf_track ovh[PF_OVH__COUNT];	/* overhead tracks, each described at its first event */
	bool ovh_live[PF_OVH__COUNT];	/* ovh[i] is described */
	struct pf_gpum *gpum;		/* GPU metric tracks (perfetto_gpum.c), NULL until the first */
	struct export_parts *parts;	/* export --split, NULL: one file */
	uint64_t roll_at;		/* a part's bytes from which the next begins */
};

static inline int pf_err(struct pf *x)
{
	return x->err ? x->err : pftrace__err(x->w, NULL);
}

/* perfetto.c */

/* Keeps the first error of our own and its reason (x->why). */
void pf__fail(struct pf *x, int err, const char *what);
/* pid's process track, made on first use and described (once) now; NULL:
 * out of memory. */
struct proc *pf__proc_get(struct pf *x, uint32_t pid);

/* perfetto_args.c */

/* A slice begin or an instant, with category, name and arguments. */
void pf__write_call(struct pf *x, struct thr *t, struct pf_seq *s, const struct item *it);
/* The open event's call stack: the trace's stack id (0: none), interned. */
void pf__event_stack(struct pf *x, uint32_t stack);

/* perfetto_order.c */

/* Writes an item now when nothing on its thread waits, else buffers it. */
int pf__place(struct pf *x, struct thr *t, struct item *it);
/* Writes the buffered calls that begin before w, then the slice ends
 * below it. */
void pf__drain_below(struct pf *x, struct thr *t, uint64_t w);
/* Ends every slice a thread's track has open, now (before a new part). */
void pf__threads_end_slices(struct pf *x);
/* Before a new part: the arrows whose GPU end is written and whose call is
 * not (buffered, or still open) are cut, their calls will carry none;
 * returns how many. */
uint64_t pf__threads_cut_flows(struct pf *x);
/* Pushes the end of a slice just begun on a track's stack of open slices
 * (thread or GPU span track); out of memory fails the export. */
void pf__ends_push(struct pf *x, uint64_t **ends, uint32_t *depth, uint32_t *cap, uint64_t end);

/* perfetto_gpu.c */

/* The uuid of pid's process track: the live one, that of the process that
 * exited with this pid, else a new one.  0 when out of memory. */
uint64_t pf__proc_uuid(struct pf *x, uint32_t pid);

/* The fields of a record (export/fields.h) as debug annotations of the open
 * event, those whose bit (1 << id) is set in skip left out, and its type as
 * the event's category. */
void pf__field_args(struct pf *x, const struct cf_val *v, unsigned n, uint64_t skip);
/* A kernel, copy, set or NVTX range on its span track. */
int pf__on_gpu(struct pf *x, const struct gt_hdr *rec);
/* Writes the ends the span tracks of m (x->gpu or x->nvtx) still hold. */
void pf__spans_finish(struct pf *x, struct hmap *m);
void pf__span_free(struct span *sp);

/* perfetto_nccl.c */

/* An NCCL call on its communicator's track (a root track per communicator,
 * "NCCL communicator N (2 ranks)", a child per rank, "rank 1 (pid 4242)"):
 * collectives, point-to-point calls, inits, splits and destroys. */
void pf__nccl_comm_event(struct pf *x, const struct gt_ncclrec *nc);
/* The annotations and category of an NCCL call's event. */
void pf__nccl_args(struct pf *x, const struct gt_ncclrec *nc);
void pf__nccl_free(struct pf *x);

/* perfetto_capture.c */

/* Finishes x->cap at end_ts and writes its tracks: the capture ranges of
 * each process, the light-mode windows and hot-probe changes. */
void pf__capture_write(struct pf *x, uint64_t end_ts);
/* A flight-recorder trigger: an instant on the root track "Triggers". */
void pf__on_trigger(struct pf *x, const struct gt_hdr *rec);
/* An overhead record of the daemon: values on the counter tracks
 * "overhead estimate (%)", "overhead budget (%)" and "full-capture duty
 * cycle (%)", and a change (a reason other than the periodic estimate) an
 * instant on the track "Overhead changes". */
void pf__on_overhead(struct pf *x, const struct gt_hdr *rec);
/* A GPU metric sample: its value on the counter track of its GPU and
 * metric (perfetto_gpum.c).  Returns 0 or -ENOMEM. */
int pf__on_gpu_metric(struct pf *x, const struct gt_hdr *rec);
void pf__gpum_free(struct pf *x);
/* The findings of export__set_findings: a track per (pid, rule) under the
 * process (export.h says how they are drawn). */
void pf__findings_write(struct pf *x);

#endif
