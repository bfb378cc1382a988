// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Kernel side of the NCCL recorder: uprobes and uretprobes on libnccl's
 * collectives, point-to-point calls, groups and communicator inits
 * (bpf/gtrace_nccl.h).  A call's arguments are read where the table says
 * they are (registers, stack slots); an init's ncclUniqueId, which every
 * rank of a communicator passes, is reduced to a digest so that readers can
 * tell which communicators of several processes are one.  Records go to
 * the cuda object's ring buffer (its maps are reused before load); the
 * decoder pairs entries with exits.
 */
#include "common.bpf.h"
#include "gtrace_api.h"
#include "gtrace_nccl.h"
#include "ustack.bpf.h"

__u64 n_nccl_args_fault = 0;	/* stack arguments or unique ids that could not be read */
__u64 n_nccl_drop_stash = 0;	/* out-pointer stash full: an init's exit lost its communicator */

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Where each api's arguments are, from the table (index into it = api). */
struct nccl_layout {
	__s8 send, recv, count, dtype, op, peer, comm, stream, out, nranks;
	__u8 kind;
};

static const struct nccl_layout layouts[GT_NCCL_API__COUNT] = {
#define GT_NCCL_LAYOUT(sym, k, s, r, c, dt, o, p, cm, st, ou, nr) \
	[GT_NCCL_API_##sym] = { s, r, c, dt, o, p, cm, st, ou, nr, GT_NCCL_K_##k },
	GT_NCCL_TABLE(GT_NCCL_LAYOUT)
#undef GT_NCCL_LAYOUT
};

/* Out-pointers of inits in flight, read back at their exit. */
struct nccl_stash_key {
	__u32 tid;	/* thread of the call */
	__u32 api;	/* enum gt_nccl_api */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct nccl_stash_key);
	__type(value, __u64);
} nccl_stash SEC(".maps");

/* The value of argument i: registers 0-5, stack slots from 6 (read once
 * into stk, slots 6 and 7: no api has more). */
static __always_inline __u64 arg_of(struct pt_regs *ctx, int i, const __u64 stk[2])
{
	if (i < 0)
		return 0;
	if (i < 6)
		return gt_arg(ctx, i);
	return i == 6 ? stk[0] : i == 7 ? stk[1] : 0;
}

/* FNV-1a over the 16 little-endian 64-bit words of an ncclUniqueId: a
 * digest that is the same wherever the same id is passed (docs/FORMAT.md). */
static __always_inline __u64 uid_digest(const __u64 id[16])
{
	__u64 h = 0xcbf29ce484222325ull;

	for (int i = 0; i < 16; i++) {
		h ^= id[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

SEC("uprobe")
int nccl_entry(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u64 cookie = bpf_get_attach_cookie(ctx), ts;
	__u32 api = (__u32)cookie & 0xffff;
	const struct nccl_layout *l;
	__u64 stk[2] = { 0, 0 }, uid[16];
	struct gt_nccl *e;
	long err = 0;

	if (!traced(id >> 32) || !captured(id >> 32) || api >= GT_NCCL_API__COUNT)
		return 0;
	l = &layouts[api];
	if (l->comm >= 6 || l->stream >= 6)
		err = bpf_probe_read_user(stk, sizeof(stk), (void *)(PT_REGS_SP(ctx) + 8));
	/* --stacks: the stack first, at the entry's time (the recorder puts
	 * its reference before the entry) */
	ts = bpf_ktime_get_ns();
	ustack(ctx, id, cookie, ts);
	e = reserve(sizeof(*e));
	if (!e)
		return 0;
	fill_hdr_at(&e->hdr, id, GT_REC_NCCL, sizeof(*e), api, ts);
	e->flags = 0;
	if (err) {
		count(&n_nccl_args_fault);
		e->flags |= GT_NCCL_ARGS_FAULT;
	}
	e->sendbuff = arg_of(ctx, l->send, stk);
	e->recvbuff = arg_of(ctx, l->recv, stk);
	e->count = arg_of(ctx, l->count, stk);
	e->comm = arg_of(ctx, l->comm, stk);
	e->stream = arg_of(ctx, l->stream, stk);
	e->out = arg_of(ctx, l->out, stk);
	e->peer = l->peer >= 0 ? (__s32)arg_of(ctx, l->peer, stk) : -1;
	e->nranks = l->nranks >= 0 ? (__s32)arg_of(ctx, l->nranks, stk) : 0;
	e->datatype = l->dtype >= 0 ? (__u32)arg_of(ctx, l->dtype, stk) : 0xffffffffu;
	e->op = l->op >= 0 ? (__u32)arg_of(ctx, l->op, stk) : 0xffffffffu;
	e->uid = 0;
	e->_pad = 0;
	if (l->kind == GT_NCCL_K_INIT && api != GT_NCCL_API_ncclCommInitAll) {
		/* the id by value on the stack, or (Scalable) the first of an array */
		void *src = api == GT_NCCL_API_ncclCommInitRankScalable ? (void *)PT_REGS_PARM5(ctx) :
			    (void *)(PT_REGS_SP(ctx) + 8);

		if (src && !bpf_probe_read_user(uid, sizeof(uid), src)) {
			e->uid = uid_digest(uid);
			e->flags |= GT_NCCL_UID;
		} else {
			count(&n_nccl_args_fault);
		}
	}
	if (l->out >= 0) {
		struct nccl_stash_key k = { .tid = (__u32)id, .api = api };

		if (bpf_map_update_elem(&nccl_stash, &k, &e->out, BPF_ANY))
			count(&n_nccl_drop_stash);
	}
	submit(e);
	return 0;
}

SEC("uretprobe")
int nccl_exit(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u64 cookie = bpf_get_attach_cookie(ctx), ts;
	__u32 api = (__u32)cookie & 0xffff;
	struct nccl_stash_key k = { .tid = (__u32)id, .api = api };
	__u64 *addr, a = 0;
	struct gt_ret *e;

	if (!traced(id >> 32) || api >= GT_NCCL_API__COUNT)
		return 0;
	if (layouts[api].out >= 0 && (addr = bpf_map_lookup_elem(&nccl_stash, &k))) {
		a = *addr;
		bpf_map_delete_elem(&nccl_stash, &k);
	}
	if (!captured(id >> 32))
		return 0;
	/* a failed call's stack, at its exit, when its entry took none */
	ts = bpf_ktime_get_ns();
	ustack_failed(ctx, id, cookie, ts, (__s32)PT_REGS_RC(ctx));
	e = reserve(sizeof(*e));
	if (!e)
		return 0;
	fill_hdr_at(&e->hdr, id, GT_REC_NCCL_RET, sizeof(*e), api, ts);
	e->ret = (__s32)PT_REGS_RC(ctx);
	e->flags = 0;
	e->out = 0;
	if (a) {
		if (bpf_probe_read_user(&e->out, sizeof(e->out), (void *)a))
			e->flags = GT_RET_OUT_FAULT;
		else
			e->flags = GT_RET_OUT;
	}
	submit(e);
	return 0;
}
