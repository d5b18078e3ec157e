#!/bin/bash
# VM test: two guests, each with an rdma-sim NIC on a shared host UDP link
# (-netdev socket,udp=), driven by the guest driver (rdma_sim.ko), ping each other
# over the rdma-sim net_device: 10 pings with 0% loss, then unfragmented
# 9000-byte pings after an MTU change (tests/vm/guest/driver-ping.sh).
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-driver-ping
vmtest_pair rsim rsim --netif driver:rdma_sim -s tests/vm/guest/driver-ping.sh
vmtest_done "$VMTEST_RC"
