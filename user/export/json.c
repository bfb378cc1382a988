// SPDX-License-Identifier: MIT
/*
 * `gtrace-bpf export -f json`: the Chrome trace event format (its JSON
 * object form), which chrome://tracing and the Perfetto UI load:
 *
 *   {"traceEvents":[
 *   {"name":...,"cat":"launch","ph":"X","ts":1234.567,"dur":3.120,"pid":..,"tid":..,"args":{...}},
 *   ...
 *   ],"displayTimeUnit":"ns","metadata":{...}}
 *
 * A call with an exit is a complete event (ph X), and so is a launch
 * recorded at entry only, 1 ns long at its entry (ENTRY_ONLY_NS: arrows
 * bind to slices, not instants); a call whose exit never came and a
 * process exec/fork/exit are instant events on their thread (ph i, scope t).
 * Process and thread names and sort indexes are metadata events (ph M),
 * written when a process or thread is first seen and again when its name
 * changes.  args carry the call's fields under dump's names.
 *
 * Events are written as the decoder completes the calls (completion order,
 * as dump; viewers sort by time), so memory does not grow with the trace,
 * only with the number of processes and threads.  The "metadata" object
 * comes last because part of it is only known at the end: whether the file
 * was cut short, and the final counters.  displayTimeUnit comes after the
 * events on purpose: for the format it only sets how times are shown, but
 * older versions of Perfetto's trace processor took it, when seen before
 * traceEvents, as the unit of ts and dur (every time a thousandfold too
 * small); after the events they ignore it, as current versions always do.
 *
 * Times: the format's unit is the microsecond; the nanoseconds are kept as
 * three decimals, written as integers so that no float rounding creeps in.
 *
 * GPU side (merged traces).  Kernels, copies and sets are complete events
 * in their process, on one lane per (device, context, stream): a synthetic
 * tid from LANE_BASE up (above any kernel tid) named "GPU 0 stream 7" by
 * thread_name metadata and sorted after the threads, grouped per device
 * (its sort index has the device above bit 32).  NVTX ranges go on a
 * lane of their own per thread ("NVTX main 4242", "NVTX tid 4242" when the
 * thread has no name), as they need not nest with the calls.  A linked record gets an arrow from its call: the merger
 * puts it after its call's entry, so it is written before the call, which
 * comes at its exit; its flow is remembered by (tid, launch_ts) and written
 * with the call, ph 's' at the call's entry and ph 'f' (bp 'e') at the GPU
 * event.  A launch recorded at entry only is written at its entry, before
 * its GPU records: they follow it in the file, so the latest one is kept
 * (struct jx.held) and each of its GPU records writes its arrow at once.
 * A call that never completed is an instant, which flow events cannot
 * bind to: its GPU events get no arrow, nor does a record whose call the
 * decoder never emits.  So no flow id is ever left with one end.
 *
 * NCCL calls are complete events on their thread (category "nccl", named
 * "AllReduce bfloat16 4 MiB", args dump's fields), and their
 * communicator's calls (collectives, point-to-point, init, split, destroy)
 * once more in a process of its own per communicator, "NCCL communicator
 * N (2 ranks)" (a synthetic pid from COMM_PID_BASE), one lane per rank
 * ("rank 1 (pid 4242)"): the ranks of one communicator are told by their
 * ncclUniqueId's digest, so a collective sits at the same place on every
 * rank's lane and the one that came last shows.  A communicator whose init
 * the trace does not hold has a process of its own per process that used
 * it, one lane.  A process' name carries its rank when known ("python
 * train.py [rank 1/2]").
 *
 * Capture control, the daemon's triggers, overhead records and GPU metric
 * samples, and the findings of export --findings: json_capture.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "export/fields.h"
#include "decode/capture_spans.h"
#include "decode/decode.h"
#include "export/export.h"
#include "lib/hash.h"
#include "lib/hmap.h"
#include "format/trace_file.h"
#include "lib/u64map.h"
#include "lib/vec.h"
#include "export/json_int.h"

/* Fields that are the event's own keys (ts, dur, pid, tid, cat), not args. */
#define ARGS_SKIP ((1ull << CF_TS) | (1ull << CF_PID) | (1ull << CF_TID) | \
		   (1ull << CF_TYPE) | (1ull << CF_DUR))

#define THREAD_KEY(pid, tid) ((uint64_t)(pid) << 32 | (tid) | 1ull << 63)

/* The length of a launch recorded at entry only (see the top). */
#define ENTRY_ONLY_NS 1

/* Sort indexes of GPU lanes start here (after the NVTX lanes); the device
 * is above bit 32, so that a process' streams are grouped per device. */
#define LANE_SORT_GPU (1ull << 31)

/* Synthetic pids of the NCCL communicators' processes (see the top): above
 * the recorder's. */
#define COMM_PID_BASE (LANE_BASE + 0x10000000u)

/* A GPU stream's or a thread's NVTX lane. */
struct lane {
	uint32_t tid;		/* its synthetic tid */
};

/* The GPU ends of the arrows of one call, waiting for the call. */
struct jflow {
	uint32_t pid;		/* of the call (the map's key is its tid and entry) */
	uint32_t n, cap;
	struct {
		uint64_t id;	/* flow id */
		uint64_t ts;	/* GPU start */
		uint32_t lane;	/* tid of the GPU event's lane */
		bool copy;	/* a copy or set: the arrow is named "copy" */
	} *v;
};

/* Never 0 (0 marks "no name written"). */
static uint64_t name_hash(const char *s)
{
	return hash__bytes(s, strlen(s)) | 1;
}

void jx__put_pid_tid(struct obuf *o, uint32_t pid, uint32_t tid)
{
	OBUF_LIT(o, ",\"pid\":");
	obuf__u64(o, pid);
	OBUF_LIT(o, ",\"tid\":");
	obuf__u64(o, tid);
}

/* A metadata event up to its one argument's value: {"name":WHAT,"ph":"M",
 * pid, tid, "args":{"KEY": — the caller writes the value, then "}}". */
static struct obuf *put_meta_open(struct jx *j, const char *what, uint32_t pid, uint32_t tid,
				  const char *key)
{
	struct obuf *o = &j->ob;

	ev_open(j);
	OBUF_LIT(o, "{\"name\":");
	obuf__json_str(o, what);
	OBUF_LIT(o, ",\"ph\":\"M\"");
	jx__put_pid_tid(o, pid, tid);
	OBUF_LIT(o, ",\"args\":{");
	obuf__json_str(o, key);
	OBUF_LIT(o, ":");
	return o;
}

void jx__put_meta_name(struct jx *j, const char *what, uint32_t pid, uint32_t tid,
		       const char *name)
{
	struct obuf *o = put_meta_open(j, what, pid, tid, "name");

	obuf__json_str(o, name);
	OBUF_LIT(o, "}}");
}

void jx__put_meta_sort(struct jx *j, const char *what, uint32_t pid, uint32_t tid,
		       uint64_t index)
{
	struct obuf *o = put_meta_open(j, what, pid, tid, "sort_index");

	obuf__u64(o, index);
	OBUF_LIT(o, "}}");
}

/* A flow event, for arrows from a launch to the kernel it started (GPU
 * activity, once merged): ph 's' starts arrow id at the slice enclosing
 * (ts, pid, tid), ph 'f' ends it at the slice enclosing its point ("bp":"e":
 * the enclosing slice, not the next one to begin). */
static void put_flow(struct jx *j, const char *name, char ph, uint64_t id, uint64_t ts,
		     uint32_t pid, uint32_t tid)
{
	struct obuf *o = &j->ob;

	ev_open(j);
	OBUF_LIT(o, "{\"name\":");
	obuf__json_str(o, name);
	OBUF_LIT(o, ",\"cat\":\"flow\",\"ph\":");
	if (ph == 's')
		OBUF_LIT(o, "\"s\"");
	else
		OBUF_LIT(o, "\"f\",\"bp\":\"e\"");
	OBUF_LIT(o, ",\"id\":");
	obuf__u64(o, id);
	OBUF_LIT(o, ",\"ts\":");
	put_us(o, ts);
	jx__put_pid_tid(o, pid, tid);
	OBUF_LIT(o, "}");
}

/* Writes the process' name if the decoder knows one not written yet. */
static int proc_name(struct jx *j, uint32_t pid)
{
	char *name;
	uint64_t h, *seen;
	int rc = fields__process_label(j->d, pid, &name);

	if (rc || !name)
		return rc;
	h = name_hash(name);
	seen = u64map__get(&j->procs, (uint64_t)pid + 1);
	if (!seen || *seen != h) {
		rc = u64map__set(&j->procs, (uint64_t)pid + 1, h) ? -ENOMEM : 0;
		if (!rc)
			jx__put_meta_name(j, "process_name", pid, pid, name);
	}
	free(name);
	return rc;
}

static int thread_name(struct jx *j, uint32_t pid, uint32_t tid)
{
	const char *name = gt_decoder__thread_name(j->d, tid);
	uint64_t h, *seen;

	if (!name)
		return 0;
	h = name_hash(name);
	seen = u64map__get(&j->threads, THREAD_KEY(pid, tid));
	if (seen && *seen == h)
		return 0;
	if (u64map__set(&j->threads, THREAD_KEY(pid, tid), h))
		return -ENOMEM;
	jx__put_meta_name(j, "thread_name", pid, tid, name);
	return 0;
}

int jx__proc_seen(struct jx *j, uint32_t pid)
{
	if (u64map__get(&j->procs, (uint64_t)pid + 1))
		return 0;
	if (u64map__set(&j->procs, (uint64_t)pid + 1, 0))
		return -ENOMEM;
	jx__put_meta_sort(j, "process_sort_index", pid, pid, pid);
	return proc_name(j, pid);
}

/* Before the first event of a thread: the metadata of its process (when
 * new) and its own.  Processes sort by pid, threads by tid with the main
 * thread first. */
static int track(struct jx *j, uint32_t pid, uint32_t tid)
{
	uint64_t key = THREAD_KEY(pid, tid);
	int rc;

	if (key == j->last_thread || u64map__get(&j->threads, key)) {
		j->last_thread = key;
		return 0;
	}
	rc = jx__proc_seen(j, pid);
	if (rc)
		return rc;
	if (u64map__set(&j->threads, key, 0))
		return -ENOMEM;
	jx__put_meta_sort(j, "thread_sort_index", pid, tid, tid == pid ? 0 : tid);
	j->last_thread = key;
	return thread_name(j, pid, tid);
}

/* The arrows of a call whose GPU events were written: one 's' at the call,
 * one 'f' at each GPU event; none for a call without an exit. */
static void call_flows(struct jx *j, const struct gt_callrec *c)
{
	struct jflow *fl = hmap_get(&j->flows, c->ts, c->tid);

	if (!fl || fl->pid != c->pid)
		return;
	for (uint32_t i = 0; i < fl->n && c->has_exit; i++) {
		const char *name = fl->v[i].copy ? "copy" : "launch";

		put_flow(j, name, 's', fl->v[i].id, c->ts, c->pid, c->tid);
		put_flow(j, name, 'f', fl->v[i].id, fl->v[i].ts, c->pid, fl->v[i].lane);
	}
	hmap_del(&j->flows, c->ts, c->tid);
	free(fl->v);
	free(fl);
}

static int on_call(void *ctx, const struct gt_callrec *c)
{
	struct jx *j = ctx;
	struct obuf *o = &j->ob;
	struct cf_val v[CF_MAX];
	unsigned n;
	int rc;

	rc = track(j, c->pid, c->tid);
	if (rc)
		return rc;
	n = fields__call(c, v);
	ev_open(j);
	OBUF_LIT(o, "{\"name\":");
	if (c->type == GT_T_LAUNCH && !c->graph && c->kernel) {
		obuf__json_str(o, c->kernel);
	} else {
		const char *api = gt_api__name(c->api);

		obuf__json_str(o, api ? api : "unknown");
	}
	OBUF_LIT(o, ",\"cat\":");
	obuf__json_str(o, gt_call_type__name(c->type));
	if (c->has_exit || c->entry_only) {
		OBUF_LIT(o, ",\"ph\":\"X\",\"ts\":");
		put_us(o, c->ts);
		OBUF_LIT(o, ",\"dur\":");
		put_us(o, c->has_exit ? c->dur : ENTRY_ONLY_NS);
	} else {
		OBUF_LIT(o, ",\"ph\":\"i\",\"s\":\"t\",\"ts\":");
		put_us(o, c->ts);
	}
	jx__put_pid_tid(o, c->pid, c->tid);
	OBUF_LIT(o, ",\"args\":{");
	fields__json(o, v, n, ARGS_SKIP);
	/* the call's stack in its args, after its "stack" id */
	if (c->stack) {
		OBUF_LIT(o, ",\"frames\":");
		fields__json_frames(o, j->d, c->stack);
	}
	OBUF_LIT(o, "}}");
	if (c->entry_only) {
		j->held.set = true;
		j->held.pid = c->pid;
		j->held.tid = c->tid;
		j->held.ts = c->ts;
	}
	if (j->flows.n)
		call_flows(j, c);
	return o->err;
}

void jx__put_named(struct jx *j, const char *name)
{
	ev_open(j);
	OBUF_LIT(&j->ob, "{\"name\":");
	obuf__json_str(&j->ob, name);
}

/* The synthetic pid of nc's communicator, its process described on first
 * use; 0 when out of memory. */
static uint32_t comm_pid(struct jx *j, const struct gt_ncclrec *nc)
{
	uint64_t key = nc->uid ? nc->uid : u64map__key2(nc->pid, nc->comm) ^ 1ull << 63, *v;
	uint32_t pid;
	char name[96];

	if (!key)
		key = 1;
	v = u64map__get(&j->comms, key);
	if (v)
		return (uint32_t)*v;
	pid = COMM_PID_BASE + ++j->ncomms;
	if (u64map__set(&j->comms, key, pid))
		return 0;
	if (nc->nranks > 0)
		snprintf(name, sizeof(name), "NCCL communicator %u (%d ranks)", j->ncomms, nc->nranks);
	else
		snprintf(name, sizeof(name), "NCCL communicator %u (pid %u, init not recorded)",
			 j->ncomms, nc->pid);
	jx__put_meta_sort(j, "process_sort_index", pid, pid, pid);
	jx__put_meta_name(j, "process_name", pid, pid, name);
	return pid;
}

/* The lane of nc's rank in its communicator's process (tid rank + 1; 1
 * when the rank is unknown), named on first use. */
static int comm_lane(struct jx *j, const struct gt_ncclrec *nc, uint32_t pid, uint32_t *tid)
{
	uint64_t key;
	char name[64];

	*tid = nc->rank >= 0 ? (uint32_t)nc->rank + 1 : 1;
	key = THREAD_KEY(pid, *tid);
	if (u64map__get(&j->threads, key))
		return 0;
	if (u64map__set(&j->threads, key, 1))
		return -ENOMEM;
	if (nc->rank >= 0)
		snprintf(name, sizeof(name), "rank %d (pid %u)", nc->rank, nc->pid);
	else
		snprintf(name, sizeof(name), "pid %u", nc->pid);
	jx__put_meta_sort(j, "thread_sort_index", pid, *tid, *tid);
	jx__put_meta_name(j, "thread_name", pid, *tid, name);
	return 0;
}

/* One NCCL call as an event of (pid, tid): complete when it ended, else an
 * instant. */
static void put_nccl_event(struct jx *j, const struct gt_ncclrec *nc, const char *name,
			   uint32_t pid, uint32_t tid, const struct cf_val *v, unsigned n)
{
	struct obuf *o = &j->ob;

	jx__put_named(j, name);
	if (nc->has_exit) {
		OBUF_LIT(o, ",\"cat\":\"nccl\",\"ph\":\"X\",\"ts\":");
		put_us(o, nc->ts);
		OBUF_LIT(o, ",\"dur\":");
		put_us(o, nc->dur);
	} else {
		OBUF_LIT(o, ",\"cat\":\"nccl\",\"ph\":\"i\",\"s\":\"t\",\"ts\":");
		put_us(o, nc->ts);
	}
	jx__put_pid_tid(o, pid, tid);
	OBUF_LIT(o, ",\"args\":{");
	/* on a communicator's lane the args keep the call's own pid and tid */
	fields__json(o, v, n, pid == nc->pid ? ARGS_SKIP : ARGS_SKIP & ~((1ull << CF_PID) | (1ull << CF_TID)));
	if (nc->stack) {
		OBUF_LIT(o, ",\"frames\":");
		fields__json_frames(o, j->d, nc->stack);
	}
	OBUF_LIT(o, "}}");
}

static int on_nccl(void *ctx, const struct gt_ncclrec *nc)
{
	struct jx *j = ctx;
	struct cf_val v[CF_MAX];
	char name[96];
	uint32_t cpid, tid;
	unsigned n;
	int rc;

	rc = track(j, nc->pid, nc->tid);
	if (rc)
		return rc;
	n = fields__nccl(nc, v);
	fields__nccl_name(nc, name, sizeof(name));
	put_nccl_event(j, nc, name, nc->pid, nc->tid, v, n);
	/* an init may have told the process' rank */
	if (nc->kind == GT_NCCL_K_INIT && (rc = proc_name(j, nc->pid)))
		return rc;
	if (nc->kind == GT_NCCL_K_GROUP || !nc->comm)
		return j->ob.err;
	cpid = comm_pid(j, nc);
	if (!cpid || comm_lane(j, nc, cpid, &tid))
		return -ENOMEM;
	put_nccl_event(j, nc, name, cpid, tid, v, n);
	return j->ob.err;
}

static int on_name(struct jx *j, const struct gt_hdr *rec)
{
	const struct gt_name *nm = (const void *)rec;

	/* names of what has no event yet are written with its first event */
	switch (nm->kind) {
	case GT_NAME_PROCESS:
		if (u64map__get(&j->procs, nm->key + 1))
			return proc_name(j, (uint32_t)nm->key);
		return 0;
	case GT_NAME_THREAD:
		if (u64map__get(&j->threads, THREAD_KEY(rec->pid, (uint32_t)nm->key)))
			return thread_name(j, rec->pid, (uint32_t)nm->key);
		return 0;
	default:
		return 0;
	}
}

/* An ioctl (named by its command) or an off-CPU interval (named by the state
 * the thread left in), as a complete event on the thread's track: both lie
 * inside the CUDA call that caused them, so they nest under it. */
static int put_kernel_event(struct jx *j, const struct gt_hdr *rec, const struct cf_val *v,
			    unsigned n)
{
	struct obuf *o = &j->ob;
	bool io = rec->type == GT_REC_IOCTL;
	uint64_t dur = io ? ((const struct gt_ioctl *)rec)->dur : ((const struct gt_offcpu *)rec)->dur;

	ev_open(j);
	OBUF_LIT(o, "{\"name\":");
	for (unsigned i = 0; i < n; i++) {
		if (io && v[i].id == CF_NAME) {
			obuf__json_strn(o, v[i].s, v[i].len);
		} else if (!io && v[i].id == CF_STATE) {
			OBUF_LIT(o, "\"off-CPU (");
			obuf__mem(o, v[i].s, v[i].len);
			OBUF_LIT(o, ")\"");
		}
	}
	if (io)
		OBUF_LIT(o, ",\"cat\":\"ioctl\",\"ph\":\"X\",\"ts\":");
	else
		OBUF_LIT(o, ",\"cat\":\"sched\",\"ph\":\"X\",\"ts\":");
	put_us(o, rec->ts);
	OBUF_LIT(o, ",\"dur\":");
	put_us(o, dur);
	jx__put_pid_tid(o, rec->pid, rec->tid);
	OBUF_LIT(o, ",\"args\":{");
	fields__json(o, v, n, ARGS_SKIP);
	OBUF_LIT(o, "}}");
	return o->err;
}

/* The synthetic tid of a lane, with its metadata on first use: a GPU
 * stream's (nvtx false: k1 = context << 32 | stream) or a thread's NVTX
 * ranges (k1 = tid).  0 when out of memory. */
static uint32_t lane_of(struct jx *j, bool nvtx, uint64_t k1, uint32_t pid, uint32_t device)
{
	struct hmap *m = nvtx ? &j->nvtx_lanes : &j->gpu_lanes;
	struct lane *l = hmap_get(m, k1, pid);
	char *name = NULL;
	void *old;
	int n;

	if (l)
		return l->tid;
	if (jx__proc_seen(j, pid))
		return 0;
	l = malloc(sizeof(*l));
	if (!l || hmap_put(m, k1, pid, l, &old)) {
		free(l);
		return 0;
	}
	l->tid = LANE_BASE + j->next_lane++;
	/* the thread's name whole, however long */
	if (nvtx && gt_decoder__thread_name(j->d, (uint32_t)k1))
		n = asprintf(&name, "NVTX %s %u", gt_decoder__thread_name(j->d, (uint32_t)k1),
			     (uint32_t)k1);
	else if (nvtx)
		n = asprintf(&name, "NVTX tid %u", (uint32_t)k1);
	else
		n = asprintf(&name, "GPU %u stream %u", device, (uint32_t)k1);
	if (n < 0)
		return 0;
	/* GPU lanes grouped per device, in order of first use within one;
	 * NVTX lanes by their tid */
	jx__put_meta_sort(j, "thread_sort_index", pid, l->tid,
			  nvtx ? l->tid : LANE_SORT_GPU + ((uint64_t)device << 32) + l->tid);
	jx__put_meta_name(j, "thread_name", pid, l->tid, name);
	free(name);
	return l->tid;
}

/* Remembers the GPU end of a linked record's arrow until its call comes;
 * writes the arrow at once when the call is the entry-only launch just
 * written. */
static int flow_add(struct jx *j, const struct gt_hdr *rec, uint64_t launch_ts, uint32_t lane)
{
	struct jflow *fl = hmap_get(&j->flows, launch_ts, rec->tid);
	const char *name = rec->type != GT_REC_GPU_KERNEL ? "copy" : "launch";
	void *old;

	if (j->held.set && j->held.ts == launch_ts && j->held.tid == rec->tid &&
	    j->held.pid == rec->pid) {
		put_flow(j, name, 's', ++j->next_flow, launch_ts, rec->pid, rec->tid);
		put_flow(j, name, 'f', j->next_flow, rec->ts, rec->pid, lane);
		return j->ob.err;
	}
	if (fl && fl->pid != rec->pid)
		return 0;	/* two processes' threads with one tid at one ts: no arrow */
	if (!fl) {
		fl = calloc(1, sizeof(*fl));
		if (!fl || hmap_put(&j->flows, launch_ts, rec->tid, fl, &old)) {
			free(fl);
			return -ENOMEM;
		}
		fl->pid = rec->pid;
	}
	if (vec__reserve(&fl->v, &fl->cap, fl->n, 1, 1))
		return -ENOMEM;
	fl->v[fl->n].id = ++j->next_flow;
	fl->v[fl->n].ts = rec->ts;
	fl->v[fl->n].lane = lane;
	fl->v[fl->n++].copy = rec->type != GT_REC_GPU_KERNEL;
	return 0;
}

/* A kernel, copy or set on its stream's lane, or an NVTX range (a mark: an
 * instant) on its thread's NVTX lane. */
static int on_gpu(struct jx *j, const struct gt_hdr *rec)
{
	const struct gt_gpu_kernel *k = (const void *)rec;
	const struct gt_gpu_copy *cp = (const void *)rec;
	struct obuf *o = &j->ob;
	struct cf_val v[CF_MAX];
	char buf[CF_NAME_BUF];
	const char *name;
	uint64_t dur, launch_ts = 0;
	uint16_t flags = 0;
	uint32_t lane;
	size_t len;
	unsigned n;

	n = fields__gpu(j->d, rec, v);
	if (!n)
		return 0;
	if (rec->type == GT_REC_NVTX) {
		dur = ((const struct gt_nvtx *)rec)->dur;
		lane = lane_of(j, true, rec->tid, rec->pid, 0);
	} else if (rec->type == GT_REC_GPU_KERNEL) {
		dur = k->dur;
		flags = k->flags;
		launch_ts = k->launch_ts;
		lane = lane_of(j, false, (uint64_t)k->context << 32 | k->stream, rec->pid, k->device);
	} else {
		dur = cp->dur;
		flags = cp->flags;
		launch_ts = cp->launch_ts;
		lane = lane_of(j, false, (uint64_t)cp->context << 32 | cp->stream, rec->pid,
			       cp->device);
	}
	if (!lane)
		return -ENOMEM;
	name = fields__gpu_name(j->d, rec, buf, &len);
	ev_open(j);
	OBUF_LIT(o, "{\"name\":");
	obuf__json_strn(o, name, len);
	OBUF_LIT(o, ",\"cat\":");
	for (unsigned i = 0; i < n; i++)
		if (v[i].id == CF_TYPE)
			obuf__json_strn(o, v[i].s, v[i].len);
	if (rec->type == GT_REC_NVTX && !dur) {
		OBUF_LIT(o, ",\"ph\":\"i\",\"s\":\"t\",\"ts\":");
		put_us(o, rec->ts);
	} else {
		OBUF_LIT(o, ",\"ph\":\"X\",\"ts\":");
		put_us(o, rec->ts);
		OBUF_LIT(o, ",\"dur\":");
		put_us(o, dur);
	}
	jx__put_pid_tid(o, rec->pid, lane);
	OBUF_LIT(o, ",\"args\":{");
	fields__json(o, v, n, ARGS_SKIP);
	/* a CUDA graph's kernel: the stack of the launch that captured it */
	if (rec->type == GT_REC_GPU_KERNEL && (flags & GT_GPU_CAPTURED)) {
		const struct gt_gpu_graph *gr = gt_gpu_kernel__graph(k);

		if (gr && gr->stack) {
			OBUF_LIT(o, ",\"frames\":");
			fields__json_frames(o, j->d, gr->stack);
		}
	}
	OBUF_LIT(o, "}}");
	if (flags & GT_GPU_LINKED)
		return flow_add(j, rec, launch_ts, lane);
	return o->err;
}

int jx__put_instant_at(struct jx *j, uint64_t ts, uint32_t pid, uint32_t tid, const char *cat,
		       const char *scope, const struct cf_val *v, unsigned n, uint64_t skip)
{
	struct obuf *o = &j->ob;

	OBUF_LIT(o, ",\"cat\":\"");
	obuf__mem(o, cat, strlen(cat));
	OBUF_LIT(o, "\",\"ph\":\"i\",\"s\":\"");
	obuf__mem(o, scope, strlen(scope));
	OBUF_LIT(o, "\",\"ts\":");
	put_us(o, ts);
	jx__put_pid_tid(o, pid, tid);
	OBUF_LIT(o, ",\"args\":{");
	fields__json(o, v, n, skip);
	OBUF_LIT(o, "}}");
	return o->err;
}

int jx__put_instant_rest(struct jx *j, const struct gt_hdr *rec, const char *cat,
			 const char *scope, const struct cf_val *v, unsigned n)
{
	return jx__put_instant_at(j, rec->ts, rec->pid, rec->tid, cat, scope, v, n, ARGS_SKIP);
}

static int on_other(void *ctx, const struct gt_hdr *rec)
{
	struct jx *j = ctx;
	struct obuf *o = &j->ob;
	struct cf_val v[CF_MAX];
	unsigned n;
	int rc;

	if (rec->type == GT_REC_NAME)
		return on_name(j, rec);
	if (rec->type == GT_REC_RANGE || rec->type == GT_REC_CAPTURE)
		return capture_spans__feed(j->cap, rec);
	if (rec->type == GT_REC_TRIGGER)
		return jx__put_trigger(j, rec);
	if (rec->type == GT_REC_OVERHEAD)
		return jx__put_overhead(j, rec);
	if (rec->type == GT_REC_GPU_METRIC)
		return jx__put_gpu_metric(j, rec);
	if (rec->type == GT_REC_PROC_RANK)
		/* the process' name carries its rank: again when written before */
		return u64map__get(&j->procs, (uint64_t)rec->pid + 1) ? proc_name(j, rec->pid) : 0;
	if (rec->type >= GT_REC_GPU_KERNEL && rec->type <= GT_REC_MERGE_STATS)
		return on_gpu(j, rec);
	n = fields__proc(rec, v);
	if (!n)
		return 0;
	rc = track(j, rec->pid, rec->tid);
	/* exec renames the process: its name from now on */
	if (!rc && rec->type == GT_REC_EXEC)
		rc = proc_name(j, rec->pid);
	if (rc)
		return rc;
	if (rec->type == GT_REC_IOCTL || rec->type == GT_REC_OFFCPU)
		return put_kernel_event(j, rec, v, n);
	ev_open(j);
	OBUF_LIT(o, "{\"name\":");
	/* named by the event word: exec, fork or exit */
	for (unsigned i = 0; i < n; i++)
		if (v[i].id == CF_EVENT)
			obuf__json_strn(o, v[i].s, v[i].len);
	return jx__put_instant_rest(j, rec, "process", "t", v, n);
}

/* The recording's header, the damage and the counters, after the events. */
static void put_metadata(struct jx *j, struct trace_reader *r)
{
	const struct gt_file_info *fi = trace_reader__info(r);
	const struct gt_decoder_stats *st = gt_decoder__stats(j->d);
	struct obuf *o = &j->ob;

	OBUF_LIT(o, "\n],\"displayTimeUnit\":\"ns\",\"metadata\":{\"source\":\"gtrace-bpf\"");
	KEY_U64(o, ",\"format_version\":", fi->version);
	if (fi->clock_id == 1)
		OBUF_LIT(o, ",\"clock\":\"CLOCK_MONOTONIC\"");
	KEY_U64(o, ",\"clock_id\":", fi->clock_id);
	OBUF_LIT(o, ",\"realtime_offset_ns\":");
	obuf__i64(o, fi->realtime_offset_ns);
	KEY_U64(o, ",\"start_ts\":", fi->start_ts);
	KEY_STR(o, ",\"host\":", fi->host);
	KEY_STR(o, ",\"kernel\":", fi->kernel);
	KEY_STR(o, ",\"cmdline\":", fi->cmdline);
	KEY_STR(o, ",\"options\":", fi->options);
	if (trace_reader__truncated(r)) {
		OBUF_LIT(o, ",\"truncated\":true");
		KEY_STR(o, ",\"damage\":", trace_reader__damage(r));
	} else {
		OBUF_LIT(o, ",\"truncated\":false");
	}
	if (trace_reader__has_counters(r)) {
		const __u64 *c = &trace_reader__counters(r)->events;

		OBUF_LIT(o, ",\"counters\":{");
		for (unsigned i = 0; i < gt_counter_count; i++) {
			if (i)
				OBUF_LIT(o, ",");
			obuf__json_str(o, gt_counter_names[i]);
			OBUF_LIT(o, ":");
			obuf__u64(o, c[i]);
		}
		OBUF_LIT(o, "}");
	}
	jx__put_capture_meta(j);
	KEY_U64(o, ",\"decoder\":{\"calls\":", st->calls);
	KEY_U64(o, ",\"unmatched_exits\":", st->unmatched_exits);
	KEY_U64(o, ",\"incomplete\":", st->open_at_end);
	KEY_U64(o, ",\"placeholder_names\":", st->placeholder_names);
	KEY_U64(o, ",\"device_unknown\":", st->device_unknown);
	KEY_U64(o, ",\"nccl_calls\":", st->nccl_calls);
	KEY_U64(o, ",\"nccl_comm_unknown\":", st->nccl_comm_unknown);
	KEY_U64(o, ",\"unknown_records\":", st->unknown_records);
	OBUF_LIT(o, "}}}\n");
}

static void free_flow(void *v)
{
	free(((struct jflow *)v)->v);
}

int export_json__write(struct trace_reader *r, FILE *out, const char **why)
{
	struct jx j = { .first = true };
	int rc;

	j.cap = capture_spans__new(trace_reader__info(r));
	if (!j.cap) {
		*why = strerror(ENOMEM);
		return -ENOMEM;
	}
	rc = fields__writer_open(&j.ob, out, on_call, on_other, &j, &j.d, why);
	if (rc) {
		capture_spans__free(j.cap);
		return rc;
	}
	gt_decoder__set_nccl_cb(j.d, on_nccl);
	OBUF_LIT(&j.ob, "{\"traceEvents\":[");
	rc = fields__decode_all(r, j.d, why);
	if (!rc) {
		const struct gt_trailer *t = trace_reader__trailer(r);
		uint64_t last = gt_decoder__last_ts(j.d);

		rc = jx__put_captures(&j, t && t->end_ts > last ? t->end_ts : last);
		if (!rc)
			rc = jx__put_findings(&j);
		if (rc)
			*why = strerror(-rc);
	}
	if (rc)
		goto cleanup;
	put_metadata(&j, r);
	rc = obuf__flush(&j.ob);
	if (rc)
		*why = strerror(-rc);
cleanup:
	gt_decoder__free(j.d);
	capture_spans__free(j.cap);
	u64map__free(&j.procs);
	u64map__free(&j.threads);
	u64map__free(&j.comms);
	hmap_free_all(&j.gpu_lanes, NULL);
	hmap_free_all(&j.nvtx_lanes, NULL);
	hmap_free_all(&j.flows, free_flow);
	obuf__free(&j.ob);
	return rc;
}
