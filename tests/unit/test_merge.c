// SPDX-License-Identifier: MIT
/*
 * Unit tests of the merger's file merge (user/merge/merge.c, merge__run) on
 * traces and spool files written here (placement of each GPU record,
 * damaged and refused inputs).  The linking core is tested in
 * test_merge_link.c.  No root, no GPU.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "decode/decode.h"
#include "lib/log.h"
#include "merge/merge.h"
#include "merge/link.h"
#include "format/trace_file.h"
#include "merge_fixtures.h"

/* ------------------------------------------------------------ files */

static char tmpdir[64];

static const char *tmp_path(const char *name)
{
	static char buf[16][160];
	static int which;

	which = (which + 1) % 16;
	snprintf(buf[which], sizeof(buf[which]), "%s/%s", tmpdir, name);
	return buf[which];
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(p);
}

static int file_setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/gtrace-test-merge.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	gt_log_level = GT_LOG_ERROR;	/* the summary and warnings are not under test here */
	return 0;
}

static int file_teardown(void **state)
{
	(void)state;
	nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

static _Alignas(8) unsigned char rb[4096];

static struct gt_hdr *mk(uint16_t type, size_t size, uint64_t ts, uint32_t pid, uint32_t tid,
			 uint16_t api_id)
{
	struct gt_hdr *h = (void *)rb;

	memset(rb, 0, size);
	h->ts = ts;
	h->pid = pid;
	h->tid = tid;
	h->type = type;
	h->size = size;
	h->api = api_id;
	return h;
}

static const struct gt_hdr *launch_rec(uint64_t ts, uint32_t tid)
{
	struct gt_launch *l = (void *)mk(GT_REC_LAUNCH, sizeof(struct gt_launch), ts, PID, tid,
					  GT_API_cuLaunchKernel);

	l->func = 0x7000;
	l->grid[0] = l->block[0] = 1;
	return &l->hdr;
}

static const struct gt_hdr *call_rec(uint64_t ts, uint32_t tid, unsigned api_id)
{
	return mk(GT_REC_CALL, sizeof(struct gt_call), ts, PID, tid, api_id);
}

static const struct gt_hdr *ret_rec(uint64_t ts, uint32_t tid, unsigned api_id, int32_t ret)
{
	struct gt_ret *r = (void *)mk(GT_REC_RET, sizeof(struct gt_ret), ts, PID, tid, api_id);

	r->ret = ret;
	return &r->hdr;
}

static const struct gt_hdr *exec_rec(uint64_t ts)
{
	return mk(GT_REC_EXEC, sizeof(struct gt_proc_evt), ts, PID, PID, 0);
}

static struct gt_counters main_counters = { .events = 77, .drop_ringbuf = 3 };

/* Starts a trace; the caller appends records and ends it with trace_end. */
static struct trace_writer *trace_begin(const char *path, const char *options)
{
	struct gt_file_info info = {
		.version = GT_FILE_VERSION, .clock_id = 1, .start_ts = T0 - MS, .host = "h",
		.kernel = "k", .cmdline = "gtrace-bpf -- app", .options = options,
	};
	struct trace_writer *w;

	assert_int_equal(trace_writer__create(path, &info, NULL, &w), 0);
	return w;
}

static void trace_add(struct trace_writer *w, const struct gt_hdr *h)
{
	assert_int_equal(trace_writer__append(w, h), 0);
}

static void trace_end(struct trace_writer *w)
{
	struct gt_trailer t = { .end_ts = T0 + 10 * MS, .counters = main_counters };

	assert_int_equal(trace_writer__finish(w, &t), 0);
	trace_writer__free(w);
}

/* The eBPF side of the file tests: exec; launch L1 [T0, T0+4us];
 * cuMemcpyHtoD C1 [T0+10us, T0+30us]; launch L2 [T0+40us, T0+44us];
 * launch L3 [T0+50us, T0+54us] that gets no kernel. */
static void write_main(const char *path)
{
	struct trace_writer *w = trace_begin(path, "mode=command trace=cuda cupti=1 launch_exit=1");

	trace_add(w, exec_rec(T0 - 100 * US));
	trace_add(w, launch_rec(T0, TID));
	trace_add(w, ret_rec(T0 + 4 * US, TID, GT_API_cuLaunchKernel, 0));
	trace_add(w, call_rec(T0 + 10 * US, TID, GT_API_cuMemcpyHtoD_v2));
	trace_add(w, ret_rec(T0 + 30 * US, TID, GT_API_cuMemcpyHtoD_v2, 0));
	trace_add(w, launch_rec(T0 + 40 * US, TID));
	trace_add(w, ret_rec(T0 + 44 * US, TID, GT_API_cuLaunchKernel, 0));
	trace_add(w, launch_rec(T0 + 50 * US, TID));
	trace_add(w, ret_rec(T0 + 54 * US, TID, GT_API_cuLaunchKernel, 0));
	trace_end(w);
}

struct spool_buf {
	unsigned char b[16384];
	size_t n;
};

static void sp_add(struct spool_buf *s, const struct gt_hdr *h)
{
	assert_true(s->n + h->size <= sizeof(s->b));
	memcpy(s->b + s->n, h, h->size);
	s->n += h->size;
}

static void sp_init(struct spool_buf *s)
{
	memcpy(s->b, GT_CUPTI_MAGIC, GT_CUPTI_MAGIC_LEN);
	s->n = GT_CUPTI_MAGIC_LEN;
}

static void sp_api(struct spool_buf *s, uint32_t corr, uint64_t start, uint64_t dur)
{
	struct gt_gpu_api *a = (void *)mk(GT_REC_GPU_API, sizeof(*a), start, PID, TID, 0);

	a->dur = dur;
	a->correlation = corr;
	a->cbid = 307;
	sp_add(s, &a->hdr);
}

static void sp_kernel(struct spool_buf *s, uint32_t corr, uint64_t ts, const char *name)
{
	size_t len = strlen(name) + 1;
	struct gt_gpu_kernel *k = (void *)mk(GT_REC_GPU_KERNEL, GT_REC_ALIGN(sizeof(*k) + len), ts,
					      PID, 0, 0);

	k->dur = 2 * US;
	k->correlation = corr;
	k->device = 0;
	k->stream = 7;
	k->grid[0] = 1;
	k->block[0] = 32;
	k->len = len;
	memcpy(k->name, name, len);
	sp_add(s, &k->hdr);
}

static void sp_copy(struct spool_buf *s, uint16_t type, uint32_t corr, uint64_t ts)
{
	struct gt_gpu_copy *c = (void *)mk(type, sizeof(*c), ts, PID, 0, 0);

	c->dur = 3 * US;
	c->bytes = 4096;
	c->correlation = corr;
	c->kind = type == GT_REC_GPU_MEMCPY ? GT_COPY_HTOD : 0;
	sp_add(s, &c->hdr);
}

static void sp_nvtx(struct spool_buf *s, uint64_t ts, const char *name)
{
	size_t len = strlen(name) + 1;
	struct gt_nvtx *n = (void *)mk(GT_REC_NVTX, GT_REC_ALIGN(sizeof(*n) + len), ts, PID, TID, 0);

	n->dur = 100 * US;
	n->len = len;
	memcpy(n->name, name, len);
	sp_add(s, &n->hdr);
}

static void sp_stats(struct spool_buf *s, uint64_t ts)
{
	struct gt_cupti_stats *st = (void *)mk(GT_REC_CUPTI_STATS, sizeof(*st), ts, PID, 0, 0);

	st->records = 9;
	st->dropped = 1;
	sp_add(s, &st->hdr);
}

static void sp_write(const struct spool_buf *s, const char *path, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(s->b, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* The GPU side of the file tests: L1 -> K1, C1 -> M1, L2 -> K2a and K2b (a
 * duplicate), a kernel without API record, an API outside every call (but
 * inside the recording: between C1's exit and L2), L3's API record without
 * its kernel, an NVTX range, the agent's counters. Written in an order
 * unlike time's. */
static void fill_spool(struct spool_buf *s)
{
	sp_init(s);
	sp_nvtx(s, T0 - 50 * US, "step");
	sp_kernel(s, 3, T0 + 46 * US, "_Z2k2v");	/* K2a */
	sp_api(s, 1, T0 + 500, 3 * US);
	sp_api(s, 3, T0 + 40 * US + 500, 3 * US);
	sp_kernel(s, 1, T0 + 5 * US, "_Z2k1v");		/* K1 */
	sp_copy(s, GT_REC_GPU_MEMCPY, 2, T0 + 12 * US);	/* M1 */
	sp_api(s, 2, T0 + 11 * US, 18 * US);
	sp_kernel(s, 3, T0 + 48 * US, "_Z2k2v");	/* K2b */
	sp_kernel(s, 9, T0 + 60 * US, "_Z2k9v");	/* no API record */
	sp_api(s, 5, T0 + 33 * US, 1 * US);		/* in no call */
	sp_kernel(s, 5, T0 + 34 * US, "_Z2k5v");
	sp_api(s, 6, T0 + 50 * US + 500, 2 * US);	/* L3's: its kernel never came */
	sp_stats(s, T0 + 100 * US);
}

struct outrec {
	uint16_t type, api;
	uint32_t tid;
	uint64_t ts;
	uint64_t launch_ts;
	uint16_t flags;
	uint32_t corr;
};

static int read_out(const char *path, struct outrec *o, int max, struct gt_trailer *trailer,
		    char *options, size_t optlen)
{
	struct trace_reader *r;
	const struct gt_hdr *h;
	const char *msg;
	int n = 0, rc;

	assert_int_equal(trace_reader__open(path, &r, &msg), 0);
	snprintf(options, optlen, "%s", trace_reader__info(r)->options);
	while ((rc = trace_reader__next(r, &h)) > 0) {
		assert_true(n < max);
		o[n] = (struct outrec){ .type = h->type, .api = h->api, .tid = h->tid, .ts = h->ts };
		if (h->type == GT_REC_GPU_KERNEL) {
			const struct gt_gpu_kernel *k = (const void *)h;

			o[n].launch_ts = k->launch_ts;
			o[n].flags = k->flags;
			o[n].corr = k->correlation;
		} else if (h->type == GT_REC_GPU_MEMCPY || h->type == GT_REC_GPU_MEMSET) {
			const struct gt_gpu_copy *c = (const void *)h;

			o[n].launch_ts = c->launch_ts;
			o[n].flags = c->flags;
			o[n].corr = c->correlation;
		} else if (h->type == GT_REC_GPU_API) {
			o[n].corr = ((const struct gt_gpu_api *)h)->correlation;
		} else if (h->type == GT_REC_MERGE_STATS) {
			const struct gt_merge_stats *m = (const void *)h;

			/* the counters, where the test can see them */
			o[n].launch_ts = m->gpu_records << 40 | m->linked << 32 | m->unmatched_gpu << 24 |
					 m->unmatched_calls << 16 | m->causality << 8 | m->no_api;
		}
		n++;
	}
	assert_int_equal(rc, 0);
	assert_false(trace_reader__truncated(r));
	assert_non_null(trace_reader__trailer(r));
	*trailer = *trace_reader__trailer(r);
	trace_reader__close(r);
	return n;
}

#define MS_PACK(gpu, linked, unm, unc, caus, noapi) \
	((uint64_t)(gpu) << 40 | (uint64_t)(linked) << 32 | (uint64_t)(unm) << 24 | \
	 (uint64_t)(unc) << 16 | (uint64_t)(caus) << 8 | (noapi))

static void expect_rec(const struct outrec *o, uint16_t type, uint64_t ts)
{
	if (o->type != type || o->ts != ts)
		fail_msg("record type %u ts %llu, expected type %u ts %llu", o->type,
			 (unsigned long long)o->ts, type, (unsigned long long)ts);
}

static void t_file_placement(void **state)
{
	const char *main_path = tmp_path("run.gtrace"), *sp = tmp_path("gtrace-cupti.4242.spool");
	const char *out = tmp_path("run_merged.gtrace");
	const char *spools[] = { sp };
	struct merge_opts mo = { .trace = main_path, .spools = spools, .nspools = 1, .output = out };
	struct merge_result res;
	struct spool_buf s;
	struct outrec o[64];
	struct gt_trailer t;
	char options[512];
	struct stat st;
	int n, i = 0;

	(void)state;
	write_main(main_path);
	fill_spool(&s);
	sp_write(&s, sp, s.n);
	assert_int_equal(merge__run(&mo, &res), 0);
	assert_int_equal(res.main_records, 9);
	assert_int_equal(res.spool_files, 1);
	assert_int_equal(res.spool_records, 13);
	assert_int_equal(res.spool_cut, 0);
	/* 6 GPU records: K1, M1, K2a, K2b linked; k9 (no API) and k5 (outside) not */
	expect_stats(&res.link, 6, 4, 2, 1, 0, 1, 1);
	assert_int_equal(res.link.processes, 1);

	n = read_out(out, o, 64, &t, options, sizeof(options));
	assert_int_equal(n, 9 + 6 + 5 + 1 + 1 + 1);
	expect_rec(&o[i++], GT_REC_EXEC, T0 - 100 * US);
	expect_rec(&o[i++], GT_REC_LAUNCH, T0);
	expect_rec(&o[i], GT_REC_GPU_KERNEL, T0 + 5 * US);		/* K1 right after L1's entry */
	assert_int_equal(o[i].tid, TID);
	assert_int_equal(o[i].launch_ts, T0);
	assert_int_equal(o[i++].flags, LINKED_FLAGS);
	expect_rec(&o[i++], GT_REC_RET, T0 + 4 * US);
	expect_rec(&o[i++], GT_REC_CALL, T0 + 10 * US);
	expect_rec(&o[i], GT_REC_GPU_MEMCPY, T0 + 12 * US);		/* M1 after C1's entry */
	assert_int_equal(o[i].launch_ts, T0 + 10 * US);
	assert_int_equal(o[i].tid, TID);
	assert_int_equal(o[i++].flags, LINKED_FLAGS);
	expect_rec(&o[i++], GT_REC_RET, T0 + 30 * US);
	expect_rec(&o[i++], GT_REC_LAUNCH, T0 + 40 * US);
	expect_rec(&o[i], GT_REC_GPU_KERNEL, T0 + 46 * US);		/* K2a, K2b by GPU time */
	assert_int_equal(o[i++].launch_ts, T0 + 40 * US);
	expect_rec(&o[i], GT_REC_GPU_KERNEL, T0 + 48 * US);
	assert_int_equal(o[i++].launch_ts, T0 + 40 * US);
	expect_rec(&o[i++], GT_REC_RET, T0 + 44 * US);
	expect_rec(&o[i++], GT_REC_LAUNCH, T0 + 50 * US);		/* L3: nothing after it */
	expect_rec(&o[i++], GT_REC_RET, T0 + 54 * US);
	/* then by time: NVTX, the APIs, the unlinked kernels */
	expect_rec(&o[i++], GT_REC_NVTX, T0 - 50 * US);
	expect_rec(&o[i++], GT_REC_GPU_API, T0 + 500);
	expect_rec(&o[i++], GT_REC_GPU_API, T0 + 11 * US);
	expect_rec(&o[i++], GT_REC_GPU_API, T0 + 33 * US);
	expect_rec(&o[i], GT_REC_GPU_KERNEL, T0 + 34 * US);		/* API but no call */
	assert_int_equal(o[i].tid, 0);
	assert_int_equal(o[i].launch_ts, 0);
	assert_int_equal(o[i++].flags, GT_GPU_API_MATCHED);
	expect_rec(&o[i++], GT_REC_GPU_API, T0 + 40 * US + 500);
	expect_rec(&o[i++], GT_REC_GPU_API, T0 + 50 * US + 500);
	expect_rec(&o[i], GT_REC_GPU_KERNEL, T0 + 60 * US);		/* no API: flags 0 */
	assert_int_equal(o[i].tid, 0);
	assert_int_equal(o[i].launch_ts, 0);
	assert_int_equal(o[i++].flags, 0);
	assert_int_equal(o[i].type, GT_REC_MERGE_STATS);
	assert_int_equal(o[i++].launch_ts, MS_PACK(6, 4, 2, 1, 0, 1));
	expect_rec(&o[i++], GT_REC_CUPTI_STATS, T0 + 100 * US);
	assert_int_equal(i, n);

	/* the trailer keeps the trace's counters; the header says merged */
	assert_int_equal(t.end_ts, T0 + 10 * MS);
	assert_int_equal(t.counters.events, 77);
	assert_int_equal(t.counters.drop_ringbuf, 3);
	assert_int_equal(t.records, n);
	assert_string_equal(options, "mode=command trace=cuda launch_exit=1 cupti=merged");
	assert_int_equal(stat(out, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
}

/* A process killed while writing: its last record is cut; the rest merges. */
static void t_file_cut_spool(void **state)
{
	const char *main_path = tmp_path("run.gtrace"), *sp = tmp_path("gtrace-cupti.4242.spool");
	const char *out = tmp_path("cut.gtrace");
	const char *spools[] = { sp };
	struct merge_opts mo = { .trace = main_path, .spools = spools, .nspools = 1, .output = out };
	struct merge_result res;
	struct spool_buf s;
	struct outrec o[64];
	struct gt_trailer t;
	char options[512];
	int n;

	(void)state;
	write_main(main_path);
	sp_init(&s);
	sp_api(&s, 1, T0 + 500, 3 * US);
	sp_kernel(&s, 1, T0 + 5 * US, "_Z2k1v");
	sp_api(&s, 3, T0 + 40 * US + 500, 3 * US);
	sp_kernel(&s, 3, T0 + 46 * US, "_Z2k2v");
	sp_write(&s, sp, s.n - 20);	/* K2 cut 20 bytes short */
	assert_int_equal(merge__run(&mo, &res), 0);
	assert_int_equal(res.spool_cut, 1);
	assert_int_equal(res.spool_records, 3);
	expect_stats(&res.link, 1, 1, 0, 2, 0, 0, 0);
	n = read_out(out, o, 64, &t, options, sizeof(options));
	assert_int_equal(n, 9 + 1 + 2 + 1);
	expect_rec(&o[2], GT_REC_GPU_KERNEL, T0 + 5 * US);
	/* only the magic made it: no records, counted as cut */
	sp_write(&s, sp, 5);
	mo.force = true;
	assert_int_equal(merge__run(&mo, &res), 0);
	assert_int_equal(res.spool_cut, 1);
	assert_int_equal(res.spool_records, 0);
	assert_int_equal(res.link.gpu_records, 0);
}

static bool only(const char *dir, const char *a, const char *b)
{
	char cmd[256];

	/* everything in dir is a or b: no temporary file was left behind */
	snprintf(cmd, sizeof(cmd), "test \"$(ls -A %s | grep -v -x -e '%s' -e '%s' | wc -l)\" = 0",
		 dir, a, b);
	return system(cmd) == 0;
}

static void t_file_refused(void **state)
{
	const char *main_path = tmp_path("run.gtrace"), *sp = tmp_path("gtrace-cupti.4242.spool");
	const char *out = tmp_path("out.gtrace");
	const char *spools[] = { sp };
	struct merge_opts mo = { .trace = main_path, .spools = spools, .nspools = 1, .output = out };
	struct spool_buf s;
	struct stat st;
	FILE *f;

	(void)state;
	write_main(main_path);
	fill_spool(&s);
	/* a bad magic: refused, nothing written */
	memcpy(s.b, "GTCUPTI9", 8);
	sp_write(&s, sp, s.n);
	assert_int_equal(merge__run(&mo, NULL), -EBADMSG);
	assert_int_not_equal(stat(out, &st), 0);
	assert_true(only(tmpdir, "run.gtrace", "gtrace-cupti.4242.spool"));
	/* a missing spool, a missing trace */
	spools[0] = tmp_path("nope.spool");
	assert_int_equal(merge__run(&mo, NULL), -ENOENT);
	spools[0] = sp;
	mo.trace = tmp_path("nope.gtrace");
	assert_int_equal(merge__run(&mo, NULL), -ENOENT);
	mo.trace = main_path;
	/* the output exists: refused without force, its bytes untouched */
	fill_spool(&s);
	sp_write(&s, sp, s.n);
	f = fopen(out, "w");
	assert_non_null(f);
	fputs("keep", f);
	fclose(f);
	assert_int_equal(merge__run(&mo, NULL), -EEXIST);
	assert_int_equal(stat(out, &st), 0);
	assert_int_equal(st.st_size, 4);
	mo.force = true;
	assert_int_equal(merge__run(&mo, NULL), 0);
	assert_int_equal(stat(out, &st), 0);
	assert_true(st.st_size > 4);
	/* a merged trace is not merged again */
	mo.trace = out;
	mo.output = tmp_path("again.gtrace");
	assert_int_equal(merge__run(&mo, NULL), -EINVAL);
	assert_int_not_equal(stat(mo.output, &st), 0);
}

/* The output may be the input (the recorder merges in place). */
static void t_file_in_place(void **state)
{
	const char *main_path = tmp_path("run.gtrace"), *sp = tmp_path("gtrace-cupti.4242.spool");
	const char *spools[] = { tmpdir };	/* a directory: its *.spool */
	struct merge_opts mo = { .trace = main_path, .spools = spools, .nspools = 1,
				 .output = main_path, .force = true };
	struct merge_result res;
	struct spool_buf s;
	struct outrec o[64];
	struct gt_trailer t;
	char options[512];
	FILE *f;

	(void)state;
	write_main(main_path);
	fill_spool(&s);
	sp_write(&s, sp, s.n);
	f = fopen(tmp_path("notes.txt"), "w");	/* not a spool: ignored */
	assert_non_null(f);
	fclose(f);
	assert_int_equal(merge__run(&mo, &res), 0);
	assert_int_equal(res.spool_files, 1);
	expect_stats(&res.link, 6, 4, 2, 1, 0, 1, 1);
	assert_int_equal(read_out(main_path, o, 64, &t, options, sizeof(options)), 23);
	/* no temporary file left beside it */
	unlink(tmp_path("notes.txt"));
	assert_true(only(tmpdir, "run.gtrace", "gtrace-cupti.4242.spool"));
}

/* A spool directory with no spool in it (the agent never loaded): the trace
 * is copied through, with nothing linked. */
static void t_file_empty_spool_dir(void **state)
{
	const char *main_path = tmp_path("run.gtrace"), *dir = tmp_path("spools");
	const char *spools[] = { dir };
	struct merge_opts mo = { .trace = main_path, .spools = spools, .nspools = 1,
				 .output = tmp_path("out.gtrace") };
	struct merge_result res;
	struct outrec o[64];
	struct gt_trailer t;
	char options[512];

	(void)state;
	write_main(main_path);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(merge__run(&mo, &res), 0);
	assert_int_equal(res.spool_files, 0);
	assert_int_equal(res.main_records, 9);
	assert_int_equal(read_out(mo.output, o, 64, &t, options, sizeof(options)), 9 + 1);
	rmdir(dir);
}

static bool pid_is_4242(void *ctx, uint32_t pid)
{
	(void)ctx;
	return pid == PID;
}

/* --all: only the recorded processes' records are merged. */
static void t_file_want_pid(void **state)
{
	const char *main_path = tmp_path("run.gtrace"), *sp = tmp_path("gtrace-cupti.4242.spool");
	const char *sp2 = tmp_path("gtrace-cupti.99.spool");
	const char *spools[] = { sp, sp2 };
	struct merge_opts mo = { .trace = main_path, .spools = spools, .nspools = 2,
				 .output = tmp_path("w.gtrace"), .want_pid = pid_is_4242 };
	struct merge_result res;
	struct spool_buf s;

	(void)state;
	write_main(main_path);
	fill_spool(&s);
	sp_write(&s, sp, s.n);
	/* the same records under pid 99 */
	for (size_t off = GT_CUPTI_MAGIC_LEN; off < s.n;) {
		struct gt_hdr *h = (void *)(s.b + off);

		h->pid = 99;
		off += h->size;
	}
	sp_write(&s, sp2, s.n);
	assert_int_equal(merge__run(&mo, &res), 0);
	assert_int_equal(res.spool_other_pids, 13);
	expect_stats(&res.link, 6, 4, 2, 1, 0, 1, 1);
	/* without the filter, pid 99's records do not link to pid 4242's calls */
	mo.want_pid = NULL;
	mo.force = true;
	assert_int_equal(merge__run(&mo, &res), 0);
	expect_stats(&res.link, 12, 4, 8, 1, 0, 2, 1);
	assert_int_equal(res.link.processes, 2);
}

/* A trace cut inside its last chunk: what was readable is merged. */
static void t_file_damaged_trace(void **state)
{
	const char *main_path = tmp_path("run.gtrace"), *sp = tmp_path("gtrace-cupti.4242.spool");
	const char *spools[] = { sp };
	struct merge_opts mo = { .trace = main_path, .spools = spools, .nspools = 1,
				 .output = tmp_path("d.gtrace") };
	struct trace_writer_opts wo = { .chunk_bytes = 200 };
	struct gt_file_info info = {
		.version = GT_FILE_VERSION, .clock_id = 1, .start_ts = T0, .host = "h",
		.kernel = "k", .cmdline = "c", .options = "mode=all",
	};
	struct merge_result res;
	struct trace_writer *w;
	struct spool_buf s;
	uint64_t first;

	(void)state;
	/* L1 and its exit in the first chunk, L2 and its exit in the second */
	assert_int_equal(trace_writer__create(main_path, &info, &wo, &w), 0);
	trace_add(w, launch_rec(T0, TID));
	trace_add(w, ret_rec(T0 + 4 * US, TID, GT_API_cuLaunchKernel, 0));
	assert_int_equal(trace_writer__flush(w), 0);
	first = trace_writer__bytes(w);
	trace_add(w, launch_rec(T0 + 40 * US, TID));
	trace_add(w, ret_rec(T0 + 44 * US, TID, GT_API_cuLaunchKernel, 0));
	trace_end(w);
	/* cut inside the second chunk's header */
	assert_int_equal(truncate(main_path, first + 20), 0);
	fill_spool(&s);
	sp_write(&s, sp, s.n);
	assert_int_equal(merge__run(&mo, &res), 0);
	assert_true(res.trace_damaged);
	assert_int_equal(res.main_records, 2);
	/* K1 linked; the calls of K2a/K2b, M1 and k5 come after the last record
	 * the cut trace holds of the process: left out with their API records,
	 * counted; k9 (no API record, after it too) cannot say so: unmatched */
	expect_stats(&res.link, 2, 1, 1, 0, 0, 1, 0);
	assert_int_equal(res.outside_recording, 4 + 4);
}

/* A trace that holds the agent's records itself (a daemon's snapshot,
 * cupti=inline), here one after each of its own and the rest at the end,
 * with a flush mark among them: merged without a spool file it is what the
 * same records merged from a spool make, and the mark is in neither. */
static void t_file_inline(void **state)
{
	const char *main_path = tmp_path("run.gtrace"), *sp = tmp_path("gtrace-cupti.4242.spool");
	const char *snap = tmp_path("snap.gtrace"), *a = tmp_path("a.gtrace"), *b = tmp_path("b.gtrace");
	const char *spools[] = { sp };
	struct merge_opts mo = { .trace = main_path, .spools = spools, .nspools = 1, .output = a };
	struct merge_result res;
	struct spool_buf s;
	struct outrec oa[64], ob[64];
	struct gt_trailer t;
	struct trace_reader *r;
	struct trace_writer *w;
	const struct gt_hdr *h;
	const char *msg;
	char options[512];
	size_t off = GT_CUPTI_MAGIC_LEN;
	int na, nb, rc, nmain = 0;

	(void)state;
	write_main(main_path);
	fill_spool(&s);
	sp_write(&s, sp, s.n);
	assert_int_equal(merge__run(&mo, NULL), 0);
	na = read_out(a, oa, 64, &t, options, sizeof(options));

	w = trace_begin(snap, "mode=all trace=cuda cupti=inline snapshot=1");
	assert_int_equal(trace_reader__open(main_path, &r, &msg), 0);
	while ((rc = trace_reader__next(r, &h)) > 0) {
		trace_add(w, h);
		if (off < s.n) {
			trace_add(w, (const struct gt_hdr *)(s.b + off));
			off += ((const struct gt_hdr *)(s.b + off))->size;
		}
		if (++nmain == 3) {
			struct gt_cupti_mark *m = (void *)mk(GT_REC_CUPTI_MARK, sizeof(*m), T0 + 7 * US,
							     PID, 0, 0);

			trace_add(w, &m->hdr);
		}
	}
	assert_int_equal(rc, 0);
	trace_reader__close(r);
	for (; off < s.n; off += ((const struct gt_hdr *)(s.b + off))->size)
		trace_add(w, (const struct gt_hdr *)(s.b + off));
	trace_end(w);

	mo = (struct merge_opts){ .trace = snap, .output = b };
	assert_int_equal(merge__run(&mo, &res), 0);
	assert_int_equal(res.main_records, 9);
	assert_int_equal(res.spool_files, 0);
	assert_int_equal(res.inline_records, 14);
	assert_int_equal(res.spool_records, 13);
	expect_stats(&res.link, 6, 4, 2, 1, 0, 1, 1);
	nb = read_out(b, ob, 64, &t, options, sizeof(options));
	assert_int_equal(nb, na);
	for (int i = 0; i < na; i++) {
		assert_int_equal(ob[i].type, oa[i].type);
		if (oa[i].type != GT_REC_MERGE_STATS)	/* ts: when merged */
			assert_int_equal(ob[i].ts, oa[i].ts);
		assert_int_equal(ob[i].tid, oa[i].tid);
		assert_int_equal(ob[i].launch_ts, oa[i].launch_ts);
		assert_int_equal(ob[i].flags, oa[i].flags);
		assert_int_equal(ob[i].corr, oa[i].corr);
		assert_int_not_equal(ob[i].type, GT_REC_CUPTI_MARK);
	}
	assert_string_equal(options, "mode=all trace=cuda snapshot=1 cupti=merged");

	/* a trace without records of its own and no spool: refused */
	mo = (struct merge_opts){ .trace = main_path, .output = tmp_path("none.gtrace") };
	assert_int_equal(merge__run(&mo, NULL), -ENODATA);
	assert_int_equal(access(tmp_path("none.gtrace"), F_OK), -1);
}

/*
 * A program that ran on from before the recording and past its end: the GPU
 * work of its calls before the first record the trace holds of it and after
 * the last is left out with its API records, counted, and taken for nobody's
 * -- not even for the work of the last launch, recorded at entry only, whose
 * window (MERGE_NO_EXIT_WINDOW_NS) the call after it falls into.
 */
static void t_file_outside(void **state)
{
	const char *main_path = tmp_path("run.gtrace"), *sp = tmp_path("gtrace-cupti.4242.spool");
	const char *spools[] = { sp };
	struct merge_opts mo = { .trace = main_path, .spools = spools, .nspools = 1,
				 .output = tmp_path("o.gtrace") };
	struct trace_writer *w = trace_begin(main_path, "mode=all trace=cuda cupti=1 launch_exit=0");
	struct merge_result res;
	struct spool_buf s;
	struct gt_launch *l;

	(void)state;
	l = (void *)launch_rec(T0, TID);
	l->flags |= GT_LAUNCH_NO_EXIT;
	trace_add(w, &l->hdr);
	l = (void *)launch_rec(T0 + 2 * MS, TID);
	l->flags |= GT_LAUNCH_NO_EXIT;
	trace_add(w, &l->hdr);
	/* the calls were taken until just after L2 */
	assert_int_equal(trace_writer__finish(w, &(struct gt_trailer){ .end_ts = T0 + 2 * MS + US }), 0);
	trace_writer__free(w);
	sp_init(&s);
	sp_api(&s, 1, T0 - 3 * MS, 3 * US);		/* before the recording */
	sp_kernel(&s, 1, T0 - 3 * MS + 5 * US, "_Z1av");
	sp_api(&s, 2, T0 + 500, 3 * US);		/* L1 */
	sp_kernel(&s, 2, T0 + 5 * US, "_Z1bv");
	sp_api(&s, 3, T0 + 2 * MS + 500, 3 * US);	/* L2 */
	sp_kernel(&s, 3, T0 + 2 * MS + 5 * US, "_Z1cv");
	sp_api(&s, 4, T0 + 2 * MS + 400 * US, 3 * US);	/* after: in L2's window */
	sp_kernel(&s, 4, T0 + 2 * MS + 405 * US, "_Z1dv");
	sp_write(&s, sp, s.n);
	assert_int_equal(merge__run(&mo, &res), 0);
	expect_stats(&res.link, 2, 2, 0, 0, 0, 0, 0);
	assert_int_equal(res.outside_recording, 4);
}

static void t_default_output(void **state)
{
	char *s;

	(void)state;
	s = merge__default_output("run.gtrace");
	assert_string_equal(s, "run_merged.gtrace");
	free(s);
	s = merge__default_output("/a/b.c/run");
	assert_string_equal(s, "/a/b.c/run_merged.gtrace");
	free(s);
	s = merge__default_output("dir/.gtrace");
	assert_string_equal(s, "dir/.gtrace_merged.gtrace");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(t_file_placement, file_setup, file_teardown),
		cmocka_unit_test_setup_teardown(t_file_cut_spool, file_setup, file_teardown),
		cmocka_unit_test_setup_teardown(t_file_refused, file_setup, file_teardown),
		cmocka_unit_test_setup_teardown(t_file_in_place, file_setup, file_teardown),
		cmocka_unit_test_setup_teardown(t_file_empty_spool_dir, file_setup, file_teardown),
		cmocka_unit_test_setup_teardown(t_file_want_pid, file_setup, file_teardown),
		cmocka_unit_test_setup_teardown(t_file_damaged_trace, file_setup, file_teardown),
		cmocka_unit_test_setup_teardown(t_file_inline, file_setup, file_teardown),
		cmocka_unit_test_setup_teardown(t_file_outside, file_setup, file_teardown),
		cmocka_unit_test(t_default_output),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
