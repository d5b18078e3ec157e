#!/bin/bash
# VM smoke test: one guest boots the guest kernel with the host root as its
# user space and checks it (tests/vm/guest/smoke-boot.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
name=t-smoke-boot
token=$$-$RANDOM
runs=${RDMA_SIM_LOGDIR:-build/vm-runs}/$name.$token
leak=build/.smoke-overlay-$token
rc=0
VM_RUNS_DIR=$(realpath -m "$runs") tests/vm/vm run --name "$name" --keep --nic none \
    --env SMOKE_TOKEN="$token" -s tests/vm/guest/smoke-boot.sh || rc=$?
if ((rc == 0)); then
    if [[ -e $leak ]]; then
        echo "$name: a file written in the guest appeared on the host ($leak): the host root is not read-only" >&2
        rc=1
    elif [[ $(cat "$runs"/*/g0/results/token 2>/dev/null) != "$token" ]]; then
        echo "$name: the results share did not bring the guest's file back ($runs/*/g0/results/token)" >&2
        rc=1
    fi
fi
rm -f "$leak"
if ((rc == 0)); then
    rm -rf "$runs"
    echo "PASS: $name"
else
    if [[ -d $runs ]]; then echo "FAIL: $name (logs in $runs)"; else echo "FAIL: $name"; fi
    exit 1
fi
