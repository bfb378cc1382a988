// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include "lib/installer.h"
#include "lib/log.h"
#include "record/procs/proc_names.h"
#include "record/output.h"

static void sanitize(char *s)
{
	for (; *s; s++) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '-' || *s == '_'))
			*s = '_';
	}
}

/* --force: the trace is made under a temporary name next to path and
 * renamed over it once its header is on disk, never opened through what is
 * there: O_TRUNC would keep a planted file's owner (who then reads root's
 * trace), write through a link, or block on a FIFO. */
static int create_replacing(const char *path, const struct gt_file_info *info,
			    struct trace_writer_opts *wo, struct trace_writer **w)
{
	struct installer *in;
	int err;

	err = installer__create(path, "", 0600, &in);
	if (err)
		return err;
	/* the temporary file is ours (mkostemp, 0600): written in place */
	wo->force = true;
	err = trace_writer__create(installer__path(in), info, wo, w);
	if (!err) {
		err = installer__commit(in, true);
		if (err) {
			trace_writer__free(*w);
			*w = NULL;
		}
	}
	/* the writer has its own descriptor, which the rename keeps */
	installer__free(in);
	return err;
}

#define NAME_TRIES	16	/* versions tried past the highest, then random names */

/* One past the highest N of "PREFIXvN.gtrace" in the current directory (1
 * when there is none): a directory full of planted names is read once, not
 * tried name by name. */
static int next_version(const char *prefix)
{
	size_t pl = strlen(prefix);
	struct dirent *de;
	long max = 0;
	DIR *d = opendir(".");

	while (d && (de = readdir(d))) {
		char *end;
		long v;

		if (strncmp(de->d_name, prefix, pl) || de->d_name[pl] < '1' || de->d_name[pl] > '9')
			continue;
		errno = 0;
		v = strtol(de->d_name + pl, &end, 10);
		if (!errno && !strcmp(end, ".gtrace") && v > max && v < INT_MAX - NAME_TRIES)
			max = v;
	}
	if (d)
		closedir(d);
	return (int)max + 1;
}

int record_output__create(const struct record_opts *o, const struct gt_file_info *info, char *path,
			  size_t len, struct trace_writer **w)
{
	struct trace_writer_opts wo = { .force = o->force };
	char name[128] = "system", date[16], comm[64], scen[64], prefix[256];
	time_t t = time(NULL);
	struct tm tm;
	int err, v;

	if (o->output) {
		snprintf(path, len, "%s", o->output);
		/* --force would not help: say so rather than ask for it */
		if (installer__refusal(path)) {
			pr_err("refusing to replace %s: %s", path, installer__refusal(path));
			return -EPERM;
		}
		if (o->force)
			err = create_replacing(path, info, &wo, w);
		else
			err = trace_writer__create(path, info, &wo, w);
		if (err == -EPERM && installer__refusal(path))
			pr_err("refusing to replace %s: %s", path, installer__refusal(path));
		else if (err == -EEXIST)
			pr_err("%s exists: use --force to replace it", path);
		else if (err)
			pr_err("cannot create %s: %s", path, strerror(-err));
		return err;
	}
	if (o->cgroup) {
		/* the cgroup's own name: a unit, a container's scope */
		char c[PATH_MAX], *b;
		size_t l;

		snprintf(c, sizeof(c), "%s", o->cgroup);
		for (l = strlen(c); l > 1 && c[l - 1] == '/'; l--)
			c[l - 1] = 0;
		b = strrchr(c, '/');
		b = b ? b + 1 : c;
		if (*b && strcmp(b, ".") && strcmp(b, ".."))
			snprintf(name, sizeof(name), "%s", b);
	} else if (o->cmd) {
		const char *b = strrchr(o->cmd[0], '/');

		snprintf(name, sizeof(name), "%s", b ? b + 1 : o->cmd[0]);
	} else if (o->npids) {
		char p[64];

		snprintf(p, sizeof(p), "/proc/%d/comm", o->pids[0]);
		proc_names__read_proc(p, comm, sizeof(comm));
		if (comm[0])
			snprintf(name, sizeof(name), "%s", comm);
	}
	sanitize(name);
	localtime_r(&t, &tm);
	strftime(date, sizeof(date), "%Y%m%d", &tm);
	snprintf(scen, sizeof(scen), "%s", o->scenario ? o->scenario : "trace");
	sanitize(scen);
	snprintf(prefix, sizeof(prefix), "%s_%s_%s_v", name, scen, date);
	/* the next version; where names are taken that the directory does not
	 * show (a race, another user's planted file we may not list), one with
	 * a random part */
	v = next_version(prefix);
	err = -EEXIST;
	for (int i = 0; i < 2 * NAME_TRIES && err == -EEXIST; i++) {
		unsigned char rnd[3] = { 0 };

		if (i < NAME_TRIES)
			snprintf(path, len, "%s%d.gtrace", prefix, v + i);
		else if (getrandom(rnd, sizeof(rnd), 0) == (ssize_t)sizeof(rnd))
			snprintf(path, len, "%s%d-%02x%02x%02x.gtrace", prefix, v, rnd[0], rnd[1], rnd[2]);
		wo.force = false;
		err = trace_writer__create(path, info, &wo, w);
	}
	if (err == -EEXIST)
		pr_err("cannot find a free name for the trace (%s%d.gtrace and %d more taken): pass -o FILE",
		       prefix, v, 2 * NAME_TRIES - 1);
	else if (err)
		pr_err("cannot create %s: %s", path, strerror(-err));
	return err;
}
