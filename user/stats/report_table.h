/* SPDX-License-Identifier: MIT */
/*
 * The reports of `gtrace-bpf stats`, one row each, in the order they are
 * written: the one list their ids (enum stats_report_id), -r's names (and
 * --help's, the completion's, the docs', which tests/integration/test_docs.sh
 * holds against it), titles and columns come from. A new report is a row
 * here, its case in stats.c's switch of builders (build()) and the builder.
 *
 * STATS_REPORT(ID, -r name, title, what an empty one had none of, columns,
 *              notes (NULL: none), the hot-call column of light mode's sampled
 *              rows: a column index, ALL_ROWS, or NOT_HOT)
 */
STATS_REPORT(CUDA_API_SUM, "cuda_api_sum", "CUDA API Summary", "CUDA API calls", stats_api_cols,
	     stats_api_notes, 9)
STATS_REPORT(CUDA_LAUNCH_SUM, "cuda_launch_sum", "CUDA Launch Summary", "kernel launches",
	     stats_launch_cols, stats_launch_notes, ALL_ROWS)
STATS_REPORT(CUDA_MEM_SIZE_SUM, "cuda_mem_size_sum", "CUDA Memory Operation Summary (by Size)",
	     "memory copies or sets", stats_mem_cols, stats_mem_notes, ALL_ROWS)
STATS_REPORT(CUDA_SYNC_SUM, "cuda_sync_sum", "CUDA Synchronization Summary", "synchronizing calls",
	     stats_sync_cols, stats_sync_notes, 10)
STATS_REPORT(CUDA_SYNC_SITE_SUM, "cuda_sync_site_sum", "CUDA Synchronization by Call Site",
	     "synchronizing calls with a stack (record with --stacks sync)", stats_site_cols,
	     stats_site_notes, NOT_HOT)
STATS_REPORT(PROCESS_SUM, "process_sum", "Process Summary", "process records", stats_proc_cols,
	     stats_proc_notes, ALL_ROWS)
STATS_REPORT(IOCTL_SUM, "ioctl_sum", "NVIDIA Driver ioctl Summary", "ioctls", stats_ioctl_cols,
	     stats_ioctl_notes, NOT_HOT)
STATS_REPORT(CUDA_GPU_KERN_SUM, "cuda_gpu_kern_sum", "CUDA GPU Kernel Summary", "GPU records (kernels)",
	     stats_gpu_kern_cols, stats_gpu_kern_notes, NOT_HOT)
STATS_REPORT(CUDA_GPU_SITE_SUM, "cuda_gpu_site_sum", "CUDA GPU Kernel Time by Launch Site",
	     "GPU records (kernels)", stats_gsite_cols, stats_gsite_notes, NOT_HOT)
STATS_REPORT(CUDA_GPU_MEM_TIME_SUM, "cuda_gpu_mem_time_sum", "CUDA GPU MemOps Summary (by Time)",
	     "GPU records (memory copies or sets)", stats_gpu_mem_time_cols, stats_gpu_mem_time_notes,
	     NOT_HOT)
STATS_REPORT(CUDA_GPU_MEM_SIZE_SUM, "cuda_gpu_mem_size_sum", "CUDA GPU MemOps Summary (by Size)",
	     "GPU records (memory copies or sets)", stats_mem_cols, stats_gpu_mem_size_notes, NOT_HOT)
STATS_REPORT(NVTX_SUM, "nvtx_sum", "NVTX Range Summary", "NVTX ranges", stats_nvtx_cols, stats_nvtx_notes,
	     NOT_HOT)
STATS_REPORT(GPU_LAUNCH_LATENCY, "gpu_launch_latency", "GPU Launch Latency",
	     "GPU records (kernels linked to their launch)", stats_latency_cols, stats_latency_notes,
	     ALL_ROWS)
STATS_REPORT(CAPTURE_SUM, "capture_sum", "Capture Ranges and Windows",
	     "capture ranges or light-mode windows", stats_capture_cols, NULL, NOT_HOT)
STATS_REPORT(GPU_METRICS_SUM, "gpu_metrics_sum", "GPU Metrics Summary",
	     "GPU metric samples (--gpu-metrics)", stats_gpum_cols, NULL, NOT_HOT)
STATS_REPORT(CUDA_DEVICE_SUM, "cuda_device_sum", "CUDA Device Summary", "calls that run on a device",
	     stats_dev_cols, stats_dev_notes, ALL_ROWS)
STATS_REPORT(NCCL_SUM, "nccl_sum", "NCCL Summary", "NCCL calls", stats_nccl_cols, stats_nccl_notes,
	     NOT_HOT)
STATS_REPORT(HOST_SUM, "host_sum", "Host Summary (job trace)", "hosts (a job trace of merge --hosts)",
	     stats_host_cols, stats_host_notes, NOT_HOT)
