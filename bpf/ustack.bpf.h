/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * --stacks in a probe of any object (cuda.bpf.c, nccl.bpf.c): the calling
 * thread's user stack and Python frames, as a record just before the call's
 * entry, when the probe's cookie asks for it (GT_COOKIE_STACK, _CACHE,
 * _FAIL). The objects share the maps below and pystack.bpf.h's (the
 * recorder reuses the cuda object's before the others load); each counts
 * its own faults. Needs common.bpf.h's reserve, submit, fill_hdr_at, count.
 */
#ifndef GTRACE_USTACK_BPF_H
#define GTRACE_USTACK_BPF_H

__u64 n_stack_fault = 0;	/* stacks the unwinder could not take (--stacks) */
/* Measurement only (tools/gpu/hot_cost.sh, GTRACE_BENCH_STACK_SKIP): parts
 * of a hot call's call-site key left out, to time each: 1 the Python frame,
 * 2 the lookup of the site (every call a hit), 4 the record, 8 the native
 * reads, 16 the Python frames below the innermost (the whole stack's hash:
 * every site of a line then the first one's); 32 reads an entry frame on
 * the C stack a page at a time, as the data stack's (what reading it alone
 * saves); 64 reads 4 KiB of the C stack from an entry frame, the next ones
 * with it where they lie close (whether that saves reads on a GPU host).
 * 0 in every recording. */
const volatile __u32 stack_bench_skip = 0;

/* --stacks: the thread's user stack, as a record just before the call's
 * entry (same time), when the probe's cookie asks for it. The kernel's
 * unwinder follows frame pointers from the probed function, whose own
 * frame is not set up yet at its entry: its caller's return address, at
 * the stack pointer, is taken apart for the recorder to put in. */
/* Processes whose first stack was sent: that one wakes the recorder at
 * once, so that it reads the process' mappings while it is in the call. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} stack_pids SEC(".maps");

/* --stacks all: the call sites of hot calls whose stack was sent, per
 * thread; a call from one of them sends its key only. */
struct stack_site {
	__u32 tid;
	__u32 pyinstr;		/* the innermost Python frame's instruction */
	__u64 caller, site2;
	__u64 pycode;		/* ... and code object, 0 without Python */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct stack_site);
	__type(value, __u8);
} stack_sites SEC(".maps");

#include "pystack.bpf.h"

static __always_inline bool ustack_of(struct pt_regs *ctx, __u64 id, __u64 cookie, __u64 ts, bool at_exit,
				      struct stack_site *same, __u64 caller, __u64 func);

static __always_inline void ustack(struct pt_regs *ctx, __u64 id, __u64 cookie, __u64 ts)
{
	ustack_of(ctx, id, cookie, ts, false, NULL, 0, 0);
}

/* A launch's stack: true when its call site is one seen before, in *site,
 * whose reference the launch sends in its own reservation (same_fill).
 * caller: the return address at the stack pointer when the probe read it
 * already (with the arguments beside it), else 0. func: the kernel a launch
 * starts (0 for other calls), part of the site's key: the runtime's launch
 * function calls the driver from the same two return addresses for every
 * kernel, and a thread without Python (autograd's) launches every kernel
 * of the backward pass under the same Python line. */
static __always_inline bool ustack_site(struct pt_regs *ctx, __u64 id, __u64 cookie, __u64 ts,
					struct stack_site *site, __u64 caller, __u64 func)
{
	return ustack_of(ctx, id, cookie, ts, false, site, caller, func);
}

static __always_inline void same_fill(struct gt_ustack_same *s, const struct stack_site *site, __u64 id,
				      __u64 cookie, __u64 ts)
{
	s->caller = site->caller;
	s->site2 = site->site2;
	s->pycode = site->pycode;
	s->pyinstr = site->pyinstr;
	s->_pad = 0;
	fill_hdr_at(&s->hdr, id, GT_REC_USTACK_SAME, sizeof(*s), GT_COOKIE_API(cookie), ts);
}

/* The stack of a call that failed, at its exit, when its entry took none. */
static __always_inline void ustack_failed(struct pt_regs *ctx, __u64 id, __u64 cookie, __u64 ts, int ret)
{
	if (ret && (cookie & GT_COOKIE_STACK_FAIL) && !(cookie & GT_COOKIE_STACK))
		ustack_of(ctx, id, (cookie | GT_COOKIE_STACK) & ~GT_COOKIE_STACK_CACHE, ts, true, NULL, 0, 0);
}

/* The stack of a call, as a record before its own. A call from a site seen
 * before sends the site's key only: into *same when given (true returned:
 * the caller puts it in its own reservation), else as a record of its own. */
static __always_inline bool ustack_of(struct pt_regs *ctx, __u64 id, __u64 cookie, __u64 ts, bool at_exit,
				      struct stack_site *same, __u64 caller, __u64 func)
{
	__u32 pid = id >> 32;
	struct stack_site site = { .tid = (__u32)id };
	struct py_walk *w = NULL;
	struct gt_ustack *e;
	bool first;
	bool keyed = true;	/* the key names the whole Python stack */
	__u8 one = 1;
	long n;

	if (!(cookie & GT_COOKIE_STACK))
		return false;
	if (cookie & GT_COOKIE_STACK_CACHE) {
		/* the call site: the return address at the stack pointer and
		 * the one above the caller's frame pointer, and the innermost
		 * Python frame where the thread runs Python */
		if (stack_bench_skip & 8)
			site.caller = 1;
		else if (caller)
			site.caller = caller;
		else if (bpf_probe_read_user(&site.caller, sizeof(site.caller), (void *)PT_REGS_SP(ctx)))
			site.caller = 0;
		if ((stack_bench_skip & 8) ||
		    bpf_probe_read_user(&site.site2, sizeof(site.site2), (void *)(PT_REGS_FP(ctx) + 8)))
			site.site2 = 0;
		/* the Python part cheaply; where that cannot tell, the
		 * first frame of a walk (which goes on below if needed) */
		struct py_key pk = {};
		int found = (stack_bench_skip & 1) ? 0 : py_top_key(id, PT_REGS_SP(ctx), &pk);

		if (found > 0) {
			site.pycode = pk.code;
			site.pyinstr = pk.instr;
		} else if (found < 0) {
			/* a walk's innermost frame: not the whole stack,
			 * so the site is not kept (the next call walks) */
			keyed = false;
			count(&n_py_slowkey);
			w = py_walk(id, ts, 1);
			if (w && w->n) {
				site.pycode = w->f[0].code;
				site.pyinstr = w->f[0].instr;
			}
		}
		/* the rest of the key in the second return address' place: the
		 * recorder keys the site by the same four values */
		site.site2 = py_mix(py_mix(site.site2, pk.deep), func);
		if (site.caller && ((stack_bench_skip & 2) || bpf_map_lookup_elem(&stack_sites, &site))) {
			struct gt_ustack_same *s;

			if (stack_bench_skip & 4)
				return false;
			if (same) {
				*same = site;
				return true;
			}
			s = reserve(sizeof(*s));
			if (!s)
				return false;
			same_fill(s, &site, id, cookie, ts);
			submit(s);
			return false;
		}
	}
	/* the Python frames first: their new code objects go out before the
	 * stack that names them (a call site not seen before: the key's walk
	 * of one frame goes on) */
	if (w)
		py_walk_more(GT_PYSTACK_MAX);
	else
		w = py_walk(id, ts, GT_PYSTACK_MAX + 1);
	if (w)
		py_codes_send();
	e = reserve(sizeof(*e));
	if (!e)
		return false;
	e->flags = 0;
	e->_pad = 0;
	e->_pad2 = 0;
	e->site2 = site.site2;
	e->npy = 0;
	e->pyversion = 0;
	if (w) {
		e->pyversion = w->c.version;
		e->npy = w->n > GT_PYSTACK_MAX ? GT_PYSTACK_MAX : w->n;
		e->flags |= w->flags & (GT_STACK_PY_CUT | GT_STACK_PY_FAULT | GT_STACK_PY_MAIN |
					GT_STACK_PY_SKIPPED);
		bpf_probe_read_kernel(e->py, sizeof(e->py), w->f);
	}
	/* the site is known from now on when the key read cheaply names the
	 * frame the walk found (not where the walk could not read the code:
	 * the next call walks again) */
	if ((cookie & GT_COOKIE_STACK_CACHE) && site.caller && keyed &&
	    ((stack_bench_skip & 1) || (site.pycode == (e->npy ? e->py[0].code : 0) &&
					site.pyinstr == (e->npy ? e->py[0].instr : 0)))) {
		e->flags |= GT_STACK_SITE;
		bpf_map_update_elem(&stack_sites, &site, &one, BPF_ANY);
	}
	/* at an exit the stack pointer holds no return address: ip[0] is the
	 * caller's */
	if (at_exit || bpf_probe_read_user(&e->caller, sizeof(e->caller), (void *)PT_REGS_SP(ctx)))
		e->caller = 0;
	if (at_exit)
		e->flags |= GT_STACK_AT_EXIT;
	n = bpf_get_stack(ctx, e->ip, sizeof(e->ip), BPF_F_USER_STACK);
	if (n <= 0) {
		e->ip[0] = PT_REGS_IP(ctx);
		n = sizeof(e->ip[0]);
		e->flags |= GT_STACK_FAULT;
		count(&n_stack_fault);
	}
	n /= sizeof(e->ip[0]);
	if (n >= GT_USTACK_MAX) {
		n = GT_USTACK_MAX;
		e->flags |= GT_STACK_CUT;
	}
	e->nframes = n;
	fill_hdr_at(&e->hdr, id, GT_REC_USTACK, sizeof(*e), GT_COOKIE_API(cookie), ts);
	first = !bpf_map_lookup_elem(&stack_pids, &pid);
	if (first) {
		bpf_map_update_elem(&stack_pids, &pid, &one, BPF_ANY);
		bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	} else {
		submit(e);
	}
	return false;
}

#endif
