#!/bin/bash
# Guest side of tests/vm/t-smoke-ping.sh (runs in both guests): each pings
# the other over the UDP link.
set -euo pipefail
# shellcheck source=scripts/vm/gt.sh
. "$RSIM_LIB"

gt_log "$RSIM_NETIF is $RSIM_IP, peer $RSIM_PEER"
gt_wait_peer 60
gt_ping -c 10 -i 0.2 -W 2
gt_barrier finished 60 # neither guest powers off while the other still pings
echo "smoke-ping: 10 pings to $RSIM_PEER, 0% loss"
