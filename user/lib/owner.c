// SPDX-License-Identifier: MIT
/* Whom written files belong to: owner.h. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/owner.h"

static struct {
	bool set;
	uid_t uid;
	gid_t gid;
	bool cmd_as_root;	/* --as-root */
} owner;

/* A decimal id of at most 10 digits, not 0 and not -1 as an id. */
static bool parse_id(const char *s, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || !*s || strlen(s) > 10 || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v == 0 || v >= 0xffffffffUL)
		return false;
	*out = v;
	return true;
}

bool owner__from_sudo(void)
{
	unsigned long u, g;

	if (geteuid() != 0 || !parse_id(getenv("SUDO_UID"), &u) || !parse_id(getenv("SUDO_GID"), &g))
		return false;
	owner__set((uid_t)u, (gid_t)g);
	return true;
}

void owner__set(uid_t uid, gid_t gid)
{
	owner.set = true;
	owner.uid = uid;
	owner.gid = gid;
}

void owner__clear(void)
{
	owner.set = false;
}

bool owner__get(uid_t *uid, gid_t *gid)
{
	if (owner.set) {
		*uid = owner.uid;
		*gid = owner.gid;
	}
	return owner.set;
}

int owner__give(int fd)
{
	if (!owner.set || geteuid() != 0)
		return 0;
	return fchown(fd, owner.uid, owner.gid) ? -errno : 0;
}

int owner__lookup(const char *user, uid_t *uid, gid_t *gid)
{
	struct passwd pw, *p = NULL;
	char buf[4096];
	unsigned long n;

	if (getpwnam_r(user, &pw, buf, sizeof(buf), &p) || !p) {
		if (!parse_id(user, &n) || getpwuid_r((uid_t)n, &pw, buf, sizeof(buf), &p) || !p)
			return -ENOENT;
	}
	*uid = p->pw_uid;
	*gid = p->pw_gid;
	return 0;
}

void owner__cmd_as_root(void)
{
	owner.cmd_as_root = true;
}

int owner__cmd_user(struct owner_user *u)
{
	struct passwd pw, *p = NULL;
	char buf[4096];
	int n;

	if (!owner.set || owner.cmd_as_root || geteuid() != 0)
		return 0;
	memset(u, 0, sizeof(*u));
	if (getpwuid_r(owner.uid, &pw, buf, sizeof(buf), &p) || !p)
		return -ENOENT;
	u->uid = owner.uid;
	u->gid = owner.gid;
	if (snprintf(u->name, sizeof(u->name), "%s", p->pw_name) >= (int)sizeof(u->name) ||
	    snprintf(u->home, sizeof(u->home), "%s", p->pw_dir) >= (int)sizeof(u->home) ||
	    snprintf(u->shell, sizeof(u->shell), "%s", p->pw_shell) >= (int)sizeof(u->shell))
		return -ENAMETOOLONG;
	n = (int)(sizeof(u->groups) / sizeof(u->groups[0]));
	if (getgrouplist(p->pw_name, owner.gid, u->groups, &n) < 0)
		n = (int)(sizeof(u->groups) / sizeof(u->groups[0]));	/* the first 64 */
	u->ngroups = n;
	return 1;
}

int owner__become(const struct owner_user *u)
{
	if (setgroups((size_t)u->ngroups, u->groups) || setgid(u->gid) || setuid(u->uid))
		return -errno;
	/* no way back */
	if (setuid(0) == 0)
		return -EPERM;
	if (setenv("HOME", u->home, 1) || setenv("USER", u->name, 1) || setenv("LOGNAME", u->name, 1) ||
	    (u->shell[0] && setenv("SHELL", u->shell, 1)))
		return -errno;
	return 0;
}
