#!/bin/bash
# Runs in every guest of a cluster run (tests/vm/t-cluster.sh, t-cluster-vxlan.sh,
# scripts/bench.sh): RC traffic between every pair of guests at once, each
# received buffer checked.
# Guest i serves every guest after it and is a client of every guest before
# it; the pair (i, j), i < j, exchanges its QP numbers on TCP port
# 18600 + 8 * i + j. Each pair's output goes to $RSIM_RESULTS/pair-I-J.txt.
# CLUSTER_CMD (environment): what each pair runs: an ibv_*_pingpong command
# (default "ibv_rc_pingpong -s 65536 -n 100 -c"; -d, -g, -p and the
# server's address are added) or a perftest one (e.g. "ib_write_bw -D 10";
# -d, -x, -F, -p and the server's address are added).
# CLUSTER_SERIAL=1 (environment): the pairs run one at a time instead, in
# order (A-B, A-C, ..., B-C, ...), the other guests idle.
# CLUSTER_HUB=1 (environment): the guests are on a hub (VM_LINK=mcast),
# where each device's receive filter must drop the other pairs' frames.
# CLUSTER_FANIN=K (environment): then rdma_cm fan-in: guest A serves K
# ucmatose connections from every other guest at once, then rping from every
# other guest at once (to one rping server each), the data verified (-V).
# CLUSTER_BW (environment): a perftest bandwidth command that guests A
# (server) and B (client) run afterwards, alone (e.g. "ib_write_bw -s 65536
# -n 500"; -d, -x, -F and B's server address are added); its output goes to
# $RSIM_RESULTS/bw.txt.
set -euo pipefail
# shellcheck source=scripts/vm/gt.sh
. "$RSIM_LIB"

gt_rdma_setup
gt_wait_peers 60
read -r -a cmd <<<"${CLUSTER_CMD:-ibv_rc_pingpong -s 65536 -n 100 -c}"
case ${cmd[0]} in
ibv_*) cmd+=(-d "$GT_DEV" -g "$GT_GID") done_re=' iters in ' ;;
ib_*) cmd+=(-d "$GT_DEV" -x "$GT_GID" -F) done_re='^ +[0-9]+ +[0-9]+ ' ;;
*) gt_fail "CLUSTER_CMD: an ibv_* or ib_* program, not '${cmd[0]}'" ;;
esac
me=$RSIM_INDEX
pids=() outs=() checks=()

# run PEER PORT [SERVER]: one side of the pair with guest PEER, in the background
run() {
    local lo=$((me < $1 ? me : $1)) hi=$((me < $1 ? $1 : me))
    local out=$RSIM_RESULTS/pair-$lo-$hi.txt
    "${cmd[@]}" -p "$2" ${3:+"$3"} >"$out" 2>&1 &
    pids+=($!) outs+=("$out")
    # perftest prints its figures on the client's side only
    if [[ -n ${3:-} || ${cmd[0]} == ibv_* ]]; then checks+=(1); else checks+=(0); fi
}

failed=()
# finish K: waits for run K to end; a failure is noted in failed
finish() {
    if ! wait "${pids[$1]}"; then
        failed+=("${outs[$1]##*/}: $(tail -n 3 "${outs[$1]}" | tr '\n' ' ')")
    elif ((checks[$1])) && ! grep -Eq "$done_re" "${outs[$1]}"; then
        failed+=("${outs[$1]##*/}: no line of results")
    fi
}

if [[ ${CLUSTER_SERIAL:-} == 1 ]]; then
    # The barrier of a pair waits for the previous pair's two guests.
    for ((i = 0; i < RSIM_NGUESTS; i++)); do
        for ((j = i + 1; j < RSIM_NGUESTS; j++)); do
            port=$((18600 + 8 * i + j))
            if ((me == i)); then
                run "$j" "$port"
                gt_wait_listen "$port" 30
            fi
            gt_barrier "pair-$i-$j" 300
            ((me != j)) || run "$i" "$port" "10.0.0.$((i + 1))"
            ((me != i && me != j)) || finish $((${#pids[@]} - 1))
        done
    done
    gt_log "${#pids[@]} pairs run one at a time: ${cmd[*]}"
else
    for ((j = me + 1; j < RSIM_NGUESTS; j++)); do
        run "$j" $((18600 + 8 * me + j))
        gt_wait_listen $((18600 + 8 * me + j)) 30
    done
    gt_barrier listening 120
    for ((j = 0; j < me; j++)); do
        run "$j" $((18600 + 8 * j + me)) "10.0.0.$((j + 1))"
    done
    gt_log "${#pids[@]} pairs running: ${cmd[*]}"
    for k in "${!pids[@]}"; do
        finish "$k"
    done
fi
cat "${outs[@]}"
((${#failed[@]} == 0)) || gt_fail "pairs failed: ${failed[*]}"

# On a hub every guest also gets the other pairs' frames and its own back:
# the device's receive filter must have dropped both. A bridge learns
# where each MAC is and floods only the first frames.
gt_save_counters
others=$(gt_counter rx_drop_not_for_us) own=$(gt_counter rx_drop_own_frames)
if [[ ${CLUSTER_HUB:-} == 1 ]] && ((others < 1000 || own < 1000)); then
    gt_fail "on a hub the receive filter drops thousands of the other pairs' frames and of its own; it dropped $others (rx_drop_not_for_us) and $own (rx_drop_own_frames)"
fi
gt_log "ok: ${#pids[@]} pairs passed; the filter dropped $others frames for others, $own of its own"

if [[ -n ${CLUSTER_FANIN:-} ]]; then
    k=$CLUSTER_FANIN
    if ((me == 0)); then
        timeout 300 ucmatose -b "${RSIM_IP%/*}" -c $((k * (RSIM_NGUESTS - 1))) -C 20 \
            >"$RSIM_RESULTS/ucmatose.txt" 2>&1 &
        pid=$!
        gt_wait_cm_listen 30 ucmatose
        gt_barrier ucmatose 120
        wait "$pid" || gt_fail "ucmatose server failed: $(tail -n 5 "$RSIM_RESULTS/ucmatose.txt")"
        # One rping server per client, on port 7174 + the client's index,
        # all listening before any client connects. Not one persistent
        # server (-P): rdma-core 44's loses a connect request that arrives
        # before its main thread has taken the one before (a single
        # child_cm_id slot; later rdma-core waits on an accept_ready
        # semaphore), and that client then waits for ever.
        rping_pids=()
        for ((j = 1; j < RSIM_NGUESTS; j++)); do
            timeout 120 rping -s -a "${RSIM_IP%/*}" -p $((7174 + j)) -C 20 -V -S 4096 \
                >"$RSIM_RESULTS/rping-$j.txt" 2>&1 &
            rping_pids+=($!)
        done
        gt_retry 30 sh -c "[ \$(rdma resource show cm_id | grep -c 'state LISTEN .*comm rping') -ge $((RSIM_NGUESTS - 1)) ]" ||
            gt_fail "the $((RSIM_NGUESTS - 1)) rping servers did not all listen within 30s: $(rdma resource show cm_id 2>&1 | head -n 5)"
        gt_barrier rping 120
        for ((j = 1; j < RSIM_NGUESTS; j++)); do
            wait "${rping_pids[j - 1]}" ||
                gt_fail "rping server for guest $j failed: $(tail -n 5 "$RSIM_RESULTS/rping-$j.txt")"
        done
        gt_barrier rping-done 300
    else
        gt_barrier ucmatose 120
        timeout 300 ucmatose -s 10.0.0.1 -c "$k" -C 20 >"$RSIM_RESULTS/ucmatose.txt" 2>&1 ||
            gt_fail "ucmatose with $k connections failed: $(tail -n 5 "$RSIM_RESULTS/ucmatose.txt")"
        gt_barrier rping 120
        timeout 120 rping -c -a 10.0.0.1 -p $((7174 + me)) -C 20 -V -S 4096 >"$RSIM_RESULTS/rping.txt" 2>&1 ||
            gt_fail "rping to guest A failed: $(tail -n 5 "$RSIM_RESULTS/rping.txt")"
        gt_barrier rping-done 300
    fi
    cat "$RSIM_RESULTS/ucmatose.txt"
    gt_log "ok: rdma_cm fan-in: ucmatose ($k connections from each guest) and rping"
fi

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
