#!/bin/bash
# VM test: rdma_sim unloads and reloads cleanly while user processes hold
# RDMA objects (rsim-verbs-test in hold mode, an ibv_rc_pingpong server):
# killed before rmmod, and still alive during rmmod (disassociation), then
# load/unload cycles; ibv_devinfo and the verbs test work after reloading;
# the kernel log has no oops, WARN or BUG.
set -euo pipefail
cd "$(dirname "$0")/../.."
name=t-driver-unload

fail() { echo "FAIL: $name: $*"; exit 1; }

make -s -C guest-driver >/dev/null || fail "building guest-driver/rdma_sim.ko failed (make -C guest-driver)"
make -s -C tests/guest >/dev/null || fail "building tests/guest failed (make -C tests/guest)"

runs=$PWD/build/vm-runs/$name.$$
rm -rf "$runs"
rc=0
VM_RUNS_DIR=$runs tests/vm/vm run --name "$name" --keep --nic none \
    -q -netdev -q user,id=rsimnet -d rdma-sim,netdev=rsimnet,mac=52:54:00:5e:03:01 \
    -s tests/guest/vm-driver-unload.sh || rc=$?

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
