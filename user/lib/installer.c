// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/installer.h"
#include "lib/owner.h"

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
	uid_t uid;
	gid_t gid;

	if (lstat(target, &st))
		return NULL;
	if (S_ISLNK(st.st_mode))
		return "it is a symbolic link";
	if (!S_ISREG(st.st_mode))
		return "it is not a regular file";
	if (st.st_uid != geteuid() && !(owner__get(&uid, &gid) && st.st_uid == uid))
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
	/* under sudo: the user's, as if they had written it */
	if ((err = owner__give(in->fd)))
		goto fail;
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

char *installer__sibling_name(const char *path, const char *old, const char *ext)
{
	size_t n = strlen(path), e = strlen(old);
	char *out;

	if (n > e && !strcmp(path + n - e, old) && path[n - e - 1] != '/')
		n -= e;
	if (asprintf(&out, "%.*s%s", (int)n, path, ext) < 0)
		return NULL;
	return out;
}

int installer__check(const char *out, const char *input, bool force, FILE *err)
{
	struct stat in_st, out_st;

	if (lstat(out, &out_st))
		return 0;
	if (input && !stat(input, &in_st) && in_st.st_dev == out_st.st_dev &&
	    in_st.st_ino == out_st.st_ino) {
		fprintf(err, "gtrace-bpf: cannot write %s: it is the input trace\n", out);
		return 1;
	}
	if (installer__refusal(out)) {
		fprintf(err, "gtrace-bpf: refusing to replace %s: %s\n", out, installer__refusal(out));
		return 1;
	}
	if (!force) {
		fprintf(err, "gtrace-bpf: %s exists: use --force to replace it\n", out);
		return 1;
	}
	return 0;
}

int installer__write(const char *out, bool force, installer_fill_fn fill, void *ctx,
		     const char *verb, const char *input, FILE *err)
{
	const char *why = NULL;
	struct installer *in = NULL;
	FILE *f = NULL;
	int fd, rc;

	rc = installer__create(out, "", 0600, &in);
	if (rc == -EPERM && installer__refusal(out)) {
		fprintf(err, "gtrace-bpf: refusing to replace %s: %s\n", out, installer__refusal(out));
		return 1;
	}
	if (rc == -ENOMEM) {
		fprintf(err, "gtrace-bpf: failed to allocate a file name: %s\n", strerror(ENOMEM));
		return 1;
	}
	if (rc) {
		fprintf(err, "gtrace-bpf: cannot write %s: %s\n", out, strerror(-rc));
		return 1;
	}
	/* the installer keeps its descriptor, to sync it before the rename */
	fd = fcntl(installer__fd(in), F_DUPFD_CLOEXEC, 0);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		rc = -errno;
		fprintf(err, "gtrace-bpf: cannot write %s: %s\n", out, strerror(-rc));
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	rc = fill(ctx, f, &why);
	if (rc) {
		if (ferror(f))
			fprintf(err, "gtrace-bpf: cannot write %s: %s\n", out, strerror(-rc));
		else
			fprintf(err, "gtrace-bpf: failed to %s %s: %s\n", verb, input,
				why ? why : strerror(-rc));
		goto fail;
	}
	rc = fclose(f) ? -errno : 0;
	f = NULL;
	if (!rc)
		rc = installer__commit(in, force);
	if (rc == -EEXIST && !force) {
		fprintf(err, "gtrace-bpf: %s exists: use --force to replace it\n", out);
		goto fail;
	}
	if (rc == -EPERM && installer__refusal(out)) {
		fprintf(err, "gtrace-bpf: refusing to replace %s: %s\n", out, installer__refusal(out));
		goto fail;
	}
	if (rc) {
		fprintf(err, "gtrace-bpf: cannot write %s: %s\n", out, strerror(-rc));
		goto fail;
	}
	installer__free(in);
	return 0;
fail:
	if (f)
		fclose(f);
	installer__free(in);
	return 1;
}
