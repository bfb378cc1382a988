// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/path_find.h"

int path__executable(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode) || access(path, X_OK))
		return -EACCES;
	return 0;
}

int path__find(const char *prog, const char *path_env, char *out, size_t n)
{
	const char *p;
	int err = -ENOENT, e;

	if (strchr(prog, '/')) {
		if ((size_t)snprintf(out, n, "%s", prog) >= n)
			return -ENAMETOOLONG;
		return path__executable(out);
	}
	if (!prog[0])
		return -ENOENT;
	for (p = path_env ? path_env : "/bin:/usr/bin"; err; p++) {
		size_t len = strcspn(p, ":");

		if ((size_t)snprintf(out, n, "%.*s%s%s", (int)len, p, len ? "/" : "", prog) >= n)
			e = -ENAMETOOLONG;
		else
			e = path__executable(out);
		/* an unreadable candidate does not hide a later one */
		if (!e || (e == -EACCES && err == -ENOENT))
			err = e;
		p += len;
		if (!*p)
			break;
	}
	return err;
}
