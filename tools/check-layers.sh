#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The layering of user/ (docs: README "Layout"), as a build check: every
# stage includes only the stages below it, so the data flow reads one way.
#
#   lib < format < decode < merge, export, stats < analyze < diff < report < cli
#   record beside decode: format/, lib/, its skeletons and the ABI headers;
#     inside it record/probes (BPF objects, ladders, discovery),
#     record/procs (processes: names, /proc, the cgroup target, recovered
#     kernel names; below probes), record/gpum (the NVML sampler) and
#     record/stacks (call stacks: addresses to files and symbols, with
#     libelf), which include nothing of record/
#   daemon between record and cli: record/ (its interface, record/ext.h, and
#     what it names there), merge/, format/, lib/; inside it daemon/budget
#     (the overhead budget and its shedding), which includes nothing of
#     daemon/
#
# bpf/ and cupti/ are the ABI headers (no code); *.skel.h are the BPF
# skeletons, which need libbpf and belong to record/ alone, as do libbpf's
# and libelf's own headers. Prints one line per include that breaks a rule
# (and per direct write to stderr, below) and exits 1 if any did.
#
# Usage: tools/check-layers.sh [DIR]   (DIR: the user/ tree, default user)
set -u
cd "$(dirname "$0")/.." || exit 2
root=${1:-user}

# What each stage may include, besides itself: folders of quoted includes
# ("format/trace_file.h"), or single headers (export/fields.h).  A folder
# inside a stage that is named here (record/gpum) is a stage of its own: its
# files follow its rules, and the stage around it names it to include it.
declare -A allow=(
	[lib]=""
	[format]="lib bpf cupti"
	[decode]="lib format bpf cupti"
	[record]="lib format record/probes record/procs record/gpum record/stacks record/inject bpf cupti SKEL"
	[record/probes]="lib format record/procs bpf cupti SKEL"
	[record/procs]="lib format bpf"
	[record/gpum]="lib format bpf"
	[record/stacks]="lib format bpf SKEL"
	[record/inject]="lib format record/probes"
	[merge]="lib format decode bpf cupti"
	[export]="lib format decode bpf cupti"
	[stats]="lib format decode bpf cupti"
	[analyze]="lib format decode stats bpf cupti"
	[diff]="lib format decode stats analyze bpf cupti"
	[report]="lib format decode stats analyze diff export/fields.h bpf cupti"
	[daemon]="lib format decode merge record record/gpum daemon/budget bpf cupti"
	[daemon/budget]="lib format record record/gpum bpf"
	[cli]="*"
)

# stage_of PATH: the stage a path inside user/ belongs to (its first folder,
# or its first two when those are a stage of their own), in $STAGE: set, not
# printed, as a command substitution per include forks the shell thousands
# of times (the check took over 20 s on a busy machine)
stage_of() {
	local first=${1%%/*} rest=${1#*/}
	if [[ $rest == */* && -n "${allow[$first/${rest%%/*}]+set}" ]]; then
		STAGE="$first/${rest%%/*}"
	else
		STAGE="$first"
	fi
}

bad=0
while IFS= read -r hit; do
	file=${hit%%:*}
	rest=${hit#*:}
	line=${rest%%:*}
	text=${rest#*:}
	stage_of "${file#"$root"/}"
	stage=$STAGE
	if [ -z "${allow[$stage]+set}" ]; then
		echo "$file:$line: $stage/ is no known stage of user/: add it to tools/check-layers.sh"
		bad=1
		continue
	fi
	ok=${allow[$stage]}
	[ "$ok" = "*" ] && continue
	if [[ $text =~ \#[[:space:]]*include[[:space:]]*\<(bpf/[^>]*|libelf\.h|gelf\.h)\> ]]; then
		inc=${BASH_REMATCH[1]}
		[[ " $ok " == *" SKEL "* ]] && continue
		echo "$file:$line: $stage/ includes <$inc>: only record/ and cli/ use libbpf and libelf"
		bad=1
		continue
	fi
	[[ $text =~ \#[[:space:]]*include[[:space:]]*\"([^\"]*)\" ]] || continue
	inc=${BASH_REMATCH[1]}
	case $inc in
	*.skel.h)
		[[ " $ok " == *" SKEL "* ]] && continue
		echo "$file:$line: $stage/ includes the BPF skeleton \"$inc\": only record/ loads BPF objects"
		bad=1
		continue ;;
	*/*) stage_of "$inc"; dir=$STAGE ;;
	*)
		echo "$file:$line: $stage/ includes \"$inc\" without its stage: name it (\"$stage/$inc\")"
		bad=1
		continue ;;
	esac
	[ "$dir" = "$stage" ] && continue
	[[ " $ok " == *" $dir "* || " $ok " == *" $inc "* ]] && continue
	if [ -z "$ok" ]; then
		echo "$file:$line: $stage/ includes \"$inc\": lib/ includes no gtrace header"
	else
		list=$(for d in $ok; do case $d in SKEL) ;; */*) printf '%s ' "$d" ;; *) printf '%s/ ' "$d" ;; esac; done)
		echo "$file:$line: $stage/ includes \"$inc\": $stage/ may include only ${list% }"
	fi
	bad=1
done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include' --include='*.c' --include='*.h' "$root")

# One diagnostics path: messages go out through lib/log.h (pr_err, pr_warn
# ...), which clears the status line, keeps lines whole across threads and
# follows -q/-v; only the logger itself and libbpf's pass-through write
# stderr directly.
while IFS= read -r hit; do
	case ${hit%%:*} in
	"$root"/lib/log.c|"$root"/record/probes/bpf_log.c) continue ;;
	esac
	echo "${hit%%:*}:$(echo "$hit" | cut -d: -f2): writes stderr directly: use pr_err/pr_warn/pr_info (lib/log.h)"
	bad=1
done < <(grep -rnE '(v?fprintf|fputs|fputc|perror)[[:space:]]*\((stderr|[^;]*,[[:space:]]*stderr\))|dprintf\((2|STDERR_FILENO)' --include='*.c' "$root")

[ $bad -eq 0 ] || echo "check-layers: includes against the layering of user/, or stderr written around lib/log.h (tools/check-layers.sh)"
exit $bad
