#!/bin/bash
# Runs in both guests of tests/vm/t-server.sh's kill pass.  Guest A's
# rdma-sim is an rdma-sim-server; guest B runs atomics on A's memory
# (tests/vm/progs/atomic-check, every result checked, its QP's retry_cnt
# 6) when the host kills A's server (SIGKILL, on A's request-kill):
#   B  its requests go unanswered: after 6 retries the oldest completes
#      with IBV_WC_RETRY_EXC_ERR ("transport retry counter exceeded") and
#      the client exits non-zero; nothing hangs.  (With retry_cnt 7, the
#      default of perftest, ibv_rc_pingpong and rping, rdma-sim retries for
#      ever, as Soft-RoCE does: docs/datasheet.md.)
#   A  the driver finds the device gone at its next command (registers
#      read all ones) and says so; A's atomic-check, killed, ends (its
#      verbs objects closed on the lost device); rmmod works
# Then the host starts a new server and hot-plugs a second device for it
# (QMP device_add, on A's request-replug: QEMU 11.1 cannot unplug a
# vfio-user-pci); A loads the driver again, which takes the new function,
# and B's ib_write_bw to it runs to its result line.
set -euo pipefail
# shellcheck source=scripts/vm/gt.sh
. "$RSIM_LIB"

res=$RSIM_RESULTS
check=$RSIM_REPO/tests/vm/progs/atomic-check

# new_function: prints the PCI address of an rdma-sim function other than
# $old (the dead one); fails if there is none.
new_function() {
    local d
    for d in /sys/bus/pci/devices/*; do
        [[ ${d##*/} != "$old" && $(<"$d/vendor"):$(<"$d/device") == "$GT_PCI_ID" ]] || continue
        echo "${d##*/}"
        return 0
    done
    return 1
}
gt_rdma_setup
gt_wait_peer 60
if [[ $RSIM_ROLE == server ]]; then
    "$check" -d "$GT_DEV" -g "$GT_GID" >"$res/kill-server.txt" 2>&1 &
    pid=$!
    gt_wait_listen 18700 60
    gt_barrier start 120
    sleep 5                     # B's atomics flow
    touch "$res/request-kill"
    gt_retry 30 test -e "$res/ack-kill" || gt_fail "the host did not kill the server within 30 s"
    t0=$SECONDS
    # The next admin command (a statistics query) finds the device gone:
    # it times out (ADMIN_TIMEOUT) and the registers read all ones.
    rdma statistic show link "$GT_DEV/1" >/dev/null 2>&1 || true
    gt_retry 30 sh -c 'dmesg | grep -q "device lost"' ||
        gt_fail "the driver did not report the device lost: $(dmesg | tail -n 5 | tr '\n' ';')"
    gt_log "the driver reported the device lost $((SECONDS - t0)) s after the kill: $(dmesg | grep -m1 'device lost')"
    # Its TCP peer is out of reach (the test interface is the lost
    # device's): end it; closing its verbs objects on the lost device
    # must not hang.
    kill "$pid"
    timeout 30 tail --pid="$pid" -s 0.2 -f /dev/null ||
        gt_fail "A's atomic-check, killed, still runs 30 s later: $(tr '\n' ';' <"/proc/$pid/stack" 2>/dev/null)"
    wait "$pid" || true
    gt_unload 60
    old=$(gt_rsim_bdf)
    touch "$res/request-replug"
    gt_retry 90 test -e "$res/ack-replug" || gt_fail "the host did not hot-plug a new device within 90 s"
    # (the bus's rescan drops the dead function: its config space reads all ones)
    gt_retry 30 new_function >/dev/null ||
        gt_fail "no new rdma-sim function 30 s after the hot-plug: $(echo /sys/bus/pci/devices/*)"
    new=$(new_function)
    modprobe -a ib_core ib_uverbs || gt_fail "modprobe ib_core ib_uverbs failed"
    insmod "$GT_KO" || gt_fail "insmod $GT_KO failed: $(dmesg | tail -n 5 | tr '\n' ';')"
    gt_retry 30 test -e "/sys/bus/pci/drivers/rdma_sim/$new" -a -e /sys/class/infiniband/rsim0 ||
        gt_fail "rdma_sim did not bind $new or register rsim0 within 30 s: $(dmesg | grep -i rdma_sim | tail -n 5 | tr '\n' ';')"
    gt_log "the new function $new is rsim0; the dead $old is $(if [[ -e /sys/bus/pci/devices/$old ]]; then echo "still there, unbound"; else echo gone; fi)"
    gt_net_up "$RSIM_IP"
    ib_write_bw -d rsim0 -x "$GT_GID" -F -s 65536 -n 500 >"$res/kill-after-server.txt" 2>&1 &
    pid=$!
    gt_wait_listen 18515 60
    gt_barrier again 120
    wait "$pid" || gt_fail "A's ib_write_bw after the restart failed: $(tail -n 5 "$res/kill-after-server.txt")"
else
    gt_barrier start 120
    t0=$SECONDS rc=0
    timeout 150 "$check" -d "$GT_DEV" -g "$GT_GID" -r 6 -D 60 "$RSIM_PEER" \
        >"$res/kill-client.txt" 2>&1 || rc=$?
    tail -n 3 "$res/kill-client.txt"
    ((rc != 124)) || gt_fail "B's atomic-check still ran 150 s after it started (its peer's device was killed)"
    ((rc != 0)) || gt_fail "B's atomic-check passed though its peer's device was killed during it"
    grep -q 'completed with transport retry counter exceeded' "$res/kill-client.txt" ||
        gt_fail "B's atomic-check (exit $rc) did not end with a RETRY_EXC_ERR completion"
    gt_log "B's atomic-check ended after $((SECONDS - t0)) s with RETRY_EXC_ERR (exit $rc)"
    gt_barrier again 300        # (A's back: the barrier runs over its device)
    ib_write_bw -d "$GT_DEV" -x "$GT_GID" -F -s 65536 -n 500 "$RSIM_PEER" \
        >"$res/kill-after-client.txt" 2>&1 ||
        gt_fail "B's ib_write_bw after the restart failed: $(tail -n 5 "$res/kill-after-client.txt")"
    cat "$res/kill-after-client.txt"
    grep -qE '^ *65536 +500 ' "$res/kill-after-client.txt" ||
        gt_fail "B's ib_write_bw after the restart printed no result line for 500 x 64 KiB"
fi
gt_check_dmesg
echo "server-kill: passed"
