// SPDX-License-Identifier: MIT
/*
 * A library for the injector's tests (test_inject): loaded into a running
 * process, its constructor appends "loaded PID" to the file named by
 * INJECT_PROBE_OUT in that process' environment, after sleeping
 * INJECT_PROBE_SLEEP_MS when that is set (a dlopen that outlasts the wait);
 * inject_probe_say(ARG), called in the process by the injector, appends
 * "said ARG" and returns 42; inject_probe_hold() opens /dev/null and keeps
 * it (the process' next descriptor is another number from then on);
 * inject_probe_tid() returns the thread it runs in; inject_probe_crash()
 * reads address 0x5c (a fault in the loaded library, as CUPTI took one in a
 * JAX job).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((constructor)) static void probe_loaded(void)
{
	const char *out = getenv("INJECT_PROBE_OUT");
	char line[64];
	int fd, n;

	if (!out)
		return;
	if (getenv("INJECT_PROBE_SLEEP_MS"))
		usleep((useconds_t)atoi(getenv("INJECT_PROBE_SLEEP_MS")) * 1000);
	fd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	n = snprintf(line, sizeof(line), "loaded %d\n", (int)getpid());
	if (write(fd, line, (size_t)n) != n)
		n = -1;
	close(fd);
}

__attribute__((visibility("default"))) int inject_probe_say(const char *arg)
{
	const char *out = getenv("INJECT_PROBE_OUT");
	char line[256];
	int fd, n;

	if (!out)
		return -1;
	fd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	n = snprintf(line, sizeof(line), "said %s\n", arg ? arg : "(null)");
	if (write(fd, line, (size_t)n) != n)
		n = -1;
	close(fd);
	return 42;
}

__attribute__((visibility("default"))) int inject_probe_hold(const char *arg)
{
	(void)arg;
	return open("/dev/null", O_RDONLY);
}

/* The thread it was called in (the one the injector borrowed). */
__attribute__((visibility("default"))) long inject_probe_tid(const char *arg)
{
	(void)arg;
	return syscall(SYS_gettid);
}

/* A read of a small address through a null structure pointer. */
__attribute__((visibility("default"))) int inject_probe_crash(const char *arg)
{
	volatile const int *p = (volatile const int *)(uintptr_t)0x5c;

	(void)arg;
	return *p;
}
