// SPDX-License-Identifier: MIT
/*
 * Names of any length on the exports' timelines: a process' command line of
 * 3,000 bytes keeps its rank after it, a thread's name of 300 bytes names its
 * NVTX lane whole (they went through buffers of 1,200 and 96 bytes, which
 * cut the rank off and split characters), in the Chrome JSON and the
 * Perfetto export.
 */
#include "perfetto_fixtures.h"

#define PID 100
#define TID 101

static char cmdline[3001], thread[301];

/* s of n bytes: "NAME " then two-byte characters, so that any cut by bytes
 * at an even length splits one. */
static void fill(char *s, size_t n, const char *head)
{
	size_t i = strlen(head);

	memcpy(s, head, i);
	for (; i + 2 < n; i += 2) {
		s[i] = '\xc3';
		s[i + 1] = '\xa9';
	}
	s[i < n ? i : n - 1] = '\0';
}

static const char *write_names(void)
{
	const char *path = tmp_path("names.gtrace");
	struct gt_proc_rank *rk = (void *)rbuf;
	struct gt_nvtx *nv = (void *)rbuf;

	fill(cmdline, sizeof(cmdline), "python3 train.py ");
	fill(thread, sizeof(thread), "worker ");
	w_open(path);
	w_proc(GT_REC_EXEC, 1000, PID, "python3", 0);
	w_name(1010, GT_NAME_PROCESS, PID, cmdline);
	w_name(1020, GT_NAME_THREAD, TID, thread);
	hdr(GT_REC_PROC_RANK, sizeof(*rk), 1030, PID, 0, 0);
	rk->rank = 1;
	rk->world_size = 2;
	rk->local_rank = rk->local_world_size = -1;
	w_put();
	w_pid = PID;
	CALL_RET(2000, 2100, TID, cuInit);
	hdr(GT_REC_NVTX, GT_REC_ALIGN(sizeof(*nv) + 5), 3000, PID, TID, 0);
	nv->dur = 500;
	nv->id = 1;
	nv->len = 5;
	memcpy(nv->name, "step", 5);
	w_put();
	CALL_RET(4000, 4100, TID, cuCtxSynchronize);
	w_close();
	return path;
}

/* The export of path by fn, whole, in *len bytes. */
static char *export(const char *path, int (*fn)(struct trace_reader *, FILE *, const char **),
		    size_t *len)
{
	struct trace_reader *r;
	const char *msg, *why = NULL;
	char *buf = NULL;
	FILE *out = tu_memstream(&buf, len);

	assert_int_equal(trace_reader__open(path, &r, &msg), 0);
	assert_int_equal(fn(r, out, &why), 0);
	assert_int_equal(fclose(out), 0);
	trace_reader__close(r);
	return buf;
}

static void test_json_names_whole(void **state)
{
	size_t len;
	char *js = export(write_names(), export_json__write, &len), *want;

	(void)state;
	assert_true(asprintf(&want, "\"name\":\"%s [rank 1/2]\"", cmdline) > 0);
	assert_non_null(strstr(js, want));
	free(want);
	assert_true(asprintf(&want, "\"name\":\"NVTX %s %u\"", thread, TID) > 0);
	assert_non_null(strstr(js, want));
	free(want);
	free(js);
}

static void test_perfetto_names_whole(void **state)
{
	size_t len;
	char *pf = export(write_names(), export_perfetto__write, &len), *want;

	(void)state;
	/* protobuf strings are their bytes: the whole name is in the file */
	assert_true(asprintf(&want, "%s [rank 1/2]", cmdline) > 0);
	assert_non_null(memmem(pf, len, want, strlen(want)));
	free(want);
	assert_true(asprintf(&want, "NVTX %s %u", thread, TID) > 0);
	assert_non_null(memmem(pf, len, want, strlen(want)));
	free(want);
	free(pf);
}

static int group_setup(void **state)
{
	(void)state;
	return pf_group_setup("test_export_names");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_names_whole),
		cmocka_unit_test(test_perfetto_names_whole),
	};

	return cmocka_run_group_tests(tests, group_setup, pf_group_teardown);
}
