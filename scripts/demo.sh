#!/bin/bash
# make demo: two guests with rdma-sim joined by a host UDP link run
# ibv_rc_pingpong (data checked) and ib_write_bw, and the results are shown.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/vm/vmtest.sh
vmtest_init demo
echo "demo: booting two guests with -device rdma-sim on a host UDP link (about a minute under TCG) ..."
cmds="ibv_rc_pingpong -s 4096 -n 1000 -c
ib_write_bw -s 65536 -n 5000"
vmtest_pair rsim rsim -t 600 -s tests/vm/guest/pair-cmds.sh -e PAIR_CMDS="$cmds"
for i in 1 2; do
    f=${VMTEST_RESULTS[1]:-}/out-$i.txt
    [[ -f $f ]] || continue
    echo
    echo "==== guest B (client): $(sed -n "${i}p" <<<"$cmds") ===="
    grep -vE '^-+$|^\s*$' "$f"
done
echo
if ((VMTEST_RC == 0)); then
    echo "demo: done. Boot the pair yourself with: scripts/rdma-sim-vm --pair"
    rm -rf "$(dirname "$VMTEST_RUN")"
else
    echo "demo: FAILED (logs: $VMTEST_RUN)"
    exit 1
fi
