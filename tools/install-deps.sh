#!/usr/bin/env bash
# Installs the Debian 12 packages gtrace-bpf needs.
#   tools/install-deps.sh          to build and test it (make test, .ci/run)
#   tools/install-deps.sh --run    to build and run it only (tools/demo.sh)
#   ... --list                     prints the packages instead
# Idempotent: does nothing when everything is already installed.
set -euo pipefail
# to build and run: the compilers, libbpf and bpftool (skeletons), libelf,
# the compressors and libiberty (the demangler)
run_pkgs=(make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libzstd-dev
          libiberty-dev pkg-config)
# to test besides:
# libcmocka-dev: the unit tests; jq, python3, procps: the integration tests;
# protobuf-compiler: the Perfetto output's check;
# libclang-rt-14-dev: clang's sanitizer and libFuzzer runtimes (make fuzz),
# only recommended by clang, so not pulled in with --no-install-recommends;
# gcc's ASAN/UBSAN runtimes (make SANITIZE=1) come with gcc;
# groff-base, man-db: the man page's check;
# prometheus, curl: the server (and promtool) and client that
# tests/integration/test_metrics.sh scrapes and asks the metrics endpoint with;
# chromium: the headless browser tests/integration/test_report.sh opens the
# report's page in (driven over its DevTools pipe by python3's standard
# library alone)
test_pkgs=(libcmocka-dev jq protobuf-compiler python3 procps libclang-rt-14-dev groff-base man-db
           prometheus curl chromium)
pkgs=("${run_pkgs[@]}" "${test_pkgs[@]}")
list=0
for a in "$@"; do
	case $a in
	--run) pkgs=("${run_pkgs[@]}") ;;
	--list) list=1 ;;
	*) echo "install-deps: unknown option '$a' (--run, --list)" >&2; exit 2 ;;
	esac
done
if [ $list -eq 1 ]; then
	printf '%s\n' "${pkgs[@]}"
	exit 0
fi
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
