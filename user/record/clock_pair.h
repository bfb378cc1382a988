/* SPDX-License-Identifier: MIT */
/*
 * The clock pairs a trace holds for aligning it with the traces of other
 * hosts (GT_REC_CLOCK): CLOCK_REALTIME read between two CLOCK_MONOTONIC
 * reads, the kernel's NTP state (adjtimex) and the boot id.
 *
 * GTRACE_TEST_REALTIME_SHIFT_NS=N (a test knob: tests and the GPU check of
 * several hosts on one machine) adds N ns to every CLOCK_REALTIME reading
 * the recorder writes (these records and the header's offset) and makes the
 * boot id another (one per N): the trace reads as one of another host whose
 * wall clock is N ns off.
 */
#ifndef GTRACE_RECORD_CLOCK_PAIR_H
#define GTRACE_RECORD_CLOCK_PAIR_H

#include <stdint.h>
#include "bpf/gtrace_events.h"

#define GT_TEST_REALTIME_SHIFT_ENV "GTRACE_TEST_REALTIME_SHIFT_NS"

/* A pair of kind (enum gt_clock_kind) into *c, read now. */
void clock_pair__read(struct gt_clock *c, uint32_t kind);
/* The test knob's shift (0 when unset or not a number). */
int64_t clock_pair__test_shift(void);

#endif
