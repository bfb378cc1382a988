// SPDX-License-Identifier: MIT
/*
 * nccl_sum of `gtrace-bpf stats`: per process, communicator and NCCL api,
 * the calls' CPU time (the time columns: what the call took on the host;
 * an asynchronous collective's is its enqueueing, its wait is on the GPU),
 * their count and the bytes they named, with the process' rank in the
 * communicator.  Communicators are numbered as the decoder numbers them
 * (gt_ncclrec.comm_index, across processes), the same communicator of two
 * ranks having two numbers; their uid tells them together (dump).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "stats/stats_acc.h"
#include "stats/stats_int.h"
#include "stats/stats_report.h"

/* One api on one communicator of one process. */
struct nccl_row {
	uint32_t pid;
	uint32_t comm;		/* comm_index, 0: a communicator the trace did not see made */
	uint16_t api;		/* enum gt_nccl_api */
	int32_t rank, nranks;	/* -1 unknown */
	uint64_t bytes;
	uint64_t failed;
	struct dur_acc d;
};

struct stats_nccl {
	struct hmap rows;	/* ((comm << 16 | api), pid) -> struct nccl_row */
};

int stats_nccl__call(void *ctx, const struct gt_ncclrec *n)
{
	struct stats_acc *s = ctx;
	uint64_t k1 = (uint64_t)n->comm_index << 16 | n->api;
	struct nccl_row *r;
	void *old;

	if (s->scope.on && ((s->scope.pid && s->scope.pid != n->pid) || n->ts < s->scope.start ||
			    n->ts > s->scope.end))
		return 0;
	if (!s->nccl && !(s->nccl = calloc(1, sizeof(*s->nccl))))
		return -ENOMEM;
	r = hmap_get(&s->nccl->rows, k1, n->pid);
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r || hmap_put(&s->nccl->rows, k1, n->pid, r, &old)) {
			free(r);
			return -ENOMEM;
		}
		*r = (struct nccl_row){ .pid = n->pid, .comm = n->comm_index, .api = n->api,
					.rank = n->rank, .nranks = n->nranks };
	}
	stats_hosts__nccl(s, n);
	r->bytes += n->bytes;
	r->failed += n->has_exit && n->ret && n->ret != 7;
	return stats_acc__dur_add(&r->d, n->has_exit, n->dur);
}

void stats_nccl__free(struct stats_nccl *sn)
{
	if (!sn)
		return;
	for (uint32_t i = 0; i < sn->rows.cap; i++)
		if (sn->rows.s[i].used) {
			free(((struct nccl_row *)sn->rows.s[i].v)->d.dur.v);
			free(sn->rows.s[i].v);
		}
	free(sn->rows.s);
	free(sn);
}

const struct stats_col stats_nccl_cols[15] = {
	TIME_COLS
	{ "Bytes", "bytes", SK_INT },
	{ "Failed", "failed", SK_INT },
	{ "PID", "pid", SK_ID },
	{ "Rank", "rank", SK_STR },
	{ "Communicator", "communicator", SK_STR },
	{ "Incomplete", "incomplete", SK_INT },
	{ "Name", "name", SK_STR },
};

const char *const stats_nccl_notes[] = {
	"NCCL calls per process, communicator and api: times are the calls' on the host (an "
	"asynchronous collective's is its enqueueing: the wait for the other ranks is on the GPU; "
	"the library waits on the host where it blocks, e.g. at an init or in a blocking group end). "
	"Bytes: count x element size of the calls that name data. Rank: r/nranks from the "
	"communicator's init; Communicator: its number in the trace, \"?\" when the trace does not "
	"hold its init (no rank then).",
	NULL,
};

static int cmp_row(const void *pa, const void *pb)
{
	const struct nccl_row *a = *(struct nccl_row *const *)pa, *b = *(struct nccl_row *const *)pb;

	if (a->d.total != b->d.total)
		return a->d.total > b->d.total ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->comm != b->comm)
		return a->comm < b->comm ? -1 : 1;
	return a->api < b->api ? -1 : a->api > b->api;
}

int stats_nccl__sum(struct stats_acc *s, struct stats_report *r)
{
	struct nccl_row **order;
	uint64_t whole = 0;
	size_t n;

	if (!s->nccl)
		return 0;
	order = (struct nccl_row **)sorted_values(&s->nccl->rows, cmp_row, &n);
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		whole += order[i]->d.total;
	for (size_t i = 0; i < n; i++) {
		struct nccl_row *row = order[i];
		struct stats_cell *c = stats_report__row(r);
		char rank[32], comm[16];

		if (!c) {
			free(order);
			return -ENOMEM;
		}
		if (row->rank >= 0)
			snprintf(rank, sizeof(rank), "%d/%d", row->rank, row->nranks);
		else
			snprintf(rank, sizeof(rank), "?");
		if (row->comm)
			snprintf(comm, sizeof(comm), "%u", row->comm);
		else
			snprintf(comm, sizeof(comm), "?");
		time_cells(c, &row->d, whole);
		c[8] = (struct stats_cell){ .u = row->bytes };
		c[9] = (struct stats_cell){ .u = row->failed };
		c[10] = (struct stats_cell){ .u = row->pid };
		c[11] = (struct stats_cell){ .s = stats_acc__strdup(s, rank) };
		c[12] = (struct stats_cell){ .s = stats_acc__strdup(s, comm) };
		c[13] = (struct stats_cell){ .u = row->d.incomplete };
		c[14] = (struct stats_cell){ .s = gt_nccl__name(row->api) };
		if (!c[11].s || !c[12].s) {
			free(order);
			return -ENOMEM;
		}
	}
	free(order);
	return 0;
}
