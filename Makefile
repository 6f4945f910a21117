# liveguard-bpf build. `make` builds build/liveguard-bpf; `make test` runs
# the host unit tests and the VM enforcement suite; `make demo` shows the
# guard at work in the VM. Every target installs what it needs first.
.DELETE_ON_ERROR:
.SUFFIXES:
SHELL := /bin/bash

BUILD     := build
CLANG     ?= clang
BPFTOOL   ?= bpftool
CXX       ?= g++
CXXFLAGS  ?= -O2 -g
CXXFLAGS  += -std=c++20 -Wall -Wextra -Werror=return-type -Wno-missing-field-initializers -I$(BUILD) -Iinclude -Iuserspace
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -I$(BUILD) -Iinclude
LDLIBS    := -lbpf -lelf -lz
GTEST_LIBS := -lgtest -lpthread

# Debian packages the build, the tests and the VM need.
DEPS := clang llvm libbpf-dev bpftool libcli11-dev libtomlplusplus-dev libgtest-dev libelf-dev zlib1g-dev \
        qemu-system-x86 busybox-static cpio s6 python3 python3-pytest python3-pytest-timeout sudo psmisc iproute2 procps

USERSPACE_SRCS := $(filter-out userspace/main.cpp,$(wildcard userspace/*.cpp))
USERSPACE_OBJS := $(patsubst userspace/%.cpp,$(BUILD)/obj/%.o,$(USERSPACE_SRCS))
UNIT_SRCS      := $(wildcard tests/unit/*.cpp)
UNIT_OBJS      := $(patsubst tests/unit/%.cpp,$(BUILD)/obj/unit/%.o,$(UNIT_SRCS))
VM_SRCS        := $(wildcard tests/vm/*.cpp)
VM_OBJS        := $(patsubst tests/vm/%.cpp,$(BUILD)/obj/vm/%.o,$(VM_SRCS))
HEADERS        := $(wildcard include/liveguard/*.h userspace/*.h tests/vm/*.h) $(BUILD)/liveguard.skel.h

.PHONY: all deps test unit-test vm-test demo bench clean
all: $(BUILD)/liveguard-bpf

# Installs missing Debian packages (as root; apt-get update first).
deps: $(BUILD)/.deps-ok
$(BUILD)/.deps-ok: Makefile
	@mkdir -p $(BUILD)
	@missing=$$(for p in $(DEPS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  if [ "$$(id -u)" != 0 ]; then echo "need root to install: $$missing (sudo make deps)" >&2; exit 1; fi; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
	@touch $@

# Types of the running kernel for CO-RE; relocations adapt to the target.
$(BUILD)/vmlinux.h: | $(BUILD)/.deps-ok
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(BUILD)/liveguard.bpf.o: bpf/liveguard.bpf.c include/liveguard/abi.h $(BUILD)/vmlinux.h
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# Linking through bpftool drops DWARF, keeping the embedded object small.
$(BUILD)/liveguard.linked.o: $(BUILD)/liveguard.bpf.o
	$(BPFTOOL) gen object $@ $<

$(BUILD)/liveguard.skel.h: $(BUILD)/liveguard.linked.o
	$(BPFTOOL) gen skeleton $< name liveguard_bpf > $@

$(BUILD)/obj/%.o: userspace/%.cpp $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

$(BUILD)/obj/unit/%.o: tests/unit/%.cpp $(HEADERS)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -DLIVEGUARD_SOURCE_DIR='"$(CURDIR)"' -c $< -o $@

$(BUILD)/obj/vm/%.o: tests/vm/%.cpp $(HEADERS)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

$(BUILD)/liveguard-bpf: $(BUILD)/obj/main.o $(USERSPACE_OBJS)
	$(CXX) $(CXXFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/unit_tests: $(UNIT_OBJS) $(USERSPACE_OBJS)
	$(CXX) $(CXXFLAGS) $^ -o $@ $(LDLIBS) -lgtest_main $(GTEST_LIBS)

$(BUILD)/vm_tests: $(VM_OBJS) $(USERSPACE_OBJS)
	$(CXX) $(CXXFLAGS) $^ -o $@ $(LDLIBS) -lgtest_main $(GTEST_LIBS)

$(BUILD)/bench_restart_gap: tests/bench/restart_gap.cpp $(USERSPACE_OBJS) $(HEADERS)
	$(CXX) $(CXXFLAGS) tests/bench/restart_gap.cpp $(USERSPACE_OBJS) -o $@ $(LDLIBS)

# Benchmarks run in the VM, every cost measured side by side in one run.
bench: $(BUILD)/liveguard-bpf $(BUILD)/bench_restart_gap
	vmtest/run tests/bench/run

unit-test: $(BUILD)/unit_tests
	$(BUILD)/unit_tests

# The enforcement suite needs a kernel that loads BPF LSM programs: it
# runs in a VM on the pinned kernel (vmtest/kernel-package).
vm-test: $(BUILD)/liveguard-bpf $(BUILD)/vm_tests
	vmtest/run tests/vm/suite

test: $(BUILD)/liveguard-bpf $(BUILD)/unit_tests $(BUILD)/vm_tests
	@tests/run-all

demo: $(BUILD)/liveguard-bpf
	vmtest/run tests/demo/run

clean:
	rm -rf $(BUILD)/obj $(BUILD)/liveguard-bpf $(BUILD)/unit_tests $(BUILD)/vm_tests \
	       $(BUILD)/*.o $(BUILD)/*.skel.h $(BUILD)/vmlinux.h $(BUILD)/.deps-ok
