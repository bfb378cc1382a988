// SPDX-License-Identifier: MIT
/*
 * Which threads of a process the injector may borrow (inject_int.h): the
 * CUDA driver's, CUPTI's and the agent's code found in the process' maps,
 * each waiting thread's blocking call told made by them or not from its
 * stack, and the candidates ordered: outside the driver first, the main
 * thread first of each.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>
#include "record/inject/inject_int.h"

static bool named(const char *path, const char *const *names, size_t n)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (size_t i = 0; i < n; i++)
		if (!strncmp(base, names[i], strlen(names[i])))
			return true;
	return false;
}

static bool driver_library(const char *path)
{
	static const char *const names[] = { "libcuda.so", "libcudart", "libcupti", "libnvidia-", "libnvcuda" };

	if (strstr(path, "gtrace-agent"))	/* the agent's memfd */
		return true;
	return named(path, names, sizeof(names) / sizeof(names[0]));
}

static bool runtime_library(const char *path)
{
	static const char *const names[] = { "libc.so", "libc-", "ld-linux", "libpthread", "libstdc++",
					     "libgcc_s", "[vdso]" };

	return named(path, names, sizeof(names) / sizeof(names[0]));
}

void inject__driver_ranges(pid_t pid, struct drv_ranges *d)
{
	char path[64], line[4096], perm[8];
	unsigned long long lo, hi;
	FILE *f;
	int off;

	d->n = d->nrt = d->nx = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		off = 0;
		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %n", &lo, &hi, perm, &off) < 3 || perm[2] != 'x')
			continue;
		line[strcspn(line, "\n")] = 0;
		if (d->nx < DRV_MAX * 4) {
			d->x_lo[d->nx] = lo;
			d->x_hi[d->nx++] = hi;
		}
		if (!off)
			continue;
		if (driver_library(line + off) && d->n < DRV_MAX) {
			d->lo[d->n] = lo;
			d->hi[d->n++] = hi;
		} else if (runtime_library(line + off) && d->nrt < DRV_MAX) {
			d->rt_lo[d->nrt] = lo;
			d->rt_hi[d->nrt++] = hi;
		}
	}
	fclose(f);
}

static bool in_ranges(const uint64_t *lo, const uint64_t *hi, int n, uint64_t v)
{
	for (int i = 0; i < n; i++)
		if (v >= lo[i] && v < hi[i])
			return true;
	return false;
}



/* Where the thread stopped (or blocked) with stack pointer sp at pc is:
 * inside one of d's libraries when pc is in one, or when the first word of
 * its stack (from sp up) that points into executable code outside the C
 * and C++ runtimes points into one (the return address of whoever made
 * the blocking call, the runtimes' own frames being skipped); maybe inside
 * when a word further up (at most 256 KiB, as far as it can be read) does:
 * a return address of a call in progress, or a function pointer or a stale
 * value a frame left, which cannot be told apart without unwinding. */
enum drv_where inject__in_driver(pid_t pid, const struct drv_ranges *d, uint64_t sp, uint64_t pc)
{
	uint64_t words[512];
	size_t at = 0;
	bool first = true;

	if (!d->n)
		return DRV_OUT;
	if (in_ranges(d->lo, d->hi, d->n, pc))
		return DRV_IN;
	while (at < 256 * 1024) {
		struct iovec l = { words, sizeof(words) }, r = { (void *)(uintptr_t)(sp + at), sizeof(words) };
		ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);

		if (n <= 0)
			break;
		for (size_t i = 0; i < (size_t)n / 8; i++) {
			if (in_ranges(d->lo, d->hi, d->n, words[i]))
				return first ? DRV_IN : DRV_MAYBE;
			if (first && in_ranges(d->x_lo, d->x_hi, d->nx, words[i]) &&
			    !in_ranges(d->rt_lo, d->rt_hi, d->nrt, words[i]))
				first = false;
		}
		at += (size_t)n;
		if ((size_t)n < sizeof(words))
			break;
	}
	return DRV_OUT;
}

/* The threads of pid that may be borrowed now, best first, in out (at most
 * max): those that wait in a system call (not a memory call of malloc's)
 * that the driver did not make, those with nothing of the driver's on
 * their stack first, the main thread first of each; with inside, then
 * those whose call the driver made. *skipped counts those passed over.
 * Any thread can run dlopen: a thread that only computes (a busy loop, a
 * launch loop reading the clock in the vDSO) may make no call for a long
 * time while the others wait in theirs. */
int inject__pick_threads(pid_t pid, const struct drv_ranges *d, bool inside, pid_t *out, int max, int *skipped)
{
	char path[64], buf[256];
	pid_t maybe[64], in[64];
	struct dirent *e;
	int n = 0, nm = 0, ni = 0;
	DIR *d_;

	*skipped = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d_ = opendir(path);
	if (!d_)
		return 0;
	while ((e = readdir(d_))) {
		pid_t tid = (pid_t)strtol(e->d_name, NULL, 10);
		unsigned long long sp = 0, pc = 0;
		enum drv_where w;
		pid_t *to;
		int *k;
		long nr;
		int fd;
		ssize_t len;

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = 0;
		if (!isdigit((unsigned char)buf[0]))
			continue;	/* "running", or -1: not in a call */
		/* "NR ARG1 .. ARG6 SP PC" */
		if (sscanf(buf, "%ld %*s %*s %*s %*s %*s %*s %llx %llx", &nr, &sp, &pc) != 3 || unsafe_call(nr))
			continue;
		w = inject__in_driver(pid, d, sp, pc);
		if (w == DRV_IN && !inside) {
			(*skipped)++;
			continue;
		}
		to = w == DRV_OUT ? out : w == DRV_MAYBE ? maybe : in;
		k = w == DRV_OUT ? &n : w == DRV_MAYBE ? &nm : &ni;
		if (*k >= (w == DRV_OUT ? max : 64))
			continue;
		to[(*k)++] = tid;
		if (tid == pid && *k > 1) {	/* the main thread first */
			to[*k - 1] = to[0];
			to[0] = pid;
		}
	}
	closedir(d_);
	for (int i = 0; i < nm && n < max; i++)
		out[n++] = maybe[i];
	for (int i = 0; i < ni && n < max; i++)
		out[n++] = in[i];
	return n;
}
