// SPDX-License-Identifier: MIT
/*
 * Accumulation for `gtrace-bpf stats` (see stats_acc.h): the per-call path
 * of a pass that must keep up with millions of records a second, so it does
 * array indexing and vector appends; lookups happen only for launches (the
 * kernel, by the address of its name, and the shape), for the (pid, api) of
 * sync calls and for the process when it differs from the last one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stats/stats_acc.h"
#include "format/records.h"
#include "lib/hash.h"
#include "lib/vec.h"
#include "lib/cmp.h"

#define GRAPH_NAME "[CUDA graph launch]"
#define NO_SHAPE UINT32_MAX

/* ---- value vectors ------------------------------------------------------ */

static inline int dvec_push(struct dvec *d, uint64_t x)
{
	if (d->n == d->cap && vec__reserve(&d->v, &d->cap, d->n, 1, 64))
		return -ENOMEM;
	d->v[d->n++] = x;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Reorders v[0..n) so that v[k] is the k-th smallest, with nothing larger
 * before it and nothing smaller after (quickselect, median-of-three pivot,
 * Hoare partition: linear on average, also with many equal values).  Past a
 * budget of rounds it sorts what is left, so no input makes it quadratic. */
static void select_kth(uint64_t *v, size_t n, size_t k)
{
	ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1;
	int budget = 16;

	for (size_t m = n; m; m >>= 1)
		budget += 2;
	while (hi > lo) {
		ptrdiff_t mid = lo + (hi - lo) / 2, i = lo, j = hi;
		uint64_t a = v[lo], b = v[mid], c = v[hi], pivot, t;

		if (budget-- == 0) {
			cmp__sort(v + lo, (size_t)(hi - lo + 1), sizeof(*v), cmp_u64);
			return;
		}
		pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				t = v[i];
				v[i++] = v[j];
				v[j--] = t;
			}
		}
		/* now v[lo..j] <= pivot, v[i..hi] >= pivot, and v[j+1..i-1] == pivot */
		if ((ptrdiff_t)k <= j)
			hi = j;
		else if ((ptrdiff_t)k >= i)
			lo = i;
		else
			return;
	}
}

/* The C library's sqrt is in libm, which the build does not link: Newton's
 * iteration from a guess made by halving the exponent reaches full double
 * precision in a few steps, and is run once per report row. */
static double sqrt_pos(double x)
{
	union { double d; uint64_t u; } g = { .d = x };

	if (!(x > 0))
		return 0;
	g.u = (g.u >> 1) + (1023ull << 51);
	for (int i = 0; i < 8; i++)
		g.d = 0.5 * (g.d + x / g.d);
	return g.d;
}

void dvec__summarize(struct dvec *d, uint64_t total, struct dvec_summary *out)
{
	size_t n = d->n, k = n / 2;
	double mean, ss = 0;

	*out = (struct dvec_summary){ 0 };
	if (!n)
		return;
	mean = (double)total / (double)n;
	for (size_t i = 0; i < n; i++) {
		double x = (double)d->v[i] - mean;

		ss += x * x;
	}
	select_kth(d->v, n, k);
	if (n % 2) {
		out->median = (double)d->v[k];
	} else {
		/* the lower middle is the largest of the half before k */
		uint64_t lo = d->v[0];

		for (size_t i = 1; i < k; i++)
			if (d->v[i] > lo)
				lo = d->v[i];
		out->median = ((double)lo + (double)d->v[k]) / 2.0;
	}
	out->mean = mean;
	out->stddev = n > 1 ? sqrt_pos(ss / (double)(n - 1)) : 0.0;
}

uint64_t dvec__percentile(struct dvec *d, unsigned p)
{
	/* rank ceil(p n / 100), 1-based */
	size_t rank = (size_t)(((uint64_t)p * d->n + 99) / 100);

	if (!d->n)
		return 0;
	if (rank < 1)
		rank = 1;
	if (rank > d->n)
		rank = d->n;
	select_kth(d->v, d->n, rank - 1);
	return d->v[rank - 1];
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

	if (k->flags & GT_GPU_LINKED)
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

/* The name's hash, and its length for the copy. */
static uint64_t name_hash(const char *s, size_t *len)
{
	*len = strlen(s);
	return hash__bytes(s, *len);
}

/* Doubles an index of (entry + 1) slots; hash_of gives an entry's hash. */
static int idx_grow(uint32_t **idx, uint32_t *cap, uint32_t n,
		    uint64_t (*hash_of)(const void *tab, uint32_t i), const void *tab)
{
	uint32_t ncap = *cap ? *cap * 2 : 256, *ni = calloc(ncap, sizeof(*ni));

	if (!ni)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = (uint32_t)hash_of(tab, i) & (ncap - 1);

		while (ni[j])
			j = (j + 1) & (ncap - 1);
		ni[j] = i + 1;
	}
	free(*idx);
	*idx = ni;
	*cap = ncap;
	return 0;
}

static uint64_t kern_hash_of(const void *tab, uint32_t i)
{
	return ((const struct kern_table *)tab)->v[i].hash;
}

static uint64_t shape_hash(uint32_t kern, const uint32_t grid[3], const uint32_t block[3])
{
	uint64_t h = hash__mix64(kern + ((uint64_t)grid[0] << 32));

	h = hash__mix64(h ^ grid[1] ^ ((uint64_t)grid[2] << 32));
	h = hash__mix64(h ^ block[0] ^ ((uint64_t)block[1] << 32));
	return hash__mix64(h ^ block[2]);
}

static uint64_t shape_hash_of(const void *tab, uint32_t i)
{
	const struct shape_acc *a = &((const struct shape_table *)tab)->v[i];

	return shape_hash(a->kern, a->grid, a->block);
}

static struct kern_acc *kern_get(struct kern_table *t, const char *name, int32_t device)
{
	size_t len;
	uint64_t h = name_hash(name, &len) ^ hash__mix64((uint64_t)(uint32_t)device + 1);
	uint32_t mask = t->idx_cap - 1, j;
	struct kern_acc *k;

	if (t->idx_cap) {
		for (j = (uint32_t)h & mask; t->idx[j]; j = (j + 1) & mask) {
			k = &t->v[t->idx[j] - 1];
			if (k->hash == h && k->device == device && !strcmp(k->name, name))
				return k;
		}
	}
	/* new: keep the index at most half full */
	if ((t->n + 1) * 2 > t->idx_cap &&
	    idx_grow(&t->idx, &t->idx_cap, t->n, kern_hash_of, t))
		return NULL;
	if (vec__reserve(&t->v, &t->cap, t->n, 1, 64))
		return NULL;
	k = &t->v[t->n];
	*k = (struct kern_acc){ .hash = h, .device = device, .last_shape = NO_SHAPE };
	k->name = malloc(len + 1);
	if (!k->name)
		return NULL;
	memcpy(k->name, name, len + 1);
	mask = t->idx_cap - 1;
	for (j = (uint32_t)h & mask; t->idx[j]; j = (j + 1) & mask)
		;
	t->idx[j] = ++t->n;
	return k;
}

static int shape_add(struct shape_table *t, struct kern_acc *k, uint32_t kern,
		     const uint32_t grid[3], const uint32_t block[3])
{
	uint64_t h;
	uint32_t mask, j;
	struct shape_acc *a;

	/* a kernel is mostly launched again with the shape of its last launch */
	if (k->last_shape != NO_SHAPE) {
		a = &t->v[k->last_shape];
		if (!memcmp(a->grid, grid, sizeof(a->grid)) &&
		    !memcmp(a->block, block, sizeof(a->block))) {
			a->count++;
			return 0;
		}
	}
	h = shape_hash(kern, grid, block);
	mask = t->idx_cap - 1;
	if (t->idx_cap) {
		for (j = (uint32_t)h & mask; t->idx[j]; j = (j + 1) & mask) {
			a = &t->v[t->idx[j] - 1];
			if (a->kern == kern && !memcmp(a->grid, grid, sizeof(a->grid)) &&
			    !memcmp(a->block, block, sizeof(a->block))) {
				a->count++;
				k->last_shape = t->idx[j] - 1;
				return 0;
			}
		}
	}
	if ((t->n + 1) * 2 > t->idx_cap &&
	    idx_grow(&t->idx, &t->idx_cap, t->n, shape_hash_of, t))
		return -ENOMEM;
	if (vec__reserve(&t->v, &t->cap, t->n, 1, 64))
		return -ENOMEM;
	a = &t->v[t->n];
	*a = (struct shape_acc){ .kern = kern, .count = 1 };
	memcpy(a->grid, grid, sizeof(a->grid));
	memcpy(a->block, block, sizeof(a->block));
	mask = t->idx_cap - 1;
	for (j = (uint32_t)h & mask; t->idx[j]; j = (j + 1) & mask)
		;
	t->idx[j] = t->n + 1;
	k->last_shape = t->n++;
	k->nshapes++;
	return 0;
}

/* The kernel of a launch's name.  The decoder hands out the same string
 * for every launch of a kernel, so a cache by address skips hashing it; a
 * hit is confirmed with strcmp because an address can be reused for another
 * name (a process' names are freed when it exits, the placeholder buffer is
 * rewritten per launch). */
static struct kern_acc *kern_cached(struct kern_table *t, struct kcache_slot *cache,
				    const char *name, int32_t device)
{
	struct kcache_slot *slot = &cache[((uintptr_t)name >> 3) % KCACHE_SLOTS];
	struct kern_acc *k;

	if (slot->name == name && t->v[slot->kern].device == device &&
	    !strcmp(t->v[slot->kern].name, name))
		return &t->v[slot->kern];
	k = kern_get(t, name, device);
	if (k) {
		slot->name = name;
		slot->kern = (uint32_t)(k - t->v);
	}
	return k;
}

static struct kern_acc *kern_of(struct stats_acc *s, const char *name, int32_t device)
{
	return kern_cached(&s->kern, s->kcache, name, device);
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
	return shape_add(&s->shapes, k, (uint32_t)(k - s->kern.v), c->grid, c->block);
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
	struct kern_acc *k = kern_cached(&n->names, n->cache, name, device);
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
