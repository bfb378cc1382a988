# gtrace-bpf build.  `make` -> ./gtrace-bpf; `make STATIC=1` -> fully static;
# `make test`; `make install PREFIX=...`; `make clean`; `V=1` shows commands.
.DELETE_ON_ERROR:
# skeletons are inputs of every user object, not throw-away intermediates
.SECONDARY:
.DEFAULT_GOAL := all

OUTPUT    ?= .output
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
CPPFLAGS += -I$(OUTPUT) -Iuser -Ibpf
LIBS     := -lbpf -lelf -lz -lzstd -liberty
ifeq ($(STATIC),1)
LDFLAGS  += -static
endif
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror -Wno-gnu-variable-sized-type-not-at-end -MMD -MP \
	      -I$(OUTPUT) -Ibpf -Ivmlinux/$(ARCH)

BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.bpf.o,$(BPF_SRCS))
SKELS     := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.skel.h,$(BPF_SRCS))
USER_SRCS := $(wildcard user/*.c)
USER_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS))
LIB_OBJS  := $(filter-out $(OUTPUT)/user/main.o,$(USER_OBJS))
LIBGT     := $(OUTPUT)/libgtrace.a

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))
MOCK_DIR  := $(OUTPUT)/mock
MOCK_LIB  := $(MOCK_DIR)/libcuda.so.1
WORKLOAD  := $(MOCK_DIR)/cuda_workload
IOCTL_WL  := $(MOCK_DIR)/ioctl_workload
# The mock and the workload take their prototypes from cuda.h when the CUDA
# toolkit is installed, so that the mock exports the real signatures.
MOCK_CFLAGS := -O1 -g -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -fPIC -Itests/mock \
	$(if $(wildcard $(CUDA_HOME)/include/cuda.h),-I$(CUDA_HOME)/include -DGT_HAVE_CUDA_H)

.PHONY: FORCE all clean test unit-test integration-test install deps gpu-check mock
all: gtrace-bpf

$(OUTPUT) $(OUTPUT)/user $(OUTPUT)/tests $(MOCK_DIR):
	$(Q)mkdir -p $@

# BPF objects and skeletons
$(OUTPUT)/%.bpf.o: bpf/%.bpf.c $(VMLINUX) | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o | $(OUTPUT)
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# userspace
$(OUTPUT)/user/%.o: user/%.c $(SKELS) | $(OUTPUT)/user
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(CPPFLAGS) -c $< -o $@

$(LIBGT): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# relink when switching between static and dynamic linking
$(OUTPUT)/link-mode: FORCE | $(OUTPUT)
	$(Q)echo 'STATIC=$(STATIC)' | cmp -s - $@ || echo 'STATIC=$(STATIC)' > $@

gtrace-bpf: $(OUTPUT)/user/main.o $(LIBGT) $(OUTPUT)/link-mode
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(LDFLAGS) $(OUTPUT)/user/main.o $(LIBGT) $(LIBS) -o $@

# tests
$(OUTPUT)/tests/%: tests/unit/%.c $(LIBGT) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(CPPFLAGS) $< $(LIBGT) $(LIBS) -lcmocka -o $@

$(MOCK_LIB): tests/mock/libcuda_mock.c tests/mock/cuda_compat.h | $(MOCK_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(MOCK_CFLAGS) -shared -Wl,-soname,libcuda.so.1 $< -lpthread -o $@

$(WORKLOAD): tests/mock/cuda_workload.c tests/mock/cuda_compat.h bpf/gtrace_api.h | $(MOCK_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(MOCK_CFLAGS) $< -ldl -lpthread -o $@

$(IOCTL_WL): tests/mock/ioctl_workload.c | $(MOCK_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(MOCK_CFLAGS) $< -o $@

mock: $(MOCK_LIB) $(WORKLOAD) $(IOCTL_WL)

unit-test: $(UNIT_BINS)
	$(Q)tests/run-tests.sh --unit

integration-test: gtrace-bpf mock
	$(Q)tests/run-tests.sh --integration

test: gtrace-bpf $(UNIT_BINS) mock
	$(Q)tests/run-tests.sh

gpu-check:
	$(Q)tools/gpu-check.sh

install: gtrace-bpf
	$(Q)install -d $(DESTDIR)$(PREFIX)/bin
	$(Q)install -m 0755 gtrace-bpf $(DESTDIR)$(PREFIX)/bin/gtrace-bpf

deps:
	$(Q)tools/install-deps.sh

clean:
	$(call msg,CLEAN,)
	$(Q)rm -rf $(OUTPUT) gtrace-bpf

-include $(wildcard $(OUTPUT)/*.d $(OUTPUT)/user/*.d $(OUTPUT)/tests/*.d)
