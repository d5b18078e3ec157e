#!/bin/bash
# VM test: perftest between two guests with rdma-sim on a host UDP link:
# SEND, WRITE, READ and atomic bandwidth and SEND/WRITE latency, sizes from
# 1 byte to 1 MiB, one and four QPs.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-perftest
vmtest_pair rsim rsim -t 900 -s tests/vm/guest/pair-cmds.sh \
    -e PAIR_CMDS="$(cat tests/vm/perftest-matrix.txt)"
vmtest_done "$VMTEST_RC"
