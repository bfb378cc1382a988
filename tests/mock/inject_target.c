// SPDX-License-Identifier: MIT
/*
 * A running program for the injector's tests (test_inject): prints
 * "ready PID", then for SECONDS seconds sums a fixed floating-point series
 * (kept in vector registers across each 1 ms nanosleep and each read of a
 * pipe that has no data, the system calls it is stopped at), counting its
 * rounds; exits 0 and prints "ok ROUNDS" when every round's sum came out
 * the same, "bad ROUND" (status 1) at the first that did not. SIGUSR1
 * ends the SECONDS early (the round it interrupted still checked).
 */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_usr1(int sig)
{
	(void)sig;
	stop = 1;
}

static double __attribute__((noinline)) series(int n)
{
	double s = 0;

	for (int i = 1; i <= n; i++)
		s += 1.0 / ((double)i * (double)i);
	return s;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5, want = series(1000);
	struct timespec ms = { 0, 1000000 }, t0, t;
	long rounds = 0;
	int p[2];
	char c;

	struct sigaction sa = { .sa_handler = on_usr1 };

	if (pipe2(p, O_NONBLOCK) || sigaction(SIGUSR1, &sa, NULL))
		return 2;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		double a = series(1000);

		nanosleep(&ms, NULL);
		if (read(p[0], &c, 1) != -1 || errno != EAGAIN)
			return 3;
		if (a != want || series(1000) != want) {
			printf("bad %ld\n", rounds);
			return 1;
		}
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (!stop && (double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	printf("ok %ld\n", rounds);
	return 0;
}
