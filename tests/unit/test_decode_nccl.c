// SPDX-License-Identifier: MIT
/*
 * Unit tests of the decoder's NCCL calls (user/decode/nccl.c): entries and
 * exits paired beside libcuda's on the same threads, communicators from
 * their inits (uid, rank, size, device), collectives numbered per
 * communicator, groups, splits, a communicator the trace did not see made,
 * and the process' rank from its environment or its first init.
 */
#include "decode_records.h"

#define UID 0x1234567890abcdefull

struct nseen {
	struct gt_ncclrec n[64];
	int count;
};

static struct nseen N;

static int on_nccl(void *ctx, const struct gt_ncclrec *n)
{
	(void)ctx;
	assert_true(N.count < 64);
	N.n[N.count++] = *n;
	return 0;
}

static int nsetup(void **state)
{
	setup(state);
	memset(&N, 0, sizeof(N));
	gt_decoder__set_nccl_cb(*state, on_nccl);
	return 0;
}

#define T(f) cmocka_unit_test_setup_teardown(f, nsetup, teardown)

static uint64_t now = 1000;

static void nccl_entry(struct gt_decoder *d, uint32_t pid, uint32_t tid, unsigned api,
		       const struct gt_nccl *a)
{
	struct gt_nccl *e = (void *)rbuf;

	*e = *a;
	hdr(&e->hdr, GT_REC_NCCL, sizeof(*e), now++, pid, tid, (uint16_t)api);
	feed_ok(d, e);
}

static void nccl_exit(struct gt_decoder *d, uint32_t pid, uint32_t tid, unsigned api, int32_t rv,
		      uint64_t out)
{
	struct gt_ret *r = (void *)rbuf;

	memset(r, 0, sizeof(*r));
	hdr(&r->hdr, GT_REC_NCCL_RET, sizeof(*r), now++, pid, tid, (uint16_t)api);
	r->ret = rv;
	r->out = out;
	r->flags = out ? GT_RET_OUT : 0;
	feed_ok(d, r);
}

static void init_rank(struct gt_decoder *d, uint32_t pid, uint64_t comm, int rank, int nranks,
		      uint64_t uid)
{
	struct gt_nccl a = { .out = 0x7000, .peer = rank, .nranks = nranks, .uid = uid,
			     .flags = GT_NCCL_UID, .datatype = GT_NCCL_NONE32, .op = GT_NCCL_NONE32 };

	nccl_entry(d, pid, pid, GT_NCCL_API_ncclCommInitRankConfig, &a);
	nccl_exit(d, pid, pid, GT_NCCL_API_ncclCommInitRankConfig, 0, comm);
}

static void allreduce(struct gt_decoder *d, uint32_t pid, uint64_t comm, uint64_t count, int rv)
{
	struct gt_nccl a = { .sendbuff = 0xa0, .recvbuff = 0xa0, .count = count, .comm = comm,
			     .stream = 0x5e, .peer = -1, .datatype = 9 /* bfloat16 */, .op = 4 };

	nccl_entry(d, pid, pid, GT_NCCL_API_ncclAllReduce, &a);
	nccl_exit(d, pid, pid, GT_NCCL_API_ncclAllReduce, rv, 0);
}

static void group(struct gt_decoder *d, uint32_t pid, unsigned api)
{
	struct gt_nccl a = { .peer = -1, .datatype = GT_NCCL_NONE32, .op = GT_NCCL_NONE32 };

	nccl_entry(d, pid, pid, api, &a);
	nccl_exit(d, pid, pid, api, 0, 0);
}

static void test_communicators(void **state)
{
	struct gt_decoder *d = *state;
	const struct gt_ncclrec *n;
	struct gt_rank_info ri;
	char txt[32];

	/* two ranks, one communicator: the same uid */
	init_rank(d, 100, 0xc100, 0, 2, UID);
	init_rank(d, 200, 0xc200, 1, 2, UID);
	assert_int_equal(N.count, 2);
	assert_int_equal(N.n[0].kind, GT_NCCL_K_INIT);
	assert_int_equal(N.n[0].comm, 0xc100);
	assert_int_equal(N.n[0].uid, UID);
	assert_int_equal(N.n[1].rank, 1);
	assert_int_equal(N.n[1].nranks, 2);
	assert_int_equal(N.n[0].comm_index, 1);
	assert_int_equal(N.n[1].comm_index, 2);

	allreduce(d, 100, 0xc100, 1000, 0);
	allreduce(d, 200, 0xc200, 1000, 0);
	allreduce(d, 100, 0xc100, 1000, 0);
	n = &N.n[2];
	assert_int_equal(n->kind, GT_NCCL_K_COLL);
	assert_int_equal(n->api, GT_NCCL_API_ncclAllReduce);
	assert_int_equal(n->bytes, 2000);
	assert_int_equal(n->uid, UID);
	assert_int_equal(n->rank, 0);
	assert_int_equal(n->seq, 1);
	assert_int_equal(N.n[3].seq, 1);
	assert_int_equal(N.n[3].rank, 1);
	assert_int_equal(N.n[4].seq, 2);
	assert_true(N.n[4].has_exit);
	assert_int_equal(N.n[4].op, 4);

	/* a failed collective was not issued: no number */
	allreduce(d, 100, 0xc100, 1000, 4);
	assert_int_equal(N.n[5].seq, 0);
	allreduce(d, 100, 0xc100, 1000, 0);
	assert_int_equal(N.n[6].seq, 3);

	/* the process' rank: its first init's */
	assert_true(gt_decoder__process_rank(d, 200, &ri));
	assert_int_equal(ri.rank, 1);
	assert_int_equal(ri.world_size, 2);
	assert_false(ri.from_env);
	assert_string_equal(gt_decoder__rank_text(d, 200, txt, sizeof(txt)), "rank 1/2");

	/* a communicator made before the recording: nothing known, counted */
	allreduce(d, 300, 0xc300, 10, 0);
	assert_int_equal(N.n[7].uid, 0);
	assert_int_equal(N.n[7].rank, -1);
	assert_int_equal(N.n[7].seq, 0);
	assert_int_equal(N.n[7].comm_index, 0);
	assert_int_equal(gt_decoder__stats(d)->nccl_comm_unknown, 1);
	assert_false(gt_decoder__process_rank(d, 300, &ri));
	assert_string_equal(gt_decoder__rank_text(d, 300, txt, sizeof(txt)), "");
	assert_int_equal(gt_decoder__stats(d)->nccl_calls, 8);
}

static void test_rank_from_env(void **state)
{
	struct gt_decoder *d = *state;
	struct gt_proc_rank *r = (void *)rbuf;
	struct gt_rank_info ri;
	char txt[32];

	memset(r, 0, sizeof(*r));
	hdr(&r->hdr, GT_REC_PROC_RANK, sizeof(*r), now++, 100, 0, 0);
	r->rank = 3;
	r->local_rank = 1;
	r->world_size = 8;
	r->local_world_size = 2;
	feed_ok(d, r);
	/* the environment wins over an init's rank */
	init_rank(d, 100, 0xc100, 0, 2, UID);
	assert_true(gt_decoder__process_rank(d, 100, &ri));
	assert_int_equal(ri.rank, 3);
	assert_int_equal(ri.local_rank, 1);
	assert_int_equal(ri.world_size, 8);
	assert_true(ri.from_env);
	assert_string_equal(gt_decoder__rank_text(d, 100, txt, sizeof(txt)), "rank 3/8");
	/* the record goes on to the consumer too */
	assert_int_equal(S.other[S.nother - 1], GT_REC_PROC_RANK);
}

static void test_groups_split_nesting(void **state)
{
	struct gt_decoder *d = *state;
	struct gt_nccl s = { .comm = 0xc100, .peer = 5 /* color */, .nranks = 0 /* key */,
			     .out = 0x7008, .datatype = GT_NCCL_NONE32, .op = GT_NCCL_NONE32 };
	struct gt_nccl send = { .sendbuff = 0xb0, .count = 8, .datatype = 7, .peer = 1,
				.comm = 0xc100, .stream = 0x5e, .op = GT_NCCL_NONE32 };

	init_rank(d, 100, 0xc100, 0, 2, UID);
	group(d, 100, GT_NCCL_API_ncclGroupStart);
	nccl_entry(d, 100, 100, GT_NCCL_API_ncclSend, &send);
	nccl_exit(d, 100, 100, GT_NCCL_API_ncclSend, 0, 0);
	group(d, 100, GT_NCCL_API_ncclGroupEnd);
	assert_int_equal(N.count, 4);
	assert_false(N.n[1].in_group);		/* the start itself */
	assert_true(N.n[2].in_group);
	assert_int_equal(N.n[2].kind, GT_NCCL_K_P2P);
	assert_int_equal(N.n[2].peer, 1);
	assert_int_equal(N.n[2].bytes, 32);
	assert_int_equal(N.n[2].seq, 0);	/* p2p is not numbered */
	assert_true(N.n[3].in_group);		/* the end closes it */
	allreduce(d, 100, 0xc100, 1, 0);
	assert_false(N.n[4].in_group);

	/* a split: the parent's uid mixed with the color; ranks of another
	 * process splitting the same parent with the same color get the same */
	nccl_entry(d, 100, 100, GT_NCCL_API_ncclCommSplit, &s);
	nccl_exit(d, 100, 100, GT_NCCL_API_ncclCommSplit, 0, 0xc900);
	assert_int_equal(N.n[5].kind, GT_NCCL_K_SPLIT);
	assert_int_equal(N.n[5].comm, 0xc900);
	assert_true(N.n[5].uid != 0 && N.n[5].uid != UID);
	init_rank(d, 200, 0xc200, 1, 2, UID);
	nccl_entry(d, 200, 200, GT_NCCL_API_ncclCommSplit, &s);
	s.comm = 0xc200;
	nccl_exit(d, 200, 200, GT_NCCL_API_ncclCommSplit, 0, 0xca00);
	/* the entry above still named 0xc100 (not pid 200's): unknown parent */
	assert_int_equal(N.n[7].uid, 0);
	nccl_entry(d, 200, 200, GT_NCCL_API_ncclCommSplit, &s);
	nccl_exit(d, 200, 200, GT_NCCL_API_ncclCommSplit, 0, 0xcb00);
	assert_int_equal(N.n[8].uid, N.n[5].uid);

	/* a launch inside an NCCL call on the same thread pairs as usual */
	{
		struct gt_nccl a = { .count = 4, .comm = 0xc100, .stream = 0x5e, .peer = -1,
				     .datatype = 7, .op = 0 };

		nccl_entry(d, 100, 100, GT_NCCL_API_ncclAllReduce, &a);
		launch(d, now++, 100, 100, API(cuLaunchKernelEx), 0xf00, 0x5e, 0);
		ret_pid(d, now++, 100, 100, API(cuLaunchKernelEx), 0, 0, 0);
		nccl_exit(d, 100, 100, GT_NCCL_API_ncclAllReduce, 0, 0);
	}
	assert_int_equal(S.n, 1);
	assert_int_equal(S.c[0].api, API(cuLaunchKernelEx));
	assert_true(S.c[0].has_exit);
	/* made inside the all-reduce: its entry */
	assert_int_equal(S.c[0].nccl_ts, N.n[9].ts);
	assert_true(N.n[9].has_exit);
	assert_int_equal(N.n[9].seq, 2);
	assert_true(N.n[9].dur >= 3);
	assert_int_equal(gt_decoder__stats(d)->unmatched_exits, 0);

	/* outside any NCCL call: none */
	launch(d, now++, 100, 100, API(cuLaunchKernelEx), 0xf00, 0x5e, 0);
	ret_pid(d, now++, 100, 100, API(cuLaunchKernelEx), 0, 0, 0);
	assert_int_equal(S.c[1].nccl_ts, 0);

	/* destroyed: the handle forgotten */
	{
		struct gt_nccl a = { .comm = 0xc100, .peer = -1, .datatype = GT_NCCL_NONE32,
				     .op = GT_NCCL_NONE32 };

		nccl_entry(d, 100, 100, GT_NCCL_API_ncclCommDestroy, &a);
		nccl_exit(d, 100, 100, GT_NCCL_API_ncclCommDestroy, 0, 0);
	}
	allreduce(d, 100, 0xc100, 1, 0);
	assert_int_equal(N.n[N.count - 1].uid, 0);
}

static void test_cut_and_unknown(void **state)
{
	struct gt_decoder *d = *state;
	struct gt_nccl a = { .count = 4, .comm = 0xc100, .peer = -1, .datatype = 99, .op = 0 };
	struct gt_nccl *e = (void *)rbuf;

	init_rank(d, 100, 0xc100, 0, 2, UID);
	nccl_entry(d, 100, 100, GT_NCCL_API_ncclAllReduce, &a);
	assert_int_equal(gt_decoder__finish(d), 0);
	assert_int_equal(N.count, 2);
	assert_false(N.n[1].has_exit);
	assert_int_equal(N.n[1].seq, 1);	/* issued as far as the trace shows */
	assert_int_equal(N.n[1].bytes, 0);	/* a type this build does not know */
	/* an api this build does not know: counted, not passed on */
	memset(e, 0, sizeof(*e));
	hdr(&e->hdr, GT_REC_NCCL, sizeof(*e), now++, 100, 100, 999);
	feed_ok(d, e);
	assert_int_equal(gt_decoder__stats(d)->unknown_records, 1);
	assert_int_equal(N.count, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_communicators),
		T(test_rank_from_env),
		T(test_groups_split_nesting),
		T(test_cut_and_unknown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
