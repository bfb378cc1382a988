/* SPDX-License-Identifier: MIT */
/*
 * Fixtures of the CUPTI conversion tests (test_cupti_convert.c): the
 * output buffer, one conversion into it, the converter per test, and the
 * checks of the header and padding of an agent record.  Include after
 * <cmocka.h> and "convert.h".
 */
#ifndef GTRACE_TEST_CUPTI_FIXTURES_H
#define GTRACE_TEST_CUPTI_FIXTURES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PID 4242u

/* output buffer, 8-aligned, filled with 0xa5 before each conversion so that
 * padding that was not zeroed shows */
static uint64_t outbuf[(GT_CUPTI_REC_MAX + 64) / 8];
#define OUT ((void *)outbuf)
#define ROOM sizeof(outbuf)

static int conv(struct gt_cupti_conv *c, const void *rec)
{
	memset(outbuf, 0xa5, sizeof(outbuf));
	return gt_cupti_conv__record(c, (const CUpti_Activity *)rec, OUT, ROOM);
}

static int setup(void **state)
{
	*state = gt_cupti_conv__new(PID);
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	gt_cupti_conv__free(*state);
	return 0;
}

/* The header fields every agent record shares. */
static void check_hdr(const struct gt_hdr *h, __u16 type, __u64 ts, __u32 tid, int size)
{
	assert_int_equal(h->type, type);
	assert_int_equal(h->ts, ts);
	assert_int_equal(h->pid, PID);
	assert_int_equal(h->tid, tid);
	assert_int_equal(h->api, 0);
	assert_int_equal(h->cpu, 0);
	assert_int_equal(h->size, size);
	assert_int_equal(h->size % 8, 0);
}

/* Bytes from the end of a string field up to the record's end are zero. */
static void check_padding(const void *rec, size_t used)
{
	const unsigned char *p = rec;
	size_t size = ((const struct gt_hdr *)rec)->size;

	for (size_t i = used; i < size; i++)
		assert_int_equal(p[i], 0);
}

#endif /* GTRACE_TEST_CUPTI_FIXTURES_H */
