#!/usr/bin/env bash
# The screenshot of a report for the docs: writes the report of TRACE and
# takes, in headless chromium (tests/integration/report_page.py), a picture
# of the page's top down to the timeline, with a kernel selected and its
# launch arrow drawn.
#   tools/report_screenshot.sh TRACE OUT.png
# The trace of a real GPU run comes from tools/gpu/report_check.sh.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 TRACE OUT.png" >&2; exit 2; }
cd "$(dirname "$0")/.."
W=$(mktemp -d /tmp/gtrace-shot.XXXXXX)
trap 'rm -rf "$W"' EXIT
./gtrace-bpf report "$1" -o "$W/report.html"
GT_REPORT_SHOTS=$W python3 tests/integration/report_page.py "$W/seen.json" "$W/report.html"
python3 -c 'import json, sys; p = json.load(open(sys.argv[1]))[0]; sys.exit("the page had errors or requests: %s %s" % (p["errors"], p["requests"]) if p["errors"] or p["requests"] else 0)' "$W/seen.json"
cp "$W/report.html.top.png" "$2"
echo "$2: $(stat -c %s "$2") bytes"
