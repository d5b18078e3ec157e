#!/bin/bash
# Guest side of tests/vm/t-driver-unload.sh: unloading rdma_sim while user
# processes hold RDMA objects, and loading it again.
#   1. holders (verbs-test hold, an ibv_rc_pingpong server) are killed,
#      then rmmod, insmod, ibv_devinfo works again;
#   2. rmmod while the holders are still alive (the RDMA core disassociates
#      them), then they are killed, insmod, the verbs test passes again;
#   3. load/unload cycles;
# and the kernel log has no oops, WARN or BUG.
set -euo pipefail
# shellcheck source=scripts/vm/gt.sh
. "$RSIM_LIB"

HOLD_PIDS=()

# start_holders: one verbs-test in hold mode, one ibv_rc_pingpong server.
start_holders() {
    gt_hold
    ibv_rc_pingpong -d rsim0 -g "$GT_GID" -p 18515 >/tmp/pingpong.out 2>&1 &
    HOLD_PIDS=("$GT_HOLDER" $!)
    gt_wait_listen 18515 30
    gt_log "holders running: $(tail -n 1 /tmp/hold.out); ibv_rc_pingpong server listening"
    gt_log "rdma res: $(rdma res show rsim0)"
    rdma res show rsim0 | gt_has 'qp [3-9]' || gt_fail "holders own no QP: $(rdma res show rsim0)"
}

kill_holders() {
    local p
    for p in "${HOLD_PIDS[@]}"; do
        kill -9 "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    HOLD_PIDS=()
}

# After the holders died only the kernel's own objects (MAD: 1 QP) remain.
no_contexts() { rdma res show rsim0 | gt_has ' ctx 0 '; }
wait_objects_gone() {
    gt_retry 5 no_contexts ||
        gt_fail "user objects not destroyed after the holders died: $(rdma res show rsim0)"
    gt_log "after the holders died: $(rdma res show rsim0)"
}

check_devinfo() {
    local out
    out=$(ibv_devinfo -d rsim0) || gt_fail "ibv_devinfo failed after reload: $out"
    grep -q 'hca_id:.*rsim0' <<<"$out" || gt_fail "ibv_devinfo shows no rsim0: $out"
    grep -q 'PORT_ACTIVE' <<<"$out" || gt_fail "rsim0 port not ACTIVE after reload: $out"
    gt_log "ok: ibv_devinfo works: $(grep -E 'state:' <<<"$out" | xargs)"
}

gt_log "--- phase 1: holders killed, then rmmod and insmod"
gt_load 10.0.0.1/24
start_holders
kill_holders
wait_objects_gone
gt_unload 60
gt_load 10.0.0.1/24
check_devinfo

gt_log "--- phase 2: rmmod while the holders are alive"
start_holders
gt_unload 120
for p in "${HOLD_PIDS[@]}"; do
    kill -0 "$p" 2>/dev/null || gt_fail "holder $p died when the driver was removed (it should only be disassociated)"
done
gt_log "ok: holders still alive after rmmod (disassociated)"
kill_holders
gt_load 10.0.0.1/24
check_devinfo
"$GT_VERBS_TEST" -d rsim0 -D "/sys/kernel/debug/rdma_sim/$GT_BDF/mrs" check >/tmp/verbs.out 2>&1 ||
    { cat /tmp/verbs.out; gt_fail "verbs-test failed after the reload"; }
gt_log "ok: verbs-test passes after the reload ($(tail -n 1 /tmp/verbs.out))"

gt_log "--- phase 3: load/unload cycles"
for _ in 1 2 3; do
    gt_unload 60
    gt_load
done
gt_net_up 10.0.0.1/24
check_devinfo
gt_unload 60

gt_check_dmesg
echo "driver-unload: all checks passed"
