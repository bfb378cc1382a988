// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include "lib/log.h"

int gt_log_level = GT_LOG_INFO;
static bool status_shown;	/* stderr's last line is a status line, not ended */

void gt_log_status_clear(void)
{
	if (status_shown)
		fputs("\r\033[K", stderr);
	status_shown = false;
}

void gt_log_status(const char *fmt, ...)
{
	va_list ap;

	fputs("\r\033[K", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
	status_shown = true;
}

void gt_log(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > gt_log_level)
		return;
	/* one line at a time: the daemon's snapshot writer logs from its own
	 * thread (a merge's lines) */
	flockfile(stderr);
	gt_log_status_clear();
	fputs(level == GT_LOG_WARN ? "gtrace-bpf: warning: " : "gtrace-bpf: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	funlockfile(stderr);
}
