// SPDX-License-Identifier: MIT
/* gtrace-bpf command line: record (the default), dump, export, stats, merge, census. */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "record/census.h"
#include "export/dump.h"
#include "export/export.h"
#include "analysis/stats.h"
#include "lib/log.h"
#include "merge/merge.h"
#include "record/record.h"

#define GT_VERSION "0.1.0"

const char *argp_program_version = "gtrace-bpf " GT_VERSION;
const char *argp_program_bug_address = NULL;

static const char record_doc[] =
"Record the CUDA driver API calls of processes into a trace file.\n"
"\n"
"USAGE: gtrace-bpf [record] --all | -p PID [-p PID...] | -- CMD [ARGS...]  [OPTIONS]\n"
"       gtrace-bpf dump FILE [--summary]\n"
"       gtrace-bpf export FILE [-f perfetto|json|csv] [-o OUT]\n"
"       gtrace-bpf stats FILE [-r REPORT[,...]] [--format table|csv|json] [--timeunit ns|us|ms|s]\n"
"       gtrace-bpf merge TRACE SPOOL... [-o OUT] [--force]\n"
"       gtrace-bpf census [--libcuda PATH] [--functions LIST] -- CMD [ARGS...]\n"
"\n"
"EXAMPLES:\n"
"  sudo gtrace-bpf --all                      # every CUDA process, until Ctrl-C\n"
"  sudo gtrace-bpf --all -d 30 -o run.gtrace  # 30 seconds into run.gtrace\n"
"  sudo gtrace-bpf -p 4242                    # one running process\n"
"  sudo gtrace-bpf -- python train.py         # start a command and trace it\n"
"  sudo gtrace-bpf --all --trace cuda         # libcuda calls only, no ioctls or scheduling\n"
"  sudo gtrace-bpf --cupti -- ./train         # the GPU side too (CUPTI agent)\n"
"  gtrace-bpf dump run.gtrace | head          # one JSON object per call\n"
"  gtrace-bpf dump --summary run.gtrace       # counts per API and drops\n"
"  sudo gtrace-bpf census -- ./train          # which libcuda functions a program calls\n"
"\v"
"Without -o the file is named {name}_{scenario}_{YYYYMMDD}_v{N}.gtrace in the\n"
"current directory (name: the command, or 'system' for --all). Needs root, or\n"
"CAP_BPF and CAP_PERFMON, and a kernel with BTF and uprobes.\n"
"\n"
"EXIT STATUS (every command): 0 done; 1 failed while working (unreadable or\n"
"damaged input, cannot write, cannot load or attach); 2 bad command line. With\n"
"-- CMD (record, census) the command's own status, 128+N if signal N ended it.";

enum {
	OPT_FORCE = 0x100, OPT_SCENARIO, OPT_BUFSIZE, OPT_LIBCUDA, OPT_NO_LAUNCH_EXIT, OPT_LAUNCH_EXIT, OPT_SUMMARY,
	OPT_TRACE, OPT_IOCTL_MAJORS, OPT_FUNCTIONS, OPT_CUPTI, OPT_CUPTI_LIB,
	OPT_FORMAT, OPT_TIMEUNIT,
};

static const struct argp_option record_options[] = {
	{ "all", 'a', NULL, 0, "Trace every process that uses CUDA, also ones started later", 0 },
	{ "pid", 'p', "PID", 0, "Trace only this process (repeatable)", 0 },
	{ "output", 'o', "FILE", 0, "Write the trace to FILE", 0 },
	{ "force", OPT_FORCE, NULL, 0, "Replace FILE if it exists", 0 },
	{ "scenario", OPT_SCENARIO, "NAME", 0, "Scenario part of the default file name (default: trace)", 0 },
	{ "duration", 'd', "SECONDS", 0, "Stop after SECONDS", 0 },
	{ "buffer-size", OPT_BUFSIZE, "SIZE", 0, "Ring buffer size, e.g. 64M (default), 1G", 0 },
	{ "libcuda", OPT_LIBCUDA, "PATH", 0, "Also trace this libcuda file (repeatable)", 0 },
	{ "launch-exit", OPT_LAUNCH_EXIT, NULL, 0,
	  "Also probe launch returns: launches get their CPU duration and result, at the "
	  "cost of a second probe per launch (default: launches are recorded at entry only)", 0 },
	{ "no-launch-exit", OPT_NO_LAUNCH_EXIT, NULL, OPTION_HIDDEN, "", 0 },
	{ "trace", OPT_TRACE, "LIST", 0,
	  "Sources to record: cuda,ioctl,sched (default: all three); cupti adds --cupti", 0 },
	{ "cupti", OPT_CUPTI, NULL, 0,
	  "Also record the GPU side (kernels, copies, sets, NVTX ranges) with the CUPTI agent and "
	  "merge it into the trace. -- CMD: loaded into CMD; --all/-p: programs started with "
	  "CUDA_INJECTION64_PATH=<agent> join", 0 },
	{ "cupti-lib", OPT_CUPTI_LIB, "PATH", 0,
	  "The CUPTI agent library (default: libgtrace-cupti.so next to gtrace-bpf, in "
	  "../lib/gtrace-bpf or .output)", 0 },
	{ "ioctl-majors", OPT_IOCTL_MAJORS, "LIST", 0,
	  "Debugging: record ioctls on these device majors instead of NVIDIA's (/proc/devices)", 0 },
	{ "quiet", 'q', NULL, 0, "No status line or summary", 0 },
	{ "verbose", 'v', NULL, 0, "More diagnostics (-v: libbpf's warnings too, -vv: all of libbpf's log)", 0 },
	{ 0 },
};

struct cli {
	struct record_opts rec;
	int verbose;
	bool quiet;
};

static int parse_u64(const char *s, uint64_t *out, bool size_suffix)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		return -EINVAL;
	if (size_suffix && *end) {
		int shift = 0;

		switch (*end) {
		case 'k': case 'K': shift = 10; break;
		case 'm': case 'M': shift = 20; break;
		case 'g': case 'G': shift = 30; break;
		default: return -EINVAL;
		}
		end++;
		if (*end == 'i')
			end++;
		if (*end == 'B' || *end == 'b')
			end++;
		if (v > (~0ull >> shift))
			return -ERANGE;
		v <<= shift;
	}
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

/* argp follows each usage error with a "Try `... --help'" line; bad input
 * gets one line here, so argp's error stream drops that hint. Lines are
 * reassembled across writes before they are judged. */
static char err_line[1024];
static size_t err_len;
static bool err_hint;	/* the hint began: it is the last thing argp says, and may wrap */

static void err_line_out(void)
{
	if (err_len && !strncmp(err_line, "Try ", 4))
		err_hint = true;
	if (err_len && !err_hint)
		fwrite(err_line, 1, err_len, stderr);
	err_len = 0;
}

static ssize_t one_line_write(void *cookie, const char *buf, size_t n)
{
	(void)cookie;
	for (size_t i = 0; i < n; i++) {
		if (err_len < sizeof(err_line))
			err_line[err_len++] = buf[i];
		if (buf[i] == '\n' || err_len == sizeof(err_line))
			err_line_out();
	}
	return n;
}

static FILE *usage_err_stream(void)
{
	static FILE *f;
	cookie_io_functions_t io = { .write = one_line_write };

	if (!f) {
		f = fopencookie(NULL, "w", io);
		if (!f)
			return stderr;
		setvbuf(f, NULL, _IONBF, 0);
	}
	return f;
}

/* Every command line goes through here: a parent parser gives argp the
 * one-line error stream before the command's own parser runs. */
static error_t cli_parse(int key, char *arg, struct argp_state *state)
{
	(void)arg;
	if (key != ARGP_KEY_INIT)
		return ARGP_ERR_UNKNOWN;
	state->child_inputs[0] = state->input;
	state->err_stream = usage_err_stream();
	return 0;
}

static int parse_cli(const struct argp *cmd, int argc, char **argv, void *input)
{
	/* the command's usage and doc head the help, its options follow */
	struct argp body = { cmd->options, cmd->parser, NULL, NULL, NULL, NULL, NULL };
	struct argp_child children[] = { { &body, 0, NULL, 0 }, { 0 } };
	struct argp top = { NULL, cli_parse, cmd->args_doc, cmd->doc, children, NULL, NULL };

	return argp_parse(&top, argc, argv, 0, NULL, input);
}

static error_t record_parse(int key, char *arg, struct argp_state *state)
{
	struct cli *c = state->input;
	struct record_opts *o = &c->rec;
	uint64_t v;
	char *end;
	void *p;

	switch (key) {
	case 'a':
		o->all = true;
		break;
	case 'p':
		if (parse_u64(arg, &v, false) || v == 0 || v > 4194304)
			argp_error(state, "invalid pid '%s'", arg);
		p = realloc(o->pids, (o->npids + 1) * sizeof(*o->pids));
		if (!p)
			argp_failure(state, 1, ENOMEM, "out of memory");
		o->pids = p;
		o->pids[o->npids++] = (pid_t)v;
		break;
	case 'o':
		o->output = arg;
		break;
	case OPT_FORCE:
		o->force = true;
		break;
	case OPT_SCENARIO:
		if (!arg[0])
			argp_error(state, "empty scenario name");
		o->scenario = arg;
		break;
	case 'd':
		errno = 0;
		o->duration = strtod(arg, &end);
		if (errno || end == arg || *end || !(o->duration > 0) || o->duration > 1e7)
			argp_error(state, "invalid duration '%s' (seconds > 0)", arg);
		break;
	case OPT_BUFSIZE:
		if (parse_u64(arg, &v, true) || v < 4096 || v > (4ull << 30))
			argp_error(state, "invalid buffer size '%s' (4K..4G, e.g. 64M)", arg);
		o->buffer_size = v;
		break;
	case OPT_LIBCUDA:
		p = realloc(o->libcuda, (o->nlibcuda + 1) * sizeof(*o->libcuda));
		if (!p)
			argp_failure(state, 1, ENOMEM, "out of memory");
		o->libcuda = p;
		o->libcuda[o->nlibcuda++] = arg;
		break;
	case OPT_LAUNCH_EXIT:
		o->launch_exit = true;
		break;
	case OPT_NO_LAUNCH_EXIT:	/* the default; kept for scripts written before it was */
		o->launch_exit = false;
		break;
	case OPT_TRACE: {
		char *copy = strdup(arg), *tok, *save = NULL;

		if (!copy)
			argp_failure(state, 1, ENOMEM, "out of memory");
		o->trace_cuda = o->trace_ioctl = o->trace_sched = false;
		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (!strcmp(tok, "cuda"))
				o->trace_cuda = true;
			else if (!strcmp(tok, "ioctl"))
				o->trace_ioctl = true;
			else if (!strcmp(tok, "sched"))
				o->trace_sched = true;
			else if (!strcmp(tok, "cupti"))
				o->cupti = true;
			else
				argp_error(state, "unknown source '%s' in --trace (cuda, ioctl, sched, cupti)",
					   tok);
		}
		free(copy);
		if (!o->trace_cuda && !o->trace_ioctl && !o->trace_sched)
			argp_error(state, "--trace needs at least one of cuda, ioctl, sched%s",
				   o->cupti ? " (cupti adds to them)" : "");
		break;
	}
	case OPT_CUPTI:
		o->cupti = true;
		break;
	case OPT_CUPTI_LIB:
		if (!arg[0])
			argp_error(state, "empty --cupti-lib path");
		o->cupti_lib = arg;
		break;
	case OPT_IOCTL_MAJORS:
		o->ioctl_majors = arg;
		break;
	case 'q':
		c->quiet = true;
		break;
	case 'v':
		c->verbose++;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s' (to trace a command, put it after --)", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static char *join_args(int argc, char **argv)
{
	size_t len = 1;
	char *s;
	int i;

	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (i = 0; i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

static int cmd_record(int argc, char **argv, char *cmdline)
{
	struct argp argp = { record_options, record_parse, NULL, record_doc, NULL, NULL, NULL };
	struct cli c = { .rec = { .buffer_size = 64ull << 20, .scenario = "trace", .trace_cuda = true,
				  .trace_ioctl = true, .trace_sched = true } };
	int i, nopt = argc, status, modes;

	/* everything after "--" is the command to run, untouched by our parser */
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			nopt = i;
			c.rec.cmd = argv + i + 1;
			break;
		}
	}
	if (parse_cli(&argp, nopt, argv, &c))
		return 2;
	if (c.rec.cmd && !c.rec.cmd[0]) {
		fprintf(stderr, "gtrace-bpf: nothing after --: give the command to trace\n");
		return 2;
	}
	if (c.rec.cupti_lib && !c.rec.cupti) {
		fprintf(stderr, "gtrace-bpf: --cupti-lib needs --cupti\n");
		return 2;
	}
	modes = c.rec.all + (c.rec.npids > 0) + (c.rec.cmd != NULL);
	if (modes != 1) {
		fprintf(stderr, "gtrace-bpf: %s\n", modes ? "choose one of --all, -p PID and -- CMD" :
			"nothing to trace: give --all, -p PID or -- CMD (see --help)");
		return 2;
	}
	gt_log_level = c.quiet ? GT_LOG_WARN : GT_LOG_INFO + c.verbose;
	c.rec.quiet = c.quiet;
	c.rec.cmdline = cmdline;
	status = record__run(&c.rec);
	free(c.rec.pids);
	free(c.rec.libcuda);
	return status;
}

/* The one trace file argument of dump, export and stats. */
static error_t trace_file_arg(int key, char *arg, struct argp_state *state, const char **path)
{
	switch (key) {
	case ARGP_KEY_ARG:
		if (*path)
			argp_error(state, "one trace file at a time");
		*path = arg;
		return 0;
	case ARGP_KEY_END:
		if (!*path)
			argp_error(state, "no trace file given");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const struct argp_option dump_options[] = {
	{ "summary", OPT_SUMMARY, NULL, 0, "Counts per API and the drop counters instead of events", 0 },
	{ 0 },
};

static const char dump_doc[] =
"Print the calls of a trace file, one JSON object per line (docs/FORMAT.md).\n"
"\n"
"EXAMPLES:\n"
"  gtrace-bpf dump run.gtrace | jq 'select(.type==\"launch\") | .kernel'\n"
"  gtrace-bpf dump --summary run.gtrace";

static error_t dump_parse(int key, char *arg, struct argp_state *state)
{
	struct dump_opts *o = state->input;

	switch (key) {
	case OPT_SUMMARY:
		o->summary = true;
		break;
	default:
		return trace_file_arg(key, arg, state, &o->path);
	}
	return 0;
}

static int cmd_dump(int argc, char **argv)
{
	struct argp argp = { dump_options, dump_parse, "FILE", dump_doc, NULL, NULL, NULL };
	struct dump_opts o = { .out = stdout, .err = stderr };

	if (parse_cli(&argp, argc, argv, &o))
		return 2;
	return dump__run(&o);
}

static const char census_doc[] =
"Run a command and count every exported cu* function of libcuda it calls,\n"
"marking the ones the recorder does not probe.\n"
"\n"
"USAGE: gtrace-bpf census [--libcuda PATH] [--functions LIST] -- CMD [ARGS...]";

static const struct argp_option census_options[] = {
	{ "libcuda", OPT_LIBCUDA, "PATH", 0, "libcuda file to count (default: the driver's)", 0 },
	{ "functions", OPT_FUNCTIONS, "LIST", 0,
	  "Count only these functions (comma-separated): a bare counting uprobe, the floor "
	  "any uprobe tracer pays", 0 },
	{ 0 },
};

static error_t census_parse(int key, char *arg, struct argp_state *state)
{
	struct census_opts *o = state->input;
	void *p;

	switch (key) {
	case OPT_LIBCUDA:
		p = realloc(o->libcuda, (o->nlibcuda + 1) * sizeof(*o->libcuda));
		if (!p)
			argp_failure(state, 1, ENOMEM, "out of memory");
		o->libcuda = p;
		o->libcuda[o->nlibcuda++] = arg;
		break;
	case OPT_FUNCTIONS:
		o->functions = arg;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s' (put the command after --)", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static int cmd_census(int argc, char **argv)
{
	struct argp argp = { census_options, census_parse, NULL, census_doc, NULL, NULL, NULL };
	struct census_opts o = { 0 };
	int i, nopt = argc, status;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			nopt = i;
			o.cmd = argv + i + 1;
			break;
		}
	}
	if (parse_cli(&argp, nopt, argv, &o))
		return 2;
	if (!o.cmd || !o.cmd[0]) {
		fprintf(stderr, "gtrace-bpf: census needs a command after --\n");
		return 2;
	}
	status = census__run(&o);
	free(o.libcuda);
	return status;
}

static const struct argp_option export_options[] = {
	{ "format", 'f', "FORMAT", 0, "perfetto (default), json or csv", 0 },
	{ "output", 'o', "OUT", 0, "Output file (default: FILE with .pftrace/.json/.csv; - for stdout)", 0 },
	{ "force", OPT_FORCE, NULL, 0, "Replace OUT if it exists", 0 },
	{ 0 },
};

static const char export_doc[] =
"Export a trace as a timeline or a table.\n"
"\n"
"EXAMPLES:\n"
"  gtrace-bpf export run.gtrace                 # run.pftrace: open it in ui.perfetto.dev\n"
"  gtrace-bpf export run.gtrace -f json -o -    # Chrome trace JSON on stdout\n"
"  gtrace-bpf export run.gtrace -f csv -o run.csv";

static error_t export_parse(int key, char *arg, struct argp_state *state)
{
	struct export_opts *o = state->input;

	switch (key) {
	case 'f':
		if (!strcmp(arg, "perfetto"))
			o->format = EXPORT_PERFETTO;
		else if (!strcmp(arg, "json"))
			o->format = EXPORT_JSON;
		else if (!strcmp(arg, "csv"))
			o->format = EXPORT_CSV;
		else
			argp_error(state, "unknown format '%s' (perfetto, json or csv)", arg);
		break;
	case 'o':
		o->output = arg;
		break;
	case OPT_FORCE:
		o->force = true;
		break;
	default:
		return trace_file_arg(key, arg, state, &o->path);
	}
	return 0;
}

static int cmd_export(int argc, char **argv)
{
	struct argp argp = { export_options, export_parse, "FILE", export_doc, NULL, NULL, NULL };
	struct export_opts o = { .format = EXPORT_PERFETTO, .err = stderr };

	if (parse_cli(&argp, argc, argv, &o))
		return 2;
	return export__run(&o);
}

static const struct argp_option stats_options[] = {
	{ "report", 'r', "REPORT[,...]", 0, "Reports to print (default: all)", 0 },
	{ "format", OPT_FORMAT, "FORMAT", 0, "table (default), csv or json", 0 },
	{ "timeunit", OPT_TIMEUNIT, "UNIT", 0, "ns (default), us, ms or s", 0 },
	{ 0 },
};

/* "%s" is the list of reports, from the report table */
static const char stats_doc_fmt[] =
"Summary reports of a trace, modelled on nsys stats.\n"
"\n"
"REPORTS (default: all, in this order):\n"
"  %s\n"
"\n"
"EXAMPLES:\n"
"  gtrace-bpf stats run.gtrace\n"
"  gtrace-bpf stats run.gtrace -r cuda_api_sum --timeunit us\n"
"  gtrace-bpf stats run.gtrace -r cuda_launch_sum,cuda_sync_sum --format csv";

/* The report names joined with sep, from the report table; NULL when out of
 * memory. */
static char *stats_report_list(const char *sep)
{
	size_t len = 1;
	char *list;

	for (int i = 0; stats_report_names[i]; i++)
		len += strlen(stats_report_names[i]) + strlen(sep);
	list = calloc(1, len);
	if (!list)
		return NULL;
	for (int i = 0; stats_report_names[i]; i++) {
		if (i)
			strcat(list, sep);
		strcat(list, stats_report_names[i]);
	}
	return list;
}

static error_t stats_parse(int key, char *arg, struct argp_state *state)
{
	struct stats_opts *o = state->input;

	switch (key) {
	case 'r': {
		char bad[64];

		if (stats__check_reports(arg, bad, sizeof(bad))) {
			char *list = stats_report_list(", ");

			argp_error(state, "unknown report '%s' (%s)", bad, list ? list : "see --help");
			free(list);
		}
		o->reports = arg;
		break;
	}
	case OPT_FORMAT:
		if (!strcmp(arg, "table"))
			o->format = STATS_TABLE;
		else if (!strcmp(arg, "csv"))
			o->format = STATS_CSV;
		else if (!strcmp(arg, "json"))
			o->format = STATS_JSON;
		else
			argp_error(state, "unknown format '%s' (table, csv or json)", arg);
		break;
	case OPT_TIMEUNIT:
		if (strcmp(arg, "ns") && strcmp(arg, "us") && strcmp(arg, "ms") && strcmp(arg, "s"))
			argp_error(state, "unknown time unit '%s' (ns, us, ms or s)", arg);
		o->timeunit = arg;
		break;
	default:
		return trace_file_arg(key, arg, state, &o->path);
	}
	return 0;
}

static char *stats_doc(void)
{
	char *list = stats_report_list("\n  "), *doc = NULL;

	if (list && asprintf(&doc, stats_doc_fmt, list) < 0)
		doc = NULL;
	free(list);
	return doc;
}

static int cmd_stats(int argc, char **argv)
{
	char *doc = stats_doc();
	struct argp argp = { stats_options, stats_parse, "FILE", doc, NULL, NULL, NULL };
	struct stats_opts o = { .format = STATS_TABLE, .timeunit = "ns", .out = stdout, .err = stderr };
	int status;

	if (!doc) {
		fprintf(stderr, "gtrace-bpf: out of memory\n");
		return 1;
	}
	status = parse_cli(&argp, argc, argv, &o) ? 2 : stats__run(&o);
	free(doc);
	return status;
}

static const struct argp_option merge_options[] = {
	{ "output", 'o', "OUT", 0, "Merged trace (default: TRACE with .gtrace replaced by _merged.gtrace)", 0 },
	{ "force", OPT_FORCE, NULL, 0, "Replace OUT if it exists", 0 },
	{ "quiet", 'q', NULL, 0, "No summary line", 0 },
	{ 0 },
};

static const char merge_doc[] =
"Merge the GPU-side records of the CUPTI agent into a trace: every kernel,\n"
"copy and set linked to the libcuda call that caused it. `gtrace-bpf --cupti`\n"
"does this by itself; this command is for spool files kept or copied by hand.\n"
"\n"
"SPOOL: a gtrace-cupti.PID.spool file, or a directory (every *.spool in it).\n"
"\n"
"EXAMPLES:\n"
"  gtrace-bpf merge run.gtrace /tmp/gtrace-cupti.Ab12Cd   # run_merged.gtrace\n"
"  gtrace-bpf merge run.gtrace gtrace-cupti.4242.spool -o run+gpu.gtrace";

struct merge_cli {
	struct merge_opts o;
	const char **spools;
	size_t nspools;
	bool quiet;
};

static error_t merge_parse(int key, char *arg, struct argp_state *state)
{
	struct merge_cli *c = state->input;
	void *p;

	switch (key) {
	case 'o':
		if (!arg[0])
			argp_error(state, "empty output name");
		c->o.output = arg;
		break;
	case OPT_FORCE:
		c->o.force = true;
		break;
	case 'q':
		c->quiet = true;
		break;
	case ARGP_KEY_ARG:
		if (!c->o.trace) {
			c->o.trace = arg;
			break;
		}
		p = realloc(c->spools, (c->nspools + 1) * sizeof(*c->spools));
		if (!p)
			argp_failure(state, 1, ENOMEM, "out of memory");
		c->spools = p;
		c->spools[c->nspools++] = arg;
		break;
	case ARGP_KEY_END:
		if (!c->o.trace)
			argp_error(state, "no trace file given");
		if (!c->nspools)
			argp_error(state, "no spool file or directory given");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static int cmd_merge(int argc, char **argv)
{
	struct argp argp = { merge_options, merge_parse, "TRACE SPOOL...", merge_doc, NULL, NULL, NULL };
	struct merge_cli c = { 0 };
	char *out = NULL;
	int err;

	if (parse_cli(&argp, argc, argv, &c)) {
		free(c.spools);
		return 2;
	}
	if (!c.o.output) {
		out = merge__default_output(c.o.trace);
		if (!out) {
			fprintf(stderr, "gtrace-bpf: out of memory\n");
			free(c.spools);
			return 1;
		}
		c.o.output = out;
	}
	c.o.spools = c.spools;
	c.o.nspools = c.nspools;
	if (c.quiet)
		gt_log_level = GT_LOG_WARN;
	err = merge__run(&c.o, NULL);
	free(out);
	free(c.spools);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	char *cmdline = join_args(argc, argv), prog[64];
	int status;

	/* one scheme for every command: 2 for a bad command line (argp's own
	 * default is 64), 1 for a failure while working */
	argp_err_exit_status = 2;

	/* sub-commands parse argv + 1: their messages say "gtrace-bpf dump: ..." */
	if (argc > 1 && (!strcmp(argv[1], "dump") || !strcmp(argv[1], "export") ||
			 !strcmp(argv[1], "stats") || !strcmp(argv[1], "merge") ||
			 !strcmp(argv[1], "census"))) {
		snprintf(prog, sizeof(prog), "gtrace-bpf %s", argv[1]);
		argv[1] = prog;
	}
	if (argc > 1 && !strcmp(argv[1], "gtrace-bpf dump")) {
		status = cmd_dump(argc - 1, argv + 1);
	} else if (argc > 1 && !strcmp(argv[1], "gtrace-bpf export")) {
		status = cmd_export(argc - 1, argv + 1);
	} else if (argc > 1 && !strcmp(argv[1], "gtrace-bpf stats")) {
		status = cmd_stats(argc - 1, argv + 1);
	} else if (argc > 1 && !strcmp(argv[1], "gtrace-bpf merge")) {
		status = cmd_merge(argc - 1, argv + 1);
	} else if (argc > 1 && !strcmp(argv[1], "gtrace-bpf census")) {
		status = cmd_census(argc - 1, argv + 1);
	} else if (argc > 1 && !strcmp(argv[1], "record")) {
		argv[1] = argv[0];	/* "gtrace-bpf record" reads as gtrace-bpf itself */
		status = cmd_record(argc - 1, argv + 1, cmdline);
	} else {
		status = cmd_record(argc, argv, cmdline);
	}
	free(cmdline);
	return status;
}
