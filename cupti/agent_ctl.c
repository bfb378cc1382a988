// SPDX-License-Identifier: MIT
/*
 * The agent's contract with the recorder, apart from CUPTI (agent_ctl.h):
 * where it spools, whether it is wanted now, and the spool file's bounds.
 *
 * Everything here runs in the traced program, as its user, and reads files a
 * recorder running as root made: a file counts only when it is a regular file
 * owned by root or by the directory's owner (the run directory lets anyone
 * create files in it, so a user could plant a "stop" or another's go file).
 * The directory is opened with O_PATH: the run directory gives others no
 * right to list it, only to reach names in it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* F_OFD_GETLK, fallocate */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_ctl.h"
#include "gtrace_cupti.h"
#include "gtrace_events.h"

/* ------------------------------------------------------------ where */

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static enum gt_ctl_mode ctl_run(struct gt_ctl *c, int n);

enum gt_ctl_mode gt_ctl__init(struct gt_ctl *c, pid_t pid)
{
	const char *env = getenv(GT_CUPTI_ENV_DIR), *run = getenv(GT_RUN_DIR_ENV);
	int n;

	memset(c, 0, sizeof(*c));
	c->pid = pid;
	if (env && *env) {
		if (strlen(env) >= sizeof(c->dir))
			return GT_CTL_NONE;
		strcpy(c->dir, env);
		return c->mode = GT_CTL_PRIVATE;
	}
	if (run && *run)
		n = snprintf(c->dir, sizeof(c->dir), "%s/" GT_CUPTI_RUN_SUBDIR, run);
	else
		n = snprintf(c->dir, sizeof(c->dir), "%s", GTRACE_CUPTI_RUN_DIR);
	return ctl_run(c, n);
}

enum gt_ctl_mode gt_ctl__init_dir(struct gt_ctl *c, pid_t pid, const char *dir)
{
	memset(c, 0, sizeof(*c));
	c->pid = pid;
	return ctl_run(c, dir && *dir ? snprintf(c->dir, sizeof(c->dir), "%s", dir) : -1);
}

/* The run directory's mode, c->dir written by a snprintf that returned n. */
static enum gt_ctl_mode ctl_run(struct gt_ctl *c, int n)
{
	if (n < 0 || (size_t)n >= sizeof(c->dir) || !is_dir(c->dir) ||
	    (size_t)snprintf(c->session, sizeof(c->session), "%s/" GT_CUPTI_SESSION_FILE, c->dir) >=
		    sizeof(c->session)) {
		c->dir[0] = 0;
		return GT_CTL_NONE;
	}
	return c->mode = GT_CTL_RUN;
}

static void session_sig(const char *path, uint64_t sig[3])
{
	struct stat st;

	if (lstat(path, &st)) {
		sig[0] = sig[1] = sig[2] = 0;
		return;
	}
	sig[0] = st.st_ino;
	sig[1] = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
	sig[2] = (uint64_t)st.st_size;
}

bool gt_ctl__changed(const struct gt_ctl *c)
{
	uint64_t sig[3];

	if (c->mode != GT_CTL_RUN)
		return false;
	session_sig(c->session, sig);
	return memcmp(sig, c->seen, sizeof(sig)) != 0;
}

/* ------------------------------------------------------------ wanted? */

/* name in the directory dfd (owned by dir_uid), opened for reading when it is
 * a regular file of root's or the directory owner's; -1 otherwise.  A FIFO
 * does not block (O_NONBLOCK), a link is not followed. */
static int trusted(int dfd, uid_t dir_uid, const char *name)
{
	struct stat st;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != dir_uid)) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool exists_trusted(int dfd, uid_t dir_uid, const char *name)
{
	int fd = trusted(dfd, dir_uid, name);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Whether some process holds a write lock on the file: the recorder's OFD
 * lock (F_OFD_GETLK places nothing, so it cannot get in the way of the
 * recorder's own F_OFD_SETLK). */
static bool locked(int fd)
{
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET };

	if (fcntl(fd, F_OFD_GETLK, &fl) && (errno != EINVAL || fcntl(fd, F_GETLK, &fl)))
		return true;	/* cannot tell: a recorder that made the file is assumed live */
	return fl.l_type != F_UNLCK;
}

/* The run directory's session: GT_WANT_RECORD for "scope all", for "scope
 * listed" when this process' go file is there (else GT_WANT_WAIT); how an
 * attached agent detaches, from a scope session (a pause keeps it: the
 * recorder that wanted it says "pause" as it ends). */
static enum gt_want session_wants(struct gt_ctl *c, int dfd, uid_t dir_uid)
{
	char buf[64], go[32];
	int fd = trusted(dfd, dir_uid, GT_CUPTI_SESSION_FILE);
	ssize_t n;

	if (fd < 0)
		return GT_WANT_PAUSE;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	if (n <= 0)
		return GT_WANT_PAUSE;
	buf[n] = 0;
	if (!strncmp(buf, GT_CUPTI_SCOPE_ALL, strlen(GT_CUPTI_SCOPE_ALL)) ||
	    !strncmp(buf, GT_CUPTI_SCOPE_LISTED, strlen(GT_CUPTI_SCOPE_LISTED)))
		c->detach_idle = strstr(buf, "\n" GT_CUPTI_DETACH_IDLE "\n") != NULL;
	if (!strncmp(buf, GT_CUPTI_SCOPE_ALL, strlen(GT_CUPTI_SCOPE_ALL)))
		return GT_WANT_RECORD;
	/* "pause": the recorder ends, and waits for what the agents hold */
	if (strncmp(buf, GT_CUPTI_SCOPE_LISTED, strlen(GT_CUPTI_SCOPE_LISTED)))
		return GT_WANT_PAUSE;
	snprintf(go, sizeof(go), GT_CUPTI_GO_FMT, (int)c->pid);
	return exists_trusted(dfd, dir_uid, go) ? GT_WANT_RECORD : GT_WANT_WAIT;
}

enum gt_want gt_ctl__want(struct gt_ctl *c)
{
	/* what ends a private recording only pauses in the run directory */
	enum gt_want off = c->mode == GT_CTL_PRIVATE ? GT_WANT_END : GT_WANT_PAUSE, w;
	struct stat st;
	int dfd, fd;

	if (c->mode == GT_CTL_NONE)
		return GT_WANT_END;
	/* what is read below is at least this new */
	if (c->mode == GT_CTL_RUN)
		session_sig(c->session, c->seen);
	dfd = open(c->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return off;
	if (fstat(dfd, &st) || exists_trusted(dfd, st.st_uid, GT_CUPTI_STOP_FILE)) {
		close(dfd);
		return off;
	}
	fd = trusted(dfd, st.st_uid, GT_CUPTI_RECORDER_FILE);
	if (fd < 0) {
		/* a private directory without one: made by hand, no recorder
		 * to watch */
		w = c->mode == GT_CTL_PRIVATE ? GT_WANT_RECORD : GT_WANT_PAUSE;
	} else {
		w = locked(fd) ? GT_WANT_RECORD : off;
		close(fd);
	}
	if (w == GT_WANT_RECORD && c->mode == GT_CTL_RUN)
		w = session_wants(c, dfd, st.st_uid);
	close(dfd);
	return w;
}

bool gt_ctl__detach_asked(const struct gt_ctl *c)
{
	char name[32];
	struct stat st;
	bool asked;
	int dfd;

	if (c->mode != GT_CTL_RUN)
		return false;
	dfd = open(c->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return false;
	snprintf(name, sizeof(name), GT_CUPTI_DETACH_FMT, (int)c->pid);
	asked = !fstat(dfd, &st) && exists_trusted(dfd, st.st_uid, name);
	close(dfd);
	return asked;
}

/* ------------------------------------------------------------ the spool file */

void gt_spool__init(struct gt_spool *s)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

static int write_at(int fd, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

static uint64_t spool_max(void)
{
	const char *env = getenv(GT_CUPTI_ENV_SPOOL_MAX);
	unsigned long long v;
	char *end;

	if (!env || !*env)
		return GT_CUPTI_SPOOL_MAX_DEFAULT;
	errno = 0;
	v = strtoull(env, &end, 10);
	return errno || *end || !v ? GT_CUPTI_SPOOL_MAX_DEFAULT : v;
}

int gt_spool__open(struct gt_spool *s, const struct gt_ctl *c)
{
	int fd = -1, err, n;

	/* O_EXCL|O_NOFOLLOW: the directory may let others create names in it;
	 * a name someone took (a stale file of a process that had this pid, a
	 * planted one) makes the agent use the next */
	for (unsigned i = 0; i < 16 && fd < 0; i++) {
		n = i ? snprintf(s->path, sizeof(s->path), "%s/gtrace-cupti.%d.%u.spool", c->dir,
				 (int)c->pid, i) :
			snprintf(s->path, sizeof(s->path), "%s/" GT_CUPTI_SPOOL_FMT, c->dir, (int)c->pid);
		if (n < 0 || (size_t)n >= sizeof(s->path))
			return -ENAMETOOLONG;
		fd = open(s->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			return -errno;
	}
	if (fd < 0)
		return -EEXIST;
	err = write_at(fd, GT_CUPTI_MAGIC, GT_CUPTI_MAGIC_LEN, 0);
	s->fd = fd;
	s->wpos = GT_CUPTI_MAGIC_LEN;
	s->max_unread = spool_max();
	s->full = s->backlog = false;
	/* room for the last records, whatever fills the file system later */
	s->reserve = !err && !fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)s->wpos, GT_CUPTI_RESERVE);
	if (!err && !s->reserve && (errno == ENOSPC || errno == EDQUOT))
		err = -errno;
	if (err) {
		gt_spool__discard(s);
		return err;
	}
	return 0;
}

void gt_spool__recount(struct gt_spool *s)
{
	s->lost_disk = s->lost_backlog = s->flags = 0;
}

static enum gt_spool_wr lost(struct gt_spool *s, enum gt_spool_wr why, uint64_t nrec)
{
	if (why == GT_SPOOL_FULL) {
		s->full = true;
		s->lost_disk += nrec;
		s->flags |= GT_CUPTI_ST_DISK_FULL;
	} else {
		s->backlog = true;
		s->lost_backlog += nrec;
		s->flags |= GT_CUPTI_ST_BACKLOG;
	}
	return why;
}

enum gt_spool_wr gt_spool__write(struct gt_spool *s, const void *buf, size_t len, uint64_t nrec,
				 bool reserve)
{
	struct stat st;
	int err;

	if (s->fd < 0) {
		errno = EBADF;
		return GT_SPOOL_ERR;
	}
	/* what the recorder has read it gave back (holes): what the file
	 * holds on disk is what is still unread, and the reserve */
	if (!reserve && !fstat(s->fd, &st) &&
	    (uint64_t)st.st_blocks * 512 > s->max_unread + GT_CUPTI_RESERVE)
		return lost(s, GT_SPOOL_BACKLOG, nrec);
	if (s->reserve && fallocate(s->fd, FALLOC_FL_KEEP_SIZE, (off_t)s->wpos,
				    (off_t)(len + GT_CUPTI_RESERVE))) {
		if ((errno == ENOSPC || errno == EDQUOT) && !(reserve && len <= GT_CUPTI_RESERVE))
			return lost(s, GT_SPOOL_FULL, nrec);
		/* not supported after all: plain writes; or the last records,
		 * which the room kept takes */
		if (errno != ENOSPC && errno != EDQUOT)
			s->reserve = false;
	}
	err = write_at(s->fd, buf, len, s->wpos);
	if (err) {
		/* a chunk cut short would leave a record cut in the middle of
		 * the file: take back what was written of it */
		if (ftruncate(s->fd, (off_t)s->wpos) && !s->full)
			s->full = false;	/* nothing better to do: the reader stops at the cut */
		if (err == -ENOSPC || err == -EDQUOT)
			return lost(s, GT_SPOOL_FULL, nrec);
		errno = -err;
		return GT_SPOOL_ERR;
	}
	s->wpos += len;
	s->full = s->backlog = false;
	return GT_SPOOL_OK;
}

bool gt_spool__unlinked(const struct gt_spool *s)
{
	struct stat st;

	return s->fd >= 0 && !fstat(s->fd, &st) && st.st_nlink == 0;
}

void gt_spool__close(struct gt_spool *s, bool sync)
{
	if (s->fd < 0)
		return;
	if (sync)
		fsync(s->fd);
	close(s->fd);
	s->fd = -1;
}

void gt_spool__discard(struct gt_spool *s)
{
	if (s->fd < 0)
		return;
	close(s->fd);
	s->fd = -1;
	unlink(s->path);
}
