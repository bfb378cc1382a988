// SPDX-License-Identifier: MIT
/*
 * The daemon's control socket (gtrace-bpf snapshot / status): a UNIX
 * stream socket in a root-only directory, one request line per connection,
 * the reply text after an "ok" or "error: ..." first line. The daemon
 * serves it from its poll loop, so a client that connects and never writes
 * or never reads must not hold it: every read and write has a deadline and
 * the reply is bounded.
 *
 * The directory also holds the daemon's pid file, locked with flock for as
 * long as the daemon lives: a second daemon finds it locked and names the
 * first one's pid; a daemon killed with SIGKILL leaves the file, unlocked,
 * which the next one takes over.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "lib/clock.h"
#include "record/control.h"

#define IO_MS		200	/* a client's whole request or reply, at most */

struct control {
	char dir[CONTROL_PATH_MAX];
	char sock[CONTROL_PATH_MAX];
	char pidfile[CONTROL_PATH_MAX];
	int lfd;		/* listening socket */
	int pfd;		/* the pid file, locked */
};

const char *control__dir(void)
{
	const char *d = getenv("GTRACE_RUN_DIR");

	return d && d[0] == '/' ? d : CONTROL_DIR;
}

static int join(char *out, const char *dir, const char *name)
{
	int n = snprintf(out, CONTROL_PATH_MAX, "%s/%s", dir, name);

	return n < 0 || n >= CONTROL_PATH_MAX ? -ENAMETOOLONG : 0;
}

int control__own_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	if (lstat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
		return -EPERM;
	return 0;
}

static int take_lock(struct control *c, pid_t *other)
{
	char buf[32];
	ssize_t n;
	int fd;

	fd = open(c->pidfile, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int err = errno == EWOULDBLOCK ? -EBUSY : -errno;

		n = pread(fd, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = 0;
		*other = (pid_t)atoi(buf);
		close(fd);
		return err;
	}
	n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, buf, n, 0) != n) {
		int err = -errno;

		close(fd);
		return err;
	}
	c->pfd = fd;
	return 0;
}

int control__open(const char *dir, struct control **out, pid_t *other)
{
	struct control *c = calloc(1, sizeof(*c));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int err;

	*out = NULL;
	*other = 0;
	if (!c)
		return -ENOMEM;
	c->lfd = c->pfd = -1;
	snprintf(c->dir, sizeof(c->dir), "%s", dir);
	if ((err = join(c->sock, dir, "control.sock")) || (err = join(c->pidfile, dir, "daemon.pid")) ||
	    strlen(c->sock) >= sizeof(sa.sun_path) || (err = control__own_dir(dir)) ||
	    (err = take_lock(c, other))) {
		err = err ? err : -ENAMETOOLONG;
		goto fail;
	}
	/* a socket left by a daemon that was killed: ours to replace, being
	 * in our own directory; anything else there is not */
	if (!lstat(c->sock, &st)) {
		if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
			err = -EEXIST;
			goto fail;
		}
		unlink(c->sock);
	}
	c->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->lfd < 0) {
		err = -errno;
		goto fail;
	}
	memcpy(sa.sun_path, c->sock, strlen(c->sock) + 1);
	/* the directory is 0700: the socket's own mode is a second fence */
	if (bind(c->lfd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(c->sock, 0600) ||
	    listen(c->lfd, 16)) {
		err = -errno;
		goto fail;
	}
	*out = c;
	return 0;
fail:
	if (c->lfd >= 0)
		close(c->lfd);
	if (c->pfd >= 0)
		close(c->pfd);
	free(c);
	return err;
}

int control__fd(const struct control *c)
{
	return c ? c->lfd : -1;
}

/* Waits for fd to be ready for events until deadline (CLOCK_MONOTONIC ms). */
static int wait_fd(int fd, short events, uint64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	uint64_t now = (clock__mono_ns() / 1000000);
	int n;

	if (now >= deadline)
		return -ETIMEDOUT;
	n = poll(&p, 1, (int)(deadline - now));
	if (n < 0)
		return -errno;
	return n ? 0 : -ETIMEDOUT;
}

/* Reads one line (without its newline) into buf. */
static int read_line(int fd, char *buf, size_t len, uint64_t deadline)
{
	size_t used = 0;
	char *nl;
	ssize_t n;
	int err;

	for (;;) {
		if ((err = wait_fd(fd, POLLIN, deadline)))
			return err;
		n = read(fd, buf + used, len - 1 - used);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (n == 0)
			return -EPIPE;
		if (n > 0)
			used += n;
		buf[used] = 0;
		if ((nl = strchr(buf, '\n'))) {
			*nl = 0;
			return 0;
		}
		if (used == len - 1)
			return -E2BIG;
	}
}

static int write_all(int fd, const char *buf, size_t len, uint64_t deadline)
{
	ssize_t n;
	int err;

	while (len) {
		if ((err = wait_fd(fd, POLLOUT, deadline)))
			return err;
		n = write(fd, buf, len);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (n > 0) {
			buf += n;
			len -= n;
		}
	}
	return 0;
}

int control__serve(struct control *c, control_handler_fn handle, void *ctx)
{
	char req[CONTROL_REQ_MAX], *reply = NULL;
	uint64_t deadline;
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	size_t n;
	int fd, err;

	fd = accept4(c->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
	deadline = (clock__mono_ns() / 1000000) + IO_MS;
	/* the socket's mode already keeps others out; a peer of another user
	 * that got through (a different root directory, a passed fd) gets no answer */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) || cred.uid != geteuid()) {
		close(fd);
		return -EPERM;
	}
	reply = malloc(CONTROL_REPLY_MAX);
	err = reply ? read_line(fd, req, sizeof(req), deadline) : -ENOMEM;
	if (!err) {
		n = handle(ctx, req, reply, CONTROL_REPLY_MAX);
		err = write_all(fd, reply, n < CONTROL_REPLY_MAX ? n : CONTROL_REPLY_MAX - 1, deadline);
	}
	free(reply);
	close(fd);
	return err;
}

void control__close(struct control *c)
{
	if (!c)
		return;
	if (c->lfd >= 0) {
		close(c->lfd);
		unlink(c->sock);
	}
	if (c->pfd >= 0) {
		unlink(c->pidfile);
		close(c->pfd);
	}
	free(c);
}

int control__request(const char *dir, const char *req, int timeout_ms, FILE *out, FILE *errs)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[CONTROL_PATH_MAX], buf[4096];
	uint64_t deadline = (clock__mono_ns() / 1000000) + (uint64_t)timeout_ms;
	bool first = true, ok = false;
	ssize_t n;
	int fd, err;

	if ((err = join(path, dir, "control.sock")) || strlen(path) >= sizeof(sa.sun_path))
		return err ? err : -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		close(fd);
		return err;
	}
	snprintf(buf, sizeof(buf), "%s\n", req);
	err = write_all(fd, buf, strlen(buf), deadline);
	while (!err) {
		if ((err = wait_fd(fd, POLLIN, deadline)))
			break;
		n = read(fd, buf, sizeof(buf));
		if (n <= 0) {
			err = n < 0 ? -errno : 0;
			break;
		}
		if (first) {
			char *nl = memchr(buf, '\n', n);
			size_t skip = nl ? (size_t)(nl - buf) + 1 : (size_t)n;

			ok = n >= 2 && !memcmp(buf, "ok", 2);
			if (!ok)
				fwrite(buf, 1, skip, errs);
			fwrite(buf + skip, 1, n - skip, ok ? out : errs);
			first = false;
			continue;
		}
		fwrite(buf, 1, n, ok ? out : errs);
	}
	close(fd);
	if (err)
		return err;
	return first ? -EPIPE : ok ? 0 : 1;
}
