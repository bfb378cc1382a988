// SPDX-License-Identifier: MIT
/*
 * Each record from BPF's ring buffer (recorder.h): checked, shown to a stage
 * that drives the recorder, and written to the trace, with what only
 * userspace adds on the way: a process' and thread's names before their
 * first record, the probes of a library loaded or opened, the stacks
 * interned, a process' mappings forgotten at its exec and exit, the capture
 * ranges, the kernel names checked.
 */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cuda.skel.h"
#include "lib/log.h"
#include "record/inject/inject.h"
#include "record/probes/hold.h"
#include "record/procs/kname_recovery.h"
#include "record/procs/pid_watch.h"
#include "record/procs/proc_names.h"
#include "record/stacks/pyconf.h"
#include "record/stacks/ustacks.h"
#include "record/recorder.h"
#include "format/records.h"


static bool relevant(struct recorder *r, uint32_t pid)
{
	return proc_names__relevant(r->procs, pid);
}

/* First record of a process or thread: write its name before it. */
static void note_process(struct recorder *r, const struct gt_hdr *h)
{
	if (proc_names__add_process(r->procs, h->pid)) {
		uint8_t one = 1;

		r->nprocs++;
		recorder__cupti_note(r, h->pid);
		/* its threads' scheduling is recorded from now on */
		bpf_map__update_elem(r->skel->maps.active_pids, &h->pid, sizeof(h->pid), &one,
				     sizeof(one), BPF_ANY);
		proc_names__write_process(r->procs, h);
	}
	proc_names__note_thread(r->procs, h);
}

/* A process this recording attached the agent to, killed by a fault
 * (the recorder's probes cannot make one; the agent and CUPTI in it can):
 * said, with how long after the attach. */
static void said_fault(struct recorder *r, const struct gt_proc_evt *e)
{
	int sig = e->exit_code & 0x7f;	/* the wait status' terminating signal */
	uint64_t at;

	if (e->hdr.size < sizeof(*e) || !inject__fault_signal(sig) || !(at = recorder__attached_at(r, e->hdr.pid)))
		return;
	pr_warn("pid %d was killed by %s %.1f s after the CUPTI agent was attached to it (--cupti=attach): "
		"the agent or CUPTI may have caused it", (int)e->hdr.pid, inject__signal_name(sig),
		e->hdr.ts > at ? (e->hdr.ts - at) / 1e9 : 0.0);
}

static int on_record(struct recorder *r, void *data, size_t len)
{
	const struct gt_hdr *h = data;
	int err;

	r->received++;
	if (len < sizeof(*h) || h->size < sizeof(*h) || h->size > len || h->size % 8) {
		r->bad_records++;
		return 0;
	}
	EXT_CALL(r, on_record, h);
	switch (h->type) {
	case GT_REC_LIBOPEN: {
		const struct gt_path *p = data;

		if (p->len && sizeof(*p) + p->len <= h->size && !p->path[p->len - 1])
			return recorder__on_libopen(r, p);
		return 0;
	}
	case GT_REC_LIBLOAD: {
		/* the ring buffer is read-only here: completed in a copy */
		struct {
			struct gt_libload l;
			char path[GT_LIBLOAD_PATH_MAX];
		} c;
		const struct gt_libload *l = data;

		if (!gt_rec__size_ok(h) || h->size > sizeof(c) || !l->len ||
		    sizeof(*l) + l->len > h->size || l->path[l->len - 1]) {
			r->bad_records++;
			memcpy(&c.l, data, sizeof(c.l) < len ? sizeof(c.l) : len);
			/* the process may be held all the same */
			if (len >= sizeof(c.l))
				hold__release(r->hold, &c.l);
			return 0;
		}
		memcpy(&c, data, h->size);
		if (recorder__on_libload(r, &c.l) <= 0)
			return 0;
		note_process(r, h);
		return recorder__write(r, &c.l.hdr);
	}
	case GT_REC_PYCODE:
		if (!r->stacks)
			return 0;
		err = ustacks__on_pycode(r->stacks, data);
		if (err == -EINVAL) {
			r->bad_records++;
			return 0;
		}
		return err;
	case GT_REC_USTACK:
	case GT_REC_USTACK_SAME:
		/* before its call's entry: the process' first record may be it */
		if (!r->stacks)
			return 0;
		note_process(r, h);
		err = h->type == GT_REC_USTACK ? ustacks__on_raw(r->stacks, data) :
						 ustacks__on_same(r->stacks, data);
		if (err == -EINVAL) {
			r->bad_records++;
			return 0;
		}
		return err;
	case GT_REC_ENVIRON: {
		const struct gt_environ *e = data;

		/* never written: only its rank is taken */
		if (len < sizeof(*e) || h->size != sizeof(*e) || e->len >= GT_ENVIRON_MAX) {
			r->bad_records++;
			return 0;
		}
		if (relevant(r, h->pid))
			proc_names__on_exec_environ(r->procs, e);
		return 0;
	}
	case GT_REC_EXEC:
		if (r->stacks)
			ustacks__forget(r->stacks, h->pid);
		if (r->nscan < SCAN_QUEUE)
			r->scan_queue[r->nscan++] = h->pid;
		if (!relevant(r, h->pid))
			return 0;
		/* an interpreter known before the new image's first calls */
		if (r->py)
			pyconf__on_exec(r->py, h->pid);
		/* after the exec: the rank of the new program's environment */
		err = recorder__write(r, h);
		if (!err)
			proc_names__on_exec_rank(r->procs, h);
		return err;
	case GT_REC_FORK:
		if (!relevant(r, ((const struct gt_proc_evt *)data)->ppid))
			return 0;
		/* a child of a traced process is traced: the recording waits for it too */
		if (r->watch)
			pid_watch__add(r->watch, h->pid);
		break;
	case GT_REC_EXIT:
		said_fault(r, data);
		proc_names__forget_cmdline(r->procs, h->pid);
		if (r->stacks)
			ustacks__forget(r->stacks, h->pid);
		if (!relevant(r, h->pid))
			return 0;
		kernel_names__on_record(r->names, h);
		break;
	case GT_REC_RANGE:
		if (!gt_rec__size_ok(h)) {
			r->bad_records++;
			return 0;
		}
		err = recorder__write(r, h);
		capture__on_range(r, data);
		return err;
	case GT_REC_NAME:
		if (((const struct gt_name *)data)->kind == GT_NAME_PROCESS)
			return proc_names__on_exec_cmdline(r->procs, data);
		if (((const struct gt_name *)data)->kind == GT_NAME_THREAD)
			return proc_names__on_thread_name(r->procs, data);
		/* raw driver name from BPF: kernel_names writes the checked one */
		return kernel_names__on_record(r->names, h);
	default:
		note_process(r, h);
		if (h->type == GT_REC_CALL || h->type == GT_REC_CALL_STR || h->type == GT_REC_LAUNCH)
			r->cuda_calls++;
		err = kernel_names__on_record(r->names, h);
		if (err)
			return err;
		break;
	}
	return recorder__write(r, h);
}

/* One ring-buffer sample: one record, whose reservation may be longer than
 * it (a name's, reserved for the longest), or a call site's reference
 * (GT_REC_USTACK_SAME, fixed size) and then its call's record: a hot call
 * from a site already seen sends both in one reservation, a reserve and a
 * submit less on every launch. */
int recorder__on_event(void *ctx, void *data, size_t len)
{
	const struct gt_hdr *h = data;
	size_t n = sizeof(struct gt_ustack_same);
	int err;

	if (len > n && len >= sizeof(*h) && h->type == GT_REC_USTACK_SAME && h->size == n) {
		err = on_record(ctx, data, n);
		if (err)
			return err;
		return on_record(ctx, (char *)data + n, len - n);
	}
	return on_record(ctx, data, len);
}
