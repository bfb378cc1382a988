// SPDX-License-Identifier: MIT
/* The ioctl attach ladder: which rungs are tried, in which order, for a
 * given machine; and the reading of a machine's capabilities from faked
 * /proc/kallsyms, /sys/kernel/btf and tracefs files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "record/probes/ioctl_ladder.h"

static int plan_of(struct ioctl_caps c, enum gt_ioctl_rung *p)
{
	return ioctl_ladder__plan(&c, p, 3);
}

static void test_plan_machines_here(void **state)
{
	/* CI and the GPU machine: no kprobes; the GPU machine has module BTF
	 * and the symbols, so fentry is tried (and refused) before syscalls */
	enum gt_ioctl_rung p[3];

	(void)state;
	assert_int_equal(plan_of((struct ioctl_caps){ 0 }, p), 1);
	assert_int_equal(p[0], GT_RUNG_SYSCALL);
	assert_int_equal(plan_of((struct ioctl_caps){ .nv_sym = true, .uvm_sym = true, .nv_btf = true,
						   .uvm_btf = true }, p), 2);
	assert_int_equal(p[0], GT_RUNG_FENTRY);
	assert_int_equal(p[1], GT_RUNG_SYSCALL);
}

static void test_plan_full_ladder(void **state)
{
	enum gt_ioctl_rung p[3];

	(void)state;
	assert_int_equal(plan_of((struct ioctl_caps){ .kprobes = true, .nv_sym = true, .nv_btf = true }, p), 3);
	assert_int_equal(p[0], GT_RUNG_KPROBE);
	assert_int_equal(p[1], GT_RUNG_FENTRY);
	assert_int_equal(p[2], GT_RUNG_SYSCALL);
}

static void test_plan_needs_symbols(void **state)
{
	/* kprobes without the driver's symbols (module not loaded) or BTF
	 * without them: only the syscall rung makes sense */
	enum gt_ioctl_rung p[3];

	(void)state;
	assert_int_equal(plan_of((struct ioctl_caps){ .kprobes = true, .nv_btf = true }, p), 1);
	assert_int_equal(p[0], GT_RUNG_SYSCALL);
	assert_int_equal(plan_of((struct ioctl_caps){ .kprobes = true, .uvm_sym = true }, p), 2);
	assert_int_equal(p[0], GT_RUNG_KPROBE);
	assert_int_equal(p[1], GT_RUNG_SYSCALL);
}

static void test_plan_small_buffer(void **state)
{
	/* the syscall rung always fits: it is the one that cannot be refused */
	struct ioctl_caps c = { .kprobes = true, .nv_sym = true, .nv_btf = true };
	enum gt_ioctl_rung p[1];

	(void)state;
	assert_int_equal(ioctl_ladder__plan(&c, p, 1), 1);
	assert_int_equal(p[0], GT_RUNG_SYSCALL);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_probe_fake_machine(void **state)
{
	char dir[] = "/tmp/gt-ladder-XXXXXX", ks[128], btf[128], p[160], kp[128], tp[128];
	struct ioctl_caps c;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(ks, sizeof(ks), "%s/kallsyms", dir);
	snprintf(btf, sizeof(btf), "%s/btf", dir);
	snprintf(kp, sizeof(kp), "%s/kprobe_type", dir);
	snprintf(tp, sizeof(tp), "%s/ioctl_id", dir);
	write_file(ks, "ffffffffc0a01230 t nvidia_unlocked_ioctl\t[nvidia]\n"
		       "ffffffffc0b00000 T nvidia_unlocked_ioctl_other\t[nvidia]\n"
		       "ffffffff81000000 T _stext\n");
	assert_int_equal(mkdir(btf, 0700), 0);
	snprintf(p, sizeof(p), "%s/nvidia", btf);
	write_file(p, "");
	ioctl_ladder__probe(&c, ks, btf, kp, tp);
	assert_true(c.nv_sym);
	assert_false(c.uvm_sym);	/* a longer name that starts the same is not it */
	assert_true(c.nv_btf);
	assert_false(c.uvm_btf);
	assert_false(c.kprobes);
	assert_false(c.syscall_tp);
	write_file(kp, "6\n");
	write_file(tp, "123\n");
	ioctl_ladder__probe(&c, ks, btf, kp, tp);
	assert_true(c.kprobes);
	assert_true(c.syscall_tp);
	unlink(p);
	unlink(ks);
	unlink(kp);
	unlink(tp);
	rmdir(btf);
	rmdir(dir);
}

static void test_rung_names(void **state)
{
	(void)state;
	assert_string_equal(ioctl_ladder__rung_name(GT_RUNG_KPROBE), "kprobe");
	assert_string_equal(ioctl_ladder__rung_name(GT_RUNG_FENTRY), "fentry");
	assert_string_equal(ioctl_ladder__rung_name(GT_RUNG_SYSCALL), "syscall");
	assert_string_equal(ioctl_ladder__rung_name(GT_RUNG_NONE), "none");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_machines_here),
		cmocka_unit_test(test_plan_full_ladder),
		cmocka_unit_test(test_plan_needs_symbols),
		cmocka_unit_test(test_plan_small_buffer),
		cmocka_unit_test(test_probe_fake_machine),
		cmocka_unit_test(test_rung_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
