# shellcheck shell=bash disable=SC2034  # GT_* variables are for the scripts that source it
# scripts/vm/gt.sh - the helpers of the guest scripts (tests/vm/guest/*.sh),
# which run inside test guests (scripts/vm/guest-runner): . "$RSIM_LIB".
# Prefix gt_ ("guest test"); GT_* are its variables and settings.  How two
# guests meet (gt_wait_listen, gt_barrier): tests/vm/README.md.

GT_BARRIER_PORT=${GT_BARRIER_PORT:-7470}
# The driver built for the kernel this guest runs (make -C guest-driver GUEST_ABI=...)
GT_KO=${GT_KO:-$RSIM_REPO/build/driver/$RSIM_ABI/rdma_sim.ko}
GT_PCI_ID=0x1b36:0x0120 # vendor:device of rdma-sim
GT_VERBS_TEST=$RSIM_REPO/tests/vm/progs/verbs-test

gt_log() { echo "[$RSIM_NAME $(cut -d' ' -f1 /proc/uptime)] $*"; }
# gt_fail MESSAGE: fails the guest script.  GT_FAIL_CONTEXT, when a script
# sets it, names a command whose output (one line) follows the message: what
# a reader of the failure needs from that phase, e.g. the kernel's messages.
gt_fail() {
    local ctx=
    [[ -n ${GT_FAIL_CONTEXT:-} ]] && ctx="; $($GT_FAIL_CONTEXT 2>&1 | tr '\n' ' ')" && ctx=${ctx% }
    echo "[$RSIM_NAME] FAIL: $*$ctx" >&2
    exit 1
}

# gt_has GREP_ARGS...: like grep -q, but reads all its input.  grep -q
# stops at the first match, and a command still writing into the pipe then
# dies of SIGPIPE: under pipefail the pipe fails although the line was
# there (make check, 2026-12-06: t-driver-fatal's dmesg | grep -q; dmesg
# writes in blocks, and wrote one more after the one with the match).
gt_has() {
    grep -c "$@" > /dev/null
}

# gt_retry SECONDS CMD...: runs CMD until it succeeds, at most SECONDS.
gt_retry() {
    local limit=$1 end
    shift
    end=$((SECONDS + limit))
    until "$@"; do
        ((SECONDS < end)) || return 1
        sleep 0.2
    done
}

# gt_save NAME: copies stdin to the results share (kept in the test's log).
gt_save() {
    tee "$RSIM_RESULTS/$1" >/dev/null
}

# gt_save_counters: the RDMA device's counters (rdma statistic) as
# rdma-statistic.txt, which the host prints (vmtest_counters); never fails.
gt_save_counters() {
    rdma statistic show link "$GT_DEV/1" | gt_save rdma-statistic.txt || true
}

# gt_counter NAME...: the sum of the RDMA device's counters NAME... (rdma
# statistic; after gt_rdma_setup); a counter the device lacks counts 0.
gt_counter() {
    { rdma statistic show link "$GT_DEV/1" || true; } |
        awk -v names=" $* " '{ for (i = 1; i < NF; i++) if (index(names, " " $i " ")) s += $(i + 1) } END { print s + 0 }'
}

# --- two guests or more ----------------------------------------------------

# gt_wait_peer [SECONDS]: waits until the peer answers pings.
gt_wait_peer() {
    [[ -n ${RSIM_PEER:-} ]] || gt_fail "gt_wait_peer: no peer (run with two guests)"
    gt_retry "${1:-60}" ping -c 1 -W 1 -q "$RSIM_PEER" >/dev/null ||
        gt_fail "peer $RSIM_PEER did not answer pings within ${1:-60}s"
}

# gt_wait_peers [SECONDS]: waits until every other guest answers pings.
gt_wait_peers() {
    local p
    [[ -n ${RSIM_PEERS:-} ]] || gt_fail "gt_wait_peers: no other guest (run with two guests or more)"
    for p in $RSIM_PEERS; do
        gt_retry "${1:-60}" ping -c 1 -W 1 -q "$p" >/dev/null ||
            gt_fail "guest $p did not answer pings within ${1:-60}s"
    done
}

# gt_ping PING-ARGS...: pings the peer; any packet lost is a failure.
gt_ping() {
    ping "$@" "$RSIM_PEER" | tee /tmp/ping.out || true
    grep -q ' 0% packet loss' /tmp/ping.out ||
        gt_fail "packets lost: ping $* $RSIM_PEER: $(tail -n 2 /tmp/ping.out | tr '\n' ' ')"
}

# gt_wait_listen PORT [SECONDS]: waits until something listens on local TCP PORT
# (does not connect, so it takes no connection from the listener).
gt_wait_listen() {
    gt_retry "${2:-30}" sh -c "ss -Hltn 'sport = :$1' | grep -q ." ||
        gt_fail "nothing listens on TCP port $1 after ${2:-30}s"
}

# gt_wait_cm_listen [SECONDS [COMM]]: waits until an rdma_cm ID of this
# guest (of program COMM, if given) listens (`rdma resource show cm_id`:
# rdma_cm has no port that ss can see).
gt_wait_cm_listen() {
    local re="state LISTEN .*comm ${2:-}"
    gt_retry "${1:-30}" sh -c "rdma resource show cm_id | grep -Eq '$re'" ||
        gt_fail "no rdma_cm listener${2:+ of $2} after ${1:-30}s: $(rdma resource show cm_id 2>&1 | head -n 3)"
}

# gt_barrier NAME [SECONDS]: returns when every guest of the run has reached
# barrier NAME. Guest A gathers the others (the first of their RSIM_PEERS).
gt_barrier() {
    local name=$1 limit=${2:-120}
    [[ -n ${RSIM_PEERS:-} ]] || return 0 # one guest: nothing to wait for
    python3 - "$RSIM_INDEX" "$RSIM_NGUESTS" "$name" "$limit" "$GT_BARRIER_PORT" "${RSIM_PEERS%% *}" <<'EOF' ||
import socket, sys, time
index, n, name, limit = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
port, leader = int(sys.argv[5]), sys.argv[6]
end = time.monotonic() + limit
def left():
    t = end - time.monotonic()
    if t <= 0:
        sys.exit(f"barrier {name!r}: not every guest arrived within {limit:.0f}s")
    return t
if index == 0:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(n)
    arrived = {}                # by address: a guest that retries counts once
    while len(arrived) < n - 1:
        s.settimeout(left())
        try:
            c, (addr, _) = s.accept()
        except socket.timeout:
            left()
            continue
        c.settimeout(10)
        try:
            got = c.makefile().readline().strip()
        except OSError:
            continue
        if got != name:
            c.sendall(b"mismatch\n")
            sys.exit(f"barrier {name!r}: guest {addr} is at barrier {got!r}")
        arrived[addr] = c
    for c in arrived.values():
        c.sendall(b"ok\n")
        c.close()
else:
    while True:
        left()
        try:
            c = socket.create_connection((leader, port), timeout=2)
        except OSError:
            time.sleep(0.3)
            continue
        try:
            c.settimeout(left())
            c.sendall((name + "\n").encode())
            got = c.makefile().readline().strip()
        except socket.timeout:
            left()
            continue
        except OSError:
            time.sleep(0.3)
            continue
        if got != "ok":
            sys.exit(f"barrier {name!r}: guest A answered {got!r}")
        break
EOF
        gt_fail "barrier '$name' failed"
    gt_log "barrier '$name' passed"
}

# --- the RDMA device -------------------------------------------------------

# gt_gid_index DEV IPV4|ipv6: prints the index of DEV's RoCE v2 GID
# ::ffff:IPV4, or of its IPv6 link-local one (fe80::/64); fails if absent.
gt_gid_index() {
    local dev=$1 ip=$2 want='' f idx gid octets
    if [[ $ip != ipv6 ]]; then
        IFS=. read -r -a octets <<<"$ip"
        want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "${octets[@]}")
    fi
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

# gt_wait_gid DEV IPV4|ipv6: waits until DEV has that RoCE v2 GID (see
# gt_gid_index) and sets GT_GID to its index.
gt_wait_gid() {
    GT_GID=$(gt_retry 10 gt_gid_index "$1" "$2") ||
        gt_fail "$1 has no RoCE v2 GID for $2: $(grep -H . /sys/class/infiniband/"$1"/ports/1/gids/* 2>/dev/null | grep -v ':0000:0000:0000:0000:0000:0000:0000:0000$')"
}

# gt_rdma_setup: sets GT_DEV (e.g. rsim0, rxe0) and GT_GID (the RoCE v2 GID
# of the test interface's IPv4 address) for the test interface.  An
# interface of the rdma_sim driver has its own device; on any other NIC a
# Soft-RoCE device (rxe0) is created.  Settings (environment): GT_ETH_MTU,
# the interface's MTU (9000 allows a 4096 path MTU); GT_GID_FAMILY=ipv6, the
# IPv6 link-local GID instead.
gt_rdma_setup() {
    local ip=${RSIM_IP%/*} drv devs
    if [[ -n ${GT_ETH_MTU:-} ]]; then
        ip link set dev "$RSIM_NETIF" mtu "$GT_ETH_MTU" ||
            gt_fail "cannot set the MTU of $RSIM_NETIF to $GT_ETH_MTU"
    fi
    drv=$(readlink -f "/sys/class/net/$RSIM_NETIF/device/driver")
    drv=${drv##*/}
    if [[ $drv == rdma_sim ]]; then
        devs=(/sys/class/net/"$RSIM_NETIF"/device/infiniband/*)
        [[ -e ${devs[0]} ]] || gt_fail "no RDMA device for $RSIM_NETIF (rdma_sim loaded?)"
        GT_DEV=${devs[0]##*/}
    else
        modprobe rdma_rxe
        rdma link add rxe0 type rxe netdev "$RSIM_NETIF" || gt_fail "rdma link add rxe0 failed"
        GT_DEV=rxe0
    fi
    modprobe -a ib_uverbs rdma_ucm
    gt_wait_gid "$GT_DEV" "${GT_GID_FAMILY:-$ip}"
    gt_log "RDMA device $GT_DEV ($RSIM_NETIF, $drv), RoCE v2 GID index $GT_GID for ${GT_GID_FAMILY:-$ip}"
}

# --- the rdma_sim driver (the driver tests load it themselves) --------------

# gt_rsim_bdf: prints the PCI address of the rdma-sim function; fails if
# the guest has none.
gt_rsim_bdf() {
    local d
    for d in /sys/bus/pci/devices/*; do
        [[ $(<"$d/vendor"):$(<"$d/device") == "$GT_PCI_ID" ]] && { echo "${d##*/}"; return 0; }
    done
    gt_fail "no rdma-sim PCI function ($GT_PCI_ID) in the guest: lspci: $(lspci -n 2>&1 | tr '\n' ';')"
}

# gt_load [ADDR/LEN]: modprobes the RDMA core modules the driver needs,
# insmods it and waits until it is bound to the device (GT_BDF) and rsim0
# exists; with ADDR/LEN, brings its net_device up too (gt_net_up).
gt_load() {
    local bdf
    bdf=$(gt_rsim_bdf) || exit 1
    [[ -f $GT_KO ]] || gt_fail "$GT_KO not built (make -C guest-driver GUEST_ABI=$RSIM_ABI)"
    modprobe -a ib_core ib_uverbs || gt_fail "modprobe ib_core ib_uverbs failed"
    gt_log "insmod $GT_KO"
    insmod "$GT_KO" || gt_fail "insmod $GT_KO failed: $(dmesg | tail -n 5 | tr '\n' ';')"
    gt_retry 10 test -e "/sys/bus/pci/drivers/rdma_sim/$bdf" -a -e /sys/class/infiniband/rsim0 || true
    [[ -e /sys/bus/pci/drivers/rdma_sim/$bdf ]] ||
        gt_fail "rdma_sim did not bind $bdf: $(dmesg | grep -i rdma_sim | tail -n 5 | tr '\n' ';')"
    [[ -e /sys/class/infiniband/rsim0 ]] ||
        gt_fail "rdma_sim bound $bdf but registered no rsim0 (infiniband: $(ls /sys/class/infiniband 2>&1))"
    GT_BDF=$bdf
    gt_log "rdma_sim bound to $bdf, RDMA device rsim0"
    [[ -z ${1:-} ]] || gt_net_up "$1"
}

# gt_unload [SECONDS]: rmmod within a time limit (a hang is a failure, not a stall).
gt_unload() {
    local limit=${1:-60} t0 pid
    t0=$SECONDS
    # (not timeout(1): a signal does not end an rmmod that sleeps in the
    # kernel; the failure says where it sleeps instead)
    rmmod rdma_sim &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        ((SECONDS - t0 < limit)) ||
            gt_fail "rmmod rdma_sim still running after ${limit}s, waiting in $(cat "/proc/$pid/wchan" 2>/dev/null): $(tr '\n' ';' 2>/dev/null <"/proc/$pid/stack" | cut -c1-600)"
        sleep 0.2
    done
    wait "$pid" || gt_fail "rmmod rdma_sim failed: $(dmesg | tail -n 8 | tr '\n' ';')"
    [[ ! -e /sys/module/rdma_sim ]] || gt_fail "rdma_sim still loaded after rmmod"
    [[ ! -e /sys/class/infiniband/rsim0 ]] || gt_fail "rsim0 still exists after rmmod"
    gt_log "rmmod rdma_sim took $((SECONDS - t0))s"
}

# gt_port_is STATE: port rsim0/1 is in STATE (ACTIVE, DOWN).
gt_port_is() {
    rdma link show rsim0/1 2>/dev/null | gt_has "state $1 "
}

# gt_net_up ADDR/LEN: brings rsim0's net_device (GT_NETDEV: the one sharing
# its PCI function) up with that address and waits until the RDMA port is
# ACTIVE and has the address's RoCE v2 GID (GT_GID).
gt_net_up() {
    local addr=$1 nets nd
    nets=(/sys/class/infiniband/rsim0/device/net/*)
    [[ -e ${nets[0]} ]] || gt_fail "rsim0 has no net_device under /sys/class/infiniband/rsim0/device/net"
    nd=${nets[0]##*/}
    ip link set "$nd" up || gt_fail "ip link set $nd up"
    ip addr add "$addr" dev "$nd" 2>/dev/null || true
    gt_retry 10 gt_port_is ACTIVE ||
        gt_fail "port rsim0/1 not ACTIVE after $nd up: $(rdma link show rsim0/1)"
    gt_wait_gid rsim0 "${addr%/*}"
    GT_NETDEV=$nd
    gt_log "$nd is up as $addr; $(rdma link show rsim0/1)"
}

# gt_hold: starts verbs-test in hold mode (one object of each kind, then it
# waits to be killed) and sets GT_HOLDER to its PID once it is ready.
gt_hold() {
    "$GT_VERBS_TEST" -d rsim0 hold >/tmp/hold.out 2>&1 &
    GT_HOLDER=$!
    gt_retry 10 grep -qE 'READY|FATAL' /tmp/hold.out || true
    grep -q READY /tmp/hold.out || gt_fail "verbs-test hold did not get ready: $(cat /tmp/hold.out)"
}

# gt_check_dmesg: fails on an oops, a WARN, a BUG, a lockup, a lockdep or
# KASAN report; the driver's messages go to the results share
# (dmesg-rdma_sim.txt).
gt_check_dmesg() {
    local bad
    dmesg | grep -iE 'rdma_sim|rsim' | gt_save dmesg-rdma_sim.txt || true
    bad=$(dmesg | grep -E 'Oops|BUG:|WARNING:|Call Trace|general protection|kernel NULL pointer|UBSAN|KASAN|refcount_t:|possible circular locking|INFO: task .* blocked|soft lockup|rcu: .*stall|Kernel panic' || true)
    if [[ -n $bad ]]; then
        dmesg | tail -n 80
        gt_fail "kernel log has errors: $(head -n 3 <<<"$bad" | tr '\n' ';')"
    fi
    gt_log "kernel log: no oops, WARN, BUG or lockup"
}
