// SPDX-License-Identifier: MIT
/*
 * Unit tests of the Perfetto exporter's GPU side (user/export/perfetto_gpu.c):
 * GPU tracks per device, context and stream, and the launch -> GPU arrows of
 * merged traces, with launches recorded with and without their exits.
 */
#include "perfetto_fixtures.h"

/* A merged trace (merged_trace.h): a track per GPU stream under the process,
 * kernels, copies and sets as slices named for people, NVTX on a track of
 * its own, and an arrow from every linked record's call to it: each flow id
 * on exactly two events, one CPU, one GPU. */
static void test_gpu_tracks_and_flows(void **state)
{
	const char *path = tmp_path("merged.gtrace");
	const struct trk *proc, *s7, *s8, *s9, *nv, *t101, *t102, *gpu0;
	const struct ev *e;
	const struct ann *a;
	const char *why;
	struct model m;
	uint64_t ids[16];
	int nids = 0, n, kernels = 0;
	struct ev **v;

	(void)state;
	mt_file(path);
	assert_int_equal(export_file(path, &m, &why), 0);
	proc = find_track(&m, 'p', MT_PID);
	t101 = find_track(&m, 't', 101);
	t102 = find_track(&m, 't', 102);
	s7 = find_named_track(&m, "GPU 0 stream 7");
	s8 = find_named_track(&m, "GPU 0 stream 8");
	s9 = find_named_track(&m, "GPU 0 stream 9");
	nv = find_named_track(&m, "NVTX main 101");
	gpu0 = find_named_track(&m, "GPU 0");
	/* streams grouped per device under the process */
	assert_int_equal(gpu0->parent, proc->uuid);
	assert_int_equal(s7->parent, gpu0->uuid);
	assert_int_equal(s8->parent, gpu0->uuid);
	assert_int_equal(s9->parent, gpu0->uuid);
	assert_int_equal(nv->parent, proc->uuid);

	/* stream 7: the linked kernels and copy in order, the unlinked kernel
	 * (older than them: it comes last in the file) on a late sequence */
	assert_int_equal(count_slices(&m, s7->uuid, "vecAdd(float*, float*, float*, int)"), 2);
	assert_int_equal(count_slices(&m, s7->uuid, "step()"), 1);
	assert_int_equal(count_slices(&m, s7->uuid, "relu_kernel"), 2);
	assert_int_equal(count_slices(&m, s7->uuid, "memcpy HtoD 4 MiB"), 1);
	assert_int_equal(count_slices(&m, s8->uuid, "memset 1 MiB"), 1);
	assert_int_equal(count_slices(&m, s9->uuid, "vecAdd(float*, float*, float*, int)"), 1);
	for (int i = 0; i < m.nev; i++)
		kernels += m.ev[i].type == 1 && on_gpu_track(&m, &m.ev[i]) &&
			   strncmp(m.ev[i].name, "mem", 3);
	assert_int_equal(kernels, 6);
	v = track_events(&m, s7->uuid, &n);
	assert_int_equal(n, 12);
	assert_int_equal(v[0]->ts, 2000);
	assert_int_equal(v[1]->ts, 2100);	/* its end, before the next begin */
	assert_true(v[0]->seq != v[2]->seq);
	free(v);

	/* the arguments of a kernel, as dump names them: CUPTI's stream id is
	 * stream_id, "stream" is a call's CUstream handle only */
	e = event_at(&m, s7->uuid, 3500, 1);
	assert_non_null(a = find_ann(e, "stream_id"));
	assert_int_equal(a->v, 7);
	assert_null(find_ann(e, "stream"));
	assert_non_null(a = find_ann(e, "correlation"));
	assert_int_equal(a->v, 11);
	assert_non_null(a = find_ann(e, "launch_tid"));
	assert_int_equal(a->v, 101);
	assert_non_null(a = find_ann(e, "launch_ts"));
	assert_int_equal(a->v, 3000);
	assert_non_null(a = find_ann(e, "mangled"));
	assert_string_equal(a->str, "_Z6vecAddPfS_S_i");
	assert_non_null(a = find_ann(e, "grid"));
	assert_int_equal(a->narr, 3);
	assert_int_equal(a->arr[0], 64);
	assert_null(find_ann(e, "causality"));
	assert_non_null(a = find_ann(event_at(&m, s7->uuid, 5990, 1), "causality"));
	assert_int_equal(a->v, 1);
	/* the unlinked kernel names no call and has no arrow */
	e = event_at(&m, s7->uuid, 2000, 1);
	assert_null(find_ann(e, "launch_ts"));
	assert_int_equal(e->nflow, 0);

	/* every flow id on exactly two events: one GPU slice (which has no
	 * other) and one event of a thread */
	for (int i = 0; i < m.nev; i++) {
		if (!on_gpu_track(&m, &m.ev[i]) || !m.ev[i].nflow)
			continue;
		assert_int_equal(m.ev[i].nflow, 1);
		assert_true(nids < 16);
		ids[nids++] = m.ev[i].flow;
		assert_int_equal(flow_uses(&m, m.ev[i].flow), 2);
	}
	assert_int_equal(nids, 7);
	for (int i = 0; i < m.nev; i++) {
		for (int k = 0; k < m.ev[i].nflow && !on_gpu_track(&m, &m.ev[i]); k++) {
			bool gpu_end = false;

			for (int j = 0; j < nids; j++)
				gpu_end |= ids[j] == m.ev[i].flows[k];
			assert_true(gpu_end);
		}
	}
	/* the graph launch carries the arrows of its two kernels; the launch
	 * that never returned, as an instant, the arrow of its kernel */
	e = event_at(&m, t101->uuid, 8000, 1);
	assert_string_equal(e->name, "cuGraphLaunch");
	assert_int_equal(e->nflow, 2);
	assert_int_equal(e->flows[0], event_at(&m, s7->uuid, 8100, 1)->flow);
	assert_int_equal(e->flows[1], event_at(&m, s7->uuid, 8300, 1)->flow);
	e = event_at(&m, t102->uuid, 7000, 3);
	assert_int_equal(e->nflow, 1);
	assert_int_equal(e->flow, event_at(&m, s9->uuid, 7200, 1)->flow);
	assert_int_equal(event_at(&m, t101->uuid, 4000, 1)->flow,
			 event_at(&m, s7->uuid, 4600, 1)->flow);

	/* NVTX: the ranges nest on their track, a mark is an instant */
	assert_int_equal(count_slices(&m, nv->uuid, "step"), 1);
	assert_int_equal(count_slices(&m, nv->uuid, "fwd"), 2);
	assert_string_equal(event_at(&m, nv->uuid, 4000, 3)->name, "mark");
	v = track_events(&m, nv->uuid, &n);
	assert_int_equal(n, 7);
	assert_string_equal(v[0]->name, "step");
	assert_string_equal(v[1]->name, "fwd");
	assert_int_equal(v[2]->type, 2);	/* fwd ends at 4000, before the mark */
	assert_int_equal(v[2]->ts, 4000);
	assert_int_equal(v[3]->type, 3);
	assert_int_equal(v[6]->type, 2);	/* step ends last, at 8900 */
	assert_int_equal(v[6]->ts, 8900);
	free(v);
	model_free(&m);
}

/* Arrows whose call is not where it should be: a linked record whose call
 * is not open gets none; one whose call the exporter gave up waiting for
 * (its exit lost, hundreds of calls after it) still gets its arrow when the
 * decoder finally emits the call, as an instant. */
static void test_gpu_flow_edges(void **state)
{
	const char *path = tmp_path("edges.gtrace");
	const struct trk *t1, *s7;
	const struct ev *e;
	struct model m;
	const char *why;

	(void)state;
	w_open(path);
	/* the launch returned before its kernel came: no arrow */
	w_launch(1000, 101, 0x4000);
	w_ret(1010, 101, API(cuLaunchKernel), 0);
	mt_kernel(W, 1500, 10, 101, 1000, MT_LINKED, 7, 1, "k_late");
	/* a launch whose exit is lost, then enough calls to give up on it */
	w_launch(2000, 101, 0x4000);
	mt_kernel(W, 2100, 10, 101, 2000, MT_LINKED, 7, 2, "k_lost");
	for (int i = 0; i < 600; i++)
		CALL_RET(3000 + i * 10, 3005 + i * 10, 101, cuMemAlloc_v2);
	/* a record linked to a thread never seen */
	mt_kernel(W, 9000, 10, 555, 8000, MT_LINKED, 7, 3, "k_nothread");
	w_close();

	assert_int_equal(export_file(path, &m, &why), 0);
	t1 = find_track(&m, 't', 101);
	s7 = find_named_track(&m, "GPU 0 stream 7");
	assert_int_equal(event_at(&m, s7->uuid, 1500, 1)->nflow, 0);
	assert_int_equal(event_at(&m, s7->uuid, 9000, 1)->nflow, 0);
	e = event_at(&m, s7->uuid, 2100, 1);
	assert_int_equal(e->nflow, 1);
	assert_int_equal(flow_uses(&m, e->flow), 2);
	/* the lost launch: an instant at its entry, with the arrow, written
	 * late (on another sequence than the calls after it): it was given up on */
	assert_int_equal(event_at(&m, t1->uuid, 2000, 3)->flow, e->flow);
	assert_true(event_at(&m, t1->uuid, 2000, 3)->seq != event_at(&m, t1->uuid, 3000, 1)->seq);
	model_free(&m);
}

/* A merged trace of a default recording (launches at entry only): every
 * linked GPU record has its arrow from its call, the entry-only launches
 * being slices of 1 ns at their entry that carry them. */
static void test_entry_only_flows(void **state)
{
	const char *path = tmp_path("merged_entry_only.gtrace");
	const struct trk *t101, *t102, *s7, *s9;
	const struct ev *e;
	const char *why;
	struct model m;
	int linked = 0, gpu_flows = 0;

	(void)state;
	mt_file_entry_only(path);
	assert_int_equal(export_file(path, &m, &why), 0);
	t101 = find_track(&m, 't', 101);
	t102 = find_track(&m, 't', 102);
	s7 = find_named_track(&m, "GPU 0 stream 7");
	s9 = find_named_track(&m, "GPU 0 stream 9");
	for (int i = 0; i < m.nev; i++) {
		const struct ev *g = &m.ev[i];

		if (!on_gpu_track(&m, g) || g->type != 1)
			continue;
		linked += find_ann(g, "launch_ts") != NULL;
		gpu_flows += g->nflow;
		if (g->nflow) {
			assert_int_equal(g->nflow, 1);
			assert_int_equal(flow_uses(&m, g->flow), 2);
		}
	}
	assert_int_equal(linked, 7);
	assert_int_equal(gpu_flows, 7);
	/* the launches: a slice of 1 ns each, with the arrow of its kernel */
	e = event_at(&m, t101->uuid, 3000, 1);
	assert_string_equal(e->name, "vecAdd(float*, float*, float*, int)");
	assert_int_equal(e->nflow, 1);
	assert_int_equal(e->flow, event_at(&m, s7->uuid, 3500, 1)->flow);
	assert_null(find_ann(e, "incomplete"));
	assert_non_null(event_at(&m, t101->uuid, 3001, 2));
	assert_int_equal(event_at(&m, t101->uuid, 6000, 1)->flow,
			 event_at(&m, s7->uuid, 5990, 1)->flow);
	e = event_at(&m, t102->uuid, 7000, 1);
	assert_int_equal(e->nflow, 1);
	assert_int_equal(e->flow, event_at(&m, s9->uuid, 7200, 1)->flow);
	assert_non_null(event_at(&m, t102->uuid, 7001, 2));
	model_free(&m);
}

static int group_setup(void **state)
{
	(void)state;
	return pf_group_setup("test_export_perfetto_gpu");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_tracks_and_flows),
		cmocka_unit_test(test_gpu_flow_edges),
		cmocka_unit_test(test_entry_only_flows),
	};

	return cmocka_run_group_tests(tests, group_setup, pf_group_teardown);
}
