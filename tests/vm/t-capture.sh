#!/bin/bash
# VM test: a packet capture of every RoCE opcode the device sends, read by
# Wireshark's dissector.  Two guests run a short RC, UC and UD mix (SEND of
# one and of several packets, RDMA WRITE, RDMA READ, both atomics, their
# ACKs); QEMU's filter-dump writes guest A's link to a pcap file (how the
# README shows to capture).  tshark (Debian's) then checks that every UDP
# 4791 frame dissects as InfiniBand (RoCEv2) with no malformed frame or
# expert error, and that the BTH opcodes seen are exactly the expected set.
# The capture is kept as roce.pcap in the test's log directory.
set -euo pipefail
# shellcheck source=scripts/vm/vmtest.sh
. "$(dirname "$0")/../../scripts/vm/vmtest.sh"
vmtest_init t-capture

command -v tshark >/dev/null || vmtest_fail "tshark is not installed (make deps: tshark)"
pcap_dir=${RDMA_SIM_LOGDIR:-$VMTEST_RUNS}
mkdir -p "$pcap_dir"
pcap=$pcap_dir/roce.pcap
rm -f "$pcap"
vmtest_pair rsim rsim -t 600 -s tests/vm/guest/pair-cmds.sh \
    --qemu-arg-a -object --qemu-arg-a "filter-dump,id=cap0,netdev=net0,file=$pcap" \
    -e PAIR_CMDS="ibv_rc_pingpong -s 4096 -n 3 -c
ibv_rc_pingpong -s 100 -n 3 -c
ib_write_bw -s 4096 -n 5
ib_write_bw -s 64 -n 5
ib_read_bw -s 4096 -n 5
ib_read_bw -s 64 -n 5
ib_atomic_bw -A CMP_AND_SWAP -n 5
ib_atomic_bw -A FETCH_AND_ADD -n 5
ibv_uc_pingpong -s 4096 -n 3 -c
ibv_uc_pingpong -s 100 -n 3 -c
ib_write_bw -c UC -s 4096 -n 5
ib_write_bw -c UC -s 64 -n 5
ibv_ud_pingpong -s 512 -n 3 -c"
((VMTEST_RC == 0)) || vmtest_done "$VMTEST_RC"
[[ -s $pcap ]] || vmtest_fail "filter-dump wrote no capture to $pcap"

# frames FILTER: the number of frames of the capture that match FILTER
# (a filter tshark refuses fails the test rather than count 0)
frames() {
    local out
    out=$(tshark -n -r "$pcap" -Y "$1" 2>"$pcap_dir/tshark.err") ||
        vmtest_fail "tshark -Y '$1' failed: $(grep -v 'Running as user' "$pcap_dir/tshark.err")"
    grep -c . <<<"$out" || true
}
udp=$(frames 'udp.port == 4791')
ib=$(frames 'infiniband')
bad=$(frames '_ws.malformed || _ws.expert.severity >= "error"')
echo "capture: $(frames 'frame') frames, $udp to or from UDP port 4791, $ib dissected as InfiniBand, $bad malformed or with errors"
((udp > 100)) || vmtest_fail "only $udp RoCE frames captured"
((ib == udp)) || vmtest_fail "$((udp - ib)) of $udp RoCE frames did not dissect as InfiniBand"
((bad == 0)) || vmtest_fail "$bad frames malformed or with expert errors: $(tshark -n -r "$pcap" -Y '_ws.malformed || _ws.expert.severity >= "error"' 2>/dev/null | head -n 3 | tr '\n' ';')"

# RC SEND first/middle/last/only, WRITE first/middle/last/only, READ
# request and responses first/middle/last/only, ACK, atomic ACK, CMP_SWAP,
# FETCH_ADD; UC SEND and WRITE first/middle/last/only; UD SEND only.
want="0x00 0x01 0x02 0x04 0x06 0x07 0x08 0x0a 0x0c 0x0d 0x0e 0x0f 0x10 0x11 0x12 0x13 0x14 0x20 0x21 0x22 0x24 0x26 0x27 0x28 0x2a 0x64"
seen=$(tshark -n -r "$pcap" -Y infiniband -T fields -e infiniband.bth.opcode 2>/dev/null |
    sort -nu | while read -r op; do printf '0x%02x ' "$op"; done)
seen=${seen% }
echo "BTH opcodes seen: $seen"
[[ $seen == "$want" ]] || vmtest_fail "opcodes seen ($seen) are not the expected ones ($want)"
vmtest_done 0
