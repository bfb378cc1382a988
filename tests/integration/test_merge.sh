#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gtrace-bpf merge and --cupti, without a GPU: spool files are written here
# (by a small C program built from bpf/gtrace_events.h) for the calls of a
# real recording of the mock workload, so every expected number follows from
# the recording's own dump.
REQUIRES="root jq mock gtrace"
. "$(dirname "$0")/lib.sh"

N=20 M=4 K=1
SPOOLGEN=

# Builds $T/spoolgen: reads lines on stdin and writes a spool file (magic,
# then records as the CUPTI agent writes them):
#   api PID TID CORR START DUR        kernel PID CORR TS DUR NAME
#   memcpy PID CORR TS DUR BYTES      memset PID CORR TS DUR BYTES
#   nvtx PID TID TS DUR NAME          stats PID TS RECORDS DROPPED
#   cut BYTES                         (the file ends BYTES early: a cut record)
#   magic STRING                      (another magic, 8 bytes)
build_spoolgen() {
	cat > "$T/spoolgen.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gtrace_events.h"

static _Alignas(8) unsigned char rec[4096];

static struct gt_hdr *hdr(unsigned type, size_t size, unsigned long long ts, unsigned pid,
			  unsigned tid)
{
	struct gt_hdr *h = (void *)rec;

	memset(rec, 0, sizeof(rec));
	h->ts = ts;
	h->pid = pid;
	h->tid = tid;
	h->type = type;
	h->size = size;
	return h;
}

int main(int argc, char **argv)
{
	char line[1024], word[32], name[256], magic[16] = "GTCUPTI1";
	unsigned long long ts, dur, bytes, a, b;
	unsigned pid, tid, corr;
	long cut = 0, total;
	FILE *f, *buf = tmpfile();
	struct gt_hdr *h = NULL;

	if (argc != 2 || !buf)
		return 2;
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "%31s", word) != 1)
			continue;
		h = NULL;
		if (!strcmp(word, "api") &&
		    sscanf(line, "%*s %u %u %u %llu %llu", &pid, &tid, &corr, &ts, &dur) == 5) {
			struct gt_gpu_api *r = (void *)hdr(GT_REC_GPU_API, sizeof(*r), ts, pid, tid);

			r->dur = dur;
			r->correlation = corr;
			r->cbid = 307;
			h = &r->hdr;
		} else if (!strcmp(word, "kernel") &&
			   sscanf(line, "%*s %u %u %llu %llu %255s", &pid, &corr, &ts, &dur, name) == 5) {
			size_t len = strlen(name) + 1;
			struct gt_gpu_kernel *r = (void *)hdr(GT_REC_GPU_KERNEL,
							      GT_REC_ALIGN(sizeof(*r) + len), ts, pid, 0);
			unsigned d[6];

			r->dur = dur;
			r->correlation = corr;
			r->grid[0] = r->block[0] = 1;
			/* optional dims after the name: gx gy gz bx by bz */
			if (sscanf(line, "%*s %*u %*u %*u %*u %*s %u %u %u %u %u %u", &d[0], &d[1], &d[2],
				   &d[3], &d[4], &d[5]) == 6)
				for (int i = 0; i < 3; i++)
					r->grid[i] = d[i], r->block[i] = d[i + 3];
			r->len = len;
			memcpy(r->name, name, len);
			h = &r->hdr;
		} else if ((!strcmp(word, "memcpy") || !strcmp(word, "memset")) &&
			   sscanf(line, "%*s %u %u %llu %llu %llu", &pid, &corr, &ts, &dur, &bytes) == 5) {
			struct gt_gpu_copy *r = (void *)hdr(word[3] == 'c' ? GT_REC_GPU_MEMCPY :
							    GT_REC_GPU_MEMSET, sizeof(*r), ts, pid, 0);

			r->dur = dur;
			r->bytes = bytes;
			r->correlation = corr;
			h = &r->hdr;
		} else if (!strcmp(word, "nvtx") &&
			   sscanf(line, "%*s %u %u %llu %llu %255s", &pid, &tid, &ts, &dur, name) == 5) {
			size_t len = strlen(name) + 1;
			struct gt_nvtx *r = (void *)hdr(GT_REC_NVTX, GT_REC_ALIGN(sizeof(*r) + len), ts,
							pid, tid);

			r->dur = dur;
			r->len = len;
			memcpy(r->name, name, len);
			h = &r->hdr;
		} else if (!strcmp(word, "stats") &&
			   sscanf(line, "%*s %u %llu %llu %llu", &pid, &ts, &a, &b) == 4) {
			struct gt_cupti_stats *r = (void *)hdr(GT_REC_CUPTI_STATS, sizeof(*r), ts, pid, 0);

			r->records = a;
			r->dropped = b;
			h = &r->hdr;
		} else if (!strcmp(word, "cut") && sscanf(line, "%*s %ld", &cut) == 1) {
			continue;
		} else if (!strcmp(word, "magic") && sscanf(line, "%*s %8s", magic) == 1) {
			continue;
		} else {
			fprintf(stderr, "spoolgen: bad line: %s", line);
			return 2;
		}
		fwrite(h, 1, h->size, buf);
	}
	total = ftell(buf);
	rewind(buf);
	f = fopen(argv[1], "wb");
	if (!f)
		return 1;
	fwrite(magic, 1, 8, f);
	for (long i = 0; i < total - cut; i++)
		fputc(fgetc(buf), f);
	return fclose(f) ? 1 : 0;
}
EOF
	cc -O1 -Wall -Werror -I"$ROOT/bpf" "$T/spoolgen.c" -o "$T/spoolgen" 2> "$T/spoolgen.err" ||
		fatal "cannot build the spool generator: $(head -n 3 "$T/spoolgen.err" | tr '\n' '|')"
	SPOOLGEN=$T/spoolgen
}

# Records `cuda_workload ARGS` with -- CMD into $T/a.gtrace, dumps it into
# $T/a.json; sets WJ and WL_PID.
record_workload() {
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" --trace cuda -o "$T/a.gtrace" -- \
		"$WORKLOAD" "$@" > "$T/cmd.out" 2> "$T/cmd.err"
	RC=$?
	[ "$RC" -eq 0 ] || fatal "gtrace-bpf -- cuda_workload $* exited with status $RC; stderr: $(tail -n 3 "$T/cmd.err" | tr '\n' '|')"
	WJ=$(grep '^{' "$T/cmd.out" | tail -n 1)
	[ -n "$WJ" ] || fatal "the workload printed no JSON line"
	WL_PID=$(jq -r .pid <<< "$WJ")
	dump_trace "$T/a.gtrace" "$T/a.json"
}

# The spool lines for the workload's calls, as the agent would write them:
# for each launch, copy and set an API record inside the call and its GPU
# record after the exit (launches, recorded at entry only, are taken to last
# 4 us), except the last two launches (no GPU record: two
# launches without GPU work) and the first launch, whose kernel starts 500 ns
# before the call (one causality violation); then a kernel without an API
# record and an API + kernel 5 s after every call (two unmatched), an NVTX
# range and the agent's counters.
spool_lines() {
	jq -s -r --argjson pid "$WL_PID" '
	[ .[] | select(.pid == $pid and (.type == "launch" or .type == "memcpy" or .type == "memset")) ]
	| sort_by(.ts) as $c
	| ($c | map(select(.type == "launch"))) as $l
	| ($l[-2:] | map(.ts)) as $skip
	| ($l[0].ts) as $first
	| ($c | map(.ts + (.dur // 4000)) | max) as $tail_ts
	| ($c[-1].tid) as $tid
	| ( $c | to_entries[] | .key as $i | .value as $x
	    | select(($skip | any(. == $x.ts)) | not)
	    | ($i + 1) as $corr
	    # an entry-only launch has no duration: its API record must still
	    # end before the next call of the thread begins (a launch a few us
	    # after it would claim it, and its kernel)
	    | ([$c[$i + 1:][] | select(.tid == $x.tid) | .ts][0] // ($x.ts + 8000)) as $next
	    | ([$x.dur // 4000, $next - $x.ts] | min) as $d
	    | "api \($pid) \($x.tid) \($corr) \($x.ts + ($d / 4 | floor)) \($d / 2 | floor)",
	      (if $x.type == "launch" then
	         "kernel \($pid) \($corr) \(if $x.ts == $first then $x.ts - 500 else $x.ts + $d + 1000 end) 2000 _Z4testv"
	       else "\($x.type) \($pid) \($corr) \($x.ts + 1000) 3000 \($x.bytes)" end) ),
	  "kernel \($pid) 9001 \($tail_ts + 1000) 2000 _Z6orphanv",
	  # a call CUPTI saw on a thread that made no recorded call, inside the
	  # recording (outside it, it would be one the recording could not see)
	  "api \($pid) 4194301 9002 \($first + 100) 1000",
	  "kernel \($pid) 9002 \($first + 5000) 2000 _Z4latev",
	  # a call after the last record of the recording: one it could not see, its
	  # GPU work and API record left out, counted (not unmatched)
	  "api \($pid) \($tid) 9003 \($tail_ts + 5000000000) 1000",
	  "kernel \($pid) 9003 \($tail_ts + 5000000100) 2000 _Z5afterv",
	  "nvtx \($pid) \($tid) \($c[0].ts) 1000000 step",
	  "stats \($pid) \($tail_ts + 5000001000) 100 0"' "$T/a.json"
}

# call_keys DUMP PID: one line per libcuda call of PID, sorted (GPU-side
# lines that dump may print for a merged trace are not calls).
call_keys() {
	jq -r --argjson pid "$2" 'select(.pid == $pid and (.api | type) == "string")
		| "\(.ts) \(.tid) \(.type) \(.api) \(.dur) \(.ret)"' "$1" | sort
}

# one_line LABEL FILE: FILE (stderr of a failed command) holds exactly one line.
one_line() {
	local n
	n=$(wc -l < "$2")
	[ "$n" -eq 1 ] || err "$1: $n lines on stderr, expected one: $(head -n 4 "$2" | tr '\n' '|')"
}

# check_arrows: $T/a_merged.gtrace (launches recorded at entry only, the
# default) exported to Perfetto and JSON has one arrow per linked GPU record
# in each: the 24 of the summary, counted in the exports themselves (flow
# ids on Perfetto slices; 's' and 'f' events), then by tools/gpu/arrows_check.py
# as tools/gpu-check.sh runs it on a PyTorch recording.
check_arrows() {
	local linked entry pf js_s js_f line
	linked=$(jq -s '[.[] | select((.type | IN("gpu_kernel", "gpu_memcpy", "gpu_memset")) and .launch_ts != null)] | length' "$T/b.json")
	entry=$(jq -s --argjson pid "$WL_PID" '[.[] | select(.pid == $pid and .type == "launch" and .dur == null)] | length' "$T/b.json")
	[ "$linked" -eq 24 ] || err "$linked linked GPU records in the merged dump, expected 24"
	[ "$entry" -eq $N ] || err "$entry launches recorded at entry only, expected $N (the default)"
	"$GTRACE" export "$T/a_merged.gtrace" -f perfetto -o "$T/m.pftrace" 2> "$T/xp.err" ||
		fatal "export -f perfetto of the merged trace failed: $(head -n 3 "$T/xp.err" | tr '\n' '|')"
	"$GTRACE" export "$T/a_merged.gtrace" -f json -o "$T/m.tjson" 2> "$T/xj.err" ||
		fatal "export -f json of the merged trace failed: $(head -n 3 "$T/xj.err" | tr '\n' '|')"
	pf=$(python3 "$ROOT/tools/perfetto_lint.py" --json "$T/m.pftrace" 2> "$T/lint.err" | jq '.flows') ||
		fatal "perfetto_lint rejects the merged trace's export: $(head -n 3 "$T/lint.err" | tr '\n' '|')"
	js_s=$(jq '[.traceEvents[] | select(.cat == "flow" and .ph == "s")] | length' "$T/m.tjson")
	js_f=$(jq '[.traceEvents[] | select(.cat == "flow" and .ph == "f")] | length' "$T/m.tjson")
	[ "$pf" = "$linked" ] && [ "$js_s" = "$linked" ] && [ "$js_f" = "$linked" ] ||
		err "arrows: $linked linked GPU records, $pf Perfetto flows, $js_s JSON 's' and $js_f 'f' events; expected one arrow per linked record in each"
	line=$(python3 "$ROOT/tools/gpu/arrows_check.py" "$T/b.json" "$T/m.pftrace" "$T/m.tjson")
	[ "$line" = "PASS timeline arrows: 24 linked GPU records (18 kernels), 24 Perfetto flows (at most 2 events each), 24 JSON flows (24 's', 24 'f')" ] ||
		err "tools/gpu/arrows_check.py: $line"
}

t_merge() {
	local want got n_launch n_copy n_set
	build_spoolgen
	record_workload --launches $N --copies $M --syncs $K
	n_launch=$(jq -s --argjson pid "$WL_PID" '[.[] | select(.pid == $pid and .type == "launch")] | length' "$T/a.json")
	n_copy=$(jq -s --argjson pid "$WL_PID" '[.[] | select(.pid == $pid and .type == "memcpy")] | length' "$T/a.json")
	n_set=$(jq -s --argjson pid "$WL_PID" '[.[] | select(.pid == $pid and .type == "memset")] | length' "$T/a.json")
	[ "$n_launch" -eq $N ] && [ "$n_copy" -eq $((M + 1)) ] && [ "$n_set" -eq 1 ] ||
		fatal "the recording has $n_launch launches, $n_copy copies, $n_set sets; expected $N, $((M + 1)), 1"
	mkdir -m 0700 "$T/spool"
	spool_lines > "$T/spool.txt" || fatal "jq failed on $T/a.json"
	"$SPOOLGEN" "$T/spool/gtrace-cupti.$WL_PID.spool" < "$T/spool.txt" || fatal "spoolgen failed"
	: > "$T/spool/notes.txt"	# not a spool: ignored

	# a directory as SPOOL, the default output name
	"$GTRACE" merge "$T/a.gtrace" "$T/spool" > "$T/m.out" 2> "$T/m.err"
	RC=$?
	[ "$RC" -eq 0 ] || fatal "gtrace-bpf merge exited with $RC: $(tr '\n' '|' < "$T/m.err")"
	[ -f "$T/a_merged.gtrace" ] || fatal "no a_merged.gtrace after gtrace-bpf merge"
	[ ! -s "$T/m.out" ] || err "gtrace-bpf merge printed on stdout: $(head -c 200 "$T/m.out")"
	# 18 kernels, 5 copies, 1 set linked; the orphan and the late kernel not
	want="gtrace-bpf: merged 26 GPU records from 1 processes: 24 linked (92.3 %), 2 unmatched, 1 causality violations, 2 launches without GPU work, 1 without an API record, 2 GPU-side records of calls before or after the recording left out"
	got=$(cat "$T/m.err")
	[ "$got" = "$want" ] || err "merge summary:
  got      $got
  expected $want"
	[ "$(stat -c %a "$T/a_merged.gtrace")" = 600 ] || err "a_merged.gtrace has mode $(stat -c %a "$T/a_merged.gtrace"), expected 600"

	# every call of the recording is still there, unchanged
	dump_trace "$T/a_merged.gtrace" "$T/b.json"
	call_keys "$T/a.json" "$WL_PID" > "$T/a.keys"
	call_keys "$T/b.json" "$WL_PID" > "$T/b.keys"
	[ -s "$T/a.keys" ] || fatal "no calls of pid $WL_PID in the recording"
	cmp -s "$T/a.keys" "$T/b.keys" || err "the merged trace's calls differ from the recording's:
$(diff "$T/a.keys" "$T/b.keys" | head -n 10)"
	check_arrows
	"$GTRACE" dump --summary "$T/a_merged.gtrace" > "$T/sum.out" 2>&1 ||
		err "dump --summary of the merged trace failed: $(head -n 3 "$T/sum.out" | tr '\n' '|')"
	grep -q 'cupti=merged' "$T/sum.out" || err "the merged trace's options do not say cupti=merged"

	# the output exists: refused without --force, one line, exit 1
	"$GTRACE" merge "$T/a.gtrace" "$T/spool" > /dev/null 2> "$T/e1.err"
	RC=$?
	[ "$RC" -eq 1 ] || err "merge onto an existing output: exit $RC, expected 1"
	one_line "merge onto an existing output" "$T/e1.err"
	grep -q 'exists' "$T/e1.err" || err "merge onto an existing output: $(cat "$T/e1.err")"
	"$GTRACE" merge "$T/a.gtrace" "$T/spool" -o "$T/a_merged.gtrace" --force 2> "$T/e2.err" ||
		err "merge --force failed: $(cat "$T/e2.err")"
	# a merged trace is not merged again
	"$GTRACE" merge "$T/a_merged.gtrace" "$T/spool" -o "$T/twice.gtrace" 2> "$T/e3.err"
	RC=$?
	[ "$RC" -eq 1 ] && [ ! -e "$T/twice.gtrace" ] || err "merging a merged trace: exit $RC (expected 1), output left: $(ls "$T/twice.gtrace" 2>&1)"
	one_line "merging a merged trace" "$T/e3.err"
}

# A spool without API records (GTRACE_CUPTI_API=none): the merger links by
# launch order. Kernels start 5 us after their launch's entry, copies and
# sets 1 us after theirs, in call order with rising correlation ids, kernels
# with their launch's dims; the second launch (scale) and the last made no
# kernel: the third's dims (fill, Ex) keep its kernel off the second. Every
# GPU record must name the call it was made for.
t_merge_order() {
	local got bad n
	build_spoolgen
	record_workload --launches $N --copies $M --syncs $K
	jq -s -r --argjson pid "$WL_PID" '
	([ .[] | select(.pid == $pid) | .ts + (.dur // 0) ] | max) as $last
	| [ .[] | select(.pid == $pid and (.type == "launch" or .type == "memcpy" or .type == "memset")) ]
	| sort_by(.ts) as $c
	| ([ $c[] | select(.type == "launch") ] | [.[1], .[-1]] | map(.ts)) as $skip
	| ( $c | to_entries[] | .key as $i | .value as $x
	    | select(($skip | any(. == $x.ts)) | not)
	    | if $x.type == "launch" then "kernel \($pid) \($i + 1) \($x.ts + 5000) 2000 _Z4testv \($x.grid | join(" ")) \($x.block | join(" "))"
	      else "\($x.type) \($pid) \($i + 1) \($x.ts + 1000) 3000 \($x.bytes)" end ),
	  # after every recorded call in correlation order, of dims no launch
	  # had: one that ran before the last call (its call lost: unmatched),
	  # one 1 ms after the process ended (before the recording did) and one
	  # 5 s after the end (calls made after the probes saw the last one,
	  # which the agent recorded a little longer: left out, counted)
	  "kernel \($pid) 90000 \($c[-1].ts - 1000) 2000 _Z4lostv 7 7 7 3 3 3",
	  "kernel \($pid) 90001 \($last + 1000000) 2000 _Z5afterv 7 7 7 3 3 3",
	  "kernel \($pid) 90002 \($c[-1].ts + 5000000000) 2000 _Z5afterv 7 7 7 3 3 3",
	  "stats \($pid) \($c[-1].ts + 5000000) 100 0"' "$T/a.json" > "$T/order.txt" || fatal "jq failed on $T/a.json"
	n=$(grep -c '^\(kernel\|memcpy\|memset\) ' "$T/order.txt")
	n=$((n - 3))
	"$SPOOLGEN" "$T/order.spool" < "$T/order.txt" || fatal "spoolgen failed"
	"$GTRACE" merge "$T/a.gtrace" "$T/order.spool" -o "$T/o.gtrace" > /dev/null 2> "$T/o.err"
	RC=$?
	[ "$RC" -eq 0 ] || fatal "merge of a spool without API records exited with $RC: $(tr '\n' '|' < "$T/o.err")"
	got=$(cat "$T/o.err")
	case $got in
	"gtrace-bpf: merged $((n + 1)) GPU records from 1 processes: $n linked ("*" %), 1 unmatched, 0 causality violations, "*", $n of the links by launch order, 2 GPU-side records of calls before or after the recording left out") ;;
	*) err "merge by launch order: $got (expected all $n linked by launch order, the lost call's kernel unmatched, the two late ones left out)" ;;
	esac
	dump_trace "$T/o.gtrace" "$T/o.json"
	bad=$(jq -r 'select(.type == "gpu_kernel" or .type == "gpu_memcpy" or .type == "gpu_memset")
		| select(.mangled != "_Z4lostv")
		| select(.by_order != true or .launch_ts != .ts - (if .type == "gpu_kernel" then 5000 else 1000 end))
		| "\(.type) ts=\(.ts) correlation=\(.correlation) launch_ts=\(.launch_ts) by_order=\(.by_order)"' "$T/o.json" | head -n 5)
	[ -z "$bad" ] || err "GPU records linked to another call than their own:
$bad"
	got=$(jq -s '[.[] | select(.type == "gpu_kernel" or .type == "gpu_memcpy" or .type == "gpu_memset")] | length' "$T/o.json")
	[ "$got" -eq "$((n + 1))" ] || err "$got GPU records in the merged dump, expected $((n + 1)) (the lost call's unlinked)"
	jq -e -s '[.[] | select(.type == "gpu_kernel" and (.mangled == "_Z5afterv" or (.mangled == "_Z4lostv" and .launch_ts == null)))] | map(.mangled) == ["_Z4lostv"]' "$T/o.json" > /dev/null ||
		err "not the lost call's kernel alone unlinked, the late one left out: $(jq -c 'select(.type == "gpu_kernel" and .launch_ts == null)' "$T/o.json" | head -n 3)"
}

# A spool without API records whose GPU clock drifts from the host's by
# -20 ppm (20 us behind after 1 s: as CUPTI's timestamps of a process the
# agent was attached to late): each kernel starts 5 + (i % 4) us after its
# launch on the host's clock. Every kernel linked to its own launch, none
# before it, moved back to within 1 us of its true start and flagged
# clock_fixed, the drift said on the summary line.
t_merge_drift() {
	local got bad n p1 p2
	build_spoolgen
	record_workload --flood 1 --rate 400
	jq -s -r --argjson pid "$WL_PID" '
	[ .[] | select(.pid == $pid and .type == "launch") ] | sort_by(.ts) as $c
	| ($c[0].ts) as $t0
	| ( $c | to_entries[] | .key as $i | .value as $x
	    | "kernel \($pid) \($i + 1) \($x.ts + 5000 + ($i % 4) * 1000 - (($x.ts - $t0) * 0.00002 | floor)) 2000 _Z4testv \($x.grid | join(" ")) \($x.block | join(" "))" ),
	  "stats \($pid) \($c[-1].ts + 5000000) 100 0"' "$T/a.json" > "$T/drift.txt" || fatal "jq failed on $T/a.json"
	n=$(grep -c '^kernel ' "$T/drift.txt")
	[ "$n" -ge 300 ] || fatal "the workload made $n launches in 1 s at 400/s, expected 300 or more"
	"$SPOOLGEN" "$T/drift.spool" < "$T/drift.txt" || fatal "spoolgen failed"
	"$GTRACE" merge "$T/a.gtrace" "$T/drift.spool" -o "$T/d.gtrace" > /dev/null 2> "$T/d.err"
	RC=$?
	[ "$RC" -eq 0 ] || fatal "merge exited with $RC: $(tr '\n' '|' < "$T/d.err")"
	got=$(cat "$T/d.err")
	# the drift as planted, -20 us a second (to the line's second decimal)
	p1="gtrace-bpf: merged $n GPU records from 1 processes: $n linked (100.0 %), 0 unmatched, 0 causality violations, "
	p2=" launches without GPU work, $n of the links by launch order; the GPU clock drifted from the host's in 1 process, its records moved back onto the host's (estimated from the kernels that started right after their launch): pid $WL_PID's by "
	case $got in
	"$p1"*"$p2"-19.9?" us a second, moved +"*" us at most" | "$p1"*"$p2"-20.0?" us a second, moved +"*" us at most") ;;
	*) err "merge of a drifting GPU clock: $got" ;;
	esac
	dump_trace "$T/d.gtrace" "$T/d.json"
	bad=$(jq -s -r '[.[] | select(.type == "launch")] | sort_by(.ts) | to_entries | map({key: (.key + 1 | tostring), value: .value.ts}) | from_entries as $e
		| .[] | select(.type == "gpu_kernel")
		| ($e[.correlation | tostring]) as $entry
		| ($entry + 5000 + ((.correlation - 1) % 4) * 1000) as $truth
		| select(.launch_ts != $entry or .clock_fixed != true or ((.ts - $truth) | fabs) > 1000)
		| "correlation \(.correlation): ts \(.ts) launch_ts \(.launch_ts) (its launch \($entry), true start \($truth)) clock_fixed \(.clock_fixed)"' "$T/d.json" | head -n 5)
	[ -z "$bad" ] || err "kernels not on their own launch, not moved back or not flagged:
$bad"
}

t_merge_damaged() {
	local got
	build_spoolgen
	record_workload --launches $N --copies $M --syncs $K
	spool_lines > "$T/spool.txt" || fatal "jq failed on $T/a.json"
	# the process died while writing one more kernel: its record is cut
	{ cat "$T/spool.txt"; echo "kernel $WL_PID 9002 1 2000 _Z4lostv"; echo "cut 12"; } |
		"$SPOOLGEN" "$T/cut.spool" || fatal "spoolgen failed"
	"$GTRACE" merge "$T/a.gtrace" "$T/cut.spool" -o "$T/cut.gtrace" > /dev/null 2> "$T/c.err"
	RC=$?
	# the readers' rule: what was read is merged, a damaged input exits 1
	[ "$RC" -eq 1 ] || err "merge of a cut spool exited with $RC, expected 1: $(tr '\n' '|' < "$T/c.err")"
	[ -s "$T/cut.gtrace" ] || fatal "merge of a cut spool wrote no trace"
	grep -q "^gtrace-bpf: warning: $T/cut.spool: the last record is cut short" "$T/c.err" ||
		err "no warning about the cut record: $(tr '\n' '|' < "$T/c.err")"
	got=$(grep -c . "$T/c.err")
	[ "$got" -eq 2 ] || err "merge of a cut spool: $got lines on stderr, expected the warning and the summary"
	grep -q '^gtrace-bpf: merged 26 GPU records from 1 processes: 24 linked' "$T/c.err" ||
		err "merge of a cut spool: $(tail -n 1 "$T/c.err")"

	# bad input: one line, exit 1, no output
	echo "api 1 1 1 1 1" | { echo "magic GTCUPTIX"; cat; } | "$SPOOLGEN" "$T/bad.spool"
	"$GTRACE" merge "$T/a.gtrace" "$T/bad.spool" -o "$T/bad.gtrace" > /dev/null 2> "$T/b.err"
	RC=$?
	[ "$RC" -eq 1 ] || err "merge of a spool with a bad magic: exit $RC, expected 1"
	one_line "merge of a spool with a bad magic" "$T/b.err"
	grep -q 'not a CUPTI spool file' "$T/b.err" || err "bad magic: $(cat "$T/b.err")"
	[ ! -e "$T/bad.gtrace" ] || err "merge of a bad spool left $T/bad.gtrace"
	"$GTRACE" merge "$T/cut.spool" "$T/cut.spool" -o "$T/bad2.gtrace" > /dev/null 2> "$T/b2.err"
	RC=$?
	[ "$RC" -eq 1 ] && [ ! -e "$T/bad2.gtrace" ] || err "a spool given as the trace: exit $RC, expected 1 and no output"
	one_line "a spool given as the trace" "$T/b2.err"
	"$GTRACE" merge "$T/a.gtrace" "$T/nope.spool" -o "$T/bad3.gtrace" > /dev/null 2> "$T/b3.err"
	RC=$?
	[ "$RC" -eq 1 ] && [ ! -e "$T/bad3.gtrace" ] || err "a missing spool: exit $RC, expected 1 and no output"
	one_line "a missing spool" "$T/b3.err"
	"$GTRACE" merge "$T/a.gtrace" > /dev/null 2>&1
	RC=$?
	[ "$RC" -eq 2 ] || err "merge without a spool: exit $RC, expected 2"
	[ -z "$(find "$T" -name '.*.merge.*')" ] || err "temporary files left: $(find "$T" -name '.*.merge.*')"
}


# Spool files that a traced program could plant: a FIFO (must not block the
# merge), links (not followed), another user's file. Each is left out with a
# warning and counted; the merge is that of the genuine spool alone.
t_merge_hostile_spools() {
	local rc want got
	build_spoolgen
	record_workload --launches 4 --syncs 1
	mkdir -m 0700 "$T/spool" "$T/elsewhere"
	spool_lines > "$T/spool.txt" || fatal "jq failed on $T/a.json"
	"$SPOOLGEN" "$T/spool/gtrace-cupti.$WL_PID.spool" < "$T/spool.txt" || fatal "spoolgen failed"
	"$GTRACE" merge "$T/a.gtrace" "$T/spool" -o "$T/good.gtrace" > /dev/null 2> "$T/good.err" ||
		fatal "merge of the genuine spool: $(cat "$T/good.err")"
	want="$(cat "$T/good.err"), 4 spool files left out"
	"$SPOOLGEN" "$T/elsewhere/gtrace-cupti.$WL_PID.spool" < "$T/spool.txt" || fatal "spoolgen failed"
	mkfifo "$T/spool/gtrace-cupti.2.spool"
	ln -s "$T/elsewhere/gtrace-cupti.$WL_PID.spool" "$T/spool/gtrace-cupti.3.spool"
	ln -s /etc/passwd "$T/spool/gtrace-cupti.4.spool"
	cp "$T/elsewhere/gtrace-cupti.$WL_PID.spool" "$T/spool/gtrace-cupti.5.spool"
	chown 65534 "$T/spool/gtrace-cupti.5.spool" || fatal "cannot chown to 65534"
	timeout 20 "$GTRACE" merge "$T/a.gtrace" "$T/spool" -o "$T/m.gtrace" > /dev/null 2> "$T/m.err"
	rc=$?
	[ $rc -ne 124 ] || fatal "merge of a directory with a FIFO: still running after 20 s"
	[ $rc -eq 0 ] || err "merge with planted spool files: status $rc: $(tr '\n' '|' < "$T/m.err")"
	[ "$(grep -c 'left out: it is not a regular file$' "$T/m.err")" -eq 1 ] ||
		err "no warning for the FIFO: $(tr '\n' '|' < "$T/m.err")"
	[ "$(grep -c 'left out: it is a symbolic link$' "$T/m.err")" -eq 2 ] ||
		err "not two warnings for the links: $(tr '\n' '|' < "$T/m.err")"
	[ "$(grep -c 'left out: it is owned by another user$' "$T/m.err")" -eq 1 ] ||
		err "no warning for the other user's file: $(tr '\n' '|' < "$T/m.err")"
	got=$(grep '^gtrace-bpf: merged' "$T/m.err")
	[ "$got" = "$want" ] || err "merge summary with planted spool files:
  got      $got
  expected $want"
	# named on the command line, a link is not followed either
	timeout 20 "$GTRACE" merge "$T/a.gtrace" "$T/spool/gtrace-cupti.3.spool" -o "$T/l.gtrace" > /dev/null 2> "$T/l.err"
	rc=$?
	[ $rc -eq 0 ] && grep -q 'left out: it is a symbolic link$' "$T/l.err" ||
		err "merge of a link named as SPOOL: status $rc: $(tr '\n' '|' < "$T/l.err")"
}

# A trace recorded with -c: the agent saw the whole process, the recorder
# its range only. The merge keeps the GPU records linked to recorded calls
# and the GPU-side records meeting the range, leaves the others out and
# says how many.
t_merge_ranges() {
	local open close got want
	build_spoolgen
	GT_LIBCUDA=$MOCK_LIB "$GTRACE" --libcuda "$MOCK_LIB" --trace cuda -c cudaProfilerApi -o "$T/a.gtrace" -- \
		"$WORKLOAD" --launches 12 --ranges 1 --gap 50 > "$T/cmd.out" 2> "$T/cmd.err" ||
		fatal "recording with -c failed: $(tail -n 3 "$T/cmd.err" | tr '\n' '|')"
	WL_PID=$(grep '^{' "$T/cmd.out" | tail -n 1 | jq .pid)
	dump_trace "$T/a.gtrace" "$T/a.json"
	open=$(jq -s '[.[] | select(.type == "capture" and .kind == "range_open")][0].ts' "$T/a.json")
	close=$(jq -s '[.[] | select(.type == "capture" and .kind == "range_close")][0].ts' "$T/a.json")
	want=$(jq -s '[.[] | select(.type == "launch")] | length' "$T/a.json")
	[ "$want" -eq 4 ] || fatal "$want launches in the range, expected 4 of 12"
	{
		# the range's launches, each with its API record and kernel
		jq -s -r --argjson pid "$WL_PID" '[.[] | select(.type == "launch")] | to_entries[]
			| "api \($pid) \(.value.tid) \(.key + 1) \(.value.ts + 500) 1000",
			  "kernel \($pid) \(.key + 1) \(.value.ts + 5000) 2000 _Z4testv"' "$T/a.json"
		# before and after it: launches the recorder did not see
		echo "api $WL_PID $WL_PID 101 $((open - 30000000)) 1000"
		echo "kernel $WL_PID 101 $((open - 29000000)) 2000 _Z6beforev"
		echo "api $WL_PID $WL_PID 102 $((close + 30000000)) 1000"
		echo "kernel $WL_PID 102 $((close + 31000000)) 2000 _Z5afterv"
		# NVTX: one across the range's start, one long before it
		echo "nvtx $WL_PID $WL_PID $((open - 1000)) 2000000 across"
		echo "nvtx $WL_PID $WL_PID $((open - 40000000)) 1000 outside"
	} > "$T/spool.txt"
	"$SPOOLGEN" "$T/r.spool" < "$T/spool.txt" || fatal "spoolgen failed"
	"$GTRACE" merge "$T/a.gtrace" "$T/r.spool" -o "$T/m.gtrace" > /dev/null 2> "$T/m.err" ||
		fatal "merge exited $?: $(tr '\n' '|' < "$T/m.err")"
	want="gtrace-bpf: merged 4 GPU records from 1 processes: 4 linked (100.0 %), 0 unmatched, 0 causality violations, 0 launches without GPU work, 5 GPU-side records outside the capture ranges left out"
	got=$(cat "$T/m.err")
	[ "$got" = "$want" ] || err "merge summary:
  got      $got
  expected $want"
	dump_trace "$T/m.gtrace" "$T/b.json"
	got=$(jq -s -c '[.[] | select(.type == "gpu_kernel") | .mangled // .kernel] | unique' "$T/b.json")
	[ "$got" = '["_Z4testv"]' ] || [ "$got" = '["test()"]' ] || err "GPU kernels kept: $got, expected only the range's"
	got=$(jq -s -c '[.[] | select(.type == "nvtx") | .name] ' "$T/b.json")
	[ "$got" = '["across"]' ] || err "NVTX kept: $got, expected the one across the range's start"
}

add_case t_merge_ranges "merge of a -c trace: GPU-side records outside the process' ranges left out and counted"
add_case t_merge "merge TRACE DIR: exact summary for a synthetic spool of a real recording, every call kept, refusals"
add_case t_merge_order "merge: a spool without API records is linked by launch order, every record to its own call; a late call's work left out, counted"
add_case t_merge_drift "merge: a GPU clock 20 ppm behind the host's, linked by order: every kernel on its own launch, none before it, moved back within 1 us, flagged, the drift said"
add_case t_merge_damaged "merge: a cut-off spool merges with one warning and exit 1; bad inputs: one line, exit 1, no output"
add_case t_merge_hostile_spools "merge: a FIFO, links and another user's file among the spools: left out, counted, no hang"
run_cases "$@"
