#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gtrace-bpf export -f json|csv: a recorded mock workload exported through
# the CLI parses (python3's json and csv modules) and says what dump says:
# one complete event per call with an exit, at dump's ts/1000 and dur/1000
# microseconds, named by the kernel or the api, on the right pid and tid;
# one CSV row per dump line with the same values, kernel names with commas
# intact.  Output files: default names, never replaced without --force,
# mode 0600, "-" for stdout; bad input gives one line and status 1.
REQUIRES="root jq mock gtrace"
. "$(dirname "$0")/lib.sh"

N=100 M=10 K=5

# Records `cuda_workload ARGS` into $T/a.gtrace and dumps it into $T/a.dump;
# sets WJ (the workload's JSON line) and WL_PID.
record() {
	GT_LIBCUDA=$MOCK_LIB GT_MOCK_SYNC_US=1000 \
		"$GTRACE" --libcuda "$MOCK_LIB" -o "$T/a.gtrace" --force -- "$WORKLOAD" "$@" \
		> "$T/cmd.out" 2> "$T/cmd.err"
	RC=$?
	[ "$RC" -eq 0 ] || fatal "gtrace-bpf -- cuda_workload $* exited with status $RC; stderr: $(tail -n 3 "$T/cmd.err" | tr '\n' '|')"
	WJ=$(grep '^{' "$T/cmd.out" | tail -n 1)
	[ -n "$WJ" ] || fatal "the workload printed no JSON line; stdout: $(head -c 300 "$T/cmd.out")"
	WL_PID=$(jq -r .pid <<< "$WJ")
	dump_trace "$T/a.gtrace" "$T/a.dump"
}

# export_ok ARGS...: gtrace-bpf export ARGS; checks status 0 and a quiet
# stderr (stdout is the caller's).
export_ok() {
	local rc
	"$GTRACE" export "$@" 2> "$T/export.err"
	rc=$?
	[ $rc -eq 0 ] || fatal "gtrace-bpf export $* exited with status $rc: $(head -n 3 "$T/export.err" | tr '\n' '|')"
	[ -s "$T/export.err" ] && err "gtrace-bpf export $* wrote to stderr: $(head -n 3 "$T/export.err" | tr '\n' '|')"
	return 0
}

need_python() {
	command -v python3 > /dev/null || fatal "needs python3 to parse the JSON and CSV output"
}

# Compares a Chrome JSON export with the dump lines: prints one line per
# difference, nothing when they agree.  Numbers are read as Decimal so that
# ts/dur compare exactly.
CHECK_JSON='
import collections, decimal, json, sys
exp, dump, pid, host = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
kernels = set(sys.argv[5:])
D = decimal.Decimal
try:
    doc = json.load(open(exp, encoding="utf-8"), parse_float=D)
except ValueError as e:
    print("the export is not valid JSON: %s" % e); sys.exit()
# the stack table and the clock pairs are dump only (an event carries its stack
# id, a slice its frames; the pairs are for merge --hosts)
lines = [l for l in map(json.loads, open(dump, encoding="utf-8")) if l.get("type") not in ("stack", "clock", "host")]
out = []
if doc.get("displayTimeUnit") != "ns":
    out.append("displayTimeUnit is %r, expected \"ns\"" % doc.get("displayTimeUnit"))
ev = doc.get("traceEvents")
if not isinstance(ev, list):
    print("no traceEvents array"); sys.exit()
def us(ns):
    return D(ns) / 1000
# every call with an exit is one X event: same pid, tid, ts, dur, cat, name,
# api; so is a launch recorded at entry only (no dur, not incomplete in
# dump), 1 ns long at its entry
def name_of(c):
    return c["kernel"] if c["type"] == "launch" and "kernel" in c else c["api"]
def entry_only(c):
    return "api" in c and "dur" not in c and not c.get("incomplete")
want = collections.Counter((c["pid"], c["tid"], us(c["ts"]), us(c["dur"]) if "dur" in c else us(1),
                            c["type"], name_of(c), c["api"])
                           for c in lines if "api" in c and ("dur" in c or entry_only(c)))
got = collections.Counter((e["pid"], e["tid"], e["ts"], e["dur"], e.get("cat"), e["name"], e["args"].get("api"))
                          for e in ev if e.get("ph") == "X" and e.get("cat") not in ("ioctl", "sched"))
# ioctls and off-CPU intervals: X events too, on the same thread tracks
kind = {"ioctl": "ioctl", "sched": "offcpu"}
want_k = collections.Counter((c["pid"], c["tid"], us(c["ts"]), us(c["dur"]), c["type"])
                             for c in lines if c["type"] in ("ioctl", "offcpu"))
got_k = collections.Counter((e["pid"], e["tid"], e["ts"], e["dur"], kind[e["cat"]])
                            for e in ev if e.get("ph") == "X" and e.get("cat") in kind)
if want_k != got_k:
    out.append("ioctl/off-CPU events differ: %d in the export, %d in dump" % (sum(got_k.values()), sum(want_k.values())))
if sum(got.values()) != sum(want.values()):
    out.append("%d X events, dump has %d calls with an exit or recorded at entry only" % (sum(got.values()), sum(want.values())))
for k in list((want - got).keys())[:5]:
    out.append("  in dump, not in the export: %r" % (k,))
for k in list((got - want).keys())[:5]:
    out.append("  in the export, not in dump: %r" % (k,))
# calls whose exit never came and process events are instants
inst = [e for e in ev if e.get("ph") == "i"]
n_open = sum(1 for c in lines if "api" in c and "dur" not in c and not entry_only(c))
n_proc = sum(1 for c in lines if c["type"] == "process")
if sum(1 for e in inst if e.get("cat") != "process") != n_open:
    out.append("instant call events: %d, dump has %d calls without an exit" % (sum(1 for e in inst if e.get("cat") != "process"), n_open))
if sum(1 for e in inst if e.get("cat") == "process") != n_proc:
    out.append("process events: %d, dump has %d" % (sum(1 for e in inst if e.get("cat") == "process"), n_proc))
if any(e.get("s") != "t" for e in inst):
    out.append("instant events without thread scope")
# the launches are named by the three kernels, args as in dump
names = set(e["name"] for e in ev if e.get("ph") in ("X", "i") and e.get("cat") == "launch")
if names != kernels:
    out.append("launch event names %r, expected %r" % (sorted(names), sorted(kernels)))
for e in ev:
    if e.get("ph") in ("X", "i") and e.get("cat") == "launch":
        a = e["args"]
        if a.get("kernel") != e["name"] or not a.get("mangled") or len(a.get("grid", [])) != 3 or "stream" not in a:
            out.append("launch args incomplete: %r" % (a,)); break
# names: the workload process is named, every thread with events has its metadata
meta = [e for e in ev if e.get("ph") == "M"]
pnames = [e["args"]["name"] for e in meta if e["name"] == "process_name" and e["pid"] == pid]
if not pnames or "cuda_workload" not in pnames[-1]:
    out.append("process_name of pid %d: %r, expected the workload command line" % (pid, pnames))
tracks = set((e["pid"], e["tid"]) for e in ev if e.get("ph") in ("X", "i"))
sorted_tracks = set((e["pid"], e["tid"]) for e in meta if e["name"] == "thread_sort_index")
if tracks - sorted_tracks:
    out.append("threads without metadata: %r" % sorted(tracks - sorted_tracks))
if set(c["tid"] for c in lines if c["pid"] == pid) != set(t for p, t in tracks if p == pid):
    out.append("tids of pid %d differ from dump" % pid)
md = doc.get("metadata", {})
if md.get("host") != host or md.get("clock") != "CLOCK_MONOTONIC" or "realtime_offset_ns" not in md \
        or "gtrace-bpf" not in md.get("cmdline", "") or md.get("truncated") is not False:
    out.append("metadata: %r" % ({k: v for k, v in md.items() if k != "counters"},))
print("\n".join(out))
'

# Compares a CSV export with the dump lines, row i with line i: every field
# of the line in its column, every other cell empty.
CHECK_CSV='
import csv, json, sys
exp, dump, kernel = sys.argv[1], sys.argv[2], sys.argv[3]
rows = list(csv.reader(open(exp, encoding="utf-8", newline="")))
# the stack table and the clock pairs are dump only (an event carries its stack
# id, a slice its frames; the pairs are for merge --hosts)
lines = [l for l in map(json.loads, open(dump, encoding="utf-8")) if l.get("type") not in ("stack", "clock", "host")]
out = []
want_head = ("ts,pid,tid,cpu,type,api,dur,ret,failed,incomplete,kernel,mangled,func,grid_x,grid_y,grid_z,"
             "block_x,block_y,block_z,shmem,stream,bytes,kind,dst,src,ptr,handle,parent,name,path,event,"
             "ppid,comm,exit_code").split(",")
head = rows[0] if rows else []
if head[:len(want_head)] != want_head:
    out.append("header %r" % (head,))
if len(rows) - 1 != len(lines):
    out.append("%d rows, dump has %d lines" % (len(rows) - 1, len(lines)))
def cell(v):
    if v is True: return "true"
    if v is False: return "false"
    return str(v)
bad = 0
for i, (r, l) in enumerate(zip(rows[1:], lines)):
    if bad >= 3:
        break
    if len(r) != len(head):
        out.append("row %d has %d cells, the header %d" % (i + 1, len(r), len(head))); bad += 1; continue
    want = {}
    for k, v in l.items():
        if k in ("grid", "block"):
            for s, x in zip("xyz", v): want[k + "_" + s] = cell(x)
        elif isinstance(v, list):
            # a set of flags: "a|b" in a cell, an empty one an empty cell
            if v: want[k] = "|".join(map(str, v))
        else:
            want[k] = cell(v)
    got = {k: v for k, v in zip(head, r) if v != ""}
    if got != want:
        out.append("row %d: %r\n  dump: %r" % (i + 1, got, want)); bad += 1
if not any(kernel in r for r in rows[1:]):
    out.append("no cell holds the kernel name %r" % kernel)
print("\n".join(out))
'

t_json() {
	local d
	need_python
	record --launches $N --copies $M --syncs $K --threads 2
	export_ok "$T/a.gtrace" -f json -o "$T/x.json"
	d=$(python3 -c "$CHECK_JSON" "$T/x.json" "$T/a.dump" "$WL_PID" "$(uname -n)" \
		"$K_VECADD" "$K_SCALE" "$K_FILL" 2>&1) || fatal "the JSON check failed: $d"
	[ -z "$d" ] || err "the JSON export differs from dump:
$d"
	jq -e --argjson pid "$WL_PID" '[.traceEvents[] | select(.ph == "X" and .dur == 0.001 and .pid == $pid and .cat == "launch")] | length == 200' \
		"$T/x.json" > /dev/null || err "expected 200 launch slices of 1 ns of pid $WL_PID (2 threads x $N, recorded at entry only)"
}

t_csv() {
	local d
	need_python
	record --launches $N --copies $M --syncs $K --threads 2
	export_ok "$T/a.gtrace" -f csv -o "$T/x.csv"
	d=$(python3 -c "$CHECK_CSV" "$T/x.csv" "$T/a.dump" "$K_VECADD" 2>&1) ||
		fatal "the CSV check failed: $d"
	[ -z "$d" ] || err "the CSV export differs from dump:
$d"
}

# stderr_is LABEL FILE LINES: FILE has exactly LINES lines.
stderr_lines() {
	local n
	n=$(wc -l < "$2")
	[ "$n" -eq "$3" ] || err "$1: $n lines on stderr, expected $3: $(head -n 5 "$2" | tr '\n' '|')"
}

t_files() {
	local rc m off left
	need_python
	record --launches 4 --copies 1 --syncs 1
	# default names: next to the trace, .gtrace replaced
	export_ok "$T/a.gtrace" -f json
	export_ok "$T/a.gtrace" -f csv
	[ -s "$T/a.json" ] || err "no $T/a.json after export -f json without -o"
	[ -s "$T/a.csv" ] || err "no $T/a.csv after export -f csv without -o"
	m=$(stat -c %a "$T/a.json")
	[ "$m" = 600 ] || err "a.json has mode $m, expected 600"
	jq -e '.traceEvents | length > 0' "$T/a.json" > /dev/null || err "a.json is not a trace event document"

	# no overwrite without --force: one line, status 1, the file untouched
	printf 'precious\n' > "$T/keep.json"
	"$GTRACE" export "$T/a.gtrace" -f json -o "$T/keep.json" > "$T/o1" 2> "$T/e1"
	rc=$?
	[ $rc -eq 1 ] || err "export to an existing file without --force: status $rc, expected 1"
	stderr_lines "export to an existing file" "$T/e1" 1
	grep -q -- '--force' "$T/e1" || err "the refusal does not mention --force: $(cat "$T/e1")"
	[ "$(cat "$T/keep.json")" = precious ] || err "the existing file was modified without --force"
	export_ok "$T/a.gtrace" -f json -o "$T/keep.json" --force
	jq -e '.displayTimeUnit == "ns"' "$T/keep.json" > /dev/null || err "--force did not replace the file with the export"

	# "-": stdout, and no file
	export_ok "$T/a.gtrace" -f csv -o - > "$T/stdout.csv"
	cmp -s "$T/stdout.csv" "$T/a.csv" || err "export -o - differs from the file export"
	[ -e "$T/-" ] && err "export -o - created a file named -"

	# unreadable input: one line, status 1, no output
	printf 'not a trace\n' > "$T/notes.txt"
	"$GTRACE" export "$T/notes.txt" -f json > "$T/o2" 2> "$T/e2"
	rc=$?
	[ $rc -eq 1 ] || err "export of a text file: status $rc, expected 1"
	stderr_lines "export of a text file" "$T/e2" 1
	grep -q 'not a gtrace file' "$T/e2" || err "export of a text file: $(cat "$T/e2")"
	[ -e "$T/notes.txt.json" ] && err "export of a text file left notes.txt.json"

	# a file cut before its trailer (the last "GTCK" chunk header), as after
	# a crash: every event of the data chunks, one line saying the recording
	# did not finish, status 1
	off=$(python3 -c 'import sys; print(open(sys.argv[1], "rb").read().rfind(b"GTCK"))' "$T/a.gtrace")
	[ "$off" -gt 0 ] || fatal "no chunk header found in $T/a.gtrace"
	head -c "$off" "$T/a.gtrace" > "$T/cut.gtrace"
	"$GTRACE" export "$T/cut.gtrace" -f json > "$T/o3" 2> "$T/e3"
	rc=$?
	[ $rc -eq 1 ] || err "export of a cut file: status $rc, expected 1"
	stderr_lines "export of a cut file" "$T/e3" 1
	grep -q "^gtrace-bpf: $T/cut.gtrace is damaged: .*no trailer: recording did not finish; read [0-9]* records before it .*; exported the records read\$" "$T/e3" ||
		err "export of a cut file: not the warning expected: $(cat "$T/e3")"
	jq -e --slurpfile full "$T/a.json" '.metadata.truncated == true and .metadata.damage != null
		and (.traceEvents | length) == ($full[0].traceEvents | length)' "$T/cut.json" > /dev/null ||
		err "the export of a file cut before its trailer is not marked truncated or lacks events: $(jq -c '.metadata.truncated, (.traceEvents | length)' "$T/cut.json" | tr '\n' ' ')"

	# no temporary file left by any of these
	left=$(cd "$T" && shopt -s nullglob && echo .[!.]* ..?*)
	[ -z "$left" ] || err "temporary files left: $left"
	return 0
}

# Names a hostile program gives its kernels, threads, command line and
# NVTX ranges (gen_trace -H: formulas, escape sequences, C1 controls,
# bytes that are not UTF-8, markup): every export and dump is valid UTF-8
# with no control character; CSV cells are no formulas, the formulas kept
# as text; JSON keeps the names as they were.
t_hostile_text() {
	local n
	gen_trace -H -g -p 2 -k 24 -i 500 "$T/h.gtrace" 10000 3 > /dev/null || fatal "gen_trace -H failed"
	gtrace_ok "$T/h.csv.out" export "$T/h.gtrace" -f csv -o "$T/h.csv"
	text_ok "export -f csv" csv "$T/h.csv"
	for f in "'=HYPERLINK(\"\"http://evil.example/" "'+cmd|' /C calc'!A0_k2" "'-1+1_k3" "'@SUM(1+1)_k4" \
		 "'\\tTAB_k5" "'\\rCR_k6" 'ctl\x01\x7f\xc2\x9b31m\x1b[31mred' 'bad\xff\xfe\xc3(_k8'; do
		grep -qF "$f" "$T/h.csv" || err "export -f csv: no cell with $f"
	done
	gtrace_ok "$T/h.json.out" export "$T/h.gtrace" -f json -o "$T/h.json"
	text_ok "export -f json" json "$T/h.json"
	gtrace_ok "$T/h.dump" dump "$T/h.gtrace"
	text_ok "dump" jsonl "$T/h.dump"
	gtrace_ok "$T/h.sum" dump --summary "$T/h.gtrace"
	text_ok "dump --summary" text "$T/h.sum"
	# the names themselves, control characters and all, in the JSON
	n=$(jq -r 'select(.type == "launch") | .kernel' "$T/h.dump" | grep -c $'^ctl\x01\x7f\xc2\x9b31m\x1b\[31mred')
	[ "$n" -gt 0 ] || err "dump: the kernel named with escapes is not in it as it was"
	jq -e '[.traceEvents[] | select(.ph == "M" and .name == "process_name") | .args.name
		| select(startswith("python3 \u001b]0;pwned\u0007=cmd|x </script>"))] | length == 2' "$T/h.json" > /dev/null ||
		err "export -f json: the process names are not the command lines as they were"
	gtrace_ok "$T/h.pf.out" export "$T/h.gtrace" -o "$T/h.pftrace"
}

# The format follows -o's extension unless -f says otherwise (then a
# warning); the path written is said on stdout.
t_extension() {
	local rc
	gen_trace -p 1 -k 4 "$T/t.gtrace" 2000 2 > /dev/null || fatal "gen_trace failed"
	"$GTRACE" export "$T/t.gtrace" -o "$T/a.json" > "$T/a.out" 2> "$T/a.err" || err "export -o a.json: exit $?"
	jq -e '.traceEvents | length > 0' "$T/a.json" > /dev/null || err "-o a.json did not write Chrome JSON: $(head -c 40 "$T/a.json" | od -c | head -n 1)"
	[ "$(cat "$T/a.out")" = "wrote $T/a.json (json)" ] || err "export said '$(cat "$T/a.out")'"
	[ ! -s "$T/a.err" ] || err "export -o a.json wrote to stderr: $(cat "$T/a.err")"
	"$GTRACE" export "$T/t.gtrace" -o "$T/a.csv" > /dev/null 2>&1 || err "export -o a.csv: exit $?"
	head -n 1 "$T/a.csv" | grep -q ',' && ! grep -q 'traceEvents' "$T/a.csv" || err "-o a.csv is not CSV: $(head -n 1 "$T/a.csv")"
	for x in pftrace perfetto-trace; do
		"$GTRACE" export "$T/t.gtrace" -o "$T/a.$x" > /dev/null 2>&1 || err "export -o a.$x: exit $?"
		cmp -s "$T/a.$x" <("$GTRACE" export "$T/t.gtrace" -f perfetto -o - 2> /dev/null) || err "-o a.$x is not the Perfetto protobuf"
	done
	"$GTRACE" export "$T/t.gtrace" -f csv -o "$T/b.json" > /dev/null 2> "$T/b.err"
	rc=$?
	[ $rc -eq 0 ] || err "-f csv -o b.json: exit $rc"
	[ "$(wc -l < "$T/b.err")" -eq 1 ] && grep -q 'warning: -f csv writes csv into .*b.json, whose extension says json' "$T/b.err" ||
		err "-f csv -o b.json: $(cat "$T/b.err")"
	cmp -s "$T/a.csv" "$T/b.json" || err "-f csv -o b.json did not write the CSV"
	# report and stats -o say theirs too
	"$GTRACE" report "$T/t.gtrace" -o "$T/r.html" > "$T/r.out" 2> /dev/null || err "report: exit $?"
	[ "$(cat "$T/r.out")" = "wrote $T/r.html" ] || err "report said '$(cat "$T/r.out")'"
	"$GTRACE" stats "$T/t.gtrace" -o "$T/s.txt" > "$T/s.out" 2> /dev/null || err "stats: exit $?"
	[ "$(cat "$T/s.out")" = "wrote $T/s.txt" ] || err "stats -o said '$(cat "$T/s.out")'"
}

add_case t_extension "export: the format follows -o's extension (.json, .csv, .pftrace, .perfetto-trace), -f wins with a warning; export, report and stats -o say the path written"
add_case t_json "export -f json: parses; X events = dump's calls with an exit (ts, dur, names, pids, tids)"
add_case t_csv "export -f csv: parses; a row per dump line with the same cells; kernel names with commas"
add_case t_files "export: default names, no overwrite without --force, -o -, bad and cut input"
add_case t_hostile_text "hostile names: CSV cells no formulas, every export and dump UTF-8 with no control character, JSON names as they were"
run_cases "$@"
