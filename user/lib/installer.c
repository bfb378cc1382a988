// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/installer.h"

struct installer {
	char *target;		/* the name the file is installed under */
	char *tmp;		/* its temporary name, NULL until mkostemp made it */
	int fd;			/* open on tmp, or -1 */
	bool installed;		/* renamed onto target: tmp is gone */
};

static char *temp_name(const char *target, const char *tag)
{
	const char *slash = strrchr(target, '/');
	char *tmp;
	int n;

	if (slash)
		n = asprintf(&tmp, "%.*s/.%s%s.XXXXXX", (int)(slash - target), target, slash + 1,
			     tag);
	else
		n = asprintf(&tmp, ".%s%s.XXXXXX", target, tag);
	return n < 0 ? NULL : tmp;
}

const char *installer__refusal(const char *target)
{
	struct stat st;

	if (lstat(target, &st))
		return NULL;
	if (S_ISLNK(st.st_mode))
		return "it is a symbolic link";
	if (!S_ISREG(st.st_mode))
		return "it is not a regular file";
	if (st.st_uid != geteuid())
		return "it is owned by another user";
	return NULL;
}

int installer__create(const char *target, const char *tag, mode_t mode, struct installer **out)
{
	struct installer *in = calloc(1, sizeof(*in));
	char *tmp = NULL;
	mode_t mask;
	int err;

	*out = NULL;
	if (!in)
		return -ENOMEM;
	in->fd = -1;
	/* before the work: a long export is not made only to be refused */
	if (installer__refusal(target)) {
		err = -EPERM;
		goto fail;
	}
	in->target = strdup(target);
	tmp = temp_name(target, tag ? tag : "");
	if (!in->target || !tmp) {
		err = -ENOMEM;
		goto fail;
	}
	in->fd = mkostemp(tmp, O_CLOEXEC);
	if (in->fd < 0) {
		/* the template is not a file of ours: nothing to remove */
		err = -errno;
		goto fail;
	}
	in->tmp = tmp;
	tmp = NULL;
	/* umask() is the only way to read the mask; mkostemp applied it to
	 * 0600 already, so the common case does not touch it */
	if (mode != 0600) {
		mask = umask(0);
		umask(mask);
		if (fchmod(in->fd, mode & ~mask)) {
			err = -errno;
			goto fail;
		}
	}
	*out = in;
	return 0;
fail:
	free(tmp);
	installer__free(in);
	return err;
}

int installer__fd(const struct installer *in)
{
	return in->fd;
}

const char *installer__path(const struct installer *in)
{
	return in->tmp;
}

int installer__commit(struct installer *in, bool force)
{
	struct stat st;

	/* on disk before the rename: a crash must not leave an empty file
	 * under the final name */
	if (fsync(in->fd))
		return -errno;
	if (!force) {
		if (!renameat2(AT_FDCWD, in->tmp, AT_FDCWD, in->target, RENAME_NOREPLACE))
			goto done;
		if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
			return -errno;
		/* no RENAME_NOREPLACE here: refuse what is there (a link
		 * too, which rename would replace); only a file created in
		 * the instant between this check and the rename is lost */
		if (!lstat(in->target, &st))
			return -EEXIST;
	} else if (installer__refusal(in->target)) {
		/* what appears between this and the rename only loses its
		 * name: rename writes nothing through it */
		return -EPERM;
	}
	if (rename(in->tmp, in->target))
		return -errno;
done:
	in->installed = true;
	return 0;
}

void installer__free(struct installer *in)
{
	if (!in)
		return;
	if (in->fd >= 0)
		close(in->fd);
	if (in->tmp && !in->installed)
		unlink(in->tmp);
	free(in->tmp);
	free(in->target);
	free(in);
}
