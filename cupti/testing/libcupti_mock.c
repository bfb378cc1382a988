// SPDX-License-Identifier: MIT
/*
 * A stand-in for libcupti, for running the agent (cupti/agent.c) on a machine
 * without a GPU.  It keeps the calls the agent makes (subscriber, kinds,
 * driver API ids, flushes), checks their order (timestamp callback before
 * any kind), and plays CUPTI's part with buffers: mock_emit() fills buffers
 * the agent lends with synthetic CUPTI 13 records and completes them when
 * full, cuptiActivityFlushAll() completes the current one; mock_gpu_work()
 * records the work of the mock libcuda that loaded the agent, and
 * mock_nvtx_range_record() an NVTX range it reports.  Once NVTX handed
 * itself over (InitializeInjectionNvtx2), mock_nvtx_*() play CUPTI's NVTX
 * implementation: each reports its call to the subscriber's callback when
 * that id is enabled, as CUPTI does, with what NVTX returns.
 *
 * Environment: MOCK_CONFLICT=1 (cuptiSubscribe answers that another client
 * holds the process), MOCK_FAIL_KIND=<kind> (cuptiActivityEnable of it
 * fails), MOCK_NO_FINE=1 (cuptiActivityEnableDriverApi unsupported),
 * MOCK_FAIL_NVTX_CBID=<id> (cuptiEnableCallback of that NVTX id fails),
 * MOCK_NO_RANGE_ID=1 (range starts report no return value), MOCK_FAULT=1
 * (cuptiSubscribe reads address 0x5c: CUPTI crashing in the agent's start),
 * MOCK_FAULT=flush (cuptiActivityFlushAll does, once GPU work was recorded:
 * CUPTI crashing later).
 *
 * The driver and runtime domains (cuptiEnableDomain): each piece of GPU work
 * of the mock libcuda calls the subscriber's callback at its call's exit, as
 * CUPTI does; cuptiFinalize tears the mock down to where it was before the
 * first call and says on stderr whether it ran in such a callback.
 */
#define NVTX_NO_IMPL
#include <cupti.h>
#include <generated_nvtx_meta.h>
#include <dlfcn.h>
#include <locale.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>
#include <sys/syscall.h>

#include "mock_api.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;	/* guards everything below */
static CUpti_BuffersCallbackRequestFunc req;
static CUpti_BuffersCallbackCompleteFunc done;
static CUpti_TimestampCallbackFunc clock_cb;
static int subscribed, kind_on[128], driver_ids, order_errors, subscribes, unsubscribes, flushes, nvtx_inits;
static CUpti_CallbackFunc sub_cb;	/* the subscriber's callback */
static void *sub_ud;			/* its userdata */
static int nvtx_on[CUPTI_CBID_NVTX_SIZE];	/* NVTX callback ids enabled */
static int nvtx_calls;			/* NVTX callbacks made */
static int res_on[64];			/* resource callback ids enabled */
static int api_domains;			/* the driver and runtime domains enabled (0-2) */
static int finalizes;			/* cuptiFinalize calls */
static __thread int in_api_cb;		/* this thread is in an API callback */
static uint8_t *cur;
static size_t cur_size, cur_used, dropped;

CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
	static char b[32];

	snprintf(b, sizeof(b), "MOCK_ERROR_%d", (int)r);
	*s = b;
	return CUPTI_SUCCESS;
}

/* CUPTI attaches itself to the driver when it starts, whenever that is: the
 * mock libcuda of the process (by its soname) learns where GPU work goes
 * also when the agent was loaded into the running process, not at cuInit. */
static void register_with_driver(void)
{
	void (*reg)(void *, void *, void *);
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);

	if (!h)
		return;
	*(void **)&reg = dlsym(h, "gt_mock_cupti_register");
	if (reg)
		reg((void *)mock_gpu_work, (void *)mock_nvtx_range_record, (void *)mock_graph_node);
	dlclose(h);
}

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc cb, void *ud)
{
	if (getenv("MOCK_FAULT") && strcmp(getenv("MOCK_FAULT"), "flush"))
		return (CUptiResult)*(volatile const int *)(uintptr_t)0x5c;
	pthread_mutex_lock(&mu);
	subscribes++;
	if (!getenv("MOCK_CONFLICT")) {
		subscribed = 1;
		sub_cb = cb;
		sub_ud = ud;
	}
	pthread_mutex_unlock(&mu);
	if (getenv("MOCK_CONFLICT"))
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	register_with_driver();
	*h = (CUpti_SubscriberHandle)0x1;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle h)
{
	(void)h;
	pthread_mutex_lock(&mu);
	subscribed = 0;
	sub_cb = NULL;
	memset(nvtx_on, 0, sizeof(nvtx_on));
	unsubscribes++;
	pthread_mutex_unlock(&mu);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableCallback(uint32_t e, CUpti_SubscriberHandle s, CUpti_CallbackDomain d, CUpti_CallbackId c)
{
	const char *fail = getenv("MOCK_FAIL_NVTX_CBID");

	(void)s;
	if (d == CUPTI_CB_DOMAIN_RESOURCE && c < 64) {
		if (e && getenv("MOCK_NO_GRAPH_CBS") &&
		    (c == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED || c == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED))
			return CUPTI_ERROR_NOT_SUPPORTED;
		pthread_mutex_lock(&mu);
		res_on[c] = !!e;
		pthread_mutex_unlock(&mu);
		return CUPTI_SUCCESS;
	}
	if (d != CUPTI_CB_DOMAIN_NVTX)
		return CUPTI_SUCCESS;
	if (c >= CUPTI_CBID_NVTX_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (e && fail && atoi(fail) == (int)c)
		return CUPTI_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&mu);
	nvtx_on[c] = !!e;
	pthread_mutex_unlock(&mu);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableDomain(uint32_t e, CUpti_SubscriberHandle s, CUpti_CallbackDomain d)
{
	static int on[2];

	(void)s;
	if (d != CUPTI_CB_DOMAIN_DRIVER_API && d != CUPTI_CB_DOMAIN_RUNTIME_API)
		return CUPTI_SUCCESS;
	pthread_mutex_lock(&mu);
	on[d == CUPTI_CB_DOMAIN_RUNTIME_API] = subscribed && e;
	api_domains = on[0] + on[1];
	pthread_mutex_unlock(&mu);
	return subscribed ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

/* CUPTI detached: everything the client set up is gone. */
CUptiResult cuptiFinalize(void)
{
	pthread_mutex_lock(&mu);
	finalizes++;
	subscribed = 0;
	sub_cb = NULL;
	req = NULL;
	done = NULL;
	clock_cb = NULL;
	memset(kind_on, 0, sizeof(kind_on));
	memset(nvtx_on, 0, sizeof(nvtx_on));
	memset(res_on, 0, sizeof(res_on));
	driver_ids = 0;
	api_domains = 0;
	pthread_mutex_unlock(&mu);
	fprintf(stderr, "mock libcupti: cuptiFinalize %s\n",
		in_api_cb ? "in an API exit callback" : "outside an API callback");
	return CUPTI_SUCCESS;
}

/* The exit of a driver call cbid: the subscriber's callback when the
 * driver domain is on (mu not held: the callback may call in again). */
static void api_exit(CUpti_CallbackId cbid)
{
	CUpti_CallbackData cd;
	CUpti_CallbackFunc cb;
	void *ud;

	pthread_mutex_lock(&mu);
	cb = api_domains ? sub_cb : NULL;
	ud = sub_ud;
	pthread_mutex_unlock(&mu);
	if (!cb)
		return;
	memset(&cd, 0, sizeof(cd));
	cd.callbackSite = CUPTI_API_EXIT;
	in_api_cb = 1;
	cb(ud, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &cd);
	in_api_cb = 0;
}

CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
	pthread_mutex_lock(&mu);
	clock_cb = f;
	pthread_mutex_unlock(&mu);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType t)
{
	(void)t;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetTimestamp(uint64_t *t)
{
	*t = clock_cb ? clock_cb() : 42;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc r, CUpti_BuffersCallbackCompleteFunc d)
{
	pthread_mutex_lock(&mu);
	req = r;
	done = d;
	pthread_mutex_unlock(&mu);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
	const char *fail = getenv("MOCK_FAIL_KIND");

	pthread_mutex_lock(&mu);
	order_errors += !clock_cb;
	if (!(fail && atoi(fail) == (int)k) && (unsigned)k < 128)
		kind_on[k] = 1;
	pthread_mutex_unlock(&mu);
	return fail && atoi(fail) == (int)k ? CUPTI_ERROR_NOT_SUPPORTED : CUPTI_SUCCESS;
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
	pthread_mutex_lock(&mu);
	if ((unsigned)k < 128)
		kind_on[k] = 0;
	pthread_mutex_unlock(&mu);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId c, uint8_t e)
{
	(void)c;
	if (getenv("MOCK_NO_FINE"))
		return CUPTI_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&mu);
	order_errors += !clock_cb;
	driver_ids += e ? 1 : -1;
	pthread_mutex_unlock(&mu);
	return CUPTI_SUCCESS;
}

static size_t rec_size(const CUpti_Activity *a)
{
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
	case CUPTI_ACTIVITY_KIND_OVERHEAD: return 64;
	default: return 0;
	}
}

CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	size_t off = *rec ? (size_t)((uint8_t *)*rec - buf) + rec_size(*rec) : 0;

	if (off >= valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = (CUpti_Activity *)(buf + off);
	return rec_size(*rec) ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_KIND;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext c, uint32_t s, size_t *d)
{
	(void)c, (void)s;
	pthread_mutex_lock(&mu);
	*d = dropped;
	dropped = 0;
	pthread_mutex_unlock(&mu);
	return CUPTI_SUCCESS;
}

/* with mu held; completes on the calling thread, as a flush does */
static void complete_current(void)
{
	uint8_t *b = cur;

	if (!b)
		return;
	cur = NULL;
	done(NULL, 0, b, cur_size, cur_used);
}

CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	(void)flag;
	pthread_mutex_lock(&mu);
	if (cur_used && getenv("MOCK_FAULT") && !strcmp(getenv("MOCK_FAULT"), "flush"))
		return (CUptiResult)*(volatile const int *)(uintptr_t)0x5c;
	flushes++;
	if (done)
		complete_current();
	pthread_mutex_unlock(&mu);
	return CUPTI_SUCCESS;
}

static void put(const void *r, size_t n)
{
	size_t max;

	if (cur && cur_used + n > cur_size)
		complete_current();
	if (!cur) {
		req(&cur, &cur_size, &max);
		cur_used = 0;
		if (!cur) {
			dropped++;
			return;
		}
	}
	memcpy(cur + cur_used, r, n);
	cur_used += n;
}

/* A start or end marker of NVTX range id on thread tid, as CUPTI writes
 * them (an end has no name); mu held. */
static void put_marker(uint32_t flags, uint64_t ts, unsigned id, uint32_t tid, const char *name)
{
	CUpti_ActivityMarker2 m;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MARKER;
	m.flags = flags;
	m.timestamp = ts;
	m.id = id;
	m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	m.objectId.pt.threadId = tid;
	m.name = name;
	put(&m, sizeof(m));
}

/* n kernels with their cuLaunchKernel API records, inside an NVTX range id
 * corr; then a copy, a set and a record of a kind the agent does not know. */
int mock_emit(int n, unsigned corr)
{
	uint64_t t, ov[8] = { CUPTI_ACTIVITY_KIND_OVERHEAD };
	uint32_t tid = (uint32_t)syscall(SYS_gettid);
	int any = 0;

	pthread_mutex_lock(&mu);
	for (int k = 0; k < 128; k++)
		any |= kind_on[k];
	if (!req || !any || !clock_cb) {
		pthread_mutex_unlock(&mu);
		return 0;
	}
	t = clock_cb();
	put_marker(CUPTI_ACTIVITY_FLAG_MARKER_START, t, corr, tid, "mock range");
	for (int i = 0; i < n; i++) {
		CUpti_ActivityKernel10 k;
		CUpti_ActivityAPI a;

		memset(&k, 0, sizeof(k));
		k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
		k.start = t + 1000 + (uint64_t)i * 10;
		k.end = k.start + 5;
		k.correlationId = corr + (unsigned)i;
		k.gridX = 1 + i;
		k.gridY = k.gridZ = k.blockX = k.blockY = k.blockZ = 1;
		k.streamId = 7;
		k.name = "_Z10mockKernelv";
		put(&k, sizeof(k));
		/* as CUPTI: API records only when asked for (the kind or the ids) */
		if (!kind_on[CUPTI_ACTIVITY_KIND_DRIVER] && driver_ids <= 0)
			continue;
		memset(&a, 0, sizeof(a));
		a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
		a.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
		a.start = t + (uint64_t)i;
		a.end = a.start + 3;
		a.correlationId = corr + (unsigned)i;
		a.threadId = tid;
		put(&a, sizeof(a));
	}
	{
		CUpti_ActivityMemcpy6 c;
		CUpti_ActivityMemset4 s;

		memset(&c, 0, sizeof(c));
		c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
		c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
		c.bytes = 4096;
		c.start = t + 5;
		c.end = t + 9;
		put(&c, sizeof(c));
		memset(&s, 0, sizeof(s));
		s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
		s.bytes = 512;
		s.start = t + 5;
		s.end = t + 9;
		put(&s, sizeof(s));
	}
	put(ov, sizeof(ov));
	put_marker(CUPTI_ACTIVITY_FLAG_MARKER_END, clock_cb(), corr, tid, NULL);
	pthread_mutex_unlock(&mu);
	return 1;
}

/* A kernel name for CUPTI's records: kept for the life of the process, as
 * CUPTI's own are (the agent converts after the module may be gone). */
static const char *intern_name(const char *name)
{
	static char *names[64];
	static int nnames;
	int i;

	for (i = 0; i < nnames; i++)
		if (!strcmp(names[i], name))
			return names[i];
	if (nnames == 64)
		return "_Z14tooManyKernelsv";
	names[nnames] = strdup(name);
	return names[nnames] ? names[nnames++] : "";
}

unsigned mock_gpu_work(const struct mock_gpu_work *w)
{
	static unsigned next_corr = 1;
	uint32_t tid = (uint32_t)syscall(SYS_gettid);
	unsigned corr;
	int any = 0;

	if (!w->corr)	/* the call's exit, as far as CUPTI's callbacks go */
		api_exit(w->graph_node ? CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch :
			 w->kind == MOCK_WORK_KERNEL ? CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel :
			 w->kind == MOCK_WORK_MEMCPY ? CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2 :
			 CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2);
	pthread_mutex_lock(&mu);
	for (int k = 0; k < 128; k++)
		any |= kind_on[k];
	if (!req || !any) {
		pthread_mutex_unlock(&mu);
		return 0;
	}
	corr = w->corr ? w->corr : next_corr++;
	if (!w->corr && (kind_on[CUPTI_ACTIVITY_KIND_DRIVER] || driver_ids > 0)) {
		CUpti_ActivityAPI a;

		memset(&a, 0, sizeof(a));
		a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
		a.cbid = w->graph_node ? CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch :
			 w->kind == MOCK_WORK_KERNEL ? CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel :
			 w->kind == MOCK_WORK_MEMCPY ? CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2 :
			 CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2;
		a.start = w->api_start;
		a.end = w->api_end;
		a.correlationId = corr;
		a.threadId = tid;
		put(&a, sizeof(a));
	}
	if (w->kind == MOCK_WORK_KERNEL && kind_on[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]) {
		CUpti_ActivityKernel10 k;

		memset(&k, 0, sizeof(k));
		k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
		k.start = w->start;
		k.end = w->end;
		k.correlationId = corr;
		k.gridX = (int32_t)w->grid[0];
		k.gridY = (int32_t)w->grid[1];
		k.gridZ = (int32_t)w->grid[2];
		k.blockX = (int32_t)w->block[0];
		k.blockY = (int32_t)w->block[1];
		k.blockZ = (int32_t)w->block[2];
		k.streamId = w->stream;
		k.deviceId = w->device;
		k.contextId = w->context;
		k.graphNodeId = w->graph_node;
		k.name = intern_name(w->name ? w->name : "");
		put(&k, sizeof(k));
	} else if (w->kind == MOCK_WORK_MEMCPY && kind_on[CUPTI_ACTIVITY_KIND_MEMCPY]) {
		CUpti_ActivityMemcpy6 c;

		memset(&c, 0, sizeof(c));
		c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
		c.copyKind = (uint8_t)w->copy_kind;
		c.bytes = w->bytes;
		c.start = w->start;
		c.end = w->end;
		c.correlationId = corr;
		c.streamId = w->stream;
		c.deviceId = w->device;
		c.contextId = w->context;
		put(&c, sizeof(c));
	} else if (w->kind == MOCK_WORK_MEMSET && kind_on[CUPTI_ACTIVITY_KIND_MEMSET]) {
		CUpti_ActivityMemset4 s;

		memset(&s, 0, sizeof(s));
		s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
		s.bytes = w->bytes;
		s.start = w->start;
		s.end = w->end;
		s.correlationId = corr;
		s.streamId = w->stream;
		s.deviceId = w->device;
		s.contextId = w->context;
		put(&s, sizeof(s));
	}
	pthread_mutex_unlock(&mu);
	return corr;
}

CUptiResult cuptiGetGraphNodeId(CUgraphNode node, uint64_t *id)
{
	if (!node || !id)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*id = (uint64_t)(uintptr_t)node;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetGraphId(CUgraph graph, uint32_t *id)
{
	if (!graph || !id)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*id = (uint32_t)(uintptr_t)graph;
	return CUPTI_SUCCESS;
}

void mock_graph_node(unsigned long long node, unsigned long long original, unsigned graph)
{
	CUpti_CallbackId cbid = original ? CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED : CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED;
	CUpti_GraphData gd;
	CUpti_ResourceData rd;
	CUpti_CallbackFunc cb;
	void *ud;
	int on;

	pthread_mutex_lock(&mu);
	on = subscribed && res_on[cbid];
	cb = sub_cb;
	ud = sub_ud;
	pthread_mutex_unlock(&mu);
	if (!on || !cb)
		return;
	memset(&gd, 0, sizeof(gd));
	gd.graph = (CUgraph)(uintptr_t)graph;
	gd.node = (CUgraphNode)(uintptr_t)node;
	gd.originalNode = (CUgraphNode)(uintptr_t)original;
	gd.nodeType = CU_GRAPH_NODE_TYPE_KERNEL;
	memset(&rd, 0, sizeof(rd));
	rd.resourceDescriptor = &gd;
	/* outside mu, as CUPTI calls the subscriber in the calling thread */
	cb(ud, CUPTI_CB_DOMAIN_RESOURCE, cbid, &rd);
}

/* A range's name, kept for the life of the process (the agent reads it
 * when the buffer completes); NULL when out of memory. */
static const char *keep_marker_name(const char *name)
{
	static char **kept;
	static size_t nkept, cap;
	char *copy;

	if (nkept == cap) {
		char **k = realloc(kept, (cap ? cap * 2 : 64) * sizeof(*k));

		if (!k)
			return NULL;
		kept = k;
		cap = cap ? cap * 2 : 64;
	}
	copy = strdup(name);
	if (copy)
		kept[nkept++] = copy;
	return copy;
}

unsigned mock_nvtx_range_record(const char *name, unsigned long long start, unsigned long long end)
{
	static unsigned next_id = 1u << 30;	/* apart from mock_emit's ids */
	uint32_t tid;
	unsigned id;

	pthread_mutex_lock(&mu);
	if (!req || !kind_on[CUPTI_ACTIVITY_KIND_MARKER] || !(name = keep_marker_name(name))) {
		pthread_mutex_unlock(&mu);
		return 0;
	}
	id = next_id++;
	tid = (uint32_t)syscall(SYS_gettid);
	put_marker(CUPTI_ACTIVITY_FLAG_MARKER_START, start, id, tid, name);
	put_marker(CUPTI_ACTIVITY_FLAG_MARKER_END, end, id, tid, NULL);
	pthread_mutex_unlock(&mu);
	return id;
}

static void *completer(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	if (done)
		complete_current();
	pthread_mutex_unlock(&mu);
	return NULL;
}

/* Completes the current buffer from another thread, as CUPTI's own does. */
void mock_complete_async(void)
{
	pthread_t t;

	if (!pthread_create(&t, NULL, completer, NULL))
		pthread_join(t, NULL);
}

void mock_state(struct mock_state *s)
{
	pthread_mutex_lock(&mu);
	s->subscribed = subscribed;
	s->kinds = 0;
	for (int k = 0; k < 128; k++)
		s->kinds += kind_on[k];
	s->driver_ids = driver_ids;
	s->order_errors = order_errors;
	s->subscribes = subscribes;
	s->unsubscribes = unsubscribes;
	s->flushes = flushes;
	s->nvtx_inits = nvtx_inits;
	s->nvtx_cbs = 0;
	for (int c = 0; c < CUPTI_CBID_NVTX_SIZE; c++)
		s->nvtx_cbs += nvtx_on[c];
	s->nvtx_calls = nvtx_calls;
	s->finalizes = finalizes;
	s->api_domains = api_domains;
	pthread_mutex_unlock(&mu);
}

int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t))
{
	(void)get_export_table;
	pthread_mutex_lock(&mu);
	nvtx_inits++;
	pthread_mutex_unlock(&mu);
	return 1;
}

/* ------------------------------------------------------------ NVTX */

static __thread int nvtx_depth;		/* push depth of the calling thread */
static unsigned long long next_range_id = 1;	/* nvtxRangeStart's ids */
static char domain_names[16][64];	/* domains created, by handle index */
static char domains[16];		/* their handles: &domains[i] */
static char strings[64];		/* registered strings' handles: &strings[i] */
static int nstrings;

/* The subscriber's NVTX callback for one call, when enabled (outside mu, as
 * the agent may call into CUPTI). */
static void nvtx_report(CUpti_CallbackId cbid, const char *fn, const void *params, const void *ret)
{
	CUpti_NvtxData d = { .functionName = fn, .functionParams = params, .functionReturnValue = ret };
	CUpti_CallbackFunc cb;
	void *ud;

	pthread_mutex_lock(&mu);
	cb = nvtx_inits && subscribed && nvtx_on[cbid] ? sub_cb : NULL;
	ud = sub_ud;
	nvtx_calls += !!cb;
	pthread_mutex_unlock(&mu);
	if (cb)
		cb(ud, CUPTI_CB_DOMAIN_NVTX, cbid, &d);
}

/* s (UTF-8) as wide characters, through the C library's own decoder. */
static wchar_t *widen(const char *s)
{
	static locale_t utf8;
	size_t n = strlen(s) + 1;
	wchar_t *w = calloc(n, sizeof(*w));
	locale_t old;

	if (!utf8)
		utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	if (!w || !utf8)
		abort();
	old = uselocale(utf8);
	if (mbstowcs(w, s, n) == (size_t)-1)
		abort();
	uselocale(old);
	return w;
}

void *mock_nvtx_domain(const char *name, int wide)
{
	wchar_t *w = wide ? widen(name) : NULL;
	nvtxDomainHandle_t h = NULL;
	int i, free_i = -1;

	pthread_mutex_lock(&mu);
	for (i = 0; i < 16; i++) {
		if (!strcmp(domain_names[i], name))
			break;
		if (free_i < 0 && !domain_names[i][0])
			free_i = i;
	}
	if (i == 16 && free_i >= 0)	/* NVTX: one handle per name */
		snprintf(domain_names[i = free_i], sizeof(domain_names[0]), "%s", name);
	if (i < 16)
		h = (nvtxDomainHandle_t)&domains[i];
	pthread_mutex_unlock(&mu);
	if (wide) {
		const wchar_t *params = w;	/* nvtxDomainCreateW_params: { const wchar_t *name; } */

		nvtx_report(CUPTI_CBID_NVTX_nvtxDomainCreateW, "nvtxDomainCreateW", &params, &h);
	} else {
		nvtxDomainCreateA_params p = { name };

		nvtx_report(CUPTI_CBID_NVTX_nvtxDomainCreateA, "nvtxDomainCreateA", &p, &h);
	}
	free(w);
	return h;
}

void mock_nvtx_domain_destroy(void *domain)
{
	nvtxDomainDestroy_params p = { domain };

	nvtx_report(CUPTI_CBID_NVTX_nvtxDomainDestroy, "nvtxDomainDestroy", &p, NULL);
	pthread_mutex_lock(&mu);
	if (domain)
		domain_names[(char *)domain - domains][0] = 0;
	pthread_mutex_unlock(&mu);
}

void *mock_nvtx_register(void *domain, const char *s, int wide)
{
	nvtxStringHandle_t h;

	pthread_mutex_lock(&mu);
	h = (nvtxStringHandle_t)&strings[nstrings++ % 64];
	pthread_mutex_unlock(&mu);
	if (wide) {
		/* the header types its string as char: it is wchar_t */
		struct { nvtxDomainHandle_t domain; const wchar_t *string; } p = { domain, widen(s) };

		nvtx_report(CUPTI_CBID_NVTX_nvtxDomainRegisterStringW, "nvtxDomainRegisterStringW", &p, &h);
		free((void *)p.string);
	} else {
		nvtxDomainRegisterStringA_params p = { domain, s };

		nvtx_report(CUPTI_CBID_NVTX_nvtxDomainRegisterStringA, "nvtxDomainRegisterStringA", &p, &h);
	}
	return h;
}

/* Event attributes carrying msg as type says; *w: the wide copy to free. */
static nvtxEventAttributes_t attr_of(int type, const void *msg, wchar_t **w)
{
	nvtxEventAttributes_t a;

	memset(&a, 0, sizeof(a));
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	*w = NULL;
	switch (type) {
	case MOCK_NVTX_EX_W:
		a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
		a.message.unicode = *w = widen(msg);
		break;
	case MOCK_NVTX_EX_REG:
		a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
		a.message.registered = (nvtxStringHandle_t)msg;
		break;
	default:
		a.messageType = NVTX_MESSAGE_TYPE_ASCII;
		a.message.ascii = msg;
		break;
	}
	return a;
}

int mock_nvtx_push(int in_domain, void *domain, int type, const void *msg)
{
	wchar_t *w = NULL;
	nvtxEventAttributes_t a = attr_of(type, msg, &w);
	int depth = nvtx_depth++;

	if (in_domain) {
		nvtxDomainRangePushEx_params p = { domain, { &a } };

		nvtx_report(CUPTI_CBID_NVTX_nvtxDomainRangePushEx, "nvtxDomainRangePushEx", &p, &depth);
	} else if (type == MOCK_NVTX_A) {
		nvtxRangePushA_params p = { msg };

		nvtx_report(CUPTI_CBID_NVTX_nvtxRangePushA, "nvtxRangePushA", &p, &depth);
	} else if (type == MOCK_NVTX_W) {
		nvtxRangePushW_params p = { w = widen(msg) };

		nvtx_report(CUPTI_CBID_NVTX_nvtxRangePushW, "nvtxRangePushW", &p, &depth);
	} else {
		nvtxRangePushEx_params p = { &a };

		nvtx_report(CUPTI_CBID_NVTX_nvtxRangePushEx, "nvtxRangePushEx", &p, &depth);
	}
	free(w);
	return depth;
}

int mock_nvtx_pop(int in_domain, void *domain)
{
	int depth = nvtx_depth > 0 ? --nvtx_depth : -2;	/* NVTX_NO_PUSH_POP_TRACKING */

	if (in_domain) {
		nvtxDomainRangePop_params p = { domain };

		nvtx_report(CUPTI_CBID_NVTX_nvtxDomainRangePop, "nvtxDomainRangePop", &p, &depth);
	} else {
		nvtxRangePop_params p = { NULL };

		nvtx_report(CUPTI_CBID_NVTX_nvtxRangePop, "nvtxRangePop", &p, &depth);
	}
	return depth;
}

unsigned long long mock_nvtx_start(int in_domain, void *domain, int type, const void *msg)
{
	wchar_t *w = NULL;
	nvtxEventAttributes_t a = attr_of(type, msg, &w);
	nvtxRangeId_t id;

	pthread_mutex_lock(&mu);
	id = next_range_id++;
	pthread_mutex_unlock(&mu);
	if (in_domain) {
		nvtxDomainRangeStartEx_params p = { domain, { &a } };

		nvtx_report(CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, "nvtxDomainRangeStartEx", &p,
			    getenv("MOCK_NO_RANGE_ID") ? NULL : &id);
	} else if (type == MOCK_NVTX_A) {
		nvtxRangeStartA_params p = { msg };

		nvtx_report(CUPTI_CBID_NVTX_nvtxRangeStartA, "nvtxRangeStartA", &p,
			    getenv("MOCK_NO_RANGE_ID") ? NULL : &id);
	} else if (type == MOCK_NVTX_W) {
		nvtxRangeStartW_params p = { w = widen(msg) };

		nvtx_report(CUPTI_CBID_NVTX_nvtxRangeStartW, "nvtxRangeStartW", &p,
			    getenv("MOCK_NO_RANGE_ID") ? NULL : &id);
	} else {
		nvtxRangeStartEx_params p = { &a };

		nvtx_report(CUPTI_CBID_NVTX_nvtxRangeStartEx, "nvtxRangeStartEx", &p,
			    getenv("MOCK_NO_RANGE_ID") ? NULL : &id);
	}
	free(w);
	return id;
}

void mock_nvtx_end(int in_domain, void *domain, unsigned long long id)
{
	if (in_domain) {
		nvtxDomainRangeEnd_params p = { domain, { id } };

		nvtx_report(CUPTI_CBID_NVTX_nvtxDomainRangeEnd, "nvtxDomainRangeEnd", &p, NULL);
	} else {
		nvtxRangeEnd_params p = { id };

		nvtx_report(CUPTI_CBID_NVTX_nvtxRangeEnd, "nvtxRangeEnd", &p, NULL);
	}
}
