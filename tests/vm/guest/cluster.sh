#!/bin/bash
# Runs in every guest of a cluster run (tests/vm/t-cluster.sh, t-cluster-vxlan.sh): RC
# traffic between every pair of guests at once, each received buffer checked.
# Guest i serves every guest after it and is a client of every guest before
# it; the pair (i, j), i < j, exchanges its QP numbers on TCP port
# 18600 + 8 * i + j. Each pair's output goes to $RSIM_RESULTS/pair-I-J.txt.
# CLUSTER_CMD (environment): what each pair runs, an ibv_*_pingpong command
# (default "ibv_rc_pingpong -s 65536 -n 100 -c"; -d, -g, -p and the
# server's address are added).
# CLUSTER_HUB=1 (environment): the guests are on a hub (VM_LINK=mcast),
# where each device's receive filter must drop the other pairs' frames.
# CLUSTER_BW (environment): a perftest bandwidth command that guests A
# (server) and B (client) run afterwards, alone (e.g. "ib_write_bw -s 65536
# -n 500"; -d, -x, -F and B's server address are added); its output goes to
# $RSIM_RESULTS/bw.txt.
set -euo pipefail
# shellcheck source=tests/vm/guest/lib.sh
. "$RSIM_LIB"

gt_rdma_setup
gt_wait_peers 60
read -r -a cmd <<<"${CLUSTER_CMD:-ibv_rc_pingpong -s 65536 -n 100 -c}"
me=$RSIM_INDEX
pids=() outs=()

# run PEER PORT [SERVER]: one side of the pair with guest PEER, in the background
run() {
    local lo=$((me < $1 ? me : $1)) hi=$((me < $1 ? $1 : me))
    local out=$RSIM_RESULTS/pair-$lo-$hi.txt
    "${cmd[@]}" -d "$GT_DEV" -g "$GT_GID" -p "$2" ${3:+"$3"} >"$out" 2>&1 &
    pids+=($!) outs+=("$out")
}

for ((j = me + 1; j < RSIM_NGUESTS; j++)); do
    run "$j" $((18600 + 8 * me + j))
    gt_wait_listen $((18600 + 8 * me + j)) 30
done
gt_barrier listening 120
for ((j = 0; j < me; j++)); do
    run "$j" $((18600 + 8 * j + me)) "10.0.0.$((j + 1))"
done
gt_log "${#pids[@]} pairs running: ${cmd[*]}"

failed=()
for k in "${!pids[@]}"; do
    if ! wait "${pids[k]}"; then
        failed+=("${outs[k]##*/}: $(tail -n 3 "${outs[k]}" | tr '\n' ' ')")
    elif ! grep -q ' iters in ' "${outs[k]}"; then
        failed+=("${outs[k]##*/}: no 'iters in' line")
    fi
done
cat "${outs[@]}"
((${#failed[@]} == 0)) || gt_fail "pairs failed: ${failed[*]}"

# On a hub every guest also gets the other pairs' frames (and its own back):
# the device's receive filter must have dropped them. A bridge learns
# where each MAC is and floods only the first frames.
gt_save_counters
dropped=$(rdma statistic show link "$GT_DEV/1" | grep -oE 'rx_drop_not_for_us [0-9]+' | cut -d' ' -f2)
if [[ ${CLUSTER_HUB:-} == 1 ]] && ((${dropped:-0} < 1000)); then
    gt_fail "the receive filter dropped ${dropped:-no} frames (rx_drop_not_for_us): on a hub it drops the other pairs' thousands"
fi
gt_log "ok: ${#pids[@]} pairs passed; the filter dropped ${dropped:-?} frames for others"

if [[ -n ${CLUSTER_BW:-} ]]; then
    read -r -a bw <<<"$CLUSTER_BW"
    bw+=(-d "$GT_DEV" -x "$GT_GID" -F)
    case $me in
    0)
        "${bw[@]}" >"$RSIM_RESULTS/bw.txt" 2>&1 &
        pid=$!
        gt_wait_listen 18515 30
        gt_barrier bw 120
        wait "$pid" || gt_fail "'$CLUSTER_BW' (server) failed: $(tail -n 3 "$RSIM_RESULTS/bw.txt")"
        ;;
    1)
        gt_barrier bw 120
        timeout 300 "${bw[@]}" 10.0.0.1 >"$RSIM_RESULTS/bw.txt" 2>&1 ||
            gt_fail "'$CLUSTER_BW' (client) failed: $(tail -n 3 "$RSIM_RESULTS/bw.txt")"
        cat "$RSIM_RESULTS/bw.txt"
        ;;
    *) gt_barrier bw 120 ;;
    esac
fi
gt_check_dmesg
gt_barrier finished 300
