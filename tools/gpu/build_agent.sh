#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Builds the CUPTI agent on the GPU machine, from the repository root:
# tools/gpu/build_agent.sh OUT.so [LOG]. The toolkit at $CUDA_HOME (default
# /usr/local/cuda); compiler output appended to LOG (default stderr). Exit
# status gcc's (2 without the cupti/ sources).
set -u
CUDA=${CUDA_HOME:-/usr/local/cuda}
out=${1:?usage: build_agent.sh OUT.so [LOG]}
log=${2:-/dev/stderr}
ls cupti/*.c > /dev/null 2>&1 || { echo "build_agent.sh: no cupti/*.c here (run from the repository root)" >> "$log"; exit 2; }
gcc -O2 -std=gnu11 -D_GNU_SOURCE -shared -fPIC -Wall -Icupti -Ibpf -I"$CUDA/include" cupti/*.c \
	-L"$CUDA/lib64" -L"$CUDA/lib" -Wl,-rpath,"$CUDA/lib64" -lcupti -lpthread -o "$out" 2>> "$log"
