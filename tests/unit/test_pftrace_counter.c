// SPDX-License-Identifier: MIT
/*
 * Unit tests of the Perfetto writer's counter tracks (export/perfetto/
 * pftrace.h: pftrace__counter_track, pftrace__counter, pftrace__counter_int),
 * read back with the model of pftrace_model.h, which also checks what
 * trace_processor relies on: a counter track has a CounterDescriptor (its
 * unit when one is given), takes TYPE_COUNTER events only, each with one
 * value (double_counter_value or counter_value), on a sequence whose
 * timestamps never decrease; a value older than the track's latest goes on
 * its late sequence.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "export/perfetto/pftrace.h"
#include "pftrace_model.h"

enum { EV_COUNTER = 4, EV_INSTANT = 3 };

static const struct trk *track_named(const struct model *m, const char *name)
{
	for (int i = 0; i < m->ntrk; i++)
		if (!strcmp(m->trk[i].name, name))
			return &m->trk[i];
	fail_msg("no track named %s", name);
	return NULL;
}

/* The counter events of track uuid, in file order, into e[]; how many. */
static int counter_events(const struct model *m, uint64_t uuid, const struct ev **e, int max)
{
	int n = 0;

	for (int i = 0; i < m->nev; i++)
		if (m->ev[i].track == uuid && m->ev[i].type == EV_COUNTER && n < max)
			e[n++] = &m->ev[i];
	return n;
}

static void test_counter_tracks(void **state)
{
	struct pf_track parent, pct, bytes;
	const struct trk *tp, *tb, *tg;
	const struct ev *e[8];
	struct pftrace *w;
	struct model m;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	assert_int_equal(pftrace__new(f, &w), 0);
	/* a plain parent with an instant, a ratio and a byte counter under it */
	pftrace__track_init(w, &parent);
	pftrace__track(w, &parent, 0, "Group");
	pftrace__track_init(w, &pct);
	pftrace__counter_track(w, &pct, parent.uuid, "busy (%)", PF_UNIT_UNSPECIFIED);
	pftrace__track_init(w, &bytes);
	pftrace__counter_track(w, &bytes, 0, "memory", PF_UNIT_SIZE_BYTES);
	pftrace__event_open(w, &parent, pftrace__track_seq(w, &parent, 100), PF_INSTANT, 100,
			    pftrace__cstring(w, "changed"));
	assert_int_equal(pftrace__event_close(w), 0);
	assert_int_equal(pftrace__counter(w, &pct, 100, 4.25), 0);
	assert_int_equal(pftrace__counter(w, &pct, 200, 0.0001), 0);
	assert_int_equal(pftrace__counter(w, &pct, 300, 100.0), 0);
	assert_int_equal(pftrace__counter_int(w, &bytes, 150, 1ll << 40), 0);
	assert_int_equal(pftrace__counter_int(w, &bytes, 250, -3), 0);
	/* older than the track's latest value: its late sequence */
	assert_int_equal(pftrace__counter(w, &pct, 50, 7.5), 0);
	assert_int_equal(pftrace__stats(w)->late, 1);
	assert_int_equal(pftrace__flush(w), 0);
	pftrace__track_free(&parent);
	pftrace__track_free(&pct);
	pftrace__track_free(&bytes);
	pftrace__free(w);
	assert_int_equal(fclose(f), 0);

	model_read(&m, (const uint8_t *)buf, len);
	tg = track_named(&m, "Group");
	assert_false(tg->counter);
	tp = track_named(&m, "busy (%)");
	assert_true(tp->counter);
	assert_int_equal(tp->unit, 0);
	assert_int_equal(tp->parent, tg->uuid);
	tb = track_named(&m, "memory");
	assert_true(tb->counter);
	assert_int_equal(tb->unit, 3);		/* UNIT_SIZE_BYTES */
	assert_int_equal(tb->parent, 0);

	assert_int_equal(counter_events(&m, tp->uuid, e, 8), 4);
	assert_int_equal(e[0]->ts, 100);
	assert_true(e[0]->is_double);
	assert_true(e[0]->value == 4.25);
	assert_true(e[1]->value == 0.0001);
	assert_true(e[2]->value == 100.0);
	assert_int_equal(e[3]->ts, 50);
	assert_true(e[3]->value == 7.5);
	assert_int_not_equal(e[3]->seq, e[0]->seq);	/* the late one */
	/* counter events carry no name */
	assert_string_equal(e[0]->name, "");
	assert_int_equal(counter_events(&m, tb->uuid, e, 8), 2);
	assert_false(e[0]->is_double);
	assert_int_equal(e[0]->ivalue, 1ll << 40);
	assert_int_equal(e[1]->ivalue, -3);
	assert_int_equal(count_type(&m, EV_INSTANT), 1);
	model_free(&m);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counter_tracks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
