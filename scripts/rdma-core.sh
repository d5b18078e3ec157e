#!/usr/bin/env bash
# A newer Debian's RDMA user space next to the host's, without installing
# anything: rdma-core 56 of Debian 13 (trixie) or rdma-core 65 of Debian
# unstable, each with perftest 25.01.  The packages are fetched with
# scripts/debian-archive.sh and unpacked into build/rdma-core-VERSION/root,
# and build/rdma-core-VERSION/bin gets one wrapper per program (ibv_devinfo,
# ibv_rc_pingpong, rping, ib_write_bw, ...) that runs that suite's binary.
# tests/vm/t-rdma-core.sh uses it; so can you, in a guest:
# PATH=$PWD/build/rdma-core-65/bin:$PATH.
#
#   scripts/rdma-core.sh VERSION            fetch and unpack once, write the
#                                           wrappers (and bin/rdma-core-VERSION-run
#                                           PROGRAM ARGS, for a program of your own)
#   scripts/rdma-core.sh VERSION --refetch  read the archive's lists again and
#                                           fetch again (after the suite moved)
#
# VERSION: 56 (trixie: rdma-core 56.1, glibc 2.41) or 65 (unstable: rdma-core
# 65.0, glibc 2.43).  When the suite has moved to another major version of
# rdma-core, this fails and says so.
# Environment: DEBIAN_MIRROR, ARCHIVE_STATE, ARCHIVE_REFRESH
# (scripts/debian-archive.sh).
# Exit status: 0 done, 3 the archive could not be reached, 1 other errors.
#
# Why wrappers and not the binaries themselves: these libraries need glibc
# 2.38 or newer and Debian 12 has 2.36, so a wrapper runs the program through
# the suite's own dynamic loader with the suite's libraries only
# (--inhibit-cache, --library-path).  And libibverbs looks for its providers
# on the host: it reads the driver names in /etc/libibverbs.d (a compiled-in
# path) and opens lib<driver>-rdmav<provider ABI>.so in
# /usr/lib/x86_64-linux-gnu/libibverbs, where the host's rdma-core 44
# providers are.  56's provider ABI is 34, as 44's: libibverbs 56 would
# drive the device with 44's librxe-rdmav34.so.  65's is 65: libibverbs 65
# would find no provider for it.  It looks there only for a device that no
# provider already registered has taken, so the wrapper preloads the
# suite's librxe: it registers itself when it is loaded, matches rdma-sim's
# device (and Soft-RoCE's), and the host's /etc/libibverbs.d is never read.
# A machine with some other RDMA device (mlx5, ...) makes libibverbs read it
# and load the host's providers as well (56) or try to (65); the preloaded
# librxe, registered first, still wins for rxe devices.
# tests/vm/guest/rdma-core.sh checks both cases in a guest.
set -euo pipefail

die() { echo "rdma-core.sh: error: $*" >&2; exit 1; }
unreachable() { echo "rdma-core.sh: error: $*" >&2; exit 3; }
log() { echo "rdma-core.sh: $*"; }

usage="usage: scripts/rdma-core.sh VERSION [--refetch] (VERSION: 56 or 65)"
if [ $# -lt 1 ] || [ $# -gt 2 ] || [ "${2:---refetch}" != --refetch ]; then
    die "$usage"
fi
VERSION=$1
case $VERSION in
56) SUITE=trixie DISTRO="Debian 13 (trixie)" ;;
65) SUITE=unstable DISTRO="Debian unstable" ;;
*) die "no rdma-core '$VERSION' here: 56 (Debian 13) or 65 (Debian unstable); $usage" ;;
esac

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/debian-archive.sh
. "$REPO/scripts/debian-archive.sh"
OUT=$REPO/build/rdma-core-$VERSION
ROOT=$OUT/root
LIBDIR=$ROOT/usr/lib/x86_64-linux-gnu
LOADER=$ROOT/usr/lib64/ld-linux-x86-64.so.2

# What the programs need, down to libc (the closure of their Depends that
# holds shared objects; data-only and maintainer-script dependencies such as
# pci.ids, adduser or systemd-sysusers, gcc-N-base and
# libc-gconv-modules-extra are left out).  The names are the same in trixie
# and unstable (librdmacm1t64: the time_t transition of trixie).
# check_closure() below fails if a program would still load a library from
# the host.  libibverbs-dev: its headers, to build programs against this
# rdma-core (tests/vm/progs/flush-probe.c).
PACKAGES=(
    libibverbs1 ibverbs-providers ibverbs-utils librdmacm1t64 rdmacm-utils
    perftest libibumad3 libpci3 libudev1 libcap2 zlib1g
    libnl-3-200 libnl-route-3-200 libc6 libgcc-s1 libibverbs-dev
)

[ "$(uname -m)" = x86_64 ] || die "only x86_64 is supported (this is $(uname -m))"

# fetch: the packages of SUITE as .deb files in build/rdma-core-VERSION/debs.
# apt's lists in build/apt-archive are read once; a package they name that
# the archive no longer has (404: the suite moved on since) makes them be
# read again, once.
fetch() {
    local rc=0 dl=$OUT/debs/download.log
    rm -rf "$OUT/debs"
    (archive_download "$OUT/debs" "${PACKAGES[@]/%//$SUITE}") || rc=$?
    if ((rc != 0)) && [ "${ARCHIVE_REFRESH:-0}" != 1 ] && grep -q ' 404 ' "$dl" 2>/dev/null; then
        log "the archive no longer has a package its lists in $ARCHIVE_STATE name: reading them again"
        rc=0
        rm -rf "$OUT/debs"
        (ARCHIVE_REFRESH=1 archive_download "$OUT/debs" "${PACKAGES[@]/%//$SUITE}") || rc=$?
    fi
    if ((rc == 3)); then
        unreachable "cannot fetch rdma-core $VERSION: the Debian archive could not be reached (above)"
    elif ((rc != 0)) && grep -qE 'Could not (resolve|connect)|Temporary failure|Connection (failed|timed out)|Unable to connect' "$dl" 2>/dev/null; then
        unreachable "cannot fetch rdma-core $VERSION: the Debian archive ($DEBIAN_MIRROR) could not be reached: $(grep -E '^(E|W):' "$dl" | head -n 2 | tr '\n' ' ') (set DEBIAN_MIRROR to a mirror you can reach)"
    elif ((rc != 0)); then
        die "cannot fetch rdma-core $VERSION's packages from $SUITE (above; all of it in $dl)"
    fi
}

# check_closure PROGRAM: every shared object PROGRAM (and the preloaded
# librxe) loads comes from the suite's tree, none from the host.
check_closure() {
    local list outside
    list=$("$LOADER" --inhibit-cache --library-path "$LIBDIR" --list "$1" 2>&1) ||
        die "$SUITE's loader cannot load $1: $list"
    outside=$(grep '=>' <<<"$list" | grep -v "=> $ROOT/" || true)
    [ -z "$outside" ] ||
        die "$1 would load libraries from outside $ROOT (add their packages to PACKAGES in $0): $(tr -s '\t\n' '  ' <<<"$outside")"
}

# write_wrapper NAME [PROGRAM]: build/rdma-core-VERSION/bin/NAME runs the
# suite's PROGRAM (/usr/bin/NAME); without PROGRAM, the one its arguments name.
write_wrapper() {
    local w=$OUT/bin/$1 run
    if [ $# -gt 1 ]; then
        run="--argv0 '$1' '$2' \"\$@\""
    else
        run="\"\$@\""
    fi
    {
        echo '#!/bin/sh'
        if [ $# -gt 1 ]; then
            echo "# $DISTRO's $1 ($rc_version), written by scripts/rdma-core.sh $VERSION:"
        else
            echo "# rdma-core-$VERSION-run PROGRAM [ARGS]: runs PROGRAM (built against"
            echo "# rdma-core $VERSION's headers) the same way, written by scripts/rdma-core.sh:"
            echo "[ \$# -ge 1 ] || { echo \"usage: rdma-core-$VERSION-run PROGRAM [ARGS]\" >&2; exit 2; }"
        fi
        echo "# $SUITE's loader and libraries, its librxe preloaded so that libibverbs"
        echo "# $VERSION does not load the host's providers (see that script)."
        echo "exec '$LOADER' --inhibit-cache --library-path '$LIBDIR' \\"
        echo "    --preload '$RXE' $run"
    } >"$w.tmp"
    chmod +x "$w.tmp"
    mv "$w.tmp" "$w"
}

case $OUT in
*"'"*) die "the repository's path ($REPO) has a single quote: the wrappers cannot quote it" ;;
esac

want="$SUITE ${PACKAGES[*]} $DEBIAN_MIRROR"
if [ "${2:-}" = --refetch ]; then
    rm -f "$OUT/stamp"
    export ARCHIVE_REFRESH=1
fi
if [ ! -f "$OUT/stamp" ] || [ "$(cat "$OUT/stamp")" != "$want" ] || [ ! -x "$LOADER" ]; then
    rm -f "$OUT/stamp"
    log "fetching rdma-core $VERSION and its libraries from $SUITE ..."
    fetch
    archive_unpack_root "$OUT"
    echo "$want" >"$OUT/stamp"
fi

rc_version=$(awk '$1 == "libibverbs1" { print "rdma-core " $2 }' "$OUT/versions.txt")
case $rc_version in
"rdma-core $VERSION."*) ;;
*) die "$SUITE's libibverbs1 is '${rc_version#rdma-core }', not $VERSION.x: $DISTRO has moved on; run 'scripts/rdma-core.sh $VERSION --refetch' if its lists are old, else update this script, tests/vm/t-rdma-core.sh and the README for the new version" ;;
esac
# The provider ABI is in librxe's file name (librxe-rdmavN.so): 34 in 56 (as
# in 44), 65 in 65.  The wrappers preload the one there is.
rxes=("$LIBDIR"/libibverbs/librxe-rdmav*.so)
if [ ! -f "${rxes[0]}" ] || [ ${#rxes[@]} != 1 ]; then
    die "$SUITE's ibverbs-providers has not one librxe-rdmavN.so in $LIBDIR/libibverbs but: ${rxes[*]##*/}"
fi
RXE=${rxes[0]}

rm -rf "${OUT:?}/bin"
mkdir -p "$OUT/bin"
progs=()
for prog in "$ROOT"/usr/bin/*; do
    if [ ! -f "$prog" ] || [ ! -x "$prog" ]; then continue; fi
    # perftest's run_perftest_* are shell scripts that call the programs
    head -c 4 "$prog" | grep -q ELF || continue
    check_closure "$prog"
    write_wrapper "${prog##*/}" "$prog"
    progs+=("${prog##*/}")
done
((${#progs[@]} > 0)) || die "no programs in $ROOT/usr/bin"
check_closure "$RXE"
# A program of your own, built against this rdma-core's headers, runs the
# same way: rdma-core-VERSION-run PROGRAM [ARGS].
write_wrapper "rdma-core-$VERSION-run"
log "$rc_version, perftest $(awk '$1 == "perftest" { print $2 }' "$OUT/versions.txt"), glibc $(awk '$1 == "libc6" { print $2 }' "$OUT/versions.txt") ($SUITE): ${#progs[@]} programs in $OUT/bin"
