#!/usr/bin/env bash
# Prepare a QEMU source tree for building rdma-sim: Debian 12's QEMU 7.2,
# Debian 13's QEMU 10.0 or unstable's QEMU 10.2.
#
#   scripts/qemu-tree.sh fetch BUILD_DIR QEMU_SRC [VERSION]
#       VERSION 7.2 (default): `apt-get source qemu` into BUILD_DIR, once
#       (QEMU_SRC is the directory it is expected to produce, e.g.
#       BUILD_DIR/qemu-7.2+dfsg).
#       VERSION 10.0 or 10.2: Debian's qemu source of that version into
#       QEMU_SRC, and meson >= 1.5 (10.x needs it, Debian 12 has 1.0) from
#       bookworm-backports into the Python environment
#       BUILD_DIR/qemu-python that both use, once.  Both come from Debian's
#       archive through the apt state of scripts/debian-archive.sh
#       (build/apt-archive): the host's apt configuration is not changed
#       and nothing is installed.
#   scripts/qemu-tree.sh link QEMU_SRC REPO [VERSION]
#       symlink our sources into the tree, add the hook lines to QEMU's
#       Kconfig/meson files and apply the series of REPO/patches/qemu for
#       VERSION (changes to QEMU outside the device: the common patches
#       with the hunks kept for that version in place of theirs; see
#       patches/qemu/README.md). Idempotent: files are only written when
#       their content has to change, so a no-op run does not make meson
#       reconfigure or ninja rebuild.
#   scripts/qemu-tree.sh link-plain QEMU_SRC REPO [VERSION]
#       the same without REPO/patches/qemu (make qemu-plain: what rdma-sim
#       does on an unmodified QEMU); refuses a tree that has one applied.
set -euo pipefail

die() { echo "qemu-tree.sh: error: $*" >&2; exit 1; }
log() { echo "qemu-tree.sh: $*"; }

# ---------------------------------------------------------------------------
fetch() {
    local build=$1 src=$2
    if [ -f "$src/configure" ] && [ -f "$src/meson.build" ]; then
        return 0
    fi
    [ ! -e "$src" ] || die "$src exists but is not a complete QEMU tree; remove it and re-run make"
    command -v apt-get >/dev/null || die "apt-get not found (Debian 12 is required), or set QEMU_SRC=/path/to/qemu-7.2"
    command -v dpkg-source >/dev/null || die "dpkg-source not found: run 'make deps' (as root) first"

    local tmp="$build/.qemu-source.tmp"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    log "downloading QEMU source with 'apt-get source qemu' into $build"
    if ! (cd "$tmp" && apt-get source -q qemu) > "$tmp/apt-get-source.log" 2>&1; then
        cat "$tmp/apt-get-source.log" >&2
        die "'apt-get source qemu' failed. Run 'make deps' (as root) first: it adds the deb-src entry and runs apt-get update. Or set QEMU_SRC=/path/to/qemu-7.2"
    fi
    local got
    got=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d -name 'qemu-*' | head -n1)
    [ -n "$got" ] || die "'apt-get source qemu' did not produce a qemu-* directory (see $tmp/apt-get-source.log)"
    if [ "$(basename "$got")" != "$(basename "$src")" ]; then
        die "'apt-get source qemu' produced $(basename "$got"), expected $(basename "$src") (QEMU 7.2 from Debian 12). Set QEMU_SRC to a QEMU 7.2 tree"
    fi
    mkdir -p "$(dirname "$src")"
    mv "$got" "$src"
    mv "$tmp/apt-get-source.log" "$build/qemu-source.log"
    rm -rf "$tmp"
    log "QEMU source ready in $src"
}

# ---------------------------------------------------------------------------
# The newer generations: Debian's QEMU source of a newer suite, and meson
# from bookworm-backports, through the apt state of scripts/debian-archive.sh
# (build/apt-archive): the host's apt configuration is not changed and
# nothing is installed.
#
# The source package of each VERSION, as apt-get source takes it: a suite
# where that suite keeps the version (trixie's point releases stay 10.0), an
# exact version where the suite moves on (unstable).
declare -A DEBIAN_SOURCE=(
    [10.0]=qemu/trixie
    [10.2]=qemu=1:10.2.2+ds-1
)
# The meson they need (>= 1.5; Debian 12 has 1.0), in one Python environment
# BUILD_DIR/qemu-python that sees the host's packages; configure --python=.
MESON_PACKAGE=meson/bookworm-backports
MESON_MIN=1.5

# fetch_debian BUILD_DIR QEMU_SRC VERSION
fetch_debian() {
    local build=$1 src=$2 version=$3 py=$1/qemu-python
    local spec=${DEBIAN_SOURCE[$version]}
    if [ -f "$src/configure" ] && [ -f "$src/meson.build" ] && [ -e "$py/.meson" ]; then
        return 0
    fi
    command -v dpkg-source >/dev/null || die "dpkg-source not found: run 'make deps' (as root) first"
    # shellcheck source=scripts/debian-archive.sh
    . "$(dirname "${BASH_SOURCE[0]}")/debian-archive.sh"
    archive_update

    local tmp="$build/.qemu-$version.tmp" dsc
    rm -rf "$tmp"
    mkdir -p "$tmp"
    if [ ! -f "$src/configure" ]; then
        [ ! -e "$src" ] || die "$src exists but is not a complete QEMU tree; remove it and re-run make"
        log "downloading Debian's QEMU $version source ($spec) into $build"
        (cd "$tmp" && archive_apt source --download-only "$spec") > "$tmp/source.log" 2>&1 || {
            cat "$tmp/source.log" >&2
            die "'apt-get source $spec' failed (see above). If the archive no longer has that version, set QEMU_SRC to a QEMU $version tree; ARCHIVE_REFRESH=1 reads the archive's lists again"
        }
        dsc=$(find "$tmp" -maxdepth 1 -name 'qemu_*.dsc' | head -n1)
        [ -n "$dsc" ] || die "'apt-get source $spec' left no qemu_*.dsc in $tmp (see $tmp/source.log)"
        [[ $(basename "$dsc") == qemu_"$version".* ]] ||
            die "the archive's $spec is $(basename "$dsc"), not QEMU $version; set QEMU_SRC to a QEMU $version tree"
        # dpkg-source applies Debian's patches, among them the ones that
        # build without the firmware blobs the +ds tarball leaves out
        (cd "$tmp" && dpkg-source -x "$(basename "$dsc")" tree) > "$tmp/extract.log" 2>&1 || {
            cat "$tmp/extract.log" >&2
            die "dpkg-source -x $(basename "$dsc") failed (see above)"
        }
        mkdir -p "$(dirname "$src")"
        mv "$tmp/tree" "$src"
        log "QEMU source ready in $src ($(basename "$dsc" .dsc))"
    fi

    # Both 10.x builds use the environment, and may be fetched at once
    # (make takes the lock of each build directory, not a common one)
    exec {pylock}>"$build/.qemu-python.lock"
    flock "$pylock"
    if [ ! -e "$py/.meson" ]; then
        log "setting up $py with $MESON_PACKAGE"
        archive_download "$tmp/meson" "$MESON_PACKAGE"
        rm -rf "$py"
        python3 -m venv --without-pip --system-site-packages "$py" ||
            die "python3 -m venv failed: install python3-venv (make deps)"
        archive_unpack "$tmp/meson/root" "$tmp"/meson/meson_*.deb
        local site version_got
        site=$("$py/bin/python3" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
        cp -a "$tmp"/meson/root/usr/lib/python3/dist-packages/. "$site/"
        version_got=$("$py/bin/python3" -c 'import mesonbuild.coredata as c; print(c.version)') ||
            die "meson from $MESON_PACKAGE does not import in $py"
        [ "$(printf '%s\n' "$MESON_MIN" "$version_got" | sort -V | head -n1)" = "$MESON_MIN" ] ||
            die "$MESON_PACKAGE is meson $version_got, QEMU $version needs >= $MESON_MIN"
        echo "$version_got" > "$py/.meson"
        log "meson $version_got in $py"
        # what this script used before build/apt-archive and qemu-python
        local old
        for old in "$build/apt-next" "$build/qemu-10.0-python"; do
            if [ -d "$old" ]; then
                rm -rf "$old"
                log "removed $old (no longer used)"
            fi
        done
    fi
    rm -rf "$tmp"
}

# ---------------------------------------------------------------------------
# symlink LINK TARGET: make LINK a symlink to TARGET, touching nothing if it
# already is one.
symlink() {
    local link=$1 target=$2
    if [ -L "$link" ]; then
        [ "$(readlink "$link")" = "$target" ] && return 0
        rm -f "$link"
    elif [ -e "$link" ]; then
        die "$link exists and is not a symlink; refusing to replace it (use a clean QEMU tree)"
    fi
    ln -s "$target" "$link"
    log "linked $link -> $target"
}

# write_if_changed FILE: replace FILE with stdin only if the content differs.
write_if_changed() {
    local f=$1 tmp
    tmp=$(mktemp "$f.XXXXXX")
    cat > "$tmp"
    if cmp -s "$tmp" "$f"; then
        rm -f "$tmp"
    else
        chmod --reference="$f" "$tmp" 2>/dev/null || true
        mv "$tmp" "$f"
        log "updated $f"
    fi
}

need_file() {
    [ -f "$1" ] || die "$1 not found: ${QSRC} does not look like a QEMU $VERSION source tree"
}

link() {
    QSRC=$1 VERSION=$3
    local repo=$2 patches=${4:-apply}
    need_file "$QSRC/configure"
    need_file "$QSRC/meson.build"
    need_file "$QSRC/hw/Kconfig"
    need_file "$QSRC/hw/meson.build"
    need_file "$QSRC/tests/qtest/meson.build"
    need_file "$QSRC/tests/qtest/fuzz/meson.build"
    [ -d "$repo/hw/rdma-sim" ] || die "$repo/hw/rdma-sim is missing"
    [ -d "$repo/include/rdma-sim" ] || die "$repo/include/rdma-sim is missing"

    # --- sources -----------------------------------------------------------
    symlink "$QSRC/hw/rdma-sim" "$repo/hw/rdma-sim"
    symlink "$QSRC/include/hw/rdma-sim" "$repo/include/rdma-sim"
    mkdir -p "$QSRC/configs/devices/x86_64-softmmu"
    # The device set: configs/rdma-sim-x86_64.mak, and in a QEMU that has a
    # vfio-user client (10.1 and later) that client too, so that one binary
    # runs the device built in and out of process (rdma-sim-server), as the
    # bench compares them.  A copy, not a link: the older QEMUs' Kconfig
    # does not know the client's symbols.
    local mak=$QSRC/configs/devices/x86_64-softmmu/rdma-sim.mak
    [ ! -L "$mak" ] || rm -f "$mak"
    [ -e "$mak" ] || : > "$mak"
    { cat "$repo/configs/rdma-sim-x86_64.mak"
      if [ -f "$QSRC/hw/vfio-user/Kconfig" ]; then
          printf '\n# (scripts/qemu-tree.sh: this QEMU has a vfio-user client)\nCONFIG_VFIO_PCI=y\nCONFIG_VFIO_USER=y\n'
      fi
    } | write_if_changed "$mak"

    # qtests: every tests/qtest/*-test.c is one qtest program, linked with
    # the helper library tests/qtest/libqos/rdma-sim*; the fuzz targets
    # tests/qtest/fuzz/rdma-sim* go into qemu-fuzz-x86_64 with the library.
    # Drop links to files that no longer exist in the repo.
    local f dir
    for dir in tests/qtest tests/qtest/libqos tests/qtest/fuzz; do
        for f in "$QSRC/$dir"/*; do
            if [ -L "$f" ] && [[ "$(readlink "$f")" == "$repo/$dir/"* ]] && [ ! -e "$f" ]; then
                rm -f "$f"
                log "removed stale link $f"
            fi
        done
    done
    local qtests=() qos=() fuzz=()
    shopt -s nullglob
    for f in "$repo"/tests/qtest/*-test.c; do
        symlink "$QSRC/tests/qtest/$(basename "$f")" "$f"
        qtests+=("$(basename "$f" .c)")
    done
    for f in "$repo"/tests/qtest/libqos/rdma-sim*; do
        symlink "$QSRC/tests/qtest/libqos/$(basename "$f")" "$f"
        [[ $f != *.c ]] || qos+=("libqos/$(basename "$f")")
    done
    for f in "$repo"/tests/qtest/fuzz/rdma-sim*; do
        symlink "$QSRC/tests/qtest/fuzz/$(basename "$f")" "$f"
        [[ $f != *.c ]] || fuzz+=("$(basename "$f")")
    done
    shopt -u nullglob

    # --- hooks -----------------------------------------------------------------
    # hw/Kconfig
    if ! grep -qxF 'source rdma-sim/Kconfig' "$QSRC/hw/Kconfig"; then
        { cat "$QSRC/hw/Kconfig"; echo 'source rdma-sim/Kconfig'; } | write_if_changed "$QSRC/hw/Kconfig"
    fi

    # hw/meson.build
    if ! grep -qxF "subdir('rdma-sim')" "$QSRC/hw/meson.build"; then
        { cat "$QSRC/hw/meson.build"; echo "subdir('rdma-sim')"; } | write_if_changed "$QSRC/hw/meson.build"
    fi

    # top-level meson.build: trace_events_subdirs gets 'hw/rdma-sim' (next to
    # 'hw/misc', inside the have_system block)
    if ! grep -qF "'hw/rdma-sim'," "$QSRC/meson.build"; then
        grep -qE "^    'hw/misc',$" "$QSRC/meson.build" ||
            die "can't find the 'hw/misc' entry of trace_events_subdirs in $QSRC/meson.build (not QEMU $VERSION?)"
        sed -E "0,/^    'hw\/misc',$/s//    'hw\/misc',\n    'hw\/rdma-sim',/" "$QSRC/meson.build" |
            write_if_changed "$QSRC/meson.build"
    fi

    # tests/qtest/meson.build: marked lines, regenerated when the lists
    # change.  Right after qtests_x86_64 is defined: our qtests.  Before
    # the executables are declared: the library, compiled once into a
    # static library of its own (as QEMU's libqos is) rather than into
    # each program, and each program's dependency on it in the qtests
    # dict (as QEMU's own tests add theirs).
    local mb="$QSRC/tests/qtest/meson.build" marker='# rdma-sim qtests'
    grep -qE '^qtests_x86_64 = ' "$mb" ||
        die "can't find 'qtests_x86_64 = ' in $mb (not QEMU $VERSION?)"
    grep -qxF 'qtest_executables = {}' "$mb" ||
        die "can't find 'qtest_executables = {}' in $mb (not QEMU $VERSION?)"
    local tests="" sources="" t sep=""
    if [ ${#qtests[@]} -gt 0 ]; then
        tests="qtests_x86_64 += ["
        sources="rdma_sim_qos = declare_dependency(link_with: static_library('rdma-sim-qos', files("
        for t in "${qos[@]}"; do sources+="$sep'$t'"; sep=", "; done
        sources+=") + genh, dependencies: qemuutil, build_by_default: false))  $marker\\nqtests += {"
        sep=""
        for t in "${qtests[@]}"; do
            tests+="$sep'$t'"
            sources+="$sep'$t': rdma_sim_qos"
            sep=", "
        done
        tests+="]  $marker"
        sources+="}  $marker"
    fi
    awk -v tests="$tests" -v sources="$sources" -v marker="$marker" '
        index($0, marker) { next }
        /^qtest_executables = \{\}$/ && sources != "" { print sources }
        { print }
        /^qtests_x86_64 = / && !done { if (tests != "") print tests; done = 1 }
    ' "$mb" | write_if_changed "$mb"

    # tests/qtest/fuzz/meson.build (read only by a build with
    # --enable-fuzzing): one marked line at the end, the fuzz targets with
    # the library, which includes "libqos/..." from tests/qtest.
    mb="$QSRC/tests/qtest/fuzz/meson.build" marker='# rdma-sim fuzz targets'
    local line="" list=""
    sep=""
    for t in "${fuzz[@]}" "${qos[@]/#/../}"; do list+="$sep'$t'"; sep=", "; done
    if [ ${#fuzz[@]} -gt 0 ]; then
        line="specific_fuzz_ss.add(when: 'CONFIG_RDMA_SIM', if_true: [files($list), declare_dependency(include_directories: include_directories('..'))])  $marker"
    fi
    awk -v line="$line" -v marker="$marker" '
        index($0, marker) { next }
        { print }
        END { if (line != "") print line }
    ' "$mb" | write_if_changed "$mb"

    # --- changes to QEMU itself --------------------------------------------
    command -v patch > /dev/null || die "patch not found: run 'make deps' (as root) first"
    if [ "$patches" = apply ]; then
        apply_patches "$QSRC" "$repo/patches/qemu" "$VERSION"
    else
        refuse_patches "$QSRC" "$repo/patches/qemu" "$VERSION"
    fi
}

# series_of DIR VERSION: SERIES, the patches for VERSION in name order: the
# common patches of DIR with the hunks kept for that version in DIR/VERSION/
# (or an earlier version's directory) in place of the ones they replace
# (scripts/qemu-patches.py; patches/qemu/README.md), each written to a
# directory that goes away when the script exits.
SERIES=()
SERIES_TMP=()
trap 'rm -rf "${SERIES_TMP[@]}"' EXIT
series_of() {
    local dir=$1 version=$2 tmp
    command -v python3 > /dev/null || die "python3 not found: run 'make deps' (as root) first"
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/rdma-sim-patches.XXXXXX")
    SERIES_TMP+=("$tmp")
    python3 "$(dirname "${BASH_SOURCE[0]}")/qemu-patches.py" series "$dir" "$version" "$tmp/series" \
        > "$tmp/list" ||
        die "the patches in $dir make no series for QEMU $version (see above); 'scripts/qemu-patches.py check $dir QEMU_TREE...' says more"
    mapfile -t SERIES < "$tmp/list"
}

# refuse_patches QEMU_SRC DIR VERSION: a tree meant to stay without our
# patches (make qemu-plain) must not have one applied
refuse_patches() {
    local src=$1 p
    series_of "$2" "$3"
    for p in "${SERIES[@]}"; do
        if patch -d "$src" -p1 -R -s -f --dry-run < "$p" > /dev/null 2>&1; then
            die "$src has $(basename "$p") applied, but this tree is for QEMU without patches/qemu; remove $src and re-run make"
        fi
    done
}

# apply_patches QEMU_SRC DIR VERSION: apply DIR's patches for VERSION
# (series_of, -p1) to the QEMU tree, skipping those already applied.
# They are a series: a later patch may change the lines of an earlier one,
# which then no longer reverts on its own.  So the last patch that reverts
# marks how far the series went in, and only the ones after it are applied
# (a tree from before a patch was added to the series gets just that one).
# Files are only touched when a patch has to go in, so a no-op run rebuilds
# nothing.
apply_patches() {
    local src=$1 dir=$2 version=$3 p name i applied=0
    series_of "$dir" "$version"
    for ((i = ${#SERIES[@]}; i > 0; i--)); do
        if patch -d "$src" -p1 -R -s -f --dry-run < "${SERIES[i - 1]}" > /dev/null 2>&1; then
            applied=$i
            break
        fi
    done
    for p in "${SERIES[@]:applied}"; do
        name=$(basename "$p")
        patch -d "$src" -p1 -N -s -f --dry-run < "$p" > /dev/null 2>&1 ||
            die "$name does not apply to $src (not QEMU $version, or the files it changes were edited); start from a clean tree: remove $src and re-run make"
        patch -d "$src" -p1 -N -s -f --no-backup-if-mismatch < "$p" > /dev/null ||
            die "applying $name to $src failed"
        log "applied $name (the series for QEMU $version)"
    done
}

# ---------------------------------------------------------------------------
case "${1:-}" in
    fetch)
        [ $# -eq 3 ] || [ $# -eq 4 ] || die "usage: $0 fetch BUILD_DIR QEMU_SRC [VERSION]"
        case ${4:-7.2} in
            7.2) fetch "$2" "$3" ;;
            *) [ -n "${DEBIAN_SOURCE[$4]:-}" ] ||
                   die "QEMU version $4 is not supported (7.2 or ${!DEBIAN_SOURCE[*]})"
               fetch_debian "$2" "$3" "$4" ;;
        esac ;;
    link)
        [ $# -eq 3 ] || [ $# -eq 4 ] || die "usage: $0 link QEMU_SRC REPO [VERSION]"
        link "$2" "$3" "${4:-7.2}" ;;
    link-plain)
        [ $# -eq 3 ] || [ $# -eq 4 ] || die "usage: $0 link-plain QEMU_SRC REPO [VERSION]"
        link "$2" "$3" "${4:-7.2}" refuse ;;
    *) die "usage: $0 fetch BUILD_DIR QEMU_SRC [VERSION] | link[-plain] QEMU_SRC REPO [VERSION]" ;;
esac
