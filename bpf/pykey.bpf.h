/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A hot call's Python part of its call-site key (--stacks all), for
 * ustack.bpf.h: the innermost frame's code and instruction and a hash of
 * every frame's, read cheaply (py_top_key). Included by pystack.bpf.h after
 * the walk it falls back to (py_walk, py_call_frame, py_state_frame).
 */
#ifndef GTRACE_PYKEY_BPF_H
#define GTRACE_PYKEY_BPF_H

/* A thread state's innermost frame (0: it runs no Python) into *frame, true
 * where the thread id the state holds is want (the main thread's is its
 * pid where states hold native ids, the only kind py_fast keeps it for):
 * the id and the frame (or _PyCFrame) in one read, then the _PyCFrame's
 * frame. */
static __always_inline bool py_ts_top(const struct gt_py_cfg *c, struct py_walk *w, __u64 tstate, __u64 want,
				      __u64 *frame)
{
	__u32 lo = c->ts_tid < c->ts_frame ? c->ts_tid : c->ts_frame;
	__u32 hi = c->ts_tid < c->ts_frame ? c->ts_frame : c->ts_tid;
	__u32 sz = hi + 8 - lo, a = c->ts_tid - lo, b = c->ts_frame - lo;
	bool bad = false;

	if (sz > PY_TS_CHUNK || a > PY_TS_CHUNK - 8 || b > PY_TS_CHUNK - 8)
		return false;
	if (bpf_probe_read_user(w->tsc, sz, (void *)(tstate + lo)))
		return false;
	if (*(__u64 *)(w->tsc + a) != want)
		return false;
	*frame = py_state_frame(c, *(__u64 *)(w->tsc + b), &bad);
	return !bad;
}

/* A hot call's Python part of its site key: the code and instruction of the
 * innermost frame of the calling thread (for one that runs no Python, of
 * the main thread), as py_walk's first frame has them, and a hash of every
 * frame's (deep): the thread's state's id and frame at once (py_ts_top),
 * the _PyCFrame's frame before 3.13 (two or three reads, three to five
 * under the main thread's frames), then the innermost frame with its page
 * in one read, and a read for each page of callers and each entry frame on
 * the C stack (py_deep_step). 1: found;
 * 0: the process or its threads run no Python (key 0, 0); -1: not known
 * here (the process not looked at yet, an entry shim on top, something
 * unreadable): the caller takes py_walk's answer. */
struct py_key {
	__u64 code;
	__u32 instr;
	__u32 _pad;
	__u64 deep;	/* every frame's code and instruction, hashed (py_deep_step) */
};

static __always_inline __u64 py_mix(__u64 h, __u64 v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 31);
}

/* A frame's code, instruction and caller from b (room lim), where the
 * frame starts at idx: mixed into the hash, the caller next. */
static __always_inline long py_deep_take(struct py_deep *d, const __u8 *b, __u32 idx, __u32 lim)
{
	__u64 code, ip;
	__u32 n;

	n = idx + d->fr_code;
	if (n > lim - 8)
		return 1;
	code = *(__u64 *)(b + n);
	n = idx + d->fr_instr;
	if (n > lim - 8)
		return 1;
	ip = d->ilen == 4 ? *(__u32 *)(b + n) : *(__u64 *)(b + n);
	n = idx + d->fr_prev;
	if (n > lim - 8)
		return 1;
	d->frame = *(__u64 *)(b + n);
	d->h = py_mix(py_mix(d->h, code), ip);
	return 0;
}

/* One frame of a site key's hash: its code and instruction mixed in, then
 * on to its caller. The key of a call site names the whole Python stack,
 * not its innermost frame only: a helper called from two lines is two
 * sites. From 3.11 the frames lie together on the thread's data stack,
 * callers below callees: one read takes the page of a frame up to its
 * fields, and the callers on that page come from it (a read a page, not a
 * frame: each read costs about as much as a frame's dependent load, and
 * the copy of a page less than its frames read one by one). From 3.12 a
 * call into Python from C (a module's __call__, every PyTorch layer) puts
 * an entry frame on the C stack between two of the data stack's: that one
 * is read alone, into cbuf, so the page of its caller stays in buf (a page
 * of the C stack read for it cost two page reads a layer). A frame that
 * cannot be read ends the hash, marked (the same stack ends there the same
 * way). */
static long py_deep_step(__u64 i, void *ctx)
{
	struct py_walk *w = py_scratch_get();
	struct py_deep *d;
	__u64 f, lo;
	__u32 n;

	if (!w)
		return 1;
	d = &w->deep;
	f = d->frame;
	if (!f)
		return 1;
	if (d->sp && f - d->sp < PY_DEEP_CSTACK && !(stack_bench_skip & 32)) {
		/* on the C stack: this frame's fields alone. Measuring
		 * (GTRACE_BENCH_STACK_SKIP 64): 4 KiB from here, which holds
		 * the entry frames of the eval loops further out too where
		 * they lie close (one read for several; on the CI VM no
		 * cheaper, not yet timed on a GPU host) */
		if (f < d->clo || f + d->rd > d->chi) {
			if ((stack_bench_skip & 64) && !bpf_probe_read_user(d->cbuf, PY_DEEP_CBUF, (void *)f)) {
				d->chi = f + PY_DEEP_CBUF;
			} else {
				n = d->rd;
				if (n == 0 || n > PY_FRAME_CHUNK || bpf_probe_read_user(d->cbuf, n, (void *)f)) {
					d->h = py_mix(d->h, 1);
					return 1;
				}
				d->chi = f + n;
			}
			d->clo = f;
		}
		n = (__u32)(f - d->clo);
		if (n > PY_DEEP_CBUF)
			return 1;
		return py_deep_take(d, d->cbuf, n, PY_DEEP_CBUF);
	}
	if (f < d->lo || f + d->rd > d->hi) {
		/* the frame's page up to its fields (never below the page:
		 * the data stack's chunk may start there) */
		lo = d->page ? f & ~(__u64)(PY_DEEP_PAGE - 1) : f;
		n = (__u32)(f + d->rd - lo);
		if (n > PY_DEEP_BUF || bpf_probe_read_user(d->buf, n, (void *)lo)) {
			d->h = py_mix(d->h, 1);
			return 1;
		}
		d->lo = lo;
		d->hi = lo + n;
	}
	n = (__u32)(f - d->lo);
	if (n > PY_DEEP_PAGE)
		return 1;
	return py_deep_take(d, d->buf, n, PY_DEEP_BUF);
}

/* A global function: the verifier checks it once, on its own, not again in
 * every probe program at every path that reaches it (inlined, it cost the
 * recorder's start 0.6 s on the CI VM). */
__noinline int py_top_key(__u64 id, __u64 sp, struct py_key *k)
{
	__u32 pid = id >> 32, tid = (__u32)id, cfgi, zero = 0, off, slot = tid & (PY_FAST_SLOTS - 1);
	__u32 *ep = bpf_map_lookup_elem(&py_epoch, &zero), epoch = ep ? *(volatile __u32 *)ep : 0;
	struct py_fast *pf = ep ? bpf_map_lookup_elem(&py_fast, &slot) : NULL;
	struct py_proc *pp;
	struct gt_py_cfg *c;
	struct py_walk *w;
	struct py_deep *d;
	__u64 tstate, frame, ip, want, mts, lo;
	bool bad = false;
	__u32 n;

	if (!k)
		return -1;
	if (!py_nfiles)
		return 0;
	w = bpf_map_lookup_elem(&py_scratch, &zero);
	/* the thread keyed last in its slot: its own state, checked by the
	 * thread id it holds, as py_threads' are */
	if (pf && pf->tid == tid && pf->pid == pid && pf->epoch == epoch) {
		cfgi = pf->cfg;
		c = bpf_map_lookup_elem(&py_cfgs, &cfgi);
		if (!c || !w || !c->version)
			return -1;
		tstate = pf->tstate;
		if (py_self_id(c, tid, &want) && py_ts_top(c, w, tstate, want, &frame)) {
			if (frame)
				goto have_frame;
			/* no Python on its own state now: the main thread's,
			 * where that is what it ran under last time */
			if (pf->main && py_ts_top(c, w, pf->main, pid, &frame) && frame)
				goto have_frame;
		}
		/* not its state now, or no Python on it now: the long way */
		pf->tid = 0;
	}
	pp = bpf_map_lookup_elem(&py_procs, &pid);
	if (!pp || (!pp->runtime && pp->gen != py_gen))
		return -1;
	if (!pp->runtime)
		return 0;
	cfgi = pp->cfg;
	c = bpf_map_lookup_elem(&py_cfgs, &cfgi);
	if (!c || !w || !c->version)
		return -1;
	frame = py_call_frame(c, pp->runtime, id, &tstate, &mts, &bad);
	if (bad || !tstate)
		return -1;	/* the walk counts the thread without a state */
	if (!frame)
		return 0;
	/* a thread under the main thread's state is kept only with a state of
	 * its own (one without is looked for again now and then: py_tstate) */
	if (pf && (!mts || tstate != mts)) {
		pf->tid = tid;
		pf->pid = pid;
		pf->epoch = epoch;
		pf->cfg = cfgi;
		pf->tstate = tstate;
		pf->main = mts;
	}
have_frame:
	/* the innermost frame with its page below it (3.11+: its callers on
	 * the data stack), in one read: the hash's first read is this one */
	d = &w->deep;
	lo = c->version >= 0x030b ? frame & ~(__u64)(PY_DEEP_PAGE - 1) : frame;
	n = (__u32)(frame - lo);
	if (n > PY_DEEP_PAGE || bpf_probe_read_user(d->buf, n + PY_FRAME_CHUNK, (void *)lo))
		return -1;
	d->lo = lo;
	d->hi = lo + n + PY_FRAME_CHUNK;
	if (c->fr_owner != GT_PY_NONE && c->version >= 0x030c) {
		off = n + c->fr_owner;
		if (off > PY_DEEP_BUF - 1)
			return -1;
		if (d->buf[off] == PY_FRAME_OWNED_BY_CSTACK)
			return -1;
	}
	off = n + c->fr_code;
	if (off > PY_DEEP_BUF - 8)
		return -1;
	k->code = *(__u64 *)(d->buf + off);
	if (!k->code)
		return -1;
	d->fr_code = c->fr_code;
	d->rd = py_frame_bytes(c);
	if (!d->rd)
		return -1;
	d->fr_instr = c->fr_instr;
	off = n + c->fr_instr;
	if (off > PY_DEEP_BUF - 8)
		return -1;
	if (c->instr_kind == GT_PY_INSTR_LASTI) {
		__s32 lasti = *(__s32 *)(d->buf + off);

		k->instr = lasti < 0 ? 0 : (__u32)lasti;
		ip = (__u32)lasti;
		d->ilen = 4;
	} else {
		__u64 at;

		ip = *(__u64 *)(d->buf + off);
		at = ip - (k->code + c->co_code);
		d->ilen = 8;
		k->instr = at >= (1ull << 33) ? 0xffffffffu : (__u32)(at / 2);
	}
	/* the frames below: the whole stack in the key (py_deep_step) */
	d->fr_prev = c->fr_prev;
	off = n + c->fr_prev;
	if (off > PY_DEEP_BUF - 8)
		return -1;
	d->frame = *(__u64 *)(d->buf + off);
	d->h = py_mix(py_mix(0, k->code), ip);
	d->page = c->version >= 0x030b;
	d->sp = c->version >= 0x030c ? sp : 0;
	d->clo = d->chi = 0;
	if (!(stack_bench_skip & 16))
		bpf_loop(GT_PYSTACK_MAX - 1, py_deep_step, NULL, 0);
	k->deep = d->h;
	return 1;
}

#endif
