#!/bin/bash
# VM test: NVMe over RDMA between rdma-sim and Linux's Soft-RoCE: the
# nvmet-rdma target on Soft-RoCE (virtio-net + rdma_rxe) and the nvme-rdma
# host on rdma-sim, then the reverse.  Each pass is t-nvme-rdma's plain
# pass (fio with crc32c verification, disconnect and reconnect, the port
# removed under queued I/O) with a quarter of its data: Soft-RoCE as the
# target takes 320 s for the full pass under TCG (it retries RDMA READs
# whose responses it dropped), rdma-sim as the target 95 s.
# INTEROP_NVME_PASSES="rxe-target rxe-host" selects passes; not
# NVME_PASSES, which says which of t-nvme-rdma's own passes run (make
# check's deb12 runs its plain one only, and this test's rxe-host).
set -euo pipefail
NVME_TEST_NAME=t-interop-nvme NVME_PASSES=${INTEROP_NVME_PASSES:-rxe-target rxe-host} NVME_SCALE=${NVME_SCALE:-2} \
    exec "$(dirname "$0")/t-nvme-rdma.sh"
