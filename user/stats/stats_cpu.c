// SPDX-License-Identifier: MIT
/*
 * The reports of `gtrace-bpf stats` on the CPU side (the host's calls):
 * cuda_api_sum, cuda_launch_sum, cuda_mem_size_sum, cuda_sync_sum,
 * process_sum and ioctl_sum: their columns, notes and builders; stats.c
 * runs them and documents their columns with the others'.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "decode/decode.h"
#include "format/nv_ioctl.h"
#include "stats/stats_acc.h"
#include "stats/stats_int.h"
#include "stats/stats_report.h"

/* ---- report: cuda_api_sum ----------------------------------------------- */

const struct stats_col stats_api_cols[] = {
	TIME_COLS
	{ "Incomplete", "incomplete", SK_INT },
	{ "Name", "name", SK_STR },
};

const char *const stats_api_notes[] = {
	"Times are those of calls with an exit. Incomplete: calls whose exit was not recorded "
	"(recording stopped or the process ended inside the call); they count in Num Calls only. "
	"Launches are recorded at entry only unless the recording used --launch-exit: they count "
	"in Num Calls with no times.",
	"Med is the exact median; StdDev the sample standard deviation.",
	NULL,
};

static int cmp_api(const void *pa, const void *pb, void *ctx)
{
	const struct stats_acc *s = ctx;
	const struct dur_acc *a = &s->api[*(const uint16_t *)pa], *b = &s->api[*(const uint16_t *)pb];

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	if (a->calls != b->calls)
		return a->calls > b->calls ? -1 : 1;
	return strcmp(gt_api__name(*(const uint16_t *)pa), gt_api__name(*(const uint16_t *)pb));
}

int stats_cpu__api_sum(struct stats_acc *s, struct stats_report *r)
{
	uint16_t order[GT_API__COUNT];
	uint64_t whole = 0;
	size_t n = 0;

	for (unsigned i = 1; i < GT_API__COUNT; i++)
		if (s->api[i].calls) {
			order[n++] = (uint16_t)i;
			whole += s->api[i].total;
		}
	qsort_r(order, n, sizeof(order[0]), cmp_api, s);
	for (size_t i = 0; i < n; i++) {
		struct dur_acc *a = &s->api[order[i]];
		struct stats_cell *c = stats_report__row(r);

		if (!c)
			return -ENOMEM;
		time_cells(c, a, whole);
		c[8] = (struct stats_cell){ .u = a->incomplete };
		c[9] = (struct stats_cell){ .s = gt_api__name(order[i]) };
	}
	return 0;
}

/* ---- report: cuda_launch_sum -------------------------------------------- */

const struct stats_col stats_launch_cols[] = {
	{ "Launches", "launches", SK_INT },
	{ "Launches (%)", "launches_pct", SK_PCT },
	{ "Shapes", "shapes", SK_INT },
	{ "Grid", "grid", SK_STR },
	{ "Block", "block", SK_STR },
	{ "Launch API", "launch_api", SK_STR },
	{ "Name", "name", SK_STR },
};

const char *const stats_launch_notes[] = {
	"Launches: every launch call, failed and incomplete ones included. Shapes: distinct "
	"(grid, block) pairs; Grid and Block: the most frequent pair (the first seen on a tie).",
	NULL,
};

static int cmp_kern(const void *pa, const void *pb, void *ctx)
{
	const struct stats_acc *s = ctx;
	const struct kern_acc *a = &s->kern.v[*(const uint32_t *)pa];
	const struct kern_acc *b = &s->kern.v[*(const uint32_t *)pb];

	if (a->launches != b->launches)
		return a->launches > b->launches ? -1 : 1;
	if (strcmp(a->name, b->name))
		return strcmp(a->name, b->name);
	return (uint32_t)a->device < (uint32_t)b->device ? -1 : (uint32_t)a->device > (uint32_t)b->device;
}

/* by_device: a Device column before Name (see stats.c's write_report). */
int stats_cpu__launch_sum(struct stats_acc *s, struct stats_report *r, bool by_device)
{
	uint32_t n = s->kern.n, *order = malloc((n ? n : 1) * sizeof(*order));
	const struct shape_acc **top = calloc(n ? n : 1, sizeof(*top));
	uint64_t whole = 0;
	int err = 0;

	if (!order || !top) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		order[i] = i;
		whole += s->kern.v[i].launches;
	}
	/* the most frequent shape of each kernel, the first seen on a tie */
	for (uint32_t i = 0; i < s->shapes.n; i++) {
		const struct shape_acc *sh = &s->shapes.v[i];

		if (!top[sh->kern] || sh->count > top[sh->kern]->count)
			top[sh->kern] = sh;
	}
	qsort_r(order, n, sizeof(order[0]), cmp_kern, s);
	for (uint32_t i = 0; i < n && !err; i++) {
		const struct kern_acc *k = &s->kern.v[order[i]];
		const struct shape_acc *sh = top[order[i]];
		struct stats_cell *c = stats_report__row(r);

		if (!c) {
			err = -ENOMEM;
			break;
		}
		c[0] = (struct stats_cell){ .u = k->launches };
		c[1] = (struct stats_cell){ .d = pct(k->launches, whole) };
		c[6 + by_device] = (struct stats_cell){ .s = k->name };
		if (by_device)
			c[6] = (struct stats_cell){ .s = stats_dev__name(s, k->device) };
		if (by_device && !c[6].s)
			err = -ENOMEM;
		c[5].s = stats_acc__api_list(s, k->apis);
		c[5].none = !c[5].s;
		if (k->apis && !c[5].s)
			err = -ENOMEM;
		if (!sh)
			continue;	/* graph launches: no shape */
		c[2] = (struct stats_cell){ .u = k->nshapes };
		c[3].s = stats_acc__dim3(s, sh->grid);
		c[4].s = stats_acc__dim3(s, sh->block);
		c[3].none = !c[3].s;
		c[4].none = !c[4].s;
		if (!c[3].s || !c[4].s)
			err = -ENOMEM;
	}
out:
	free(order);
	free(top);
	return err;
}

/* ---- report: cuda_mem_size_sum ------------------------------------------ */

const struct stats_col stats_mem_cols[] = {
	{ "Total (bytes)", "total", SK_INT },
	{ "Count", "count", SK_INT },
	{ "Avg (bytes)", "avg", SK_REAL },
	{ "Med (bytes)", "med", SK_REAL },
	{ "Min (bytes)", "min", SK_INT },
	{ "Max (bytes)", "max", SK_INT },
	{ "StdDev (bytes)", "stddev", SK_REAL },
	{ "Operation", "operation", SK_STR },
};

const char *const stats_mem_notes[] = {
	"Bytes of the memcpy and memset calls by direction (as dump's \"kind\"); failed calls are "
	"left out, calls without an exit counted (their size is known at entry).",
	NULL,
};

/* ---- report: cuda_sync_sum ---------------------------------------------- */

const struct stats_col stats_sync_cols[] = {
	TIME_COLS
	{ "Incomplete", "incomplete", SK_INT },
	{ "PID", "pid", SK_ID },
	{ "Name", "name", SK_STR },
};

const char *const stats_sync_notes[] = {
	"Calls that wait for the GPU or poll it, per process: *Synchronize, *Query and "
	"cuStreamWaitEvent (which only orders the GPU: its time is the call's own cost).",
	"Times are those of calls with an exit. Incomplete: waits whose exit was not recorded "
	"(recording stopped or the process ended while waiting).",
	NULL,
};

int stats_cpu__cmp_sync(const void *pa, const void *pb)
{
	const struct sync_acc *a = *(struct sync_acc *const *)pa, *b = *(struct sync_acc *const *)pb;

	if (a->d.total != b->d.total)
		return a->d.total > b->d.total ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return strcmp(gt_api__name(a->api), gt_api__name(b->api));
}

int stats_cpu__sync_sum(struct stats_acc *s, struct stats_report *r)
{
	size_t n;
	struct sync_acc **order = (struct sync_acc **)sorted_values(&s->syncs, stats_cpu__cmp_sync, &n);
	uint64_t whole = 0;

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		whole += order[i]->d.total;
	for (size_t i = 0; i < n; i++) {
		struct stats_cell *c = stats_report__row(r);

		if (!c) {
			free(order);
			return -ENOMEM;
		}
		time_cells(c, &order[i]->d, whole);
		c[8] = (struct stats_cell){ .u = order[i]->d.incomplete };
		c[9] = (struct stats_cell){ .u = order[i]->pid };
		c[10] = (struct stats_cell){ .s = gt_api__name(order[i]->api) };
	}
	free(order);
	return 0;
}

/* ---- report: cuda_sync_site_sum ---------------------------------------- */

const struct stats_col stats_site_cols[] = {
	TIME_COLS
	{ "Incomplete", "incomplete", SK_INT },
	{ "Processes", "processes", SK_INT },
	{ "Call Site", "site", SK_STR },
};

const char *const stats_site_notes[] = {
	"The synchronizing calls of cuda_sync_sum whose stack was taken (record with --stacks "
	"sync), by call site: where the stack has Python frames, the program's innermost "
	"Python line, function (file:line) (a library's own line when every Python frame is a "
	"library's); else the first frame of the stack past the CUDA libraries (libcuda, "
	"libcudart, libcublas, ...), function+offset (file); a frame without a symbol is "
	"file+offset. Processes: how many made calls there.",
	NULL,
};

static int cmp_site(const void *pa, const void *pb)
{
	const struct site_acc *a = *(struct site_acc *const *)pa, *b = *(struct site_acc *const *)pb;

	if (a->d.total != b->d.total)
		return a->d.total > b->d.total ? -1 : 1;
	return a->stack < b->stack ? -1 : a->stack > b->stack;
}

/* The rows of a report by call site (sites, most time first; then none's,
 * when given and counted): the time columns, with incomplete the calls cut
 * short, the processes, the site. */
static int site_rows(struct stats_acc *s, struct stats_report *r, const struct hmap *sites,
		     struct dur_acc *none, bool incomplete)
{
	size_t n;
	struct site_acc **order = (struct site_acc **)sorted_values(sites, cmp_site, &n);
	uint64_t whole = none ? none->total : 0;
	unsigned col = incomplete ? 9 : 8;
	int err = 0;

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		whole += order[i]->d.total;
	for (size_t i = 0; i < n + (none && none->calls) && !err; i++) {
		struct site_acc *a = i < n ? order[i] : NULL;
		struct stats_cell *c = stats_report__row(r);
		struct gt_frame f;
		char buf[1200] = "?";

		if (!c) {
			err = -ENOMEM;
			break;
		}
		if (!a)
			snprintf(buf, sizeof(buf), "(launch without a stack)");
		else if (gt_decoder__call_site(s->d, a->stack, &f))
			gt_frame__str(&f, buf, sizeof(buf));
		time_cells(c, a ? &a->d : none, whole);
		if (incomplete)
			c[8] = (struct stats_cell){ .u = a ? a->d.incomplete : none->incomplete };
		c[col] = (struct stats_cell){ .u = a ? a->pids : 0 };
		c[col + 1] = (struct stats_cell){ .s = stats_acc__strdup(s, buf) };
		if (!c[col + 1].s)
			err = -ENOMEM;
	}
	free(order);
	return err;
}

int stats_cpu__site_sum(struct stats_acc *s, struct stats_report *r)
{
	return site_rows(s, r, &s->sites, NULL, true);
}

/* ---- report: cuda_gpu_site_sum ------------------------------------------ */

const struct stats_col stats_gsite_cols[] = {
	{ "Time (%)", "time_pct", SK_PCT },
	{ "Total Time", "total_time", SK_TIME },
	{ "Instances", "instances", SK_INT },
	{ "Avg", "avg", SK_TIMEF },
	{ "Med", "med", SK_TIMEF },
	{ "Min", "min", SK_TIME },
	{ "Max", "max", SK_TIME },
	{ "StdDev", "stddev", SK_TIMEF },
	{ "Processes", "processes", SK_INT },
	{ "Launch Site", "site", SK_STR },
};

const char *const stats_gsite_notes[] = {
	"The GPU time of the kernels of a merged trace (--cupti) by the call site of the launch "
	"that made each (record with --stacks all): the program's innermost Python line where "
	"the stack has Python frames (a library's own line when every Python frame is a "
	"library's), else the first native frame past the CUDA libraries. Kernels whose launch "
	"has no stack, or that no launch is linked to, are the row '(launch without a stack)'.",
	NULL,
};

int stats_cpu__gpu_site_sum(struct stats_acc *s, struct stats_report *r)
{
	return site_rows(s, r, &s->gsites, &s->gsite_none, false);
}

/* ---- report: process_sum ------------------------------------------------ */

const struct stats_col stats_proc_cols[] = {
	{ "PID", "pid", SK_ID },
	{ "Events", "events", SK_INT },
	{ "Calls", "calls", SK_INT },
	{ "API Time", "api_time", SK_TIME },
	{ "Launches", "launches", SK_INT },
	{ "Sync Time", "sync_time", SK_TIME },
	{ "Command", "command", SK_STR },
};

const char *const stats_proc_notes[] = {
	"Events: the process' records in the trace. API Time: summed time of its calls with an "
	"exit; Sync Time: that of its calls in cuda_sync_sum.",
	NULL,
};

static int cmp_proc(const void *pa, const void *pb)
{
	const struct proc_acc *a = *(struct proc_acc *const *)pa, *b = *(struct proc_acc *const *)pb;

	if (a->api_time != b->api_time)
		return a->api_time > b->api_time ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

int stats_cpu__proc_sum(struct stats_acc *s, struct stats_report *r,
			  const struct gt_decoder *d)
{
	size_t n;
	struct proc_acc **order = (struct proc_acc **)sorted_values(&s->procs, cmp_proc, &n);

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct proc_acc *p = order[i];
		struct stats_cell *c = stats_report__row(r);
		const char *cmd = gt_decoder__process_name(d, p->pid);

		if (!c) {
			free(order);
			return -ENOMEM;
		}
		c[0] = (struct stats_cell){ .u = p->pid };
		c[1] = (struct stats_cell){ .u = p->records };
		c[2] = (struct stats_cell){ .u = p->calls };
		/* a process whose calls all lack an exit spent an unknown time;
		 * one with no call, none */
		c[3] = (struct stats_cell){ .none = p->calls && !p->timed, .u = p->api_time };
		c[4] = (struct stats_cell){ .u = p->launches };
		c[5] = (struct stats_cell){ .u = p->sync_time };
		c[6] = (struct stats_cell){ .none = !cmd, .s = cmd };
	}
	free(order);
	return 0;
}

/* ---- report: ioctl_sum -------------------------------------------------- */

const struct stats_col stats_ioctl_cols[] = {
	TIME_COLS
	{ "Errors", "errors", SK_INT },
	{ "Device", "device", SK_STR },
	{ "Name", "name", SK_STR },
};

const char *const stats_ioctl_notes[] = {
	"ioctls on the NVIDIA devices (or those of --ioctl-majors), per device and request; "
	"for the RM control and alloc escapes also per RM command or class.",
	"Errors: calls that returned a negative errno.",
	NULL,
};

static int cmp_ioctl(const void *pa, const void *pb)
{
	const struct ioctl_acc *a = *(struct ioctl_acc *const *)pa, *b = *(struct ioctl_acc *const *)pb;

	if (a->d.total != b->d.total)
		return a->d.total > b->d.total ? -1 : 1;
	if (a->cmd != b->cmd)
		return a->cmd < b->cmd ? -1 : 1;
	return a->param < b->param ? -1 : a->param > b->param;
}

int stats_cpu__ioctl_sum(struct stats_acc *s, struct stats_report *r, const struct nv_majors *m)
{
	size_t n;
	struct ioctl_acc **order = (struct ioctl_acc **)sorted_values(&s->ioctls, cmp_ioctl, &n);
	uint64_t whole = 0;

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		whole += order[i]->d.total;
	for (size_t i = 0; i < n; i++) {
		struct ioctl_acc *a = order[i];
		struct stats_cell *c = stats_report__row(r);
		char dev[48], cmd[64], full[160];
		const char *rm = NULL;

		if (!c) {
			free(order);
			return -ENOMEM;
		}
		nv_ioctl__device_name(m, a->rdev >> 20, a->rdev & 0xfffff, dev, sizeof(dev));
		nv_ioctl__cmd_name(m, a->rdev >> 20, a->cmd, cmd, sizeof(cmd));
		if (a->flags & GT_IOCTL_RM_CONTROL)
			rm = nv_ioctl__rm_control_name(a->param);
		else if (a->flags & GT_IOCTL_RM_ALLOC)
			rm = nv_ioctl__rm_class_name(a->param);
		if (rm)
			snprintf(full, sizeof(full), "%s %s", cmd, rm);
		else if (a->flags)
			snprintf(full, sizeof(full), "%s 0x%x", cmd, a->param);
		else
			snprintf(full, sizeof(full), "%s", cmd);
		time_cells(c, &a->d, whole);
		c[8] = (struct stats_cell){ .u = a->errors };
		c[9] = (struct stats_cell){ .s = stats_acc__strdup(s, dev) };
		c[10] = (struct stats_cell){ .s = stats_acc__strdup(s, full) };
		if (!c[9].s || !c[10].s) {
			free(order);
			return -ENOMEM;
		}
	}
	free(order);
	return 0;
}
