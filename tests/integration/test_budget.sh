#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The daemon's overhead budget against the mock libcuda: its estimate
# compared with the cost measured inside the traced program (the mock
# workload spins a fixed time before each launch and logs when each launch
# starts, so the launches' spacing inside light mode's windows against
# outside them is what the probes cost it), the window period stretched to
# keep a budget and given back when the cost goes, status, bad values.
REQUIRES="root jq mock gtrace python3"
# they time the workload: nothing else may run beside them
QUIET_CASES="t_estimate t_keeps"
# solo cases run scoped, beside others, in a cgroup of their own (lib.sh)
SCOPED_CASES="t_status t_mean_max t_bad"
. "$(dirname "$0")/lib.sh"

status_of() { # KEY: its value in status --json
	"$GTRACE" status --json | jq -r --arg k "$1" '.[$k]'
}

# measured LOG DUMP [AFTER]: what the probes cost the workload over the
# daemon's estimate intervals (its "overhead" records of reason estimate,
# from the first whose interval starts at or after AFTER ns), from its
# launch log: per light-mode window, the launches made while the probes were
# attached (its attach, the window, its detach) each took the median spacing
# there less the median spacing in the quiet time before it; their sum
# against the rest of the intervals, as the daemon defines its estimate.
# Prints: measured estimate windows (fractions), the daemon's own estimate
# over the same intervals.
measured() {
	python3 - "$@" <<- 'EOF'
		import bisect, json, sys
		log, dump = sys.argv[1], sys.argv[2]
		after = int(sys.argv[3]) if len(sys.argv) > 3 else 0
		ts = [int(x.split()[0]) for x in open(log) if x.strip()]
		wins, ivs, op = [], [], None
		for line in open(dump):
		    r = json.loads(line)
		    if r.get("type") == "capture" and r.get("kind") == "window_open":
		        op = (r["ts"] - r.get("latency_ns", 0), r["ts"])
		    elif r.get("type") == "capture" and r.get("kind") == "window_close" and op:
		        wins.append((op[0], op[1], r["ts"], r["ts"] + r.get("latency_ns", 0)))
		        op = None
		    elif r.get("type") == "overhead" and r.get("reason") != "calibrated":
		        if r["ts"] - r["interval_ns"] >= after:
		            ivs.append((r["ts"] - r["interval_ns"], r["ts"], r["probe_ns"]))
		def gaps(a, b):
		    i, j = bisect.bisect_left(ts, a), bisect.bisect_left(ts, b)
		    return sorted(ts[k + 1] - ts[k] for k in range(i, j - 1))
		def med(g):
		    return g[len(g) // 2] if g else 0
		extra, used, prev = 0, 0, 0
		per = {}	# interval -> the extra time of its windows measured
		for a0, a1, c0, c1 in wins:
		    quiet = gaps(max(prev, a0 - 2000000000) + 50000000, a0 - 10000000)
		    prev = c1
		    iv = [k for k, (lo, hi, _) in enumerate(ivs) if lo <= a1 < hi]
		    if not iv or len(quiet) < 100:
		        continue
		    base = med(quiet)
		    x = 0
		    for lo, hi in ((a0, a1), (a1, c0), (c0, c1)):
		        g = gaps(lo, hi)
		        x += len(g) * max(0, med(g) - base)
		    extra += x
		    per[iv[0]] = per.get(iv[0], 0) + x
		    used += 1
		span = sum(hi - lo for lo, hi, _ in ivs)
		probe = sum(p for _, _, p in ivs)
		# the cost each interval measured on its own: how far the
		# measurement itself spreads
		each = [x / (ivs[k][1] - ivs[k][0] - x) for k, x in per.items() if ivs[k][1] - ivs[k][0] > x]
		print("%.5f %.5f %d %.5f %.5f" % (extra / (span - extra) if span > extra else 1,
		                                  probe / (span - probe) if span > probe else 1, used,
		                                  min(each) if each else 0, max(each) if each else 0))
	EOF
}

# A neighbour that is no CUDA program and switches contexts all the time
# (two processes passing a byte back and forth): the scheduler's probe runs
# at each of its switches, and that is not the traced programs' cost.
neighbour() {
	exec python3 - <<- 'EOF'
		import os
		r1, w1 = os.pipe(); r2, w2 = os.pipe()
		if os.fork() == 0:
		    os.close(w1)
		    while os.read(r1, 1):
		        os.write(w2, b"x")
		    os._exit(0)
		while True:
		    os.write(w1, b"x"); os.read(r2, 1)
	EOF
}

# The estimate against the cost measured in the workload: 1 s windows every
# 3 s, no budget (the period stays), a workload spinning 10 us per launch
# (the mock's launches, like the driver's, are probed on a push: ~1 us a hit
# on the CI VM), beside a busy neighbour (without the traced share of the
# kernel-side runs, its switches made the estimate 4x the cost).
t_estimate() {
	local m est wins
	neighbour &
	PIDS+=($!)
	GT_LIBCUDA=$MOCK_LIB "$WORKLOAD" --flood 14 --work 10 --launch-log "$T/ll" > "$T/wl.out" 2> "$T/wl.err" &
	local wp=$!
	PIDS+=("$wp")
	sleep 0.5
	start_daemon -v --light-window 1s/3s --budget none --window 60s
	sleep 9.5
	"$GTRACE" snapshot -o "$T/s.gtrace" > /dev/null 2> "$T/snap.err" || fatal "snapshot: $(cat "$T/snap.err")"
	stop_daemon
	wait_exit "$wp" 30 || fatal "the workload did not end"
	[ "$WAIT_RC" -eq 0 ] || fatal "the workload failed: $(tail -n 2 "$T/wl.err")"
	dump_trace "$T/s.gtrace" "$T/s.json"
	read -r m est wins lo hi < <(measured "$T/ll" "$T/s.json")
	log "estimate $(pct "$est"), measured $(pct "$m") over $wins windows (each interval's: $(pct "$lo") to $(pct "$hi"))"
	[ "$wins" -ge 2 ] || fatal "only $wins windows inside the estimate's intervals"
	awk -v m="$m" 'BEGIN { exit !(m > 0.01) }' || fatal "the probes measured no cost ($m): nothing to compare"
	# within 30 % of what the workload paid, the measurement's own spread
	# over its intervals added (a window the machine slowed or sped up
	# moves the measured figure, not the estimate)
	awk -v e="$est" -v m="$m" -v lo="$lo" -v hi="$hi" \
		'BEGIN { a = m < lo ? m : lo; b = m > hi ? m : hi; exit !(e >= 0.7 * a && e <= 1.3 * b) }' ||
		err "the estimate $(pct "$est") is not within 30% of the measured $(pct "$m") (each interval's $(pct "$lo") to $(pct "$hi"))"
	grep -q 'budget: a probe hit costs .* single-stepped' "$T/daemon.err" || err "no calibration line at -v"
	grep -q 'overhead (estimated): ' "$T/daemon.err" || err "no closing estimate line"
}

pct() { awk -v x="$1" 'BEGIN { printf "%.2f%%", x * 100 }'; }

# An 8 % budget with half of the time in windows costing ~30 %: the
# period is stretched, the cost after it is under the budget; once the
# workload has stopped, the configured period comes back.
t_keeps() {
	local period m est wins t0 i
	# the workload runs until stopped: how far the period stretches, and so
	# how long two windows after the change take, depends on what a trap
	# costs this machine (a fixed run of 12 s held no window after a
	# stretch to 6.5 s)
	GT_LIBCUDA=$MOCK_LIB "$WORKLOAD" --flood 120 --until-term --work 3 --launch-log "$T/ll" > "$T/wl.out" 2> "$T/wl.err" &
	local wp=$!
	PIDS+=("$wp")
	sleep 0.5
	start_daemon -v --light-window 500ms/1s --budget 8% --window 120s
	# the change, then three more windows opened: the estimate interval
	# from the first window under the new period to the next is complete
	for ((i = 0; i < 60; i++)); do
		[ "$(status_of overhead_changes)" -ge 1 ] && break
		sleep 0.5
	done
	[ $i -lt 60 ] || fatal "no change of the period in 30 s at an 8% budget"
	wins=$(status_of light_windows)
	period=$(status_of light_period_s)
	local deadline=$(awk -v p="$period" 'BEGIN { d = (4 * p + 10) * 2; printf "%d", (d > 160 ? 160 : d) }')
	for ((i = 0; i < deadline; i++)); do
		[ "$(status_of light_windows)" -ge $((wins + 3)) ] && break
		sleep 0.5
	done
	[ $i -lt "$deadline" ] || fatal "fewer than 3 windows in $((deadline / 2)) s after the period became ${period} s"
	# stretched past the configured second (how far depends on what a trap
	# costs this machine: the cost after the change is checked below)
	period=$(status_of light_period_s)
	awk -v p="$period" 'BEGIN { exit !(p > 1.05) }' || err "the period is ${period} s under a budget the windows exceed"
	[ "$(status_of overhead_changes)" -ge 1 ] || err "status shows no change"
	grep -q 'budget 8.00%: estimated .*light windows 500 ms every' "$T/daemon.err" ||
		err "no line saying the period changed: $(grep budget "$T/daemon.err" | tail -n 2 | tr '\n' '|')"
	"$GTRACE" snapshot -o "$T/s.gtrace" > /dev/null 2> "$T/snap.err" || fatal "snapshot: $(cat "$T/snap.err")"
	kill -TERM "$wp"
	wait_exit "$wp" 30 || fatal "the workload did not end"
	dump_trace "$T/s.gtrace" "$T/s.json"
	jq -e -s 'any(.[]; .type == "overhead" and .reason == "duty_down")' "$T/s.json" > /dev/null ||
		err "no duty_down record in the snapshot"
	# after the change: the intervals under the stretched period
	t0=$(jq -s '[.[] | select(.type == "overhead" and .reason == "duty_down") | .ts] | min' "$T/s.json")
	read -r m est wins lo hi < <(measured "$T/ll" "$T/s.json" "$t0")
	log "period ${period} s; after the change: measured $(pct "$m") (each interval's $(pct "$lo") to $(pct "$hi")), estimated $(pct "$est") over $wins windows"
	[ "$wins" -ge 1 ] || err "no window after the change to measure"
	# the daemon aims at 75 % of the budget by its estimate, which is held
	# to within 30 % of the cost (t_estimate); what the workload paid is
	# measured over a few windows on a shared machine: over the budget is
	# a failure where it is more than the measurement's own spread over its
	# intervals (half their range) above it (CI once measured 8.08 % over
	# two windows with an estimate of 6.72 %)
	awk -v m="$m" -v lo="$lo" -v hi="$hi" 'BEGIN { exit !(m - (hi - lo) / 2 <= 0.08) }' ||
		err "measured $(pct "$m") after the change (each interval's $(pct "$lo") to $(pct "$hi")), over the 8% budget"
	awk -v m="$est" 'BEGIN { exit !(m <= 0.08) }' || err "estimated $(pct "$est") after the change, over the 8% budget"
	# no cost any more: back to the configured second
	i=0
	while [ $i -lt 40 ]; do
		period=$(status_of light_period_s)
		awk -v p="$period" 'BEGIN { exit !(p <= 1.05) }' && break
		sleep 0.5
		i=$((i + 1))
	done
	[ $i -lt 40 ] || err "the period stayed ${period} s after the workload stopped"
	est=$(status_of overhead_estimate_pct)
	awk -v e="$est" 'BEGIN { exit !(e < 1) }' || err "estimate ${est}% with nothing running"
	stop_daemon
}

t_status() {
	local s
	start_daemon -v --mode full --budget 0.5%
	GT_LIBCUDA=$MOCK_LIB "$WORKLOAD" --launches 2000 > /dev/null 2>&1 || fatal "workload failed"
	sleep 6
	"$GTRACE" status --json > "$T/st.json" || fatal "status failed"
	jq -e '(.overhead_estimate_pct | type) == "number" and .overhead_budget_pct == 0.5 and
	       .probe_hit_ns > 0 and .bpf_stats == "on" and .duty_cycle_pct == 100 and
	       .overhead_evaluations >= 1 and .overhead_hits >= 2000' "$T/st.json" > /dev/null ||
		err "status: $(head -c 600 "$T/st.json")"
	grep -q 'full mode keeps every probe, so the estimate is reported, not kept' "$T/daemon.err" ||
		err "full mode with a budget: no line saying it is not kept"
	stop_daemon
	grep -q 'overhead (estimated): ' "$T/daemon.err" || err "no closing estimate line"
}

# The mean and the max of the estimate are of one figure, the costliest
# thread's probe time over the rest of each interval: 32 threads flooding
# launches through a 4 KiB ring buffer lose most records, and the hits no
# record shows, all charged to one thread, can exceed an interval. Each
# interval's record says estimate = probe / (interval - probe) with probe
# under the interval; status gives the max of those estimates and a mean
# between the lowest and the highest; so does the closing line.
t_mean_max() {
	local n st line mean max
	start_daemon -v --mode full --budget 1% --buffer-size 4K --window 120s
	GT_LIBCUDA=$MOCK_LIB "$WORKLOAD" --flood 17 --threads 32 > "$T/wl.out" 2> "$T/wl.err" ||
		fatal "the workload failed: $(tail -n 2 "$T/wl.err" | tr '\n' '|')"
	sleep 1
	"$GTRACE" status --json > "$T/st.json" || fatal "status failed"
	snap
	stop_daemon
	n=$(jq .overhead_evaluations "$T/st.json")
	[ "$n" -ge 3 ] || fatal "$n evaluations in a 17 s flood"
	dump_trace "$SNAP" "$T/s.json"
	# the intervals status had counted, from their records
	jq -s --argjson n "$n" '[.[] | select(.type == "overhead" and .interval_ns > 0)] | sort_by(.ts) | .[:$n]' \
		"$T/s.json" > "$T/ov.json"
	[ "$(jq length "$T/ov.json")" -eq "$n" ] || fatal "the snapshot holds $(jq length "$T/ov.json") of the $n estimates"
	log "estimates (probe/interval ms, ppm): $(jq -c '[.[] | [(.probe_ns / 1e6 | floor), (.interval_ns / 1e6 | floor), .estimate_ppm]]' "$T/ov.json");" \
		"$(jq '[.[] | select(.probe_ns * 101 >= .interval_ns * 100 - 101)] | length' "$T/ov.json") charged past the interval"
	jq -e 'all(.[]; .probe_ns < .interval_ns and
		(((.probe_ns / (.interval_ns - .probe_ns)) * 1e6 - .estimate_ppm) | fabs) <= 1 + .estimate_ppm * 1e-6)' \
		"$T/ov.json" > /dev/null ||
		err "records whose estimate is not probe / (interval - probe): $(jq -c '[.[] | [.probe_ns, .interval_ns, .estimate_ppm]]' "$T/ov.json")"
	st=$(jq -c '{overhead_mean_estimate_pct, overhead_max_estimate_pct}' "$T/st.json")
	log "status: $st"
	jq -e --slurpfile ov "$T/ov.json" '
		([$ov[0][].estimate_ppm] | min / 1e4) as $lo | ([$ov[0][].estimate_ppm] | max / 1e4) as $hi |
		(.overhead_max_estimate_pct - $hi | fabs) <= 0.001 and
		.overhead_mean_estimate_pct >= $lo - 0.001 and .overhead_mean_estimate_pct <= .overhead_max_estimate_pct' \
		"$T/st.json" > /dev/null ||
		err "status $st against the intervals' estimates $(jq -c '[.[].estimate_ppm]' "$T/ov.json") ppm"
	line=$(grep 'overhead (estimated): ' "$T/daemon.err") || fatal "no closing estimate line"
	mean=$(sed -E 's/.*: ([0-9.]+)% of the costliest.*/\1/' <<< "$line")
	max=$(sed -E 's/.*at most ([0-9.]+)%.*/\1/' <<< "$line")
	awk -v a="$mean" -v b="$max" 'BEGIN { exit !(a + 0 <= b + 0 && b + 0 > 0) }' ||
		err "the closing line's mean is above its max: $line"
}

t_bad() {
	local bad rc
	for bad in 0% abc 60% 1%% -1 ''; do
		"$GTRACE" daemon --budget "$bad" > /dev/null 2> "$T/bad.err"
		rc=$?
		[ $rc -eq 2 ] || err "--budget '$bad' exited $rc, expected 2"
		[ "$(grep -c . "$T/bad.err")" -eq 1 ] || err "--budget '$bad': not one line: $(tr '\n' '|' < "$T/bad.err")"
	done
}

add_case t_estimate "budget: the daemon's estimate within 30% of the cost measured in the traced workload"
add_case t_keeps "budget: an 8% budget stretches the window period, the measured cost after it is under it, the period comes back"
add_case t_status "budget: status fields (estimate, budget, hit cost, BPF stats), full mode reports and says it does not keep it"
add_case t_mean_max "budget: the estimate's mean and max are of one figure (mean between the intervals' lowest and highest), also when the hits charged to a thread exceed the interval"
add_case t_bad "budget: bad --budget values exit 2 with one line"
run_cases "$@"
