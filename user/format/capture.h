/* SPDX-License-Identifier: MIT */
/*
 * Capture control as the trace records it (docs/FORMAT.md, "Capture ranges
 * and light mode"): the names readers give the values of struct gt_capture,
 * and the capture mode the header's options say the recording ran in.  A
 * trace of a recorder that had no capture modes carries none of the options:
 * full capture, no ranges.
 */
#ifndef GTRACE_FORMAT_CAPTURE_H
#define GTRACE_FORMAT_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/gtrace_events.h"
#include "format/trace_file.h"

/* What the header's capture options say. */
struct gt_capture_mode {
	bool light;		/* capture=light: hot calls (gt_api__hot) were recorded only
				 * inside windows or while a range had the hot probes live */
	uint32_t range;		/* capture_range: GT_CAPSRC_NONE, _PROFILER or _NVTX */
	bool repeat;		/* capture_range_end=repeat[:N]: every range, not the first only */
	uint32_t repeat_max;	/* N of repeat:N, 0 when no count was given */
	uint64_t window_ns;	/* light_window_ns: how long a window lasts, 0 when not given */
	uint64_t period_ns;	/* light_period_ns: one window's start to the next's, 0 when not given */
};

/* The capture mode of a trace from its header; all zero (full, no ranges)
 * for options that do not say, or say what this build does not know. */
void gt_capture_mode__from_info(const struct gt_file_info *info, struct gt_capture_mode *m);

/* "range_open", "range_close", "window_open", "window_close", "hot_live",
 * "hot_off" for enum gt_capture_kind; NULL for another value. */
const char *gt_capture_kind__name(uint32_t kind);
/* "cudaProfilerApi", "nvtx", "window", "none" for enum gt_capture_source;
 * NULL for another value. */
const char *gt_capture_source__name(uint32_t source);
/* "refused", "exit", "cut" for one GT_CAP_F_* bit; NULL for another. */
const char *gt_capture_flag__name(uint32_t bit);
#define GT_CAP_F_KNOWN (GT_CAP_F_REFUSED | GT_CAP_F_EXIT | GT_CAP_F_CUT)

/* The flags as text: the names of the known bits in bit order, separated by
 * sep, then the unknown ones as one hex number ("exit|0x10"); "" for 0.
 * Cut to fit len (> 0) bytes with the NUL; returns buf. */
char *gt_capture_flags__text(uint32_t flags, const char *sep, char *buf, size_t len);

/* A time for people: "850 ns", "12.3 us", "4.5 ms", "2.4 s". Returns buf. */
char *gt_ns__text(uint64_t ns, char *buf, size_t len);
/* The mode in words: "full", "light, windows of 200.0 ms every 5.0 s",
 * "full, capture ranges of cudaProfilerApi, repeat:3". Returns buf. */
char *gt_capture_mode__text(const struct gt_capture_mode *m, char *buf, size_t len);

#endif
