# shellcheck shell=bash
# tests/vm/guest-lib.sh - helpers for guest scripts (source "$RSIM_LIB").
#
# Two-guest convention: guest A (RSIM_ROLE=server, 10.0.0.1) and guest B
# (RSIM_ROLE=client, 10.0.0.2) boot at the same time but not in lockstep.
#   - The server starts its listener, waits until it listens
#     (rsim_wait_listen PORT) and then passes a barrier (rsim_barrier ready).
#   - The client passes the same barrier, then connects.
#   - Both end with rsim_barrier done, so that neither powers off while
#     the other still needs it.
# A barrier is a TCP rendezvous on port 7470 of guest A; names must match
# on both sides, in the same order.

RSIM_BARRIER_PORT=${RSIM_BARRIER_PORT:-7470}

rsim_log() { echo "[$RSIM_NAME $(cut -d' ' -f1 /proc/uptime)] $*"; }
rsim_fail() { echo "[$RSIM_NAME] FAIL: $*" >&2; exit 1; }

# rsim_retry SECONDS CMD...: runs CMD until it succeeds, at most SECONDS.
rsim_retry() {
    local limit=$1 end
    shift
    end=$((SECONDS + limit))
    until "$@"; do
        ((SECONDS < end)) || return 1
        sleep 0.5
    done
}

# rsim_wait_peer [SECONDS]: waits until the peer answers pings.
rsim_wait_peer() {
    [[ -n ${RSIM_PEER:-} ]] || rsim_fail "rsim_wait_peer: no peer (run with two guests)"
    rsim_retry "${1:-60}" ping -c 1 -W 1 -q "$RSIM_PEER" >/dev/null ||
        rsim_fail "peer $RSIM_PEER did not answer pings within ${1:-60}s"
}

# rsim_wait_listen PORT [SECONDS]: waits until something listens on local TCP PORT
# (does not connect, so it takes no connection from the listener).
rsim_wait_listen() {
    rsim_retry "${2:-30}" sh -c "ss -Hltn 'sport = :$1' | grep -q ." ||
        rsim_fail "nothing listens on TCP port $1 after ${2:-30}s"
}

# rsim_barrier NAME [SECONDS]: returns when both guests have reached barrier NAME.
rsim_barrier() {
    local name=$1 limit=${2:-120}
    [[ -n ${RSIM_PEER:-} ]] || return 0 # one guest: nothing to wait for
    python3 - "$RSIM_ROLE" "$name" "$limit" "$RSIM_BARRIER_PORT" "$RSIM_PEER" <<'EOF' ||
import socket, sys, time
role, name, limit, port, peer = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
end = time.monotonic() + limit
def left():
    t = end - time.monotonic()
    if t <= 0:
        sys.exit(f"barrier {name!r}: peer did not arrive within {limit:.0f}s")
    return t
if role == "server":
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(1)
    while True:
        s.settimeout(left())
        try:
            c, _ = s.accept()
        except socket.timeout:
            left()
            continue
        c.settimeout(10)
        got = c.makefile().readline().strip()
        if got != name:
            c.sendall(b"mismatch\n")
            sys.exit(f"barrier {name!r}: peer is at barrier {got!r}")
        c.sendall(b"ok\n")
        c.close()
        break
else:
    while True:
        left()
        try:
            c = socket.create_connection((peer, port), timeout=2)
            c.settimeout(10)
            c.sendall((name + "\n").encode())
            got = c.makefile().readline().strip()
            if got != "ok":
                sys.exit(f"barrier {name!r}: peer answered {got!r}")
            break
        except (ConnectionRefusedError, socket.timeout, OSError):
            time.sleep(0.3)
EOF
        rsim_fail "barrier '$name' failed"
    rsim_log "barrier '$name' passed"
}
