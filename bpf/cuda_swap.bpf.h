/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The overhead budget's swaps of the always-on links: the generation gate
 * of each api, the slots and marks that hand a hit's decision over.
 * Part of cuda.bpf.c's object, included by it once (it uses that file's
 * globals and maps, defined before the include).
 */
#ifndef GTRACE_CUDA_SWAP_BPF_H
#define GTRACE_CUDA_SWAP_BPF_H

/* ---- the budget's swaps: an always-on link replaced by one of the other
 * generation (record/probes/cuda_probes.c, docs/PERFORMANCE.md) ---- */

/* Set before load: probes with GT_COOKIE_SWAP check their generation (the
 * daemon in light mode with a budget). Off, the check is not even loaded. */
const volatile bool swap_gate = false;

/* GT_SW_* of each api, written by the recorder (gtrace_api.h). */
__u8 api_state[GT_SW_APIS] = {};
/* The swap in progress: slots and marks of an earlier one are stale. */
__u32 swap_seq = 0;
__u64 n_swap_handed = 0;	/* hits at which GEN flipped between the two programs:
				 * the old one followed the new one's reading */
__u64 n_swap_nomem = 0;		/* slots or marks that could not be stored */

/* What the new link's program read at the thread's last hit, for the old
 * one's, which the kernel runs right after it. */
struct swap_slot {
	__u32 seq;	/* swap_seq when written */
	__u16 api;	/* the api of the hit; 0 once the old program has taken it */
	__u8 gen;	/* the decision: the generation that records, 2 = none */
	__u8 _pad;	/* explicit padding, zero */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);		/* tid */
	__type(value, struct swap_slot);
} swap_slots SEC(".maps");

/* A call of a MARK api in flight: whether its entry was recorded. Marks
 * of an api are cleared by the recorder when it stops marking it. */
struct swap_mark {
	__u32 gen1;	/* 0: not recorded; else 1 + the generation that recorded it */
	__u32 _pad;	/* explicit padding, zero */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct stash_key);	/* thread and api, as the stash */
	__type(value, struct swap_mark);
} swap_marks SEC(".maps");

#define SWAP_NONE 2	/* no generation records this hit */

/* The generation that records this hit of the api of cookie: GEN, or at a
 * swap what the new program handed on; *handed when it did. */
static __always_inline __u32 swap_decide(__u64 id, __u64 cookie, __u8 st, bool ret, bool *handed)
{
	__u32 api = GT_COOKIE_API(cookie) & (GT_SW_APIS - 1), tid = (__u32)id, seq = swap_seq;
	__u32 mine = GT_COOKIE_GEN_OF(cookie), d = st & GT_SW_GEN;
	bool writer = (st & GT_SW_PAIR) && mine == !!(st & GT_SW_NEW);
	struct swap_slot *s;

	*handed = false;
	if ((st & GT_SW_PAIR) && !writer) {
		s = bpf_map_lookup_elem(&swap_slots, &tid);
		if (s && s->seq == seq && s->api == api) {
			if (s->gen != d)
				count(&n_swap_handed);
			d = s->gen;
			s->api = 0;
			*handed = true;
		}
	}
	if (ret && !*handed && (st & GT_SW_MARK)) {
		struct stash_key k = { .tid = tid, .api = api };
		struct swap_mark *m = bpf_map_lookup_elem(&swap_marks, &k);

		/* no mark: the call entered before marking began (GEN decides),
		 * or, STRICT, no entry program saw it */
		if (m) {
			d = m->gen1 ? m->gen1 - 1 : SWAP_NONE;
			bpf_map_delete_elem(&swap_marks, &k);
		} else if (st & GT_SW_STRICT) {
			d = SWAP_NONE;
		}
	}
	if (writer) {
		struct swap_slot v = { .seq = seq, .api = api, .gen = d };

		if (bpf_map_update_elem(&swap_slots, &tid, &v, BPF_ANY))
			count(&n_swap_nomem);
	}
	return d;
}

/* At a MARK api's entry: whether it was recorded, and by which generation.
 * The program that records writes; of the others only the one that ran
 * first (the new, or the only one), so that a stale mark is overwritten. */
static __always_inline void swap_mark(__u64 id, __u64 cookie, bool ok, bool handed)
{
	struct stash_key k = { .tid = (__u32)id, .api = GT_COOKIE_API(cookie) };
	struct swap_mark m = { .gen1 = ok ? 1 + GT_COOKIE_GEN_OF(cookie) : 0 };

	if ((ok || !handed) && bpf_map_update_elem(&swap_marks, &k, &m, BPF_ANY))
		count(&n_swap_nomem);
}

static __always_inline bool hot_gate(__u64 cookie)
{
	return !(gate_hot && (cookie & GT_COOKIE_HOT) && !*(volatile __u32 *)&hot_on);
}

/* The swap paths, out of line: BPF subprograms, so that an always-on
 * probe with no swap in progress runs one byte read and a compare, not the
 * swap's slot and mark code inlined into every program (which cost 57-76 ns
 * a run on the CI VM while it was inlined: docs/PERFORMANCE.md). */
static __noinline bool entry_swap(__u64 id, __u64 cookie, __u32 st)
{
	bool ok, handed;

	ok = swap_decide(id, cookie, (__u8)st, false, &handed) == GT_COOKIE_GEN_OF(cookie) &&
	     hot_gate(cookie) && captured(id >> 32);
	if (st & GT_SW_MARK)
		swap_mark(id, cookie, ok, handed);
	return ok;
}

static __noinline bool exit_swap(__u64 id, __u64 cookie, __u32 st)
{
	bool handed;

	return swap_decide(id, cookie, (__u8)st, true, &handed) == GT_COOKIE_GEN_OF(cookie);
}

#endif
