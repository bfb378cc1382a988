#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The man page and the bash completion: the page renders without a warning,
# names every long option of every command's --help in that command's
# section; the completion offers the commands, each command's options (the
# same as --help), report names, formats and file names; `make install`
# puts both where man and bash-completion look, and the binary and the
# systemd unit (which systemd-analyze verifies) with their modes.
REQUIRES="gtrace"
# The sanitized pass leaves this script out: the man page, the completion
# and make install check text and files, no memory the C code handles.
# run-tests: once
# "daemon" only as a word the completion offers
SHARED_CASES="t_completion t_lists"
. "$(dirname "$0")/lib.sh"

MAN_SRC=$ROOT/docs/man/gtrace-bpf.1
COMPLETION=$ROOT/tools/completion/gtrace-bpf.bash
# the commands, from the overview (gtrace-bpf help: main.c's table)
COMMANDS=$("$GTRACE" help | awk '/^  [a-z]+ +[a-z]/ { print $1 }' | tr '\n' ' ')

# The program's lists, each from its one table: the analyze rules (analyze
# --help's RULES), the stats reports and the export formats (the choices an
# unknown one's error line gives).
rules_of() {
	"$GTRACE" analyze --help | awk '/^RULES:/ { on = 1; next } on && /^$/ { exit } on { print $1 }'
}
choices_of() {
	"$@" 2>&1 >/dev/null | sed -n "s/.*unknown [a-z]* 'nosuch' (\(.*\))\$/\1/p" | sed 's/ or /, /' | tr ',' '\n' |
		sed 's/^ *//;/^$/d'
}
reports_of() {
	choices_of "$GTRACE" stats /dev/null -r nosuch
}
formats_of() {
	choices_of "$GTRACE" export /dev/null -f nosuch
}

# help_opts CMD: the long options of `gtrace-bpf CMD --help`, one a line.
help_opts() {
	"$GTRACE" "$1" --help | grep -E '^ +(-[^-], )?--' | sed -E 's/^ +(-[^-], )?(--[a-z][a-z-]*).*/\2/' | sort -u
}

# The page as text, with bold and underline overstrikes removed.
man_text() {
	groff -man -Tascii -P-cbou "$MAN_SRC" 2>/dev/null
}

t_man_renders() {
	local warn
	command -v groff > /dev/null || fatal "needs groff to render the man page (apt-get install groff-base)"
	[ -f "$MAN_SRC" ] || fatal "no man page at docs/man/gtrace-bpf.1"
	warn=$(groff -man -Tutf8 -ww -z "$MAN_SRC" 2>&1)
	[ -z "$warn" ] || err "groff -ww warns about the man page: $(head -n 5 <<< "$warn" | tr '\n' '|')"
	command -v man > /dev/null || fatal "needs man to read the man page (apt-get install man-db)"
	warn=$(MANWIDTH=80 man -l "$MAN_SRC" 2>&1 > /dev/null)
	[ -z "$warn" ] || err "man -l warns about the man page: $(head -n 5 <<< "$warn" | tr '\n' '|')"
	for s in NAME SYNOPSIS DESCRIPTION COMMANDS 'EXIT STATUS' ENVIRONMENT FILES EXAMPLES; do
		man_text | grep -qx "$s" || err "the man page has no section $s"
	done
}

t_man_options() {
	local c o text sect n=0
	command -v groff > /dev/null || fatal "needs groff to render the man page (apt-get install groff-base)"
	text=$(man_text)
	for c in $COMMANDS; do
		# the subsection of c: from "   c" to the next subsection or section
		sect=$(awk -v c="$c" '$0 == "   " c { on = 1; next } on && /^(   )?[A-Za-z]/ && !/^    / { exit } on' <<< "$text")
		[ -n "$sect" ] || { err "the man page has no subsection for '$c'"; continue; }
		for o in $(help_opts "$c"); do
			case $o in --help|--usage|--version) grep -q -- "$o" <<< "$text" || err "the man page never names $o"; continue ;; esac
			n=$((n + 1))
			grep -qE -- "(^|[^a-z-])$o([^a-z-]|\$)" <<< "$sect" ||
				err "gtrace-bpf $c --help has $o, the man page's '$c' section does not"
		done
	done
	[ $n -ge 25 ] || err "only $n options read from the commands' --help: the parsing broke"
}

# comp WORD...: COMPREPLY of the completion function for the command line
# "gtrace-bpf WORD...", the cursor on the last word; one candidate a line.
comp() {
	# shellcheck disable=SC2034 # read by the completion function
	bash -c '. "$1"; shift; COMP_WORDS=(gtrace-bpf "$@"); COMP_CWORD=$#; COMPREPLY=()
		_gtrace_bpf; printf "%s\n" "${COMPREPLY[@]}"' comp "$COMPLETION" "$@" | sed '/^$/d' | sort
}

# want WHAT GOT WANT...: GOT (lines) must be the words WANT.
want() {
	local what=$1 got=$2
	shift 2
	[ "$got" = "$(printf '%s\n' "$@" | sort)" ] || err "completion of $what: got '$(tr '\n' ' ' <<< "$got")', expected '$*'"
}

t_completion() {
	local c
	[ -f "$COMPLETION" ] || fatal "no completion at tools/completion/gtrace-bpf.bash"
	# shellcheck disable=SC2086
	want "the command" "$(comp '')" $COMMANDS
	want "'st'" "$(comp st)" stats status
	# every command's options are those of its --help
	for c in $COMMANDS; do
		want "'$c --'" "$(comp "$c" --)" $(help_opts "$c")
	done
	want "record's options (no command word)" "$(comp --)" $(help_opts record)
	# shellcheck disable=SC2046
	want "stats -r" "$(comp stats a.gtrace -r '')" $(reports_of)
	# shellcheck disable=SC2046
	want "analyze --rules" "$(comp analyze a.gtrace --rules '')" $(rules_of)
	want "record --stats=cuda_api_sum,cuda_m" "$(comp --stats = cuda_api_sum,cuda_m)" cuda_api_sum,cuda_mem_size_sum
	want "stats -r cuda_api_sum,proc" "$(comp stats a.gtrace -r cuda_api_sum,proc)" cuda_api_sum,process_sum
	want "stats --format" "$(comp stats a.gtrace --format '')" table csv json
	want "stats --format=c" "$(comp stats a.gtrace --format = c)" csv
	want "stats --timeunit" "$(comp stats a.gtrace --timeunit '')" ns us ms s
	# shellcheck disable=SC2046
	want "export -f" "$(comp export a.gtrace -f '')" $(formats_of)
	want "analyze --format" "$(comp analyze a.gtrace --format '')" table json md
	want "diff --format" "$(comp diff a.gtrace b.gtrace --format '')" table json md
	want "diff --iter" "$(comp diff a.gtrace b.gtrace --iter '')" capture graph kernels none nvtx:
	want "record --trace cuda," "$(comp --trace cuda,)" cuda,cuda cuda,ioctl cuda,sched cuda,cupti cuda,nvtx
	# FILE arguments: the files there
	mkdir -p "$T/d"
	: > "$T/d/run one.gtrace"
	: > "$T/d/run2.gtrace"
	: > "$T/d/other.txt"
	want "dump FILE" "$(comp dump "$T/d/run")" "$T/d/run one.gtrace" "$T/d/run2.gtrace"
	want "export -o" "$(comp export a.gtrace -o "$T/d/oth")" "$T/d/other.txt"
	want "merge TRACE SPOOL" "$(comp merge a.gtrace "$T/d/run2")" "$T/d/run2.gtrace"
	want "diff FILE" "$(comp diff "$T/d/run")" "$T/d/run one.gtrace" "$T/d/run2.gtrace"
}

t_install() {
	local d=$T/dest
	make -s -C "$ROOT" install DESTDIR="$d" PREFIX=/usr/local > "$T/make.out" 2>&1 ||
		fatal "make install DESTDIR=$d failed: $(tail -n 5 "$T/make.out" | tr '\n' '|')"
	cmp -s "$d/usr/local/share/man/man1/gtrace-bpf.1" "$MAN_SRC" ||
		err "make install put no man page in \$(PREFIX)/share/man/man1/gtrace-bpf.1"
	cmp -s "$d/usr/local/share/bash-completion/completions/gtrace-bpf" "$COMPLETION" ||
		err "make install put no completion in \$(PREFIX)/share/bash-completion/completions/gtrace-bpf"
	command -v man > /dev/null || fatal "needs man to find the installed page (apt-get install man-db)"
	MANPATH=$d/usr/local/share/man man -w gtrace-bpf > /dev/null 2>&1 ||
		err "man -w gtrace-bpf does not find the installed page under \$(PREFIX)/share/man"
	modes_are "$d/usr/local" "755 bin/gtrace-bpf" "644 share/man/man1/gtrace-bpf.1" \
		"644 share/bash-completion/completions/gtrace-bpf" "644 lib/systemd/system/gtrace-bpf.service"
	cmp -s "$d/usr/local/bin/gtrace-bpf" "$ROOT/gtrace-bpf" || err "make install's \$(PREFIX)/bin/gtrace-bpf is not the build's"
	[ ! -f "$ROOT/.output/libgtrace-cupti.so" ] || modes_are "$d/usr/local" "755 lib/gtrace-bpf/libgtrace-cupti.so"
	unit_checks "$d/usr/local/lib/systemd/system/gtrace-bpf.service" "$d"
}

# modes_are DIR "MODE PATH"...: each PATH under DIR a regular file of ours
# with MODE.
modes_are() {
	local dir=$1 m p got
	shift
	for m in "$@"; do
		p=${m#* }
		got=$(stat -c '%F %a %u' "$dir/$p" 2> /dev/null)
		[ "$got" = "regular file ${m%% *} $(id -u)" ] || err "make install: \$(PREFIX)/$p is '${got:-missing}', expected a regular file of ours, mode ${m%% *}"
	done
}

# unit_checks UNIT DESTDIR: the installed systemd unit starts the installed
# binary (PREFIX, not the placeholder) and systemd-analyze verify finds
# nothing wrong in it (pointed at the binary under DESTDIR: verify looks for
# the command on this machine).
unit_checks() {
	local unit=$1 dest=$2 exec out
	exec=$(sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' "$unit")
	[ "$exec" = /usr/local/bin/gtrace-bpf ] || err "the unit's ExecStart runs '$exec', expected /usr/local/bin/gtrace-bpf"
	grep -q '@' "$unit" && err "a placeholder is left in the unit: $(grep '@' "$unit" | head -n 1)"
	command -v systemd-analyze > /dev/null || fatal "needs systemd-analyze to check the unit (apt-get install systemd)"
	sed "s|^ExecStart=$exec|ExecStart=$dest$exec|" "$unit" > "$T/gtrace-bpf.service"
	out=$(systemd-analyze verify --man=no "$T/gtrace-bpf.service" 2>&1) || err "systemd-analyze verify failed: $out"
	[ -z "$out" ] || err "systemd-analyze verify of the unit: $(tr '\n' '|' <<< "$out")"
}

# Every command, rule, report and format the program has (from its tables)
# is in the man page, README and the completion, and the formats in export's
# --help: a list kept by hand elsewhere fails here when it misses one.
t_lists() {
	local man man_src readme cli_readme az_readme n w what
	command -v groff > /dev/null || fatal "needs groff to render the man page (apt-get install groff-base)"
	man=$(man_text)
	# words looked for in the source, where groff does not break them
	man_src=$(sed -E 's/\\-/-/g; s/\\f[BIRP]//g' "$MAN_SRC")
	readme=$(cat "$ROOT/README.md")
	cli_readme=$(cat "$ROOT/user/cli/README.md")
	az_readme=$(cat "$ROOT/user/analyze/README.md")
	n=$(wc -w <<< "$COMMANDS")
	[ "$n" -ge 12 ] || err "only $n commands in --help's COMMANDS: the parsing or the table broke"
	for w in $COMMANDS; do
		grep -qE "^   $w\$" <<< "$man" || err "command $w: no subsection in the man page"
		grep -qE "gtrace-bpf $w\b" <<< "$readme" || err "command $w: README never shows 'gtrace-bpf $w'"
		grep -qw -- "$w" <<< "$cli_readme" || err "command $w: user/cli/README.md does not name it"
	done
	want "the commands" "$(comp '')" $COMMANDS
	for what in rules reports formats; do
		n=0
		for w in $("${what}_of"); do
			n=$((n + 1))
			grep -qw -- "$w" <<< "$man_src" || err "$what: $w is not in the man page"
			grep -qw -- "$w" <<< "$readme" || err "$what: $w is not in README.md"
		done
		[ "$n" -ge 3 ] || err "only $n $what read from the program: the parsing broke"
	done
	for w in $(rules_of); do
		grep -qw -- "$w" <<< "$az_readme" || err "rules: $w is not in user/analyze/README.md's table"
	done
	# shellcheck disable=SC2046 # the words
	want "stats -r" "$(comp stats a.gtrace -r '')" $(reports_of)
	# shellcheck disable=SC2046
	want "analyze --rules" "$(comp analyze a.gtrace --rules '')" $(rules_of)
	# shellcheck disable=SC2046
	want "export -f" "$(comp export a.gtrace -f '')" $(formats_of)
	for w in $(formats_of); do
		"$GTRACE" export --help | grep -A1 -- '--format' | grep -qw -- "$w" || err "format $w: not in export --help"
	done
}

# README's main job: tools/demo.sh installs what building and running
# need, not the test tools, and ends with analyze's answers and the path of
# the offline report (on this machine against the mock libcuda, said).
t_demo() {
	local pkgs p
	pkgs=$("$ROOT/tools/install-deps.sh" --run --list) || fatal "install-deps.sh --run --list failed"
	for p in chromium prometheus curl libcmocka-dev jq; do
		grep -qx "$p" <<< "$pkgs" && err "the main job installs the test tool $p"
	done
	grep -qx libbpf-dev <<< "$pkgs" || err "the main job does not install libbpf-dev: $(tr '\n' ' ' <<< "$pkgs")"
	grep -q 'install-deps.sh --run' "$ROOT/tools/demo.sh" || err "tools/demo.sh does not install with --run"
	(cd "$ROOT" && timeout 300 tools/demo.sh) > "$T/demo.out" 2> "$T/demo.err" ||
		fatal "tools/demo.sh failed: $(tail -n 3 "$T/demo.err" | tr '\n' '|')"
	if ! command -v nvidia-smi > /dev/null; then
		grep -q 'against the MOCK libcuda' "$T/demo.out" || err "the demo does not say it ran on the mock"
	fi
	grep -q '^What bounds it:' "$T/demo.out" || err "the demo does not show analyze's answers"
	tail -n 3 "$T/demo.out" | grep -q "demo:   $ROOT/demo-output/demo.html\$" || err "the demo does not end with the report's path: $(tail -n 3 "$T/demo.out" | tr '\n' '|')"
	[ -s "$ROOT/demo-output/demo.html" ] || err "no report at demo-output/demo.html"
	grep -q 'ui.perfetto.dev' "$T/demo.out" && err "the demo points at an online viewer"
	return 0
}

add_case t_demo "README's main job (tools/demo.sh): installs no test tool, traces the bundled workload (the mock, said), ends with analyze's answers and the offline report's path"
add_case t_man_renders "docs: the man page renders without warnings (groff -ww, man -l) and has its sections"
add_case t_man_options "docs: every long option of every command's --help is in that command's man page section"
add_case t_completion "docs: bash completion offers commands, --help's options, reports, formats, file names"
add_case t_lists "docs: every command, analyze rule, stats report and export format of the program's tables is in the man page, README, the completion (and user/cli/README.md for commands, user/analyze/README.md for rules)"
add_case t_install "docs: make install installs the binary, the man page, the bash completion and the systemd unit, with their modes; the unit verifies"
run_cases "$@"
