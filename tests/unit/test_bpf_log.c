// SPDX-License-Identifier: MIT
/* Which tier libbpf's messages are shown at: warnings with -v, the rest with -vv. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <bpf/libbpf.h>
#include "lib/log.h"
#include "record/probes/bpf_log.h"

static void test_libbpf_warnings_at_verbose(void **state)
{
	(void)state;
	assert_int_equal(bpf_log__tier(LIBBPF_WARN), GT_LOG_VERBOSE);
}

static void test_libbpf_info_and_debug_at_debug(void **state)
{
	(void)state;
	assert_int_equal(bpf_log__tier(LIBBPF_INFO), GT_LOG_DEBUG);
	assert_int_equal(bpf_log__tier(LIBBPF_DEBUG), GT_LOG_DEBUG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libbpf_warnings_at_verbose),
		cmocka_unit_test(test_libbpf_info_and_debug_at_debug),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
