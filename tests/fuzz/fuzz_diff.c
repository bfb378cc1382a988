// SPDX-License-Identifier: MIT
/* libFuzzer harness: diff of one input against itself, in the three
 * formats, with its iterations chosen and with --iter kernels and none
 * (fuzz_common.h says how an input becomes a file). */
#include "fuzz_common.h"
#include "diff/diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum diff_format formats[] = { DIFF_TABLE, DIFF_JSON, DIFF_MD };
	static const char *const iters[] = { NULL, "kernels", "none" };
	const char *path;

	fuzz_init();
	path = fuzz_path("in.gtrace");
	if (!fuzz_make_trace(path, data, size))
		return 0;
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		diff__run(&(struct diff_opts){ .a = path, .b = path, .iter = iters[i],
					       .format = formats[i], .out = fuzz_null, .err = fuzz_null });
	return 0;
}
