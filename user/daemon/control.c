// SPDX-License-Identifier: MIT
/*
 * The daemon's control socket (gtrace-bpf snapshot / status): a UNIX
 * stream socket in a root-only directory, one request line per connection,
 * the reply text after an "ok" or "error: ..." first line. The daemon
 * serves it from its recording loop, so nothing here ever waits: sockets are
 * non-blocking, each client has a slot in a small table with a deadline for
 * its request and one for taking its reply, and a reply that comes later
 * (a snapshot being written by another thread) leaves the client waiting
 * in its slot while the loop goes on. A client that connects and never
 * sends, or never reads, costs a slot until its deadline, nothing more:
 * when the table is full the oldest of the silent ones gives its slot up.
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
#include "lib/log.h"
#include "daemon/control.h"

#define CONN_MAX	16	/* clients served at once */
#define READ_MS		1000	/* a client's request line, from its connect */
#define WRITE_MS	2000	/* a client's taking of its reply, from when it is ready */

enum conn_state {
	CONN_FREE,		/* the slot is unused */
	CONN_READ,		/* its request line is coming */
	CONN_WAIT,		/* its reply is coming later (control__reply) */
	CONN_WRITE,		/* its reply is going out */
};

/* One client. */
struct conn {
	enum conn_state state;
	int fd;			/* non-blocking, -1 when free */
	uint64_t id;		/* its number, for a reply that comes later; never 0 */
	uint64_t deadline;	/* CLOCK_MONOTONIC ms: READ and WRITE end then */
	size_t used;		/* READ: request bytes so far */
	char req[CONTROL_REQ_MAX];
	char *out;		/* WRITE: the reply, out_len bytes, out_off of them sent */
	size_t out_len, out_off;
};

struct control {
	char dir[CONTROL_PATH_MAX];
	char sock[CONTROL_PATH_MAX];
	char pidfile[CONTROL_PATH_MAX];
	int lfd;		/* listening socket */
	int pfd;		/* the pid file, locked */
	uint64_t next_id;	/* the next client's number */
	struct conn conn[CONN_MAX];
	char reply[CONTROL_REPLY_MAX];	/* a handler's reply, before it is copied to its client */
	struct control_stats st;
};

static uint64_t now_ms(void)
{
	return clock__mono_ns() / 1000000;
}

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

	struct stat st;

	fd = open(c->pidfile, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
	if (fd < 0)
		return errno == ELOOP ? -EEXIST : -errno;
	/* a FIFO, a device, someone else's file: not ours to lock or write */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		close(fd);
		return -EEXIST;
	}
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
	for (int i = 0; i < CONN_MAX; i++)
		c->conn[i].fd = -1;
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
			err = -ENOTSOCK;
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
	/* the pid file we locked names no daemon now */
	if (c->pfd >= 0) {
		unlink(c->pidfile);
		close(c->pfd);
	}
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
	uint64_t now = now_ms();
	int n;

	if (now >= deadline)
		return -ETIMEDOUT;
	n = poll(&p, 1, (int)(deadline - now));
	if (n < 0)
		return -errno;
	return n ? 0 : -ETIMEDOUT;
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

static void conn__close(struct conn *k)
{
	close(k->fd);
	free(k->out);
	k->fd = -1;
	k->out = NULL;
	k->state = CONN_FREE;
}

/* Sends what the socket takes of k's reply; closes k once it is all out or
 * the client is gone. */
static void conn__send(struct control *c, struct conn *k)
{
	ssize_t n;

	while (k->out_off < k->out_len) {
		/* MSG_NOSIGNAL: a client that hung up is no SIGPIPE for the daemon */
		n = send(k->fd, k->out + k->out_off, k->out_len - k->out_off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0) {
			c->st.gone++;
			pr_verbose("control client %llu: gone before its reply was sent (%s)",
				   (unsigned long long)k->id, strerror(errno));
			conn__close(k);
			return;
		}
		k->out_off += n;
	}
	c->st.served++;
	conn__close(k);
}

/* k's reply is reply[0..len): it goes out now, as far as the socket takes it. */
static void conn__reply(struct control *c, struct conn *k, const char *reply, size_t len)
{
	k->out = malloc(len ? len : 1);
	if (!k->out) {
		c->st.gone++;
		pr_verbose("control client %llu: no memory for its reply", (unsigned long long)k->id);
		conn__close(k);
		return;
	}
	memcpy(k->out, reply, len);
	k->out_len = len;
	k->out_off = 0;
	k->state = CONN_WRITE;
	k->deadline = now_ms() + WRITE_MS;
	conn__send(c, k);
}

/* Reads what has come of k's request; at its newline, asks the handler. */
static void conn__read(struct control *c, struct conn *k, control_handler_fn handle, void *ctx)
{
	char *nl;
	ssize_t n;
	size_t len;

	for (;;) {
		n = recv(k->fd, k->req + k->used, sizeof(k->req) - 1 - k->used, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			c->st.gone++;
			pr_verbose("control client %llu: hung up before its request was whole",
				   (unsigned long long)k->id);
			conn__close(k);
			return;
		}
		k->used += n;
		k->req[k->used] = 0;
		if ((nl = memchr(k->req, '\n', k->used)))
			break;
		if (k->used == sizeof(k->req) - 1) {
			c->st.refused++;
			pr_verbose("control client %llu: a request longer than %d bytes; dropped",
				   (unsigned long long)k->id, CONTROL_REQ_MAX);
			conn__close(k);
			return;
		}
	}
	*nl = 0;
	len = handle(ctx, k->id, k->req, c->reply, sizeof(c->reply));
	if (len == CONTROL_DEFER) {
		k->state = CONN_WAIT;
		return;
	}
	conn__reply(c, k, c->reply, len < sizeof(c->reply) ? len : sizeof(c->reply) - 1);
}

/* A slot for a new client: a free one, else the one that has been silent
 * the longest gives its up (it cannot be served before its deadline
 * anyway); NULL when every client is waiting for its reply or taking it. */
static struct conn *conn__slot(struct control *c)
{
	struct conn *old = NULL;
	int i;

	for (i = 0; i < CONN_MAX; i++) {
		if (c->conn[i].state == CONN_FREE)
			return &c->conn[i];
		if (c->conn[i].state == CONN_READ && (!old || c->conn[i].deadline < old->deadline))
			old = &c->conn[i];
	}
	if (old) {
		c->st.refused++;
		pr_verbose("control client %llu: no request yet, its slot given to a new client",
			   (unsigned long long)old->id);
		conn__close(old);
	}
	return old;
}

static void conn__accept(struct control *c, control_handler_fn handle, void *ctx)
{
	static const char busy[] = "error: the daemon is busy with other clients; try again\n";
	struct ucred cred;
	socklen_t clen;
	struct conn *k;
	int fd, i;

	/* bounded: clients that connect as fast as they are taken cannot
	 * keep the loop here */
	for (i = 0; i < 2 * CONN_MAX; i++) {
		fd = accept4(c->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				pr_verbose("control socket: cannot accept a client: %s", strerror(errno));
			return;
		}
		/* the socket's mode already keeps others out; a peer of another
		 * user that got through (a different root directory, a passed
		 * fd) gets no answer */
		clen = sizeof(cred);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) || cred.uid != geteuid()) {
			c->st.refused++;
			pr_verbose("control socket: a client of another user refused");
			close(fd);
			continue;
		}
		if (!(k = conn__slot(c))) {
			c->st.refused++;
			pr_verbose("control socket: %d clients waiting for replies; a new one turned away",
				   CONN_MAX);
			if (send(fd, busy, sizeof(busy) - 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
				pr_debug("control socket: the busy line was not taken: %s", strerror(errno));
			close(fd);
			continue;
		}
		*k = (struct conn){ .state = CONN_READ, .fd = fd, .id = ++c->next_id,
				    .deadline = now_ms() + READ_MS };
		/* a client's request comes with its connect: read before the
		 * next accept, which may want a silent client's slot */
		conn__read(c, k, handle, ctx);
	}
}

void control__serve(struct control *c, control_handler_fn handle, void *ctx)
{
	struct conn *k;
	char b;
	int i;

	conn__accept(c, handle, ctx);
	for (i = 0; i < CONN_MAX; i++) {
		k = &c->conn[i];
		switch (k->state) {
		case CONN_READ:
			conn__read(c, k, handle, ctx);
			if (k->state == CONN_READ && now_ms() >= k->deadline) {
				c->st.timed_out++;
				pr_verbose("control client %llu: no request within %d ms; dropped",
					   (unsigned long long)k->id, READ_MS);
				conn__close(k);
			}
			break;
		case CONN_WAIT:
			/* a client that hung up waits no more: its reply has no taker */
			if (recv(k->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0) {
				c->st.gone++;
				pr_verbose("control client %llu: hung up before its reply was ready",
					   (unsigned long long)k->id);
				conn__close(k);
			}
			break;
		case CONN_WRITE:
			conn__send(c, k);
			if (k->state == CONN_WRITE && now_ms() >= k->deadline) {
				c->st.timed_out++;
				pr_verbose("control client %llu: took %zu of its reply's %zu bytes in %d ms; dropped",
					   (unsigned long long)k->id, k->out_off, k->out_len, WRITE_MS);
				conn__close(k);
			}
			break;
		case CONN_FREE:
			break;
		}
	}
}

int control__reply(struct control *c, uint64_t client, const char *reply, size_t len)
{
	int i;

	for (i = 0; c && client && i < CONN_MAX; i++) {
		if (c->conn[i].state == CONN_WAIT && c->conn[i].id == client) {
			conn__reply(c, &c->conn[i], reply, len);
			return 0;
		}
	}
	return -ENOENT;
}

void control__flush(struct control *c, int timeout_ms)
{
	uint64_t end = now_ms() + (uint64_t)timeout_ms;
	bool sending;
	int i;

	if (!c)
		return;
	do {
		sending = false;
		for (i = 0; i < CONN_MAX; i++) {
			if (c->conn[i].state != CONN_WRITE)
				continue;
			conn__send(c, &c->conn[i]);
			sending |= c->conn[i].state == CONN_WRITE;
		}
	} while (sending && now_ms() < end && !usleep(10000));
}

void control__stats(const struct control *c, struct control_stats *st)
{
	*st = c ? c->st : (struct control_stats){ 0 };
}

void control__close(struct control *c)
{
	if (!c)
		return;
	for (int i = 0; i < CONN_MAX; i++) {
		if (c->conn[i].state != CONN_FREE)
			conn__close(&c->conn[i]);
	}
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
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
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
