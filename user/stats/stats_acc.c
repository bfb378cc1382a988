// SPDX-License-Identifier: MIT
/*
 * Accumulation for `gtrace-bpf stats` (see stats_acc.h): the per-call path
 * of a pass that must keep up with millions of records a second, so it does
 * array indexing and vector appends; lookups happen only for launches (the
 * kernel, by the address of its name, and the shape), for the (pid, api) of
 * sync calls and for the process when it differs from the last one.  The
 * kernel and shape tables are in stats_kern.c, the summaries of the values
 * kept in stats_dvec.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stats/stats_acc.h"
#include "format/records.h"
#include "lib/vec.h"

#define GRAPH_NAME "[CUDA graph launch]"

/* ---- value vectors ------------------------------------------------------ */

static inline int dvec_push(struct dvec *d, uint64_t x)
{
	if (d->n == d->cap && vec__reserve(&d->v, &d->cap, d->n, 1, 64))
		return -ENOMEM;
	d->v[d->n++] = x;
	return 0;
}

static inline int dur_add(struct dur_acc *a, bool has_value, uint64_t v)
{
	a->calls++;
	if (!has_value) {
		a->incomplete++;
		return 0;
	}
	if (!a->dur.n || v < a->min)
		a->min = v;
	if (v > a->max)
		a->max = v;
	a->total += v;
	return dvec_push(&a->dur, v);
}

int stats_acc__dur_add(struct dur_acc *a, bool has_value, uint64_t v)
{
	return dur_add(a, has_value, v);
}

/* ---- processes and syncs ------------------------------------------------ */

static struct proc_acc *proc_of(struct stats_acc *s, uint32_t pid)
{
	struct proc_acc *p = s->last_proc;
	void *old;

	if (p && p->pid == pid)
		return p;
	p = hmap_get(&s->procs, pid, 0);
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return NULL;
		p->pid = pid;
		if (hmap_put(&s->procs, pid, 0, p, &old)) {
			free(p);
			return NULL;
		}
	}
	s->last_proc = p;
	return p;
}

#define LAUNCH_STACKS_MAX	(1u << 20)

/* site_cache's value for a stack that names no call site. */
static struct site_acc no_site;

/* The group of stack's call site in sites (s->sites or s->gsites); NULL
 * when out of memory, *none when the stack has no site. A stack's group is
 * found once (its frames walked, the site's key hashed), then cached. */
static struct site_acc *site_of(struct stats_acc *s, struct hmap *sites, uint32_t stack, bool *none)
{
	uint32_t which = sites == &s->gsites;
	struct site_acc *a = hmap_get(&s->site_cache, stack, which);
	struct gt_frame f;
	uint64_t key;
	void *old;

	if (a) {
		*none = a == &no_site;
		return *none ? NULL : a;
	}
	*none = !gt_decoder__call_site(s->d, stack, &f);
	if (*none) {
		if (hmap_put(&s->site_cache, stack, which, &no_site, &old))
			*none = false;	/* out of memory */
		return NULL;
	}
	key = gt_frame__key(&f);
	a = hmap_get(sites, key, 0);
	if (!a) {
		a = calloc(1, sizeof(*a));
		if (!a)
			return NULL;
		a->stack = stack;
		if (hmap_put(sites, key, 0, a, &old)) {
			free(a);
			return NULL;
		}
	}
	return hmap_put(&s->site_cache, stack, which, a, &old) ? NULL : a;
}

static void site_pid(struct site_acc *a, uint32_t pid)
{
	if (a->last_pid != pid) {
		a->pids++;
		a->last_pid = pid;
	}
}

/* A synchronizing call with a stack: to its call site's group. */
static int site_add(struct stats_acc *s, const struct gt_callrec *c)
{
	bool none;
	struct site_acc *a = site_of(s, &s->sites, c->stack, &none);

	if (!a)
		return none ? 0 : -ENOMEM;
	site_pid(a, c->pid);
	return dur_add(&a->d, c->has_exit, c->dur);
}

/* A GPU kernel: its time to the call site of its launch (cuda_gpu_site_sum). */
static int gsite_add(struct stats_acc *s, const struct gt_gpu_kernel *k)
{
	uint32_t stack = 0;
	struct site_acc *a = NULL;
	bool none = true;

	const struct gt_gpu_graph *gr = gt_gpu_kernel__graph(k);

	/* a CUDA graph's kernel: the launch whose capture made its node (a
	 * graph launch's kernels come before its exit, which gives its stack:
	 * without the capture, none) */
	if (gr && (k->flags & GT_GPU_CAPTURED))
		stack = gr->stack;
	else if (k->flags & GT_GPU_LINKED)
		stack = (uint32_t)(uintptr_t)hmap_del(&s->launch_stacks, k->launch_ts, k->hdr.tid);
	if (stack) {
		struct gstack_acc *g = hmap_get_or_new(&s->gstacks, stack, 0, sizeof(*g), NULL);

		if (!g)
			return -ENOMEM;
		g->stack = stack;
		g->ns += k->dur;
		g->kernels++;
		a = site_of(s, &s->gsites, stack, &none);
		if (!a && !none)
			return -ENOMEM;
	}
	if (!a)
		return dur_add(&s->gsite_none, true, k->dur);
	site_pid(a, k->hdr.pid);
	return dur_add(&a->d, true, k->dur);
}

static int sync_add(struct stats_acc *s, const struct gt_callrec *c, struct proc_acc *p)
{
	struct sync_acc *a = hmap_get(&s->syncs, c->api, c->pid);
	void *old;

	if (!a) {
		a = calloc(1, sizeof(*a));
		if (!a)
			return -ENOMEM;
		a->pid = c->pid;
		a->api = c->api;
		if (hmap_put(&s->syncs, c->api, c->pid, a, &old)) {
			free(a);
			return -ENOMEM;
		}
	}
	if (c->has_exit)
		p->sync_time += c->dur;
	if (c->stack && s->d) {
		int err = site_add(s, c);

		if (err)
			return err;
	}
	return dur_add(&a->d, c->has_exit, c->dur);
}

/* ---- kernels and shapes ------------------------------------------------- */

static struct kern_acc *kern_of(struct stats_acc *s, const char *name, int32_t device)
{
	return stats_kern__cached(&s->kern, s->kcache, name, device);
}

static int launch_add(struct stats_acc *s, const struct gt_callrec *c)
{
	const char *name = c->graph ? GRAPH_NAME : c->kernel ? c->kernel : "unknown_kernel";
	struct kern_acc *k = kern_of(s, name, c->device);

	s->launch_devs |= stats_dev_bit(c->device);
	if (!k)
		return -ENOMEM;
	k->launches++;
	if (c->api < 64)
		k->apis |= 1ull << c->api;
	if (c->graph)
		return 0;
	return stats_kern__shape_add(&s->shapes, k, (uint32_t)(k - s->kern.v), c->grid, c->block);
}

/* ---- the callbacks ------------------------------------------------------ */

static inline bool in_scope(const struct stats_acc *s, uint32_t pid, uint64_t ts)
{
	return !s->scope.on || ((!s->scope.pid || s->scope.pid == pid) && ts >= s->scope.start &&
				ts <= s->scope.end);
}

/* A record in the scope: GPU work by its call when linked (see stats_scope). */
static bool rec_in_scope(const struct stats_acc *s, const struct gt_hdr *rec)
{
	const struct gt_gpu_kernel *k = (const void *)rec;
	const struct gt_gpu_copy *c = (const void *)rec;

	if (!s->scope.on)
		return true;
	if (!gt_rec__size_ok(rec))
		return in_scope(s, rec->pid, rec->ts);
	if (rec->type == GT_REC_GPU_KERNEL && (k->flags & GT_GPU_LINKED))
		return in_scope(s, rec->pid, k->launch_ts);
	if ((rec->type == GT_REC_GPU_MEMCPY || rec->type == GT_REC_GPU_MEMSET) &&
	    (c->flags & GT_GPU_LINKED))
		return in_scope(s, rec->pid, c->launch_ts);
	return in_scope(s, rec->pid, rec->ts);
}

static int ioctl_add(struct stats_acc *s, const struct gt_ioctl *io)
{
	uint16_t which = io->flags & (GT_IOCTL_RM_CONTROL | GT_IOCTL_RM_ALLOC);
	uint32_t param = (io->flags & GT_IOCTL_PARAM_FAULT) ? 0 : io->param;
	uint64_t k1 = (uint64_t)io->cmd << 32 | io->rdev;
	struct ioctl_acc *a = hmap_get(&s->ioctls, k1, param);
	void *old;

	if (!a) {
		a = calloc(1, sizeof(*a));
		if (!a)
			return -ENOMEM;
		a->rdev = io->rdev;
		a->cmd = io->cmd;
		a->param = param;
		a->flags = which;
		if (hmap_put(&s->ioctls, k1, param, a, &old)) {
			free(a);
			return -ENOMEM;
		}
	}
	a->errors += io->ret < 0;
	return dur_add(&a->d, true, io->dur);
}

int stats_acc__record(struct stats_acc *s, const struct gt_hdr *rec)
{
	struct proc_acc *p;

	/* snapshots and overhead estimates belong to the recorder (an
	 * estimate's pid is the thread that paid most), pid 0 to no process */
	if (!rec->pid || rec->type == GT_REC_STATS || rec->type == GT_REC_OVERHEAD ||
	    !rec_in_scope(s, rec))
		return 0;
	p = proc_of(s, rec->pid);
	if (!p)
		return -ENOMEM;
	p->records++;
	if (rec->type == GT_REC_IOCTL && gt_rec__size_ok(rec))
		return ioctl_add(s, (const struct gt_ioctl *)rec);
	return 0;
}

int stats_acc__call(void *ctx, const struct gt_callrec *c)
{
	struct stats_acc *s = ctx;
	struct proc_acc *p;
	enum gt_api_class cls;
	int kind;

	if (!in_scope(s, c->pid, c->ts))
		return 0;
	p = proc_of(s, c->pid);
	if (!p || c->api >= GT_API__COUNT)
		return p ? 0 : -ENOMEM;
	p->calls++;
	if (c->has_exit) {
		p->api_time += c->dur;
		p->timed++;
	}
	if (stats_dev__call(s, c))
		return -ENOMEM;
	stats_hosts__call(s, c);
	if (c->entry_only)
		s->api[c->api].calls++;	/* no time by design, not incomplete */
	else if (dur_add(&s->api[c->api], c->has_exit, c->dur))
		return -ENOMEM;
	switch (c->type) {
	case GT_T_LAUNCH:
		p->launches++;
		/* its kernel's GPU record comes later: it finds the launch's stack
		 * (a trace without GPU records would keep every launch: at most
		 * LAUNCH_STACKS_MAX wait, which a merged trace's in-flight
		 * launches are far below) */
		if (c->stack && s->d && s->launch_stacks.n < LAUNCH_STACKS_MAX) {
			void *old;

			if (hmap_put(&s->launch_stacks, c->ts, c->tid, (void *)(uintptr_t)c->stack, &old))
				return -ENOMEM;
		}
		return launch_add(s, c);
	case GT_T_MEMCPY:
	case GT_T_MEMSET:
		/* a failed copy moved nothing; one without an exit probably did */
		if (c->has_exit && c->ret)
			return 0;
		kind = c->type == GT_T_MEMSET ? GT_COPY__COUNT
		       : c->kind < GT_COPY__COUNT ? (int)c->kind : GT_COPY_UNKNOWN;
		return dur_add(&s->mem[kind], true, c->bytes);
	case GT_T_SYNC:
		cls = gt_api__class(c->api);
		if (cls == GT_CLS_SYNC || cls == GT_CLS_QUERY || cls == GT_CLS_STREAM_WAIT)
			return sync_add(s, c, p);
		return 0;
	default:
		return 0;
	}
}

/* ---- the GPU side ------------------------------------------------------- */

/* The durations of name on device in n (added when new); NULL when out of
 * memory. */
static struct dur_acc *named_get(struct named_durs *n, const char *name, int32_t device)
{
	struct kern_acc *k = stats_kern__cached(&n->names, n->cache, name, device);
	uint32_t i, old;

	if (!k)
		return NULL;
	i = (uint32_t)(k - n->names.v);
	old = n->cap;
	if (vec__reserve(&n->d, &n->cap, i, 1, 64))
		return NULL;
	/* durations of names not seen yet on this side: none */
	memset(n->d + old, 0, (n->cap - old) * sizeof(*n->d));
	return &n->d[i];
}

static void named_free(struct named_durs *n)
{
	for (uint32_t i = 0; i < n->names.n; i++) {
		free(n->names.v[i].name);
		if (i < n->cap)
			free(n->d[i].dur.v);
	}
	free(n->names.v);
	free(n->names.idx);
	free(n->d);
}

static int latency_add(struct stats_acc *s, const struct gt_gpu_kernel *k)
{
	struct lat_acc *a = hmap_get(&s->lat, k->hdr.pid, 0);
	uint64_t v;
	void *old;

	if (!a) {
		a = calloc(1, sizeof(*a));
		if (!a)
			return -ENOMEM;
		a->pid = k->hdr.pid;
		if (hmap_put(&s->lat, k->hdr.pid, 0, a, &old)) {
			free(a);
			return -ENOMEM;
		}
	}
	/* the merger flags these; a start before the entry is one in any case */
	if ((k->flags & GT_GPU_CAUSALITY) || k->hdr.ts < k->launch_ts) {
		a->causality++;
		return 0;
	}
	v = k->hdr.ts - k->launch_ts;
	if (!a->v.n || v < a->min)
		a->min = v;
	if (v > a->max)
		a->max = v;
	return dvec_push(&a->v, v);
}

/* An overhead record (the decoder passes on only whole ones). */
static int ovh_add(struct stats_acc *s, const struct gt_overhead *o)
{
	struct ovh_acc *a = &s->ovh;

	if (s->scope.on && (o->hdr.ts < s->scope.start || o->hdr.ts > s->scope.end))
		return 0;
	if (!a->records)
		a->duty_first = o->duty_ppm;
	a->records++;
	a->reasons[o->reason < GT_OVH__COUNT ? o->reason : GT_OVH__COUNT]++;
	a->budget_ppm = o->budget_ppm;
	a->duty_last = o->duty_ppm;
	/* a record over no interval (a calibration before the first) has no estimate */
	if (!o->interval_ns)
		return 0;
	if (!a->est.n || o->estimate_ppm > a->est_max)
		a->est_max = o->estimate_ppm;
	return dvec_push(&a->est, o->estimate_ppm);
}

int stats_acc__other(void *ctx, const struct gt_hdr *rec)
{
	struct stats_acc *s = ctx;
	const struct gt_gpu_kernel *k = (const void *)rec;
	const struct gt_gpu_copy *c = (const void *)rec;
	const struct gt_nvtx *nv = (const void *)rec;
	const char *mangled, *name;
	char buf[GT_STR_MAX];
	struct dur_acc *a;
	size_t n;
	int kind;

	if ((rec->type == GT_REC_RANGE || rec->type == GT_REC_CAPTURE) && s->cap)
		return capture_spans__feed(s->cap, rec);
	if (rec->type == GT_REC_HOST)
		return stats_hosts__rec(s, rec);
	if (rec->type == GT_REC_OVERHEAD) {
		/* sheds label the rows of their apis (capture_spans) */
		int err = s->cap ? capture_spans__feed(s->cap, rec) : 0;

		return err ? err : ovh_add(s, (const struct gt_overhead *)rec);
	}
	/* the whole GPU's, in the scope by their time alone */
	if (rec->type == GT_REC_GPU_METRIC)
		return stats_gpum__add(s, (const struct gt_gpu_metric *)rec);
	/* every process' GPU work, for gpu_metrics_sum's sole occupancy */
	if (s->gpum_work && (rec->type == GT_REC_GPU_KERNEL || rec->type == GT_REC_GPU_MEMCPY ||
			     rec->type == GT_REC_GPU_MEMSET)) {
		int err = stats_gpum__gpu_work(s, rec);

		if (err)
			return err;
	}
	if (!rec_in_scope(s, rec))
		return 0;
	switch (rec->type) {
	case GT_REC_GPU_KERNEL:
		s->gpu_records++;
		name = gt_decoder__gpu_kernel_name(s->d, k, &mangled);
		a = named_get(&s->gkern, name, k->device <= INT32_MAX ? (int32_t)k->device : GT_DEVICE_UNKNOWN);
		s->gkern_devs |= stats_dev_bit(k->device <= INT32_MAX ? (int32_t)k->device : GT_DEVICE_UNKNOWN);
		if (!a || dur_add(a, true, k->dur) ||
		    stats_dev__gpu_kernel(s, rec->pid, k->device, k->dur) || gsite_add(s, k))
			return -ENOMEM;
		stats_hosts__gpu_kernel(s, rec->pid, k->dur);
		return (k->flags & GT_GPU_LINKED) ? latency_add(s, k) : 0;
	case GT_REC_GPU_MEMCPY:
	case GT_REC_GPU_MEMSET:
		s->gpu_records++;
		kind = rec->type == GT_REC_GPU_MEMSET ? GT_COPY__COUNT
		       : c->kind < GT_COPY__COUNT ? (int)c->kind : GT_COPY_UNKNOWN;
		if (dur_add(&s->gmem_time[kind], true, c->dur))
			return -ENOMEM;
		return dur_add(&s->gmem_size[kind], true, c->bytes);
	case GT_REC_NVTX:
		/* ranges only: a mark has no duration to sum */
		if (!nv->dur)
			return 0;
		n = nv->len ? gt_rec_strlen(rec, nv->name, nv->len) : 0;
		memcpy(buf, nv->name, n);
		buf[n] = '\0';
		a = named_get(&s->nvtx, buf, GT_DEVICE_UNKNOWN);
		return a ? dur_add(a, true, nv->dur) : -ENOMEM;
	default:
		return 0;
	}
}

/* ---- life and report strings -------------------------------------------- */

struct stats_acc *stats_acc__new(void)
{
	return calloc(1, sizeof(struct stats_acc));
}

static void hmap_free_values(struct hmap *m, bool sync)
{
	for (uint32_t i = 0; i < m->cap; i++) {
		if (!m->s[i].used)
			continue;
		if (sync)
			free(((struct sync_acc *)m->s[i].v)->d.dur.v);
		free(m->s[i].v);
	}
	free(m->s);
}

static void sites_free(struct hmap *m)
{
	for (uint32_t i = 0; i < m->cap; i++)
		if (m->s[i].used)
			free(((struct site_acc *)m->s[i].v)->d.dur.v);
	hmap_free_values(m, false);
}

void stats_acc__free(struct stats_acc *s)
{
	if (!s)
		return;
	for (int i = 0; i < GT_API__COUNT; i++)
		free(s->api[i].dur.v);
	for (int i = 0; i < MEM_KINDS; i++) {
		free(s->mem[i].dur.v);
		free(s->gmem_time[i].dur.v);
		free(s->gmem_size[i].dur.v);
	}
	named_free(&s->gkern);
	stats_dev__free(s->dev);
	stats_nccl__free(s->nccl);
	stats_hosts__free(s->hosts);
	named_free(&s->nvtx);
	stats_gpum__free(s);
	free(s->ovh.est.v);
	for (uint32_t i = 0; i < s->lat.cap; i++)
		if (s->lat.s[i].used)
			free(((struct lat_acc *)s->lat.s[i].v)->v.v);
	hmap_free_values(&s->lat, false);
	hmap_free_values(&s->syncs, true);
	sites_free(&s->sites);
	sites_free(&s->gsites);
	free(s->gsite_none.dur.v);
	hmap_free_values(&s->gstacks, false);
	/* values are stack ids, and the sites' groups (freed above) */
	free(s->launch_stacks.s);
	free(s->site_cache.s);
	for (uint32_t i = 0; i < s->ioctls.cap; i++)
		if (s->ioctls.s[i].used)
			free(((struct ioctl_acc *)s->ioctls.s[i].v)->d.dur.v);
	hmap_free_values(&s->ioctls, false);
	hmap_free_values(&s->procs, false);
	for (uint32_t i = 0; i < s->kern.n; i++)
		free(s->kern.v[i].name);
	free(s->kern.v);
	free(s->kern.idx);
	free(s->shapes.v);
	free(s->shapes.idx);
	for (size_t i = 0; i < s->nstrs; i++)
		free(s->strs[i]);
	free(s->strs);
	free(s);
}

/* Takes ownership of str (NULL passes through). */
static const char *keep_str(struct stats_acc *s, char *str)
{
	if (!str)
		return NULL;
	if (vec__reserve(&s->strs, &s->strs_cap, s->nstrs, 1, 32)) {
		free(str);
		return NULL;
	}
	s->strs[s->nstrs++] = str;
	return str;
}

const char *stats_acc__api_list(struct stats_acc *s, uint64_t mask)
{
	size_t len = 0;
	char *str, *p;

	if (!mask)
		return NULL;
	for (unsigned i = 0; i < 64; i++)
		if (mask >> i & 1)
			len += strlen(gt_api__name(i) ? gt_api__name(i) : "?") + 2;
	str = p = malloc(len + 1);
	if (!str)
		return NULL;
	for (unsigned i = 0; i < 64; i++) {
		if (!(mask >> i & 1))
			continue;
		p += sprintf(p, "%s%s", p == str ? "" : ", ", gt_api__name(i) ? gt_api__name(i) : "?");
	}
	return keep_str(s, str);
}

const char *stats_acc__dim3(struct stats_acc *s, const uint32_t v[3])
{
	char *str;

	if (asprintf(&str, "%ux%ux%u", v[0], v[1], v[2]) < 0)
		return NULL;
	return keep_str(s, str);
}

const char *stats_acc__strdup(struct stats_acc *s, const char *str)
{
	char *copy = strdup(str);

	return copy ? keep_str(s, copy) : NULL;
}

const char *stats_acc__mem_name(int kind)
{
	if (kind == GT_COPY__COUNT)
		return "memset";
	return gt_copy_kind__name((enum gt_copy_kind)kind);
}
