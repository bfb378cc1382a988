// SPDX-License-Identifier: MIT
/*
 * Terminal-safe text (user/lib/term_text.c): what a table shows for command
 * lines and names that carry escape sequences or bytes that are not UTF-8.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "lib/term_text.h"

static void expect(const char *in, const char *want)
{
	char *got = term_text__escape(in);

	assert_non_null(got);
	assert_string_equal(got, want);
	/* needs_escape says whether escape changes anything */
	assert_int_equal(term_text__needs_escape(in), strcmp(in, want) != 0);
	free(got);
}

static void test_plain_text_and_utf8_are_kept(void **state)
{
	(void)state;
	expect("", "");
	expect("python3 train.py --lr 0.1", "python3 train.py --lr 0.1");
	expect("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80");
	expect("\xc2\xa0nbsp", "\xc2\xa0nbsp");
}

static void test_controls_are_written_out(void **state)
{
	(void)state;
	/* a clear screen and a title change, as a hostile comm would carry */
	expect("x\x1b[2J\x1b]0;pwned\x07", "x\\x1b[2J\\x1b]0;pwned\\x07");
	expect("a\tb\nc\rd", "a\\tb\\nc\\rd");
	expect("del\x7f", "del\\x7f");
	expect("back\\slash", "back\\slash");
	/* C1: CSI as UTF-8 (U+009B) and as a bare byte */
	expect("\xc2\x9b" "2J", "\\xc2\\x9b2J");
	expect("\x9b" "2J", "\\x9b2J");
}

static void test_bytes_that_are_not_utf8_are_written_out(void **state)
{
	(void)state;
	expect("\xff\xfe", "\\xff\\xfe");
	expect("cut\xe2\x82", "cut\\xe2\\x82");		/* a sequence cut short */
	expect("\xc0\xaf", "\\xc0\\xaf");		/* overlong '/' */
	expect("\xed\xa0\x80", "\\xed\\xa0\\x80");	/* a surrogate */
	expect("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");	/* above U+10FFFF */
	expect("\xe2\x28\xa1", "\\xe2(\\xa1");
}

/* A cut of at most max bytes never splits a character. */
static void test_cut(void **state)
{
	(void)state;
	assert_int_equal(term_text__cut("abc", 3, 10), 3);
	assert_int_equal(term_text__cut("abcdef", 6, 4), 4);
	/* é is two bytes: at 4 of "caf\xc3\xa9", the cut falls before it */
	assert_int_equal(term_text__cut("caf\xc3\xa9", 5, 4), 3);
	assert_int_equal(term_text__cut("caf\xc3\xa9", 5, 5), 5);
	assert_int_equal(term_text__cut("x\xe2\x82\xacy", 5, 3), 1);
	assert_int_equal(term_text__cut("x\xe2\x82\xacy", 5, 4), 4);
	assert_int_equal(term_text__cut("\xf0\x9f\x9a\x80", 4, 3), 0);
	/* a byte that is not UTF-8 is one of its own */
	assert_int_equal(term_text__cut("a\xff\xfe" "b", 4, 2), 2);
	assert_int_equal(term_text__cut("a\xc3(", 3, 2), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_text_and_utf8_are_kept),
		cmocka_unit_test(test_controls_are_written_out),
		cmocka_unit_test(test_bytes_that_are_not_utf8_are_written_out),
		cmocka_unit_test(test_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
