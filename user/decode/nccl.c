// SPDX-License-Identifier: MIT
/*
 * The decoder's NCCL calls: entries and exits are paired by decode.c with
 * libcuda's (an NCCL entry sits on its thread's stack with api
 * GT_NCCL_API_BASE + its api); here a pair becomes a struct gt_ncclrec with
 * what the trace said of its communicator.  Per process: each communicator
 * by handle, from its init (ncclCommInitRank*, ncclCommInitAll: its
 * ncclUniqueId's digest, rank and size, the device its thread had current;
 * ncclCommSplit: the parent's digest mixed with the color, rank unknown),
 * its collectives counted in order; each thread's group depth; the
 * process' rank (its environment's, else its first communicator's).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "decode/decode_int.h"
#include "lib/hash.h"

struct nccl_comm {
	uint64_t uid;		/* digest of its ncclUniqueId, 0 unknown */
	int32_t rank, nranks;	/* -1 unknown */
	int32_t device;		/* GT_DEVICE_UNKNOWN */
	uint32_t index;		/* gt_ncclrec.comm_index */
	uint64_t seq;		/* collectives so far */
};

struct nccl_proc {
	struct hmap comms;	/* (communicator, 0) -> struct nccl_comm */
	struct hmap groups;	/* (tid, 0) -> (void *)depth: threads inside a group */
};

static struct nccl_proc *nccl_proc_of(struct gt_decoder *d, uint32_t pid)
{
	struct proc *p = dec__proc(d, pid, true);

	if (p && !p->nccl)
		p->nccl = calloc(1, sizeof(*p->nccl));
	return p ? p->nccl : NULL;
}

void dec__nccl_free(struct nccl_proc *np)
{
	if (!np)
		return;
	for (uint32_t i = 0; i < np->comms.cap; i++)
		if (np->comms.s[i].used)
			free(np->comms.s[i].v);
	free(np->comms.s);
	free(np->groups.s);
	free(np);
}

void dec__nccl_forget(struct gt_decoder *d, uint32_t pid)
{
	struct proc *p = hmap_get(&d->procs, pid, 0);

	if (!p)
		return;
	dec__nccl_free(p->nccl);
	p->nccl = NULL;
}

int dec__on_rank(struct gt_decoder *d, const struct gt_hdr *rec)
{
	const struct gt_proc_rank *r = (const void *)rec;
	struct proc *p = dec__proc(d, rec->pid, true);

	if (!p)
		return -ENOMEM;
	p->rank = (struct gt_rank_info){ .rank = r->rank, .local_rank = r->local_rank,
					 .world_size = r->world_size, .from_env = true };
	p->has_rank = true;
	return 0;
}

/* A new communicator: what its init said, numbered in order of first sight. */
static int comm_add(struct gt_decoder *d, struct nccl_proc *np, uint64_t comm, uint64_t uid,
		    int32_t rank, int32_t nranks, int32_t device)
{
	struct nccl_comm *c = hmap_get(&np->comms, comm, 0);
	void *old;

	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c || hmap_put(&np->comms, comm, 0, c, &old)) {
			free(c);
			return -ENOMEM;
		}
	}
	*c = (struct nccl_comm){ .uid = uid, .rank = rank, .nranks = nranks, .device = device,
				 .index = ++d->ncomms };
	return 0;
}

/* What an init or split that succeeded (or is under way: ncclInProgress)
 * made; the process' rank from its first init unless its environment said. */
static int learn(struct gt_decoder *d, struct nccl_proc *np, struct gt_ncclrec *n,
		 const struct gt_nccl *a, const struct exit_info *x)
{
	const struct nccl_comm *parent;
	struct proc *p;
	uint64_t uid = 0;
	int32_t rank = -1, nranks = -1;

	if (!x || (x->ret != 0 && x->ret != 7) || !(x->flags & GT_RET_OUT) || !x->out)
		return 0;
	if (n->kind == GT_NCCL_K_INIT) {
		uid = (a->flags & GT_NCCL_UID) ? a->uid : 0;
		/* InitAll: one process, ndev ranks; its first communicator is rank 0 */
		rank = n->api == GT_NCCL_API_ncclCommInitAll ? 0 : a->peer;
		nranks = a->nranks;
	} else {
		/* ranks of the same color (and the same parent) form one */
		parent = hmap_get(&np->comms, a->comm, 0);
		if (parent && parent->uid)
			uid = hash__pair(parent->uid, (uint64_t)(uint32_t)a->peer + 1);
	}
	n->comm = x->out;
	n->uid = uid;
	n->rank = rank;
	n->nranks = nranks;
	if (comm_add(d, np, x->out, uid, rank, nranks, n->device))
		return -ENOMEM;
	n->comm_index = d->ncomms;
	p = dec__proc(d, n->pid, true);
	if (p && !p->has_rank && n->kind == GT_NCCL_K_INIT && rank >= 0) {
		p->rank = (struct gt_rank_info){ .rank = rank, .local_rank = -1, .world_size = nranks };
		p->has_rank = true;
	}
	return 0;
}

/* The group depth of a thread after a group call that succeeded. */
static int group_call(struct nccl_proc *np, const struct gt_ncclrec *n)
{
	uintptr_t depth = (uintptr_t)hmap_get(&np->groups, n->tid, 0);
	void *old;

	if (!n->has_exit || n->ret != 0)
		return 0;
	if (n->api == GT_NCCL_API_ncclGroupStart)
		depth++;
	else if (depth)
		depth--;
	if (!depth) {
		hmap_del(&np->groups, n->tid, 0);
		return 0;
	}
	return hmap_put(&np->groups, n->tid, 0, (void *)depth, &old);
}

int dec__nccl_emit(struct gt_decoder *d, const struct open_call *e, const struct exit_info *x,
		   uint64_t exit_ts)
{
	const struct gt_nccl *a = &e->n;
	unsigned api = e->api - GT_NCCL_API_BASE;
	const struct gt_nccl_info *ni = gt_nccl__info(api);
	struct nccl_proc *np = nccl_proc_of(d, e->pid);
	struct nccl_comm *c;
	struct gt_ncclrec n;
	int err;

	if (!np)
		return -ENOMEM;
	memset(&n, 0, sizeof(n));
	n.ts = e->ts;
	n.pid = e->pid;
	n.tid = e->tid;
	n.cpu = e->cpu;
	n.api = (uint16_t)api;
	n.kind = ni ? ni->kind : GT_NCCL_K_NONE;
	n.cookie = e->cookie;
	n.stack = e->stack;
	if (x) {
		n.has_exit = true;
		n.dur = exit_ts >= e->ts ? exit_ts - e->ts : 0;
		n.ret = x->ret;
	} else {
		n.at_end = d->finishing && e->ts >= d->finish_after;
	}
	n.sendbuff = a->sendbuff;
	n.recvbuff = a->recvbuff;
	n.count = a->count;
	n.datatype = a->datatype;
	n.op = a->op;
	n.bytes = a->count * gt_nccl_dtype__size(a->datatype);
	n.peer = n.kind == GT_NCCL_K_COLL || n.kind == GT_NCCL_K_P2P ? a->peer : -1;
	n.comm = a->comm;
	n.stream = a->stream;
	n.flags = a->flags;
	n.rank = n.nranks = -1;
	n.in_group = hmap_get(&np->groups, e->tid, 0) != NULL;
	c = a->comm ? hmap_get(&np->comms, a->comm, 0) : NULL;
	n.device = c && c->device >= 0 ? c->device : dec__thread_device(d, e->pid, e->tid);
	if (c && n.kind != GT_NCCL_K_SPLIT) {
		n.uid = c->uid;
		n.rank = c->rank;
		n.nranks = c->nranks;
		n.comm_index = c->index;
		/* a collective that failed was not issued */
		if (n.kind == GT_NCCL_K_COLL && (!x || x->ret == 0 || x->ret == 7))
			n.seq = ++c->seq;
	}
	if ((n.kind == GT_NCCL_K_COLL || n.kind == GT_NCCL_K_P2P || n.kind == GT_NCCL_K_FREE) && !c)
		d->stats.nccl_comm_unknown++;
	switch (n.kind) {
	case GT_NCCL_K_INIT:
	case GT_NCCL_K_SPLIT:
		err = learn(d, np, &n, a, x);
		break;
	case GT_NCCL_K_GROUP:
		err = group_call(np, &n);
		break;
	default:
		err = 0;
		break;
	}
	if (err)
		return err;
	d->stats.nccl_calls++;
	err = d->on_nccl ? d->on_nccl(d->ctx, &n) : 0;
	/* a destroyed communicator's handle may be reused */
	if (!err && n.kind == GT_NCCL_K_FREE && c && x && x->ret == 0)
		free(hmap_del(&np->comms, a->comm, 0));
	return err;
}

void gt_decoder__set_nccl_cb(struct gt_decoder *d, gt_nccl_cb on_nccl)
{
	d->on_nccl = on_nccl;
}

bool gt_decoder__process_rank(const struct gt_decoder *d, uint32_t pid, struct gt_rank_info *r)
{
	const struct proc *p = hmap_get(&d->procs, pid, 0);

	if (!p || !p->has_rank)
		return false;
	*r = p->rank;
	return true;
}

char *gt_decoder__rank_text(const struct gt_decoder *d, uint32_t pid, char *buf, size_t len)
{
	struct gt_rank_info r;

	buf[0] = 0;
	if (!gt_decoder__process_rank(d, pid, &r) || r.rank < 0)
		return buf;
	if (r.world_size > 0)
		snprintf(buf, len, "rank %d/%d", r.rank, r.world_size);
	else
		snprintf(buf, len, "rank %d/?", r.rank);
	return buf;
}
