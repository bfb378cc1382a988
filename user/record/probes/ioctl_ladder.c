// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "record/probes/ioctl_ladder.h"

int ioctl_ladder__plan(const struct ioctl_caps *c, enum gt_ioctl_rung *plan, int max)
{
	bool syms = c->nv_sym || c->uvm_sym;
	int n = 0;

	if (max < 1)
		return 0;
	if (c->kprobes && syms && n < max - 1)
		plan[n++] = GT_RUNG_KPROBE;
	/* fentry resolves the functions in the module's BTF, not kallsyms */
	if ((c->nv_btf || c->uvm_btf) && syms && n < max - 1)
		plan[n++] = GT_RUNG_FENTRY;
	plan[n++] = GT_RUNG_SYSCALL;
	return n;
}

/* " t nvidia_unlocked_ioctl\t[nvidia]" lines: the name is the third field. */
static void scan_kallsyms(const char *path, struct ioctl_caps *c)
{
	char line[512], name[256];
	FILE *f = fopen(path, "re");

	if (!f)
		return;
	/* the file's own block size is 1 KiB: a read a few lines */
	setvbuf(f, NULL, _IOFBF, 1 << 16);
	while (!(c->nv_sym && c->uvm_sym) && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %*s %255s", name) != 1)
			continue;
		if (!strcmp(name, GT_NV_IOCTL_FN))
			c->nv_sym = true;
		else if (!strcmp(name, GT_UVM_IOCTL_FN))
			c->uvm_sym = true;
	}
	fclose(f);
}

void ioctl_ladder__probe(struct ioctl_caps *c, const char *kallsyms, const char *btf_dir,
			 const char *kprobe_type, const char *tracefs_ioctl_id)
{
	char p[512];

	memset(c, 0, sizeof(*c));
	scan_kallsyms(kallsyms ? kallsyms : "/proc/kallsyms", c);
	btf_dir = btf_dir ? btf_dir : "/sys/kernel/btf";
	snprintf(p, sizeof(p), "%s/nvidia", btf_dir);
	c->nv_btf = !access(p, R_OK);
	snprintf(p, sizeof(p), "%s/nvidia_uvm", btf_dir);
	c->uvm_btf = !access(p, R_OK);
	/* the kprobe PMU exists only when the kernel was built with kprobes */
	c->kprobes = !access(kprobe_type ? kprobe_type : "/sys/bus/event_source/devices/kprobe/type",
			     R_OK);
	c->syscall_tp = !access(tracefs_ioctl_id ? tracefs_ioctl_id :
				"/sys/kernel/tracing/events/syscalls/sys_enter_ioctl/id", R_OK);
}

const char *ioctl_ladder__rung_name(enum gt_ioctl_rung r)
{
	switch (r) {
	case GT_RUNG_KPROBE: return "kprobe";
	case GT_RUNG_FENTRY: return "fentry";
	case GT_RUNG_SYSCALL: return "syscall";
	default: return "none";
	}
}
