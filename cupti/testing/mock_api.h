/* SPDX-License-Identifier: MIT */
/* What the mock libcupti (libcupti_mock.c) offers its test driver. */
#ifndef GTRACE_CUPTI_MOCK_API_H
#define GTRACE_CUPTI_MOCK_API_H

struct mock_state {
	int subscribed;		/* the agent holds the subscriber slot now */
	int kinds;		/* activity kinds enabled now */
	int driver_ids;		/* driver API ids enabled now (fine-grained) */
	int order_errors;	/* kinds enabled before the timestamp callback */
	int subscribes;		/* cuptiSubscribe calls */
	int unsubscribes;	/* cuptiUnsubscribe calls */
	int flushes;		/* cuptiActivityFlushAll calls */
	int nvtx_inits;		/* InitializeInjectionNvtx2 calls forwarded to "libcupti" */
	int nvtx_cbs;		/* NVTX callback ids enabled now */
	int nvtx_calls;		/* NVTX callbacks made */
	int finalizes;		/* cuptiFinalize calls */
	int api_domains;	/* driver and runtime callback domains enabled now */
};

int mock_emit(int n, unsigned corr);

/* One piece of GPU work of the mock libcuda (tests/mock/libcuda_mock.c with
 * GT_MOCK_INJECTION=1, which loads the agent as the driver does): CUPTI's
 * record of its driver call (when asked for) and of the kernel, copy or set,
 * joined by a correlation id of the mock's.  Times are CLOCK_MONOTONIC ns. */
enum mock_work_kind { MOCK_WORK_KERNEL, MOCK_WORK_MEMCPY, MOCK_WORK_MEMSET };
struct mock_gpu_work {
	int kind;			/* enum mock_work_kind */
	const char *name;		/* kernel: its mangled name (the mock keeps a copy) */
	unsigned grid[3], block[3];	/* kernel: its dims */
	unsigned long long bytes;	/* copy, set: bytes */
	unsigned copy_kind;		/* copy: a CUpti_ActivityMemcpyKind value (1 HtoD, 2 DtoH,
					 * 8 DtoD, 0 unknown) */
	unsigned stream;		/* CUPTI stream id */
	unsigned device;		/* CUPTI device id: the current context's device */
	unsigned context;		/* CUPTI context id of the current context */
	unsigned long long api_start;	/* the driver call, on the calling thread */
	unsigned long long api_end;
	unsigned long long start;	/* the work on the "GPU" */
	unsigned long long end;
	unsigned long long graph_node;	/* kernel: the graph node that ran it, 0 = not a graph */
	unsigned corr;			/* not 0: the correlation id of an earlier piece of the
					 * same call (a graph's later nodes): no API record */
};
/* Returns the correlation id given, 0 when nothing records (no kind on). */
unsigned mock_gpu_work(const struct mock_gpu_work *w);
void mock_complete_async(void);
/* A CUDA graph's kernel node made (original 0: by a launch on a capturing
 * stream, inside that call) or cloned from original (instantiation), in
 * graph: CUPTI's resource callback, when the subscriber enabled it.  Node
 * and graph handles are their ids (cuptiGetGraphNodeId, cuptiGetGraphId). */
void mock_graph_node(unsigned long long node, unsigned long long original, unsigned graph);
/* An NVTX range of the calling thread from start to end (CLOCK_MONOTONIC ns)
 * named name, as CUPTI records one: a start and an end marker of one id.
 * Returns the id, 0 when nothing records (the marker kind off). */
unsigned mock_nvtx_range_record(const char *name, unsigned long long start, unsigned long long end);
void mock_state(struct mock_state *s);

/* NVTX calls as CUPTI's NVTX implementation sees them once NVTX handed
 * itself to "libcupti" (the driver's 'n'); each returns what NVTX would. */
enum mock_nvtx_msg {
	MOCK_NVTX_A,		/* nvtxRange*A(const char *msg) */
	MOCK_NVTX_W,		/* nvtxRange*W: msg (UTF-8) as wchar_t */
	MOCK_NVTX_EX_A,		/* *Ex with an ASCII message */
	MOCK_NVTX_EX_W,		/* *Ex with a Unicode message (msg as above) */
	MOCK_NVTX_EX_REG,	/* *Ex with a registered string: msg is its handle */
};
/* nvtxDomainCreateA/W (wide: W): one handle per name */
void *mock_nvtx_domain(const char *name, int wide);
void mock_nvtx_domain_destroy(void *domain);
/* nvtxDomainRegisterStringA/W in domain (NULL: the default one) */
void *mock_nvtx_register(void *domain, const char *s, int wide);
/* in_domain 0: nvtxRangePush*, nvtxRangePop, nvtxRangeStart*, nvtxRangeEnd
 * (domain unused); else nvtxDomainRange*(domain, ...), *_EX_* types only */
int mock_nvtx_push(int in_domain, void *domain, int type, const void *msg);
int mock_nvtx_pop(int in_domain, void *domain);
unsigned long long mock_nvtx_start(int in_domain, void *domain, int type, const void *msg);
void mock_nvtx_end(int in_domain, void *domain, unsigned long long id);

#endif
