// SPDX-License-Identifier: MIT
/*
 * gtrace-bpf daemon --cupti (daemon_cupti.h): the agents' spool files
 * followed (record/cupti_follow.c), their records into the window, their
 * flush marks to the gpu-idle detector of each spool.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/log.h"
#include "record/cupti_follow.h"
#include "record/cupti_session.h"
#include "record/daemon_cupti.h"
#include "record/gpu_idle.h"
#include "record/recorder.h"

#define MAX_GAPS	8	/* gaps taken from one flush mark */

struct daemon_cupti {
	struct cupti_follow *follow;	/* the spool files read as they grow */
	uint64_t threshold;		/* gpu-idle>TIME, 0 = none */
	uint64_t gaps;			/* gpu-idle gaps found */
};

/* A spool's gpu-idle detector from scratch: what it held does not join
 * what comes after a skip. */
static void on_restart(void *ctx, void **slot, uint32_t pid, bool gone)
{
	struct recorder *r = ctx;

	gpu_idle__free(*slot);
	*slot = NULL;
	if (gone || !r->dcupti->threshold)
		return;
	*slot = gpu_idle__new(r->dcupti->threshold);
	if (!*slot)
		pr_warn("CUPTI: pid %u: no gpu-idle trigger: %s", pid, strerror(ENOMEM));
}

static void idle_off(void **slot, uint32_t pid)
{
	pr_warn("CUPTI: pid %u: gpu-idle trigger off: %s", pid, strerror(ENOMEM));
	gpu_idle__free(*slot);
	*slot = (void *)-1;	/* off for good: not made anew */
}

static struct gpu_idle *idle_of(struct recorder *r, void **slot, uint32_t pid)
{
	if (*slot == (void *)-1)
		return NULL;
	if (!*slot && r->dcupti->threshold)
		on_restart(r, slot, pid, false);
	return *slot;
}

static void on_take(void *ctx, void **slot, const struct gt_hdr *h)
{
	struct recorder *r = ctx;
	struct gpu_idle *g = idle_of(r, slot, h->pid);

	if (g && gpu_idle__feed(g, h))
		idle_off(slot, h->pid);
	recorder__write(r, h);
}

static void on_mark(void *ctx, void **slot, uint32_t pid, uint64_t ts, bool alive)
{
	struct recorder *r = ctx;
	struct gpu_idle *g = idle_of(r, slot, pid);
	struct gpu_idle_gap gaps[MAX_GAPS];
	int n, i;

	if (!g)
		return;
	n = gpu_idle__mark(g, ts, alive, gaps, MAX_GAPS);
	for (i = 0; i < n; i++) {
		r->dcupti->gaps++;
		trigger__on_gpu_idle(r, pid, gaps[i].end, gaps[i].end - gaps[i].start);
	}
	if (n < 0)
		idle_off(slot, pid);
}

static void on_forget(void *ctx, void **slot, uint32_t pid, bool gone)
{
	if (*slot == (void *)-1) {
		if (gone)
			*slot = NULL;
		return;
	}
	on_restart(ctx, slot, pid, gone);
}

int daemon_cupti__new(struct recorder *r)
{
	struct daemon_cupti *d = calloc(1, sizeof(*d));
	struct cupti_follow_opts fo = { .take = on_take, .mark = on_mark, .restart = on_forget };
	int err;

	if (!d) {
		pr_err("failed to allocate the CUPTI reader: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	d->threshold = trigger__gpu_idle_threshold(r);
	r->dcupti = d;
	recorder__cupti_follow_opts(r, &fo);
	err = cupti_follow__new(&fo, &d->follow);
	if (err) {
		free(d);
		r->dcupti = NULL;
		return err;
	}
	pr_info("CUPTI: programs started with CUDA_INJECTION64_PATH=%s join through %s",
		cupti_session__lib(r->cupti), cupti_session__dir(r->cupti));
	return 0;
}

void daemon_cupti__poll(struct recorder *r, bool drain)
{
	if (r->dcupti)
		cupti_follow__poll(r->dcupti->follow, drain);
}

int daemon_cupti__finish_snapshot(const struct record_hooks *h, const char *raw, const char *path)
{
	int err = 0;

	if (h && h->on_snapshot && !h->on_snapshot(h->ctx, raw, path)) {
		unlink(raw);
		return 0;
	}
	/* unmerged is better than nothing: gtrace-bpf merge PATH links it
	 * later; a link, so that nothing under path is replaced */
	if (link(raw, path))
		err = -errno;
	unlink(raw);
	if (!err && h && h->on_snapshot)
		pr_warn("snapshot %s: its GPU records are not linked to their calls (gtrace-bpf merge %s "
			"does it)", path, path);
	return err;
}

size_t daemon_cupti__status(const struct recorder *r, char *buf, size_t len)
{
	const struct daemon_cupti *d = r->dcupti;
	size_t n;
	int k;

	if (!d || !len)
		return 0;
	n = cupti_follow__status(d->follow, buf, len);
	k = snprintf(buf + n, len - n, "gpu_idle_gaps %llu\n", (unsigned long long)d->gaps);
	return k < 0 ? n : n + (size_t)k < len ? n + (size_t)k : len - 1;
}

void daemon_cupti__free(struct recorder *r)
{
	struct daemon_cupti *d = r->dcupti;

	if (!d)
		return;
	/* the agents hand over and pause; what they held goes into the window */
	cupti_session__stop(r->cupti);
	cupti_follow__finish(d->follow);
	cupti_follow__free(d->follow);
	free(d);
	r->dcupti = NULL;
	cupti_session__end(r->cupti);
}
