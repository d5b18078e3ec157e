#!/bin/bash
# Runs in both guests: a list of RDMA client/server programs between them.
# Run by tests/vm/t-perftest.sh, t-perftest-lossy.sh, t-rc-pingpong.sh,
# t-verbs-services.sh, t-interop-rxe.sh, t-interop-rxe-ipv6.sh, by
# tests/vm/guest/rdma-core.sh and by scripts/demo.sh and scripts/bench.sh.
#
# PAIR_CMDS (environment): one command per line, e.g.
#   "ib_write_bw -s 65536 -n 2000"    (perftest: -d, -x and -F are added)
#   "ibv_rc_pingpong -s 4096 -n 100 -c"  (rdma-core: -d and -g are added)
#   "rping -C 10 -v"                   (rdma_cm: -s/-c and -a SERVER_IP
#                                    are added)
#   "atomic-check -n 2000"             (tests/vm/progs/atomic-check: -d and
#                                    -g are added)
# Guest A is the server, guest B the client (it adds the peer's address);
# a line starting with "rev " swaps the roles for that command.
# Each command's output goes to $RSIM_RESULTS/out-N.txt (client and server).
# GT_ETH_MTU and GT_GID_FAMILY (environment): see gt_rdma_setup.
# PAIR_LINGER (environment): milliseconds the ibv_* programs wait before
# they destroy their QP (tests/vm/progs/linger.c), for lossy links.
# PAIR_MAPS=1 (environment): the server's /proc/PID/maps is copied to
# $RSIM_RESULTS/maps-N.txt once it listens, to tell which libibverbs and
# provider it runs with (it has opened the device by then).
set -euo pipefail
# shellcheck source=scripts/vm/gt.sh
. "$RSIM_LIB"

# The device's counters and QPs, for a failure message.
pair_state() {
    rdma statistic show link "$GT_DEV/1"
    rdma resource show qp link "$GT_DEV/1"
}

gt_rdma_setup
gt_wait_peer 60
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
    ib_*) port=18515; extra=(-d "$GT_DEV" -x "$GT_GID" -F) ;;
    ibv_*) port=18515; extra=(-d "$GT_DEV" -g "$GT_GID") ;;
    atomic-check)                     # tests/vm/progs: atomics, each result checked
        port=18700; extra=(-d "$GT_DEV" -g "$GT_GID")
        argv[0]=$RSIM_REPO/tests/vm/progs/atomic-check
        ;;
    rping)                            # rdma_cm: no TCP side channel
        port=
        if [[ $role == server ]]; then
            extra=(-s -a "${RSIM_IP%/*}")
        else
            extra=(-c -a "$RSIM_PEER")
        fi
        ;;
    *) gt_fail "unknown command: $tool" ;;
    esac
    pre=()
    if [[ -n ${PAIR_LINGER:-} && $tool == ibv_* ]]; then
        pre=(env "LD_PRELOAD=$RSIM_REPO/tests/vm/progs/liblinger.so"
             "RSIM_LINGER_MS=$PAIR_LINGER")
    fi
    out=$RSIM_RESULTS/out-$n.txt
    gt_log "[$n] $line ($role)"
    if [[ $role == server ]]; then
        "${pre[@]}" "${argv[@]}" "${extra[@]}" >"$out" 2>&1 &
        pid=$!
        if [[ -n $port ]]; then
            gt_wait_listen "$port" 60
        else
            sleep 3             # an rdma_cm listener has no TCP port to see
        fi
        if [[ -n ${PAIR_MAPS:-} ]]; then
            cp "/proc/$pid/maps" "$RSIM_RESULTS/maps-$n.txt" ||
                gt_fail "[$n] cannot read the maps of '$line' (PID $pid): has it exited?"
        fi
        gt_barrier "start-$n" 120
        rc=0
        wait "$pid" || rc=$?
    else
        gt_barrier "start-$n" 120
        rc=0
        argv+=("${extra[@]}")
        if [[ -n $port ]]; then
            argv+=("$RSIM_PEER")
        fi
        "${pre[@]}" "${argv[@]}" >"$out" 2>&1 &
        pid=$!
        # A client that hangs is left running: its QP stays, so the failure
        # report (the host reads the device, the counters below) shows where
        # its transport stopped.
        if ! timeout 600 tail --pid="$pid" -s 0.1 -f /dev/null; then
            cat "$out"
            GT_FAIL_CONTEXT=pair_state gt_fail "[$n] '$line' still runs after 600 s (left running, QP kept)"
        fi
        wait "$pid" || rc=$?
    fi
    cat "$out"
    # the device's counters so far (rdma-sim and rxe both have them)
    rdma statistic show link "$GT_DEV/1" >"$RSIM_RESULTS/stats-$n.txt" 2>&1 || true
    [[ $rc == 0 ]] || gt_fail "[$n] '$line' exited with status $rc"
    gt_barrier "done-$n" 600
done <<<"$PAIR_CMDS"
gt_barrier finished 60
echo "pair-cmds: $n commands passed"
