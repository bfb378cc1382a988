// SPDX-License-Identifier: MIT
/*
 * Unit tests of `gtrace-bpf stats` on a trace of two devices: cuda_device_sum
 * (user/stats/stats_dev.c) per process and device, peer bytes out of and
 * into each device, the calls whose device is unknown on a row of their own;
 * cuda_launch_sum and cuda_gpu_kern_sum with a Device column and a row per
 * kernel and device.  Single-device traces keep their columns (test_stats.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "decode/decode.h"
#include "stats/stats.h"
#include "format/trace_file.h"
#include "test_util.h"
#include "stats_fixtures.h"

#define CTX0 0xc000
#define CTX1 0xc100

static void gpu_kernel(uint64_t ts, uint64_t dur, uint32_t device, const char *name)
{
	size_t n = strlen(name) + 1;
	struct gt_gpu_kernel *k = hdr(GT_REC_GPU_KERNEL, GT_REC_ALIGN(sizeof(*k) + n), ts, 100, 0, 0);

	k->dur = dur;
	k->device = device;
	k->context = device + 1;
	k->stream = 7;
	k->len = (uint16_t)n;
	memcpy(k->name, name, n);
	w_put(k);
}

/* pid 100: two primary contexts; on device 0 an allocation and two launches
 * of vecAdd, on device 1 an allocation, one launch and a DtoD copy of 1000
 * bytes from device 0's memory (a peer copy 0 -> 1) and a 50 ns stream
 * wait; thread 102 launches once with no context call (device unknown).
 * GPU kernels: vecAdd 300 ns on device 0, 100 + 200 ns on device 1. */
static void write_devices(const char *path)
{
	w_open(path);
	w_str(GT_REC_CALL_STR, 1000, 100, API(cuModuleGetFunction), 0x3000, 0, "_Z6vecAddPfS_S_i");
	w_ret(1100, 100, 101, API(cuModuleGetFunction), 0, 0x4000, GT_RET_OUT);
	w_call(1200, 100, 101, API(cuDevicePrimaryCtxRetain), 0x5000, 0, 0);
	w_ret(1210, 100, 101, API(cuDevicePrimaryCtxRetain), 0, CTX0, GT_RET_OUT);
	w_call(1300, 100, 101, API(cuDevicePrimaryCtxRetain), 0x5000, 1, 0);
	w_ret(1310, 100, 101, API(cuDevicePrimaryCtxRetain), 0, CTX1, GT_RET_OUT);
	w_call_ret(1400, 5, API(cuCtxSetCurrent), CTX0, 0, 0);
	w_call(1500, 100, 101, API(cuMemAlloc_v2), 0x5000, 4096, 0);
	w_ret(1510, 100, 101, API(cuMemAlloc_v2), 0, 0x10000000, GT_RET_OUT);
	w_launch(2000, 10, 100, 101, API(cuLaunchKernel), 0x4000, 64);
	w_launch(2100, 10, 100, 101, API(cuLaunchKernel), 0x4000, 64);
	w_call_ret(2200, 5, API(cuCtxSetCurrent), CTX1, 0, 0);
	w_call(2300, 100, 101, API(cuMemAlloc_v2), 0x5000, 4096, 0);
	w_ret(2310, 100, 101, API(cuMemAlloc_v2), 0, 0x20000000, GT_RET_OUT);
	w_launch(2400, 10, 100, 101, API(cuLaunchKernel), 0x4000, 64);
	w_call_ret(2500, 20, API(cuMemcpyDtoD_v2), 0x20000000, 0x10000100, 1000);
	w_call_ret(2600, 50, API(cuStreamSynchronize), 0, 0, 0);
	w_launch(3000, 10, 100, 102, API(cuLaunchKernel), 0x4000, 64);
	gpu_kernel(3100, 300, 0, "_Z6vecAddPfS_S_i");
	gpu_kernel(3500, 100, 1, "_Z6vecAddPfS_S_i");
	gpu_kernel(3700, 200, 1, "_Z6vecAddPfS_S_i");
	w_close(true);
}

static const char *const want_csv[] = {
	"# cuda_device_sum",
	"PID,Device,Launches,Copies,Copy Bytes,Peer Out (bytes),Peer In (bytes),Sets,Syncs,"
	"Sync Time (ns),GPU Kernels,GPU Time (ns)",
	"100,0,2,0,0,1000,0,0,0,0,1,300",
	"100,1,1,1,1000,0,1000,0,1,50,2,300",
	"100,unknown,1,0,0,0,0,0,0,0,0,0",
	"",
	"# cuda_launch_sum",
	"Launches,Launches (%),Shapes,Grid,Block,Launch API,Device,Name",
	"2,50.0,1,64x1x1,256x1x1,cuLaunchKernel,0,\"vecAdd(float*, float*, float*, int)\"",
	"1,25.0,1,64x1x1,256x1x1,cuLaunchKernel,1,\"vecAdd(float*, float*, float*, int)\"",
	"1,25.0,1,64x1x1,256x1x1,cuLaunchKernel,unknown,\"vecAdd(float*, float*, float*, int)\"",
	"",
	"# cuda_gpu_kern_sum",
	"Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Device,Name",
	/* equal times: more instances first */
	"50.0,300,2,150.0,150.0,100,200,70.7,1,\"vecAdd(float*, float*, float*, int)\"",
	"50.0,300,1,300.0,300.0,300,300,0.0,0,\"vecAdd(float*, float*, float*, int)\"",
};

static void test_device_reports(void **state)
{
	const char *path = tmp_path("devices.gtrace");
	struct run r = { 0 };

	(void)state;
	write_devices(path);
	run_stats(path, "cuda_device_sum,cuda_launch_sum,cuda_gpu_kern_sum", STATS_CSV, NULL, &r);
	assert_int_equal(r.rc, 0);
	check_text(r.out, want_csv, N(want_csv));
	run_free(&r);

	/* the table says why a device is unknown */
	run_stats(path, "cuda_device_sum", STATS_TABLE, NULL, &r);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, " 100  unknown "));
	assert_non_null(strstr(r.out, "never guessed."));
	run_free(&r);
}

static int group_setup(void **state)
{
	(void)state;
	return tu_tmpdir_make("test_stats_devices");
}

static int group_teardown(void **state)
{
	static const char *const files[] = { "devices.gtrace" };

	(void)state;
	return tu_tmpdir_clean(files, N(files));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_reports),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
