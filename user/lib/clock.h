/* SPDX-License-Identifier: MIT */
/* A clock read in nanoseconds: every timestamp of gtrace-bpf is
 * CLOCK_MONOTONIC ns (bpf_ktime_get_ns in BPF). */
#ifndef GTRACE_CLOCK_H
#define GTRACE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock__ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t clock__mono_ns(void)
{
	return clock__ns(CLOCK_MONOTONIC);
}

#endif
