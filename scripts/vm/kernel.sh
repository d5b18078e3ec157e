# shellcheck shell=bash disable=SC2034,SC2153  # the settings: harness.sh; the VM_* results: read by the other parts
# scripts/vm/kernel.sh - the guests' kernels: Debian's kernels in the cache
# (build/guest/ABI), vmlinux, the initramfs that mounts the host's root.
# Sourced by scripts/vm/harness.sh, after the settings it defines.

vm_kernel_dir() { echo "$VM_CACHE/$1"; }          # ABI -> cache dir of that kernel

# fetch-kernel [ABI]: the kernel image and modules of ABI (default VM_ABI)
# in build/guest/ABI/root, depmod run (scripts/guest-kernel.sh image). Done
# once per ABI.
vm_fetch_kernel() {
    local abi dir
    vm_resolve_abi
    abi=${1:-$VM_ABI}
    dir=$(vm_kernel_dir "$abi")
    [[ -e $dir/.fetched ]] && return 0
    (
        vm_lock_cache
        guest_kernel_image "$abi" "$dir"
    ) || exit 1
}

# vm_extract_vmlinux ABI: unpacks the ELF kernel from vmlinuz into vmlinux when the
# kernel can boot through PVH (CONFIG_PVH): QEMU then boots it directly, which saves
# the ~3 s the compressed kernel takes to decompress itself under TCG.
vm_extract_vmlinux() {
    local abi=$1 root img pos magic cmd positions
    root=$(vm_kernel_dir "$abi")/root
    img=$root/boot/vmlinuz-$abi
    [[ -f $root/boot/vmlinux.tried ]] && return 0
    rm -f "$root/boot/vmlinux"
    if grep -qx 'CONFIG_PVH=y' "$root/boot/config-$abi" 2>/dev/null; then
        for magic in '\xfd7zXZ\x00:xz -dc --single-stream' '\x28\xb5\x2f\xfd:zstd -qdc' '\x1f\x8b\x08\x00:gzip -dc'; do
            cmd=${magic#*:}
            command -v "${cmd%% *}" >/dev/null 2>&1 || continue
            mapfile -t positions < <(LC_ALL=C grep -obUaP "${magic%%:*}" "$img" 2>/dev/null | cut -d: -f1)
            for pos in "${positions[@]}"; do
                tail -c +$((pos + 1)) "$img" | $cmd >"$root/boot/vmlinux.tmp" 2>/dev/null
                if [[ $(head -c 4 "$root/boot/vmlinux.tmp" | od -An -tx1 | tr -d ' ') == 7f454c46 ]]; then
                    mv "$root/boot/vmlinux.tmp" "$root/boot/vmlinux"
                    break 2
                fi
            done
        done
        rm -f "$root/boot/vmlinux.tmp"
    fi
    touch "$root/boot/vmlinux.tried"
}

# vm_kernel_image ABI: the kernel file QEMU boots (VM_KERNEL=bzimage forces vmlinuz).
vm_kernel_image() {
    local root
    root=$(vm_kernel_dir "$1")/root
    if [[ ${VM_KERNEL:-} != bzimage && -f $root/boot/vmlinux ]]; then
        echo "$root/boot/vmlinux"
    else
        echo "$root/boot/vmlinuz-$1"
    fi
}

# Prints, in load order, the module files the initramfs must insmod.
vm_initrd_module_files() {
    local abi=$1 root line m
    root=$(vm_kernel_dir "$abi")/root
    declare -A seen=()
    for m in "${VM_INITRD_MODULES[@]}"; do
        # --show-depends prints "insmod PATH" in load order, "builtin NAME" if built in.
        modprobe -d "$root" -S "$abi" --show-depends "$m" ||
            vm_die "module $m not found for kernel $abi (in $root)"
    done | while read -r line; do
        case $line in
        insmod\ *)
            line=${line#insmod }
            line=${line%% *}
            [[ -n ${seen[$line]:-} ]] && continue
            seen[$line]=1
            echo "$line" ;;
        builtin\ *) ;;
        *) vm_die "unexpected modprobe output: $line" ;;
        esac
    done
}

# build-initramfs [ABI]: busybox-static + the modules that mount the host
# root + scripts/vm/guest-init as /init, for ABI (default VM_ABI). Rebuilt when
# guest-init or the kernel changes.
vm_build_initramfs() {
    local abi dir out
    vm_resolve_abi
    abi=${1:-$VM_ABI}
    dir=$(vm_kernel_dir "$abi")
    out=$dir/initramfs.cpio
    vm_fetch_kernel "$abi"
    if [[ -f $out && $out -nt $VM_LIB_DIR/guest-init && $out -nt $dir/.fetched && -f $dir/root/boot/vmlinux.tried ]]; then
        return 0
    fi
    vm_need busybox busybox-static
    vm_need cpio cpio
    vm_need modprobe kmod
    if ! dpkg-query -W -f '${Status}' busybox-static 2>/dev/null | grep -q 'ok installed'; then
        vm_die "busybox-static is not installed (the initramfs needs a static busybox): apt-get install busybox-static"
    fi
    (
        vm_lock_cache
        vm_extract_vmlinux "$abi"
        [[ -f $out && $out -nt $VM_LIB_DIR/guest-init && $out -nt $dir/.fetched ]] && exit 0
        vm_log "building initramfs for $abi"
        local tmp f name
        tmp=$(mktemp -d "$VM_CACHE/.initramfs.XXXXXX")
        trap 'rm -rf "$tmp"' EXIT
        mkdir -p "$tmp"/{bin,dev,proc,sys,lower,upper,newroot,modules}
        cp "$(command -v busybox)" "$tmp/bin/busybox"
        install -m 0755 "$VM_LIB_DIR/guest-init" "$tmp/init"
        : >"$tmp/modules/load-order"
        # busybox insmod cannot read compressed modules: store them decompressed.
        vm_initrd_module_files "$abi" >"$tmp/module-files" || exit 1
        while read -r f; do
            name=$(basename "$f")
            case $f in
            *.ko) cp "$f" "$tmp/modules/$name" ;;
            *.ko.xz) vm_need xz xz-utils; name=${name%.xz}; xz -dc "$f" >"$tmp/modules/$name" ;;
            *.ko.zst) vm_need zstd zstd; name=${name%.zst}; zstd -qdc "$f" >"$tmp/modules/$name" ;;
            *.ko.gz) name=${name%.gz}; gzip -dc "$f" >"$tmp/modules/$name" ;;
            *) vm_die "unknown module file type: $f" ;;
            esac
            echo "$name" >>"$tmp/modules/load-order"
        done <"$tmp/module-files"
        rm "$tmp/module-files"
        (cd "$tmp" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) >"$out.tmp" ||
            vm_die "cpio failed"
        mv "$out.tmp" "$out"
    ) || exit 1
}
