// SPDX-License-Identifier: MIT
/*
 * The Prometheus metrics of metrics.h: one decoder pass that adds each call
 * to its process's counters, and a renderer of the text format.  The per-call
 * path indexes arrays by api and copy kind; the process is found by binary
 * search over a pid-sorted array (after a check of the last one), and only a
 * launch hashes its kernel name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "daemon/metrics.h"
#include "decode/decode.h"
#include "lib/hash.h"
#include "lib/hmap.h"
#include "lib/vec.h"
#include "lib/cmp.h"

#define FAIL_SLOTS 16		/* (api, code) pairs per process; more go to code="other" */
#define PROC_LABEL_MAX 128	/* bytes of a process name in a label */
#define KERNEL_LABEL_MAX 256	/* bytes of a kernel name in a label */
#define CU_NOT_READY 600	/* CUDA_ERROR_NOT_READY: a query's answer, not a failure */

struct fail_slot {
	uint16_t api;		/* enum gt_api */
	int32_t code;		/* CUresult */
	uint64_t n;		/* calls */
};

struct mproc {
	uint32_t pid;
	bool exited;		/* a GT_REC_EXIT was seen: evicted before live ones */
	uint64_t seen;		/* m->seq at its last call or exit: eviction order */
	char *name;		/* command line or comm, "" when unknown */
	uint64_t launches;	/* launch calls (graph launches included) */
	uint64_t sync_ns;	/* time in ctx/stream/event synchronize calls */
	uint64_t calls[GT_API__COUNT];	/* calls by api, complete or not */
	uint64_t api_ns[GT_API__COUNT];	/* time of the calls with an exit */
	uint64_t copy[GT_COPY__COUNT];	/* bytes of copies that did not fail, by kind */
	struct fail_slot fail[FAIL_SLOTS];	/* failed calls, in order of first failure */
	unsigned nfail;		/* slots used */
	uint64_t fail_other;	/* failures past the slots */
};

struct mkernel {
	char *name;		/* demangled, as the decoder gave it */
	uint64_t launches;
};

struct gt_metrics {
	struct gt_metrics_opts o;	/* defaults filled in */
	struct gt_decoder *d;		/* ours: calls come back to metrics_call */
	struct mproc **procs;		/* sorted by pid, at most o.max_procs */
	unsigned nprocs;
	struct mproc *last;		/* the process of the last call: most calls hit it */
	uint64_t seq;			/* counts calls and exits, for eviction order */
	uint64_t evicted;		/* processes dropped to make room */
	struct hmap kernels;		/* (hash, length) of the name -> struct mkernel */
	struct mkernel **kv;		/* every counted kernel, in order of first launch */
	size_t nk, capk;
	uint64_t kernels_untracked;	/* launches of names past o.kernels_cap */
	struct gt_counters cnt;		/* the recorder's latest counters */
	bool has_cnt;
	struct gt_metrics_self self;	/* the daemon's figures */
	bool has_self;
};

/* ---- processes ---------------------------------------------------------- */

/* Index of the first process with a pid >= pid. */
static unsigned proc_pos(const struct gt_metrics *m, uint32_t pid)
{
	unsigned lo = 0, hi = m->nprocs;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (m->procs[mid]->pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct mproc *proc_find(struct gt_metrics *m, uint32_t pid)
{
	unsigned i;

	if (m->last && m->last->pid == pid)
		return m->last;
	i = proc_pos(m, pid);
	if (i < m->nprocs && m->procs[i]->pid == pid)
		return m->last = m->procs[i];
	return NULL;
}

static void proc_free(struct mproc *p)
{
	if (p) {
		free(p->name);
		free(p);
	}
}

static void proc_rename(struct gt_metrics *m, struct mproc *p)
{
	const char *n = gt_decoder__process_name(m->d, p->pid);
	char *copy;

	if (!n || !strcmp(n, p->name))
		return;
	copy = strdup(n);
	/* out of memory: the old name is as good a label as any */
	if (copy) {
		free(p->name);
		p->name = copy;
	}
}

/* Makes room by dropping the exited process seen longest ago, else the live
 * one: the table stays bounded whatever the machine runs. */
static void proc_evict(struct gt_metrics *m)
{
	unsigned victim = 0;

	for (unsigned i = 1; i < m->nprocs; i++) {
		const struct mproc *a = m->procs[i], *b = m->procs[victim];

		if (a->exited != b->exited ? a->exited : a->seen < b->seen)
			victim = i;
	}
	if (m->last == m->procs[victim])
		m->last = NULL;
	proc_free(m->procs[victim]);
	memmove(m->procs + victim, m->procs + victim + 1,
		(m->nprocs - victim - 1) * sizeof(*m->procs));
	m->nprocs--;
	m->evicted++;
}

static struct mproc *proc_get(struct gt_metrics *m, uint32_t pid)
{
	struct mproc *p = proc_find(m, pid);
	unsigned i;

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->name = strdup(""))) {
		free(p);
		return NULL;
	}
	p->pid = pid;
	if (m->nprocs == m->o.max_procs)
		proc_evict(m);
	i = proc_pos(m, pid);
	memmove(m->procs + i + 1, m->procs + i, (m->nprocs - i) * sizeof(*m->procs));
	m->procs[i] = p;
	m->nprocs++;
	proc_rename(m, p);
	return m->last = p;
}

static void fail_add(struct mproc *p, uint16_t api, int32_t code)
{
	for (unsigned i = 0; i < p->nfail; i++) {
		if (p->fail[i].api == api && p->fail[i].code == code) {
			p->fail[i].n++;
			return;
		}
	}
	if (p->nfail == FAIL_SLOTS) {
		p->fail_other++;
		return;
	}
	p->fail[p->nfail++] = (struct fail_slot){ .api = api, .code = code, .n = 1 };
}

/* ---- kernels ------------------------------------------------------------ */

static int kernel_add(struct gt_metrics *m, const char *name)
{
	size_t len = strlen(name);
	uint64_t h = hash__bytes(name, len);
	struct mkernel *k = hmap_get(&m->kernels, h, (uint32_t)len);
	void *old;

	if (k) {
		/* two names of one hash and length: the later one is not counted
		 * by name rather than counted as the other */
		if (strcmp(k->name, name))
			m->kernels_untracked++;
		else
			k->launches++;
		return 0;
	}
	if (m->nk >= m->o.kernels_cap) {
		m->kernels_untracked++;
		return 0;
	}
	if (m->nk == m->capk && vec__reserve(&m->kv, &m->capk, m->nk, 1, 64))
		return -ENOMEM;
	k = calloc(1, sizeof(*k));
	if (!k || !(k->name = strdup(name)))
		goto nomem;
	k->launches = 1;
	if (hmap_put(&m->kernels, h, (uint32_t)len, k, &old))
		goto nomem;
	m->kv[m->nk++] = k;
	return 0;
nomem:
	if (k)
		free(k->name);
	free(k);
	return -ENOMEM;
}

/* ---- feeding ------------------------------------------------------------ */

static int metrics_call(void *ctx, const struct gt_callrec *c)
{
	struct gt_metrics *m = ctx;
	struct mproc *p;

	if (c->api >= GT_API__COUNT || !c->pid)
		return 0;
	p = proc_get(m, c->pid);
	if (!p)
		return -ENOMEM;
	p->seen = ++m->seq;
	p->calls[c->api]++;
	if (c->has_exit) {
		p->api_ns[c->api] += c->dur;
		if (gt_api__class(c->api) == GT_CLS_SYNC)
			p->sync_ns += c->dur;
		if (c->ret && !(c->ret == CU_NOT_READY && gt_api__class(c->api) == GT_CLS_QUERY))
			fail_add(p, c->api, c->ret);
	}
	switch (c->type) {
	case GT_T_LAUNCH:
		p->launches++;
		return c->graph ? 0 : kernel_add(m, c->kernel);
	case GT_T_MEMCPY:
		/* a failed copy moved nothing; one without an exit probably did */
		if (!(c->has_exit && c->ret))
			p->copy[c->kind < GT_COPY__COUNT ? c->kind : GT_COPY_UNKNOWN] += c->bytes;
		return 0;
	default:
		return 0;
	}
}

static int metrics_other(void *ctx, const struct gt_hdr *rec)
{
	struct gt_metrics *m = ctx;
	struct mproc *p;

	if (rec->type == GT_REC_STATS) {
		gt_metrics__set_counters(m, &((const struct gt_stats *)rec)->c);
		return 0;
	}
	if (rec->type == GT_REC_EXIT && (p = proc_find(m, rec->pid))) {
		p->exited = true;
		p->seen = ++m->seq;
	}
	return 0;
}

struct gt_metrics *gt_metrics__new(const struct gt_metrics_opts *o)
{
	struct gt_metrics *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	if (o)
		m->o = *o;
	if (!m->o.max_procs)
		m->o.max_procs = GT_METRICS_MAX_PROCS;
	if (!m->o.top_kernels)
		m->o.top_kernels = GT_METRICS_TOP_KERNELS;
	if (!m->o.kernels_cap)
		m->o.kernels_cap = GT_METRICS_KERNELS_CAP;
	m->procs = calloc(m->o.max_procs, sizeof(*m->procs));
	m->d = gt_decoder__new(metrics_call, metrics_other, m);
	if (!m->procs || !m->d) {
		gt_metrics__free(m);
		return NULL;
	}
	return m;
}

void gt_metrics__free(struct gt_metrics *m)
{
	if (!m)
		return;
	gt_decoder__free(m->d);
	for (unsigned i = 0; i < m->nprocs; i++)
		proc_free(m->procs[i]);
	free(m->procs);
	for (size_t i = 0; i < m->nk; i++) {
		free(m->kv[i]->name);
		free(m->kv[i]);
	}
	free(m->kv);
	free(m->kernels.s);
	free(m);
}

int gt_metrics__feed(struct gt_metrics *m, const struct gt_hdr *rec)
{
	struct mproc *p;
	int err = gt_decoder__feed(m->d, rec);

	if (err)
		return err;
	/* a name learned after the first call, or a new one after exec */
	if ((rec->type == GT_REC_NAME || rec->type == GT_REC_EXEC || rec->type == GT_REC_PROC_INFO) &&
	    (p = proc_find(m, rec->pid)))
		proc_rename(m, p);
	return 0;
}

int gt_metrics__finish(struct gt_metrics *m)
{
	return gt_decoder__finish(m->d);
}

void gt_metrics__set_counters(struct gt_metrics *m, const struct gt_counters *c)
{
	m->cnt = *c;
	m->has_cnt = true;
}

void gt_metrics__set_self(struct gt_metrics *m, const struct gt_metrics_self *s)
{
	m->self = *s;
	m->has_self = true;
}

/* ---- rendering ---------------------------------------------------------- */

void gt_metrics__label_value(struct obuf *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0;
	bool cut = n > max;

	if (cut)
		n = max;
	OBUF_LIT(out, "\"");
	while (i < n) {
		unsigned char c = p[i];
		size_t len;

		if (c == '\\' || c == '"') {
			char *q = obuf__room(out, 2);

			q[0] = '\\';
			q[1] = (char)c;
			out->len += 2;
			i++;
		} else if (c == '\n') {
			OBUF_LIT(out, "\\n");
			i++;
		} else if (c < 0x80) {
			obuf__mem(out, (const char *)p + i, 1);
			i++;
		} else if ((len = obuf__utf8_len(p + i, n - i))) {
			obuf__mem(out, (const char *)p + i, len);
			i += len;
		} else if (cut && obuf__utf8_len(p + i, strlen(s) - i)) {
			break;	/* a character the cut split: dropped whole */
		} else {
			OBUF_LIT(out, "\xef\xbf\xbd");
			i++;
		}
	}
	if (cut)
		OBUF_LIT(out, "...");
	OBUF_LIT(out, "\"");
}

/* Names of our own tables and families: nothing to escape. */
static void put(struct obuf *o, const char *s)
{
	obuf__mem(o, s, strlen(s));
}

static void family(struct obuf *o, const char *name, const char *type, const char *help)
{
	OBUF_LIT(o, "# HELP ");
	put(o, name);
	OBUF_LIT(o, " ");
	put(o, help);
	OBUF_LIT(o, "\n# TYPE ");
	put(o, name);
	OBUF_LIT(o, " ");
	put(o, type);
	OBUF_LIT(o, "\n");
}

/* "name{pid="N",process="..." (the caller adds labels and "} "). */
static void proc_series(struct obuf *o, const char *name, const struct mproc *p)
{
	put(o, name);
	OBUF_LIT(o, "{pid=\"");
	obuf__u64(o, p->pid);
	OBUF_LIT(o, "\",process=");
	gt_metrics__label_value(o, p->name, PROC_LABEL_MAX);
}

static void str_label(struct obuf *o, const char *key, const char *val)
{
	OBUF_LIT(o, ",");
	put(o, key);
	OBUF_LIT(o, "=\"");
	put(o, val);
	OBUF_LIT(o, "\"");
}

static void val_u64(struct obuf *o, uint64_t v)
{
	OBUF_LIT(o, "} ");
	obuf__u64(o, v);
	OBUF_LIT(o, "\n");
}

/* ns as seconds, exactly: 1650 -> 0.000001650 (no rounding through a double). */
static void val_seconds(struct obuf *o, uint64_t ns)
{
	char *p = obuf__room(o, 40), *q;
	uint64_t frac = ns % 1000000000u;

	q = obuf__fmt_u64(p, ns / 1000000000u);
	*q++ = '.';
	for (uint64_t div = 100000000u; div; div /= 10)
		*q++ = (char)('0' + frac / div % 10);
	o->len += (size_t)(q - p);
}

static void val_double(struct obuf *o, double v)
{
	char buf[40];
	int n = snprintf(buf, sizeof(buf), "%.6g", v);

	obuf__mem(o, buf, (size_t)n);
}

static void render_procs(const struct gt_metrics *m, struct obuf *o)
{
	static const char *const api_fams[2] = { "gtrace_api_calls_total", "gtrace_api_seconds_total" };

	bool smp = m->o.sampled;

	family(o, "gtrace_launches_total", "counter", smp ?
	       "Kernel and graph launch calls, per process; sampled: light mode counts them inside "
	       "its windows only (sampled=\"true\"), never scaled up." :
	       "Kernel and graph launch calls, per process.");
	for (unsigned i = 0; i < m->nprocs; i++) {
		proc_series(o, "gtrace_launches_total", m->procs[i]);
		if (smp)
			str_label(o, "sampled", "true");
		val_u64(o, m->procs[i]->launches);
	}
	family(o, api_fams[0], "counter", smp ?
	       "libcuda calls by symbol, complete or not, per process; the hot calls (launches, "
	       "async copies, queries...) light mode counts inside its windows only: "
	       "sampled=\"true\"." :
	       "libcuda calls by symbol, complete or not, per process.");
	for (unsigned i = 0; i < m->nprocs; i++)
		for (unsigned a = 0; a < GT_API__COUNT; a++)
			if (m->procs[i]->calls[a]) {
				proc_series(o, api_fams[0], m->procs[i]);
				str_label(o, "api", gt_api__name(a));
				if (smp)
					str_label(o, "sampled", gt_api__hot(a) ? "true" : "false");
				val_u64(o, m->procs[i]->calls[a]);
			}
	family(o, api_fams[1], "counter", smp ?
	       "Time inside libcuda calls that returned, by symbol, per process; sampled=\"true\": "
	       "light mode's windows only." :
	       "Time inside libcuda calls that returned, by symbol, per process.");
	for (unsigned i = 0; i < m->nprocs; i++)
		for (unsigned a = 0; a < GT_API__COUNT; a++)
			if (m->procs[i]->calls[a]) {
				proc_series(o, api_fams[1], m->procs[i]);
				str_label(o, "api", gt_api__name(a));
				if (smp)
					str_label(o, "sampled", gt_api__hot(a) ? "true" : "false");
				OBUF_LIT(o, "} ");
				val_seconds(o, m->procs[i]->api_ns[a]);
				OBUF_LIT(o, "\n");
			}
	family(o, "gtrace_sync_wait_seconds_total", "counter",
	       "Time inside context, stream and event synchronize calls, per process.");
	for (unsigned i = 0; i < m->nprocs; i++) {
		proc_series(o, "gtrace_sync_wait_seconds_total", m->procs[i]);
		OBUF_LIT(o, "} ");
		val_seconds(o, m->procs[i]->sync_ns);
		OBUF_LIT(o, "\n");
	}
}

static int cmp_fail(const void *a, const void *b)
{
	const struct fail_slot *x = a, *y = b;

	if (x->api != y->api)
		return x->api < y->api ? -1 : 1;
	return x->code < y->code ? -1 : x->code > y->code;
}

static void render_fails(const struct gt_metrics *m, struct obuf *o)
{
	const char *name = "gtrace_failed_calls_total";

	family(o, name, "counter",
	       "libcuda calls that returned an error, by symbol and CUresult code, per process.");
	for (unsigned i = 0; i < m->nprocs; i++) {
		const struct mproc *p = m->procs[i];
		struct fail_slot s[FAIL_SLOTS];

		memcpy(s, p->fail, p->nfail * sizeof(*s));
		cmp__sort(s, p->nfail, sizeof(*s), cmp_fail);
		for (unsigned j = 0; j < p->nfail; j++) {
			proc_series(o, name, p);
			str_label(o, "api", gt_api__name(s[j].api));
			OBUF_LIT(o, ",code=\"");
			obuf__i64(o, s[j].code);
			OBUF_LIT(o, "\"");
			val_u64(o, s[j].n);
		}
		if (p->fail_other) {
			proc_series(o, name, p);
			OBUF_LIT(o, ",api=\"other\",code=\"other\"");
			val_u64(o, p->fail_other);
		}
	}
}

static void render_copies(const struct gt_metrics *m, struct obuf *o)
{
	const char *name = "gtrace_copy_bytes_total";

	family(o, name, "counter",
	       "Bytes of copy calls that did not fail, by direction, per process.");
	for (unsigned i = 0; i < m->nprocs; i++)
		for (unsigned k = 0; k < GT_COPY__COUNT; k++)
			if (m->procs[i]->copy[k]) {
				proc_series(o, name, m->procs[i]);
				str_label(o, "direction", gt_copy_kind__name(k));
				val_u64(o, m->procs[i]->copy[k]);
			}
}

/* A family of one unlabelled sample. */
static void single_u64(struct obuf *o, const char *name, const char *type, const char *help,
		       bool has, uint64_t v)
{
	family(o, name, type, help);
	if (has) {
		put(o, name);
		OBUF_LIT(o, " ");
		obuf__u64(o, v);
		OBUF_LIT(o, "\n");
	}
}

static void single_double(struct obuf *o, const char *name, const char *help, bool has, double v)
{
	family(o, name, "gauge", help);
	if (has && v >= 0) {
		put(o, name);
		OBUF_LIT(o, " ");
		val_double(o, v);
		OBUF_LIT(o, "\n");
	}
}

static void render_recorder(const struct gt_metrics *m, struct obuf *o)
{
	const struct gt_metrics_self *s = &m->self;

	single_u64(o, "gtrace_events_dropped_total", "counter",
		   "Records lost to a full ring buffer.", m->has_cnt, m->cnt.drop_ringbuf);
	single_u64(o, "gtrace_state_dropped_total", "counter",
		   "ioctls and off-CPU intervals lost: their start could not be stored.", m->has_cnt,
		   m->cnt.drop_state);
	single_u64(o, "gtrace_bpf_events_total", "counter",
		   "Records the BPF programs submitted.", m->has_cnt, m->cnt.events);
	single_u64(o, "gtrace_processes", "gauge",
		   "Processes with series of their own (bounded).", true, m->nprocs);
	single_u64(o, "gtrace_processes_evicted_total", "counter",
		   "Processes whose series were dropped to keep the bound, exited ones first.",
		   true, m->evicted);
	single_double(o, "gtrace_overhead_estimate_ratio",
		      "Estimated (not measured): the costliest thread's time in probes over the rest "
		      "of the last interval.", m->has_self, s->overhead_ratio);
	single_double(o, "gtrace_duty_cycle", "Fraction of time every probe was live.",
		      m->has_self, s->duty_cycle);
	single_u64(o, "gtrace_records_total", "counter", "Records read from the ring buffer.",
		   m->has_self, s->records);
	single_u64(o, "gtrace_ring_bytes", "gauge", "Size of the ring buffer.", m->has_self,
		   s->ring_bytes);
	single_u64(o, "gtrace_ring_used_bytes", "gauge", "Bytes waiting in the ring buffer.",
		   m->has_self, s->ring_used_bytes);
	single_u64(o, "gtrace_written_bytes_total", "counter", "Trace bytes written.", m->has_self,
		   s->written_bytes);
	family(o, "gtrace_cpu_seconds_total", "counter", "CPU time of the recorder itself.");
	if (m->has_self) {
		OBUF_LIT(o, "gtrace_cpu_seconds_total ");
		val_seconds(o, s->cpu_ns);
		OBUF_LIT(o, "\n");
	}
	single_double(o, "gtrace_overhead_budget_ratio",
		      "The overhead budget (--budget) the estimate is kept under.",
		      m->has_self && s->budget_ratio > 0, s->budget_ratio);
	single_u64(o, "gtrace_overhead_shed_calls", "gauge",
		   "Always-on calls the budget moved into the light windows: their figures are "
		   "sampled from then on.", m->has_self && s->has_shed, s->shed_apis);
	single_u64(o, "gtrace_overhead_sheds_total", "counter",
		   "Times the budget moved an always-on call into the windows.",
		   m->has_self && s->has_shed, s->sheds);
	single_u64(o, "gtrace_overhead_given_back_total", "counter",
		   "Times the budget gave a moved call back to the always-on probes.",
		   m->has_self && s->has_shed, s->restores);
	family(o, "gtrace_gpu_metrics_cpu_seconds_total", "counter",
	       "CPU time of the GPU-metrics sampler's threads (measured; part of the recorder's).");
	if (m->has_self && s->has_sampler) {
		OBUF_LIT(o, "gtrace_gpu_metrics_cpu_seconds_total ");
		val_seconds(o, s->sampler_cpu_ns);
		OBUF_LIT(o, "\n");
	}
	single_u64(o, "gtrace_names_lost_total", "counter",
		   "Name records the daemon had no room for: its snapshots show placeholders for them.",
		   m->has_self && s->has_names, s->names_lost);
}

/* a before b in the top list: more launches, then the name */
static bool kernel_before(const struct mkernel *a, const struct mkernel *b)
{
	return a->launches != b->launches ? a->launches > b->launches : strcmp(a->name, b->name) < 0;
}

static int render_kernels(const struct gt_metrics *m, struct obuf *o)
{
	const char *name = "gtrace_top_kernel_launches";
	unsigned n = 0, cap = m->o.top_kernels;
	const struct mkernel **top = calloc(cap, sizeof(*top));

	if (!top)
		return -ENOMEM;
	/* insertion into a list of N: N is small and this runs once a scrape */
	for (size_t i = 0; i < m->nk; i++) {
		const struct mkernel *k = m->kv[i];
		unsigned j = n < cap ? n++ : cap;

		if (j == cap && !kernel_before(k, top[cap - 1]))
			continue;
		if (j == cap)
			j = cap - 1;
		for (; j > 0 && kernel_before(k, top[j - 1]); j--)
			top[j] = top[j - 1];
		top[j] = k;
	}
	family(o, name, "gauge", m->o.sampled ?
	       "Launches of the kernels launched most, all processes together, by rank (bounded); "
	       "sampled: light mode counts them inside its windows only." :
	       "Launches of the kernels launched most, all processes together, by rank (bounded).");
	for (unsigned r = 0; r < n; r++) {
		OBUF_LIT(o, "gtrace_top_kernel_launches{rank=\"");
		obuf__u64(o, r + 1);
		OBUF_LIT(o, "\",kernel=");
		gt_metrics__label_value(o, top[r]->name, KERNEL_LABEL_MAX);
		if (m->o.sampled)
			str_label(o, "sampled", "true");
		val_u64(o, top[r]->launches);
	}
	free(top);
	single_u64(o, "gtrace_untracked_kernel_launches_total", "counter",
		   "Launches of kernel names past the bound of names counted.", true,
		   m->kernels_untracked);
	return 0;
}

int gt_metrics__render(const struct gt_metrics *m, struct obuf *out)
{
	int err;

	render_procs(m, out);
	render_fails(m, out);
	render_copies(m, out);
	render_recorder(m, out);
	err = render_kernels(m, out);
	return err ? err : out->err;
}

int gt_metrics__render_cb(void *ctx, struct obuf *out)
{
	return gt_metrics__render(ctx, out);
}
