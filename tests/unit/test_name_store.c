// SPDX-License-Identifier: MIT
/*
 * Unit tests of the daemon's name store (user/daemon/name_store.c): the
 * names of a process are let go once it exited before the window's oldest
 * chunk, not before; of a reused pid only the old process' go; an exec
 * takes the old program's kernel names only; names of no process stay; a
 * repeat is kept once, a newer name of the same thing replaces the old one
 * once the window starts after it; a bound full of names in use loses (and
 * counts) what does not fit, a bound full of dead names makes room; a
 * process gone without its exit record is found by the sweep; the stack
 * table's records (--stacks) outlive the process they were first seen in.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "format/records.h"
#include "daemon/name_store.h"

static uint64_t oldest;		/* what the window's oldest chunk says, set by each test */
static struct name_store *S;

static uint64_t oldest_fn(void *ctx)
{
	(void)ctx;
	return oldest;
}

static int setup(void **state)
{
	(void)state;
	oldest = 0;
	return name_store__new(0, oldest_fn, NULL, &S);
}

static int teardown(void **state)
{
	(void)state;
	name_store__free(S);
	S = NULL;
	return 0;
}

/* A name record of kind for key, of process pid, learned at ts. */
static int name(uint64_t ts, uint32_t pid, uint16_t kind, uint64_t key, const char *s)
{
	struct {
		struct gt_name n;
		char str[256];
	} rec;
	struct gt_hdr at = { .ts = ts, .pid = pid, .tid = pid };

	return name_store__note(S, gt_name__fill(&rec.n, sizeof(rec.str), &at, kind, key, s));
}

/* An exit or exec record of pid at ts. */
static void proc_evt(uint16_t type, uint64_t ts, uint32_t pid)
{
	struct gt_proc_evt e = { .hdr = { .ts = ts, .pid = pid, .tid = pid, .type = type,
					  .size = sizeof(e) } };

	assert_int_equal(name_store__note(S, &e.hdr), 0);
}

/* How many records the store holds of pid (of kind, 0 = any), and whether
 * one of them says s (NULL: any). */
static unsigned held(uint32_t pid, uint16_t kind, const char *s)
{
	size_t len, off;
	const uint8_t *p = name_store__data(S, &len);
	unsigned n = 0;

	for (off = 0; off < len; off += ((const struct gt_hdr *)(p + off))->size) {
		const struct gt_name *nm = (const struct gt_name *)(p + off);

		assert_true(nm->hdr.size >= sizeof(struct gt_hdr) && nm->hdr.size % 8 == 0);
		if (nm->hdr.pid != pid || nm->hdr.type != GT_REC_NAME || (kind && nm->kind != kind))
			continue;
		if (!s || !strcmp(nm->str, s))
			n++;
	}
	return n;
}

static struct name_store_stats stats(void)
{
	struct name_store_stats st;

	name_store__stats(S, &st);
	return st;
}

/* A process' names stay while the window holds a chunk from before its
 * exit, and go once every chunk starts after it; pid 0's never go. */
static void test_exit(void **state)
{
	(void)state;
	assert_int_equal(name(10, 100, GT_NAME_PROCESS, 100, "train.py"), 0);
	assert_int_equal(name(11, 100, GT_NAME_KERNEL, 0x7000, "_Z3fooi"), 0);
	assert_int_equal(name(12, 100, GT_NAME_THREAD, 101, "worker"), 0);
	assert_int_equal(name(13, 0, GT_NAME_LIBCUDA, 42, "/usr/lib/libcuda.so.1"), 0);
	assert_int_equal(name(14, 200, GT_NAME_PROCESS, 200, "other"), 0);
	proc_evt(GT_REC_EXIT, 50, 100);
	assert_int_equal(stats().live, 2);
	/* the window starts at the exit: a record of it may still be there */
	oldest = 50;
	name_store__prune(S);
	assert_int_equal(held(100, 0, NULL), 3);
	assert_int_equal(stats().forgotten, 0);
	/* an empty window (0) lets nothing go */
	oldest = 0;
	name_store__prune(S);
	assert_int_equal(held(100, 0, NULL), 3);
	oldest = 51;
	name_store__prune(S);
	assert_int_equal(held(100, 0, NULL), 0);
	assert_int_equal(held(0, GT_NAME_LIBCUDA, "/usr/lib/libcuda.so.1"), 1);
	assert_int_equal(held(200, GT_NAME_PROCESS, "other"), 1);
	assert_int_equal(stats().forgotten, 3);
	assert_int_equal(stats().records, 2);
	/* the exit of pid 0 (there is none) or of a pid never named: nothing */
	proc_evt(GT_REC_EXIT, 60, 0);
	proc_evt(GT_REC_EXIT, 60, 999);
	oldest = 1000;
	name_store__prune(S);
	assert_int_equal(stats().records, 2);
}

/* The stack table: a stack, its module and Python function, first seen in
 * a process that exits, stay for the other processes' calls that name them. */
static void test_stack_table(void **state)
{
	struct {
		struct gt_stack s;
		struct gt_stack_frame f[2];
	} st = { .s = { .hdr = { .ts = 10, .pid = 100, .type = GT_REC_STACK, .size = sizeof(st) },
			.id = 7, .nframes = 2 } };
	struct gt_module m = { .hdr = { .ts = 10, .pid = 100, .type = GT_REC_MODULE, .size = sizeof(m) },
			       .id = 3 };
	struct gt_pyfunc pf = { .hdr = { .ts = 10, .pid = 100, .type = GT_REC_PYFUNC, .size = sizeof(pf) },
				.id = 5 };
	size_t len, off, n = 0;
	const uint8_t *p;

	(void)state;
	assert_int_equal(name(9, 100, GT_NAME_PROCESS, 100, "train.py"), 0);
	assert_int_equal(name_store__note(S, &st.s.hdr), 0);
	assert_int_equal(name_store__note(S, &m.hdr), 0);
	assert_int_equal(name_store__note(S, &pf.hdr), 0);
	proc_evt(GT_REC_EXIT, 50, 100);
	oldest = 51;
	name_store__prune(S);
	assert_int_equal(held(100, 0, NULL), 0);
	p = name_store__data(S, &len);
	for (off = 0; off < len; off += ((const struct gt_hdr *)(p + off))->size) {
		const struct gt_hdr *h = (const void *)(p + off);

		assert_int_equal(h->pid, 100);	/* kept as written */
		n += h->type == GT_REC_STACK || h->type == GT_REC_MODULE || h->type == GT_REC_PYFUNC;
	}
	assert_int_equal(n, 3);
	assert_int_equal(stats().live, 3);
}

/* A pid reused: the old process' names die with its exit, the new one's
 * (written after it) stay, even where they repeat the old ones. */
static void test_reused_pid(void **state)
{
	(void)state;
	assert_int_equal(name(10, 100, GT_NAME_PROCESS, 100, "first"), 0);
	assert_int_equal(name(11, 100, GT_NAME_KERNEL, 0x7000, "_Z3fooi"), 0);
	proc_evt(GT_REC_EXIT, 20, 100);
	assert_int_equal(name(30, 100, GT_NAME_PROCESS, 100, "second"), 0);
	/* the same handle and name as the old process': a new record */
	assert_int_equal(name(31, 100, GT_NAME_KERNEL, 0x7000, "_Z3fooi"), 0);
	assert_int_equal(stats().repeated, 0);
	assert_int_equal(stats().live, 2);
	oldest = 25;
	name_store__prune(S);
	assert_int_equal(held(100, GT_NAME_PROCESS, "first"), 0);
	assert_int_equal(held(100, GT_NAME_PROCESS, "second"), 1);
	assert_int_equal(held(100, GT_NAME_KERNEL, "_Z3fooi"), 1);
	/* the second exits too */
	proc_evt(GT_REC_EXIT, 40, 100);
	oldest = 41;
	name_store__prune(S);
	assert_int_equal(held(100, 0, NULL), 0);
	assert_int_equal(stats().forgotten, 4);
}

/* An exec: the old program's kernel names go (its handles mean nothing
 * now), its process and thread names stay until newer ones replace them. */
static void test_exec(void **state)
{
	(void)state;
	assert_int_equal(name(10, 100, GT_NAME_PROCESS, 100, "bash run.sh"), 0);
	assert_int_equal(name(11, 100, GT_NAME_THREAD, 100, "bash"), 0);
	assert_int_equal(name(12, 100, GT_NAME_KERNEL, 0x7000, "_Z3fooi"), 0);
	assert_int_equal(name(13, 100, GT_NAME_KERNEL_MEM, 0x7100, "_Z3bari"), 0);
	proc_evt(GT_REC_EXEC, 20, 100);
	assert_int_equal(name(21, 100, GT_NAME_PROCESS, 100, "python train.py"), 0);
	assert_int_equal(name(22, 100, GT_NAME_KERNEL, 0x7000, "_Z3bazi"), 0);
	oldest = 30;
	name_store__prune(S);
	assert_int_equal(held(100, GT_NAME_KERNEL, "_Z3fooi"), 0);
	assert_int_equal(held(100, GT_NAME_KERNEL_MEM, NULL), 0);
	assert_int_equal(held(100, GT_NAME_KERNEL, "_Z3bazi"), 1);
	/* replaced by the newer name before the window: gone */
	assert_int_equal(held(100, GT_NAME_PROCESS, "bash run.sh"), 0);
	assert_int_equal(held(100, GT_NAME_PROCESS, "python train.py"), 1);
	/* nothing replaced it: kept */
	assert_int_equal(held(100, GT_NAME_THREAD, "bash"), 1);
}

/* The same name again is kept once; a newer one replaces it once the window
 * starts after the newer one, not before. */
static void test_repeat_and_replace(void **state)
{
	(void)state;
	for (int i = 0; i < 100; i++)
		assert_int_equal(name(10 + i, 100, GT_NAME_KERNEL, 0x7000, "_Z3fooi"), 0);
	assert_int_equal(stats().records, 1);
	assert_int_equal(stats().repeated, 99);
	/* another kind of the same key, another pid, another key: not repeats */
	assert_int_equal(name(200, 100, GT_NAME_KERNEL_MEM, 0x7000, "_Z3fooi"), 0);
	assert_int_equal(name(201, 101, GT_NAME_KERNEL, 0x7000, "_Z3fooi"), 0);
	assert_int_equal(name(202, 100, GT_NAME_KERNEL, 0x7008, "_Z3fooi"), 0);
	assert_int_equal(stats().records, 4);
	/* a thread renamed at 300 */
	assert_int_equal(name(250, 100, GT_NAME_THREAD, 105, "pt_main"), 0);
	assert_int_equal(name(300, 100, GT_NAME_THREAD, 105, "pt_worker"), 0);
	oldest = 300;
	name_store__prune(S);
	assert_int_equal(held(100, GT_NAME_THREAD, "pt_main"), 1);
	oldest = 301;
	name_store__prune(S);
	assert_int_equal(held(100, GT_NAME_THREAD, "pt_main"), 0);
	assert_int_equal(held(100, GT_NAME_THREAD, "pt_worker"), 1);
	/* and back to the first name: a new record, the second one replaced */
	assert_int_equal(name(400, 100, GT_NAME_THREAD, 105, "pt_main"), 0);
	oldest = 401;
	name_store__prune(S);
	assert_int_equal(held(100, GT_NAME_THREAD, NULL), 1);
	assert_int_equal(held(100, GT_NAME_THREAD, "pt_main"), 1);
}

/* Full of names in use: what does not fit is lost and counted; full of
 * names dead before the window: they make room. */
static void test_bound(void **state)
{
	char s[200];
	int err = 0, i;

	(void)state;
	name_store__free(S);
	assert_int_equal(name_store__new(4096, oldest_fn, NULL, &S), 0);
	memset(s, 'a', sizeof(s) - 1);
	s[sizeof(s) - 1] = 0;
	/* 240-byte records: 17 fit in 4096 */
	for (i = 0; i < 20; i++) {
		s[0] = (char)('A' + i);
		err = name(10 + i, 100 + i, GT_NAME_PROCESS, 100 + i, s);
		if (i < 17)
			assert_int_equal(err, 0);
		else
			assert_int_equal(err, -ENOSPC);
	}
	assert_int_equal(stats().lost, 3);
	assert_int_equal(stats().lost_bytes, 3 * 240);
	assert_true(stats().bytes <= 4096);
	/* 5 of them exited; the window does not start after them yet */
	for (i = 0; i < 5; i++)
		proc_evt(GT_REC_EXIT, 100 + i, 100 + i);
	oldest = 103;
	assert_int_equal(name(200, 300, GT_NAME_PROCESS, 300, s), 0);	/* 3 go: room */
	assert_int_equal(name(201, 301, GT_NAME_PROCESS, 301, s), 0);
	assert_int_equal(name(202, 302, GT_NAME_PROCESS, 302, s), 0);
	assert_int_equal(name(203, 303, GT_NAME_PROCESS, 303, s), -ENOSPC);
	assert_int_equal(stats().forgotten, 3);
	assert_int_equal(stats().lost, 4);
	assert_int_equal(held(300, GT_NAME_PROCESS, NULL), 1);
	assert_int_equal(held(103, GT_NAME_PROCESS, NULL), 1);
	/* a newer name that finds no room: the older one stays in use */
	s[0] = 'Z';
	assert_int_equal(name(300, 300, GT_NAME_PROCESS, 300, s), -ENOSPC);
	oldest = 10000;
	name_store__prune(S);
	assert_int_equal(held(300, GT_NAME_PROCESS, NULL), 1);
	assert_int_equal(stats().lost, 5);
}

static bool alive_fn(void *ctx, uint32_t pid)
{
	(void)ctx;
	return pid != 100;
}

/* A process whose exit record was lost: found gone by the sweep, its names
 * die then; the others stay. */
static void test_sweep(void **state)
{
	(void)state;
	assert_int_equal(name(10, 100, GT_NAME_PROCESS, 100, "lost exit"), 0);
	assert_int_equal(name(11, 101, GT_NAME_PROCESS, 101, "running"), 0);
	assert_int_equal(name(12, 0, GT_NAME_LIBCUDA, 1, "/lib/libcuda.so.1"), 0);
	name_store__sweep(S, alive_fn, NULL, 500);
	assert_int_equal(stats().gone, 1);
	oldest = 500;
	name_store__prune(S);
	assert_int_equal(held(100, 0, NULL), 1);
	oldest = 501;
	name_store__prune(S);
	assert_int_equal(held(100, 0, NULL), 0);
	assert_int_equal(held(101, 0, NULL), 1);
	assert_int_equal(held(0, 0, NULL), 1);
	/* found once: its names are dead already */
	name_store__sweep(S, alive_fn, NULL, 600);
	assert_int_equal(stats().gone, 1);
}

/* Many short processes, each named, exiting, the window moving on: the
 * store holds what the window needs, its indexes are made anew as it goes. */
static void test_churn(void **state)
{
	char s[64];

	(void)state;
	for (uint32_t p = 1; p <= 20000; p++) {
		uint64_t t = (uint64_t)p * 10;

		snprintf(s, sizeof(s), "job %u", p);
		assert_int_equal(name(t, p, GT_NAME_PROCESS, p, s), 0);
		assert_int_equal(name(t + 1, p, GT_NAME_KERNEL, 0x7000 + p, "_Z3fooi"), 0);
		proc_evt(GT_REC_EXIT, t + 2, p);
		oldest = t > 50 ? t - 50 : 0;
		name_store__prune(S);
	}
	/* the last 6 exited at most 50 ns before the window's start */
	assert_int_equal(stats().records, 2 * 6);
	assert_int_equal(stats().forgotten, 2 * (20000 - 6));
	assert_int_equal(held(20000, GT_NAME_PROCESS, "job 20000"), 1);
	assert_int_equal(stats().lost, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stack_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reused_pid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repeat_and_replace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sweep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_churn, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
