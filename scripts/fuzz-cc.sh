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
set -euo pipefail

san=()
for arg; do
    case $arg in
    */hw/rdma-sim/*.c | */tests/qtest/*.c | */util/coroutine-ucontext.c)
        san=(-fsanitize=address -fsanitize=undefined) ;;
    esac
done
exec clang-14 "${san[@]}" "$@"
