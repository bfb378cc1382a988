/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Discovery of libcuda and libnccl copies opened after the recorder
 * started: openat watched, matching paths reported.
 * Part of cuda.bpf.c's object, included by it once (it uses that file's
 * globals and maps, defined before the include).
 */
#ifndef GTRACE_CUDA_DISCOVERY_BPF_H
#define GTRACE_CUDA_DISCOVERY_BPF_H

/* ---- discovery of libcuda and libnccl copies opened after the recorder started ---- */

#define GT_PATH_MAX 256

struct gt_path_max {
	struct gt_path rec;
	char path[GT_PATH_MAX];
};

/* True when buf (n bytes with the NUL) ends in a component of len bytes that
 * is libcuda.so or libnccl.so, or either followed by .<anything>. Fixed
 * offsets from the end keep the verifier's work small: no scan of the
 * whole path for its last '/'. */
static __always_inline bool ends_in_lib(const char *buf, long n, int len)
{
	int start = n - 1 - len;
	char c[10];

	if (start < 0)
		return false;
	if (start > 0 && buf[(start - 1) & (GT_PATH_MAX - 1)] != '/')
		return false;
	for (int j = 0; j < 10; j++)
		c[j] = buf[(start + j) & (GT_PATH_MAX - 1)];
	/* "lib", "cuda" or "nccl", ".so": each part decided before the next,
	 * so that the verifier's states stay few */
	if (c[0] != 'l' || c[1] != 'i' || c[2] != 'b')
		return false;
	if (!(c[3] == 'c' && c[4] == 'u' && c[5] == 'd' && c[6] == 'a') &&
	    !(c[3] == 'n' && c[4] == 'c' && c[5] == 'c' && c[6] == 'l'))
		return false;
	if (c[7] != '.' || c[8] != 's' || c[9] != 'o')
		return false;
	c[0] = buf[(start + 10) & (GT_PATH_MAX - 1)];
	return c[0] == 0 || c[0] == '.';
}

/* Reports an openat of a file named libcuda.so* or libnccl.so*. The check
 * runs for every openat on the machine, so it reads at most GT_PATH_MAX
 * bytes and looks only at the file names these have (libcuda.so ..
 * libcuda.so.NNN.NNN.NN, libnccl.so.2.27.7). */
static __always_inline int check_open(const char *upath)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct gt_path_max *e;
	char buf[GT_PATH_MAX];
	bool hit = false;
	long n;
	int len;

	if (!traced(id >> 32))
		return 0;
	n = bpf_probe_read_user_str(buf, sizeof(buf), upath);
	if (n < 11 || n > GT_PATH_MAX)
		return 0;
	for (len = 10; len <= 28 && !hit; len++)
		hit = ends_in_lib(buf, n, len);
	if (!hit)
		return 0;
	e = reserve(sizeof(*e));
	if (!e)
		return 0;
	fill_hdr(&e->rec.hdr, id, GT_REC_LIBOPEN, GT_REC_ALIGN(sizeof(e->rec) + n), 0);
	e->rec.len = n;
	__builtin_memcpy(e->path, buf, sizeof(buf));
	submit(e);
	return 0;
}

/* Preferred: the openat tracepoint fires for openat only. */
SEC("tracepoint/syscalls/sys_enter_openat")
int open_tp(struct trace_event_raw_sys_enter *ctx)
{
	return check_open((const char *)ctx->args[1]);
}

/* Fallback when tracefs is unavailable: every syscall, filtered on its number. */
SEC("raw_tp/sys_enter")
int open_raw(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs;

	if (ctx->args[1] != 257 /* __NR_openat on x86-64 */)
		return 0;
	regs = (struct pt_regs *)ctx->args[0];
	return check_open((const char *)PT_REGS_PARM2_CORE_SYSCALL(regs));
}

#endif
