#!/bin/bash
# VM test: the rdma-sim device fails (DEV_STATUS.FATAL) under the driver
# while a process holds RDMA objects: the driver reports it, resets the
# device, verbs fail with EIO (no hang), the port goes DOWN, rmmod works
# and a reload recovers (tests/vm/guest/driver-fatal.sh); no oops/WARN/BUG.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-driver-fatal
VM_APPEND=iomem=relaxed vmtest_usernet 52:54:00:5e:04:01 -s tests/vm/guest/driver-fatal.sh
vmtest_done "$VMTEST_RC"
