#!/bin/bash
# Guest side of tests/vm/t-rdma-sim-top.sh: an RC ping-pong runs through
# the device's loopback (server and client in this guest) while the host
# reads the device's objects with scripts/rdma-sim-top over QMP.  The
# guest saves the driver's view (rdma resource show) for the host to
# compare with the device's.
set -euo pipefail
# shellcheck source=scripts/vm/gt.sh
. "$RSIM_LIB"

gt_load 10.0.0.1/24
modprobe -a ib_uverbs rdma_ucm
gt_wait_gid rsim0 10.0.0.1

# 4 KiB ping-pongs until killed: two RC QPs in RTS, each with its MR.
ibv_rc_pingpong -d rsim0 -g "$GT_GID" -s 4096 -n 100000000 >/tmp/server.out 2>&1 &
server=$!
gt_wait_listen 18515
ibv_rc_pingpong -d rsim0 -g "$GT_GID" -s 4096 -n 100000000 127.0.0.1 >/tmp/client.out 2>&1 &
client=$!
rc_rts() { [[ $(rdma resource show qp link rsim0/1 | grep -c 'type RC state RTS') == 2 ]]; }
gt_retry 30 rc_rts ||
    gt_fail "no two RC QPs in RTS: $(rdma resource show qp | tr '\n' ';'); server: $(cat /tmp/server.out); client: $(cat /tmp/client.out)"
# -dd: with the driver's attributes (rsim_restrack.c)
rdma -dd resource show qp link rsim0/1 | gt_save rdma-resource-qp.txt
rdma -dd resource show cq dev rsim0 | gt_save rdma-resource-cq.txt
rdma -dd resource show mr dev rsim0 | gt_save rdma-resource-mr.txt

# The host reads the device while the ping-pong runs.
touch "$RSIM_RESULTS/request-snapshot"
gt_retry 60 test -e "$RSIM_RESULTS/ack-snapshot" ||
    gt_fail "the host took no snapshot within 60 s"
kill -0 "$server" "$client" ||
    gt_fail "the ping-pong ended early: $(cat /tmp/server.out /tmp/client.out)"
kill "$server" "$client"
wait "$server" "$client" 2>/dev/null || true
gt_check_dmesg
echo "rdma-sim-top: guest side done"
