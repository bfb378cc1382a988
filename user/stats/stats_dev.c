// SPDX-License-Identifier: MIT
/*
 * cuda_device_sum of `gtrace-bpf stats`: per process and device, what the
 * process did on it (launches, copies and their bytes, peer copies out of
 * and into it, sets, the time its waits took) and, in a merged trace, the
 * kernels the GPU ran there.  A call's device is the decoder's
 * (decode/devices.c); calls whose device the trace did not show are one
 * row per process, Device "unknown".  stats.c runs it with the others.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "stats/stats_acc.h"
#include "stats/stats_int.h"
#include "stats/stats_report.h"

/* One process on one device. */
struct dev_row {
	uint32_t pid;
	int32_t device;			/* GT_DEVICE_UNKNOWN: calls the trace did not place */
	uint64_t launches, copies, copy_bytes, sets;
	uint64_t peer_out, peer_in;	/* bytes of peer copies from and to this device */
	uint64_t syncs, sync_time;	/* waits (cuda_sync_sum's calls) and their time with an exit */
	uint64_t gpu_kernels, gpu_time;	/* GPU kernel records and their summed durations */
};

struct stats_dev {
	struct hmap rows;		/* (device + 1, pid) -> struct dev_row */
	struct dev_row *last;		/* cache: a process' calls come in runs */
};

static struct dev_row *row_of(struct stats_acc *s, uint32_t pid, int32_t device)
{
	struct stats_dev *sd = s->dev;
	uint64_t k1 = (uint64_t)(uint32_t)device + 1;
	struct dev_row *r;
	void *old;

	if (!sd) {
		sd = s->dev = calloc(1, sizeof(*sd));
		if (!sd)
			return NULL;
	}
	if (sd->last && sd->last->pid == pid && sd->last->device == device)
		return sd->last;
	r = hmap_get(&sd->rows, k1 & 0xffffffffu, pid);
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return NULL;
		r->pid = pid;
		r->device = device;
		if (hmap_put(&sd->rows, k1 & 0xffffffffu, pid, r, &old)) {
			free(r);
			return NULL;
		}
	}
	return sd->last = r;
}

int stats_dev__call(struct stats_acc *s, const struct gt_callrec *c)
{
	enum gt_api_class cls;
	struct dev_row *r;

	if (!gt_callrec__on_device(c))
		return 0;
	r = row_of(s, c->pid, c->device);
	if (!r)
		return -ENOMEM;
	switch (c->type) {
	case GT_T_LAUNCH:
		r->launches++;
		break;
	case GT_T_MEMCPY:
		/* as cuda_mem_size_sum: a failed copy moved nothing */
		if (c->has_exit && c->ret)
			break;
		r->copies++;
		r->copy_bytes += c->bytes;
		if (c->kind != GT_COPY_PTOP)
			break;
		if (c->src_device >= 0 && !(r = row_of(s, c->pid, c->src_device)))
			return -ENOMEM;
		if (c->src_device >= 0)
			r->peer_out += c->bytes;
		if (c->dst_device >= 0 && !(r = row_of(s, c->pid, c->dst_device)))
			return -ENOMEM;
		if (c->dst_device >= 0)
			r->peer_in += c->bytes;
		break;
	case GT_T_MEMSET:
		if (!(c->has_exit && c->ret))
			r->sets++;
		break;
	case GT_T_SYNC:
		cls = gt_api__class(c->api);
		if (cls != GT_CLS_SYNC && cls != GT_CLS_QUERY && cls != GT_CLS_STREAM_WAIT)
			break;
		r->syncs++;
		if (c->has_exit)
			r->sync_time += c->dur;
		break;
	default:
		break;
	}
	return 0;
}

int stats_dev__gpu_kernel(struct stats_acc *s, uint32_t pid, uint32_t device, uint64_t dur)
{
	struct dev_row *r = row_of(s, pid, device <= INT32_MAX ? (int32_t)device : GT_DEVICE_UNKNOWN);

	if (!r)
		return -ENOMEM;
	r->gpu_kernels++;
	r->gpu_time += dur;
	return 0;
}

void stats_dev__free(struct stats_dev *sd)
{
	if (!sd)
		return;
	for (uint32_t i = 0; i < sd->rows.cap; i++)
		if (sd->rows.s[i].used)
			free(sd->rows.s[i].v);
	free(sd->rows.s);
	free(sd);
}

const struct stats_col stats_dev_cols[12] = {
	{ "PID", "pid", SK_ID },
	{ "Device", "device", SK_STR },
	{ "Launches", "launches", SK_INT },
	{ "Copies", "copies", SK_INT },
	{ "Copy Bytes", "copy_bytes", SK_INT },
	{ "Peer Out (bytes)", "peer_out", SK_INT },
	{ "Peer In (bytes)", "peer_in", SK_INT },
	{ "Sets", "sets", SK_INT },
	{ "Syncs", "syncs", SK_INT },
	{ "Sync Time", "sync_time", SK_TIME },
	{ "GPU Kernels", "gpu_kernels", SK_INT },
	{ "GPU Time", "gpu_time", SK_TIME },
};

const char *const stats_dev_notes[] = {
	"A call's device is its stream's or event's context's, else its thread's current "
	"context's, from the context calls the trace holds (cuDevicePrimaryCtxRetain, "
	"cuCtxCreate, cuCtxSetCurrent, cuCtxPushCurrent, cuCtxPopCurrent); Device \"unknown\": "
	"calls of threads whose context the trace did not show (the recording began after they "
	"set it), never guessed.",
	"Copies: calls that moved bytes, by the device they were issued on; Peer Out and Peer In: "
	"bytes of peer copies (cuMemcpyPeer*, and copies between allocations of two devices) "
	"from and to the device. Syncs and Sync Time: cuda_sync_sum's calls. GPU Kernels and GPU "
	"Time: kernel records of a merged trace on the device (CUPTI's device id), durations "
	"summed (overlapping kernels count twice).",
	NULL,
};

static int cmp_row(const void *pa, const void *pb)
{
	const struct dev_row *a = *(struct dev_row *const *)pa, *b = *(struct dev_row *const *)pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	/* unknown last */
	if (a->device != b->device)
		return (uint32_t)a->device < (uint32_t)b->device ? -1 : 1;
	return 0;
}

const char *stats_dev__name(struct stats_acc *s, int32_t device)
{
	char dev[16];

	if (device < 0)
		return "unknown";
	snprintf(dev, sizeof(dev), "%d", device);
	return stats_acc__strdup(s, dev);
}

int stats_dev__sum(struct stats_acc *s, struct stats_report *r)
{
	struct dev_row **order;
	size_t n;

	if (!s->dev)
		return 0;
	order = (struct dev_row **)sorted_values(&s->dev->rows, cmp_row, &n);
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct dev_row *d = order[i];
		struct stats_cell *c = stats_report__row(r);

		if (!c) {
			free(order);
			return -ENOMEM;
		}
		c[0] = (struct stats_cell){ .u = d->pid };
		c[1] = (struct stats_cell){ .s = stats_dev__name(s, d->device) };
		c[2] = (struct stats_cell){ .u = d->launches };
		c[3] = (struct stats_cell){ .u = d->copies };
		c[4] = (struct stats_cell){ .u = d->copy_bytes };
		c[5] = (struct stats_cell){ .u = d->peer_out };
		c[6] = (struct stats_cell){ .u = d->peer_in };
		c[7] = (struct stats_cell){ .u = d->sets };
		c[8] = (struct stats_cell){ .u = d->syncs };
		c[9] = (struct stats_cell){ .u = d->sync_time };
		c[10] = (struct stats_cell){ .u = d->gpu_kernels };
		c[11] = (struct stats_cell){ .u = d->gpu_time };
		if (!c[1].s) {
			free(order);
			return -ENOMEM;
		}
	}
	free(order);
	return 0;
}
