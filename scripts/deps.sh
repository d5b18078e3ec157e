#!/usr/bin/env bash
# Install the Debian packages needed to build and test rdma-sim.
# Usage (as root): scripts/deps.sh [--if-missing] PACKAGE...   (normally via
# `make deps`; `make demo` and `make bench` pass --if-missing, which does
# nothing when every package is installed already)
#
# Idempotent:
#  * adds a deb-src sources file (needed by `apt-get source qemu`) only if
#    apt has no deb-src entry yet,
#  * runs apt-get update,
#  * installs the given packages plus the linux-headers of the newest ABI in
#    apt's lists of the oldest and the middle generation's kernel series
#    (configs/generations: 6.1 and 6.12; Debian 12 has 6.12 in
#    bookworm-security and bookworm-backports).
set -euo pipefail

die() { echo "deps.sh: error: $*" >&2; exit 1; }
log() { echo "deps.sh: $*"; }

if [ "${1:-}" = --if-missing ]; then
    shift
    missing=0
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || { missing=1; break; }
    done
    if [ $missing = 0 ] && ls /lib/modules/*/build >/dev/null 2>&1; then
        exit 0
    fi
fi
[ "$(id -u)" -eq 0 ] || die "must run as root (try: sudo make deps)"
command -v apt-get >/dev/null || die "apt-get not found: only Debian 12 (bookworm) is supported"

export DEBIAN_FRONTEND=noninteractive

# --- 1. deb-src entry ------------------------------------------------------
have_deb_src() {
    local f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] && grep -Eq '^[[:space:]]*deb-src[[:space:]]' "$f" && return 0
    done
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] && grep -Eiq '^Types:.*\bdeb-src\b' "$f" && return 0
    done
    return 1
}

if have_deb_src; then
    log "deb-src entry already present"
elif [ -f /etc/apt/sources.list.d/debian.sources ]; then
    dst=/etc/apt/sources.list.d/rdma-sim-deb-src.sources
    log "adding $dst"
    sed -E 's/^Types:.*/Types: deb-src/I' /etc/apt/sources.list.d/debian.sources > "$dst.tmp"
    mv "$dst.tmp" "$dst"
elif [ -f /etc/apt/sources.list ] && grep -Eq '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list; then
    dst=/etc/apt/sources.list.d/rdma-sim-deb-src.list
    log "adding $dst"
    sed -nE 's/^[[:space:]]*deb[[:space:]]/deb-src /p' /etc/apt/sources.list > "$dst.tmp"
    mv "$dst.tmp" "$dst"
else
    die "found no Debian apt source to derive a deb-src entry from; add one by hand"
fi

# --- 2. update ---------------------------------------------------------------
log "apt-get update"
apt-get update -q

# --- 3. kernel headers of the guest kernels apt can install ----------------
# The VM tests' own rule (scripts/vm/vm abi: the newest ABI of a series), so
# that the headers are those of the kernels the guests boot: the oldest and
# the middle generation's (configs/generations; Debian 12 has 6.12 in
# bookworm-security and -backports).  The newest's, Linux 7.x, need a newer
# Debian: scripts/guest-kernel.sh prepares a tree for it when it is used.
# shellcheck source=configs/generations
. "$(dirname "$0")/../configs/generations"
abis=()
for series in "$GEN_OLDEST_KERNEL" "$GEN_MIDDLE_KERNEL"; do
    abi=$(GUEST_ABI=$series "$(dirname "$0")/vm/vm" abi) ||
        die "apt's lists have no Linux $series ABI with headers and image: add bookworm-backports (or bookworm-security) to apt's sources and run make deps again"
    log "Linux $series ABI: $abi"
    abis+=("linux-headers-$abi")
done

# --- 4. install ----------------------------------------------------------------
pkgs=("$@" "${abis[@]}")
# The storage servers the VM tests run in guests (from this root) would
# also start on this machine when installed: note which are new, so that
# their services can be stopped again (one the user had stays as it was).
servers=('nfs-kernel-server=nfs-server.service'
         'rpcbind=rpcbind.socket rpcbind.service'
         'open-iscsi=iscsid.socket iscsid.service open-iscsi.service'
         'ksmbd-tools=ksmbd.service')
new_units=()
for s in "${servers[@]}"; do
    if ! dpkg-query -W -f='${Status}' "${s%%=*}" 2>/dev/null | grep -q 'ok installed'; then
        read -r -a units <<<"${s#*=}"
        new_units+=("${units[@]}")
    fi
done
log "installing: ${pkgs[*]}"
apt-get install -y -q --no-install-recommends "${pkgs[@]}"
if [ ${#new_units[@]} -gt 0 ] && [ -d /run/systemd/system ]; then
    log "stopping and disabling the services just installed (the VM tests start their own in guests): ${new_units[*]}"
    for u in "${new_units[@]}"; do
        systemctl disable --now "$u" 2>/dev/null || true # not every one exists
    done
fi
log "done"
