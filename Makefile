# gtrace-bpf build.  `make` -> ./gtrace-bpf (+ .output/libgtrace-cupti.so, the
# CUPTI agent, when $(CUDA_HOME) has CUPTI); `make STATIC=1` -> fully static;
# `make test`; `make install PREFIX=...`; `make clean`; `V=1` shows commands.
# `make SANITIZE=1` -> .output-san/gtrace-bpf and unit tests under ASAN+UBSAN
# (`make test SANITIZE=1` runs them); `make fuzz` -> libFuzzer harnesses.
.DELETE_ON_ERROR:
# skeletons are kept, not deleted as intermediates once their objects are built
.SECONDARY:
.DEFAULT_GOAL := all

# the sanitized build lives apart, so that the normal one stays as it is
ifeq ($(SANITIZE),1)
OUTPUT    ?= .output-san
else
OUTPUT    ?= .output
endif
CC        ?= cc
CLANG     ?= clang
BPFTOOL   ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
PREFIX    ?= /usr/local
CUDA_HOME ?= /usr/local/cuda
ARCH      := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
VMLINUX   := vmlinux/$(ARCH)/vmlinux.h

ifeq ($(V),1)
Q :=
msg =
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

CFLAGS   ?= -O2 -g
CFLAGS   += -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -MMD -MP
# user/ includes name their stage ("format/trace_file.h"); the ABI headers
# their folder ("bpf/gtrace_events.h"), which -iquote keeps out of <...>
CPPFLAGS += -I$(OUTPUT) -Iuser -iquote .
# the readers (dump, export, stats, merge) need no libbpf/libelf; the
# recorder does
READ_LIBS := -lz -lzstd -liberty -lm
LIBS      := -lbpf -lelf $(READ_LIBS)
ifeq ($(STATIC),1)
LDFLAGS  += -static
endif
# STATIC=libs: libbpf, libelf and the compressors linked in, glibc shared:
# for a machine without libbpf whose glibc is this one's or newer. A fully
# static binary cannot dlopen the machine's libnvidia-ml (it brings its own
# glibc), so GPU metrics need this build or a dynamic one there.
ifeq ($(STATIC),libs)
LIBS      := -Wl,-Bstatic -lbpf -lelf -lz -lzstd -liberty -Wl,-Bdynamic -lm
READ_LIBS := -Wl,-Bstatic -lz -lzstd -liberty -Wl,-Bdynamic -lm
endif
# ASAN+UBSAN on the user-space programs and their tests (the BPF side and the
# CUPTI agent, which runs inside someone else's process, are left alone); a
# UB report aborts rather than scrolls by. The sanitizer runtimes are shared
# objects, so no STATIC=1.
ifeq ($(SANITIZE),1)
ifeq ($(STATIC),1)
$(error STATIC=1 and SANITIZE=1 do not mix: the sanitizer runtimes are shared libraries)
endif
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
endif
# the libFuzzer build (make fuzz, in $(OUTPUT)/fuzz): the readers' library
# instrumented for coverage, linked into tests/fuzz/*.c
ifeq ($(FUZZ),1)
CC        := $(CLANG)
SAN_FLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
endif
CFLAGS   += $(SAN_FLAGS)
LDFLAGS  += $(SAN_FLAGS)
# the recorder: ./gtrace-bpf, or beside the sanitized build's objects
BIN       := $(if $(SAN_FLAGS),$(OUTPUT)/gtrace-bpf,gtrace-bpf)
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Werror -Wno-gnu-variable-sized-type-not-at-end -MMD -MP \
	      -I$(OUTPUT) -Ibpf -Ivmlinux/$(ARCH)

BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.bpf.o,$(BPF_SRCS))
SKELS     := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.skel.h,$(BPF_SRCS))
USER_SRCS := $(wildcard user/*/*.c user/*/*/*.c)
USER_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS))
# three parts: the command line, the recorder and the daemon that drives
# it (libbpf, libelf) and the readers, a library of their own that links
# without libbpf
CLI_OBJS  := $(filter $(OUTPUT)/user/cli/%,$(USER_OBJS))
REC_OBJS  := $(filter $(OUTPUT)/user/record/% $(OUTPUT)/user/daemon/%,$(USER_OBJS))
READ_OBJS := $(filter-out $(CLI_OBJS) $(REC_OBJS),$(USER_OBJS))
LIBREAD   := $(OUTPUT)/libgtrace-read.a
LIBREC    := $(OUTPUT)/libgtrace-record.a

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))
# tests of record/ and daemon/ modules link the recorder's library and
# libbpf; the rest the readers' only, which shows that they need no libbpf
REC_TESTS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(shell grep -lE '^\#include "(record|daemon)/' $(UNIT_SRCS)))
MOCK_DIR  := $(OUTPUT)/mock
MOCK_LIB  := $(MOCK_DIR)/libcuda.so.1
NCCL_MOCK := $(MOCK_DIR)/libnccl.so.2
WORKLOAD  := $(MOCK_DIR)/cuda_workload
IOCTL_WL  := $(MOCK_DIR)/ioctl_workload
STACK_WL  := $(MOCK_DIR)/stack_workload
# a process whose main thread ends before its other thread's calls
LEADER_WL := $(MOCK_DIR)/leader_exit
# the injector's tests: a library to load, a program to load it into (and a
# static build of it, which is refused)
INJECT_LIB := $(MOCK_DIR)/libinject_probe.so
INJECT_WL  := $(MOCK_DIR)/inject_target
INJECT_WL_STATIC := $(MOCK_DIR)/inject_target_static
# a thread waiting inside a "driver" (a libcuda.so.1 of the tests'), which
# the injector must pass over
INJECT_DRV := $(MOCK_DIR)/drvwait/libcuda.so.1
INJECT_DRV_WL := $(MOCK_DIR)/inject_drv_target
POOL_LIB  := $(MOCK_DIR)/libpool.so
# NVML for --gpu-metrics, in a folder of its own (GTRACE_NVML_LIB names it)
NVML_MOCK := $(MOCK_DIR)/nvml/libnvidia-ml.so.1
# The mock and the workload take their prototypes from cuda.h when the CUDA
# toolkit is installed, so that the mock exports the real signatures. Built
# for CET: every entry is an endbr64, which the recorder probes past; with
# frame pointers, so that the instruction after it is a push, as in the
# driver's libcuda (the kernel emulates a push, it single-steps most other
# instructions: the overhead budget's tests measure the common case).
MOCK_CFLAGS := -O1 -g -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -fPIC -fcf-protection=full -fno-omit-frame-pointer -Itests/mock \
	$(if $(wildcard $(CUDA_HOME)/include/cuda.h),-I$(CUDA_HOME)/include -DGT_HAVE_CUDA_H)

# The CUPTI agent (cupti/) and its unit test need the toolkit's CUPTI headers.
# The agent is always a shared object (STATIC=1 does not apply to it); the
# rpath names both lib64 and lib, since toolkits ship one or the other.
HAVE_CUPTI   := $(if $(wildcard $(CUDA_HOME)/include/cupti.h),1)
CUPTI_AGENT  := $(OUTPUT)/libgtrace-cupti.so
CUPTI_OBJS   := $(patsubst cupti/%.c,$(OUTPUT)/cupti/%.o,$(wildcard cupti/*.c))
CUPTI_CFLAGS  = $(filter-out $(SAN_FLAGS),$(CFLAGS)) -fPIC -fvisibility=hidden -I$(CUDA_HOME)/include -Icupti -Ibpf -iquote .
CUPTI_LDLIBS := -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/lib -lcupti \
	-Wl,-rpath,$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib -ldl -lpthread
ifneq ($(HAVE_CUPTI),1)
UNIT_BINS := $(filter-out $(OUTPUT)/tests/test_cupti_convert $(OUTPUT)/tests/test_cupti_ring,$(UNIT_BINS))
endif

.PHONY: FORCE all clean test test-build fuzz fuzz-build unit-test integration-test install deps gpu-check mock check-layers
all: $(BIN)
all: cupti-agent

$(OUTPUT) $(OUTPUT)/user $(OUTPUT)/tests $(MOCK_DIR):
	$(Q)mkdir -p $@

# BPF objects and skeletons
$(OUTPUT)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(VMLINUX) | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o | $(OUTPUT)
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# userspace: the skeletons only have to exist before the first build (order
# only); afterwards each object's -MMD file names the ones it includes, so a
# changed .bpf.c rebuilds the objects of its own skeleton, not all of them
$(OUTPUT)/user/%.o: user/%.c | $(SKELS) $(OUTPUT)/user
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(CPPFLAGS) -c $< -o $@

# the report's page (user/report/page/) is built into report_assets.o
# with .incbin, which the compiler's dependency files do not see: its files
# are named here, their folder passed to the assembler
REPORT_ASSETS := $(wildcard user/report/page/*.html user/report/page/*.css \
	user/report/page/*.js user/report/page/vendor/uplot/*)
$(OUTPUT)/user/report/report_assets.o: $(REPORT_ASSETS)
$(OUTPUT)/user/report/report_assets.o: CPPFLAGS += -DGT_REPORT_DIR='"$(abspath user/report/page)"'

# made anew when the Makefile changes too: a module moved to another library
# must leave this one (an archive keeps members no object replaces)
$(LIBREAD): $(READ_OBJS) Makefile
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $(filter %.o,$^)

$(LIBREC): $(REC_OBJS) Makefile
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $(filter %.o,$^)

# relink when switching between static and dynamic linking
$(OUTPUT)/link-mode: FORCE | $(OUTPUT)
	$(Q)echo 'STATIC=$(STATIC)' | cmp -s - $@ || echo 'STATIC=$(STATIC)' > $@

$(BIN): $(CLI_OBJS) $(LIBREC) $(LIBREAD) $(OUTPUT)/link-mode
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(LDFLAGS) $(CLI_OBJS) $(LIBREC) $(LIBREAD) $(LIBS) -o $@

# tests
$(OUTPUT)/tests/%: tests/unit/%.c $(LIBREAD) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(CPPFLAGS) $< $(LIBREAD) $(LDFLAGS) $(READ_LIBS) -lcmocka -o $@

$(REC_TESTS): $(OUTPUT)/tests/%: tests/unit/%.c $(LIBREC) $(LIBREAD) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(CPPFLAGS) $< $(LIBREC) $(LIBREAD) $(LDFLAGS) $(LIBS) -lcmocka -o $@

# fuzz harnesses (FUZZ=1 only: make fuzz builds them in $(OUTPUT)/fuzz): the
# readers' library alone, seeds from generated traces and tests/fuzz/corpus/
FUZZ_SRCS  := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS  := $(patsubst tests/fuzz/%.c,$(OUTPUT)/%,$(FUZZ_SRCS))
FUZZ_SEEDS := $(OUTPUT)/seeds
FUZZ_MAIN  := $(abspath $(FUZZ_SEEDS))/main.gtrace

$(FUZZ_BINS): $(OUTPUT)/%: tests/fuzz/%.c tests/fuzz/fuzz_common.h $(LIBREAD) | $(OUTPUT)
	$(call msg,FUZZ,$@)
	$(Q)$(CC) $(CFLAGS) -fsanitize=fuzzer $(CPPFLAGS) -DFUZZ_MAIN_TRACE='"$(FUZZ_MAIN)"' \
		$< $(LIBREAD) $(READ_LIBS) -o $@

$(OUTPUT)/tools/%: tools/%.c $(LIBREAD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(CPPFLAGS) $< $(LIBREAD) $(LDFLAGS) $(READ_LIBS) -o $@

$(OUTPUT)/tools/gen_trace: $(wildcard tools/gen_trace*.c) tools/gen_trace_int.h $(LIBREAD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(CPPFLAGS) $(filter %.c,$^) $(LIBREAD) $(LDFLAGS) $(READ_LIBS) -o $@

$(OUTPUT)/tools/mkseed: tests/fuzz/mkseed.c tests/fuzz/fuzz_common.h $(LIBREAD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(CPPFLAGS) $< $(LIBREAD) $(LDFLAGS) $(READ_LIBS) -o $@

# small generated traces (the spools' main trace among them), as files, as
# files with damaged tails and as recipes, and spools answering their calls;
# big.gtrace (64 processes, hostile names of 2,000 bytes) makes analyze's document over
# 256 KiB, long.gtrace (300 kernels of 2,000-byte names) diff's
$(FUZZ_SEEDS)/stamp: $(OUTPUT)/tools/gen_trace $(OUTPUT)/tools/mkseed
	$(call msg,SEEDS,$(FUZZ_SEEDS))
	$(Q)rm -rf $(FUZZ_SEEDS) && mkdir -p $(FUZZ_SEEDS)
	$(Q)$(OUTPUT)/tools/gen_trace -p 1 -k 4 $(FUZZ_MAIN) 120 2 > /dev/null
	$(Q)$(OUTPUT)/tools/gen_trace -s 2 -p 2 -k 6 $(FUZZ_SEEDS)/gen2.gtrace 400 3 > /dev/null
	$(Q)$(OUTPUT)/tools/gen_trace -s 3 -p 2 -k 4 -c range $(FUZZ_SEEDS)/range.gtrace 300 2 > /dev/null
	$(Q)$(OUTPUT)/tools/gen_trace -s 4 -p 1 -k 4 -c light $(FUZZ_SEEDS)/light.gtrace 300 2 > /dev/null
	$(Q)$(OUTPUT)/tools/gen_trace -s 5 -H -g -p 64 -k 20 -N 2000 $(FUZZ_SEEDS)/big.gtrace 4000 2 > /dev/null
	$(Q)$(OUTPUT)/tools/gen_trace -s 6 -g -p 1 -k 300 -N 2000 -L 100 $(FUZZ_SEEDS)/long.gtrace 3000 2 > /dev/null
	$(Q)$(OUTPUT)/tools/mkseed $(FUZZ_SEEDS) $(FUZZ_MAIN) $(FUZZ_SEEDS)/gen2.gtrace \
		$(FUZZ_SEEDS)/range.gtrace $(FUZZ_SEEDS)/light.gtrace \
		$(FUZZ_SEEDS)/big.gtrace $(FUZZ_SEEDS)/long.gtrace \
		$(wildcard tests/fuzz/corpus/traces/*.gtrace)
	$(Q)touch $@

fuzz-build: $(FUZZ_BINS) $(FUZZ_SEEDS)/stamp

# the probe offsets, checked on the mock's endbr64 entries
$(OUTPUT)/tests/test_elf_syms: $(MOCK_LIB)
$(OUTPUT)/tests/test_elf_syms: CPPFLAGS += -DGT_MOCK_LIB='"$(MOCK_LIB)"'

# the injector's: its library and programs
$(OUTPUT)/tests/test_inject: $(INJECT_LIB) $(INJECT_WL) $(INJECT_WL_STATIC) $(INJECT_DRV) $(INJECT_DRV_WL)
$(OUTPUT)/tests/test_inject: CPPFLAGS += -DGT_INJECT_LIB='"$(abspath $(INJECT_LIB))"' \
	-DGT_INJECT_WL='"$(abspath $(INJECT_WL))"' -DGT_INJECT_WL_STATIC='"$(abspath $(INJECT_WL_STATIC))"' \
	-DGT_INJECT_DRV='"$(abspath $(INJECT_DRV))"' -DGT_INJECT_DRV_WL='"$(abspath $(INJECT_DRV_WL))"'

# the remote-script load: the injector's library, tools/python314.sh
$(OUTPUT)/tests/test_py_remote: $(INJECT_LIB)
$(OUTPUT)/tests/test_py_remote: CPPFLAGS += -DGT_INJECT_LIB='"$(abspath $(INJECT_LIB))"' -DGT_ROOT='"$(abspath .)"'

# the sampler over the mock NVML
$(OUTPUT)/tests/test_gpu_metrics: $(NVML_MOCK)
$(OUTPUT)/tests/test_gpu_metrics: CPPFLAGS += -DGT_NVML_MOCK='"$(abspath $(NVML_MOCK))"'

$(MOCK_LIB): $(wildcard tests/mock/libcuda_mock*.c) tests/mock/libcuda_mock.h tests/mock/cuda_compat.h \
	     tests/mock/mock_export.h | $(MOCK_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(MOCK_CFLAGS) -shared -Wl,-soname,libcuda.so.1 $(filter %.c,$^) -lpthread -o $@

$(NCCL_MOCK): tests/mock/libnccl_mock.c tests/mock/nccl_compat.h tests/mock/cuda_compat.h tests/mock/mock_export.h | $(MOCK_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(MOCK_CFLAGS) -shared -Wl,-soname,libnccl.so.2 $< -ldl -lpthread -o $@

$(WORKLOAD): $(wildcard tests/mock/cuda_workload*.c) tests/mock/cuda_workload.h tests/mock/cuda_compat.h \
	     tests/mock/nccl_compat.h bpf/gtrace_api.h | $(MOCK_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(MOCK_CFLAGS) $(filter %.c,$^) -ldl -lpthread -o $@

$(IOCTL_WL): tests/mock/ioctl_workload.c | $(MOCK_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(MOCK_CFLAGS) $< -o $@

$(INJECT_LIB): tests/mock/inject_probe.c | $(MOCK_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(MOCK_CFLAGS) -shared -Wl,-soname,libinject_probe.so $< -o $@

$(INJECT_WL): tests/mock/inject_target.c | $(MOCK_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(MOCK_CFLAGS) $< -o $@

$(INJECT_WL_STATIC): tests/mock/inject_target.c | $(MOCK_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(MOCK_CFLAGS) -static $< -o $@

$(INJECT_DRV): tests/mock/inject_drv_wait.c | $(MOCK_DIR)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(MOCK_CFLAGS) -shared -Wl,-soname,libcuda.so.1 $< -o $@

$(INJECT_DRV_WL): tests/mock/inject_drv_target.c | $(MOCK_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(MOCK_CFLAGS) $< -ldl -lpthread -o $@

$(STACK_WL): tests/mock/stack_workload.c | $(MOCK_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(MOCK_CFLAGS) $< -ldl -o $@

$(LEADER_WL): tests/mock/leader_exit.c | $(MOCK_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(MOCK_CFLAGS) $< -ldl -lpthread -o $@

$(POOL_LIB): tests/mock/pool_lib.c | $(MOCK_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(MOCK_CFLAGS) -shared -fPIC $< -ldl -lpthread -o $@

$(NVML_MOCK): tests/mock/libnvml_mock.c user/record/gpum/nvml_abi.h | $(MOCK_DIR)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(MOCK_CFLAGS) -iquote . -shared -Wl,-soname,libnvidia-ml.so.1 $< -o $@

mock: $(MOCK_LIB) $(NCCL_MOCK) $(WORKLOAD) $(IOCTL_WL) $(STACK_WL) $(LEADER_WL) $(POOL_LIB) $(NVML_MOCK) \
      $(INJECT_LIB) $(INJECT_WL) $(INJECT_WL_STATIC) $(INJECT_DRV) $(INJECT_DRV_WL)

# CUPTI agent
.PHONY: cupti-agent install-cupti cupti-check cupti-mock
ifeq ($(HAVE_CUPTI),1)
cupti-agent: $(CUPTI_AGENT)

$(OUTPUT)/cupti:
	$(Q)mkdir -p $@

$(OUTPUT)/cupti/%.o: cupti/%.c | $(OUTPUT)/cupti
	$(call msg,CC,$@)
	$(Q)$(CC) $(CUPTI_CFLAGS) -c $< -o $@

$(CUPTI_AGENT): $(CUPTI_OBJS)
	$(call msg,LIB,$@)
	$(Q)$(CC) -shared -fPIC -Wl,-z,defs -Wl,-soname,libgtrace-cupti.so $^ $(CUPTI_LDLIBS) -o $@

# the conversion only: no libcupti at run time
$(OUTPUT)/tests/cupti_convert.o: cupti/convert.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -I$(CUDA_HOME)/include -Icupti -Ibpf -iquote . -c $< -o $@

$(OUTPUT)/tests/test_cupti_convert: tests/unit/test_cupti_convert.c $(OUTPUT)/tests/cupti_convert.o | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -I$(CUDA_HOME)/include -Icupti -Ibpf -iquote . $(filter %.c %.o,$^) -lcmocka -pthread -o $@

$(OUTPUT)/tests/test_cupti_ring: tests/unit/test_cupti_ring.c $(OUTPUT)/tests/cupti_convert.o | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -I$(CUDA_HOME)/include -Icupti -Ibpf -iquote . $(filter %.c %.o,$^) -lcmocka -pthread -o $@

# the agent over a mock libcupti (cupti/testing): no GPU needed.  cupti-mock
# builds the mock (under the soname the agent needs, so that
# LD_LIBRARY_PATH=$(CUPTI_MOCK) puts it under the agent) and its driver;
# cupti-check runs the agent's cases over them.
CUPTI_MOCK := $(OUTPUT)/cupti/mock
# built under a name of its own and renamed into place: a test that runs
# make cupti-check beside others must never leave a program that loads the
# mock a file half written (cannot load the agent: file too short)
cupti-mock: $(CUPTI_AGENT) | $(OUTPUT)/cupti
	$(Q)so=$$(readelf -d $(CUPTI_AGENT) | sed -n 's/.*NEEDED.*\[\(libcupti[^]]*\)\].*/\1/p'); \
	new=.new.$$$$; mkdir -p $(CUPTI_MOCK) && echo "$$so { global: *; };" > $(CUPTI_MOCK)/$$new.map && \
	$(CC) -O1 -g -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -fPIC -shared -I$(CUDA_HOME)/include \
		-Icupti/testing -Wl,-soname,$$so -Wl,--version-script=$(CUPTI_MOCK)/$$new.map \
		cupti/testing/libcupti_mock.c -lpthread -o $(CUPTI_MOCK)/$$new.so && \
	mv -f $(CUPTI_MOCK)/$$new.map $(CUPTI_MOCK)/libcupti.map && mv -f $(CUPTI_MOCK)/$$new.so $(CUPTI_MOCK)/$$so && \
	$(CC) -O1 -g -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -Icupti/testing \
		cupti/testing/agent_driver.c -L$(CUPTI_MOCK) -l:$$so -Wl,-rpath,$(abspath $(CUPTI_MOCK)) \
		-ldl -o $(CUPTI_MOCK)/$$new.driver && mv -f $(CUPTI_MOCK)/$$new.driver $(CUPTI_MOCK)/agent_driver

cupti-check: cupti-mock
	$(Q)cupti/testing/run.sh $(CUPTI_AGENT) $(CUPTI_MOCK)/agent_driver

install-cupti: $(CUPTI_AGENT)
	$(Q)install -d $(DESTDIR)$(PREFIX)/lib/gtrace-bpf
	$(Q)install -m 0755 $(CUPTI_AGENT) $(DESTDIR)$(PREFIX)/lib/gtrace-bpf/libgtrace-cupti.so
else
cupti-agent install-cupti cupti-check cupti-mock:
	@echo "CUPTI not found in $(CUDA_HOME): building without the CUPTI agent"
endif

# the tests run the build of this OUTPUT: its unit tests, its mock, its $(BIN)
RUN_TESTS := GT_OUTPUT=$(OUTPUT) GTRACE=$(abspath $(BIN)) tests/run-tests.sh
SAN_OUTPUT := .output-san
FUZZ_OUTPUT := $(OUTPUT)/fuzz
# seconds per harness: FUZZ_SECONDS for make fuzz, TEST_FUZZ_SECONDS in make test
FUZZ_SECONDS ?= 60
TEST_FUZZ_SECONDS ?= 20

# gen_trace: the integration tests of the readers write their traces with it;
# az_fixture those of analyze (the planted patterns of tests/fixtures/)
# trace_args: test_shed reads the raw registers of calls with it
# the CUPTI agent over its mock (test_daemon_cupti) when the toolkit has CUPTI
test-build: $(BIN) $(UNIT_BINS) mock $(OUTPUT)/tools/gen_trace $(OUTPUT)/tools/az_fixture $(OUTPUT)/tools/trace_args $(if $(HAVE_CUPTI),cupti-mock)

unit-test: $(UNIT_BINS)
	$(Q)$(RUN_TESTS) --unit

integration-test: $(BIN) mock $(if $(HAVE_CUPTI),cupti-mock)
	$(Q)$(RUN_TESTS) --integration

# make test: the tests of this build, of the sanitized build and the fuzzers
# for a bounded time, counted together; make test SANITIZE=1: the sanitized
# build's alone. The three builds are prerequisites, so that make -j shares
# its jobs among them.
ifeq ($(SAN_FLAGS),)
.PHONY: test-san-build test-fuzz-build
test-san-build:
	$(Q)$(MAKE) --no-print-directory SANITIZE=1 OUTPUT=$(SAN_OUTPUT) test-build

test-fuzz-build:
	$(Q)$(MAKE) --no-print-directory FUZZ=1 OUTPUT=$(FUZZ_OUTPUT) fuzz-build

test: check-layers test-build test-san-build test-fuzz-build
	$(Q)GT_FUZZ_SECONDS=$(TEST_FUZZ_SECONDS) $(RUN_TESTS) --unit --integration --fuzz --sanitized $(SAN_OUTPUT)

fuzz:
	$(Q)$(MAKE) --no-print-directory FUZZ=1 OUTPUT=$(FUZZ_OUTPUT) fuzz-build
	$(Q)GT_FUZZ_SECONDS=$(FUZZ_SECONDS) $(RUN_TESTS) --fuzz
else
test: check-layers test-build
	$(Q)$(RUN_TESTS)
endif

# a lower stage of user/ including a higher one fails the build
check-layers:
	$(Q)tools/check-layers.sh

gpu-check:
	$(Q)tools/gpu-check.sh

install: $(BIN) install-cupti
	$(Q)install -d $(DESTDIR)$(PREFIX)/bin
	$(Q)install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/gtrace-bpf
	$(Q)install -d $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	$(Q)install -m 0644 docs/man/gtrace-bpf.1 $(DESTDIR)$(PREFIX)/share/man/man1/gtrace-bpf.1
	$(Q)install -m 0644 tools/completion/gtrace-bpf.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/gtrace-bpf
	$(Q)install -d $(DESTDIR)$(PREFIX)/lib/systemd/system
	$(Q)sed 's|@BINDIR@|$(PREFIX)/bin|' tools/systemd/gtrace-bpf.service > $(DESTDIR)$(PREFIX)/lib/systemd/system/gtrace-bpf.service
	$(Q)chmod 0644 $(DESTDIR)$(PREFIX)/lib/systemd/system/gtrace-bpf.service

deps:
	$(Q)tools/install-deps.sh

clean:
	$(call msg,CLEAN,)
	$(Q)rm -rf $(OUTPUT) $(BIN) $(if $(SAN_FLAGS),,$(SAN_OUTPUT))

-include $(wildcard $(OUTPUT)/*.d $(OUTPUT)/user/*/*.d $(OUTPUT)/user/*/*/*.d $(OUTPUT)/tests/*.d)
-include $(wildcard $(OUTPUT)/cupti/*.d)
