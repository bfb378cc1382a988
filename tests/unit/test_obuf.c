// SPDX-License-Identifier: MIT
/*
 * The output buffer of the text outputs (user/lib/obuf.c): pieces of any
 * length (another command's document embedded whole), and what its string
 * writers make of the bytes traced programs pass.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "lib/obuf.h"

/* The bytes a run of fn over a fresh buffer on a memory stream wrote. */
struct out {
	char *s;
	size_t n;
};

static struct out run(void (*fn)(struct obuf *o, void *arg), void *arg)
{
	struct out r = { 0 };
	FILE *f = open_memstream(&r.s, &r.n);
	struct obuf o;

	assert_non_null(f);
	assert_int_equal(obuf__init(&o, f), 0);
	fn(&o, arg);
	assert_int_equal(obuf__flush(&o), 0);
	obuf__free(&o);
	assert_int_equal(fclose(f), 0);
	return r;
}

/* ------------------------------------------------------- pieces of any length */

struct doc {
	const char *s;		/* the document */
	size_t n;
	size_t before;		/* bytes of 'a' buffered before it */
};

static void put_doc(struct obuf *o, void *arg)
{
	const struct doc *d = arg;

	for (size_t i = 0; i < d->before; i++)
		OBUF_LIT(o, "a");
	obuf__mem(o, d->s, d->n);
	OBUF_LIT(o, "}");
}

static void test_mem_takes_any_length(void **state)
{
	/* sizes around the buffer, and a document of 10 MB as report
	 * embeds analyze's of a busy machine */
	static const size_t sizes[] = { 0, 1, OBUF_ROOM_MAX, OBUF_ROOM_MAX + 1, OBUF_CAP - 1,
					OBUF_CAP, OBUF_CAP + 1, 3 * OBUF_CAP + 17, 10u << 20 };
	static const size_t befores[] = { 0, 1, OBUF_CAP - 3 };

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char *s = malloc(sizes[i] + 1);

		assert_non_null(s);
		for (size_t k = 0; k < sizes[i]; k++)
			s[k] = (char)('0' + (k * 7 + i) % 61);
		for (size_t b = 0; b < sizeof(befores) / sizeof(befores[0]); b++) {
			struct doc d = { s, sizes[i], befores[b] };
			struct out r = run(put_doc, &d);

			assert_int_equal(r.n, d.before + d.n + 1);
			for (size_t k = 0; k < d.before; k++)
				assert_int_equal(r.s[k], 'a');
			assert_memory_equal(r.s + d.before, s, d.n);
			assert_int_equal(r.s[r.n - 1], '}');
			free(r.s);
		}
		free(s);
	}
}

static void put_long_json(struct obuf *o, void *arg)
{
	const struct doc *d = arg;

	obuf__json_strn(o, d->s, d->n);
	obuf__csv_strn(o, d->s, d->n);
}

static void test_strings_of_any_length(void **state)
{
	/* a name of 1 MB of quotes: the escaped form is twice as long as the
	 * buffer; of bytes that are not UTF-8, six times */
	size_t n = 1u << 20;
	char *s = malloc(n);
	struct out r;

	(void)state;
	assert_non_null(s);
	memset(s, '"', n);
	r = run(put_long_json, &(struct doc){ s, n, 0 });
	/* "\"...\"" then a quoted cell "" "" ... */
	assert_int_equal(r.n, 2 + 2 * n + 2 + 2 * n);
	free(r.s);
	memset(s, 0xff, n);
	r = run(put_long_json, &(struct doc){ s, n, 0 });
	/* \u00ff in JSON, \xff in CSV */
	assert_int_equal(r.n, 2 + 6 * n + 4 * n);
	free(r.s);
	free(s);
}

/* ------------------------------------------------------- hostile text */

struct cell {
	const char *in, *want;
};

static void put_csv(struct obuf *o, void *arg)
{
	const char *s = arg;

	obuf__csv_strn(o, s, strlen(s));
}

static void put_json(struct obuf *o, void *arg)
{
	const char *s = arg;

	obuf__json_str(o, s);
}

static void check(void (*fn)(struct obuf *, void *), const struct cell *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct out r = run(fn, (void *)c[i].in);

		if (r.n != strlen(c[i].want) || memcmp(r.s, c[i].want, r.n))
			fprintf(stderr, "in %zu: got [%.*s], want [%s]\n", i, (int)r.n, r.s, c[i].want);
		assert_int_equal(r.n, strlen(c[i].want));
		assert_memory_equal(r.s, c[i].want, r.n);
		free(r.s);
	}
}

/* CSV cells of text: a formula is made text (a leading apostrophe, quoted),
 * numbers stay numbers; control characters and bytes that are not UTF-8
 * never come out raw. */
static void test_csv_cells(void **state)
{
	static const struct cell cells[] = {
		{ "=1+1", "\"'=1+1\"" },
		{ "=HYPERLINK(\"http://x/\",\"y\")", "\"'=HYPERLINK(\"\"http://x/\"\",\"\"y\"\")\"" },
		{ "+cmd|' /C calc'!A0", "\"'+cmd|' /C calc'!A0\"" },
		{ "-2+3", "\"'-2+3\"" },
		{ "@SUM(A1)", "\"'@SUM(A1)\"" },
		{ "\tTAB", "\"'\\tTAB\"" },
		{ "\rCR", "\"'\\rCR\"" },
		{ "-", "\"'-\"" },
		{ "-1e", "\"'-1e\"" },
		/* numbers, signed or not, stay numbers */
		{ "-12", "-12" }, { "+1.5e3", "+1.5e3" }, { "-0.25", "-0.25" }, { "42", "42" },
		{ "a=b", "a=b" }, { "x-1", "x-1" },
		/* control characters and bytes that are not UTF-8, written out */
		{ "x\x1b[2Jy", "x\\x1b[2Jy" },
		{ "a\nb", "a\\nb" }, { "del\x7f", "del\\x7f" },
		{ "c1\xc2\x9b" "2J", "c1\\xc2\\x9b2J" }, { "raw\x9b", "raw\\x9b" },
		{ "bad\xff\xc3", "bad\\xff\\xc3" },
		{ "caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac" },
		/* RFC 4180 */
		{ "a,b", "\"a,b\"" }, { "q\"q", "\"q\"\"q\"" }, { " lead", "\" lead\"" },
		{ "=a,b", "\"'=a,b\"" },
	};

	(void)state;
	check(put_csv, cells, sizeof(cells) / sizeof(cells[0]));
}

/* JSON strings: control characters, C1 among them, as \u escapes; bytes
 * that are not UTF-8 as their Latin-1 reading; other UTF-8 as it is. */
static void test_json_controls(void **state)
{
	static const struct cell cells[] = {
		{ "x\x1b[2J", "\"x\\u001b[2J\"" },
		{ "c1\xc2\x9b" "2J", "\"c1\\u009b2J\"" },
		{ "c1\xc2\x80\xc2\x9f\xc2\xa0", "\"c1\\u0080\\u009f\xc2\xa0\"" },
		{ "raw\x9b", "\"raw\\u009b\"" },
		{ "del\x7f", "\"del\\u007f\"" },
		{ "caf\xc3\xa9", "\"caf\xc3\xa9\"" },
		{ "</script>", "\"</script>\"" },
	};

	(void)state;
	check(put_json, cells, sizeof(cells) / sizeof(cells[0]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mem_takes_any_length),
		cmocka_unit_test(test_strings_of_any_length),
		cmocka_unit_test(test_csv_cells),
		cmocka_unit_test(test_json_controls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
