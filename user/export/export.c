// SPDX-License-Identifier: MIT
/*
 * `gtrace-bpf export FILE -f perfetto|json|csv [-o OUT] [--force]`: opens
 * the trace, chooses the output, and has the format's writer fill a
 * temporary file next to it, renamed into place only once complete and on
 * disk: an export that fails (disk full, damaged input, Ctrl-C) never
 * leaves a file that looks finished, nor destroys the one it would replace.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "export/fields.h"
#include "export/export.h"
#include "format/trace_file.h"
#include "lib/installer.h"

typedef int (*export_write_fn)(struct trace_reader *r, FILE *out, const char **why);

/* The formats (export/format_table.h): output names and writers, -f's names. */
static const struct {
	const char *ext;	/* of the default output name */
	export_write_fn write;
} formats[] = {
#define EXPORT_FORMAT(name, id, ext, writer, what) [EXPORT_##name] = { ext, writer },
#include "export/format_table.h"
#undef EXPORT_FORMAT
};

static const char *const format_names[] = {
#define EXPORT_FORMAT(name, id, ext, writer, what) [EXPORT_##name] = id,
#include "export/format_table.h"
#undef EXPORT_FORMAT
	NULL,
};

const char *const *export__format_names(void)
{
	return format_names;
}

const char *export__format_ext(enum export_format f)
{
	return (unsigned)f < sizeof(formats) / sizeof(formats[0]) ? formats[f].ext : NULL;
}

#define TRACE_EXT ".gtrace"

static const struct export_finding *findings;
static size_t nfindings;

void export__set_findings(const struct export_finding *v, size_t n)
{
	findings = v;
	nfindings = v ? n : 0;
}

const struct export_finding *export__findings(size_t *n)
{
	*n = nfindings;
	return findings;
}

struct fill_ctx {
	struct trace_reader *r;
	export_write_fn write;
};

static int fill(void *ctx, FILE *f, const char **why)
{
	struct fill_ctx *c = ctx;

	return c->write(c->r, f, why);
}

static int write_stdout(struct trace_reader *r, const struct export_opts *o, FILE *err)
{
	const char *why = NULL;
	int rc = formats[o->format].write(r, stdout, &why);

	if (!rc && fflush(stdout))
		rc = -errno;
	if (rc && ferror(stdout)) {
		fprintf(err, "gtrace-bpf: cannot write standard output: %s\n", strerror(-rc));
		return 1;
	}
	if (rc) {
		fprintf(err, "gtrace-bpf: failed to export %s: %s\n", o->path,
			why ? why : strerror(-rc));
		return 1;
	}
	return 0;
}

int export__format_of_name(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n > 15 && !strcmp(name + n - 15, ".perfetto-trace"))
		return EXPORT_PERFETTO;
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		size_t e = strlen(formats[i].ext);

		if (n > e && !strcmp(name + n - e, formats[i].ext))
			return (int)i;
	}
	return -1;
}

int export__run(const struct export_opts *o)
{
	FILE *err = o->err ? o->err : stderr;
	struct trace_reader *r = NULL;
	const char *msg = NULL;
	char *out = NULL;
	int rc, ret = 1;

	if ((unsigned)o->format >= sizeof(formats) / sizeof(formats[0])) {
		fprintf(err, "gtrace-bpf: unknown export format %d\n", (int)o->format);
		return 1;
	}
	rc = trace_reader__open(o->path, &r, &msg);
	if (rc) {
		fprintf(err, "gtrace-bpf: cannot read %s: %s\n", o->path, msg ? msg : strerror(-rc));
		return 1;
	}
	fields__set_trace_info(trace_reader__info(r));
	if (o->output && !strcmp(o->output, "-")) {
		ret = write_stdout(r, o, err);
		goto out;
	}
	out = o->output ? strdup(o->output) :
			  installer__sibling_name(o->path, TRACE_EXT, formats[o->format].ext);
	if (!out) {
		fprintf(err, "gtrace-bpf: failed to allocate a file name: %s\n", strerror(ENOMEM));
		goto out;
	}
	/* refused before the work, not after it */
	if (!installer__check(out, o->path, o->force, err)) {
		struct fill_ctx c = { r, formats[o->format].write };

		/* exports hold the command lines and the host name, as the
		 * trace does: owner only, like it (chmod to share one) */
		ret = installer__write(out, o->force, fill, &c, "export", o->path, err);
		if (!ret && o->said)
			fprintf(o->said, "wrote %s (%s)\n", out, export__format_names()[o->format]);
	}
out:
	/* what was read is exported; a damaged input still exits 1 */
	if (!ret)
		ret = trace_reader__report_damage(r, o->path, "exported the records read", err);
	trace_reader__close(r);
	free(out);
	return ret;
}
