#!/bin/bash
# VM test: two simulated hosts (network namespaces), each with a Linux bridge
# and two guests on tap devices, the bridges joined by a VXLAN tunnel over a
# veth underlay (scripts/vm/harness.sh, VM_LINK=bridge). Guests A and C are on
# host 1, B and D on host 2: RC pingpong between all six pairs at once (four
# cross the tunnel), data checked, then ib_write_bw from B to A across it.
# The underlay's MTU is 1500, the segment's 1450: RoCE's path MTU is 1024.
# Needs root; without it the test is skipped (exit 77).
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
if [[ $(id -u) != 0 ]]; then
    echo "SKIP: t-cluster-vxlan needs root (network namespaces, bridges, tap devices)"
    exit 77
fi
vmtest_init t-cluster-vxlan
vmtest_run -n 4 --nic "$(vmtest_nic rsim)" --link bridge --hosts 2 -t 600 \
    -s tests/vm/guest/cluster.sh -e CLUSTER_BW="ib_write_bw -s 65536 -n 500"
vmtest_counters cluster
if ((VMTEST_RC == 0)); then
    # What crossed the tunnel, from host 1's VXLAN device: more than the
    # pingpongs' and the bandwidth test's payload alone.
    tx='' rx=''
    read -r tx rx < <(python3 - "$VMTEST_RUN"/fabric-*-h1.json <<'PY'
import json, sys
for link in json.load(open(sys.argv[1])):
    if link["ifname"] == "vxlan0":
        s = link["stats64"]
        print(s["tx"]["bytes"], s["rx"]["bytes"])
PY
) || true
    echo "   host 1's vxlan0: sent ${tx:-?} bytes, received ${rx:-?} bytes"
    grep -h "^ 65536" "${VMTEST_RESULTS[1]}/bw.txt" || true
    if ((${tx:-0} < 20000000 || ${rx:-0} < 20000000)); then
        echo "FAIL: less than 20 MB crossed the tunnel each way: the guests' traffic did not go through VXLAN"
        VMTEST_RC=1
    fi
fi
vmtest_done "$VMTEST_RC"
