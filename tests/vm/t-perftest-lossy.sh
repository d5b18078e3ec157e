#!/bin/bash
# VM test: the perftest matrix again with 2% of the frames each device
# sends dropped and 2% reordered (device properties fault-drop and
# fault-reorder): every test must still complete.  ibv_rc_pingpong -c checks
# the data; it has no closing handshake, so its programs keep their QP 2 s
# after the end (PAIR_LINGER) for a lost last ACK to be recovered.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-perftest-lossy
RSIM_PROPS=$VMTEST_LOSSY,fault-seed=11 \
vmtest_pair rsim rsim -t 1200 -s tests/vm/guest/pair-cmds.sh \
    -e PAIR_LINGER=2000 -e PAIR_CMDS="ibv_rc_pingpong -s 65536 -n 50 -c
rev ibv_rc_pingpong -s 1048576 -n 10 -c
$(cat tests/vm/perftest-matrix.txt)"
vmtest_done "$VMTEST_RC"
