#!/bin/bash
# VM test: two guests, each with an rdma-sim NIC on a shared host UDP link
# (-netdev socket,udp=), driven by guest-driver/rdma_sim.ko, ping each other
# over the rdma-sim net_device: 10 pings with 0% loss, then unfragmented
# 9000-byte pings after an MTU change (tests/guest/vm-driver-ping.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
name=t-driver-ping

fail() { echo "FAIL: $name: $*"; exit 1; }

make -s -C guest-driver >/dev/null || fail "building guest-driver/rdma_sim.ko failed (make -C guest-driver)"

runs=$PWD/build/vm-runs/$name.$$
rm -rf "$runs"
rc=0
VM_RUNS_DIR=$runs tests/vm/vm run --name "$name" --keep --guests 2 \
    --nic rdma-sim --netif driver:rdma_sim -k guest-driver/rdma_sim.ko \
    -s tests/guest/vm-driver-ping.sh || rc=$?

if [[ -n ${RDMA_SIM_LOGDIR:-} ]]; then
    for g in "$runs"/*/g*; do
        [[ -d $g ]] || continue
        mkdir -p "$RDMA_SIM_LOGDIR/${g##*/}"
        cp -r "$g"/results/. "$RDMA_SIM_LOGDIR/${g##*/}/" 2>/dev/null || true
        cp "$g"/serial.log "$RDMA_SIM_LOGDIR/${g##*/}/" 2>/dev/null || true
    done
fi
if ((rc == 0)); then
    rm -rf "$runs"
    echo "PASS: $name"
else
    echo "FAIL: $name (logs: $(echo "$runs"/*)/gN/results/output.log and gN/serial.log)"
    exit 1
fi
