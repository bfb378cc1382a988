#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A CPython 3.14 for the tests of the remote-script attach (PEP 768), on a
# Debian 12 machine, which has none: Debian unstable's python3.14 packages
# and the C library they need, checked against the archive's index
# (SHA256) and unpacked under DIR (default /opt/gtrace-py314), where
# nothing of the system's is changed. Prints the path of DIR/python3.14, a
# launcher that runs it with its own C library. Does nothing but print it
# when it is there and runs.
#   tools/python314.sh [DIR]
set -euo pipefail
dir=${1:-/opt/gtrace-py314}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
pkgs=(python3.14-minimal libpython3.14-minimal libpython3.14-stdlib libc6 libexpat1 zlib1g libffi8)
launcher=$dir/python3.14
if [ -x "$launcher" ] && "$launcher" -c 'import sys, ctypes; assert sys.version_info[:2] == (3, 14)' 2> /dev/null; then
	echo "$launcher"
	exit 0
fi
die() { echo "python314: $*" >&2; exit 1; }
command -v curl > /dev/null || die "needs curl"
command -v xz > /dev/null || die "needs xz"
tmp=$(mktemp -d /tmp/python314.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
curl -fsS --max-time 120 -o "$tmp/Packages.xz" "$mirror/dists/unstable/main/binary-amd64/Packages.xz" ||
	die "cannot fetch the index of Debian unstable from $mirror"
xz -dc "$tmp/Packages.xz" > "$tmp/Packages"
rm -rf "$dir.new"
mkdir -p "$dir.new/root"
for p in "${pkgs[@]}"; do
	read -r file sum < <(awk -v p="$p" '
		$1 == "Package:" { cur = $2; f = ""; s = "" }
		cur == p && $1 == "Filename:" { f = $2 }
		cur == p && $1 == "SHA256:" { s = $2 }
		cur == p && f != "" && s != "" { print f, s; exit }' "$tmp/Packages")
	[ -n "${file:-}" ] || die "Debian unstable has no package $p"
	curl -fsS --max-time 300 -o "$tmp/$p.deb" "$mirror/$file" || die "cannot fetch $mirror/$file"
	echo "$sum  $tmp/$p.deb" | sha256sum -c --quiet - || die "$file: its SHA256 is not the index's"
	dpkg-deb -x "$tmp/$p.deb" "$dir.new/root"
done
lib=$dir/root/usr/lib/x86_64-linux-gnu
cat > "$dir.new/python3.14" << EOF
#!/bin/sh
# Debian unstable's CPython 3.14 with its own C library (tools/python314.sh);
# the loader's --library-path stands for LD_LIBRARY_PATH: that one after it
exec "$lib/ld-linux-x86-64.so.2" --library-path "$lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" "$dir/root/usr/bin/python3.14" "\$@"
EOF
chmod 0755 "$dir.new/python3.14"
rm -rf "$dir"
mv "$dir.new" "$dir"
"$launcher" -c 'import sys, ctypes; assert sys.version_info[:2] == (3, 14)' ||
	die "the unpacked python3.14 does not run"
echo "$launcher"
