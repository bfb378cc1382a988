// SPDX-License-Identifier: MIT
/* gtrace-bpf export FILE [-f perfetto|json|csv] [-o OUT] [--force] [--findings] */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "analyze/analyze.h"
#include "export/export.h"
#include "lib/log.h"
#include "lib/cmp.h"

enum { OPT_FINDINGS = 0x100, OPT_SPLIT };

/* -f's and -o's help name the formats of the format table (export/format_table.h). */
static char format_doc[256], output_doc[256];

static struct argp_option export_options[] = {
	{ "format", 'f', "FORMAT", 0, format_doc, 0 },
	{ "output", 'o', "OUT", 0, output_doc, 0 },
	{ "force", CLI_OPT_FORCE, NULL, 0, "Replace OUT if it exists", 0 },
	{ "findings", OPT_FINDINGS, NULL, 0, "Add the findings of gtrace-bpf analyze: a lane per "
	  "rule in each process, with the examples where they happened (perfetto and json)", 0 },
	{ "split", OPT_SPLIT, "SIZE", 0, "Perfetto in parts of at most SIZE (e.g. 1G; 1M at least): "
	  "OUT-001.pftrace, OUT-002.pftrace, ..., each a time-contiguous trace of its own", 0 },
	{ 0 },
};

/* "perfetto (default), json or csv"; "Output file (default: FILE with
 * .pftrace/.json/.csv; - for stdout)". */
static void format_docs(void)
{
	const char *const *names = export__format_names();
	size_t n = 0, a = 0, b = 0;

	while (names[n])
		n++;
	for (size_t i = 0; i < n; i++) {
		a += (size_t)snprintf(format_doc + a, a < sizeof(format_doc) ? sizeof(format_doc) - a : 0, "%s%s%s",
				      !i ? "" : i + 1 == n ? " or " : ", ", names[i], !i ? " (default)" : "");
		b += (size_t)snprintf(output_doc + b, b < sizeof(output_doc) ? sizeof(output_doc) - b : 0, "%s%s",
				      !i ? "Output file (default: FILE with " : "/", export__format_ext(i));
	}
	if (b < sizeof(output_doc))
		snprintf(output_doc + b, sizeof(output_doc) - b, "; - for stdout)");
}

static const char export_doc[] =
"Export a trace as a timeline or a table.\n"
"\n"
"EXAMPLES:\n"
"  gtrace-bpf export run.gtrace                 # run.pftrace: open it in ui.perfetto.dev\n"
"  gtrace-bpf export run.gtrace --findings      # with analyze's findings on the timeline\n"
"  gtrace-bpf export run.gtrace -f json -o -    # Chrome trace JSON on stdout\n"
"  gtrace-bpf export run.gtrace -o run.csv      # the format from the extension\n"
"  gtrace-bpf export job.gtrace --split 1G      # job-001.pftrace, ...: under Perfetto's 4 GB\n"
"\v"
"The format follows OUT's extension (.pftrace or .perfetto-trace, .json, .csv)\n"
"unless -f says otherwise; -f and an extension that disagree: -f, and a\n"
"warning. The path written is said on stdout.";

struct export_cmd {
	struct export_opts o;
	bool findings;
	bool format_set;	/* -f given */
};

static error_t export_parse(int key, char *arg, struct argp_state *state)
{
	struct export_cmd *x = state->input;
	struct export_opts *o = &x->o;

	switch (key) {
	case 'f':
		o->format = (enum export_format)cli__choose(state, "format", arg, export__format_names());
		x->format_set = true;
		break;
	case OPT_FINDINGS:
		x->findings = true;
		break;
	case OPT_SPLIT:
		if (cli__parse_u64(arg, &o->split, true) || o->split < EXPORT_SPLIT_MIN)
			argp_error(state, "invalid --split '%s' (a size of 1M or more, e.g. 1G)", arg);
		break;
	case ARGP_KEY_END: {
		/* the format follows OUT's extension unless -f says; -f and an
		 * extension that disagree: -f wins, and a warning says so */
		int ext = o->output && strcmp(o->output, "-") ? export__format_of_name(o->output) : -1;

		if (!x->format_set && ext >= 0)
			o->format = (enum export_format)ext;
		else if (x->format_set && ext >= 0 && ext != (int)o->format)
			pr_warn("-f %s writes %s into %s, whose extension says %s", export__format_names()[o->format],
				export__format_names()[o->format], o->output, export__format_names()[ext]);
		if (x->findings && o->format == EXPORT_CSV)
			argp_error(state, "--findings goes on a timeline: -f perfetto or json");
		if (o->split && o->format != EXPORT_PERFETTO)
			argp_error(state, "--split splits a Perfetto timeline: -f perfetto");
		if (o->split && o->output && !strcmp(o->output, "-"))
			argp_error(state, "--split writes files, not standard output");
		return cli__trace_file_arg(key, arg, state, &o->path);
	}
	default:
		if (cli__output_arg(key, arg, state, true, &o->output, &o->force) == ARGP_ERR_UNKNOWN)
			return cli__trace_file_arg(key, arg, state, &o->path);
	}
	return 0;
}

static int cmp_finding(const void *pa, const void *pb)
{
	const struct export_finding *a = pa, *b = pb;
	int c = strcmp(a->rule, b->rule);

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (c)
		return c;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/* The examples of the processes' findings (their ranges' repeat them), for
 * export__set_findings.  Returns 0 or -ENOMEM. */
static int findings_of(const struct analyze_result *r, struct export_finding **out, size_t *n)
{
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < r->nscopes; i++)
		for (size_t k = 0; r->scopes[i].kind != AZ_SCOPE_RANGE && k < r->scopes[i].nfindings; k++)
			cap += r->scopes[i].findings[k].nexamples;
	if (!cap)
		return 0;
	*out = calloc(cap, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (size_t i = 0; i < r->nscopes; i++) {
		const struct az_scope *s = &r->scopes[i];

		for (size_t k = 0; s->kind != AZ_SCOPE_RANGE && k < s->nfindings; k++) {
			const struct az_finding *f = &s->findings[k];

			for (uint32_t e = 0; e < f->nexamples; e++)
				(*out)[(*n)++] = (struct export_finding){
					.pid = s->pid, .tid = f->examples[e].tid, .ts = f->examples[e].ts,
					.dur = f->examples[e].dur, .rule = f->id,
					.severity = az_severity__name(f->severity), .summary = f->summary,
					.fix = f->fix, .what = f->examples[e].what, .cost_ns = f->cost_ns,
				};
		}
	}
	cmp__sort(*out, *n, sizeof(**out), cmp_finding);
	return 0;
}

int cmd_export(int argc, char **argv, const char *cmdline)
{
	struct argp argp = { export_options, export_parse, "FILE", export_doc, NULL, NULL, NULL };
	struct export_cmd x = { .o = { .format = EXPORT_PERFETTO, .err = stderr, .said = stdout } };
	struct analyze_opts ao = { 0 };
	struct analyze_result *r = NULL;
	struct export_finding *f = NULL;
	size_t n = 0;
	int status;

	format_docs();

	(void)cmdline;
	if (cli__parse(&argp, argc, argv, &x))
		return 2;
	if (x.findings) {
		status = analyze__file(x.o.path, &ao, NULL, &r, stderr);
		if (status)
			return status;
		if (findings_of(r, &f, &n)) {
			pr_err("failed to export %s: %s", x.o.path, strerror(ENOMEM));
			analyze_result__free(r);
			return 1;
		}
		export__set_findings(f, n);
	}
	status = export__run(&x.o);
	export__set_findings(NULL, 0);
	free(f);
	analyze_result__free(r);
	return status;
}
