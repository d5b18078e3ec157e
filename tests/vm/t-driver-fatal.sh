#!/bin/bash
# VM test: the rdma-sim device fails (DEV_STATUS.FATAL) under the driver
# while a process holds RDMA objects: the driver reports it, resets the
# device, verbs fail with EIO (no hang), the port goes DOWN, rmmod works
# and a reload recovers (tests/guest/vm-driver-fatal.sh); no oops/WARN/BUG.
set -euo pipefail
cd "$(dirname "$0")/../.."
name=t-driver-fatal

fail() { echo "FAIL: $name: $*"; exit 1; }

make -s -C guest-driver >/dev/null || fail "building guest-driver/rdma_sim.ko failed (make -C guest-driver)"
make -s -C tests/guest >/dev/null || fail "building tests/guest failed (make -C tests/guest)"

runs=$PWD/build/vm-runs/$name.$$
rm -rf "$runs"
rc=0
VM_APPEND=iomem=relaxed VM_RUNS_DIR=$runs tests/vm/vm run --name "$name" --keep --nic none \
    -q -netdev -q user,id=rsimnet -d rdma-sim,netdev=rsimnet,mac=52:54:00:5e:04:01 \
    -s tests/guest/vm-driver-fatal.sh || rc=$?

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
