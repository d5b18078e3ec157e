#!/bin/bash
# VM test: rdma_sim unloads and reloads cleanly while user processes hold
# RDMA objects (verbs-test in hold mode, an ibv_rc_pingpong server):
# killed before rmmod, and still alive during rmmod (disassociation), then
# load/unload cycles; ibv_devinfo and the verbs test work after reloading;
# the kernel log has no oops, WARN or BUG.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-driver-unload
vmtest_usernet 52:54:00:5e:03:01 -s tests/vm/guest/driver-unload.sh
vmtest_done "$VMTEST_RC"
