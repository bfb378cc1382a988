// SPDX-License-Identifier: MIT
/*
 * `export -f perfetto`: a trace as native Perfetto protobuf (.pftrace), the
 * format ui.perfetto.dev and trace_processor read best.  The Perfetto side
 * (tracks, sequences, interning, encoding) is pftrace.c; this file turns
 * decoded calls and process events into its tracks and events:
 *  - one ClockSnapshot: MONOTONIC (the primary trace clock: timestamps are
 *    shown as recorded) and REALTIME = MONOTONIC + the header's offset;
 *  - per process a track (ProcessDescriptor: pid, name, cmdline when known)
 *    with the exec / fork / exit instants.  trace_processor takes a
 *    process' name from its first descriptor only, so each process (each
 *    pid lifetime) is described once, when first needed: before its first
 *    thread, GPU or NVTX track, else at its exit or the end of the export,
 *    with the name and command line known then.  Its instants wait for
 *    the descriptor (the process track is a sequence of its own: writing
 *    them later keeps its timestamps in order);
 *  - per thread a track (ThreadDescriptor: pid, tid, name; parent = its
 *    process) with the calls as nested slices named after the kernel
 *    (launches) or the api, a slice of ENTRY_ONLY_NS for a launch recorded
 *    at entry only, and an instant for a call whose exit never came.
 *
 * When a thread's calls are written (their order, the watermark W):
 * perfetto_order.c; the events of a thread's track, with their arguments:
 * perfetto_args.c.
 * GPU side (merged traces) and flows from calls to GPU records:
 * perfetto_gpu.c; capture ranges, light-mode windows and the daemon's
 * triggers and overhead records: perfetto_capture.c; GPU metrics:
 * perfetto_gpum.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "export/fields.h"
#include "decode/decode.h"
#include "decode/pass.h"
#include "export/export.h"
#include "export/perfetto_int.h"
#include "lib/hash.h"
#include "lib/vec.h"
#include "lib/hmap.h"
#include "export/perfetto/pftrace.h"
#include "format/records.h"
#include "format/trace_file.h"

/* Debug annotation names. */
static const char *const ann_names[A__COUNT] = {
	"api", "grid", "block", "shmem", "stream", "func", "mangled", "cooperative", "graph",
	"bytes", "kind", "dst", "src", "ptr", "event", "ctx", "handle", "parent", "path",
	"name", "ret", "failed", "incomplete", "ppid", "comm", "exit_code",
	"device", "cmd", "rm", "fd", "state", "src_device", "dst_device",
};

static __thread char why_buf[160];

void pf__fail(struct pf *x, int err, const char *what)
{
	if (pf_err(x))
		return;
	x->err = err;
	snprintf(why_buf, sizeof(why_buf), "failed to %s: %s", what, strerror(-err));
	x->why = why_buf;
}

/* ---- processes and threads ---------------------------------------------- */

/* Takes a name that may differ from what the descriptor says; true when it
 * does (*cur then holds a copy of the new one). */
static bool name_update(struct pf *x, char **cur, const char *now)
{
	if (!now || (*cur && !strcmp(*cur, now)))
		return false;
	free(*cur);
	*cur = strdup(now);
	if (!*cur)
		pf__fail(x, -ENOMEM, "copy a name");
	return *cur != NULL;
}

/* pid's process, made on first use, not described yet. */
static struct proc *proc_find(struct pf *x, uint32_t pid)
{
	struct proc *p = hmap_get(&x->procs, pid, 0);
	void *old;

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p || hmap_put(&x->procs, pid, 0, p, &old)) {
		free(p);
		pf__fail(x, -ENOMEM, "allocate a process");
		return NULL;
	}
	p->pid = pid;
	pftrace__track_init(x->w, &p->tr);
	/* a job trace's host (merge --hosts) is a machine of its own */
	pftrace__track_machine(x->w, &p->tr, pid >> GT_HOST_SHIFT);
	return p;
}

static void proc_event_write(struct pf *x, struct proc *p, const struct proc_ev *e)
{
	struct pf_seq *s = pftrace__track_seq(x->w, &p->tr, e->ts);

	pftrace__event_open(x->w, &p->tr, s, PF_INSTANT, e->ts, x->ev_name[e->type]);
	pftrace__event_category(x->w, "process", strlen("process"));
	ANN_UINT(x, A_PPID, e->ppid);
	ANN_STR(x, A_COMM, e->comm);
	if (e->type == GT_REC_EXIT)
		ANN_INT(x, A_EXIT_CODE, e->exit_code);
	pftrace__event_close(x->w);
}

/* Writes p's only descriptor, with the name and command line known now,
 * then the events that waited for it. */
static void proc_describe(struct pf *x, struct proc *p)
{
	char *label;

	if (p->described)
		return;
	p->described = true;
	/* with the process' rank when known (the environment's is known at its
	 * first record) */
	if (fields__process_label(x->d, p->pid, &label))
		pf__fail(x, -ENOMEM, "allocate a track");
	pftrace__process_track(x->w, &p->tr, p->pid, label, gt_decoder__process_cmdline(x->d, p->pid));
	free(label);
	for (uint32_t i = 0; i < p->nev; i++)
		proc_event_write(x, p, &p->evs[i]);
	free(p->evs);
	p->evs = NULL;
	p->nev = p->capev = 0;
}

struct proc *pf__proc_get(struct pf *x, uint32_t pid)
{
	struct proc *p = proc_find(x, pid);

	if (p)
		proc_describe(x, p);
	return p;
}

static struct thr *thr_get(struct pf *x, uint32_t pid, uint32_t tid)
{
	struct thr *t = x->last;
	struct proc *p;
	void *old;

	if (t && t->tid == tid && t->pid == pid)
		return t;
	t = hmap_get(&x->thrs, tid, pid);
	if (t)
		return x->last = t;
	p = pf__proc_get(x, pid);
	if (!p)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t || hmap_put(&x->thrs, tid, pid, t, &old)) {
		free(t);
		pf__fail(x, -ENOMEM, "allocate a thread");
		return NULL;
	}
	t->pid = pid;
	t->tid = tid;
	pftrace__track_init(x->w, &t->tr);
	name_update(x, &t->name, gt_decoder__thread_name(x->d, tid));
	pftrace__thread_track(x->w, &t->tr, &p->tr, pid, tid, t->name);
	t->next = p->threads;
	p->threads = t;
	return x->last = t;
}

static void thr_free(struct thr *t)
{
	for (uint32_t i = 0; i < t->nbuf; i++)
		free(t->buf[i].nccl);
	pftrace__track_free(&t->tr);
	free(t->name);
	free(t->buf);
	free(t->ends);
	free(t);
}

static void proc_free(struct proc *p)
{
	pftrace__track_free(&p->tr);
	free(p->evs);
	free(p);
}

/* ---- calls -------------------------------------------------------------- */

static void pf__held_place(struct pf *x);

static int on_call(void *ctx, const struct gt_callrec *c)
{
	const struct gt_api_info *ai = gt_api__info(c->api);
	struct pf *x = ctx;
	struct thr *t = thr_get(x, c->pid, c->tid);
	struct item it;

	if (!t || !ai)
		return pf_err(x);
	/* the flows its GPU records got while it was open */
	it.nflow = ck_nflow(c->cookie);
	it.flow_base = ck_flow_base(c->cookie);
	it.c = *c;
	it.c.kernel = it.c.mangled = it.c.str = NULL;
	it.end = c->has_exit ? c->ts + c->dur : c->entry_only ? c->ts + ENTRY_ONLY_NS : c->ts;
	it.order = x->order++;
	it.mangled = c->mangled ? pftrace__cstring(x->w, c->mangled) : 0;
	if (c->type == GT_T_MEMCPY)
		it.str = pftrace__cstring(x->w, gt_copy_kind__name(c->kind));
	else
		it.str = c->str ? pftrace__cstring(x->w, c->str) : 0;
	if (!x->api_name[c->api])
		x->api_name[c->api] = pftrace__cstring(x->w, ai->name);
	if (c->type == GT_T_LAUNCH && !c->graph && c->kernel)
		it.name = pftrace__cstring(x->w, c->kernel);
	else
		it.name = x->api_name[c->api];
	it.kind = IK_CALL;
	it.nccl = NULL;
	if (c->entry_only) {
		/* its GPU records come next (perfetto_gpu.c): hold it until
		 * they are read, so that it carries their flow ids */
		pf__held_place(x);
		x->held = it;
		x->holding = true;
		return pf_err(x);
	}
	return pf__place(x, t, &it);
}

/* An NCCL call: on its thread's track, where the launches it made nest in
 * it, and on its communicator's (perfetto_nccl.c). */
static int on_nccl(void *ctx, const struct gt_ncclrec *nc)
{
	struct pf *x = ctx;
	struct thr *t = thr_get(x, nc->pid, nc->tid);
	char name[96];
	struct item it;

	if (!t)
		return pf_err(x);
	memset(&it, 0, sizeof(it));
	it.kind = IK_NCCL;
	it.c.ts = nc->ts;
	it.c.dur = nc->dur;
	it.c.pid = nc->pid;
	it.c.tid = nc->tid;
	it.c.has_exit = nc->has_exit;
	it.end = nc->has_exit ? nc->ts + nc->dur : nc->ts;
	it.order = x->order++;
	it.fd = -1;
	it.name = pftrace__cstring(x->w, fields__nccl_name(nc, name, sizeof(name)));
	it.nccl = malloc(sizeof(*it.nccl));
	if (!it.nccl) {
		pf__fail(x, -ENOMEM, "keep an NCCL call");
		return pf_err(x);
	}
	*it.nccl = *nc;
	pf__nccl_comm_event(x, nc);
	return pf__place(x, t, &it);
}

/* Writes the held entry-only launch, if any, on its thread's track. */
static void pf__held_place(struct pf *x)
{
	struct thr *t;

	if (!x->holding)
		return;
	x->holding = false;
	t = thr_get(x, x->held.c.pid, x->held.c.tid);
	if (t)
		pf__place(x, t, &x->held);
}

/* The records that may follow an entry-only launch's entry as its own: the
 * GPU work the merger links to a call. */
static bool gpu_work(const struct gt_hdr *rec)
{
	return rec->type == GT_REC_GPU_KERNEL || rec->type == GT_REC_GPU_MEMCPY ||
	       rec->type == GT_REC_GPU_MEMSET;
}

/* An ioctl or an off-CPU interval: a complete slice on its thread's track,
 * ordered with the calls (it lies inside the call that caused it, whose
 * exit comes later). */
static int on_kernel_rec(struct pf *x, const struct gt_hdr *rec)
{
	struct thr *t = thr_get(x, rec->pid, rec->tid);
	struct cf_val v[CF_MAX];
	unsigned n = fields__proc(rec, v);
	struct item it;
	char name[48];

	if (!t)
		return pf_err(x);
	memset(&it, 0, sizeof(it));
	it.kind = rec->type == GT_REC_IOCTL ? IK_IOCTL : IK_OFFCPU;
	it.c.ts = rec->ts;
	it.c.pid = rec->pid;
	it.c.tid = rec->tid;
	it.c.has_exit = true;
	it.c.dur = it.kind == IK_IOCTL ? ((const struct gt_ioctl *)rec)->dur :
					 ((const struct gt_offcpu *)rec)->dur;
	it.end = it.c.ts + it.c.dur;
	it.order = x->order++;
	it.fd = -1;
	for (unsigned i = 0; i < n; i++) {
		const struct cf_val *f = &v[i];

		switch (f->id) {
		case CF_NAME: it.name = pftrace__string(x->w, f->s, f->len); break;
		case CF_DEVICE: it.dev = pftrace__string(x->w, f->s, f->len); break;
		case CF_RM: it.rm = pftrace__string(x->w, f->s, f->len); break;
		case CF_CMD: it.cmd = f->u; break;
		case CF_FD: it.fd = (int32_t)f->i; break;
		case CF_RET: it.c.ret = (int32_t)f->i; break;
		case CF_STATE:
			it.rm = pftrace__string(x->w, f->s, f->len);
			snprintf(name, sizeof(name), "off-CPU (%.*s)", (int)f->len, f->s);
			it.name = pftrace__cstring(x->w, name);
			break;
		default: break;
		}
	}
	return pf__place(x, t, &it);
}

/* ---- process events ----------------------------------------------------- */

/* An exec, fork or exit: written now when p is described, else kept until
 * it is. */
static void proc_event(struct pf *x, struct proc *p, const struct gt_hdr *rec)
{
	const struct gt_proc_evt *pe = (const void *)rec;
	struct proc_ev e = {
		.ts = rec->ts, .ppid = pe->ppid, .exit_code = pe->exit_code, .type = (uint8_t)rec->type,
		.comm = pftrace__string(x->w, pe->comm, strnlen(pe->comm, sizeof(pe->comm))),
	};

	if (p->described) {
		proc_event_write(x, p, &e);
		return;
	}
	if (vec__reserve(&p->evs, &p->capev, p->nev, 1, 4)) {
		pf__fail(x, -ENOMEM, "keep a process event");
		return;
	}
	p->evs[p->nev++] = e;
}

/* A process ended: write what its threads still hold and forget it, so that
 * memory follows the live processes.  A reused pid gets new tracks. */
static void proc_end(struct pf *x, struct proc *p)
{
	struct thr *t, *next;

	proc_describe(x, p);
	for (t = p->threads; t; t = next) {
		next = t->next;
		pf__drain_below(x, t, UINT64_MAX);
		hmap_del(&x->thrs, t->tid, t->pid);
		if (x->last == t)
			x->last = NULL;
		thr_free(t);
	}
	/* GPU and NVTX tracks made later (unlinked records come after the
	 * exits) still go under this process */
	if (u64map__set(&x->ended, (uint64_t)p->pid + 1, p->tr.uuid))
		pf__fail(x, -ENOMEM, "remember a process");
	hmap_del(&x->procs, p->pid, 0);
	proc_free(p);
}

static void on_name(struct pf *x, const struct gt_name *nm)
{
	struct proc *p;
	struct thr *t;

	/* a process' name (GT_NAME_PROCESS) goes in its only descriptor, when
	 * that is written */
	if (nm->kind == GT_NAME_THREAD) {
		/* a name learned after the thread's first call: describe it again */
		t = hmap_get(&x->thrs, (uint32_t)nm->key, nm->hdr.pid);
		p = t ? hmap_get(&x->procs, t->pid, 0) : NULL;
		if (p && name_update(x, &t->name, gt_decoder__thread_name(x->d, t->tid)))
			pftrace__thread_track(x->w, &t->tr, &p->tr, t->pid, t->tid, t->name);
	}
}

static int on_other(void *ctx, const struct gt_hdr *rec)
{
	struct pf *x = ctx;
	struct proc *p;

	switch (rec->type) {
	case GT_REC_EXEC:
	case GT_REC_FORK:
	case GT_REC_EXIT:
		/* exec renames the process, a forked child has its parent's
		 * name: the decoder keeps the name for the descriptor */
		p = proc_find(x, rec->pid);
		if (!p)
			break;
		proc_event(x, p, rec);
		if (rec->type == GT_REC_EXIT)
			proc_end(x, p);
		break;
	case GT_REC_PROC_INFO:
		/* a process already running when recording began: described
		 * when first needed, at the latest at the end */
		proc_find(x, rec->pid);
		break;
	case GT_REC_IOCTL:
	case GT_REC_OFFCPU:
		return on_kernel_rec(x, rec);
	case GT_REC_NAME:
		on_name(x, (const struct gt_name *)rec);
		break;
	case GT_REC_GPU_KERNEL:
	case GT_REC_GPU_MEMCPY:
	case GT_REC_GPU_MEMSET:
	case GT_REC_NVTX:
		return pf__on_gpu(x, rec);
	case GT_REC_RANGE:
	case GT_REC_CAPTURE:
		if (capture_spans__feed(x->cap, rec))
			pf__fail(x, -ENOMEM, "keep a capture range");
		break;
	case GT_REC_TRIGGER:
		pf__on_trigger(x, rec);
		break;
	case GT_REC_OVERHEAD:
		pf__on_overhead(x, rec);
		break;
	case GT_REC_GPU_METRIC:
		if (pf__on_gpu_metric(x, rec))
			pf__fail(x, -ENOMEM, "keep a GPU metric track");
		break;
	default:
		break;
	}
	return pf_err(x);
}

/* ---- driver ------------------------------------------------------------- */

/* A call begins: its thread's track is described now, in the order the
 * threads' first calls begin, not in the order they complete.  Its cookie
 * stays 0: no flows yet, waited for. */
static int on_entry(void *ctx, const struct gt_hdr *rec, uint64_t *cookie)
{
	struct pf *x = ctx;

	(void)cookie;
	thr_get(x, rec->pid, rec->tid);
	return pf_err(x);
}

static void pf_free(struct pf *x)
{
	for (uint32_t i = 0; i < x->thrs.cap; i++)
		if (x->thrs.s[i].used)
			thr_free(x->thrs.s[i].v);
	for (uint32_t i = 0; i < x->procs.cap; i++)
		if (x->procs.s[i].used)
			proc_free(x->procs.s[i].v);
	for (uint32_t i = 0; i < x->gpu.cap; i++)
		if (x->gpu.s[i].used)
			pf__span_free(x->gpu.s[i].v);
	for (uint32_t i = 0; i < x->nvtx.cap; i++)
		if (x->nvtx.s[i].used)
			pf__span_free(x->nvtx.s[i].v);
	for (uint32_t i = 0; i < x->gdevs.cap; i++)
		if (x->gdevs.s[i].used) {
			pftrace__track_free(x->gdevs.s[i].v);
			free(x->gdevs.s[i].v);
		}
	free(x->gdevs.s);
	free(x->thrs.s);
	free(x->procs.s);
	free(x->gpu.s);
	free(x->nvtx.s);
	u64map__free(&x->ended);
	gt_decoder__free(x->d);
	capture_spans__free(x->cap);
	if (x->triggers_live)
		pftrace__track_free(&x->triggers);
	for (int i = 0; i < PF_OVH__COUNT; i++)
		if (x->ovh_live[i])
			pftrace__track_free(&x->ovh[i]);
	pf__gpum_free(x);
	pf__nccl_free(x);
	pftrace__free(x->w);
	free(x);
}

static int pf_new(FILE *out, const struct gt_file_info *info, struct pf **px)
{
	static const char *const ev[] = {
		[GT_REC_EXEC] = "exec", [GT_REC_FORK] = "fork", [GT_REC_EXIT] = "exit",
	};
	struct pf *x = calloc(1, sizeof(*x));

	*px = x;
	if (!x || pftrace__new(out, &x->w) || !(x->d = gt_decoder__new(on_call, on_other, x)) ||
	    !(x->cap = capture_spans__new(info)))
		return -ENOMEM;
	gt_decoder__set_entry_cb(x->d, on_entry);
	gt_decoder__set_nccl_cb(x->d, on_nccl);
	for (int i = 0; i < A__COUNT; i++)
		x->ann[i] = pftrace__cstring(x->w, ann_names[i]);
	for (int i = GT_REC_EXEC; i <= GT_REC_EXIT; i++)
		x->ev_name[i] = pftrace__cstring(x->w, ev[i]);
	return pf_err(x);
}

/* The identity of a trace: its header, whose start time and host tell
 * recordings apart (a merged trace's options differ from its source's). */
static uint64_t trace_seed(const struct gt_file_info *info)
{
	const char *s[] = { info->host, info->kernel, info->cmdline, info->options };
	uint64_t h = hash__pair(info->start_ts, (uint64_t)info->realtime_offset_ns);

	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		h = hash__pair(h, s[i] ? hash__bytes(s[i], strlen(s[i])) : 0);
	return h;
}

/* export --split: the part written so far is complete, later records go
 * to the next.  Time-contiguous: slices open now end in this part (their
 * true ends), later calls nested in them begin the next at the top; the
 * arrows from a call not yet written to GPU work already written are cut
 * (counted). */
static void next_part(struct pf *x)
{
	uint64_t preamble;
	const char *why = NULL;
	FILE *f = NULL;
	int rc;

	pf__threads_end_slices(x);
	pf__spans_finish(x, &x->gpu);
	pf__spans_finish(x, &x->nvtx);
	x->parts->flows_cut += pf__threads_cut_flows(x);
	if (pf_err(x) || pftrace__end_part(x->w))
		return;
	rc = x->parts->next(x->parts->ctx, &f, &why);
	if (rc) {
		pf__fail(x, rc, why ? why : "start the next part");
		return;
	}
	pftrace__next_part(x->w, f);
	/* what every part repeats (the tracks) must leave room for events */
	preamble = pftrace__part_bytes(x->w);
	if (preamble > x->roll_at / 2) {
		snprintf(why_buf, sizeof(why_buf), "--split %llu is too small: each part repeats %llu bytes "
			 "of track descriptors", (unsigned long long)x->parts->size, (unsigned long long)preamble);
		x->err = -EFBIG;
		x->why = why_buf;
	}
}

/* The pass over the records (decode/pass.h): anything else than GPU work
 * ends the run of a held launch's GPU records; a failure already said ends
 * the pass; what is held is placed when the records end.  With --split, a
 * part that reached its size ends between records (not inside a held
 * launch's run). */
static int pass_record(void *ctx, const struct gt_hdr *rec)
{
	struct pf *x = ctx;

	if (x->holding && !gpu_work(rec))
		pf__held_place(x);
	if (x->parts && !x->holding && pftrace__part_bytes(x->w) >= x->roll_at)
		next_part(x);
	return 0;
}

static bool pass_stop(void *ctx)
{
	return pf_err(ctx);
}

static void pass_done(void *ctx)
{
	pf__held_place(ctx);
}

int export_perfetto__write(struct trace_reader *r, FILE *out, const char **why)
{
	return export_perfetto__write_parts(r, out, NULL, why);
}

int export_perfetto__write_parts(struct trace_reader *r, FILE *out, struct export_parts *parts,
				 const char **why)
{
	const struct gt_file_info *info = trace_reader__info(r);
	struct gt_pass p = { .record = pass_record, .stop = pass_stop, .done = pass_done };
	enum gt_pass_fail fail;
	struct pf *x;
	int rc;

	*why = NULL;
	rc = pf_new(out, info, &x);
	if (rc) {
		if (x)
			pf_free(x);
		*why = "failed to allocate the exporter: Cannot allocate memory";
		return rc;
	}
	pftrace__set_ids(x->w, trace_seed(info));
	if (parts) {
		/* room for what one record adds after the size is reached */
		uint64_t room = parts->size / 8 < (4ull << 20) ? parts->size / 8 : 4ull << 20;

		x->parts = parts;
		x->roll_at = parts->size - room;
		pftrace__keep_parts(x->w);
	}
	pftrace__clock_snapshot(x->w, info->start_ts, info->realtime_offset_ns);
	p.ctx = x;
	rc = gt_pass__run(r, x->d, &p, &fail);
	if (rc)
		pf__fail(x, rc, fail == GT_PASS_READ ? "read the trace" : "decode the trace");
	/* every call is out of the decoder now: write what threads still hold */
	for (uint32_t i = 0; i < x->thrs.cap && !pf_err(x); i++) {
		if (x->thrs.s[i].used)
			pf__drain_below(x, x->thrs.s[i].v, UINT64_MAX);
	}
	/* the processes still live and not described: their descriptors and
	 * the events that waited for them */
	for (uint32_t i = 0; i < x->procs.cap && !pf_err(x); i++) {
		if (x->procs.s[i].used)
			proc_describe(x, x->procs.s[i].v);
	}
	pf__spans_finish(x, &x->gpu);
	pf__spans_finish(x, &x->nvtx);
	if (!pf_err(x)) {
		const struct gt_trailer *t = trace_reader__trailer(r);
		uint64_t last = gt_decoder__last_ts(x->d);

		pf__capture_write(x, t && t->end_ts > last ? t->end_ts : last);
	}
	if (!pf_err(x))
		pf__findings_write(x);
	if (!pf_err(x))
		pftrace__flush(x->w);
	rc = pf_err(x);
	if (rc && !x->err) {
		/* the writer's reason lives in the writer: keep a copy */
		const char *m;

		pftrace__err(x->w, &m);
		snprintf(why_buf, sizeof(why_buf), "%s", m);
	}
	if (rc)
		*why = why_buf;
	pf_free(x);
	return rc;
}
