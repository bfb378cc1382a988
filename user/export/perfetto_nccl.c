// SPDX-License-Identifier: MIT
/*
 * `export -f perfetto`, the NCCL side: every communicator a root track,
 * "NCCL communicator N (2 ranks)", with a child track per rank, "rank 1
 * (pid 4242)", on which its collectives, point-to-point calls, init, splits
 * and destroy of that rank are slices (an instant for one whose exit never
 * came).  The ranks of one communicator are told by its ncclUniqueId's
 * digest (the decoder's uid), so the same collective of every rank lies on
 * the tracks of one group and the one that came last shows; a communicator
 * whose init the trace does not hold gets a group per process.  The calls
 * are also on their thread's track (perfetto.c), where their launches nest.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "export/perfetto_int.h"
#include "lib/hash.h"
#include "lib/vec.h"

struct pf_comm {
	struct pf_track tr;
	uint32_t index;		/* N of its name */
};

static struct pf_track *track_new(struct pf *x)
{
	struct pf_track *t = calloc(1, sizeof(*t));

	if (!t || vec__reserve(&x->ntracks, &x->capntracks, x->nntracks, 1, 8)) {
		free(t);
		pf__fail(x, -ENOMEM, "allocate an NCCL track");
		return NULL;
	}
	x->ntracks[x->nntracks++] = t;
	pftrace__track_init(x->w, t);
	return t;
}

/* The key of nc's communicator: its uid, else the process' own handle. */
static uint64_t comm_key(const struct gt_ncclrec *nc)
{
	uint64_t k = nc->uid ? nc->uid : u64map__key2(nc->pid, nc->comm) ^ 1ull << 63;

	return k ? k : 1;
}

static struct pf_comm *comm_get(struct pf *x, const struct gt_ncclrec *nc, uint64_t key)
{
	uint64_t *v = u64map__get(&x->ncomms, key);
	struct pf_comm *c;
	char name[96];

	if (v)
		return (struct pf_comm *)(uintptr_t)*v;
	c = calloc(1, sizeof(*c));
	if (!c || u64map__set(&x->ncomms, key, (uint64_t)(uintptr_t)c)) {
		free(c);
		pf__fail(x, -ENOMEM, "allocate an NCCL track");
		return NULL;
	}
	c->index = ++x->ncomm_count;
	pftrace__track_init(x->w, &c->tr);
	if (nc->nranks > 0)
		snprintf(name, sizeof(name), "NCCL communicator %u (%d ranks)", c->index, nc->nranks);
	else
		snprintf(name, sizeof(name), "NCCL communicator %u (pid %u, init not recorded)",
			 c->index, nc->pid);
	pftrace__track(x->w, &c->tr, 0, name);
	return c;
}

/* The track of nc's rank (or, rank unknown, its process) in c. */
static struct pf_track *rank_get(struct pf *x, const struct gt_ncclrec *nc, struct pf_comm *c,
				 uint64_t key)
{
	uint64_t lane = nc->rank >= 0 ? (uint64_t)nc->rank : 1ull << 32 | nc->pid;
	uint64_t k = hash__pair(key, lane) | 1, *v = u64map__get(&x->nranks, k);
	struct pf_track *t;
	char name[64];

	if (v)
		return (struct pf_track *)(uintptr_t)*v;
	t = track_new(x);
	if (!t)
		return NULL;
	if (u64map__set(&x->nranks, k, (uint64_t)(uintptr_t)t)) {
		pf__fail(x, -ENOMEM, "allocate an NCCL track");
		return NULL;
	}
	if (nc->rank >= 0)
		snprintf(name, sizeof(name), "rank %d (pid %u)", nc->rank, nc->pid);
	else
		snprintf(name, sizeof(name), "pid %u", nc->pid);
	pftrace__track(x->w, t, c->tr.uuid, name);
	return t;
}

void pf__nccl_args(struct pf *x, const struct gt_ncclrec *nc)
{
	struct cf_val v[CF_MAX];
	unsigned n = fields__nccl(nc, v);

	/* the event's own: its time and length; pid and tid kept (the
	 * communicator's tracks are no process') */
	pf__field_args(x, v, n, (1ull << CF_TS) | (1ull << CF_DUR));
	pf__event_stack(x, nc->stack);
}

void pf__nccl_comm_event(struct pf *x, const struct gt_ncclrec *nc)
{
	uint64_t key = comm_key(nc);
	struct pf_comm *c;
	struct pf_track *t;
	struct pf_seq *s;
	char name[96];

	if (nc->kind == GT_NCCL_K_GROUP || !nc->comm || pf_err(x))
		return;
	c = comm_get(x, nc, key);
	t = c ? rank_get(x, nc, c, key) : NULL;
	if (!t)
		return;
	s = pftrace__track_seq(x->w, t, nc->ts);
	fields__nccl_name(nc, name, sizeof(name));
	pftrace__event_open(x->w, t, s, nc->has_exit ? PF_SLICE_BEGIN : PF_INSTANT, nc->ts,
			    pftrace__cstring(x->w, name));
	pf__nccl_args(x, nc);
	pftrace__event_close(x->w);
	if (!nc->has_exit)
		return;
	pftrace__event_open(x->w, t, s, PF_SLICE_END, nc->ts + nc->dur, 0);
	pftrace__event_close(x->w);
}

void pf__nccl_free(struct pf *x)
{
	for (size_t i = 0; i < x->nntracks; i++) {
		pftrace__track_free(x->ntracks[i]);
		free(x->ntracks[i]);
	}
	free(x->ntracks);
	for (size_t i = 0; i < x->ncomms.cap; i++)
		if (x->ncomms.keys[i]) {
			struct pf_comm *c = (struct pf_comm *)(uintptr_t)x->ncomms.vals[i];

			pftrace__track_free(&c->tr);
			free(c);
		}
	u64map__free(&x->ncomms);
	u64map__free(&x->nranks);
}
