// SPDX-License-Identifier: MIT
/*
 * record/stacks/ustacks_py.c's Python frames, from records as BPF sends them
 * (this process' own pid, so that its mappings are real): a code object
 * sent once names every frame of it, with the line its table gives; a frame
 * whose code object never came has no function (counted); one BPF could not
 * read (no instruction, no first line) keeps its function without a line
 * (counted); the frames go after the native ones the unwinder found; a
 * record too short is refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "record/stacks/ustacks.h"

#define MAX_RECS 64

struct sink {
	size_t n;
	struct gt_hdr *recs[MAX_RECS];
};

static int emit(void *ctx, const struct gt_hdr *rec)
{
	struct sink *s = ctx;

	assert_true(s->n < MAX_RECS);
	s->recs[s->n] = malloc(rec->size);
	assert_non_null(s->recs[s->n]);
	memcpy(s->recs[s->n++], rec, rec->size);
	return 0;
}

static const struct gt_hdr *last_of(const struct sink *s, uint16_t type)
{
	for (size_t i = s->n; i-- > 0;)
		if (s->recs[i]->type == type)
			return s->recs[i];
	return NULL;
}

static void sink_free(struct sink *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->recs[i]);
}

/* A 3.12 code object of file, name, first line 10, whose table says: 2 code
 * units at line 10, then 3 at line 12. */
static void send_code(struct ustacks *u, uint64_t code, const char *file, const char *name)
{
	struct gt_pycode *r = calloc(1, sizeof(*r));
	static const uint8_t table[] = { 0x80 | (13 << 3) | 1, 0x00, 0x80 | (13 << 3) | 2, 0x04 };

	assert_non_null(r);
	r->hdr = (struct gt_hdr){ .ts = 100, .pid = (uint32_t)getpid(), .tid = (uint32_t)getpid(),
				  .type = GT_REC_PYCODE, .size = sizeof(*r) };
	r->code = code;
	r->firstlineno = 10;
	r->version = 0x030c;
	r->file_len = (uint16_t)strlen(file);
	r->name_len = (uint16_t)strlen(name);
	r->file_kind = r->name_kind = 1;
	memcpy(r->file, file, r->file_len);
	memcpy(r->name, name, r->name_len);
	r->lines_len = sizeof(table);
	memcpy(r->linetable, table, sizeof(table));
	assert_int_equal(ustacks__on_pycode(u, r), 0);
	r->hdr.size = sizeof(r->hdr);
	assert_int_equal(ustacks__on_pycode(u, r), -EINVAL);
	free(r);
}

static void test_python_frames(void **state)
{
	struct sink s = { 0 };
	struct ustacks *u = ustacks__new(emit, &s);
	struct gt_ustack *raw = calloc(1, sizeof(*raw));
	const struct gt_stack *st;
	const struct gt_pyfunc *fn;

	(void)state;
	assert_non_null(u);
	assert_non_null(raw);
	send_code(u, 0x1000, "/srv/train.py", "Model.step");
	fn = (const void *)last_of(&s, GT_REC_PYFUNC);
	assert_non_null(fn);
	assert_string_equal(fn->text, "/srv/train.py");
	assert_string_equal(fn->text + fn->file_len, "Model.step");
	assert_int_equal(fn->firstlineno, 10);
	/* one native frame (this function's own code), then three Python ones:
	 * line 12, a code never sent, a frame BPF could not read */
	raw->hdr = (struct gt_hdr){ .ts = 200, .pid = (uint32_t)getpid(), .tid = (uint32_t)getpid(),
				    .type = GT_REC_USTACK, .size = sizeof(*raw) };
	raw->nframes = 1;
	raw->ip[0] = (uint64_t)(uintptr_t)test_python_frames;
	raw->pyversion = 0x030c;
	raw->npy = 3;
	raw->py[0] = (struct gt_pyframe){ .code = 0x1000, .instr = 3, .line0 = 10 };
	raw->py[1] = (struct gt_pyframe){ .code = 0x2000, .instr = 0, .line0 = 5 };
	raw->py[2] = (struct gt_pyframe){ .code = 0x1000, .instr = 0xffffffffu, .line0 = 0 };
	assert_int_equal(ustacks__on_raw(u, raw), 0);
	st = (const void *)last_of(&s, GT_REC_STACK);
	assert_non_null(st);
	assert_int_equal(st->nframes, 4);
	assert_true(st->flags & GT_STACK_PYTHON);
	assert_true(st->flags & GT_STACK_PY_AFTER);	/* no eval frame among the native ones */
	assert_int_equal(st->frames[0].module & GT_FRAME_PY, 0);
	assert_int_equal(st->frames[1].module, GT_FRAME_PY | fn->id);
	assert_int_equal(st->frames[1].offset, 12);
	assert_int_equal(st->frames[2].module, 0);	/* a code object that never came */
	assert_int_equal(st->frames[2].offset, 0x2000);
	assert_int_equal(st->frames[3].module, GT_FRAME_PY | fn->id);
	assert_int_equal(st->frames[3].offset, 0);	/* unread: no line */
	assert_int_equal(ustacks__counters(u)->py_stacks, 1);
	assert_int_equal(ustacks__counters(u)->py_unknown, 1);
	assert_int_equal(ustacks__counters(u)->py_no_line, 1);
	assert_int_equal(((const struct gt_stack_ref *)last_of(&s, GT_REC_STACK_REF))->stack, st->id);
	free(raw);
	ustacks__free(u);
	sink_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_python_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
