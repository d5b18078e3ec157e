# rdma-sim: QEMU PCI device model of a RoCEv2 RDMA NIC, guest driver, tests.
# See README.md. Main targets: deps (root), all (default), check, help.

# Debian packages needed to build and test (installed by `make deps`).
# scripts/deps.sh adds linux-headers-<ABI> for the current Debian kernel ABI.
# seabios, ipxe-qemu, qemu-system-data: firmware for our uninstalled QEMU.
# shellcheck: make lint.  clang-14, libclang-rt-14-dev (libFuzzer, the
# sanitizers), llvm-14 (symbolizer, coverage reports): make fuzz, make check.
# dkms: tests/dkms/check-dkms.sh builds and installs the driver with it in
# private trees (make -C guest-driver dkms-install uses it for real).
# qemu-system-x86: Debian's own QEMU, which make bench runs Soft-RoCE on (the
# baseline a user would pick) and compares our QEMU build's virtio-net with.
# nvme-cli, fio: tests/vm/t-nvme-rdma.sh (NVMe over RDMA between two guests:
# nvme connect on the host, fio with data verification).
# gnuplot-nox: make bench's plot of bandwidth and latency by message size.
# patchelf: programs of newer Debian suites (the Linux 7.x kbuild tools and
# compiler) made to run here with their own loader (scripts/debian-archive.sh).
DEPS_PACKAGES := \
	gcc libc6-dev make pkg-config python3 python3-venv ninja-build meson flex bison \
	zlib1g-dev libglib2.0-dev libpixman-1-dev libfdt-dev libslirp-dev libcap-ng-dev libattr1-dev \
	dpkg-dev patch patchelf \
	seabios ipxe-qemu qemu-system-data qemu-system-x86 \
	cpio busybox-static kmod zstd xz-utils \
	rdma-core ibverbs-utils ibverbs-providers libibverbs-dev librdmacm-dev \
	perftest rdmacm-utils iproute2 python3-pyverbs \
	iputils-ping ethtool tmux iperf3 gnuplot-nox \
	nvme-cli fio nfs-kernel-server nfs-common open-iscsi tshark \
	openmpi-bin libopenmpi-dev ucx-utils openssh-client libwrap0 \
	shellcheck \
	clang-14 libclang-rt-14-dev llvm-14 \
	dkms

REPO       := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD      := $(REPO)/build

# QEMU device set: "rdma-sim" = only what we need (configs/rdma-sim-x86_64.mak),
# "default" = all of QEMU's default x86_64 devices (slower to build).
QEMU_DEVICES ?= rdma-sim

# QEMU configure flags. Changing them re-runs configure on the next `make`.
QEMU_CONFIGURE_FLAGS := \
	--target-list=x86_64-softmmu \
	--without-default-features \
	--enable-kvm --enable-slirp \
	--enable-virtfs --enable-attr --enable-cap-ng \
	--enable-vhost-kernel --enable-vhost-net \
	--disable-docs --disable-gtk --disable-sdl --disable-vnc --disable-opengl \
	--disable-spice --disable-xen --disable-tools --disable-guest-agent \
	--disable-user --disable-curses \
	--disable-install-blobs \
	--firmwarepath=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu
# QEMU_VERSION: the QEMU rdma-sim is built into, from Debian's sources:
# 7.2 (Debian 12), 10.0 (Debian 13) or 10.2 (unstable's 10.2.2).  Each has
# its own source tree and build directory, build/qemu-VERSION-build; every
# target that runs QEMU uses the one chosen.  The generations (a QEMU with
# a guest kernel) and the default are in configs/generations.
include $(REPO)/configs/generations
QEMU_VERSIONS := $(GEN_OLDEST_QEMU) $(GEN_MIDDLE_QEMU) $(GEN_DEFAULT_QEMU)
QEMU_DEFAULT_VERSION := $(GEN_DEFAULT_QEMU)
QEMU_VERSION ?= $(QEMU_DEFAULT_VERSION)
qemu_build_dir = $(BUILD)/qemu-$(1)-build
ifeq ($(filter $(QEMU_VERSION),$(QEMU_VERSIONS)),)
$(error QEMU_VERSION must be one of $(QEMU_VERSIONS), not "$(QEMU_VERSION)")
endif
ifeq ($(QEMU_VERSION),7.2)
# Removed from QEMU in 9.1
QEMU_CONFIGURE_FLAGS += --disable-rdma --disable-pvrdma
else
# meson >= 1.5, in a Python environment of its own that both 10.x use
# (scripts/qemu-tree.sh fetch)
QEMU_CONFIGURE_FLAGS += --python=$(BUILD)/qemu-python/bin/python3
endif
# DEBUG_INFO=1: QEMU with debug information (-g), for gdb with source lines.
# Off by default: it costs a fifth of the build's time, and make check builds
# QEMU four times (the fuzzing and sanitizer build, whose reports need line
# numbers, always has it).  Symbols stay either way: backtraces name functions.
ifeq ($(DEBUG_INFO),1)
BUILD_DEBUG_FLAGS :=
else
BUILD_DEBUG_FLAGS := --extra-cflags=-g0
endif
# WERROR=1: build QEMU (all of it, incl. our device and qtests) with -Werror.
# Off by default: QEMU's warnings are on either way, and a Debian update of the
# QEMU source must not break our build over a warning in QEMU's own code.
ifeq ($(WERROR),1)
QEMU_CONFIGURE_FLAGS += --enable-werror
endif
ifeq ($(QEMU_DEVICES),default)
QEMU_CONFIGURE_FLAGS += --with-default-devices
else ifeq ($(QEMU_DEVICES),rdma-sim)
QEMU_CONFIGURE_FLAGS += --without-default-devices --with-devices-x86_64=rdma-sim
else
$(error QEMU_DEVICES must be "rdma-sim" or "default")
endif

# The sanitizer and fuzzing build (make check, make fuzz): clang with
# libFuzzer's instrumentation, the same devices and features, and ASan and
# UBSan in rdma-sim's code (scripts/fuzz-cc.sh says where and why not in
# all of QEMU).  Besides qemu-fuzz-x86_64 it builds a sanitized
# qemu-system-x86_64, which make check's deb12 VM tests run on, and qtests.
FUZZ_CONFIGURE_FLAGS := $(QEMU_CONFIGURE_FLAGS) --cc=$(REPO)/scripts/fuzz-cc.sh \
	--cxx=clang++-14 --enable-fuzzing \
	--extra-ldflags="-fsanitize=address -fsanitize=undefined"
# SANITIZE=1: the check suites against the sanitized build (scripts/check.sh)
SANITIZE ?=
export SANITIZE
SAN_PREREQS := $(if $(filter 1,$(SANITIZE)),qemu-fuzz)
# make fuzz: seconds per target; one target (rdma-sim-driver, rdma-sim-wire)
FUZZ_TIME ?= 300
FUZZ_TARGET ?=
# make fuzz-coverage: the fuzz targets with clang's line coverage instead
COV_CONFIGURE_FLAGS := $(QEMU_CONFIGURE_FLAGS) --cc=clang-14 --cxx=clang++-14 \
	--enable-fuzzing --extra-cflags=-fprofile-instr-generate \
	--extra-cflags=-fcoverage-mapping --extra-ldflags=-fprofile-instr-generate

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := all

LOGS       := $(BUILD)/logs
QEMU_BUILD := $(call qemu_build_dir,$(QEMU_VERSION))
QEMU_LOGS  := $(LOGS)/qemu-$(QEMU_VERSION)
# The fuzzing, sanitizer and coverage builds are QEMU 7.2's (below)
FUZZ_BUILD := $(BUILD)/qemu-fuzz
COV_BUILD  := $(BUILD)/qemu-cov
QEMU_BIN   := $(QEMU_BUILD)/qemu-system-x86_64
JOBS       ?= $(shell nproc)

# QEMU source: $(QEMU_SRC) if given, else Debian's, fetched into build/
# (scripts/qemu-tree.sh fetch): the directory it unpacks into, in $(2).
qemu_src_dir = $(2)/$(if $(filter 7.2,$(1)),qemu-7.2+dfsg,qemu-$(1))
ifeq ($(origin QEMU_SRC),undefined)
QSRC       := $(call qemu_src_dir,$(QEMU_VERSION),$(BUILD))
QEMU_FETCH := 1
else
QSRC       := $(abspath $(QEMU_SRC))
QEMU_FETCH :=
endif

# Extra prerequisites of `make vmtest` (e.g. the guest driver); others may add.
VMTEST_PREREQS ?=

# The guest-side test programs (built on the host, run in the guests).
GUEST_TESTS := $(REPO)/tests/vm/progs

export RDMA_SIM_ROOT  := $(REPO)
export QEMU_BINARY    := $(QEMU_BIN)
export QEMU_BUILD
export QEMU_VERSION

.PHONY: all demo bench deps driver lint cycles unit server qemu qemu-all qemu-locked qemu-compile qemu-compile-locked qemu-source qemu-tree qemu-configure qtest vmtest smoke check clean distclean help \
	qemu-fuzz qemu-fuzz-locked qemu-cov qemu-cov-locked qemu-plain qemu-plain-locked fuzz fuzz-coverage

all: qemu

# Several people may run make in the same tree at once: fetching,
# configuring and ninja run under the lock of the build directory
# (DIR.lock, which the qtest suite takes to build its programs too), one
# make at a time per directory.  Different versions build side by side:
# make check builds the older generations while it tests the default.
qemu:
	@mkdir -p $(BUILD)
	@flock $(QEMU_BUILD).lock $(MAKE) --no-print-directory qemu-locked

deps:
	$(REPO)/scripts/deps.sh $(DEPS_PACKAGES)

# The main job in one command: two VMs with rdma-sim on a host UDP link run
# ibv_rc_pingpong and ib_write_bw.  Installs missing packages (as root) and
# builds what is missing first.
demo:
	@$(REPO)/scripts/deps.sh --if-missing $(DEPS_PACKAGES)
	@$(MAKE) --no-print-directory qemu
	$(REPO)/scripts/demo.sh

# rdma-sim against Linux Soft-RoCE in identical TCG guest pairs; the table
# goes to build/bench/bench-latest.md.
bench:
	@$(REPO)/scripts/deps.sh --if-missing $(DEPS_PACKAGES)
	@$(MAKE) --no-print-directory qemu-all qemu-plain
	$(REPO)/scripts/bench.sh

# The guest driver, as the VM tests build it.
driver:
	$(MAKE) -C $(REPO)/guest-driver

# QEMU's checkpatch.pl comes with the QEMU source.
lint: qemu-source
	$(REPO)/scripts/lint.sh $(QSRC)

# Call cycles between the files of the device and of the driver
# (scripts/call-cycles.py): make lint fails on any.
cycles:
	$(REPO)/scripts/call-cycles.py $(REPO)/hw/rdma-sim $(REPO)/guest-driver

qemu-source:
ifneq ($(QEMU_FETCH),)
	$(REPO)/scripts/qemu-tree.sh fetch $(BUILD) $(QSRC) $(QEMU_VERSION)
else
	@test -f $(QSRC)/configure || { echo "error: QEMU_SRC=$(QSRC) is not a QEMU source tree" >&2; exit 1; }
endif

qemu-tree: qemu-source
	$(REPO)/scripts/qemu-tree.sh link $(QSRC) $(REPO) $(QEMU_VERSION)

qemu-configure: qemu-tree
	$(REPO)/scripts/qemu-configure.sh $(QSRC) $(QEMU_BUILD) $(QEMU_LOGS) $(QEMU_CONFIGURE_FLAGS) $(BUILD_DEBUG_FLAGS)

qemu-locked: qemu-configure
	ninja -C $(QEMU_BUILD) -j$(JOBS) qemu-system-x86_64
	@echo "built $(QEMU_BIN)"

# rdma-sim's own code - the device, the qtests and their libqos - compiled
# against QEMU_VERSION, not linked: what make check builds of the middle
# generation (scripts/check.sh, deb13).  A warning in our files fails it.
qemu-compile:
	@mkdir -p $(BUILD)
	@flock $(QEMU_BUILD).lock $(MAKE) --no-print-directory qemu-compile-locked

qemu-compile-locked: qemu-configure
	targets=$$(ninja -C $(QEMU_BUILD) -t targets all | cut -d: -f1 | grep -E \
		'^lib[a-z_]+\.f?a\.p/hw_rdma-sim_|^tests/qtest/rdma-sim-[a-z]+-test\.p/rdma-sim-|^tests/qtest/librdma-sim-qos\.a\.p/libqos_'); \
	ninja -C $(QEMU_BUILD) -j$(JOBS) $$targets | tee $(QEMU_LOGS)/compile.log; \
	if grep -E '(hw/rdma-sim|rdma-sim).*(warning|error):' $(QEMU_LOGS)/compile.log; then \
		echo "error: rdma-sim's code compiles with warnings against QEMU $(QEMU_VERSION) (log: $(QEMU_LOGS)/compile.log)" >&2; exit 1; fi
	@echo "compiled rdma-sim's device and qtests against QEMU $(QEMU_VERSION) in $(QEMU_BUILD)"

# rdma-sim in QEMU_VERSION without patches/qemu, in a source tree and build
# of its own: make bench's third column, which tells how much of rdma-sim's
# speed is the device's and how much the netdev patches'.
PLAIN_SRC   := $(call qemu_src_dir,$(QEMU_VERSION),$(BUILD)/qemu-plain)
PLAIN_BUILD := $(BUILD)/qemu-plain-$(QEMU_VERSION)-build
export PLAIN_QEMU_BINARY := $(PLAIN_BUILD)/qemu-system-x86_64
qemu-plain:
	@mkdir -p $(BUILD)
	@flock $(PLAIN_BUILD).lock $(MAKE) --no-print-directory $@-locked

qemu-plain-locked:
	$(REPO)/scripts/qemu-tree.sh fetch $(BUILD)/qemu-plain $(PLAIN_SRC) $(QEMU_VERSION)
	$(REPO)/scripts/qemu-tree.sh link-plain $(PLAIN_SRC) $(REPO) $(QEMU_VERSION)
	$(REPO)/scripts/qemu-configure.sh $(PLAIN_SRC) $(PLAIN_BUILD) $(LOGS)/qemu-plain \
		$(QEMU_CONFIGURE_FLAGS) $(BUILD_DEBUG_FLAGS) --extra-cflags=-DRDMA_SIM_UNPATCHED_QEMU
	ninja -C $(PLAIN_BUILD) -j$(JOBS) qemu-system-x86_64
	@echo "built $(PLAIN_QEMU_BINARY)"

# The sanitizer and fuzzing build, and the coverage build; flock as above
# (build/qemu-fuzz.lock, build/qemu-cov.lock).
# QEMU 7.2 only for now: the fuzz targets step the clock to the next timer,
# which QEMU 10.0's qtest refuses when no timer is pending.  They use 7.2
# whatever the default is, and refuse another version asked for by name.
qemu-fuzz qemu-cov:
	@test "$(QEMU_VERSION)" = 7.2 || test "$(origin QEMU_VERSION)" = file || { echo "error: the fuzzing and sanitizer builds (make fuzz, fuzz-coverage, SANITIZE=1) use QEMU 7.2; run them without QEMU_VERSION=$(QEMU_VERSION)" >&2; exit 1; }
	@mkdir -p $(BUILD)
	@flock $(BUILD)/$@.lock $(MAKE) --no-print-directory QEMU_VERSION=7.2 $@-locked

qemu-fuzz-locked: qemu-tree
	$(REPO)/scripts/qemu-configure.sh $(QSRC) $(FUZZ_BUILD) $(QEMU_LOGS)/qemu-fuzz $(FUZZ_CONFIGURE_FLAGS)
	ninja -C $(FUZZ_BUILD) -j$(JOBS) qemu-system-x86_64 qemu-fuzz-x86_64

qemu-cov-locked: qemu-tree
	$(REPO)/scripts/qemu-configure.sh $(QSRC) $(COV_BUILD) $(QEMU_LOGS)/qemu-cov $(COV_CONFIGURE_FLAGS)
	ninja -C $(COV_BUILD) -j$(JOBS) qemu-fuzz-x86_64

fuzz: qemu-fuzz
	FUZZ_TIME=$(FUZZ_TIME) $(REPO)/scripts/fuzz.sh run $(FUZZ_TARGET)

# Line coverage of hw/rdma-sim by the fuzz corpora in build/fuzz/
fuzz-coverage: qemu-cov
	$(REPO)/scripts/fuzz.sh coverage $(FUZZ_TARGET)

# rdma-sim-server: the device over vfio-user, for an unmodified QEMU >= 10.1
server:
	$(REPO)/scripts/build-server.sh

# The device core's unit tests, built plain (glib, zlib; no QEMU): seconds
unit:
	$(REPO)/scripts/check.sh unit

smoke: qemu $(SAN_PREREQS)
	$(REPO)/scripts/check.sh smoke

qtest: qemu $(SAN_PREREQS)
	$(REPO)/scripts/check.sh qtest

vmtest: qemu $(SAN_PREREQS) $(VMTEST_PREREQS)
	$(REPO)/scripts/check.sh vmtest

# Every generation of configs/generations: the suites of scripts/check.sh
# run against this QEMU with the default guest kernel, and against the
# oldest and the middle generation (deb12/..., deb13/...).  Only the default
# QEMU is built first: check.sh builds the fuzzing build, a QEMU 7.2 that
# the oldest generation's VM tests run on with its sanitizers, and the
# middle generation's QEMU at low priority while the default's tests run
# (CHECK_BUILDS=1, its lane B).
# The middle generation: CHECK_MIDDLE=full (the default) builds its QEMU
# and runs its smoke tests, qtests and two VM tests on it; compile only
# compiles rdma-sim's code against that QEMU and boots its kernel on the
# default QEMU.
CHECK_MIDDLE ?= full
check: qemu $(VMTEST_PREREQS)
	CHECK_BUILDS=1 CHECK_MIDDLE=$(CHECK_MIDDLE) DEB12_QEMU_BUILD=$(FUZZ_BUILD) \
	DEB13_QEMU_BUILD=$(call qemu_build_dir,$(GEN_MIDDLE_QEMU)) $(REPO)/scripts/check.sh all

# Every version of QEMU_VERSIONS, one after the other
qemu-all:
	@for v in $(QEMU_VERSIONS); do $(MAKE) --no-print-directory QEMU_VERSION=$$v qemu; done

clean:
	rm -rf $(BUILD)/qemu-fuzz $(BUILD)/qemu-cov $(BUILD)/qemu-plain-*-build $(LOGS) \
		$(foreach v,$(QEMU_VERSIONS),$(call qemu_build_dir,$(v)))
	$(MAKE) -C $(REPO)/guest-driver clean
	$(MAKE) -C $(GUEST_TESTS) clean
	$(MAKE) -C $(REPO)/tutorial clean
	rm -rf $(BUILD)/tutorial

# Also removes the downloaded QEMU source (hooks in a QEMU_SRC tree stay).
distclean:
	rm -rf $(BUILD)

help:
	@echo "make deps       install Debian build/test dependencies (root; idempotent)"
	@echo "make            build $(QEMU_BIN:$(REPO)/%=%)"
	@echo "make driver     build build/driver/<ABI>/rdma_sim.ko for the guest kernel (GUEST_ABI=...)"
	@echo "make demo       two VMs with rdma-sim: ibv_rc_pingpong and ib_write_bw"
	@echo "make bench      rdma-sim vs Soft-RoCE in TCG guest pairs (table, JSON, plot in build/bench/)"
	@echo "make qemu-plain build/qemu-plain-build: rdma-sim in QEMU without patches/qemu (for make bench)"
	@echo "make qemu-all   build QEMU $(QEMU_VERSIONS) with rdma-sim, each in build/qemu-VERSION-build"
	@echo "make check      all test suites (unit, smoke, qtest, vmtest, fuzz, sanitize, dkms; deb12: QEMU $(GEN_OLDEST_QEMU) (the sanitized fuzzing build) + Linux $(GEN_OLDEST_KERNEL); deb13: QEMU $(GEN_MIDDLE_QEMU) + Linux $(GEN_MIDDLE_KERNEL): smoke, qtest, two VM tests; CHECK_MIDDLE=compile: rdma-sim only compiled against QEMU $(GEN_MIDDLE_QEMU))"
	@echo "make unit|smoke|qtest|vmtest   run one suite (unit: the device core's unit tests, without QEMU)"
	@echo "make fuzz       the fuzz targets, FUZZ_TIME s each (FUZZ_TARGET=one of them)"
	@echo "make fuzz-coverage        line coverage of hw/rdma-sim by the fuzz corpora"
	@echo "make lint       kernel checkpatch (driver), QEMU checkpatch (device, qtests), shellcheck"
	@echo "make cycles     call cycles between the files of the device and of the driver"
	@echo "make server     build/server/rdma-sim-server: the device over vfio-user, for QEMU >= 10.1"
	@echo "make clean      remove the QEMU builds, build/logs and what driver and tests built"
	@echo "make distclean  remove build/ (incl. the downloaded QEMU source)"
	@echo "variables: QEMU_VERSION=$(subst $() ,|,$(QEMU_VERSIONS)) (default $(QEMU_DEFAULT_VERSION))  GUEST_ABI=6.1|6.12|7.3|ABI (default $(GEN_DEFAULT_KERNEL))  QEMU_SRC=/path/to/qemu  QEMU_DEVICES=rdma-sim|default  WERROR=1  DEBUG_INFO=1  JOBS=N  SANITIZE=1"
