# liveguard-bpf build. `make` builds build/liveguard-bpf; `make test` runs
# the host unit tests and the VM enforcement suite; `make demo` shows the
# guard at work in the VM. Every target installs what it needs first.
.DELETE_ON_ERROR:
.SUFFIXES:
# Build on every core; the test recipes themselves run one at a time.
MAKEFLAGS += -j$(shell nproc)
SHELL := /bin/bash

CLANG     ?= clang
BPFTOOL   ?= bpftool
# The machine the build is for: this one, or ARCH=arm64 (or aarch64) to
# cross-build for arm64 from x86-64 with Debian's cross toolchain and its
# multiarch -dev packages, into build/aarch64 apart from the native build.
# Each architecture has its own bpf/arch/ header and vmlinux.h.
HOST_ARCH := $(shell uname -m)
ARCH      ?= $(HOST_ARCH)
override ARCH := $(patsubst arm64,aarch64,$(patsubst amd64,x86_64,$(patsubst x86,x86_64,$(ARCH))))
BPF_TARGET_x86_64  := x86
BPF_TARGET_aarch64 := arm64
DEB_ARCH_x86_64    := amd64
DEB_ARCH_aarch64   := arm64
ifeq ($(BPF_TARGET_$(ARCH)),)
$(error liveguard-bpf builds for x86_64 and aarch64 (ARCH=arm64), not $(ARCH): another needs bpf/arch/$(ARCH).h and bpf/vmlinux/$(ARCH)/vmlinux.h)
endif
DEB_ARCH  := $(DEB_ARCH_$(ARCH))
TRIPLET   := $(ARCH)-linux-gnu
ifeq ($(ARCH),$(HOST_ARCH))
BUILD     := build
CXX       ?= g++
PKG_CONFIG := pkg-config
CROSS_DEPS :=
else
BUILD     := build/$(ARCH)
CXX       := $(TRIPLET)-g++
PKG_CONFIG := PKG_CONFIG_LIBDIR=/usr/lib/$(TRIPLET)/pkgconfig:/usr/share/pkgconfig pkg-config
CROSS_DEPS := g++-$(TRIPLET) $(addsuffix :$(DEB_ARCH),libbpf-dev libelf-dev zlib1g-dev libgtest-dev libtomlplusplus-dev libsystemd-dev)
endif
CXXFLAGS  ?= -O2 -g
CXXFLAGS  += -std=c++20 -Wall -Wextra -Werror=return-type -Wno-missing-field-initializers -I$(BUILD) -Iinclude -Iuserspace
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_TARGET_$(ARCH)) -Wall -Ibpf/vmlinux/$(ARCH) -Ibpf -Iinclude
BPF_SRCS   := $(wildcard bpf/*.bpf.c)
BPF_OBJS   := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
BPF_HEADERS := $(wildcard bpf/lib/*.h bpf/arch/*.h) include/liveguard/abi.h
# Found by pkg-config where the distribution puts them; the plain names
# where it has no .pc files.
# libsystemd (readiness, the watchdog) is linked into every build but the
# static one, which has no archive of it to link.
STATIC_LDLIBS := $(or $(shell $(PKG_CONFIG) --libs libbpf libelf zlib 2>/dev/null),-lbpf -lelf -lz)
LDLIBS    := $(STATIC_LDLIBS) $(or $(shell $(PKG_CONFIG) --libs libsystemd 2>/dev/null),-lsystemd)
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags libbpf libelf zlib libsystemd 2>/dev/null)
CXXFLAGS  += $(PKG_CFLAGS)
GTEST_LIBS := -lgtest -lpthread

# Debian packages the build, the tests and the VM need (the kernel's call
# numbers for arm64 and AArch32 for the unit test of bpf/arch/).
DEPS := clang llvm libbpf-dev bpftool libcli11-dev libtomlplusplus-dev nlohmann-json3-dev libgtest-dev libelf-dev zlib1g-dev libsystemd-dev \
        qemu-system-x86 busybox-static cpio s6 python3 python3-pytest python3-pytest-timeout python3-pytest-xdist python3-venv python3-pyflakes sudo psmisc iproute2 procps btrfs-progs tmux screen at podman crun conmon python3-docker curl \
        man-db groff-base \
        libclang-rt-14-dev \
        linux-libc-dev-arm64-cross linux-libc-dev-armhf-cross

# userspace/<concern>/*.cpp; cli/main.cpp holds main() and goes into the tool alone.
USERSPACE_SRCS := $(filter-out userspace/cli/main.cpp,$(wildcard userspace/*/*.cpp))
USERSPACE_OBJS := $(patsubst userspace/%.cpp,$(BUILD)/obj/%.o,$(USERSPACE_SRCS))
UNIT_SRCS      := $(wildcard tests/unit/*.cpp)
UNIT_OBJS      := $(patsubst tests/unit/%.cpp,$(BUILD)/obj/unit/%.o,$(UNIT_SRCS))
VM_SRCS        := $(wildcard tests/vm/*.cpp)
VM_OBJS        := $(patsubst tests/vm/%.cpp,$(BUILD)/obj/vm/%.o,$(VM_SRCS))
HEADERS        := $(wildcard include/liveguard/*.h userspace/*/*.h tests/vm/*.h) $(BUILD)/liveguard.skel.h $(BUILD)/gen/plugin_files.h

.PHONY: all deps test test-matrix test-arm64 test-arm64-short release unit-test vm-test demo bench fuzz clean vmlinux install uninstall deb wheel static dist rpm arch
all: $(BUILD)/liveguard-bpf

# Installs the missing ones of the Debian packages $(1) on Debian and
# Ubuntu (as root; apt-get update first); elsewhere checks what the build
# needs and installs it with dnf, zypper or pacman, or names it
# (dist/build-deps).
define install_missing
dist/build-deps $(1)
endef

deps: $(BUILD)/.deps-ok
# A cross build takes the target's -dev packages through dpkg's multiarch,
# which must know the architecture first.
$(BUILD)/.deps-ok: Makefile
	@mkdir -p $(BUILD)
	@if [ -n "$(CROSS_DEPS)" ] && command -v dpkg >/dev/null && \
	    ! dpkg --print-foreign-architectures | grep -qx '$(DEB_ARCH)'; then \
	  if [ "$$(id -u)" != 0 ]; then \
	    echo "make ARCH=$(ARCH) needs Debian's $(DEB_ARCH) packages: sudo dpkg --add-architecture $(DEB_ARCH), then make again" >&2; \
	    exit 1; \
	  fi; \
	  echo "adding the $(DEB_ARCH) architecture to dpkg, for its -dev packages"; \
	  dpkg --add-architecture $(DEB_ARCH) && apt-get update -qq || exit 1; \
	fi
	@$(call install_missing,$(DEPS) $(CROSS_DEPS))
	@touch $@

# One object per concern, linked into one object and one skeleton. The
# types come from the checked-in vmlinux.h (CO-RE relocations adapt them
# to the kernel that loads the programs); `make vmlinux` regenerates it
# from the running kernel.
$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(BPF_HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# Linking through bpftool drops DWARF, keeping the embedded object small.
$(BUILD)/liveguard.linked.o: $(BPF_OBJS)
	$(BPFTOOL) gen object $@ $^

$(BUILD)/liveguard.skel.h: $(BUILD)/liveguard.linked.o
	$(BPFTOOL) gen skeleton $< name liveguard_bpf > $@

# Another architecture's comes from its kernel's BTF (VMLINUX_BTF=FILE,
# e.g. /sys/kernel/btf/vmlinux copied out of an arm64 machine).
VMLINUX_BTF ?= $(if $(filter $(HOST_ARCH),$(ARCH)),/sys/kernel/btf/vmlinux)
vmlinux: | $(BUILD)/.deps-ok
	@[ -n "$(VMLINUX_BTF)" ] || { echo "make vmlinux ARCH=$(ARCH): this machine's BTF is $(HOST_ARCH)'s; give the $(ARCH) kernel's with VMLINUX_BTF=FILE" >&2; exit 1; }
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > bpf/vmlinux/$(ARCH)/vmlinux.h

$(BUILD)/obj/%.o: userspace/%.cpp $(HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

# The pytest plugin and its dist-info (the pytest11 entry point), next to
# the binary as they are installed next to it: `run` puts this directory on
# PYTHONPATH (base/install_paths.h). Installed into site-packages, pytest
# loads the plugin by itself.
PLUGIN_SRCS := $(shell find dist/python -type f -not -path '*/__pycache__/*')
# The plugin inside the binary too, for a binary that has it nowhere on
# disk (base/install_paths.h).
$(BUILD)/gen/plugin_files.h: $(PLUGIN_SRCS) dist/embed_plugin.py | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(PYTHON) dist/embed_plugin.py dist/python $@

$(BUILD)/python/.stamp: $(PLUGIN_SRCS)
	@rm -rf $(BUILD)/python && mkdir -p $(BUILD)/python
	cp -R dist/python/. $(BUILD)/python/
	@touch $@

# The system's interpreter, the one the system's pytest runs on: the
# plugin is registered in its site directory, and it packs the wheel. Not
# simply the first python3 on PATH, which may be a pyenv or virtualenv one.
PYTHON ?= $(or $(wildcard /usr/bin/python3),python3)

# The plugin as a wheel, for virtualenvs, which do not see the system's
# site directory: pip installs it offline.
PLUGIN_DISTINFO := $(notdir $(wildcard dist/python/*.dist-info))
WHEEL_NAME      := $(PLUGIN_DISTINFO:.dist-info=)-py3-none-any.whl
$(BUILD)/$(WHEEL_NAME): $(PLUGIN_SRCS) dist/wheel.py | $(BUILD)/.deps-ok
	$(PYTHON) dist/wheel.py dist/python $@
wheel: $(BUILD)/$(WHEEL_NAME)
all: $(BUILD)/$(WHEEL_NAME)

$(BUILD)/obj/unit/%.o: tests/unit/%.cpp $(HEADERS)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -DLIVEGUARD_SOURCE_DIR='"$(CURDIR)"' -c $< -o $@

$(BUILD)/obj/vm/%.o: tests/vm/%.cpp $(HEADERS)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

# Order-only: a changed plugin is copied again without relinking.
$(BUILD)/liveguard-bpf: $(BUILD)/obj/cli/main.o $(USERSPACE_OBJS) | $(BUILD)/python/.stamp
	$(CXX) $(CXXFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# One binary for every distribution (make static): libbpf, libelf and zlib
# linked in from Debian's -dev packages, which ship the archives; users
# and groups looked up without NSS modules, which a static binary cannot
# load (base/user_db.h); no libsystemd, of which Debian ships no archive:
# it does not notify systemd (service/service_manager.h), and the tarball
# carries a Type=forking unit for it. Stripped: a release binary, 7 MB
# instead of 43.
$(BUILD)/obj-static/%.o: userspace/%.cpp $(HEADERS)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -DLG_STATIC -c $< -o $@

STATIC_VARIANTS := base/user_db service/service_manager events/journald_sink
$(BUILD)/liveguard-bpf-static: $(BUILD)/obj/cli/main.o $(filter-out $(patsubst %,$(BUILD)/obj/%.o,$(STATIC_VARIANTS)),$(USERSPACE_OBJS)) $(patsubst %,$(BUILD)/obj-static/%.o,$(STATIC_VARIANTS))
	$(CXX) $(CXXFLAGS) -static -s $(LDFLAGS) $^ -o $@ $(STATIC_LDLIBS)

static: $(BUILD)/liveguard-bpf-static

# The release tarball (make dist): the static binary with everything
# `make install` puts beside it, and dist/install.sh, which installs it on
# any distribution (--prefix, default /usr/local).
VERSION   := $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)
DIST_NAME := liveguard-bpf-$(VERSION)-$(ARCH)
DIST_FILES := dist/install.sh dist/liveguard.toml dist/man/liveguard-bpf.8 dist/bash-completion/liveguard-bpf \
              dist/systemd/liveguard-bpf-static.service.in dist/s6/liveguard-bpf/run.in dist/s6/liveguard-bpf/type README.md
$(BUILD)/$(DIST_NAME).tar.gz: $(BUILD)/liveguard-bpf-static $(BUILD)/$(WHEEL_NAME) $(PLUGIN_SRCS) $(DIST_FILES)
	@rm -rf $(BUILD)/dist-stage && mkdir -p $(BUILD)/dist-stage/$(DIST_NAME)
	cd $(BUILD)/dist-stage/$(DIST_NAME) && mkdir -p man bash-completion systemd s6/liveguard-bpf && \
	  cp $(CURDIR)/dist/install.sh $(CURDIR)/dist/liveguard.toml $(CURDIR)/README.md . && \
	  cp $(CURDIR)/dist/man/liveguard-bpf.8 man/ && cp $(CURDIR)/dist/bash-completion/liveguard-bpf bash-completion/ && \
	  cp $(CURDIR)/dist/systemd/liveguard-bpf-static.service.in systemd/liveguard-bpf.service.in && \
	  cp $(CURDIR)/dist/s6/liveguard-bpf/run.in $(CURDIR)/dist/s6/liveguard-bpf/type s6/liveguard-bpf/ && \
	  cp -R $(CURDIR)/dist/python python && find python -name __pycache__ -prune -exec rm -rf {} + && \
	  cp $(CURDIR)/$(BUILD)/$(WHEEL_NAME) . && \
	  cp $(CURDIR)/$(BUILD)/liveguard-bpf-static liveguard-bpf
	tar -C $(BUILD)/dist-stage --sort=name --owner=0 --group=0 --numeric-owner -czf $@ $(DIST_NAME)
	@rm -rf $(BUILD)/dist-stage
	@echo "built $@"

dist: $(BUILD)/$(DIST_NAME).tar.gz

# What a release ships, for x86-64 and arm64 (cross-built from x86-64): the
# .deb of each in build/, the static binary's tarball of each in build/ and
# build/aarch64/. One at a time: each builds in the tree.
release:
	$(MAKE) deb
	$(MAKE) dist
	$(MAKE) ARCH=arm64 deb
	$(MAKE) ARCH=arm64 dist
	@ls build/liveguard-bpf_*.deb build/liveguard-bpf-*.tar.gz build/aarch64/liveguard-bpf-*.tar.gz

$(BUILD)/unit_tests: $(UNIT_OBJS) $(USERSPACE_OBJS)
	$(CXX) $(CXXFLAGS) $^ -o $@ $(LDLIBS) -lgtest_main $(GTEST_LIBS)

$(BUILD)/vm_tests: $(VM_OBJS) $(USERSPACE_OBJS)
	$(CXX) $(CXXFLAGS) $^ -o $@ $(LDLIBS) -lgtest_main $(GTEST_LIBS)

$(BUILD)/bench_restart_gap: tests/bench/restart_gap.cpp $(USERSPACE_OBJS) $(HEADERS)
	$(CXX) $(CXXFLAGS) tests/bench/restart_gap.cpp $(USERSPACE_OBJS) -o $@ $(LDLIBS)

# The floor the cost rows are read against: an empty program on every hook.
$(BUILD)/floor.bpf.o: tests/bench/floor.bpf.c | $(BUILD)/.deps-ok
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/floor.skel.h: $(BUILD)/floor.bpf.o
	$(BPFTOOL) gen object $(BUILD)/floor.linked.o $<
	$(BPFTOOL) gen skeleton $(BUILD)/floor.linked.o name floor_bpf > $@

$(BUILD)/bench_syscall_cost: tests/bench/syscall_cost.cpp $(BUILD)/floor.skel.h $(USERSPACE_OBJS) $(HEADERS)
	$(CXX) $(CXXFLAGS) tests/bench/syscall_cost.cpp $(USERSPACE_OBJS) -o $@ $(LDLIBS)

# The consumer benchmark's producer, run natively through BPF_PROG_TEST_RUN.
$(BUILD)/emitter.bpf.o: tests/bench/emitter.bpf.c include/liveguard/abi.h | $(BUILD)/.deps-ok
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/emitter.skel.h: $(BUILD)/emitter.bpf.o
	$(BPFTOOL) gen object $(BUILD)/emitter.linked.o $<
	$(BPFTOOL) gen skeleton $(BUILD)/emitter.linked.o name emitter_bpf > $@

$(BUILD)/bench_event_consumer: tests/bench/event_consumer.cpp $(BUILD)/emitter.skel.h $(USERSPACE_OBJS) $(HEADERS)
	$(CXX) $(CXXFLAGS) tests/bench/event_consumer.cpp $(USERSPACE_OBJS) -o $@ $(LDLIBS) -lutil

$(BUILD)/bench_journal_read: tests/bench/journal_read.cpp $(USERSPACE_OBJS) $(HEADERS)
	$(CXX) $(CXXFLAGS) tests/bench/journal_read.cpp $(USERSPACE_OBJS) -o $@ $(LDLIBS)

# Static and freestanding: the execve rows measure the exec path alone.
$(BUILD)/bench_exec_chain: tests/bench/exec_chain.c
	$(CLANG) -O2 -static -nostdlib -fno-stack-protector -fno-builtin -o $@ $<

BENCH_BINS := $(BUILD)/liveguard-bpf $(BUILD)/bench_restart_gap $(BUILD)/bench_syscall_cost $(BUILD)/bench_exec_chain \
              $(BUILD)/bench_event_consumer $(BUILD)/bench_journal_read

# Benchmarks run in the VM, every cost measured side by side in one run:
# once counted in instructions (QEMU -icount), once timed.
# BENCH_ARGS=--json for JSON; --rounds N, --scale F, --flood N, --rows KEY,...;
# --profile adds what each BPF program costs per call (run-time statistics).
bench: $(BENCH_BINS)
	tests/bench/run $(BENCH_ARGS)

unit-test: $(BUILD)/unit_tests
	$(BUILD)/unit_tests

# The enforcement suite needs a kernel that loads BPF LSM programs: it
# runs in a VM on the pinned kernel (vmtest/kernel-package).
vm-test: $(BUILD)/liveguard-bpf $(BUILD)/vm_tests $(BUILD)/tools/prometheus-node-exporter
	vmtest/run tests/vm/suite

# Debian's node_exporter for the metrics test in the VM, unpacked from its
# package and not installed: nothing of it runs on this machine.
$(BUILD)/tools/prometheus-node-exporter: | $(BUILD)/.deps-ok
	@rm -rf $(BUILD)/tools/ne && mkdir -p $(BUILD)/tools/ne
	cd $(BUILD)/tools/ne && apt-get download -q prometheus-node-exporter:$(DEB_ARCH) 2>&1 | grep -v '^W: Download is performed unsandboxed' || true
	dpkg-deb -x $(BUILD)/tools/ne/prometheus-node-exporter_*.deb $(BUILD)/tools/ne/root
	cp $(BUILD)/tools/ne/root/usr/bin/prometheus-node-exporter $@
	@rm -rf $(BUILD)/tools/ne

test: $(BUILD)/liveguard-bpf $(BUILD)/liveguard-bpf-static $(BUILD)/unit_tests $(BUILD)/vm_tests $(BUILD)/tools/prometheus-node-exporter
	@tests/run-all

# The whole VM suite on every kernel and attach form (longer than `make test`,
# which runs a subset on the second kernel).
test-matrix: $(BUILD)/liveguard-bpf $(BUILD)/liveguard-bpf-static $(BUILD)/unit_tests $(BUILD)/vm_tests $(BUILD)/tools/prometheus-node-exporter
	@LIVEGUARD_MATRIX=full tests/run-all

# The same suites on arm64 (tests/run-all, LIVEGUARD_TEST_ARCH=arm64): the
# tool, its VM tests and its package cross-built, run in emulated arm64 VMs
# on Debian's arm64 kernels. Longer than make test under emulation, and
# apart from it.
test-arm64:
	$(MAKE) ARCH=arm64 build/aarch64/liveguard-bpf build/aarch64/liveguard-bpf-static build/aarch64/vm_tests build/aarch64/tools/prometheus-node-exporter deb
	@LIVEGUARD_TEST_ARCH=arm64 tests/run-all

# CI's arm64 step after make test: the signal suite and its control run in
# one arm64 VM (lsm form, Debian 13's 6.12), against the cross-built tool.
# make test and the whole of test-arm64 do not fit in CI's time together.
test-arm64-short:
	$(MAKE) ARCH=arm64 build/aarch64/liveguard-bpf build/aarch64/vm_tests
	@LIVEGUARD_TEST_ARCH=arm64 LIVEGUARD_ARM64_SHORT=1 LIVEGUARD_VM_LANES=1 tests/run-all

demo: $(BUILD)/liveguard-bpf
	vmtest/run tests/demo/run

# `make install` (PREFIX, default /usr/local; DESTDIR for staging). The
# binary finds its pytest plugin in ../lib/liveguard-bpf/python
# (base/install_paths.h); the plugin goes to PYTHON's site directory too,
# where every pytest on that interpreter loads it, and as a wheel to
# share/liveguard-bpf, for virtualenvs. The systemd unit and the s6 run
# script name the installed binary. The policy itself,
# /etc/liveguard/liveguard.toml, is the administrator's: its commented
# example goes to the doc directory.
# `make uninstall` with the same PREFIX and DESTDIR removes exactly these
# files, then the directories that held only them.
PREFIX        ?= /usr/local
SBINDIR       := $(PREFIX)/sbin
PKGLIBDIR     := $(PREFIX)/lib/liveguard-bpf
UNITDIR       ?= $(PREFIX)/lib/systemd/system
DOCDIR        := $(PREFIX)/share/doc/liveguard-bpf
MAN8DIR       := $(PREFIX)/share/man/man8
COMPLETIONDIR := $(PREFIX)/share/bash-completion/completions
SHAREDIR      := $(PREFIX)/share/liveguard-bpf
S6DIR         := $(SHAREDIR)/s6/liveguard-bpf
# PYTHON's site directory under PREFIX/lib (lib before lib64: the plugin is
# pure Python), as PYTHON itself lists them: for PREFIX=/usr Debian's gives
# /usr/lib/python3/dist-packages, Fedora's, Arch's and openSUSE's
# /usr/lib/python3.X/site-packages; for /usr/local Debian's gives
# /usr/local/lib/python3.X/dist-packages. A PREFIX with none under it gets
# the site-packages directory PYTHON's posix_prefix scheme names for it,
# which is not on PYTHON's path (install says so). Asked once, when install
# or uninstall needs it.
SITEDIR_PY    := import site, sys, sysconfig; \
                 p = sys.argv[1].rstrip("/"); \
                 d = [x for x in site.getsitepackages() if x.startswith(p + "/lib")]; \
                 d.sort(key=lambda x: not x.startswith(p + "/lib/")); \
                 print(d[0] if d else sysconfig.get_path("purelib", "posix_prefix", {"base": p, "platbase": p}))
PYTHON_SITEDIR ?= $(eval PYTHON_SITEDIR := $(shell $(PYTHON) -c '$(SITEDIR_PY)' '$(PREFIX)' 2>/dev/null))$(PYTHON_SITEDIR)
PLUGIN_FILES  := $(patsubst dist/python/%,%,$(PLUGIN_SRCS))
PLUGIN_DIRS    = $(PKGLIBDIR)/python $(PYTHON_SITEDIR)
# What Python caches of the plugin's modules where it could write them
# (a pytest run as root): removed with the plugin.
PLUGIN_CACHES  = $(foreach d,$(PLUGIN_DIRS),$(foreach m,$(basename $(filter-out %/%,$(filter %.py,$(PLUGIN_FILES)))),\
                   $(d)/__pycache__/$(m).*.pyc))
# What uninstall removes.
INSTALLED      = $(SBINDIR)/liveguard-bpf $(foreach d,$(PLUGIN_DIRS),$(addprefix $(d)/,$(PLUGIN_FILES))) \
                 $(SHAREDIR)/$(WHEEL_NAME) \
                 $(UNITDIR)/liveguard-bpf.service $(S6DIR)/run $(S6DIR)/type \
                 $(DOCDIR)/README.md $(DOCDIR)/liveguard.toml $(MAN8DIR)/liveguard-bpf.8 \
                 $(COMPLETIONDIR)/liveguard-bpf
# Deepest first, so that a parent is tried after its children; of the site
# directory only what the plugin brought (its dist-info, a cache of it).
OWN_DIRS       = $(sort $(foreach d,$(PLUGIN_DIRS),$(dir $(addprefix $(d)/,$(filter %/%,$(PLUGIN_FILES)))))) \
                 $(addsuffix /__pycache__,$(PLUGIN_DIRS)) $(PKGLIBDIR)/python $(PKGLIBDIR) \
                 $(S6DIR) $(dir $(S6DIR)) $(SHAREDIR) $(DOCDIR)
# Without PYTHON's answer there is nowhere to put the plugin, nor to remove
# it from.
define need_sitedir
@if [ -z "$(PYTHON_SITEDIR)" ]; then \
  echo "make $@: cannot ask $(PYTHON) for its site directory under $(PREFIX): set PYTHON to the system's python3, or PYTHON_SITEDIR to the directory" >&2; \
  exit 1; \
fi
endef
SUBST         := sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@DOCDIR@|$(DOCDIR)|g'

install: $(BUILD)/liveguard-bpf $(BUILD)/$(WHEEL_NAME)
	$(need_sitedir)
	install -D -m 0755 $(BUILD)/liveguard-bpf $(DESTDIR)$(SBINDIR)/liveguard-bpf
	@for d in $(PLUGIN_DIRS); do \
	  for f in $(PLUGIN_FILES); do install -D -m 0644 dist/python/$$f $(DESTDIR)$$d/$$f || exit 1; done; \
	done
	@$(PYTHON) -c 'import sys; sys.exit(sys.argv[1] not in sys.path)' '$(PYTHON_SITEDIR)' 2>/dev/null || \
	  echo "note: $(PYTHON_SITEDIR) is not on $(PYTHON)'s path, so pytest does not load the plugin by itself (liveguard-bpf run still does): to register it, install with PREFIX=/usr or with PYTHON_SITEDIR set to one of $(PYTHON)'s site directories; in a virtualenv, pip install $(SHAREDIR)/$(WHEEL_NAME)" >&2
	install -D -m 0644 $(BUILD)/$(WHEEL_NAME) $(DESTDIR)$(SHAREDIR)/$(WHEEL_NAME)
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(S6DIR)
	$(SUBST) dist/systemd/liveguard-bpf.service.in >$(DESTDIR)$(UNITDIR)/liveguard-bpf.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/liveguard-bpf.service
	$(SUBST) dist/s6/liveguard-bpf/run.in >$(DESTDIR)$(S6DIR)/run
	chmod 0755 $(DESTDIR)$(S6DIR)/run
	install -m 0644 dist/s6/liveguard-bpf/type $(DESTDIR)$(S6DIR)/type
	install -D -m 0644 README.md $(DESTDIR)$(DOCDIR)/README.md
	install -D -m 0644 dist/liveguard.toml $(DESTDIR)$(DOCDIR)/liveguard.toml
	install -D -m 0644 dist/man/liveguard-bpf.8 $(DESTDIR)$(MAN8DIR)/liveguard-bpf.8
	install -D -m 0644 dist/bash-completion/liveguard-bpf $(DESTDIR)$(COMPLETIONDIR)/liveguard-bpf

# The RPM package (dist/rpm/liveguard-bpf.spec), built in place with
# Debian's rpmbuild from this tree's build, into build/: what Fedora and
# openSUSE build from the source tarball with their own libraries. Its
# plugin goes where this machine's system python3 looks under /usr;
# rpm's brp-compress needs bash, which Debian's /bin/sh is not.
RPM_DEPS := rpm rpmlint
rpm: $(BUILD)/liveguard-bpf $(BUILD)/unit_tests $(BUILD)/$(WHEEL_NAME)
	@$(call install_missing,$(RPM_DEPS))
	@rm -rf $(BUILD)/rpmbuild
	rpmbuild -bb --build-in-place --nodeps --quiet \
	  --define "_topdir $(CURDIR)/$(BUILD)/rpmbuild" --define "_rpmdir $(CURDIR)/$(BUILD)" \
	  --define "_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm" \
	  --define "python3_sitelib $(shell /usr/bin/python3 -c '$(SITEDIR_PY)' /usr 2>/dev/null)" \
	  --define "__python3 /usr/bin/python3" \
	  --define "__brp_compress /bin/bash %{_rpmconfigdir}/brp-compress %{?_prefix}" \
	  dist/rpm/liveguard-bpf.spec
	@rm -rf $(BUILD)/rpmbuild
	@ls $(BUILD)/liveguard-bpf-*.rpm

# The Arch package (dist/arch/PKGBUILD), made with Debian's makepkg into
# build/ from this tree's build, staged by `make install` first; on Arch it
# builds from a source tarball with Arch's own libraries. makepkg does not
# run as root: as root it runs as nobody, in a directory of its own under
# /tmp (the tree may be where nobody can read).
ARCH_DEPS := makepkg pacman-package-manager zstd libarchive-tools
arch: $(BUILD)/liveguard-bpf $(BUILD)/$(WHEEL_NAME)
	@$(call install_missing,$(ARCH_DEPS))
	@rm -f $(BUILD)/liveguard-bpf-*.pkg.tar.zst
	@work=$$(mktemp -d /tmp/liveguard-arch.XXXXXX) && trap 'rm -rf "$$work"' EXIT && \
	  $(MAKE) --no-print-directory -s DEPS= install DESTDIR=$$work/staged PREFIX=/usr SBINDIR=/usr/bin \
	    UNITDIR=/usr/lib/systemd/system PYTHON_SITEDIR="$(shell /usr/bin/python3 -c '$(SITEDIR_PY)' /usr 2>/dev/null)" >/dev/null && \
	  install -D -m 0644 dist/liveguard.toml $$work/staged/etc/liveguard/liveguard.toml && \
	  install -D -m 0644 debian/copyright $$work/staged/usr/share/licenses/liveguard-bpf/copyright && \
	  cp dist/arch/PKGBUILD dist/arch/liveguard-bpf.install $$work/ && cd $$work && \
	  as=$$([ "$$(id -u)" = 0 ] && chown -R nobody . && echo runuser -u nobody --); \
	  $$as env HOME=$$work LIVEGUARD_STAGED=$$work/staged PKGEXT=.pkg.tar.zst PKGDEST=$$work \
	    makepkg --nodeps --force --noconfirm --nocolor >makepkg.log 2>&1 || { tail -n 20 makepkg.log >&2; exit 1; }; \
	  mv $$work/liveguard-bpf-*.pkg.tar.zst $(CURDIR)/$(BUILD)/
	@ls $(BUILD)/liveguard-bpf-*.pkg.tar.zst

# A Debian package (debian/), built in place with Debian's own tools,
# reusing this tree's build; the .deb, .buildinfo and .changes land in
# build/. Installs the packaging tools first (as root).
DEB_DEPS := debhelper dh-python dpkg-dev fakeroot lintian
# ARCH=arm64 cross-builds the arm64 package (dpkg-buildpackage -a). The
# packages of both land in build/.
deb: $(BUILD)/liveguard-bpf
	@$(call install_missing,$(DEB_DEPS))
	dpkg-buildpackage -b -us -uc -a$(DEB_ARCH) --buildinfo-option=-u$(CURDIR)/build --changes-option=-u$(CURDIR)/build \
	  --buildinfo-file=$(CURDIR)/build/liveguard-bpf_$(DEB_ARCH).buildinfo --changes-file=$(CURDIR)/build/liveguard-bpf_$(DEB_ARCH).changes
	@debian/rules clean >/dev/null
	@ls build/liveguard-bpf_*_$(DEB_ARCH).deb

# With DESTDIR, the directories install created on the way down are
# removed too when empty, up to DESTDIR itself (a staging tree ends empty);
# without it, only liveguard-bpf's own directories.
uninstall:
	$(need_sitedir)
	rm -f $(addprefix $(DESTDIR),$(INSTALLED)) $(addprefix $(DESTDIR),$(PLUGIN_CACHES))
	@for d in $(OWN_DIRS); do rmdir $(DESTDIR)$$d 2>/dev/null || true; done
	@if [ -n "$(DESTDIR)" ]; then \
	  for f in $(INSTALLED); do \
	    d=$$(dirname $$f); \
	    while [ "$$d" != / ] && [ "$$d" != . ]; do \
	      if [ -d $(DESTDIR)$$d ]; then rmdir $(DESTDIR)$$d 2>/dev/null || break; fi; \
	      d=$$(dirname $$d); \
	    done; \
	  done; \
	fi

# Fuzzing: a libFuzzer target (tests/fuzz/) for every parser of outside
# input, built with clang's sanitizers in $(BUILD)/fuzz, apart from the
# normal build. Each target runs FUZZ_SECONDS on a fresh copy of its
# committed seeds; a crashing input is kept in $(BUILD)/fuzz/crashes-NAME/
# (across runs) and fails the run, as does an input taking over 10 s (a
# hang). FUZZ_TARGETS=policy runs one.
FUZZ_SECONDS  ?= 60
FUZZ_CXX      ?= clang++
FUZZ_CXXFLAGS := -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
                 -Iinclude -Iuserspace
FUZZ_TARGETS  ?= pidfile s6_status policy mountinfo proc_stat json test_id elf_symbol
FUZZ_HEADERS  := $(wildcard include/liveguard/*.h userspace/*/*.h)

# The sources each target needs, and no more.
$(BUILD)/fuzz/pidfile_fuzz: $(BUILD)/fuzz/obj/policy/pidfile.o
$(BUILD)/fuzz/s6_status_fuzz: $(BUILD)/fuzz/obj/policy/s6_status.o
$(BUILD)/fuzz/policy_fuzz: $(BUILD)/fuzz/obj/policy/policy.o
$(BUILD)/fuzz/mountinfo_fuzz: $(addprefix $(BUILD)/fuzz/obj/base/,cgroup.o proc.o error.o)
$(BUILD)/fuzz/proc_stat_fuzz: $(BUILD)/fuzz/obj/base/proc.o
$(BUILD)/fuzz/json_fuzz: $(addprefix $(BUILD)/fuzz/obj/,base/json.o base/json_members.o base/clock.o events/event_format.o events/journal_record.o)
$(BUILD)/fuzz/test_id_fuzz: $(addprefix $(BUILD)/fuzz/obj/,events/event_details.o events/session_info.o watcher/watcher_state.o base/cgroup.o base/clock.o base/proc.o base/live_environ.o base/elf_symbol.o base/json.o base/json_members.o base/error.o base/pid_namespaces.o)
$(BUILD)/fuzz/elf_symbol_fuzz: $(addprefix $(BUILD)/fuzz/obj/base/,elf_symbol.o error.o)

$(BUILD)/fuzz/obj/%.o: userspace/%.cpp $(FUZZ_HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) $(FUZZ_CXXFLAGS) -c $< -o $@

$(BUILD)/fuzz/%_fuzz: tests/fuzz/%_fuzz.cpp $(FUZZ_HEADERS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) $(FUZZ_CXXFLAGS) $< $(filter %.o,$^) -o $@

# One summary line per target: executions, edge coverage (cov), features
# (ft) and crashing inputs, from libFuzzer's final report.
fuzz: $(patsubst %,$(BUILD)/fuzz/%_fuzz,$(FUZZ_TARGETS))
	@failed=; \
	for t in $(FUZZ_TARGETS); do \
	  corpus=$(BUILD)/fuzz/corpus-$$t; crashes=$(BUILD)/fuzz/crashes-$$t; log=$(BUILD)/fuzz/$$t.log; \
	  rm -rf $$corpus; mkdir -p $$corpus $$crashes; cp tests/fuzz/corpus/$$t/* $$corpus/; \
	  echo "fuzz $$t: $(FUZZ_SECONDS) s, log in $$log"; \
	  $(BUILD)/fuzz/$${t}_fuzz -max_total_time=$(FUZZ_SECONDS) -timeout=10 -print_final_stats=1 \
	    -artifact_prefix=$$crashes/ $$corpus >$$log 2>&1; rc=$$?; \
	  n=$$(grep -cE 'Test unit written to .*/(crash|leak|timeout|oom)-' $$log); \
	  awk -v t=$$t -v n=$$n ' \
	    /^#[0-9]+/ && / cov: / { runs = substr($$1, 2); \
	      for (i = 2; i < NF; i++) { if ($$i == "cov:") cov = $$(i + 1); if ($$i == "ft:") ft = $$(i + 1) } } \
	    /^stat::number_of_executed_units:/ { runs = $$2 } \
	    END { printf "fuzz %s: %s runs, cov %s, ft %s, %d %s\n", t, runs, cov, ft, n, n == 1 ? "crash" : "crashes" }' $$log; \
	  if [ $$rc != 0 ] || [ $$n != 0 ]; then failed="$$failed $$t"; grep -E 'runtime error|Assertion .* failed|==ERROR|Test unit written' $$log | head -5; fi; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: failed:$$failed (inputs in $(BUILD)/fuzz/crashes-NAME/)" >&2; exit 1; fi

clean:
	rm -rf $(BUILD)/obj $(BUILD)/obj-static $(BUILD)/liveguard-bpf $(BUILD)/liveguard-bpf-static $(BUILD)/liveguard-bpf-*.tar.gz $(BUILD)/liveguard-bpf-*.rpm $(BUILD)/liveguard-bpf-*.pkg.tar.zst $(BUILD)/dist-stage $(BUILD)/rpmbuild $(BUILD)/unit_tests $(BUILD)/vm_tests \
	       $(BUILD)/bpf $(BUILD)/gen $(BUILD)/python $(BUILD)/$(WHEEL_NAME) $(BUILD)/*.o $(BUILD)/*.skel.h $(BUILD)/.deps-ok $(BUILD)/bench_* \
	       $(BUILD)/fuzz
