#!/bin/bash
# VM test: four guests with rdma-sim on one Ethernet segment (a QEMU
# multicast socket group, which every guest hears): RC pingpong between all
# six pairs at once, the data checked, and each device's receive filter
# dropping the frames meant for the others and its own echoed back; then
# rdma_cm fan-in: 12 ucmatose connections to guest A at once (4 from each
# other guest), and rping (data verified) from every other guest at once,
# each to its own rping server on guest A.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-cluster
vmtest_cluster 4 -t 600 -s tests/vm/guest/cluster.sh -e CLUSTER_HUB=1 -e CLUSTER_FANIN=4
vmtest_counters cluster
vmtest_done "$VMTEST_RC"
