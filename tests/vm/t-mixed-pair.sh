#!/bin/bash
# VM test: a mixed pair, the newest and the oldest generation the project
# supports against each other over a host UDP link: guest A on QEMU 10.2
# with Linux 7.3 (Debian unstable's QEMU source, trixie-backports' kernel),
# guest B on QEMU 7.2 with Linux 6.1 (Debian 12's), each with
# -device rdma-sim and the driver built for its kernel.  ibv_rc_pingpong
# with the received data checked (-c) in both directions at sizes from
# 1 byte to 1 MiB, then short ib_write_bw and ib_read_bw runs in both
# directions.  Each guest must have run the kernel and the QEMU it was
# meant to: its uname -r, the machine type its firmware reports
# (pc-q35-X.Y) and the version of the binary that booted it are checked.
#
# The binaries: QEMU_OLD (7.2; default build/qemu-7.2-build/qemu-system-x86_64,
# which `make QEMU_VERSION=7.2` builds) and QEMU_NEW (10.2; default
# build/qemu-10.2-build/qemu-system-x86_64, which `make QEMU_VERSION=10.2`
# builds).  Not QEMU_BINARY, the one QEMU a suite runs its tests on: this
# test needs both, whichever generation the suite is checking.  The
# kernels: the newest ABIs of the 7.3 and 6.1 series (scripts/guest-kernel.sh).
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"

# The pair is this test's subject, whatever GUEST_ABI the suite runs with.
export GUEST_ABI=7.3 GUEST_ABI_B=6.1
vmtest_init t-mixed-pair

old=${QEMU_OLD:-build/qemu-7.2-build/qemu-system-x86_64}
next=${QEMU_NEW:-build/qemu-10.2-build/qemu-system-x86_64}
[[ -x $old ]] ||
    vmtest_fail "no QEMU 7.2 binary at $old: 'make QEMU_VERSION=7.2' builds it (make check builds every generation), or set QEMU_OLD=/path/to/qemu-system-x86_64"
[[ -x $next ]] ||
    vmtest_fail "no QEMU 10.2 binary at $next: 'make QEMU_VERSION=10.2' builds it (make check builds every generation), or set QEMU_NEW=/path/to/qemu-system-x86_64"
ver_old=$(scripts/vm/vm qemu-version "$old")
ver_next=$(scripts/vm/vm qemu-version "$next")
[[ $ver_next == 10.2.* ]] ||
    vmtest_fail "QEMU_NEW ($next) is QEMU '$ver_next', not 10.2.x"
[[ $ver_old == 7.2.* ]] ||
    vmtest_fail "QEMU_OLD ($old) is QEMU '$ver_old', not 7.2.x"
echo "t-mixed-pair: guest A: QEMU $ver_next ($next), Linux $VMTEST_ABI"
echo "t-mixed-pair: guest B: QEMU $ver_old ($old), Linux $VMTEST_ABI_B"
[[ $VMTEST_ABI == 7.3.* && $VMTEST_ABI_B == 6.1.* ]] ||
    vmtest_fail "the kernels resolved to $VMTEST_ABI and $VMTEST_ABI_B, not 7.3 and 6.1 ones"

# "rev" lines swap the roles (tests/vm/guest/pair-cmds.sh): A is the client.
# The bandwidth runs: WRITE and READ, each with either guest as requester.
cmds="ibv_rc_pingpong -s 1 -n 100 -c
rev ibv_rc_pingpong -s 1 -n 100 -c
ibv_rc_pingpong -s 4096 -n 200 -c
rev ibv_rc_pingpong -s 65536 -n 50 -c -m 4096
ibv_rc_pingpong -s 1048576 -n 10 -c
rev ibv_rc_pingpong -s 1048576 -n 10 -c
ib_write_bw -s 65536 -n 500
rev ib_write_bw -s 65536 -n 500
ib_read_bw -s 65536 -n 500
rev ib_read_bw -s 65536 -n 500"

export QEMU=$next QEMU_B=$old
vmtest_pair rsim rsim -t 600 -s tests/vm/guest/pair-cmds.sh -e PAIR_CMDS="$cmds"
rc=$VMTEST_RC

bad() { echo "t-mixed-pair: $*"; rc=1; }

# check_guest INDEX ABI QEMU_VERSION: what the guest's results say it ran.
check_guest() {
    local r=${VMTEST_RESULTS[$1]:-} name=A want_machine
    (($1 == 0)) || name=B
    want_machine=pc-q35-$(cut -d. -f1,2 <<<"$3")
    if [[ -z $r ]]; then
        bad "guest $name left no results"
        return
    fi
    [[ $(cat "$r/kernel" 2>/dev/null) == "$2" ]] ||
        bad "guest $name ran Linux '$(cat "$r/kernel" 2>/dev/null)', not $2"
    [[ $(cat "$r/machine" 2>/dev/null) == "$want_machine" ]] ||
        bad "guest $name's machine is '$(cat "$r/machine" 2>/dev/null)', not $want_machine (QEMU $3)"
    [[ $(cat "$r/qemu-version" 2>/dev/null) == "$3" ]] ||
        bad "guest $name was booted by QEMU '$(cat "$r/qemu-version" 2>/dev/null)', not $3"
    echo "t-mixed-pair: guest $name ran Linux $(cat "$r/kernel" 2>/dev/null), machine $(cat "$r/machine" 2>/dev/null)"
}
check_guest 0 "$VMTEST_ABI" "$ver_next"
check_guest 1 "$VMTEST_ABI_B" "$ver_old"

# What the programs said, on both sides
vmtest_check_pair_cmds t-mixed-pair "$cmds" || rc=1

vmtest_done "$rc"
