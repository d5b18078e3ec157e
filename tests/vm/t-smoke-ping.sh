#!/bin/bash
# VM smoke test: two guests joined by a host UDP link (virtio-net) ping each
# other, 10 pings each way, no loss (tests/vm/guest/smoke-ping.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
if tests/vm/vm run --name t-smoke-ping --guests 2 --nic virtio-net-pci \
    --netif driver:virtio_net -s tests/vm/guest/smoke-ping.sh; then
    echo "PASS: t-smoke-ping"
else
    echo "FAIL: t-smoke-ping"
    exit 1
fi
