/* SPDX-License-Identifier: MIT */
/* The daemon's control socket and pid lock (control.c), and the client side
 * that gtrace-bpf snapshot / status use. */
#ifndef GTRACE_CONTROL_H
#define GTRACE_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define CONTROL_DIR		"/run/gtrace-bpf"	/* unless GTRACE_RUN_DIR says another */
#define CONTROL_PATH_MAX	256
#define CONTROL_REQ_MAX		1024	/* one request line, newline included */
#define CONTROL_REPLY_MAX	65536	/* one reply, bounded */

struct control;

/* The directory of the control socket and pid file: $GTRACE_RUN_DIR when
 * set (an absolute path: tests, or two daemons in separate roots), else
 * CONTROL_DIR. */
const char *control__dir(void);

/* Answers one request line of client (a number, never 0): writes the reply
 * ("ok\n" then text, or "error: ...\n") into reply (len bytes) and returns
 * its length, or CONTROL_DEFER to answer later with control__reply. */
#define CONTROL_DEFER ((size_t)-1)
typedef size_t (*control_handler_fn)(void *ctx, uint64_t client, const char *req, char *reply,
				     size_t len);

/* What became of the clients, counted since the socket was opened. */
struct control_stats {
	uint64_t served;	/* replies sent whole */
	uint64_t timed_out;	/* clients that sent no request, or did not take their
				 * reply, in time: dropped */
	uint64_t refused;	/* clients turned away: table full (the longest silent one
				 * gives its slot up), another user, a request too long */
	uint64_t gone;		/* clients that hung up before their reply was sent */
};

/* Makes sure dir is a directory of ours (not a link) that no one else may
 * write in, creating it 0700 when missing: 0, -EPERM, or mkdir's -errno. */
int control__own_dir(const char *dir);
/* Takes dir (created 0700; refused unless a directory of ours that no one
 * else may write in), its pid file (flock'd: -EBUSY with *other = the pid
 * of the daemon holding it; -EEXIST when it is not a regular file of ours,
 * a symlink included) and its socket (a stale socket of ours is replaced;
 * anything else at its path is -ENOTSOCK). A failure leaves no pid file of
 * this process' behind. */
int control__open(const char *dir, struct control **out, pid_t *other);
/* The listening socket (non-blocking), for the daemon's poll loop. */
int control__fd(const struct control *c);
/* Serves the clients, never waiting: accepts the new ones, reads what has
 * come of their requests and answers those that are whole, sends what the
 * sockets take of the replies, and drops the clients whose deadline passed
 * (1 s for the request from the connect, 2 s for taking the reply), each
 * counted (control__stats) and said at -v. Call it from the poll loop. */
void control__serve(struct control *c, control_handler_fn handle, void *ctx);
/* The reply to a request whose handler said CONTROL_DEFER: 0, or -ENOENT
 * when that client is gone (hung up, or the socket closed). */
int control__reply(struct control *c, uint64_t client, const char *reply, size_t len);
/* Before control__close: sends the replies still going out, for at most
 * timeout_ms. */
void control__flush(struct control *c, int timeout_ms);
void control__stats(const struct control *c, struct control_stats *st);
/* Closes the socket and removes it and the pid file. */
void control__close(struct control *c);

/* Client: sends req to the daemon of dir and copies the reply's text to out
 * ("ok") or errs (its error line and the rest). Returns 0 for "ok", 1 for
 * an error reply, or a negative errno (-ENOENT/-ECONNREFUSED: no daemon). */
int control__request(const char *dir, const char *req, int timeout_ms, FILE *out, FILE *errs);

#endif
