#!/bin/bash
# Guest side of tests/vm/t-driver-link.sh: the host takes the NIC's link
# down and up again (QEMU monitor set_link) when asked through files in the
# results share; the device's PORT_DOWN/PORT_ACTIVE events must reach the
# net_device (carrier), the RDMA port state and the RDMA async events.
set -euo pipefail
# shellcheck source=scripts/vm/gt.sh
. "$RSIM_LIB"

gt_load 10.0.0.1/24
ibv_asyncwatch -d rsim0 >/tmp/async.out 2>&1 &
watch=$!
sleep 1

# ask_host WHAT: the host does WHAT (link-down, link-up) and acknowledges.
ask_host() {
    touch "$RSIM_RESULTS/request-$1"
    gt_retry 30 test -e "$RSIM_RESULTS/ack-$1" ||
        gt_fail "the host did not acknowledge '$1' within 30 s"
}

carrier() { cat "/sys/class/net/$GT_NETDEV/carrier" 2>/dev/null || echo 0; }
port_is() { gt_port_is "$1" && [[ $(carrier) == "$2" ]]; } # port_is STATE CARRIER

# wait_port STATE CARRIER: the RDMA port state and the netdev carrier.
wait_port() {
    gt_retry 10 port_is "$1" "$2" ||
        gt_fail "port not $1 with carrier $2 after 10 s: $(rdma link show rsim0/1); carrier $(carrier)"
}

ask_host link-down
wait_port DOWN 0
gt_log "ok: link down: $(rdma link show rsim0/1); carrier off"
ask_host link-up
wait_port ACTIVE 1
gt_log "ok: link up: $(rdma link show rsim0/1); carrier on"
sleep 1
kill "$watch" 2>/dev/null || true
wait "$watch" 2>/dev/null || true
gt_save asyncwatch.txt </tmp/async.out
cat /tmp/async.out
grep -q 'IBV_EVENT_PORT_ERR' /tmp/async.out || gt_fail "no IBV_EVENT_PORT_ERR async event"
grep -q 'IBV_EVENT_PORT_ACTIVE' /tmp/async.out || gt_fail "no IBV_EVENT_PORT_ACTIVE async event"
gt_log "ok: IBV_EVENT_PORT_ERR and IBV_EVENT_PORT_ACTIVE delivered"
dmesg | gt_has 'rdma_sim .*port link down' || gt_fail "the driver did not log the link change"
gt_unload 60
gt_check_dmesg
echo "driver-link: all checks passed"
