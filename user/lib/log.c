// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
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
