/* The floor of any CUPTI tracer, for the overhead benchmark: an injection
 * library (CUDA_INJECTION64_PATH) that enables CUPTI_ACTIVITY_KIND_
 * CONCURRENT_KERNEL and nothing else, hands CUPTI 8 MiB buffers and only
 * counts the records it gets back; at exit it flushes and prints the count
 * on stderr ("bare_cupti: N kernel records, D dropped").
 * Build: gcc -O2 -shared -fPIC -I$CUDA/include bare_cupti.c -L$CUDA/lib64 -lcupti
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cupti.h>

#define BUF_SIZE (8u << 20)

static volatile uint64_t n_kernels, n_dropped;

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	*buf = aligned_alloc(8, BUF_SIZE);
	*size = *buf ? BUF_SIZE : 0;
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buf, size_t size,
				      size_t valid)
{
	CUpti_Activity *rec = NULL;
	size_t dropped = 0;

	(void)stream_id;
	(void)size;
	while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS)
		if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			__atomic_add_fetch(&n_kernels, 1, __ATOMIC_RELAXED);
	if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS)
		__atomic_add_fetch(&n_dropped, dropped, __ATOMIC_RELAXED);
	free(buf);
}

static void at_exit(void)
{
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	fprintf(stderr, "bare_cupti: %llu kernel records, %llu dropped\n",
		(unsigned long long)n_kernels, (unsigned long long)n_dropped);
}

int InitializeInjection(void)
{
	if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
		fprintf(stderr, "bare_cupti: CUPTI refused the kernel activity\n");
		return 0;
	}
	atexit(at_exit);
	return 1;
}
