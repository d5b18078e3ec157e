#!/bin/bash
# VM test: rdma-sim out of process.  Guests of Debian's own QEMU
# (qemu-system-x86 1:11.1.x of unstable, unmodified: scripts/qemu-debian.sh)
# whose rdma-sim is an rdma-sim-server (make server) reached through
# QEMU's vfio-user client, with the guest's memory shared (the harness's
# NIC "rdma-sim-server").  Passes:
#   verbs  one guest: tests/vm/guest/driver-verbs.sh (every verbs object
#          through libibverbs, errnos, events, PBL levels 0/1/2 checked on
#          the device, the kernel verbs test module)
#   pair   two such guests: ibv_rc_pingpong with its data checked from
#          1 byte to 1 MiB both ways, the short perftest matrix
#   mixed  guest A out of process, guest B with -device rdma-sim built
#          into our QEMU: ibv_rc_pingpong both ways, WRITE and READ both ways
#   rxe    guest A out of process, guest B with Soft-RoCE on virtio-net
#          (Debian's QEMU too): ibv_rc_pingpong both ways
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-server

scripts/build-server.sh >/dev/null || vmtest_fail "building rdma-sim-server failed (scripts/build-server.sh)"
rc=0
scripts/qemu-debian.sh >/dev/null || rc=$?
((rc != 3)) || vmtest_fail "Debian's archive could not be reached for its QEMU (scripts/qemu-debian.sh)"
((rc == 0)) || vmtest_fail "Debian's QEMU could not be unpacked (scripts/qemu-debian.sh, exit $rc)"
debian=$PWD/build/qemu-debian/bin/qemu-system-x86_64
ours=${QEMU_BINARY:-build/qemu-10.2-build/qemu-system-x86_64}
ver=$(scripts/vm/vm qemu-version "$debian")
[[ $ver == 11.1.* ]] || vmtest_fail "Debian's QEMU is '$ver', not 11.1.x"
echo "t-server: Debian's QEMU $ver ($debian), rdma-sim-server out of process"

# (the guest script loads the driver itself, so the harness's NIC, whose
# interface it would configure before the script runs, is not used: the
# server is started here, on a link to nowhere)
vmtest_pass verbs "one guest, every verbs object"
sockdir=$(mktemp -d)
trap 'rm -rf "$sockdir"' EXIT
sock=$sockdir/verbs.sock
read -r p0 p1 <<<"$(scripts/vm/vm free-udp-ports)"
build/server/rdma-sim-server --once --socket "$sock" -d guest_errors \
    --netdev "socket,udp=127.0.0.1:$p1,localaddr=127.0.0.1:$p0" \
    --mac 52:54:00:5e:02:01 >"$sockdir/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do [[ -S $sock ]] && break; sleep 0.05; done
QEMU=$debian vmtest_plain -n 1 --nic none \
    -q -object -q "memory-backend-memfd,id=rsimmem,size=${VM_MEM:-1024}M,share=on" \
    -q -machine -q memory-backend=rsimmem \
    -d "{\"driver\":\"vfio-user-pci\",\"socket\":{\"type\":\"unix\",\"path\":\"$sock\"}}" \
    -s tests/vm/guest/driver-verbs.sh
# (--once: the server ends with QEMU; one that never got a client is ended)
kill "$server" 2>/dev/null || true
wait "$server" || true
vmtest_pass_done

# "rev" lines swap the roles (tests/vm/guest/pair-cmds.sh): A is the client
cmds="ibv_rc_pingpong -s 1 -n 100 -c
rev ibv_rc_pingpong -s 1 -n 100 -c
ibv_rc_pingpong -s 4096 -n 200 -c
rev ibv_rc_pingpong -s 65536 -n 50 -c -m 4096
ibv_rc_pingpong -s 1048576 -n 10 -c
ib_write_bw -s 65536 -n 500
ib_read_bw -s 65536 -n 500
ib_send_bw -s 65536 -n 500
ib_write_lat -s 2 -n 500
ib_send_lat -s 2 -n 500"
vmtest_pass pair "two guests out of process"
QEMU=$debian vmtest_pair rsim-server rsim-server -t 600 -s tests/vm/guest/pair-cmds.sh \
    -e PAIR_CMDS="$cmds"
vmtest_check_pair_cmds t-server "$cmds" || VMTEST_RC=1
vmtest_pass_done

cmds="ibv_rc_pingpong -s 1 -n 100 -c
rev ibv_rc_pingpong -s 1 -n 100 -c
ibv_rc_pingpong -s 65536 -n 50 -c -m 4096
rev ibv_rc_pingpong -s 1048576 -n 10 -c
ib_write_bw -s 65536 -n 500
rev ib_write_bw -s 65536 -n 500
ib_read_bw -s 65536 -n 500
rev ib_read_bw -s 65536 -n 500"
vmtest_pass mixed "out of process and built in"
[[ -x $ours ]] || vmtest_fail "no QEMU with rdma-sim built in at $ours: make"
QEMU=$debian QEMU_B=$ours vmtest_pair rsim-server rsim -t 600 -s tests/vm/guest/pair-cmds.sh \
    -e PAIR_CMDS="$cmds"
vmtest_check_pair_cmds t-server "$cmds" || VMTEST_RC=1
vmtest_pass_done

cmds="ibv_rc_pingpong -s 1 -n 100 -c
rev ibv_rc_pingpong -s 4096 -n 100 -c
ibv_rc_pingpong -s 65536 -n 20 -c -m 1024"
vmtest_pass rxe "out of process and Soft-RoCE"
QEMU=$debian vmtest_pair rsim-server rxe -t 600 -s tests/vm/guest/pair-cmds.sh \
    -e PAIR_CMDS="$cmds"
vmtest_check_pair_cmds t-server "$cmds" || VMTEST_RC=1
vmtest_pass_done

vmtest_passes_done
