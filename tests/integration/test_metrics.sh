#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The Prometheus metrics end to end: a small server built here against the
# readers' library (the metrics module and its HTTP endpoint, fed a trace
# file) is scraped by a real Prometheus (Debian's prometheus package,
# tools/install-deps.sh), whose query API must give back the counts the mock
# workload printed for its own recording; promtool accepts the exposition;
# curl gets 404, 405 and 200 where it should, and clients that connect and
# send nothing (more of them than the endpoint's slots) do not keep another
# from its answer.
REQUIRES="jq gtrace"
# solo cases run scoped, beside others, in a cgroup of their own (lib.sh)
SCOPED_CASES="t_prometheus_scrape t_http_paths t_silent_client t_idle_clients t_light_sampled t_daemon_idle_clients"
. "$(dirname "$0")/lib.sh"

OUT_DIR=${GT_OUTPUT:-.output}
case $OUT_DIR in /*) ;; *) OUT_DIR=$ROOT/$OUT_DIR ;; esac
LIBREAD=$OUT_DIR/libgtrace-read.a
# the metrics are the daemon's (daemon/), in the recorder's library
LIBREC=$OUT_DIR/libgtrace-record.a
SERVE=
PORT=
PPORT=

# Builds $T/serve: reads TRACE into the metrics, serves them on a loopback
# port it picks and prints ("port N"), until killed.
build_serve() {
	local san=
	[ -f "$LIBREAD" ] || fatal "readers' library not built: $LIBREAD missing (run make)"
	cat > "$T/serve.c" <<'EOF'
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include "daemon/metrics.h"
#include "daemon/metrics_http.h"
#include "format/trace_file.h"

int main(int argc, char **argv)
{
	struct metrics_http_opts ho = { .listen = "127.0.0.1:0" };
	struct gt_metrics *m = gt_metrics__new(NULL);
	struct trace_reader *r;
	struct metrics_http *h;
	const struct gt_hdr *rec;
	const char *msg;
	int rc;

	if (argc != 2 || !m || trace_reader__open(argv[1], &r, &msg))
		return 2;
	while ((rc = trace_reader__next(r, &rec)) > 0)
		if (gt_metrics__feed(m, rec))
			return 3;
	if (rc < 0 || gt_metrics__finish(m))
		return 3;
	if (trace_reader__has_counters(r))
		gt_metrics__set_counters(m, trace_reader__counters(r));
	trace_reader__close(r);
	if (metrics_http__open(&ho, &h))
		return 4;
	printf("port %d\n", metrics_http__port(h));
	fflush(stdout);
	for (;;) {
		struct pollfd p = { .fd = metrics_http__fd(h), .events = POLLIN };

		if (poll(&p, 1, 1000) > 0 && metrics_http__serve(h, gt_metrics__render_cb, m))
			return 5;
	}
}
EOF
	# the sanitized build's library needs its runtimes
	nm "$LIBREAD" 2>/dev/null | grep -q __asan_init &&
		san="-fsanitize=address,undefined"
	cc -O1 -std=gnu11 -D_GNU_SOURCE -Wall -Werror $san -I"$OUT_DIR" -I"$ROOT/user" -iquote "$ROOT" \
		"$T/serve.c" "$LIBREC" "$LIBREAD" -lbpf -lelf -lz -lzstd -liberty -lm -o "$T/serve" 2> "$T/serve.err" ||
		fatal "cannot build the metrics server: $(head -n 5 "$T/serve.err" | tr '\n' '|')"
	SERVE=$T/serve
}

# start_serve TRACE: runs $T/serve on TRACE in the background; sets PORT.
start_serve() {
	build_serve
	"$SERVE" "$1" > "$T/serve.out" 2> "$T/serve.log" &
	PIDS+=($!)
	wait_line "$T/serve.out" '^port [0-9]+$' 20 $! ||
		fatal "the metrics server did not start: $(tail -n 3 "$T/serve.log" | tr '\n' '|')"
	PORT=$(awk '/^port/ { print $2 }' "$T/serve.out")
}

# A free loopback port, from the kernel (bound and released: a race that a
# test machine does not lose in practice).
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# prom_query EXPR: the query API's answer for EXPR (JSON).
prom_query() {
	curl -sfG --max-time 5 "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1"
}

t_prometheus_scrape() {
	local wj wl_pid want got i n api prom_rc
	command -v prometheus > /dev/null ||
		fatal "needs Prometheus (Debian's prometheus package: tools/install-deps.sh installs it); not installed here"
	[ "$(id -u)" -eq 0 ] || fatal "needs root to record the mock workload (uprobes)"
	[ -x "$WORKLOAD" ] && [ -f "$MOCK_LIB" ] || fatal "mock not built: $WORKLOAD (run make mock)"
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/t.gtrace" --force -- \
		"$WORKLOAD" --launches 100 > "$T/wl.out" 2> "$T/rec.err" ||
		fatal "recording the mock workload failed: $(tail -n 3 "$T/rec.err" | tr '\n' '|')"
	wj=$(grep '^{' "$T/wl.out" | tail -n 1)
	[ -n "$wj" ] || fatal "the workload printed no JSON line"
	wl_pid=$(jq -r .pid <<< "$wj")
	start_serve "$T/t.gtrace"
	PPORT=$(free_port)
	cat > "$T/prom.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: gtrace
    static_configs:
      - targets: ['127.0.0.1:$PORT']
EOF
	prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/prom-data" \
		--web.listen-address="127.0.0.1:$PPORT" > "$T/prom.log" 2>&1 &
	PIDS+=($!)
	for ((i = 0; i < 300; i++)); do
		got=$(prom_query 'gtrace_launches_total' | jq -r '.data.result | length' 2>/dev/null)
		[ "${got:-0}" -gt 0 ] && break
		kill -0 "${PIDS[-1]}" 2>/dev/null || break
		sleep 0.1
	done
	[ "${got:-0}" -gt 0 ] ||
		fatal "Prometheus did not scrape gtrace_launches_total in 30 s: $(tail -n 3 "$T/prom.log" | tr '\n' '|')"
	# the target is up, and every sample it ingested was well-formed
	got=$(prom_query 'up{job="gtrace"}' | jq -r '.data.result[0].value[1]')
	[ "$got" = 1 ] || err "up{job=\"gtrace\"} is $got, expected 1"
	want=$(jq '[.launches[]] | add' <<< "$wj")
	got=$(prom_query "gtrace_launches_total{pid=\"$wl_pid\"}" | jq -r '.data.result[0].value[1]')
	[ "$got" = "$want" ] || err "gtrace_launches_total of pid $wl_pid is $got, expected $want (the workload's launches)"
	[ "$want" -ge 100 ] || err "the workload says it launched $want kernels, expected at least 100"
	got=$(prom_query 'sum(gtrace_launches_total)' | jq -r '.data.result[0].value[1]')
	[ "$got" = "$want" ] || err "sum(gtrace_launches_total) is $got, expected $want"
	# every api the workload counted, call for call
	n=0
	while read -r api want; do
		got=$(prom_query "gtrace_api_calls_total{pid=\"$wl_pid\",api=\"$api\"}" |
			jq -r '.data.result[0].value[1] // "none"')
		[ "$got" = "$want" ] || err "gtrace_api_calls_total{api=\"$api\"} is $got, expected $want"
		n=$((n + 1))
	done < <(jq -r '.calls | to_entries[] | select(.value > 0) | "\(.key) \(.value)"' <<< "$wj")
	[ $n -ge 10 ] || err "only $n apis in the workload's counts, expected at least 10"
	# a copy moved bytes both ways, and the kernels' top is bounded
	got=$(prom_query "gtrace_copy_bytes_total{pid=\"$wl_pid\",direction=\"HtoD\"}" | jq -r '.data.result[0].value[1] // 0')
	[ "$got" -gt 0 ] || err "no HtoD bytes in gtrace_copy_bytes_total"
	got=$(prom_query 'count(gtrace_top_kernel_launches)' | jq -r '.data.result[0].value[1] // 0')
	[ "$got" -ge 1 ] && [ "$got" -le 10 ] || err "count(gtrace_top_kernel_launches) is $got, expected 1..10"
	got=$(prom_query 'gtrace_top_kernel_launches{rank="1"}' | jq -r '.data.result[0].metric.kernel // ""')
	case $got in "$K_VECADD" | "$K_SCALE" | "$K_FILL" | fill*) ;;
	*) err "the top kernel is '$got', expected one of the workload's" ;; esac
	prom_rc=0
	kill -0 "${PIDS[-1]}" 2>/dev/null || prom_rc=1
	[ $prom_rc -eq 0 ] || err "Prometheus exited: $(tail -n 3 "$T/prom.log" | tr '\n' '|')"
}

# A trace of the generator: no root needed for the HTTP side.
gen_served() {
	gen_trace -p 3 -k 20 "$T/g.gtrace" 2000 2 > /dev/null 2> "$T/gen.err" ||
		fatal "gen_trace failed: $(head -n 3 "$T/gen.err" | tr '\n' '|')"
	start_serve "$T/g.gtrace"
}

t_http_paths() {
	local code ctype
	gen_served
	code=$(curl -s -o "$T/m.txt" -w '%{http_code}' --max-time 5 "http://127.0.0.1:$PORT/metrics")
	[ "$code" = 200 ] || err "GET /metrics: status $code, expected 200"
	ctype=$(curl -s -o /dev/null -w '%{content_type}' --max-time 5 "http://127.0.0.1:$PORT/metrics")
	[ "$ctype" = "text/plain; version=0.0.4; charset=utf-8" ] || err "GET /metrics: Content-Type '$ctype'"
	grep -q '^gtrace_launches_total{pid="' "$T/m.txt" || err "GET /metrics has no gtrace_launches_total series"
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$PORT/")
	[ "$code" = 404 ] || err "GET /: status $code, expected 404"
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$PORT/api/v1/query")
	[ "$code" = 404 ] || err "GET /api/v1/query: status $code, expected 404"
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST -d x "http://127.0.0.1:$PORT/metrics")
	[ "$code" = 405 ] || err "POST /metrics: status $code, expected 405"
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -H "X-Big: $(head -c 9000 /dev/zero | tr '\0' a)" \
		"http://127.0.0.1:$PORT/metrics")
	[ "$code" = 431 ] || [ "$code" = 400 ] || err "a 9 KB header: status $code, expected 431"
	command -v promtool > /dev/null || fatal "needs promtool (Debian's prometheus package) to lint the exposition"
	promtool check metrics < "$T/m.txt" > "$T/lint.txt" 2>&1 ||
		err "promtool check metrics: $(head -n 5 "$T/lint.txt" | tr '\n' '|')"
}

t_silent_client() {
	local code t0 t1
	gen_served
	# connects and sends nothing, held open by this shell
	exec 3<> "/dev/tcp/127.0.0.1/$PORT" || fatal "cannot connect to the metrics server"
	exec 4<> "/dev/tcp/127.0.0.1/$PORT" || fatal "cannot connect to the metrics server"
	t0=$(date +%s%N)
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 3 "http://127.0.0.1:$PORT/metrics")
	t1=$(date +%s%N)
	[ "$code" = 200 ] || err "with two silent clients connected, GET /metrics: status $code, expected 200"
	[ $(((t1 - t0) / 1000000)) -lt 2000 ] || err "the answer took $(((t1 - t0) / 1000000)) ms with silent clients connected"
	# the silent one is closed at its deadline (5 s): read sees the end
	timeout 10 cat <&3 > /dev/null || err "the silent client was not closed within 10 s"
	exec 3<&- 4<&-
}

# hold_idle N: N connections to $PORT that send nothing, held open by a
# python3 process in the background until it is killed (or the server
# closes them: it prints "closed K" when K of them have been).
hold_idle() {
	python3 - "$PORT" "$1" > "$T/idle.out" 2> "$T/idle.err" <<- 'EOF' &
		import select, socket, sys
		port, n = int(sys.argv[1]), int(sys.argv[2])
		socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
		print("connected", flush=True)
		closed = set()
		while len(closed) < n:
		    r, _, _ = select.select([s for s in socks if s not in closed], [], [], 60)
		    if not r:
		        break
		    for s in r:
		        try:
		            data = s.recv(4096)
		        except ConnectionResetError:
		            data = b""
		        if not data:
		            closed.add(s)
		            print("closed %d" % len(closed), flush=True)
	EOF
	PIDS+=($!)
	wait_line "$T/idle.out" '^connected' 10 || fatal "cannot hold $1 connections: $(tail -n 2 "$T/idle.err" | tr '\n' '|')"
}

# More silent clients than the endpoint's 8 slots: a scrape is answered
# at once all the same, and every silent one is closed in the end.
t_idle_clients() {
	local code
	gen_served
	hold_idle 9
	code=$(curl -s -o "$T/m.txt" -w '%{http_code}' --max-time 3 "http://127.0.0.1:$PORT/metrics")
	[ "$code" = 200 ] || err "with 9 silent clients connected, GET /metrics: status $code, expected 200"
	grep -q '^gtrace_launches_total{pid="' "$T/m.txt" || err "the answer with silent clients connected has no gtrace_launches_total"
	# two made room (the 9th silent one, the scrape), the rest time out (5 s)
	wait_line "$T/idle.out" '^closed 9$' 20 || err "the silent clients were not all closed: $(tail -n 1 "$T/idle.out")"
}

# The daemon's endpoint the same, what became of its clients in status: 9
# silent ones and a scrape on 8 slots make 2 dropped (the 9th silent one and
# the scrape each took the oldest's slot), the 7 others time out (5 s), the
# scrape is served.
t_daemon_idle_clients() {
	local code st i
	[ "$(id -u)" -eq 0 ] || fatal "needs root to run the daemon (uprobes)"
	[ -x "$WORKLOAD" ] && [ -f "$MOCK_LIB" ] || fatal "mock not built: $WORKLOAD (run make mock)"
	PORT=$(free_port)
	start_daemon --mode full --window 30s --metrics "127.0.0.1:$PORT"
	hold_idle 9
	code=$(curl -s -o "$T/m.txt" -w '%{http_code}' --max-time 3 "http://127.0.0.1:$PORT/metrics")
	[ "$code" = 200 ] || err "with 9 silent clients connected, the daemon's GET /metrics: status $code, expected 200"
	wait_line "$T/idle.out" '^closed 9$' 20 || err "the silent clients were not all closed: $(tail -n 1 "$T/idle.out")"
	# status answers from the loop that closed them: the counts are there
	"$GTRACE" status --json > "$T/st.json" || fatal "status failed"
	st=$(jq -c 'with_entries(select(.key | startswith("metrics_clients_")))' "$T/st.json")
	log "status: $st"
	jq -e '.metrics_clients_dropped == 2 and .metrics_clients_timed_out == 7 and
	       .metrics_clients_served == 1 and .metrics_clients_refused == 0 and
	       .metrics_clients_open == 0' "$T/st.json" > /dev/null || err "status: $st"
	"$GTRACE" status -v | grep -q '^metrics_clients_dropped 2$' || err "status (text) does not say metrics_clients_dropped 2"
	stop_daemon
}

# Light mode counts launches and the other hot calls inside its windows
# only: those series say sampled="true" (the cold calls "false"), and the
# HELP lines say so; full mode has no such label. promtool accepts both.
t_light_sampled() {
	local code mode lpid=
	[ "$(id -u)" -eq 0 ] || fatal "needs root to run the daemon (uprobes)"
	for mode in light full; do
		PORT=$(free_port)
		if [ "$mode" = light ]; then
			start_daemon --mode light --light-window 1s/2s --window 30s --metrics "127.0.0.1:$PORT"
		else
			start_daemon --mode full --window 30s --metrics "127.0.0.1:$PORT"
		fi
		run_wl "w$mode" --flood 3 --copies 2 --syncs 2
		[ "$mode" = light ] && lpid=$WP
		sleep 1.5
		code=$(curl -s -o "$T/$mode.txt" -w '%{http_code}' --max-time 3 "http://127.0.0.1:$PORT/metrics")
		[ "$code" = 200 ] || err "$mode: GET /metrics: status $code"
		stop_daemon
		command -v promtool > /dev/null || fatal "needs promtool (Debian's prometheus package) to lint the exposition"
		promtool check metrics < "$T/$mode.txt" > "$T/$mode.prom" 2>&1 ||
			err "$mode: promtool check metrics: $(head -n 3 "$T/$mode.prom" | tr '\n' '|')"
	done
	grep -Eq "^gtrace_launches_total\{pid=\"$lpid\",process=\"[^\"]*\",sampled=\"true\"\} [0-9]+" "$T/light.txt" ||
		err "light: the launches of pid $lpid are not labelled sampled: $(grep '^gtrace_launches_total' "$T/light.txt" | head -n 2 | tr '\n' '|')"
	grep -q '^gtrace_api_calls_total{.*api="cuLaunchKernel",sampled="true"}' "$T/light.txt" &&
		grep -q '^gtrace_api_calls_total{.*api="cuMemcpyHtoD_v2",sampled="false"}' "$T/light.txt" ||
		err "light: api series not labelled by hot and cold: $(grep '^gtrace_api_calls_total' "$T/light.txt" | head -n 3 | tr '\n' '|')"
	grep -q '^# HELP gtrace_launches_total .*sampled' "$T/light.txt" || err "light: the HELP line does not say sampled"
	grep -q 'sampled=' "$T/full.txt" && err "full mode: series labelled sampled: $(grep -m1 'sampled=' "$T/full.txt")"
	return 0
}

add_case t_prometheus_scrape "Prometheus scrapes the metrics of a mock recording: launches and calls per api equal the workload's own counts"
add_case t_http_paths "GET /metrics is 200 text/plain 0.0.4 that promtool accepts; other paths 404, POST 405, huge headers 431"
add_case t_silent_client "a client that connects and sends nothing does not delay another's answer, and is closed at its deadline"
add_case t_idle_clients "9 silent clients on the 8 slots: a scrape is still answered at once, and they are all closed in the end"
add_case t_light_sampled "light mode's launch and hot-call series say sampled=\"true\" (cold ones false) and their HELP says why; full mode has no such label"
add_case t_daemon_idle_clients "the daemon's endpoint with 9 silent clients: the scrape answered; status counts 2 dropped, 7 timed out, 1 served"

run_cases "$@"
