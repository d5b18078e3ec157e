#!/bin/bash
# VM test: rdma-sim out of process.  Guests of Debian's own QEMU
# (qemu-system-x86 1:11.1.x of unstable, unmodified: scripts/qemu-debian.sh)
# whose rdma-sim is an rdma-sim-server (make server) reached through
# QEMU's vfio-user client, with the guest's memory shared (the harness's
# NIC "rdma-sim-server") unless a pass says otherwise.  Passes:
#   verbs  one guest, its memory not shared with the server (DMA_READ and
#          DMA_WRITE messages), the server's control socket read by
#          rdma-sim-top: tests/vm/guest/driver-verbs.sh (every verbs object
#          through libibverbs, errnos, events, PBL levels 0/1/2 checked on
#          the device, the kernel verbs test module)
#   pair   two such guests: ibv_rc_pingpong with its data checked from
#          1 byte to 1 MiB both ways, the short perftest matrix, rping
#          (rdma_cm) with its data validated
#   mixed  guest A out of process, guest B with -device rdma-sim built
#          into our QEMU: ibv_rc_pingpong both ways, WRITE and READ both ways
#   rxe    guest A out of process, guest B with Soft-RoCE on virtio-net
#          (Debian's QEMU too): ibv_rc_pingpong both ways
#   nvme   two guests out of process: NVMe over RDMA, fio's data verified
#          (t-nvme-rdma's plain pass, a quarter of its data)
#   kill   guest A out of process, B built in: A's server killed while B
#          runs atomics on it, B's QP fails with retry exceeded, A's driver says
#          the device is lost; a new server hot-plugged over QMP, the
#          driver loaded again, traffic again
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
sockdir=$(mktemp -d)
trap 'rm -rf "$sockdir"' EXIT
# SERVER_PASSES (environment): the passes to run, default all
want() { [[ " ${SERVER_PASSES:-verbs pair mixed rxe nvme kill} " == *" $1 "* ]]; }

if want verbs; then
# Guest memory not shared with the server (no memory-backend): QEMU sends
# its memory map without descriptors and the server reaches the guest's
# memory by DMA_READ/DMA_WRITE messages, the slower mode.  Before QEMU
# comes, the server's control socket shows its device (rdma-sim-top).
vmtest_pass verbs "one guest, every verbs object, guest memory not shared"
sock=$sockdir/verbs.sock ctl=$sockdir/verbs.ctl
read -r p0 p1 <<<"$(scripts/vm/vm free-udp-ports)"
build/server/rdma-sim-server --once --socket "$sock" --control "$ctl" -d guest_errors \
    --netdev "socket,udp=127.0.0.1:$p1,localaddr=127.0.0.1:$p0" \
    --mac 52:54:00:5e:02:01 >"$sockdir/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do [[ -S $sock && -S $ctl ]] && break; sleep 0.05; done
scripts/rdma-sim-top --json --timeout 5 "$ctl" >"$sockdir/top.json" ||
    vmtest_fail "rdma-sim-top on the server's control socket failed: $(cat "$sockdir/top.json")"
python3 - "$sockdir/top.json" <<'PY' || vmtest_fail "the server's control socket showed another device"
import json, sys
d = json.load(open(sys.argv[1]))["/machine/peripheral/rsim0"]
port = d["port"]
print(f"t-server: rdma-sim-top on the control socket: mac {port['mac']}, link "
      f"{'ACTIVE' if port['active'] else 'DOWN'}, driver-ready {port['driver-ready']}, "
      f"{len(d['qps'])} QPs, {len(d['counters'])} counters")
assert port["mac"] == "52:54:00:5e:02:01" and not port["driver-ready"], port
assert d["qps"] == [] and d["mrs"] == [] and "rx_frames" in d["counters"], d
PY
QEMU=$debian vmtest_plain -n 1 --nic none \
    -d "{\"driver\":\"vfio-user-pci\",\"socket\":{\"type\":\"unix\",\"path\":\"$sock\"}}" \
    -s tests/vm/guest/driver-verbs.sh
# (--once: the server ends with QEMU; one that never got a client is ended)
kill "$server" 2>/dev/null || true
wait "$server" || true
vmtest_pass_done
fi

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
ib_send_lat -s 2 -n 500
rping -C 10 -v -V -S 1024"
if want pair; then
vmtest_pass pair "two guests out of process"
QEMU=$debian vmtest_pair rsim-server rsim-server -t 600 -s tests/vm/guest/pair-cmds.sh \
    -e PAIR_CMDS="$cmds"
vmtest_check_pair_cmds t-server "$cmds" || VMTEST_RC=1
vmtest_pass_done
fi

cmds="ibv_rc_pingpong -s 1 -n 100 -c
rev ibv_rc_pingpong -s 1 -n 100 -c
ibv_rc_pingpong -s 65536 -n 50 -c -m 4096
rev ibv_rc_pingpong -s 1048576 -n 10 -c
ib_write_bw -s 65536 -n 500
rev ib_write_bw -s 65536 -n 500
ib_read_bw -s 65536 -n 500
rev ib_read_bw -s 65536 -n 500"
if want mixed; then
vmtest_pass mixed "out of process and built in"
[[ -x $ours ]] || vmtest_fail "no QEMU with rdma-sim built in at $ours: make"
QEMU=$debian QEMU_B=$ours vmtest_pair rsim-server rsim -t 600 -s tests/vm/guest/pair-cmds.sh \
    -e PAIR_CMDS="$cmds"
vmtest_check_pair_cmds t-server "$cmds" || VMTEST_RC=1
vmtest_pass_done
fi

cmds="ibv_rc_pingpong -s 1 -n 100 -c
rev ibv_rc_pingpong -s 4096 -n 100 -c
ibv_rc_pingpong -s 65536 -n 20 -c -m 1024"
if want rxe; then
vmtest_pass rxe "out of process and Soft-RoCE"
QEMU=$debian vmtest_pair rsim-server rxe -t 600 -s tests/vm/guest/pair-cmds.sh \
    -e PAIR_CMDS="$cmds"
vmtest_check_pair_cmds t-server "$cmds" || VMTEST_RC=1
vmtest_pass_done
fi

if want nvme; then
# NVMe over RDMA between two guests out of process: t-nvme-rdma's plain
# pass (tests/vm/guest/nvme-rdma.sh: an nvmet-rdma target, fio with crc32c
# verification at 4 KiB and 1 MiB, QD 1 and 32, disconnect and reconnect,
# the port removed under queued I/O) with a quarter of its data
for tool in nvme fio; do
    command -v "$tool" >/dev/null || vmtest_fail "$tool is not installed (make deps: nvme-cli, fio)"
done
vmtest_pass nvme "NVMe over RDMA, both out of process"
QEMU=$debian VM_SMP=2 vmtest_pair rsim-server rsim-server -t 420 -s tests/vm/guest/nvme-rdma.sh \
    -e NVME_OUTAGE=6 -e NVME_SCALE=2
if [[ -f ${VMTEST_RESULTS[1]:-}/fio-summary.txt ]]; then
    sed "s/^/   /" "${VMTEST_RESULTS[1]}/fio-summary.txt"
fi
vmtest_pass_done
fi

# kill: the server killed under traffic, then a new one and the driver again
# (tests/vm/guest/server-kill.sh says what each guest checks).  The host
# side: kill -9 guest A's server on A's request; on its next request start
# the same server again on a new socket and hot-plug a second vfio-user-pci
# to it over QMP (device_add; machine pc, whose root bus takes ACPI
# hot-plug).  The dead device stays: QEMU 11.1's vfio-user-pci cannot be
# unplugged (device_del ends QEMU with memory_region_del_subregion's
# assertion, its MSI-X PBA torn down after its BAR; measured here).
killed=$sockdir/killed-server
# qmp_add SOCKET SERVER_SOCKET: a vfio-user-pci rsimdev2 to that server
# shellcheck disable=SC2317  # called from serve_kill
qmp_add() {
    python3 - "$@" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rw")
def cmd(name, **args):
    f.write(json.dumps({"execute": name, "arguments": args}) + "\n")
    f.flush()
    while True:
        line = f.readline()
        if not line:
            sys.exit("QMP: QEMU closed the connection")
        r = json.loads(line)
        if "return" in r:
            return
        if "error" in r:
            sys.exit(f"QMP {name}: {r['error']['desc']}")
f.readline()                    # the greeting
cmd("qmp_capabilities")
cmd("device_add", driver="vfio-user-pci", id="rsimdev2",
    socket={"type": "unix", "path": sys.argv[2]})
PY
}
# shellcheck disable=SC2317  # called through VMTEST_POLL
serve_kill() {
    local g res pid sock new i
    g=$(echo "$VMTEST_RUNS"/t-server.*/g0)
    res=$g/results sock=$g/rdma-sim-server.sock new=$g/rdma-sim-server2.sock
    [[ -d $res ]] || return 0
    if [[ -e $res/request-kill && ! -e $res/ack-kill ]]; then
        pid=$(pgrep -f -- "--socket $sock") || vmtest_fail "no rdma-sim-server on $sock to kill"
        tr '\0' '\n' <"/proc/$pid/cmdline" >"$killed"
        kill -KILL "$pid"
        echo "t-server: killed guest A's rdma-sim-server (PID $pid) under traffic"
        touch "$res/ack-kill"
    fi
    if [[ -e $res/request-replug && ! -e $res/ack-replug ]]; then
        local -a argv
        mapfile -t argv <"$killed"
        for i in "${!argv[@]}"; do [[ ${argv[i]} != "$sock" ]] || argv[i]=$new; done
        "${argv[@]}" >"$g/server2.log" 2>&1 &
        for _ in $(seq 100); do [[ -S $new ]] && break; sleep 0.05; done
        [[ -S $new ]] || vmtest_fail "the new rdma-sim-server does not listen on $new: $(cat "$g/server2.log")"
        qmp_add "$g/qmp.sock" "$new" || vmtest_fail "QMP device_add of guest A's new rdma-sim failed"
        echo "t-server: a new rdma-sim-server (PID $!) hot-plugged into guest A"
        touch "$res/ack-replug"
    fi
}
if want kill; then
vmtest_pass kill "out of process, its server killed under traffic and restarted"
QEMU=$debian QEMU_B=$ours VM_MACHINE=pc VMTEST_POLL=serve_kill \
    vmtest_pair rsim-server rsim -t 600 --qmp -s tests/vm/guest/server-kill.sh
for f in "${VMTEST_RESULTS[@]/%//output.log}"; do
    grep -hE "device lost|RETRY_EXC_ERR|new function|rmmod" "$f" 2>/dev/null | sed 's/^/   /' || true
done
if ((VMTEST_RC == 0)); then
    # (QEMU 11.1: "failed to read header: EOF", or "server closed socket")
    grep -qE 'failed to read header: EOF|server closed socket' "${VMTEST_RESULTS[0]%/results}/qemu.log" ||
        { echo "FAIL: guest A's QEMU did not report its server gone (no 'failed to read header: EOF' in its log)"; VMTEST_RC=1; }
fi
vmtest_pass_done
fi

vmtest_passes_done
