/* SPDX-License-Identifier: MIT */
/*
 * The HTTP endpoint Prometheus scrapes: GET /metrics, nothing else, on a TCP
 * address (loopback unless allowed otherwise) or a UNIX socket, served from
 * the caller's poll loop.  It never blocks its caller: metrics_http__fd() is
 * one descriptor (an epoll set of the listener, the connections and a timer)
 * to poll for reading, and metrics_http__serve() does what is ready without
 * waiting.  Connections are few (max_conns), their buffers bounded, and each
 * is closed at its deadlines whatever it did (timeout_ms for the request to
 * arrive, as long again for the answer to be taken), so a client that
 * connects and never sends or never reads costs one slot for that long and
 * no more; and when every slot is taken, a new client takes the slot of the
 * oldest that has not sent a whole request (else of the oldest), so that
 * clients that hold connections open cannot keep a scrape out.
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
	unsigned max_conns;	/* connections at once, 0 = 8; a new one past them takes the
				 * slot of the oldest (the oldest silent one first) */
	unsigned timeout_ms;	/* how long a request may take to arrive, and its answer to
				 * be taken, 0 = 5000 */
	size_t max_response;	/* bytes of a rendering, 0 = 16 MiB; larger gives a 500 */
};

/* What became of the clients, counted since open. */
struct metrics_http_stats {
	uint64_t served;	/* answers sent whole (any status) */
	uint64_t timed_out;	/* closed at a deadline: no whole request, or the answer not
				 * taken, in time */
	uint64_t dropped;	/* closed to make room for a new client (silent ones first) */
	uint64_t refused;	/* turned away at accept (503): the endpoint could not watch them */
	uint64_t gone;		/* left, or failed, before their answer was sent */
	unsigned open;		/* connections open now */
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
void metrics_http__stats(const struct metrics_http *h, struct metrics_http_stats *st);
/* Closes every connection and the listener; removes the UNIX socket it made. */
void metrics_http__free(struct metrics_http *h);

#endif
