#!/bin/bash
# VM test: iSCSI over RDMA (iSER) between two guests with rdma-sim
# (tests/vm/guest/iser.sh).  Guest A is a LIO target (configfs, ib_isert)
# with a 256 MiB ramdisk LUN on an iSER portal; guest B logs in with
# open-iscsi on the iser iface and runs fio with crc32c verification at
# 4 KiB and 1 MiB, queue depths 1 and 32, logs out and in and verifies
# again.  No oops, WARN, BUG or hung task.  ISER_SCALE (MiB per 4 KiB job,
# default 8) goes to the guests.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-iser

for tool in iscsid iscsiadm fio; do
    command -v "$tool" >/dev/null || vmtest_fail "$tool is not installed (make deps: open-iscsi, fio)"
done
vmtest_pair rsim rsim -t 600 -s tests/vm/guest/iser.sh -e "ISER_SCALE=${ISER_SCALE:-8}"
f=${VMTEST_RESULTS[1]:-}/fio-summary.txt
if [[ -f $f ]]; then sed "s/^/   /" "$f"; fi
vmtest_done "$VMTEST_RC"
