/* SPDX-License-Identifier: MIT */
/* What the recorder reads of /proc/PID/stat, parsed in one place. */
#ifndef GTRACE_PROCFS_H
#define GTRACE_PROCFS_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Reads /proc/PID/stat into buf and returns where the fields after the
 * command name start (" S 1 ..."), or NULL when the process is gone or the
 * line is not what the kernel writes. The command name may hold spaces and
 * parentheses, so the fields start after its last ')'.
 */
const char *procfs__stat_fields(pid_t pid, char *buf, size_t len);

#endif
