#!/bin/bash
# VM test: an Open MPI job over rdma-sim on four guests of one Ethernet
# segment (tests/vm/guest/cluster-mpi.sh): mpi-check's ring exchange,
# allreduce, alltoall and broadcast with every result checked, then its
# latency and bandwidth sweep between guests A and B; Open MPI talks only
# through UCX's verbs transports, and every device's counters show the
# data crossed it as RoCE.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-cluster-mpi
make -s -C tests/vm/progs mpi-check ||
    vmtest_fail "building tests/vm/progs/mpi-check failed (make -C tests/vm/progs mpi-check; it needs libopenmpi-dev: make deps)"
vmtest_cluster 4 --ssh -t 1500 -s tests/vm/guest/cluster-mpi.sh
vmtest_show mpi-sweep.txt "MPI sweep, guests A and B"
vmtest_counters cluster-mpi
vmtest_done "$VMTEST_RC"
