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
# shellcheck source=tests/vm/guest-lib.sh
. "$RSIM_LIB"
# shellcheck source=tests/guest/driver-lib.sh
. "$RSIM_REPO/tests/guest/driver-lib.sh"

HOLD_PIDS=()

# start_holders: one verbs-test in hold mode, one ibv_rc_pingpong server.
start_holders() {
    local gid i
    : >/tmp/hold.out
    "$VERBS_TEST" -d rsim0 hold >/tmp/hold.out 2>&1 &
    HOLD_PIDS=($!)
    gid=$(awk '/::ffff:10.0.0.1/ { gsub(/[^0-9]/, "", $1); print $1; exit }' \
        <(ibv_devinfo -v | grep -E 'GID\['))
    ibv_rc_pingpong -d rsim0 -g "${gid:-1}" -p 18515 >/tmp/pingpong.out 2>&1 &
    HOLD_PIDS+=($!)
    for ((i = 0; i < 100; i++)); do
        grep -q READY /tmp/hold.out && break
        grep -q FATAL /tmp/hold.out && break
        sleep 0.1
    done
    grep -q READY /tmp/hold.out || rsim_fail "verbs-test hold did not get ready: $(cat /tmp/hold.out)"
    rsim_wait_listen 18515 30
    rsim_log "holders running: $(tail -n 1 /tmp/hold.out); ibv_rc_pingpong server listening"
    rsim_log "rdma res: $(rdma res show rsim0)"
    rdma res show rsim0 | grep -q 'qp [3-9]' || rsim_fail "holders own no QP: $(rdma res show rsim0)"
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
wait_objects_gone() {
    local i
    for ((i = 0; i < 50; i++)); do
        rdma res show rsim0 | grep -q ' ctx 0 ' && break
        sleep 0.1
    done
    rdma res show rsim0 | grep -q ' ctx 0 ' ||
        rsim_fail "user objects not destroyed after the holders died: $(rdma res show rsim0)"
    rsim_log "after the holders died: $(rdma res show rsim0)"
}

check_devinfo() {
    local out
    out=$(ibv_devinfo -d rsim0) || rsim_fail "ibv_devinfo failed after reload: $out"
    grep -q 'hca_id:.*rsim0' <<<"$out" || rsim_fail "ibv_devinfo shows no rsim0: $out"
    grep -q 'PORT_ACTIVE' <<<"$out" || rsim_fail "rsim0 port not ACTIVE after reload: $out"
    rsim_log "ok: ibv_devinfo works: $(grep -E 'state:' <<<"$out" | xargs)"
}

rsim_log "--- phase 1: holders killed, then rmmod and insmod"
drv_load
drv_net_up 10.0.0.1/24
start_holders
kill_holders
wait_objects_gone
drv_unload 60
drv_load
drv_net_up 10.0.0.1/24
check_devinfo

rsim_log "--- phase 2: rmmod while the holders are alive"
start_holders
drv_unload 120
for p in "${HOLD_PIDS[@]}"; do
    kill -0 "$p" 2>/dev/null || rsim_fail "holder $p died when the driver was removed (it should only be disassociated)"
done
rsim_log "ok: holders still alive after rmmod (disassociated)"
kill_holders
drv_load
drv_net_up 10.0.0.1/24
check_devinfo
"$VERBS_TEST" -d rsim0 -D "/sys/kernel/debug/rdma_sim/$DRV_BDF/mrs" check >/tmp/verbs.out 2>&1 ||
    { cat /tmp/verbs.out; rsim_fail "verbs-test failed after the reload"; }
rsim_log "ok: verbs-test passes after the reload ($(tail -n 1 /tmp/verbs.out))"

rsim_log "--- phase 3: load/unload cycles"
for i in 1 2 3; do
    drv_unload 60
    drv_load
done
drv_net_up 10.0.0.1/24
check_devinfo
drv_unload 60

drv_check_dmesg
dmesg | grep -iE 'rdma_sim|rsim' | drv_save dmesg-rdma_sim.txt
echo "driver-unload: all checks passed"
