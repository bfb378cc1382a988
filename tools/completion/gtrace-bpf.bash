# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# Bash completion for gtrace-bpf: subcommands, each command's options, file
# names for FILE arguments, report names for `stats -r`, formats for -f and
# --format, units for --timeunit, sources for --trace, iteration kinds for
# `diff --iter`.  `make install` puts
# it in $(PREFIX)/share/bash-completion/completions/gtrace-bpf, where
# bash-completion loads it on first use; or `source` it.
# The option lists are those of each command's --help;
# tests/integration/test_docs.sh fails when they drift apart.

_gtrace_bpf_cmds="record census dump export stats merge analyze report diff daemon snapshot status attach help"
_gtrace_bpf_reports="cuda_api_sum cuda_launch_sum cuda_mem_size_sum cuda_sync_sum cuda_sync_site_sum process_sum ioctl_sum cuda_gpu_kern_sum cuda_gpu_site_sum cuda_gpu_mem_time_sum cuda_gpu_mem_size_sum nvtx_sum gpu_launch_latency capture_sum gpu_metrics_sum cuda_device_sum nccl_sum host_sum"
_gtrace_bpf_rules="gpu_time_util gpu_gaps launch_bound cuda_api_sync sync_in_loop cuda_memcpy_sync cuda_memcpy_async cuda_memset_sync small_grid single_stream default_stream host_stall sync_site nccl_wait nccl_straggler"

# The long options of command $1 (those of --help, which every command takes).
_gtrace_bpf_opts() {
	local common="--help --usage --version"
	case $1 in
	record) echo "--all --as-root --buffer-size --capture-range --capture-range-end --cgroup --cupti --cupti-detach --cupti-lib --delay --duration --force --gpu-metrics --ioctl-majors --keep-lookups --launch-exit --libcuda --libnccl --light-window --max-size --mode --nvtx-capture --output --pid --quiet --scenario --stacks --stats --trace --verbose $common" ;;
	dump) echo "--summary $common" ;;
	export) echo "--findings --force --format --output --split $common" ;;
	stats) echo "--force --format --output --range --report --timeunit $common" ;;
	analyze) echo "--force --format --output --pid --range --rules --sms $common" ;;
	report) echo "--compare --force --max-events --output $common" ;;
	diff) echo "--force --format --iter --output --pid --rank $common" ;;
	merge) echo "--force --hosts --output --quiet $common" ;;
	census) echo "--functions --libcuda $common" ;;
	daemon) echo "--attach-cupti --budget --buffer-size --cgroup --cupti --cupti-detach --cupti-lib --dir --gpu-metrics --keep-lookups --libcuda --light-window --log --memory --metrics --metrics-remote --mode --owner --post --quiet --stacks --trigger --verbose --window $common" ;;
	snapshot) echo "--last --output --pid $common" ;;
	status) echo "--json --verbose $common" ;;
	attach) echo "--duration --pid $common" ;;
	help) ;;
	esac
}

# COMPREPLY = the words of $1 that complete the last item of the
# comma-separated list $2 (its earlier items kept as they are).
_gtrace_bpf_list() {
	local head="" last=$2 w
	if [[ $2 == *,* ]]; then
		head=${2%,*},
		last=${2##*,}
	fi
	COMPREPLY=()
	for w in $1; do
		[[ $w == "$last"* ]] && COMPREPLY+=("$head$w")
	done
}

# COMPREPLY = file names completing $1 (directories marked with a slash).
_gtrace_bpf_files() {
	local IFS=$'\n'
	compopt -o filenames 2>/dev/null
	COMPREPLY=($(compgen -f -- "$1"))
}

_gtrace_bpf() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev="" cmd=record eq=0 i w
	((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
	# "--format=c": bash splits it at '=' (COMP_WORDBREAKS) into "--format"
	# "=" "c"; without that split it is one word.  Either way the option is
	# prev, the value cur, and eq says an '=' joins them.
	if [[ $cur == = ]]; then
		cur="" eq=1
	elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
		prev=${COMP_WORDS[COMP_CWORD - 2]} eq=1
	elif [[ $cur == --*=* ]]; then
		prev=${cur%%=*} cur=${cur#*=} eq=1
	fi
	# the command: the first word, when it is one (record is the default)
	w=${COMP_WORDS[1]:-}
	[[ " $_gtrace_bpf_cmds " == *" $w "* ]] && ((COMP_CWORD > 1)) && cmd=$w
	# after "--" (record, census): the command to run, then its arguments
	for ((i = 1; i < COMP_CWORD; i++)); do
		if [[ ${COMP_WORDS[i]} == -- ]]; then
			if ((i == COMP_CWORD - 1)); then
				COMPREPLY=($(compgen -c -- "$cur"))
			else
				_gtrace_bpf_files "$cur"
			fi
			return 0
		fi
	done
	case $prev in
	-r|--report)
		[[ $cmd == stats ]] && { _gtrace_bpf_list "$_gtrace_bpf_reports" "$cur"; return 0; } ;;
	--rules)
		[[ $cmd == analyze ]] && { _gtrace_bpf_list "$_gtrace_bpf_rules" "$cur"; return 0; } ;;
	--stats)
		# its argument is optional: "--stats=LIST"
		((eq)) && { _gtrace_bpf_list "$_gtrace_bpf_reports" "$cur"; return 0; } ;;
	-f|--format)
		case $cmd in
		export) COMPREPLY=($(compgen -W "perfetto json csv" -- "$cur")); return 0 ;;
		stats) COMPREPLY=($(compgen -W "table csv json" -- "$cur")); return 0 ;;
		analyze) COMPREPLY=($(compgen -W "table json md" -- "$cur")); return 0 ;;
		diff) COMPREPLY=($(compgen -W "table json md" -- "$cur")); return 0 ;;
		esac ;;
	--iter)
		# or an NVTX range name, which only the traces know
		COMPREPLY=($(compgen -W "capture graph kernels none nvtx:" -- "$cur")); return 0 ;;
	--timeunit)
		COMPREPLY=($(compgen -W "ns us ms s" -- "$cur")); return 0 ;;
	-t|--trace)
		# none stands alone (or with cupti), not after a comma
		if [[ $cur == *,* ]]; then _gtrace_bpf_list "cuda ioctl sched cupti nvtx" "$cur"
		else _gtrace_bpf_list "cuda ioctl sched cupti nvtx none" "$cur"; fi
		return 0 ;;
	--mode)
		COMPREPLY=($(compgen -W "full light" -- "$cur")); return 0 ;;
	--stacks)
		COMPREPLY=($(compgen -W "none sync all" -- "$cur")); return 0 ;;
	--cupti-detach)
		COMPREPLY=($(compgen -W "finalize idle" -- "$cur")); return 0 ;;
	-c|--capture-range)
		COMPREPLY=($(compgen -W "none cudaProfilerApi nvtx" -- "$cur")); return 0 ;;
	--capture-range-end)
		COMPREPLY=($(compgen -W "stop repeat repeat:" -- "$cur")); return 0 ;;
	--gpu-metrics)
		# its argument is optional: "--gpu-metrics=HZ" or "=off"
		((eq)) && { COMPREPLY=($(compgen -W "off 1 10 100" -- "$cur")); return 0; } ;;
	--cupti)
		# its argument is optional: record's "--cupti=optional" and "--cupti=attach"
		((eq)) && [[ $cmd != daemon ]] && { COMPREPLY=($(compgen -W "optional attach" -- "$cur")); return 0; } ;;
	-o|--output|--libcuda|--libnccl|--cupti-lib|--log|--compare)
		_gtrace_bpf_files "$cur"; return 0 ;;
	--dir)
		COMPREPLY=($(compgen -d -- "$cur")); return 0 ;;
	--cgroup)
		COMPREPLY=($(compgen -d -- "$cur")); return 0 ;;
	--trigger)
		COMPREPLY=($(compgen -W "sync> error error= exit profiler signal gpu-idle>" -- "$cur")); return 0 ;;
	-p|--pid)
		COMPREPLY=($(compgen -W "$(cd /proc 2>/dev/null && compgen -G '[0-9]*')" -- "$cur")); return 0 ;;
	-d|--duration|-y|--delay|--buffer-size|--max-size|--scenario|--ioctl-majors|--functions|--light-window|--nvtx-capture|--range|--sms|--window|--memory|--last|--metrics|--post|--budget|--max-events)
		COMPREPLY=(); return 0 ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_gtrace_bpf_opts "$cmd")" -- "$cur"))
		return 0
	fi
	if ((COMP_CWORD == 1)); then
		COMPREPLY=($(compgen -W "$_gtrace_bpf_cmds" -- "$cur"))
		return 0
	fi
	# FILE, TRACE and SPOOL arguments
	_gtrace_bpf_files "$cur"
	return 0
}

complete -F _gtrace_bpf gtrace-bpf
