# shellcheck shell=bash
# scripts/debian-archive.sh - packages of Debian suites other than the host's
# (bookworm-backports, trixie, trixie-backports, unstable), fetched without
# touching the host's apt configuration or installing anything.
#
# Sourced by the scripts that need a newer generation than Debian 12 has:
# QEMU's source (scripts/qemu-tree.sh), the guest kernels of Linux 7.x and
# the compiler they were built with (scripts/guest-kernel.sh),
# rdma-core of Debian 13 and unstable (scripts/rdma-core.sh).
#
# One apt state serves them all: build/apt-archive (ARCHIVE_STATE), with
# the suites below, read once (apt-get update, about 30 s) and again when
# its list of suites changes or ARCHIVE_REFRESH=1.  apt-get runs with that
# state instead of the host's sources, pins and package status; the host's
# apt.conf.d is read (proxies apply).  Concurrent users take a lock on it.
#
#   archive_update                       read the suites' lists (once)
#   archive_apt ARGS...                  apt-get with the state
#   archive_cache ARGS...                apt-cache with the state
#   archive_download DIR PKG[/SUITE|=VERSION]...
#                                        .deb files into DIR
#   archive_unpack ROOT DEB...           dpkg-deb -x each into ROOT
#   archive_unpack_root OUT              OUT/debs/*.deb into OUT/root anew,
#                                        their versions in OUT/versions.txt
#   archive_relocate ROOT FILE...        make ELF programs from ROOT run on
#                                        this host: ROOT's own loader and
#                                        libraries (patchelf), for binaries
#                                        built for a newer glibc than 2.36
#
# Environment: DEBIAN_MIRROR (default http://deb.debian.org/debian),
# ARCHIVE_STATE, ARCHIVE_REFRESH.
# Functions die with status 3 when the archive cannot be reached (callers
# that may skip, such as VM tests, test for it), 1 on other errors.

ARCHIVE_REPO=${ARCHIVE_REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
ARCHIVE_STATE=${ARCHIVE_STATE:-$ARCHIVE_REPO/build/apt-archive}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
ARCHIVE_KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
# The suites: binary packages of each, sources of those we build from.
ARCHIVE_SUITES=(bookworm-backports trixie trixie-backports unstable)
ARCHIVE_SOURCE_SUITES=(trixie unstable)

archive_die() { echo "debian-archive: error: $*" >&2; exit 1; }
archive_unreachable() { echo "debian-archive: error: $*" >&2; exit 3; }
archive_log() { echo "debian-archive: $*" >&2; }

archive_opts() {
    local d=$ARCHIVE_STATE
    printf '%s\n' -o "Dir::Etc::SourceList=$d/sources.list" \
        -o "Dir::Etc::SourceParts=$d/empty.d" \
        -o "Dir::Etc::Preferences=$d/preferences" \
        -o "Dir::Etc::PreferencesParts=$d/empty.d" \
        -o "Dir::State=$d" -o "Dir::State::Lists=$d/lists" \
        -o "Dir::State::status=$d/status" -o "Dir::Cache=$d/cache" \
        -o Acquire::Languages=none -o APT::Sandbox::User=root
}

archive_apt() {
    local -a opts
    mapfile -t opts < <(archive_opts)
    apt-get -q "${opts[@]}" "$@"
}

archive_cache() {
    local -a opts
    mapfile -t opts < <(archive_opts)
    apt-cache "${opts[@]}" "$@"
}

archive_sources_list() {
    local s
    for s in "${ARCHIVE_SUITES[@]}"; do
        echo "deb [signed-by=$ARCHIVE_KEYRING] $DEBIAN_MIRROR $s main"
    done
    for s in "${ARCHIVE_SOURCE_SUITES[@]}"; do
        echo "deb-src [signed-by=$ARCHIVE_KEYRING] $DEBIAN_MIRROR $s main"
    done
}

# archive_update: the suites' package lists, read once (under a lock).
archive_update() {
    local d=$ARCHIVE_STATE want
    command -v apt-get >/dev/null || archive_die "apt-get not found: this needs Debian's apt"
    [ -f "$ARCHIVE_KEYRING" ] || archive_die "$ARCHIVE_KEYRING not found: apt-get install debian-archive-keyring"
    mkdir -p "$d"
    want=$(archive_sources_list)
    if [ "${ARCHIVE_REFRESH:-0}" != 1 ] && [ -f "$d/updated" ] &&
        [ "$(cat "$d/sources.list" 2>/dev/null)" = "$want" ]; then
        return 0
    fi
    (
        exec {lock}>"$d/.lock"
        flock "$lock"
        if [ "${ARCHIVE_REFRESH:-0}" != 1 ] && [ -f "$d/updated" ] &&
            [ "$(cat "$d/sources.list" 2>/dev/null)" = "$want" ]; then
            exit 0
        fi
        rm -f "$d/updated"
        mkdir -p "$d/lists/partial" "$d/cache/archives/partial" "$d/empty.d"
        : >"$d/status"
        : >"$d/preferences"
        echo "$want" >"$d/sources.list"
        archive_log "reading the package lists of ${ARCHIVE_SUITES[*]} from $DEBIAN_MIRROR into $d"
        archive_apt --error-on=any update >"$d/update.log" 2>&1 ||
            archive_unreachable "apt-get update from $DEBIAN_MIRROR failed (is the archive reachable? set DEBIAN_MIRROR to a Debian mirror you can reach): $(grep -E '^(E|W):' "$d/update.log" | head -n 3 | tr '\n' ' ') (all of it: $d/update.log)"
        date -u +%FT%TZ >"$d/updated"
    ) || exit $?
}

# archive_download DIR PKG...: each PKG (name, name/suite or name=version)
# as a .deb in DIR.
archive_download() {
    local dir=$1 p name
    shift
    archive_update
    mkdir -p "$dir"
    if ! (cd "$dir" && archive_apt download "$@") >"$dir/download.log" 2>&1; then
        local why
        why="apt-get download $* failed: $(grep -E '^(E|W):' "$dir/download.log" | head -n 3 | tr '\n' ' ') (all of it: $dir/download.log)"
        if grep -qE 'Could not (connect|resolve)|Temporary failure resolving|Connection (refused|timed out)|Network is unreachable' "$dir/download.log"; then
            archive_unreachable "$why"
        fi
        archive_die "$why"
    fi
    for p in "$@"; do
        name=${p%%[/=]*}
        compgen -G "$dir/${name}_*.deb" >/dev/null ||
            archive_die "apt-get download left no ${name}_*.deb in $dir ($dir/download.log)"
    done
}

# archive_unpack ROOT DEB...
archive_unpack() {
    local root=$1 f
    shift
    mkdir -p "$root"
    for f in "$@"; do
        dpkg-deb -x "$f" "$root" || archive_die "dpkg-deb -x $f $root failed"
    done
}

# archive_unpack_root OUT: OUT/debs/*.deb unpacked into OUT/root (anew),
# and "PACKAGE VERSION" of each in OUT/versions.txt
archive_unpack_root() {
    local out=$1 f
    rm -rf "$out/root" "$out/root.tmp"
    archive_unpack "$out/root.tmp" "$out"/debs/*.deb
    mv "$out/root.tmp" "$out/root"
    for f in "$out"/debs/*.deb; do
        # shellcheck disable=SC2016  # dpkg-deb's fields, not the shell's
        dpkg-deb --showformat='${Package} ${Version}\n' -W "$f"
    done >"$out/versions.txt"
}

# archive_relocate ROOT FILE...: each ELF program FILE (built for ROOT's
# glibc) gets ROOT's dynamic loader as its interpreter and ROOT's library
# directory, then the host's, as its search path (DT_RPATH, which also
# applies to the libraries it loads), so that it runs here as it is.
archive_relocate() {
    local root=$1 f
    shift
    command -v patchelf >/dev/null || archive_die "patchelf not found: run 'make deps' (as root)"
    [ -e "$root/usr/lib64/ld-linux-x86-64.so.2" ] ||
        archive_die "$root has no usr/lib64/ld-linux-x86-64.so.2: unpack its libc6 first"
    for f in "$@"; do
        patchelf --set-interpreter "$root/usr/lib64/ld-linux-x86-64.so.2" --force-rpath \
            --set-rpath "$root/usr/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu" "$f" ||
            archive_die "patchelf on $f failed"
    done
}
