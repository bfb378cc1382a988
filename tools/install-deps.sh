#!/usr/bin/env bash
# Installs the Debian 12 packages gtrace-bpf needs to build and test.
# Idempotent: does nothing when everything is already installed.
set -euo pipefail
# libclang-rt-14-dev: clang's sanitizer and libFuzzer runtimes (make fuzz),
# only recommended by clang, so not pulled in with --no-install-recommends;
# gcc's ASAN/UBSAN runtimes (make SANITIZE=1) come with gcc
# prometheus, curl: the server (and promtool) and client that
# tests/integration/test_metrics.sh
# scrapes and asks the metrics endpoint with
# chromium: the headless browser tests/integration/test_report.sh opens the
# report's page in (driven over its DevTools pipe by python3's standard
# library alone)
pkgs=(make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libzstd-dev
      libiberty-dev libcmocka-dev pkg-config jq protobuf-compiler python3 procps
      libclang-rt-14-dev groff-base man-db prometheus curl chromium)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages (${missing[*]}); run as root to install them" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
