// SPDX-License-Identifier: MIT
/*
 * Unit tests of the /metrics endpoint (user/daemon/metrics_http.c), over
 * real loopback and UNIX sockets in one thread: the test is the client and
 * pumps the server between its reads, as a daemon's poll loop would.  Only
 * GET /metrics renders; other paths, methods, bad and oversized requests get
 * their status; a client that sends nothing neither blocks another nor
 * outlives its deadline, one that never reads its answer is closed that long
 * after the answer; a connection past the limit takes the slot of the oldest
 * silent one; a non-loopback address is refused unless allowed; a UNIX
 * socket is 0600 and never replaces what is not a stale socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "daemon/metrics_http.h"

/* a request that fills the server's 8 KiB buffer without ending its headers:
 * all of it is read, so that closing sends no reset before the answer */
#define REQ_BIG 8192

static struct metrics_http *H;
static int renders;

static int render(void *ctx, struct obuf *out)
{
	(void)ctx;
	renders++;
	OBUF_LIT(out, "# HELP x_total X.\n# TYPE x_total counter\nx_total 1\n");
	return 0;
}

static int render_fail(void *ctx, struct obuf *out)
{
	(void)ctx;
	(void)out;
	return -ENOMEM;
}

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Serves for ms milliseconds, as a poll loop would. */
static void pump_with(int ms, metrics_render_fn fn)
{
	uint64_t end = ms_now() + (uint64_t)ms;

	for (;;) {
		struct pollfd p = { .fd = metrics_http__fd(H), .events = POLLIN };
		uint64_t now = ms_now();

		if (now >= end)
			return;
		if (poll(&p, 1, (int)(end - now)) > 0)
			assert_int_equal(metrics_http__serve(H, fn, NULL), 0);
	}
}

static void pump(int ms)
{
	pump_with(ms, render);
}

static int open_with(const struct metrics_http_opts *o)
{
	return metrics_http__open(o, &H);
}

static int setup(void **state)
{
	struct metrics_http_opts o = { .listen = "127.0.0.1:0", .max_conns = 3, .timeout_ms = 300 };

	(void)state;
	renders = 0;
	return open_with(&o);
}

static int teardown(void **state)
{
	(void)state;
	metrics_http__free(H);
	H = NULL;
	return 0;
}

static int connect_tcp(void)
{
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons((uint16_t)metrics_http__port(H)),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&in, sizeof(in)), 0);
	return fd;
}

/* What the server sent on fd until it closed, pumping meanwhile (at most ms). */
static char *read_all(int fd, int ms, metrics_render_fn fn)
{
	static char buf[65536];
	size_t n = 0;
	uint64_t end = ms_now() + (uint64_t)ms;

	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (ms_now() < end) {
		ssize_t r = recv(fd, buf + n, sizeof(buf) - 1 - n, 0);

		if (r == 0)
			break;
		if (r > 0) {
			n += (size_t)r;
			continue;
		}
		if (errno == ECONNRESET)
			break;
		pump_with(5, fn);
	}
	buf[n] = 0;
	return buf;
}

static char *ask_with(const char *req, size_t len, metrics_render_fn fn)
{
	int fd = connect_tcp();
	char *resp;

	assert_int_equal(send(fd, req, len, MSG_NOSIGNAL), (ssize_t)len);
	resp = read_all(fd, 2000, fn);
	close(fd);
	return resp;
}

static char *ask(const char *req)
{
	return ask_with(req, strlen(req), render);
}

static void test_get_metrics(void **state)
{
	char *r;

	(void)state;
	r = ask("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n");
	assert_true(!strncmp(r, "HTTP/1.1 200 OK\r\n", 17));
	assert_non_null(strstr(r, "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
	assert_non_null(strstr(r, "\r\nContent-Length: 51\r\n"));
	assert_non_null(strstr(r, "\r\n\r\n# HELP x_total X.\n# TYPE x_total counter\nx_total 1\n"));
	assert_int_equal(renders, 1);
	/* a query string is the same page; HTTP/1.0 and bare line feeds too */
	r = ask("GET /metrics?x=1 HTTP/1.0\n\n");
	assert_true(!strncmp(r, "HTTP/1.1 200 OK\r\n", 17));
	assert_int_equal(renders, 2);
}

static void test_other_requests(void **state)
{
	char big[REQ_BIG];

	(void)state;
	assert_true(!strncmp(ask("GET / HTTP/1.1\r\n\r\n"), "HTTP/1.1 404 ", 13));
	assert_true(!strncmp(ask("GET /metricsx HTTP/1.1\r\n\r\n"), "HTTP/1.1 404 ", 13));
	assert_true(!strncmp(ask("POST /metrics HTTP/1.1\r\n\r\n"), "HTTP/1.1 405 ", 13));
	assert_non_null(strstr(ask("HEAD /metrics HTTP/1.1\r\n\r\n"), "\r\nAllow: GET\r\n"));
	assert_true(!strncmp(ask("hello\r\n\r\n"), "HTTP/1.1 400 ", 13));
	assert_true(!strncmp(ask("GET metrics HTTP/1.1\r\n\r\n"), "HTTP/1.1 400 ", 13));
	assert_true(!strncmp(ask("GET /metrics SPDY/3\r\n\r\n"), "HTTP/1.1 400 ", 13));
	/* headers that never end within the buffer */
	memcpy(big, "GET /metrics HTTP/1.1\r\nX: ", 26);
	memset(big + 26, 'a', sizeof(big) - 26);
	assert_true(!strncmp(ask_with(big, sizeof(big), render), "HTTP/1.1 431 ", 13));
	assert_int_equal(renders, 0);
	assert_true(!strncmp(ask_with("GET /metrics HTTP/1.1\r\n\r\n", 25, render_fail),
			     "HTTP/1.1 500 ", 13));
}

/* A client that connects and says nothing: another is answered while it
 * is open (a server with a deadline far away: not served after it), and
 * with the setup's 300 ms it is closed at its deadline, not before. No
 * upper bound on the clock: a loaded machine only makes things later. */
static void test_silent_client(void **state)
{
	struct metrics_http_opts o = { .listen = "127.0.0.1:0", .max_conns = 3, .timeout_ms = 600000 };
	int silent, fd;
	uint64_t t0;
	char c;

	metrics_http__free(H);
	assert_int_equal(open_with(&o), 0);
	silent = connect_tcp();
	pump(20);
	assert_true(!strncmp(ask("GET /metrics HTTP/1.1\r\n\r\n"), "HTTP/1.1 200 OK\r\n", 17));
	assert_int_equal(recv(silent, &c, 1, MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
	close(silent);
	metrics_http__free(H);
	assert_int_equal(setup(state), 0);
	t0 = ms_now();
	silent = connect_tcp();
	/* checked every 150 ms: read_all returns at the server's close (10 s
	 * only bounds a broken server) */
	read_all(silent, 10000, render);
	assert_int_equal(recv(silent, &c, 1, MSG_DONTWAIT), 0);
	assert_true(ms_now() - t0 >= 300);
	close(silent);
	/* a client that sends a request and never reads is dropped as well */
	fd = connect_tcp();
	assert_int_equal(send(fd, "GET /metrics HTTP/1.1\r\n\r\n", 25, 0), 25);
	pump(500);
	close(fd);
	assert_true(!strncmp(ask("GET /metrics HTTP/1.1\r\n\r\n"), "HTTP/1.1 200 OK\r\n", 17));
}

/* True when the server closed fd (what it sent before is read and dropped). */
static bool closed_by_server(int fd)
{
	char buf[256];
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		;
	return n == 0 || (n < 0 && errno == ECONNRESET);
}

/* max_conns 3, all held by silent clients: a scrape still gets its answer,
 * in the slot of the silent one connected first; the others stay. */
static void test_max_conns(void **state)
{
	struct metrics_http_stats st;
	int fd[3];

	(void)state;
	for (int i = 0; i < 3; i++) {
		fd[i] = connect_tcp();
		pump(20);
	}
	assert_true(!strncmp(ask("GET /metrics HTTP/1.1\r\n\r\n"), "HTTP/1.1 200 OK\r\n", 17));
	assert_true(closed_by_server(fd[0]));
	assert_false(closed_by_server(fd[1]));
	assert_false(closed_by_server(fd[2]));
	metrics_http__stats(H, &st);
	assert_int_equal(st.dropped, 1);
	assert_int_equal(st.served, 1);
	assert_int_equal(st.refused, 0);
	assert_int_equal(st.open, 2);
	/* a burst of silent ones: each scrape still answered, and the table
	 * never holds more than its 3 */
	for (int round = 0; round < 3; round++) {
		int more[5];

		for (int i = 0; i < 5; i++)
			more[i] = connect_tcp();
		pump(20);
		assert_true(!strncmp(ask("GET /metrics HTTP/1.1\r\n\r\n"), "HTTP/1.1 200 OK\r\n", 17));
		metrics_http__stats(H, &st);
		assert_true(st.open <= 3);
		for (int i = 0; i < 5; i++)
			close(more[i]);
	}
	metrics_http__stats(H, &st);
	assert_int_equal(st.served, 4);
	assert_int_equal(st.refused, 0);
	for (int i = 0; i < 3; i++)
		close(fd[i]);
}

/* 4 MiB a scrape, far more than the socket buffers take. */
static int render_big(void *ctx, struct obuf *out)
{
	static char line[4096];

	(void)ctx;
	memset(line, '#', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\n';
	for (int i = 0; i < 1024; i++)
		obuf__mem(out, line, sizeof(line));
	return 0;
}

/* Stats once fn says they are what is waited for, pumping with render_big
 * meanwhile (at most 2 s). */
static struct metrics_http_stats wait_stats(bool (*fn)(const struct metrics_http_stats *))
{
	struct metrics_http_stats st;
	uint64_t end = ms_now() + 2000;

	do {
		pump_with(5, render_big);
		metrics_http__stats(H, &st);
	} while (!fn(&st) && ms_now() < end);
	return st;
}

static bool one_timed_out(const struct metrics_http_stats *st)
{
	return st->timed_out >= 1;
}

static bool two_timed_out(const struct metrics_http_stats *st)
{
	return st->timed_out >= 2;
}

/* Deadlines: a silent client is closed timeout_ms (300) after it connected;
 * one that asks 150 ms after it connected and never reads its answer
 * timeout_ms after the answer was made, so later than the silent one; both
 * counted. */
static void test_deadlines(void **state)
{
	struct metrics_http_stats st;
	int silent, sink;

	(void)state;
	silent = connect_tcp();
	sink = connect_tcp();
	pump(150);
	assert_int_equal(send(sink, "GET /metrics HTTP/1.1\r\n\r\n", 25, 0), 25);
	st = wait_stats(one_timed_out);
	assert_int_equal(st.timed_out, 1);
	assert_int_equal(st.open, 1);
	assert_true(closed_by_server(silent));
	st = wait_stats(two_timed_out);
	assert_int_equal(st.timed_out, 2);
	assert_int_equal(st.served, 0);
	assert_int_equal(st.open, 0);
	close(silent);
	close(sink);
}

static void test_addresses(void **state)
{
	struct metrics_http_opts o = { .listen = "0.0.0.0:0" };
	struct metrics_http *h = NULL;

	(void)state;
	assert_int_equal(metrics_http__open(&o, &h), -EPERM);
	assert_null(h);
	o.allow_remote = true;
	assert_int_equal(metrics_http__open(&o, &h), 0);
	metrics_http__free(h);
	o.allow_remote = false;
	o.listen = "localhost:0";
	assert_int_equal(metrics_http__open(&o, &h), 0);
	metrics_http__free(h);
	o.listen = "[::1]:0";
	if (metrics_http__open(&o, &h) == 0)	/* where IPv6 is configured */
		metrics_http__free(h);
	for (const char *const *bad = (const char *const[]){ "127.0.0.1", "127.0.0.1:99999",
							      "example.com:80", "1.2.3.4.5:1", NULL };
	     *bad; bad++) {
		o.listen = *bad;
		assert_int_equal(metrics_http__open(&o, &h), -EINVAL);
	}
}

static void test_unix_socket(void **state)
{
	char dir[] = "/tmp/gt-metrics-http.XXXXXX", path[128], other[128];
	struct metrics_http_opts o = { .listen = path };
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/m.sock", dir);
	snprintf(other, sizeof(other), "%s/file", dir);
	metrics_http__free(H);
	H = NULL;
	assert_int_equal(open_with(&o), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	/* a second one on the same path: something listens there */
	assert_int_equal(metrics_http__open(&o, &(struct metrics_http *){ NULL }), -EADDRINUSE);
	/* served over the socket */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	strcpy(sun.sun_path, path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(send(fd, "GET /metrics HTTP/1.1\r\n\r\n", 25, 0), 25);
	assert_true(!strncmp(read_all(fd, 2000, render), "HTTP/1.1 200 OK\r\n", 17));
	close(fd);
	metrics_http__free(H);
	H = NULL;
	assert_int_equal(lstat(path, &st), -1);
	/* a stale socket (its server died) is replaced */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	close(fd);
	assert_int_equal(open_with(&o), 0);
	metrics_http__free(H);
	H = NULL;
	/* a file, or a link (even to a socket path), is never replaced */
	close(open(other, O_CREAT | O_WRONLY, 0600));
	o.listen = other;
	assert_int_equal(open_with(&o), -EEXIST);
	assert_int_equal(lstat(other, &st), 0);
	assert_int_equal(symlink(other, path), 0);
	o.listen = path;
	assert_int_equal(open_with(&o), -ELOOP);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	unlink(path);
	unlink(other);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_get_metrics, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_requests, setup, teardown),
		cmocka_unit_test_setup_teardown(test_silent_client, setup, teardown),
		cmocka_unit_test_setup_teardown(test_max_conns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deadlines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_addresses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unix_socket, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
