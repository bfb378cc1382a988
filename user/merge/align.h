/* SPDX-License-Identifier: MIT */
/*
 * The clock alignment of `gtrace-bpf merge --hosts` (merge/hosts.c feeds
 * it): each host's CLOCK_MONOTONIC mapped onto the job's clock (the first
 * host's), first by its CLOCK_REALTIME pairs, then refined on the ends of
 * NCCL collectives: a collective ends on every rank once the last one came
 * (the mock's and a blocking collective's call returns; a kernel's end on
 * the GPU), so the same collective's ends, seen from two hosts, lie within
 * its transfer time of each other.  Hosts of one boot share a clock.
 * Pure: arrays in, offsets and figures out; unit tested on its own.
 */
#ifndef GTRACE_MERGE_ALIGN_H
#define GTRACE_MERGE_ALIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ALIGN_MIN_COLLECTIVES	3	/* a refinement rests on at least this many */

struct align_host {
	/* in */
	int64_t rt_offset_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC (the median of its pairs) */
	uint8_t boot_id[16];	/* zeros: unknown (never taken as shared) */
	/* out */
	int64_t offset_ns;	/* added to its times to make the job's */
	int64_t rt_rel_ns;	/* what the REALTIME pairs alone said */
	uint32_t method;	/* enum gt_host_method */
	uint32_t collectives;	/* collectives the refinement used */
	uint64_t residual_ns;	/* median spread of the ends of its collectives across hosts, aligned */
	uint64_t residual_max_ns;
};

/* One rank's part in one collective. */
struct align_part {
	uint64_t uid, seq;	/* the collective: its communicator's uid, its number there */
	uint64_t entry, exit;	/* the call, on its host's clock */
	uint32_t host;		/* index into the hosts */
	uint32_t pid;
	int32_t rank;
	uint32_t _pad;
};

/* What the alignment found of the collectives. */
struct align_stats {
	uint64_t collectives;		/* seen on two hosts or more */
	uint64_t causality_before;	/* of them, one rank's end before another's entry, by the
					 * REALTIME pairs alone */
	uint64_t causality_after;	/* ... after the alignment */
};

/* A clock pair of a host: its wall clock less its monotonic one, and half
 * the time the monotonic clock took around the wall clock's read (the
 * pair's doubt: a recorder preempted between the reads errs by up to it). */
struct align_pair {
	int64_t off;
	uint64_t half;
};

/* A host's wall clock against its monotonic one from its n (> 0) pairs: the
 * median of the tight ones (v is reordered). */
int64_t align__realtime(struct align_pair *v, size_t n);

/*
 * Aligns nh hosts (host 0 the reference) on np parts (sorted in place).
 * Returns 0 or -ENOMEM.
 */
int align__run(struct align_host *h, size_t nh, struct align_part *p, size_t np, struct align_stats *st);

/* One collective seen across ranks, after the alignment (for the straggler
 * report): the last to come, how long the first waited for it, and how long
 * the collective took once all were there. */
struct align_coll {
	uint64_t uid, seq;
	uint32_t nparts;
	uint32_t last_host;	/* the last to arrive */
	uint32_t last_pid;
	int32_t last_rank;
	uint64_t skew_ns;	/* its arrival after the first's */
	uint64_t transfer_ns;	/* from its arrival to the first end */
};

/* The collectives of p (sorted by align__run) seen on two ranks or more,
 * in *out (malloc'd); their number, or -ENOMEM. */
long align__collectives(const struct align_host *h, const struct align_part *p, size_t np,
			struct align_coll **out);

#endif
