#!/bin/bash
# VM test: Debian 13's rdma-core 56 drives rdma-sim.  Guest A runs trixie's
# rdma-core 56 and perftest 25.01 (scripts/rdma-core-56.sh fetches them
# into build/rdma-core-56 once and runs them through trixie's own loader),
# guest B the host's rdma-core 44 and perftest.  Both check ibv_devinfo;
# ibv_rc_pingpong (data checked) runs in both directions, then
# ibv_ud_pingpong, ib_write_bw and rping (rdma_cm); each guest checks that
# its servers ran with its own libibverbs and librxe (/proc/PID/maps).
# Guest A also tries FLUSH, the verb rxe's provider gained after rdma-core
# 44 (tests/vm/progs/flush-probe.c), which rdma-sim does not implement.
# Exits 77 (skip) when the trixie archive cannot be reached.
set -euo pipefail
# shellcheck source=tests/vm/test-lib.sh
. "$(dirname "$0")/test-lib.sh"
vmtest_init t-rdma-core-56
rc=0
scripts/rdma-core-56.sh || rc=$?
if ((rc == 3)); then
    echo "SKIP: t-rdma-core-56: the trixie archive cannot be reached (above)"
    exit 77
fi
((rc == 0)) || vmtest_fail "scripts/rdma-core-56.sh failed (above)"
make -s -C tests/vm/progs flush-probe ||
    vmtest_fail "building tests/vm/progs/flush-probe against rdma-core 56 failed (make -C tests/vm/progs flush-probe)"
vmtest_pair rsim rsim -t 600 -s tests/vm/guest/rdma-core-56.sh \
    -e RC56_DIR="$PWD/build/rdma-core-56" \
    -e PAIR_CMDS="ibv_rc_pingpong -s 4096 -n 100 -c
rev ibv_rc_pingpong -s 65536 -n 50 -c
rev ibv_rc_pingpong -s 3000 -n 100 -c -e
ibv_ud_pingpong -s 512 -n 100 -c
ib_write_bw -s 65536 -n 200
rev ib_write_bw -s 65536 -n 200
rping -C 10 -V
rev rping -C 10 -V"
vmtest_show devinfo-diff.txt "ibv_devinfo -v: rdma-core 44 (<) and 56 (>) on guest A"
vmtest_done "$VMTEST_RC"
