#!/bin/bash
# VM test: the rdma-sim guest driver (rdma_sim.ko, guest-driver/) loads in a
# guest with `-device rdma-sim` on a netdev backend, binds, shows the port
# ACTIVE with its netdev in `rdma link`, and `ibv_devinfo -v` shows rsim0
# with the limits the device advertises (some set to non-default values
# here, so that they must come from the device), and one completion vector
# per vCPU, each interrupt bound to its CPU.  The ibv_devinfo -v output
# is printed and kept in the test's log directory.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-driver-load

# Device properties and the values ibv_devinfo must show for them
# (QPN 0, AH 0 and MR index 0 are never handed out: max_qp/ah/mr are one less).
props=max-qp=512,max-cq=300,max-mr=2048,max-sge=8,max-qp-wr=1000,max-cqe=4095,max-pd=100,max-srq=50,max-ah=64,max-gid=8
envs=(EXPECT_MAX_QP=511 EXPECT_MAX_CQ=300 EXPECT_MAX_MR=2047 EXPECT_MAX_SGE=8
    EXPECT_MAX_QP_WR=1000 EXPECT_MAX_CQE=4095 EXPECT_MAX_PD=100 EXPECT_MAX_SRQ=50
    EXPECT_MAX_AH=63 EXPECT_MAX_GID=8)
args=()
for e in "${envs[@]}"; do args+=(--env "$e"); done

# Two vCPUs: the driver must offer a completion vector per CPU.
VM_SMP=2 RSIM_PROPS=$props vmtest_usernet 52:54:00:5e:01:01 "${args[@]}" -s tests/vm/guest/driver-load.sh
vmtest_show ibv_devinfo-v.txt "ibv_devinfo -v in the guest ($props)"
vmtest_done "$VMTEST_RC"
