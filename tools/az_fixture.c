// SPDX-License-Identifier: MIT
/*
 * az_fixture: writes a planted pattern of tests/fixtures/az_scenarios.h as a
 * trace file, for the integration test of `gtrace-bpf analyze`
 * (tests/integration/test_analyze.sh).
 *
 *   az_fixture [--no-gpu] [--launch-exit] [--unlink N] [--gpu-metrics HZ] SCENARIO OUT
 *
 * The trace is what a recording with --trace cuda,sched and --cupti would
 * hold once merged (options "trace=cuda,sched cupti=merged"; --no-gpu: no
 * GPU records and no cupti option), its header starting 1 us before the
 * process' first record.  --unlink N makes every N-th GPU record unlinked,
 * as the merger writes those: after every other record, with the others of
 * the tail (here, each unlinked record's GPU API record), by time, then the
 * merger's stats.  --gpu-metrics HZ: the header says the GPU metrics were
 * sampled at HZ, from two GPUs, the first with GPM (the gpum_ scenarios'
 * records).  SCENARIO no_calls is a process that made no CUDA call.
 * Prints "OUT: N records".
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "format/trace_file.h"
#include "lib/vec.h"
#include "tests/fixtures/az_scenarios.h"

struct sink {
	struct trace_writer *w;
	unsigned unlink;		/* every this many GPU records unlinked, 0 none */
	unsigned ngpu;
	struct gt_hdr **tail;		/* unlinked records, written last by time */
	size_t ntail, cap;
	unsigned long long records;
	int err;
};

static int put_rec(struct sink *k, const struct gt_hdr *rec)
{
	int rc = trace_writer__append(k->w, rec);

	if (rc && !k->err)
		k->err = rc;
	k->records++;
	return rc;
}

static int keep_tail(struct sink *k, const struct gt_hdr *rec)
{
	struct gt_hdr *copy;

	if (vec__reserve(&k->tail, &k->cap, k->ntail, 1, 64))
		return -ENOMEM;
	copy = malloc(rec->size);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, rec, rec->size);
	k->tail[k->ntail++] = copy;
	return 0;
}

static void put(void *ctx, const struct gt_hdr *rec)
{
	struct sink *k = ctx;
	bool gpu = rec->type == GT_REC_GPU_KERNEL || rec->type == GT_REC_GPU_MEMCPY ||
		   rec->type == GT_REC_GPU_MEMSET;

	if (gpu && k->unlink && ++k->ngpu % k->unlink == 0) {
		_Alignas(8) unsigned char buf[512];
		struct gt_hdr *h = (void *)buf;
		struct gt_gpu_api api;

		memcpy(buf, rec, rec->size);
		/* what the merger leaves of a record it did not link */
		h->tid = 0;
		if (rec->type == GT_REC_GPU_KERNEL) {
			((struct gt_gpu_kernel *)h)->launch_ts = 0;
			((struct gt_gpu_kernel *)h)->flags = 0;
		} else {
			((struct gt_gpu_copy *)h)->launch_ts = 0;
			((struct gt_gpu_copy *)h)->flags = 0;
		}
		memset(&api, 0, sizeof(api));
		api.hdr = (struct gt_hdr){ .ts = rec->ts > 2000 ? rec->ts - 2000 : rec->ts,
					   .pid = rec->pid, .tid = rec->tid,
					   .type = GT_REC_GPU_API, .size = sizeof(api) };
		api.dur = 1000;
		if ((keep_tail(k, h) || keep_tail(k, &api.hdr)) && !k->err)
			k->err = -ENOMEM;
		return;
	}
	put_rec(k, rec);
}

static int cmp_ts(const void *a, const void *b)
{
	const struct gt_hdr *x = *(struct gt_hdr *const *)a, *y = *(struct gt_hdr *const *)b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "no-gpu", no_argument, NULL, 'n' },
		{ "launch-exit", no_argument, NULL, 'x' },
		{ "unlink", required_argument, NULL, 'u' },
		{ "gpu-metrics", required_argument, NULL, 'g' },
		{ NULL, 0, NULL, 0 },
	};
	char options[256];
	unsigned long hz = 0;
	struct sink k = { 0 };
	bool gpu = true, launch_exit = false;
	struct gt_merge_stats ms;
	struct gt_trailer t;
	struct azs s;
	int c, rc;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': gpu = false; break;
		case 'x': launch_exit = true; break;
		case 'u': k.unlink = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'g': hz = strtoul(optarg, NULL, 10); break;
		default: return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: az_fixture [--no-gpu] [--launch-exit] [--unlink N] [--gpu-metrics HZ] "
			"SCENARIO OUT\n");
		return 2;
	}
	struct gt_file_info info = {
		.version = GT_FILE_VERSION, .clock_id = 1, .start_ts = AZS_T0 - 1000,
		.host = "fixture", .kernel = "6.18", .cmdline = "az_fixture",
		.options = gpu ? "trace=cuda,sched launch_exit=0 cupti=merged" :
				 "trace=cuda,sched launch_exit=0",
	};

	if (launch_exit)
		info.options = gpu ? "trace=cuda,sched launch_exit=1 cupti=merged" :
				     "trace=cuda,sched launch_exit=1";
	if (hz) {
		/* the masks of a GPU with GPM and one without, as the recorder probes them */
		snprintf(options, sizeof(options), "%s gpu_metrics=%lu gpu_metrics_devs=2 "
			 "gpu_metrics_dev0=0xffff03ff gpu_metrics_dev1=0x3ff", info.options, hz);
		info.options = options;
	}
	rc = trace_writer__create(argv[optind + 1], &info, &(struct trace_writer_opts){ .force = true },
				  &k.w);
	if (rc) {
		fprintf(stderr, "az_fixture: cannot create %s: %s\n", argv[optind + 1], strerror(-rc));
		return 1;
	}
	azs_init(&s, put, &k, gpu, launch_exit);
	/* no_calls: a process that made no CUDA call */
	if (!strcmp(argv[optind], "no_calls")) {
		s.t += 1000;
		azs_end(&s);
	} else if (!azs_run(&s, argv[optind])) {
		fprintf(stderr, "az_fixture: unknown scenario '%s'\n", argv[optind]);
		trace_writer__free(k.w);
		remove(argv[optind + 1]);
		return 2;
	}
	if (k.ntail)
		qsort(k.tail, k.ntail, sizeof(*k.tail), cmp_ts);
	for (size_t i = 0; i < k.ntail; i++) {
		put_rec(&k, k.tail[i]);
		free(k.tail[i]);
	}
	free(k.tail);
	if (gpu) {
		memset(&ms, 0, sizeof(ms));
		ms.hdr = (struct gt_hdr){ .ts = s.t + 1000, .type = GT_REC_MERGE_STATS, .size = sizeof(ms) };
		put_rec(&k, &ms.hdr);
	}
	memset(&t, 0, sizeof(t));
	t.end_ts = s.t;
	rc = k.err ? k.err : trace_writer__finish(k.w, &t);
	trace_writer__free(k.w);
	if (rc) {
		fprintf(stderr, "az_fixture: cannot write %s: %s\n", argv[optind + 1], strerror(-rc));
		return 1;
	}
	printf("%s: %llu records\n", argv[optind + 1], k.records);
	return 0;
}
