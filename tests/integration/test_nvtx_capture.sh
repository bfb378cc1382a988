#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# NVTX capture ranges in the CUPTI agent (GTRACE_NVTX_CAPTURE, record -c nvtx
# --nvtx-capture) over the mock libcupti, no GPU needed: the cases of
# cupti/testing/nvtx_capture.sh, one PASS/FAIL line each.  Each counts the
# agent's gtrace_capture_open/close calls with uprobes on those exported
# symbols of the agent file, as the recorder sees them: needs root.
#
# The agent and its mock, built by make, not the recorder under test: the
# plain pass runs it, beside other cases (the driver's uprobe counters count
# its own calls only), the sanitized pass not.
# run-tests: shared once
cd "$(dirname "$0")/../.." || exit 2
if [ ! -f "${CUDA_HOME:-/usr/local/cuda}/include/cupti.h" ]; then
	echo "FAIL test_nvtx_capture: no cupti.h in ${CUDA_HOME:-/usr/local/cuda}/include: the agent cannot be built or tested here"
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "FAIL test_nvtx_capture: needs root (uprobes count the agent's calls): run as root, e.g. sudo make test"
	exit 0
fi
GTRACE_CUPTI_CHECK=nvtx make -s cupti-check 2>&1 | sed -n 's/^\(PASS\|FAIL\) /\1 test_nvtx_capture: /p'
