/* SPDX-License-Identifier: MIT */
/*
 * The HTTP endpoint Prometheus scrapes: GET /metrics, nothing else, on a TCP
 * address (loopback unless allowed otherwise) or a UNIX socket, served from
 * the caller's poll loop.  It never blocks its caller: metrics_http__fd() is
 * one descriptor (an epoll set of the listener, the connections and a timer)
 * to poll for reading, and metrics_http__serve() does what is ready without
 * waiting.  Connections are few (max_conns), their buffers bounded, and each
 * is closed at its deadline whatever it did, so a client that connects and
 * never sends or never reads costs one slot for timeout_ms and no more.
 */
#ifndef GTRACE_ANALYSIS_METRICS_HTTP_H
#define GTRACE_ANALYSIS_METRICS_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include "lib/obuf.h"

#define METRICS_HTTP_DEFAULT "127.0.0.1:9464"	/* Prometheus's port range, gtrace's pick */

struct metrics_http_opts {
	const char *listen;	/* "HOST:PORT" (numeric IPv4, [IPv6] or localhost; port 0 picks
				 * one), or a UNIX socket: "unix:PATH" or a path starting with '/' */
	bool allow_remote;	/* listen on an address that is not loopback (warned about:
				 * the endpoint has no authentication) */
	unsigned max_conns;	/* connections at once, 0 = 8; more are closed at accept */
	unsigned timeout_ms;	/* a connection's whole life, 0 = 5000 */
	size_t max_response;	/* bytes of a rendering, 0 = 16 MiB; larger gives a 500 */
};

/* Writes the metrics into out; 0 or a negative errno (the client gets a 500). */
typedef int (*metrics_render_fn)(void *ctx, struct obuf *out);

struct metrics_http;

/* Listens.  Returns 0 or a negative errno, with the reason logged: -EINVAL
 * for an address it cannot read, -EPERM for a non-loopback one not allowed,
 * -EEXIST / -ELOOP for a UNIX path that is not a stale socket of ours (it is
 * never replaced), -EADDRINUSE for one that something listens on. */
int metrics_http__open(const struct metrics_http_opts *o, struct metrics_http **out);
/* The descriptor to poll for POLLIN. */
int metrics_http__fd(const struct metrics_http *h);
/* The TCP port listened on (the one picked for port 0), 0 for a UNIX socket. */
int metrics_http__port(const struct metrics_http *h);
/* Accepts, reads, answers and times out what is ready, without waiting;
 * calls render once per GET /metrics.  Returns 0, or a negative errno when
 * the descriptor itself failed (a client's trouble only ends that client). */
int metrics_http__serve(struct metrics_http *h, metrics_render_fn render, void *ctx);
/* Closes every connection and the listener; removes the UNIX socket it made. */
void metrics_http__free(struct metrics_http *h);

#endif
