// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "lib/log.h"
#include "record/proc_names.h"
#include "record/output.h"

static void sanitize(char *s)
{
	for (; *s; s++) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '-' || *s == '_'))
			*s = '_';
	}
}

int record_output__create(const struct record_opts *o, const struct gt_file_info *info, char *path,
			  size_t len, struct trace_writer **w)
{
	struct trace_writer_opts wo = { .force = o->force };
	char name[128] = "system", date[16], comm[64];
	time_t t = time(NULL);
	struct tm tm;
	int err, v;

	if (o->output) {
		snprintf(path, len, "%s", o->output);
		err = trace_writer__create(path, info, &wo, w);
		if (err == -EEXIST)
			pr_err("%s exists: use --force to replace it", path);
		else if (err)
			pr_err("cannot create %s: %s", path, strerror(-err));
		return err;
	}
	if (o->cmd) {
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
	for (v = 1; v < 100000; v++) {
		char scen[64];

		snprintf(scen, sizeof(scen), "%s", o->scenario ? o->scenario : "trace");
		sanitize(scen);
		snprintf(path, len, "%s_%s_%s_v%d.gtrace", name, scen, date, v);
		wo.force = false;
		err = trace_writer__create(path, info, &wo, w);
		if (err != -EEXIST)
			break;
	}
	if (err)
		pr_err("cannot create %s: %s", path, strerror(-err));
	return err;
}
