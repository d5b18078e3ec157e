# shellcheck shell=bash disable=SC2034,SC2153  # the settings: harness.sh; the VM_* results: read by the other parts
# scripts/vm/common.sh - the VM harness's common ground: messages, the
# tools it needs, the kernel cache's lock, which kernel ABIs and QEMUs the
# guests run, quoting, guest letters.
# Sourced by scripts/vm/harness.sh, after the settings it defines.

vm_log() { echo "vm: $*" >&2; }
vm_die() { echo "vm: error: $*" >&2; exit 1; }

vm_need() { # vm_need CMD PACKAGE
    command -v "$1" >/dev/null 2>&1 ||
        vm_die "'$1' not found: install package $2 (run 'make deps', or apt-get install $2)"
}

# Takes an exclusive lock on the kernel cache for the rest of the calling
# subshell; parallel runs build the cache only once.
vm_lock_cache() {
    mkdir -p "$VM_CACHE"
    exec {VM_LOCK_FD}>"$VM_CACHE/.lock"
    flock "$VM_LOCK_FD"
}

# vm_abi [SPEC [NAME]]: prints the guest kernel ABI (e.g. 6.1.0-57-amd64)
# that SPEC (default: GUEST_ABI) names: an ABI, a series (6.12, 7.3) or
# nothing (the default); scripts/guest-kernel.sh abi. NAME is the variable
# SPEC came from, for error messages.
vm_abi() {
    (guest_kernel_abi "${1-${GUEST_ABI:-}}" "${2:-GUEST_ABI}") || exit 1
}

# Sets VM_ABI, and VM_ABI_B (guest B's: GUEST_ABI_B, else VM_ABI); once:
# apt-cache takes about a second.
vm_resolve_abi() {
    [[ -n ${VM_ABI:-} ]] || VM_ABI=$(vm_abi)
    if [[ -z ${VM_ABI_B:-} ]]; then
        if [[ -n $GUEST_ABI_B ]]; then
            VM_ABI_B=$(vm_abi "$GUEST_ABI_B" GUEST_ABI_B)
        else
            VM_ABI_B=$VM_ABI
        fi
    fi
}

# vm_guest_abi INDEX / vm_guest_qemu INDEX: the kernel ABI and the QEMU
# binary of guest INDEX (guest B, 1, may have its own).
vm_guest_abi() {
    if (($1 == 1)); then echo "$VM_ABI_B"; else echo "$VM_ABI"; fi
}
vm_guest_qemu() {
    if (($1 == 1)) && [[ -n $QEMU_B ]]; then echo "$QEMU_B"; else echo "$QEMU"; fi
}

# vm_qemu_version BINARY: its version, e.g. 7.2.22 ("QEMU emulator version
# 7.2.22 (...)" is the first line of --version).
vm_qemu_version() {
    "$1" --version 2>/dev/null | sed -n '1s/^QEMU emulator version \([^ ]*\).*/\1/p'
}

vm_quote() { # words quoted for bash, space-separated (nothing for no words)
    if (($#)); then printf '%q ' "$@"; fi
}

vm_guest_letter() { local l=(A B C D E F G H); echo "${l[$1]}"; }
