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
#include "lib/vec.h"

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

/* ---- export --split: a Perfetto timeline in parts ---------------------- */

/* A part installed: its name, and what it is, so that a failed export
 * removes only files it made. */
struct part_done {
	char *name;
	dev_t dev;
	ino_t ino;
	off_t size;
};

struct parts_run {
	const struct export_opts *o;
	char *stem;			/* "job" of job.pftrace */
	const char *ext;		/* ".pftrace" */
	struct installer *in;		/* the part being written */
	FILE *f;
	char *name;			/* its name */
	struct part_done *done;
	size_t ndone, cap;
	char why[512];
};

static char *part_name(const struct parts_run *p, size_t k)
{
	char *s;

	return asprintf(&s, "%s-%03zu%s", p->stem, k, p->ext) < 0 ? NULL : s;
}

/* The next part's temporary file, as p->f. */
static int part_open(struct parts_run *p)
{
	struct stat st;
	int fd, rc;

	p->name = part_name(p, p->ndone + 1);
	if (!p->name)
		return -ENOMEM;
	if (installer__refusal(p->name)) {
		snprintf(p->why, sizeof(p->why), "refusing to replace %s: %s", p->name,
			 installer__refusal(p->name));
		return -EPERM;
	}
	if (!p->o->force && !lstat(p->name, &st)) {
		snprintf(p->why, sizeof(p->why), "%s exists: use --force to replace it", p->name);
		return -EEXIST;
	}
	rc = installer__create(p->name, "", 0600, &p->in);
	if (!rc) {
		fd = fcntl(installer__fd(p->in), F_DUPFD_CLOEXEC, 0);
		p->f = fd < 0 ? NULL : fdopen(fd, "w");
		if (!p->f) {
			rc = -errno;
			if (fd >= 0)
				close(fd);
		}
	}
	if (rc)
		snprintf(p->why, sizeof(p->why), "cannot write %s: %s", p->name, strerror(-rc));
	return rc;
}

/* The part written to p->f, complete: on disk under its name. */
static int part_close(struct parts_run *p)
{
	struct stat st;
	int rc = fclose(p->f) ? -errno : 0;

	p->f = NULL;
	if (!rc && fstat(installer__fd(p->in), &st))
		rc = -errno;
	if (!rc && vec__reserve(&p->done, &p->cap, p->ndone, 1, 8))
		rc = -ENOMEM;
	if (!rc)
		rc = installer__commit(p->in, p->o->force);
	if (rc) {
		snprintf(p->why, sizeof(p->why), rc == -EEXIST ? "%s exists: use --force to replace it" :
			 "cannot write %s: %s", p->name, strerror(-rc));
		return rc;
	}
	installer__free(p->in);
	p->in = NULL;
	p->done[p->ndone++] = (struct part_done){ p->name, st.st_dev, st.st_ino, st.st_size };
	p->name = NULL;
	return 0;
}

static int part_next(void *ctx, FILE **f, const char **why)
{
	struct parts_run *p = ctx;
	int rc = part_close(p);

	if (!rc)
		rc = part_open(p);
	*f = p->f;
	*why = rc ? p->why : NULL;
	return rc;
}

/* A failed export: its parts go, those still what it made. */
static void parts_undo(struct parts_run *p)
{
	struct stat st;

	if (p->f)
		fclose(p->f);
	installer__free(p->in);
	for (size_t i = 0; i < p->ndone; i++)
		if (!lstat(p->done[i].name, &st) && S_ISREG(st.st_mode) && st.st_dev == p->done[i].dev &&
		    st.st_ino == p->done[i].ino)
			unlink(p->done[i].name);
}

static int write_parts(struct trace_reader *r, const struct export_opts *o, const char *out, FILE *err)
{
	struct parts_run p = { .o = o, .ext = formats[EXPORT_PERFETTO].ext };
	struct export_parts parts = { .size = o->split, .next = part_next, .ctx = &p };
	const char *why = NULL;
	size_t n = strlen(out), e;
	int rc, ret = 1;

	/* job.pftrace -> job-001.pftrace, …; another name gets the extension */
	e = n > 15 && !strcmp(out + n - 15, ".perfetto-trace") ? 15 :
	    n > strlen(p.ext) && !strcmp(out + n - strlen(p.ext), p.ext) ? strlen(p.ext) : 0;
	if (e)
		p.ext = out + n - e;
	p.stem = strndup(out, n - e);
	if (!p.stem) {
		fprintf(err, "gtrace-bpf: failed to allocate a file name: %s\n", strerror(ENOMEM));
		return 1;
	}
	rc = part_open(&p);
	if (!rc) {
		rc = export_perfetto__write_parts(r, p.f, &parts, &why);
		if (rc && p.f && ferror(p.f))
			fprintf(err, "gtrace-bpf: cannot write %s: %s\n", p.name, strerror(-rc));
		else if (rc)
			fprintf(err, "gtrace-bpf: failed to export %s: %s\n", o->path, why ? why : strerror(-rc));
		else if ((rc = part_close(&p)))
			fprintf(err, "gtrace-bpf: %s\n", p.why);
	} else {
		fprintf(err, "gtrace-bpf: %s\n", p.why);
	}
	if (rc) {
		parts_undo(&p);
		goto out;
	}
	ret = 0;
	for (size_t i = 0; i < p.ndone; i++) {
		if (o->said)
			fprintf(o->said, "wrote %s (perfetto, part %zu of %zu, %lld bytes)\n", p.done[i].name, i + 1,
				p.ndone, (long long)p.done[i].size);
		if ((uint64_t)p.done[i].size > o->split)
			fprintf(err, "gtrace-bpf: warning: %s is %lld bytes, over --split %llu: the events of "
				"one record did not fit\n", p.done[i].name, (long long)p.done[i].size,
				(unsigned long long)o->split);
	}
	if (parts.flows_cut)
		fprintf(err, "gtrace-bpf: %llu arrow%s from a call to its GPU work cross%s a part boundary: drawn "
			"in neither part\n", (unsigned long long)parts.flows_cut, parts.flows_cut == 1 ? "" : "s",
			parts.flows_cut == 1 ? "es" : "");
	{
		/* a part of an earlier, longer export left beside these */
		struct stat st;
		char *next = part_name(&p, p.ndone + 1);

		if (next && !lstat(next, &st))
			fprintf(err, "gtrace-bpf: warning: %s is not of this export (%zu parts): left as it was\n",
				next, p.ndone);
		free(next);
	}
out:
	for (size_t i = 0; i < p.ndone; i++)
		free(p.done[i].name);
	free(p.done);
	free(p.name);
	free(p.stem);
	return ret;
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
	if (o->split) {
		ret = write_parts(r, o, out, err);
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
