#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gtrace-bpf runs as root and writes files where it is told: what it must not
# replace (devices, FIFOs, links, other users' files), what "-o -" means, the
# mode of what it writes, and that names from traced programs cannot drive
# the terminal their tables are shown on.
REQUIRES="root jq mock gtrace"
. "$(dirname "$0")/lib.sh"

NOBODY=65534

# Records the mock workload into $T/a.gtrace.
record() {
	GT_LIBCUDA=$MOCK_LIB timeout 60 "$GTRACE" --libcuda "$MOCK_LIB" -o "$T/a.gtrace" -- "$WORKLOAD" \
		--launches 4 --copies 1 --syncs 1 > "$T/rec.out" 2> "$T/rec.err"
	RC=$?
	[ "$RC" -eq 0 ] || fatal "recording the workload: status $RC: $(tail -n 3 "$T/rec.err" | tr '\n' '|')"
}

# Makes $T/t/NAME for each kind of target a root writer must not replace,
# and $T/t/list with a description of each: NAME WHAT.
plant_targets() {
	mkdir "$T/t" || fatal "cannot create $T/t"
	mknod "$T/t/null" c 1 3 || fatal "cannot create a character device"
	mkfifo "$T/t/fifo" || fatal "cannot create a FIFO"
	printf 'mine\n' > "$T/t/pointee"
	ln -s pointee "$T/t/link"
	printf 'planted\n' > "$T/t/planted"
	chown "$NOBODY" "$T/t/planted" || fatal "cannot chown to $NOBODY"
	chmod 0666 "$T/t/planted"
	TARGETS="null fifo link planted"
}

# targets_intact LABEL: every planted target is what it was.
targets_intact() {
	[ -c "$T/t/null" ] || err "$1: the device was replaced: $(ls -l "$T/t/null")"
	[ -p "$T/t/fifo" ] || err "$1: the FIFO was replaced: $(ls -l "$T/t/fifo")"
	[ -L "$T/t/link" ] || err "$1: the link was replaced: $(ls -l "$T/t/link")"
	[ "$(cat "$T/t/pointee")" = mine ] || err "$1: the link's target was written"
	[ "$(stat -c '%u %a' "$T/t/planted")" = "$NOBODY 666" ] && [ "$(cat "$T/t/planted")" = planted ] ||
		err "$1: the other user's file was taken over: $(stat -c '%U %a %s' "$T/t/planted")"
}

# refused LABEL STATUS ERRFILE: status 1 and one line saying it refuses.
refused() {
	[ "$2" -eq 1 ] || err "$1: status $2, expected 1"
	[ "$(wc -l < "$3")" -eq 1 ] || err "$1: $(wc -l < "$3") lines on stderr, expected 1: $(head -n 4 "$3" | tr '\n' '|')"
	grep -q 'refusing to replace' "$3" || err "$1: not a refusal: $(head -n 2 "$3" | tr '\n' '|')"
}

t_export_targets() {
	local name f rc
	record
	plant_targets
	for name in $TARGETS; do
		for f in "" --force; do
			timeout 20 "$GTRACE" export "$T/a.gtrace" -f json -o "$T/t/$name" $f > /dev/null 2> "$T/e"
			rc=$?
			refused "export -o $name $f" $rc "$T/e"
		done
	done
	targets_intact "export"
	# no temporary file left
	[ -z "$(ls -A "$T/t" | grep -v -x -e null -e fifo -e link -e pointee -e planted)" ] ||
		err "files left by the refused exports: $(ls -A "$T/t" | tr '\n' ' ')"
}

t_merge_targets() {
	local name rc
	record
	plant_targets
	mkdir -m 0700 "$T/spool"
	for name in $TARGETS; do
		timeout 20 "$GTRACE" merge "$T/a.gtrace" "$T/spool" -o "$T/t/$name" --force > /dev/null 2> "$T/e"
		rc=$?
		refused "merge -o $name --force" $rc "$T/e"
	done
	targets_intact "merge"
}

t_record_targets() {
	local name f rc
	plant_targets
	for name in $TARGETS; do
		for f in "" --force; do
			GT_LIBCUDA=$MOCK_LIB timeout 30 "$GTRACE" --libcuda "$MOCK_LIB" $f -o "$T/t/$name" -- \
				"$WORKLOAD" --launches 2 --syncs 1 > "$T/o" 2> "$T/e"
			rc=$?
			[ $rc -ne 124 ] || { err "record -o $name $f: still running after 30 s"; continue; }
			refused "record -o $name $f" $rc "$T/e"
			grep -q '^{' "$T/o" && err "record -o $name $f: the command ran although the output was refused"
		done
	done
	targets_intact "record"
}

# --force over a trace of ours: a new file, not the old one truncated (a
# second name of the old one keeps its bytes), private and root's.
t_record_force_replaces() {
	local rc ino
	printf 'old trace\n' > "$T/own.gtrace"
	chmod 0644 "$T/own.gtrace"
	ln "$T/own.gtrace" "$T/second-name"
	ino=$(stat -c %i "$T/own.gtrace")
	GT_LIBCUDA=$MOCK_LIB timeout 30 "$GTRACE" --libcuda "$MOCK_LIB" --force -o "$T/own.gtrace" -- \
		"$WORKLOAD" --launches 2 --syncs 1 > "$T/o" 2> "$T/e"
	rc=$?
	[ $rc -eq 0 ] || fatal "record --force over its own file: status $rc: $(tail -n 3 "$T/e" | tr '\n' '|')"
	[ "$(cat "$T/second-name")" = "old trace" ] || err "the old file was written through (O_TRUNC), not replaced"
	[ "$(stat -c %i "$T/own.gtrace")" != "$ino" ] || err "own.gtrace is still the old inode"
	[ "$(stat -c '%a %u' "$T/own.gtrace")" = "600 0" ] ||
		err "own.gtrace is $(stat -c '%a %u' "$T/own.gtrace"), expected 600 0"
	"$GTRACE" dump "$T/own.gtrace" > "$T/d.json" 2> "$T/d.err" || err "the new trace does not read: $(head -n 2 "$T/d.err")"
	[ -z "$(ls -A "$T" | grep '^\.')" ] || err "temporary files left: $(ls -A "$T" | grep '^\.' | tr '\n' ' ')"
}

t_stdout() {
	local rc
	record
	cd "$T" || fatal "cannot cd to $T"
	GT_LIBCUDA=$MOCK_LIB timeout 30 "$GTRACE" --libcuda "$MOCK_LIB" -o - -- "$WORKLOAD" --launches 2 \
		> "$T/o" 2> "$T/e"
	rc=$?
	[ $rc -eq 2 ] || err "record -o -: status $rc, expected 2"
	[ "$(wc -l < "$T/e")" -eq 1 ] || err "record -o -: $(wc -l < "$T/e") lines on stderr, expected 1: $(head -n 3 "$T/e" | tr '\n' '|')"
	grep -q 'standard output' "$T/e" || err "record -o -: the error does not say why: $(cat "$T/e")"
	[ ! -e "$T/-" ] || { err "record -o - created a file named -"; rm -f "$T/-"; }
	mkdir -m 0700 "$T/spool"
	"$GTRACE" merge "$T/a.gtrace" "$T/spool" -o - > "$T/o" 2> "$T/e"
	rc=$?
	[ $rc -eq 2 ] || err "merge -o -: status $rc, expected 2"
	[ "$(wc -l < "$T/e")" -eq 1 ] || err "merge -o -: $(wc -l < "$T/e") lines on stderr, expected 1"
	[ ! -e "$T/-" ] || { err "merge -o - created a file named -"; rm -f "$T/-"; }
	"$GTRACE" export "$T/a.gtrace" -f json -o - > "$T/o.json" 2> "$T/e"
	rc=$?
	[ $rc -eq 0 ] || err "export -o -: status $rc: $(head -n 2 "$T/e")"
	jq -e '.traceEvents | length > 0' "$T/o.json" > /dev/null || err "export -o - wrote no trace events on stdout"
	[ ! -e "$T/-" ] || err "export -o - created a file named -"
}

# Exports hold the command lines and the host name: owner only, whatever
# the umask.
t_export_mode() {
	local f
	record
	for f in json csv perfetto; do
		(umask 022; "$GTRACE" export "$T/a.gtrace" -f $f -o "$T/x.$f" 2> "$T/e") ||
			err "export -f $f: $(head -n 2 "$T/e")"
		[ "$(stat -c %a "$T/x.$f")" = 600 ] || err "export -f $f: mode $(stat -c %a "$T/x.$f"), expected 600"
	done
}

# A program's name and the recorder's own command line with escape
# sequences: the tables show them written out, never the raw bytes.
t_escaped_text() {
	local rc
	GT_LIBCUDA=$MOCK_LIB timeout 60 "$GTRACE" --libcuda "$MOCK_LIB" --scenario $'s\e[2J' -o "$T/a.gtrace" -- \
		bash -c 'exec -a "$0" "$1" --launches 2 --syncs 1' $'wl\e]0;x\a' "$WORKLOAD" > "$T/o" 2> "$T/e"
	rc=$?
	[ $rc -eq 0 ] || fatal "recording: status $rc: $(tail -n 3 "$T/e" | tr '\n' '|')"
	"$GTRACE" dump --summary "$T/a.gtrace" > "$T/sum" 2> "$T/e" || fatal "dump --summary: $(head -n 2 "$T/e")"
	"$GTRACE" stats -r process_sum "$T/a.gtrace" > "$T/stats" 2> "$T/e" || fatal "stats: $(head -n 2 "$T/e")"
	LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$T/sum" &&
		err "dump --summary prints control characters: $(LC_ALL=C grep $'[\x01-\x08\x0b-\x1f\x7f]' "$T/sum" | cat -v)"
	grep -qF 's\x1b[2J' "$T/sum" || err "dump --summary does not show the escaped scenario: $(head -n 2 "$T/sum" | cat -v)"
	LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$T/stats" &&
		err "stats prints control characters: $(LC_ALL=C grep $'[\x01-\x08\x0b-\x1f\x7f]' "$T/stats" | cat -v)"
	grep -qF 'wl\x1b]0;x\x07' "$T/stats" || err "stats does not show the escaped command: $(cat -v "$T/stats")"
}

add_case t_export_targets "export -o a device, FIFO, link or another user's file (with and without --force): refused, untouched"
add_case t_merge_targets "merge -o a device, FIFO, link or another user's file --force: refused, untouched"
add_case t_record_targets "record -o a device, FIFO, link or another user's file (with and without --force): refused at once, untouched"
add_case t_record_force_replaces "record --force over its own trace: a new private file renamed over it, the old one not written through"
add_case t_stdout "-o -: stdout for export, refused with one line by record and merge, never a file named -"
add_case t_export_mode "exports are created 0600"
add_case t_escaped_text "dump --summary and stats tables escape control characters of command lines"
run_cases "$@"
