#!/usr/bin/env bash
# The QEMU a user of a current distribution has: Debian's own
# qemu-system-x86 of unstable (1:11.1.x), unmodified, next to the host's,
# without installing anything.  Its package and the libraries it needs
# (their closure down to glibc) are fetched with scripts/debian-archive.sh
# and unpacked into build/qemu-debian/root; build/qemu-debian/bin gets
# qemu-system-x86_64, a wrapper that runs Debian's binary.  The
# out-of-process device (rdma-sim-server, over vfio-user) is tested with
# it: QEMU 10.1 and later have the vfio-user client, -device vfio-user-pci.
#
#   scripts/qemu-debian.sh            fetch and unpack once, write the wrapper
#   scripts/qemu-debian.sh --refetch  read the archive's lists again and
#                                     fetch again (after the suite moved)
#
# Environment: DEBIAN_MIRROR, ARCHIVE_STATE, ARCHIVE_REFRESH
# (scripts/debian-archive.sh).
# Exit status: 0 done, 3 the archive could not be reached, 1 other errors.
#
# Why a wrapper: unstable's binaries need a newer glibc than Debian 12's
# 2.36, so the wrapper runs QEMU through unstable's own dynamic loader
# with unstable's libraries only (--inhibit-cache, --library-path).  Then
# QEMU finds itself at the loader's path, not at its own, so the wrapper
# also says where its firmware is (-L) and its modules are
# (QEMU_MODULE_DIR), so that it never reads the host's QEMU files.
set -euo pipefail

die() { echo "qemu-debian.sh: error: $*" >&2; exit 1; }
unreachable() { echo "qemu-debian.sh: error: $*" >&2; exit 3; }
log() { echo "qemu-debian.sh: $*"; }

case ${1:-} in
'' | --refetch) ;;
*) die "usage: scripts/qemu-debian.sh [--refetch]" ;;
esac
SUITE=unstable
# The series this script is written for: another makes it fail and say so
SERIES=11.1

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/debian-archive.sh
. "$REPO/scripts/debian-archive.sh"
OUT=$REPO/build/qemu-debian
ROOT=$OUT/root
LIBDIR=$ROOT/usr/lib/x86_64-linux-gnu
LOADER=$ROOT/usr/lib64/ld-linux-x86-64.so.2
QEMU_BIN=$ROOT/usr/bin/qemu-system-x86_64

[ "$(uname -m)" = x86_64 ] || die "only x86_64 is supported (this is $(uname -m))"
case $OUT in
*"'"*) die "the repository's path ($REPO) has a single quote: the wrapper cannot quote it" ;;
esac

# fetch: qemu-system-x86 of SUITE and everything it depends on, as .deb
# files in build/qemu-debian/debs.  The archive's apt state has no package
# installed, so apt's download of an install is the whole closure, glibc
# included: nothing is taken from the host.
fetch() {
    local rc=0 dl=$OUT/download.log
    rm -rf "$OUT/debs"
    mkdir -p "$OUT/debs/partial"
    archive_update || rc=$?
    ((rc == 0)) || exit $rc
    archive_apt -o Debug::NoLocking=1 -o "Dir::Cache::archives=$OUT/debs" -y \
        --download-only --no-install-recommends install "qemu-system-x86/$SUITE" >"$dl" 2>&1 || rc=$?
    if ((rc != 0)) && grep -qE 'Could not (resolve|connect)|Temporary failure|Connection (failed|timed out|refused)|Unable to connect|Network is unreachable' "$dl"; then
        unreachable "cannot fetch $SUITE's QEMU: the Debian archive ($DEBIAN_MIRROR) could not be reached: $(grep -E '^(E|W):' "$dl" | head -n 2 | tr '\n' ' ') (set DEBIAN_MIRROR to a mirror you can reach)"
    elif ((rc != 0)); then
        die "cannot fetch $SUITE's qemu-system-x86 and its libraries: $(grep -E '^(E|W):' "$dl" | head -n 3 | tr '\n' ' ') (all of it: $dl; 'scripts/qemu-debian.sh --refetch' reads the archive's lists again)"
    fi
    compgen -G "$OUT/debs/qemu-system-x86_*.deb" >/dev/null ||
        die "apt left no qemu-system-x86 package in $OUT/debs ($dl)"
}

want="$SUITE qemu-system-x86 $DEBIAN_MIRROR"
if [ "${1:-}" = --refetch ]; then
    rm -f "$OUT/stamp"
    export ARCHIVE_REFRESH=1
fi
if [ ! -f "$OUT/stamp" ] || [ "$(cat "$OUT/stamp")" != "$want" ] || [ ! -x "$LOADER" ]; then
    rm -f "$OUT/stamp"
    log "fetching $SUITE's qemu-system-x86 and its libraries ..."
    fetch
    archive_unpack_root "$OUT"
    echo "$want" >"$OUT/stamp"
fi

version=$(awk '$1 == "qemu-system-x86" { print $2 }' "$OUT/versions.txt")
case $version in
*:"$SERIES".*) ;;
*) die "$SUITE's qemu-system-x86 is '$version', not $SERIES.x: Debian has moved on; run 'scripts/qemu-debian.sh --refetch' if its lists are old, else update this script and the README for the new version" ;;
esac

# Every shared object QEMU loads comes from the suite's tree, none from the
# host.
list=$("$LOADER" --inhibit-cache --library-path "$LIBDIR" --list "$QEMU_BIN" 2>&1) ||
    die "$SUITE's loader cannot load $QEMU_BIN: $list"
outside=$(grep '=>' <<<"$list" | grep -v "=> $ROOT/" || true)
[ -z "$outside" ] ||
    die "$QEMU_BIN would load libraries from outside $ROOT: $(tr -s '\t\n' '  ' <<<"$outside")"

mkdir -p "$OUT/bin"
{
    echo '#!/bin/sh'
    echo "# Debian $SUITE's qemu-system-x86_64 ($version), unmodified, written by"
    echo "# scripts/qemu-debian.sh: its own loader, libraries, firmware and modules."
    echo "QEMU_MODULE_DIR='$LIBDIR/qemu'"
    echo 'export QEMU_MODULE_DIR'
    echo "exec '$LOADER' --inhibit-cache --library-path '$LIBDIR' \\"
    echo "    --argv0 qemu-system-x86_64 '$QEMU_BIN' -L '$ROOT/usr/share/qemu' \\"
    echo "    -L '$ROOT/usr/share/seabios' \"\$@\""
} >"$OUT/bin/qemu-system-x86_64.tmp"
chmod +x "$OUT/bin/qemu-system-x86_64.tmp"
mv "$OUT/bin/qemu-system-x86_64.tmp" "$OUT/bin/qemu-system-x86_64"

"$OUT/bin/qemu-system-x86_64" -device vfio-user-pci,help 2>&1 | grep -q 'socket=' ||
    die "Debian's QEMU $version has no vfio-user-pci device ($OUT/bin/qemu-system-x86_64 -device vfio-user-pci,help)"
log "Debian $SUITE's QEMU $version, with vfio-user-pci: $OUT/bin/qemu-system-x86_64"
