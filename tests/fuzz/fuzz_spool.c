// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: merge's spool reader.  The input is a CUPTI agent's
 * spool file (GT_CUPTI_MAGIC, then records); it is merged into a fixed
 * trace (FUZZ_MAIN_TRACE, written by make from tools/gen_trace.c) and the
 * merged trace is exported as JSON, which reads the linked GPU records.
 */
#include "fuzz_common.h"
#include "export/export.h"
#include "merge/merge.h"

#ifndef FUZZ_MAIN_TRACE
#error "FUZZ_MAIN_TRACE: the trace the spools are merged into"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *spool, *out, *why;
	const char *spools[1];
	struct merge_opts mo = { .trace = FUZZ_MAIN_TRACE, .spools = spools, .nspools = 1,
				 .force = true };
	struct trace_reader *r;

	fuzz_init();
	spool = fuzz_path("gtrace-cupti.4000.spool");
	out = fuzz_path("merged.gtrace");
	if (!fuzz_write_file(spool, data, size))
		abort();
	spools[0] = spool;
	mo.output = out;
	if (merge__run(&mo, NULL) == 0 && !trace_reader__open(out, &r, &why)) {
		export_json__write(r, fuzz_null, &why);
		trace_reader__close(r);
	}
	unlink(out);
	return 0;
}
