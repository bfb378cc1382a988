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
#include "daemon/daemon_cupti.h"
#include "daemon/daemon_int.h"
#include "daemon/gpu_idle.h"
#include "merge/merge.h"
#include "record/cupti_follow.h"
#include "record/cupti_session.h"

#define MAX_GAPS	8	/* gaps taken from one flush mark */

struct daemon_cupti {
	struct cupti_follow *follow;	/* the spool files read as they grow */
	uint64_t threshold;		/* gpu-idle>TIME, 0 = none */
	uint64_t gaps;			/* gpu-idle gaps found */
	bool (*rec_wants)(void *ctx, pid_t pid);	/* the recorder's follow options */
	bool (*rec_owner)(void *ctx, pid_t pid, uid_t *uid);
	void *rec_ctx;
};

/* A spool's gpu-idle detector from scratch: what it held does not join
 * what comes after a skip. */
static void on_restart(void *ctx, void **slot, uint32_t pid, bool gone)
{
	struct daemon *d = ctx;

	gpu_idle__free(*slot);
	*slot = NULL;
	if (gone || !d->dcupti->threshold)
		return;
	*slot = gpu_idle__new(d->dcupti->threshold);
	if (!*slot)
		pr_warn("CUPTI: pid %u: no gpu-idle trigger: %s", pid, strerror(ENOMEM));
}

static void idle_off(void **slot, uint32_t pid)
{
	pr_warn("CUPTI: pid %u: gpu-idle trigger off: %s", pid, strerror(ENOMEM));
	gpu_idle__free(*slot);
	*slot = (void *)-1;	/* off for good: not made anew */
}

static struct gpu_idle *idle_of(struct daemon *d, void **slot, uint32_t pid)
{
	if (*slot == (void *)-1)
		return NULL;
	if (!*slot && d->dcupti->threshold)
		on_restart(d, slot, pid, false);
	return *slot;
}

static void on_take(void *ctx, void **slot, const struct gt_hdr *h)
{
	struct daemon *d = ctx;
	struct gpu_idle *g = idle_of(d, slot, h->pid);

	if (g && gpu_idle__feed(g, h))
		idle_off(slot, h->pid);
	recorder__write(d->r, h);
}

static void on_mark(void *ctx, void **slot, uint32_t pid, uint64_t ts, bool alive)
{
	struct daemon *d = ctx;
	struct gpu_idle *g = idle_of(d, slot, pid);
	struct gpu_idle_gap gaps[MAX_GAPS];
	int n, i;

	if (!g)
		return;
	n = gpu_idle__mark(g, ts, alive, gaps, MAX_GAPS);
	for (i = 0; i < n; i++) {
		d->dcupti->gaps++;
		trigger__on_gpu_idle(d, pid, gaps[i].end, gaps[i].end - gaps[i].start);
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

/* Whom the recording wants and who runs a process: the recorder's answers
 * (its follow options' ctx is the recorder, the daemon's hooks get d). */
static bool wants(void *ctx, pid_t pid)
{
	struct daemon *d = ctx;

	return d->dcupti->rec_wants(d->dcupti->rec_ctx, pid);
}

static bool owner(void *ctx, pid_t pid, uid_t *uid)
{
	struct daemon *d = ctx;

	return d->dcupti->rec_owner(d->dcupti->rec_ctx, pid, uid);
}

int daemon_cupti__new(struct daemon *d)
{
	struct daemon_cupti *dc = calloc(1, sizeof(*dc));
	struct cupti_follow_opts fo = { .take = on_take, .mark = on_mark, .restart = on_forget };
	struct cupti_session *s = recorder__cupti(d->r);
	int err;

	if (!dc) {
		pr_err("failed to allocate the CUPTI reader: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	dc->threshold = trigger__gpu_idle_threshold(d);
	d->dcupti = dc;
	recorder__cupti_follow_opts(d->r, &fo);
	dc->rec_wants = fo.wants;
	dc->rec_owner = fo.owner;
	dc->rec_ctx = fo.ctx;
	fo.wants = fo.wants ? wants : NULL;
	fo.owner = fo.owner ? owner : NULL;
	fo.ctx = d;
	err = cupti_follow__new(&fo, &dc->follow);
	if (err) {
		free(dc);
		d->dcupti = NULL;
		return err;
	}
	pr_info("CUPTI: programs started with CUDA_INJECTION64_PATH=%s join through %s",
		cupti_session__lib(s), cupti_session__dir(s));
	return 0;
}

void daemon_cupti__poll(struct daemon *d, bool drain)
{
	if (d->dcupti)
		cupti_follow__poll(d->dcupti->follow, drain);
}

int daemon_cupti__finish_snapshot(void *ctx, const char *raw, const char *path)
{
	struct merge_opts mo = { .trace = raw, .output = path };
	int err = 0;

	(void)ctx;
	/* its GPU records linked to their calls */
	if (!merge__run(&mo, NULL)) {
		unlink(raw);
		return 0;
	}
	/* unmerged is better than nothing: gtrace-bpf merge PATH links it
	 * later; a link, so that nothing under path is replaced */
	if (link(raw, path))
		err = -errno;
	unlink(raw);
	if (!err)
		pr_warn("snapshot %s: its GPU records are not linked to their calls (gtrace-bpf merge %s "
			"does it)", path, path);
	return err;
}

size_t daemon_cupti__status(const struct daemon *d, char *buf, size_t len)
{
	const struct daemon_cupti *dc = d->dcupti;
	size_t n;
	int k;

	if (!dc || !len)
		return 0;
	n = cupti_follow__status(dc->follow, buf, len);
	k = snprintf(buf + n, len - n, "gpu_idle_gaps %llu\n", (unsigned long long)dc->gaps);
	return k < 0 ? n : n + (size_t)k < len ? n + (size_t)k : len - 1;
}

void daemon_cupti__free(struct daemon *d)
{
	struct daemon_cupti *dc = d->dcupti;

	if (!dc)
		return;
	/* the agents hand over and pause; what they held goes into the window */
	cupti_session__stop(recorder__cupti(d->r));
	cupti_follow__finish(dc->follow);
	cupti_follow__free(dc->follow);
	free(dc);
	d->dcupti = NULL;
	cupti_session__end(recorder__cupti(d->r));
}
