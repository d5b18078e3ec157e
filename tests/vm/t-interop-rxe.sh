#!/bin/bash
# VM test: interoperability with Linux Soft-RoCE.  Guest A has rdma-sim,
# guest B virtio-net with rdma_rxe on the same host UDP link;
# ibv_rc_pingpong (data validated), ib_write_bw, ib_read_bw, ib_atomic_bw,
# ibv_ud_pingpong and rping (rdma_cm over the GSI QP, data verified) run
# in both directions.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-interop-rxe
vmtest_pair rsim rxe -t 900 -s tests/vm/guest/pair-cmds.sh \
    -e PAIR_CMDS="ibv_rc_pingpong -s 4096 -n 100 -c
rev ibv_rc_pingpong -s 65536 -n 50 -c
ib_write_bw -s 65536 -n 200
rev ib_write_bw -s 65536 -n 200
ib_read_bw -s 65536 -n 200
rev ib_read_bw -s 65536 -n 200
ib_atomic_bw -n 200
rev ib_atomic_bw -n 200
ib_send_lat -s 2 -n 200
rev ib_write_lat -s 2 -n 200
ibv_ud_pingpong -s 512 -n 100 -c
rev ibv_ud_pingpong -s 512 -n 100 -c
rping -C 10 -V
rev rping -C 10 -V"
vmtest_done "$VMTEST_RC"
