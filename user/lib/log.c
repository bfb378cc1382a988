// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <bpf/libbpf.h>
#include "lib/log.h"

int gt_log_level = GT_LOG_INFO;

void gt_log(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > gt_log_level)
		return;
	fputs(level == GT_LOG_WARN ? "gtrace-bpf: warning: " : "gtrace-bpf: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int gt_log__libbpf_tier(int level)
{
	return level == LIBBPF_WARN ? GT_LOG_VERBOSE : GT_LOG_DEBUG;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	int want = gt_log__libbpf_tier(level);

	if (want > gt_log_level)
		return 0;
	fputs("libbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

void gt_log__setup_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
