#!/bin/bash
# Runs inside the guest of t-smoke-boot.sh: checks the guest environment.
set -euo pipefail
# shellcheck source=tests/vm/guest-lib.sh
. "$RSIM_LIB"

check() { # check DESCRIPTION CMD...
    if "$@"; then rsim_log "ok: $1" ; else rsim_fail "$1"; fi
}
kernel=$(uname -r)
[[ $kernel == "$RSIM_ABI" ]] || rsim_fail "kernel is $kernel, expected $RSIM_ABI"
rsim_log "ok: kernel $kernel"

[[ $(findmnt -n -o FSTYPE /) == overlay ]] || rsim_fail "/ is not the overlay: $(findmnt -n /)"
grep -qx host /sys/bus/virtio/drivers/9pnet_virtio/virtio*/mount_tag ||
    rsim_fail "no 9p share named host"
[[ -f $RSIM_REPO/tests/vm/lib.sh ]] || rsim_fail "the host's files are not visible"
rsim_log "ok: / is an overlay on the host root (9p)"

# Writes land in the tmpfs upper layer, not on the host (the host test checks).
echo "written in the guest" >"$RSIM_REPO/build/.smoke-overlay-$SMOKE_TOKEN"
rsim_log "ok: root is writable (overlay)"

bash -c 'echo "bash $BASH_VERSION"' | grep -q '^bash 5'
[[ $(python3 -c 'print(6 * 7)') == 42 ]] || rsim_fail "python3 does not work"
ip -br link show lo | grep -q UP || rsim_fail "lo is not up"
rsim_log "ok: host tools (bash, python3, ip) work"

[[ -d /lib/modules/$kernel/kernel ]] || rsim_fail "no /lib/modules/$kernel"
modprobe rdma_rxe
modprobe ib_uverbs
[[ -d /sys/module/rdma_rxe && -d /sys/module/ib_uverbs ]] || rsim_fail "rdma_rxe/ib_uverbs did not load"
rdma dev >/dev/null
rsim_log "ok: guest kernel modules load (rdma_rxe, ib_uverbs)"

echo "$SMOKE_TOKEN" >"$RSIM_RESULTS/token"
[[ $(cat "$RSIM_RESULTS/token") == "$SMOKE_TOKEN" ]] || rsim_fail "results share readback"
[[ $(hostname) == rsim-a ]] || rsim_fail "hostname is $(hostname)"
rsim_log "ok: results share, hostname $(hostname)"
echo "smoke-boot: all checks passed"
