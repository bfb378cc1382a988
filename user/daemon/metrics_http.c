// SPDX-License-Identifier: MIT
/*
 * The /metrics endpoint of metrics_http.h on plain sockets.  An HTTP library
 * would bring threads or an event loop of its own into a recorder that has
 * one already; what Prometheus needs is a request line read into a fixed
 * buffer and one response written back, Connection: close.  Everything is
 * non-blocking and level-triggered: what is not done in one serve call keeps
 * the epoll descriptor readable, so the caller's poll comes back for it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "lib/clock.h"
#include "daemon/metrics_http.h"
#include "lib/log.h"

#define REQ_MAX 8192		/* bytes of a request's line and headers */
#define EV_LISTEN 0		/* epoll data of the listener */
#define EV_TIMER 1		/* of the timer; a connection's is 2 + its slot */
#define EV_CONN 2
#define ACCEPT_BURST 16		/* accepts per serve call: the caller's loop gets its turn */
#define EVENTS_MAX 32

struct conn {
	int fd;			/* -1: free slot */
	uint64_t since;		/* CLOCK_MONOTONIC ns when it was accepted (the oldest goes first) */
	uint64_t deadline;	/* ... at which it is closed: timeout_ns after it was accepted for
				 * the request to arrive, then after the answer was made for it
				 * to be sent */
	size_t inlen;		/* bytes of in[] read */
	char in[REQ_MAX];	/* the request, up to the end of its headers */
	char *out;		/* the response, NULL until the request is whole */
	size_t outlen, outoff;	/* its length, bytes sent */
};

struct metrics_http {
	int epfd, lfd, tfd;	/* epoll set (the fd polled), listener, timer */
	uint64_t timer_at;	/* the deadline the timer is armed for, 0 = disarmed */
	int port;		/* TCP port, 0 for a UNIX socket */
	char *path;		/* UNIX socket made here, NULL for TCP */
	dev_t dev;		/* its inode, so that free removes only what open made */
	ino_t ino;
	unsigned max_conns, nconns;
	uint64_t timeout_ns;
	size_t max_response;
	struct conn *conns;	/* max_conns slots */
	struct metrics_http_stats st;
};

/* ---- listening ---------------------------------------------------------- */

static bool is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
	if (ss->ss_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;

		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

/* "HOST:PORT" -> address; numeric only, so that opening never waits on DNS. */
static int parse_tcp(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	const char *colon = strrchr(s, ':'), *h = s;
	size_t hlen = colon ? (size_t)(colon - s) : 0;
	char host[64], *end;
	long port;

	if (!colon || !colon[1])
		return -EINVAL;
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (errno || *end || port < 0 || port > 65535)
		return -EINVAL;
	if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']') {
		h++;
		hlen -= 2;
	}
	if (hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, h, hlen);
	host[hlen] = 0;
	if (!hlen || !strcmp(host, "localhost"))
		strcpy(host, "127.0.0.1");
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)ss)->sin_addr) == 1) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		*len = sizeof(*in);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*in6);
		return 0;
	}
	return -EINVAL;
}

static int listen_tcp(struct metrics_http *h, const struct metrics_http_opts *o)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1, err = parse_tcp(o->listen, &ss, &len);

	if (err) {
		pr_err("failed to read the metrics address '%s': expected HOST:PORT with a numeric "
		       "host, [IPv6]:PORT or a UNIX socket path", o->listen);
		return err;
	}
	if (!is_loopback(&ss)) {
		if (!o->allow_remote) {
			pr_err("refusing to serve metrics on %s: not a loopback address, and the "
			       "endpoint has no authentication (allow it explicitly)", o->listen);
			return -EPERM;
		}
		pr_warn("serving metrics on %s, which is not loopback: anyone who can reach it "
			"can read them", o->listen);
	}
	h->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h->lfd < 0)
		goto fail;
	/* a restarted daemon must not wait out its predecessor's TIME_WAIT */
	setsockopt(h->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(h->lfd, (struct sockaddr *)&ss, len) || listen(h->lfd, 16))
		goto fail;
	len = sizeof(ss);
	if (getsockname(h->lfd, (struct sockaddr *)&ss, &len))
		goto fail;
	h->port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
						: ((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
fail:
	err = -errno;
	pr_err("failed to listen on %s: %s", o->listen, strerror(-err));
	return err;
}

/* A socket at path that nothing answers on, owned by us: left by a daemon
 * that died.  Anything else there is not ours to replace. */
static int check_stale(const char *path, const struct sockaddr_un *sun)
{
	struct stat st;
	int fd, err;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid())
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	err = connect(fd, (const struct sockaddr *)sun, sizeof(*sun)) ? -errno : 0;
	close(fd);
	if (err != -ECONNREFUSED)
		return -EADDRINUSE;	/* answered, or busy: someone listens */
	/* unlink never follows a link, so only that socket goes */
	return unlink(path) ? -errno : 0;
}

static int listen_unix(struct metrics_http *h, const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int err;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		pr_err("failed to listen on %s: the path is longer than a UNIX socket's", path);
		return -ENAMETOOLONG;
	}
	strcpy(sun.sun_path, path);
	err = check_stale(path, &sun);
	if (err) {
		pr_err("refusing to listen on %s: %s", path,
		       err == -EEXIST ? "something that is not a stale socket of ours is there" :
		       err == -ELOOP ? "it is a symbolic link" :
		       err == -EADDRINUSE ? "something listens on it" : strerror(-err));
		return err;
	}
	h->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h->lfd < 0)
		goto fail;
	/* the socket is made 0600 by bind itself: a chmod after would leave a
	 * window in which others could connect (the umask is process-wide, but
	 * the daemon opens this before it starts any thread) */
	old = umask(0177);
	err = bind(h->lfd, (struct sockaddr *)&sun, sizeof(sun)) ? -errno : 0;
	umask(old);
	if (err) {
		errno = -err;
		goto fail;
	}
	if (lstat(path, &st) || listen(h->lfd, 16)) {
		err = -errno;
		unlink(path);
		errno = -err;
		goto fail;
	}
	h->dev = st.st_dev;
	h->ino = st.st_ino;
	h->path = strdup(path);
	if (!h->path) {
		unlink(path);
		errno = ENOMEM;
		goto fail;
	}
	return 0;
fail:
	err = -errno;
	pr_err("failed to listen on %s: %s", path, strerror(-err));
	return err;
}

static int ep_add(struct metrics_http *h, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = { .events = events, .data.u64 = data };

	return epoll_ctl(h->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

int metrics_http__open(const struct metrics_http_opts *o, struct metrics_http **out)
{
	struct metrics_http *h = calloc(1, sizeof(*h));
	const char *addr = o->listen ? o->listen : METRICS_HTTP_DEFAULT;
	struct metrics_http_opts oo = *o;
	int err;

	*out = NULL;
	if (!h)
		return -ENOMEM;
	oo.listen = addr;
	h->epfd = h->lfd = h->tfd = -1;
	h->max_conns = o->max_conns ? o->max_conns : 8;
	h->timeout_ns = (uint64_t)(o->timeout_ms ? o->timeout_ms : 5000) * 1000000u;
	h->max_response = o->max_response ? o->max_response : 16u << 20;
	h->conns = calloc(h->max_conns, sizeof(*h->conns));
	if (!h->conns) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (unsigned i = 0; i < h->max_conns; i++)
		h->conns[i].fd = -1;
	if (!strncmp(addr, "unix:", 5))
		err = listen_unix(h, addr + 5);
	else if (addr[0] == '/')
		err = listen_unix(h, addr);
	else
		err = listen_tcp(h, &oo);
	if (err)
		goto cleanup;
	h->epfd = epoll_create1(EPOLL_CLOEXEC);
	h->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (h->epfd < 0 || h->tfd < 0) {
		err = -errno;
		goto cleanup;
	}
	err = ep_add(h, h->lfd, EPOLLIN, EV_LISTEN);
	if (!err)
		err = ep_add(h, h->tfd, EPOLLIN, EV_TIMER);
	if (err)
		goto cleanup;
	*out = h;
	return 0;
cleanup:
	metrics_http__free(h);
	return err;
}

int metrics_http__fd(const struct metrics_http *h)
{
	return h->epfd;
}

int metrics_http__port(const struct metrics_http *h)
{
	return h->port;
}

/* ---- connections -------------------------------------------------------- */

/* Armed at the earliest deadline of the connections open, off when none:
 * an idle endpoint never wakes the caller, and no connection outlives its
 * deadline by more than the caller's poll takes. */
static void timer_arm(struct metrics_http *h)
{
	struct itimerspec its = { 0 };
	uint64_t at = 0;

	for (unsigned i = 0; i < h->max_conns; i++)
		if (h->conns[i].fd >= 0 && (!at || h->conns[i].deadline < at))
			at = h->conns[i].deadline;
	if (at == h->timer_at)
		return;
	its.it_value.tv_sec = (time_t)(at / 1000000000u);
	its.it_value.tv_nsec = (long)(at % 1000000000u);
	if (!timerfd_settime(h->tfd, TFD_TIMER_ABSTIME, &its, NULL))
		h->timer_at = at;
}

static void conn_close(struct metrics_http *h, struct conn *c)
{
	close(c->fd);	/* also takes it out of the epoll set */
	free(c->out);
	c->fd = -1;
	c->out = NULL;
	c->inlen = c->outlen = c->outoff = 0;
	h->nconns--;
	timer_arm(h);
}

/* The table is full: the slot of the connection accepted longest ago
 * that has not sent a whole request (a client that connects and says
 * nothing must not keep the others out), else of the one accepted longest
 * ago. Never none: a new client always gets in. */
static unsigned evict(struct metrics_http *h)
{
	unsigned best = 0;

	for (unsigned i = 1; i < h->max_conns; i++) {
		const struct conn *c = &h->conns[i], *b = &h->conns[best];

		if ((!c->out && b->out) || (!c->out == !b->out && c->since < b->since))
			best = i;
	}
	pr_debug("metrics: a client %s for %.1f s dropped for a new one",
		 h->conns[best].out ? "not reading its answer" : "silent",
		 (clock__mono_ns() - h->conns[best].since) / 1e9);
	conn_close(h, &h->conns[best]);
	h->st.dropped++;
	return best;
}

static void do_accept(struct metrics_http *h)
{
	for (int n = 0; n < ACCEPT_BURST; n++) {
		int fd = accept4(h->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		uint64_t now;
		unsigned i;

		if (fd < 0)
			return;	/* EAGAIN, or a client that left already */
		for (i = 0; i < h->max_conns && h->conns[i].fd >= 0; i++)
			;
		if (i == h->max_conns)
			i = evict(h);
		if (ep_add(h, fd, EPOLLIN | EPOLLRDHUP, EV_CONN + (uint64_t)i)) {
			static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\n"
						   "Content-Length: 0\r\nConnection: close\r\n\r\n";

			/* best effort, never waited for */
			if (send(fd, busy, sizeof(busy) - 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
				pr_debug("metrics: a client turned away left: %s", strerror(errno));
			close(fd);
			h->st.refused++;
			continue;
		}
		now = clock__mono_ns();
		h->conns[i] = (struct conn){ .fd = fd, .since = now, .deadline = now + h->timeout_ns };
		h->nconns++;
		timer_arm(h);
	}
}

/* Sets c->out to a response of status with body (len bytes, taken over). */
static int respond(struct conn *c, const char *status, const char *ctype, char *body, size_t len)
{
	char head[256];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "%sConnection: close\r\n\r\n",
			 status, ctype, len, !strncmp(status, "405", 3) ? "Allow: GET\r\n" : "");

	c->out = malloc((size_t)n + len);
	if (!c->out) {
		free(body);
		return -ENOMEM;
	}
	memcpy(c->out, head, (size_t)n);
	if (len)
		memcpy(c->out + n, body, len);
	free(body);
	c->outlen = (size_t)n + len;
	c->outoff = 0;
	return 0;
}

static int respond_text(struct conn *c, const char *status, const char *text)
{
	char *body = strdup(text);

	if (!body)
		return -ENOMEM;
	return respond(c, status, "text/plain; charset=utf-8", body, strlen(text));
}

/* The rendering in memory, or NULL with *err set. */
static char *render_mem(struct metrics_http *h, metrics_render_fn render, void *ctx, size_t *len,
			int *err)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	struct obuf ob;

	if (!f) {
		*err = -errno;
		return NULL;
	}
	*err = obuf__init(&ob, f);
	if (!*err) {
		*err = render(ctx, &ob);
		if (!*err)
			*err = obuf__flush(&ob);
		obuf__free(&ob);
	}
	if (fclose(f) && !*err)
		*err = -EIO;
	if (!*err && *len > h->max_response)
		*err = -EFBIG;
	if (*err) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The request line of a whole request: GET /metrics[?...] HTTP/1.x. */
static int answer(struct metrics_http *h, struct conn *c, metrics_render_fn render, void *ctx)
{
	char *line = c->in, *eol = memchr(c->in, '\n', c->inlen), *sp1, *sp2, *q, *body;
	size_t len;
	int err;

	if (!eol)
		return respond_text(c, "400 Bad Request", "bad request\n");
	*eol = 0;
	if (eol > line && eol[-1] == '\r')
		eol[-1] = 0;
	sp1 = strchr(line, ' ');
	sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2 || strncmp(sp2 + 1, "HTTP/1.", 7) || sp1[1] != '/')
		return respond_text(c, "400 Bad Request", "bad request\n");
	*sp1 = *sp2 = 0;
	if (strcmp(line, "GET"))
		return respond_text(c, "405 Method Not Allowed", "only GET\n");
	q = strchr(sp1 + 1, '?');
	if (q)
		*q = 0;
	if (strcmp(sp1 + 1, "/metrics"))
		return respond_text(c, "404 Not Found", "not found: the metrics are at /metrics\n");
	body = render_mem(h, render, ctx, &len, &err);
	if (!body) {
		pr_warn("failed to render the metrics: %s", strerror(-err));
		return respond_text(c, "500 Internal Server Error", "failed to render the metrics\n");
	}
	return respond(c, "200 OK", "text/plain; version=0.0.4; charset=utf-8", body, len);
}

static void conn_send(struct metrics_http *h, struct conn *c)
{
	while (c->outoff < c->outlen) {
		ssize_t n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;	/* EPOLLOUT brings it back, or the deadline ends it */
			break;
		}
		c->outoff += (size_t)n;
	}
	if (c->outoff == c->outlen)
		h->st.served++;
	else
		h->st.gone++;
	shutdown(c->fd, SHUT_WR);
	conn_close(h, c);
}

static bool request_whole(const struct conn *c)
{
	return memmem(c->in, c->inlen, "\r\n\r\n", 4) || memmem(c->in, c->inlen, "\n\n", 2);
}

static void conn_read(struct metrics_http *h, struct conn *c, unsigned slot,
		      metrics_render_fn render, void *ctx)
{
	struct epoll_event ev = { .events = EPOLLOUT, .data.u64 = EV_CONN + (uint64_t)slot };
	ssize_t n;
	int err;

	n = recv(c->fd, c->in + c->inlen, sizeof(c->in) - c->inlen, MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		h->st.gone++;
		conn_close(h, c);
		return;
	}
	if (n < 0)
		return;
	c->inlen += (size_t)n;
	if (request_whole(c))
		err = answer(h, c, render, ctx);
	else if (c->inlen == sizeof(c->in))
		err = respond_text(c, "431 Request Header Fields Too Large", "request too large\n");
	else
		return;
	/* from here on only the answer matters: what else it sends is not read */
	if (err || epoll_ctl(h->epfd, EPOLL_CTL_MOD, c->fd, &ev)) {
		h->st.gone++;
		conn_close(h, c);
		return;
	}
	/* as long again for the answer to be taken */
	c->deadline = clock__mono_ns() + h->timeout_ns;
	conn_send(h, c);
	timer_arm(h);
}

static void expire(struct metrics_http *h)
{
	uint64_t now = clock__mono_ns(), ticks;

	if (read(h->tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		pr_debug("metrics: timer: %s", strerror(errno));
	for (unsigned i = 0; i < h->max_conns; i++)
		if (h->conns[i].fd >= 0 && h->conns[i].deadline <= now) {
			pr_debug("metrics: a client %s for %.1f s timed out",
				 h->conns[i].out ? "not reading its answer" : "silent",
				 (now - h->conns[i].since) / 1e9);
			conn_close(h, &h->conns[i]);
			h->st.timed_out++;
		}
	/* a timer that went off early or was armed for a closed one */
	h->timer_at = 0;
	timer_arm(h);
}

int metrics_http__serve(struct metrics_http *h, metrics_render_fn render, void *ctx)
{
	struct epoll_event ev[EVENTS_MAX];
	int n = epoll_wait(h->epfd, ev, EVENTS_MAX, 0);

	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (int i = 0; i < n; i++) {
		uint64_t d = ev[i].data.u64;
		struct conn *c;

		if (d == EV_LISTEN) {
			do_accept(h);
			continue;
		}
		if (d == EV_TIMER) {
			expire(h);
			continue;
		}
		c = &h->conns[d - EV_CONN];
		/* closed earlier in this round (expired): its events are stale */
		if (c->fd < 0)
			continue;
		if (c->out)
			conn_send(h, c);
		else if (ev[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
			conn_read(h, c, (unsigned)(d - EV_CONN), render, ctx);
	}
	return 0;
}

void metrics_http__stats(const struct metrics_http *h, struct metrics_http_stats *st)
{
	*st = h->st;
	st->open = h->nconns;
}

void metrics_http__free(struct metrics_http *h)
{
	struct stat st;

	if (!h)
		return;
	for (unsigned i = 0; h->conns && i < h->max_conns; i++)
		if (h->conns[i].fd >= 0)
			conn_close(h, &h->conns[i]);
	if (h->lfd >= 0)
		close(h->lfd);
	if (h->tfd >= 0)
		close(h->tfd);
	if (h->epfd >= 0)
		close(h->epfd);
	/* only the socket open made: another daemon may have taken the path since */
	if (h->path && !lstat(h->path, &st) && S_ISSOCK(st.st_mode) && st.st_dev == h->dev &&
	    st.st_ino == h->ino)
		unlink(h->path);
	free(h->path);
	free(h->conns);
	free(h);
}
