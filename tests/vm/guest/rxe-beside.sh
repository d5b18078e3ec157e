#!/bin/bash
# Guest side of tests/vm/t-rxe-beside.sh: Soft-RoCE (rdma_rxe) loaded and
# used beside rsim0, as test suites do that bind Soft-RoCE to the Ethernet
# ports without an RDMA device, while an RC ping-pong runs on rsim0.
#
# rsim0 has rxe's driver id (so that rdma-core's librxe drives it), and
# rdma_rxe finds its own devices by driver id and net_device.  Guest A
# (the ping-pong's server) loads rdma_rxe, makes and removes a Soft-RoCE
# device on a dummy port, changes its test interface's MTU (rdma_rxe's
# netdev notifier) and checks that rdma_rxe does not take rsim0 for one of
# its own; guest B sends A broadcast UDP datagrams to the RoCE port 4791,
# which A's stack hands to rdma_rxe's socket (the device consumes only the
# RoCE frames to its own MAC).  The ping-pong must end with its data
# checked, rsim0 unchanged, the kernel log clean.
#
# Then what unloading rdma_rxe does, a known limit: its module exit
# unregisters every device with its driver id, rsim0 too (a WARN in
# ib_unregister_driver).  rdma_sim must unload and load again cleanly after
# that, and rsim0 work again.
set -euo pipefail
# shellcheck source=scripts/vm/gt.sh
. "$RSIM_LIB"

iters=${RXE_BESIDE_ITERS:-8000}
gt_rdma_setup
gt_wait_peer 60

if [[ $RSIM_NAME == B ]]; then
    gt_barrier server-up
    gt_log "ibv_rc_pingpong client: $iters iterations of 4096 bytes, data checked"
    ibv_rc_pingpong -d "$GT_DEV" -g "$GT_GID" -s 4096 -n "$iters" -c "$RSIM_PEER" \
        >/tmp/pp.out 2>&1 &
    pp=$!
    gt_barrier rxe-loaded
    # Broadcast Ethernet, A's IPv4 address, UDP to 4791: a RoCE v2 header
    # (BTH: RC SEND only to QP 0x11) with a payload and a zero ICRC.
    python3 - "$RSIM_NETIF" "${RSIM_IP%/*}" "$RSIM_PEER" <<'PY' || gt_fail "sending the datagrams failed"
import socket, struct, sys
ifname, src, dst = sys.argv[1], sys.argv[2], sys.argv[3]
mac = bytes.fromhex(open(f"/sys/class/net/{ifname}/address").read().strip().replace(":", ""))
bth = struct.pack("!BBHII", 0x04, 0, 0xffff, 0x11, 0x80000000 | 7)
payload = bth + bytes(64) + bytes(4)
udp = struct.pack("!HHHH", 49152, 4791, 8 + len(payload), 0) + payload
def csum(b):
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    s = (s >> 16) + (s & 0xffff)
    return ~(s + (s >> 16)) & 0xffff
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0x4000, 64, 17, 0,
                 socket.inet_aton(src), socket.inet_aton(dst))
ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
frame = b"\xff" * 6 + mac + b"\x08\x00" + ip + udp
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((ifname, 0))
for _ in range(200):
    s.send(frame)
PY
    gt_log "sent 200 broadcast RoCE v2 datagrams to $RSIM_PEER:4791"
    gt_barrier datagrams-sent
    wait "$pp" || gt_fail "ibv_rc_pingpong client failed: $(tail -n 5 /tmp/pp.out | tr '\n' ';')"
    grep -q "^$((2 * 4096 * iters)) bytes in " /tmp/pp.out ||
        gt_fail "ibv_rc_pingpong client did not move $((2 * 4096 * iters)) bytes: $(tail -n 3 /tmp/pp.out | tr '\n' ';')"
    gt_log "ok: ping-pong client: $(grep ' bytes in ' /tmp/pp.out)"
    gt_barrier pingpong-done
    gt_check_dmesg
    echo "rxe-beside: all checks passed"
    exit 0
fi

# Guest A: the ping-pong's server
before=$(rdma link show "$GT_DEV/1")
ibv_rc_pingpong -d "$GT_DEV" -g "$GT_GID" -s 4096 -n "$iters" -c >/tmp/pp.out 2>&1 &
pp=$!
gt_wait_listen 18515
gt_barrier server-up

modprobe rdma_rxe || gt_fail "modprobe rdma_rxe failed"
gt_log "rdma_rxe loaded beside $GT_DEV"
ip link add rsimdummy0 type dummy || gt_fail "ip link add dummy failed"
ip link set rsimdummy0 up
ip addr add 192.168.77.1/24 dev rsimdummy0
rdma link add rxe1 type rxe netdev rsimdummy0 ||
    gt_fail "rdma link add rxe1 on a dummy port failed: $(dmesg | tail -n 3 | tr '\n' ';')"
rdma link show rxe1/1 | gt_has 'netdev rsimdummy0' || gt_fail "rxe1 is not on rsimdummy0: $(rdma link show)"
gt_log "ok: Soft-RoCE device rxe1 on rsimdummy0: $(rdma link show rxe1/1)"
gt_barrier rxe-loaded

# rdma_rxe's netdev notifier sees the test interface change
for mtu in 1400 1500; do
    ip link set "$RSIM_NETIF" mtu "$mtu" || gt_fail "setting the MTU of $RSIM_NETIF to $mtu failed"
done
# rdma_rxe looks its devices up by net_device: it must not find rsim0 on
# the test interface ("already configured on" it)
if ! out=$(rdma link add rxe2 type rxe netdev "$RSIM_NETIF" 2>&1); then
    gt_fail "rdma_rxe took $GT_DEV for one of its own devices on $RSIM_NETIF: rdma link add: $out; $(dmesg | grep -i 'already configured' | tail -n 1)"
fi
rdma link delete rxe2 || gt_fail "rdma link delete rxe2 failed"
gt_log "ok: rdma_rxe does not take $GT_DEV for its own on $RSIM_NETIF (rxe2 made and removed there)"
gt_barrier datagrams-sent
rdma link delete rxe1 || gt_fail "rdma link delete rxe1 failed"
ip link del rsimdummy0
gt_log "ok: rxe1 removed"

wait "$pp" || gt_fail "ibv_rc_pingpong server failed: $(tail -n 5 /tmp/pp.out | tr '\n' ';')"
grep -q "^$((2 * 4096 * iters)) bytes in " /tmp/pp.out ||
    gt_fail "ibv_rc_pingpong server did not move $((2 * 4096 * iters)) bytes: $(tail -n 3 /tmp/pp.out | tr '\n' ';')"
gt_log "ok: ping-pong server: $(grep ' bytes in ' /tmp/pp.out)"
gt_barrier pingpong-done
after=$(rdma link show "$GT_DEV/1")
[[ $after == "$before" ]] || gt_fail "$GT_DEV's port changed: before '$before', after '$after'"
ibv_devinfo -v -d "$GT_DEV" | gt_has "::ffff:${RSIM_IP%/*}, RoCE v2" ||
    gt_fail "$GT_DEV lost its RoCE v2 GID of ${RSIM_IP%/*}: $(ibv_devinfo -v -d "$GT_DEV" | grep GID)"
gt_check_dmesg
gt_log "ok: $GT_DEV unchanged with rdma_rxe beside it: $after"

# The known limit: rdma_rxe's module exit unregisters rsim0 too.
modprobe -r rdma_rxe || gt_fail "modprobe -r rdma_rxe failed"
if [[ -e /sys/class/infiniband/$GT_DEV ]]; then
    gt_log "rdma_rxe's unload left $GT_DEV registered"
else
    gt_log "known limit: unloading rdma_rxe unregistered $GT_DEV (driver id RXE, see README)"
fi
gt_unload 60
gt_load "$RSIM_IP"
ibv_devinfo -d rsim0 | gt_has 'state:.*PORT_ACTIVE' ||
    gt_fail "rsim0 not ACTIVE after reloading rdma_sim: $(ibv_devinfo -d rsim0 2>&1 | tail -n 5 | tr '\n' ';')"
gt_log "ok: rdma_sim unloaded and loaded again after rdma_rxe's unload; rsim0 ACTIVE"
bad=$(dmesg | grep -E 'Oops|BUG:|WARNING:|general protection|kernel NULL pointer|refcount_t:|Kernel panic' |
    grep -v 'ib_unregister_driver' | grep -v '^\s*$' || true)
warns=$(dmesg | grep -cE 'WARNING:' || true)
unreg=$(dmesg | grep -cE 'WARNING: .*ib_unregister_driver' || true)
[[ -z $bad || $warns == "$unreg" ]] ||
    gt_fail "kernel log has errors besides ib_unregister_driver's WARN: $(head -n 3 <<<"$bad" | tr '\n' ';')"
echo "rxe-beside: all checks passed"
