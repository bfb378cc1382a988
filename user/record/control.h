/* SPDX-License-Identifier: MIT */
/* The daemon's control socket and pid lock (control.c), and the client side
 * that gtrace-bpf snapshot / status use. */
#ifndef GTRACE_CONTROL_H
#define GTRACE_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
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

/* Answers one request line: writes the reply ("ok\n" then text, or
 * "error: ...\n") into reply (len bytes) and returns its length. */
typedef size_t (*control_handler_fn)(void *ctx, const char *req, char *reply, size_t len);

/* Makes sure dir is a directory of ours (not a link) that no one else may
 * write in, creating it 0700 when missing: 0, -EPERM, or mkdir's -errno. */
int control__own_dir(const char *dir);
/* Takes dir (created 0700; refused unless a directory of ours that no one
 * else may write in), its pid file (flock'd: -EBUSY with *other = the pid
 * of the daemon holding it) and its socket (a stale socket of ours is
 * replaced; anything else at its path is -EEXIST). */
int control__open(const char *dir, struct control **out, pid_t *other);
/* The listening socket (non-blocking), for the daemon's poll loop. */
int control__fd(const struct control *c);
/* Serves one pending client: -EAGAIN when none; the request and the reply
 * each have 200 ms, then the client is dropped. */
int control__serve(struct control *c, control_handler_fn handle, void *ctx);
/* Closes the socket and removes it and the pid file. */
void control__close(struct control *c);

/* Client: sends req to the daemon of dir and copies the reply's text to out
 * ("ok") or errs (its error line and the rest). Returns 0 for "ok", 1 for
 * an error reply, or a negative errno (-ENOENT/-ECONNREFUSED: no daemon). */
int control__request(const char *dir, const char *req, int timeout_ms, FILE *out, FILE *errs);

#endif
