// SPDX-License-Identifier: MIT
/*
 * A running program for the injector's tests (test_inject): its main thread
 * waits inside a "driver" (drv_wait of the library named by argv[1], a
 * libcuda.so.1 of the tests') for a byte on stdin; with argv[2] "both" a
 * second thread waits in plain 1 ms nanosleeps meanwhile. Prints "ready PID
 * MAIN_TID OTHER_TID" (OTHER_TID 0 without the second thread), then, once
 * the byte came and the thread ended, "ok" and exits 0.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop, other_tid;

static void *other(void *arg)
{
	struct timespec ms = { 0, 1000000 };

	(void)arg;
	atomic_store(&other_tid, (int)syscall(SYS_gettid));
	while (!atomic_load(&stop))
		nanosleep(&ms, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	int (*drv_wait)(int);
	pthread_t th;
	void *h;
	int both = argc > 2 && !strcmp(argv[2], "both");

	if (argc < 2 || !(h = dlopen(argv[1], RTLD_NOW)) || !(drv_wait = (int (*)(int))dlsym(h, "drv_wait")))
		return 2;
	if (both) {
		if (pthread_create(&th, NULL, other, NULL))
			return 2;
		while (!atomic_load(&other_tid))
			usleep(100);
	}
	printf("ready %d %d %d\n", (int)getpid(), (int)getpid(), atomic_load(&other_tid));
	fflush(stdout);
	if (drv_wait(0) < 0)
		return 3;
	atomic_store(&stop, 1);
	if (both)
		pthread_join(th, NULL);
	printf("ok\n");
	return 0;
}
