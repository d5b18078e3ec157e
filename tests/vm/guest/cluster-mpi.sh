#!/bin/bash
# Runs in every guest of tests/vm/t-cluster-mpi.sh (run with --ssh): guest A
# starts Open MPI jobs with one rank in every guest - mpirun launches the
# others over ssh - and the ranks talk over rdma-sim through UCX, with
# nothing else to talk over: Open MPI's pml is UCX, its only btl "self",
# UCX's transports RC and UD verbs on the rdma-sim device. Each guest then
# checks from its device's counters that the jobs' data went over RoCE.
# MPI_RUNS (environment): the jobs, mpi-check's modes separated by ";"
# (default "check;sweep"); job M's output goes to $RSIM_RESULTS/mpi-M.txt.
set -euo pipefail
# shellcheck source=scripts/vm/gt.sh
. "$RSIM_LIB"

MPI_CHECK=$RSIM_REPO/tests/vm/progs/mpi-check
[[ -x $MPI_CHECK ]] || gt_fail "$MPI_CHECK is missing: make -C tests/vm/progs mpi-check"
[[ -n ${RSIM_SSHD:-} ]] || gt_fail "no sshd in the guests: run with --ssh (VM_SSH=1)"
gt_rdma_setup
gt_wait_peers 60
ucx_info -d 2>&1 | grep -E 'Transport|Device' | gt_save ucx-devices.txt || true
grep -q "Device: $GT_DEV:1" "$RSIM_RESULTS/ucx-devices.txt" ||
    gt_fail "UCX does not see $GT_DEV:1 (ucx_info -d): $(head -n 5 "$RSIM_RESULTS/ucx-devices.txt")"
tx0=$(gt_counter tx_roce_packets) rx0=$(gt_counter rx_roce_packets)
IFS=';' read -r -a runs <<<"${MPI_RUNS:-check;sweep}"

if ((RSIM_INDEX == 0)); then
    hosts=${RSIM_IP%/*}:1
    for p in $RSIM_PEERS; do
        hosts+=,$p:1
    done
    # UCX_IB_GID_INDEX: every guest has its RoCE v2 IPv4 GID at this index
    mpirun=(timeout 600 mpirun --allow-run-as-root -np "$RSIM_NGUESTS" --host "$hosts"
        --mca plm_rsh_agent ssh --mca oob_tcp_if_include "${RSIM_IP%.*}.0/24"
        --mca pml ucx --mca btl self --mca osc ucx
        -x UCX_NET_DEVICES="$GT_DEV:1" -x "UCX_TLS=rc_verbs,ud_verbs,self"
        -x UCX_IB_GID_INDEX="$GT_GID" "$MPI_CHECK")
    gt_barrier mpi-start 120
    for run in "${runs[@]}"; do
        out=$RSIM_RESULTS/mpi-$run.txt
        t0=$SECONDS
        "${mpirun[@]}" "$run" >"$out" 2>&1 ||
            gt_fail "MPI job '$run' failed (exit $?): $(tail -n 8 "$out" | tr '\n' ' ')"
        cat "$out"
        case $run in
        check) want="check ok: $RSIM_NGUESTS ranks" ;;
        sweep) want="sweep done" ;;
        *) want="" ;;
        esac
        [[ -z $want ]] || grep -qx "$want" "$out" || gt_fail "MPI job '$run' did not print '$want'"
        gt_log "ok: MPI job '$run' on $RSIM_NGUESTS guests in $((SECONDS - t0))s"
    done
    gt_barrier mpi-done 60
else
    gt_barrier mpi-start 120
    gt_barrier mpi-done 1300
fi

# Every rank sent and received megabytes: thousands of RoCE packets each way.
tx=$(($(gt_counter tx_roce_packets) - tx0)) rx=$(($(gt_counter rx_roce_packets) - rx0))
gt_save_counters
((tx > 4096 && rx > 4096)) ||
    gt_fail "$GT_DEV sent $tx and received $rx RoCE packets during the MPI jobs: their data did not go over RDMA"
gt_log "ok: $GT_DEV sent $tx and received $rx RoCE packets during the MPI jobs"
gt_check_dmesg
gt_barrier finished 300
