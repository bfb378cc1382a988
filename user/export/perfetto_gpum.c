// SPDX-License-Identifier: MIT
/*
 * GPU metrics (GT_REC_GPU_METRIC) in the Perfetto export: per GPU a root
 * track "GPU N metrics" and under it one counter track per metric, named
 * "gpu_util (%)", "sm_active (%)", "mem_used (B)", ..., each described at
 * its first value; a value holds from its sample's ts on.  A process'
 * memory on a GPU (proc_mem_used) is a counter track in that process' own
 * track instead, "GPU N memory (B)".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "export/perfetto_int.h"
#include "format/records.h"
#include "lib/hmap.h"

#define UNKNOWN_ID GT_GPUM_MAX	/* the track of ids this build does not know */

/* One GPU's tracks. */
struct pf_gpum_dev {
	uint32_t device;			/* the GPU's NVML index */
	struct pf_track parent;			/* "GPU N metrics" */
	struct pf_track t[GT_GPUM_MAX + 1];	/* per metric id */
	bool live[GT_GPUM_MAX + 1];		/* t[i] is described */
};

struct pf_gpum {
	struct pf_gpum_dev **dev;		/* pointers: a track must not move */
	size_t n;
	struct hmap proc;			/* (device, pid) -> struct pf_track, a process' memory */
};

/* The track of pid's memory on GPU device, described at its first value. */
static struct pf_track *proc_track(struct pf *x, uint32_t device, uint32_t pid)
{
	struct pf_gpum *g = x->gpum;
	struct pf_track *t = hmap_get(&g->proc, device, pid);
	uint64_t parent;
	char name[48];
	void *old;

	if (t)
		return t;
	parent = pf__proc_uuid(x, pid);
	if (!parent)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t || hmap_put(&g->proc, device, pid, t, &old)) {
		free(t);
		return NULL;
	}
	pftrace__track_init(x->w, t);
	snprintf(name, sizeof(name), "GPU %u memory (B)", device);
	pftrace__counter_track(x->w, t, parent, name, PF_UNIT_SIZE_BYTES);
	return t;
}

static struct pf_gpum_dev *dev_of(struct pf *x, uint32_t device)
{
	struct pf_gpum *g = x->gpum;
	struct pf_gpum_dev **v, *d;
	char name[48];

	if (!g && !(g = x->gpum = calloc(1, sizeof(*g))))
		return NULL;
	for (size_t i = 0; i < g->n; i++)
		if (g->dev[i]->device == device)
			return g->dev[i];
	v = realloc(g->dev, (g->n + 1) * sizeof(*g->dev));
	if (!v)
		return NULL;
	g->dev = v;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->device = device;
	pftrace__track_init(x->w, &d->parent);
	snprintf(name, sizeof(name), "GPU %u metrics", device);
	pftrace__track(x->w, &d->parent, 0, name);
	g->dev[g->n++] = d;
	return d;
}

int pf__on_gpu_metric(struct pf *x, const struct gt_hdr *rec)
{
	const struct gt_gpu_metric *m = (const void *)rec;
	uint32_t id = gt_gpu_metric__name(m->metric) ? m->metric : UNKNOWN_ID;
	struct pf_gpum_dev *d;
	char name[64];

	if (!gt_rec__size_ok(rec))
		return 0;
	d = dev_of(x, m->device);
	if (!d)
		return -ENOMEM;
	if (m->metric == GT_GPUM_PROC_MEM && rec->pid) {
		struct pf_track *t = proc_track(x, m->device, rec->pid);

		return t ? pftrace__counter(x->w, t, rec->ts, m->value_micro / 1e6) : -ENOMEM;
	}
	if (!d->live[id]) {
		if (id == UNKNOWN_ID)
			snprintf(name, sizeof(name), "unknown metrics");
		else
			snprintf(name, sizeof(name), "%s (%s)", gt_gpu_metric__name(id),
				 gt_gpu_metric__unit(id));
		pftrace__track_init(x->w, &d->t[id]);
		pftrace__counter_track(x->w, &d->t[id], d->parent.uuid, name,
				       id == GT_GPUM_MEM_USED || id == GT_GPUM_MEM_TOTAL ?
				       PF_UNIT_SIZE_BYTES : PF_UNIT_UNSPECIFIED);
		d->live[id] = true;
	}
	return pftrace__counter(x->w, &d->t[id], rec->ts, m->value_micro / 1e6);
}

void pf__gpum_free(struct pf *x)
{
	struct pf_gpum *g = x->gpum;

	if (!g)
		return;
	for (uint32_t i = 0; i < g->proc.cap; i++) {
		if (!g->proc.s[i].used)
			continue;
		pftrace__track_free(g->proc.s[i].v);
		free(g->proc.s[i].v);
	}
	free(g->proc.s);
	for (size_t i = 0; i < g->n; i++) {
		pftrace__track_free(&g->dev[i]->parent);
		for (unsigned k = 0; k <= GT_GPUM_MAX; k++)
			if (g->dev[i]->live[k])
				pftrace__track_free(&g->dev[i]->t[k]);
		free(g->dev[i]);
	}
	free(g->dev);
	free(g);
	x->gpum = NULL;
}
