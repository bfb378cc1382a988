# SPDX-License-Identifier: MIT
#
# NVTX capture ranges (GTRACE_NVTX_CAPTURE, cupti/nvtx_capture.h): the cases
# run.sh runs when GTRACE_CUPTI_CHECK=nvtx (sourced by it: agent, driver,
# tmp, ok, bad, state).  The driver makes NVTX calls through the mock's
# CUPTI NVTX callbacks and, after each, prints how often the agent's
# gtrace_capture_open and gtrace_capture_close have run so far, counted by
# uprobes on those exported symbols of the agent file: what the recorder
# sees.  Needs root (uprobes).

# calls NAME [VAR=VALUE...] -- LETTERS [STEP=OPENS/CLOSES...]: the driver
# with GTRACE_CUPTI_DIR=$tmp/NAME, the letters, then the NVTX steps
# (agent_driver.c); $seq: "STEP=OPENS/CLOSES ..." as counted after each
# step, $want: as written; $child: the same for the fork/ steps' children.
calls() {
	local name=$1 envs=() steps=() s letters
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	letters=$1
	shift
	for s in "$@"; do steps+=("${s%=*}"); done
	want="$*"
	dir=$tmp/$name
	mkdir -p "$dir"
	out=$tmp/$name.out err=$tmp/$name.err
	env GTRACE_CUPTI_DIR="$dir" "${envs[@]}" "$driver" "$agent" "$letters" "${steps[@]}" > "$out" 2> "$err"
	rc=$?
	seq=$(sed -n 's/^\([^ ]*\) open=\([0-9]*\) close=\([0-9]*\)$/\1=\2\/\3/p' "$out" | tr '\n' ' ')
	seq=${seq% }
	child=$(sed -n 's/^child \([^ ]*\) open=\([0-9]*\) close=\([0-9]*\)$/\1=\2\/\3/p' "$out" | tr '\n' ' ')
	child=${child% }
	spool=$(ls "$dir"/gtrace-cupti.*.spool 2>/dev/null | head -n 1)
}

# expect_calls CASE [MESSAGE]: the counts as written; stderr empty, or
# (MESSAGE) exactly one line, holding MESSAGE.
expect_calls() {
	if [ $rc -ne 0 ]; then
		bad "$1" "exit status $rc: $(tail -n 3 "$err" | tr '\n' ' ')"
	elif [ "$seq" != "$want" ]; then
		bad "$1" "after each step (STEP=opens/closes): $seq; expected $want"
	elif [ $# -eq 1 ] && [ -s "$err" ]; then
		bad "$1" "stderr: $(tr '\n' ' ' < "$err")"
	elif [ $# -eq 2 ] && { [ "$(wc -l < "$err")" -ne 1 ] || ! grep -qF -- "$2" "$err"; }; then
		bad "$1" "stderr, expected one line with \"$2\": $(tr '\n' ' ' < "$err")"
	else
		ok "$1"
		return 0
	fi
	return 1
}

if readelf --dyn-syms -W "$agent" | awk '$8 ~ /^gtrace_capture_(open|close)$/ && $4 == "FUNC" &&
		$5 == "GLOBAL" && $6 == "DEFAULT" && $7 != "UND" { a[$8] = $2 }
		END { exit !(length(a) == 2 && a["gtrace_capture_open"] != a["gtrace_capture_close"]) }'; then
	ok "exports gtrace_capture_open and gtrace_capture_close: functions, default visibility, two addresses"
else
	bad "exported capture functions" "$(readelf --dyn-syms -W "$agent" | grep gtrace_capture | tr '\n' ' ')"
fi

calls nest GTRACE_NVTX_CAPTURE=capture -- in push:other=0/0 push:capture=1/0 push:inner=1/0 \
	push:capture=1/0 pop=1/0 pop=1/0 pop=1/1 pop=1/1 push:capture=2/1 pop=2/2
expect_calls "push/pop: opens at the outer matching push, closes at its pop, nested ones add nothing"

calls messages GTRACE_NVTX_CAPTURE=capture -- in pushw:capture=1/0 pop=1/1 pushex:capture=2/1 pop=2/2 \
	pushexw:capture=3/2 pop=3/3 reg:-:capture=3/3 pushreg:capture=4/3 pop=4/4 reg:-:other=4/4 \
	pushreg:other=4/4 pop=4/4 dpush:-:capture=5/4 dpop:-=5/5 dstart:-:capture=6/5 dend:-:1=6/6
expect_calls "messages: wide, in attributes (ASCII, Unicode), registered; domain calls with the default domain's NULL handle"

calls miss GTRACE_NVTX_CAPTURE=capture -- in push:captur=0/0 pop=0/0 push:captures=0/0 pop=0/0 \
	push:Capture=0/0 pop=0/0 pushw:capturE=0/0 pop=0/0 start:capturex=0/0 end:1=0/0 pushex:=0/0 pop=0/0
expect_calls "names that differ by a letter, case or length do not match"

calls threads GTRACE_NVTX_CAPTURE=capture -- in push:capture=1/0 2/push:capture=1/0 pop=1/0 2/pop=1/1 \
	2/push:capture=2/1 2/push:x=2/1 push:capture=2/1 2/pop=2/1 2/pop=2/1 2/pop=2/1 pop=2/2
expect_calls "two threads: open while either has its matching push open; a pop with no push seen changes nothing"

calls startend GTRACE_NVTX_CAPTURE=capture -- in start:capture=1/0 2/start:capture=1/0 start:other=1/0 \
	end:3=1/0 2/end:1=1/0 end:1=1/0 end:2=1/1 startw:capture=2/1 end:4=2/2 startex:capture=3/2 end:5=3/3
expect_calls "start/end: by range id, ended from any thread, other and repeated ends ignored"

calls mixed GTRACE_NVTX_CAPTURE=capture -- in push:capture=1/0 start:capture=1/0 pop=1/0 end:1=1/1
expect_calls "a push range and a start range: open until both ended"

calls domain GTRACE_NVTX_CAPTURE=capture@mydom -- in push:capture=0/0 pop=0/0 dom:other=0/0 \
	dpush:other:capture=0/0 dpop:other=0/0 dom:mydom=0/0 dpush:mydom:capture=1/0 push:x=1/0 pop=1/0 \
	dpop:other=1/0 dpush:mydom:inner=1/0 dpop:mydom=1/0 dpop:mydom=1/1 reg:mydom:capture=1/1 \
	dpushreg:mydom:capture=2/1 dpop:mydom=2/2 reg:other:capture=2/2 dpushreg:other:capture=2/2 \
	dpop:other=2/2 dpushw:mydom:capture=3/2 dpop:mydom=3/3 dstart:mydom:capture=4/3 \
	dstart:other:capture=4/3 dend:mydom:1=4/4 undom:mydom=4/4 dpush:mydom:capture=4/4 dpop:mydom=4/4
expect_calls "NAME@DOMAIN: only that domain's ranges, its own push depth, registered strings; none after nvtxDomainDestroy"

calls wdomain GTRACE_NVTX_CAPTURE=capture@wdom -- in domw:wdom=0/0 dpush:wdom:capture=1/0 dpop:wdom=1/1 \
	regw:wdom:capture=1/1 dpushreg:wdom:capture=2/1 dpop:wdom=2/2
expect_calls "NAME@DOMAIN: a domain and a string registered by wide name"

calls default GTRACE_NVTX_CAPTURE=capture -- in dom:mydom=0/0 dpush:mydom:capture=0/0 dpop:mydom=0/0 \
	push:capture=1/0 dpush:mydom:x=1/0 dpop:mydom=1/0 pop=1/1
expect_calls "NAME alone: the default domain only; a named domain's pops leave its depth alone"

calls escape 'GTRACE_NVTX_CAPTURE=a\@b@d\@x' -- in 'dom:d@x=0/0' 'dpush:d@x:a@b=1/0' 'dpop:d@x=1/1' \
	'dpush:d@x:a\@b=1/1' 'dpop:d@x=1/1'
expect_calls 'NAME@DOMAIN with "\@": a literal @ in both'

calls utf8 'GTRACE_NVTX_CAPTURE=café\x' -- in 'pushw:café\x=1/0' 'pop=1/1' 'push:café\x=2/1' 'pop=2/2' \
	'pushexw:café\x=3/2' 'pop=3/3'
expect_calls "a UTF-8 NAME with a backslash: matches narrow and wide messages"

calls fork GTRACE_NVTX_CAPTURE=capture -- in push:capture=1/0 fork/pop=1/0 fork/push:capture=1/0 pop=1/1
if expect_calls "fork: the child's ranges leave the parent's count alone"; then
	[ "$child" = "pop=0/0 push:capture=1/0" ] &&
		ok "fork: the child starts with no range open, its own matching push opens" ||
		bad "fork: the child's calls" "$child; expected pop=0/0 push:capture=1/0"
fi

calls early GTRACE_NVTX_CAPTURE=capture -- n push:capture=1/0 q=1/0 cuinit=1/0 pop=1/1
expect_calls "NVTX before cuInit: recording starts at NVTX's initialization, the first range counts" &&
	{ [ "$(state subscribes)" = 1 ] && [ -n "$spool" ] && ok "NVTX before cuInit: one subscription, a spool file" ||
		bad "NVTX before cuInit" "subscribes=$(state subscribes) spool=$spool"; }

calls unset -- in push:capture=0/0 pop=0/0 q=0/0
expect_calls "unset: no capture calls" && { [ "$(state nvtx_cbs)" = 0 ] && [ "$(state nvtx_calls)" = 0 ] &&
	ok "unset: no NVTX callback enabled, none made" ||
	bad "unset: NVTX callbacks" "$(grep nvtx_cbs "$out")"; }
calls empty GTRACE_NVTX_CAPTURE= -- n q=0/0
expect_calls "empty: as unset" && { [ "$(state subscribes)" = 0 ] && [ "$(state nvtx_cbs)" = 0 ] &&
	ok "empty, NVTX initialized before cuInit: the agent does not start there" ||
	bad "empty: CUPTI calls" "$(grep nvtx_cbs "$out")"; }

for spec in '@dom' 'a@' 'a@*' 'a@b@c'; do
	calls bad GTRACE_NVTX_CAPTURE="$spec" -- in push:a=0/0 q=0/0
	expect_calls "GTRACE_NVTX_CAPTURE='$spec': said once, no callbacks" "GTRACE_NVTX_CAPTURE='$spec': " &&
		{ [ "$(state nvtx_cbs)" = 0 ] && [ -n "$spool" ] &&
			ok "GTRACE_NVTX_CAPTURE='$spec': the recording goes on without capture ranges" ||
			bad "GTRACE_NVTX_CAPTURE='$spec'" "nvtx_cbs=$(state nvtx_cbs) spool=$spool"; }
	rm -rf "$tmp/bad"
done

calls refused GTRACE_NVTX_CAPTURE=capture MOCK_FAIL_NVTX_CBID=11 -- in push:capture=0/0 pop=0/0 q=0/0
expect_calls "NVTX callbacks refused: said once, none left enabled" "failed to watch NVTX ranges" &&
	{ [ "$(state nvtx_cbs)" = 0 ] && ok "NVTX callbacks refused: all disabled again" ||
		bad "NVTX callbacks refused" "nvtx_cbs=$(state nvtx_cbs)"; }

calls noid GTRACE_NVTX_CAPTURE=capture MOCK_NO_RANGE_ID=1 -- in start:capture=0/0 end:1=0/0 \
	start:capture=0/0 push:capture=1/0 pop=1/1
expect_calls "no range id from CUPTI: start/end ranges not followed, said once" "CUPTI gave no range id"

nest=() unnest=()
for i in $(seq 1 33); do nest+=(push:capture=1/0); unnest+=(pop=1/0); done
unnest[32]=pop=1/1
calls deep GTRACE_NVTX_CAPTURE=capture -- in "${nest[@]}" "${unnest[@]}"
expect_calls "33 nested matching pushes: the 33rd not counted, said once; closes at the outermost pop" \
	"too many matching push ranges"

calls conflict GTRACE_NVTX_CAPTURE=capture MOCK_CONFLICT=1 -- in push:capture=0/0
if [ $rc -eq 0 ] && [ "$seq" = "$want" ] && grep -q 'another CUPTI client' "$err" &&
	[ "$(grep -c 'GTRACE_NVTX_CAPTURE is set but GPU-side recording is off: no capture range can open' "$err")" = 1 ]; then
	ok "another CUPTI client: no capture calls, and that is said"
else
	bad "another CUPTI client with GTRACE_NVTX_CAPTURE" "rc=$rc $seq; $(tr '\n' ' ' < "$err")"
fi

calls stopped GTRACE_NVTX_CAPTURE=capture -- inSs push:capture=0/0 q=0/0
expect_calls "after the stop file: no capture calls" &&
	{ [ "$(state nvtx_cbs)" = 0 ] && [ "$(state unsubscribes)" = 1 ] &&
		ok "after the stop file: NVTX callbacks disabled with the subscription" ||
		bad "after the stop file" "$(grep nvtx_cbs "$out")"; }

# no private directory, no run directory
env -u GTRACE_CUPTI_DIR GTRACE_RUN_DIR="$tmp/no-run-dir" GTRACE_NVTX_CAPTURE=capture "$driver" "$agent" n push:capture q \
	> "$tmp/idle.out" 2> "$tmp/idle.err"
if [ $? -eq 0 ] && grep -q '^push:capture open=0 close=0' "$tmp/idle.out" && grep -q 'subscribes=0' "$tmp/idle.out" &&
	grep -q '^nvtx=0' "$tmp/idle.out" && [ ! -s "$tmp/idle.err" ]; then
	ok "no recording wants the process: GTRACE_NVTX_CAPTURE starts nothing, silent"
else
	bad "idle with GTRACE_NVTX_CAPTURE" "$(cat "$tmp/idle.out" "$tmp/idle.err" | tr '\n' ' ')"
fi
