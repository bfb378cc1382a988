/* SPDX-License-Identifier: MIT */
/* Helpers shared by the BPF programs of gtrace-bpf (BPF side only). */
#ifndef GTRACE_CUDA_BPF_H
#define GTRACE_CUDA_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "gtrace_events.h"
#include "gtrace_api.h"

/* libbpf before 1.2 has no sixth-argument accessor. */
#ifndef PT_REGS_PARM6
#if defined(__TARGET_ARCH_x86)
#define PT_REGS_PARM6(x) (((const struct pt_regs *)(x))->r9)
#else
#error "PT_REGS_PARM6 missing for this architecture"
#endif
#endif

/* Reads integer argument i (0-based) of a uprobed function at entry:
 * x86-64 SysV passes the first six in registers, the rest on the stack
 * above the return address. */
static __always_inline __u64 gt_arg(struct pt_regs *ctx, int i)
{
	__u64 v = 0;

	switch (i) {
	case 0: return PT_REGS_PARM1(ctx);
	case 1: return PT_REGS_PARM2(ctx);
	case 2: return PT_REGS_PARM3(ctx);
	case 3: return PT_REGS_PARM4(ctx);
	case 4: return PT_REGS_PARM5(ctx);
	case 5: return PT_REGS_PARM6(ctx);
	default:
		if (i < 0 || i > 15)
			return 0;
		bpf_probe_read_user(&v, sizeof(v), (void *)(PT_REGS_SP(ctx) + 8 * (i - 5)));
		return v;
	}
}

#endif
