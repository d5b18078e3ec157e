#!/bin/bash
# VM test: tests/guest/rsim-verbs-test drives the rdma-sim driver through
# stock libibverbs + the rxe provider in a guest: PD, CQ (with resize), QP
# RESET->INIT->RTR->RTS and illegal transitions, UD QP + AH, SRQ (limit,
# resize), MRs with PBL levels 0/1/2 (checked on the device with
# MR_TRANSLATE through the driver's debugfs), and the errno of bad
# requests (too many SGEs, too deep queues, bad access flags), completion
# events and async events (SQ_DRAINED, QP_LAST_WQE_REACHED, CQ_ERR); then
# tests/guest/kverbs/rsim_kverbs_test.ko runs the kernel verbs paths (DMA
# MR, kernel rings, inline sends, fast registration, drain, CQ resize,
# softirq completion events, an AH created in atomic context).
set -euo pipefail
cd "$(dirname "$0")/../.."
name=t-driver-verbs

fail() { echo "FAIL: $name: $*"; exit 1; }

make -s -C guest-driver >/dev/null || fail "building guest-driver/rdma_sim.ko failed (make -C guest-driver)"
make -s -C tests/guest >/dev/null || fail "building tests/guest failed (make -C tests/guest)"

runs=$PWD/build/vm-runs/$name.$$
rm -rf "$runs"
rc=0
VM_RUNS_DIR=$runs tests/vm/vm run --name "$name" --keep --nic none \
    -q -netdev -q user,id=rsimnet -d rdma-sim,netdev=rsimnet,mac=52:54:00:5e:02:01 \
    -s tests/guest/vm-driver-verbs.sh || rc=$?

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
