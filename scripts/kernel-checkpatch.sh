#!/usr/bin/env bash
# The Linux kernel's checkpatch.pl, for the kernel-style code (the guest
# driver, the kernel verbs test module).
#
#   scripts/kernel-checkpatch.sh ARGS...    runs checkpatch.pl ARGS...
#
# No Debian binary package installs checkpatch.pl; linux-source-6.1 (Debian
# 12's kernel source) has it in its tarball.  The first run downloads that
# package with `apt-get download` (140 MB; 10 to 30 s, most of it reading
# the whole .tar.xz) and keeps only checkpatch.pl and the files it reads:
# 330 KB in build/kernel-checkpatch/.  Remove that directory to take a newer
# linux-source-6.1.
set -euo pipefail

pkg=linux-source-6.1
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=$repo/build/kernel-checkpatch
# checkpatch.pl reads the others from where the kernel tree has them.
files=(scripts/checkpatch.pl scripts/spelling.txt scripts/const_structs.checkpatch
       Documentation/dev-tools/checkpatch.rst)

die() { echo "kernel-checkpatch.sh: error: $*" >&2; exit 2; }

fetch() {
    local deb
    command -v apt-get >/dev/null || die "apt-get not found (Debian 12 is required)"
    mkdir -p "$repo/build"
    tmp=$(mktemp -d "$repo/build/.kernel-checkpatch.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    echo "kernel-checkpatch.sh: getting checkpatch.pl from $pkg (apt-get download) into $dir" >&2
    if ! (cd "$tmp" && apt-get download -q "$pkg") >"$tmp/apt-get.log" 2>&1; then
        cat "$tmp/apt-get.log" >&2
        die "'apt-get download $pkg' failed; 'apt-get update' (make deps) first"
    fi
    deb=$(echo "$tmp/$pkg"_*.deb)
    dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$pkg.tar.xz" | xz -dc |
        tar -x -C "$tmp" --strip-components=1 "${files[@]/#/$pkg/}" ||
        die "$deb has no ${files[*]}"
    echo "$pkg $(dpkg-deb -f "$deb" Version)" >"$tmp/SOURCE"
    rm -f "$deb" "$tmp/apt-get.log"
    chmod 755 "$tmp"
    # Another run may have been quicker: keep its copy.
    mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
}

[ -f "$dir/SOURCE" ] || fetch
exec perl "$dir/scripts/checkpatch.pl" "$@"
