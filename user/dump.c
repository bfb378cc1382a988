// SPDX-License-Identifier: MIT
/*
 * `gtrace-bpf dump`: every decoded call and process event of a trace as one
 * JSON object per line, or with --summary a per-api table and the counters.
 *
 * Dumps of large traces are piped into jq or scripts, so lines are built in
 * one big buffer with hand-written number and string formatting: stdio per
 * field would cost more than the decoding.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "decode.h"
#include "dump.h"
#include "trace_file.h"

#define OBUF_CAP	(256 * 1024)	/* output written in pieces of about this */
#define OBUF_SLACK	512		/* room one append of fixed size may take */
#define ESC_CHUNK	1024		/* string bytes escaped per room check */

struct obuf {
	char *b;		/* OBUF_CAP bytes */
	size_t len;		/* bytes waiting to be written */
	FILE *f;		/* where they go */
	int err;		/* first write error, negative errno */
};

/* Per-api totals of --summary. */
struct api_sum {
	uint64_t calls;		/* calls emitted, incomplete ones included */
	uint64_t failed;	/* calls that returned non-zero */
	uint64_t incomplete;	/* calls without an exit */
	uint64_t dur;		/* sum of dur of calls with an exit, ns */
};

struct dump {
	const struct dump_opts *o;
	struct obuf ob;
	struct api_sum sums[GT_API__COUNT];
	uint64_t proc_events;	/* exec/fork/exit records (summary) */
};

static int ob_flush(struct obuf *o)
{
	if (o->len && !o->err && fwrite(o->b, 1, o->len, o->f) != o->len)
		o->err = errno ? -errno : -EIO;
	o->len = 0;
	return o->err;
}

/* Makes room for n bytes (n <= OBUF_CAP) and returns where they go. */
static inline char *ob_room(struct obuf *o, size_t n)
{
	if (OBUF_CAP - o->len < n)
		ob_flush(o);
	return o->b + o->len;
}

static inline void ob_mem(struct obuf *o, const char *s, size_t n)
{
	memcpy(ob_room(o, n), s, n);
	o->len += n;
}

/* Literal strings only: the length is known at compile time. */
#define OB_LIT(o, s) ob_mem((o), (s), sizeof(s) - 1)

static inline void ob_u64(struct obuf *o, uint64_t v)
{
	char tmp[20], *p = ob_room(o, 20);
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	o->len += n;
	while (n)
		*p++ = tmp[--n];
}

static inline void ob_i64(struct obuf *o, int64_t v)
{
	if (v < 0) {
		OB_LIT(o, "-");
		ob_u64(o, (uint64_t)0 - (uint64_t)v);
	} else {
		ob_u64(o, (uint64_t)v);
	}
}

/* Length of a valid UTF-8 sequence starting at s (at most n bytes), 0 if
 * the bytes there are not one. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;

	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (len > n)
		return 0;
	/* the second byte rules out overlong forms, surrogates and > U+10FFFF */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/* Bytes that JSON lets through as they are: printable ASCII but the quote and backslash. */
static const bool plain[256] = {
	[' '] = 1, ['!'] = 1, ['#' ... '['] = 1, [']' ... '~'] = 1,
};

/* A JSON string of n bytes of s.  Bytes that are not UTF-8 come out as
 * \u00XX (their Latin-1 reading) so that every line is valid JSON. */
static void ob_strn(struct obuf *o, const char *str, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	OB_LIT(o, "\"");
	while (i < n) {
		size_t end = n - i > ESC_CHUNK ? i + ESC_CHUNK : n;
		char *p = ob_room(o, (end - i) * 6 + 8), *p0 = p;

		while (i < end) {
			unsigned char c = s[i];
			size_t l;

			if (plain[c]) {
				/* names are mostly plain: copy the run at once */
				size_t j = i + 1;

				while (j < end && plain[s[j]])
					j++;
				memcpy(p, s + i, j - i);
				p += j - i;
				i = j;
				continue;
			}
			switch (c) {
			case '"':  *p++ = '\\'; *p++ = '"'; i++; continue;
			case '\\': *p++ = '\\'; *p++ = '\\'; i++; continue;
			case '\n': *p++ = '\\'; *p++ = 'n'; i++; continue;
			case '\r': *p++ = '\\'; *p++ = 'r'; i++; continue;
			case '\t': *p++ = '\\'; *p++ = 't'; i++; continue;
			default: break;
			}
			l = c >= 0x80 ? utf8_seq(s + i, n - i) : 0;
			if (l) {
				/* may run past end by up to 3 bytes: the +8 covers it */
				memcpy(p, s + i, l);
				p += l;
				i += l;
				continue;
			}
			memcpy(p, "\\u00", 4);
			p[4] = hex[c >> 4];
			p[5] = hex[c & 0xf];
			p += 6;
			i++;
		}
		o->len += (size_t)(p - p0);
	}
	OB_LIT(o, "\"");
}

static inline void ob_str(struct obuf *o, const char *s)
{
	ob_strn(o, s, strlen(s));
}

/* ,"key":value — key includes its quotes, comma and colon. */
#define OB_KU(o, key, v) do { OB_LIT(o, key); ob_u64(o, v); } while (0)
#define OB_KS(o, key, s) do { OB_LIT(o, key); ob_str(o, s); } while (0)

static void ob_dim3(struct obuf *o, const uint32_t v[3])
{
	OB_LIT(o, "[");
	ob_u64(o, v[0]);
	OB_LIT(o, ",");
	ob_u64(o, v[1]);
	OB_LIT(o, ",");
	ob_u64(o, v[2]);
	OB_LIT(o, "]");
}

static void ob_common(struct obuf *o, uint64_t ts, uint32_t pid, uint32_t tid, uint16_t cpu)
{
	OB_KU(o, "{\"ts\":", ts);
	OB_KU(o, ",\"pid\":", pid);
	OB_KU(o, ",\"tid\":", tid);
	OB_KU(o, ",\"cpu\":", cpu);
}

static void put_launch(struct obuf *o, const struct gt_callrec *c)
{
	if (c->graph) {
		OB_KU(o, ",\"graph\":", c->handle);
		OB_KU(o, ",\"stream\":", c->stream);
		return;
	}
	OB_KS(o, ",\"kernel\":", c->kernel ? c->kernel : "");
	if (c->mangled)
		OB_KS(o, ",\"mangled\":", c->mangled);
	OB_KU(o, ",\"func\":", c->handle);
	OB_LIT(o, ",\"grid\":");
	ob_dim3(o, c->grid);
	OB_LIT(o, ",\"block\":");
	ob_dim3(o, c->block);
	OB_KU(o, ",\"shmem\":", c->shmem);
	OB_KU(o, ",\"stream\":", c->stream);
	if (c->launch_flags & GT_LAUNCH_COOPERATIVE)
		OB_LIT(o, ",\"cooperative\":true");
}

static void put_sync(struct obuf *o, const struct gt_callrec *c, const struct gt_api_info *ai)
{
	switch (ai->cls) {
	case GT_CLS_STREAM_WAIT:
		OB_KU(o, ",\"stream\":", c->handle);
		OB_KU(o, ",\"event\":", c->handle2);
		break;
	case GT_CLS_EVENT_RECORD:
		OB_KU(o, ",\"event\":", c->handle);
		OB_KU(o, ",\"stream\":", c->handle2);
		break;
	default:
		/* SYNC / QUERY: the one handle is a stream, an event or a context */
		if (c->has_stream)
			OB_KU(o, ",\"stream\":", c->stream);
		else if (ai->a >= 0 && c->api == GT_API_cuCtxSynchronize_v2)
			OB_KU(o, ",\"ctx\":", c->handle);
		else if (ai->a >= 0)
			OB_KU(o, ",\"event\":", c->handle);
		break;
	}
}

static void put_module(struct obuf *o, const struct gt_callrec *c, const struct gt_api_info *ai)
{
	switch (ai->cls) {
	case GT_CLS_MODULE_LOAD:
		if (c->out_valid)
			OB_KU(o, ",\"handle\":", c->out);
		if (c->str)
			OB_KS(o, ",\"path\":", c->str);
		break;
	case GT_CLS_GET_FUNC:
	case GT_CLS_KERNEL_FUNC:
		if (c->out_valid)
			OB_KU(o, ",\"handle\":", c->out);
		OB_KU(o, ",\"parent\":", c->handle);
		if (c->str)
			OB_KS(o, ",\"name\":", c->str);
		break;
	default:
		/* unload, func name: the handle is an argument */
		OB_KU(o, ",\"handle\":", c->handle);
		if (c->str)
			OB_KS(o, ",\"name\":", c->str);
		break;
	}
}

static void put_call(struct obuf *o, const struct gt_callrec *c)
{
	const struct gt_api_info *ai = gt_api__info(c->api);

	ob_common(o, c->ts, c->pid, c->tid, c->cpu);
	OB_LIT(o, ",\"type\":");
	ob_str(o, gt_call_type__name(c->type));
	OB_LIT(o, ",\"api\":");
	ob_str(o, ai ? ai->name : "unknown");
	if (c->has_exit) {
		OB_KU(o, ",\"dur\":", c->dur);
		OB_LIT(o, ",\"ret\":");
		ob_i64(o, c->ret);
		if (c->ret)
			OB_LIT(o, ",\"failed\":true");
		else
			OB_LIT(o, ",\"failed\":false");
	} else {
		OB_LIT(o, ",\"incomplete\":true");
	}
	switch (c->type) {
	case GT_T_LAUNCH:
		put_launch(o, c);
		break;
	case GT_T_MEMCPY:
		OB_KU(o, ",\"bytes\":", c->bytes);
		OB_KS(o, ",\"kind\":", gt_copy_kind__name(c->kind));
		OB_KU(o, ",\"dst\":", c->ptr);
		OB_KU(o, ",\"src\":", c->src);
		if (c->has_stream)
			OB_KU(o, ",\"stream\":", c->stream);
		break;
	case GT_T_MEMSET:
		OB_KU(o, ",\"bytes\":", c->bytes);
		OB_KU(o, ",\"dst\":", c->ptr);
		if (c->has_stream)
			OB_KU(o, ",\"stream\":", c->stream);
		break;
	case GT_T_ALLOC:
		OB_KU(o, ",\"bytes\":", c->bytes);
		if (c->out_valid)
			OB_KU(o, ",\"ptr\":", c->ptr);
		if (c->has_stream)
			OB_KU(o, ",\"stream\":", c->stream);
		break;
	case GT_T_FREE:
		OB_KU(o, ",\"ptr\":", c->handle);
		if (c->has_stream)
			OB_KU(o, ",\"stream\":", c->stream);
		break;
	case GT_T_SYNC:
		if (ai)
			put_sync(o, c, ai);
		break;
	case GT_T_MODULE:
		if (ai)
			put_module(o, c, ai);
		break;
	case GT_T_CONTEXT:
	case GT_T_STREAM:
	case GT_T_EVENT:
		/* creators: the new handle when they returned one; others: the argument */
		if (ai && (ai->out >= 0 ? c->out_valid : ai->a >= 0))
			OB_KU(o, ",\"handle\":", c->handle);
		break;
	default:
		break;
	}
	OB_LIT(o, "}\n");
}

static int on_call(void *ctx, const struct gt_callrec *c)
{
	struct dump *dp = ctx;

	if (dp->o->summary) {
		struct api_sum *s = &dp->sums[c->api < GT_API__COUNT ? c->api : 0];

		s->calls++;
		if (!c->has_exit) {
			s->incomplete++;
		} else {
			s->dur += c->dur;
			if (c->ret)
				s->failed++;
		}
		return 0;
	}
	put_call(&dp->ob, c);
	return dp->ob.err;
}

static int on_other(void *ctx, const struct gt_hdr *rec)
{
	static const char *const events[] = {
		[GT_REC_EXEC] = "exec", [GT_REC_FORK] = "fork", [GT_REC_EXIT] = "exit",
	};
	const struct gt_proc_evt *pe = (const void *)rec;
	struct dump *dp = ctx;
	struct obuf *o = &dp->ob;

	if (rec->type != GT_REC_EXEC && rec->type != GT_REC_FORK && rec->type != GT_REC_EXIT)
		return 0;
	if (dp->o->summary) {
		dp->proc_events++;
		return 0;
	}
	ob_common(o, rec->ts, rec->pid, rec->tid, rec->cpu);
	OB_LIT(o, ",\"type\":\"process\",\"event\":");
	ob_str(o, events[rec->type]);
	OB_KU(o, ",\"ppid\":", pe->ppid);
	OB_LIT(o, ",\"comm\":");
	ob_strn(o, pe->comm, strnlen(pe->comm, sizeof(pe->comm)));
	if (rec->type == GT_REC_EXIT) {
		OB_LIT(o, ",\"exit_code\":");
		ob_i64(o, pe->exit_code);
	}
	OB_LIT(o, "}\n");
	return o->err;
}

static void print_summary(struct dump *dp, struct trace_reader *r, const struct gt_decoder *d)
{
	static const char *const counter_names[] = {
		"events", "drop_ringbuf", "drop_stash", "str_fault", "args_fault",
		"names_mem", "names_mem_rejected", "names_mem_verified",
		"names_mem_mismatch", "attach_files", "attach_probes",
		"attach_failed", "records_written",
	};
	const struct gt_decoder_stats *st = gt_decoder__stats(d);
	const struct gt_counters *cn = trace_reader__counters(r);
	struct api_sum tot = { 0 };
	FILE *f = dp->o->out ? dp->o->out : stdout;

	fprintf(f, "%-36s %12s %10s %10s %16s\n", "api", "calls", "failed", "incomplete",
		"total_dur_ns");
	for (unsigned i = 1; i < GT_API__COUNT; i++) {
		const struct api_sum *s = &dp->sums[i];

		if (!s->calls)
			continue;
		fprintf(f, "%-36s %12llu %10llu %10llu %16llu\n", gt_api__name(i),
			(unsigned long long)s->calls, (unsigned long long)s->failed,
			(unsigned long long)s->incomplete, (unsigned long long)s->dur);
		tot.calls += s->calls;
		tot.failed += s->failed;
		tot.incomplete += s->incomplete;
		tot.dur += s->dur;
	}
	fprintf(f, "%-36s %12llu %10llu %10llu %16llu\n", "total",
		(unsigned long long)tot.calls, (unsigned long long)tot.failed,
		(unsigned long long)tot.incomplete, (unsigned long long)tot.dur);
	fprintf(f, "%-36s %12llu\n", "process events", (unsigned long long)dp->proc_events);

	fprintf(f, "\ncounters\n");
	if (cn) {
		/* the fields of struct gt_counters in order, _reserved left out */
		const __u64 *v = &cn->events;

		_Static_assert(sizeof(counter_names) / sizeof(counter_names[0]) ==
			       offsetof(struct gt_counters, _reserved) / sizeof(__u64),
			       "a counter of struct gt_counters has no name here");
		for (size_t i = 0; i < sizeof(counter_names) / sizeof(counter_names[0]); i++)
			fprintf(f, "  %-34s %12llu\n", counter_names[i], (unsigned long long)v[i]);
	}
	fprintf(f, "\ndecoder\n");
	fprintf(f, "  %-34s %12llu\n", "unmatched_exits", (unsigned long long)st->unmatched_exits);
	fprintf(f, "  %-34s %12llu\n", "incomplete", (unsigned long long)st->open_at_end);
	fprintf(f, "  %-34s %12llu\n", "placeholder_names", (unsigned long long)st->placeholder_names);
	fprintf(f, "  %-34s %12llu\n", "unknown_records", (unsigned long long)st->unknown_records);
	if (trace_reader__truncated(r))
		fprintf(f, "\ndamage: %s\n", trace_reader__damage(r));
}

int dump__run(const struct dump_opts *o)
{
	FILE *err = o->err ? o->err : stderr;
	struct trace_reader *r = NULL;
	struct gt_decoder *d = NULL;
	const struct gt_hdr *rec;
	const char *msg = NULL;
	struct dump *dp;
	int rc, ret = 1;

	dp = calloc(1, sizeof(*dp));
	if (dp)
		dp->ob.b = malloc(OBUF_CAP);
	if (!dp || !dp->ob.b) {
		fprintf(err, "gtrace-bpf: failed to allocate output buffer: %s\n", strerror(ENOMEM));
		goto out;
	}
	dp->o = o;
	dp->ob.f = o->out ? o->out : stdout;

	rc = trace_reader__open(o->path, &r, &msg);
	if (rc) {
		fprintf(err, "gtrace-bpf: cannot read %s: %s\n", o->path,
			msg ? msg : strerror(-rc));
		goto out;
	}
	d = gt_decoder__new(on_call, on_other, dp);
	if (!d) {
		fprintf(err, "gtrace-bpf: failed to create decoder: %s\n", strerror(ENOMEM));
		goto out;
	}
	for (;;) {
		rc = trace_reader__next(r, &rec);
		if (rc < 0) {
			fprintf(err, "gtrace-bpf: cannot read %s: %s\n", o->path, strerror(-rc));
			goto out;
		}
		if (rc == 0)
			break;
		rc = gt_decoder__feed(d, rec);
		if (rc)
			break;
	}
	if (!rc)
		rc = gt_decoder__finish(d);
	if (rc && !dp->ob.err) {
		fprintf(err, "gtrace-bpf: failed to decode %s: %s\n", o->path, strerror(-rc));
		goto out;
	}
	if (!rc && !o->summary)
		rc = ob_flush(&dp->ob);
	if (!rc && o->summary)
		print_summary(dp, r, d);
	if (!rc && fflush(dp->ob.f))
		rc = -errno;
	if (rc) {
		fprintf(err, "gtrace-bpf: failed to write output: %s\n", strerror(-rc));
		goto out;
	}
	if (trace_reader__truncated(r))
		fprintf(err, "gtrace-bpf: warning: %s: %s; showing the records before it\n",
			o->path, trace_reader__damage(r));
	ret = 0;
out:
	gt_decoder__free(d);
	trace_reader__close(r);
	if (dp)
		free(dp->ob.b);
	free(dp);
	return ret;
}
