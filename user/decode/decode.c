// SPDX-License-Identifier: MIT
/*
 * The decoder: pairs libcuda call entries with their exits per thread,
 * resolves kernel names and decodes arguments by api class.
 *
 * Later tools run it over traces of hundreds of millions of records, so the
 * per-record path does no allocation once warm: per-thread stacks come from
 * a pool, maps are open-addressed, strings live in buffers owned by stack
 * slots.  Memory follows what is open (threads inside a call, kernels of
 * live processes), not the length of the trace.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "decode/decode_int.h"
#include "lib/vec.h"


static const enum gt_call_type class_type[GT_CLS__COUNT] = {
	[GT_CLS_NONE] = GT_T_INIT,
	[GT_CLS_LAUNCH] = GT_T_LAUNCH,		[GT_CLS_GRAPH] = GT_T_LAUNCH,
	[GT_CLS_MEMCPY] = GT_T_MEMCPY,		[GT_CLS_MEMCPY2D] = GT_T_MEMCPY,
	[GT_CLS_MEMCPY3D] = GT_T_MEMCPY,	[GT_CLS_MEMSET] = GT_T_MEMSET,
	[GT_CLS_ALLOC] = GT_T_ALLOC,		[GT_CLS_FREE] = GT_T_FREE,
	[GT_CLS_SYNC] = GT_T_SYNC,		[GT_CLS_STREAM_WAIT] = GT_T_SYNC,
	[GT_CLS_EVENT_RECORD] = GT_T_SYNC,	[GT_CLS_QUERY] = GT_T_SYNC,
	[GT_CLS_MODULE_LOAD] = GT_T_MODULE,	[GT_CLS_MODULE_UNLOAD] = GT_T_MODULE,
	[GT_CLS_GET_FUNC] = GT_T_MODULE,	[GT_CLS_KERNEL_FUNC] = GT_T_MODULE,
	[GT_CLS_FUNC_NAME] = GT_T_MODULE,	[GT_CLS_CTX] = GT_T_CONTEXT,
	[GT_CLS_STREAM] = GT_T_STREAM,		[GT_CLS_EVENT] = GT_T_EVENT,
	[GT_CLS_MARKER] = GT_T_MARKER,		[GT_CLS_INIT] = GT_T_INIT,
};

/* Length of a string inside a record: at most len bytes, never past the
 * end of the record (a damaged len must not make us read beyond it). */
size_t gt_rec_strlen(const struct gt_hdr *rec, const char *s, size_t len)
{
	size_t avail = rec->size - (size_t)(s - (const char *)rec);

	if (len > avail)
		len = avail;
	if (len > GT_STR_MAX - 1)
		len = GT_STR_MAX - 1;
	return strnlen(s, len);
}

/* ---- decoding ----------------------------------------------------------- */

static inline uint64_t arg(const struct open_call *e, int idx)
{
	if (idx < 0 || idx >= e->nargs)
		return 0;
	return e->args[idx];
}

static enum gt_copy_kind memtype_kind(uint64_t src, uint64_t dst)
{
	/* CUmemorytype: 1 host, 2 device, 3 array, 4 unified */
	static const enum gt_copy_kind k[4][4] = {
		{ GT_COPY_HTOH, GT_COPY_HTOD, GT_COPY_HTOA, GT_COPY_DEFAULT },
		{ GT_COPY_DTOH, GT_COPY_DTOD, GT_COPY_DTOA, GT_COPY_DEFAULT },
		{ GT_COPY_ATOH, GT_COPY_ATOD, GT_COPY_ATOA, GT_COPY_DEFAULT },
		{ GT_COPY_DEFAULT, GT_COPY_DEFAULT, GT_COPY_DEFAULT, GT_COPY_DEFAULT },
	};

	if (src < 1 || src > 4 || dst < 1 || dst > 4)
		return GT_COPY_UNKNOWN;
	return k[src - 1][dst - 1];
}

static void decode_args(struct gt_decoder *d, struct gt_callrec *c,
			const struct gt_api_info *ai, const struct open_call *e,
			const struct exit_info *x)
{
	if (ai->d >= 0) {
		c->has_stream = true;
		c->stream = arg(e, ai->d);
	}
	switch (ai->cls) {
	case GT_CLS_LAUNCH:
		if (e->rtype == GT_REC_LAUNCH) {
			c->handle = e->l.func;
			c->stream = e->l.stream;
			memcpy(c->grid, e->l.grid, sizeof(c->grid));
			memcpy(c->block, e->l.block, sizeof(c->block));
			c->shmem = e->l.shmem;
			c->launch_flags = e->l.flags;
		}
		if (ai->kind)
			c->launch_flags |= GT_LAUNCH_COOPERATIVE;
		c->has_stream = true;
		dec__launch_name(d, c);
		break;
	case GT_CLS_GRAPH:
		c->graph = true;
		c->handle = arg(e, ai->a);
		break;
	case GT_CLS_MEMCPY:
		c->ptr = arg(e, ai->a);
		c->src = arg(e, ai->b);
		c->bytes = arg(e, ai->c);
		c->kind = ai->kind < GT_COPY__COUNT ? ai->kind : GT_COPY_UNKNOWN;
		break;
	case GT_CLS_MEMCPY2D:
	case GT_CLS_MEMCPY3D:
		/* BPF copied the struct fields the decoder needs into args[] */
		c->kind = memtype_kind(arg(e, 0), arg(e, 1));
		c->bytes = arg(e, 2);
		if (c->has_stream)
			c->stream = arg(e, 3);
		c->src = arg(e, 4);
		c->ptr = arg(e, 5);
		break;
	case GT_CLS_MEMSET:
		c->ptr = arg(e, ai->a);
		c->bytes = arg(e, ai->b) * (ai->c >= 0 ? arg(e, ai->c) : 1) * ai->kind;
		break;
	case GT_CLS_ALLOC:
		c->bytes = arg(e, ai->a) * (ai->b >= 0 ? arg(e, ai->b) : 1);
		if (c->out_valid)
			c->ptr = c->out;
		break;
	case GT_CLS_FREE:
		c->handle = c->ptr = arg(e, ai->a);
		break;
	case GT_CLS_SYNC:
	case GT_CLS_QUERY:
	case GT_CLS_MODULE_UNLOAD:
		c->handle = arg(e, ai->a);
		break;
	case GT_CLS_STREAM_WAIT:
	case GT_CLS_EVENT_RECORD:
		c->handle = arg(e, ai->a);
		c->handle2 = arg(e, ai->b);
		break;
	case GT_CLS_MODULE_LOAD:
		c->handle = c->out_valid ? c->out : 0;
		c->str = e->has_str ? e->str : NULL;
		break;
	case GT_CLS_GET_FUNC:
		c->handle = arg(e, ai->a);
		c->str = e->has_str ? e->str : NULL;
		break;
	case GT_CLS_KERNEL_FUNC: {
		struct kname *k;

		c->handle = arg(e, ai->a);
		k = hmap_get(&d->kernels, c->handle, c->pid);
		c->str = k ? k->mangled : NULL;
		break;
	}
	case GT_CLS_FUNC_NAME:
		c->handle = arg(e, ai->a);
		c->str = x ? x->str : NULL;
		break;
	case GT_CLS_CTX:
	case GT_CLS_STREAM:
	case GT_CLS_EVENT:
		/* creators return the handle through the out-pointer; the others take it */
		if (ai->out >= 0)
			c->handle = c->out_valid ? c->out : 0;
		else
			c->handle = arg(e, ai->a);
		break;
	default:
		break;
	}
}

/* The entry of the innermost NCCL call open on e's thread, 0 none: the
 * entries still open there enclose e (it has left the stack, or never was
 * on it). */
static uint64_t nccl_parent(const struct gt_decoder *d, const struct open_call *e)
{
	const struct tstack *st = hmap_get(&d->threads, e->tid, e->pid);

	for (uint32_t i = st ? st->depth : 0; i > 0; i--)
		if (st->ent[i - 1].api >= GT_NCCL_API_BASE && &st->ent[i - 1] != e)
			return st->ent[i - 1].ts;
	return 0;
}

uint64_t gt_decoder__nccl_of_launch(const struct gt_decoder *d, uint32_t pid, uint32_t tid,
				    uint64_t launch_ts)
{
	const struct tstack *st = d->nccl_seen ? hmap_get(&d->threads, tid, pid) : NULL;

	for (uint32_t i = st ? st->depth : 0; i > 0; i--) {
		const struct open_call *e = &st->ent[i - 1];

		if (e->ts == launch_ts && e->api < GT_NCCL_API_BASE)
			return nccl_parent(d, e);
	}
	return 0;
}

static int emit(struct gt_decoder *d, const struct open_call *e, const struct exit_info *x,
		uint64_t exit_ts)
{
	const struct gt_api_info *ai;
	struct gt_callrec c;
	int rc;

	if (e->api >= GT_NCCL_API_BASE)
		return dec__nccl_emit(d, e, x, exit_ts);
	ai = gt_api__info(e->api);
	memset(&c, 0, sizeof(c));
	c.ts = e->ts;
	c.pid = e->pid;
	c.tid = e->tid;
	c.cpu = e->cpu;
	c.api = e->api;
	c.cookie = e->cookie;
	c.stack = e->stack;
	c.type = class_type[ai->cls];
	if (x) {
		c.has_exit = true;
		c.dur = exit_ts >= e->ts ? exit_ts - e->ts : 0;
		c.ret = x->ret;
		/* an out value means something only when the call succeeded */
		if (ai->out >= 0 && ai->ret == GT_R_RET && (x->flags & GT_RET_OUT) && x->ret == 0) {
			c.out = x->out;
			c.out_valid = true;
		}
	} else if (e->rtype == GT_REC_LAUNCH && (e->l.flags & GT_LAUNCH_NO_EXIT)) {
		c.entry_only = true;
	} else if (ai->ret != GT_R_NONE) {
		c.at_end = d->finishing && e->ts >= d->finish_after;
		d->stats.open_at_end++;
	}
	decode_args(d, &c, ai, e, x);
	if (d->nccl_seen)
		c.nccl_ts = nccl_parent(d, e);
	rc = dec__device_call(d, &c, ai, e);
	d->stats.calls++;
	if (rc)
		return rc;
	return d->on_call ? d->on_call(d->ctx, &c) : 0;
}

/* ---- entries, exits and thread stacks ----------------------------------- */

/* n, less the bytes of a UTF-8 sequence s[0..n) ends inside of (a string
 * the recorder cut by bytes): a character it split goes, not half of it. */
static size_t utf8_whole(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t k = 0, want;

	/* a sequence is at most 4 bytes: its lead at most 3 back */
	while (k < 3 && k < n && (s[n - 1 - k] & 0xc0) == 0x80)
		k++;
	if (k == n)
		return n;
	want = s[n - 1 - k] >= 0xf0 ? 4 : s[n - 1 - k] >= 0xe0 ? 3 : s[n - 1 - k] >= 0xc0 ? 2 : 1;
	return want > k + 1 ? n - 1 - k : n;
}

/* cut: the recorder cut the string at the record's limit; it gets the mark */
static int slot_set_str(struct open_call *e, const char *s, size_t n, bool cut)
{
	size_t m = cut ? sizeof(GT_STR_CUT_MARK) - 1 : 0;

	if (cut)
		n = utf8_whole(s, n);
	if (vec__reserve(&e->str, &e->str_cap, 0, n + m + 1, 64))
		return -ENOMEM;
	memcpy(e->str, s, n);
	memcpy(e->str + n, GT_STR_CUT_MARK, m);
	e->str[n + m] = '\0';
	e->has_str = true;
	return 0;
}

static int load_entry(struct open_call *e, const struct gt_hdr *rec)
{
	e->ts = rec->ts;
	e->pid = rec->pid;
	e->tid = rec->tid;
	e->api = rec->api;
	e->cpu = rec->cpu;
	e->rtype = rec->type;
	e->has_str = false;
	e->cookie = 0;
	e->stack = 0;
	if (rec->type == GT_REC_NCCL) {
		e->api = (uint16_t)(GT_NCCL_API_BASE + rec->api);
		e->nargs = 0;
		memcpy(&e->n, rec, sizeof(e->n));
	} else if (rec->type == GT_REC_LAUNCH) {
		const struct gt_launch *l = (const void *)rec;

		e->nargs = 0;
		e->l.func = l->func;
		e->l.stream = l->stream;
		memcpy(e->l.grid, l->grid, sizeof(e->l.grid));
		memcpy(e->l.block, l->block, sizeof(e->l.block));
		e->l.shmem = l->shmem;
		e->l.flags = l->flags;
	} else if (rec->type == GT_REC_CALL_STR) {
		const struct gt_call_str *cs = (const void *)rec;

		memcpy(e->args, cs->args, sizeof(cs->args));
		e->nargs = 4;
		if (cs->len)
			return slot_set_str(e, cs->str, gt_rec_strlen(rec, cs->str, cs->len),
					    cs->truncated == 1);
	} else {
		const struct gt_call *call = (const void *)rec;

		memcpy(e->args, call->args, sizeof(call->args));
		e->nargs = GT_CALL_NARGS;
	}
	return 0;
}

static void stack_free(struct tstack *st)
{
	for (int i = 0; i < STACK_MAX; i++)
		free(st->ent[i].str);
	free(st);
}

static struct tstack *stack_open(struct gt_decoder *d, uint32_t tid, uint32_t pid)
{
	struct tstack *st = d->pool;
	void *old;

	if (st) {
		d->pool = st->next;
		d->npool--;
	} else {
		st = calloc(1, sizeof(*st));
		if (!st)
			return NULL;
	}
	st->tid = tid;
	st->pid = pid;
	st->depth = 0;
	st->last_exit = 0;
	if (hmap_put(&d->threads, tid, pid, st, &old)) {
		stack_free(st);
		return NULL;
	}
	st->next = NULL;
	st->prev = d->active_tail;
	if (d->active_tail)
		d->active_tail->next = st;
	else
		d->active_head = st;
	d->active_tail = st;
	return st;
}

/* A thread with nothing open gives its stack back: memory follows the
 * threads inside a call, not all threads ever seen. */
static void stack_release(struct gt_decoder *d, struct tstack *st)
{
	hmap_del(&d->threads, st->tid, st->pid);
	if (st->prev)
		st->prev->next = st->next;
	else
		d->active_head = st->next;
	if (st->next)
		st->next->prev = st->prev;
	else
		d->active_tail = st->prev;
	if (d->npool >= POOL_MAX) {
		stack_free(st);
		return;
	}
	st->prev = NULL;
	st->next = d->pool;
	d->pool = st;
	d->npool++;
}

/* Takes ent[j] out of what is open, the others keeping their order, and
 * returns it for emit: its slot (and string buffer) moves just past the
 * open ones, so that every slot keeps its own buffer. */
static struct open_call *stack_take(struct tstack *st, uint32_t j)
{
	struct open_call e = st->ent[j];

	memmove(&st->ent[j], &st->ent[j + 1], (st->depth - j - 1) * sizeof(e));
	st->ent[--st->depth] = e;
	return &st->ent[st->depth];
}

/* ai NULL: an NCCL entry, which always has an exit and which the entry
 * hook does not see (its consumers know libcuda's entries). */
static int on_entry(struct gt_decoder *d, const struct gt_hdr *rec,
		    const struct gt_api_info *ai)
{
	gt_entry_cb hook = ai ? d->on_entry : NULL;
	struct tstack *st;
	int rc = 0, err;

	if (ai && (ai->ret == GT_R_NONE || gt_rec_entry_only(rec))) {
		/* no exit will come: the entry is all there is */
		err = load_entry(&d->tmp, rec);
		d->tmp.stack = dec__stack_of_entry(d, rec);
		if (d->on_entry && (rc = d->on_entry(d->ctx, rec, &d->tmp.cookie)))
			return rc;
		rc = emit(d, &d->tmp, NULL, 0);
		return rc ? rc : err;
	}
	st = hmap_get(&d->threads, rec->tid, rec->pid);
	if (!st) {
		st = stack_open(d, rec->tid, rec->pid);
		if (!st)
			return -ENOMEM;
	}
	if (st->depth == STACK_MAX) {
		/* Deeper than libcuda ever nests: exits were lost.  Give up on
		 * the oldest.  The new entry is open while the oldest is
		 * emitted, as it was taken first: the oldest moves to the
		 * spare slot (tmp), whose buffer goes to the new one on top. */
		struct open_call spare = d->tmp;

		d->tmp = st->ent[0];
		memmove(&st->ent[0], &st->ent[1], (STACK_MAX - 1) * sizeof(st->ent[0]));
		st->ent[STACK_MAX - 1] = spare;
		err = load_entry(&st->ent[STACK_MAX - 1], rec);
		st->ent[STACK_MAX - 1].stack = dec__stack_of_entry(d, rec);
		rc = emit(d, &d->tmp, NULL, 0);
		if (!rc && hook)
			rc = hook(d->ctx, rec, &st->ent[STACK_MAX - 1].cookie);
		return rc ? rc : err;
	}
	err = load_entry(&st->ent[st->depth], rec);
	st->ent[st->depth].stack = dec__stack_of_entry(d, rec);
	if (hook)
		rc = hook(d->ctx, rec, &st->ent[st->depth].cookie);
	st->depth++;
	return rc ? rc : err;
}

/* Names the naming calls taught, once they returned successfully. */
static int learn_from_exit(struct gt_decoder *d, const struct gt_api_info *ai,
			   const struct open_call *e, const struct exit_info *x)
{
	struct kname *k;

	if (x->ret != 0)
		return 0;
	if (!ai)
		return 0;	/* an NCCL call: decode/nccl.c learns at emit */
	switch (ai->cls) {
	case GT_CLS_GET_FUNC:
		if (!(x->flags & GT_RET_OUT) || !e->has_str)
			return 0;
		return dec__kernel_learn(d, e->pid, x->out, e->str, strlen(e->str));
	case GT_CLS_KERNEL_FUNC:
		/* the function of a kernel runs the kernel's code: same name */
		if (!(x->flags & GT_RET_OUT))
			return 0;
		k = hmap_get(&d->kernels, arg(e, ai->a), e->pid);
		if (!k)
			return 0;
		k->refs++;
		return dec__kernel_bind(d, e->pid, x->out, k);
	case GT_CLS_FUNC_NAME:
		if (!x->str)
			return 0;
		return dec__kernel_learn(d, e->pid, arg(e, ai->a), x->str, strlen(x->str));
	default:
		return 0;
	}
}

/* api: the entries' api it pairs with (an NCCL exit's is GT_NCCL_API_BASE
 * + its own; ai is then NULL). */
static int on_exit_rec(struct gt_decoder *d, const struct gt_hdr *rec,
		       const struct gt_api_info *ai, uint16_t api)
{
	struct tstack *st = hmap_get(&d->threads, rec->tid, rec->pid);
	struct exit_info x = { 0 };
	struct open_call *e;
	uint32_t i;
	int rc = 0, err;

	if (!st)
		goto unmatched;
	for (i = st->depth; i > 0; i--)
		if (st->ent[i - 1].api == api)
			break;
	if (i == 0)
		goto unmatched;
	i--;

	if (rec->type == GT_REC_RET || rec->type == GT_REC_NCCL_RET) {
		const struct gt_ret *r = (const void *)rec;

		x.ret = r->ret;
		x.flags = r->flags;
		x.out = r->out;
	} else {
		const struct gt_ret_str *r = (const void *)rec;

		x.ret = r->ret;
		x.out = r->out;
		if (r->len) {
			size_t n = gt_rec_strlen(rec, r->str, r->len);

			if (r->truncated == 1)
				n = utf8_whole(r->str, n);
			memcpy(d->xstr, r->str, n);
			d->xstr[n] = '\0';
			if (r->truncated == 1)
				strcat(d->xstr, GT_STR_CUT_MARK);
			x.str = d->xstr;
		}
	}

	/* Entries above the match were left by exits that never came: they
	 * are nested in it, so they go out first, oldest first, each open
	 * until it goes. */
	while (st->depth > i + 1 && !rc)
		rc = emit(d, stack_take(st, i + 1), NULL, 0);
	st->depth = i + 1;	/* after an error, those left above go unemitted */
	e = stack_take(st, i);
	if (!e->stack)
		e->stack = dec__stack_of_exit(d, rec);
	st->last_exit = rec->ts;
	err = learn_from_exit(d, ai, e, &x);
	if (!rc)
		rc = emit(d, e, &x, rec->ts);
	if (!st->depth)
		stack_release(d, st);
	return rc ? rc : err;

unmatched:
	d->stats.unmatched_exits++;
	return 0;
}

/* Emits the open calls of a process as incomplete: it exited or exec'd, so
 * their exits will never be recorded. */
int dec__flush_pid(struct gt_decoder *d, uint32_t pid)
{
	struct tstack *st, *next;
	int rc = 0;

	for (st = d->active_head; st; st = next) {
		next = st->next;
		if (st->pid != pid)
			continue;
		while (st->depth && !rc)
			rc = emit(d, stack_take(st, 0), NULL, 0);
		stack_release(d, st);
	}
	return rc;
}

/* ---- public ------------------------------------------------------------- */

struct gt_decoder *gt_decoder__new(gt_call_cb on_call, gt_rec_cb on_other, void *ctx)
{
	struct gt_decoder *d = malloc(sizeof(*d));

	if (d)
		*d = (struct gt_decoder){ .on_call = on_call, .on_other = on_other, .ctx = ctx };
	return d;
}

void gt_decoder__set_entry_cb(struct gt_decoder *d, gt_entry_cb on_entry)
{
	d->on_entry = on_entry;
}

int gt_decoder__open_entries(struct gt_decoder *d, uint32_t pid, uint32_t tid,
			     gt_open_cb cb, void *ctx)
{
	struct tstack *st = hmap_get(&d->threads, tid, pid);
	int rc = 0;

	for (uint32_t i = 0; st && i < st->depth && !rc; i++) {
		struct open_call *e = &st->ent[i];
		struct gt_open_entry oe = { .ts = e->ts, .api = e->api, .cookie = &e->cookie };

		rc = cb(ctx, &oe);
	}
	return rc;
}

bool gt_decoder__takes_entry(const struct gt_hdr *rec)
{
	return (rec->type == GT_REC_CALL || rec->type == GT_REC_LAUNCH ||
		rec->type == GT_REC_CALL_STR) && gt_rec__size_ok(rec) && gt_api__info(rec->api);
}

static int host_rec(struct gt_decoder *d, const struct gt_hdr *rec);

int gt_decoder__feed(struct gt_decoder *d, const struct gt_hdr *rec)
{
	const struct gt_api_info *ai;
	int rc;

	/* A record too short for its type would be read past its end: count
	 * it and pass nothing on, consumers could not read it either. */
	if (!gt_rec__size_ok(rec)) {
		d->stats.unknown_records++;
		return 0;
	}
	if (rec->ts > d->last_ts)
		d->last_ts = rec->ts;
	switch (rec->type) {
	case GT_REC_CALL:
	case GT_REC_LAUNCH:
	case GT_REC_CALL_STR:
	case GT_REC_RET:
	case GT_REC_RET_STR:
		ai = gt_api__info(rec->api);
		if (!ai) {
			d->stats.unknown_records++;
			return 0;
		}
		if (rec->type == GT_REC_RET || rec->type == GT_REC_RET_STR)
			return on_exit_rec(d, rec, ai, rec->api);
		return on_entry(d, rec, ai);
	case GT_REC_NCCL:
	case GT_REC_NCCL_RET:
		if (!gt_nccl__info(rec->api)) {
			d->stats.unknown_records++;
			return 0;
		}
		if (rec->type == GT_REC_NCCL_RET)
			return on_exit_rec(d, rec, NULL, (uint16_t)(GT_NCCL_API_BASE + rec->api));
		d->nccl_seen = true;
		return on_entry(d, rec, NULL);
	case GT_REC_PROC_RANK:
		rc = dec__on_rank(d, rec);
		if (rc)
			return rc;
		break;
	case GT_REC_EXEC:
	case GT_REC_FORK:
	case GT_REC_EXIT:
	case GT_REC_PROC_INFO:
		return dec__on_proc(d, rec);
	case GT_REC_IOCTL:
	case GT_REC_OFFCPU:
	case GT_REC_LIBLOAD:
	case GT_REC_TRIGGER:
	case GT_REC_OVERHEAD:
	case GT_REC_GPU_METRIC:
		/* complete in themselves: the consumer formats them */
		break;
	case GT_REC_NAME:
		rc = dec__on_name(d, rec);
		if (rc)
			return rc;
		break;
	case GT_REC_STACK_REF:
	case GT_REC_STACK:
	case GT_REC_MODULE:
	case GT_REC_SYMBOL:
	case GT_REC_PYFUNC:
		rc = dec__on_stack_rec(d, rec);
		if (rc)
			return rc;
		break;
	case GT_REC_STATS:
	case GT_REC_LIBOPEN:
	case GT_REC_RANGE:
	case GT_REC_CAPTURE:
		/* capture ranges and windows: decode/capture_spans.c pairs them
		 * for the consumers that show them */
		break;
	case GT_REC_GPU_KERNEL:
	case GT_REC_GPU_MEMCPY:
	case GT_REC_GPU_MEMSET:
	case GT_REC_GPU_API:
	case GT_REC_NVTX:
	case GT_REC_CUPTI_STATS:
	case GT_REC_MERGE_STATS:
	case GT_REC_GPU_GRAPH_NODE:
	case GT_REC_CUPTI_ATTACH:
		/* from the CUPTI agent and the merger: complete in themselves,
		 * placed in the file by the merger (see FORMAT.md) */
		break;
	case GT_REC_HOST:
		rc = host_rec(d, rec);
		if (rc)
			return rc;
		break;
	case GT_REC_CLOCK:
		/* what aligns hosts (merge --hosts) */
		break;
	default:
		d->stats.unknown_records++;
		break;
	}
	return d->on_other ? d->on_other(d->ctx, rec) : 0;
}

int gt_decoder__finish(struct gt_decoder *d)
{
	int rc = 0;

	d->finishing = true;
	while (d->active_head && !rc) {
		struct tstack *st = d->active_head;

		d->finish_after = st->last_exit;
		while (st->depth && !rc)
			rc = emit(d, stack_take(st, 0), NULL, 0);
		stack_release(d, st);
	}
	return rc;
}

uint64_t gt_decoder__last_ts(const struct gt_decoder *d)
{
	return d->last_ts;
}

const struct gt_decoder_stats *gt_decoder__stats(const struct gt_decoder *d)
{
	return &d->stats;
}

/* A job trace's host record: its name kept by its index. */
static int host_rec(struct gt_decoder *d, const struct gt_hdr *rec)
{
	const struct gt_host *h = (const void *)rec;
	size_t room = rec->size - sizeof(*h), n = strnlen(h->name, h->len <= room ? h->len : room);
	uint32_t i = rec->pid;

	if (i >= 1024)
		return 0;
	if (i >= d->nhosts) {
		char **v = realloc(d->hosts, (i + 1) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + d->nhosts, 0, (i + 1 - d->nhosts) * sizeof(*v));
		d->hosts = v;
		d->nhosts = i + 1;
	}
	free(d->hosts[i]);
	d->hosts[i] = strndup(h->name, n);
	return d->hosts[i] ? 0 : -ENOMEM;
}

uint32_t gt_decoder__nhosts(const struct gt_decoder *d)
{
	return d->nhosts;
}

const char *gt_decoder__host_name(const struct gt_decoder *d, uint32_t host)
{
	return host < d->nhosts ? d->hosts[host] : NULL;
}

void gt_decoder__free(struct gt_decoder *d)
{
	struct tstack *st, *next;

	if (!d)
		return;
	for (uint32_t i = 0; i < d->nhosts; i++)
		free(d->hosts[i]);
	free(d->hosts);
	for (st = d->active_head; st; st = next) {
		next = st->next;
		stack_free(st);
	}
	for (st = d->pool; st; st = next) {
		next = st->next;
		stack_free(st);
	}
	for (uint32_t i = 0; i < d->procs.cap; i++)
		if (d->procs.s[i].used) {
			struct proc *p = d->procs.s[i].v;

			free(p->name);
			dec__devices_free(p->dev);
			dec__nccl_free(p->nccl);
			free(p);
		}
	for (uint32_t i = 0; i < d->thread_names.cap; i++)
		if (d->thread_names.s[i].used)
			free(d->thread_names.s[i].v);
	free(d->threads.s);
	free(d->kernels.s);
	free(d->procs.s);
	free(d->thread_names.s);
	kname_table__free(&d->names);	/* the kernels map's references with it */
	kname_table__free(&d->gpu_names);
	free(d->tmp.str);
	dec__stacks_free(d);
	free(d);
}
