# shellcheck shell=bash
# Sourced by check.sh and fuzz.sh: how the sanitized programs of
# build/qemu-fuzz (QEMU, qtests, fuzz targets) report.
#
#   sanitizer_env       export ASAN_OPTIONS, UBSAN_OPTIONS, LSAN_OPTIONS:
#                       every report is an error that stops the program
#                       (on its stderr); QEMU's own known leaks are
#                       suppressed (tests/fuzz/lsan.supp, a reason each)
#   sanitizer_env_vm    the same without the leak check at exit, for the
#                       VM tests' QEMUs: a whole machine leaks at exit what
#                       the list, made for the qtests' machines, does not
#                       name, and the qtests check our device's memory
#   sanitizer_report LOG   print the first report in LOG, or in the
#                       qemu.log files under LOG if it is a directory (a
#                       VM test's); 1 if none

# ASan holds back at most 8 MiB of freed memory to catch its use (not 256):
# the qtests measure QEMU's memory (bounds/loopback-flood).
sanitizer_env() {
    local supp
    supp=$(cd "$(dirname "${BASH_SOURCE[0]}")/../tests/fuzz" && pwd)
    export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:quarantine_size_mb=8"
    export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
    export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1"
    export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
}

sanitizer_env_vm() {
    sanitizer_env
    ASAN_OPTIONS=${ASAN_OPTIONS/detect_leaks=1/detect_leaks=0}
}

sanitizer_report() {
    local where=() found
    [ ! -d "$1" ] || where=(-r --include=qemu.log)
    found=$(grep -h -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: UndefinedBehaviorSanitizer' \
        "${where[@]}" "$1") || return 1
    printf '%s\n' "${found%%$'\n'*}"
}
