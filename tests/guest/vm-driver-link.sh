#!/bin/bash
# Guest side of tests/vm/t-driver-link.sh: the host takes the NIC's link
# down and up again (QEMU monitor set_link) when asked through files in the
# results share; the device's PORT_DOWN/PORT_ACTIVE events must reach the
# net_device (carrier), the RDMA port state and the RDMA async events.
set -euo pipefail
# shellcheck source=tests/vm/guest-lib.sh
. "$RSIM_LIB"
# shellcheck source=tests/guest/driver-lib.sh
. "$RSIM_REPO/tests/guest/driver-lib.sh"

drv_load
drv_net_up 10.0.0.1/24
ibv_asyncwatch -d rsim0 >/tmp/async.out 2>&1 &
watch=$!
sleep 1

# ask_host WHAT: the host does WHAT (link-down, link-up) and acknowledges.
ask_host() {
    local i
    touch "$RSIM_RESULTS/request-$1"
    for ((i = 0; i < 300; i++)); do
        [[ -e $RSIM_RESULTS/ack-$1 ]] && return 0
        sleep 0.1
    done
    rsim_fail "the host did not acknowledge '$1' within 30 s"
}

# wait_port STATE CARRIER: the RDMA port state and the netdev carrier.
wait_port() {
    local i
    for ((i = 0; i < 100; i++)); do
        rdma link show rsim0/1 | grep -q "state $1 " &&
            [[ $(cat "/sys/class/net/$DRV_NETDEV/carrier" 2>/dev/null || echo 0) == "$2" ]] &&
            return 0
        sleep 0.1
    done
    rsim_fail "port not $1 with carrier $2 after 10 s: $(rdma link show rsim0/1); carrier $(cat "/sys/class/net/$DRV_NETDEV/carrier" 2>&1)"
}

ask_host link-down
wait_port DOWN 0
rsim_log "ok: link down: $(rdma link show rsim0/1); carrier off"
ask_host link-up
wait_port ACTIVE 1
rsim_log "ok: link up: $(rdma link show rsim0/1); carrier on"
sleep 1
kill "$watch" 2>/dev/null || true
wait "$watch" 2>/dev/null || true
drv_save asyncwatch.txt </tmp/async.out
cat /tmp/async.out
grep -q 'IBV_EVENT_PORT_ERR' /tmp/async.out || rsim_fail "no IBV_EVENT_PORT_ERR async event"
grep -q 'IBV_EVENT_PORT_ACTIVE' /tmp/async.out || rsim_fail "no IBV_EVENT_PORT_ACTIVE async event"
rsim_log "ok: IBV_EVENT_PORT_ERR and IBV_EVENT_PORT_ACTIVE delivered"
dmesg | grep -q 'rdma_sim .*port link down' || rsim_fail "the driver did not log the link change"
drv_unload 60
drv_check_dmesg
echo "driver-link: all checks passed"
