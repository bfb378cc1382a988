// SPDX-License-Identifier: MIT
/* The recorder's kernel naming (user/record/procs/kname_recovery.c): names read from the
 * driver structure of a handle are written only when they look like
 * symbols and while every check against a looked-up name held. The traced
 * process' memory is faked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "record/procs/kname_recovery.h"
#include "format/api.h"

#define PID 4242
#define TID 4243

/* fake process memory: a few handles whose +8 points to a string */
struct fake_mem {
	uint64_t handle[4];
	const char *name[4];	/* NULL: the read fails */
	int reads;		/* reads asked for */
};

struct ctx {
	struct fake_mem mem;
	struct gt_name emitted[8];
	char emitted_str[8][256];
	int nemitted;
};

static long fake_read(void *vctx, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct ctx *c = vctx;
	int i;

	c->mem.reads++;
	if (pid != PID)
		return -3;
	for (i = 0; i < 4; i++) {
		uint64_t h = c->mem.handle[i];

		if (!h || !c->mem.name[i])
			continue;
		if (addr == h + 8 && len == 8) {
			/* the "pointer" to the name is its table slot */
			uint64_t p = 0x100000 + i * 0x1000;

			memcpy(buf, &p, 8);
			return 8;
		}
		if (addr >= 0x100000 + i * 0x1000u && addr < 0x100000 + i * 0x1000u + 0x1000) {
			size_t off = addr - (0x100000 + i * 0x1000), n = strlen(c->mem.name[i]) + 1;

			if (off >= n)
				return -14;
			n -= off;
			if (n > len)
				n = len;
			memcpy(buf, c->mem.name[i] + off, n);
			return n;
		}
	}
	return -14;
}

static int capture(void *vctx, const struct gt_hdr *rec)
{
	struct ctx *c = vctx;
	const struct gt_name *n = (const void *)rec;

	assert_int_equal(rec->type, GT_REC_NAME);
	assert_true(c->nemitted < 8);
	c->emitted[c->nemitted] = *n;
	snprintf(c->emitted_str[c->nemitted], 256, "%s", n->str);
	c->nemitted++;
	return 0;
}

static void hdr(struct gt_hdr *h, uint16_t type, uint16_t size, uint16_t api)
{
	memset(h, 0, sizeof(*h));
	h->ts = 1000;
	h->pid = PID;
	h->tid = TID;
	h->type = type;
	h->size = size;
	h->api = api;
}

/* A raw name record as BPF sends it at a handle's first launch. */
static int feed_raw(struct kernel_names *kn, uint64_t handle, const char *s)
{
	struct {
		struct gt_name n;
		char str[256];
	} r;
	size_t len = s ? strlen(s) + 1 : 0;

	memset(&r, 0, sizeof(r));
	hdr(&r.n.hdr, GT_REC_NAME, GT_REC_ALIGN(sizeof(r.n) + len), 0);
	r.n.key = handle;
	r.n.kind = GT_NAME_KERNEL_MEM;
	r.n.flags = GT_NAME_F_RAW;
	r.n.len = len;
	if (s)
		memcpy(r.str, s, len);
	return kernel_names__on_record(kn, &r.n.hdr);
}

static void feed_launch(struct kernel_names *kn, uint64_t func)
{
	struct gt_launch l;

	memset(&l, 0, sizeof(l));
	hdr(&l.hdr, GT_REC_LAUNCH, sizeof(l), GT_API_cuLaunchKernel);
	l.func = func;
	assert_int_equal(kernel_names__on_record(kn, &l.hdr), 0);
}

/* cuModuleGetFunction(&h, mod, name) entry and its exit returning h */
static void feed_lookup(struct kernel_names *kn, uint64_t h, const char *name)
{
	struct {
		struct gt_call_str c;
		char str[256];
	} e;
	struct gt_ret r;
	size_t len = strlen(name) + 1;

	memset(&e, 0, sizeof(e));
	hdr(&e.c.hdr, GT_REC_CALL_STR, GT_REC_ALIGN(sizeof(e.c) + len), GT_API_cuModuleGetFunction);
	e.c.len = len;
	memcpy(e.str, name, len);
	assert_int_equal(kernel_names__on_record(kn, &e.c.hdr), 0);
	memset(&r, 0, sizeof(r));
	hdr(&r.hdr, GT_REC_RET, sizeof(r), GT_API_cuModuleGetFunction);
	r.out = h;
	r.flags = GT_RET_OUT;
	assert_int_equal(kernel_names__on_record(kn, &r.hdr), 0);
}

static struct kernel_names *setup_kn(struct ctx *c)
{
	struct kernel_names *kn;

	memset(c, 0, sizeof(*c));
	kn = kernel_names__new(capture, fake_read, c);
	assert_non_null(kn);
	return kn;
}

static void counters(struct kernel_names *kn, struct gt_counters *g)
{
	memset(g, 0, sizeof(*g));
	kernel_names__counters(kn, g);
}

static void test_raw_name_written_checked(void **state)
{
	struct ctx c;
	struct kernel_names *kn = setup_kn(&c);
	struct gt_counters g;

	(void)state;
	assert_int_equal(feed_raw(kn, 0x5000, "_Z6vecAddPfS_S_i"), 0);
	assert_int_equal(c.nemitted, 1);
	assert_int_equal(c.emitted[0].kind, GT_NAME_KERNEL_MEM);
	assert_int_equal(c.emitted[0].flags, 0);	/* checked: no longer raw */
	assert_int_equal(c.emitted[0].key, 0x5000);
	assert_int_equal(c.emitted[0].hdr.pid, PID);
	assert_string_equal(c.emitted_str[0], "_Z6vecAddPfS_S_i");
	/* the launch that follows needs nothing more */
	feed_launch(kn, 0x5000);
	assert_int_equal(c.nemitted, 1);
	counters(kn, &g);
	assert_int_equal(g.names_mem, 1);
	assert_int_equal(g.names_mem_rejected, 0);
	/* a recovered symbol name counts as one that held */
	assert_int_equal(kernel_names__checked(kn), 1);
	kernel_names__free(kn);
}

static void test_garbage_rejected(void **state)
{
	struct ctx c;
	struct kernel_names *kn = setup_kn(&c);
	struct gt_counters g;

	(void)state;
	assert_int_equal(feed_raw(kn, 0x5000, "not a symbol!"), 0);
	assert_int_equal(feed_raw(kn, 0x6000, "9starts_with_digit"), 0);
	assert_int_equal(c.nemitted, 0);
	counters(kn, &g);
	assert_int_equal(g.names_mem, 0);
	assert_int_equal(g.names_mem_rejected, 2);
	/* strings that are no names: nothing can be trusted */
	assert_int_equal(feed_raw(kn, 0x7000, "_Z5otherv"), 0);
	assert_int_equal(kernel_names__checked(kn), 0);
	kernel_names__free(kn);
}

static void test_lookup_verifies_layout(void **state)
{
	struct ctx c;
	struct kernel_names *kn = setup_kn(&c);
	struct gt_counters g;

	(void)state;
	feed_lookup(kn, 0x5000, "_Z4fillPfif");
	assert_int_equal(feed_raw(kn, 0x5000, "_Z4fillPfif"), 0);
	/* the looked-up name is already in the trace: nothing written */
	assert_int_equal(c.nemitted, 0);
	counters(kn, &g);
	assert_int_equal(g.names_mem_verified, 1);
	assert_int_equal(g.names_mem_mismatch, 0);
	/* a handle never looked up is then named from the driver structure */
	assert_int_equal(feed_raw(kn, 0x7000, "_Z5otherv"), 0);
	assert_int_equal(c.nemitted, 1);
	assert_int_equal(kernel_names__checked(kn), 2);
	kernel_names__free(kn);
}

static void test_mismatch_disables_recovery(void **state)
{
	struct ctx c;
	struct kernel_names *kn = setup_kn(&c);
	struct gt_counters g;

	(void)state;
	feed_lookup(kn, 0x5000, "_Z4fillPfif");
	assert_int_equal(feed_raw(kn, 0x5000, "_Z9somethingv"), 0);
	assert_int_equal(feed_raw(kn, 0x7000, "_Z5otherv"), 0);
	assert_int_equal(c.nemitted, 0);
	counters(kn, &g);
	assert_int_equal(g.names_mem_mismatch, 1);
	assert_int_equal(g.names_mem_rejected, 1);
	assert_int_equal(g.names_mem, 0);
	assert_int_equal(kernel_names__checked(kn), 0);
	kernel_names__free(kn);
}

static void test_fallback_reads_process(void **state)
{
	struct ctx c;
	struct kernel_names *kn = setup_kn(&c);
	struct gt_counters g;

	(void)state;
	c.mem.handle[0] = 0x8000;
	c.mem.name[0] = "_Z3foov";
	c.mem.handle[1] = 0x9000;
	c.mem.name[1] = "_Z3barv";
	/* BPF could not read the string: the recorder reads it */
	assert_int_equal(feed_raw(kn, 0x8000, NULL), 0);
	/* no raw record at all (BPF's LRU forgot the handle): read at the launch */
	feed_launch(kn, 0x9000);
	assert_int_equal(c.nemitted, 2);
	assert_string_equal(c.emitted_str[0], "_Z3foov");
	assert_string_equal(c.emitted_str[1], "_Z3barv");
	/* unreadable handle: rejected once, not read again at every launch */
	feed_launch(kn, 0xa000);
	c.mem.reads = 0;
	feed_launch(kn, 0xa000);
	assert_int_equal(c.mem.reads, 0);
	counters(kn, &g);
	assert_int_equal(g.names_mem, 2);
	assert_int_equal(g.names_mem_rejected, 1);
	kernel_names__free(kn);
}

static void test_exit_forgets_process(void **state)
{
	struct ctx c;
	struct kernel_names *kn = setup_kn(&c);
	struct gt_proc_evt e;

	(void)state;
	assert_int_equal(feed_raw(kn, 0x5000, "_Z3foov"), 0);
	memset(&e, 0, sizeof(e));
	hdr(&e.hdr, GT_REC_EXIT, sizeof(e), 0);
	assert_int_equal(kernel_names__on_record(kn, &e.hdr), 0);
	/* same pid reused, same handle value: named anew */
	assert_int_equal(feed_raw(kn, 0x5000, "_Z3barv"), 0);
	assert_int_equal(c.nemitted, 2);
	assert_string_equal(c.emitted_str[1], "_Z3barv");
	kernel_names__free(kn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_raw_name_written_checked),
		cmocka_unit_test(test_garbage_rejected),
		cmocka_unit_test(test_lookup_verifies_layout),
		cmocka_unit_test(test_mismatch_disables_recovery),
		cmocka_unit_test(test_fallback_reads_process),
		cmocka_unit_test(test_exit_forgets_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
