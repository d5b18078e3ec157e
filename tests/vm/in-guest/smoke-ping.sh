#!/bin/bash
# Runs in both guests of t-smoke-ping.sh: each pings the other over the UDP link.
set -euo pipefail
# shellcheck source=tests/vm/guest-lib.sh
. "$RSIM_LIB"

rsim_log "$RSIM_NETIF is $RSIM_IP, peer $RSIM_PEER"
rsim_wait_peer 60
ping -c 10 -i 0.2 -W 2 "$RSIM_PEER" | tee /tmp/ping.out
grep -q ' 0% packet loss' /tmp/ping.out || rsim_fail "packets lost pinging $RSIM_PEER"
rsim_barrier finished 60 # neither guest powers off while the other still pings
echo "smoke-ping: 10 pings to $RSIM_PEER, 0% loss"
