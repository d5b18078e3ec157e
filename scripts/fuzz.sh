#!/usr/bin/env bash
# The rdma-sim fuzz targets under libFuzzer, ASan and UBSan: the device's
# (tests/qtest/fuzz/) in build/qemu-fuzz/qemu-fuzz-x86_64 (make
# qemu-fuzz), rdma-sim-server's (tests/fuzz/server/) each a program of its
# own, build/fuzz-server/TARGET, which this script builds with clang.
#
#   scripts/fuzz.sh run [TARGET...]       FUZZ_TIME seconds each (make fuzz)
#   scripts/fuzz.sh smoke [TARGET...]     FUZZ_SMOKE_TIME seconds each, from
#                                         the seeds alone (make check)
#   scripts/fuzz.sh coverage [TARGET...]  line coverage of hw/rdma-sim by
#                                         the corpora (make fuzz-coverage)
#   scripts/fuzz.sh seeds [--vm]          tests/fuzz/seeds/ anew: the wire
#                                         target's recording, the qtests;
#                                         --vm: and a capture of the VM test
#                                         t-interop-rxe (rdma-sim and
#                                         Soft-RoCE), sent to the wire
#                                         target's QPs (vm-* seeds)
#
# Targets: rdma-sim-driver, rdma-sim-wire (the device), vfu-msg (the
# server's checks of vfio-user messages); default: all.  Each has in
# build/fuzz/TARGET/: corpus/ (what the runs found; the seeds in
# tests/fuzz/seeds/TARGET are read as well), findings/ (crash-, timeout-,
# oom- inputs), logs/.  After fuzzing, a run replays the corpus in the
# fuzzer's own process, where LeakSanitizer finds leaks at its exit
# (libFuzzer's check after each input would cost more than the inputs).
# One line per target: executions,
# libFuzzer's coverage (cov: edges, ft: features), corpus, findings.
# Exit status 1 if a run had findings or failed.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$REPO/build
QSRC=${QSRC:-$BUILD/qemu-7.2+dfsg}
FUZZER=$BUILD/qemu-fuzz/qemu-fuzz-x86_64
COV_FUZZER=$BUILD/qemu-cov/qemu-fuzz-x86_64
# The qtests that make the driver target's seeds: QEMU 7.2's, as the fuzzer's
QEMU_BUILD=$BUILD/qemu-7.2-build
SEEDS=$REPO/tests/fuzz/seeds
FUZZ_TIME=${FUZZ_TIME:-300}
FUZZ_SMOKE_TIME=${FUZZ_SMOKE_TIME:-30}
TARGETS=(rdma-sim-driver rdma-sim-wire vfu-msg)
# The server's targets, and the files of server/ each is built from
SERVER_TARGETS=(vfu-msg)
declare -A SERVER_SOURCES=([vfu-msg]="vfu-msg.c json.c")
# Inputs (and seeds) have up to MAX_LEN bytes; one that takes 10 s is a hang
MAX_LEN=8192
LIBFUZZER_OPTS=(-timeout=10 "-max_len=$MAX_LEN" -detect_leaks=0 -print_final_stats=1)
# shellcheck source=scripts/sanitizers.sh
. "$REPO/scripts/sanitizers.sh"

die() { echo "fuzz.sh: error: $*" >&2; exit 2; }

# targets [TARGET...]: the targets asked for, checked
targets() {
    local t
    [ $# -gt 0 ] || set -- "${TARGETS[@]}"
    for t in "$@"; do
        [[ " ${TARGETS[*]} " == *" $t "* ]] || die "unknown target $t (${TARGETS[*]})"
        echo "$t"
    done
}

need() {
    [ -x "$1" ] || die "$1 not found: make $2"
}

is_server_target() {
    [[ " ${SERVER_TARGETS[*]} " == *" $1 "* ]]
}

# server_fuzzer TARGET: build/fuzz-server/TARGET, built when its sources
# are newer (a second or two)
server_fuzzer() {
    local t=$1 bin=$BUILD/fuzz-server/$1 f srcs=("$REPO/tests/fuzz/server/$1-fuzz.c")
    for f in ${SERVER_SOURCES[$t]}; do
        srcs+=("$REPO/server/$f")
    done
    mkdir -p "$BUILD/fuzz-server"
    if [ ! -x "$bin" ] || [ -n "$(find "${srcs[@]}" "$REPO/server" -newer "$bin" -name '*.[ch]' 2>/dev/null)" ]; then
        # shellcheck disable=SC2046  # pkg-config's flags are words
        clang-14 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
            -Wall -Werror -I"$REPO/server" $(pkg-config --cflags glib-2.0) "${srcs[@]}" \
            -o "$bin" $(pkg-config --libs glib-2.0) >&2 ||
            die "building the $t fuzz target failed"
    fi
    echo "$bin"
}

# fuzzer TARGET: the command that fuzzes TARGET, one word a line
fuzzer() {
    if is_server_target "$1"; then
        server_fuzzer "$1"
    else
        need "$FUZZER" qemu-fuzz
        printf '%s\n' "$FUZZER" "--fuzz-target=$1"
    fi
}

# fuzz_one TARGET SECONDS CORPUS: fuzz, then replay for leaks; one line
fuzz_one() {
    local t=$1 secs=$2 corpus=$3 dir=$BUILD/fuzz/$1 start log rc=0
    local execs cov findings report run
    mapfile -t run < <(fuzzer "$t")
    [ ${#run[@]} -gt 0 ] || return 1
    mkdir -p "$corpus" "$dir/findings" "$dir/logs"
    start=$(date +%s)
    log=$dir/logs/$(date +%Y%m%d-%H%M%S)-$(basename "$corpus").log
    sanitizer_env
    (cd "$dir" && "${run[@]}" "${LIBFUZZER_OPTS[@]}" \
        -max_total_time="$secs" -artifact_prefix="$dir/findings/" \
        "$corpus" "$SEEDS/$t") > "$log" 2>&1 || rc=$?
    # Leaks: every input once more, all in one process, whose exit
    # LeakSanitizer checks (libFuzzer's check after each input would cost
    # more than the inputs)
    if [ $rc -eq 0 ]; then
        (cd "$dir" && "${run[@]}" \
            "${LIBFUZZER_OPTS[@]}" -runs=0 -artifact_prefix="$dir/findings/" \
            "$corpus" "$SEEDS/$t") > "$log.leaks" 2>&1 || rc=$?
    fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
    cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n1) || true
    findings=$(find "$dir/findings" -maxdepth 1 -type f -newermt "@$start" | wc -l)
    report=$(sanitizer_report "$log" || sanitizer_report "$log.leaks" || true)
    echo "$t: ${execs:-0} executions in $(($(date +%s) - start))s, ${cov:-no coverage}," \
         "corpus $(find "$corpus" -type f | wc -l) (+ $(find "$SEEDS/$t" -type f | wc -l) seeds)," \
         "findings $findings${report:+, sanitizer: $report}" \
         "(log: ${log#"$REPO"/})"
    if [ $rc -ne 0 ] || [ "$findings" -gt 0 ] || [ -n "$report" ] || [ "${execs:-0}" -eq 0 ]; then
        [ "$findings" -eq 0 ] || find "$dir/findings" -maxdepth 1 -type f -newermt "@$start" | sed 's/^/  finding: /'
        echo "  exit status $rc; the end of the log:"
        tail -n 15 "$log" | sed 's/^/  | /'
        return 1
    fi
}

cmd_run() {
    local t status=0
    for t in $(targets "$@"); do
        fuzz_one "$t" "$FUZZ_TIME" "$BUILD/fuzz/$t/corpus" || status=1
    done
    return $status
}

# The seeds and what a short run adds to them, in a corpus of its own
cmd_smoke() {
    local t status=0 corpus
    for t in $(targets "$@"); do
        corpus=$BUILD/fuzz/$t/smoke
        rm -rf "$corpus"
        fuzz_one "$t" "$FUZZ_SMOKE_TIME" "$corpus" || status=1
    done
    return $status
}

# rdma_sim_lines PROFDATA: lines of hw/rdma-sim/*.c covered, of all
rdma_sim_lines() {
    llvm-cov-14 report "$COV_FUZZER" -instr-profile="$1" |
        awk '$1 ~ /hw\/rdma-sim\/[^\/]*\.c$/ {
                 n = split($1, p, "/"); printf "  %-14s %5d of %5d lines\n", p[n], $8 - $9, $8
                 lines += $8; missed += $9
             }
             END { if (lines) printf "  %-14s %5d of %5d lines, %.1f%%\n", "total", lines - missed, lines, 100 * (lines - missed) / lines }'
}

# Each input of the corpora once, in the coverage build
cmd_coverage() {
    local t dir profs=()
    need "$COV_FUZZER" qemu-cov
    command -v llvm-cov-14 > /dev/null || die "llvm-cov-14 not found: make deps"
    [ $# -gt 0 ] || set -- rdma-sim-driver rdma-sim-wire
    for t in $(targets "$@"); do
        is_server_target "$t" && die "coverage is of hw/rdma-sim: $t fuzzes the server"
        dir=$BUILD/fuzz/$t/coverage
        rm -rf "$dir"
        mkdir -p "$dir" "$BUILD/fuzz/$t/corpus"
        # The inputs as files, not their directories: replaying a directory
        # (-runs=0), libFuzzer lost lines from the profile (a seed alone
        # reached 327 lines of responder.c, all seeds in one directory
        # 291, all inputs 44); given as files, 500 to a process, each is
        # run once and the profiles add up.
        (cd "$dir" && find "$BUILD/fuzz/$t/corpus" "$SEEDS/$t" -type f -print0 |
            LLVM_PROFILE_FILE="$dir/%p.profraw" xargs -0 -n 500 "$COV_FUZZER" \
                --fuzz-target="$t" -timeout=60) > "$dir/run.log" 2>&1 ||
            die "the replay of $t failed, see $dir/run.log"
        llvm-profdata-14 merge -sparse "$dir"/*.profraw -o "$dir/$t.profdata"
        profs+=("$dir/$t.profdata")
        echo "$t: hw/rdma-sim lines covered by its corpus and seeds"
        rdma_sim_lines "$dir/$t.profdata"
    done
    if [ ${#profs[@]} -gt 1 ]; then
        llvm-profdata-14 merge -sparse "${profs[@]}" -o "$BUILD/fuzz/all.profdata"
        echo "all targets: hw/rdma-sim lines covered"
        rdma_sim_lines "$BUILD/fuzz/all.profdata"
        echo "(per line: llvm-cov-14 show $COV_FUZZER -instr-profile=build/fuzz/all.profdata $QSRC/hw/rdma-sim/FILE.c)"
    fi
}

# The wire target records the world's traffic (and with --vm, converts a
# VM run's capture); every qtest that runs on pc, with its qtest protocol
# logged, becomes driver inputs.
cmd_seeds() {
    local prog path name tmp t pcap=
    need "$FUZZER" qemu-fuzz
    need "$QEMU_BUILD/qemu-system-x86_64" ""
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' RETURN
    if [ "${1:-}" = --vm ]; then
        # every guest's QEMU writes what passes its link (net0) to a pcap
        cat > "$tmp/qemu" <<EOF
#!/bin/sh
case "\$*" in *id=net0*) set -- "\$@" -object filter-dump,id=cap,netdev=net0,maxlen=2048,file=$tmp/\$\$.pcap ;; esac
exec "$QEMU_BUILD/qemu-system-x86_64" "\$@"
EOF
        chmod +x "$tmp/qemu"
        QEMU=$tmp/qemu "$REPO/tests/vm/t-interop-rxe.sh" > "$tmp/vm.log" 2>&1 ||
            die "tests/vm/t-interop-rxe.sh failed: $(tail -n1 "$tmp/vm.log")"
        pcap=$(find "$tmp" -name '*.pcap' | head -n1)
        rm -f "$SEEDS/rdma-sim-wire"/vm-*
    fi
    sanitizer_env
    mkdir -p "$SEEDS/rdma-sim-wire"
    rm -f "$SEEDS/rdma-sim-wire"/record-*
    RSIM_FUZZ_RECORD=$SEEDS/rdma-sim-wire RSIM_FUZZ_PCAP=$pcap \
        RSIM_FUZZ_MAX_LEN=$MAX_LEN "$FUZZER" --fuzz-target=rdma-sim-wire \
        -runs=1 > "$tmp/record.log" 2>&1 ||
        die "recording failed: $(tail -n1 "$tmp/record.log")"
    echo "rdma-sim-wire: $(find "$SEEDS/rdma-sim-wire" -type f | wc -l) seeds"

    rm -rf "$SEEDS/rdma-sim-driver"
    for prog in "$REPO"/tests/qtest/*-test.c; do
        t=$(basename "$prog" .c)
        ninja -C "$QEMU_BUILD" "tests/qtest/$t" > /dev/null
        while read -r path; do
            name=${t#rdma-sim-}--$(echo "${path#/x86_64/rdma-sim/}" | sed 's|^pc/||; s|/|-|g')
            (cd "$QEMU_BUILD" && QTEST_LOG=1 QTEST_QEMU_BINARY=./qemu-system-x86_64 \
                timeout 300 "./tests/qtest/$t" -p "$path") > "$tmp/log" 2>&1 ||
                echo "fuzz.sh: $t $path failed; its seed may be short" >&2
            "$REPO/tests/fuzz/qtest-seeds.py" "$tmp/log" "$SEEDS/rdma-sim-driver" \
                "$name" "$MAX_LEN" > /dev/null
        done < <(cd "$QEMU_BUILD" && QTEST_QEMU_BINARY=./qemu-system-x86_64 \
                     "./tests/qtest/$t" -l | grep '^/' | grep -v '/q35/')
    done
    echo "rdma-sim-driver: $(find "$SEEDS/rdma-sim-driver" -type f | wc -l) seeds"
}

cmd=${1:-}
[ $# -eq 0 ] || shift
case $cmd in
    run|smoke|coverage|seeds) "cmd_$cmd" "$@" ;;
    *) die "usage: $0 run|smoke|coverage [TARGET...] | seeds [--vm]" ;;
esac
