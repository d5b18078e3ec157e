#!/bin/bash
# Guest side of tests/vm/t-smoke-boot.sh: checks the guest environment.
set -euo pipefail
# shellcheck source=scripts/vm/gt.sh
. "$RSIM_LIB"

kernel=$(uname -r)
[[ $kernel == "$RSIM_ABI" ]] || gt_fail "kernel is $kernel, expected $RSIM_ABI"
gt_log "ok: kernel $kernel"

[[ $(findmnt -n -o FSTYPE /) == overlay ]] || gt_fail "/ is not the overlay: $(findmnt -n /)"
grep -qx host /sys/bus/virtio/drivers/9pnet_virtio/virtio*/mount_tag ||
    gt_fail "no 9p share named host"
[[ -f $RSIM_REPO/scripts/vm/harness.sh ]] || gt_fail "the host's files are not visible"
gt_log "ok: / is an overlay on the host root (9p)"

# Writes land in the tmpfs upper layer, not on the host (the host test checks).
echo "written in the guest" >"$RSIM_REPO/build/.smoke-overlay-$SMOKE_TOKEN"
gt_log "ok: root is writable (overlay)"

bash -c 'echo "bash $BASH_VERSION"' | gt_has '^bash 5'
[[ $(python3 -c 'print(6 * 7)') == 42 ]] || gt_fail "python3 does not work"
ip -br link show lo | gt_has UP || gt_fail "lo is not up"
gt_log "ok: host tools (bash, python3, ip) work"

[[ -d /lib/modules/$kernel/kernel ]] || gt_fail "no /lib/modules/$kernel"
modprobe rdma_rxe
modprobe ib_uverbs
[[ -d /sys/module/rdma_rxe && -d /sys/module/ib_uverbs ]] || gt_fail "rdma_rxe/ib_uverbs did not load"
rdma dev >/dev/null
gt_log "ok: guest kernel modules load (rdma_rxe, ib_uverbs)"

echo "$SMOKE_TOKEN" >"$RSIM_RESULTS/token"
[[ $(cat "$RSIM_RESULTS/token") == "$SMOKE_TOKEN" ]] || gt_fail "results share readback"
[[ $(hostname) == rsim-a ]] || gt_fail "hostname is $(hostname)"
gt_log "ok: results share, hostname $(hostname)"
echo "smoke-boot: all checks passed"
