# SPDX-License-Identifier: MIT
# Sourced by the GPU checks that put the CUPTI agent into jobs
# (daemon_attach.sh, attach_ondemand.sh), from the repository root:
#   . tools/gpu/agent_env.sh NAME   (NAME: the check, and its folder under $OUT)
# Sets OUT (a new temporary folder unless given), G (the static build,
# $GTRACE or ./gtrace-bpf), PY, d ($OUT/NAME, private, with snaps/ in it)
# and AGENT (the agent, built into $OUT unless $AGENT names one); a build
# that fails is the check's FAIL line and status 1.
OUT=${OUT:-$(mktemp -d)}
G=${GTRACE:-$PWD/gtrace-bpf}
PY=${PYTHON:-python3}
d=$OUT/$1
mkdir -p -m 0700 "$d/snaps"
AGENT=${AGENT:-$OUT/libgtrace-cupti.so}
[ -f "$AGENT" ] || tools/gpu/build_agent.sh "$AGENT" "$d/agent.build" ||
	{ echo "FAIL $1: the agent does not build"; exit 1; }
