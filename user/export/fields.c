// SPDX-License-Identifier: MIT
/*
 * The fields of a call shared by dump and the exports (fields.h says why
 * they are kept in one place); those of a process' records are in
 * fields_proc.c, of the GPU side in fields_gpu.c, of the daemon's and
 * capture control's in fields_daemon.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "export/fields.h"
#include "export/fields_int.h"
#include "decode/capture_spans.h"
#include "decode/pass.h"
#include "format/api.h"
#include "format/capture.h"
#include "format/records.h"
#include "format/trace_file.h"


/* Capture flags: ["refused","exit"] (JSON) or refused|exit (CSV, brackets
 * false); unknown bits as one hex number. At most 40 bytes. */
static char *flags_text(char *p, uint32_t flags, bool brackets)
{
	char text[48], *t, *save = NULL;
	bool first = true;

	gt_capture_flags__text(flags, "|", text, sizeof(text));
	if (!brackets) {
		size_t n = strlen(text);

		memcpy(p, text, n);
		return p + n;
	}
	*p++ = '[';
	for (t = strtok_r(text, "|", &save); t; t = strtok_r(NULL, "|", &save)) {
		size_t n = strlen(t);

		if (!first)
			*p++ = ',';
		first = false;
		*p++ = '"';
		memcpy(p, t, n);
		p += n;
		*p++ = '"';
	}
	*p++ = ']';
	return p;
}

/* v / 10^digits as the exact decimal, at most digits decimals and no
 * trailing zeros: (42500, 4) -> 4.25, (87125000, 6) -> 87.125, (100, 2) ->
 * 1.  At most 21 + digits bytes. */
static char *fixed_text(char *p, uint64_t v, unsigned digits)
{
	uint64_t scale = 1;
	unsigned frac;

	for (unsigned i = 0; i < digits; i++)
		scale *= 10;
	frac = (unsigned)(v % scale);
	p = obuf__fmt_u64(p, v / scale);
	if (!frac)
		return p;
	while (frac % 10 == 0) {
		frac /= 10;
		digits--;
	}
	*p++ = '.';
	for (unsigned i = digits; i-- > 0; frac /= 10)
		p[i] = (char)('0' + frac % 10);
	return p + digits;
}

/* ppm as the exact percentage, a number of JSON and CSV alike: 42500 ->
 * 4.25, 1 -> 0.0001, 1000000 -> 100.  At most 25 bytes. */
static char *ppm_text(char *p, uint64_t ppm)
{
	return fixed_text(p, ppm, 4);
}

/* Millionths as the exact decimal (CF_K_MICRO): 87125000 -> 87.125,
 * -1500000 -> -1.5, 0 -> 0.  At most 28 bytes. */
static char *micro_text(char *p, int64_t micro)
{
	if (micro < 0)
		*p++ = '-';
	return fixed_text(p, micro < 0 ? (uint64_t)0 - (uint64_t)micro : (uint64_t)micro, 6);
}

char *fields__scalar(char *p, const struct cf_val *f, bool brackets)
{
	switch (f->kind) {
	case CF_K_U64:
		return obuf__fmt_u64(p, f->u);
	case CF_K_I64:
		if (f->i >= 0)
			return obuf__fmt_u64(p, (uint64_t)f->i);
		*p++ = '-';
		return obuf__fmt_u64(p, (uint64_t)0 - (uint64_t)f->i);
	case CF_K_BOOL:
		memcpy(p, f->b ? "true" : "false", f->b ? 4 : 5);
		return p + (f->b ? 4 : 5);
	case CF_K_FLAGS:
		return flags_text(p, (uint32_t)f->u, brackets);
	case CF_K_PPM:
		return ppm_text(p, f->u);
	case CF_K_MICRO:
		return micro_text(p, f->i);
	case CF_K_DIM3:
		if (brackets)
			*p++ = '[';
		p = obuf__fmt_u64(p, f->dim[0]);
		*p++ = ',';
		p = obuf__fmt_u64(p, f->dim[1]);
		*p++ = ',';
		p = obuf__fmt_u64(p, f->dim[2]);
		if (brackets)
			*p++ = ']';
		return p;
	default:
		return p;
	}
}


/* ------------------------------------------------------------ fields */

/* Every field's dump name, in one list so that the names and the JSON keys
 * cannot disagree. */
#define CF_FIELDS(X)								\
	X(CF_TS, "ts") X(CF_PID, "pid") X(CF_TID, "tid") X(CF_CPU, "cpu")	\
	X(CF_TYPE, "type") X(CF_API, "api") X(CF_DUR, "dur") X(CF_RET, "ret")	\
	X(CF_FAILED, "failed") X(CF_INCOMPLETE, "incomplete")			\
	X(CF_KERNEL, "kernel") X(CF_MANGLED, "mangled") X(CF_FUNC, "func")	\
	X(CF_GRID, "grid") X(CF_BLOCK, "block") X(CF_SHMEM, "shmem")		\
	X(CF_STREAM, "stream") X(CF_BYTES, "bytes") X(CF_KIND, "kind")		\
	X(CF_DST, "dst") X(CF_SRC, "src") X(CF_PTR, "ptr") X(CF_HANDLE, "handle")	\
	X(CF_PARENT, "parent") X(CF_NAME, "name") X(CF_PATH, "path")		\
	X(CF_EVENT, "event") X(CF_PPID, "ppid") X(CF_COMM, "comm")		\
	X(CF_EXIT_CODE, "exit_code") X(CF_GRAPH, "graph") X(CF_CTX, "ctx")	\
	X(CF_COOPERATIVE, "cooperative") X(CF_CGROUP, "cgroup")		\
	X(CF_DEVICE, "device") X(CF_CMD, "cmd") X(CF_RM, "rm") X(CF_FD, "fd")	\
	X(CF_STATE, "state") X(CF_NEXT_CPU, "next_cpu")				\
	X(CF_SRC_DEVICE, "src_device") X(CF_DST_DEVICE, "dst_device")		\
	X(CF_NCCL_COMM, "communicator") X(CF_UID, "uid") X(CF_RANK, "rank") X(CF_NRANKS, "nranks")	\
	X(CF_SEQ, "seq") X(CF_COUNT, "count") X(CF_DATATYPE, "datatype") X(CF_OP, "op")	\
	X(CF_PEER, "peer") X(CF_GROUP, "group") X(CF_LOCAL_RANK, "local_rank")		\
	X(CF_WORLD_SIZE, "world_size") X(CF_LOCAL_WORLD, "local_world")	\
	X(CF_NCCL_TS, "nccl_ts")						\
	X(CF_CONTEXT, "context") X(CF_STREAM_ID, "stream_id")		\
	X(CF_CORRELATION, "correlation")		\
	X(CF_LAUNCH_TS, "launch_ts") X(CF_LAUNCH_TID, "launch_tid")		\
	X(CF_CAUSALITY, "causality") X(CF_BY_ORDER, "by_order")		\
	X(CF_CLOCK_FIXED, "clock_fixed")					\
	X(CF_SOURCE, "source") X(CF_INDEX, "index") X(CF_FLAGS, "flags")	\
	X(CF_LATENCY_NS, "latency_ns")						\
	X(CF_CODE, "code") X(CF_WAIT_NS, "wait_ns") X(CF_SUPPRESSED, "suppressed")	\
	X(CF_REASON, "reason") X(CF_INTERVAL_NS, "interval_ns") X(CF_HITS, "hits")	\
	X(CF_PROBE_NS, "probe_ns") X(CF_TOTAL_NS, "total_ns") X(CF_BPF_NS, "bpf_ns")	\
	X(CF_ESTIMATE_PPM, "estimate_ppm") X(CF_ESTIMATE_PCT, "estimate_pct")	\
	X(CF_BUDGET_PPM, "budget_ppm") X(CF_BUDGET_PCT, "budget_pct")		\
	X(CF_DUTY_PPM, "duty_ppm") X(CF_DUTY_PCT, "duty_pct")			\
	X(CF_PERIOD_MS, "period_ms") X(CF_HIT_NS, "hit_ns") X(CF_RET_NS, "ret_ns")	\
	X(CF_SAMPLER_PPM, "sampler_ppm") X(CF_SAMPLER_PCT, "sampler_pct")		\
	X(CF_CUT, "cut")							\
	X(CF_METRIC, "metric") X(CF_VALUE, "value") X(CF_UNIT, "unit")	\
	X(CF_STACK, "stack") X(CF_GRAPH_NODE, "graph_node")			\
	X(CF_CAPTURE_TS, "capture_ts") X(CF_CAPTURE_TID, "capture_tid")	\
	X(CF_CLONED_FROM, "cloned_from")

const char *const cf_names[CF__COUNT] = {
#define X(id, name) [id] = name,
	CF_FIELDS(X)
#undef X
};

/* "name": of every field, quotes and colon included, padded to a fixed size:
 * a key is copied with one fixed-size move (a copy of variable length
 * compiles to a string instruction that costs more than the rest of the
 * field) and the length then advanced. */
#define JSON_KEY_MAX 16
static const struct {
	char s[JSON_KEY_MAX];
	uint8_t len;
} json_keys[CF__COUNT] = {
#define X(id, name) [id] = { "\"" name "\":", sizeof(name) + 2 },
	CF_FIELDS(X)
#undef X
};

#define X(id, name) _Static_assert(sizeof(name) + 2 <= JSON_KEY_MAX, "the JSON key of " name " is too long");
CF_FIELDS(X)
#undef X

const char *const gt_counter_names[] = {
	"events", "drop_ringbuf", "drop_stash", "str_fault", "args_fault",
	"names_mem", "names_mem_rejected", "names_mem_verified",
	"names_mem_mismatch", "attach_files", "attach_probes",
	"attach_failed", "records_written", "ranges_nested", "ranges_refused",
	"drop_state",
};
const unsigned gt_counter_count = sizeof(gt_counter_names) / sizeof(gt_counter_names[0]);

_Static_assert(sizeof(gt_counter_names) / sizeof(gt_counter_names[0]) ==
	       sizeof(struct gt_counters) / sizeof(__u64),
	       "a counter of struct gt_counters has no name here");

static void launch_fields(const struct gt_callrec *c, struct cf_val *v, unsigned *n)
{
	if (c->graph) {
		vu(v, n, CF_GRAPH, c->handle);
		vu(v, n, CF_STREAM, c->stream);
		return;
	}
	vs(v, n, CF_KERNEL, c->kernel ? c->kernel : "");
	if (c->mangled)
		vs(v, n, CF_MANGLED, c->mangled);
	vu(v, n, CF_FUNC, c->handle);
	vd(v, n, CF_GRID, c->grid);
	vd(v, n, CF_BLOCK, c->block);
	vu(v, n, CF_SHMEM, c->shmem);
	vu(v, n, CF_STREAM, c->stream);
	if (c->launch_flags & GT_LAUNCH_COOPERATIVE)
		vb(v, n, CF_COOPERATIVE, true);
}

static void sync_fields(const struct gt_callrec *c, const struct gt_api_info *ai,
			struct cf_val *v, unsigned *n)
{
	switch (ai->cls) {
	case GT_CLS_STREAM_WAIT:
		vu(v, n, CF_STREAM, c->handle);
		vu(v, n, CF_EVENT, c->handle2);
		break;
	case GT_CLS_EVENT_RECORD:
		vu(v, n, CF_EVENT, c->handle);
		vu(v, n, CF_STREAM, c->handle2);
		break;
	default:
		/* SYNC / QUERY: the one handle is a stream, an event or a context */
		if (c->has_stream)
			vu(v, n, CF_STREAM, c->stream);
		else if (ai->a >= 0 && c->api == GT_API_cuCtxSynchronize_v2)
			vu(v, n, CF_CTX, c->handle);
		else if (ai->a >= 0)
			vu(v, n, CF_EVENT, c->handle);
		break;
	}
}

static void module_fields(const struct gt_callrec *c, const struct gt_api_info *ai,
			  struct cf_val *v, unsigned *n)
{
	switch (ai->cls) {
	case GT_CLS_MODULE_LOAD:
		if (c->out_valid)
			vu(v, n, CF_HANDLE, c->out);
		if (c->str)
			vs(v, n, CF_PATH, c->str);
		break;
	case GT_CLS_GET_FUNC:
	case GT_CLS_KERNEL_FUNC:
		if (c->out_valid)
			vu(v, n, CF_HANDLE, c->out);
		vu(v, n, CF_PARENT, c->handle);
		if (c->str)
			vs(v, n, CF_NAME, c->str);
		break;
	default:
		/* unload, func name: the handle is an argument */
		vu(v, n, CF_HANDLE, c->handle);
		if (c->str)
			vs(v, n, CF_NAME, c->str);
		break;
	}
}

unsigned fields__call(const struct gt_callrec *c, struct cf_val v[CF_MAX])
{
	const struct gt_api_info *ai = gt_api__info(c->api);
	unsigned n = 0;

	vu(v, &n, CF_TS, c->ts);
	vu(v, &n, CF_PID, c->pid);
	vu(v, &n, CF_TID, c->tid);
	vu(v, &n, CF_CPU, c->cpu);
	vs(v, &n, CF_TYPE, gt_call_type__name(c->type));
	vs(v, &n, CF_API, ai ? ai->name : "unknown");
	if (c->has_exit) {
		vu(v, &n, CF_DUR, c->dur);
		vi(v, &n, CF_RET, c->ret);
		vb(v, &n, CF_FAILED, c->ret != 0);
	} else if (!c->entry_only) {
		vb(v, &n, CF_INCOMPLETE, true);
	}
	/* absent when the trace did not show it (decode/devices.c) */
	if (c->device >= 0)
		vu(v, &n, CF_DEVICE, (uint64_t)c->device);
	if (c->stack)
		vu(v, &n, CF_STACK, c->stack);
	if (c->nccl_ts)
		vu(v, &n, CF_NCCL_TS, c->nccl_ts);
	switch (c->type) {
	case GT_T_LAUNCH:
		launch_fields(c, v, &n);
		break;
	case GT_T_MEMCPY:
		vu(v, &n, CF_BYTES, c->bytes);
		vs(v, &n, CF_KIND, gt_copy_kind__name(c->kind));
		vu(v, &n, CF_DST, c->ptr);
		vu(v, &n, CF_SRC, c->src);
		if (c->src_device >= 0)
			vu(v, &n, CF_SRC_DEVICE, (uint64_t)c->src_device);
		if (c->dst_device >= 0)
			vu(v, &n, CF_DST_DEVICE, (uint64_t)c->dst_device);
		if (c->has_stream)
			vu(v, &n, CF_STREAM, c->stream);
		break;
	case GT_T_MEMSET:
		vu(v, &n, CF_BYTES, c->bytes);
		vu(v, &n, CF_DST, c->ptr);
		if (c->has_stream)
			vu(v, &n, CF_STREAM, c->stream);
		break;
	case GT_T_ALLOC:
		vu(v, &n, CF_BYTES, c->bytes);
		if (c->out_valid)
			vu(v, &n, CF_PTR, c->ptr);
		if (c->has_stream)
			vu(v, &n, CF_STREAM, c->stream);
		break;
	case GT_T_FREE:
		vu(v, &n, CF_PTR, c->handle);
		if (c->has_stream)
			vu(v, &n, CF_STREAM, c->stream);
		break;
	case GT_T_SYNC:
		if (ai)
			sync_fields(c, ai, v, &n);
		break;
	case GT_T_MODULE:
		if (ai)
			module_fields(c, ai, v, &n);
		break;
	case GT_T_CONTEXT:
	case GT_T_STREAM:
	case GT_T_EVENT:
		/* creators: the new handle when they returned one; others: the argument */
		if (ai && (ai->out >= 0 ? c->out_valid : ai->a >= 0))
			vu(v, &n, CF_HANDLE, c->handle);
		break;
	default:
		break;
	}
	return n;
}

unsigned fields__nccl(const struct gt_ncclrec *nc, struct cf_val v[CF_MAX])
{
	const char *api = gt_nccl__name(nc->api), *dt = gt_nccl_dtype__name(nc->datatype);
	const char *op = gt_nccl_op__name(nc->op);
	bool coll = nc->kind == GT_NCCL_K_COLL, data = coll || nc->kind == GT_NCCL_K_P2P;
	unsigned n = 0;

	vu(v, &n, CF_TS, nc->ts);
	vu(v, &n, CF_PID, nc->pid);
	vu(v, &n, CF_TID, nc->tid);
	vu(v, &n, CF_CPU, nc->cpu);
	vs(v, &n, CF_TYPE, "nccl");
	vs(v, &n, CF_API, api ? api : "unknown");
	if (nc->has_exit) {
		vu(v, &n, CF_DUR, nc->dur);
		vi(v, &n, CF_RET, nc->ret);
		vb(v, &n, CF_FAILED, nc->ret != 0 && nc->ret != 7);
	} else {
		vb(v, &n, CF_INCOMPLETE, true);
	}
	vs(v, &n, CF_KIND, gt_nccl_kind__name(nc->kind));
	if (nc->comm)
		vu(v, &n, CF_NCCL_COMM, nc->comm);
	/* what the communicator's init said; absent when the trace did not show it */
	if (nc->uid)
		vu(v, &n, CF_UID, nc->uid);
	if (nc->rank >= 0)
		vi(v, &n, CF_RANK, nc->rank);
	if (nc->nranks >= 0)
		vi(v, &n, CF_NRANKS, nc->nranks);
	if (nc->seq)
		vu(v, &n, CF_SEQ, nc->seq);
	if (data) {
		vu(v, &n, CF_COUNT, nc->count);
		if (dt)
			vs(v, &n, CF_DATATYPE, dt);
		else
			vu(v, &n, CF_DATATYPE, nc->datatype);
		vu(v, &n, CF_BYTES, nc->bytes);
	}
	if (nc->op != GT_NCCL_NONE32 && op)
		vs(v, &n, CF_OP, op);
	else if (nc->op != GT_NCCL_NONE32)
		vu(v, &n, CF_OP, nc->op);
	if (nc->peer >= 0)
		vi(v, &n, CF_PEER, nc->peer);
	if (nc->sendbuff)
		vu(v, &n, CF_SRC, nc->sendbuff);
	if (nc->recvbuff)
		vu(v, &n, CF_DST, nc->recvbuff);
	if (data)
		vu(v, &n, CF_STREAM, nc->stream);
	if (nc->device >= 0)
		vu(v, &n, CF_DEVICE, (uint64_t)nc->device);
	if (nc->in_group)
		vb(v, &n, CF_GROUP, true);
	if (nc->stack)
		vu(v, &n, CF_STACK, nc->stack);
	return n;
}

char *fields__nccl_name(const struct gt_ncclrec *nc, char *buf, size_t len)
{
	const char *dt = gt_nccl_dtype__name(nc->datatype), *name = gt_nccl__short_name(nc->api);
	char size[24];

	switch (nc->kind) {
	case GT_NCCL_K_COLL:
	case GT_NCCL_K_P2P:
		fields__bytes(size, sizeof(size), nc->bytes);
		if (nc->kind == GT_NCCL_K_P2P)
			snprintf(buf, len, "%s %s %s %s %d", name, dt ? dt : "?", size,
				 nc->api == GT_NCCL_API_ncclSend ? "to" : "from", nc->peer);
		else
			snprintf(buf, len, "%s %s %s", name, dt ? dt : "?", size);
		break;
	case GT_NCCL_K_INIT:
		if (nc->rank >= 0)
			snprintf(buf, len, "%s rank %d/%d", name, nc->rank, nc->nranks);
		else
			snprintf(buf, len, "%s", name);
		break;
	default:
		snprintf(buf, len, "%s", name);
		break;
	}
	return buf;
}

char *fields__bytes(char *buf, size_t len, uint64_t bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	unsigned u = 0;

	while (u < 5 && bytes >= (1ull << (10 * (u + 1))))
		u++;
	if (!u || !(bytes & ((1ull << (10 * u)) - 1)))
		snprintf(buf, len, "%llu %s", (unsigned long long)(bytes >> (10 * u)), units[u]);
	else
		snprintf(buf, len, "%.1f %s", (double)bytes / (double)(1ull << (10 * u)), units[u]);
	return buf;
}

unsigned fields__record(struct gt_decoder *d, const struct gt_hdr *rec, struct cf_val v[CF_MAX])
{
	unsigned n = fields__proc(rec, v);

	if (!n)
		n = fields__capture(rec, v);
	if (!n)
		n = fields__trigger(rec, v);
	if (!n)
		n = fields__overhead(rec, v);
	if (!n)
		n = fields__gpu_metric(rec, v);
	return n ? n : fields__gpu(d, rec, v);
}

/* Room one field takes apart from a string value: comma, key, and the
 * longest number or [x,y,z]. */
#define FIELD_ROOM (1 + JSON_KEY_MAX + 3 * 11 + 2)

void fields__json(struct obuf *o, const struct cf_val *v, unsigned n, uint64_t skip)
{
	bool first = true;

	/* each field through a local pointer, the length stored once: storing
	 * it after every piece made this the hottest loop of dump */
	for (unsigned i = 0; i < n; i++) {
		const struct cf_val *f = &v[i];
		char *p;

		if (cf_skips(skip, f->id))
			continue;
		p = obuf__room(o, FIELD_ROOM);
		if (!first)
			*p++ = ',';
		first = false;
		memcpy(p, json_keys[f->id].s, JSON_KEY_MAX);
		p += json_keys[f->id].len;
		switch (f->kind) {
		default:
			p = fields__scalar(p, f, true);
			break;
		case CF_K_STR:
			o->len = (size_t)(p - o->b);
			obuf__json_strn(o, f->s, f->len);
			continue;
		}
		o->len = (size_t)(p - o->b);
	}
}

int fields__writer_open(struct obuf *ob, FILE *out, gt_call_cb on_call, gt_rec_cb on_other, void *ctx,
			struct gt_decoder **d, const char **why)
{
	int rc = obuf__init(ob, out);

	if (rc) {
		*why = strerror(-rc);
		return rc;
	}
	*d = gt_decoder__new(on_call, on_other, ctx);
	if (!*d) {
		obuf__free(ob);
		*why = strerror(ENOMEM);
		return -ENOMEM;
	}
	return 0;
}

int fields__decode_all(struct trace_reader *r, struct gt_decoder *d, const char **why)
{
	static __thread char msg[128];
	enum gt_pass_fail fail;
	int rc = gt_pass__run(r, d, NULL, &fail);

	if (!rc)
		return 0;
	if (fail == GT_PASS_READ) {
		snprintf(msg, sizeof(msg), "read error: %s", strerror(-rc));
		*why = msg;
		return rc;
	}
	/* the decoder's own errors and those of the callbacks (writes) */
	snprintf(msg, sizeof(msg), "%s", strerror(-rc));
	*why = msg;
	return rc;
}

void fields__json_frames(struct obuf *o, const struct gt_decoder *d, uint32_t stack)
{
	size_t n = gt_decoder__stack(d, stack, NULL);
	char buf[1200];

	OBUF_LIT(o, "[");
	for (size_t i = 0; i < n; i++) {
		struct gt_frame f;

		if (i)
			OBUF_LIT(o, ",");
		if (gt_decoder__frame(d, stack, i, &f))
			obuf__json_str(o, gt_frame__str(&f, buf, sizeof(buf)));
		else
			OBUF_LIT(o, "null");
	}
	OBUF_LIT(o, "]");
}
