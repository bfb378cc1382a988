// SPDX-License-Identifier: MIT
/*
 * The overhead budget's calibration (budget.c): what one uprobe and one
 * uretprobe hit cost on this machine, measured by timing calls of
 * functions of our own with do-nothing programs attached (bpf/calib.bpf.c)
 * against the same calls unprobed, the programs' own run time (the
 * kernel's BPF statistics) taken out.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "calib.skel.h"
#include "lib/log.h"
#include "record/probe_cost.h"
#include "record/probes/cuda_probes.h"
#include "record/recorder.h"
#include "lib/cmp.h"

#define CALIB_CALLS	5000		/* calls timed per calibration round */
#define CALIB_ROUNDS	9		/* rounds; the median is taken */

/* Functions of our own for the calibration, one per way the kernel takes a
 * hit (enum uprobe_insn), written in assembly so that the probed
 * instruction is exactly the kind: push, a one-byte nop (emulated like a
 * jump), a register move (single-stepped). */
__asm__(".text\n"
	".globl gtrace_calib_push\n.type gtrace_calib_push, @function\n"
	"gtrace_calib_push:\n\tpush %rbp\n\tpop %rbp\n\tret\n"
	".size gtrace_calib_push, .-gtrace_calib_push\n"
	".globl gtrace_calib_nop\n.type gtrace_calib_nop, @function\n"
	"gtrace_calib_nop:\n\tnop\n\tret\n"
	".size gtrace_calib_nop, .-gtrace_calib_nop\n"
	".globl gtrace_calib_step\n.type gtrace_calib_step, @function\n"
	"gtrace_calib_step:\n\tmov %rdi, %rax\n\tret\n"
	".size gtrace_calib_step, .-gtrace_calib_step\n");
void gtrace_calib_push(void);
void gtrace_calib_nop(void);
void gtrace_calib_step(void);

static void (*const calib_fn[UPROBE_INSN__COUNT])(void) = {
	[UPROBE_INSN_STEP] = gtrace_calib_step,
	[UPROBE_INSN_PUSH] = gtrace_calib_push,
	[UPROBE_INSN_BRANCH] = gtrace_calib_nop,
};

/* Run count and time of program fd; false when the kernel does not say. */
bool probe_cost__prog_read(int fd, uint64_t *cnt, uint64_t *ns)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return false;
	*cnt = info.run_cnt;
	*ns = info.run_time_ns;
	return true;
}

/* The file offset of addr in our own executable, from /proc/self/maps; the
 * path of that file into path. */
static int self_offset(const void *addr, char *path, size_t len, uint64_t *off)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[PATH_MAX + 128];
	uintptr_t a = (uintptr_t)addr;
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, fo;
		char perm[8], file[PATH_MAX];
		int n = sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", &lo, &hi, perm, &fo, file);

		if (n == 5 && a >= lo && a < hi && file[0] == '/') {
			*off = a - lo + fo;
			snprintf(path, len, "%s", file);
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

/* The thread's CPU time, not wall time: a calibration on a busy machine
 * loses the CPU now and then, which says nothing of what a hit costs (a
 * hit is handled in the thread's own context, and is charged to it). */
static uint64_t time_calls(void (*volatile fn)(void), int n)
{
	uint64_t t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	int i;

	for (i = 0; i < n; i++)
		fn();
	return now_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
}

/* Median ns per call of fn over CALIB_ROUNDS rounds. */
static double per_call(void (*fn)(void))
{
	double v[CALIB_ROUNDS];
	int i;

	for (i = 0; i < CALIB_ROUNDS; i++)
		v[i] = (double)time_calls(fn, CALIB_CALLS) / CALIB_CALLS;
	cmp__sort(v, CALIB_ROUNDS, sizeof(v[0]), cmp__double);
	return v[CALIB_ROUNDS / 2];
}

/* Mean BPF run time per run of prog since (cnt0, ns0), 0 when unknown. */
static double run_mean(const struct bpf_program *prog, uint64_t cnt0, uint64_t ns0)
{
	uint64_t cnt, ns;

	if (!probe_cost__prog_read(bpf_program__fd(prog), &cnt, &ns) || cnt <= cnt0)
		return 0;
	return (double)(ns - ns0) / (double)(cnt - cnt0);
}

static int calib_attach(struct bpf_program *prog, bool multi, const char *path, uint64_t off, bool ret,
			struct bpf_link **link)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .retprobe = ret);
	int fd;

	*link = NULL;
	if (multi) {
		fd = uprobe_multi__attach(bpf_program__fd(prog), path, &off, NULL, 1, ret);
		return fd;
	}
	*link = bpf_program__attach_uprobe_opts(prog, getpid(), path, off, &uo);
	return *link ? INT32_MAX : (errno ? -errno : -EINVAL);
}

static void calib_detach(int fd, struct bpf_link *link)
{
	if (link)
		bpf_link__destroy(link);
	else if (fd >= 0)
		close(fd);
}

/* One target: ns per call with an entry probe (*entry) and with an entry
 * and a return probe (*both, when both is not NULL), less the bare call and
 * the do-nothing programs' own run time. */
static int calib_one(struct calib_bpf *skel, bool multi, void (*fn)(void), double *entry, double *both)
{
	struct bpf_link *l1 = NULL, *l2 = NULL;
	char path[PATH_MAX];
	uint64_t off = 0, c0 = 0, n0 = 0, c1 = 0, n1 = 0;
	double bare, with, m;
	int fd1 = -1, fd2 = -1, err;

	err = self_offset((const void *)(uintptr_t)fn, path, sizeof(path), &off);
	if (err)
		return err;
	bare = per_call(fn);
	fd1 = calib_attach(skel->progs.calib_entry, multi, path, off, false, &l1);
	if (fd1 < 0)
		return fd1;
	probe_cost__prog_read(bpf_program__fd(skel->progs.calib_entry), &c0, &n0);
	with = per_call(fn);
	m = run_mean(skel->progs.calib_entry, c0, n0);
	*entry = with - bare - m;
	if (both) {
		fd2 = calib_attach(skel->progs.calib_ret, multi, path, off, true, &l2);
		if (fd2 < 0) {
			err = fd2;
			goto out;
		}
		probe_cost__prog_read(bpf_program__fd(skel->progs.calib_entry), &c0, &n0);
		probe_cost__prog_read(bpf_program__fd(skel->progs.calib_ret), &c1, &n1);
		*both = per_call(fn) - with - run_mean(skel->progs.calib_ret, c1, n1) -
			(run_mean(skel->progs.calib_entry, c0, n0) - m);
	}
out:
	calib_detach(fd2, l2);
	calib_detach(fd1, l1);
	return err;
}

int probe_cost__measure(double *hit_ns, double *ret_ns, bool multi)
{
	struct calib_bpf *skel;
	double hit[UPROBE_INSN__COUNT], ret = 0;
	int i, err;

	skel = calib_bpf__open();
	if (!skel)
		return errno ? -errno : -ENOMEM;
	uprobe_multi__prepare(skel->progs.calib_entry, multi);
	uprobe_multi__prepare(skel->progs.calib_ret, multi);
	err = calib_bpf__load(skel);
	for (i = 0; !err && i < UPROBE_INSN__COUNT; i++)
		err = calib_one(skel, multi, calib_fn[i], &hit[i], i == UPROBE_INSN_PUSH ? &ret : NULL);
	calib_bpf__destroy(skel);
	if (err)
		return err;
	for (i = 0; i < UPROBE_INSN__COUNT; i++)
		hit_ns[i] = hit[i] > 0 ? hit[i] : 0;
	*ret_ns = ret > 0 ? ret : 0;
	return 0;
}
