// SPDX-License-Identifier: MIT
/*
 * Known ioctls and sleeps, for the ioctl and scheduler recording tests on a
 * machine without a GPU: the tests point the recorder at /dev/null's major
 * with --ioctl-majors.
 *   ioctl_workload IOCTLS SLEEPS SLEEP_MS
 * Issues IOCTLS ioctls on /dev/null cycling through three request numbers
 * (each fails with ENOTTY), then sleeps SLEEPS times SLEEP_MS, and prints
 * one JSON line with what it did.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static long arg_num(const char *s, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > 10000000) {
		fprintf(stderr, "ioctl_workload: invalid %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const unsigned long cmds[3] = { 0x5401 /* TCGETS */, 0xc0104629 /* _IOWR('F', 0x29, 16) */,
					       0x30000001 /* a raw number, as UVM uses */ };
	long n, sleeps, ms, counts[3] = { 0 }, enotty = 0, i;
	struct timespec ts;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: ioctl_workload IOCTLS SLEEPS SLEEP_MS\n");
		return 2;
	}
	n = arg_num(argv[1], "IOCTLS");
	sleeps = arg_num(argv[2], "SLEEPS");
	ms = arg_num(argv[3], "SLEEP_MS");
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "ioctl_workload: cannot open /dev/null: %s\n", strerror(errno));
		return 1;
	}
	for (i = 0; i < n; i++) {
		char buf[64] = { 0 };

		if (ioctl(fd, cmds[i % 3], buf) < 0 && errno == ENOTTY)
			enotty++;
		counts[i % 3]++;
	}
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	for (i = 0; i < sleeps; i++)
		nanosleep(&ts, NULL);
	printf("{\"pid\":%d,\"fd\":%d,\"ioctls\":%ld,\"enotty\":%ld,\"cmds\":{\"%lu\":%ld,\"%lu\":%ld,\"%lu\":%ld},"
	       "\"sleeps\":%ld,\"sleep_ms\":%ld}\n", getpid(), fd, n, enotty, cmds[0], counts[0], cmds[1],
	       counts[1], cmds[2], counts[2], sleeps, ms);
	close(fd);
	return 0;
}
