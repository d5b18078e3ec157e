# shellcheck shell=bash disable=SC2034,SC2153  # the settings: harness.sh; the VM_* results: read by the other parts
# scripts/vm/fabric.sh - the network between the guests: free UDP ports,
# VM_LINK=bridge's namespaces, bridges and VXLAN, the guests' netdevs.
# Sourced by scripts/vm/harness.sh, after the settings it defines.

# Two free UDP ports on 127.0.0.1 (printed as "P1 P2"). Chosen at random and
# checked against the sockets in use; a clash between two runs starting at
# the same instant is unlikely and shows up as a QEMU bind error.
vm_free_udp_ports() {
    local used p ports=()
    used=$(ss -Hulna 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }')
    while ((${#ports[@]} < 2)); do
        p=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
        grep -qx "$p" <<<"$used" && continue
        [[ " ${ports[*]} " == *" $p "* ]] && continue
        ports+=("$p")
    done
    echo "${ports[@]}"
}

# vm_fabric_up N: VM_LINK=bridge's network, for N guests: per simulated host
# a namespace with a bridge br0 and guest i's tap device tapI on it; with
# several hosts, each also has a VXLAN device (VNI 42, UDP 4789) on br0 whose
# underlay is a veth (ul0, 192.168.200.K/24) into a namespace with one bridge
# joining all hosts, the "physical network". Unknown and broadcast frames go
# to every other host (head-end replication); the others' MACs are learnt.
# Sets VM_FABRIC_NS (namespaces, removed by vm_fabric_down), VM_GUEST_NETNS
# (each guest's) and VM_LINK_MTU (the segment's).
vm_fabric_up() {
    [[ $(id -u) == 0 ]] ||
        vm_die "VM_LINK=bridge needs root (network namespaces, bridges, tap devices); VM_LINK=mcast does not"
    [[ $VM_HOSTS =~ ^[1-8]$ ]] || vm_die "VM_HOSTS must be 1 to 8, not '$VM_HOSTS'"
    if [[ ! $VM_UNDERLAY_MTU =~ ^[0-9]+$ ]] || ((VM_UNDERLAY_MTU < 1280 || VM_UNDERLAY_MTU > 65535)); then
        vm_die "VM_UNDERLAY_MTU must be 1280 to 65535, not '$VM_UNDERLAY_MTU'"
    fi
    vm_need ip iproute2
    vm_need bridge iproute2
    VM_LINK_MTU=$VM_UNDERLAY_MTU
    ((VM_HOSTS == 1)) || VM_LINK_MTU=$((VM_UNDERLAY_MTU - VM_VXLAN_OVERHEAD))
    VM_FABRIC_NS=() VM_GUEST_NETNS=()
    # Whatever ends this shell from here on (an error while the guests are
    # set up, Ctrl-C) removes the namespaces; vm_run_guests takes over.
    trap vm_fabric_down EXIT
    trap 'exit 130' INT TERM
    vm_fabric_build "$1" "rsim-${VM_RUN_DIR##*/}" >"$VM_RUN_DIR/fabric.log" 2>&1 || {
        cat "$VM_RUN_DIR/fabric.log" >&2
        vm_fabric_down
        vm_die "could not build the bridge/VXLAN network (log above): does this kernel have veth, bridge, vxlan and tun?"
    }
    vm_log "network: $VM_HOSTS host(s) (${VM_FABRIC_NS[*]}), segment MTU $VM_LINK_MTU"
}

# vm_fabric_build N ID: the commands of vm_fabric_up (namespaces ID-net,
# ID-h1, ID-h2...); returns 1 at the first that fails.
vm_fabric_build() {
    local n=$1 id=$2 hosts=$VM_HOSTS k j i ns ul=$2-net
    if ((hosts > 1)); then
        vm_fabric_ns "$ul" &&
            ip -n "$ul" link add br0 type bridge &&
            ip -n "$ul" link set br0 up || return 1
    fi
    for ((k = 1; k <= hosts; k++)); do
        ns=$id-h$k
        vm_fabric_ns "$ns" &&
            ip -n "$ns" link add br0 mtu "$VM_LINK_MTU" type bridge &&
            ip -n "$ns" link set br0 up || return 1
        ((hosts > 1)) || continue
        ip -n "$ns" link add ul0 mtu "$VM_UNDERLAY_MTU" type veth peer name "h$k" mtu "$VM_UNDERLAY_MTU" netns "$ul" &&
            ip -n "$ul" link set "h$k" master br0 up &&
            ip -n "$ns" addr add "192.168.200.$k/24" dev ul0 &&
            ip -n "$ns" link set ul0 up &&
            ip -n "$ns" link add vxlan0 mtu "$VM_LINK_MTU" type vxlan id 42 dstport 4789 \
                local "192.168.200.$k" dev ul0 &&
            ip -n "$ns" link set vxlan0 master br0 up || return 1
        for ((j = 1; j <= hosts; j++)); do
            ((j == k)) || bridge -n "$ns" fdb append 00:00:00:00:00:00 dev vxlan0 dst "192.168.200.$j" ||
                return 1
        done
    done
    for ((i = 0; i < n; i++)); do
        ns=$id-h$((i % hosts + 1))
        VM_GUEST_NETNS[i]=$ns
        ip -n "$ns" tuntap add dev "tap$i" mode tap &&
            ip -n "$ns" link set "tap$i" mtu "$VM_LINK_MTU" master br0 up || return 1
    done
}

# vm_fabric_ns NAME: a new network namespace with lo up, in VM_FABRIC_NS.
vm_fabric_ns() {
    ip netns add "$1" && VM_FABRIC_NS+=("$1") && ip -n "$1" link set lo up
}

# vm_fabric_down: removes the namespaces of vm_fabric_up, and with them
# their devices; each one's device counters go to RUN/fabric-NS.json first
# (`ip -s -j link show`: what crossed the bridges and the tunnel).
vm_fabric_down() {
    local ns
    for ns in "${VM_FABRIC_NS[@]}"; do
        if [[ -d ${VM_RUN_DIR:-} ]]; then
            ip -n "$ns" -s -j link show >"$VM_RUN_DIR/fabric-$ns.json" 2>/dev/null || true
        fi
        ip netns del "$ns" 2>/dev/null || true
    done
    VM_FABRIC_NS=()
}

# vm_link_netdevs N: prints the -netdev argument of each of N guests' test
# link, one per line (N >= 1; one guest gets a link to nowhere).
vm_link_netdevs() {
    local n=$1 link=$VM_LINK i ports=()
    if [[ $link == auto ]]; then
        if ((n > 2)); then link=mcast; else link=udp; fi
    fi
    [[ $link == bridge ]] || read -r -a ports <<<"$(vm_free_udp_ports)"
    case $link in
    bridge)
        for ((i = 0; i < n; i++)); do
            echo "tap,id=net0,ifname=tap$i,script=no,downscript=no"
        done
        ;;
    udp)
        ((n <= 2)) || vm_die "VM_LINK=udp joins two guests, not $n: use VM_LINK=mcast"
        echo "socket,id=net0,udp=127.0.0.1:${ports[1]},localaddr=127.0.0.1:${ports[0]}"
        echo "socket,id=net0,udp=127.0.0.1:${ports[0]},localaddr=127.0.0.1:${ports[1]}"
        ;;
    mcast)
        # Every member gets every frame, its own too (rdma-sim drops those;
        # virtio-net hands them to the guest's stack).
        # A random group and port keep runs at the same time apart.
        local group=239.255.$((RANDOM % 256)).$((RANDOM % 254 + 1))
        for ((i = 0; i < n; i++)); do
            echo "socket,id=net0,mcast=$group:${ports[0]},localaddr=127.0.0.1"
        done
        ;;
    *) vm_die "VM_LINK must be auto, udp, mcast or bridge, not '$VM_LINK'" ;;
    esac
}
