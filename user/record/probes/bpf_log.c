// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <bpf/libbpf.h>
#include "lib/log.h"
#include "record/probes/bpf_log.h"

int bpf_log__tier(int level)
{
	return level == LIBBPF_WARN ? GT_LOG_VERBOSE : GT_LOG_DEBUG;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	int want = bpf_log__tier(level);

	if (want > gt_log_level)
		return 0;
	fputs("libbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

void bpf_log__setup(void)
{
	libbpf_set_print(libbpf_print);
}
