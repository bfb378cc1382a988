#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Whether two builds of the readers say the same of the same traces, byte for
# byte: the check of a refactor that must not change behaviour.
#
#   tools/same-output.sh [-k DIR] OLD_GTRACE NEW_GTRACE [TRACE...]
#
# Without TRACEs the corpus is made in DIR (default: a temporary directory,
# removed): gen_trace traces of every shape it writes (plain, several
# processes, capture ranges, light windows, the GPU side of a merged --cupti
# trace with unlinked records, no calls, NVTX steps, launches without exits,
# hostile names, long names), and, as root with BPF, recordings of the mock
# workload by OLD_GTRACE (plain, --cupti merged, -c cudaProfilerApi).  Each
# trace goes through dump, dump --summary, stats (table, csv, json), export
# (perfetto, json, csv, --findings), analyze (table, json, md), diff against
# the next trace of the corpus (table, json, md), merge and report.  stdout, stderr and the exit status of each command and the
# files it writes are compared; one line per difference, then a count line.
# Exit 0 when everything is the same, 1 when anything differs, 2 on bad use.
set -u
keep=
if [ "${1:-}" = -k ]; then
	keep=$2
	shift 2
fi
[ $# -ge 2 ] || { echo "usage: tools/same-output.sh [-k DIR] OLD_GTRACE NEW_GTRACE [TRACE...]" >&2; exit 2; }
old=$(realpath "$1") new=$(realpath "$2")
shift 2
for b in "$old" "$new"; do
	[ -x "$b" ] || { echo "same-output: $b is not an executable" >&2; exit 2; }
done
cd "$(dirname "$0")/.." || exit 2
repo=$PWD
if [ -n "$keep" ]; then
	mkdir -p "$keep" || exit 2
	dir=$(realpath "$keep")
else
	dir=$(mktemp -d /tmp/same-output.XXXXXX) || exit 2
	trap 'rm -rf "$dir"' EXIT
fi
mkdir -p "$dir/traces"

traces=("$@")
if [ ${#traces[@]} -eq 0 ]; then
	gen=$repo/.output/tools/gen_trace
	[ -x "$gen" ] || { echo "same-output: no $gen (make test-build)" >&2; exit 2; }
	i=0
	while read -r args; do
		i=$((i + 1))
		# shellcheck disable=SC2086 # the arguments are words
		"$gen" $args "$dir/traces/gen$i.gtrace" 4000 3 > /dev/null 2>&1 ||
			{ echo "same-output: gen_trace $args failed" >&2; exit 2; }
		traces+=("$dir/traces/gen$i.gtrace")
	done <<- 'EOF'
		-s 1
		-s 2 -p 5 -k 12
		-c range
		-c light
		-g
		-g -u 7 -p 3
		-n
		-i 500
		-E
		-H -g
		-N 600 -k 8
		-s 3 -L 90 -i 2000
	EOF
	wl=$repo/.output/mock/cuda_workload mock=$repo/.output/mock/libcuda.so.1
	if [ "$(id -u)" = 0 ] && [ -x "$wl" ] && [ -e "$mock" ]; then
		n=0
		for rec in "" "--cupti --cupti-lib $repo/.output/libgtrace-cupti.so" "-c cudaProfilerApi"; do
			n=$((n + 1))
			# shellcheck disable=SC2086
			if GT_LIBCUDA=$mock "$old" record $rec --libcuda "$mock" -o "$dir/traces/rec$n.gtrace" -- \
				env GT_MOCK_INJECTION=1 LD_LIBRARY_PATH="$repo/.output/cupti/mock" \
				"$wl" --launches 200 --ranges 2 > /dev/null 2> "$dir/traces/rec$n.err"; then
				traces+=("$dir/traces/rec$n.gtrace")
			else
				echo "same-output: note: recording '$rec' failed, left out: $(tail -n 2 "$dir/traces/rec$n.err" | tr '\n' ' ')" >&2
			fi
		done
	fi
fi

# run_both NAME ARGS...: runs ARGS with each build in its own directory
# (files named by ARGS relative to it), keeps stdout, stderr, status and files.
run_both() {
	local name=$1 side b
	shift
	for side in old new; do
		b=$old
		[ $side = new ] && b=$new
		mkdir -p "$dir/$side/$name"
		(cd "$dir/$side/$name" && "$b" "$@" > stdout 2> stderr < /dev/null; echo $? > status)
		# the builds are named in messages and in recordings made by one: one name
		sed -i -e "s|$old|GTRACE|g" -e "s|$new|GTRACE|g" "$dir/$side/$name/stderr" "$dir/$side/$name/stdout" 2> /dev/null
	done
}

nt=${#traces[@]}
for ((i = 0; i < nt; i++)); do
	t=${traces[$i]} next=${traces[$(((i + 1) % nt))]} k="t$i"
	run_both "$k.dump" dump "$t"
	run_both "$k.summary" dump --summary "$t"
	for f in table csv json; do
		run_both "$k.stats.$f" stats --format "$f" "$t"
	done
	for f in perfetto json csv; do
		run_both "$k.export.$f" export -f "$f" -o out "$t"
	done
	run_both "$k.export.findings" export --findings -f json -o out "$t"
	for f in table json md; do
		run_both "$k.analyze.$f" analyze --format "$f" "$t"
		run_both "$k.diff.$f" diff --format "$f" "$next" "$t"
	done
	run_both "$k.merge" merge -o out "$t"
	run_both "$k.report" report -o page.html "$t"
	run_both "$k.report.compare" report --compare "$next" -o page.html "$t"
done

diffs=0 same=0
while IFS= read -r f; do
	rel=${f#"$dir/old/"}
	if [ ! -e "$dir/new/$rel" ]; then
		echo "DIFF $rel: only the old build wrote it"
		diffs=$((diffs + 1))
	elif ! cmp -s "$f" "$dir/new/$rel"; then
		echo "DIFF $rel: $(cmp "$f" "$dir/new/$rel" 2>&1 | head -n 1)"
		diffs=$((diffs + 1))
	else
		same=$((same + 1))
	fi
done < <(find "$dir/old" -type f | sort)
while IFS= read -r f; do
	rel=${f#"$dir/new/"}
	[ -e "$dir/old/$rel" ] || { echo "DIFF $rel: only the new build wrote it"; diffs=$((diffs + 1)); }
done < <(find "$dir/new" -type f | sort)
echo "same-output: $nt traces, $same files the same, $diffs different"
[ "$diffs" -eq 0 ]
