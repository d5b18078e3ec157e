#!/bin/bash
# Guest B of tests/vm/t-migrate.sh: the ibv_rc_pingpong client of the
# RAM-root guest A (tests/vm/guest-ramroot-init runs the server), which the
# host live-migrates while this runs.
#
# A has no Python and no 9p share, so gt_barrier cannot be used: B connects
# again and again until A's server listens. A connection attempt is not a
# probe that costs the server its one accept(): a client that cannot connect
# prints "Couldn't connect" and exits without having reached it.
# MIG_PINGPONG (environment): the arguments both ends run with (-s, -n, -c).
set -euo pipefail
# shellcheck source=tests/vm/guest/lib.sh
. "$RSIM_LIB"

gt_rdma_setup
gt_wait_peer 120
out=$RSIM_RESULTS/pingpong.txt
read -r -a args <<<"$MIG_PINGPONG"
end=$((SECONDS + 120))
while :; do
    rc=0
    ibv_rc_pingpong -d "$GT_DEV" -g "$GT_GID" "${args[@]}" "$RSIM_PEER" >"$out" 2>&1 || rc=$?
    grep -q "Couldn't connect" "$out" || break
    ((SECONDS < end)) || gt_fail "guest A's ibv_rc_pingpong server did not listen within 120s: $(cat "$out")"
    sleep 0.5
done
cat "$out"
gt_save_counters
((rc == 0)) || gt_fail "ibv_rc_pingpong exited $rc"
grep -q "iters in" "$out" || gt_fail "ibv_rc_pingpong printed no result line"
gt_log "ibv_rc_pingpong done: $(grep 'iters in' "$out")"
