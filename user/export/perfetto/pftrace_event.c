// SPDX-License-Identifier: MIT
/*
 * The Perfetto trace writer's track events (pftrace.h, pftrace_int.h): an
 * event opened on a sequence, its name, category, flows, interned call
 * stack and debug annotations, then closed.
 */
#include <errno.h>
#include <string.h>
#include "export/perfetto/pftrace_int.h"
#include "lib/vec.h"

/* ---- events ------------------------------------------------------------- */

void pftrace__event_open(struct pftrace *w, const struct pf_track *t, struct pf_seq *s,
			 enum pf_event_type type, uint64_t ts, uint32_t name)
{
	struct pb_buf *b = &w->out;

	pfw__pkt_begin(w, s, &ts);
	w->ev = pb_buf__begin(b, F_PKT_TRACK_EVENT);
	pb_buf__varint(b, F_TE_TYPE, type);
	pb_buf__varint(b, F_TE_TRACK, t->uuid);
	if (name)
		pb_buf__varint(b, F_TE_NAME_IID, pfw__intern(w, KIND_EVENT_NAME, name));
}

void pftrace__event_category(struct pftrace *w, const char *cat, size_t n)
{
	/* a plain string, not interned: the few categories are short, and a
	 * fourth interned kind would not fit the sent keys' two bits */
	pb_buf__bytes(&w->out, F_TE_CATEGORIES, cat, n);
}

void pftrace__event_flow(struct pftrace *w, uint64_t flow_id)
{
	pb_buf__fixed64(&w->out, F_TE_FLOW, flow_id + w->flow_salt);
}

uint64_t pftrace__callstack_iid(const struct pftrace *w, uint64_t key)
{
	const uint64_t *iid = u64map__get(&w->cs_key, key);

	return iid ? *iid : 0;
}

uint64_t pftrace__callstack(struct pftrace *w, uint64_t key, const struct pftrace_frame *f, size_t n)
{
	uint64_t iid = pftrace__callstack_iid(w, key);

	if (iid || !n)
		return iid;
	if (n > UINT32_MAX - w->nfr || vec__reserve(&w->fr, &w->fr_cap, w->nfr, n, 1024) ||
	    vec__reserve(&w->cs, &w->cs_cap, w->ncs, 1, 256)) {
		pfw__fail(w, -ENOMEM, "intern a call stack");
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		w->fr[w->nfr + i] = (struct iframe){
			.function = f[i].function ? pftrace__cstring(w, f[i].function) : 0,
			.source = f[i].source ? pftrace__cstring(w, f[i].source) : 0,
			.line = f[i].line, .python = f[i].python,
		};
	w->cs[w->ncs++] = (struct istack){ .first = (uint32_t)w->nfr, .n = (uint32_t)n };
	w->nfr += n;
	iid = w->ncs;
	if (u64map__set(&w->cs_key, key, iid)) {
		pfw__fail(w, -ENOMEM, "intern a call stack");
		return 0;
	}
	return iid;
}

void pftrace__event_callstack_iid(struct pftrace *w, uint64_t iid)
{
	uint64_t key = iid << 2 | KIND_CALLSTACK;

	if (!iid)
		return;
	if (!u64map__get(&w->seq->sent, key)) {
		if (u64map__set(&w->seq->sent, key, 1))
			pfw__fail(w, -ENOMEM, "intern a call stack");
		w->pending_cs = iid;
	}
	pb_buf__varint(&w->out, F_TE_CALLSTACK_IID, iid);
}

int pftrace__event_close(struct pftrace *w)
{
	pb_buf__end(&w->out, w->ev);
	return pfw__pkt_end(w);
}

static size_t ann_begin(struct pftrace *w, uint32_t name)
{
	size_t m = pb_buf__begin(&w->out, F_TE_ANNOT);

	pb_buf__varint(&w->out, F_DA_NAME_IID, pfw__intern(w, KIND_ANNOT_NAME, name));
	return m;
}

static void ann_varint(struct pftrace *w, uint32_t name, uint32_t field, uint64_t v)
{
	size_t m = ann_begin(w, name);

	pb_buf__varint(&w->out, field, v);
	pb_buf__end(&w->out, m);
}

void pftrace__ann_uint(struct pftrace *w, uint32_t name, uint64_t v)
{
	ann_varint(w, name, F_DA_UINT, v);
}

void pftrace__ann_int(struct pftrace *w, uint32_t name, int64_t v)
{
	ann_varint(w, name, F_DA_INT, (uint64_t)v);
}

void pftrace__ann_bool(struct pftrace *w, uint32_t name, bool v)
{
	ann_varint(w, name, F_DA_BOOL, v);
}

void pftrace__ann_double(struct pftrace *w, uint32_t name, double v)
{
	size_t m = ann_begin(w, name);
	uint64_t bits;

	memcpy(&bits, &v, sizeof(bits));
	pb_buf__fixed64(&w->out, F_DA_DOUBLE, bits);
	pb_buf__end(&w->out, m);
}

void pftrace__ann_ptr(struct pftrace *w, uint32_t name, uint64_t v)
{
	ann_varint(w, name, F_DA_PTR, v);
}

void pftrace__ann_str(struct pftrace *w, uint32_t name, uint32_t str)
{
	if (str)
		ann_varint(w, name, F_DA_STR_IID, pfw__intern(w, KIND_ANNOT_STR, str));
}

/* An array: trace_processor shows name[0], name[1], … */
void pftrace__ann_uints(struct pftrace *w, uint32_t name, const uint32_t *v, int n)
{
	size_t m = ann_begin(w, name);

	for (int i = 0; i < n; i++) {
		size_t e = pb_buf__begin(&w->out, F_DA_ARRAY);

		pb_buf__varint(&w->out, F_DA_UINT, v[i]);
		pb_buf__end(&w->out, e);
	}
	pb_buf__end(&w->out, m);
}

