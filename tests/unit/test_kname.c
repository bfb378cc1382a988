// SPDX-License-Identifier: MIT
/*
 * Unit tests of the decoder's interned kernel names (user/decode/kname.c):
 * one entry per distinct name, counted references, growth, lazy demangling.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "decode/kname.h"

static void test_interning(void **state)
{
	struct kname_table t = {0};
	struct kname *a, *b, *c;

	(void)state;
	/* the length given is what counts, not a NUL further on */
	a = kname_table__get(&t, "_Z6vecAddPfS_S_iXYZ", 16);
	b = kname_table__get(&t, "_Z6vecAddPfS_S_i", 16);
	c = kname_table__get(&t, "other", 5);
	assert_non_null(a);
	assert_ptr_equal(a, b);
	assert_ptr_not_equal(a, c);
	assert_string_equal(a->mangled, "_Z6vecAddPfS_S_i");
	assert_int_equal(a->refs, 2);
	assert_int_equal(t.n, 2);

	kname_table__put(&t, b);
	assert_int_equal(a->refs, 1);
	assert_int_equal(t.n, 2);
	kname_table__put(&t, a);	/* the last reference frees it */
	assert_int_equal(t.n, 1);
	a = kname_table__get(&t, "_Z6vecAddPfS_S_i", 16);
	assert_int_equal(a->refs, 1);
	assert_int_equal(t.n, 2);
	kname_table__put(&t, NULL);
	kname_table__free(&t);
	assert_int_equal(t.n, 0);
	assert_null(t.b);
}

static void test_growth(void **state)
{
	struct kname_table t = {0};
	struct kname *k[300];
	char s[32];

	(void)state;
	for (int i = 0; i < 300; i++) {
		int n = snprintf(s, sizeof(s), "kernel_%d", i);

		k[i] = kname_table__get(&t, s, (size_t)n);
		assert_non_null(k[i]);
	}
	assert_int_equal(t.n, 300);
	/* every name is still found after the table grew */
	for (int i = 0; i < 300; i++) {
		int n = snprintf(s, sizeof(s), "kernel_%d", i);

		assert_ptr_equal(kname_table__get(&t, s, (size_t)n), k[i]);
		assert_int_equal(k[i]->refs, 2);
	}
	kname_table__free(&t);
}

static void test_demangled(void **state)
{
	struct kname_table t = {0};
	struct kname *a, *b;

	(void)state;
	a = kname_table__get(&t, "_Z5scalePdd", 11);
	b = kname_table__get(&t, "i", 1);
	assert_null(a->demangled);	/* not until asked */
	assert_string_equal(kname__demangled(a), "scale(double*, double)");
	assert_ptr_equal(kname__demangled(a), kname__demangled(a));
	/* a plain name is its own demangled form, not "int" */
	assert_ptr_equal(kname__demangled(b), b->mangled);
	kname_table__put(&t, a);
	kname_table__put(&t, b);
	assert_int_equal(t.n, 0);
	kname_table__free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interning),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_demangled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
