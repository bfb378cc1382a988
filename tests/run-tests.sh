#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Runs every test and ends with one line: "N passed, N failed".
#
#   unit tests          .output/tests/test_* (cmocka; built by make from
#                       tests/unit/test_*.c; a source without its binary fails)
#   integration tests   tests/integration/test_*.sh (each prints one
#                       "PASS ..." or "FAIL ..." line per case; most need
#                       root and fail, saying so, without it)
#
# Usage: tests/run-tests.sh [--unit|--integration] [FILTER]
#   FILTER keeps the test files whose name contains it.
# Environment: GTRACE (recorder, default ./gtrace-bpf), GT_TEST_KEEP=1 keeps
# the files of failed integration cases, GT_TEST_CASE_TIMEOUT (s, default 150).
set -u

cd "$(dirname "$0")/.." || exit 2


run_unit=1 run_integration=1
case ${1:-} in
--unit) run_integration=0; shift ;;
--integration) run_unit=0; shift ;;
-h|--help) sed -n '3,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
filter=${1:-}

passed=0 failed=0
UNIT_TIMEOUT=${GT_TEST_UNIT_TIMEOUT:-300}

# --- unit tests -------------------------------------------------------------

# Runs one cmocka binary and adds its counts.  cmocka ends with
# "[  PASSED  ] N test(s)." and, when some failed, "[  FAILED  ] N test(s),
# listed below:"; a crash or a non-zero status without a FAILED count
# counts as one failure.
run_unit_binary() {
	local bin=$1 name out rc p f why=
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
		echo "FAIL unit $name: $p passed, $f failed${why:+ ($why)}"
		grep -E '^\[  (FAILED|ERROR)  *\]|[Ee]rror|[Ff]ailure' "$out" | head -n 30 | sed 's/^/    /'
		[ -n "$why" ] && tail -n 5 "$out" | sed 's/^/    | /'
	else
		echo "PASS unit $name: $p test(s)"
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	rm -f "$out"
}

if [ $run_unit -eq 1 ]; then
	declare -A seen=()
	for bin in .output/tests/test_*; do
		[ -f "$bin" ] && [ -x "$bin" ] || continue
		case $bin in *.d|*.o) continue ;; esac
		[ -n "$filter" ] && [[ $(basename "$bin") != *"$filter"* ]] && continue
		seen[$(basename "$bin")]=1
		run_unit_binary "$bin"
	done
	for src in tests/unit/test_*.c; do
		[ -f "$src" ] || continue
		name=$(basename "$src" .c)
		[ -n "$filter" ] && [[ $name != *"$filter"* ]] && continue
		if [ -z "${seen[$name]:-}" ]; then
			echo "FAIL unit $name: not built (.output/tests/$name missing; run make test)"
			failed=$((failed + 1))
		fi
	done
fi

# --- integration tests ------------------------------------------------------

if [ $run_integration -eq 1 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "note: not root: the integration tests that need uprobes will fail; run as root (sudo make test)"
	fi
	for t in tests/integration/test_*.sh; do
		[ -f "$t" ] || continue
		[ -n "$filter" ] && [[ $(basename "$t") != *"$filter"* ]] && continue
		out=$(mktemp)
		start=$(date +%s)
		bash "$t" 2>&1 | tee "$out"
		rc=${PIPESTATUS[0]}
		p=$(grep -c '^PASS ' "$out")
		f=$(grep -c '^FAIL ' "$out")
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			echo "FAIL $(basename "$t" .sh): the script exited with status $rc"
			f=1
		elif [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
			echo "FAIL $(basename "$t" .sh): the script reported no result"
			f=1
		fi
		echo "    ($(basename "$t"): $(( $(date +%s) - start )) s)"
		passed=$((passed + p))
		failed=$((failed + f))
		rm -f "$out"
	done
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
