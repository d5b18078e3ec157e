#!/bin/bash
# Guest side of tests/vm/t-driver-fatal.sh: the device fails (FATAL) under
# the driver while a process holds RDMA objects.  The guest kernel is booted
# with iomem=relaxed so that this script can reach BAR0 through sysfs: it
# resets the device behind the driver's back and enables it with no admin
# queues, which the device answers with DEV_STATUS.FATAL.
#   - the driver notices, reports it, resets the device;
#   - verbs fail with EIO instead of hanging, the port is DOWN, carrier off;
#   - the holder is unaffected until killed, rmmod works, a reload recovers.
set -euo pipefail
# shellcheck source=scripts/vm/gt.sh
. "$RSIM_LIB"

gt_load 10.0.0.1/24
gt_hold

python3 - "$GT_BDF" <<'PY' || gt_fail "cannot write BAR0 from user space (iomem=relaxed missing?)"
import mmap, os, struct, sys
fd = os.open(f"/sys/bus/pci/devices/{sys.argv[1]}/resource0", os.O_RDWR | os.O_SYNC)
m = mmap.mmap(fd, 4096)
rd = lambda off: struct.unpack_from("<I", m, off)[0]
def wr(off, v):
    m[off:off + 4] = struct.pack("<I", v)
print("before: DEV_STATUS 0x%08x" % rd(0x14))
wr(0x10, 2)     # DEV_CTRL.RESET
wr(0x10, 1)     # DEV_CTRL.ENABLE without admin queues: FATAL
print("after: DEV_STATUS 0x%08x" % rd(0x14))
PY

# The first command notices (within a 100 ms health check, far below 60 s).
out=$(timeout 60 ibv_devinfo -d rsim0 2>&1) || true
gt_log "ibv_devinfo on the failed device: $(grep -E 'state:' <<<"$out" | xargs)"
grep -q 'PORT_DOWN' <<<"$out" || gt_fail "port not DOWN on a failed device: $out"
dmesg | gt_has 'rdma_sim .*device failed' || gt_fail "the driver did not report the failure"
gt_log "ok: $(dmesg | grep 'rdma_sim .*device failed' | tail -n 1)"
carrier=$(cat "/sys/class/net/$GT_NETDEV/carrier" 2>/dev/null || echo 0)
[[ $carrier == 0 ]] || gt_fail "carrier still on after the device failed"
gt_log "ok: $GT_NETDEV carrier off"

rc=0
timeout 60 "$GT_VERBS_TEST" -d rsim0 check >/tmp/verbs.out 2>&1 || rc=$?
((rc != 124)) || gt_fail "verbs on the failed device hung"
grep -qE 'Input/output error' /tmp/verbs.out || gt_fail "verbs on the failed device did not fail with EIO: $(tail -n 3 /tmp/verbs.out)"
gt_log "ok: verbs fail with EIO: $(grep -m1 -E 'Input/output error' /tmp/verbs.out)"
ping -c 1 -W 1 10.0.0.3 >/dev/null 2>&1 || true    # transmit on a dead device

kill -0 "$GT_HOLDER" || gt_fail "the holder died with the device"
kill -9 "$GT_HOLDER"
wait "$GT_HOLDER" || true
gt_unload 60
gt_load 10.0.0.1/24
"$GT_VERBS_TEST" -d rsim0 check >/tmp/verbs.out 2>&1 ||
    { cat /tmp/verbs.out; gt_fail "verbs-test fails after reloading the driver"; }
gt_log "ok: reload recovers: $(tail -n 1 /tmp/verbs.out)"
gt_unload 60
gt_check_dmesg
echo "driver-fatal: all checks passed"
