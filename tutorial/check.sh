#!/bin/bash
# The learner's test of an exercise of the bring-up tutorial:
#   make -C tutorial check EX=read      (or: tutorial/check.sh read)
# boots a VM whose rdma-sim no driver owns, loads tutorial/rsim_bringup.ko
# (built by make for the guest kernel) with exercise=EX and passes only if
# the bring-up works and the module prints "exercise EX: ok".
set -euo pipefail
ex=${1:-}
[[ -n $ex ]] || { echo "usage: tutorial/check.sh EXERCISE (read, write_imm)" >&2; exit 2; }
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../scripts/vm/vmtest.sh"
vmtest_init "tutorial-$ex" --no-build
ko=$PWD/tutorial/rsim_bringup.ko
[[ -f $ko ]] || vmtest_fail "$ko not built: make -C tutorial"
vmtest_usernet 52:54:00:5e:0e:02 -e BRINGUP_KO="$ko" -e BRINGUP_EX="$ex" -s tests/vm/guest/bringup.sh
grep -h "exercise $ex" "${VMTEST_RESULTS[0]}/output.log" 2>/dev/null || true
vmtest_done "$VMTEST_RC"
