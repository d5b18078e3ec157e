#!/bin/bash
# Guest side of tests/vm/t-bringup.sh and tutorial/check.sh: loads the
# bring-up tutorial's driver (rsim_bringup.ko, tutorial/) on an rdma-sim
# device that no other driver owns and checks what it prints.
#
# Learner mode (tutorial/check.sh): BRINGUP_KO and BRINGUP_EX: the module
# is loaded with exercise=BRINGUP_EX and must print "exercise EX: ok".
# Test mode (t-bringup): BRINGUP_DIR holds base/rsim_bringup.ko (the
# shipped driver) and EX/rsim_bringup.ko (with solutions/EX.patch) for each
# EX of BRINGUP_EXERCISES: the base module must do every step and say the
# data matches; with exercise=EX it must say "not done", and the solution
# "ok"; each mistake of the tutorial must fail with the device's status.
set -euo pipefail
# shellcheck source=scripts/vm/gt.sh
. "$RSIM_LIB"

MOD=rsim_bringup
OUT=/tmp/bringup.out

bdf=$(gt_rsim_bdf) || exit 1
[[ ! -e /sys/module/rdma_sim ]] || gt_fail "rdma_sim.ko is loaded: it owns the device"
[[ ! -e /sys/bus/pci/devices/$bdf/driver ]] ||
    gt_fail "$bdf is already bound to $(basename "$(readlink "/sys/bus/pci/devices/$bdf/driver")")"

# load KO ARGS...: insmod; the kernel lines it added go to $OUT.
load() {
    local ko=$1 n
    shift
    [[ -f $ko ]] || gt_fail "$ko not built"
    n=$(dmesg | wc -l)
    gt_log "insmod $ko $*"
    insmod "$ko" "$@" || gt_fail "insmod $ko $* failed"
    # (the kernel's taint notices of an unsigned out-of-tree module left out)
    dmesg | tail -n +$((n + 1)) | grep "$MOD" | grep -v taint >"$OUT" || true
    sed 's/^/    /' "$OUT"
    # Matched in bash below: processes are slow to start under TCG.
    IFS= read -r -d '' OUT_TEXT <"$OUT" || true
}

# unload: rmmod within a time limit; the device must be free again.
unload() {
    local n
    n=$(dmesg | wc -l)
    timeout 30 rmmod "$MOD" || gt_fail "rmmod $MOD failed or hung"
    [[ ! -e /sys/module/$MOD ]] || gt_fail "$MOD still loaded after rmmod"
    [[ ! -e /sys/bus/pci/devices/$bdf/driver ]] || gt_fail "$bdf still bound after rmmod"
    dmesg | tail -n +$((n + 1)) | grep "$MOD" >"$OUT.rm" || true
}

# expect ERE WHAT: what the last load printed matches ERE.
expect() {
    [[ $OUT_TEXT =~ $1 ]] || gt_fail "$2: no line matching '$1' (output above)"
}

if [[ -n ${BRINGUP_EX:-} ]]; then
    load "${BRINGUP_KO:?}" "exercise=$BRINGUP_EX"
    expect 'step 10: SEND of [0-9]+ bytes came back through loopback, data matches' "bring-up"
    ok_re="exercise $BRINGUP_EX: ok"
    if [[ ! $OUT_TEXT =~ $ok_re ]]; then
        unload
        gt_fail "exercise $BRINGUP_EX is not done yet: $(grep "exercise $BRINGUP_EX" "$OUT" | cut -c1-200 | tr '\n' ' ')"
    fi
    unload
    gt_check_dmesg
    echo "bringup: exercise $BRINGUP_EX: ok"
    exit 0
fi

# 1. The shipped driver: every step, in order, with the values that matter.
load "$BRINGUP_DIR/base/$MOD.ko"
gt_save bringup-base.txt <"$OUT"
[[ -e /sys/bus/pci/drivers/$MOD/$bdf ]] || gt_fail "$MOD did not bind $bdf"
checks=(
    'step 1: PCI 1b36:0120 rev 1 class 020000, BAR0 \[mem'
    'step 2: VERSION 0x00010000 \(1\.0\), FEATURES 0x1ff; reset: DEV_STATUS 0x0'
    'step 3: MSI-X: 2 vectors'
    'async event type 0x01 object 1 \(vector 0\)'
    'step 4: ENABLE -> DEV_STATUS 0x1 \(READY\); NOP: OK'
    'step 5: node GUID 505400fffe5e0e01; port 1 state 4, MAC 52:54:00:5e:0e:01, MTU 1500 -> path MTU 1024'
    'step 5: GID 0 = 0000:0000:0000:0000:0000:ffff:c000:0201'
    'step 6: completion EQ [0-9]+: 16 entries'
    'step 7: PD [0-9]+; CQ [0-9]+: 16 slots'
    'step 8: QP [0-9]+: RC, in RESET, SQ/RQ 16 WQEs; MR lkey 0x[0-9a-f]+ rkey 0x[0-9a-f]+'
    'step 8: MR: 16384 bytes at iova 0x10000000'
    'step 9: QP [0-9]+: RESET -> INIT -> RTR -> RTS, path MTU 1024, connected to itself'
    'step 10: posted a receive and a SEND of 4000 bytes'
    'CQE: wr_id 1 opcode 128 status 0 byte_len 4000'
    'CQE: wr_id 2 opcode 0 status 0 byte_len 4000'
    'step 10: completion interrupt on vector 1'
    'step 10: SEND of 4000 bytes came back through loopback, data matches'
)
for c in "${checks[@]}"; do expect "$c" "bring-up"; done
! grep -qiE 'fail|error|exercise' "$OUT" || gt_fail "unexpected lines: $(grep -iE 'fail|error|exercise' "$OUT" | tr '\n' ' ')"
# The steps come in order, each once (step 10 prints several lines).
steps=$(grep -oE 'step [0-9]+:' "$OUT" | uniq | tr -d '\n')
[[ $steps == "step 1:step 2:step 3:step 4:step 5:step 6:step 7:step 8:step 9:step 10:" ]] ||
    gt_fail "steps out of order: $steps"
unload
# Every object destroyed, newest first, then the device reset.
rm_order=$(grep -oE 'teardown: [A-Z_]+|removed:' "$OUT.rm" | sed 's/teardown: //' | tr '\n' ' ')
[[ $rm_order == "DESTROY_QP DEREG_MR DESTROY_CQ DEALLOC_PD DEL_GID DESTROY_EQ removed: " ]] ||
    gt_fail "rmmod: teardown was '$rm_order'"
gt_log "ok: the shipped driver brings the device up, the SEND comes back, rmmod tears it down"

# 2. Exercises: "not done" in the shipped driver, "ok" with the solution.
for ex in ${BRINGUP_EXERCISES:-}; do
    load "$BRINGUP_DIR/base/$MOD.ko" "exercise=$ex"
    expect "exercise $ex: not done" "shipped driver, exercise=$ex"
    ok_re="exercise $ex: ok"
    [[ ! $OUT_TEXT =~ $ok_re ]] || gt_fail "the shipped driver already solves exercise $ex"
    unload
    load "$BRINGUP_DIR/$ex/$MOD.ko" "exercise=$ex"
    gt_save "bringup-$ex.txt" <"$OUT"
    expect "exercise $ex: ok" "solution of exercise $ex"
    unload
    gt_log "ok: exercise $ex: not done in the shipped driver, ok with solutions/$ex.patch"
done

# 3. The learner's mistakes of docs/bring-up.md (mistake=NAME), each with
# what the device answers, as NAME=ERE.
mistakes=(
    "aq_depth=ENABLE: not READY, DEV_STATUS 0x102 \\(fatal reason 1\\)"
    "cq_page_shift=CREATE_CQ failed: status INVALID \\(0x02\\)"
    "rtr_no_av=MODIFY_QP INIT->RTR failed: status INVALID \\(0x02\\)"
    "bad_lkey=CQE: wr_id 2 opcode 0 status 4 byte_len 0"
    "psn_mismatch=no completion event within 2000 ms"
    "post_before_rts=CQE: wr_id 99 opcode 0 status 0 byte_len 4000"
)
for m in "${mistakes[@]}"; do
    load "$BRINGUP_DIR/base/$MOD.ko" "mistake=${m%%=*}"
    expect "${m#*=}" "mistake=${m%%=*}"
    timeout 30 rmmod "$MOD" || gt_fail "rmmod after mistake=${m%%=*} failed"
    gt_log "ok: mistake ${m%%=*}: ${BASH_REMATCH[0]}"
done

gt_check_dmesg
echo "bringup: all checks passed"
