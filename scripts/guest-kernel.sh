#!/usr/bin/env bash
# scripts/guest-kernel.sh - Debian's kernels for the guests, and the trees
# that build modules for them.
#
#   scripts/guest-kernel.sh abi [SPEC]     the ABI SPEC names (default
#       GUEST_ABI): an ABI (7.3.4+deb13-amd64), a series (6.1, 6.12, 7.3: its
#       newest amd64 ABI with headers and image) or nothing (the default
#       generation's series, configs/generations).  A series is looked up in
#       the host's apt lists, then in the newer suites of
#       scripts/debian-archive.sh.
#   scripts/guest-kernel.sh image ABI DIR  the kernel image and modules of
#       ABI unpacked into DIR/root, laid out as boot/vmlinuz-ABI,
#       boot/config-ABI and lib/modules/ABI (depmod run), once.
#   scripts/guest-kernel.sh kdir ABI       prints the kernel build tree for
#       modules of ABI: /lib/modules/ABI/build when its headers are installed
#       (Debian 12's kernels: make deps installs them), else a tree prepared
#       once in build/kernel/ABI from the archive.
#
# A kernel of a newer Debian (Linux 7.x of trixie-backports) cannot have its
# headers installed here: they depend on that suite's compiler (gcc-14) and
# its kbuild programs need a newer glibc than Debian 12's.  So kdir unpacks
# linux-headers-ABI, its -common and linux-kbuild packages, and the
# compiler the kernel was built with (CONFIG_CC_VERSION_TEXT) with the
# libraries it needs, into build/kernel/ABI; the programs that need the newer
# glibc get that suite's own loader (archive_relocate), and the tree's
# Makefile puts the compiler on make's PATH.  `make -C KDIR M=...` then
# builds a module for that kernel as it would on a Debian 13 machine.
#
# Sourced (scripts/vm/harness.sh), it defines guest_kernel_abi, guest_kernel_image
# and guest_kernel_kdir, which exit on errors.
set -euo pipefail

GK_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/debian-archive.sh
. "$GK_REPO/scripts/debian-archive.sh"
# shellcheck source=configs/generations
. "$GK_REPO/configs/generations"
GK_TREES=${GK_TREES:-$GK_REPO/build/kernel}

gk_die() { echo "guest-kernel: error: $*" >&2; exit 1; }
gk_log() { echo "guest-kernel: $*" >&2; }

# gk_newest_abi CACHE-COMMAND SERIES: the newest SERIES.N[-M][+debNN]-amd64
# for which the lists have both linux-headers-ABI and a kernel image
# (linux-image-ABI, or only linux-image-ABI-unsigned while a backports
# upload is unsigned).
gk_newest_abi() {
    local pkgs re="${2//./\\.}(\.[0-9]+)+(-[0-9]+)?(\+[a-z0-9]+)?-amd64"
    pkgs=$("$1" pkgnames "linux-" 2>/dev/null) || return 0
    comm -12 \
        <(grep -E "^linux-headers-$re\$" <<<"$pkgs" | sed 's/^linux-headers-//' | sort) \
        <(grep -E "^linux-image-$re(-unsigned)?\$" <<<"$pkgs" |
            sed -E 's/^linux-image-//; s/-unsigned$//' | sort -u) |
        sort -V | tail -n1
}

# guest_kernel_abi [SPEC [NAME]]: NAME is the variable SPEC came from, for
# error messages.
guest_kernel_abi() {
    local abi spec=${1-${GUEST_ABI:-}} var=${2:-GUEST_ABI}
    spec=${spec:-$GEN_DEFAULT_KERNEL}
    if [[ $spec =~ ^[0-9]+\.[0-9]+$ ]]; then
        abi=$(gk_newest_abi apt-cache "$spec")
        if [[ -z $abi ]]; then
            (archive_update) || gk_die "$var=$spec: not in apt's lists, and the newer suites could not be read (above)"
            # Reading the suites' lists takes seconds: the answer is kept
            # until they are read again.
            local cached=$ARCHIVE_STATE/series-$spec
            if [[ -s $cached && $cached -nt $ARCHIVE_STATE/updated ]]; then
                abi=$(cat "$cached")
            else
                abi=$(gk_newest_abi archive_cache "$spec")
                if [[ -n $abi ]]; then echo "$abi" >"$cached"; fi
            fi
        fi
        [[ -n $abi ]] ||
            gk_die "$var=$spec: neither apt's lists nor Debian's newer suites (${ARCHIVE_SUITES[*]}) have linux-headers-$spec.*-amd64 with its linux-image; give an ABI (e.g. $var=6.1.0-57-amd64), or run 'apt-get update'"
        echo "$abi"
        return
    fi
    echo "$spec"
}

# gk_candidate CACHE-COMMAND PACKAGE: the lists have a version of it.
gk_candidate() {
    local policy
    policy=$("$1" policy "$2" 2>/dev/null) || return 1
    [[ $policy == *"Candidate: "[0-9]* ]]
}
gk_in_host_apt() { gk_candidate apt-cache "$1"; }

# guest_kernel_image ABI DIR: see the top.  The caller holds the lock on DIR.
guest_kernel_image() {
    local abi=$1 dir=$2 tmp pkg f
    [[ -e $dir/.fetched ]] && return 0
    command -v dpkg-deb >/dev/null || gk_die "dpkg-deb not found (package dpkg)"
    command -v depmod >/dev/null || gk_die "depmod not found: run 'make deps' (package kmod)"
    mkdir -p "$(dirname "$dir")"
    tmp=$(mktemp -d "$(dirname "$dir")/.fetch.XXXXXX")
    # shellcheck disable=SC2064  # tmp is fixed now
    trap "rm -rf '$tmp'" EXIT
    # The signed image, else the unsigned one (the same kernel: QEMU boots it
    # directly, nothing checks the signature).
    pkg=linux-image-$abi
    if gk_in_host_apt "$pkg" || gk_in_host_apt "$pkg-unsigned"; then
        gk_in_host_apt "$pkg" || pkg=$pkg-unsigned
        gk_log "fetching guest kernel $pkg into $dir"
        # Runs as root in a root-owned directory: no "unsandboxed download" warning.
        (cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root "$pkg" >download.log 2>&1) || {
            cat "$tmp/download.log" >&2
            gk_die "apt-get download $pkg failed: run 'apt-get update' (as root), or set GUEST_ABI to an ABI the archive has"
        }
    else
        # Debian 13's kernels: linux-image-ABI is a package of dependencies
        # on linux-binary-ABI (the kernel), linux-modules-ABI and
        # linux-base-ABI (config, System.map, modules.builtin ...).
        (archive_update) || gk_die "linux-image-$abi is not in apt's lists and the newer suites could not be read (above)"
        gk_candidate archive_cache "$pkg" || pkg=$pkg-unsigned
        gk_candidate archive_cache "$pkg" ||
            gk_die "no linux-image-$abi in apt's lists nor in Debian's newer suites (${ARCHIVE_SUITES[*]}): set GUEST_ABI to an ABI the archive has (scripts/guest-kernel.sh abi 7.3)"
        local -a pkgs=("$pkg")
        local deps
        deps=$(archive_cache depends "$pkg" "linux-binary-$abi" 2>/dev/null)
        for f in linux-binary-$abi linux-modules-$abi linux-base-$abi; do
            if grep -qw -- "$f" <<<"$deps"; then pkgs+=("$f"); fi
        done
        gk_log "fetching guest kernel ${pkgs[*]} from Debian's newer suites into $dir"
        (archive_download "$tmp" "${pkgs[@]}") || gk_die "downloading ${pkgs[*]} failed (above)"
    fi
    for f in "$tmp"/*.deb; do
        dpkg-deb -x "$f" "$tmp/root" || gk_die "dpkg-deb -x $f failed"
    done
    # Merged /usr: the kernel and its config are in usr/lib/modules/ABI.
    local m=$tmp/root/usr/lib/modules/$abi
    if [[ -d $m && ! -d $tmp/root/lib/modules/$abi ]]; then
        mkdir -p "$tmp/root/lib/modules" "$tmp/root/boot"
        mv "$m" "$tmp/root/lib/modules/$abi"
        m=$tmp/root/lib/modules/$abi
        for f in vmlinuz config System.map; do
            if [[ -f $m/$f ]]; then mv "$m/$f" "$tmp/root/boot/$f-$abi"; fi
        done
    fi
    [[ -f $tmp/root/boot/vmlinuz-$abi && -d $tmp/root/lib/modules/$abi ]] ||
        gk_die "$pkg has no boot/vmlinuz-$abi (or usr/lib/modules/$abi/vmlinuz) and lib/modules/$abi"
    depmod -b "$tmp/root" "$abi" || gk_die "depmod -b $tmp/root $abi failed"
    rm -rf "$dir"
    mkdir -p "$dir"
    mv "$tmp/root" "$dir/root"
    touch "$dir/.fetched"
}

# gk_kconfig TREE NAME: the value of CONFIG_NAME in TREE/.config, unquoted.
gk_kconfig() {
    sed -n "s/^CONFIG_$2=\"\{0,1\}\([^\"]*\)\"\{0,1\}\$/\1/p" "$1/.config"
}

# guest_kernel_kdir ABI: see the top.
guest_kernel_kdir() {
    local abi=$1
    [[ -n $abi ]] || gk_die "kdir: no ABI given"
    if [[ -f /lib/modules/$abi/build/Makefile ]]; then
        echo "/lib/modules/$abi/build"
        return 0
    fi
    local top=$GK_TREES/$abi
    if [[ ! -f $top/.prepared ]]; then
        (
            mkdir -p "$GK_TREES"
            exec {lock}>"$GK_TREES/.lock"
            flock "$lock"
            [[ -f $top/.prepared ]] || gk_prepare_tree "$abi" "$top"
        ) || exit 1
    fi
    echo "$top/build"
}

# gk_prepare_tree ABI TOP: the build tree of ABI in TOP/build (see the top).
gk_prepare_tree() {
    local abi=$1 top=$2 tmp root common hdr kbuild suite cc gcc_major f
    if gk_in_host_apt "linux-headers-$abi"; then
        gk_die "no kernel build tree at /lib/modules/$abi/build: install linux-headers-$abi (make deps does for Debian 12's kernels), or set KDIR"
    fi
    (archive_update) || gk_die "linux-headers-$abi is not in apt's lists and the newer suites could not be read (above)"
    common=$(archive_cache depends "linux-headers-$abi" 2>/dev/null |
        sed -n 's/^ *Depends: \(linux-headers-[^ ]*-common\)$/\1/p' | head -n1)
    kbuild=$(archive_cache depends "linux-headers-$abi" 2>/dev/null |
        sed -n 's/^ *Depends: \(linux-kbuild-[^ ]*\)$/\1/p' | head -n1)
    [[ -n $common && -n $kbuild ]] ||
        gk_die "linux-headers-$abi is in none of Debian's suites this reads (${ARCHIVE_SUITES[*]}), or names no -common and linux-kbuild package: set KDIR to a kernel build tree for $abi"
    # The suite the headers come from, for the compiler of the same suite
    suite=$(archive_cache policy "linux-headers-$abi" |
        awk '/^ +[0-9]+ http/ { print $3; exit }')
    suite=${suite%%/*}
    suite=${suite%-backports}
    # Prepared in place: .prepared, written last, says it is complete.
    rm -rf "$top"
    tmp=$top
    root=$tmp/root
    gk_log "preparing a build tree for Linux $abi in $top (headers and compiler from $suite)"
    (archive_download "$tmp/debs" "linux-headers-$abi" "$common" "$kbuild") ||
        gk_die "downloading the headers of $abi failed (above)"
    archive_unpack "$root" "$tmp"/debs/*.deb
    hdr=$root/usr/src/linux-headers-$abi
    [[ -f $hdr/.config && -f $root/usr/src/$common/Makefile ]] ||
        gk_die "linux-headers-$abi has no usr/src/linux-headers-$abi/.config or $common/Makefile"

    # The compiler: Debian builds a kernel with gcc-N of its suite
    # (CONFIG_CC_VERSION_TEXT "x86_64-linux-gnu-gcc-14 (Debian 14.2.0-19)
    # 14.2.0"); the headers' .kernelvariables name it for kbuild.
    cc=$(gk_kconfig "$hdr" CC_VERSION_TEXT)
    cc=${cc%% *}
    gcc_major=$(($(gk_kconfig "$hdr" GCC_VERSION) / 10000))
    [[ $cc == x86_64-linux-gnu-gcc-"$gcc_major" ]] ||
        gk_die "Linux $abi was built with '$cc' (CONFIG_CC_VERSION_TEXT), not Debian's gcc-$gcc_major: set KDIR to a tree you prepared"
    local -a toolchain=("gcc-$gcc_major" "gcc-$gcc_major-x86-64-linux-gnu" "cpp-$gcc_major"
        "cpp-$gcc_major-x86-64-linux-gnu" "libgcc-$gcc_major-dev" "gcc-$gcc_major-base"
        libisl23 libmpc3 libmpfr6 libgmp10 libzstd1 zlib1g libc6 libstdc++6 libgcc-s1
        libelf1t64)
    # A module's BTF is made by pahole, which must know the options the
    # kernel's own was made with (Debian 12's 1.24 does not)
    if [[ $(gk_kconfig "$hdr" DEBUG_INFO_BTF_MODULES) == y ]]; then
        toolchain+=(pahole libbpf1 libdw1t64 libbz2-1.0 liblzma5)
    fi
    (archive_download "$tmp/toolchain" "${toolchain[@]/%//$suite}") ||
        gk_die "downloading gcc-$gcc_major of $suite failed (above)"
    archive_unpack "$root" "$tmp"/toolchain/*.deb
    [[ -x $root/usr/bin/$cc ]] || gk_die "$suite's gcc-$gcc_major has no usr/bin/$cc"

    # Every ELF program of the compiler and of kbuild runs with the
    # suite's loader and libraries.
    local -a elfs=()
    while IFS= read -r -d '' f; do
        if [[ $(head -c 4 "$f" | od -An -tx1 | tr -d ' ') == 7f454c46 ]] &&
            ! [[ $f == *.so* || $f == *.o || $f == *.a ]]; then
            elfs+=("$f")
        fi
    done < <(find "$root/usr/bin" "$root/usr/libexec/gcc" "$root/usr/lib/$kbuild" \
        -type f -perm -u+x -print0)
    (archive_relocate "$root" "${elfs[@]}") || gk_die "relocating the programs of $abi's tree failed (above)"
    "$root/usr/bin/$cc" --version >/dev/null 2>&1 ||
        gk_die "$suite's $cc does not run here: $("$root/usr/bin/$cc" --version 2>&1 | head -n1)"

    # The tree's Makefile: Debian's names its own absolute paths under
    # /usr/src; this one names where they were unpacked, and puts the
    # compiler on make's PATH.
    cat >"$hdr/Makefile" <<EOF
# Linux $abi headers from Debian ($common, $kbuild), unpacked by
# scripts/guest-kernel.sh with $suite's $cc in $root/usr/bin.
export PATH := $root/usr/bin:\$(PATH)
KBUILD_OUTPUT=$hdr
include $root/usr/src/$common/Makefile
EOF
    ln -sfn "$hdr" "$tmp/build"
    # shellcheck disable=SC2016  # dpkg-deb's fields, not the shell's
    for f in "$tmp"/debs/*.deb "$tmp"/toolchain/*.deb; do
        dpkg-deb --showformat='${Package} ${Version}\n' -W "$f"
    done >"$tmp/versions.txt"
    rm -rf "$tmp/debs" "$tmp/toolchain"
    touch "$top/.prepared"
    gk_log "Linux $abi: build tree $top/build"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    case ${1:-} in
    abi) guest_kernel_abi "${2-${GUEST_ABI:-}}" ;;
    image)
        [[ $# -eq 3 ]] || gk_die "usage: $0 image ABI DIR"
        guest_kernel_image "$2" "$3" ;;
    kdir)
        [[ $# -eq 2 ]] || gk_die "usage: $0 kdir ABI"
        guest_kernel_kdir "$2" ;;
    *) echo "usage: $0 abi [SPEC] | image ABI DIR | kdir ABI" >&2; exit 2 ;;
    esac
fi
