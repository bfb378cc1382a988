// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Kernel side of the libcuda recorder: uprobes and uretprobes on the CUDA
 * driver API, process lifecycle (cuda_procs.bpf.h), and discovery of
 * libcuda files being opened (cuda_discovery.bpf.h); the overhead budget's
 * link swaps are in cuda_swap.bpf.h.
 * Everything is written to one ring buffer; the decoding happens in
 * userspace (user/decode/decode.c), so the traced program pays for a register copy
 * and a ring-buffer reservation, nothing more.
 */
#include "common.bpf.h"

/* Counters of this object, read by the recorder through the skeleton. */
__u64 n_drop_stash = 0;
__u64 n_str_fault = 0;
__u64 n_args_fault = 0;
__u64 n_ranges = 0;		/* capture ranges opened (the last index given) */
__u64 n_ranges_nested = 0;	/* opens inside an open range of the process: ignored */
__u64 n_ranges_refused = 0;	/* opens beyond range_max: not recorded */

/* Capture control, set by the recorder before load. */
const volatile bool gate_hot = false;	/* light mode: hot calls (GT_COOKIE_HOT) only while hot_on */
const volatile __u32 range_max = 0;	/* ranges recorded at most, 0 = any number */

/* Written by the recorder while recording: 1 while its hot probes are
 * live and their calls wanted (a light-mode window, or a range open). */
__u32 hot_on = 0;
/* Written by the recorder: 1 once the probes on the libcuda files found at
 * its start are all attached.  They go on one by one over milliseconds; a
 * call made then would be recorded or not by which of them were on (an
 * entry without its exit, a launch whose neighbour is missing), so a
 * recording begins with every call of that instant instead.  A library
 * found later is probed while its process is held (cuda_discovery.bpf.h). */
__u32 calls_on = 0;

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Out-pointer arguments of calls in flight, read back at their exit. */
struct stash_key {
	__u32 tid;	/* thread of the call */
	__u32 api;	/* enum gt_api: a call may nest another api on the same thread */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct stash_key);
	__type(value, __u64);
} stash SEC(".maps");

#include "cuda_swap.bpf.h"

/* Whether a call entry is recorded: its process traced and in a range
 * (with -c), for hot calls in light mode the hot probes live, and for a
 * probe of a swap its generation the one in force. */
static __always_inline bool entry_wanted(__u64 id, __u64 cookie, __u64 *ts)
{
	__u8 st;

	if (!traced(id >> 32) || !*(volatile __u32 *)&calls_on)
		return false;
	/* the call's time before its gates are read: a call the light window's
	 * gate lets through is earlier than the window's close, whose time the
	 * recorder takes after closing the gate */
	*ts = bpf_ktime_get_ns();
	if (!swap_gate || !(cookie & GT_COOKIE_SWAP))
		return hot_gate(cookie) && captured(id >> 32);
	st = *(volatile __u8 *)&api_state[GT_COOKIE_API(cookie) & (GT_SW_APIS - 1)];
	/* no swap in progress: the generation in force records */
	if (!(st & (GT_SW_PAIR | GT_SW_MARK)))
		return (st & GT_SW_GEN) == GT_COOKIE_GEN_OF(cookie) && hot_gate(cookie) &&
		       captured(id >> 32);
	return entry_swap(id, cookie, st);
}

/* Whether a call exit is recorded by this program: for a probe of a swap,
 * only by the generation that recorded its entry (GEN, or its mark). */
static __always_inline bool exit_wanted(__u64 id, __u64 cookie)
{
	__u8 st;

	if (!*(volatile __u32 *)&calls_on)
		return false;
	/* a hot call's exit (--launch-exit in light mode) only while the gate
	 * is open: a call that entered after it closed, while the probes were
	 * still being detached, was not recorded; one recorded before, which
	 * returns after it, is incomplete (at most one a thread per window) */
	if (!swap_gate || !(cookie & GT_COOKIE_SWAP))
		return hot_gate(cookie);
	st = *(volatile __u8 *)&api_state[GT_COOKIE_API(cookie) & (GT_SW_APIS - 1)];
	if (!(st & (GT_SW_PAIR | GT_SW_MARK)))
		return (st & GT_SW_GEN) == GT_COOKIE_GEN_OF(cookie);
	return exit_swap(id, cookie, st);
}

/* A change of a process' range, reported at once (a forced wake-up): in
 * light mode the recorder attaches the hot probes when a range opens. */
static __always_inline void range_record(__u64 id, __u32 kind, __u32 source, __u32 index, __u32 flags)
{
	struct gt_capture *e = reserve(sizeof(*e));

	if (!e)
		return;
	fill_hdr(&e->hdr, id, GT_REC_RANGE, sizeof(*e), 0);
	e->kind = kind;
	e->source = source;
	e->index = index;
	e->flags = flags;
	e->latency_ns = 0;
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/* cuProfilerStart, or the agent's NVTX range of --nvtx-capture: the
 * process' records are written from here on, up to range_max ranges. */
static __always_inline void range_open(__u64 id, __u32 source)
{
	__u32 pid = id >> 32, flags = 0;
	struct range_state st = { .source = source };

	if (bpf_map_lookup_elem(&ranges, &pid)) {
		count(&n_ranges_nested);
		return;
	}
	st.index = __sync_fetch_and_add(&n_ranges, 1) + 1;
	if (range_max && st.index > range_max) {
		count(&n_ranges_refused);
		flags = GT_CAP_F_REFUSED;
	} else if (bpf_map_update_elem(&ranges, &pid, &st, BPF_NOEXIST)) {
		return;
	}
	range_record(id, GT_CAP_RANGE_OPEN, source, st.index, flags);
}

static __always_inline void range_close(__u64 id, __u32 flags)
{
	__u32 pid = id >> 32;
	struct range_state *st = bpf_map_lookup_elem(&ranges, &pid);
	__u32 index, source;

	if (!st)
		return;
	index = st->index;
	source = st->source;
	bpf_map_delete_elem(&ranges, &pid);
	range_record(id, GT_CAP_RANGE_CLOSE, source, index, flags);
}

#include "ustack.bpf.h"

/* A call's record of size bytes, after its call site's reference when same
 * (a hot call from a site seen before: both in one ring-buffer sample, which
 * the recorder reads in order); *rec is what to submit. NULL when the
 * buffer is full. */
static __always_inline void *reserve_after_site(bool same, const struct stack_site *site, __u64 id,
						__u64 cookie, __u64 ts, __u32 size, void **rec)
{
	struct gt_ustack_same *s;

	if (!same) {
		*rec = reserve(size);
		return *rec;
	}
	s = reserve(sizeof(*s) + size);
	*rec = s;
	if (!s)
		return NULL;
	same_fill(s, site, id, cookie, ts);
	return s + 1;
}

/* Remembers where the call will write its result (new handle, pointer). */
static __always_inline void stash_out(struct pt_regs *ctx, __u64 id, __u64 cookie)
{
	int out = GT_COOKIE_OUT(cookie);
	struct stash_key k = { .tid = (__u32)id, .api = GT_COOKIE_API(cookie) };
	__u64 addr;

	if (out < 0)
		return;
	addr = gt_arg(ctx, out);
	if (bpf_map_update_elem(&stash, &k, &addr, BPF_ANY))
		count(&n_drop_stash);
}

SEC("uprobe")
int call_entry(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 id = bpf_get_current_pid_tgid();
	__u64 ts;
	struct gt_call *e;
	struct stack_site site;
	void *rec;
	bool same;

	if ((cookie & GT_COOKIE_RANGE_OPEN) && traced(id >> 32))
		range_open(id, GT_CAPSRC_PROFILER);
	if (!entry_wanted(id, cookie, &ts))
		return 0;
	stash_out(ctx, id, cookie);
	same = ustack_site(ctx, id, cookie, ts, &site, 0, 0);
	e = reserve_after_site(same, &site, id, cookie, ts, sizeof(*e), &rec);
	if (!e)
		return 0;
	fill_hdr_at(&e->hdr, id, GT_REC_CALL, sizeof(*e), GT_COOKIE_API(cookie), ts);
	e->args[0] = PT_REGS_PARM1(ctx);
	e->args[1] = PT_REGS_PARM2(ctx);
	e->args[2] = PT_REGS_PARM3(ctx);
	e->args[3] = PT_REGS_PARM4(ctx);
	e->args[4] = PT_REGS_PARM5(ctx);
	e->args[5] = PT_REGS_PARM6(ctx);
	submit(rec);
	return 0;
}

/* Function handles whose name was already sent, per process. LRU: a handle
 * evicted or a pid reused only means one more name record. */
struct seen_key {
	__u32 pid;	/* process of the handle */
	__u32 _pad;	/* explicit padding, zero */
	__u64 handle;	/* CUfunction or CUkernel */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct seen_key);
	__type(value, __u8);
} seen_funcs SEC(".maps");

/* In front of seen_funcs, per CPU: the last handle seen in each of 256
 * slots. A launch loop hits it every time, and an array lookup is inlined
 * by the verifier where a hash lookup is a call. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct seen_key);
} seen_cache SEC(".maps");

struct gt_name_max {
	struct gt_name rec;
	char str[GT_STR_MAX];
};

/* First launch of a handle in a process: send the name the driver keeps for
 * it (8 bytes at +8 point to the mangled name; an undocumented layout that
 * the recorder checks before trusting). Done here, not later from
 * userspace, because a short-lived process may be gone by then. */
static __always_inline void name_once(__u64 id, __u64 func)
{
	struct seen_key k = { .pid = id >> 32, .handle = func };
	struct gt_name_max *e;
	__u64 p = 0;
	__u8 one = 1;
	long n = 0;

	__u32 slot = ((func >> 4) ^ k.pid) & 255;
	struct seen_key *c = bpf_map_lookup_elem(&seen_cache, &slot);

	if (!func)
		return;
	if (c && c->pid == k.pid && c->handle == func)
		return;
	if (c) {
		c->pid = k.pid;
		c->handle = func;
	}
	if (bpf_map_lookup_elem(&seen_funcs, &k))
		return;
	bpf_map_update_elem(&seen_funcs, &k, &one, BPF_ANY);
	e = reserve(sizeof(*e));
	if (!e)
		return;
	if (!bpf_probe_read_user(&p, sizeof(p), (void *)(func + 8)) && p)
		n = bpf_probe_read_user_str(e->str, sizeof(e->str), (void *)p);
	if (n <= 0) {
		n = 0;
		e->str[0] = 0;
	}
	if (n > GT_STR_MAX)
		n = GT_STR_MAX;
	e->rec.key = func;
	e->rec.kind = GT_NAME_KERNEL_MEM;
	e->rec.len = n;
	e->rec.flags = GT_NAME_F_RAW;
	fill_hdr(&e->rec.hdr, id, GT_REC_NAME, GT_REC_ALIGN(sizeof(e->rec) + n), 0);
	submit(e);
}

/* cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra)
 * and cuLaunchCooperativeKernel (same prefix): the last three dims we need
 * are on the stack. */
SEC("uprobe")
int launch_entry(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 id = bpf_get_current_pid_tgid();
	__u64 ts;
	struct gt_launch *e;
	struct stack_site site;
	void *rec;
	__u64 top[4];	/* the return address, then the last three arguments */
	bool same, fault;

	if (!entry_wanted(id, cookie, &ts))
		return 0;
	/* one read for the arguments on the stack and the call site's return
	 * address beside them */
	fault = bpf_probe_read_user(top, sizeof(top), (void *)PT_REGS_SP(ctx)) != 0;
	same = ustack_site(ctx, id, cookie, ts, &site, fault ? 0 : top[0], PT_REGS_PARM1(ctx));
	/* a call site known with this kernel: its name was sent by the launch
	 * that made the site known (the kernel is part of its key) */
	if (!same)
		name_once(id, PT_REGS_PARM1(ctx));
	e = reserve_after_site(same, &site, id, cookie, ts, sizeof(*e), &rec);
	if (!e)
		return 0;
	fill_hdr_at(&e->hdr, id, GT_REC_LAUNCH, sizeof(*e), GT_COOKIE_API(cookie), ts);
	e->func = PT_REGS_PARM1(ctx);
	e->grid[0] = PT_REGS_PARM2(ctx);
	e->grid[1] = PT_REGS_PARM3(ctx);
	e->grid[2] = PT_REGS_PARM4(ctx);
	e->block[0] = PT_REGS_PARM5(ctx);
	e->block[1] = PT_REGS_PARM6(ctx);
	e->flags = (cookie & GT_COOKIE_COOP) ? GT_LAUNCH_COOPERATIVE : 0;
	if (cookie & GT_COOKIE_NOEXIT)
		e->flags |= GT_LAUNCH_NO_EXIT;
	e->nattrs = 0;
	if (fault) {
		count(&n_args_fault);
		top[1] = top[2] = top[3] = 0;
		e->flags |= GT_LAUNCH_CFG_FAULT;
	}
	e->block[2] = (__u32)top[1];
	e->shmem = (__u32)top[2];
	e->stream = top[3];
	submit(rec);
	return 0;
}

/* Layout of CUlaunchConfig (cuda.h), read whole. */
struct gt_launch_config {
	__u32 grid[3];
	__u32 block[3];
	__u32 shmem;
	__u32 _pad;
	__u64 stream;
	__u64 attrs;
	__u32 nattrs;
	__u32 _pad2;
};

/* cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, params, extra) */
SEC("uprobe")
int launch_ex_entry(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 id = bpf_get_current_pid_tgid();
	__u64 ts;
	struct gt_launch_config cfg;
	struct gt_launch *e;
	struct stack_site site;
	void *rec;
	bool same;

	if (!entry_wanted(id, cookie, &ts))
		return 0;
	same = ustack_site(ctx, id, cookie, ts, &site, 0, PT_REGS_PARM2(ctx));
	if (!same)
		name_once(id, PT_REGS_PARM2(ctx));	/* as launch_entry */
	e = reserve_after_site(same, &site, id, cookie, ts, sizeof(*e), &rec);
	if (!e)
		return 0;
	fill_hdr_at(&e->hdr, id, GT_REC_LAUNCH, sizeof(*e), GT_COOKIE_API(cookie), ts);
	e->func = PT_REGS_PARM2(ctx);
	e->flags = GT_LAUNCH_EX;
	if (cookie & GT_COOKIE_NOEXIT)
		e->flags |= GT_LAUNCH_NO_EXIT;
	if (bpf_probe_read_user(&cfg, sizeof(cfg), (void *)PT_REGS_PARM1(ctx))) {
		count(&n_args_fault);
		__builtin_memset(&cfg, 0, sizeof(cfg));
		e->flags |= GT_LAUNCH_CFG_FAULT;
	}
	e->grid[0] = cfg.grid[0];
	e->grid[1] = cfg.grid[1];
	e->grid[2] = cfg.grid[2];
	e->block[0] = cfg.block[0];
	e->block[1] = cfg.block[1];
	e->block[2] = cfg.block[2];
	e->shmem = cfg.shmem;
	e->stream = cfg.stream;
	e->nattrs = cfg.nattrs > 0xffff ? 0xffff : cfg.nattrs;
	submit(rec);
	return 0;
}

/* Calls taking a string: kernel lookups by name, loads from a file. */
struct gt_call_str_max {
	struct gt_call_str rec;
	char str[GT_STR_MAX];
};

/* Sleepable: a name passed as a string literal may sit on a page the program
 * never touched, which a plain probe read cannot fault in. */
SEC("uprobe.s")
int call_str_entry(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 id = bpf_get_current_pid_tgid();
	__u64 ts;
	struct gt_call_str_max *e;
	int sarg = GT_COOKIE_STR(cookie);
	long n = 0;

	if (!entry_wanted(id, cookie, &ts))
		return 0;
	stash_out(ctx, id, cookie);
	ustack(ctx, id, cookie, ts);
	e = reserve(sizeof(*e));
	if (!e)
		return 0;
	e->rec.args[0] = PT_REGS_PARM1(ctx);
	e->rec.args[1] = PT_REGS_PARM2(ctx);
	e->rec.args[2] = PT_REGS_PARM3(ctx);
	e->rec.args[3] = PT_REGS_PARM4(ctx);
	if (sarg >= 0) {
		__u64 p = gt_arg(ctx, sarg);
		char c;

		n = bpf_probe_read_user_str(e->str, sizeof(e->str), (void *)p);
		if (n < 0 && p) {
			/* fault in the string's page and the next, then read again */
			bpf_copy_from_user(&c, 1, (void *)p);
			bpf_copy_from_user(&c, 1, (void *)((p | 4095) + 1));
			n = bpf_probe_read_user_str(e->str, sizeof(e->str), (void *)p);
		}
	}
	if (n <= 0) {
		count(&n_str_fault);
		n = 0;
		e->str[0] = 0;
	}
	if (n > GT_STR_MAX)
		n = GT_STR_MAX;
	e->rec.len = n;
	/* a full buffer without room for more means the string was cut */
	e->rec.truncated = n == GT_STR_MAX;
	e->rec._pad = 0;
	fill_hdr_at(&e->rec.hdr, id, GT_REC_CALL_STR, GT_REC_ALIGN(sizeof(e->rec) + n),
		 GT_COOKIE_API(cookie), ts);
	submit(e);
	return 0;
}

/* cuMemcpy2D*(const CUDA_MEMCPY2D *p[, stream]) and 3D: the fields a copy
 * needs, at their cuda.h offsets, into args[] as documented in gtrace_api.h. */
static __always_inline int memcpy_struct(struct pt_regs *ctx, bool three_d)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 id = bpf_get_current_pid_tgid();
	__u64 ts;
	int sarg = GT_COOKIE_STREAM(cookie);
	__u8 p[200];
	struct gt_call *e;
	__u64 w, h, d = 1;
	__u32 st, dt;

	if (!entry_wanted(id, cookie, &ts))
		return 0;
	ustack(ctx, id, cookie, ts);
	e = reserve(sizeof(*e));
	if (!e)
		return 0;
	fill_hdr_at(&e->hdr, id, GT_REC_CALL, sizeof(*e), GT_COOKIE_API(cookie), ts);
	if (bpf_probe_read_user(p, three_d ? 200 : 128, (void *)PT_REGS_PARM1(ctx))) {
		count(&n_args_fault);
		__builtin_memset(e->args, 0, sizeof(e->args));
		submit(e);
		return 0;
	}
	if (three_d) {
		st = *(__u32 *)&p[32];
		dt = *(__u32 *)&p[120];
		w = *(__u64 *)&p[176];
		h = *(__u64 *)&p[184];
		d = *(__u64 *)&p[192];
		e->args[4] = st == 1 ? *(__u64 *)&p[40] : *(__u64 *)&p[48];
		e->args[5] = dt == 1 ? *(__u64 *)&p[128] : *(__u64 *)&p[136];
	} else {
		st = *(__u32 *)&p[16];
		dt = *(__u32 *)&p[72];
		w = *(__u64 *)&p[112];
		h = *(__u64 *)&p[120];
		e->args[4] = st == 1 ? *(__u64 *)&p[24] : *(__u64 *)&p[32];
		e->args[5] = dt == 1 ? *(__u64 *)&p[80] : *(__u64 *)&p[88];
	}
	e->args[0] = st;
	e->args[1] = dt;
	e->args[2] = w * h * d;
	e->args[3] = sarg >= 0 ? gt_arg(ctx, sarg) : 0;
	submit(e);
	return 0;
}

SEC("uprobe")
int memcpy2d_entry(struct pt_regs *ctx)
{
	return memcpy_struct(ctx, false);
}

SEC("uprobe")
int memcpy3d_entry(struct pt_regs *ctx)
{
	return memcpy_struct(ctx, true);
}

/* Reads back the out-pointer stashed at entry. Returns the address, 0 if none. */
static __always_inline __u64 take_out(__u64 id, __u64 cookie)
{
	struct stash_key k = { .tid = (__u32)id, .api = GT_COOKIE_API(cookie) };
	__u64 *addr, a;

	if (GT_COOKIE_OUT(cookie) < 0)
		return 0;
	addr = bpf_map_lookup_elem(&stash, &k);
	if (!addr)
		return 0;
	a = *addr;
	bpf_map_delete_elem(&stash, &k);
	return a;
}

SEC("uretprobe")
int call_exit(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 id = bpf_get_current_pid_tgid();
	struct gt_ret *e;
	__u64 addr, ts;

	if (!traced(id >> 32) || !exit_wanted(id, cookie))
		return 0;
	addr = take_out(id, cookie);
	if (!captured(id >> 32))
		return 0;
	ts = bpf_ktime_get_ns();
	ustack_failed(ctx, id, cookie, ts, (__s32)PT_REGS_RC(ctx));
	e = reserve(sizeof(*e));
	if (!e)
		goto out;
	fill_hdr_at(&e->hdr, id, GT_REC_RET, sizeof(*e), GT_COOKIE_API(cookie), ts);
	e->ret = (__s32)PT_REGS_RC(ctx);
	e->flags = 0;
	e->out = 0;
	if (addr) {
		if (bpf_probe_read_user(&e->out, sizeof(e->out), (void *)addr))
			e->flags = GT_RET_OUT_FAULT;
		else
			e->flags = GT_RET_OUT;
	}
	submit(e);
out:
	/* cuProfilerStop: its own exit is the last record of the range */
	if (cookie & GT_COOKIE_RANGE_CLOSE)
		range_close(id, 0);
	return 0;
}

struct gt_ret_str_max {
	struct gt_ret_str rec;
	char str[GT_STR_MAX];
};

/* Exit of cuFuncGetName-like calls: the out-pointer received a char *. */
SEC("uretprobe")
int call_exit_str(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 id = bpf_get_current_pid_tgid();
	struct gt_ret_str_max *e;
	__u64 addr, s = 0, ts;
	long n = 0;

	if (!traced(id >> 32) || !exit_wanted(id, cookie))
		return 0;
	addr = take_out(id, cookie);
	if (!captured(id >> 32))
		return 0;
	ts = bpf_ktime_get_ns();
	ustack_failed(ctx, id, cookie, ts, (__s32)PT_REGS_RC(ctx));
	e = reserve(sizeof(*e));
	if (!e)
		return 0;
	e->rec.ret = (__s32)PT_REGS_RC(ctx);
	if (addr && !bpf_probe_read_user(&s, sizeof(s), (void *)addr) && s && e->rec.ret == 0)
		n = bpf_probe_read_user_str(e->str, sizeof(e->str), (void *)s);
	if (n <= 0) {
		if (e->rec.ret == 0)
			count(&n_str_fault);
		n = 0;
		e->str[0] = 0;
	}
	if (n > GT_STR_MAX)
		n = GT_STR_MAX;
	e->rec.out = s;
	e->rec.len = n;
	e->rec.truncated = n == GT_STR_MAX;
	fill_hdr_at(&e->rec.hdr, id, GT_REC_RET_STR, GT_REC_ALIGN(sizeof(e->rec) + n),
		    GT_COOKIE_API(cookie), ts);
	submit(e);
	return 0;
}

#include "cuda_procs.bpf.h"

/* ---- capture ranges reported by the CUPTI agent (-c nvtx) ---- */

/* gtrace_capture_open(void) in the agent: cookie = enum gt_capture_source. */
SEC("uprobe")
int range_open_entry(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();

	if (traced(id >> 32))
		range_open(id, (__u32)bpf_get_attach_cookie(ctx));
	return 0;
}

/* gtrace_capture_close(void) in the agent. */
SEC("uprobe")
int range_close_entry(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();

	if (traced(id >> 32))
		range_close(id, 0);
	return 0;
}

#include "cuda_discovery.bpf.h"
