#!/bin/bash
# VM smoke test: two guests joined by a host UDP link (virtio-net) ping each
# other, 10 pings each way, no loss (tests/vm/guest/smoke-ping.sh).
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-smoke-ping --no-build
vmtest_plain -n 2 --nic virtio-net-pci --netif driver:virtio_net -s tests/vm/guest/smoke-ping.sh
vmtest_done "$VMTEST_RC"
