#!/bin/bash
# Runs in both guests: a list of RDMA client/server programs between them.
#
# PERF_CMDS (environment): one command per line, e.g.
#   "ib_write_bw -s 65536 -n 2000"    (perftest: -d, -x and -F are added)
#   "ibv_rc_pingpong -s 4096 -n 100 -c"  (rdma-core: -d and -g are added)
#   "rping -C 10 -v"                   (rdma_cm: -s/-c and -a SERVER_IP
#                                    are added)
# Guest A is the server, guest B the client (it adds the peer's address);
# a line starting with "rev " swaps the roles for that command.
# Each command's output goes to $RSIM_RESULTS/out-N.txt (client and server).
set -euo pipefail
# shellcheck source=tests/vm/guest-lib.sh
. "$RSIM_LIB"
# shellcheck source=tests/vm/in-guest/rdma-env.sh
. "$RSIM_REPO/tests/vm/in-guest/rdma-env.sh"

rdma_setup
rsim_wait_peer 60
n=0
while IFS= read -r line; do
    [[ -n $line ]] || continue
    n=$((n + 1))
    role=$RSIM_ROLE
    if [[ $line == rev\ * ]]; then
        line=${line#rev }
        if [[ $role == server ]]; then role=client; else role=server; fi
    fi
    read -r -a argv <<<"$line"
    tool=${argv[0]}
    case $tool in
    ib_*) port=18515; extra=(-d "$RDMA_DEV" -x "$RDMA_GID" -F) ;;
    ibv_*) port=18515; extra=(-d "$RDMA_DEV" -g "$RDMA_GID") ;;
    rping)                            # rdma_cm: no TCP side channel
        port=
        if [[ $role == server ]]; then
            extra=(-s -a "${RSIM_IP%/*}")
        else
            extra=(-c -a "$RSIM_PEER")
        fi
        ;;
    *) rsim_fail "unknown command: $tool" ;;
    esac
    out=$RSIM_RESULTS/out-$n.txt
    rsim_log "[$n] $line ($role)"
    if [[ $role == server ]]; then
        "${argv[@]}" "${extra[@]}" >"$out" 2>&1 &
        pid=$!
        if [[ -n $port ]]; then
            rsim_wait_listen "$port" 60
        else
            sleep 3             # an rdma_cm listener has no TCP port to see
        fi
        rsim_barrier "start-$n" 120
        rc=0
        wait "$pid" || rc=$?
    else
        rsim_barrier "start-$n" 120
        rc=0
        argv+=("${extra[@]}")
        if [[ -n $port ]]; then
            argv+=("$RSIM_PEER")
        fi
        timeout 600 "${argv[@]}" >"$out" 2>&1 || rc=$?
    fi
    cat "$out"
    # the device's counters so far (rdma-sim and rxe both have them)
    rdma statistic show link "$RDMA_DEV/1" >"$RSIM_RESULTS/stats-$n.txt" 2>&1 || true
    [[ $rc == 0 ]] || rsim_fail "[$n] '$line' exited with status $rc"
    rsim_barrier "done-$n" 600
done <<<"$PERF_CMDS"
rsim_barrier finished 60
echo "perftest-pair: $n commands passed"
