/* SPDX-License-Identifier: MIT */
/*
 * Whom the files gtrace-bpf writes belong to, and as whom `-- CMD` runs.
 * Under sudo (root, with SUDO_UID and SUDO_GID naming a user other than
 * root) that is the user who ran sudo: their traces, exports and reports
 * stay theirs (still 0600), and the program they trace runs as they would
 * have run it. Otherwise nobody is set and files are the process' own.
 */
#ifndef GTRACE_LIB_OWNER_H
#define GTRACE_LIB_OWNER_H

#include <stdbool.h>
#include <sys/types.h>

/* From sudo's environment, when the process is root: true when a user was
 * found (SUDO_UID/SUDO_GID valid numbers, not 0). */
bool owner__from_sudo(void);
/* The owner from now on (a daemon's --owner USER); owner__clear: none. */
void owner__set(uid_t uid, gid_t gid);
void owner__clear(void);
/* The owner, false when none is set. */
bool owner__get(uid_t *uid, gid_t *gid);
/* Gives fd to the owner when one is set. 0, or a negative errno. */
int owner__give(int fd);
/* USER: a name or a number into uid and gid (its primary group). 0, or
 * -ENOENT when no such user. */
int owner__lookup(const char *user, uid_t *uid, gid_t *gid);

/* Who `-- CMD` runs as under sudo: the owner, with their groups and
 * environment, unless owner__cmd_as_root() was called (--as-root). */
struct owner_user {
	uid_t uid;
	gid_t gid;
	char name[64], home[512], shell[256];
	gid_t groups[64];
	int ngroups;
};
void owner__cmd_as_root(void);
/* In the parent, before the fork: 1 with u filled when CMD is to run as
 * the owner, 0 when as this process, a negative errno when the owner's
 * account cannot be read. */
int owner__cmd_user(struct owner_user *u);
/* In the child, before the exec: groups, group, user and HOME, USER,
 * LOGNAME, SHELL as a login of u would have them. 0 or a negative errno. */
int owner__become(const struct owner_user *u);

#endif
