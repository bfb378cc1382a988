#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The CUPTI agent (libgtrace-cupti.so) over a mock libcupti, no GPU needed:
# the cases of cupti/testing/run.sh (make cupti-check), one PASS/FAIL line
# each. Real CUPTI on a GPU: tools/gpu-check.sh.
#
# The agent and its mock, built by make, not the recorder under test: the
# plain pass runs it, beside other cases (it starts no recorder), the
# sanitized pass not.
# run-tests: shared once
cd "$(dirname "$0")/../.." || exit 2
if [ ! -f "${CUDA_HOME:-/usr/local/cuda}/include/cupti.h" ]; then
	echo "FAIL test_cupti_agent: no cupti.h in ${CUDA_HOME:-/usr/local/cuda}/include: the agent cannot be built or tested here"
	exit 0
fi
make -s cupti-check 2>&1 | sed -n 's/^\(PASS\|FAIL\) /\1 test_cupti_agent: /p'
