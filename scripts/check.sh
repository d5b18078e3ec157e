#!/usr/bin/env bash
# Run rdma-sim test suites and aggregate the results.
#
#   scripts/check.sh [all | unit | smoke | qtest | vmtest | fuzz | sanitize | dkms | deb12 | deb13]...
#                                                       (default: all)
#
# Normally run through make (`make check`, `make unit|smoke|qtest|vmtest`),
# which first builds QEMU (not for unit) and refreshes the hooks in the QEMU
# tree.
#
# Output: one line per test on stdout, "PASS <name>", "FAIL <name> (why)" or
# "SKIP <name> (why)", then exactly one line "N passed, N failed". Logs of
# failing tests are echoed to stderr. Exit status is non-zero if anything
# failed or a suite could not run. Logs: build/logs/<suite>/.
#
# Suites:
#  unit    the device core's unit tests, built without QEMU (tests/unit;
#          see suite_unit below): seconds, first
#  smoke   the QEMU binary starts -M pc / -M q35 and knows the devices we need;
#          the datasheet's property table matches the device (tests/docs);
#          the device's VMState is the committed one (tests/migration);
#          patches/qemu is consistent and applies to each QEMU tree in build/
#  qtest   every tests/qtest/*-test.c is a qtest program (linked with the
#          helper library tests/qtest/libqos/rdma-sim*, which is not run); it
#          is built with ninja in QEMU_BUILD and run with --tap; each
#          TAP result is one test, a crash/timeout/non-zero exit of the
#          program is one more failure
#  vmtest  every tests/vm/t-*.sh is run (cwd = repo root, stdin /dev/null)
#          with a timeout; exit 0 = pass, 77 = skip, anything else = fail.
#          Environment given to the scripts: RDMA_SIM_ROOT, RDMA_SIM_BUILD,
#          QEMU_BINARY, RDMA_SIM_LOGDIR (a per-test directory for logs).
#  fuzz    each fuzz target for FUZZ_SMOKE_TIME seconds from its seeds
#          (scripts/fuzz.sh smoke): any finding is a failure
#  sanitize  the qtest suite built in build/qemu-fuzz, against its QEMU
#          (ASan, UBSan, LeakSanitizer; scripts/sanitizers.sh), named
#          san/qtest/...: a sanitizer report in a program's log is one more
#          failure, whatever its tests said
#  dkms    the driver added, built and installed with DKMS, in private trees,
#          for the guest kernel of each generation (tests/dkms/)
#  deb12   the oldest generation (configs/generations): smoke and vmtest
#          again, against QEMU 7.2 with Linux 6.1 guests, named deb12/...;
#          not what tests the device alone, the same source in every
#          generation (deb12_suites says which).  Its QEMU is the fuzzing
#          build's (build/qemu-fuzz, a QEMU 7.2 with the sanitizers in
#          rdma-sim's code: a report in a guest's QEMU log fails the test);
#          DEB12_QEMU_BUILD=build/qemu-7.2-build runs it on the plain
#          build.  Its qtests are sanitize's
#  deb13   the middle generation: QEMU 10.0 with Linux 6.12 guests, named
#          deb13/...: smoke, qtest, and the VM tests that boot it and carry
#          RDMA traffic (t-smoke-boot, t-rc-pingpong).  CHECK_MIDDLE=compile
#          builds no QEMU 10.0: it compiles rdma-sim's device and qtests
#          against it (make qemu-compile: deb13/compile) and runs the two
#          VM tests with Linux 6.12 guests on the default QEMU
# The other suites use QEMU_BUILD (make's QEMU_VERSION; default the newest,
# configs/generations) and the default guest kernel (the newest).
# all is unit, smoke, qtest, vmtest, dkms, fuzz, sanitize, deb12, deb13; with
# CHECK_BUILDS=1 (make check) in two lanes, the older generations' QEMUs
# built meanwhile (lane_b below).  With SANITIZE=1, smoke
# and qtest run against build/qemu-fuzz (named san/...) and all is unit,
# smoke, qtest, fuzz: the VM tests are not run (TCG guests under ASan are too slow).
#
# Knobs (environment): QTEST_TIMEOUT (s, per qtest program, default 300),
# UNIT_TIMEOUT (s, per unit test program, default 120),
# VMTEST_TIMEOUT (s, per VM test, default 900), JOBS (ninja -j),
# FUZZ_SMOKE_TIME (s per fuzz target, default 30), SANITIZE, QEMU_BUILD,
# DEB12_QEMU_BUILD, DEB12_GUEST_ABI, DEB13_QEMU_BUILD, DEB13_GUEST_ABI.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$REPO/build
LOGS=$BUILD/logs
# shellcheck source=configs/generations
. "$REPO/configs/generations"
QEMU_BUILD=${QEMU_BUILD:-$BUILD/qemu-$GEN_DEFAULT_QEMU-build}
QEMU=${QEMU_BINARY:-$QEMU_BUILD/qemu-system-x86_64}
FUZZ_BUILD=$BUILD/qemu-fuzz
DEB12_QEMU_BUILD=${DEB12_QEMU_BUILD:-$FUZZ_BUILD}
DEB12_GUEST_ABI=${DEB12_GUEST_ABI:-$GEN_OLDEST_KERNEL}
DEB13_QEMU_BUILD=${DEB13_QEMU_BUILD:-$BUILD/qemu-$GEN_MIDDLE_QEMU-build}
DEB13_GUEST_ABI=${DEB13_GUEST_ABI:-$GEN_MIDDLE_KERNEL}
QTEST_TIMEOUT=${QTEST_TIMEOUT:-300}
VMTEST_TIMEOUT=${VMTEST_TIMEOUT:-900}
JOBS=${JOBS:-$(nproc)}

# shellcheck source=scripts/sanitizers.sh
. "$REPO/scripts/sanitizers.sh"

passed=0
failed=0
skipped=0
RESULTS=$LOGS/check-results.txt
mkdir -p "$LOGS"
: > "$RESULTS"
# Names and log directories of the tests start with PFX: san/ against the
# sanitized build, deb12/ and deb13/ for the older generations
PFX=
# The default generation's t-rdma-core runs Debian unstable's rdma-core 65
# against 44; the oldest's runs Debian 13's 56 (deb12_suites), and
# t-mixed-pair, which needs the oldest's QEMU
export RDMA_CORE_VERSIONS=${RDMA_CORE_VERSIONS:-65}
VMTEST_EXCLUDE=${VMTEST_EXCLUDE-t-mixed-pair}
# Against the sanitized build: a sanitizer report in a log is a failure
SANITIZED=

record() { echo "$*"; echo "$*" >> "$RESULTS"; }
# pass NAME [LOGFILE]: against the sanitized build, a report in LOGFILE
# makes it a failure
pass() {
    local report
    if [ -n "$SANITIZED" ] && [ -n "${2:-}" ] && report=$(sanitizer_report "$2"); then
        fail "$1" "sanitizer: $report" "$2"
        return
    fi
    passed=$((passed + 1))
    record "PASS $1"
}
skip() { skipped=$((skipped + 1)); record "SKIP $1${2:+ ($2)}"; }
# The failures again, each with the first lines of its log that say why:
# printed at the end, where a reader of only the output's tail sees them.
FAILURES=$LOGS/check-failures.txt
: > "$FAILURES"
# fail NAME [REASON [LOGFILE]]
fail() {
    failed=$((failed + 1))
    record "FAIL $1${2:+ ($2)}"
    echo "FAIL $1${2:+ ($2)}" >> "$FAILURES"
    if [ -n "${3:-}" ] && [ -f "$3" ]; then
        { echo "  | --- last lines of $3:"; tail -n 30 "$3" | sed 's/^/  | /'; } >&2
        # (A guest's reason, "guest B: FAILED: exit status 1: [B] FAIL: ...",
        # may carry its kernel's messages: up to 1200 characters.)
        grep -m 8 -E 'FAIL|ERROR|TIMEOUT|STOPPED|[Aa]ssertion|timed out|blocked (for more than|at the)|BUG:|Oops|[Ss]anitizer' "$3" |
            cut -c1-1200 | sed 's/^/    /' >> "$FAILURES" || true
        # A VM test's guest scripts log "[A 12.34] step": the last steps
        # say where a guest was when it failed or timed out.
        grep -E '^\[[A-Z] [0-9]+\.[0-9]+\] ' "$3" | tail -n 4 |
            cut -c1-300 | sed 's/^/    last step: /' >> "$FAILURES" || true
        # What the rdma-sim devices said of themselves at the failure
        # (scripts/vm/harness.sh, vm_save_devices): their QPs, CQs and counters.
        grep -E '^vm: device [A-Z]: ' "$3" | head -n 16 |
            cut -c1-300 | sed 's/^vm: /    /' >> "$FAILURES" || true
    fi
}
# A suite that cannot run at all counts as one failure.
cannot_run() { fail "$1" "suite could not run: $2" "${3:-}"; }

have_qemu() {
    [ -x "$QEMU" ] || { cannot_run "$1" "$QEMU not found; run 'make' first"; return 1; }
}

# --- smoke ---------------------------------------------------------------------
# qmp_smoke NAME QEMU-ARGS...: start QEMU, talk QMP on stdio, quit.
qmp_smoke() {
    local name=$1 log=$LOGS/${PFX}smoke/$1.log
    shift
    local rc=0
    printf '%s\n' '{"execute":"qmp_capabilities"}' '{"execute":"query-status"}' \
                  '{"execute":"quit"}' |
        timeout -k 5 60 "$QEMU" "$@" -qmp stdio > "$log" 2>&1 || rc=$?
    if [ $rc -ne 0 ]; then
        fail "${PFX}smoke/$name" "exit status $rc" "$log"
    elif ! grep -q '"return": {"status"' "$log"; then
        fail "${PFX}smoke/$name" "no QMP query-status reply" "$log"
    else
        pass "${PFX}smoke/$name" "$log"
    fi
}

suite_smoke() {
    # (with lane B, after it: it fetches the older QEMUs' trees)
    [ -n "$PFX" ] || [ -n "$LANE_B_PID" ] || smoke_qemu_patches
    have_qemu "${PFX}smoke" || return 0
    mkdir -p "$LOGS/${PFX}smoke"
    local log=$LOGS/${PFX}smoke/device-help.log rc=0
    timeout 60 "$QEMU" -device help > "$log" 2>&1 || rc=$?
    if [ $rc -ne 0 ]; then
        fail "${PFX}smoke/device-help" "exit status $rc" "$log"
    else
        pass "${PFX}smoke/device-help" "$log"
        local d
        for d in virtio-net-pci virtio-9p-pci e1000; do
            if grep -q "name \"$d\"" "$log"; then pass "${PFX}smoke/has-$d" "$log"; else fail "${PFX}smoke/has-$d" "not in -device help, see $log"; fi
        done
        if grep -qi 'name "[^"]*rdma' "$log"; then pass "${PFX}smoke/has-rdma-device"; else fail "${PFX}smoke/has-rdma-device" "no rdma device in -device help, see $log"; fi
    fi

    # docs/datasheet.md section 2 against the device's own properties
    log=$LOGS/${PFX}smoke/datasheet-props.log
    if python3 "$REPO/tests/docs/datasheet-props.py" "$QEMU" "$REPO/docs/datasheet.md" > "$log" 2>&1; then
        pass "${PFX}smoke/datasheet-props" "$log"
    else
        fail "${PFX}smoke/datasheet-props" "docs/datasheet.md section 2 and -device rdma-sim,help differ" "$log"
    fi

    # The device's migration stream as QEMU describes it (its fields,
    # versions, subsections) against tests/migration/rdma-sim-vmstate.json:
    # on the default generation, whose QEMU wrote that file
    if [ -z "$PFX" ]; then
        log=$LOGS/smoke/vmstate-golden.log
        if python3 "$REPO/tests/migration/vmstate-golden.py" "$QEMU" \
            "$REPO/tests/migration/rdma-sim-vmstate.json" > "$log" 2>&1; then
            pass smoke/vmstate-golden "$log"
        else
            fail smoke/vmstate-golden "rdma-sim's VMState differs from tests/migration/rdma-sim-vmstate.json" "$log"
        fi
    fi

    [ -n "$PFX" ] || smoke_debian_qemu
    [ -n "$PFX" ] || smoke_server_migration

    local share=$LOGS/${PFX}smoke/share m
    mkdir -p "$share"
    for m in pc q35; do
        qmp_smoke "$m-nodefaults" -M "$m" -accel tcg -display none -nodefaults -serial none -S \
            -device virtio-net-pci,netdev=n -netdev user,id=n \
            -fsdev "local,id=fs,path=$share,security_model=none" \
            -device virtio-9p-pci,fsdev=fs,mount_tag=share
        # QEMU's default devices (VGA, default NIC, ...); let the BIOS run
        qmp_smoke "$m-defaults" -M "$m" -accel tcg -display none
    done
}

# --- the QEMU users have -------------------------------------------------------
# smoke_debian_qemu: Debian unstable's own qemu-system-x86 (11.1.x),
# unmodified, runs on this host through scripts/qemu-debian.sh's wrapper,
# has the vfio-user client (-device vfio-user-pci) that rdma-sim-server is
# for, and answers QMP.  Run once, by the default generation's smoke suite.
smoke_debian_qemu() {
    local log=$LOGS/smoke/qemu-debian.log rc=0
    "$REPO/scripts/qemu-debian.sh" > "$log" 2>&1 || rc=$?
    if [ $rc -ne 0 ]; then
        fail smoke/qemu-debian "scripts/qemu-debian.sh: exit status $rc" "$log"
        return 0
    fi
    pass smoke/qemu-debian "$log"
    QEMU=$BUILD/qemu-debian/bin/qemu-system-x86_64 qmp_smoke qemu-debian-q35 \
        -M q35 -accel tcg -display none -nodefaults -serial none -S
}

# smoke_server_migration: a VM whose rdma-sim is out of process
# (rdma-sim-server behind -device vfio-user-pci) cannot be migrated, and
# QEMU says so: `migrate` fails at once with the blocker of
# patches/qemu/10.2/0005 (QEMU's own vfio-user-pci adds none, and a
# migration would complete without the device's state).  On our build,
# which has the vfio-user client since QEMU 10.1.  Run once.
smoke_server_migration() {
    local log=$LOGS/smoke/server-migration.log dir rc=0 server
    "$QEMU" -device vfio-user-pci,help > /dev/null 2>&1 || return 0 # (before 10.1)
    if ! "$REPO/scripts/build-server.sh" > "$log" 2>&1; then
        fail smoke/server-migration "scripts/build-server.sh failed" "$log"
        return 0
    fi
    dir=$(mktemp -d)
    "$BUILD/server/rdma-sim-server" --once --socket "$dir/s" >> "$log" 2>&1 &
    server=$!
    for _ in $(seq 100); do [ -S "$dir/s" ] && break; sleep 0.05; done
    printf '%s\n' '{"execute":"qmp_capabilities"}' \
        '{"execute":"migrate","arguments":{"uri":"exec:cat >/dev/null"}}' \
        '{"execute":"query-status"}' '{"execute":"quit"}' |
        timeout -k 5 60 "$QEMU" -M pc -accel tcg -display none -nodefaults -serial none -S \
            -object memory-backend-memfd,id=m,size=256M,share=on -machine memory-backend=m -m 256M \
            -device "{\"driver\":\"vfio-user-pci\",\"socket\":{\"type\":\"unix\",\"path\":\"$dir/s\"}}" \
            -qmp stdio >> "$log" 2>&1 || rc=$?
    kill "$server" 2> /dev/null || true
    wait "$server" 2> /dev/null || true
    rm -rf "$dir"
    if [ $rc -ne 0 ]; then
        fail smoke/server-migration "QEMU exit status $rc" "$log"
    elif ! grep -q '"error".*a vfio-user device cannot be migrated' "$log"; then
        fail smoke/server-migration "migrate did not fail with the vfio-user blocker" "$log"
    else
        pass smoke/server-migration "$log"
    fi
}

# --- the QEMU patch series ------------------------------------------------------
# smoke_qemu_patches: patches/qemu's hunks kept per version agree with the
# common series, and the series of each version applies to the QEMU tree of
# that version in build/ (scripts/qemu-patches.py check; a second).  Run
# once, by the default generation's smoke suite.
smoke_qemu_patches() {
    local log=$LOGS/smoke/qemu-patches.log line name why
    mkdir -p "$LOGS/smoke"
    python3 "$REPO/scripts/qemu-patches.py" check "$REPO/patches/qemu" --trees-in "$BUILD" \
        > "$log" 2>&1 || true
    while IFS= read -r line; do
        name=${line#* } name=${name%% *} why=${line#* } why=${why#"$name"} why=${why# (}
        case $line in
            "PASS "*) pass "smoke/$name" ;;
            "FAIL "*) fail "smoke/$name" "${why%)}" ;;
            "SKIP "*) skip "smoke/$name" "${why%)}" ;;
        esac
    done < "$log"
    grep -qE '^(PASS|FAIL) ' "$log" ||
        cannot_run smoke/qemu-patches "scripts/qemu-patches.py check printed no result" "$log"
}

# --- qtest ---------------------------------------------------------------------
suite_qtest() {
    shopt -s nullglob
    local srcs=("$REPO"/tests/qtest/*-test.c)
    shopt -u nullglob
    [ ${#srcs[@]} -gt 0 ] || { echo "qtest: no tests/qtest/*-test.c, nothing to run" >&2; return 0; }
    have_qemu "${PFX}qtest" || return 0
    mkdir -p "$LOGS/${PFX}qtest"

    [ -f "$QEMU_BUILD/build.ninja" ] || { cannot_run "${PFX}qtest" "$QEMU_BUILD is not configured; run 'make'"; return 0; }

    local s t
    for s in "${srcs[@]}"; do
        t=$(basename "$s" .c)
        local log=$LOGS/${PFX}qtest/$t.log blog=$LOGS/${PFX}qtest/$t.build.log rc=0
        echo "qtest: building $t" >&2
        if ! flock "$QEMU_BUILD.lock" ninja -C "$QEMU_BUILD" -j"$JOBS" "tests/qtest/$t" > "$blog" 2>&1; then
            fail "${PFX}qtest/$t" "build failed" "$blog"
            continue
        fi
        echo "qtest: running $t" >&2
        (cd "$QEMU_BUILD" && QTEST_QEMU_BINARY="$QEMU" \
            timeout -k 10 "$QTEST_TIMEOUT" "./tests/qtest/$t" --tap -k) \
            < /dev/null > "$log" 2>&1 || rc=$?

        tap_results "${PFX}qtest/$t" "$log" "$rc" "$QTEST_TIMEOUT"
    done
}

# tap_results NAME LOG RC TIMEOUT: each TAP result in LOG (of program NAME,
# which exited with RC) is one test, NAME:result; a timeout, crash or
# unexplained exit status of the program is one more failure.  The log is
# shown once if anything failed.
tap_results() {
    local prog=$1 log=$2 rc=$3 timeout=$4
    local plan=0 results=0 nfail=0 line name
    while IFS= read -r line; do
        if [[ $line =~ ^1\.\.([0-9]+) ]]; then
            plan=${BASH_REMATCH[1]}
        elif [[ $line =~ ^(not\ )?ok\ +[0-9]+\ *(-\ *)?(.*)$ ]]; then
            results=$((results + 1))
            name=${BASH_REMATCH[3]}
            local directive=""
            if [[ $name =~ ^(.*[^[:space:]])?[[:space:]]*#[[:space:]]*(SKIP|TODO)(.*)$ ]]; then
                directive="${BASH_REMATCH[2]}${BASH_REMATCH[3]}"
                name=${BASH_REMATCH[1]}
            fi
            name="$prog:${name:-#$results}"
            if [ -n "$directive" ]; then
                skip "$name" "$directive"
            elif [[ $line == ok* ]]; then
                pass "$name"
            else
                nfail=$((nfail + 1))
                fail "$name"
            fi
        fi
    done < "$log"

    local why=""
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        why="timed out after ${timeout}s"
    elif [ "$results" -lt "$plan" ]; then
        why="only $results of $plan results reported, exit status $rc (crash?)"
    elif [ "$rc" -ne 0 ] && [ $nfail -eq 0 ]; then
        why="exit status $rc"
    elif [ $results -eq 0 ] && ! grep -q '^1\.\.0' "$log"; then
        why="no TAP results"
    fi
    if [ -z "$why" ] && [ -n "$SANITIZED" ] && why=$(sanitizer_report "$log"); then
        why="sanitizer: $why"
    fi
    if [ -n "$why" ]; then
        fail "$prog" "$why" "$log"
    elif [ $nfail -gt 0 ]; then
        { echo "  | --- last lines of $log:"; tail -n 30 "$log" | sed 's/^/  | /'; } >&2
    fi
}

# --- unit ----------------------------------------------------------------------
# The device core's unit tests: tests/unit/*-test.c, each with the core
# files its first comment "/* core: FILE... */" names ("all": every core
# file, with core.c and driver.c, the tests' own device and driver; "all"
# may come with more, e.g. server/ files that take the core) and
# the unit tests' host (tests/unit/host.c), built plain (RDMA_SIM_PLAIN: glib and zlib,
# no QEMU; the trace events as functions that do nothing) with
# AddressSanitizer and UBSan, and run with --tap.  Seconds: make check's
# first suite.
UNIT_TIMEOUT=${UNIT_TIMEOUT:-120}
# The device core's files (docs/architecture.md, "The core and its host"),
# which "core: all" names with the tests' own device and driver
UNIT_CORE=$("$REPO/scripts/build-server.sh" --list-core)
UNIT_CFLAGS="-std=gnu11 -O1 -g -Wall -Wundef -Wmissing-prototypes -Wstrict-prototypes \
-Wshadow=local -Wvla -Wwrite-strings -Wtype-limits -Wold-style-definition -Werror \
-fsanitize=address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE -DRDMA_SIM_PLAIN"
suite_unit() {
    shopt -s nullglob
    local srcs=("$REPO"/tests/unit/*-test.c)
    shopt -u nullglob
    [ ${#srcs[@]} -gt 0 ] || { cannot_run unit "no tests/unit/*-test.c"; return 0; }
    local out=$BUILD/unit inc=$BUILD/unit/include
    mkdir -p "$LOGS/unit" "$inc/trace" "$inc/hw/rdma-sim"
    # what the QEMU tree gives the device's files: its shared header as
    # hw/rdma-sim/, its trace events as trace/trace-hw_rdma_sim.h
    ln -sf "$REPO/include/rdma-sim/rdma_sim_hw.h" "$inc/hw/rdma-sim/rdma_sim_hw.h"
    if ! python3 "$REPO/scripts/trace-plain.py" stubs "$REPO/hw/rdma-sim/trace-events" \
            "$inc/trace/trace-hw_rdma_sim.h" > "$LOGS/unit/trace-stubs.log" 2>&1; then
        cannot_run unit "trace-plain.py failed" "$LOGS/unit/trace-stubs.log"
        return 0
    fi
    local s t core f flags cflags libs
    read -ra flags <<< "$UNIT_CFLAGS"
    [ "$(uname -m)" != x86_64 ] || flags+=(-DHOST_X86_64)
    flags+=(-I"$inc" -I"$REPO/hw/rdma-sim" -I"$REPO/server" -I"$REPO/tests/unit")
    read -ra cflags <<< "$(pkg-config --cflags glib-2.0 zlib)"
    read -ra libs <<< "$(pkg-config --libs glib-2.0 zlib)"
    # each file is compiled once per run, into $out/obj, and linked where named
    rm -rf "$out/obj"
    mkdir -p "$out/obj"
    for s in "${srcs[@]}"; do
        t=$(basename "$s" .c)
        local log=$LOGS/unit/$t.log blog=$LOGS/unit/$t.build.log rc=0 objs=() src
        : > "$blog"
        # the first comment: "/* core: FILE... */", maybe over several lines;
        # core.c and driver.c are the unit tests' own (tests/unit).  A test
        # of rdma-sim-server's own files says "/* server: FILE... */" and
        # links those alone, without the core's host.
        core=$(sed -n '0,/\*\//{s|/\*||; s|\*/||; s|^ \*||; s|core:||; p}' "$s")
        # "all" and other files: every core file, and those
        core=" $core "
        [[ $core != *" all "* ]] ||
            core="core.c driver.c $UNIT_CORE ${core/ all / }"
        local host=host.c
        if [[ $core == *server:* ]]; then
            core=${core/server:/} host=
        fi
        for f in "$t.c" $host $core; do
            src=$REPO/hw/rdma-sim/$f
            [ ! -f "$REPO/server/$f" ] || src=$REPO/server/$f
            [ ! -f "$REPO/tests/unit/$f" ] || src=$REPO/tests/unit/$f
            objs+=("$out/obj/${f%.c}.o")
            [ -f "$out/obj/${f%.c}.o" ] ||
                cc "${flags[@]}" "${cflags[@]}" -c -o "$out/obj/${f%.c}.o" "$src" >> "$blog" 2>&1 ||
                break
        done
        if ! cc "${flags[@]}" -o "$out/$t" "${objs[@]}" "${libs[@]}" >> "$blog" 2>&1; then
            fail "unit/$t" "build failed" "$blog"
            continue
        fi
        timeout -k 10 "$UNIT_TIMEOUT" "$out/$t" --tap < /dev/null > "$log" 2>&1 || rc=$?
        tap_results "unit/$t" "$log" "$rc" "$UNIT_TIMEOUT"
    done
}

# --- vmtest --------------------------------------------------------------------
suite_vmtest() {
    shopt -s nullglob
    local tests=("$REPO"/tests/vm/t-*.sh)
    shopt -u nullglob
    [ ${#tests[@]} -gt 0 ] || { echo "vmtest: no tests/vm/t-*.sh, nothing to run" >&2; return 0; }
    have_qemu "${PFX}vm" || return 0
    mkdir -p "$LOGS/${PFX}vm"

    local t
    for t in "${tests[@]}"; do
        local name log dir rc=0 start
        name=$(basename "$t" .sh)
        [[ " ${VMTEST_EXCLUDE:-} " != *" $name "* ]] || continue
        [[ -z ${VMTEST_ONLY:-} || " $VMTEST_ONLY " == *" $name "* ]] || continue
        log=$LOGS/${PFX}vm/$name.log
        dir=$LOGS/${PFX}vm/$name
        rm -rf "$dir"
        mkdir -p "$dir"
        local cmd=("$t")
        [ -x "$t" ] || cmd=(bash "$t")
        echo "vmtest: running ${PFX}$name (timeout ${VMTEST_TIMEOUT}s)" >&2
        start=$(date +%s)
        (cd "$REPO" && RDMA_SIM_ROOT="$REPO" RDMA_SIM_BUILD="$BUILD" QEMU_BINARY="$QEMU" \
            RDMA_SIM_LOGDIR="$dir" timeout -k 30 "$VMTEST_TIMEOUT" "${cmd[@]}") \
            < /dev/null > "$log" 2>&1 || rc=$?
        echo "vmtest: ${PFX}$name finished in $(( $(date +%s) - start ))s, exit status $rc" >&2
        case $rc in
            0)       pass "${PFX}vm/$name" "$dir" ;;
            77)      skip "${PFX}vm/$name" "exit status 77" ;;
            124|137) fail "${PFX}vm/$name" "timed out after ${VMTEST_TIMEOUT}s" "$log" ;;
            *)       fail "${PFX}vm/$name" "exit status $rc" "$log" ;;
        esac
    done
}

# --- fuzz ----------------------------------------------------------------------
suite_fuzz() {
    local t log
    mkdir -p "$LOGS/fuzz"
    for t in rdma-sim-driver rdma-sim-wire vfu-msg; do
        log=$LOGS/fuzz/$t.log
        echo "fuzz: $t" >&2
        if "$REPO/scripts/fuzz.sh" smoke "$t" > "$log" 2>&1; then
            pass "fuzz/$t"
        else
            fail "fuzz/$t" "$(head -n1 "$log")" "$log"
        fi
    done
}

# --- sanitize ------------------------------------------------------------------
# use_sanitized: from here on, the suites use build/qemu-fuzz
use_sanitized() {
    QEMU=$FUZZ_BUILD/qemu-system-x86_64
    QEMU_BUILD=$FUZZ_BUILD
    PFX=san/
    SANITIZED=1
    sanitizer_env
}

# isolated NAME FUNCTION: runs FUNCTION in a subshell, so that the settings
# it changes (QEMU, PFX, ...) stay there; the counts come back through a file
isolated() {
    ( "$2"
      echo "$passed $failed $skipped" > "$LOGS/$1-counts" )
    read -r passed failed skipped < "$LOGS/$1-counts"
}

sanitized_qtest() {
    use_sanitized
    suite_qtest
}

suite_sanitize() {
    isolated san sanitized_qtest
}

# --- dkms ----------------------------------------------------------------------
suite_dkms() {
    local log=$LOGS/dkms.log line why
    mkdir -p "$LOGS/dkms"
    echo "dkms: building the driver with DKMS for each guest kernel" >&2
    RDMA_SIM_LOGDIR=$LOGS/dkms "$REPO/tests/dkms/check-dkms.sh" > "$log" 2>"$log.err" || true
    while IFS= read -r line; do
        case $line in
            "PASS "*) pass "${line#PASS }" ;;
            "FAIL "*) line=${line#FAIL } why=${line#* } why=${why#(}
                      fail "${line%% *}" "${why%)}" "$log.err" ;;
        esac
    done < "$log"
    grep -qE '^(PASS|FAIL) ' "$log" || cannot_run dkms "tests/dkms/check-dkms.sh printed no result" "$log.err"
}

# --- the older generations -------------------------------------------------------
# generation PFX QEMU_BUILD GUEST_ABI: the suites that follow test that
# generation, their results named PFX...
generation() {
    PFX=$1
    QEMU_BUILD=$2
    QEMU=$2/qemu-system-x86_64
    export GUEST_ABI=$3
}

# The oldest generation (Debian 12: QEMU 7.2, Linux 6.1): every VM test,
# the passes that test the device alone once: its source is the same in
# every generation, and the newest runs them all.  Here the storage tests
# run their plain pass (not force_mr or lossy: the device's MR and loss
# paths) and migration its pingpong pass (QEMU 7.2's migration and Linux
# 6.1's driver, not the device's stream again), and rdma-core 56 (the
# newest runs 65) against 44; NVMe with Linux 6.1's Soft-RoCE as the host
# (its target pass, Soft-RoCE's slow READ retries, is the newest's); and
# t-mixed-pair, the oldest generation
# against the newest, which needs both builds.  Its qtests are the
# sanitize suite's, on the same QEMU 7.2.
# On the fuzzing build (make check) its QEMUs run with the sanitizers, and
# a report in a guest's QEMU log fails the test (sanitizer_report): the
# device under ASan and UBSan with real guests' traffic.  That build's
# QEMU outside rdma-sim's code is a plain clang build (scripts/fuzz-cc.sh):
# t-rc-pingpong took 27 to 34 s on it and 28 to 36 s on the gcc build,
# each beside the default generation's VM tests.
deb12_suites() {
    generation deb12/ "$DEB12_QEMU_BUILD" "$DEB12_GUEST_ABI"
    if [ "$DEB12_QEMU_BUILD" = "$FUZZ_BUILD" ]; then
        SANITIZED=1
        sanitizer_env_vm
    fi
    # t-mixed-pair's QEMU 7.2 is this one; t-server's guests run Debian's
    # QEMU 11.1 whichever generation runs it: the newest's run is enough
    export QEMU_OLD=$QEMU
    VMTEST_EXCLUDE="t-server"
    export NVME_PASSES=plain NFS_PASSES=plain MIG_PASSES=pingpong RDMA_CORE_VERSIONS=56 \
        INTEROP_NVME_PASSES=rxe-host
    if [ -x "$QEMU" ]; then
        suite_smoke
        suite_vmtest
    else
        cannot_run deb12 "$QEMU not found; run 'make QEMU_VERSION=$GEN_OLDEST_QEMU' first"
    fi
}

# The middle generation (Debian 13: QEMU 10.0, Linux 6.12): built, its
# qtests and smoke tests, and a guest booted with the driver and RDMA
# traffic between two.
deb13_suites() {
    VMTEST_ONLY="t-smoke-boot t-rc-pingpong"
    if [ "${CHECK_MIDDLE:-full}" = compile ]; then
        generation deb13/ "$QEMU_BUILD" "$DEB13_GUEST_ABI"
        suite_vmtest
        return
    fi
    generation deb13/ "$DEB13_QEMU_BUILD" "$DEB13_GUEST_ABI"
    if [ -x "$QEMU" ]; then
        suite_smoke
        suite_qtest
        suite_vmtest
    else
        cannot_run deb13 "$QEMU not found; run 'make QEMU_VERSION=$GEN_MIDDLE_QEMU' first"
    fi
}

suite_deb12() {
    isolated deb12 deb12_suites
}

suite_deb13() {
    isolated deb13 deb13_suites
}

# --- two lanes: the other generations' builds beside the default's tests ----------
# make check (CHECK_BUILDS=1) builds only the default QEMU before it runs
# this script.  The rest runs in two lanes.  Lane A, in front: the default
# generation's suites and dkms.  Lane B, beside it: the fuzzing build (the
# oldest generation's QEMU 7.2, which deb12 runs on too) at a low CPU
# priority, in what lane A's guests leave idle; then deb12 at lane A's
# priority, its guests beside lane A's, while the middle generation's
# QEMU 10.0 builds at the lowest priority in what both leave idle; then
# fuzz, sanitize and deb13 at the low one again.  A failed build is one
# failure; the suites that needed it say what is missing.
LANE_B_PID=
# lane_b_build VERSION TARGET NAME: make's TARGET for QEMU VERSION, at the
# lowest priority; a failure is the failure NAME.
lane_b_build() {
    nice -n 14 make -C "$REPO" --no-print-directory QEMU_VERSION="$1" "$2" >> "$LOGS/check-builds.log" 2>&1 ||
        { fail "$3" "make QEMU_VERSION=$1 $2 failed" "$LOGS/check-builds.log"; return 1; }
}

# The middle generation's QEMU built (CHECK_MIDDLE=full, make check's
# default), or only rdma-sim's code compiled against it (compile: the
# result deb13/compile), in the background: lane_b_middle_start, then
# lane_b_middle_wait before deb13.
MIDDLE_PID=
lane_b_middle_target() {
    if [ "${CHECK_MIDDLE:-full}" = compile ]; then echo qemu-compile; else echo qemu; fi
}

lane_b_middle_start() {
    nice -n 14 make -C "$REPO" --no-print-directory QEMU_VERSION="$GEN_MIDDLE_QEMU" \
        "$(lane_b_middle_target)" > "$LOGS/check-build-middle.log" 2>&1 &
    MIDDLE_PID=$!
}

lane_b_middle_wait() {
    local name=build/qemu-$GEN_MIDDLE_QEMU
    [ "${CHECK_MIDDLE:-full}" != compile ] || name=deb13/compile
    if wait "$MIDDLE_PID"; then
        [ "${CHECK_MIDDLE:-full}" != compile ] || pass "$name"
    else
        fail "$name" "make QEMU_VERSION=$GEN_MIDDLE_QEMU $(lane_b_middle_target) failed" "$LOGS/check-build-middle.log"
    fi
}

lane_b() {
    local s
    passed=0 failed=0 skipped=0
    renice -n 5 "$BASHPID" > /dev/null
    : > "$LOGS/check-builds.log"
    echo "check: lane B: the fuzzing build (QEMU $GEN_OLDEST_QEMU), then QEMU $GEN_MIDDLE_QEMU, at low priority (logs: $LOGS/check-build*.log)" >&2
    lane_b_build "$GEN_OLDEST_QEMU" qemu-fuzz build/qemu-fuzz || true
    [[ " ${lane_b_suites[*]} " != *" deb13 "* ]] || lane_b_middle_start
    for s in "${lane_b_suites[@]}"; do
        case $s in
        deb12) renice -n 0 "$BASHPID" > /dev/null || true ;;
        *) renice -n 5 "$BASHPID" > /dev/null || true ;;
        esac
        [ "$s" != deb13 ] || lane_b_middle_wait
        "suite_$s"
    done
    echo "$passed $failed $skipped" > "$LOGS/lane-b-counts"
}

lane_b_start() {
    rm -f "$LOGS/lane-b-counts"
    lane_b &
    LANE_B_PID=$!
}

lane_b_wait() {
    [ -n "$LANE_B_PID" ] || return 0
    local start=$SECONDS p f s
    wait "$LANE_B_PID" || true
    if read -r p f s < "$LOGS/lane-b-counts"; then
        passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
    else
        cannot_run lane-b "lane B (the fuzzing build, deb12, fuzz, sanitize, deb13) ended without its counts" "$LOGS/check-builds.log"
    fi
    echo "check: lane B ended $((SECONDS - start)) s after lane A" >&2
    LANE_B_PID=
}

# --- main ----------------------------------------------------------------------
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(all)
run=()
for s in "${suites[@]}"; do
    case $s in
        all) if [ "${SANITIZE:-}" = 1 ]; then run+=(unit smoke qtest fuzz)
             else run+=(unit smoke qtest vmtest dkms fuzz sanitize deb12 deb13); fi ;;
        unit|smoke|qtest|vmtest|fuzz|sanitize|dkms|deb12|deb13) run+=("$s") ;;
        *) echo "check.sh: unknown suite '$s' (all, unit, smoke, qtest, vmtest, fuzz, sanitize, dkms, deb12, deb13)" >&2; exit 2 ;;
    esac
done
if [ "${SANITIZE:-}" = 1 ]; then
    use_sanitized
fi
lane_b_suites=()
if [ "${CHECK_BUILDS:-}" = 1 ]; then
    lane_a=()
    for s in "${run[@]}"; do
        case $s in fuzz|sanitize|deb13|deb12) ;; *) lane_a+=("$s") ;; esac
    done
    # lane B's order (see above)
    for s in deb12 fuzz sanitize deb13; do
        [[ " ${run[*]} " != *" $s "* ]] || lane_b_suites+=("$s")
    done
    run=("${lane_a[@]}")
    lane_b_start
fi
for s in "${run[@]}"; do
    "suite_$s"
done
if [ -n "$LANE_B_PID" ]; then
    lane_b_wait
    [[ " ${run[*]} " != *" smoke "* ]] || smoke_qemu_patches
fi

[ $skipped -eq 0 ] || echo "($skipped skipped)" >&2
if [ -s "$FAILURES" ]; then
    { echo "--- the failures, with the first lines of their logs that say why (logs: $LOGS):"
      cat "$FAILURES"; } >&2
fi
record "$passed passed, $failed failed"
[ $failed -eq 0 ]
