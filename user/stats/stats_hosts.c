// SPDX-License-Identifier: MIT
/*
 * host_sum of `gtrace-bpf stats`: a job trace's hosts (merge --hosts), one
 * row each: how its clock was aligned onto the job's (the offset, the
 * method, the spread of its collectives' ends left), and what its processes
 * did: their CUDA calls, launches, GPU kernels and time, NCCL calls and the
 * CPU time in them, and the ranks they held.  A trace of one host has none.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bpf/gtrace_events.h"
#include "stats/stats_acc.h"
#include "stats/stats_int.h"
#include "stats/stats_report.h"

#define HOSTS_KEPT 1024

struct host_row {
	bool seen;		/* its GT_REC_HOST */
	char name[64];
	int64_t offset_ns;
	uint32_t method, collectives;
	uint64_t residual_ns;
	uint64_t calls, launches, gpu_kernels, gpu_time, nccl_calls, nccl_time;
	int32_t rank_lo, rank_hi;	/* the ranks its processes held, -1 none */
	char ranks[32];			/* the report's text of them */
};

struct stats_hosts {
	struct host_row h[HOSTS_KEPT];
	uint32_t n;		/* rows: 1 + the highest host seen */
};

static struct host_row *host_of(struct stats_acc *s, uint32_t pid)
{
	uint32_t i = pid >> GT_HOST_SHIFT;

	if (!s->hosts || i >= HOSTS_KEPT)
		return NULL;
	if (i >= s->hosts->n) {
		for (uint32_t j = s->hosts->n; j <= i; j++)
			s->hosts->h[j].rank_lo = s->hosts->h[j].rank_hi = -1;
		s->hosts->n = i + 1;
	}
	return &s->hosts->h[i];
}

int stats_hosts__rec(struct stats_acc *s, const struct gt_hdr *rec)
{
	const struct gt_host *g = (const void *)rec;
	struct host_row *h;
	size_t room;

	if (rec->type != GT_REC_HOST || rec->size < sizeof(*g))
		return 0;
	if (!s->hosts && !(s->hosts = calloc(1, sizeof(*s->hosts))))
		return -ENOMEM;
	if (!(h = host_of(s, rec->pid << GT_HOST_SHIFT)))
		return 0;
	room = rec->size - sizeof(*g);
	h->seen = true;
	snprintf(h->name, sizeof(h->name), "%.*s", (int)strnlen(g->name, g->len <= room ? g->len : room), g->name);
	h->offset_ns = g->offset_ns;
	h->method = g->method;
	h->collectives = g->collectives;
	h->residual_ns = g->residual_ns;
	return 0;
}

void stats_hosts__call(struct stats_acc *s, const struct gt_callrec *c)
{
	struct host_row *h = host_of(s, c->pid);

	if (!h)
		return;
	h->calls++;
	h->launches += c->type == GT_T_LAUNCH;
}

void stats_hosts__gpu_kernel(struct stats_acc *s, uint32_t pid, uint64_t dur)
{
	struct host_row *h = host_of(s, pid);

	if (!h)
		return;
	h->gpu_kernels++;
	h->gpu_time += dur;
}

void stats_hosts__nccl(struct stats_acc *s, const struct gt_ncclrec *n)
{
	struct host_row *h = host_of(s, n->pid);

	if (!h)
		return;
	h->nccl_calls++;
	h->nccl_time += n->has_exit ? n->dur : 0;
	if (n->rank >= 0) {
		h->rank_lo = h->rank_lo < 0 || n->rank < h->rank_lo ? n->rank : h->rank_lo;
		h->rank_hi = n->rank > h->rank_hi ? n->rank : h->rank_hi;
	}
}

const struct stats_col stats_host_cols[13] = {
	{ "Host", "host", SK_ID },
	{ "Name", "name", SK_STR },
	{ "Offset (ms)", "offset_ms", SK_STR },
	{ "Aligned By", "aligned_by", SK_STR },
	{ "Collectives", "collectives", SK_INT },
	{ "Residual", "residual", SK_TIME },
	{ "Ranks", "ranks", SK_STR },
	{ "Calls", "calls", SK_INT },
	{ "Launches", "launches", SK_INT },
	{ "GPU Kernels", "gpu_kernels", SK_INT },
	{ "GPU Time", "gpu_time", SK_TIME },
	{ "NCCL Calls", "nccl_calls", SK_INT },
	{ "NCCL Time", "nccl_time", SK_TIME },
};

const char *const stats_host_notes[] = {
	"Offset: added to the host's CLOCK_MONOTONIC times to put them on the job's clock (the first host's), "
	"in ms; Aligned By: reference, same boot, realtime (its wall clock only: no NCCL collective shared), "
	"collectives (its wall clock, then the ends of the collectives it shares with the hosts before it).",
	"Residual: the median spread of the ends of its collectives across hosts once aligned; NCCL Time: the "
	"calls' time on the host (a nonblocking collective's is its enqueueing).",
	NULL,
};

int stats_hosts__sum(struct stats_acc *s, struct stats_report *r)
{
	static const char *const how[] = { "reference", "same boot", "realtime", "collectives" };
	static char offs[HOSTS_KEPT][24];

	if (!s->hosts)
		return 0;
	for (uint32_t i = 0; i < s->hosts->n; i++) {
		struct host_row *h = &s->hosts->h[i];
		struct stats_cell *c = stats_report__row(r);

		if (!c)
			return -ENOMEM;
		snprintf(offs[i], sizeof(offs[i]), "%+.3f", h->offset_ns / 1e6);
		if (h->rank_lo < 0)
			snprintf(h->ranks, sizeof(h->ranks), "-");
		else if (h->rank_lo == h->rank_hi)
			snprintf(h->ranks, sizeof(h->ranks), "%d", h->rank_lo);
		else
			snprintf(h->ranks, sizeof(h->ranks), "%d-%d", h->rank_lo, h->rank_hi);
		c[0] = (struct stats_cell){ .u = i };
		c[1] = (struct stats_cell){ .s = h->seen ? h->name : "?" };
		c[2] = (struct stats_cell){ .s = offs[i] };
		c[3] = (struct stats_cell){ .s = h->seen && h->method <= 3 ? how[h->method] : "?" };
		c[4] = (struct stats_cell){ .u = h->collectives };
		c[5] = (struct stats_cell){ .u = h->residual_ns, .none = !h->collectives };
		c[6] = (struct stats_cell){ .s = h->ranks };
		c[7] = (struct stats_cell){ .u = h->calls };
		c[8] = (struct stats_cell){ .u = h->launches };
		c[9] = (struct stats_cell){ .u = h->gpu_kernels };
		c[10] = (struct stats_cell){ .u = h->gpu_time };
		c[11] = (struct stats_cell){ .u = h->nccl_calls };
		c[12] = (struct stats_cell){ .u = h->nccl_time };
	}
	return 0;
}

void stats_hosts__free(struct stats_hosts *sh)
{
	free(sh);
}
