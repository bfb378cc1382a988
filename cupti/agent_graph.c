// SPDX-License-Identifier: MIT
/*
 * The CUPTI agent's CUDA graph nodes (agent_int.h): each kernel node made
 * (a launch on a capturing stream, an added node: inside that call, on its
 * thread) or cloned (instantiation), from CUPTI's resource callbacks, kept
 * under a lock until the writer takes them (agent_write.c), so that the
 * merger can give every kernel a graph runs the launch that captured it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent_int.h"

/* A CUDA graph's kernel node made (a launch on a capturing stream, an added
 * node: inside that call, on its thread) or cloned (instantiation): kept for
 * the writer, so that the merger can give each kernel a graph runs the call
 * that put its node in the graph.  Program threads; capture and
 * instantiation only, never per launch. */
void on_graph_node(CUpti_CallbackId cbid, const CUpti_ResourceData *rd)
{
	const CUpti_GraphData *gd = rd ? rd->resourceDescriptor : NULL;
	uint64_t node = 0, original = 0;
	uint32_t graph = 0;
	bool cloned = cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED;
	struct gt_gpu_graph_node r;

	atomic_store_explicit(&g.graphs_seen, 1, memory_order_relaxed);

	if (!gd || gd->nodeType != CU_GRAPH_NODE_TYPE_KERNEL || getpid() != g.pid)
		return;
	if (cuptiGetGraphNodeId(gd->node, &node) != CUPTI_SUCCESS || !node ||
	    (cloned && (!gd->originalNode ||
			cuptiGetGraphNodeId(gd->originalNode, &original) != CUPTI_SUCCESS))) {
		pthread_mutex_lock(&g.nodes_mu);
		g.nodes_lost++;
		pthread_mutex_unlock(&g.nodes_mu);
		return;
	}
	if (gd->graph && cuptiGetGraphId(gd->graph, &graph) != CUPTI_SUCCESS)
		graph = 0;
	gt_cupti_conv__graph_node((uint32_t)g.pid, (uint32_t)syscall(SYS_gettid), mono_ns(), node, original,
				  graph, cloned ? GT_GRAPH_NODE_CLONED : 0, &r);
	pthread_mutex_lock(&g.nodes_mu);
	if (g.nnodes == g.nodes_cap) {
		size_t cap = g.nodes_cap ? g.nodes_cap * 2 : 256;
		void *v = cap <= NODES_MAX ? realloc(g.nodes, cap * sizeof(*g.nodes)) : NULL;

		if (v) {
			g.nodes = v;
			g.nodes_cap = cap;
		}
	}
	if (g.nnodes < g.nodes_cap)
		g.nodes[g.nnodes++] = r;
	else
		g.nodes_lost++;
	pthread_mutex_unlock(&g.nodes_mu);
}

/* The graph node callbacks on or off (on: false when CUPTI refused them). */
bool graph_node_cbs(int on)
{
	CUptiResult a = cuptiEnableCallback((uint32_t)on, g.sub, CUPTI_CB_DOMAIN_RESOURCE,
					    CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED);
	CUptiResult b = cuptiEnableCallback((uint32_t)on, g.sub, CUPTI_CB_DOMAIN_RESOURCE,
					    CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED);

	g.node_cbs = on && a == CUPTI_SUCCESS && b == CUPTI_SUCCESS;
	return a == CUPTI_SUCCESS && b == CUPTI_SUCCESS;
}
