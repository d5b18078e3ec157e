# Sourced by guest scripts that use RDMA: finds the RDMA device of the test
# interface and its RoCEv2 GID.
#
#   rdma_setup        sets RDMA_DEV (e.g. rsim0, rxe0) and RDMA_GID (the GID
#                     index of the interface's IPv4 address, RoCE v2).
#                     An interface of the rdma_sim driver has its own device;
#                     on any other NIC a Soft-RoCE device (rxe0) is created.
#                     RSIM_ETH_MTU (environment), if set, is the MTU given
#                     to the interface first (9000 allows a 4096 path MTU);
#                     RSIM_GID_FAMILY=ipv6 picks the IPv6 link-local GID.
#   rdma_stack        prints "rsim" or "rxe"
# shellcheck shell=bash

rdma_stack() {
    local drv
    drv=$(basename "$(readlink -f "/sys/class/net/$RSIM_NETIF/device/driver")")
    if [[ $drv == rdma_sim ]]; then echo rsim; else echo rxe; fi
}

# rdma_gid_index DEV IPV4|ipv6: index of the RoCE v2 GID ::ffff:IPV4, or
# of the interface's IPv6 link-local one (fe80::/64); nothing if absent
rdma_gid_index() {
    local dev=$1 ip=$2 want f idx gid
    want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${ip//./ } 2>/dev/null)
    for f in /sys/class/infiniband/"$dev"/ports/1/gids/*; do
        idx=${f##*/}
        gid=$(cat "$f" 2>/dev/null)
        if [[ $ip == ipv6 ]]; then
            [[ $gid == fe80:0000:0000:0000:* ]] || continue
        else
            [[ $gid == "$want" ]] || continue
        fi
        [[ $(cat "/sys/class/infiniband/$dev/ports/1/gid_attrs/types/$idx" 2>/dev/null) == "RoCE v2" ]] || continue
        echo "$idx"
        return 0
    done
    return 1
}

rdma_setup() {
    local ip=${RSIM_IP%/*} i
    if [[ -n ${RSIM_ETH_MTU:-} ]]; then
        ip link set dev "$RSIM_NETIF" mtu "$RSIM_ETH_MTU" ||
            rsim_fail "cannot set the MTU of $RSIM_NETIF to $RSIM_ETH_MTU"
    fi
    if [[ $(rdma_stack) == rsim ]]; then
        RDMA_DEV=$(ls "/sys/class/net/$RSIM_NETIF/device/infiniband/" 2>/dev/null | head -n1)
        [[ -n $RDMA_DEV ]] || rsim_fail "no RDMA device for $RSIM_NETIF (rdma_sim loaded?)"
    else
        modprobe rdma_rxe
        rdma link add rxe0 type rxe netdev "$RSIM_NETIF" || rsim_fail "rdma link add rxe0 failed"
        RDMA_DEV=rxe0
    fi
    modprobe -a ib_uverbs rdma_ucm
    for ((i = 0; i < 100; i++)); do
        RDMA_GID=$(rdma_gid_index "$RDMA_DEV" "${RSIM_GID_FAMILY:-$ip}") && break
        sleep 0.1
    done
    [[ -n ${RDMA_GID:-} ]] || rsim_fail "$RDMA_DEV has no RoCE v2 GID for $ip: $(grep -H . /sys/class/infiniband/"$RDMA_DEV"/ports/1/gids/* 2>/dev/null | grep -v ':0000:0000:0000:0000:0000:0000:0000:0000$')"
    export RDMA_DEV RDMA_GID
    rsim_log "RDMA device $RDMA_DEV ($(rdma_stack)), RoCE v2 GID index $RDMA_GID for $ip"
}
