#!/bin/bash
# VM test: the other transport services between two guests with rdma-sim:
# UD (ibv_ud_pingpong), UC (ibv_uc_pingpong), RC on an SRQ with several QPs
# (ibv_srq_pingpong), all with the received buffers validated (-c), RC
# atomics with every result checked (tests/vm/progs/atomic-check), and
# rdma_cm connections over the GSI QP (rping, its data verified with -V)
# in both directions.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-verbs-services
vmtest_pair rsim rsim -t 600 -s tests/vm/guest/pair-cmds.sh \
    -e PAIR_CMDS="ibv_ud_pingpong -s 512 -n 200 -c
ibv_uc_pingpong -s 4096 -n 200 -c
ibv_srq_pingpong -s 4096 -n 100 -q 4 -c
atomic-check -n 2000
rping -C 20 -V
rev rping -C 20 -V -S 30000"
vmtest_done "$VMTEST_RC"
