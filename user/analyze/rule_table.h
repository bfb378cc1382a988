/* SPDX-License-Identifier: MIT */
/*
 * The rules of `gtrace-bpf analyze`, one row each: the one list the enum,
 * the stable ids (JSON, --help, docs), what each finds and its fix come
 * from. A rule's thresholds and its test are in analyze_rules.c (rules());
 * its severity is the cost's share of the scope (high from 20 %, medium
 * from 5 %). Adding a rule: a row here, its test there, and the lists of
 * README.md, docs/man/gtrace-bpf.1 and user/analyze/README.md, which
 * tests/integration/test_docs.sh holds against this table.
 *
 * AZ_RULE(NAME, id, what it finds (for the reader of this table and the
 * docs), the fix shown with a finding)
 */

AZ_RULE(GPU_TIME_UTIL, "gpu_time_util",
	"GPU busy under half of its active time",
	"Keep the GPU fed: see what its idle time waited for (the idle split) and launch ahead of"
	" it: fewer synchronizations, larger batches, CUDA graphs, host work overlapped with GPU "
	"work.")
AZ_RULE(GPU_GAPS, "gpu_gaps",
	"GPU idle gaps of 500 ms or more",
	"Find what the host did in the gaps (the examples): data loading, checkpointing, logging "
	"or evaluation on the critical path; move it off or overlap it.")
AZ_RULE(LAUNCH_BOUND, "launch_bound",
	"kernels shorter than their launches, the GPU idle between them",
	"Launch fewer, larger kernels: fuse them (torch.compile, custom kernels), batch the work,"
	" or capture the loop in a CUDA graph.")
AZ_RULE(CUDA_API_SYNC, "cuda_api_sync",
	"synchronizing calls the GPU drained and idled behind",
	"Synchronize less: let streams wait on events (cuStreamWaitEvent) instead of the host, "
	"and check results outside the hot loop.")
AZ_RULE(SYNC_IN_LOOP, "sync_in_loop",
	"a synchronization after every launch or every few",
	"Take the synchronization out of the loop: check results every N steps, or record an "
	"event and query it later.")
AZ_RULE(MEMCPY_SYNC, "cuda_memcpy_sync",
	"blocking copies between host and device among the launches",
	"Copy with cudaMemcpyAsync from pinned memory on a stream and synchronize once, or keep "
	"the data on the GPU.")
AZ_RULE(MEMCPY_ASYNC, "cuda_memcpy_async",
	"async copies of pageable host memory (the driver makes them synchronous)",
	"Allocate the host buffers pinned (cudaMallocHost, pin_memory=True): async copies of "
	"pageable memory are staged and do not overlap.")
AZ_RULE(MEMSET_SYNC, "cuda_memset_sync",
	"synchronous sets among the launches",
	"Use cudaMemsetAsync on the stream of the work that needs it.")
AZ_RULE(SMALL_GRID, "small_grid",
	"grids of fewer blocks than the GPU has SMs",
	"Give each kernel enough blocks to fill the SMs (larger batches or smaller tiles), or run"
	" independent small kernels side by side on several streams.")
AZ_RULE(SINGLE_STREAM, "single_stream",
	"all GPU work on one stream, with work that could overlap",
	"Put independent work on streams of its own (copies apart from compute, independent "
	"kernels side by side) so that it can overlap.")
AZ_RULE(DEFAULT_STREAM, "default_stream",
	"the legacy default stream beside others, which it serializes with",
	"Launch on created non-blocking streams, or build with --default-stream per-thread: the "
	"legacy default stream waits for every other stream.")
AZ_RULE(HOST_STALL, "host_stall",
	"the GPU idle while the host was outside CUDA",
	"Overlap the host work with the GPU: prefetch input (DataLoader workers, pinned memory), "
	"defer logging and checkpoints, or move the work off the launching thread.")
AZ_RULE(NCCL_WAIT, "nccl_wait",
	"a rank arrived at its collectives before the last rank and waited for it",
	"Look at the rank it waited for (nccl_straggler there): balance the work between ranks "
	"(data sharding, uneven batches), or overlap the communication with compute (bucketed "
	"all-reduce, async collectives).")
AZ_RULE(SYNC_SITE, "sync_site",
	"who synchronized: the call sites where the host waited most in synchronize calls (--stacks)",
	"Remove or defer the synchronization at the site named (a result read back, a print or "
	"check of a GPU value, an explicit synchronize): check results every N steps, or record an "
	"event and query it later.")
AZ_RULE(NCCL_STRAGGLER, "nccl_straggler",
	"the rank that came last to collectives, which the others waited for",
	"Find what delays this rank before its collectives (its host gaps, data loading, a slower"
	" or busier device, uneven work) and even it out: every other rank of the communicator "
	"waits for it.")
