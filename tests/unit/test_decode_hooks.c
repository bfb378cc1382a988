// SPDX-License-Identifier: MIT
/*
 * Unit tests of the decoder's hooks (user/decode/decode.c): the entry hook
 * and its cookie, the query of open entries and what is open while calls
 * are emitted.
 */
#include "decode_records.h"

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)


/* ------------------------------------------------------------ entry hook */

static uint64_t nentries;

static int number_entry(void *ctx, const struct gt_hdr *rec, uint64_t *cookie)
{
	(void)ctx;
	assert_true(gt_decoder__takes_entry(rec));
	*cookie = ++nentries * 100 + rec->tid;
	return 0;
}

/* Each call comes back with what the hook set for its own entry, whether
 * it completed, was left open by a nested exit or never waits for one. */
static void test_entry_hook(void **state)
{
	struct gt_decoder *d = *state;

	nentries = 0;
	gt_decoder__set_entry_cb(d, number_entry);
	call0(d, 10, 1, API(cuCtxSynchronize));			/* entry 1 */
	call0(d, 11, 2, API(cuCtxSynchronize));			/* entry 2, other thread */
	call0(d, 12, 1, API(cuStreamSynchronize));		/* entry 3, exit lost */
	ret(d, 20, 1, API(cuCtxSynchronize), 0);
	assert_int_equal(S.n, 2);
	assert_int_equal(S.c[0].cookie, 301);	/* the nested one first, incomplete */
	assert_false(S.c[0].has_exit);
	assert_int_equal(S.c[1].cookie, 101);
	assert_true(S.c[1].has_exit);
	assert_int_equal(S.c[1].dur, 10);
	/* a launch recorded without its exit: emitted at once, hooked first */
	launch(d, 30, 100, 1, API(cuLaunchKernel), 0xf1, 0, GT_LAUNCH_NO_EXIT);
	assert_int_equal(S.n, 3);
	assert_int_equal(S.c[2].cookie, 401);
	assert_true(S.c[2].entry_only);
	/* an exit without its entry and an api this build does not know: no hook */
	ret(d, 40, 3, API(cuCtxSynchronize), 0);
	call0(d, 41, 3, GT_API__COUNT + 5);
	assert_int_equal(nentries, 4);
	ret(d, 50, 2, API(cuCtxSynchronize), 1);
	assert_int_equal(S.c[3].cookie, 202);
	assert_int_equal(S.c[3].ret, 1);
	/* without a hook, calls carry none */
	gt_decoder__set_entry_cb(d, NULL);
	call0(d, 60, 1, API(cuCtxSynchronize));
	ret(d, 70, 1, API(cuCtxSynchronize), 0);
	assert_int_equal(S.c[4].cookie, 0);
}

/* ------------------------------------------------------------ open entries */

/* The entry times a thread has open, as "10 11 12", and their cookies. */
struct open_list {
	char ts[512];
	uint64_t cookie[40];
	int n;
	uint64_t set_ts, set_to;	/* give the entry of set_ts cookie set_to */
	int stop_at;			/* return 7 at this entry (1-based) */
};

static int list_open(void *ctx, const struct gt_open_entry *e)
{
	struct open_list *o = ctx;
	size_t len = strlen(o->ts);

	assert_true(o->n < 40);
	if (e->ts == o->set_ts)
		*e->cookie = o->set_to;
	snprintf(o->ts + len, sizeof(o->ts) - len, "%s%llu", len ? " " : "",
		 (unsigned long long)e->ts);
	o->cookie[o->n++] = *e->cookie;
	return o->n == o->stop_at ? 7 : 0;
}

static const char *open_ts(struct gt_decoder *d, uint32_t pid, uint32_t tid)
{
	static struct open_list o;

	memset(&o, 0, sizeof(o));
	assert_int_equal(gt_decoder__open_entries(d, pid, tid, list_open, &o), 0);
	return o.ts;
}

/* What is open on a thread, oldest first, per (pid, tid); a cookie changed
 * through the query comes back with the call. */
static void test_open_entries(void **state)
{
	struct gt_decoder *d = *state;
	struct open_list o;

	gt_decoder__set_entry_cb(d, number_entry);
	nentries = 0;
	assert_string_equal(open_ts(d, 100, 1), "");
	call0(d, 10, 1, API(cuCtxSynchronize));
	call0(d, 11, 1, API(cuStreamSynchronize));
	call0(d, 12, 2, API(cuCtxSynchronize));
	/* emitted at once, never open */
	launch(d, 13, 100, 1, API(cuLaunchKernel), 0xf1, 0, GT_LAUNCH_NO_EXIT);
	assert_string_equal(open_ts(d, 100, 1), "10 11");
	assert_string_equal(open_ts(d, 100, 2), "12");
	assert_string_equal(open_ts(d, 101, 1), "");	/* same tid, other pid */

	memset(&o, 0, sizeof(o));
	o.set_ts = 11;
	o.set_to = 77;
	assert_int_equal(gt_decoder__open_entries(d, 100, 1, list_open, &o), 0);
	assert_int_equal(o.n, 2);
	assert_int_equal(o.cookie[0], 101);	/* the hook's */
	assert_int_equal(o.cookie[1], 77);

	memset(&o, 0, sizeof(o));
	o.stop_at = 1;
	assert_int_equal(gt_decoder__open_entries(d, 100, 1, list_open, &o), 7);
	assert_int_equal(o.n, 1);

	ret(d, 20, 1, API(cuStreamSynchronize), 0);
	assert_int_equal(S.c[S.n - 1].cookie, 77);
	assert_string_equal(open_ts(d, 100, 1), "10");
	ret(d, 30, 1, API(cuCtxSynchronize), 0);
	assert_string_equal(open_ts(d, 100, 1), "");
	assert_int_equal(gt_decoder__finish(d), 0);
	assert_string_equal(open_ts(d, 100, 2), "");
}

/* What each call saw open on its thread while it was emitted. */
static char open_at_call[MAX_CALLS][512];

static int call_seeing_open(void *ctx, const struct gt_callrec *c)
{
	struct seen *s = ctx;

	assert_true(s->n < MAX_CALLS);
	snprintf(open_at_call[s->n], sizeof(open_at_call[0]), "%s", open_ts(s->d, c->pid, c->tid));
	return on_call(ctx, c);
}

static int setup_seeing_open(void **state)
{
	memset(&S, 0, sizeof(S));
	S.d = gt_decoder__new(call_seeing_open, on_other, &S);
	assert_non_null(S.d);
	*state = S.d;
	return 0;
}

/* When one record makes several calls (an exit with lost exits nested in
 * it, a process end, the end of the trace, a stack too deep), each call
 * leaves what is open as it is emitted, not before: what is open is what
 * is still to come. */
static void test_open_while_emitting(void **state)
{
	struct gt_decoder *d = *state;

	call0(d, 10, 1, API(cuCtxSynchronize));
	call0(d, 20, 1, API(cuStreamSynchronize));
	call0(d, 30, 1, API(cuEventSynchronize));
	call0(d, 40, 1, API(cuStreamQuery));
	ret(d, 50, 1, API(cuCtxSynchronize), 0);
	assert_int_equal(S.n, 4);
	assert_int_equal(S.c[0].ts, 20);
	assert_string_equal(open_at_call[0], "10 30 40");
	assert_string_equal(open_at_call[1], "10 40");
	assert_string_equal(open_at_call[2], "10");
	assert_int_equal(S.c[3].ts, 10);
	assert_true(S.c[3].has_exit);
	assert_string_equal(open_at_call[3], "");

	/* a match below the top, with one below it still open */
	call0(d, 60, 1, API(cuCtxSynchronize));
	call0(d, 70, 1, API(cuStreamSynchronize));
	call0(d, 80, 1, API(cuEventSynchronize));
	ret(d, 90, 1, API(cuStreamSynchronize), 0);
	assert_int_equal(S.n, 6);
	assert_int_equal(S.c[4].ts, 80);
	assert_string_equal(open_at_call[4], "60 70");
	assert_int_equal(S.c[5].ts, 70);
	assert_string_equal(open_at_call[5], "60");
	assert_string_equal(open_ts(d, 100, 1), "60");

	/* the process ends: its calls go oldest first */
	call0(d, 100, 1, API(cuStreamSynchronize));
	call0(d, 110, 2, API(cuCtxSynchronize));
	proc_rec(d, GT_REC_EXIT, 120, 100, 1, "python3");
	assert_int_equal(S.n, 9);
	assert_int_equal(S.c[6].ts, 60);
	assert_string_equal(open_at_call[6], "100");
	assert_string_equal(open_at_call[7], "");
	assert_int_equal(S.c[8].tid, 2);
	assert_string_equal(open_at_call[8], "");

	/* the end of the trace */
	call0(d, 200, 3, API(cuCtxSynchronize));
	call0(d, 210, 3, API(cuStreamSynchronize));
	assert_int_equal(gt_decoder__finish(d), 0);
	assert_int_equal(S.n, 11);
	assert_string_equal(open_at_call[9], "210");
	assert_string_equal(open_at_call[10], "");
}

/* Past STACK_MAX the oldest is given up while the entry that pushed it
 * out is already open; the strings of the entries moved stay their own. */
static void test_open_when_too_deep(void **state)
{
	struct gt_decoder *d = *state;
	char want[512] = "", path[32];
	size_t len;

	for (int i = 0; i < 33; i++) {
		snprintf(path, sizeof(path), "/m%d", i);
		call_str(d, 100 + i, 100, 1, API(cuModuleLoad), 0, path);
	}
	assert_int_equal(S.n, 1);
	assert_int_equal(S.c[0].ts, 100);
	assert_string_equal(S.c[0].str, "/m0");
	for (int i = 1; i < 33; i++) {
		len = strlen(want);
		snprintf(want + len, sizeof(want) - len, "%s%d", len ? " " : "", 100 + i);
	}
	assert_string_equal(open_at_call[0], want);
	assert_string_equal(open_ts(d, 100, 1), want);
	/* 34th entry: reuses the buffer of /m1, which must still be its own until it goes */
	call_str(d, 133, 100, 1, API(cuModuleLoad), 0, "/a-longer-path-than-any-before");
	assert_int_equal(S.n, 2);
	assert_string_equal(S.c[1].str, "/m1");
	for (int i = 33; i >= 2; i--) {
		ret_out(d, 1000, 1, API(cuModuleLoad), 0x10);
		snprintf(path, sizeof(path), "/m%d", i);
		assert_string_equal(S.c[S.n - 1].str,
				    i == 33 ? "/a-longer-path-than-any-before" : path);
	}
	assert_string_equal(open_ts(d, 100, 1), "");
}

static void test_takes_entry(void **state)
{
	_Alignas(8) unsigned char b[sizeof(struct gt_call_str)] = {0};
	struct gt_hdr *h = (void *)b;

	(void)state;
	h->api = API(cuCtxSynchronize);
	h->type = GT_REC_CALL;
	h->size = sizeof(struct gt_call);
	assert_true(gt_decoder__takes_entry(h));
	h->size = sizeof(struct gt_call) - 8;	/* cut short */
	assert_false(gt_decoder__takes_entry(h));
	h->type = GT_REC_CALL_STR;
	h->size = sizeof(struct gt_call_str);
	assert_true(gt_decoder__takes_entry(h));
	h->type = GT_REC_RET;			/* exits are not entries */
	h->size = sizeof(struct gt_ret);
	assert_false(gt_decoder__takes_entry(h));
	h->type = GT_REC_CALL;
	h->size = sizeof(struct gt_call);
	h->api = GT_API__COUNT;
	assert_false(gt_decoder__takes_entry(h));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_entry_hook),
		T(test_open_entries),
		cmocka_unit_test_setup_teardown(test_open_while_emitting, setup_seeing_open, teardown),
		cmocka_unit_test_setup_teardown(test_open_when_too_deep, setup_seeing_open, teardown),
		cmocka_unit_test(test_takes_entry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
