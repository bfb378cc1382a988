/* SPDX-License-Identifier: MIT */
/*
 * Shared by the decoder's unit tests: a collector of what the callbacks see
 * and builders of synthetic records, laid out as BPF writes them.  Static
 * inline so that each test file takes what it uses.
 */
#ifndef GTRACE_TEST_DECODE_RECORDS_H
#define GTRACE_TEST_DECODE_RECORDS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "decode/decode.h"

/* ------------------------------------------------------------ collector */

#define MAX_CALLS 128
#define SLEN 256

/* What the callbacks saw, strings copied: the decoder only promises them
 * until the callback returns. */
struct seen {
	struct gt_callrec c[MAX_CALLS];
	char kernel[MAX_CALLS][SLEN], mangled[MAX_CALLS][SLEN], str[MAX_CALLS][SLEN];
	int n;
	uint16_t other[MAX_CALLS];	/* types of on_other records */
	int nother;
	int fail_at;			/* on_call returns -5 at this call number (1-based) */
	bool count_only;		/* only count calls (more than MAX_CALLS) */
	struct gt_decoder *d;		/* to check queries from inside callbacks */
	char pname_at_exit[SLEN];	/* process name seen by on_other for an exit */
};

static inline void keep(char *dst, const char **p)
{
	if (!*p)
		return;
	snprintf(dst, SLEN, "%s", *p);
	*p = dst;
}

static inline int on_call(void *ctx, const struct gt_callrec *c)
{
	struct seen *s = ctx;
	int i = s->n;

	if (s->count_only) {
		s->n++;
		return 0;
	}
	assert_true(i < MAX_CALLS);
	s->c[i] = *c;
	keep(s->kernel[i], &s->c[i].kernel);
	keep(s->mangled[i], &s->c[i].mangled);
	keep(s->str[i], &s->c[i].str);
	s->n++;
	if (s->fail_at && s->n == s->fail_at)
		return -5;
	return 0;
}

static inline int on_other(void *ctx, const struct gt_hdr *rec)
{
	struct seen *s = ctx;

	assert_true(s->nother < MAX_CALLS);
	s->other[s->nother++] = rec->type;
	if (rec->type == GT_REC_EXIT && s->d) {
		const char *n = gt_decoder__process_name(s->d, rec->pid);

		snprintf(s->pname_at_exit, SLEN, "%s", n ? n : "(null)");
	}
	return 0;
}

static struct seen S;

static inline int setup(void **state)
{
	memset(&S, 0, sizeof(S));
	S.d = gt_decoder__new(on_call, on_other, &S);
	assert_non_null(S.d);
	*state = S.d;
	return 0;
}

static inline int teardown(void **state)
{
	gt_decoder__free(*state);
	return 0;
}

/* ------------------------------------------------------------ records */

static _Alignas(8) unsigned char rbuf[8192];

static inline void hdr(struct gt_hdr *h, uint16_t type, size_t size, uint64_t ts, uint32_t pid,
		uint32_t tid, uint16_t api)
{
	h->ts = ts;
	h->pid = pid;
	h->tid = tid;
	h->type = type;
	h->size = (uint16_t)size;
	h->api = api;
	h->cpu = 3;
}

static inline void feed_ok(struct gt_decoder *d, const void *rec)
{
	assert_int_equal(gt_decoder__feed(d, rec), 0);
}

/* An entry with the given raw registers. */
static inline void call6(struct gt_decoder *d, uint64_t ts, uint32_t tid, unsigned api,
		  const uint64_t args[6])
{
	struct gt_call *c = (void *)rbuf;

	memset(rbuf, 0xa5, sizeof(struct gt_call));
	hdr(&c->hdr, GT_REC_CALL, sizeof(*c), ts, 100, tid, api);
	memcpy(c->args, args, sizeof(c->args));
	feed_ok(d, c);
}

static inline void call0(struct gt_decoder *d, uint64_t ts, uint32_t tid, unsigned api)
{
	uint64_t a[6] = { 0 };

	call6(d, ts, tid, api, a);
}

/* An entry whose arguments are placed by the table's a/b/c/d columns. */
static inline void call_abcd(struct gt_decoder *d, uint64_t ts, uint32_t tid, unsigned api,
		      uint64_t a, uint64_t b, uint64_t c, uint64_t dd)
{
	const struct gt_api_info *ai = gt_api__info(api);
	uint64_t args[6] = { 0 };

	assert_non_null(ai);
	if (ai->a >= 0)
		args[ai->a] = a;
	if (ai->b >= 0)
		args[ai->b] = b;
	if (ai->c >= 0)
		args[ai->c] = c;
	if (ai->d >= 0)
		args[ai->d] = dd;
	call6(d, ts, tid, api, args);
}

static inline void call_str(struct gt_decoder *d, uint64_t ts, uint32_t pid, uint32_t tid,
		     unsigned api, uint64_t a, const char *str)
{
	const struct gt_api_info *ai = gt_api__info(api);
	struct gt_call_str *c = (void *)rbuf;
	size_t n = strlen(str) + 1;

	memset(rbuf, 0, sizeof(rbuf));
	hdr(&c->hdr, GT_REC_CALL_STR, GT_REC_ALIGN(sizeof(*c) + n), ts, pid, tid, api);
	if (ai->a >= 0)
		c->args[ai->a] = a;
	c->len = (uint16_t)n;
	memcpy(c->str, str, n);
	feed_ok(d, c);
}

static inline void launch(struct gt_decoder *d, uint64_t ts, uint32_t pid, uint32_t tid,
		   unsigned api, uint64_t func, uint64_t stream, uint16_t flags)
{
	struct gt_launch *l = (void *)rbuf;

	memset(rbuf, 0, sizeof(*l));
	hdr(&l->hdr, GT_REC_LAUNCH, sizeof(*l), ts, pid, tid, api);
	l->func = func;
	l->stream = stream;
	l->grid[0] = 64; l->grid[1] = 2; l->grid[2] = 1;
	l->block[0] = 256; l->block[1] = 1; l->block[2] = 1;
	l->shmem = 1024;
	l->flags = flags;
	feed_ok(d, l);
}

static inline void ret_pid(struct gt_decoder *d, uint64_t ts, uint32_t pid, uint32_t tid,
		    unsigned api, int32_t ret, uint64_t out, uint32_t flags)
{
	struct gt_ret *r = (void *)rbuf;

	memset(rbuf, 0, sizeof(*r));
	hdr(&r->hdr, GT_REC_RET, sizeof(*r), ts, pid, tid, api);
	r->ret = ret;
	r->out = out;
	r->flags = flags;
	feed_ok(d, r);
}

static inline void ret(struct gt_decoder *d, uint64_t ts, uint32_t tid, unsigned api, int32_t rv)
{
	ret_pid(d, ts, 100, tid, api, rv, 0, 0);
}

static inline void ret_out(struct gt_decoder *d, uint64_t ts, uint32_t tid, unsigned api, uint64_t out)
{
	ret_pid(d, ts, 100, tid, api, 0, out, GT_RET_OUT);
}

static inline void ret_str(struct gt_decoder *d, uint64_t ts, uint32_t tid, unsigned api,
		    int32_t rv, const char *str)
{
	struct gt_ret_str *r = (void *)rbuf;
	size_t n = str ? strlen(str) + 1 : 0;

	memset(rbuf, 0, sizeof(rbuf));
	hdr(&r->hdr, GT_REC_RET_STR, GT_REC_ALIGN(sizeof(*r) + n), ts, 100, tid, api);
	r->ret = rv;
	r->out = 0x7000;
	r->len = (uint16_t)n;
	if (n)
		memcpy(r->str, str, n);
	feed_ok(d, r);
}

static inline void name_rec(struct gt_decoder *d, uint64_t ts, uint32_t pid, uint16_t kind,
		     uint64_t key, const char *str)
{
	struct gt_name *nm = (void *)rbuf;
	size_t n = strlen(str) + 1;

	memset(rbuf, 0, sizeof(rbuf));
	hdr(&nm->hdr, GT_REC_NAME, GT_REC_ALIGN(sizeof(*nm) + n), ts, pid, 0, 0);
	nm->key = key;
	nm->kind = kind;
	nm->len = (uint16_t)n;
	memcpy(nm->str, str, n);
	feed_ok(d, nm);
}

static inline void proc_rec(struct gt_decoder *d, uint16_t type, uint64_t ts, uint32_t pid,
		     uint32_t ppid, const char *comm)
{
	struct gt_proc_evt *p = (void *)rbuf;
	size_t n;

	memset(rbuf, 0, sizeof(*p));
	hdr(&p->hdr, type, sizeof(*p), ts, pid, pid, 0);
	p->ppid = ppid;
	/* a 16-byte comm fills the field with no NUL, as the kernel may */
	n = strlen(comm);
	memcpy(p->comm, comm, n < sizeof(p->comm) ? n : sizeof(p->comm));
	feed_ok(d, p);
}

#define API(x) GT_API_##x

#endif
