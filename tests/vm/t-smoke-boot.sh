#!/bin/bash
# VM smoke test: one guest boots the guest kernel with the host root as its
# user space and checks it (tests/vm/guest/smoke-boot.sh); a file the guest
# writes there must not reach the host (the host root is read-only under
# the overlay), and one it writes to the results share must.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-smoke-boot --no-build
token=$$-$RANDOM
leak=build/.smoke-overlay-$token
vmtest_plain --nic none --env SMOKE_TOKEN="$token" -s tests/vm/guest/smoke-boot.sh
if ((VMTEST_RC == 0)); then
    if [[ -e $leak ]]; then
        echo "a file written in the guest appeared on the host ($leak): the host root is not read-only"
        VMTEST_RC=1
    elif [[ $(cat "${VMTEST_RESULTS[0]}/token" 2>/dev/null) != "$token" ]]; then
        echo "the results share did not bring the guest's file back (${VMTEST_RESULTS[0]}/token)"
        VMTEST_RC=1
    fi
fi
rm -f "$leak"
vmtest_done "$VMTEST_RC"
