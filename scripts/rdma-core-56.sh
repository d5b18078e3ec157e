#!/usr/bin/env bash
# Debian 13's RDMA user space (rdma-core 56, perftest 25.01) next to the
# host's, without installing anything: its packages are fetched from the
# trixie archive with an apt state of our own and unpacked into
# build/rdma-core-56/root, and build/rdma-core-56/bin gets one wrapper per
# program (ibv_devinfo, ibv_rc_pingpong, rping, ib_write_bw, ...) that runs
# the trixie binary.  tests/vm/t-rdma-core-56.sh uses it; so can you, in a
# guest: PATH=$PWD/build/rdma-core-56/bin:$PATH.
#
#   scripts/rdma-core-56.sh            fetch and unpack once, write the wrappers
#                                      (and bin/rdma-core-56-run PROGRAM ARGS,
#                                      for a program of your own)
#   scripts/rdma-core-56.sh --refetch  fetch again (e.g. after a trixie update)
#
# Environment: TRIXIE_MIRROR (default http://deb.debian.org/debian).
# Exit status: 0 done, 3 the archive could not be reached, 1 other errors.
#
# Why wrappers and not the binaries themselves: trixie's libraries need
# glibc 2.38 or newer and Debian 12 has 2.36, so a wrapper runs the program
# through trixie's own dynamic loader with trixie's libraries only
# (--inhibit-cache, --library-path).  And libibverbs 56 would load its
# providers from the host: it reads the driver names in /etc/libibverbs.d
# (a compiled-in path) and opens them in /usr/lib/x86_64-linux-gnu/libibverbs,
# where the host's rdma-core 44 providers are, with the same file names
# (librxe-rdmav34.so: the provider ABI is 34 in both).  It does that only
# when a device is left without a provider after trying the providers
# already registered, so the wrapper preloads trixie's librxe: it registers
# itself when it is loaded, matches rdma-sim's device (and Soft-RoCE's), and
# the host's /etc/libibverbs.d is never read.  A machine with some other
# RDMA device (mlx5, ...) makes libibverbs read it and load the host's
# providers as well; trixie's librxe, registered first, still wins for rxe
# devices.
set -euo pipefail

die() { echo "rdma-core-56.sh: error: $*" >&2; exit 1; }
unreachable() { echo "rdma-core-56.sh: error: $*" >&2; exit 3; }
log() { echo "rdma-core-56.sh: $*"; }

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$REPO/build/rdma-core-56
ROOT=$OUT/root
MIRROR=${TRIXIE_MIRROR:-http://deb.debian.org/debian}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
LIBDIR=$ROOT/usr/lib/x86_64-linux-gnu
LOADER=$ROOT/usr/lib64/ld-linux-x86-64.so.2
RXE=$LIBDIR/libibverbs/librxe-rdmav34.so

# What the programs need, down to libc (the closure of their Depends that
# holds shared objects; data-only and maintainer-script dependencies such as
# pci.ids, adduser and gcc-14-base are left out).  check_closure() below
# fails if a program would still load a library from the host.
# libibverbs-dev: its headers, to build programs against rdma-core 56
# (tests/vm/progs/flush-probe.c).
PACKAGES=(
    libibverbs1 ibverbs-providers ibverbs-utils librdmacm1t64 rdmacm-utils
    perftest libibumad3 libpci3 libudev1 libcap2 zlib1g
    libnl-3-200 libnl-route-3-200 libc6 libgcc-s1 libibverbs-dev
)

if [ $# -gt 1 ] || [ "${1:---refetch}" != --refetch ]; then
    die "usage: scripts/rdma-core-56.sh [--refetch]"
fi

command -v apt-get >/dev/null || die "apt-get not found: this needs Debian's apt"
[ -f "$KEYRING" ] || die "$KEYRING not found: apt-get install debian-archive-keyring"
[ "$(uname -m)" = x86_64 ] || die "only x86_64 is supported (this is $(uname -m))"

# fetch: apt-get update and download with a state of our own under
# build/rdma-core-56/apt; the host's sources, pins and package status are
# neither read nor changed (its apt.conf.d is read: proxies apply).
fetch() {
    local d=$OUT/apt p
    local -a opts
    rm -rf "$d" "$OUT/debs"
    mkdir -p "$d/lists/partial" "$d/cache/archives/partial" "$d/etc" "$OUT/debs"
    : >"$d/status"
    echo "deb [signed-by=$KEYRING] $MIRROR trixie main" >"$d/etc/sources.list"
    opts=(-o "Dir::Etc::SourceList=$d/etc/sources.list"
          -o Dir::Etc::SourceParts=/nonexistent
          -o Dir::Etc::Preferences=/nonexistent
          -o Dir::Etc::PreferencesParts=/nonexistent
          -o "Dir::State=$d" -o "Dir::State::Lists=$d/lists"
          -o "Dir::State::status=$d/status" -o "Dir::Cache=$d/cache"
          -o Acquire::Languages=none -o APT::Sandbox::User=root)
    # as a user, apt cannot drop to _apt anyway; as root, _apt could not
    # write into a build tree it does not own
    log "fetching the trixie package lists from $MIRROR (about 10 MB) ..."
    apt-get "${opts[@]}" -q --error-on=any update >"$OUT/apt-update.log" 2>&1 ||
        unreachable "apt-get update of trixie from $MIRROR failed (is the archive reachable? set TRIXIE_MIRROR to a Debian mirror you can reach); its output: $OUT/apt-update.log: $(grep -E '^(E|W):' "$OUT/apt-update.log" | head -n 3 | tr '\n' ' ')"
    log "downloading ${#PACKAGES[@]} packages ..."
    (cd "$OUT/debs" && apt-get "${opts[@]}" -q download "${PACKAGES[@]/%//trixie}") \
        >"$OUT/apt-download.log" 2>&1 ||
        die "apt-get download from trixie failed: $(grep -E '^(E|W):' "$OUT/apt-download.log" | head -n 3 | tr '\n' ' ') (all of it in $OUT/apt-download.log)"
    for p in "${PACKAGES[@]}"; do
        compgen -G "$OUT/debs/${p}_*.deb" >/dev/null ||
            die "apt-get download left no ${p}_*.deb in $OUT/debs ($OUT/apt-download.log)"
    done
}

unpack() {
    local f
    rm -rf "$ROOT" "$OUT/root.tmp"
    mkdir -p "$OUT/root.tmp"
    for f in "$OUT"/debs/*.deb; do
        dpkg-deb -x "$f" "$OUT/root.tmp" || die "dpkg-deb -x $f failed"
    done
    mv "$OUT/root.tmp" "$ROOT"
    for f in "$OUT"/debs/*.deb; do
        # shellcheck disable=SC2016  # dpkg-deb's fields, not the shell's
        dpkg-deb --showformat='${Package} ${Version}\n' -W "$f"
    done >"$OUT/versions.txt"
}

# check_closure PROGRAM: every shared object PROGRAM (and the preloaded
# librxe) loads comes from the trixie tree, none from the host.
check_closure() {
    local list outside
    list=$("$LOADER" --inhibit-cache --library-path "$LIBDIR" --list "$1" 2>&1) ||
        die "trixie's loader cannot load $1: $list"
    outside=$(grep '=>' <<<"$list" | grep -v "=> $ROOT/" || true)
    [ -z "$outside" ] ||
        die "$1 would load libraries from outside $ROOT (add their packages to PACKAGES in $0): $(tr -s '\t\n' '  ' <<<"$outside")"
}

# write_wrapper NAME: build/rdma-core-56/bin/NAME runs trixie's NAME.
write_wrapper() {
    local w=$OUT/bin/$1
    cat >"$w.tmp" <<EOF
#!/bin/sh
# Debian 13's $1 ($rc_version), written by scripts/rdma-core-56.sh:
# trixie's loader and libraries; trixie's librxe preloaded, so that
# libibverbs 56 does not load the host's providers (see that script).
exec '$LOADER' --inhibit-cache --library-path '$LIBDIR' \\
    --preload '$RXE' --argv0 '$1' '$ROOT/usr/bin/$1' "\$@"
EOF
    chmod +x "$w.tmp"
    mv "$w.tmp" "$w"
}

case $OUT in
*"'"*) die "the repository's path ($REPO) has a single quote: the wrappers cannot quote it" ;;
esac

want="${PACKAGES[*]} $MIRROR"
if [ "${1:-}" = --refetch ]; then rm -f "$OUT/stamp"; fi
if [ ! -f "$OUT/stamp" ] || [ "$(cat "$OUT/stamp")" != "$want" ] || [ ! -x "$LOADER" ]; then
    rm -f "$OUT/stamp"
    fetch
    unpack
    echo "$want" >"$OUT/stamp"
fi

rc_version=$(awk '$1 == "libibverbs1" { print "rdma-core " $2 }' "$OUT/versions.txt")
case $rc_version in
"rdma-core 56."*) ;;
*) die "trixie's libibverbs1 is '${rc_version#rdma-core }', not 56.x: Debian 13 has moved on; update this script and the README" ;;
esac
[ -f "$RXE" ] || die "$RXE missing: ibverbs-providers of trixie has no librxe-rdmav34.so (provider ABI changed?)"

rm -rf "${OUT:?}/bin"
mkdir -p "$OUT/bin"
progs=()
for prog in "$ROOT"/usr/bin/*; do
    if [ ! -f "$prog" ] || [ ! -x "$prog" ]; then continue; fi
    # perftest's run_perftest_* are shell scripts that call the programs
    head -c 4 "$prog" | grep -q ELF || continue
    check_closure "$prog"
    write_wrapper "${prog##*/}"
    progs+=("${prog##*/}")
done
check_closure "$RXE"
# A program of your own, built against rdma-core 56's headers, runs the same
# way: rdma-core-56-run PROGRAM [ARGS].
cat >"$OUT/bin/rdma-core-56-run" <<EOF
#!/bin/sh
# rdma-core-56-run PROGRAM [ARGS]: runs PROGRAM with Debian 13's loader and
# libraries ($rc_version), trixie's librxe preloaded; written by
# scripts/rdma-core-56.sh.
[ \$# -ge 1 ] || { echo "usage: rdma-core-56-run PROGRAM [ARGS]" >&2; exit 2; }
exec '$LOADER' --inhibit-cache --library-path '$LIBDIR' \\
    --preload '$RXE' "\$@"
EOF
chmod +x "$OUT/bin/rdma-core-56-run"
((${#progs[@]} > 0)) || die "no programs in $ROOT/usr/bin"
log "$rc_version, perftest $(awk '$1 == "perftest" { print $2 }' "$OUT/versions.txt"): ${#progs[@]} programs in $OUT/bin"
