// SPDX-License-Identifier: MIT
/*
 * Unit tests of `gtrace-bpf export` (user/export/export.c) and its Chrome JSON
 * writer (user/export/json.c): a small trace written with trace_writer must
 * come out as exactly the expected text, odd names escaped; export__run
 * picks the output name, refuses to overwrite without --force, and leaves
 * no file behind (final or temporary) when it fails.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>
#include <cmocka.h>
#include "decode/decode.h"
#include "export/export.h"
#include "format/trace_file.h"
#include "merged_trace.h"
#include "test_util.h"


/* ------------------------------------------------------------ trace building */

#define API(x) GT_API_##x

static void w_open(const char *path)
{
	struct gt_file_info info = {
		.version = GT_FILE_VERSION, .clock_id = 1, .start_ts = 500,
		.realtime_offset_ns = 1700000000000000000ll,
		.host = "test\"host", .kernel = "6.18", .cmdline = "gtrace-bpf record -- ./app",
		.options = "buffer=8",
	};
	tu_w_create(path, &info);
}

static void w_put(const void *rec)
{
	tu_w_append(rec);
}

static void hdr(uint16_t type, size_t size, uint64_t ts, uint32_t tid, unsigned api)
{
	tu_hdr(type, size, ts, 100, tid, api, 2);
}

static void w_call(uint64_t ts, uint32_t tid, unsigned api, uint64_t a0, uint64_t a1,
		   uint64_t a2, uint64_t a3)
{
	struct gt_call *c = (void *)rbuf;

	hdr(GT_REC_CALL, sizeof(*c), ts, tid, api);
	c->args[0] = a0;
	c->args[1] = a1;
	c->args[2] = a2;
	c->args[3] = a3;
	w_put(c);
}

/* cuModuleGetFunction(&f, module, name) */
static void w_get_func(uint64_t ts, uint64_t module, const char *name)
{
	struct gt_call_str *c = (void *)rbuf;
	size_t n = strlen(name) + 1;

	hdr(GT_REC_CALL_STR, GT_REC_ALIGN(sizeof(*c) + n), ts, 101, API(cuModuleGetFunction));
	c->args[1] = module;
	c->len = (uint16_t)n;
	memcpy(c->str, name, n);
	w_put(c);
}

static void w_ret(uint64_t ts, uint32_t tid, unsigned api, int32_t ret, uint64_t out,
		  uint32_t flags)
{
	struct gt_ret *r = (void *)rbuf;

	hdr(GT_REC_RET, sizeof(*r), ts, tid, api);
	r->ret = ret;
	r->out = out;
	r->flags = flags;
	w_put(r);
}

static void w_launch(uint64_t ts, unsigned api, uint64_t func)
{
	struct gt_launch *l = (void *)rbuf;

	hdr(GT_REC_LAUNCH, sizeof(*l), ts, 101, api);
	l->func = func;
	l->stream = 7;
	l->grid[0] = 64; l->grid[1] = 2; l->grid[2] = 1;
	l->block[0] = 256; l->block[1] = 1; l->block[2] = 1;
	l->shmem = 512;
	w_put(l);
}

static void w_proc(uint16_t type, uint64_t ts, const char *comm, int32_t code)
{
	struct gt_proc_evt *p = (void *)rbuf;

	hdr(type, sizeof(*p), ts, 100, 0);
	p->ppid = 1;
	p->exit_code = code;
	memcpy(p->comm, comm, strlen(comm));	/* shorter than 16 here */
	w_put(p);
}

static void w_name(uint64_t ts, uint16_t kind, uint64_t key, const char *s)
{
	struct gt_name *nm = (void *)rbuf;
	size_t n = strlen(s) + 1;

	hdr(GT_REC_NAME, GT_REC_ALIGN(sizeof(*nm) + n), ts, 0, 0);
	nm->key = key;
	nm->kind = kind;
	nm->len = (uint16_t)n;
	memcpy(nm->str, s, n);
	w_put(nm);
}

/* Names with every kind of byte JSON must escape; the second kernel's name
 * is not mangled, so it is shown as it is. */
#define ODD_PROC "app --tag=\"a\\b\"\n\xff"
#define ODD_KERNEL "k\"x\\y,z\x01\xc3\xa9"

/* An exec, names, two launches (one named by a mangled C++ name, one by an
 * odd one), a copy, a failed free, a call that never returned and the exit.
 * finish = false: the process exit is in a chunk that never reached the
 * file, as after a crash. */
static void write_trace(const char *path, bool finish)
{
	struct gt_stats *st = (void *)rbuf;
	struct gt_trailer t = { 0 };

	w_open(path);
	w_proc(GT_REC_EXEC, 1000, "app", 0);
	/* the command line, learned after the exec: the process is renamed */
	w_name(1050, GT_NAME_PROCESS, 100, ODD_PROC);
	w_name(1100, GT_NAME_THREAD, 101, "worker");
	w_get_func(2000, 12288, "_Z3addIfEvPT_PKS0_i");
	w_ret(2100, 101, API(cuModuleGetFunction), 0, 16384, GT_RET_OUT);
	w_get_func(2200, 12288, ODD_KERNEL);
	w_ret(2300, 101, API(cuModuleGetFunction), 0, 20480, GT_RET_OUT);
	w_launch(1234567, API(cuLaunchKernel), 16384);
	w_ret(1234567 + 3120, 101, API(cuLaunchKernel), 0, 0, 0);
	w_launch(2000000, API(cuLaunchKernel_ptsz), 20480);
	w_ret(2000001, 101, API(cuLaunchKernel_ptsz), 0, 0, 0);
	w_call(3000000, 101, API(cuMemcpyHtoDAsync_v2), 1000000, 2000, 4096, 7);
	w_ret(3008800, 101, API(cuMemcpyHtoDAsync_v2), 0, 0, 0);
	w_call(4000000, 101, API(cuMemFree_v2), 1000000, 0, 0, 0);
	w_ret(4000010, 101, API(cuMemFree_v2), 1, 0, 0);
	hdr(GT_REC_STATS, sizeof(*st), 4500000, 0, 0);
	st->c.events = 42;
	st->c.drop_ringbuf = 3;
	w_put(st);
	w_call(5000000, 102, API(cuStreamSynchronize), 7, 0, 0, 0);
	assert_int_equal(trace_writer__flush(W), 0);
	w_proc(GT_REC_EXIT, 6000000, "app", 256);
	if (finish) {
		t.end_ts = 7000000;
		t.counters.events = 50;
		t.counters.drop_ringbuf = 4;
		assert_int_equal(trace_writer__finish(W, &t), 0);
	}
	trace_writer__free(W);
	W = NULL;
}

/* ------------------------------------------------------------ expected output */

#define ESC_PROC "app --tag=\\\"a\\\\b\\\"\\n\\u00ff"
#define ESC_KERNEL "k\\\"x\\\\y,z\\u0001\xc3\xa9"

static const char *const exp_events[] = {
	"{\"traceEvents\":[",
	"{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":100,\"tid\":100,\"args\":{\"sort_index\":100}},",
	"{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":100,\"tid\":100,\"args\":{\"name\":\"app\"}},",
	"{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":100,\"tid\":100,\"args\":{\"sort_index\":0}},",
	"{\"name\":\"exec\",\"cat\":\"process\",\"ph\":\"i\",\"s\":\"t\",\"ts\":1.000,\"pid\":100,\"tid\":100,\"args\":{\"cpu\":2,\"event\":\"exec\",\"ppid\":1,\"comm\":\"app\"}},",
	"{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":100,\"tid\":100,\"args\":{\"name\":\"" ESC_PROC "\"}},",
	"{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":100,\"tid\":101,\"args\":{\"sort_index\":101}},",
	"{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":100,\"tid\":101,\"args\":{\"name\":\"worker\"}},",
	"{\"name\":\"cuModuleGetFunction\",\"cat\":\"module\",\"ph\":\"X\",\"ts\":2.000,\"dur\":0.100,\"pid\":100,\"tid\":101,\"args\":{\"cpu\":2,\"api\":\"cuModuleGetFunction\",\"ret\":0,\"failed\":false,\"handle\":16384,\"parent\":12288,\"name\":\"_Z3addIfEvPT_PKS0_i\"}},",
	"{\"name\":\"cuModuleGetFunction\",\"cat\":\"module\",\"ph\":\"X\",\"ts\":2.200,\"dur\":0.100,\"pid\":100,\"tid\":101,\"args\":{\"cpu\":2,\"api\":\"cuModuleGetFunction\",\"ret\":0,\"failed\":false,\"handle\":20480,\"parent\":12288,\"name\":\"" ESC_KERNEL "\"}},",
	"{\"name\":\"void add<float>(float*, float const*, int)\",\"cat\":\"launch\",\"ph\":\"X\",\"ts\":1234.567,\"dur\":3.120,\"pid\":100,\"tid\":101,\"args\":{\"cpu\":2,\"api\":\"cuLaunchKernel\",\"ret\":0,\"failed\":false,\"kernel\":\"void add<float>(float*, float const*, int)\",\"mangled\":\"_Z3addIfEvPT_PKS0_i\",\"func\":16384,\"grid\":[64,2,1],\"block\":[256,1,1],\"shmem\":512,\"stream\":7}},",
	"{\"name\":\"" ESC_KERNEL "\",\"cat\":\"launch\",\"ph\":\"X\",\"ts\":2000.000,\"dur\":0.001,\"pid\":100,\"tid\":101,\"args\":{\"cpu\":2,\"api\":\"cuLaunchKernel_ptsz\",\"ret\":0,\"failed\":false,\"kernel\":\"" ESC_KERNEL "\",\"mangled\":\"" ESC_KERNEL "\",\"func\":20480,\"grid\":[64,2,1],\"block\":[256,1,1],\"shmem\":512,\"stream\":7}},",
	"{\"name\":\"cuMemcpyHtoDAsync_v2\",\"cat\":\"memcpy\",\"ph\":\"X\",\"ts\":3000.000,\"dur\":8.800,\"pid\":100,\"tid\":101,\"args\":{\"cpu\":2,\"api\":\"cuMemcpyHtoDAsync_v2\",\"ret\":0,\"failed\":false,\"bytes\":4096,\"kind\":\"HtoD\",\"dst\":1000000,\"src\":2000,\"stream\":7}},",
	"{\"name\":\"cuMemFree_v2\",\"cat\":\"free\",\"ph\":\"X\",\"ts\":4000.000,\"dur\":0.010,\"pid\":100,\"tid\":101,\"args\":{\"cpu\":2,\"api\":\"cuMemFree_v2\",\"ret\":1,\"failed\":true,\"ptr\":1000000}},",
	/* the exit ends the process: its open call comes out first */
	"{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":100,\"tid\":102,\"args\":{\"sort_index\":102}},",
	"{\"name\":\"cuStreamSynchronize\",\"cat\":\"sync\",\"ph\":\"i\",\"s\":\"t\",\"ts\":5000.000,\"pid\":100,\"tid\":102,\"args\":{\"cpu\":2,\"api\":\"cuStreamSynchronize\",\"incomplete\":true,\"stream\":7}},",
	"{\"name\":\"exit\",\"cat\":\"process\",\"ph\":\"i\",\"s\":\"t\",\"ts\":6000.000,\"pid\":100,\"tid\":100,\"args\":{\"cpu\":2,\"event\":\"exit\",\"ppid\":1,\"comm\":\"app\",\"exit_code\":256}}",
};

static const char exp_metadata[] =
	"],\"displayTimeUnit\":\"ns\",\"metadata\":{\"source\":\"gtrace-bpf\",\"format_version\":1,\"clock\":\"CLOCK_MONOTONIC\","
	"\"clock_id\":1,\"realtime_offset_ns\":1700000000000000000,\"start_ts\":500,"
	"\"host\":\"test\\\"host\",\"kernel\":\"6.18\",\"cmdline\":\"gtrace-bpf record -- ./app\","
	"\"options\":\"buffer=8\",\"truncated\":false,\"counters\":{\"events\":50,\"drop_ringbuf\":4,"
	"\"drop_stash\":0,\"str_fault\":0,\"args_fault\":0,\"names_mem\":0,\"names_mem_rejected\":0,"
	"\"names_mem_verified\":0,\"names_mem_mismatch\":0,\"attach_files\":0,\"attach_probes\":0,"
	"\"attach_failed\":0,\"records_written\":0,\"ranges_nested\":0,\"ranges_refused\":0,"
	"\"drop_state\":0},"
	"\"decoder\":{\"calls\":7,\"unmatched_exits\":0,"
	"\"incomplete\":1,\"placeholder_names\":0,\"device_unknown\":5,\"nccl_calls\":0,\"nccl_comm_unknown\":0,\"unknown_records\":0}}}";

/* ------------------------------------------------------------ helpers */

static int run_writer(const char *path, struct out *o, const char **why)
{
	struct trace_reader *r;
	FILE *f = tu_memstream(&o->buf, &o->len);
	int rc;

	assert_int_equal(trace_reader__open(path, &r, NULL), 0);
	rc = export_json__write(r, f, why);
	trace_reader__close(r);
	fclose(f);
	return rc;
}

/* Compares text line by line against want[0..n-1] and then tail (the rest). */
static void check_text(const char *got, const char *const *want, int n, const char *tail)
{
	const char *p = got;

	for (int i = 0; i < n; i++) {
		const char *nl = strchr(p, '\n');

		assert_non_null(nl);
		if ((size_t)(nl - p) != strlen(want[i]) || memcmp(p, want[i], nl - p) != 0) {
			fprintf(stderr, "line %d\n got: %.*s\nwant: %s\n", i + 1, (int)(nl - p), p,
				want[i]);
			fail();
		}
		p = nl + 1;
	}
	if (tail && strcmp(p, tail)) {
		fprintf(stderr, "after line %d\n got: %s\nwant: %s\n", n, p, tail);
		fail();
	}
}

static void spit(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(s, f);
	assert_int_equal(fclose(f), 0);
}

/* Files in tmpdir/sub whose name starts with prefix (temporary files included). */
static int count_files(const char *sub, const char *prefix)
{
	DIR *d = opendir(tmp_path(sub));
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    !strncmp(e->d_name, prefix, strlen(prefix)))
			n++;
	closedir(d);
	return n;
}

static void run_export(const char *path, const char *output, enum export_format fmt, bool force,
		       struct run *r)
{
	FILE *err = open_memstream(&r->err, &r->err_len);
	struct export_opts o = {
		.path = path, .output = output, .format = fmt, .force = force, .err = err,
	};

	assert_non_null(err);
	r->rc = export__run(&o);
	fclose(err);
}

/* The damage line the reader gives for path. */
static void damage_of(const char *path, char *buf, size_t len)
{
	struct trace_reader *rd;
	const struct gt_hdr *rec;

	assert_int_equal(trace_reader__open(path, &rd, NULL), 0);
	while (trace_reader__next(rd, &rec) == 1)
		;
	assert_true(trace_reader__truncated(rd));
	snprintf(buf, len, "%s", trace_reader__damage(rd));
	trace_reader__close(rd);
}

/* ------------------------------------------------------------ the writer */

static void test_json_text(void **state)
{
	const char *path = tmp_path("full.gtrace");
	const char *why = NULL;
	struct out o = { 0 };
	char tail[2048];

	(void)state;
	write_trace(path, true);
	assert_int_equal(run_writer(path, &o, &why), 0);
	snprintf(tail, sizeof(tail), "%s\n", exp_metadata);
	check_text(o.buf, exp_events, sizeof(exp_events) / sizeof(exp_events[0]), tail);
	free(o.buf);
}

static void test_json_truncated(void **state)
{
	const char *path = tmp_path("cut.gtrace");
	int n = sizeof(exp_events) / sizeof(exp_events[0]);
	const char *why = NULL, *meta;
	char damage[512], want[1024];
	struct out o = { 0 };
	const char *last;

	(void)state;
	write_trace(path, false);
	damage_of(path, damage, sizeof(damage));
	assert_int_equal(run_writer(path, &o, &why), 0);
	/* every event up to the exit, whose chunk is lost; the open call then
	 * comes out at the end of the data, the last event, without its comma */
	check_text(o.buf, exp_events, n - 3, NULL);
	last = strstr(o.buf, "\"cat\":\"sync\"");
	assert_non_null(last);
	assert_null(strstr(o.buf, "\"name\":\"exit\""));
	meta = strstr(o.buf, "\n],\"displayTimeUnit\":\"ns\",\"metadata\":{");
	assert_non_null(meta);
	assert_true(last < meta);
	assert_null(memchr(last, '\n', (size_t)(meta - last)));
	assert_memory_equal(meta - 2, "}}", 2);
	/* the damage and the counters of the last stats record */
	assert_non_null(strstr(meta, "\"truncated\":true,\"damage\":\""));
	snprintf(want, sizeof(want), "\"damage\":\"%s\"", damage);
	assert_non_null(strstr(meta, want));
	assert_non_null(strstr(meta, "\"counters\":{\"events\":42,\"drop_ringbuf\":3,"));
	free(o.buf);
}

/* ------------------------------------------------------------ export__run */

static void test_default_name(void **state)
{
	const char *in = tmp_path("dflt.gtrace"), *in2 = tmp_path("dflt2.trace");
	struct run r = { 0 };
	struct stat st;
	char *s;

	(void)state;
	umask(022);
	write_trace(in, true);
	run_export(in, NULL, EXPORT_JSON, false, &r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "");
	free(r.err);
	assert_int_equal(stat(tmp_path("dflt.json"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	s = slurp(tmp_path("dflt.json"));
	assert_non_null(s);
	assert_memory_equal(s, exp_events[0], strlen(exp_events[0]));
	free(s);

	run_export(in, NULL, EXPORT_CSV, false, &r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "");
	free(r.err);
	s = slurp(tmp_path("dflt.csv"));
	assert_non_null(s);
	assert_memory_equal(s, "ts,pid,tid,", 11);
	free(s);

	/* no .gtrace to replace: the extension is appended */
	write_trace(in2, true);
	run_export(in2, NULL, EXPORT_JSON, false, &r);
	assert_int_equal(r.rc, 0);
	free(r.err);
	assert_int_equal(stat(tmp_path("dflt2.trace.json"), &st), 0);
	/* nothing else appeared: no temporary file left */
	assert_int_equal(count_files("", ".dflt"), 0);
}

static void test_refuse_and_force(void **state)
{
	const char *in = tmp_path("ow.gtrace"), *out = tmp_path("ow.json");
	struct run r = { 0 };
	char want[256], *s;

	(void)state;
	write_trace(in, true);
	spit(out, "precious\n");
	run_export(in, NULL, EXPORT_JSON, false, &r);
	assert_int_equal(r.rc, 1);
	snprintf(want, sizeof(want), "gtrace-bpf: %s exists: use --force to replace it\n", out);
	assert_string_equal(r.err, want);
	free(r.err);
	s = slurp(out);
	assert_string_equal(s, "precious\n");
	free(s);

	run_export(in, out, EXPORT_JSON, true, &r);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "");
	free(r.err);
	s = slurp(out);
	assert_memory_equal(s, exp_events[0], strlen(exp_events[0]));
	free(s);
	assert_int_equal(count_files("", ".ow"), 0);

	/* the input itself is never the output, --force or not */
	run_export(in, in, EXPORT_JSON, true, &r);
	assert_int_equal(r.rc, 1);
	snprintf(want, sizeof(want), "gtrace-bpf: cannot write %s: it is the input trace\n", in);
	assert_string_equal(r.err, want);
	free(r.err);
	run_export(in, NULL, EXPORT_JSON, true, &r);	/* still readable */
	assert_int_equal(r.rc, 0);
	free(r.err);
}

/* Runs export__run in a child; as root the child drops to nobody, so that
 * a directory's permissions apply.  fsize_limit > 0 caps the size of the
 * files it writes (writes past it fail with EFBIG).  The error text is read
 * back through a temporary file. */
static void run_export_child(const char *in, const char *out, long fsize_limit, struct run *r)
{
	FILE *err = tmpfile();
	pid_t pid;
	int status;
	long n;

	assert_non_null(err);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct export_opts o = { .path = in, .output = out, .format = EXPORT_JSON, .err = err };

		if (fsize_limit > 0) {
			struct rlimit rl = { fsize_limit, fsize_limit };

			signal(SIGXFSZ, SIG_IGN);
			if (setrlimit(RLIMIT_FSIZE, &rl))
				_exit(98);
		}
		if (geteuid() == 0 && (setgroups(0, NULL) || setgid(65534) || setuid(65534)))
			_exit(99);
		n = export__run(&o);
		fflush(err);
		_exit((int)n);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	r->rc = WEXITSTATUS(status);
	rewind(err);
	r->err = calloc(1, 4096);
	assert_non_null(r->err);
	n = (long)fread(r->err, 1, 4095, err);
	r->err_len = (size_t)n;
	fclose(err);
}

static void test_unwritable_dir(void **state)
{
	const char *in = tmp_path("uw.gtrace"), *out = tmp_path("ro/uw.json");
	struct run r = { 0 };
	char want[256];

	(void)state;
	write_trace(in, true);
	/* readable by the child even when it runs as nobody */
	assert_int_equal(chmod(tmpdir, 0755), 0);
	assert_int_equal(chmod(in, 0644), 0);
	assert_int_equal(mkdir(tmp_path("ro"), 0555), 0);
	assert_int_equal(chmod(tmp_path("ro"), 0555), 0);

	run_export_child(in, out, 0, &r);
	assert_int_equal(r.rc, 1);
	snprintf(want, sizeof(want), "gtrace-bpf: cannot write %s: Permission denied\n", out);
	assert_string_equal(r.err, want);
	assert_int_equal(count_files("ro", ""), 0);
	free(r.err);
}

/* A write that fails half-way (here: the file size limit) removes the
 * temporary file; no output appears. */
static void test_write_fails(void **state)
{
	const char *in = tmp_path("fz.gtrace"), *out = tmp_path("wr/fz.json");
	struct run r = { 0 };
	char want[256];

	(void)state;
	write_trace(in, true);
	assert_int_equal(chmod(tmpdir, 0755), 0);
	assert_int_equal(chmod(in, 0644), 0);
	assert_int_equal(mkdir(tmp_path("wr"), 0777), 0);
	assert_int_equal(chmod(tmp_path("wr"), 0777), 0);

	run_export_child(in, out, 1000, &r);
	assert_int_equal(r.rc, 1);
	snprintf(want, sizeof(want), "gtrace-bpf: cannot write %s: File too large\n", out);
	assert_string_equal(r.err, want);
	assert_int_equal(count_files("wr", ""), 0);
	free(r.err);
}

static void test_bad_input(void **state)
{
	const char *txt = tmp_path("notes.txt"), *missing = tmp_path("missing.gtrace");
	struct run r = { 0 };
	char want[256];

	(void)state;
	spit(txt, "these are not the records you are looking for\n");
	run_export(txt, NULL, EXPORT_JSON, false, &r);
	assert_int_equal(r.rc, 1);
	snprintf(want, sizeof(want), "gtrace-bpf: cannot read %s: not a gtrace file (bad magic)\n",
		 txt);
	assert_string_equal(r.err, want);
	free(r.err);
	assert_int_equal(count_files("", "notes.txt"), 1);	/* no notes.txt.json */

	run_export(missing, NULL, EXPORT_CSV, false, &r);
	assert_int_equal(r.rc, 1);
	snprintf(want, sizeof(want), "gtrace-bpf: cannot read %s: No such file or directory\n",
		 missing);
	assert_string_equal(r.err, want);
	free(r.err);
	assert_int_equal(count_files("", "missing"), 0);
}

static void test_truncated_input(void **state)
{
	const char *in = tmp_path("tr.gtrace");
	char want[1024], *s;
	struct run r = { 0 };

	(void)state;
	write_trace(in, false);
	/* the readers' rule: the export of what was read, status 1, one line */
	tu_killed_line(in, "exported the records read", want, sizeof(want));
	run_export(in, NULL, EXPORT_JSON, false, &r);
	assert_int_equal(r.rc, 1);
	assert_string_equal(r.err, want);
	free(r.err);
	s = slurp(tmp_path("tr.json"));
	assert_non_null(s);
	assert_non_null(strstr(s, "\"name\":\"cuMemFree_v2\""));
	assert_non_null(strstr(s, "\"truncated\":true"));
	free(s);
}

/* "-": the export on stdout, no file. */
static void test_stdout(void **state)
{
	const char *in = tmp_path("so.gtrace"), *cap = tmp_path("so.stdout");
	struct run r = { 0 };
	int fd, saved;
	char *s;

	(void)state;
	write_trace(in, true);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	fd = open(cap, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, STDOUT_FILENO);
	close(fd);
	run_export(in, "-", EXPORT_JSON, false, &r);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "");
	free(r.err);
	s = slurp(cap);
	check_text(s, exp_events, sizeof(exp_events) / sizeof(exp_events[0]), NULL);
	free(s);
	assert_int_equal(count_files("", "so."), 2);	/* the trace and the capture */
	assert_int_equal(count_files("", "-"), 0);
}

/* The line of out that contains all of the NULL-terminated strings; NULL if
 * none. Returns a copy. */
static char *line_with(const char *out, ...)
{
	const char *p = out;

	while (*p) {
		size_t n = strcspn(p, "\n");
		char *line = strndup(p, n);
		bool all = true;
		va_list ap;

		va_start(ap, out);
		for (const char *k = va_arg(ap, const char *); k && all; k = va_arg(ap, const char *))
			all = strstr(line, k) != NULL;
		va_end(ap);
		if (all)
			return line;
		free(line);
		p += n + (p[n] == '\n');
	}
	return NULL;
}

/* A merged trace: GPU events on lanes of synthetic tids named by metadata,
 * NVTX ranges on a lane per thread, and for each linked record of a call
 * that completed one 's' at the call and one 'f' at the GPU event. */
#define FLOW_PH "\"cat\":\"flow\",\"ph\":\""

static void test_gpu_json(void **state)
{
	const char *path = tmp_path("merged.gtrace");
	const char *why = NULL;
	struct out o = { 0 };
	char *l, want[512];
	int s = 0, f = 0;

	(void)state;
	mt_file(path);
	assert_int_equal(run_writer(path, &o, &why), 0);
	l = line_with(o.buf, "\"thread_name\"", "\"GPU 0 stream 7\"", NULL);
	assert_non_null(l);
	assert_string_equal(l, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":100,"
			    "\"tid\":1073741824,\"args\":{\"name\":\"GPU 0 stream 7\"}},");
	free(l);
	assert_non_null(l = line_with(o.buf, "\"NVTX main 101\"", NULL));
	free(l);
	l = line_with(o.buf, "\"ts\":3.500,", NULL);
	assert_non_null(l);
	assert_string_equal(l, "{\"name\":\"vecAdd(float*, float*, float*, int)\",\"cat\":"
			    "\"gpu_kernel\",\"ph\":\"X\",\"ts\":3.500,\"dur\":1.000,\"pid\":100,"
			    "\"tid\":1073741824,\"args\":{\"device\":0,\"context\":1,\"stream_id\":7,"
			    "\"correlation\":11,\"kernel\":\"vecAdd(float*, float*, float*, int)\","
			    "\"mangled\":\"_Z6vecAddPfS_S_i\",\"grid\":[64,1,1],\"block\":[256,1,1],"
			    "\"shmem\":48,\"launch_ts\":3000,\"launch_tid\":101}},");
	free(l);
	assert_non_null(l = line_with(o.buf, "\"name\":\"memcpy HtoD 4 MiB\"", "\"tid\":1073741824", NULL));
	free(l);
	assert_non_null(l = line_with(o.buf, "\"name\":\"mark\"", "\"ph\":\"i\"", NULL));
	free(l);
	/* the copy's arrow: from its call's entry on its thread to the copy */
	assert_non_null(l = line_with(o.buf, "\"name\":\"copy\",\"cat\":\"flow\",\"ph\":\"s\",\"id\":2,"
				      "\"ts\":4.000,\"pid\":100,\"tid\":101}", NULL));
	free(l);
	assert_non_null(l = line_with(o.buf, "\"name\":\"copy\",\"cat\":\"flow\",\"ph\":\"f\",\"bp\":\"e\","
				      "\"id\":2,\"ts\":4.600,\"pid\":100,\"tid\":1073741824}", NULL));
	free(l);
	/* one 's' and one 'f' per id; none for the kernel of the launch that
	 * never returned (id 5), whose call is an instant */
	for (int id = 1; id <= 7; id++) {
		char *ls, *lf;

		snprintf(want, sizeof(want), "\"id\":%d,", id);
		ls = line_with(o.buf, "\"ph\":\"s\"", want, NULL);
		lf = line_with(o.buf, "\"ph\":\"f\"", want, NULL);
		assert_true((ls != NULL) == (id != 5));
		assert_true((lf != NULL) == (id != 5));
		free(ls);
		free(lf);
	}
	for (const char *p = o.buf; (p = strstr(p, FLOW_PH)); p++) {
		s += p[sizeof(FLOW_PH) - 1] == 's';
		f += p[sizeof(FLOW_PH) - 1] == 'f';
	}
	assert_int_equal(s, 6);
	assert_int_equal(f, 6);
	free(o.buf);
}

/* A merged trace of a default recording (launches at entry only): each
 * launch a complete event of 1 ns at its entry, and one arrow ('s' at the
 * call, 'f' at the GPU event) per linked GPU record. */
static void test_gpu_json_entry_only(void **state)
{
	const char *path = tmp_path("merged_entry_only.gtrace");
	const char *why = NULL;
	struct out o = { 0 };
	char *l, want[128];
	int s = 0, f = 0, linked = 0;

	(void)state;
	mt_file_entry_only(path);
	assert_int_equal(run_writer(path, &o, &why), 0);
	for (const char *p = o.buf; (p = strstr(p, "\"launch_ts\":")); p++)
		linked++;
	assert_int_equal(linked, 7);
	for (const char *p = o.buf; (p = strstr(p, FLOW_PH)); p++) {
		s += p[sizeof(FLOW_PH) - 1] == 's';
		f += p[sizeof(FLOW_PH) - 1] == 'f';
	}
	assert_int_equal(s, 7);
	assert_int_equal(f, 7);
	for (int id = 1; id <= 7; id++) {
		char *ls, *lf;

		snprintf(want, sizeof(want), "\"id\":%d,", id);
		assert_non_null(ls = line_with(o.buf, "\"ph\":\"s\"", want, NULL));
		assert_non_null(lf = line_with(o.buf, "\"ph\":\"f\"", want, NULL));
		free(ls);
		free(lf);
	}
	/* the launch on tid 102 and its kernel's arrow */
	l = line_with(o.buf, "\"api\":\"cuLaunchKernel\"", "\"tid\":102", NULL);
	assert_non_null(l);
	assert_non_null(strstr(l, "\"ph\":\"X\",\"ts\":7.000,\"dur\":0.001,"));
	assert_null(strstr(l, "incomplete"));
	free(l);
	assert_non_null(l = line_with(o.buf, "\"name\":\"launch\",\"cat\":\"flow\",\"ph\":\"s\"",
				      "\"ts\":7.000,\"pid\":100,\"tid\":102}", NULL));
	free(l);
	assert_non_null(l = line_with(o.buf, "\"name\":\"launch\",\"cat\":\"flow\",\"ph\":\"f\"",
				      "\"ts\":7.200,", NULL));
	free(l);
	free(o.buf);
}

static int group_setup(void **state)
{
	(void)state;
	return tu_tmpdir_make("test_export_json");
}

static int group_teardown(void **state)
{
	(void)state;
	return tu_tmpdir_remove_all();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_text),
		cmocka_unit_test(test_json_truncated),
		cmocka_unit_test(test_default_name),
		cmocka_unit_test(test_refuse_and_force),
		cmocka_unit_test(test_unwritable_dir),
		cmocka_unit_test(test_write_fails),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_truncated_input),
		cmocka_unit_test(test_stdout),
		cmocka_unit_test(test_gpu_json),
		cmocka_unit_test(test_gpu_json_entry_only),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
