/* SPDX-License-Identifier: MIT */
/*
 * The load ladder of every object with uprobes (the recorder's cuda object,
 * census): uprobe_multi programs (one link per program and file, cheap to
 * detach) where the kernel has them (6.6+), else programs for one
 * perf-event uprobe per probe point. A permission error stops the ladder:
 * the second rung would fail the same way.
 */
#ifndef GTRACE_UPROBE_LADDER_H
#define GTRACE_UPROBE_LADDER_H

#include <stdbool.h>

struct uprobe_ladder_ops {
	/* opens, configures and loads the object with its uprobe programs for
	 * uprobe_multi links (multi) or per-probe links; 0 or a negative errno */
	int (*load)(void *ctx, bool multi);
	/* destroys what a failed load left, before the next rung */
	void (*unload)(void *ctx);
};

/* Loads through the ladder; *multi says which rung loaded. Returns 0 or the
 * negative errno of the last rung, with one error line printed. */
int uprobe_ladder__load(const struct uprobe_ladder_ops *ops, void *ctx, bool *multi);

#endif
