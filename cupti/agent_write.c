// SPDX-License-Identifier: MIT
/*
 * The CUPTI agent's writer output (agent_int.h): CUPTI's completed activity
 * buffers converted (convert.c) into one output chunk with the graph node
 * records before them, written to the spool file as whole records; the
 * counters at a pause or the end; the live flush marks.  Writer thread only.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"

/* Writes out's records as one chunk, or counts them as lost: the spool's
 * file system is full, or it holds more unread than its bound (both go
 * away, so the next chunk is tried again); other errors end the writing. */
void out_flush_as(bool last)
{
	if (g.out_len && !g.write_failed) {
		switch (gt_spool__write(&g.spool, g.out, g.out_len, g.out_recs, last)) {
		case GT_SPOOL_OK:
			break;
		case GT_SPOOL_FULL:
			if (!g.full_said)
				say("the file system of %s is full: GPU records of pid %d are lost until there "
				    "is room (counted)", g.ctl.dir, (int)g.pid);
			g.full_said = true;
			break;
		case GT_SPOOL_BACKLOG:
			if (!g.backlog_said)
				say("%s holds more than %llu bytes nobody read: GPU records of pid %d are lost "
				    "until the recorder catches up (counted)", g.spool.path,
				    (unsigned long long)g.spool.max_unread, (int)g.pid);
			g.backlog_said = true;
			break;
		case GT_SPOOL_ERR:
			g.write_failed = true;
			say("failed to write %s: %s; GPU-side recording off for pid %d", g.spool.path,
			    strerror(errno), (int)g.pid);
			break;
		}
	}
	g.out_len = 0;
	g.out_recs = 0;
}

void out_flush(void)
{
	out_flush_as(false);
}

/* Makes room for one more record of any size in out; returns the bytes free
 * at g.out + g.out_len. */
size_t out_room(void)
{
	if (OUT_SIZE - g.out_len < GT_CUPTI_REC_MAX)
		out_flush();
	return OUT_SIZE - g.out_len;
}

/* n bytes of records put into out; data: one record of the program's (what
 * the losses count), else the agent's own (a mark, the counters). */
void out_put(size_t n, bool data)
{
	g.out_len += n;
	g.out_recs += data;
}

static void convert_buffer(uint8_t *buf, size_t valid)
{
	CUpti_Activity *rec = NULL;

	/* stops at the end (MAX_LIMIT_REACHED) or at a record CUPTI left
	 * incomplete (INVALID_KIND) */
	while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) {
		size_t room = out_room();
		int n = gt_cupti_conv__record(g.conv, rec, g.out + g.out_len, room);
		const struct gt_gpu_kernel *k = (const void *)(g.out + g.out_len);

		if (n > 0 && k->hdr.type == GT_REC_GPU_KERNEL && (k->flags & GT_GPU_GRAPH))
			atomic_store_explicit(&g.graphs_seen, 1, memory_order_relaxed);
		if (n > 0)
			out_put((size_t)n, true);
	}
}

/* The graph node records the program's threads left, into out (taken from
 * them under the lock, written without it). */
static void put_nodes(void)
{
	struct gt_gpu_graph_node *v;
	size_t n;

	pthread_mutex_lock(&g.nodes_mu);
	v = g.nodes;
	n = g.nnodes;
	g.nodes = NULL;
	g.nnodes = g.nodes_cap = 0;
	pthread_mutex_unlock(&g.nodes_mu);
	for (size_t i = 0; i < n && !g.write_failed; i++) {
		out_room();
		memcpy(g.out + g.out_len, &v[i], sizeof(v[i]));
		out_put(sizeof(v[i]), true);
	}
	free(v);
}

/* Converts and writes every queued buffer; returns how many there were. */
unsigned drain(void)
{
	unsigned n = 0;
	uint8_t *buf;
	size_t valid;

	put_nodes();	/* before the kernels the nodes ran */
	while (gt_buf_ring__pop(&g.ring, &buf, &valid)) {
		if (!g.write_failed)
			convert_buffer(buf, valid);
		gt_buf_pool__put(&g.pool, buf);
		n++;
	}
	out_flush();
	return n;
}

/* The counters of this stretch of recording, its NVTX ranges still open,
 * written after everything else; flags: GT_CUPTI_ST_FINAL or _PAUSED. */
void write_stats(uint64_t flags)
{
	struct gt_cupti_conv_extra x = {
		.clock_offset_ns = g.clock_offset_ns,
	};
	size_t dropped = 0;
	uint64_t unqueued = atomic_load(&g.unqueued) - g.base_unqueued;
	int n;

	drain();
	for (;;) {
		size_t room = out_room();

		n = gt_cupti_conv__drain_open(g.conv, g.out + g.out_len, room);
		if (n <= 0)
			break;
		out_put((size_t)n, true);
	}
	/* what the bounds cost is known once what is in out was tried */
	out_flush();
	if (cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) != CUPTI_SUCCESS || dropped < g.base_dropped)
		dropped = g.base_dropped;
	x.dropped = dropped - g.base_dropped + unqueued;
	x.buffers = atomic_load(&g.buffers) - g.base_buffers;
	x.lost_disk = g.spool.lost_disk;
	x.lost_backlog = g.spool.lost_backlog;
	{
		uint64_t lost;

		pthread_mutex_lock(&g.nodes_mu);
		lost = g.nodes_lost;
		g.nodes_lost = 0;
		pthread_mutex_unlock(&g.nodes_mu);
		/* the merger counts the kernels it could not trace back */
		if (lost)
			say("%llu CUDA graph kernel nodes of pid %d not kept (out of memory, or %u "
			    "waiting): their kernels are not traced back to the launches that "
			    "captured them", (unsigned long long)lost, (int)g.pid, NODES_MAX);
	}
	x.flags = flags | g.spool.flags;
	out_room();
	out_put(gt_cupti_conv__stats(g.conv, mono_ns(), &x, g.out + g.out_len), false);
	out_flush_as(true);	/* alone in out: the room kept for it takes it */
	if (x.dropped)
		say("%llu GPU records lost in pid %d (CUPTI found no free buffer %llu times)",
		    (unsigned long long)x.dropped, (int)g.pid, (unsigned long long)atomic_load(&g.refused));
}

/* Live spooling: what CUPTI has completed, handed over now, then the mark
 * that says so (its ts: before the flush began). */
void live_flush(void)
{
	uint64_t t0 = mono_ns();

	if (atomic_load(&g.state) != ST_ON)
		return;
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	drain();
	if (g.write_failed)
		return;
	out_room();
	out_put(gt_cupti_conv__mark(g.conv, t0, mono_ns() - t0, g.out + g.out_len), false);
	out_flush();
}
