/* SPDX-License-Identifier: MIT */
/* libbpf's own messages through the tiers of lib/log.h: here, not in lib/,
 * so that the readers link without libbpf. */
#ifndef GTRACE_BPF_LOG_H
#define GTRACE_BPF_LOG_H

/* Routes libbpf's messages through gt_log (debug tier, warnings as verbose). */
void bpf_log__setup(void);
/* The tier a libbpf message of this level (enum libbpf_print_level) is
 * shown at: warnings with -v, the rest with -vv. */
int bpf_log__tier(int level);

#endif
