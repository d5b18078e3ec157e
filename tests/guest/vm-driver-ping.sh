#!/bin/bash
# Guest side of tests/vm/t-driver-ping.sh (runs in both guests): the
# rdma-sim net_device carries IP traffic over the guests' UDP link.
#   - 10 pings to the peer, 0% loss;
#   - MTU 9000 on both sides (SET_PORT), 3 pings of 8972 bytes that must
#     not be fragmented, and the RDMA port's active MTU follows (4096).
set -euo pipefail
# shellcheck source=tests/vm/guest-lib.sh
. "$RSIM_LIB"
# shellcheck source=tests/guest/driver-lib.sh
. "$RSIM_REPO/tests/guest/driver-lib.sh"

nd=$RSIM_NETIF
drv=$(basename "$(readlink "/sys/class/net/$nd/device/driver")")
[[ $drv == rdma_sim ]] || rsim_fail "$nd is driven by '$drv', not rdma_sim"
rsim_log "$nd ($drv) is $RSIM_IP, peer $RSIM_PEER"

rsim_wait_peer 60
ping -c 10 -i 0.2 -W 2 "$RSIM_PEER" | tee /tmp/ping.out
grep -q ' 0% packet loss' /tmp/ping.out ||
    rsim_fail "packets lost pinging $RSIM_PEER over rdma_sim: $(tail -n 2 /tmp/ping.out | tr '\n' ' ')"
rsim_log "ok: 10 pings, 0% loss"

rsim_barrier mtu-start 60
ip link set "$nd" mtu 9000 || rsim_fail "cannot set MTU 9000 on $nd (SET_PORT)"
rsim_barrier mtu-set 60
ping -c 3 -i 0.3 -W 3 -M "do" -s 8972 "$RSIM_PEER" | tee /tmp/ping-jumbo.out
grep -q ' 0% packet loss' /tmp/ping-jumbo.out ||
    rsim_fail "9000-byte frames lost: $(tail -n 2 /tmp/ping-jumbo.out | tr '\n' ' ')"
rsim_log "ok: unfragmented 9000-byte pings"
mtu=$(ibv_devinfo -d rsim0 | awk '$1 == "active_mtu:" { print $2 }')
[[ $mtu == 4096 ]] || rsim_fail "RDMA active_mtu is $mtu with an Ethernet MTU of 9000, want 4096"
rsim_log "ok: RDMA active_mtu $mtu"
ip -s link show "$nd" | drv_save ip-link.txt
ip -s link show "$nd"
drv_check_dmesg
rsim_barrier "done" 60
echo "driver-ping: all checks passed"
