#!/usr/bin/env bash
# make server: rdma-sim-server, the device served over vfio-user (server/)
# with the device core (hw/rdma-sim, built plain: glib and zlib, no QEMU),
# into build/server/rdma-sim-server.  A few seconds.
#
#   scripts/build-server.sh              build it
#   scripts/build-server.sh --list-core  print the core's files (the unit
#                                        tests link the same)
# Environment: CC (default cc), SERVER_CFLAGS (added to the flags).
set -euo pipefail

# The device core: every file of hw/rdma-sim but the QEMU glue (rdma-sim.c,
# platform.c, net.c, introspect-qom.c, migration.c; docs/architecture.md)
CORE="props.c log.c regs.c admin.c completer.c fault.c flow.c mr.c port.c qp.c
queue.c requester.c responder.c teardown.c transport.c ud.c wqe.c xmit.c roce.c
introspect.c"
SERVER="main.c host.c vfu-server.c vfu-msg.c json.c pci.c control.c"

if [ "${1:-}" = --list-core ]; then
    # shellcheck disable=SC2086  # one file a word
    echo $CORE
    exit 0
fi
[ $# -eq 0 ] || { echo "usage: scripts/build-server.sh [--list-core]" >&2; exit 2; }
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$REPO/build/server
INC=$OUT/include
mkdir -p "$INC/trace" "$INC/hw/rdma-sim"
# what the QEMU tree gives the device's files: its shared header as
# hw/rdma-sim/, its trace events as trace/trace-hw_rdma_sim.h (here ones
# that print what --trace turns on)
ln -sf "$REPO/include/rdma-sim/rdma_sim_hw.h" "$INC/hw/rdma-sim/rdma_sim_hw.h"
python3 "$REPO/scripts/trace-plain.py" log "$REPO/hw/rdma-sim/trace-events" \
    "$INC/trace/trace-hw_rdma_sim.h"
srcs=()
for f in $CORE; do srcs+=("$REPO/hw/rdma-sim/$f"); done # (one a word)
for f in $SERVER; do srcs+=("$REPO/server/$f"); done
flags=(-std=gnu11 -D_GNU_SOURCE -DRDMA_SIM_PLAIN -O2 -g -Wall -Wundef
       -Wmissing-prototypes -Wstrict-prototypes -Wshadow=local -Wvla
       -Wwrite-strings -Wtype-limits -Wold-style-definition -Werror
       -I"$INC" -I"$REPO/hw/rdma-sim" -I"$REPO/server")
[ "$(uname -m)" != x86_64 ] || flags+=(-DHOST_X86_64)
read -ra extra <<< "${SERVER_CFLAGS:-}"
read -ra cflags <<< "$(pkg-config --cflags glib-2.0 zlib)"
read -ra libs <<< "$(pkg-config --libs glib-2.0 zlib)"
"${CC:-cc}" "${flags[@]}" "${extra[@]}" "${cflags[@]}" "${srcs[@]}" \
    -o "$OUT/rdma-sim-server.tmp" "${libs[@]}"
mv "$OUT/rdma-sim-server.tmp" "$OUT/rdma-sim-server"
echo "built $OUT/rdma-sim-server"
