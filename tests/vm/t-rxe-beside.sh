#!/bin/bash
# VM test: Soft-RoCE beside rdma-sim (tests/vm/guest/rxe-beside.sh).  While
# an RC ping-pong runs on rsim0 between two guests, guest A loads rdma_rxe,
# makes and removes Soft-RoCE devices (one on a dummy port, one on rsim0's
# own interface, which rdma_rxe must not take for one of its devices),
# changes the interface's MTU, and guest B sends it broadcast RoCE v2
# datagrams, which reach rdma_rxe's UDP socket.  rsim0 has rxe's driver id;
# before the driver gave the core its net_device through get_netdev instead
# of ib_device_set_netdev, rdma_rxe found rsim0 by net_device and treated
# it as a struct rxe_dev.  The ping-pong ends with its data checked, rsim0
# unchanged, the kernel log clean; then rdma_rxe's unload (which removes
# rsim0 too: a known limit, README) and rdma_sim's unload and reload.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-rxe-beside
vmtest_pair rsim rsim -t 300 -s tests/vm/guest/rxe-beside.sh
vmtest_done "$VMTEST_RC"
