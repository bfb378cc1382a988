#!/usr/bin/env bash
# Regenerates vmlinux/<arch>/vmlinux.h from the running kernel's BTF.
# The build never reads /sys: run this by hand when the kernel types used
# by bpf/ change, and commit the result.
set -euo pipefail
arch=$(uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
btf=${1:-/sys/kernel/btf/vmlinux}
out="$(dirname "$0")/../vmlinux/$arch/vmlinux.h"
[ -r "$btf" ] || { echo "gen-vmlinux: cannot read $btf: kernel without BTF?" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
bpftool btf dump file "$btf" format c > "$out.tmp"
mv "$out.tmp" "$out"
echo "gen-vmlinux: wrote $out ($(wc -l < "$out") lines) from $btf ($(uname -r))"
