#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gtrace-bpf report: the page opens in a real browser (Debian's chromium,
# headless, driven over the DevTools protocol by report_page.py) with no
# console error and no network request; its sections and tables hold
# stats' numbers (kernel names and counts, processes, waits, copies); the
# timeline is drawn (coloured pixels in a screenshot) and zooms under the
# mouse wheel; a kernel linked to its launch gets its arrow.  Bad input: a
# trace with no calls and one cut short give a page that says what is
# missing; an unwritable output, a file that is not a trace and a baseline
# that is none one line and status 1, and no file.
REQUIRES="jq gtrace"
# The sanitized pass leaves this script out: its cases are the browser's
# (a page of generated traces, checked in Chromium, ~20 s a case); the
# page's C code runs under ASAN and UBSAN in fuzz_report (stats, the
# timeline's budget, analyze, a page with its baseline) and the sanitized
# unit tests.
# run-tests: once
. "$(dirname "$0")/lib.sh"

PAGE_PY=$ROOT/tests/integration/report_page.py

# gen NAME "OPTIONS" N_RECORDS [THREADS]: gen_trace into $T/NAME.gtrace
gen() {
	local name=$1 opts=$2
	shift 2
	# shellcheck disable=SC2086
	gen_trace $opts "$T/$name.gtrace" "$@" > /dev/null || fatal "gen_trace $opts $* failed"
}

# report OUT ARGS...: gtrace-bpf report ARGS -o OUT, status 0, nothing on
# stderr, a file of the owner's only.
report() {
	local out=$1 rc
	shift
	"$GTRACE" report "$@" -o "$out" 2> "$out.err"
	rc=$?
	[ $rc -eq 0 ] || fatal "gtrace-bpf report $* exited with status $rc: $(head -n 3 "$out.err" | tr '\n' '|')"
	[ -s "$out.err" ] && err "gtrace-bpf report $* wrote to stderr: $(head -n 3 "$out.err" | tr '\n' '|')"
	[ "$(stat -c %a "$out")" = 600 ] || err "$out has mode $(stat -c %a "$out"), expected 600"
}

# The browser: installed by the project's install script when it is missing
# (root only, as that script is), never skipped.
need_browser() {
	if ! command -v chromium > /dev/null; then
		log "chromium missing: tools/install-deps.sh"
		"$ROOT/tools/install-deps.sh" >&2 || fatal "chromium is missing and tools/install-deps.sh could not install it"
	fi
	command -v chromium > /dev/null || fatal "chromium is still missing after tools/install-deps.sh"
}

# open_pages OUT PAGE...: what the browser saw of each page, into OUT.
open_pages() {
	local out=$1
	shift
	need_browser
	python3 "$PAGE_PY" "$out" "$@" 2> "$out.err" ||
		fatal "report_page.py $*: $(tail -n 3 "$out.err" | tr '\n' '|')"
}

# The checks every page gets: no console error, no request, every section
# (the comparison first on a page of --compare: $3 = compare), a timeline
# with colour in it that a wheel turn zooms into, its axis labels distinct
# when zoomed in far from 0.  $1: what the browser saw (one page), $2: its
# name in messages.
check_basics() {
	local p=$1 what=$2 got want="answers timeline gpu-util ranks kernels sync sites flame copies processes api nvtx capture compare about"
	[ "${3:-}" = compare ] && want="compare ${want/ compare/}"
	got=$(jq -c '.errors' <<< "$p")
	[ "$got" = "[]" ] || err "$what: console errors: $got"
	got=$(jq -c '.requests' <<< "$p")
	[ "$got" = "[]" ] || err "$what: network requests: $got"
	got=$(jq -r '.sections | join(" ")' <<< "$p")
	[ "$got" = "$want" ] || err "$what: sections '$got', expected '$want'"
	jq -e '(.axis_deep | length) == 2 and all(.axis_deep[]; length >= 3 and (unique | length) == length)' <<< "$p" > /dev/null ||
		err "$what: axis labels zoomed in repeat: $(jq -c .axis_deep <<< "$p")"
	jq -e '.zoomed.v1 - .zoomed.v0 < (.timeline.v1 - .timeline.v0) * 0.8 and .zoomed.changed' <<< "$p" > /dev/null ||
		err "$what: the wheel did not zoom in: before $(jq -c .timeline <<< "$p"), after $(jq -c .zoomed <<< "$p")"
}

# stats_rows FILE REPORT JQ: REPORT's rows of stats' JSON of FILE mapped by JQ.
stats_rows() {
	"$GTRACE" stats "$1" --format json -r "$2" 2> /dev/null | jq -c "[.reports[0].rows[] | $3]"
}

t_cpu_page() {
	local p got want
	# launches at entry only among 40 more kinds of calls (-E -A 40)
	gen a "-p 2 -k 12 -E -A 40" 20000 3
	report "$T/a.html" "$T/a.gtrace"
	grep -q '<!--@gt:' "$T/a.html" && err "a template marker is left in the page"
	open_pages "$T/o.json" "$T/a.html"
	p=$(jq -c '.[0]' "$T/o.json")
	check_basics "$p" "CPU-only page"
	jq -e '.timeline.colored > 2000' <<< "$p" > /dev/null ||
		err "the timeline screenshot is blank: $(jq -c .timeline <<< "$p") coloured pixels"
	# the tables are stats' rows (the top 25 of each)
	want=$(stats_rows "$T/a.gtrace" cuda_launch_sum '{kernel: .name, launches: (.launches | tostring)}' | jq -c '.[:25]')
	got=$(jq -c '.kernels_count' <<< "$p")
	[ "$got" = "$want" ] || err "kernels by launches: page $got, stats $want"
	[ "$(jq 'length' <<< "$got")" -ge 10 ] || err "kernels by launches: only $(jq length <<< "$got") rows"
	want=$(stats_rows "$T/a.gtrace" process_sum '{pid: (.pid | tostring), calls: (.calls | tostring), launches: (.launches | tostring)}')
	got=$(jq -c '.processes' <<< "$p")
	[ "$got" = "$want" ] || err "processes: page $got, stats $want"
	want=$(stats_rows "$T/a.gtrace" cuda_sync_sum '{sync: .name, pid: (.pid | tostring), calls: (.num_calls | tostring)}')
	got=$(jq -c '.sync' <<< "$p")
	[ "$got" = "$want" ] || err "sync waits: page $got, stats $want"
	want=$(stats_rows "$T/a.gtrace" cuda_mem_size_sum '{copy: .operation, count: (.count | tostring), bytes: (.total | tostring)}')
	got=$(jq -c '.copies' <<< "$p")
	[ "$got" = "$want" ] || err "copies: page $got, stats $want"
	# the API table: the 30 that took most time and every launch (no time:
	# stats lists them last, past the 30th of more than 30 kinds of calls)
	want=$(stats_rows "$T/a.gtrace" cuda_api_sum '{api: .name, calls: (.num_calls | tostring), timed: (.total_time != null)}')
	[ "$(jq length <<< "$want")" -gt 30 ] || err "stats has only $(jq length <<< "$want") kinds of calls: no test of the table's cut"
	want=$(jq -c '[.[] | select(.timed)][:30] + [.[] | select(.timed | not)] | map({api, calls})' <<< "$want")
	got=$(jq -c '.api' <<< "$p")
	[ "$got" = "$want" ] || err "the API table: page $got, stats $want"
	jq -e '[.[] | select(.api | startswith("cuLaunchKernel"))] | length >= 2' <<< "$want" > /dev/null ||
		err "no launches among the API table's rows: $want"
	# with no GPU side, the page says so rather than show empty charts
	jq -e '[.banners[] | select(test("No GPU-side records"))] | length == 1' <<< "$p" > /dev/null ||
		err "no banner on the missing GPU records: $(jq -c .banners <<< "$p")"
	jq -e '[.missing[] | select(startswith("gpu-util: No GPU records"))] | length == 1' <<< "$p" > /dev/null ||
		err "the utilization section does not say the GPU records are missing: $(jq -c .missing <<< "$p")"
	jq -e '.charts >= 2' <<< "$p" > /dev/null || err "$(jq .charts <<< "$p") charts, expected the two histograms"
}

t_gpu_page() {
	local p got want
	gen g "-g -p 2 -k 12" 10000 3
	report "$T/g.html" "$T/g.gtrace"
	open_pages "$T/o.json" "$T/g.html"
	p=$(jq -c '.[0]' "$T/o.json")
	check_basics "$p" "merged page"
	want=$(stats_rows "$T/g.gtrace" cuda_gpu_kern_sum '{kernel: .name, instances: (.instances | tostring), totalTime: (.total_time | tostring)}' | jq -c '.[:25]')
	got=$(jq -c '[.kernels_time[] | {kernel, instances, totalTime}]' <<< "$p")
	[ "$got" = "$want" ] || err "kernels by GPU time: page $got, stats $want"
	[ "$(jq 'length' <<< "$got")" -ge 10 ] || err "kernels by GPU time: only $(jq length <<< "$got") rows"
	jq -e '.charts >= 3' <<< "$p" > /dev/null || err "$(jq .charts <<< "$p") charts: no utilization chart?"
	jq -e '.banners == []' <<< "$p" > /dev/null || err "banners on a whole merged trace: $(jq -c .banners <<< "$p")"
	jq -e '.timeline.colored > 2000' <<< "$p" > /dev/null ||
		err "the timeline screenshot is blank: $(jq -c .timeline <<< "$p")"
	# analyze's answers and findings, each scope's in its order
	page_data "$T/g.html" > "$T/g.data.json" || fatal "no data document in the page"
	want=$(jq -c '[.analyze.scopes[] | .pid as $p | .findings[] | {finding: .id, pid: ($p | tostring)}]' "$T/g.data.json")
	got=$(jq -c '.findings' <<< "$p")
	[ "$got" = "$want" ] || err "findings: page $got, analyze $want"
	[ "$(jq length <<< "$want")" -ge 2 ] || err "analyze found only $want in the generated trace"
	# a finding's link says when, then how long and what: "at 309 ms: 12.1 ms GPU idle"
	jq -e '(.finding_links | length) > 0 and all(.finding_links[]; test("^at [0-9][^:]*: "))' <<< "$p" > /dev/null ||
		err "finding links: $(jq -c '.finding_links[:3]' <<< "$p")"
	want=$(jq -c '[.analyze.scopes[] | .pid as $p | .answers | to_entries[] | select(.value != null) | {answer: .key, pid: ($p | tostring)}]' "$T/g.data.json")
	got=$(jq -c '.answers' <<< "$p")
	[ "$got" = "$want" ] || err "answers: page $got, analyze $want"
	# GPU metrics: stats' rows, and a counter lane of every sample
	want=$(stats_rows "$T/g.gtrace" gpu_metrics_sum 'select(.scope == "run") | {metric: .metric, gpu: (.gpu | tostring), samples: (.samples | tostring)}')
	got=$(jq -c '.metrics' <<< "$p")
	[ "$got" = "$want" ] || err "GPU metrics: page $got, stats $want"
	[ "$(jq length <<< "$want")" -eq 4 ] || err "stats has $(jq length <<< "$want") GPU metric rows, the generator wrote 4"
	# the other scopes (kernels by sole occupancy, ...) in their own table
	local scoped
	scoped=$(stats_rows "$T/g.gtrace" gpu_metrics_sum 'select(.scope != "run") | {gpumScope: .scope, gpu: (.gpu | tostring), metricOf: .metric}')
	got=$(jq -c '.metrics_scoped' <<< "$p")
	[ "$got" = "$scoped" ] || err "GPU metrics by scope: page $got, stats $scoped"
	got=$(jq -c '[.timeline.lanes[] | select(.kind == "counter") | {metric, gpu: (.device | tostring), samples: (.samples | tostring)}] | sort_by(.gpu, .metric)' "$T/g.data.json")
	want=$(jq -c 'sort_by(.gpu, .metric)' <<< "$want")
	[ "$got" = "$want" ] || err "counter lanes: $got, stats $want"
	# a click on a linked kernel: its launch named, one arrow drawn
	jq -e '.arrow.arrows == 1 and (.arrow.detail | test("launched by the call at .* on thread [0-9]+"))' <<< "$p" > /dev/null ||
		err "a click on a linked kernel: $(jq -c .arrow <<< "$p")"
}

# Every GPU metric of two GPUs (gen_trace -g -M: 22 lanes each, as NVML with
# GPM samples them): the timeline shows each GPU's SM, tensor, DRAM, PCIe
# and NVLink lanes and folds the rest into one row that says which; the
# processes' lanes, every stream and the first GPU's metrics shown are in
# the first screen of the timeline (its box is 640 px high; 44 lanes of
# 28 px each pushed the second GPU's streams 1,000 px down); a click
# unfolds the rest.
t_metric_lanes() {
	local p got want n
	gen m "-g -M -p 2 -k 6" 20000 2
	report "$T/m.html" "$T/m.gtrace"
	open_pages "$T/o.json" "$T/m.html"
	p=$(jq -c '.[0]' "$T/o.json")
	check_basics "$p" "page with every GPU metric"
	page_data "$T/m.html" > "$T/m.data.json" || fatal "no data document in the page"
	want=$(jq -c '[.timeline.lanes[] | select(.kind == "counter") | .device] | group_by(.) | map(length)' "$T/m.data.json")
	n=$(jq '.[0]' <<< "$want")
	[ "$(jq -c 'length == 2 and .[0] == .[1] and .[0] >= 20' <<< "$want")" = true ] ||
		err "the generator's metric lanes per GPU: $want, expected every metric of two GPUs"
	n=$((n - 7))
	# shown: the key metrics of each GPU, in that order; a row says the rest
	got=$(jq -c '[.row_boxes[] | select(.type == "counter") | .label | sub(" \\(.*"; "")]' <<< "$p")
	want='["sm_active","tensor_active","dram_bw","pcie_tx","pcie_rx","nvlink_tx","nvlink_rx","sm_active","tensor_active","dram_bw","pcie_tx","pcie_rx","nvlink_tx","nvlink_rx"]'
	[ "$got" = "$want" ] || err "metric lanes shown: $got"
	jq -e --arg n "$n" '[.row_boxes[] | select(.type == "head" and (.label | test("^" + $n + " more GPU metrics \\(gpu_util, mem_util, ")))] | length == 2' <<< "$p" > /dev/null ||
		err "no row per GPU saying which metrics are folded: $(jq -c '[.row_boxes[] | select(.type == "head") | .label]' <<< "$p")"
	# the first screen: every process' CUDA-call lanes, every stream, the
	# shown metrics
	jq -e '(.row_boxes | map(.label == "GPU 1") | index(true)) as $g1
		| [.row_boxes | to_entries[] | select((.value.type == "counter" and .key < $g1) or (.value.label | test(": CUDA calls$|^stream "))) | .value] as $r
		| ($r | length) >= 11 and all($r[]; .y + .h <= 640)' <<< "$p" > /dev/null ||
		err "lanes below the first screen: $(jq -c '[.row_boxes[] | select(.y + .h > 640) | .label][:6]' <<< "$p")"
	jq -e --arg n "$((2 * n))" '.note | test($n + " other metric lanes are folded")' <<< "$p" > /dev/null ||
		err "the timeline's note does not say metrics are folded: $(jq .note <<< "$p")"
	jq -e --argjson n "$n" '(.metric_fold.after | length) == (.metric_fold.before | length) + $n' <<< "$p" > /dev/null ||
		err "a click on the folded metrics: $(jq -c '.metric_fold | {b: (.before | length), a: (.after | length)}' <<< "$p")"
}

# Few events kept exactly: the others are drawn as bins, which the page
# says; the numbers of the tables do not depend on it.
# A trace with NVTX step ranges (gen_trace -g -i): the answers open on each
# process' steady state, its iterations said, its whole run after; the
# timeline's note names the band.
t_steady_page() {
	local p
	gen s "-g -i 20000 -p 2 -k 6" 200000 2
	report "$T/s.html" "$T/s.gtrace"
	open_pages "$T/o.json" "$T/s.html"
	p=$(jq -c '.[0]' "$T/o.json")
	check_basics "$p" "steady page"
	jq -e '.scope_heads[0] == "steady" and (.scope_heads | index("process")) > 0' <<< "$p" > /dev/null ||
		err "the answers do not open on the steady state: $(jq -c .scope_heads <<< "$p")"
	jq -e '(.phases | length) == ([.scope_heads[] | select(. == "steady")] | length)' <<< "$p" > /dev/null ||
		err "a steady scope without its phases line: $(jq -c '{h: .scope_heads, p: .phases}' <<< "$p")"
	jq -e '.note | test("steady state")' <<< "$p" > /dev/null || err "the timeline's note: $(jq .note <<< "$p")"
}

# Threads that made no CUDA call (a pool's, off the CPU most of each step,
# gen_trace -S -I) start folded into one row under their process; a click
# on it shows each one's off-CPU lane.
t_fold() {
	local p
	gen f "-g -S eager:10000 -W 3 -I 6" 30
	report "$T/f.html" "$T/f.gtrace"
	open_pages "$T/o.json" "$T/f.html"
	p=$(jq -c '.[0]' "$T/o.json")
	check_basics "$p" "page with idle threads"
	jq -e '.note | test("6 threads without CUDA calls folded into one row per process")' <<< "$p" > /dev/null ||
		err "the timeline's note: $(jq .note <<< "$p")"
	jq -e '.fold.before | (map(select(. == "6 threads without CUDA calls")) | length == 1)
	       and (map(select(test("^pt_worker"))) | length == 0) and (map(select(test("^python3 4000: CUDA calls"))) | length == 1)' \
		<<< "$p" > /dev/null || err "folded: rows $(jq -c '.fold.before' <<< "$p")"
	jq -e '.fold.after | map(select(test("^pt_worker[1-6] 400[1-6]: off-CPU$"))) | length == 6' <<< "$p" > /dev/null ||
		err "after a click on the folded row: rows $(jq -c '.fold.after' <<< "$p")"
}

t_aggregated() {
	local p got want
	gen g "-g -p 2 -k 12" 30000 3
	report "$T/g.html" "$T/g.gtrace" --max-events 2000
	open_pages "$T/o.json" "$T/g.html"
	p=$(jq -c '.[0]' "$T/o.json")
	check_basics "$p" "aggregated page"
	jq -e '.note | test("^Showing [0-9,]+ of [0-9,]+ events exactly")' <<< "$p" > /dev/null ||
		err "the timeline does not say events were left out: $(jq -c .note <<< "$p")"
	got=$(jq -r '.note | capture("^Showing (?<k>[0-9,]+) of").k | gsub(","; "")' <<< "$p")
	[ "$got" -le 2000 ] && [ "$got" -ge 1000 ] || err "$got events kept exactly, expected 1000 to 2000"
	jq -e '.timeline.colored > 2000' <<< "$p" > /dev/null ||
		err "the aggregated timeline screenshot is blank: $(jq -c .timeline <<< "$p")"
	want=$(stats_rows "$T/g.gtrace" cuda_gpu_kern_sum '{kernel: .name, instances: (.instances | tostring)}' | jq -c '.[:25]')
	got=$(jq -c '[.kernels_time[] | {kernel, instances}]' <<< "$p")
	[ "$got" = "$want" ] || err "kernels by GPU time: page $got, stats $want"
}

t_no_calls() {
	local p
	gen e "-n" 1
	report "$T/e.html" "$T/e.gtrace"
	open_pages "$T/o.json" "$T/e.html"
	p=$(jq -c '.[0]' "$T/o.json")
	jq -e '.errors == [] and .requests == []' <<< "$p" > /dev/null ||
		err "page of a trace with no calls: errors $(jq -c .errors <<< "$p"), requests $(jq -c .requests <<< "$p")"
	jq -e '[.banners[] | select(test("holds no CUDA calls"))] | length == 1' <<< "$p" > /dev/null ||
		err "no banner saying the trace has no calls: $(jq -c .banners <<< "$p")"
	for s in 'answers: '"$T"'/e.gtrace holds no CUDA calls: nothing to analyze' 'kernels: No GPU kernel records' 'kernels: No kernel launches' 'sync: No synchronizing calls' \
		 'copies: No copies or sets' 'api: No CUDA API calls'; do
		jq -e --arg s "$s" '[.missing[] | select(startswith($s))] | length == 1' <<< "$p" > /dev/null ||
			err "no '$s' in the page: $(jq -c .missing <<< "$p")"
	done
	jq -e '.note | startswith("Nothing to draw")' <<< "$p" > /dev/null ||
		err "the empty timeline does not say so: $(jq -c .note <<< "$p")"
}

t_cut_short() {
	local p size rc
	gen a "-p 2 -k 12" 60000 3
	size=$(stat -c %s "$T/a.gtrace")
	head -c $((size / 2)) "$T/a.gtrace" > "$T/cut.gtrace"
	"$GTRACE" report "$T/cut.gtrace" -o "$T/cut.html" 2> "$T/cut.err"
	rc=$?
	[ $rc -eq 1 ] || err "report of a cut trace: status $rc, expected 1: $(head -n 2 "$T/cut.err")"
	[ -s "$T/cut.html" ] || fatal "no report of the cut trace written"
	[ "$(wc -l < "$T/cut.err")" -eq 1 ] && grep -q "^gtrace-bpf: $T/cut.gtrace is damaged: .*; read [0-9]* records before it .*; the report covers the records read$" "$T/cut.err" ||
		err "report of a cut trace: stderr '$(cat "$T/cut.err")', expected the one line of the damage"
	open_pages "$T/o.json" "$T/cut.html"
	p=$(jq -c '.[0]' "$T/o.json")
	check_basics "$p" "page of a cut trace"
	jq -e '[.banners[] | select(test("cut short"))] | length == 1' <<< "$p" > /dev/null ||
		err "no banner saying the trace is cut short: $(jq -c .banners <<< "$p")"
	got=$(jq -c '.processes' <<< "$p")
	want=$(stats_rows "$T/cut.gtrace" process_sum '{pid: (.pid | tostring), calls: (.calls | tostring), launches: (.launches | tostring)}')
	[ "$got" = "$want" ] || err "processes of the cut trace: page $got, stats $want"
}

# expect_fail WHAT REGEX ARGS...: gtrace-bpf report ARGS exits 1 with one
# line matching REGEX.
expect_fail() {
	local what=$1 re=$2 rc
	shift 2
	"$GTRACE" report "$@" > "$T/f.out" 2> "$T/f.err"
	rc=$?
	[ $rc -eq 1 ] || err "$what: status $rc, expected 1"
	[ "$(wc -l < "$T/f.err")" -eq 1 ] && grep -Eq "$re" "$T/f.err" ||
		err "$what: stderr '$(tr '\n' '|' < "$T/f.err")', expected one line like /$re/"
	[ -s "$T/f.out" ] && err "$what: wrote to stdout"
	return 0
}

t_bad_input() {
	gen a "-p 1 -k 4" 2000 2
	expect_fail "an output in a missing folder" "^gtrace-bpf: cannot write $T/no/such/dir/r.html: No such file or directory$" \
		"$T/a.gtrace" -o "$T/no/such/dir/r.html"
	: > "$T/exists.html"
	expect_fail "an output that exists" "^gtrace-bpf: $T/exists.html exists: use --force to replace it$" \
		"$T/a.gtrace" -o "$T/exists.html"
	[ -s "$T/exists.html" ] && err "the existing output was written"
	ln -s "$T/elsewhere.html" "$T/link.html"
	expect_fail "an output that is a symbolic link" "^gtrace-bpf: refusing to replace $T/link.html: it is a symbolic link$" \
		"$T/a.gtrace" -o "$T/link.html" --force
	[ -e "$T/elsewhere.html" ] && err "the report was written through a symbolic link"
	echo "not a trace" > "$T/text.gtrace"
	expect_fail "a file that is not a trace" "^gtrace-bpf: cannot read $T/text.gtrace: " "$T/text.gtrace" -o "$T/t.html"
	expect_fail "a baseline that is not a trace" "^gtrace-bpf: cannot read the baseline $T/text.gtrace: " \
		"$T/a.gtrace" --compare "$T/text.gtrace" -o "$T/t.html"
	expect_fail "a missing trace" "^gtrace-bpf: cannot read $T/none.gtrace: " "$T/none.gtrace" -o "$T/t.html"
	expect_fail "the input as output" "^gtrace-bpf: cannot write $T/a.gtrace: it is the input trace$" \
		"$T/a.gtrace" -o "$T/a.gtrace" --force
	ls "$T"/.*.html.* > /dev/null 2>&1 && err "temporary files left: $(ls -a "$T" | tr '\n' ' ')"
	[ -e "$T/t.html" ] && err "a report was written for bad input"
	# the default name: the trace's with .html
	"$GTRACE" report "$T/a.gtrace" 2> "$T/d.err" || err "report with the default name: $(cat "$T/d.err")"
	[ -f "$T/a.html" ] || err "no $T/a.html written by default"
}

# --compare: the comparison is diff's (its speedup, the kernels and APIs
# that moved, its warning), the trace the report is of the optimized side.
t_compare() {
	local p got want
	gen a "-g -p 1 -k 8" 8000 2
	gen b "-g -s 5 -p 1 -k 8" 12000 2
	report "$T/c.html" "$T/b.gtrace" --compare "$T/a.gtrace"
	"$GTRACE" diff "$T/a.gtrace" "$T/b.gtrace" --format json > "$T/d.json" 2> "$T/d.err" ||
		fatal "gtrace-bpf diff: $(head -n 2 "$T/d.err")"
	[ -s "$T/d.err" ] && err "diff warns about two traces of one generator: $(cat "$T/d.err")"
	open_pages "$T/o.json" "$T/c.html"
	p=$(jq -c '.[0]' "$T/o.json")
	check_basics "$p" "page with --compare" compare
	# in plain words: the speed as a sentence, the terms by their labels
	# (no internal names) with a change column
	jq -e '.speed_text[0] | test("^speedThis run takes [0-9.]+ [mµn]?s( per iteration)?, the baseline [0-9.]+ [mµn]?s: [0-9.]+× (faster|slower) \\(")' <<< "$p" > /dev/null ||
		err "the speed sentence: $(jq -c .speed_text <<< "$p")"
	want=$(jq -c '[.analysis.terms | to_entries[] | select(.value != null) | .value.label]' "$T/d.json")
	got=$(jq -c '[.term_cells[][0]]' <<< "$p")
	[ "$got" = "$want" ] || err "the terms' names: page $got, diff's labels $want"
	jq -e '(.term_cells | length) > 3 and all(.term_cells[]; length == 4 and (.[0] | test("_") | not) and (.[3] | test("^([+−]|0)")))' <<< "$p" > /dev/null ||
		err "the terms' table: $(jq -c '.term_cells[:4]' <<< "$p")"
	got=$(jq -r '.speedup[0].speedup' <<< "$p")
	want=$(jq -r '.speedup.point' "$T/d.json")
	[ -n "$want" ] && [ "$want" != null ] && [ "$got" = "$want" ] || err "speedup: page '$got', diff '$want'"
	want=$(jq -c '([.kernels.rows[] | select(.class != "unchanged") | {diff: "kernels", name, class}] | .[:25]) +
		([.apis.rows[] | select(.class != "unchanged") | {diff: "apis", name, class}] | .[:25])' "$T/d.json")
	got=$(jq -c '.diff_rows' <<< "$p")
	[ "$got" = "$want" ] || err "rows that moved: page $got, diff $want"
}

# --compare with a baseline that does not compare (another program, one
# with no calls, one without GPU records): a page all the same, one warning
# line, and the comparison says why.
t_compare_mismatch() {
	local p
	gen a "-p 2 -k 12" 5000 2
	gen g "-g -p 1 -k 4" 5000 2
	gen e "-n" 1
	"$GTRACE" report "$T/a.gtrace" --compare "$T/e.gtrace" -o "$T/e.html" 2> "$T/e.err" ||
		fatal "report --compare with a baseline of no calls: $(head -n 2 "$T/e.err")"
	[ "$(wc -l < "$T/e.err")" -eq 1 ] &&
		grep -qx "gtrace-bpf: warning: no comparison with $T/e.gtrace: $T/e.gtrace holds no CUDA calls" "$T/e.err" ||
		err "report --compare with a baseline of no calls: stderr '$(cat "$T/e.err")'"
	"$GTRACE" report "$T/a.gtrace" --compare "$T/g.gtrace" -o "$T/g.html" 2> "$T/g.err" ||
		fatal "report --compare with a merged baseline: $(head -n 2 "$T/g.err")"
	"$GTRACE" diff "$T/g.gtrace" "$T/a.gtrace" --format json > /dev/null 2> "$T/dg.err"
	[ "$(wc -l < "$T/g.err")" -eq 1 ] && diff -q "$T/g.err" "$T/dg.err" > /dev/null ||
		err "report --compare with a baseline of GPU records: stderr '$(cat "$T/g.err")', diff's '$(cat "$T/dg.err")'"
	open_pages "$T/o.json" "$T/e.html" "$T/g.html"
	p=$(jq -c '.[0]' "$T/o.json")
	check_basics "$p" "page with a baseline of no calls" compare
	jq -e --arg w "compare: $T/e.gtrace holds no CUDA calls" '[.missing[] | select(. == $w)] | length == 1' <<< "$p" > /dev/null ||
		err "the comparison does not say why there is none: $(jq -c .missing <<< "$p")"
	p=$(jq -c '.[1]' "$T/o.json")
	check_basics "$p" "page with a baseline of GPU records" compare
	jq -e --arg w "$(sed 's/^gtrace-bpf: warning: //' "$T/dg.err")" '[.banners[] | select(. == $w)] | length == 1' <<< "$p" > /dev/null ||
		err "the comparison does not show diff's warning: $(jq -c .banners <<< "$p")"
}

# page_parts PAGE: what an HTML parser finds in the page: its script
# elements' types and ids, and whether the data one parses as JSON.
page_parts() {
	python3 -c 'import html.parser, json, sys
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.scripts, self.on, self.data = [], False, ""
    def handle_starttag(self, tag, attrs):
        if tag == "script":
            a = dict(attrs)
            self.scripts.append("%s#%s" % (a.get("type", "js"), a.get("id", "")))
            self.on = a.get("id") == "gt-data"
    def handle_data(self, data):
        if self.on:
            self.data += data
    def handle_endtag(self, tag):
        self.on = False
p = P()
p.feed(open(sys.argv[1], encoding="utf-8").read())
json.loads(p.data)
print(" ".join(p.scripts))' "$1"
}

# The documents of analyze and diff go into the page whole, whatever their
# size (they were copied into a 256 KiB buffer in one piece: 134 or 139 from
# 64 processes, or from 1,500 kernels of 2,000-byte names), and names with
# markup cannot end the data's script element.
t_big_documents() {
	local want got n
	gen x "-H -g -p 64 -k 40" 100000 4
	report "$T/x.html" "$T/x.gtrace"
	got=$(page_parts "$T/x.html") || fatal "the page's data is not JSON, or the page does not parse"
	[ "$got" = "application/json#gt-data js# js#" ] || err "script elements of the page: $got"
	"$GTRACE" analyze "$T/x.gtrace" --format json > "$T/a.json" 2> /dev/null || fatal "analyze failed"
	n=$(wc -c < "$T/a.json")
	[ "$n" -gt 262144 ] || err "analyze's document is $n bytes: not over the 256 KiB the test is about"
	page_data "$T/x.html" | jq -c .analyze > "$T/pa.json"
	jq -c . "$T/a.json" | cmp -s - "$T/pa.json" || err "the page's analyze document is not analyze's"
	jq -e '[.scopes[] | select(.kind == "process")] | length == 64' "$T/a.json" > /dev/null ||
		err "analyze's document does not have the 64 processes"
	# --compare: diff's document of 1,500 kernels with names of 2,000 bytes
	gen l1 "-g -p 1 -k 1500 -N 2000 -L 100" 30000 2
	gen l2 "-g -s 7 -p 1 -k 1500 -N 2000 -L 100" 30000 2
	report "$T/l.html" "$T/l2.gtrace" --compare "$T/l1.gtrace"
	got=$(page_parts "$T/l.html") || fatal "the page's data is not JSON, or the page does not parse"
	[ "$got" = "application/json#gt-data js# js#" ] || err "script elements of the --compare page: $got"
	"$GTRACE" diff "$T/l1.gtrace" "$T/l2.gtrace" --format json > "$T/d.json" 2> /dev/null || fatal "diff failed"
	n=$(wc -c < "$T/d.json")
	[ "$n" -gt 262144 ] || err "diff's document is $n bytes: not over the 256 KiB the test is about"
	page_data "$T/l.html" | jq -c .diff > "$T/pd.json"
	jq -c . "$T/d.json" | cmp -s - "$T/pd.json" || err "the page's diff document is not diff's"
	want=$(jq '.kernels.rows | length' "$T/d.json")
	[ "$want" -ge 1000 ] || err "diff has $want kernel rows of the 1,500 kernels, expected 1,000 or more"
}

# Names, command lines and NVTX text of a hostile program (markup that
# would end a script element, escapes, bytes that are not UTF-8): the page
# is one the browser runs without an error, its tables show stats' names.
t_hostile_names() {
	local p got want
	gen h "-H -g -p 2 -k 24 -i 500" 10000 3
	report "$T/h.html" "$T/h.gtrace"
	got=$(page_parts "$T/h.html") || fatal "the page's data is not JSON, or the page does not parse"
	[ "$got" = "application/json#gt-data js# js#" ] || err "script elements of the page: $got"
	grep -qi '<script>alert' "$T/h.html" && err "a kernel name's markup is in the page as markup"
	open_pages "$T/o.json" "$T/h.html"
	p=$(jq -c '.[0]' "$T/o.json")
	check_basics "$p" "page of hostile names"
	want=$(stats_rows "$T/h.gtrace" cuda_gpu_kern_sum '{kernel: .name, instances: (.instances | tostring)}' | jq -c '.[:25]')
	got=$(jq -c '[.kernels_time[] | {kernel, instances}]' <<< "$p")
	[ "$got" = "$want" ] || err "kernels by GPU time: page $got, stats $want"
	jq -e '[.kernels_time[] | select(.kernel | startswith("</script>"))] | length >= 1' <<< "$p" > /dev/null ||
		err "no kernel named '</script>...' on the page: $(jq -c '[.kernels_time[].kernel]' <<< "$p")"
	# a path of 600 bytes of two-byte characters: the title holds it whole
	# (it went through 512 bytes, which split a character)
	local d=$T c
	c=$(printf '\xc3\xa9%.0s' $(seq 100))
	for _ in 1 2 3; do d=$d/$c; done
	mkdir -p "$d" && cp "$T/h.gtrace" "$d/h.gtrace" || fatal "cannot make $d"
	report "$d/h.html" "$d/h.gtrace"
	python3 - "$d/h.html" "$d/h.gtrace" <<'PY' || err "the page's title is not the whole path"
import html, re, sys
page = open(sys.argv[1], encoding='utf-8').read()
title = html.unescape(re.search(r'<title>(.*?)</title>', page, re.S).group(1))
sys.exit(0 if title == 'gtrace-bpf report: ' + sys.argv[2] else 1)
PY
}

# The rank x time view: the two ranks of a mock NCCL job (rank 1 late to
# every round by 2 ms), each recorded by its own recorder as if on its own
# host, merged with --hosts: the page has a row per rank with its host, its
# NCCL calls and time, and the early rank (which waits) more time in NCCL
# than the late one; a trace without NCCL says there are no ranks.
t_ranks() {
	local r p
	[ "$(id -u)" -eq 0 ] || fatal "recording the job needs root"
	[ -x "$WORKLOAD" ] && [ -f "$MOCK_DIR/libnccl.so.2" ] || fatal "the mock is not built: make mock"
	for r in 0 1; do
		env GT_LIBCUDA="$MOCK_LIB" GT_MOCK_SYNC_US=200 LD_LIBRARY_PATH="$MOCK_DIR" GT_MOCK_NCCL_DIR="$T" \
			RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 "$GTRACE" --libcuda "$MOCK_LIB" --libnccl "$MOCK_DIR/libnccl.so.2" \
			-o "$T/h$r.gtrace" -- "$WORKLOAD" --launches 4 --nccl 30 --nccl-id "$T/job.id" --nccl-late 1:2 \
			> /dev/null 2> "$T/h$r.err" &
	done
	wait || true
	[ -s "$T/h0.gtrace" ] && [ -s "$T/h1.gtrace" ] || fatal "a rank's recording failed: $(tail -n 2 "$T"/h*.err | tr '\n' '|')"
	"$GTRACE" merge --hosts "$T/h0.gtrace" "$T/h1.gtrace" -o "$T/job.gtrace" > /dev/null 2> "$T/m.err" ||
		fatal "merge --hosts failed: $(cat "$T/m.err")"
	report "$T/job.html" "$T/job.gtrace"
	gen c "" 2000
	report "$T/c.html" "$T/c.gtrace"
	open_pages "$T/o.json" "$T/job.html" "$T/c.html"
	p=$(jq -c '.[0]' "$T/o.json")
	check_basics "$p" "job page"
	jq -e '.ranks | length == 2 and (map(.rank) == ["0", "1"]) and (map(.host) == ["0", "1"]) and
		all(.[]; (."ncclCalls" | tonumber) > 0 and (.cells | tonumber) > 0) and
		((.[0].ncclNs | tonumber) > (.[1].ncclNs | tonumber))' <<< "$p" > /dev/null ||
		err "the ranks' rows: $(jq -c .ranks <<< "$p")"
	p=$(jq -c '.[1]' "$T/o.json")
	jq -e '.ranks == [] and ([.missing[] | select(startswith("ranks: No NCCL calls"))] | length == 1)' <<< "$p" > /dev/null ||
		err "a trace without NCCL: $(jq -c '{ranks, missing}' <<< "$p")"
}

add_case t_cpu_page "a CPU-only trace's page: no errors, no requests, stats' numbers, a drawn timeline that zooms"
add_case t_gpu_page "a merged trace's page: kernels by GPU time as stats has them, analyze's answers and findings, utilization, a launch arrow"
add_case t_fold "threads without CUDA calls: folded into one row per process, said in the note, a click shows their off-CPU lanes (in the browser)"
add_case t_metric_lanes "every GPU metric of two GPUs: SM, tensor, DRAM, PCIe and NVLink shown, the rest folded and said; the lanes in the first screen (in the browser)"
add_case t_steady_page "a trace with step ranges: the answers open on each process' steady state, the timeline marks it"
add_case t_ranks "a job trace's page: the rank x time view has a row per rank with its host and NCCL time, the waiting rank darker; a trace without NCCL says so"
add_case t_aggregated "--max-events: the timeline says what it left out and is still drawn; the tables do not change"
add_case t_no_calls "a trace with no calls: a page that says what is missing in each section"
add_case t_cut_short "a trace cut short: a page that says so, one line, status 1"
add_case t_bad_input "bad output, input or baseline: one line, status 1, no file"
add_case t_compare "--compare: diff's speedup and the kernels and APIs that moved, on the page"
add_case t_compare_mismatch "--compare with a baseline that does not compare: one warning line, a page that says why"
add_case t_big_documents "analyze's and diff's documents of any size go into the page whole (64 processes; 1,500 long kernel names)"
add_case t_hostile_names "hostile kernel, process and NVTX names: the page's script elements are the template's, the browser shows the names"
run_cases "$@"
