// SPDX-License-Identifier: MIT
/*
 * The clock alignment of merge --hosts (merge/align.h).
 *
 * Each host's offset starts from its CLOCK_REALTIME pairs (what wall clocks
 * say: off by the hosts' synchronization error, often hundreds of
 * microseconds to milliseconds).  A host that shares collectives with hosts
 * already aligned is then moved by the median, over those collectives, of how
 * far its end of each lies from theirs: ends of one collective are nearly
 * simultaneous on every rank, and the median keeps a few late wake-ups from
 * pulling it.  Hosts are taken in turn until none more can be (a host with no
 * collective in common keeps its REALTIME offset, said so).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "bpf/gtrace_events.h"
#include "lib/cmp.h"
#include "merge/align.h"

static int part_cmp(const void *a, const void *b)
{
	const struct align_part *x = a, *y = b;

	CMP_BY(x->uid, y->uid);
	CMP_BY(x->seq, y->seq);
	CMP_BY(x->host, y->host);
	CMP_BY(x->rank, y->rank);
	return cmp__u64(x->entry, y->entry);
}

static int i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of v[0..n) (sorted in place); n > 0. */
static int64_t median(int64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), i64_cmp);
	return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

static int pair_cmp(const void *a, const void *b)
{
	return i64_cmp(&((const struct align_pair *)a)->off, &((const struct align_pair *)b)->off);
}

/* The tight pairs: those read within twice the tightest's span and 2 us
 * more (one pair split by a busy machine among few, a recording's start and
 * end, would move a plain median by up to half its span). */
int64_t align__realtime(struct align_pair *v, size_t n)
{
	uint64_t lo = UINT64_MAX;
	size_t k = 0;

	for (size_t j = 0; j < n; j++)
		lo = v[j].half < lo ? v[j].half : lo;
	for (size_t j = 0; j < n; j++)
		if (v[j].half <= 2 * lo + 2000)
			v[k++] = v[j];
	qsort(v, k, sizeof(*v), pair_cmp);
	return v[k / 2].off;
}

static bool zero_id(const uint8_t id[16])
{
	for (int i = 0; i < 16; i++)
		if (id[i])
			return false;
	return true;
}

static bool same_boot(const struct align_host *a, const struct align_host *b)
{
	return !zero_id(a->boot_id) && !memcmp(a->boot_id, b->boot_id, 16);
}

/* The end of group [g0, g1) on the job's clock, of the parts of host h
 * (want true) or of the aligned hosts other than h (want false): the
 * median of their exits; false when there is none. */
static bool group_end(const struct align_host *hs, const bool *aligned, const struct align_part *p, size_t g0,
		      size_t g1, uint32_t h, bool want, int64_t *tmp, int64_t *out)
{
	size_t n = 0;

	for (size_t i = g0; i < g1; i++) {
		bool mine = p[i].host == h;

		if (want ? !mine : (mine || !aligned[p[i].host]))
			continue;
		tmp[n++] = (int64_t)p[i].exit + (want ? 0 : hs[p[i].host].offset_ns);
	}
	if (!n)
		return false;
	*out = median(tmp, n);
	return true;
}

static size_t group_end_idx(const struct align_part *p, size_t np, size_t g0)
{
	size_t g1 = g0 + 1;

	while (g1 < np && p[g1].uid == p[g0].uid && p[g1].seq == p[g0].seq)
		g1++;
	return g1;
}

static bool multi_host(const struct align_part *p, size_t g0, size_t g1)
{
	for (size_t i = g0 + 1; i < g1; i++)
		if (p[i].host != p[g0].host)
			return true;
	return false;
}

/* Whether one part of [g0, g1) ends before another's entry, on the job's clock. */
static bool violates(const struct align_host *hs, const struct align_part *p, size_t g0, size_t g1)
{
	int64_t last_in = INT64_MIN, first_out = INT64_MAX;

	for (size_t i = g0; i < g1; i++) {
		int64_t in = (int64_t)p[i].entry + hs[p[i].host].offset_ns;
		int64_t out = (int64_t)p[i].exit + hs[p[i].host].offset_ns;

		if (in > last_in)
			last_in = in;
		if (out < first_out)
			first_out = out;
	}
	return first_out < last_in;
}

/*
 * The bounds the collectives put on host h's offset: no rank ends one
 * before every rank entered it, so h's end of each comes after the aligned
 * hosts' entries and theirs after its entry.  The median of the ends is
 * biased by who came last (the last to arrive leaves at once, the others
 * wake up to it a little later); where the bounds agree (a blocking
 * collective: the mock's, a synchronous one) the offset is kept inside them.
 */
static void clamp(struct align_host *hs, const bool *aligned, const struct align_part *p, size_t np, uint32_t h)
{
	int64_t lo = INT64_MIN, hi = INT64_MAX, off = hs[h].offset_ns;

	for (size_t g0 = 0, g1; g0 < np; g0 = g1) {
		g1 = group_end_idx(p, np, g0);
		for (size_t i = g0; i < g1; i++) {
			if (p[i].host != h)
				continue;
			for (size_t j = g0; j < g1; j++) {
				int64_t a_in, a_out;

				if (p[j].host == h || !aligned[p[j].host])
					continue;
				a_in = (int64_t)p[j].entry + hs[p[j].host].offset_ns;
				a_out = (int64_t)p[j].exit + hs[p[j].host].offset_ns;
				/* exit_i + off >= a_in; entry_i + off <= a_out */
				if (a_in - (int64_t)p[i].exit > lo)
					lo = a_in - (int64_t)p[i].exit;
				if (a_out - (int64_t)p[i].entry < hi)
					hi = a_out - (int64_t)p[i].entry;
			}
		}
	}
	if (lo > hi)
		return;	/* the calls do not wait for each other: the median stands */
	hs[h].offset_ns = off < lo ? lo : off > hi ? hi : off;
}

int align__run(struct align_host *hs, size_t nh, struct align_part *p, size_t np, struct align_stats *st)
{
	int64_t *tmp = NULL, *diffs = NULL;
	bool *aligned = NULL;
	bool progress = true;
	int err = -ENOMEM;

	memset(st, 0, sizeof(*st));
	if (!nh)
		return 0;
	if (np > 1)
		qsort(p, np, sizeof(*p), part_cmp);
	tmp = malloc((np ? np : 1) * sizeof(*tmp));
	diffs = malloc((np ? np : 1) * sizeof(*diffs));
	aligned = calloc(nh, sizeof(*aligned));
	if (!tmp || !diffs || !aligned)
		goto out;
	/* the REALTIME pairs, or the reference's clock itself */
	for (size_t h = 0; h < nh; h++) {
		hs[h].rt_rel_ns = hs[h].rt_offset_ns - hs[0].rt_offset_ns;
		hs[h].offset_ns = hs[h].rt_rel_ns;
		hs[h].method = h ? GT_HOST_REALTIME : GT_HOST_REFERENCE;
		hs[h].collectives = 0;
		hs[h].residual_ns = hs[h].residual_max_ns = 0;
		aligned[h] = !h;
		for (size_t j = 0; j < h && hs[h].method == GT_HOST_REALTIME; j++) {
			if (!same_boot(&hs[h], &hs[j]))
				continue;
			hs[h].offset_ns = hs[j].offset_ns;
			hs[h].method = GT_HOST_SAME_BOOT;
			aligned[h] = aligned[j];
		}
	}
	for (size_t g0 = 0, g1; g0 < np; g0 = g1) {
		g1 = group_end_idx(p, np, g0);
		if (!multi_host(p, g0, g1))
			continue;
		st->collectives++;
		st->causality_before += violates(hs, p, g0, g1);
	}
	/* each host that shares collectives with the aligned ones, in turn */
	while (progress) {
		progress = false;
		for (uint32_t h = 1; h < nh; h++) {
			size_t nd = 0;

			if (aligned[h])
				continue;
			for (size_t g0 = 0, g1; g0 < np; g0 = g1) {
				int64_t mine, theirs;

				g1 = group_end_idx(p, np, g0);
				if (group_end(hs, aligned, p, g0, g1, h, true, tmp, &mine) &&
				    group_end(hs, aligned, p, g0, g1, h, false, tmp, &theirs))
					diffs[nd++] = theirs - (mine + hs[h].offset_ns);
			}
			if (nd < ALIGN_MIN_COLLECTIVES)
				continue;
			hs[h].offset_ns += median(diffs, nd);
			clamp(hs, aligned, p, np, h);
			hs[h].method = GT_HOST_COLLECTIVES;
			hs[h].collectives = (uint32_t)nd;
			aligned[h] = true;
			progress = true;
			/* its boot's other traces: the same clock */
			for (uint32_t j = 1; j < nh; j++) {
				if (aligned[j] || !same_boot(&hs[j], &hs[h]))
					continue;
				hs[j].offset_ns = hs[h].offset_ns;
				hs[j].method = GT_HOST_SAME_BOOT;
				aligned[j] = true;
			}
		}
	}
	/* what is left: the spread of each host's collectives' ends */
	for (uint32_t h = 0; h < nh; h++) {
		size_t nd = 0;

		for (size_t g0 = 0, g1; g0 < np; g0 = g1) {
			int64_t lo = INT64_MAX, hi = INT64_MIN;
			bool has = false;

			g1 = group_end_idx(p, np, g0);
			if (!multi_host(p, g0, g1))
				continue;
			for (size_t i = g0; i < g1; i++) {
				int64_t e = (int64_t)p[i].exit + hs[p[i].host].offset_ns;

				has |= p[i].host == h;
				lo = e < lo ? e : lo;
				hi = e > hi ? e : hi;
			}
			if (has)
				diffs[nd++] = hi - lo;
		}
		if (!nd)
			continue;
		hs[h].residual_ns = (uint64_t)median(diffs, nd);
		hs[h].residual_max_ns = (uint64_t)diffs[nd - 1];
	}
	for (size_t g0 = 0, g1; g0 < np; g0 = g1) {
		g1 = group_end_idx(p, np, g0);
		if (multi_host(p, g0, g1))
			st->causality_after += violates(hs, p, g0, g1);
	}
	err = 0;
out:
	free(tmp);
	free(diffs);
	free(aligned);
	return err;
}

long align__collectives(const struct align_host *hs, const struct align_part *p, size_t np,
			struct align_coll **out)
{
	struct align_coll *v = NULL;
	size_t n = 0;

	*out = NULL;
	for (size_t g0 = 0, g1; g0 < np; g0 = g1) {
		g1 = group_end_idx(p, np, g0);
		n += g1 - g0 > 1;
	}
	if (!n)
		return 0;
	v = calloc(n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	n = 0;
	for (size_t g0 = 0, g1; g0 < np; g0 = g1) {
		int64_t first_in = INT64_MAX, last_in = INT64_MIN, first_out = INT64_MAX;
		struct align_coll *c;
		size_t last = g0;

		g1 = group_end_idx(p, np, g0);
		if (g1 - g0 < 2)
			continue;
		for (size_t i = g0; i < g1; i++) {
			int64_t in = (int64_t)p[i].entry + hs[p[i].host].offset_ns;
			int64_t o = (int64_t)p[i].exit + hs[p[i].host].offset_ns;

			if (in < first_in)
				first_in = in;
			if (in > last_in) {
				last_in = in;
				last = i;
			}
			if (o < first_out)
				first_out = o;
		}
		c = &v[n++];
		c->uid = p[g0].uid;
		c->seq = p[g0].seq;
		c->nparts = (uint32_t)(g1 - g0);
		c->last_host = p[last].host;
		c->last_pid = p[last].pid;
		c->last_rank = p[last].rank;
		c->skew_ns = (uint64_t)(last_in - first_in);
		c->transfer_ns = first_out > last_in ? (uint64_t)(first_out - last_in) : 0;
	}
	*out = v;
	return (long)n;
}
