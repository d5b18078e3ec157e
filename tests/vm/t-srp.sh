#!/bin/bash
# VM test: SCSI RDMA Protocol (SRP) between two guests with rdma-sim
# (tests/vm/guest/srp.sh), as blktests' srp group runs it over Soft-RoCE.
# Guest A is a LIO SRP target (ib_srpt, set up through configfs) with a
# 256 MiB ramdisk LUN and an RDMA/CM listener; guest B logs in with ib_srp
# through the RDMA/CM (add_target with dest=A:port) and runs fio with
# crc32c verification at 4 KiB and 1 MiB, queue depths 1 and 32, logs out
# (removes the SRP remote port and its SCSI host) and in and verifies
# again.  No oops, WARN, BUG or hung task.  SRP_SCALE (MiB per 4 KiB job,
# default 8) goes to the guests.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-srp

command -v fio >/dev/null || vmtest_fail "fio is not installed (make deps: fio)"
vmtest_pair rsim rsim -t 600 -s tests/vm/guest/srp.sh -e "SRP_SCALE=${SRP_SCALE:-8}"
f=${VMTEST_RESULTS[1]:-}/fio-summary.txt
if [[ -f $f ]]; then sed "s/^/   /" "$f"; fi
f=${VMTEST_RESULTS[0]:-}/session-acl.txt
if [[ -f $f ]]; then echo "   the target named the initiator's session $(<"$f") (ACL)"; fi
vmtest_counters plain
vmtest_done "$VMTEST_RC"
