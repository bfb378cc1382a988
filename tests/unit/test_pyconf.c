// SPDX-License-Identifier: MIT
/*
 * record/stacks/pyconf.c: the line of a Python frame from its code object's
 * line table, against what each CPython says itself (co_lines) for the code
 * objects of tests/fixtures/pylines/gen.py, as 3.10, 3.11, 3.12 and 3.13
 * compiled them (pylines_3X.txt); a table cut short gives the lines before
 * the cut and no line after it; garbage gives no line and no fault.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "record/stacks/pyconf.h"

#define DIR "tests/fixtures/pylines/"

struct code {
	uint32_t version, first, len;
	uint8_t table[16384];
};

static int hexval(char c)
{
	return c >= 'a' ? c - 'a' + 10 : c - '0';
}

/* Checks every range of every code of one file; the ranges checked. */
static unsigned check_file(const char *name, uint32_t want_version)
{
	char path[256], line[40000];
	struct code *c = calloc(1, sizeof(*c));
	unsigned ranges = 0, codes = 0;
	FILE *f;

	snprintf(path, sizeof(path), DIR "%s", name);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(c);
	while (fgets(line, sizeof(line), f)) {
		unsigned start, end, want;
		char hex[sizeof(line)];

		if (sscanf(line, "code %x %u %39999s", &c->version, &c->first, hex) == 3) {
			size_t n = strlen(hex) / 2;

			assert_int_equal(c->version, want_version);
			assert_true(n <= sizeof(c->table));
			for (size_t i = 0; i < n; i++)
				c->table[i] = (uint8_t)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
			c->len = (uint32_t)n;
			codes++;
			continue;
		}
		assert_int_equal(sscanf(line, "%u %u %u", &start, &end, &want), 3);
		assert_true(start < end);
		assert_int_equal(pyconf__line(c->version, c->table, c->len, c->first, start), want);
		assert_int_equal(pyconf__line(c->version, c->table, c->len, c->first, end - 1), want);
		ranges++;
	}
	fclose(f);
	free(c);
	assert_true(codes >= 5);
	return ranges;
}

static void test_lines_310(void **state)
{
	(void)state;
	assert_true(check_file("pylines_310.txt", 0x30a) > 200);
}

static void test_lines_311(void **state)
{
	(void)state;
	assert_true(check_file("pylines_311.txt", 0x30b) > 200);
}

static void test_lines_312(void **state)
{
	(void)state;
	assert_true(check_file("pylines_312.txt", 0x30c) > 200);
}

static void test_lines_313(void **state)
{
	(void)state;
	assert_true(check_file("pylines_313.txt", 0x30d) > 200);
}

/* 3.12's long function cut to its first 64 bytes: the early instructions
 * keep their lines, the late ones have none (never a wrong one). */
static void test_cut_table(void **state)
{
	char line[40000], hex[40000];
	uint8_t table[16384];
	uint32_t version, first, n = 0, early = 0, late = 0;
	FILE *f = fopen(DIR "pylines_312.txt", "r");
	bool in_long = false;

	(void)state;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned start, end, want, got;

		if (sscanf(line, "code %x %u %39999s", &version, &first, hex) == 3) {
			n = (uint32_t)strlen(hex) / 2;
			in_long = n > 1000;
			for (uint32_t i = 0; i < n && i < sizeof(table); i++)
				table[i] = (uint8_t)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
			continue;
		}
		if (!in_long || sscanf(line, "%u %u %u", &start, &end, &want) != 3)
			continue;
		got = pyconf__line(version, table, 64, first, start);
		if (got) {
			assert_int_equal(got, want);
			early++;
		} else {
			late++;
		}
	}
	fclose(f);
	assert_true(early >= 5);
	assert_true(late > 100);
}

static void test_garbage(void **state)
{
	uint8_t t[4096];
	uint32_t seed = 12345;

	(void)state;
	for (int round = 0; round < 200; round++) {
		for (size_t i = 0; i < sizeof(t); i++) {
			seed = seed * 1103515245u + 12345u;
			t[i] = (uint8_t)(seed >> 16);
		}
		for (uint32_t v = 0x30a; v <= 0x30e; v++)
			for (uint32_t instr = 0; instr < 3000; instr += 97)
				(void)pyconf__line(v, t, (uint32_t)(seed % sizeof(t)), 1, instr);
	}
	assert_int_equal(pyconf__line(0x309, t, sizeof(t), 1, 0), 0);
	assert_int_equal(pyconf__line(0x30c, t, 0, 1, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_310), cmocka_unit_test(test_lines_311),
		cmocka_unit_test(test_lines_312), cmocka_unit_test(test_lines_313),
		cmocka_unit_test(test_cut_table), cmocka_unit_test(test_garbage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
