// SPDX-License-Identifier: MIT
/*
 * Plays a CUDA program with the agent injected, over the mock libcupti:
 *   agent_driver AGENT STEPS
 * loads AGENT as the CUDA driver would and runs STEPS, one letter each:
 *   i  InitializeInjection()            n  InitializeInjectionNvtx2()
 *   e  100 kernels (+ copy, set, range)  E  2000 x e
 *   c  CUPTI's thread completes the current buffer
 *   s  sleep 500 ms                     S  create $GTRACE_CUPTI_DIR/stop
 *   f  fork a child that exits          x  _exit(0) (no exit handlers)
 *   q  print the mock's state as key=value
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mock_api.h"

int main(int argc, char **argv)
{
	int (*init)(void), (*nvtx)(const void *(*)(unsigned));
	unsigned corr = 1;
	struct mock_state s;
	void *h;

	if (argc != 3) {
		fprintf(stderr, "usage: %s AGENT STEPS\n", argv[0]);
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 2;
	}
	*(void **)&init = dlsym(h, "InitializeInjection");
	*(void **)&nvtx = dlsym(h, "InitializeInjectionNvtx2");
	if (!init || !nvtx) {
		fprintf(stderr, "the agent does not export its entry points\n");
		return 2;
	}
	for (const char *p = argv[2]; *p; p++) {
		switch (*p) {
		case 'i': printf("init=%d\n", init()); break;
		case 'n': printf("nvtx=%d\n", nvtx(NULL)); break;
		case 'e': mock_emit(100, corr); corr += 1000; break;
		case 'E':
			for (int j = 0; j < 2000; j++, corr += 1000)
				mock_emit(100, corr);
			break;
		case 'c': mock_complete_async(); break;
		case 's': usleep(500000); break;
		case 'S': {
			char path[4200];
			FILE *f;

			snprintf(path, sizeof(path), "%s/stop", getenv("GTRACE_CUPTI_DIR"));
			f = fopen(path, "w");
			if (f)
				fclose(f);
			break;
		}
		case 'f': {
			pid_t pid;

			fflush(stdout);
			pid = fork();
			if (pid == 0)
				exit(0);
			waitpid(pid, NULL, 0);
			break;
		}
		case 'q':
			mock_state(&s);
			printf("subscribed=%d kinds=%d driver_ids=%d order_errors=%d subscribes=%d "
			       "unsubscribes=%d flushes=%d nvtx_inits=%d\n", s.subscribed, s.kinds,
			       s.driver_ids, s.order_errors, s.subscribes, s.unsubscribes, s.flushes,
			       s.nvtx_inits);
			break;
		case 'x': fflush(stdout); fflush(stderr); _exit(0);
		}
	}
	return 0;
}
