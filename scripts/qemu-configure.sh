#!/usr/bin/env bash
# Configure the QEMU build directory, but only when needed.
#
#   scripts/qemu-configure.sh QEMU_SRC BUILD_DIR LOG_DIR CONFIGURE_FLAG...
#
# A stamp file BUILD_DIR/.rdma-sim-configure records the source tree and the
# flags of the last successful configure. configure runs again only if they
# changed or the build directory is missing/broken; a different source tree
# wipes BUILD_DIR first. After configuring, the meson summary is checked
# (virtfs, slirp must be on) and the Debian firmware directories are linked
# into BUILD_DIR/qemu-bundle so the uninstalled binary finds its BIOS/ROMs.
set -euo pipefail

die() { echo "qemu-configure.sh: error: $*" >&2; exit 1; }
log() { echo "qemu-configure.sh: $*"; }

[ $# -ge 3 ] || die "usage: $0 QEMU_SRC BUILD_DIR LOG_DIR CONFIGURE_FLAG..."
src=$1 build=$2 logdir=$3
shift 3
stamp="$build/.rdma-sim-configure"
want=$(printf '%s\n' "src=$src" "$@")

# Debian firmware for the uninstalled binary (seabios, ipxe-qemu,
# qemu-system-data). configure is given --firmwarepath=$FIRMWARE_DIRS; QEMU
# run from the build tree looks for those paths below BUILD_DIR/qemu-bundle.
FIRMWARE_DIRS="/usr/share/qemu /usr/share/seabios /usr/lib/ipxe/qemu"

link_firmware() {
    local d
    for d in $FIRMWARE_DIRS; do
        [ -d "$d" ] || die "firmware directory $d is missing: run 'make deps' (as root) first (packages seabios, ipxe-qemu, qemu-system-data)"
        mkdir -p "$build/qemu-bundle$(dirname "$d")"
        if [ "$(readlink "$build/qemu-bundle$d" 2>/dev/null)" != "$d" ]; then
            rm -rf "$build/qemu-bundle$d"
            ln -s "$d" "$build/qemu-bundle$d"
        fi
    done
}

if [ -f "$stamp" ] && [ -f "$build/build.ninja" ] && [ "$(cat "$stamp")" = "$want" ]; then
    link_firmware
    exit 0
fi

# --- preflight: fail early with a useful message ------------------------------
missing=()
compilers=(cc)
for f in "$@"; do
    case $f in --cc=*|--cxx=*) compilers+=("${f#*=}") ;; esac
done
for c in meson ninja pkg-config python3 make "${compilers[@]}"; do
    command -v "$c" >/dev/null || missing+=("$c")
done
for p in glib-2.0 pixman-1 slirp libcap-ng libattr; do
    pkg-config --exists "$p" 2>/dev/null || missing+=("pkg-config:$p")
done
[ ${#missing[@]} -eq 0 ] || die "missing build dependencies: ${missing[*]}. Run 'make deps' (as root) first"

if [ -f "$stamp" ] && ! grep -qxF "src=$src" "$stamp"; then
    log "QEMU source tree changed; wiping $build"
    rm -rf "$build"
fi
mkdir -p "$build" "$logdir"
rm -f "$stamp"

log "configuring QEMU in $build (log: $logdir/configure.log)"
log "flags: $*"
start=$(date +%s)
if ! (cd "$build" && "$src/configure" "$@") > "$logdir/configure.log" 2>&1; then
    tail -n 40 "$logdir/configure.log" >&2
    die "QEMU configure failed (full log: $logdir/configure.log). If a dependency is missing, run 'make deps' (as root)"
fi
log "configure took $(( $(date +%s) - start )) s"

# The meson summary lines look like "    virtfs support               : YES".
summary_is_yes() {
    grep -Eiq "^[[:space:]]*$1[[:space:]]*:[[:space:]]*YES" "$logdir/configure.log"
}
summary_is_yes 'VirtFS( \(9P\))? support' ||
    die "meson summary says virtfs is off (see $logdir/configure.log); it needs libcap-ng-dev and libattr1-dev: run 'make deps' (as root)"
summary_is_yes 'slirp support' ||
    die "meson summary says slirp is off (see $logdir/configure.log); it needs libslirp-dev: run 'make deps' (as root)"

link_firmware
printf '%s\n' "$want" > "$stamp"
