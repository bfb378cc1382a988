// SPDX-License-Identifier: MIT
/*
 * Unit tests of what makes a Perfetto export stand beside others: track,
 * sequence and flow ids drawn from the trace, and event categories equal to
 * the Chrome JSON export's.
 */
#include "perfetto_fixtures.h"

/* A trace with a thread, a launch and its kernel (one flow), starting at start. */
static void ids_trace(const char *path, uint64_t start)
{
	w_open_at(path, start, REAL_OFF);
	w_name(start, GT_NAME_THREAD, 101, "main");
	w_launch(start + 1000, 101, 0x4000);
	mt_kernel(W, start + 1500, 10, 101, start + 1000, MT_LINKED, 7, 1, "k");
	w_ret(start + 1010, 101, API(cuLaunchKernel), 0);
	w_close();
}

static bool ids_meet(const uint64_t *a, int na, const uint64_t *b, int nb)
{
	for (int i = 0; i < na; i++)
		for (int j = 0; j < nb; j++)
			if (a[i] == b[j])
				return true;
	return false;
}

/* Track uuids, sequence ids and flow ids of one model, for comparisons. */
struct ids {
	uint64_t uuid[64], seq[64], flow[64];
	int nuuid, nseq, nflow;
};

static void ids_of(const struct model *m, struct ids *d)
{
	memset(d, 0, sizeof(*d));
	for (int i = 0; i < m->ntrk; i++)
		d->uuid[d->nuuid++] = m->trk[i].uuid;
	for (int i = 0; i < m->nseq; i++)
		d->seq[d->nseq++] = m->seqs[i];
	for (int i = 0; i < m->nev && d->nflow < 64; i++)
		for (int k = 0; k < m->ev[i].nflow && d->nflow < 64; k++)
			d->flow[d->nflow++] = m->ev[i].flows[k];
}

/* Two exports load together in one Perfetto UI (or one concatenated file):
 * different traces share no track uuid, sequence id or flow id; the same
 * trace exported twice gets the same ones. */
static void test_ids_per_trace(void **state)
{
	const char *a = tmp_path("ids_a.gtrace"), *b = tmp_path("ids_b.gtrace");
	struct model ma, ma2, mb;
	struct ids ia, ia2, ib;
	const char *why;

	(void)state;
	ids_trace(a, 500);
	ids_trace(b, 700);
	assert_int_equal(export_file(a, &ma, &why), 0);
	assert_int_equal(export_file(a, &ma2, &why), 0);
	assert_int_equal(export_file(b, &mb, &why), 0);
	ids_of(&ma, &ia);
	ids_of(&ma2, &ia2);
	ids_of(&mb, &ib);
	assert_true(ia.nuuid >= 3 && ia.nseq >= 3 && ia.nflow == 2);
	assert_int_equal(ia.nuuid, ib.nuuid);
	assert_int_equal(ia.nseq, ib.nseq);
	assert_int_equal(ia.nflow, ib.nflow);
	assert_false(ids_meet(ia.uuid, ia.nuuid, ib.uuid, ib.nuuid));
	assert_false(ids_meet(ia.seq, ia.nseq, ib.seq, ib.nseq));
	assert_false(ids_meet(ia.flow, ia.nflow, ib.flow, ib.nflow));
	assert_memory_equal(&ia, &ia2, sizeof(ia));
	model_free(&ma);
	model_free(&ma2);
	model_free(&mb);
}

/* No records: a valid trace with the clock snapshot alone. */
/* A trace of calls of several kinds, process events and kernel-side
 * records (an ioctl inside a call, an off-CPU interval). */
static void kinds_file(const char *path)
{
	struct gt_ioctl *io = (void *)rbuf;
	struct gt_offcpu *oc = (void *)rbuf;

	w_open(path);
	w_proc(GT_REC_EXEC, 550, 100, "app", 0);
	w_launch(1000, 101, 0x4000);
	w_ret(1100, 101, API(cuLaunchKernel), 0);
	CALL_RET(1200, 1300, 101, cuMemAlloc_v2);
	w_call(1400, 101, API(cuStreamSynchronize), 7, 0, 0);
	hdr(GT_REC_IOCTL, sizeof(*io), 1450, 100, 101, 0);
	io->dur = 20;
	io->cmd = 0xc020462a;
	io->rdev = 195u << 20;
	io->fd = 3;
	w_put();
	hdr(GT_REC_OFFCPU, sizeof(*oc), 1480, 100, 101, 0);
	oc->dur = 10;
	oc->state = 1;
	w_put();
	w_ret(1500, 101, API(cuStreamSynchronize), 0);
	w_call(1600, 101, API(cuCtxSynchronize_v2), 0, 0, 0);	/* never returns: an instant */
	w_proc(GT_REC_EXIT, 2000, 100, "app", 0);
	w_close();
}

/* Each slice and instant has one category, the "cat" the JSON export
 * gives the same event (same name, same time): calls by their type, GPU
 * records by theirs, process events, ioctls and off-CPU intervals. */
static void check_categories_as_json(const char *path, int want_min)
{
	struct trace_reader *r;
	struct model m;
	const char *why;
	char *json = NULL;
	size_t len = 0;
	FILE *out = tu_memstream(&json, &len);
	int checked = 0;

	assert_int_equal(trace_reader__open(path, &r, NULL), 0);
	assert_int_equal(export_json__write(r, out, &why), 0);
	assert_int_equal(fclose(out), 0);
	trace_reader__close(r);
	assert_int_equal(export_file(path, &m, &why), 0);
	for (int i = 0; i < m.nev; i++) {
		const struct ev *e = &m.ev[i];
		char name[160], ts[48], cat[48];
		bool found = false;

		if (e->type == 2) {
			assert_int_equal(e->ncat, 0);	/* an end is no event of its own */
			continue;
		}
		assert_int_equal(e->ncat, 1);
		snprintf(name, sizeof(name), "{\"name\":\"%s\",", e->name);
		snprintf(ts, sizeof(ts), "\"ts\":%llu.%03llu,", (unsigned long long)(e->ts / 1000),
			 (unsigned long long)(e->ts % 1000));
		snprintf(cat, sizeof(cat), ",\"cat\":\"%s\",", e->cat);
		for (const char *p = json; *p && !found;) {
			size_t n = strcspn(p, "\n");
			char *line = strndup(p, n);

			found = strstr(line, name) == line && strstr(line, ts) && strstr(line, cat);
			free(line);
			p += n + (p[n] == '\n');
		}
		if (!found)
			fail_msg("no JSON event %s %s %s", name, ts, cat);
		checked++;
	}
	assert_true(checked >= want_min);
	free(json);
	model_free(&m);
}

static void test_categories_as_json(void **state)
{
	const char *path = tmp_path("kinds.gtrace");
	struct model m;
	const char *why;
	const char *want[] = { "launch", "alloc", "sync", "ioctl", "sched", "process" };

	(void)state;
	kinds_file(path);
	check_categories_as_json(path, 7);
	/* every kind is there: the test sees each category */
	assert_int_equal(export_file(path, &m, &why), 0);
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		bool seen = false;

		for (int i = 0; i < m.nev; i++)
			seen |= !strcmp(m.ev[i].cat, want[k]);
		if (!seen)
			fail_msg("no event of category %s", want[k]);
	}
	model_free(&m);
	path = tmp_path("merged.gtrace");
	mt_file(path);
	check_categories_as_json(path, 20);
}

static int group_setup(void **state)
{
	(void)state;
	return pf_group_setup("test_export_perfetto_ids");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids_per_trace),
		cmocka_unit_test(test_categories_as_json),
	};

	return cmocka_run_group_tests(tests, group_setup, pf_group_teardown);
}
