// SPDX-License-Identifier: MIT
/* --cgroup PATH: finding and checking the cgroup v2 directory (cgroup_target.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include "record/procs/cgroup_target.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

/* The mount point and root (fields 5 and 4) of the first cgroup2 line. */
static int mount_and_root(FILE *f, char *mnt, size_t len, char *root, size_t rlen)
{
	char line[4096];

	while (fgets(line, sizeof(line), f)) {
		char *field[6], *save = NULL, *sep, *tok;
		int n = 0;

		/* the file system type follows the " - " after the optional fields */
		sep = strstr(line, " - ");
		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		*sep = 0;
		for (tok = strtok_r(line, " ", &save); tok && n < 6; tok = strtok_r(NULL, " ", &save))
			field[n++] = tok;
		if (n < 5)
			continue;
		unescape(field[3]);
		unescape(field[4]);
		if (strlen(field[4]) >= len || strlen(field[3]) >= rlen)
			continue;
		strcpy(mnt, field[4]);
		strcpy(root, field[3]);
		return 0;
	}
	return -ENOENT;
}

int cgroup_target__mount_from(FILE *mountinfo, char *mnt, size_t len)
{
	char root[PATH_MAX];

	return mount_and_root(mountinfo, mnt, len, root, sizeof(root));
}

/* The cgroup id: the handle name_to_handle_at gives a kernfs directory is
 * its 64-bit id (the same as the inode number on 64-bit kernels). */
static int cgroup_id_of(const char *path, uint64_t *id)
{
	union {
		struct file_handle fh;
		char space[sizeof(struct file_handle) + 64];
	} h;
	int mount_id;

	h.fh.handle_bytes = 64;
	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0))
		return -errno;
	if (h.fh.handle_bytes < sizeof(*id))
		return -EPROTO;
	memcpy(id, h.fh.f_handle, sizeof(*id));
	return 0;
}

/* Whether this process is in a cgroup namespace other than the initial
 * one, whose inode number is fixed (PROC_CGROUP_INIT_INO): there the
 * depths it sees are not the kernel's. */
static bool own_namespace_nested(void)
{
	struct stat st;

	if (stat("/proc/self/ns/cgroup", &st))
		return false;	/* a kernel without cgroup namespaces */
	return st.st_ino != 0xEFFFFFFBu;
}

int cgroup_target__resolve(const char *arg, struct cgroup_target *t, char *err, size_t errlen)
{
	char root[PATH_MAX], joined[2 * PATH_MAX + 2];
	struct statfs sf;
	struct stat st;
	size_t ml;
	FILE *f;
	int e;

	memset(t, 0, sizeof(*t));
	if (!arg || !arg[0]) {
		snprintf(err, errlen, "--cgroup needs a path");
		return -EINVAL;
	}
	f = fopen("/proc/self/mountinfo", "re");
	e = f ? mount_and_root(f, t->mount, sizeof(t->mount), root, sizeof(root)) : -errno;
	if (f)
		fclose(f);
	if (arg[0] != '/') {
		if (e) {
			snprintf(err, errlen, "--cgroup %s: no cgroup v2 file system is mounted to look it up in "
				 "(give an absolute path)", arg);
			return e;
		}
		snprintf(joined, sizeof(joined), "%s/%s", t->mount, arg);
	} else {
		snprintf(joined, sizeof(joined), "%s", arg);
	}
	if (!realpath(joined, t->path)) {
		e = -errno;
		snprintf(err, errlen, "--cgroup %s: %s", arg, strerror(-e));
		return e;
	}
	if (stat(t->path, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "--cgroup %s: not a directory", arg);
		return -ENOTDIR;
	}
	if (statfs(t->path, &sf)) {
		e = -errno;
		snprintf(err, errlen, "--cgroup %s: %s", arg, strerror(-e));
		return e;
	}
	if (sf.f_type == CGROUP_SUPER_MAGIC) {
		if (t->mount[0])
			snprintf(err, errlen, "--cgroup %s: a cgroup v1 directory; --cgroup needs cgroup v2 (mounted "
				 "at %s here)", arg, t->mount);
		else
			snprintf(err, errlen, "--cgroup %s: a cgroup v1 directory; --cgroup needs cgroup v2, and none "
				 "is mounted", arg);
		return -EINVAL;
	}
	if (sf.f_type != CGROUP2_SUPER_MAGIC) {
		snprintf(err, errlen, "--cgroup %s: not a cgroup (give a directory of the cgroup v2 file system%s%s)",
			 arg, t->mount[0] ? ", mounted at " : "", t->mount);
		return -EINVAL;
	}
	ml = strlen(t->mount);
	if (!t->mount[0] || strncmp(t->path, t->mount, ml) || (t->path[ml] && t->path[ml] != '/')) {
		/* on a cgroup2 mount other than the first one: its own root */
		snprintf(err, errlen, "--cgroup %s: on a cgroup v2 mount other than %s: give the path under it",
			 arg, t->mount[0] ? t->mount : "the first");
		return -EINVAL;
	}
	/* as /proc/PID/cgroup says it: the mount's root, then the rest */
	snprintf(t->rel, sizeof(t->rel), "%s%s", strcmp(root, "/") ? root : "", t->path + ml);
	if (!t->rel[0])
		strcpy(t->rel, "/");
	if (own_namespace_nested()) {
		snprintf(err, errlen, "--cgroup %s: this recorder runs in a cgroup namespace of its own (a "
			 "container's): run it in the host's", arg);
		return -EINVAL;
	}
	for (const char *p = t->rel; *p; p++)
		t->level += p[0] == '/' && p[1] && p[1] != '/';
	e = cgroup_id_of(t->path, &t->id);
	if (e) {
		snprintf(err, errlen, "--cgroup %s: cannot read its cgroup id: %s", arg, strerror(-e));
		return e;
	}
	return 0;
}

bool cgroup_target__holds(const struct cgroup_target *t, FILE *f)
{
	char line[PATH_MAX + 16];
	size_t rl = strlen(t->rel);

	while (fgets(line, sizeof(line), f)) {
		char *p = line;

		if (strncmp(p, "0::", 3))
			continue;
		p += 3;
		p[strcspn(p, "\n")] = 0;
		if (!strcmp(t->rel, "/"))
			return true;
		return !strncmp(p, t->rel, rl) && (p[rl] == 0 || p[rl] == '/');
	}
	return false;
}

bool cgroup_target__holds_pid(const struct cgroup_target *t, pid_t pid)
{
	char p[64];
	FILE *f;
	bool in;

	snprintf(p, sizeof(p), "/proc/%d/cgroup", (int)pid);
	f = fopen(p, "re");
	if (!f)
		return false;
	in = cgroup_target__holds(t, f);
	fclose(f);
	return in;
}

char *cgroup_target__escape(const char *path, char *buf, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	if (!len)
		return buf;
	for (; *path && n + 1 < len; path++) {
		unsigned char c = (unsigned char)*path;

		if (c > ' ' && c < 0x7f && !strchr("%=\"\\", c)) {
			buf[n++] = (char)c;
		} else {
			if (n + 4 > len)
				break;
			buf[n++] = '%';
			buf[n++] = hex[c >> 4];
			buf[n++] = hex[c & 15];
		}
	}
	buf[n] = 0;
	return buf;
}
