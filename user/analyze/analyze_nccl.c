// SPDX-License-Identifier: MIT
/*
 * analyze's communication figures: per process its NCCL calls (struct
 * az_comm), and each collective matched across the ranks of its
 * communicator.  The decoder gives every collective the uid of its
 * communicator (the same in every rank) and its number on it (NCCL orders
 * a communicator's collectives the same in every rank), so (uid, seq) is
 * one collective wherever it was called; once every rank's call of it is
 * in, the last rank to arrive (by the calls' entries, the host's time) is
 * its straggler, and each other rank waited from its own arrival to the
 * straggler's.  Collectives wait here until every rank came; those whose
 * ranks are not all in the trace are counted at the end.
 *
 * On the GPU.  NCCL's calls only queue their work: a rank whose call came
 * early may start its kernel late (its stream still busy), and the wait is
 * the kernels' (they spin until every rank's kernel runs).  So when the
 * trace has the GPU side, a collective's arrival on a rank is its kernel's
 * start: the first linked GPU kernel launched inside the call (the decoder
 * tells the NCCL call around a launch while the launch is open, which is
 * where a merged trace puts its GPU record).  A collective is judged by
 * the GPU starts when every rank has one, else by the calls' entries.
 * Collectives issued in a group launch their kernels at ncclGroupEnd, not
 * in their own call: those are judged by their calls' entries.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analyze_int.h"
#include "lib/hash.h"

#define MAX_RANKS 1024	/* communicators larger than this are not matched (counted) */

/* One rank's call of a collective. */
struct az_arrival {
	uint32_t pid, tid;
	int32_t rank;
	uint64_t ts;		/* the call's entry */
	uint64_t gpu;		/* its first kernel's start on the GPU, 0 unknown */
};

/* A collective seen on some of its ranks so far. */
struct az_coll {
	uint32_t nranks, n;	/* ranks it has, ranks in so far */
	uint16_t api;		/* enum gt_nccl_api (of the first arrival) */
	uint64_t seq;
	struct az_arrival v[];	/* n of nranks, by arrival into the map */
};

/* Time a process waited for another in collectives. */
struct az_waited {
	int32_t rank;
	uint64_t ns;
};

static int waited_add(struct az_acc *acc, const struct az_arrival *last, uint64_t ns)
{
	struct az_waited *w = hmap_get(&acc->waited_for, last->pid, 0);
	void *old;

	if (!w) {
		w = calloc(1, sizeof(*w));
		if (!w || hmap_put(&acc->waited_for, last->pid, 0, w, &old)) {
			free(w);
			return -ENOMEM;
		}
		w->rank = last->rank;
	}
	w->ns += ns;
	if (w->ns > acc->comm.waited_for_ns) {
		acc->comm.waited_for_ns = w->ns;
		acc->comm.waited_for_pid = last->pid;
		acc->comm.waited_for_rank = w->rank;
	}
	return 0;
}

/* Where a rank came to a collective: its kernel's start when every rank's
 * is known (gpu), else its call's entry. */
static inline uint64_t arrival(const struct az_arrival *r, bool gpu)
{
	return gpu ? r->gpu : r->ts;
}

/* Every rank of c is in: its straggler and the others' waits. */
static int resolve(struct analyze *a, const struct az_coll *c)
{
	const struct az_arrival *last = &c->v[0];
	const char *name = gt_nccl__short_name(c->api);
	struct az_proc *p;
	uint64_t caused = 0;
	bool gpu = true;

	for (uint32_t i = 0; i < c->n; i++)
		gpu = gpu && c->v[i].gpu;
	for (uint32_t i = 1; i < c->n; i++)
		if (arrival(&c->v[i], gpu) >= arrival(last, gpu))
			last = &c->v[i];
	for (uint32_t i = 0; i < c->n; i++) {
		const struct az_arrival *r = &c->v[i];
		uint64_t wait = arrival(last, gpu) - arrival(r, gpu);

		p = az__proc(a, r->pid);
		if (!p)
			return -ENOMEM;
		p->whole->comm.matched++;
		p->whole->comm.matched_gpu += gpu;
		if (r == last)
			continue;
		caused += wait;
		p->whole->comm.waited_ns += wait;
		az_top__add(&p->whole->nccl_wait_top, wait, r->ts, wait, r->pid, r->tid, name);
		if (waited_add(p->whole, last, wait))
			return -ENOMEM;
	}
	p = az__proc(a, last->pid);
	if (!p)
		return -ENOMEM;
	p->whole->comm.last++;
	p->whole->comm.caused_ns += caused;
	az_top__add(&p->whole->nccl_last_top, caused, last->ts, 0, last->pid, last->tid, name);
	return 0;
}

static int arrive(struct analyze *a, const struct gt_ncclrec *n, uint64_t gpu)
{
	uint64_t k1 = hash__pair(n->uid, n->seq);
	struct az_coll *c = hmap_get(&a->colls, k1, (uint32_t)n->seq);
	void *old;
	int rc;

	if (n->nranks > MAX_RANKS) {
		a->colls_big++;
		return 0;
	}
	if (!c) {
		c = calloc(1, sizeof(*c) + (size_t)n->nranks * sizeof(c->v[0]));
		if (!c || hmap_put(&a->colls, k1, (uint32_t)n->seq, c, &old)) {
			free(c);
			return -ENOMEM;
		}
		c->nranks = (uint32_t)n->nranks;
		c->api = n->api;
		c->seq = n->seq;
	}
	if (c->n == c->nranks)
		return 0;	/* a uid and number seen twice in one rank: ignored */
	c->v[c->n++] = (struct az_arrival){ .pid = n->pid, .tid = n->tid, .rank = n->rank, .ts = n->ts,
				     .gpu = n->in_group ? 0 : gpu };
	if (c->n < c->nranks)
		return 0;
	rc = resolve(a, c);
	hmap_del(&a->colls, k1, (uint32_t)n->seq);
	free(c);
	return rc;
}

/* The key of an NCCL call (its entry and thread) in a->nccl_gpu. */
static inline uint64_t gpu_key(uint64_t entry, uint32_t tid)
{
	return hash__pair(entry, tid);
}

int az_nccl__gpu(struct analyze *a, uint32_t pid, uint32_t tid, uint64_t launch_ts,
		 uint64_t start)
{
	uint64_t entry = a->d && launch_ts ? gt_decoder__nccl_of_launch(a->d, pid, tid, launch_ts) : 0;
	uint64_t *v;
	void *old;

	if (!entry)
		return 0;
	v = hmap_get(&a->nccl_gpu, gpu_key(entry, tid), pid);
	if (v) {
		if (start < *v)
			*v = start;
		return 0;
	}
	v = malloc(sizeof(*v));
	if (!v || hmap_put(&a->nccl_gpu, gpu_key(entry, tid), pid, v, &old)) {
		free(v);
		return -ENOMEM;
	}
	*v = start;
	return 0;
}

int analyze__nccl(void *ctx, const struct gt_ncclrec *n)
{
	struct analyze *a = ctx;
	struct gt_rank_info ri;
	struct az_comm *cm;
	struct az_proc *p;
	uint64_t gpu = 0, *v;

	/* the GPU start of the kernels launched inside it, taken whatever it is */
	v = a->nccl_gpu.n ? hmap_del(&a->nccl_gpu, gpu_key(n->ts, n->tid), n->pid) : NULL;
	if (v) {
		gpu = *v;
		free(v);
	}
	if (!az__wanted(a, n->pid, n->ts))
		return 0;
	p = az__proc(a, n->pid);
	if (!p)
		return -ENOMEM;
	cm = &p->whole->comm;
	if (!cm->calls) {
		cm->rank = cm->world = -1;
		cm->waited_for_rank = -1;
	}
	cm->calls++;
	cm->bytes += n->bytes;
	if (n->has_exit)
		cm->host_ns += n->dur;
	else if (n->at_end && a->end_set > n->ts)	/* in flight at the end: up to it */
		cm->host_ns += a->end_set - n->ts;
	if (a->d && gt_decoder__process_rank(a->d, n->pid, &ri)) {
		cm->rank = ri.rank;
		cm->world = ri.world_size;
	}
	if (n->kind != GT_NCCL_K_COLL)
		return 0;
	cm->collectives++;
	if (!n->uid || !n->seq || n->nranks < 2 || n->rank < 0)
		return 0;
	return arrive(a, n, gpu);
}

uint64_t az_nccl__unmatched(const struct analyze *a)
{
	return a->colls.n + a->colls_big;
}

void az_nccl__free(struct analyze *a)
{
	for (uint32_t i = 0; i < a->colls.cap; i++)
		if (a->colls.s[i].used)
			free(a->colls.s[i].v);
	free(a->colls.s);
	a->colls = (struct hmap){ 0 };
	for (uint32_t i = 0; i < a->nccl_gpu.cap; i++)
		if (a->nccl_gpu.s[i].used)
			free(a->nccl_gpu.s[i].v);
	free(a->nccl_gpu.s);
	a->nccl_gpu = (struct hmap){ 0 };
}

void az_nccl__free_acc(struct az_acc *acc)
{
	for (uint32_t i = 0; i < acc->waited_for.cap; i++)
		if (acc->waited_for.s[i].used)
			free(acc->waited_for.s[i].v);
	free(acc->waited_for.s);
}
