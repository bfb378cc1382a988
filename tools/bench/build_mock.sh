#!/usr/bin/env bash
# Builds the mock libcuda and the driver-API workload into DIR with gcc, for
# the benchmarks that run without a GPU driver in the way (flood.sh,
# probe_cost.sh): on the GPU machine, where the project's build tools are
# absent. From the repository root:
#   tools/bench/build_mock.sh DIR    -> DIR/libcuda.so.1, DIR/cuda_workload
# Every exported function starts with endbr64 (CET, as distributions build
# by default), which the recorder probes past, then push %rbp (frame
# pointers, no shrink wrapping): an instruction the kernel emulates, so a
# probe hit costs one trap as on a driver entry that starts so, not a trap
# and a single step (tools/gpu/first_insns.py tells which kind an entry is).
set -u
dir=$1
CUDA=${CUDA_HOME:-/usr/local/cuda}
CFLAGS="-O2 -fcf-protection=full -fno-omit-frame-pointer -fno-shrink-wrap -std=gnu11 -D_GNU_SOURCE -fPIC -Itests/mock"
[ -f "$CUDA/include/cuda.h" ] && CFLAGS="$CFLAGS -I$CUDA/include -DGT_HAVE_CUDA_H"
gcc $CFLAGS -shared -Wl,-soname,libcuda.so.1 tests/mock/libcuda_mock*.c -lpthread \
	-o "$dir/libcuda.so.1" || exit 1
gcc $CFLAGS tests/mock/cuda_workload*.c -ldl -lpthread -o "$dir/cuda_workload" || exit 1
