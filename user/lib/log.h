/* SPDX-License-Identifier: MIT */
/* Diagnostics on stderr, in tiers chosen with -v; stdout carries data only. */
#ifndef GTRACE_LOG_H
#define GTRACE_LOG_H

enum gt_log_level {
	GT_LOG_ERROR = 0,	/* always shown */
	GT_LOG_WARN,		/* always shown */
	GT_LOG_INFO,		/* shown unless -q */
	GT_LOG_VERBOSE,		/* -v */
	GT_LOG_DEBUG,		/* -vv, includes libbpf's own log (record/probes/bpf_log.h) */
};

extern int gt_log_level;

void gt_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A status line on a terminal: written over the last one, without a
 * newline; the next message (gt_log) or gt_log_status_clear() clears it
 * first, so that no message is written at the end of it. */
void gt_log_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gt_log_status_clear(void);

#define pr_err(...)	gt_log(GT_LOG_ERROR, __VA_ARGS__)
#define pr_warn(...)	gt_log(GT_LOG_WARN, __VA_ARGS__)
#define pr_info(...)	gt_log(GT_LOG_INFO, __VA_ARGS__)
#define pr_verbose(...)	gt_log(GT_LOG_VERBOSE, __VA_ARGS__)
#define pr_debug(...)	gt_log(GT_LOG_DEBUG, __VA_ARGS__)

#endif
