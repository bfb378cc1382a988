// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>
#include "lib/log.h"
#include "record/probes/uprobe_ladder.h"

int uprobe_ladder__load(const struct uprobe_ladder_ops *ops, void *ctx, bool *multi)
{
	int err;

	*multi = true;
	err = ops->load(ctx, true);
	if (err && err != -EPERM && err != -EACCES) {
		pr_verbose("uprobe_multi programs did not load (%s): using one link per probe",
			   strerror(-err));
		ops->unload(ctx);
		*multi = false;
		err = ops->load(ctx, false);
	}
	if (err) {
		if (err == -EPERM || err == -EACCES)
			pr_err("failed to load BPF programs: %s: run as root (or with CAP_BPF and CAP_PERFMON)",
			       strerror(-err));
		else
			pr_err("failed to load BPF programs: %s (run with -vv for the verifier log)",
			       strerror(-err));
	}
	return err;
}
