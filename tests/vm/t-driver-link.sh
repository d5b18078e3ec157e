#!/bin/bash
# VM test: the rdma-sim port's link state reaches the guest.  The host
# takes the NIC's backend link down and up (QEMU monitor set_link) when the
# guest asks; the device reports PORT_DOWN/PORT_ACTIVE async events, which
# the driver turns into netdev carrier changes, the RDMA port state and
# IBV_EVENT_PORT_ERR/PORT_ACTIVE (tests/guest/vm-driver-link.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
name=t-driver-link

fail() { echo "FAIL: $name: $*"; exit 1; }

make -s -C guest-driver >/dev/null || fail "building guest-driver/rdma_sim.ko failed (make -C guest-driver)"

runs=$PWD/build/vm-runs/$name.$$
rm -rf "$runs"
mkdir -p "$runs"
mon=$runs/mon.sock

monitor() { # monitor COMMAND: one human monitor command
    python3 - "$mon" "$1" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.settimeout(5)
time.sleep(0.2)
s.recv(4096)                       # banner
s.sendall((sys.argv[2] + "\n").encode())
time.sleep(0.5)
s.close()
PY
}

VM_RUNS_DIR=$runs tests/vm/vm run --name "$name" --keep --nic none \
    -q -netdev -q user,id=rsimnet -d rdma-sim,netdev=rsimnet,mac=52:54:00:5e:05:01 \
    -q -monitor -q "unix:$mon,server=on,wait=off" \
    -s tests/guest/vm-driver-link.sh &
vm=$!
served=()
while kill -0 "$vm" 2>/dev/null; do
    for what in link-down link-up; do
        [[ " ${served[*]} " == *" $what "* ]] && continue
        req=$(echo "$runs"/*/g0/results/request-$what)
        [[ -e $req ]] || continue
        if [[ $what == link-down ]]; then
            monitor "set_link rsimnet off" || fail "monitor set_link off failed"
        else
            monitor "set_link rsimnet on" || fail "monitor set_link on failed"
        fi
        touch "$(dirname "$req")/ack-$what"
        served+=("$what")
    done
    sleep 0.2
done
rc=0
wait "$vm" || rc=$?

res=$(echo "$runs"/*/g0/results)
if [[ -n ${RDMA_SIM_LOGDIR:-} && -d $res ]]; then
    mkdir -p "$RDMA_SIM_LOGDIR"
    cp -r "$res"/. "$RDMA_SIM_LOGDIR/" 2>/dev/null || true
    cp "$runs"/*/g0/serial.log "$RDMA_SIM_LOGDIR/" 2>/dev/null || true
fi
if ((rc == 0)); then
    rm -rf "$runs"
    echo "PASS: $name"
else
    echo "FAIL: $name (guest output: $res/output.log; console: $(dirname "$res")/serial.log)"
    exit 1
fi
