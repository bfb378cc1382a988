// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: the trace reader, the decoder and dump (JSON lines and
 * --summary) over one input (fuzz_common.h says how it becomes a file).
 */
#include "fuzz_common.h"
#include "decode/decode.h"
#include "export/dump.h"

static int on_call(void *ctx, const struct gt_callrec *c)
{
	(void)ctx;
	(void)c;
	return 0;
}

static int on_other(void *ctx, const struct gt_hdr *rec)
{
	(void)ctx;
	(void)rec;
	return 0;
}

/* Every record through the reader and the decoder, with the names the
 * exporters ask the decoder for. */
static void read_decode(const char *path)
{
	struct trace_reader *r;
	struct gt_decoder *d;
	const struct gt_hdr *rec;
	const char *why;

	if (trace_reader__open(path, &r, &why))
		return;
	d = gt_decoder__new(on_call, on_other, NULL);
	while (d && trace_reader__next(r, &rec) > 0) {
		const char *mangled;

		if (gt_decoder__feed(d, rec))
			break;
		gt_decoder__process_name(d, rec->pid);
		gt_decoder__thread_name(d, rec->tid);
		gt_decoder__process_cgroup(d, rec->pid);
		if (rec->type == GT_REC_GPU_KERNEL && rec->size >= sizeof(struct gt_gpu_kernel))
			gt_decoder__gpu_kernel_name(d, (const struct gt_gpu_kernel *)rec, &mangled);
	}
	if (d) {
		gt_decoder__finish(d);
		gt_decoder__free(d);
	}
	trace_reader__truncated(r);
	trace_reader__damage(r);
	trace_reader__trailer(r);
	trace_reader__counters(r);
	trace_reader__close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path;

	fuzz_init();
	path = fuzz_path("in.gtrace");
	if (!fuzz_make_trace(path, data, size))
		return 0;
	read_decode(path);
	dump__run(&(struct dump_opts){ .path = path, .out = fuzz_null, .err = fuzz_null });
	dump__run(&(struct dump_opts){ .path = path, .summary = true, .out = fuzz_null, .err = fuzz_null });
	return 0;
}
