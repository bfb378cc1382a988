/* SPDX-License-Identifier: MIT */
/*
 * --cgroup PATH: a recording scoped to one cgroup v2 directory and the
 * cgroups below it (a container, a systemd unit, a batch job). The BPF
 * filter compares the current task's ancestor at the cgroup's depth with
 * the cgroup's id (bpf/common.bpf.h); this module finds the directory,
 * checks that it is a cgroup v2 one, gives its id and depth, and answers
 * "is this process in it" for the recorder's own scans of /proc.
 */
#ifndef GTRACE_CGROUP_TARGET_H
#define GTRACE_CGROUP_TARGET_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif

struct cgroup_target {
	char path[PATH_MAX];	/* the directory, absolute */
	char rel[PATH_MAX];	/* the same below the cgroup2 mount: "/" for its root,
				 * "/system.slice/x.service"; as /proc/PID/cgroup says it */
	char mount[PATH_MAX];	/* the cgroup2 mount it is under */
	uint64_t id;		/* the kernel's cgroup id (the directory's kernfs inode) */
	int level;		/* its depth: the root 0, each directory below it 1 more */
};

/*
 * From the text of /proc/self/mountinfo: the mount point of the first
 * cgroup2 file system into mnt (octal escapes such as \040 decoded).
 * Returns 0, or -ENOENT when none is mounted.
 */
int cgroup_target__mount_from(FILE *mountinfo, char *mnt, size_t len);

/*
 * Finds ARG: an absolute path, or one relative to the cgroup2 mount
 * ("system.slice/docker-1234.scope"); symbolic links are resolved, the
 * directory must be on a cgroup v2 file system; its id and depth are
 * read. The depth is counted from the hierarchy's root, which only a
 * process of the initial cgroup namespace sees: in a namespace of its own
 * (inside a container) it is refused. Returns 0, or a negative
 * errno after writing one line of why into err (a cgroup v1 directory
 * names the v2 mount to use instead).
 */
int cgroup_target__resolve(const char *arg, struct cgroup_target *t, char *err, size_t errlen);

/*
 * From the text of /proc/PID/cgroup: whether its cgroup v2 line ("0::/a/b")
 * is rel or below it. false without such a line.
 */
bool cgroup_target__holds(const struct cgroup_target *t, FILE *proc_cgroup);

/* The same for a running process: false when it is gone. */
bool cgroup_target__holds_pid(const struct cgroup_target *t, pid_t pid);

/*
 * The path for the trace header's options and a stage's status: bytes
 * other than printable ASCII, spaces, '%', '=', '"' and '\' as %XX (a word
 * with nothing to quote in JSON). Returns buf.
 */
char *cgroup_target__escape(const char *path, char *buf, size_t len);

#endif
