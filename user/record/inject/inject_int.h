/* SPDX-License-Identifier: MIT */
/*
 * The injector's parts (record/inject): inject.c holds a thread at a system
 * call and runs the loader's calls in it; threads.c tells which threads may
 * be borrowed (those not inside the CUDA driver); py_remote.c has CPython
 * 3.14 load it.  Not for other folders.
 */
#ifndef GTRACE_INJECT_INT_H
#define GTRACE_INJECT_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>

/* Writes why (one line, when given) and returns err: every refusal and
 * failure of the injector's says why. */
static inline int inject__fail(char *why, size_t len, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static inline int inject__fail(char *why, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* What malloc calls with an arena's lock held: dlopen would wait on it. */
static inline bool unsafe_call(long nr)
{
	return nr == SYS_brk || nr == SYS_mmap || nr == SYS_munmap || nr == SYS_mremap ||
	       nr == SYS_mprotect || nr == SYS_madvise;
}

/* The executable mappings of the libraries a thread must not be borrowed
 * inside: the CUDA driver and runtime, CUPTI, NVIDIA's other user-space
 * libraries, and our agent (a thread of its own, or one in its callback).
 * The agent's start calls CUPTI, which calls the driver: on a thread that
 * is itself inside a driver call (waiting in one of its ioctls or futexes)
 * that call would be entered again from within itself.  Beside them, the
 * C and C++ runtimes' mappings, which every blocking call passes through
 * (a driver's wait is libc's pthread_cond_wait, ioctl or poll, or
 * libstdc++'s condition variable on top of it). */
#define DRV_MAX 64
struct drv_ranges {
	int n, nrt;
	uint64_t lo[DRV_MAX], hi[DRV_MAX];
	uint64_t rt_lo[DRV_MAX], rt_hi[DRV_MAX];
	uint64_t x_lo[DRV_MAX * 4], x_hi[DRV_MAX * 4];	/* every executable mapping */
	int nx;
};

enum drv_where {
	DRV_OUT,	/* nothing of the driver's on its stack */
	DRV_MAYBE,	/* a word deeper in its stack points into it: a call in
			 * progress, or a function pointer or stale value */
	DRV_IN,		/* its call was made by the driver */
};

/* d's ranges read from pid's /proc/PID/maps. */
void inject__driver_ranges(pid_t pid, struct drv_ranges *d);
/* Where the thread stopped (or blocked) with stack pointer sp at pc is (threads.c). */
enum drv_where inject__in_driver(pid_t pid, const struct drv_ranges *d, uint64_t sp, uint64_t pc);
/* The threads of pid that may be borrowed now, best first (threads.c). */
int inject__pick_threads(pid_t pid, const struct drv_ranges *d, bool inside, pid_t *out, int max, int *skipped);

#endif
