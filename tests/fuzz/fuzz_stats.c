// SPDX-License-Identifier: MIT
/* libFuzzer harness: every stats report, as a table, CSV and JSON, over one
 * input (fuzz_common.h says how it becomes a file), and limited to its
 * first capture range or window. */
#include "fuzz_common.h"
#include "stats/stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum stats_format formats[] = { STATS_TABLE, STATS_CSV, STATS_JSON };
	const char *path;

	fuzz_init();
	path = fuzz_path("in.gtrace");
	if (!fuzz_make_trace(path, data, size))
		return 0;
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		stats__run(&(struct stats_opts){ .path = path, .format = formats[i],
						 .timeunit = i ? "us" : "ns",
						 .out = fuzz_null, .err = fuzz_null });
	stats__run(&(struct stats_opts){ .path = path, .format = STATS_JSON, .range = "1",
					 .out = fuzz_null, .err = fuzz_null });
	return 0;
}
