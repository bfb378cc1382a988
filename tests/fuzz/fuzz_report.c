// SPDX-License-Identifier: MIT
/* libFuzzer harness: the report's page of one input (fuzz_common.h says how
 * it becomes a file): stats, the timeline with a budget of a few events (so
 * that the shortest are dropped and counted into bins), analyze, and the
 * page written; and with the input as its own baseline. */
#include "fuzz_common.h"
#include "report/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path, *out;

	fuzz_init();
	path = fuzz_path("in.gtrace");
	out = fuzz_path("out.html");
	if (!fuzz_make_trace(path, data, size))
		return 0;
	report__run(&(struct report_opts){ .path = path, .output = out, .force = true, .budget = 8,
					   .err = fuzz_null });
	report__run(&(struct report_opts){ .path = path, .output = out, .force = true,
					   .compare = path, .err = fuzz_null });
	return 0;
}
