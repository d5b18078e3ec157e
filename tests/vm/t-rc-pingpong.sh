#!/bin/bash
# VM test: ibv_rc_pingpong between two guests with rdma-sim on a host UDP
# link, with the received buffers validated (-c), in both directions, at
# sizes from 1 byte to 1 MiB and path MTUs 1024 and 4096.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-rc-pingpong
vmtest_pair rsim rsim -t 600 -s tests/vm/guest/pair-cmds.sh \
    -e PAIR_CMDS="ibv_rc_pingpong -s 1 -n 100 -c
ibv_rc_pingpong -s 4096 -n 200 -c
ibv_rc_pingpong -s 65536 -n 100 -c -m 4096
rev ibv_rc_pingpong -s 1048576 -n 20 -c
rev ibv_rc_pingpong -s 3000 -n 500 -c -e"
vmtest_done "$VMTEST_RC"
