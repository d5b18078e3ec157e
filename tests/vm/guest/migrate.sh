#!/bin/bash
# Guest B of tests/vm/t-migrate.sh: the client of the RAM-root guest A
# (scripts/vm/guest-ramroot-init runs the server), which the host
# live-migrates while this runs.
#
# A has no Python and no 9p share, so gt_barrier cannot be used: B connects
# again and again until A's server listens. A connection attempt is not a
# probe that costs the server its one accept(): a client that cannot connect
# says so and exits without having reached it.
# MIG_CLIENT (environment): the client's command: an ibv_*_pingpong (-d and
# -g are added), a perftest program (-d, -x and -F) or atomic-check
# (tests/vm/progs; -d and -g); A's address is added last.
set -euo pipefail
# shellcheck source=scripts/vm/gt.sh
. "$RSIM_LIB"

gt_rdma_setup
gt_wait_peer 120
out=$RSIM_RESULTS/client.txt
read -r -a argv <<<"$MIG_CLIENT"
case ${argv[0]} in
ibv_*) argv+=(-d "$GT_DEV" -g "$GT_GID") done_re=' iters in ' ;;
ib_*) argv+=(-d "$GT_DEV" -x "$GT_GID" -F) done_re='^ +[0-9]+ +[0-9]+ ' ;;
atomic-check)
    argv[0]=$RSIM_REPO/tests/vm/progs/atomic-check
    argv+=(-d "$GT_DEV" -g "$GT_GID") done_re='^atomic-check: ok'
    ;;
*) gt_fail "MIG_CLIENT: an ibv_*, ib_* or atomic-check command, not '${argv[0]}'" ;;
esac
end=$((SECONDS + 120))
while :; do
    rc=0
    "${argv[@]}" "$RSIM_PEER" >"$out" 2>&1 || rc=$?
    if ((rc == 0)) || ! grep -qE "Couldn't connect|Unable to init the socket connection" "$out"; then
        break
    fi
    ((SECONDS < end)) || gt_fail "guest A's server did not listen within 120s: $(cat "$out")"
    sleep 0.5
done
cat "$out"
gt_save_counters
((rc == 0)) || gt_fail "${argv[0]##*/} exited $rc"
grep -qE "$done_re" "$out" || gt_fail "${argv[0]##*/} printed no result line"
gt_log "${argv[0]##*/} done: $(grep -E "$done_re" "$out" | tail -n 1)"
