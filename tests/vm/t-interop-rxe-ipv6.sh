#!/bin/bash
# VM test: interoperability with Linux Soft-RoCE over IPv6.  As
# t-interop-rxe.sh, but both sides use their IPv6 link-local GID (fe80::),
# so every frame has an IPv6 header: ibv_rc_pingpong (data validated) in
# both directions, WRITE and READ bandwidth.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-interop-rxe-ipv6
vmtest_pair rsim rxe -t 600 -s tests/vm/guest/pair-cmds.sh \
    -e GT_GID_FAMILY=ipv6 \
    -e PAIR_CMDS="ibv_rc_pingpong -s 4096 -n 100 -c
rev ibv_rc_pingpong -s 65536 -n 50 -c
ib_write_bw -s 65536 -n 200
rev ib_write_bw -s 65536 -n 200
ib_read_bw -s 65536 -n 200
rev ib_read_bw -s 65536 -n 200"
vmtest_done "$VMTEST_RC"
