// SPDX-License-Identifier: MIT
/*
 * What the recorder says of itself in the trace header: the host, kernel,
 * command line and the effective options (docs/FORMAT.md), and the NVIDIA
 * device majors whose ioctls it records.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include "format/nv_ioctl.h"
#include "format/trace_file.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "record/procs/cgroup_target.h"
#include "record/probes/cuda_object.h"
#include "record/probes/ioctl_ladder.h"
#include "record/clock_pair.h"
#include "record/recorder.h"
#include "record/probes/sched_ioctl_sources.h"

/* The capture keys of the header's options (docs/FORMAT.md). */
static void capture_options(const struct record_opts *o, char *buf, size_t len)
{
	static const char *const ranges[] = { "none", "cudaProfilerApi", "nvtx" };
	size_t n;

	n = snprintf(buf, len, "capture=%s capture_range=%s", o->light ? "light" : "full",
		     ranges[o->capture_range]);
	if (o->capture_range != RECORD_RANGE_NONE && n < len) {
		if (o->range_max == 1)
			n += snprintf(buf + n, len - n, " capture_range_end=stop");
		else if (o->range_max)
			n += snprintf(buf + n, len - n, " capture_range_end=repeat:%u", o->range_max);
		else
			n += snprintf(buf + n, len - n, " capture_range_end=repeat");
	}
	if (o->light && n < len)
		snprintf(buf + n, len - n, " light_window_ns=%llu light_period_ns=%llu",
			 o->capture_range == RECORD_RANGE_NONE ? (unsigned long long)o->window_ns : 0ull,
			 o->capture_range == RECORD_RANGE_NONE ? (unsigned long long)o->period_ns : 0ull);
}

void recorder__fill_info(struct recorder *r, struct gt_file_info *info, struct utsname *u, char *opts,
		      size_t len)
{
	uint64_t mono = now_ns(CLOCK_MONOTONIC), real = now_ns(CLOCK_REALTIME);

	(void)r;
	uname(u);
	memset(info, 0, sizeof(*info));
	info->version = GT_FILE_VERSION;
	info->clock_id = CLOCK_MONOTONIC;
	info->realtime_offset_ns = (int64_t)(real - mono) + clock_pair__test_shift();
	info->start_ts = mono;
	info->host = u->nodename;
	info->kernel = u->release;
	info->cmdline = r->o->cmdline ? r->o->cmdline : "";
	char majors[96] = "", sources[32] = "", capture[160];
	size_t i, n = 0, ns = 0;

	for (i = 0; i < r->nmajors; i++)
		n += snprintf(majors + n, sizeof(majors) - n, "%s%u", i ? "," : "", r->majors[i]);
	/* the sources recorded, comma-separated */
	if (r->o->trace_cuda)
		ns += snprintf(sources + ns, sizeof(sources) - ns, "cuda");
	if (r->o->trace_ioctl)
		ns += snprintf(sources + ns, sizeof(sources) - ns, "%sioctl", ns ? "," : "");
	if (r->o->trace_sched)
		ns += snprintf(sources + ns, sizeof(sources) - ns, "%ssched", ns ? "," : "");
	capture_options(r->o, capture, sizeof(capture));
	snprintf(opts, len,
		 "mode=%s %s trace=%s buffer_size=%llu duration=%g delay=%g max_size=%llu scenario=%s launch_exit=%d "
		 "uprobes=%s ioctl_rung=%s ioctl_majors=%s nv_majors=%u,%u,%u,%u,%u%s",
		 r->o->all ? "all" : r->o->cmd ? "command" : "pids", capture,
		 sources[0] ? sources : "none",
		 (unsigned long long)cuda_object__ring_size(r->o->buffer_size), r->o->duration, r->o->delay,
		 (unsigned long long)r->o->max_size, r->o->scenario ? r->o->scenario : "trace", r->o->launch_exit,
		 r->multi ? "multi" : "single",
		 ioctl_ladder__rung_name(kernel_sources__rung(r->ks)), majors[0] ? majors : "none",
		 r->nv.frontend, r->nv.uvm, r->nv.modeset, r->nv.caps, r->nv.caps_imex,
		 /* the trace (or a stage's sink) holds the agents' records as they came */
		 !r->o->cupti ? "" : " cupti=inline");
	if (r->o->stacks != RECORD_STACKS_NONE) {
		size_t n = strlen(opts);

		snprintf(opts + n, len - n, " stacks=%s", r->o->stacks == RECORD_STACKS_ALL ? "all" : "sync");
	}
	if (r->o->cupti && r->o->cupti_detach_idle) {
		size_t n = strlen(opts);

		snprintf(opts + n, len - n, " cupti_detach=idle");
	}
	if (r->cgroup) {
		char esc[3 * PATH_MAX];
		size_t n = strlen(opts);

		snprintf(opts + n, len - n, " cgroup=%s",
			 cgroup_target__escape(r->cgroup->path, esc, sizeof(esc)));
	}
	info->options = opts;
}

/* Which device majors' ioctls to record: --ioctl-majors, else NVIDIA's
 * from /proc/devices (they are allocated dynamically). */
int recorder__choose_majors(struct recorder *r)
{
	struct nv_majors m = {0};
	FILE *f;
	int n;

	if (r->o->ioctl_majors) {
		n = nv_majors__from_list(r->o->ioctl_majors, r->majors, 8);
		if (n < 0) {
			pr_err("invalid --ioctl-majors '%s' (a comma-separated list of numbers)",
			       r->o->ioctl_majors);
			return n;
		}
		r->nmajors = n;
	}
	f = fopen("/proc/devices", "re");
	if (f) {
		nv_majors__parse(f, &m);
		fclose(f);
	}
	r->frontend_major = m.frontend;
	r->nv = m;
	if (!r->o->ioctl_majors) {
		uint32_t all[] = { m.frontend, m.uvm, m.modeset, m.caps, m.caps_imex };

		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
			if (all[i])
				r->majors[r->nmajors++] = all[i];
		}
		if (!r->nmajors)
			pr_verbose("no NVIDIA character devices in /proc/devices: no ioctls to record");
	}
	return 0;
}
