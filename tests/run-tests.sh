#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Runs every test and ends with one line: "N passed, N failed".
#
#   unit tests          $GT_OUTPUT/tests/test_* (cmocka; built by make from
#                       tests/unit/test_*.c; a source without its binary fails)
#   integration tests   tests/integration/test_*.sh (each prints one
#                       "PASS ..." or "FAIL ..." line per case; most need
#                       root and fail, saying so, without it)
#   fuzzers             $GT_OUTPUT/fuzz/fuzz_* (libFuzzer, make fuzz), each
#                       run GT_FUZZ_SECONDS (default 60) and counted as one
#                       test; a crash fails it and keeps the input in
#                       $GT_OUTPUT/fuzz/crashes/
#
# Usage: tests/run-tests.sh [--unit] [--integration] [--fuzz]
#                           [--sanitized DIR] [FILTER]
#   The options choose the parts (default: unit and integration tests).
#   --sanitized DIR runs the unit and integration parts again with the
#   sanitized build in DIR (make SANITIZE=1): its tests and DIR/gtrace-bpf
#   (its integration tests beside the plain build's; the cases that measure
#   time and the scripts marked "# run-tests: once" only in the plain pass,
#   named at the start).
#   FILTER keeps the test files whose name contains it.
# Environment: GT_OUTPUT (build directory, default .output), GTRACE
# (recorder, default ./gtrace-bpf), GT_TEST_KEEP=1 keeps the files of failed
# integration cases, GT_TEST_CASE_TIMEOUT (s, default 150), GT_TEST_JOBS
# (shared integration cases at a time, default 2 per CPU, at most 8; 1 runs
# them one by one), GT_UNIT_JOBS (unit test binaries at a time, default 1
# per CPU), GT_FUZZ_JOBS (harnesses at a time, default 1 per CPU).
set -u

cd "$(dirname "$0")/.." || exit 2

run_unit=0 run_integration=0 run_fuzz=0 san_dir=
while [ $# -gt 0 ]; do
	case $1 in
	--unit) run_unit=1 ;;
	--integration) run_integration=1 ;;
	--fuzz) run_fuzz=1 ;;
	--sanitized)
		[ $# -ge 2 ] || { echo "run-tests: --sanitized needs a directory" >&2; exit 2; }
		san_dir=$2; shift ;;
	-h|--help) sed -n '3,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	-*) echo "run-tests: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
[ $((run_unit + run_integration + run_fuzz)) -eq 0 ] && run_unit=1 run_integration=1
filter=${1:-}
out_dir=${GT_OUTPUT:-.output}
GTRACE=${GTRACE:-$PWD/gtrace-bpf}
export GTRACE

# The sanitized programs: a report (a leak included) ends the program with a
# status no test expects, so it fails the test that ran it; known one-off
# leaks are listed, with the reason, in tests/sanitize/lsan.supp.  A failed
# allocation returns NULL as without ASAN: test_vec checks that ENOMEM path.
export ASAN_OPTIONS=${ASAN_OPTIONS:-exitcode=86:detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-exitcode=86:print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-exitcode=86:suppressions=$PWD/tests/sanitize/lsan.supp}

passed=0 failed=0
NCPU=$(nproc 2>/dev/null || echo 1)
UNIT_TIMEOUT=${GT_TEST_UNIT_TIMEOUT:-300}

# --- unit tests -------------------------------------------------------------

# Runs one cmocka binary; prints its result lines and, last, "COUNTS P F".
# cmocka ends with "[  PASSED  ] N test(s)." and, when some failed, "[  FAILED
# ] N test(s), listed below:"; a crash or a non-zero status without a FAILED
# count counts as one failure.
run_unit_binary() {
	local tag=$1 bin=$2 name out rc p f why=
	name=$(basename "$bin")
	out=$(mktemp)
	CMOCKA_MESSAGE_OUTPUT=stdout timeout -k 10 "$UNIT_TIMEOUT" "$bin" > "$out" 2>&1
	rc=$?
	p=$(sed -n 's/^\[  PASSED  \] \([0-9][0-9]*\) test(s)\..*/\1/p' "$out" | tail -n 1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9][0-9]*\) test(s).*/\1/p' "$out" | tail -n 1)
	# no summary (a crash): the tests that got as far as OK passed
	[ -n "$p" ] || [ -n "$f" ] || p=$(grep -c '^\[       OK \]' "$out")
	p=${p:-0}
	f=${f:-0}
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		why="timed out after ${UNIT_TIMEOUT} s"
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		why="exited with status $rc without a cmocka FAILED count"
	elif [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
		why="printed no cmocka result line"
	fi
	[ -n "$why" ] && [ "$f" -eq 0 ] && f=1
	if [ "$f" -gt 0 ]; then
		echo "FAIL ${tag}unit $name: $p passed, $f failed${why:+ ($why)}"
		grep -E '^\[  (FAILED|ERROR)  *\]|[Ee]rror|[Ff]ailure' "$out" | head -n 30 | sed 's/^/    /'
		[ -n "$why" ] && tail -n 5 "$out" | sed 's/^/    | /'
	else
		echo "PASS ${tag}unit $name: $p test(s)"
	fi
	echo "COUNTS $p $f"
	rm -f "$out"
}

# lanes JOBS LABEL FN ARGS... -- ITEMS...: runs "FN ARGS... ITEM" for each
# item, JOBS at a time in the background, each one's output kept; then prints
# the outputs in the items' order, all but the "COUNTS P F" line each ends
# with, whose counts it adds. A job that ended without it fails, named with
# LABEL and the item's base name.
lanes() {
	local jobs=$1 label=$2 fn=$3 tmp i line p f
	local -a args=()
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/gtrace-lanes.XXXXXX")
	for ((i = 1; i <= $#; i++)); do
		while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
			wait -n
		done
		"$fn" "${args[@]}" "${!i}" > "$tmp/$i" 2>&1 &
	done
	wait
	for ((i = 1; i <= $#; i++)); do
		p= f=
		while IFS= read -r line; do
			case $line in
			"COUNTS "*) read -r _ p f <<< "$line" ;;
			*) printf '%s\n' "$line" ;;
			esac
		done < "$tmp/$i"
		if [ -z "$p" ] || [ -z "$f" ]; then
			echo "FAIL $label$(basename "${!i}"): the runner's job for it ended without its counts"
			p=0 f=1
		fi
		passed=$((passed + p))
		failed=$((failed + f))
	done
	rm -rf "$tmp"
}

# The unit tests of the build in $1; $2 tags their result lines. The
# binaries run GT_UNIT_JOBS at a time, one per CPU (most of their time is
# waits: test_inject's bounded waits, 22 of its 22.4 s; one per CPU keeps
# each a CPU of its own for the ones that serve sockets against deadlines),
# their lines printed in order, and their counts added.
UNIT_JOBS=${GT_UNIT_JOBS:-$NCPU}
run_unit_tests() {
	local dir=$1 tag=$2 bin src name
	local -A seen=()
	local -a bins=()
	for bin in "$dir"/tests/test_*; do
		[ -f "$bin" ] && [ -x "$bin" ] || continue
		case $bin in *.d|*.o) continue ;; esac
		[ -n "$filter" ] && [[ $(basename "$bin") != *"$filter"* ]] && continue
		seen[$(basename "$bin")]=1
		bins+=("$bin")
	done
	lanes "$UNIT_JOBS" "${tag}unit " run_unit_binary "$tag" -- "${bins[@]}"
	for src in tests/unit/test_*.c; do
		[ -f "$src" ] || continue
		name=$(basename "$src" .c)
		[ -n "$filter" ] && [[ $name != *"$filter"* ]] && continue
		if [ -z "${seen[$name]:-}" ]; then
			echo "FAIL ${tag}unit $name: not built ($dir/tests/$name missing; run make test)"
			failed=$((failed + 1))
		fi
	done
}

# --- integration tests ------------------------------------------------------

# The integration tests run as jobs: one per case of a script built on
# tests/integration/lib.sh (each case has its own process and directory
# already), one per script otherwise.  "bash SCRIPT __list" gives each case's
# kind (lib.sh says why): the solo jobs (and the scripts not built on
# lib.sh) run first, one at a time, with no other test beside them; then the
# quiet ones, the same way; then the shared ones, GT_TEST_JOBS at a time.
# A solo case its script lists in SCOPED_CASES is a shared one, in a cgroup
# of its own that its recorder records instead of every process (lib.sh),
# in both passes: the solo cases left are the ones whose subject is the
# recording of every process (--all, the daemon's default), and those run
# as written.
# The output of each job is kept and printed in order: the scripts in turn,
# the plain build's, then the sanitized build's, each script's cases in
# their order, then the time its cases took (added up).
# Two per CPU (at most 8): a case spends much of its time waiting (probes
# attached and detached, workloads that sleep), not on a CPU.
INTEG_JOBS=${GT_TEST_JOBS:-$((NCPU * 2))}
[ "$INTEG_JOBS" -le 8 ] || [ -n "${GT_TEST_JOBS:-}" ] || INTEG_JOBS=8
job_dir=
declare -a J_SCRIPT=() J_CASE=() J_TAG=() J_OUT_DIR=() J_GTRACE=() J_KIND=() J_LAST=() J_DONE=() J_LEFT=() J_ONCE=()
declare -a J_SCOPE=()
N_SCOPED=0
# a cgroup2 file system for the scoped cases (tests/integration/lib.sh)
HAVE_CG2=0
grep -q '^[^ ]* [^ ]* cgroup2 ' /proc/self/mounts 2> /dev/null && HAVE_CG2=1

# add_jobs TAG OUT_DIR GTRACE: the jobs of the integration tests with the
# recorder GTRACE and the mock of the build in OUT_DIR; TAG tags their
# result lines.
add_jobs() {
	local tag=$1 odir=$2 gt=$3 t c kind n listed
	for t in tests/integration/test_*.sh; do
		[ -f "$t" ] || continue
		[ -n "$filter" ] && [[ $(basename "$t") != *"$filter"* ]] && continue
		n=${#J_SCRIPT[@]} listed=0
		# "# run-tests: [KIND ]once": the plain pass only (below)
		if [ -n "$tag" ] && grep -Eq '^# run-tests: ((shared|solo|quiet) )?once$' "$t"; then
			J_ONCE+=("$(basename "$t" .sh)")
			continue
		fi
		if grep -q '^run_cases' "$t" && grep -q 'lib\.sh"$' "$t"; then
			while read -r c kind scoped; do
				[ -n "$c" ] || continue
				listed=1
				case $kind in shared|solo|quiet) ;; *) kind=solo ;; esac
				scope=0
				if [ "$kind" = solo ] && [ "${scoped:-}" = scoped ] && [ "$HAVE_CG2" = 1 ]; then
					# in a cgroup of its own, beside others
					kind=shared scope=1
				fi
				if [ "$kind" = quiet ] && [ -n "$tag" ]; then
					# a case that measures time measures the plain build:
					# the sanitized one's is not what anyone runs
					J_LEFT+=("$(basename "$t" .sh):$c")
					continue
				fi
				J_SCRIPT+=("$t") J_CASE+=("$c") J_TAG+=("$tag") J_OUT_DIR+=("$odir") J_GTRACE+=("$gt")
				J_KIND+=("$kind") J_LAST+=(0) J_DONE+=(0) J_SCOPE+=("$scope")
				[ "$scope" = 1 ] && N_SCOPED=$((N_SCOPED + 1))
			done < <(bash "$t" __list 2> /dev/null)
		fi
		if [ "$listed" -eq 0 ]; then
			# not built on lib.sh, or it listed no case: the whole script,
			# solo unless a line "# run-tests: KIND" says otherwise
			kind=$(sed -n 's/^# run-tests: \(shared\|solo\|quiet\)\( once\)\{0,1\}$/\1/p' "$t" | head -n 1)
			J_SCRIPT+=("$t") J_CASE+=("") J_TAG+=("$tag") J_OUT_DIR+=("$odir") J_GTRACE+=("$gt")
			J_KIND+=("${kind:-solo}") J_LAST+=(0) J_DONE+=(0) J_SCOPE+=(0)
		fi
		[ ${#J_SCRIPT[@]} -gt "$n" ] && J_LAST[-1]=1
	done
}

# run_job I: runs job I, its tagged output in $job_dir/I.out, its status
# and milliseconds in $job_dir/I.rc.
run_job() {
	local i=$1 t0 rc
	t0=$(date +%s%N)
	(
		export GT_OUTPUT=${J_OUT_DIR[$i]} GTRACE=${J_GTRACE[$i]}
		if [ -n "${J_CASE[$i]}" ]; then export GT_TEST_ONLY=${J_CASE[$i]}; else unset GT_TEST_ONLY; fi
		if [ "${J_SCOPE[$i]}" = 1 ]; then export GT_TEST_SCOPE=1; else unset GT_TEST_SCOPE; fi
		bash "${J_SCRIPT[$i]}" 2>&1 < /dev/null | sed "s/^\(PASS\|FAIL\) /\1 ${J_TAG[$i]}/"
		exit "${PIPESTATUS[0]}"
	) > "$job_dir/$i.out"
	rc=$?
	echo "$rc $(( ($(date +%s%N) - t0) / 1000000 ))" > "$job_dir/$i.rc"
}

# Prints the jobs that have ended and not been printed, as far as the first
# that has not ended, and adds their counts.
print_from=0 script_ms=0
print_done() {
	local i rc ms p f name
	while [ "$print_from" -lt ${#J_SCRIPT[@]} ] && [ "${J_DONE[$print_from]}" -eq 1 ]; do
		i=$print_from
		read -r rc ms < "$job_dir/$i.rc"
		name=$(basename "${J_SCRIPT[$i]}" .sh)
		cat "$job_dir/$i.out"
		p=$(grep -c '^PASS ' "$job_dir/$i.out")
		f=$(grep -c '^FAIL ' "$job_dir/$i.out")
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			echo "FAIL ${J_TAG[$i]}$name${J_CASE[$i]:+ ${J_CASE[$i]}}: the script exited with status $rc"
			f=1
		elif [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
			echo "FAIL ${J_TAG[$i]}$name${J_CASE[$i]:+ ${J_CASE[$i]}}: the script reported no result"
			f=1
		fi
		passed=$((passed + p))
		failed=$((failed + f))
		script_ms=$((script_ms + ms))
		if [ "${J_LAST[$i]}" -eq 1 ]; then
			echo "    (${J_TAG[$i]}$name.sh: $((script_ms / 1000)) s)"
			script_ms=0
		fi
		print_from=$((print_from + 1))
	done
}

# run_phase KIND LANES: runs the jobs of that kind, LANES at a time, and
# prints what can be printed as they end.
run_phase() {
	local kind=$1 lanes=$2 i pid
	local -A running=()
	for i in "${!J_SCRIPT[@]}"; do
		[ "${J_KIND[$i]}" = "$kind" ] || continue
		while [ ${#running[@]} -ge "$lanes" ]; do
			pid=
			wait -n -p pid "${!running[@]}"
			[ -n "$pid" ] || continue
			J_DONE[${running[$pid]}]=1
			unset "running[$pid]"
			print_done
		done
		run_job "$i" &
		running[$!]=$i
	done
	for pid in "${!running[@]}"; do
		wait "$pid"
		J_DONE[${running[$pid]}]=1
	done
	print_done
}

# The integration tests of the plain build and, given a directory, of the
# sanitized build in it (the tests take the recorder from GTRACE, the mock
# from GT_OUTPUT).
run_integration_tests() {
	local san=$1 san_gtrace k n
	local -A count=()
	if [ "$(id -u)" -ne 0 ]; then
		echo "note: not root: the integration tests that need uprobes will fail; run as root (sudo make test)"
	fi
	job_dir=$(mktemp -d "${TMPDIR:-/tmp}/gtrace-run-tests.XXXXXX")
	add_jobs "" "$out_dir" "$GTRACE"
	if [ -n "$san" ]; then
		san_gtrace=$PWD/$san/gtrace-bpf
		case $san in /*) san_gtrace=$san/gtrace-bpf ;; esac
		add_jobs "[san] " "$san" "$san_gtrace"
	fi
	for k in "${J_KIND[@]}"; do count[$k]=$(( ${count[$k]:-0} + 1 )); done
	if [ ${#J_LEFT[@]} -gt 0 ]; then
		echo "note: the sanitized pass leaves out ${#J_LEFT[@]} cases that measure time or memory" \
		     "(QUIET_CASES; the plain pass runs them): ${J_LEFT[*]}"
	fi
	if [ ${#J_ONCE[@]} -gt 0 ]; then
		echo "note: the sanitized pass leaves out ${#J_ONCE[@]} scripts whose subject is no memory the" \
		     "recorder's C code handles, or whose C code the sanitized fuzzers run" \
		     "(\"# run-tests: once\", each says why; the plain pass runs them): ${J_ONCE[*]}"
	fi
	if [ "$N_SCOPED" -gt 0 ]; then
		echo "note: $N_SCOPED jobs of solo cases run scoped, beside others: each in a cgroup" \
		     "of its own, recording that cgroup instead of every process (SCOPED_CASES)"
	fi
	echo "note: ${#J_KIND[@]} integration jobs: ${count[solo]:-0} solo (they see every process on the machine)," \
	     "one at a time; then ${count[quiet]:-0} quiet, one at a time;" \
	     "then ${count[shared]:-0} shared, $INTEG_JOBS at a time"
	run_phase solo 1
	run_phase quiet 1
	run_phase shared "$INTEG_JOBS"
	rm -rf "$job_dir"
}

# --- fuzzers ----------------------------------------------------------------

# Runs every harness of $1 for GT_FUZZ_SECONDS on its corpus: what it finds
# is added to $1/corpus/NAME, its seeds are $1/seeds/NAME (generated by make)
# and tests/fuzz/corpus/NAME (committed).  One test per harness; a crash,
# leak or timeout fails it and the input is kept in $1/crashes/.  A harness
# is one process on one CPU: GT_FUZZ_JOBS of them (default: one per CPU)
# run at a time, each for its full time, their lines printed in order.
# fuzz_one DIR SECS HARNESS runs one, its last line "COUNTS P F" (lanes).
fuzz_one() {
	local dir=$1 secs=$2 h=$3 name log rc s seeds start
	name=$(basename "$h")
	log=$dir/logs/$name.log
	mkdir -p "$dir/corpus/$name"
	seeds=()
	for s in "$dir/seeds/$name" "tests/fuzz/corpus/$name"; do
		[ -d "$s" ] && seeds+=("$s")
	done
	start=$(date +%s)
	"$h" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$dir/crashes/$name-" "$dir/corpus/$name" "${seeds[@]}" > "$log" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		echo "PASS fuzz $name: $(sed -n 's/^stat::number_of_executed_units: *//p' "$log") runs in $secs s," \
		     "$(ls "$dir/corpus/$name" | wc -l) inputs in its corpus"
	else
		echo "FAIL fuzz $name: status $rc; input kept as" \
		     "$(sed -n 's/.*Test unit written to \(.*\)/\1/p' "$log" | tail -n 1) (log: $log)"
		grep -E '^(==[0-9]+==|SUMMARY|.*runtime error)' "$log" | head -n 10 | sed 's/^/    /'
	fi
	echo "    (fuzz $name: $(( $(date +%s) - start )) s)"
	if [ "$rc" -eq 0 ]; then echo "COUNTS 1 0"; else echo "COUNTS 0 1"; fi
}

run_fuzzers() {
	local dir=$1 secs=${GT_FUZZ_SECONDS:-60} h name src
	local -a hs=()
	mkdir -p "$dir/crashes" "$dir/logs"
	for h in "$dir"/fuzz_*; do
		[ -f "$h" ] && [ -x "$h" ] || continue
		case $h in *.d|*.o) continue ;; esac
		name=$(basename "$h")
		[ -n "$filter" ] && [[ $name != *"$filter"* ]] && continue
		hs+=("$h")
	done
	lanes "${GT_FUZZ_JOBS:-$NCPU}" "fuzz " fuzz_one "$dir" "$secs" -- "${hs[@]}"
	for src in tests/fuzz/fuzz_*.c; do
		[ -f "$src" ] || continue
		name=$(basename "$src" .c)
		[ -n "$filter" ] && [[ $name != *"$filter"* ]] && continue
		if [ ! -x "$dir/$name" ]; then
			echo "FAIL fuzz $name: not built ($dir/$name missing; run make fuzz)"
			failed=$((failed + 1))
		fi
	done
}

# Runs a part and says how long it took.
timed() {
	local what=$1 start
	shift
	start=$(date +%s)
	"$@"
	echo "    ($what: $(( $(date +%s) - start )) s)"
}

[ $run_unit -eq 1 ] && timed "unit tests" run_unit_tests "$out_dir" ""
[ $run_unit -eq 1 ] && [ -n "$san_dir" ] && timed "sanitized unit tests" run_unit_tests "$san_dir" "[san] "
[ $run_integration -eq 1 ] &&
	timed "integration tests${san_dir:+, plain and sanitized}" run_integration_tests "$san_dir"
[ $run_fuzz -eq 1 ] && timed "fuzzers" run_fuzzers "$out_dir/fuzz"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
