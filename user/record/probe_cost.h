/* SPDX-License-Identifier: MIT */
/*
 * The overhead budget's calibration: the measured cost of a probe hit on
 * this machine (probe_cost.c), and the BPF statistics it reads.
 */
#ifndef GTRACE_PROBE_COST_H
#define GTRACE_PROBE_COST_H

#include <stdbool.h>
#include <stdint.h>
#include "record/probes/elf_syms.h"

/* The run count and run time of the BPF program fd (the kernel's BPF
 * statistics, while enabled). False when they cannot be read. */
bool probe_cost__prog_read(int fd, uint64_t *cnt, uint64_t *ns);

/* Measures the cost of an entry hit on each kind of probed instruction
 * (hit_ns[UPROBE_INSN__COUNT]) and of a return hit (*ret_ns), in ns, with
 * uprobe_multi links when multi: calls of our own functions bare, then
 * probed by do-nothing programs, whose own run time is taken out. Returns
 * 0 or a negative errno. */
int probe_cost__measure(double *hit_ns, double *ret_ns, bool multi);

#endif
