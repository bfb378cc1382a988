// SPDX-License-Identifier: MIT
/*
 * The output files of `gtrace-bpf stats -o OUT` (stats.c writes the
 * reports): the table or JSON in OUT, CSV in one file per report, each
 * under a temporary name until every one is complete.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "stats/stats.h"
#include "stats/stats_int.h"
#include "lib/installer.h"

/* The files of a run: o->output itself, or for csv one per report,
 * BASE_<report>.csv (a ".csv" ending BASE is dropped: "-o run.csv" means
 * run_cuda_api_sum.csv, not run.csv_cuda_api_sum.csv).  Returns 0 or
 * -ENOMEM. */
int stats_files__names(const struct stats_opts *o, const int *sel, int nsel, struct out_file *of,
		       int *nof)
{
	size_t n = strlen(o->output);

	*nof = 0;
	if (o->format != STATS_CSV) {
		of[0].path = strdup(o->output);
		*nof = of[0].path ? 1 : 0;
		return of[0].path ? 0 : -ENOMEM;
	}
	if (n > 4 && !strcmp(o->output + n - 4, ".csv"))
		n -= 4;
	for (int i = 0; i < nsel; i++) {
		if (asprintf(&of[i].path, "%.*s_%s.csv", (int)n, o->output,
			     stats_report_names[sel[i]]) < 0) {
			of[i].path = NULL;
			return -ENOMEM;
		}
		(*nof)++;
	}
	return 0;
}

/* Refuses, before the work, a name that exists (unless force) or that is
 * the input trace.  Returns 0 or 1 after one line on err. */
int stats_files__check(const struct stats_opts *o, const struct out_file *of, int nof, FILE *err)
{
	struct stat in_st, st;

	for (int i = 0; i < nof; i++) {
		if (lstat(of[i].path, &st))
			continue;
		if (!stat(o->path, &in_st) && in_st.st_dev == st.st_dev && in_st.st_ino == st.st_ino) {
			fprintf(err, "gtrace-bpf: cannot write %s: it is the input trace\n", of[i].path);
			return 1;
		}
		if (!o->force) {
			fprintf(err, "gtrace-bpf: %s exists: use --force to replace it\n", of[i].path);
			return 1;
		}
	}
	return 0;
}

/* Creates the temporary file of of, 0600: the reports hold the traced
 * programs' command lines, as private as the trace.  Returns 0 or a
 * negative errno. */
static int out_open(struct out_file *of)
{
	int fd, rc = installer__create(of->path, "", 0600, &of->in);

	if (rc)
		return rc;
	/* the installer keeps its descriptor, to sync it before the rename */
	fd = fcntl(installer__fd(of->in), F_DUPFD_CLOEXEC, 0);
	of->f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!of->f) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
	}
	return rc;
}

void stats_files__free(struct out_file *of, int nof)
{
	for (int i = 0; i < nof; i++) {
		if (of[i].f)
			fclose(of[i].f);
		installer__free(of[i].in);
		free(of[i].path);
	}
}

/* Writes the reports into the files of o->output and installs them.
 * Returns 0 or 1 after one line on err. */
int stats_files__write(const struct stats_opts *o, struct out_file *of, int nof, const int *sel,
		       int nsel, struct stats_run *run, const char *damage, FILE *err)
{
	int rc, i;

	for (i = 0; i < nof; i++) {
		rc = out_open(&of[i]);
		/* csv: one report per file; table and json: all in one */
		if (!rc)
			rc = nof > 1 ? stats__write_reports(o, of[i].f, &sel[i], 1, run, damage)
				     : stats__write_reports(o, of[i].f, sel, nsel, run, damage);
		if (!rc)
			rc = fclose(of[i].f) ? -errno : 0;
		of[i].f = NULL;
		if (rc) {
			fprintf(err, "gtrace-bpf: cannot write %s: %s\n", of[i].path, strerror(-rc));
			return 1;
		}
	}
	for (i = 0; i < nof; i++) {
		rc = installer__commit(of[i].in, o->force);
		if (rc == -EEXIST && !o->force) {
			fprintf(err, "gtrace-bpf: %s exists: use --force to replace it\n", of[i].path);
			return 1;
		}
		if (rc) {
			fprintf(err, "gtrace-bpf: cannot write %s: %s\n", of[i].path, strerror(-rc));
			return 1;
		}
	}
	/* the paths written */
	for (i = 0; o->said && i < nof; i++)
		fprintf(o->said, "wrote %s\n", of[i].path);
	return 0;
}
