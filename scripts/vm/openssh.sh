#!/bin/bash
# scripts/vm/openssh.sh - sshd for the guests, never run on the host: Debian's
# openssh-server package is downloaded and unpacked into build/openssh/root
# (not installed: installing it would start sshd on this machine). It runs
# with the host's libraries (those of openssh-client, which make deps
# installs); a library it lacks is an error here.
# Prints the sshd binary's path. Used by tests/vm/t-cluster-mpi.sh, whose
# guests run it on their test interface for Open MPI's launcher.
#
#   scripts/vm/openssh.sh            fetch and unpack once
# Exit status: 0 done, 3 the archive could not be reached, 1 other errors.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=$REPO/build/openssh
SSHD=$OUT/root/usr/sbin/sshd

if [[ ! -x $SSHD ]]; then
    rm -rf "$OUT"
    mkdir -p "$OUT/deb"
    (cd "$OUT/deb" && apt-get download -q -o APT::Sandbox::User=root openssh-server) \
        >"$OUT/download.log" 2>&1 || {
        cat "$OUT/download.log" >&2
        echo "openssh.sh: error: apt-get download openssh-server failed: run 'apt-get update'" >&2
        exit 3
    }
    dpkg-deb -x "$OUT"/deb/openssh-server_*.deb "$OUT/root"
    missing=$(ldd "$SSHD" | grep 'not found' || true)
    if [[ -n $missing ]]; then
        echo "$missing" >&2
        echo "openssh.sh: error: $SSHD needs libraries this host lacks (above): make deps" >&2
        exit 1
    fi
fi
echo "$SSHD"
