// SPDX-License-Identifier: MIT
/*
 * The agent as NVTX's injection library (NVTX_INJECTION64_PATH may name
 * libgtrace-cupti.so too): NVTX hands itself to the agent at the program's
 * first NVTX call, and the agent hands it on to CUPTI's implementation, or
 * declines.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* RTLD_NEXT, dladdr */
#endif
#include <dlfcn.h>
#include <stdint.h>
#include <unistd.h>

#include <cupti.h>

#include "agent_ctl.h"

#define GT_EXPORT __attribute__((visibility("default")))

/*
 * NVTX injection (NVTX_INJECTION64_PATH may name this library too): forwards
 * to CUPTI's only when a recording may want this process (a private
 * directory whose recording has not ended, or the run directory: a recorder
 * that comes later gets the ranges too), so that NVTX calls stay no-ops
 * otherwise.  NVTX calls this at the first NVTX call, which may come before
 * cuInit: with capture ranges asked for, recording starts here then, so that
 * CUPTI reports that first range.  Returning 0 tells NVTX that no tool is
 * attached.
 */
typedef const void *(*gt_nvtx_export_table_fn)(uint32_t id);

GT_EXPORT int InitializeInjectionNvtx2(gt_nvtx_export_table_fn get_export_table);
/* this library's own definition: the exported name may bind to libcupti's
 * when libcupti is in the program's global scope */
extern __typeof__(InitializeInjectionNvtx2) nvtx_init_self
	__attribute__((alias("InitializeInjectionNvtx2"), visibility("hidden")));

int InitializeInjectionNvtx2(gt_nvtx_export_table_fn get_export_table)
{
	int (*cupti_init)(gt_nvtx_export_table_fn);
	struct gt_ctl c;

	if (gt_ctl__init(&c, getpid()) == GT_CTL_NONE || gt_ctl__want(&c) == GT_WANT_END)
		return 0;
	if (gt_agent__capture_spec())
		gt_agent__init_once();
	/* the next definition after this library's own: libcupti's */
	*(void **)&cupti_init = dlsym(RTLD_NEXT, "InitializeInjectionNvtx2");
	if (!cupti_init) {	/* the libcupti this library is linked to, by its path */
		Dl_info info;
		void *h;

		if (dladdr((void *)cuptiGetTimestamp, &info) && info.dli_fname &&
		    (h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD))) {
			*(void **)&cupti_init = dlsym(h, "InitializeInjectionNvtx2");
			dlclose(h);	/* drops the reference NOLOAD took; libcupti stays */
		}
	}
	if (!cupti_init || cupti_init == nvtx_init_self)
		return 0;
	return cupti_init(get_export_table);
}
