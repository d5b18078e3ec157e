#!/bin/bash
# VM test: the rdma-sim port's link state reaches the guest.  The host
# takes the NIC's backend link down and up (QEMU monitor set_link) when the
# guest asks; the device reports PORT_DOWN/PORT_ACTIVE async events, which
# the driver turns into netdev carrier changes, the RDMA port state and
# IBV_EVENT_PORT_ERR/PORT_ACTIVE (tests/vm/guest/driver-link.sh).
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-driver-link
mon=$VMTEST_RUNS/mon.sock

# shellcheck disable=SC2317  # called from serve_link, through VMTEST_POLL
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

# serve_link: called while the guest runs; takes the link down or up when
# the guest asks (results/request-link-down, -up) and acknowledges (ack-...).
# shellcheck disable=SC2317
serve_link() {
    local res what state
    res=$(echo "$VMTEST_RUNS"/*/g0/results)
    for what in down up; do
        [[ -e $res/request-link-$what && ! -e $res/ack-link-$what ]] || continue
        state=off
        [[ $what == up ]] && state=on
        monitor "set_link rsimnet $state" || vmtest_fail "monitor set_link $state failed"
        touch "$res/ack-link-$what"
    done
}

VMTEST_POLL=serve_link vmtest_usernet 52:54:00:5e:05:01 \
    -q -monitor -q "unix:$mon,server=on,wait=off" -s tests/vm/guest/driver-link.sh
vmtest_done "$VMTEST_RC"
