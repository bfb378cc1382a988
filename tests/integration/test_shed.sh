#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The overhead budget's last resort against the mock libcuda: a workload
# that synchronizes after every launch costs more than a budget that no
# window period can hold (GTRACE_BUDGET_PERIOD_MAX_S, a test-only knob,
# makes the longest period 2 s), so the daemon sheds cuStreamSynchronize
# to the light windows, exactly once, and gives it back once the cost has
# gone (GTRACE_BUDGET_RETRY_S: 6 s instead of 10 minutes); a second flood
# sheds it again. The workload numbers its calls in a register the call does
# not read (--sync-each, --steady), so the snapshot tells exactly which calls
# were recorded: every sync before the shed, only those inside windows
# after it; every cuCtxSynchronize (same always-on links, swapped under it)
# once, entry and exit, across the swaps.
REQUIRES="root jq mock gtrace python3"
# solo cases run scoped, beside others, in a cgroup of their own (lib.sh)
SCOPED_CASES="t_shed"
. "$(dirname "$0")/lib.sh"
TRACE_ARGS=${MOCK_DIR%/mock}/tools/trace_args

status_of() { # KEY: its value in status --json
	"$GTRACE" status --json | jq -r --arg k "$1" '.[$k]'
}

# wait_status KEY VALUE SECONDS: until status says it
wait_status() {
	local i=0 n=$(($3 * 4)) v
	while [ $i -lt $n ]; do
		v=$(status_of "$1")
		[ "$v" = "$2" ] && return 0
		sleep 0.25
		i=$((i + 1))
	done
	err "status $1 is '$v' after $3 s, expected '$2'"
	return 1
}

# check_calls ARGS DUMP WL_OUT SHEDS DROPS: the snapshot's calls of one
# workload run against what it made; prints what it found, exits non-zero
# with a line per mismatch. DROPS: records the snapshot's counters say were
# lost to a full ring buffer (a flood under a loaded machine can outrun the
# daemon): the calls missing and the exits without their entry may then
# add up to that many, said in the line; without drops, none.
check_calls() {
	python3 - "$@" <<- 'EOF2'
		import json, sys
		args, dump, wl, want_sheds, drops = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
		lost = []	# (what, how many) explained only by the counted drops
		made = json.loads([l for l in open(wl) if l.startswith("{")][-1])["calls"]
		bad = []
		sheds, opens, closes = [], {}, {}
		for l in open(dump):
		    r = json.loads(l)
		    # by number: a window's close is written once its detach is done,
		    # which may be after the next window opened
		    if r.get("type") == "capture" and r.get("kind") == "window_open":
		        opens[r["index"]] = r["ts"]
		    elif r.get("type") == "capture" and r.get("kind") == "window_close":
		        closes[r["index"]] = r["ts"]
		    elif r.get("type") == "overhead" and r.get("reason") in ("shed", "restore"):
		        sheds.append((r["ts"], r["reason"], r["api"], r["cut"]))
		# a window whose close is not written yet (its detach still running
		# when the snapshot was taken) is open to the snapshot's end, as
		# the readers take it
		wins = [(opens[i], closes.get(i, float("inf"))) for i in opens]
		calls = {"cuStreamSynchronize": [], "cuCtxSynchronize": []}
		unmatched = {k: [0, 0] for k in calls}
		open_ = {}
		orphans = []	# times of the exits without their entry
		for l in open(args):
		    f = l.split()
		    kind, ts, tid, api = f[0], int(f[1]), f[2], f[3]
		    if api not in calls:
		        continue
		    if kind == "entry":
		        seq = int(f[5]) if api == "cuStreamSynchronize" else int(f[4])
		        if (tid, api) in open_:
		            unmatched[api][0] += 1
		        open_[(tid, api)] = ts
		        calls[api].append((ts, seq))
		    elif (tid, api) in open_:
		        del open_[(tid, api)]
		    else:
		        unmatched[api][1] += 1
		        if api == "cuStreamSynchronize":
		            orphans.append(ts)
		for (tid, api) in open_:
		    unmatched[api][0] += 1
		shed = [s for s in sheds if s[1] == "shed" and s[2] == "cuStreamSynchronize"]
		if len(shed) != want_sheds:
		    bad.append("%d sheds of cuStreamSynchronize in the snapshot, expected %d: %s" % (len(shed), want_sheds, sheds))
		# cuCtxSynchronize: every call once, entry and exit, across the swaps
		seqs = sorted(s for _, s in calls["cuCtxSynchronize"])
		n = made.get("cuCtxSynchronize", 0)
		if seqs != list(range(n)):
		    dup = len(seqs) - len(set(seqs))
		    bad.append("cuCtxSynchronize: %d records for %d calls (%d doubled, %d missing)" %
		               (len(seqs), n, dup, len(set(range(n)) - set(seqs))))
		if unmatched["cuCtxSynchronize"] != [0, 0]:
		    bad.append("cuCtxSynchronize: %d entries and %d exits unmatched" % tuple(unmatched["cuCtxSynchronize"]))
		# cuStreamSynchronize: every call before the shed, only windows' after
		sy = sorted(calls["cuStreamSynchronize"])
		t_shed = shed[0][0] if shed else None
		before = [s for t, s in sy if t_shed is None or t < t_shed]
		after = [(t, s) for t, s in sy if t_shed is not None and t >= t_shed]
		if before != list(range(len(before))):
		    holes = (before[-1] + 1 - len(set(before))) if before else 0
		    if drops and len(set(before)) == len(before) and before == sorted(set(before)) and 0 < holes:
		        lost.append(("calls missing before the shed", holes))
		    else:
		        bad.append("cuStreamSynchronize before the shed: %d records, not calls 0..%d each once" % (len(before), len(before) - 1))
		if t_shed is not None and not before:
		    bad.append("no cuStreamSynchronize recorded before the shed")
		outside = [t for t, s in after if not any(a <= t <= b for a, b in wins)]
		if outside:
		    near = []
		    for t in outside[:1] + outside[-1:]:
		        a = max([w for w in wins if w[0] <= t], default=None)
		        near.append("+%.3f s after the shed (the window before: %s)" % ((t - t_shed) / 1e9,
		                    "+%.3f to +%.3f s" % ((a[0] - t_shed) / 1e9, (a[1] - t_shed) / 1e9) if a else "none"))
		    bad.append("%d cuStreamSynchronize recorded after the shed outside every window, the first and last at %s" %
		               (len(outside), "; ".join(near)))
		if after and min(s for _, s in after) < len(before):
		    bad.append("a call numbered before the shed's last recorded after it")
		cut = sum(s[3] for s in shed)
		if unmatched["cuStreamSynchronize"][1]:
		    if drops:
		        lost.append(("exits without their entry", unmatched["cuStreamSynchronize"][1]))
		    else:
		        # where they lie says which mechanism lost their entries:
		        # the swaps (near a shed or restore), a window's edges
		        inw = sum(1 for t in orphans if any(a <= t <= b for a, b in wins))
		        def rel(t):
		            m = min(sheds, key=lambda x: abs(x[0] - t), default=None)
		            return "%+.3f s from the nearest %s of %s" % ((t - m[0]) / 1e9, m[1], m[2]) if m else "no swap in the trace"
		        bad.append("cuStreamSynchronize: %d exits without their entry (%d inside windows; the first %s, the last %s)" %
		                   (unmatched["cuStreamSynchronize"][1], inw, rel(orphans[0]), rel(orphans[-1])))
		# a call in flight as a window closes after the shed may lose its
		# exit (the window's probes go): one a window on the workload's one
		# syncing thread, and one at the snapshot's end, beside the swaps' cut
		closed = sum(1 for a, b in wins if t_shed is not None and t_shed <= b < float("inf"))
		if unmatched["cuStreamSynchronize"][0] > cut + closed + 1:
		    if drops:
		        lost.append(("entries without their exit beyond the %d cut and %d window closes" % (cut, closed),
		                     unmatched["cuStreamSynchronize"][0] - cut - closed - 1))
		    else:
		        bad.append("cuStreamSynchronize: %d entries without their exit, the sheds said %d cut, %d windows closed after the shed" %
		                   (unmatched["cuStreamSynchronize"][0], cut, closed))
		if sum(n for _, n in lost) > drops:
		    bad.append("cuStreamSynchronize: %s, more than the %d records lost to a full ring buffer" %
		               (", ".join("%d %s" % (n, w) for w, n in lost), drops))
		print("sync: %d calls, %d recorded before the shed, %d after it in %d windows; ctx: %d of %d; cut %d; "
		      "%d records lost to a full ring buffer%s" %
		      (made.get("cuStreamSynchronize", 0), len(before), len(after), len(wins), len(seqs), n, cut, drops,
		       "".join(", %d %s" % (n_, w) for w, n_ in lost)))
		for b in bad:
		    print("MISMATCH " + b)
		sys.exit(1 if bad else 0)
	EOF2
}

# dump_marks TRACE OUT: the trace's capture and overhead records, one JSON
# object a line: all the checks read of a dump here (the floods' dumps hold
# hundreds of thousands of calls, which the args files give).
dump_marks() {
	local rc
	"$GTRACE" dump "$1" > "$2.all" 2> "$2.err"
	rc=$?
	[ $rc -eq 0 ] || fatal "gtrace-bpf dump $1 exited with status $rc: $(head -n 3 "$2.err" | tr '\n' '|')"
	grep -E '^\{"ts":[0-9]+,"pid":[0-9]+,"tid":[0-9]+,"type":"(capture|overhead)"' "$2.all" > "$2"
	rm -f "$2.all"
	jq -e -s 'length > 0 and all(type == "object")' "$2" > /dev/null || fatal "no capture or overhead records in the dump of $1"
	log "dump: $(wc -l < "$2") capture and overhead records"
}

# drops_of TRACE: the records its counters say were lost to a full ring
# buffer
drops_of() {
	local n
	n=$("$GTRACE" dump --summary "$1" 2> /dev/null | awk '$1 == "drop_ringbuf" { print $2 }' | tail -n 1)
	echo "${n:-0}"
}

# metric NAME BODY: the value of the unlabelled sample NAME in BODY.
metric() { awk -v n="$1" '$1 == n { print $2 }' <<< "$2"; }

# scrape_until PORT NAME VALUE SECONDS: scrapes the daemon's endpoint into
# $body until sample NAME is VALUE (a swap is counted once it is done, some
# hundreds of ms after status lists the api); status 1 if it never is.
scrape_until() {
	local i=0
	while [ $i -lt $(($4 * 5)) ]; do
		body=$(curl -sf "http://127.0.0.1:$1/metrics") || fatal "no answer on 127.0.0.1:$1/metrics"
		[ "$(metric "$2" "$body")" = "$3" ] && return 0
		sleep 0.2
		i=$((i + 1))
	done
	return 1
}

t_shed() {
	local out body port=$((20000 + RANDOM % 20000))
	export GTRACE_BUDGET_PERIOD_MAX_S=2 GTRACE_BUDGET_RETRY_S=6
	start_daemon -v --light-window 200ms/1s --budget 1% --window 120s --metrics "127.0.0.1:$port"
	start_workload wl1 GT_LIBCUDA="$MOCK_LIB" GT_MOCK_SYNC_US=0 -- --flood 10 --sync-each --steady 50
	local w1=$WPID
	wait_status overhead_shed_apis cuStreamSynchronize 12 ||
		fatal "no shed: $(grep budget "$T/daemon.err" | tail -n 3 | tr '\n' '|')"
	grep -q 'warning: budget 1.00%: over it even at the longest window period: shedding cuStreamSynchronize, the always-on call that costs most ([0-9]* calls/s' "$T/daemon.err" ||
		err "no warning line naming the shed api and its rate"
	# the fleet's view: the Prometheus endpoint says so too, once the swap is done
	scrape_until "$port" gtrace_overhead_sheds_total 1 5
	[ "$(metric gtrace_overhead_shed_calls "$body")" = 1 ] ||
		err "gtrace_overhead_shed_calls '$(metric gtrace_overhead_shed_calls "$body")' while one call is shed"
	[ "$(metric gtrace_overhead_sheds_total "$body")" = 1 ] ||
		err "gtrace_overhead_sheds_total '$(metric gtrace_overhead_sheds_total "$body")', expected 1"
	[ "$(metric gtrace_overhead_budget_ratio "$body")" = 0.01 ] ||
		err "gtrace_overhead_budget_ratio '$(metric gtrace_overhead_budget_ratio "$body")', expected 0.01"
	wait_exit "$w1" 40 || fatal "the first workload did not end"
	[ "$WAIT_RC" -eq 0 ] || fatal "the first workload failed: $(tail -n 2 "$T/wl1.err")"
	[ "$(status_of overhead_sheds)" = 1 ] || err "status: $(status_of overhead_sheds) sheds during the first flood, expected 1"
	[ "$(status_of overhead_swap_failed)" = 0 ] || err "status: $(status_of overhead_swap_failed) swaps failed"
	# the cost has gone: given back after its retry time
	wait_status overhead_given_back 1 30
	wait_status overhead_shed_apis none 5
	scrape_until "$port" gtrace_overhead_given_back_total 1 5
	[ "$(metric gtrace_overhead_shed_calls "$body")" = 0 ] && [ "$(metric gtrace_overhead_given_back_total "$body")" = 1 ] ||
		err "after the give-back: gtrace_overhead_shed_calls '$(metric gtrace_overhead_shed_calls "$body")', gtrace_overhead_given_back_total '$(metric gtrace_overhead_given_back_total "$body")'"
	grep -q 'budget: cuStreamSynchronize given back to the always-on probes in [0-9]* ms' "$T/daemon.err" ||
		err "no line saying it was given back"
	"$GTRACE" snapshot -o "$T/s1.gtrace" > /dev/null 2> "$T/snap.err" || fatal "snapshot: $(cat "$T/snap.err")"
	dump_marks "$T/s1.gtrace" "$T/s1.json"
	"$TRACE_ARGS" "$T/s1.gtrace" > "$T/s1.args" || fatal "trace_args failed"
	out=$(check_calls "$T/s1.args" "$T/s1.json" "$T/wl1.out" 1 "$(drops_of "$T/s1.gtrace")") || err "first flood: $out"
	log "first flood: $out"
	jq -e -s '[.[] | select(.type == "overhead" and .reason == "restore" and .api == "cuStreamSynchronize")] | length == 1' \
		"$T/s1.json" > /dev/null || err "no restore record of cuStreamSynchronize in the snapshot"
	# the stats label the shed api's figures sampled, the other's not
	"$GTRACE" stats -r cuda_api_sum --format json "$T/s1.gtrace" > "$T/st.json" 2> "$T/st.err" || err "stats: $(cat "$T/st.err")"
	jq -e '.reports[0].rows | (map(select(.name == "cuStreamSynchronize"))[0].sampled == true) and
	       (map(select(.name == "cuCtxSynchronize"))[0].sampled == false)' "$T/st.json" > /dev/null ||
		err "stats: the shed api is not labelled sampled, or the other is: $(head -c 400 "$T/st.json")"
	jq -e '.shed_note | test("cuStreamSynchronize shed at")' "$T/st.json" > /dev/null || err "stats: no shed_note"

	# always-on again: a second flood is recorded whole until it is shed again
	start_workload wl2 GT_LIBCUDA="$MOCK_LIB" GT_MOCK_SYNC_US=0 -- --flood 6 --sync-each --steady 50
	local w2=$WPID
	wait_status overhead_sheds 2 12
	wait_exit "$w2" 40 || fatal "the second workload did not end"
	"$GTRACE" snapshot --last 8s -p "$w2" -o "$T/s2.gtrace" > /dev/null 2> "$T/snap.err" ||
		fatal "snapshot: $(cat "$T/snap.err")"
	"$GTRACE" snapshot -o "$T/s3.gtrace" > /dev/null 2> "$T/snap.err" || fatal "snapshot: $(cat "$T/snap.err")"
	stop_daemon
	dump_marks "$T/s3.gtrace" "$T/s3.json"
	"$TRACE_ARGS" "$T/s2.gtrace" > "$T/s2.args" || fatal "trace_args failed"
	# the overhead records are the recorder's: those of the whole window
	jq -c 'select(.type == "overhead" and .ts >= '"$(jq -s '[.[] | select(.type == "overhead" and .reason == "restore") | .ts] | max' "$T/s3.json")"')' \
		"$T/s3.json" > "$T/s2.ovh"
	jq -c 'select(.type == "capture" and .kind != "lookups_off")' "$T/s3.json" >> "$T/s2.ovh"
	out=$(check_calls "$T/s2.args" "$T/s2.ovh" "$T/wl2.out" 1 "$(drops_of "$T/s2.gtrace")") || err "second flood: $out"
	log "second flood: $out"
	grep -q 'budget: 2 apis shed, 1 given back' "$T/daemon.err" || err "no closing line of the sheds"
	log "swaps: $(grep -E 'new always-on links attached|shed to the light|given back to the always-on' "$T/daemon.err" |
		sed 's/^gtrace-bpf: //' | tr '\n' '|')"
}

add_case t_shed "shed: a sync flood no window period holds sheds cuStreamSynchronize once, exactly recorded before, in windows after; the other api exact across the swaps; given back, shed again"
run_cases "$@"
