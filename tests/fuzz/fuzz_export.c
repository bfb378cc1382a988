// SPDX-License-Identifier: MIT
/* libFuzzer harness: the Perfetto, JSON and CSV exports over one input
 * (fuzz_common.h says how it becomes a file), written to /dev/null. */
#include "fuzz_common.h"
#include "export/export.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int (*const writers[])(struct trace_reader *, FILE *, const char **) = {
		export_perfetto__write, export_json__write, export_csv__write,
	};
	const char *path, *why;

	fuzz_init();
	path = fuzz_path("in.gtrace");
	if (!fuzz_make_trace(path, data, size))
		return 0;
	for (size_t i = 0; i < sizeof(writers) / sizeof(writers[0]); i++) {
		struct trace_reader *r;

		if (trace_reader__open(path, &r, &why))
			return 0;
		writers[i](r, fuzz_null, &why);
		trace_reader__close(r);
	}
	return 0;
}
