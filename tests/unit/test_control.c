// SPDX-License-Identifier: MIT
/*
 * Unit tests of the daemon's control socket (user/daemon/control.c), the
 * server side never waiting on a client: one that sends nothing is dropped
 * at its deadline and counted while others are answered at once, a reply
 * can come later (a snapshot being written) or find its client gone, a
 * client that hung up is no SIGPIPE, a table full of silent clients gives
 * a slot to a new one, and a socket or pid file path taken by something
 * not ours is refused, left as it was.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>
#include "daemon/control.h"
#include "test_util.h"

/* "status": answered at once; "later": deferred, the client's number kept. */
static uint64_t deferred;

static size_t handler(void *ctx, uint64_t client, const char *req, char *reply, size_t len)
{
	(void)ctx;
	if (!strcmp(req, "later")) {
		deferred = client;
		return CONTROL_DEFER;
	}
	return (size_t)snprintf(reply, len, "ok\n%s\n", req);
}

static struct control *open_control(void)
{
	struct control *c;
	pid_t other;

	assert_int_equal(control__open(tmp_path("run"), &c, &other), 0);
	return c;
}

static int client(const char *send_this)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/control.sock", tmp_path("run"));
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	if (send_this)
		assert_int_equal(send(fd, send_this, strlen(send_this), 0), (ssize_t)strlen(send_this));
	return fd;
}

/* What fd has within ms, up to EOF: into buf; returns the bytes, -1 when
 * nothing came and the connection is still open. */
static ssize_t reply_of(int fd, char *buf, size_t len, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t used = 0;
	ssize_t n;

	for (;;) {
		if (poll(&p, 1, ms) <= 0)
			return used ? (ssize_t)used : -1;
		n = read(fd, buf + used, len - 1 - used);
		if (n <= 0)
			break;
		used += n;
	}
	buf[used] = 0;
	return (ssize_t)used;
}

static void test_silent_client(void **state)
{
	struct control *c = open_control();
	struct control_stats st;
	char buf[256];
	int silent, asker;

	(void)state;
	silent = client(NULL);
	asker = client("status\n");
	control__serve(c, handler, NULL);
	assert_int_equal(reply_of(asker, buf, sizeof(buf), 1000), 10);
	assert_string_equal(buf, "ok\nstatus\n");
	/* the silent one is still there, not yet dropped */
	assert_int_equal(reply_of(silent, buf, sizeof(buf), 0), -1);
	usleep(1100 * 1000);
	control__serve(c, handler, NULL);
	assert_int_equal(reply_of(silent, buf, sizeof(buf), 1000), 0);
	control__stats(c, &st);
	assert_int_equal(st.served, 1);
	assert_int_equal(st.timed_out, 1);
	close(silent);
	close(asker);
	control__close(c);
}

static void test_deferred_reply(void **state)
{
	struct control *c = open_control();
	struct control_stats st;
	uint64_t first;
	char buf[256];
	int waiter, quitter, fd;

	(void)state;
	waiter = client("later\n");
	control__serve(c, handler, NULL);
	first = deferred;
	assert_true(first != 0);
	assert_int_equal(reply_of(waiter, buf, sizeof(buf), 50), -1);
	/* others are served meanwhile */
	fd = client("status\n");
	control__serve(c, handler, NULL);
	assert_int_equal(reply_of(fd, buf, sizeof(buf), 1000), 10);
	close(fd);
	assert_int_equal(control__reply(c, first, "ok\nlate\n", 8), 0);
	assert_int_equal(reply_of(waiter, buf, sizeof(buf), 1000), 8);
	assert_string_equal(buf, "ok\nlate\n");
	assert_int_equal(control__reply(c, first, "ok\nagain\n", 9), -ENOENT);
	/* a client that hangs up while it waits: its reply has no taker */
	quitter = client("later\n");
	control__serve(c, handler, NULL);
	assert_true(deferred != first);
	close(quitter);
	control__serve(c, handler, NULL);
	assert_int_equal(control__reply(c, deferred, "ok\nlate\n", 8), -ENOENT);
	/* one that sends and hangs up before the answer: no SIGPIPE here */
	close(client("status\n"));
	control__serve(c, handler, NULL);
	control__stats(c, &st);
	assert_int_equal(st.served, 2);
	assert_true(st.gone >= 1);
	close(waiter);
	control__close(c);
}

/* Sixteen silent clients fill the table: a seventeenth that asks is
 * answered, the longest silent one giving its slot up. */
static void test_full_table(void **state)
{
	struct control *c = open_control();
	struct control_stats st;
	int silent[16], fd, i;
	char buf[256];

	(void)state;
	for (i = 0; i < 16; i++) {
		silent[i] = client(NULL);
		control__serve(c, handler, NULL);
	}
	fd = client("status\n");
	control__serve(c, handler, NULL);
	assert_int_equal(reply_of(fd, buf, sizeof(buf), 1000), 10);
	assert_int_equal(reply_of(silent[0], buf, sizeof(buf), 1000), 0);
	control__stats(c, &st);
	assert_int_equal(st.refused, 1);
	assert_int_equal(st.served, 1);
	for (i = 0; i < 16; i++)
		close(silent[i]);
	close(fd);
	control__close(c);
}

/* A directory with what is at its control.sock or daemon.pid made by
 * make(path): control__open refuses it with want, leaves no pid file of
 * its own and leaves what was there. */
static void refuse_with(const char *name, int (*make)(const char *path), const char *what, int want)
{
	char dir[PATH_MAX / 2], path[PATH_MAX];
	struct control *c = (void *)1;
	struct stat before, after;
	pid_t other = -1;

	snprintf(dir, sizeof(dir), "%s", tmp_path(name));
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, what);
	assert_int_equal(make(path), 0);
	assert_int_equal(lstat(path, &before), 0);
	assert_int_equal(control__open(dir, &c, &other), want);
	assert_null(c);
	assert_int_equal(lstat(path, &after), 0);
	assert_int_equal(before.st_ino, after.st_ino);
	assert_int_equal(before.st_size, after.st_size);
	if (strcmp(what, "daemon.pid")) {
		snprintf(path, sizeof(path), "%s/daemon.pid", dir);
		assert_int_equal(access(path, F_OK), -1);
	}
}

static int make_file(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs("not ours\n", f);
	return fclose(f);
}

static int make_fifo(const char *path)
{
	return mkfifo(path, 0600);
}

static int make_link(const char *path)
{
	return symlink(tmp_path("elsewhere"), path);
}

/* What is at the socket's path and is not a socket of ours is -ENOTSOCK,
 * a pid file that is not a regular file of ours -EEXIST (no FIFO opened
 * for long, no symlink followed); a stale socket of ours is replaced. */
static void test_not_ours(void **state)
{
	struct control *c;
	pid_t other;
	int fd;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	(void)state;
	refuse_with("sock_file", make_file, "control.sock", -ENOTSOCK);
	refuse_with("sock_fifo", make_fifo, "control.sock", -ENOTSOCK);
	refuse_with("sock_link", make_link, "control.sock", -ENOTSOCK);
	refuse_with("pid_fifo", make_fifo, "daemon.pid", -EEXIST);
	refuse_with("pid_link", make_link, "daemon.pid", -EEXIST);
	assert_int_equal(access(tmp_path("elsewhere"), F_OK), -1);
	/* a socket of ours left by a daemon that was killed */
	assert_int_equal(mkdir(tmp_path("stale"), 0700), 0);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/control.sock", tmp_path("stale"));
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	assert_int_equal(control__open(tmp_path("stale"), &c, &other), 0);
	control__close(c);
}

static int group_setup(void **state)
{
	(void)state;
	return tu_tmpdir_make("test_control");
}

static int group_teardown(void **state)
{
	(void)state;
	return tu_tmpdir_remove_all();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_silent_client),
		cmocka_unit_test(test_deferred_reply),
		cmocka_unit_test(test_full_table),
		cmocka_unit_test(test_not_ours),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
