// SPDX-License-Identifier: MIT
/*
 * A stand-in for libcupti, for running the agent (cupti/agent.c) on a machine
 * without a GPU.  It keeps the calls the agent makes (subscriber, kinds,
 * driver API ids, flushes), checks their order (timestamp callback before
 * any kind), and plays CUPTI's part with buffers: mock_emit() fills buffers
 * the agent lends with synthetic CUPTI 13 records and completes them when
 * full, cuptiActivityFlushAll() completes the current one.
 *
 * Environment: MOCK_CONFLICT=1 (cuptiSubscribe answers that another client
 * holds the process), MOCK_FAIL_KIND=<kind> (cuptiActivityEnable of it
 * fails), MOCK_NO_FINE=1 (cuptiActivityEnableDriverApi unsupported).
 */
#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "mock_api.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;	/* guards everything below */
static CUpti_BuffersCallbackRequestFunc req;
static CUpti_BuffersCallbackCompleteFunc done;
static CUpti_TimestampCallbackFunc clock_cb;
static int subscribed, kind_on[128], driver_ids, order_errors, subscribes, unsubscribes, flushes, nvtx_inits;
static uint8_t *cur;
static size_t cur_size, cur_used, dropped;

CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
	static char b[32];

	snprintf(b, sizeof(b), "MOCK_ERROR_%d", (int)r);
	*s = b;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc cb, void *ud)
{
	(void)cb;
	(void)ud;
	pthread_mutex_lock(&mu);
	subscribes++;
	if (!getenv("MOCK_CONFLICT"))
		subscribed = 1;
	pthread_mutex_unlock(&mu);
	if (getenv("MOCK_CONFLICT"))
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	*h = (CUpti_SubscriberHandle)0x1;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle h)
{
	(void)h;
	pthread_mutex_lock(&mu);
	subscribed = 0;
	unsubscribes++;
	pthread_mutex_unlock(&mu);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableCallback(uint32_t e, CUpti_SubscriberHandle s, CUpti_CallbackDomain d, CUpti_CallbackId c)
{
	(void)e, (void)s, (void)d, (void)c;
	return CUPTI_SUCCESS;
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

/* n kernels with their cuLaunchKernel API records, inside an NVTX range id
 * corr; then a copy, a set and a record of a kind the agent does not know. */
int mock_emit(int n, unsigned corr)
{
	CUpti_ActivityMarker2 m;
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
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MARKER;
	m.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
	m.timestamp = t;
	m.id = corr;
	m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	m.objectId.pt.threadId = tid;
	m.name = "mock range";
	put(&m, sizeof(m));
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
	m.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
	m.timestamp = clock_cb();
	m.name = NULL;
	put(&m, sizeof(m));
	pthread_mutex_unlock(&mu);
	return 1;
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
