// SPDX-License-Identifier: MIT
/*
 * Unit tests of the CUPTI agent's plumbing: the driver callbacks it
 * subscribes to (cupti/convert.c), and its buffer pool and queue
 * (cupti/ring.h), single-threaded and with several threads at once.  Needs
 * cupti.h for the callback ids, not libcupti nor a GPU.  The record
 * conversion is tested in test_cupti_convert.c.
 */
#include <pthread.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "convert.h"
#include "bpf/gtrace_api.h"
#include "ring.h"

/* ------------------------------------------------------------ driver callbacks */

static bool has_cbid(CUpti_CallbackId id)
{
	for (size_t i = 0; i < gt_cupti_driver_cbids_len; i++)
		if (gt_cupti_driver_cbids[i] == id)
			return true;
	return false;
}

static void test_driver_cbids(void **state)
{
	static const CUpti_CallbackId want[] = {
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
		CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2,
		CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2,
		CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DPeerAsync,
		CUPTI_DRIVER_TRACE_CBID_cuMemcpyBatchAsync,
		CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2,
		CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async,
		CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32Async_ptsz,
	};

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_true(has_cbid(want[i]));
	/* no GPU record of its own: not wanted */
	assert_false(has_cbid(CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc));
	assert_false(has_cbid(CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize));
	for (size_t i = 0; i < gt_cupti_driver_cbids_len; i++) {
		assert_true(gt_cupti_driver_cbids[i] > CUPTI_DRIVER_TRACE_CBID_INVALID);
		assert_true(gt_cupti_driver_cbids[i] < CUPTI_DRIVER_TRACE_CBID_SIZE);
		for (size_t j = i + 1; j < gt_cupti_driver_cbids_len; j++)
			assert_int_not_equal(gt_cupti_driver_cbids[i], gt_cupti_driver_cbids[j]);
	}
}

/* ------------------------------------------------------------ pool and queue */

/* test allocator: carves 8-aligned pieces of a static region, can fail */
static uint64_t pool_region[64 * 64 / 8];
static size_t pool_used;
static bool pool_alloc_fails;

static void *pool_alloc(size_t size)
{
	void *p;

	if (pool_alloc_fails || pool_used + size > sizeof(pool_region))
		return NULL;
	p = (uint8_t *)pool_region + pool_used;
	pool_used += size;
	return p;
}

static void test_pool(void **state)
{
	uint8_t *base = (uint8_t *)pool_region, *b[4];
	struct gt_buf_pool p;

	(void)state;
	pool_used = 0;
	pool_alloc_fails = false;
	gt_buf_pool__init(&p, 64, 4, pool_alloc);
	assert_int_equal(gt_buf_pool__index(&p, base), -1);	/* nothing made yet */
	for (int i = 0; i < 4; i++) {
		b[i] = gt_buf_pool__get(&p);
		assert_ptr_equal(b[i], base + 64 * i);	/* made on demand */
		assert_int_equal((uintptr_t)b[i] % 8, 0);
		assert_int_equal(gt_buf_pool__index(&p, b[i]), i);
	}
	assert_int_equal(pool_used, 4 * 64);
	assert_null(gt_buf_pool__get(&p));		/* max lent, no more made */
	assert_int_equal(pool_used, 4 * 64);
	assert_true(gt_buf_pool__put(&p, b[2]));
	assert_false(gt_buf_pool__put(&p, b[2]));	/* not lent twice */
	assert_false(gt_buf_pool__put(&p, base + 65));	/* not a buffer */
	assert_false(gt_buf_pool__put(&p, NULL));
	assert_ptr_equal(gt_buf_pool__get(&p), b[2]);	/* reused, not made */
	assert_true(gt_buf_pool__put(&p, b[3]));
	assert_true(gt_buf_pool__put(&p, b[1]));
	assert_ptr_equal(gt_buf_pool__get(&p), b[1]);	/* lowest first */
	assert_int_equal(pool_used, 4 * 64);

	/* an allocation that fails: NULL now, the slot stays empty */
	pool_used = 0;
	gt_buf_pool__init(&p, 64, 2, pool_alloc);
	pool_alloc_fails = true;
	assert_null(gt_buf_pool__get(&p));
	pool_alloc_fails = false;
	b[0] = gt_buf_pool__get(&p);
	assert_non_null(b[0]);
	assert_int_equal(gt_buf_pool__index(&p, b[0]), 1);
	assert_null(gt_buf_pool__get(&p));
	assert_true(gt_buf_pool__put(&p, b[0]));
	assert_ptr_equal(gt_buf_pool__get(&p), b[0]);

	/* GT_POOL_MAX buffers: every bit of the mask; max is capped there */
	pool_used = 0;
	gt_buf_pool__init(&p, 8, 1000, pool_alloc);
	for (int i = 0; i < GT_POOL_MAX; i++)
		assert_non_null(gt_buf_pool__get(&p));
	assert_null(gt_buf_pool__get(&p));
	assert_true(gt_buf_pool__put(&p, base + 8 * 63));
	assert_ptr_equal(gt_buf_pool__get(&p), base + 8 * 63);
}

static uint8_t *trimmed[8];
static unsigned ntrimmed;

static void trim_one(uint8_t *buf, size_t size)
{
	assert_int_equal(size, 64);
	assert_true(ntrimmed < 8);
	trimmed[ntrimmed++] = buf;
}

/* After a detach: every free buffer handed over once, the lent ones not;
 * all of them free again afterwards (taken without making any). */
static void test_pool_trim(void **state)
{
	uint8_t *b[4];
	struct gt_buf_pool p;

	(void)state;
	pool_used = 0;
	pool_alloc_fails = false;
	ntrimmed = 0;
	gt_buf_pool__init(&p, 64, 4, pool_alloc);
	assert_int_equal(gt_buf_pool__trim(&p, trim_one), 0);	/* none made */
	for (int i = 0; i < 4; i++)
		b[i] = gt_buf_pool__get(&p);
	assert_true(gt_buf_pool__put(&p, b[0]));
	assert_true(gt_buf_pool__put(&p, b[2]));
	assert_int_equal(gt_buf_pool__trim(&p, trim_one), 2);
	assert_int_equal(ntrimmed, 2);
	assert_ptr_equal(trimmed[0], b[0]);
	assert_ptr_equal(trimmed[1], b[2]);
	assert_false(gt_buf_pool__put(&p, b[0]));		/* free again, not lent */
	assert_ptr_equal(gt_buf_pool__get(&p), b[0]);
	assert_ptr_equal(gt_buf_pool__get(&p), b[2]);
	assert_null(gt_buf_pool__get(&p));			/* b[1], b[3] still lent */
	assert_int_equal(pool_used, 4 * 64);
	assert_int_equal(gt_buf_pool__trim(&p, trim_one), 0);
}

#define POOL_THREADS 4

static struct gt_buf_pool shared_pool;
static _Atomic int pool_errors;	/* cmocka's asserts belong to the main thread */

static void *pool_user(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100000; i++) {
		_Atomic uint8_t *b = (_Atomic uint8_t *)gt_buf_pool__get(&shared_pool);

		if (!b)
			continue;
		if (atomic_exchange(b, 1) != 0)	/* somebody else holds it too */
			pool_errors++;
		atomic_store(b, 0);
		if (!gt_buf_pool__put(&shared_pool, (uint8_t *)b))
			pool_errors++;
	}
	return NULL;
}

/* Threads taking and giving back buffers at once (program threads asking,
 * the writer giving back): no buffer lent twice, never more made than max. */
static void test_pool_threads(void **state)
{
	pthread_t t[POOL_THREADS];

	(void)state;
	memset(pool_region, 0, sizeof(pool_region));
	pool_used = 0;
	pool_alloc_fails = false;
	gt_buf_pool__init(&shared_pool, 64, 3, pool_alloc);
	for (int i = 0; i < POOL_THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, pool_user, NULL), 0);
	for (int i = 0; i < POOL_THREADS; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(pool_errors, 0);
	assert_true(pool_used <= 3 * 64);
}

static void test_ring_fifo(void **state)
{
	static struct gt_buf_ring r;
	uint8_t *buf;
	size_t valid;

	(void)state;
	gt_buf_ring__init(&r);
	assert_false(gt_buf_ring__pop(&r, &buf, &valid));
	/* several laps round the ring */
	for (size_t lap = 0; lap < 3; lap++) {
		for (size_t i = 0; i < GT_RING_CAP; i++)
			assert_true(gt_buf_ring__push(&r, (uint8_t *)(uintptr_t)(0x1000 + i), i * 8 + lap));
		assert_false(gt_buf_ring__push(&r, (uint8_t *)1, 1));	/* full */
		for (size_t i = 0; i < GT_RING_CAP; i++) {
			assert_true(gt_buf_ring__pop(&r, &buf, &valid));
			assert_ptr_equal(buf, (uint8_t *)(uintptr_t)(0x1000 + i));
			assert_int_equal(valid, i * 8 + lap);
		}
		assert_false(gt_buf_ring__pop(&r, &buf, &valid));
	}
}

#define PRODUCERS 4
#define PER_PRODUCER 200000

static struct gt_buf_ring stress_ring;

static void *producer(void *arg)
{
	uintptr_t p = (uintptr_t)arg;

	for (size_t i = 0; i < PER_PRODUCER; i++)
		while (!gt_buf_ring__push(&stress_ring, (uint8_t *)(p + 1), i))
			;	/* full: the consumer catches up */
	return NULL;
}

/* Several threads completing buffers at once (CUPTI 13 completes per-thread
 * buffers on their threads; flushes on the caller's): each entry arrives
 * once, each producer's in order. */
static void test_ring_producers(void **state)
{
	pthread_t t[PRODUCERS];
	size_t next[PRODUCERS] = { 0 }, got = 0;
	uint8_t *buf;
	size_t valid;

	(void)state;
	gt_buf_ring__init(&stress_ring);
	for (uintptr_t i = 0; i < PRODUCERS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, producer, (void *)i), 0);
	while (got < (size_t)PRODUCERS * PER_PRODUCER) {
		if (!gt_buf_ring__pop(&stress_ring, &buf, &valid))
			continue;
		uintptr_t p = (uintptr_t)buf - 1;

		assert_true(p < PRODUCERS);
		assert_int_equal(valid, next[p]);
		next[p]++;
		got++;
	}
	for (int i = 0; i < PRODUCERS; i++)
		pthread_join(t[i], NULL);
	assert_false(gt_buf_ring__pop(&stress_ring, &buf, &valid));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_driver_cbids),
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_pool_trim),
		cmocka_unit_test(test_pool_threads),
		cmocka_unit_test(test_ring_fifo),
		cmocka_unit_test(test_ring_producers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
