#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# --cupti=attach on the GPU machine (issue 30). As root from the repository
# root with a static build at $GTRACE (default ./gtrace-bpf); the agent built
# here (tools/gpu/build_agent.sh) unless AGENT names one. OUT=DIR keeps the
# files. PASS/FAIL lines and the figures.
#
#   train  a PyTorch training job (tools/bench/transformer_step.py --steady,
#          its losses logged) started without the agent: the recorder
#          attached with -p PID --cupti=attach for SECS seconds, CYCLES times;
#          for each the merge's line (kernels linked to their launches, the
#          causality violations), where in the window the unlinked ones lie,
#          the longest step in its first 3 s against the median (the stall),
#          the job's threads, descriptors and resident memory after it; the
#          step time in the 3 s before each attach against the 3 s after its
#          detach (in process, paired), and the job's first PERIOD seconds
#          (never attached) against the PERIOD seconds after its last detach,
#          each period's halves against each other as the noise at that
#          scale; with LAT=SECS, the driver's launch call timed by the
#          recorder alone (eBPF, --launch-exit, no agent) for SECS seconds
#          before the job's first period and again after its last: what a
#          detached CUPTI could leave in the driver's launch path shows
#          there without the step's noise; then a recorder SIGKILLed while
#          attached (the job runs on, its agent detaches); then the same steps
#          of a job run alone, whose losses must equal the attached job's.
#   jax, cupy   the same for one cycle of a JAX and a CuPy job (a mode named
#          more than once: a new job each time, its files numbered; a job
#          that dies: its Python traceback (PYTHONFAULTHANDLER) and the
#          kernel's segfault line).
#   profiler    a job under torch.profiler: the attach refused, status 1,
#          the job runs on.
# MODES (default "train jax cupy profiler") picks. IDLE_AFTER=N: the cycles
# after the Nth detach with --cupti-detach=idle (CUPTI left loaded, not
# finalized): the memory of finalize cycles and of idle ones in one job.
# CPUS_JOB and CPUS_TOOL
# (taskset CPU lists) keep the training job and the recorder apart;
# CPUS_TWIN runs a twin job, never attached, as the control. JOB_PRELOAD=LIB
# (tools/gpu/heap_sites.c built as a shared library): the training job runs
# with it, its heap by the code that holds it in $OUT/heap_sites.log every
# 5 s, and heap_sites_diff.py's summary after the cycles: whose memory grows.
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-$(mktemp -d /tmp/attach-check.XXXXXX)}
PY=${PYTHON:-python3}
G=${GTRACE:-./gtrace-bpf}
SECS=${SECS:-5}
CYCLES=${CYCLES:-3}
MODES=${MODES:-train jax cupy profiler}
PERIOD=${PERIOD:-20}
# CPUS_JOB / CPUS_TOOL (taskset lists, optional): the jobs and the recorder
# kept apart, so that the recorder's own work does not take the job's CPUs
CPUS_JOB=${CPUS_JOB:-}
CPUS_TOOL=${CPUS_TOOL:-}
# CPUS_TWIN: a second training job, never attached, runs there as the
# control of the step time and memory comparisons
CPUS_TWIN=${CPUS_TWIN:-}
# LAT: seconds of launch timing by the recorder alone (no agent) before the
# first period and after the last; 0 leaves it out
LAT=${LAT:-0}
IDLE_AFTER=${IDLE_AFTER:-}
JOB_PRELOAD=${JOB_PRELOAD:-}
pin_job() { [ -n "$CPUS_JOB" ] && taskset -a -p -c "$CPUS_JOB" "$1" > /dev/null 2>&1; return 0; }
mkdir -p "$OUT"
AGENT=${AGENT:-$OUT/libgtrace-cupti.so}
[ -f "$AGENT" ] || tools/gpu/build_agent.sh "$AGENT" "$OUT/agent.build" ||
	{ echo "FAIL attach: the agent does not build: $(tail -n 3 "$OUT/agent.build")"; exit 1; }
fail=0
WL=

# wait_ready FILE: the job's step log has its first line (the job is warm)
wait_ready() {
	for _ in $(seq 360); do
		[ -s "$1" ] && return 0
		kill -0 "$WL" 2> /dev/null || return 1
		sleep 0.5
	done
	return 1
}
state() {
	echo "threads $(ls /proc/"$WL"/task | wc -l) fds $(ls /proc/"$WL"/fd | wc -l) rss_kb $(awk '/^VmRSS/ { print $2 }' /proc/"$WL"/status)" \
		"anon_kb $(awk '/^Anonymous:/ { print $2 }' /proc/"$WL"/smaps_rollup 2> /dev/null) maps $(wc -l < /proc/"$WL"/maps)"
}
# heap [SIG]: the job's C heap (steady.py's GT_MALLOC_LOG: SIGUSR2 the
# state, SIGHUP after malloc_trim)
heap() {
	local f=$OUT/malloc-$WL.log n
	# only a job started with the log: the signal would end another
	tr '\0' '\n' < /proc/"$WL"/environ 2> /dev/null | grep -q '^GT_MALLOC_LOG=' || return 0
	n=$(cat "$f" 2> /dev/null | wc -l)
	kill -"${1:-USR2}" "$WL" 2> /dev/null
	for _ in $(seq 50); do [ "$(cat "$f" 2> /dev/null | wc -l)" -gt "$n" ] && break; sleep 0.1; done
	tail -n 1 "$f" 2> /dev/null
}
threads() { cat /proc/"$WL"/task/*/comm 2> /dev/null | sort | uniq -c | tr -s ' ' | tr '\n' ',' ; }

# attach TAG: one recording of SECS with the agent attached; its span in TAG.span
attach() {
	local tag=$1 t0 rc how=()
	t0=$(date +%s%N)
	[ -n "$IDLE_AFTER" ] && [ "${tag##*-}" -gt "$IDLE_AFTER" ] 2> /dev/null && how=(--cupti-detach=idle)
	${CPUS_TOOL:+taskset -c "$CPUS_TOOL"} "$G" record -p "$WL" --cupti=attach "${how[@]}" --cupti-lib "$AGENT" -d "$SECS" \
		-o "$OUT/$tag.gtrace" --force > "$OUT/$tag.out" 2> "$OUT/$tag.err"
	rc=$?
	echo "$t0 $(date +%s%N)" > "$OUT/$tag.span"
	grep -h 'cupti=attach\|merged\|CUPTI' "$OUT/$tag.err" | sed "s/^/$tag: /" | cut -c1-400
	echo "$tag: rc $rc${how:+ (${how[*]})}; after: $(state); $(heap)"
	[ "$rc" -eq 0 ] && grep -q 'merged' "$OUT/$tag.err" || { echo "FAIL $tag: rc $rc, no merge"; fail=1; }
	# a cycle that links its kernels keeps no trace: the ones that do not
	# come back from the GPU machine (it returns a limited number of files)
	if "$G" dump "$OUT/$tag.gtrace" 2> /dev/null | "$PY" tools/gpu/attach_diag.py "$tag"; then
		rm -f "$OUT/$tag.gtrace" "$OUT/$tag.out"
	else
		fail=1
	fi
}

# lat TAG: the job's launch calls timed by the recorder alone (eBPF, no
# agent) for LAT seconds: the median CPU time of each launch call
lat() {
	${CPUS_TOOL:+taskset -c "$CPUS_TOOL"} "$G" record -p "$WL" --launch-exit -d "$LAT" -o "$OUT/$1.gtrace" \
		--force > /dev/null 2> "$OUT/$1.err" || { echo "FAIL $1: the recorder failed: $(tail -n 1 "$OUT/$1.err")"; fail=1; return; }
	"$G" stats "$OUT/$1.gtrace" -r cuda_api_sum --format csv > "$OUT/$1.csv" 2>&1
	awk -F, -v tag="$1" '$NF ~ /^cuLaunchKernel(Ex)?$/ { printf "%s: %s: %d calls, median %d ns, mean %.0f ns (recorder alone)\n", tag, $NF, $3, $5, $4 }' "$OUT/$1.csv"
	rm -f "$OUT/$1.gtrace"
}

# steps TAG STEPLOG [TWINLOG]: the step time around each attach of TAG-1..TAG-N
steps() {
	"$PY" - "$OUT" "$@" <<'PY'
import glob, statistics, sys, time
out, tag, log = sys.argv[1:4]
ts = [int(l) for l in open(log) if l.strip().isdigit()]
shift = time.monotonic_ns() - time.time_ns()	# spans are CLOCK_REALTIME
steps = list(zip(ts, ts[1:]))
# the twin, never attached, over the same periods: what moved both (the
# host, the GPU they share) is not the detach's
tw = [int(l) for l in open(sys.argv[4]) if l.strip().isdigit()] if len(sys.argv) > 4 else []
twin_steps = list(zip(tw, tw[1:]))
def med(a, b, steps=steps):
    d = [(y - x) / 1e6 for x, y in steps if x >= a and y <= b]
    return (statistics.median(d), len(d)) if d else (float("nan"), 0)
def interval(r):
    if len(r) < 3:
        return ""
    # Student's t at 95 %, two-sided, for n - 1 degrees of freedom
    t = {2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23, 11: 2.20,
         12: 2.18, 13: 2.16, 14: 2.14, 15: 2.13, 16: 2.12, 17: 2.11, 18: 2.10, 19: 2.09, 20: 2.09}.get(len(r) - 1, 2.0)
    mean = statistics.mean(r)
    half = t * statistics.stdev(r) / len(r) ** 0.5
    return "; mean %+.2f %%, 95 %% interval %+.2f .. %+.2f %%" % (mean * 100, (mean - half) * 100, (mean + half) * 100)
def summary(what, r):
    r = sorted(r)
    print("%s, paired over %d cycles: median %+.2f %%, range %+.2f .. %+.2f %%%s"
          % (what, len(r), statistics.median(r) * 100, r[0] * 100, r[-1] * 100, interval(r)))
ratios, over_twin = [], []
for f in sorted(glob.glob("%s/%s-*.span" % (out, tag)), key=lambda p: int(p.rsplit("-", 1)[1].split(".")[0])):
    a, b = (int(x) + shift for x in open(f).read().split())
    # the 3 s before the attach, and 3 s from 0.5 s after the detach
    pre, post = (a - 3_000_000_000, a), (b + 500_000_000, b + 3_500_000_000)
    before, nb = med(*pre)
    after, na = med(*post)
    win = [(y - x) / 1e6 for x, y in steps if a <= y and x <= a + 3_000_000_000]
    worst = max(win) if win else float("nan")
    name = f.rsplit("/", 1)[1][:-5]
    print("%s: step %.3f ms in the 3 s before the attach (%d steps), %.3f ms in the 3 s after the detach (%d): %+.2f %%; "
          "the longest step in the first 3 s of the recorder %.1f ms" % (name, before, nb, after, na,
          (after / before - 1) * 100 if nb and na else float("nan"), worst))
    # the SIGKILL's span (0): its "before" is a recording, not a job left alone
    if nb and na and not name.endswith("-0"):
        ratios.append(after / before - 1)
        tb, ntb = med(*pre, twin_steps)
        ta, nta = med(*post, twin_steps)
        if ntb and nta:
            over_twin.append((after / before) / (ta / tb) - 1)
            print("%s: the twin %.3f ms before, %.3f ms after: %+.2f %%; the job over the twin %+.2f %%"
                  % (name, tb, ta, (ta / tb - 1) * 100, over_twin[-1] * 100))
if ratios:
    summary("%s: after the detach against before the attach" % tag, ratios)
if over_twin:
    summary("%s: after the detach against before the attach, over the twin's change in the same periods" % tag,
            over_twin)
# the job never attached (its first PRE seconds before the first attach)
# against the job after its last detach (the POST seconds after it): the
# halves of each period against each other are the noise at that scale
try:
    pre_s, post_s = (int(x) + shift for x in open("%s/%s.periods" % (out, tag)).read().split())
except (OSError, ValueError):
    sys.exit(0)
spans = sorted(tuple(int(x) + shift for x in open(f).read().split())
               for f in glob.glob("%s/%s-[1-9]*.span" % (out, tag)))
if not spans:
    sys.exit(0)
first_a, last_b = spans[0][0], spans[-1][1]
m = statistics.median
def compare(who, steps):
    def period(a, b):
        return [(y - x) / 1e6 for x, y in steps if x >= a and y <= b]
    pre = period(pre_s, first_a)
    post = period(last_b + 500_000_000, post_s)
    if len(pre) <= 20 or len(post) <= 20:
        return None
    h1, h2 = pre[:len(pre) // 2], pre[len(pre) // 2:]
    p1, p2 = post[:len(post) // 2], post[len(post) // 2:]
    change = m(post) / m(pre) - 1
    print("%s: step never attached (%d steps, %.1f s) %.3f ms, after the last of %d detaches (%d steps) %.3f ms: %+.2f %%; "
          "noise at this scale: the halves of the first period %+.2f %%, of the second %+.2f %%"
          % (who, len(pre), (first_a - pre_s) / 1e9, m(pre), len(spans), len(post), m(post),
             change * 100, (m(h2) / m(h1) - 1) * 100, (m(p2) / m(p1) - 1) * 100))
    return change
mine = compare(tag, steps)
# a twin job never attached, on its own CPUs, over the same periods: what
# changed for both (the machine, the GPU's clocks) is not the detach's
if twin_steps and mine is not None:
    twin = compare(tag + " twin (never attached)", twin_steps)
    if twin is not None:
        print("%s: after the detaches against before, over the twin's own change: %+.2f %%"
              % (tag, ((1 + mine) / (1 + twin) - 1) * 100))
PY
}

stop_job() {
	kill -TERM "$WL" 2> /dev/null
	for _ in $(seq 60); do kill -0 "$WL" 2> /dev/null || break; sleep 0.5; done
	kill -KILL "$WL" 2> /dev/null
	wait "$WL" 2> /dev/null
}
trap '[ -n "$WL" ] && kill -KILL "$WL" 2> /dev/null; [ -n "${TW:-}" ] && kill -KILL "$TW" 2> /dev/null' EXIT

export PYTHONFAULTHANDLER=1
# the jobs' native crash place (attach_jobs.py loads it)
if cc -O2 -shared -fPIC -o "$OUT/crash_report.so" tools/gpu/crash_report.c 2> "$OUT/crash_report.build"; then
	export CRASH_REPORT_LIB=$OUT/crash_report.so
else
	echo "attach: no native crash reports: $(head -n 2 "$OUT/crash_report.build" | tr '\n' ' ')"
fi
k=0
for mode in $MODES; do
k=$((k + 1))
case $mode in
train)
	(cd tools/bench && GT_MALLOC_LOG=$OUT/malloc-$BASHPID.log exec env \
		${JOB_PRELOAD:+"LD_PRELOAD=$JOB_PRELOAD" "HEAP_SITES_OUT=$OUT/heap_sites.log"} "$PY" transformer_step.py \
		--steady 900 --step-log "$OUT/steps.log" --loss-log "$OUT/loss.log") > "$OUT/wl.out" 2>&1 &
	WL=$!
	pin_job "$WL"
	TW=
	if [ -n "$CPUS_TWIN" ]; then
		# the same job, never attached, on its own CPUs: the control
		(cd tools/bench && GT_MALLOC_LOG=$OUT/malloc-$BASHPID.log exec taskset -c "$CPUS_TWIN" \
			"$PY" transformer_step.py --steady 900 \
			--step-log "$OUT/twin-steps.log") > "$OUT/twin.out" 2>&1 &
		TW=$!
	fi
	wait_ready "$OUT/steps.log" || { echo "FAIL train: the job did not start: $(tail -n 3 "$OUT/wl.out")"; fail=1; continue; }
	sleep 4
	[ "$LAT" != 0 ] && lat train-lat-before
	[ "$LAT" != 0 ] && [ -n "$TW" ] && WL=$TW lat train-twin-lat-before
	# PERIOD seconds of the job never attached, and as many after the last
	# detach: the step time of both, in process
	p_start=$(date +%s%N)
	half=$(((CYCLES + 1) / 2))
	sleep "$PERIOD"
	echo "train: before: $(state); threads $(threads)"
	for c in $(seq "$CYCLES"); do
		attach "train-$c"
		kill -0 "$WL" 2> /dev/null || { echo "FAIL train $c: the job died"; fail=1; break; }
		[ "$c" = 1 ] && echo "train: threads after the first detach $(threads)"
		[ "$c" = 1 ] && echo "train: after the first cycle: $(state)"
		[ "$c" = 1 ] && [ -n "$TW" ] && twin_first=$(WL=$TW state)
		# the mappings after the first cycle, half-way and at the end:
		# where the memory grew (smaps_diff.py)
		if [ "$c" = 1 ] || [ "$c" = "$half" ] || [ "$c" = "$CYCLES" ]; then
			cat /proc/"$WL"/smaps > "$OUT/train-$c.smaps" 2> /dev/null
			[ -n "$TW" ] && cat /proc/"$TW"/smaps > "$OUT/twin-$c.smaps" 2> /dev/null
		fi
		sleep 4
	done
	for w in train ${TW:+twin}; do
		"$PY" tools/gpu/smaps_diff.py "$w: memory, cycle 1 to $half" "$OUT/$w-1.smaps" "$OUT/$w-$half.smaps"
		"$PY" tools/gpu/smaps_diff.py "$w: memory, cycle $half to $CYCLES" "$OUT/$w-$half.smaps" \
			"$OUT/$w-$CYCLES.smaps"
	done
	sleep "$PERIOD"
	echo "$p_start $(date +%s%N)" > "$OUT/train.periods"
	[ "$LAT" != 0 ] && lat train-lat-after
	[ "$LAT" != 0 ] && [ -n "$TW" ] && WL=$TW lat train-twin-lat-after
	echo "train: after the cycles: $(state); threads $(threads)"
	[ -n "$TW" ] && echo "train: the twin, never attached: at the first cycle's end $twin_first, now $(WL=$TW state)"
	# the heap given back (malloc_trim): what grew was free memory the
	# allocator kept, or memory in use
	echo "train: heap $(heap); after malloc_trim: $(heap HUP); $(state)"
	[ -n "$TW" ] && echo "train: the twin's heap $(WL=$TW heap); after malloc_trim: $(WL=$TW heap HUP); $(WL=$TW state)"
	# JOB_PRELOAD: whose heap moved over the cycles
	[ -n "$JOB_PRELOAD" ] && "$PY" tools/gpu/heap_sites_diff.py "$OUT/heap_sites.log" | sed 's/^/train: /'
	# a recorder SIGKILLed while attached: the agent detaches by itself
	"$G" record -p "$WL" --cupti=attach --cupti-lib "$AGENT" -d 60 -o "$OUT/killed.gtrace" --force \
		> "$OUT/killed.out" 2> "$OUT/killed.err" &
	rec=$!
	for _ in $(seq 100); do grep -q 'the agent is in' "$OUT/killed.err" && break; sleep 0.1; done
	sleep 3
	kill -KILL "$rec"
	wait "$rec" 2> /dev/null
	t_kill=$(date +%s%N)
	sleep 5
	if kill -0 "$WL" 2> /dev/null; then
		echo "train: SIGKILL of the recorder while attached: the job runs on: $(state); threads $(threads)"
	else
		echo "FAIL train: the job died after the recorder's SIGKILL"
		fail=1
	fi
	echo "$t_kill $t_kill" > "$OUT/train-kill-0.span"
	stop_job
	[ -n "$TW" ] && { kill -TERM "$TW"; wait "$TW"; }
	grep '"steady"' "$OUT/wl.out"
	steps train "$OUT/steps.log" ${TW:+"$OUT/twin-steps.log"}
	# the same steps alone: the losses must not have changed
	n=$(tail -n 1 "$OUT/loss.log" | cut -d' ' -f1)
	(cd tools/bench && exec timeout 120 "$PY" transformer_step.py --steady 60 --step-log "$OUT/ref-steps.log" \
		--loss-log "$OUT/ref-loss.log") > "$OUT/ref.out" 2>&1 &
	WL=$!
	for _ in $(seq 240); do
		[ -n "$n" ] && [ -s "$OUT/ref-loss.log" ] && [ "$(tail -n 1 "$OUT/ref-loss.log" | cut -d' ' -f1)" -ge "$n" ] 2> /dev/null && break
		kill -0 "$WL" 2> /dev/null || break
		sleep 0.5
	done
	stop_job
	"$PY" - "$OUT/loss.log" "$OUT/ref-loss.log" <<'PY' || fail=1
import sys
a = dict(l.split() for l in open(sys.argv[1]) if l.strip())
b = dict(l.split() for l in open(sys.argv[2]) if l.strip())
common = sorted(set(a) & set(b), key=int)
same = [k for k in common if a[k] == b[k]]
worst = max((abs(float(a[k]) - float(b[k])) / max(abs(float(b[k])), 1e-12) for k in common), default=float("nan"))
print("train: losses of the attached job against a job run alone: %d steps compared, %d bit-identical, largest relative difference %.3g"
      % (len(common), len(same), worst))
sys.exit(0 if common and worst < 1e-3 else 1)
PY
	WL=
	;;
jax|cupy)
	"$PY" tools/gpu/attach_jobs.py "$mode" 120 "$OUT/$mode-$k-steps.log" > "$OUT/$mode-$k.wl" 2>&1 &
	WL=$!
	wait_ready "$OUT/$mode-$k-steps.log" || { echo "FAIL $mode: the job did not start: $(tail -n 3 "$OUT/$mode-$k.wl")"; fail=1; continue; }
	sleep 4
	echo "$mode-$k: before: $(state)"
	attach "$mode-$k"
	sleep 4
	if kill -0 "$WL" 2> /dev/null; then
		echo "$mode-$k: the job runs on: $(state)"
	else
		echo "FAIL $mode-$k: the job died"
		fail=1
		grep '^crash_report:' "$OUT/$mode-$k.wl" | head -n 90 | sed "s/^/$mode-$k: /"
		grep -A12 'Fatal Python error\|Current thread\|Thread 0x' "$OUT/$mode-$k.wl" | head -n 40 | sed "s/^/$mode-$k: /"
		dmesg 2> /dev/null | grep -i 'segfault\|Xid' | tail -n 3 | sed "s/^/$mode-$k: /"
	fi
	stop_job
	tail -n 1 "$OUT/$mode-$k.wl"
	steps "$mode-$k" "$OUT/$mode-$k-steps.log"
	WL=
	;;
profiler)
	(cd tools/bench && exec "$PY" transformer_step.py 100000 --profile) > "$OUT/prof.wl" 2>&1 &
	WL=$!
	sleep 25
	"$G" record -p "$WL" --cupti=attach --cupti-lib "$AGENT" -d 2 -o "$OUT/prof.gtrace" --force \
		> "$OUT/prof.out" 2> "$OUT/prof.err"
	rc=$?
	sed 's/^/profiler: /' "$OUT/prof.err" | grep -i 'attach\|cupti' | cut -c1-300
	sleep 2
	if [ "$rc" -eq 1 ] && kill -0 "$WL" 2> /dev/null && grep -q 'another CUPTI subscriber' "$OUT/prof.err"; then
		echo "PASS profiler: a job under torch.profiler: refused (status 1, said), the job runs on: $(state)"
	else
		echo "FAIL profiler: rc $rc; job alive: $(kill -0 "$WL" 2> /dev/null && echo yes || echo no)"
		fail=1
	fi
	stop_job
	WL=
	;;
esac
done
echo "files in $OUT"
exit $fail
