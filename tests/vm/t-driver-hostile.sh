#!/bin/bash
# VM test: the driver survives devices that damage what they tell it.  One
# guest with four rdma-sim functions whose fault-driver property damages
# 0 (a well-behaved one), 1%, 10% and 100% of their completions, events and
# admin completions (tests/vm/guest/driver-hostile.sh): the driver binds
# each or refuses it cleanly, traffic runs against each within time
# limits (verbs-test, ibv_rc_pingpong with completion events, the kernel
# verbs test), the driver reports what it refused, rate-limited; the
# well-behaved function keeps working; rmmod and a reload work; no oops,
# WARN, BUG or lockup in the kernel log.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-driver-hostile

# The share (ppm) and fault-seed of each function, at slots 10..13.  With
# these seeds the first 34 (1%) and 69 (10%) entries of a function are
# sound: it gets through probe, and the damage falls on the traffic.
# FAULT_SEED=N gives every function seed N: other faults.
ppms=(0 10000 100000 1000000)
seeds=(1 2 44 4)
args=()
devices=''
for i in "${!ppms[@]}"; do
    args+=(-q -netdev -q "user,id=hostile$i"
        -d "rdma-sim,addr=1$i.0,netdev=hostile$i,mac=52:54:00:5e:07:0$i,fault-driver=${ppms[i]},fault-seed=${FAULT_SEED:-${seeds[i]}}")
    devices+=" 0000:00:1$i.0=${ppms[i]}"
done
vmtest_plain -n 1 --nic none -t 420 --env "HOSTILE_DEVICES=${devices# }" \
    "${args[@]}" -s tests/vm/guest/driver-hostile.sh
vmtest_show driver-hostile.txt "what the driver did with each function"
vmtest_done "$VMTEST_RC"
