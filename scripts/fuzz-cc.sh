#!/bin/bash
# The C compiler of the fuzzing and sanitizer build (build/qemu-fuzz; the
# Makefile's FUZZ_CONFIGURE_FLAGS): clang, with AddressSanitizer and
# UndefinedBehaviorSanitizer compiled into rdma-sim's code only - the
# device (hw/rdma-sim), the qtests and fuzz targets with their libqos
# (tests/qtest) - and into QEMU's coroutine switch, which tells ASan when
# it changes stacks (the incoming migration that loads the device runs in a
# coroutine).  Every program is linked with both runtimes (the Makefile's
# --extra-ldflags, which the C++ linker gets too).
#
# Why not QEMU's --enable-sanitizers, which instruments all of QEMU:
# clang-14 takes 3.3 times as long to compile a file with them (measured on
# ten of the build's files: 42 s of CPU against 13), and make check builds
# this tree beside the VM tests.  What stays covered: every access our code
# makes (heap, stack, globals), and, since the runtime replaces malloc,
# free, memcpy and memset for the whole process, any heap buffer overrun
# or use after free done through those, by QEMU's code too (its DMA
# copies).  What is not: an access QEMU's own code makes with its own loads
# and stores, and undefined behaviour in QEMU's code.
#
# libFuzzer's coverage instrumentation (-fsanitize=fuzzer-no-link, which
# --enable-fuzzing gives every file, with QEMU's allowlist of hw/, net/
# and slirp/) is likewise kept to rdma-sim's code and the fuzz targets:
# the fuzzer is steered by the device's branches, not by the APIC's,
# virtio's or 9p's, and the rest of QEMU compiles and runs at a plain
# build's speed, so that this build's qemu-system-x86_64 also runs the
# oldest generation's VM tests (scripts/check.sh, deb12).
set -euo pipefail

ours=
compile=
for arg; do
    case $arg in
    */hw/rdma-sim/*.c | */tests/qtest/*.c | */util/coroutine-ucontext.c) ours=1 ;;
    -c) compile=1 ;;
    esac
done
if [ -n "$ours" ]; then
    exec clang-14 -fsanitize=address -fsanitize=undefined "$@"
fi
if [ -z "$compile" ]; then
    exec clang-14 "$@"
fi
args=()
for arg; do
    case $arg in
    -fsanitize=fuzzer-no-link | -fsanitize-coverage-allowlist=*) ;;
    *) args+=("$arg") ;;
    esac
done
exec clang-14 "${args[@]}"
