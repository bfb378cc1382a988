// SPDX-License-Identifier: MIT
/*
 * gen_trace's records (gen_trace.c says what it writes): the random
 * stream every choice is drawn from, the records of calls, names and
 * processes as the recorder writes them (through -c's filter), and the
 * tail written after them by time.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/vec.h"
#include "gen_trace_int.h"

/* splitmix64: tiny, fast, and the same stream on every machine */
uint64_t gen__rnd(struct gen *g)
{
	uint64_t z = (g->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
uint64_t gen__rnd_range(struct gen *g, uint64_t lo, uint64_t hi)
{
	return lo + gen__rnd(g) % (hi - lo + 1);
}

/* Skewed towards lo: most calls are fast, a few slow, as real latencies. */
uint64_t gen__rnd_skew(struct gen *g, uint64_t lo, uint64_t hi)
{
	uint64_t a = gen__rnd_range(g, lo, hi), b = gen__rnd_range(g, lo, hi), c = gen__rnd_range(g, lo, hi);
	uint64_t m = a < b ? a : b;

	return m < c ? m : c;
}

int gen__append(struct gen *g, struct gt_hdr *h)
{
	int err = trace_writer__append(g->w, h);

	if (!err)
		g->nrec++;
	return err;
}

int gen__put(struct gen *g, void *rec)
{
	struct gt_hdr *h = rec;
	int err;

	h->cpu = (uint16_t)(h->tid % 16);
	err = gen__cap_due(g, h->ts);
	if (err)
		return err;
	/* a call outside what -c captures: neither its entry nor its exit */
	if (g->cur && (h->type == GT_REC_CALL || h->type == GT_REC_LAUNCH))
		g->cur->skipped = !gen__captured(g, h->pid, h->api, h->ts);
	if (g->cur && g->cur->skipped)
		return 0;
	err = trace_writer__append(g->w, h);
	if (err)
		return err;
	g->nrec++;
	if (g->nrec % STATS_EVERY == 0) {
		struct gt_stats st;

		memset(&st, 0, sizeof(st));
		st.hdr = (struct gt_hdr){ .ts = h->ts, .type = GT_REC_STATS, .size = sizeof(st) };
		st.c.events = g->nrec;
		st.c.records_written = g->nrec;
		err = trace_writer__append(g->w, &st.hdr);
		if (err)
			return err;
		g->nrec++;
	}
	return 0;
}

void *gen__rec_init(struct gen *g, uint16_t type, size_t size, uint64_t ts, uint32_t pid,
	       uint32_t tid, uint16_t api)
{
	struct gt_hdr *h = (void *)g->buf;

	memset(g->buf, 0, size);
	h->ts = ts;
	h->pid = pid;
	h->tid = tid;
	h->type = type;
	h->size = (uint16_t)size;
	h->api = api;
	return h;
}

int gen__w_call(struct gen *g, uint64_t ts, uint32_t pid, uint32_t tid, uint16_t api,
	   uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
	struct gt_call *c = gen__rec_init(g, GT_REC_CALL, sizeof(*c), ts, pid, tid, api);

	c->args[0] = a0; c->args[1] = a1; c->args[2] = a2;
	c->args[3] = a3; c->args[4] = a4; c->args[5] = a5;
	return gen__put(g, c);
}

int gen__w_ret(struct gen *g, uint64_t ts, uint32_t pid, uint32_t tid, uint16_t api,
	  int32_t ret, bool has_out, uint64_t out)
{
	struct gt_ret *r = gen__rec_init(g, GT_REC_RET, sizeof(*r), ts, pid, tid, api);

	r->ret = ret;
	if (has_out) {
		r->out = out;
		r->flags = GT_RET_OUT;
	}
	return gen__put(g, r);
}

int gen__w_str(struct gen *g, uint16_t type, uint64_t ts, uint32_t pid, uint32_t tid,
	  uint16_t api, uint64_t key, uint16_t kind, const char *s)
{
	size_t n = strlen(s) + 1;

	if (type == GT_REC_CALL_STR) {
		struct gt_call_str *c = gen__rec_init(g, type, GT_REC_ALIGN(sizeof(*c) + n), ts, pid, tid, api);

		c->args[1] = key;	/* cuModuleGetFunction(&f, module, name) */
		c->args[0] = 0x7ffc0000ull + tid;
		c->args[2] = 0x5500000000ull;
		c->len = (uint16_t)n;
		memcpy(c->str, s, n);
		return gen__put(g, c);
	} else {
		struct gt_name *nm = gen__rec_init(g, type, GT_REC_ALIGN(sizeof(*nm) + n), ts, pid, 0, 0);

		nm->key = key;
		nm->kind = kind;
		nm->len = (uint16_t)n;
		memcpy(nm->str, s, n);
		return gen__put(g, nm);
	}
}

int gen__w_proc(struct gen *g, uint16_t type, uint64_t ts, uint32_t pid, const char *comm)
{
	struct gt_proc_evt *p = gen__rec_init(g, type, sizeof(*p), ts, pid, pid, 0);

	p->ppid = 1000;
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	return gen__put(g, p);
}

/* A call with its exit right away (set-up and tear-down). */
int gen__w_call_ret(struct gen *g, uint64_t *ts, uint32_t pid, uint16_t api, uint64_t a0,
	       uint64_t a1, uint64_t a2, bool has_out, uint64_t out)
{
	int err = gen__w_call(g, *ts, pid, pid, api, a0, a1, a2, 0, 0, 0);

	*ts += gen__rnd_skew(g, 500, 5000);
	if (!err)
		err = gen__w_ret(g, *ts, pid, pid, api, 0, has_out, out);
	*ts += gen__rnd_range(g, 200, 2000);
	return err;
}

/* A copy of r into the tail, written after every other record, by time. */
int gen__tail_put(struct gen *g, const struct gt_hdr *r)
{
	struct gt_hdr *copy;

	if (vec__reserve(&g->tail, &g->tail_cap, g->ntail, 1, 1024) || !(copy = malloc(r->size)))
		return -ENOMEM;
	memcpy(copy, r, r->size);
	g->tail[g->ntail++] = copy;
	return 0;
}

static int cmp_rec_ts(const void *a, const void *b)
{
	const struct gt_hdr *x = *(struct gt_hdr *const *)a, *y = *(struct gt_hdr *const *)b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* The tail (-u's unlinked GPU records, -i's steps), by time, as the merger
 * writes its unlinked records and the agent's NVTX ranges. */
int gen__w_tail(struct gen *g)
{
	int err = 0;

	if (g->ntail)
		qsort(g->tail, g->ntail, sizeof(*g->tail), cmp_rec_ts);
	for (size_t i = 0; i < g->ntail; i++) {
		if (!err)
			err = gen__append(g, g->tail[i]);
		free(g->tail[i]);
	}
	free(g->tail);
	g->tail = NULL;
	return err;
}

/* The end of a trace at ts: with -g the merger's counters (gpu GPU records,
 * unlinked of them left unlinked), then the trailer. */
int gen__w_end(struct gen *g, uint64_t ts, uint64_t gpu, uint64_t unlinked)
{
	struct gt_trailer tr = { .end_ts = ts + 1000000 };
	int err = 0;

	if (g->gpu) {
		struct gt_merge_stats m = {
			.hdr = { .ts = ts + 2000, .type = GT_REC_MERGE_STATS, .size = sizeof(m) },
			.gpu_records = gpu, .linked = gpu - unlinked, .unmatched_gpu = unlinked,
		};

		err = gen__append(g, &m.hdr);
	}
	if (err)
		return err;
	tr.counters.events = g->nrec;
	tr.counters.records_written = g->nrec;
	return trace_writer__finish(g->w, &tr);
}
