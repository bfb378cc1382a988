// SPDX-License-Identifier: MIT
/*
 * The mock libcuda's CUDA graphs: stream capture (a launch on a capturing
 * stream becomes a kernel node of the stream's graph instead of GPU work),
 * instantiation (each node cloned into the executable graph) and graph
 * launches (each node's kernel on the "GPU", one correlation id for the
 * launch).  The mock libcupti hears of every node made and cloned, as
 * CUPTI's resource callbacks tell the CUPTI agent.
 */
#include "libcuda_mock.h"

#define MAGIC_GRAPH	0x67746d6f636b0008ull
#define MAGIC_EXEC	0x67746d6f636b0009ull
#define CAPTURING_MAX	64	/* streams capturing at once */
#define NODES_MAX	4096	/* kernel nodes of a graph */

struct mock_node {
	unsigned long long id;	/* CUPTI's node id (the mock's handles are their ids) */
	const char *name;	/* the kernel's (the function's, which lives as long) */
	unsigned grid[3], block[3];
};

struct mock_graph {
	uint64_t magic;		/* MAGIC_GRAPH or MAGIC_EXEC */
	unsigned id;		/* CUPTI's graph id */
	size_t n;
	struct mock_node nodes[NODES_MAX];
};

void (*graph_node_fn)(unsigned long long, unsigned long long, unsigned);	/* the mock libcupti's */

static pthread_mutex_t graph_lock = PTHREAD_MUTEX_INITIALIZER;	/* the three below */
static struct {
	CUstream stream;
	struct mock_graph *graph;
} capturing[CAPTURING_MAX];
static unsigned long long next_node = 1;
static unsigned next_graph = 1;

static struct mock_graph *graph_new(uint64_t magic)
{
	struct mock_graph *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->magic = magic;
	pthread_mutex_lock(&graph_lock);
	g->id = next_graph++;
	pthread_mutex_unlock(&graph_lock);
	return g;
}

static int capture_slot(CUstream s)
{
	for (int i = 0; i < CAPTURING_MAX; i++)
		if (capturing[i].graph && capturing[i].stream == s)
			return i;
	return -1;
}

bool graph_capture_launch(CUstream s, const char *name, const unsigned grid[3], const unsigned block[3])
{
	struct mock_graph *g;
	unsigned long long id;
	int i;

	if (!s)
		return false;
	pthread_mutex_lock(&graph_lock);
	i = capture_slot(s);
	g = i < 0 ? NULL : capturing[i].graph;
	if (!g || g->n == NODES_MAX) {
		pthread_mutex_unlock(&graph_lock);
		return g != NULL;	/* a full graph takes no more (the launch still succeeds) */
	}
	id = next_node++;
	g->nodes[g->n++] = (struct mock_node){ id, name, { grid[0], grid[1], grid[2] },
					       { block[0], block[1], block[2] } };
	pthread_mutex_unlock(&graph_lock);
	/* inside the launch call, on its thread, as CUPTI reports it */
	if (graph_node_fn)
		graph_node_fn(id, 0, g->id);
	return true;
}

MOCK_API CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
	struct mock_graph *g;
	int free_slot = -1;

	(void)mode;
	if (!have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	/* the legacy NULL stream cannot capture */
	if (!hStream || (uintptr_t)hStream <= 2 || !stream_valid(hStream))
		return CUDA_ERROR_INVALID_VALUE;
	g = graph_new(MAGIC_GRAPH);
	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&graph_lock);
	if (capture_slot(hStream) >= 0) {
		pthread_mutex_unlock(&graph_lock);
		free(g);
		return CUDA_ERROR_ILLEGAL_STATE;
	}
	for (int i = 0; i < CAPTURING_MAX && free_slot < 0; i++)
		if (!capturing[i].graph)
			free_slot = i;
	if (free_slot >= 0) {
		capturing[free_slot].stream = hStream;
		capturing[free_slot].graph = g;
	}
	pthread_mutex_unlock(&graph_lock);
	if (free_slot < 0) {
		free(g);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
	int i;

	if (!phGraph)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&graph_lock);
	i = hStream ? capture_slot(hStream) : -1;
	if (i >= 0) {
		*phGraph = (CUgraph)capturing[i].graph;
		capturing[i].graph = NULL;
		capturing[i].stream = NULL;
	}
	pthread_mutex_unlock(&graph_lock);
	return i >= 0 ? CUDA_SUCCESS : CUDA_ERROR_ILLEGAL_STATE;
}

MOCK_API CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
{
	const struct mock_graph *g = (const void *)hGraph;
	struct mock_graph *e;

	(void)flags;
	if (!phGraphExec || !g || g->magic != MAGIC_GRAPH)
		return CUDA_ERROR_INVALID_VALUE;
	e = graph_new(MAGIC_EXEC);
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (size_t i = 0; i < g->n; i++) {
		pthread_mutex_lock(&graph_lock);
		e->nodes[i] = g->nodes[i];
		e->nodes[i].id = next_node++;
		pthread_mutex_unlock(&graph_lock);
		if (graph_node_fn)
			graph_node_fn(e->nodes[i].id, g->nodes[i].id, e->id);
	}
	e->n = g->n;
	*phGraphExec = (CUgraphExec)e;
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	struct mock_graph *e = (void *)hGraphExec;

	if (!e || e->magic != MAGIC_EXEC)
		return CUDA_ERROR_INVALID_VALUE;
	e->magic = MAGIC_DEAD;
	free(e);
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuGraphDestroy(CUgraph hGraph)
{
	struct mock_graph *g = (void *)hGraph;

	if (!g || g->magic != MAGIC_GRAPH)
		return CUDA_ERROR_INVALID_VALUE;
	g->magic = MAGIC_DEAD;
	free(g);
	return CUDA_SUCCESS;
}

/* A graph launch: an executable graph of the mock runs its kernels in node
 * order, one correlation id for them all; any other handle that is not
 * NULL is a graph of no nodes (the workload's --step-graph). */
static CUresult graph_launch(CUgraphExec hGraphExec, CUstream s)
{
	const struct mock_graph *e = (const void *)hGraphExec;
	uint64_t t0 = gpu_work_fn ? mono_ns() : 0;
	unsigned corr = 0;
	CUresult r;

	if (!e)
		return CUDA_ERROR_INVALID_VALUE;
	r = async_check(s);
	if (r || !gpu_work_fn || e->magic != MAGIC_EXEC)
		return r;
	for (size_t i = 0; i < e->n; i++) {
		struct mock_gpu_work w = { .kind = MOCK_WORK_KERNEL, .name = e->nodes[i].name,
					   .stream = stream_id(s), .graph_node = e->nodes[i].id,
					   .corr = corr };

		memcpy(w.grid, e->nodes[i].grid, sizeof(w.grid));
		memcpy(w.block, e->nodes[i].block, sizeof(w.block));
		gpu_work(&w, t0);
		if (!corr)
			corr = w.corr;
	}
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	return graph_launch(hGraphExec, hStream);
}

MOCK_API CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	return graph_launch(hGraphExec, hStream);
}
