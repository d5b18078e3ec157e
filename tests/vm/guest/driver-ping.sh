#!/bin/bash
# Guest side of tests/vm/t-driver-ping.sh (runs in both guests): the
# rdma-sim net_device carries IP traffic over the guests' UDP link.
#   - 10 pings to the peer, 0% loss;
#   - MTU 9000 on both sides (SET_PORT), 3 pings of 8972 bytes that must
#     not be fragmented, and the RDMA port's active MTU follows (4096).
set -euo pipefail
# shellcheck source=scripts/vm/gt.sh
. "$RSIM_LIB"

nd=$RSIM_NETIF
drv=$(basename "$(readlink "/sys/class/net/$nd/device/driver")")
[[ $drv == rdma_sim ]] || gt_fail "$nd is driven by '$drv', not rdma_sim"
gt_log "$nd ($drv) is $RSIM_IP, peer $RSIM_PEER"

gt_wait_peer 60
gt_ping -c 10 -i 0.2 -W 2
gt_log "ok: 10 pings, 0% loss"

gt_barrier mtu-start 60
ip link set "$nd" mtu 9000 || gt_fail "cannot set MTU 9000 on $nd (SET_PORT)"
gt_barrier mtu-set 60
gt_ping -c 3 -i 0.3 -W 3 -M "do" -s 8972
gt_log "ok: unfragmented 9000-byte pings"
mtu=$(ibv_devinfo -d rsim0 | awk '$1 == "active_mtu:" { print $2 }')
[[ $mtu == 4096 ]] || gt_fail "RDMA active_mtu is $mtu with an Ethernet MTU of 9000, want 4096"
gt_log "ok: RDMA active_mtu $mtu"
ip -s link show "$nd" | gt_save ip-link.txt
ip -s link show "$nd"
gt_check_dmesg
gt_barrier "done" 60
echo "driver-ping: all checks passed"
