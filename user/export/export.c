// SPDX-License-Identifier: MIT
/*
 * `gtrace-bpf export FILE -f perfetto|json|csv [-o OUT] [--force]`: opens
 * the trace, chooses the output, and has the format's writer fill a
 * temporary file next to it, renamed into place only once complete and on
 * disk: an export that fails (disk full, damaged input, Ctrl-C) never
 * leaves a file that looks finished, nor destroys the one it would replace.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "export/fields.h"
#include "export/export.h"
#include "format/trace_file.h"
#include "lib/installer.h"

typedef int (*export_write_fn)(struct trace_reader *r, FILE *out, const char **why);

static const struct {
	const char *ext;	/* of the default output name */
	export_write_fn write;
} formats[] = {
	[EXPORT_PERFETTO] = { ".pftrace", export_perfetto__write },
	[EXPORT_JSON] = { ".json", export_json__write },
	[EXPORT_CSV] = { ".csv", export_csv__write },
};

#define TRACE_EXT ".gtrace"

/* The input's name with its .gtrace replaced by ext (appended when it has
 * none), in the input's directory. */
static char *default_output(const char *path, const char *ext)
{
	size_t n = strlen(path), e = strlen(TRACE_EXT);
	char *out;

	if (n > e && !strcmp(path + n - e, TRACE_EXT) && path[n - e - 1] != '/')
		n -= e;
	if (asprintf(&out, "%.*s%s", (int)n, path, ext) < 0)
		return NULL;
	return out;
}

/* Writes the whole output through a temporary file. Returns 0 or 1 after
 * one line on err. */
static int write_file(struct trace_reader *r, const struct export_opts *o, const char *out,
		      FILE *err)
{
	const char *why = NULL;
	struct installer *in = NULL;
	FILE *f = NULL;
	int fd, rc;

	/* exports hold the command lines and the host name, as the trace
	 * does: owner only, like it (chmod to share one) */
	rc = installer__create(out, "", 0600, &in);
	if (rc == -EPERM && installer__refusal(out)) {
		fprintf(err, "gtrace-bpf: refusing to replace %s: %s\n", out, installer__refusal(out));
		return 1;
	}
	if (rc == -ENOMEM) {
		fprintf(err, "gtrace-bpf: failed to allocate a file name: %s\n", strerror(ENOMEM));
		return 1;
	}
	if (rc) {
		fprintf(err, "gtrace-bpf: cannot write %s: %s\n", out, strerror(-rc));
		return 1;
	}
	/* the installer keeps its descriptor, to sync it before the rename */
	fd = fcntl(installer__fd(in), F_DUPFD_CLOEXEC, 0);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		rc = -errno;
		fprintf(err, "gtrace-bpf: cannot write %s: %s\n", out, strerror(-rc));
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	rc = formats[o->format].write(r, f, &why);
	if (rc) {
		if (ferror(f))
			fprintf(err, "gtrace-bpf: cannot write %s: %s\n", out, strerror(-rc));
		else
			fprintf(err, "gtrace-bpf: failed to export %s: %s\n", o->path,
				why ? why : strerror(-rc));
		goto fail;
	}
	rc = fclose(f) ? -errno : 0;
	f = NULL;
	if (!rc)
		rc = installer__commit(in, o->force);
	if (rc == -EEXIST && !o->force) {
		fprintf(err, "gtrace-bpf: %s exists: use --force to replace it\n", out);
		goto fail;
	}
	if (rc == -EPERM && installer__refusal(out)) {
		fprintf(err, "gtrace-bpf: refusing to replace %s: %s\n", out, installer__refusal(out));
		goto fail;
	}
	if (rc) {
		fprintf(err, "gtrace-bpf: cannot write %s: %s\n", out, strerror(-rc));
		goto fail;
	}
	installer__free(in);
	return 0;
fail:
	if (f)
		fclose(f);
	installer__free(in);
	return 1;
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

int export__run(const struct export_opts *o)
{
	FILE *err = o->err ? o->err : stderr;
	struct trace_reader *r = NULL;
	const char *msg = NULL;
	char *out = NULL;
	struct stat in_st, out_st;
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
	out = o->output ? strdup(o->output) : default_output(o->path, formats[o->format].ext);
	if (!out) {
		fprintf(err, "gtrace-bpf: failed to allocate a file name: %s\n", strerror(ENOMEM));
		goto out;
	}
	/* refused before the work, not after it; the installer catches a file
	 * that appears meanwhile */
	if (!lstat(out, &out_st)) {
		if (!stat(o->path, &in_st) && in_st.st_dev == out_st.st_dev &&
		    in_st.st_ino == out_st.st_ino) {
			fprintf(err, "gtrace-bpf: cannot write %s: it is the input trace\n", out);
			goto out;
		}
		/* --force would not help: say so rather than ask for it */
		if (installer__refusal(out)) {
			fprintf(err, "gtrace-bpf: refusing to replace %s: %s\n", out,
				installer__refusal(out));
			goto out;
		}
		if (!o->force) {
			fprintf(err, "gtrace-bpf: %s exists: use --force to replace it\n", out);
			goto out;
		}
	}
	ret = write_file(r, o, out, err);
out:
	if (!ret && trace_reader__truncated(r))
		fprintf(err, "gtrace-bpf: warning: %s: %s; exported the records before it\n",
			o->path, trace_reader__damage(r));
	trace_reader__close(r);
	free(out);
	return ret;
}
