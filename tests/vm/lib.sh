# shellcheck shell=bash
# tests/vm/lib.sh - host side of the rdma-sim VM test harness.
#
# Source it from bash (tests/vm/vm, tests/vm/t-*.sh, scripts/rdma-sim-vm).
# It boots Debian's own kernel in TCG guests whose user space is this host's
# root filesystem (read-only over virtio-9p, tmpfs overlay on top), runs a
# guest script and returns its status. See tests/vm/README.md.
#
# Settings (environment):
#   QEMU         QEMU binary (default: $QEMU_BINARY, else the default
#                generation's, build/qemu-VERSION-build/qemu-system-x86_64:
#                configs/generations)
#   ACCEL        QEMU accelerator (default: tcg; nested KVM hangs on our machines)
#   VM_MEM       guest memory in MiB (default 1024)
#   VM_SMP       guest vCPUs (default 1)
#   VM_MACHINE   QEMU machine type (default q35)
#   VM_CPU       QEMU -cpu model (default: QEMU's default for the accelerator)
#   VM_TIMEOUT   seconds for a whole run, boot to power off (default 300)
#   VM_APPEND    extra guest kernel command line
#   VM_NIC       NIC model on the guests' link (default: virtio-net-pci for
#                two guests or more, none for one; "" = none)
#   VM_LINK      how the guests' NICs are joined: udp (a point-to-point UDP
#                socket pair; two guests only), mcast (one QEMU multicast
#                socket group on 127.0.0.1: a hub for up to 8 guests), bridge
#                (root: tap devices on a Linux bridge in network namespaces
#                the run creates, see VM_HOSTS) or auto (default: udp for two
#                guests, mcast for more)
#   VM_HOSTS     VM_LINK=bridge: simulated hosts (default 1), each a network
#                namespace with its own bridge; more than one are joined by
#                VXLAN over a veth underlay. Guest i is on host i % VM_HOSTS + 1.
#   VM_UNDERLAY_MTU  VM_LINK=bridge: the underlay's MTU (default 1500); with
#                VXLAN the guests' segment has 50 bytes less (the guests'
#                interfaces get that MTU)
#   VM_NETIF     guest test interface: auto | driver:NAME | NAME (default auto)
#   VM_KEEP      1: keep the run directory even when the run passed
#   VM_SSH       1: every guest runs sshd on its test interface, and root
#                logs in from one guest to another with the run's key
#                (Debian's sshd, unpacked by tests/vm/openssh.sh, not run on
#                this host)
#   VM_VERBOSE   1: stream the guests' serial consoles to the terminal
#   VM_RUNS_DIR  where run directories go (default: $RDMA_SIM_LOGDIR, which
#                make check sets, else build/vm-runs)
#   VM_CACHE     guest kernel cache (default build/guest)
#   GUEST_ABI    guest kernel ABI, e.g. 6.1.0-57-amd64, or a kernel series
#                (6.1, 6.12, 7.3): its newest amd64 ABI in apt's lists or
#                Debian's newer suites (scripts/guest-kernel.sh; default: the
#                default generation's series, configs/generations)
#   QEMU_B       guest B's QEMU binary, when it is not QEMU's (mixed pairs:
#                one QEMU version against another)
#   GUEST_ABI_B  guest B's kernel, when it is not GUEST_ABI's (as GUEST_ABI:
#                an ABI or a series); modules for it: --module-b
#   VM_QMP       1: every guest's QEMU gets its QMP socket at RUN/gN/qmp.sock
#                (--qmp); else in a directory of its own in /tmp, removed
#                after the run: the harness reads the devices' state through
#                it when a run fails (vm_save_devices).

VM_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VM_REPO=$(cd "$VM_LIB_DIR/../.." && pwd)
# The guest kernels: which ABI, fetching one, its module build tree
# shellcheck source=scripts/guest-kernel.sh
. "$VM_REPO/scripts/guest-kernel.sh"
VM_CACHE=${VM_CACHE:-$VM_REPO/build/guest}
# make check (scripts/check.sh) gives each test a log directory and the QEMU binary.
VM_RUNS_DIR=${VM_RUNS_DIR:-${RDMA_SIM_LOGDIR:-$VM_REPO/build/vm-runs}}
VM_DEFAULT_QEMU=$VM_REPO/build/qemu-$GEN_DEFAULT_QEMU-build/qemu-system-x86_64
QEMU=${QEMU:-${QEMU_BINARY:-$VM_DEFAULT_QEMU}}
QEMU_B=${QEMU_B:-}
GUEST_ABI_B=${GUEST_ABI_B:-}
ACCEL=${ACCEL:-tcg}
VM_MEM=${VM_MEM:-1024}
VM_SMP=${VM_SMP:-1}
VM_MACHINE=${VM_MACHINE:-q35}
VM_CPU=${VM_CPU:-}
VM_TIMEOUT=${VM_TIMEOUT:-300}
VM_APPEND=${VM_APPEND:-}
VM_KEEP=${VM_KEEP:-0}
VM_VERBOSE=${VM_VERBOSE:-0}
VM_LINK=${VM_LINK:-auto}
VM_SSH=${VM_SSH:-0}
VM_QMP=${VM_QMP:-0}
VM_QMP_DIR=
VM_HOSTS=${VM_HOSTS:-1}
VM_UNDERLAY_MTU=${VM_UNDERLAY_MTU:-1500}
# What VXLAN over IPv4 adds to a guest frame within the underlay's MTU: the
# guest frame's own Ethernet header 14 (now payload) + IPv4 20 + UDP 8 +
# VXLAN 8 bytes
VM_VXLAN_OVERHEAD=50
VM_FABRIC_NS=() VM_GUEST_NETNS=() VM_LINK_MTU=
# Guests per run: one letter each (vm_guest_letter), 10.0.0.1-8 on the link.
VM_MAX_GUESTS=8

# Modules the initramfs needs to mount the host root. Their dependencies
# (virtio_ring, virtio, virtio_pci_*_dev, netfs, fscache, 9pnet) come from
# modules.dep; modules built into the kernel are skipped.
VM_INITRD_MODULES=(virtio_pci 9pnet_virtio 9p overlay)

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
# root + tests/vm/guest-init as /init, for ABI (default VM_ABI). Rebuilt when
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

# vm_check_qemu BINARY VARIABLE: BINARY (from VARIABLE) can run our guests.
vm_check_qemu() {
    local q=$1 var=$2
    if [[ ! -x $q ]]; then
        if [[ $q == "$VM_DEFAULT_QEMU" ]]; then
            vm_die "QEMU not built: $q is missing. Run 'make' (builds QEMU $GEN_DEFAULT_QEMU with rdma-sim), or set $var=/path/to/qemu-system-x86_64"
        fi
        vm_die "QEMU binary '$q' not found or not executable (set $var)"
    fi
    if ! "$q" -device help 2>/dev/null | grep -q '"virtio-9p-pci"'; then
        vm_die "$q has no virtio-9p (VirtFS): rebuild it with libcap-ng-dev and libattr1-dev installed (run 'make deps')"
    fi
}

# Makes sure the kernels, their modules, the initramfs and QEMU (guest B's
# too, if it has its own) are there.
vm_prepare() {
    vm_resolve_abi
    vm_build_initramfs "$VM_ABI"
    [[ $VM_ABI_B == "$VM_ABI" ]] || vm_build_initramfs "$VM_ABI_B"
    vm_check_qemu "$QEMU" QEMU
    [[ -z $QEMU_B ]] || vm_check_qemu "$QEMU_B" QEMU_B
}

# Two free UDP ports on 127.0.0.1 (printed as "P1 P2"). Chosen at random and
# checked against the sockets in use; a clash between two runs starting at
# the same instant is unlikely and shows up as a QEMU bind error.
vm_free_udp_ports() {
    local used p ports=()
    used=$(ss -Hulna 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }')
    while ((${#ports[@]} < 2)); do
        p=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
        grep -qx "$p" <<<"$used" && continue
        [[ " ${ports[*]} " == *" $p "* ]] && continue
        ports+=("$p")
    done
    echo "${ports[@]}"
}

vm_quote() { # words quoted for bash, space-separated (nothing for no words)
    if (($#)); then printf '%q ' "$@"; fi
}

vm_guest_letter() { local l=(A B C D E F G H); echo "${l[$1]}"; }

# vm_fabric_up N: VM_LINK=bridge's network, for N guests: per simulated host
# a namespace with a bridge br0 and guest i's tap device tapI on it; with
# several hosts, each also has a VXLAN device (VNI 42, UDP 4789) on br0 whose
# underlay is a veth (ul0, 192.168.200.K/24) into a namespace with one bridge
# joining all hosts, the "physical network". Unknown and broadcast frames go
# to every other host (head-end replication); the others' MACs are learnt.
# Sets VM_FABRIC_NS (namespaces, removed by vm_fabric_down), VM_GUEST_NETNS
# (each guest's) and VM_LINK_MTU (the segment's).
vm_fabric_up() {
    [[ $(id -u) == 0 ]] ||
        vm_die "VM_LINK=bridge needs root (network namespaces, bridges, tap devices); VM_LINK=mcast does not"
    [[ $VM_HOSTS =~ ^[1-8]$ ]] || vm_die "VM_HOSTS must be 1 to 8, not '$VM_HOSTS'"
    if [[ ! $VM_UNDERLAY_MTU =~ ^[0-9]+$ ]] || ((VM_UNDERLAY_MTU < 1280 || VM_UNDERLAY_MTU > 65535)); then
        vm_die "VM_UNDERLAY_MTU must be 1280 to 65535, not '$VM_UNDERLAY_MTU'"
    fi
    vm_need ip iproute2
    vm_need bridge iproute2
    VM_LINK_MTU=$VM_UNDERLAY_MTU
    ((VM_HOSTS == 1)) || VM_LINK_MTU=$((VM_UNDERLAY_MTU - VM_VXLAN_OVERHEAD))
    VM_FABRIC_NS=() VM_GUEST_NETNS=()
    # Whatever ends this shell from here on (an error while the guests are
    # set up, Ctrl-C) removes the namespaces; vm_run_guests takes over.
    trap vm_fabric_down EXIT
    trap 'exit 130' INT TERM
    vm_fabric_build "$1" "rsim-${VM_RUN_DIR##*/}" >"$VM_RUN_DIR/fabric.log" 2>&1 || {
        cat "$VM_RUN_DIR/fabric.log" >&2
        vm_fabric_down
        vm_die "could not build the bridge/VXLAN network (log above): does this kernel have veth, bridge, vxlan and tun?"
    }
    vm_log "network: $VM_HOSTS host(s) (${VM_FABRIC_NS[*]}), segment MTU $VM_LINK_MTU"
}

# vm_fabric_build N ID: the commands of vm_fabric_up (namespaces ID-net,
# ID-h1, ID-h2...); returns 1 at the first that fails.
vm_fabric_build() {
    local n=$1 id=$2 hosts=$VM_HOSTS k j i ns ul=$2-net
    if ((hosts > 1)); then
        vm_fabric_ns "$ul" &&
            ip -n "$ul" link add br0 type bridge &&
            ip -n "$ul" link set br0 up || return 1
    fi
    for ((k = 1; k <= hosts; k++)); do
        ns=$id-h$k
        vm_fabric_ns "$ns" &&
            ip -n "$ns" link add br0 mtu "$VM_LINK_MTU" type bridge &&
            ip -n "$ns" link set br0 up || return 1
        ((hosts > 1)) || continue
        ip -n "$ns" link add ul0 mtu "$VM_UNDERLAY_MTU" type veth peer name "h$k" mtu "$VM_UNDERLAY_MTU" netns "$ul" &&
            ip -n "$ul" link set "h$k" master br0 up &&
            ip -n "$ns" addr add "192.168.200.$k/24" dev ul0 &&
            ip -n "$ns" link set ul0 up &&
            ip -n "$ns" link add vxlan0 mtu "$VM_LINK_MTU" type vxlan id 42 dstport 4789 \
                local "192.168.200.$k" dev ul0 &&
            ip -n "$ns" link set vxlan0 master br0 up || return 1
        for ((j = 1; j <= hosts; j++)); do
            ((j == k)) || bridge -n "$ns" fdb append 00:00:00:00:00:00 dev vxlan0 dst "192.168.200.$j" ||
                return 1
        done
    done
    for ((i = 0; i < n; i++)); do
        ns=$id-h$((i % hosts + 1))
        VM_GUEST_NETNS[i]=$ns
        ip -n "$ns" tuntap add dev "tap$i" mode tap &&
            ip -n "$ns" link set "tap$i" mtu "$VM_LINK_MTU" master br0 up || return 1
    done
}

# vm_fabric_ns NAME: a new network namespace with lo up, in VM_FABRIC_NS.
vm_fabric_ns() {
    ip netns add "$1" && VM_FABRIC_NS+=("$1") && ip -n "$1" link set lo up
}

# vm_fabric_down: removes the namespaces of vm_fabric_up, and with them
# their devices; each one's device counters go to RUN/fabric-NS.json first
# (`ip -s -j link show`: what crossed the bridges and the tunnel).
vm_fabric_down() {
    local ns
    for ns in "${VM_FABRIC_NS[@]}"; do
        if [[ -d ${VM_RUN_DIR:-} ]]; then
            ip -n "$ns" -s -j link show >"$VM_RUN_DIR/fabric-$ns.json" 2>/dev/null || true
        fi
        ip netns del "$ns" 2>/dev/null || true
    done
    VM_FABRIC_NS=()
}

# vm_link_netdevs N: prints the -netdev argument of each of N guests' test
# link, one per line (N >= 1; one guest gets a link to nowhere).
vm_link_netdevs() {
    local n=$1 link=$VM_LINK i ports=()
    if [[ $link == auto ]]; then
        if ((n > 2)); then link=mcast; else link=udp; fi
    fi
    [[ $link == bridge ]] || read -r -a ports <<<"$(vm_free_udp_ports)"
    case $link in
    bridge)
        for ((i = 0; i < n; i++)); do
            echo "tap,id=net0,ifname=tap$i,script=no,downscript=no"
        done
        ;;
    udp)
        ((n <= 2)) || vm_die "VM_LINK=udp joins two guests, not $n: use VM_LINK=mcast"
        echo "socket,id=net0,udp=127.0.0.1:${ports[1]},localaddr=127.0.0.1:${ports[0]}"
        echo "socket,id=net0,udp=127.0.0.1:${ports[0]},localaddr=127.0.0.1:${ports[1]}"
        ;;
    mcast)
        # Every member gets every frame, its own too (rdma-sim drops those;
        # virtio-net hands them to the guest's stack).
        # A random group and port keep runs at the same time apart.
        local group=239.255.$((RANDOM % 256)).$((RANDOM % 254 + 1))
        for ((i = 0; i < n; i++)); do
            echo "socket,id=net0,mcast=$group:${ports[0]},localaddr=127.0.0.1"
        done
        ;;
    *) vm_die "VM_LINK must be auto, udp, mcast or bridge, not '$VM_LINK'" ;;
    esac
}

# vm_setup_run NAME NGUESTS: creates the run directory and sets the
# per-run defaults (VM_RUN_DIR). Options are taken from these variables,
# which the caller sets (see vm_parse_opt):
#   VM_SCRIPTS[]    guest script per guest (a single one is used by all guests;
#                   none: interactive shell)
#   VM_NIC          NIC model for the test link ('' = none; default virtio-net-pci
#                   when there are 2 guests)
#   VM_NIC_B        NIC model of guest B if it differs (interop runs)
#   VM_NETIF        guest interface spec: auto | driver:NAME | NAME
#   VM_KOS[]        modules (paths) to insmod in each guest, dependencies first
#   VM_KOS_B[]      guest B's modules instead of VM_KOS (needed when B boots
#                   another kernel: modules are built for one)
#   VM_MODPROBE[]   modules to modprobe in each guest
#   VM_DEVICES[]    extra -device arguments for each guest
#   VM_QEMU_ARGS[]  extra raw QEMU arguments for each guest
#   VM_QEMU_ARGS_A[] extra raw QEMU arguments for guest A only (e.g. a
#                   filter-dump of its link, which B would write too)
#   VM_QEMU_ARGS_B[] ... for guest B only (e.g. its own -initrd)
vm_setup_run() {
    local name=$1 n=$2
    ((n >= 1 && n <= VM_MAX_GUESTS)) || vm_die "a run has 1 to $VM_MAX_GUESTS guests, not $n"
    [[ $VM_HOSTS == 1 || $VM_LINK == bridge ]] ||
        vm_die "VM_HOSTS (--hosts) simulates hosts joined by VXLAN: it needs VM_LINK=bridge (--link bridge)"
    VM_SSHD=
    if [[ $VM_SSH == 1 ]]; then
        VM_SSHD=$("$VM_LIB_DIR/openssh.sh") || vm_die "no sshd for the guests (tests/vm/openssh.sh, above)"
    fi
    mkdir -p "$VM_RUNS_DIR"
    VM_RUN_DIR=$(mktemp -d "$VM_RUNS_DIR/$name.$(date +%Y%m%d-%H%M%S).XXXX")
    if [[ -n $VM_SSHD ]]; then
        mkdir -p "$VM_RUN_DIR/ssh"
        ssh-keygen -q -t ed25519 -N '' -C "rdma-sim run ${VM_RUN_DIR##*/}" -f "$VM_RUN_DIR/ssh/id" ||
            vm_die "ssh-keygen failed: install openssh-client (make deps)"
    fi
    VM_NGUESTS=$n
    if [[ -z ${VM_NIC+set} ]]; then
        if ((n > 1)); then VM_NIC=virtio-net-pci; else VM_NIC=; fi
    fi
    VM_NETIF=${VM_NETIF:-auto}
    local i abi netdevs=()
    vm_resolve_abi
    if ((n > 1)) && [[ $VM_ABI_B != "$VM_ABI" ]] && ((${#VM_KOS[@]} > 0 && ${#VM_KOS_B[@]} == 0)); then
        vm_die "guest B boots Linux $VM_ABI_B and guest A $VM_ABI: a module is built for one kernel; give guest B's modules with --module-b (VM_KOS_B)"
    fi
    VM_GUEST_NETNS=() VM_LINK_MTU=
    # tsc=reliable: a TCG guest's TSC is the host's TSC, but the boot-time
    # watchdog, run while the vCPU is descheduled, sometimes calls it
    # unstable: that guest then reads the time from acpi_pm, a port read
    # that waits for the BQL.  Guests of one run then kept different clocks;
    # perftest, which calibrates its cycle counter against gettimeofday(),
    # twice failed to in a bench sweep (r^2 < 0.9).  Only on a host whose
    # TSC is invariant.
    # tsc_early_khz: the guest kernel calibrates the TSC against the PIT,
    # and a vCPU descheduled during the calibration measures nonsense: in
    # a cluster of four guests beside a build, one measured 56.9 MHz for
    # the host's 2695 ("PIT calibration deviates from PMTIMER"), its clock
    # ran 47 times too fast and its script's time limit expired in 12 s.
    # The host knows the frequency; the guest's later refinement keeps it
    # unless it finds it more than 1% off.
    VM_CLOCK=
    if grep -qw constant_tsc /proc/cpuinfo && grep -qw nonstop_tsc /proc/cpuinfo; then
        VM_CLOCK=tsc=reliable
        local khz
        khz=$(vm_host_tsc_khz)
        [[ -z $khz ]] || VM_CLOCK+=" tsc_early_khz=$khz"
    fi
    if [[ -n $VM_NIC ]]; then
        mapfile -t netdevs < <(vm_link_netdevs "$n")
        ((${#netdevs[@]} >= n)) || exit 1
        [[ $VM_LINK != bridge ]] || vm_fabric_up "$n"
    fi
    for ((i = 0; i < n; i++)); do
        abi=$(vm_guest_abi "$i")
        vm_write_guest "$i" "$abi" "$(vm_kernel_dir "$abi")" "$(vm_guest_qemu "$i")" "${netdevs[i]:-}"
    done
}

# vm_host_tsc_khz: the host's TSC frequency in kHz, as its kernel found it
# at boot (the refined calibration if it made one); nothing if the kernel
# log does not say (it may have been overwritten, or be restricted).
vm_host_tsc_khz() {
    local mhz
    # one read of the log; a refined calibration comes after the first
    mhz=$(dmesg 2>/dev/null | sed -n -e 's/.*tsc: Detected \([0-9.]*\) MHz processor.*/\1/p' \
        -e 's/.*tsc: Refined TSC clocksource calibration: \([0-9.]*\) MHz.*/\1/p' | tail -n 1)
    [[ $mhz =~ ^[0-9]+\.[0-9]{3}$ ]] || return 0
    echo "$((10#${mhz%.*} * 1000 + 10#${mhz#*.}))"
}

# vm_write_guest INDEX ABI KDIR QEMU [NETDEV]: writes
# gINDEX/results/guest.env (read by tests/vm/guest-runner in the guest),
# gINDEX/results/qemu-version (the version of the QEMU binary that boots it)
# and gINDEX/qemu.sh (boots the guest; extra QEMU arguments given to it are
# appended, e.g. -serial ...).
vm_write_guest() {
    local i=$1 abi=$2 kdir=$3 qemu=$4 netdev=${5:-}
    local g=$VM_RUN_DIR/g$i letter script ip='' peer='' peers=() role qver j
    letter=$(vm_guest_letter "$i")
    qver=$(vm_qemu_version "$qemu")
    mkdir -p "$g/results"
    if ((${#VM_SCRIPTS[@]} == 0)); then
        script=
    elif ((${#VM_SCRIPTS[@]} == 1)); then
        script=${VM_SCRIPTS[0]}
    else
        script=${VM_SCRIPTS[$i]:-}
        [[ -n $script ]] || vm_die "no script for guest $letter"
    fi
    if [[ -n $script ]]; then
        [[ -f $script ]] || vm_die "guest script not found: $script"
        script=$(realpath "$script")
    fi
    if ((i == 0)); then role=server; else role=client; fi
    if [[ -n $VM_NIC ]]; then
        ip=10.0.0.$((i + 1))/24
        if ((VM_NGUESTS == 2)); then peer=10.0.0.$((2 - i)); fi
        for ((j = 0; j < VM_NGUESTS; j++)); do
            ((j == i)) || peers+=("10.0.0.$((j + 1))")
        done
    fi
    local ko kos=() kos_in=("${VM_KOS[@]}")
    if ((i == 1 && ${#VM_KOS_B[@]} > 0)); then kos_in=("${VM_KOS_B[@]}"); fi
    for ko in "${kos_in[@]}"; do
        [[ -f ${ko%% *} ]] || vm_die "module not found: ${ko%% *}"
        kos+=("$(realpath "${ko%% *}")${ko#"${ko%% *}"}")
    done
    local cols=80 rows=24
    if [[ -n ${VM_TERM_SIZE:-} ]]; then # COLSxROWS of the terminal the console goes to
        cols=${VM_TERM_SIZE%x*} rows=${VM_TERM_SIZE#*x}
    elif [[ -t 1 ]]; then
        cols=$(tput cols 2>/dev/null || echo 80)
        rows=$(tput lines 2>/dev/null || echo 24)
    fi
    {
        echo "# written by tests/vm/lib.sh; sourced by tests/vm/guest-runner"
        printf 'RSIM_INDEX=%q\n' "$i"
        printf 'RSIM_NAME=%q\n' "$letter"
        printf 'RSIM_ROLE=%q\n' "$role"
        printf 'RSIM_NGUESTS=%q\n' "$VM_NGUESTS"
        printf 'RSIM_HOSTNAME=%q\n' "rsim-${letter,,}"
        printf 'RSIM_ABI=%q\n' "$abi"
        printf 'RSIM_QEMU=%q\n' "$qemu"
        printf 'RSIM_QEMU_VERSION=%q\n' "$qver"
        printf 'RSIM_REPO=%q\n' "$VM_REPO"
        printf 'RSIM_SCRIPT=%q\n' "$script"
        printf 'RSIM_TIMEOUT=%q\n' "$((VM_TIMEOUT > 60 ? VM_TIMEOUT - 20 : VM_TIMEOUT * 2 / 3))"
        printf 'RSIM_IP=%q\n' "$ip"
        printf 'RSIM_PEER=%q\n' "$peer"
        printf 'RSIM_PEERS=%q\n' "${peers[*]}"
        printf 'RSIM_LINK_MTU=%q\n' "$VM_LINK_MTU"
        printf 'RSIM_SSHD=%q\n' "$VM_SSHD"
        printf 'RSIM_HOST_SAVES_DEVICE=%q\n' "${VM_SAVES_DEVICES:-1}"
        printf 'RSIM_SSH_KEY=%q\n' "${VM_SSHD:+$VM_RUN_DIR/ssh/id}"
        printf 'RSIM_NETIF_SPEC=%q\n' "$VM_NETIF"
        printf 'RSIM_KOS=(%s)\n' "$(vm_quote "${kos[@]}")"
        printf 'RSIM_MODPROBE=(%s)\n' "$(vm_quote "${VM_MODPROBE[@]}")"
        printf 'RSIM_TERM_COLS=%q\nRSIM_TERM_ROWS=%q\nRSIM_TERM=%q\n' "$cols" "$rows" "${TERM:-vt220}"
        local e
        for e in "${VM_ENVS[@]}"; do
            [[ $e =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || vm_die "--env wants NAME=VALUE, not '$e'"
            printf 'export %s=%q\n' "${e%%=*}" "${e#*=}"
        done
    } >"$g/results/guest.env"
    echo "$qver" >"$g/results/qemu-version"

    # no_timer_check: under TCG on a loaded host the kernel's check that the
    # 8254 timer ticks through the IO-APIC can miss its window, and the boot
    # panics ("8254 timer not connected to IO-APIC"; seen once here).
    local -a cmd=(
        "$qemu" -accel "$ACCEL" -machine "$VM_MACHINE" -m "$VM_MEM" -smp "$VM_SMP"
        -nodefaults -no-reboot -display none -name "rsim-$letter"
        -kernel "$(vm_kernel_image "$abi")"
        -initrd "$kdir/initramfs.cpio"
        -append "console=ttyS0,115200 panic=-1 mitigations=off no_timer_check $VM_CLOCK loglevel=4 rsim.runner=$VM_LIB_DIR/guest-runner rsim.kmods=$kdir/root/lib/modules/$abi rsim.abi=$abi $VM_APPEND"
        -virtfs "local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap"
        -virtfs "local,path=$g/results,mount_tag=results,security_model=none"
    )
    if [[ -n $VM_CPU ]]; then cmd+=(-cpu "$VM_CPU"); fi
    if [[ -n $VM_NIC ]]; then
        cmd+=(-netdev "$netdev")
        local nic=$VM_NIC
        if ((i == 1)) && [[ -n ${VM_NIC_B:-} ]]; then nic=$VM_NIC_B; fi
        cmd+=(-device "$nic,netdev=net0,mac=52:54:00:5e:00:0$((i + 1))")
    fi
    local d
    for d in "${VM_DEVICES[@]}"; do cmd+=(-device "$d"); done
    cmd+=("${VM_QEMU_ARGS[@]}")
    if ((i == 0)); then cmd+=("${VM_QEMU_ARGS_A[@]}"); fi
    if ((i == 1)); then cmd+=("${VM_QEMU_ARGS_B[@]}"); fi
    {
        echo "#!/bin/bash"
        echo "# Boots guest $letter of this run; arguments are appended to QEMU's."
        echo "# Interactive: $g/qemu.sh -serial mon:stdio   (Ctrl-a x quits)"
        printf 'exec'
        # VM_LINK=bridge: QEMU runs in its simulated host's namespace, where its tap is
        [[ -z ${VM_GUEST_NETNS[i]:-} ]] || printf ' ip netns exec %q' "${VM_GUEST_NETNS[i]}"
        printf ' %q' "${cmd[@]}"
        printf ' "$@"\n'
    } >"$g/qemu.sh"
    chmod +x "$g/qemu.sh"
}

# Option parsing shared by tests/vm/vm and scripts/rdma-sim-vm.
# vm_parse_opt OPT [VALUE]: handles one option; returns the number of words used
# through VM_OPT_SHIFT (0 = not a harness option).
vm_init_opts() {
    VM_SCRIPTS=() VM_KOS=() VM_KOS_B=() VM_MODPROBE=() VM_DEVICES=() VM_QEMU_ARGS=() VM_QEMU_ARGS_A=() VM_QEMU_ARGS_B=() VM_ENVS=()
}
vm_init_opts

# shellcheck disable=SC2034  # VM_OPT_SHIFT is for the caller
vm_parse_opt() {
    VM_OPT_SHIFT=2
    local need=${2+x}
    case $1 in
    -s | --script) VM_SCRIPTS+=("${2-}") ;;
    -k | --module) VM_KOS+=("${2-}") ;;
    --module-b) VM_KOS_B+=("${2-}") ;;
    -M | --modprobe) VM_MODPROBE+=("${2-}") ;;
    -d | --device) VM_DEVICES+=("${2-}") ;;
    -e | --env) VM_ENVS+=("${2-}") ;;
    -q | --qemu-arg) VM_QEMU_ARGS+=("${2-}") ;;
    --qemu-arg-a) VM_QEMU_ARGS_A+=("${2-}") ;;
    --qemu-arg-b) VM_QEMU_ARGS_B+=("${2-}") ;;
    --nic) VM_NIC=${2-}; [[ $VM_NIC == none ]] && VM_NIC= ;;
    --nic-b) VM_NIC_B=${2-} ;;
    --netif) VM_NETIF=${2-} ;;
    --link) VM_LINK=${2-} ;;
    --hosts) VM_HOSTS=${2-} ;;
    -m | --memory) VM_MEM=${2-} ;;
    -a | --accel) ACCEL=${2-} ;;
    -t | --timeout) VM_TIMEOUT=${2-} ;;
    --qemu) QEMU=${2-} ;;
    --qemu-b) QEMU_B=${2-} ;;
    --abi-b) GUEST_ABI_B=${2-} ;;
    --keep) VM_KEEP=1; VM_OPT_SHIFT=1; return ;;
    --ssh) VM_SSH=1; VM_OPT_SHIFT=1; return ;;
    --qmp) VM_QMP=1; VM_OPT_SHIFT=1; return ;;
    -v | --verbose) VM_VERBOSE=1; VM_OPT_SHIFT=1; return ;;
    *) VM_OPT_SHIFT=0; return ;;
    esac
    [[ -n $need ]] || vm_die "option $1 needs a value"
}

# shellcheck disable=SC2034  # printed by tests/vm/vm and scripts/rdma-sim-vm
VM_OPTS_HELP='  -s, --script PATH   guest script (give one per guest, A then B; one given runs in all)
  -k, --module PATH   insmod this module in each guest (its dependencies are modprobed
                      first); "PATH param=value..." passes parameters
      --module-b PATH a module for guest B instead of the -k ones (repeatable);
                      needed when B boots another kernel (--abi-b)
  -M, --modprobe MOD  modprobe MOD in each guest (repeatable)
      --nic MODEL     QEMU NIC on the host UDP link, e.g. virtio-net-pci or rdma-sim
                      (default: virtio-net-pci with 2 guests, none with 1; "none")
      --nic-b MODEL   a different NIC for guest B (e.g. rdma-sim on A and
                      virtio-net-pci on B for interop runs)
      --netif SPEC    guest test interface: auto (first non-lo NIC), driver:NAME, or a name
      --link KIND     how the NICs of the guests are joined (env VM_LINK): udp (two guests),
                      mcast (a hub for up to 8, no root), bridge (root: tap devices
                      on Linux bridges in network namespaces), auto (default:
                      udp for two guests, mcast for more)
      --hosts N       --link bridge: N simulated hosts joined by VXLAN (env
                      VM_HOSTS, default 1); guest i on host i % N + 1
  -e, --env NAME=VAL  set an environment variable for the guest scripts (repeatable)
  -d, --device ARGS   extra "-device ARGS" for each guest (repeatable)
  -q, --qemu-arg ARG  extra raw QEMU argument for each guest (repeatable)
      --qemu-arg-a ARG  the same for guest A only (repeatable)
      --qemu-arg-b ARG  the same for guest B only (repeatable)
  -m, --memory MIB    guest memory (env VM_MEM, default 1024)
  -a, --accel ACCEL   QEMU accelerator (env ACCEL, default tcg)
  -t, --timeout SEC   limit for the whole run (env VM_TIMEOUT, default 300)
      --qemu PATH     QEMU binary (env QEMU, default: the default generation,
                      build/qemu-VERSION-build/qemu-system-x86_64)
      --qemu-b PATH   the QEMU binary of guest B (env QEMU_B, default: --qemu)
      --abi-b ABI     the kernel ABI or series of guest B (env GUEST_ABI_B,
                      default: GUEST_ABI)
      --keep          keep the run directory even on success (env VM_KEEP=1)
      --qmp           a QMP socket for the QEMU of every guest: RUN/gN/qmp.sock (env VM_QMP=1)
      --ssh           sshd in every guest: root logs in from one guest to another
                      with the key of the run, e.g. ssh rsim-b (env VM_SSH=1)
  -v, --verbose       stream the serial consoles to the terminal (env VM_VERBOSE=1)'

vm_show_tail() { # vm_show_tail FILE LABEL
    echo "---- last 30 lines of $2 ($1) ----" >&2
    tail -n 30 "$1" 2>/dev/null | tr -d '\r' >&2
    echo "----" >&2
}

# vm_run_guests: boots the prepared guests of VM_RUN_DIR with serial consoles
# in gN/serial.log, waits for all with the VM_TIMEOUT limit and returns 0 if
# every guest script exited 0. A guest that fails ends the others after a
# short grace period. Logs are kept on failure, removed on success.
vm_run_guests() {
    local n=$VM_NGUESTS i g start now deadline rc=0 letter
    local -a exited=() tails=() killed=() adopted=()
    local p succ
    VM_PIDS=()
    # The guests' QMP sockets, unless --qmp asked for RUN/gN/qmp.sock: a
    # short path (a run dir's is often past the 107 bytes of a socket's).
    VM_QMP_DIR=
    if [[ $VM_QMP != 1 ]]; then VM_QMP_DIR=$(mktemp -d /tmp/rsim-qmp.XXXXXX); fi
    # Ends what we started if we are interrupted.
    trap 'for p in "${VM_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; vm_fabric_down; rm -rf "$VM_QMP_DIR"' EXIT
    trap 'exit 130' INT TERM
    start=$(date +%s.%N)
    deadline=$(($(date +%s) + VM_TIMEOUT))
    for ((i = 0; i < n; i++)); do
        g=$VM_RUN_DIR/g$i
        : >"$g/serial.log"
        "$g/qemu.sh" -serial "file:$g/serial.log" -qmp "unix:$(vm_qmp_socket "$i"),server=on,wait=off" \
            </dev/null >"$g/qemu.log" 2>&1 &
        VM_PIDS[i]=$!
        exited[i]=
        if [[ $VM_VERBOSE == 1 ]]; then
            # Follows the console until that QEMU exits.
            letter=$(vm_guest_letter "$i")
            tail -n +1 -F --pid="${VM_PIDS[i]}" "$g/serial.log" 2>/dev/null |
                sed -u "s/\r\$//; s/^/$letter| /" >&2 &
            tails+=($!)
        fi
    done

    local remaining=$n fail_at='' failed_first='' timed_out=0 st saved=''
    while ((remaining > 0)); do
        for ((i = 0; i < n; i++)); do
            [[ -n ${exited[i]} ]] && continue
            # A guest that failed waits for this before it powers off. Its
            # status file is read only once it exists: no subshell per guest
            # on every round of this loop.
            if [[ -z $saved && -s $VM_RUN_DIR/g$i/results/status &&
                $(<"$VM_RUN_DIR/g$i/results/status") != 0 ]]; then
                vm_save_devices "guest $(vm_guest_letter "$i") failed"
                saved=1
            fi
            if ! kill -0 "${VM_PIDS[i]}" 2>/dev/null; then
                if [[ -n ${adopted[i]:-} ]]; then
                    exited[i]=0 # not our child: its status is results/status
                elif wait "${VM_PIDS[i]}"; then exited[i]=0; else exited[i]=$?; fi
                # A live migration moved the guest to another QEMU, which
                # whoever started it named in gN/successor.pid before the
                # source QEMU quit: the guest lives on there (t-migrate.sh).
                succ=$(cat "$VM_RUN_DIR/g$i/successor.pid" 2>/dev/null || true)
                if [[ -n $succ && $succ != "${adopted[i]:-}" ]] && kill -0 "$succ" 2>/dev/null; then
                    vm_log "guest $(vm_guest_letter "$i") goes on in QEMU PID $succ (migrated)"
                    VM_PIDS[i]=$succ adopted[i]=$succ exited[i]=
                    if [[ $VM_VERBOSE == 1 ]]; then # the console goes on in the same file
                        letter=$(vm_guest_letter "$i")
                        tail -n 0 -F --pid="$succ" "$VM_RUN_DIR/g$i/serial.log" 2>/dev/null |
                            sed -u "s/\r\$//; s/^/$letter| /" >&2 &
                        tails+=($!)
                    fi
                    continue
                fi
                remaining=$((remaining - 1))
                st=$(cat "$VM_RUN_DIR/g$i/results/status" 2>/dev/null || echo none)
                if [[ $st != 0 && -z $fail_at ]]; then
                    fail_at=$(($(date +%s) + 10)) # grace for the others, then stop them
                    failed_first=$(vm_guest_letter "$i")
                fi
            fi
        done
        ((remaining == 0)) && break
        now=$(date +%s)
        if ((now >= deadline)) || { [[ -n $fail_at ]] && ((now >= fail_at)); }; then
            if ((now >= deadline)); then timed_out=1; else timed_out=2; fi
            if [[ -z $saved ]]; then
                vm_save_devices "$(if ((timed_out == 1)); then echo "the run timed out"; else echo "guest $failed_first failed"; fi)"
                saved=1
            fi
            for ((i = 0; i < n; i++)); do
                [[ -n ${exited[i]} ]] && continue
                killed[i]=1
                : >"$VM_RUN_DIR/g$i/killed" # for vm_guests_never_up
                kill "${VM_PIDS[i]}" 2>/dev/null || true
            done
            sleep 1
            for ((i = 0; i < n; i++)); do
                [[ -n ${exited[i]} ]] || kill -9 "${VM_PIDS[i]}" 2>/dev/null || true
            done
            fail_at=$((now + 3600)) deadline=$((now + 3600)) # kill only once
        fi
        sleep 0.2
    done
    trap - EXIT INT TERM
    vm_fabric_down
    rm -rf "$VM_QMP_DIR"
    for p in "${tails[@]}"; do wait "$p" || true; done # they end with their QEMU
    local end
    end=$(date +%s.%N)

    local summary=() t_script
    for ((i = 0; i < n; i++)); do
        g=$VM_RUN_DIR/g$i
        letter=$(vm_guest_letter "$i")
        st=$(cat "$g/results/status" 2>/dev/null || true)
        t_script=
        if [[ -f $g/results/started ]]; then
            t_script=$(awk -v a="$start" -v b="$(stat -c %.3Y "$g/results/started")" 'BEGIN { printf "%.1f", b - a }')
        fi
        if [[ $st == 0 ]]; then
            summary+=("guest $letter: passed${t_script:+ (script started ${t_script}s after launch)}")
        else
            rc=1
            if [[ -z $st ]]; then
                if [[ -n ${killed[i]:-} ]] && ((timed_out == 1)); then
                    summary+=("guest $letter: TIMEOUT: killed after ${VM_TIMEOUT}s (VM_TIMEOUT)")
                elif [[ -n ${killed[i]:-} ]]; then
                    summary+=("guest $letter: STOPPED: still running 10s after guest $failed_first failed")
                else
                    summary+=("guest $letter: FAILED: no status reported (QEMU exit ${exited[i]}; guest crashed, failed to boot or was stopped)")
                fi
            elif [[ -s $g/results/error ]]; then
                summary+=("guest $letter: FAILED: $(cat "$g/results/error")")
            elif [[ $st == 124 ]]; then
                summary+=("guest $letter: FAILED: guest script timed out")
            else
                summary+=("guest $letter: FAILED: guest script exit status $st")
            fi
        fi
    done
    VM_RUN_SECONDS=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
    for ((i = 0; i < n; i++)); do vm_log "${summary[i]}"; done
    if ((rc != 0)); then
        for ((i = 0; i < n; i++)); do
            g=$VM_RUN_DIR/g$i
            [[ $(cat "$g/results/status" 2>/dev/null) == 0 ]] && continue
            vm_show_tail "$g/serial.log" "guest $(vm_guest_letter "$i") serial console"
            if [[ -s $g/qemu.log ]]; then
                vm_show_tail "$g/qemu.log" "guest $(vm_guest_letter "$i") QEMU messages"
            fi
        done
        vm_log "run FAILED after ${VM_RUN_SECONDS}s; logs kept in $VM_RUN_DIR"
        vm_log "  gN/serial.log: console; gN/results/output.log: script output;"
        vm_log "  'gN/qemu.sh -serial mon:stdio' boots that guest again on your terminal"
    elif [[ $VM_KEEP == 1 ]]; then
        vm_log "run passed in ${VM_RUN_SECONDS}s; logs kept in $VM_RUN_DIR"
    else
        vm_log "run passed in ${VM_RUN_SECONDS}s"
        rm -rf "$VM_RUN_DIR"
    fi
    return "$rc"
}

# vm_qmp_socket INDEX: prints the path of guest INDEX's QMP socket.
vm_qmp_socket() {
    if [[ $VM_QMP == 1 ]]; then
        echo "$VM_RUN_DIR/g$1/qmp.sock"
    else
        echo "$VM_QMP_DIR/g$1.sock"
    fi
}

# vm_save_devices WHY: when a run fails, what the rdma-sim device of every
# guest whose QEMU still runs says of itself (scripts/rdma-sim-top over
# QMP): first a few lines each in the log ("vm: device B: ..."), then it
# tells every guest that it is done (results/device-saved: a guest whose
# script failed waits for that before it powers off, so its device is
# seen as the failure left it), then the whole views, in
# gN/device-at-failure.txt. 30 s at most in all: a QEMU that does not
# answer (stuck, or its QMP socket held by another client such as
# tests/vm/qmp-migrate: a socket serves one at a time) is not waited for.
vm_save_devices() {
    local i g sock letter out line start=$SECONDS top=$VM_REPO/scripts/rdma-sim-top
    local -a answered=()
    vm_log "the devices' state when $1 (scripts/rdma-sim-top --brief):"
    for ((i = 0; i < VM_NGUESTS; i++)); do
        sock=$(vm_qmp_socket "$i")
        letter=$(vm_guest_letter "$i")
        if [[ ! -S $sock ]] || ! kill -0 "${VM_PIDS[i]}" 2>/dev/null; then continue; fi
        if ((SECONDS - start >= 30)); then
            vm_log "device $letter: not read: the report's 30 s are spent"
        elif out=$(timeout 10 python3 "$top" --brief --timeout 3 --rows 6 "$sock" 2>&1); then
            while IFS= read -r line; do vm_log "device $letter: $line"; done <<<"$out"
            answered[i]=1
        elif [[ $out != *"no rdma-sim device"* ]]; then
            vm_log "device $letter: not read: ${out#rdma-sim-top: }"
        fi
    done
    for ((i = 0; i < VM_NGUESTS; i++)); do
        : >"$VM_RUN_DIR/g$i/results/device-saved" 2>/dev/null || true
    done
    for i in "${!answered[@]}"; do
        ((SECONDS - start < 30)) || break
        g=$VM_RUN_DIR/g$i
        timeout 10 python3 "$top" --once --timeout 3 --rows 1000 "$(vm_qmp_socket "$i")" \
            >"$g/device-at-failure.txt" 2>&1 || true
    done
}

# vm_run NAME: prepare everything and run the guests (N = number of scripts,
# at least 1, unless VM_NGUESTS (-n) says how many).
vm_run() {
    local name=${1:-run} n=${VM_NGUESTS:-}
    [[ -n $n ]] || n=${#VM_SCRIPTS[@]}
    ((n >= 1)) || vm_die "vm run: no guest script given (-s PATH)"
    vm_prepare
    vm_setup_run "$name" "$n"
    vm_log "booting $n guest(s) with $(basename "$QEMU") -accel $ACCEL (limit ${VM_TIMEOUT}s); run dir $VM_RUN_DIR"
    local i
    for ((i = 0; i < n; i++)); do
        vm_log "guest $(vm_guest_letter "$i"): QEMU $(cat "$VM_RUN_DIR/g$i/results/qemu-version") ($(vm_guest_qemu "$i")), Linux $(vm_guest_abi "$i")"
    done
    local rc=0 hung old
    vm_run_guests || rc=$?
    ((rc != 0)) || return 0
    # A guest whose console never shows the guest runner hung in its kernel
    # or initramfs, before any step of the test and before our driver
    # loads: CI once saw a TCG guest print nothing in 80 s while its peer
    # booted in 10 s. That says nothing about what the run tests, so the
    # run boots again, once, in a new run dir that keeps the first one's
    # logs in boot-hang/. A second hang fails the run. Only a guest that
    # the harness had to kill counts, after a run of at least 60 s (a boot
    # takes 10): a QEMU that exited by itself (the device model aborting,
    # say) or a peer stopped 10 s after a guest failed quickly is a
    # failure of the run, not a hang.
    hung=$(vm_guests_never_up)
    [[ -n $hung && ${VM_BOOT_RETRY:-1} == 1 ]] || return "$rc"
    vm_log "guest(s) $hung never reached the guest runner (no \"rsim: \" line on the console; an \"rsim-init:\" line there says the kernel at least booted): a hang before any test step; booting the run again, once (VM_BOOT_RETRY=0: not)"
    old=$VM_RUN_DIR
    vm_setup_run "$name" "$n"
    mv "$old" "$VM_RUN_DIR/boot-hang"
    vm_log "run dir $VM_RUN_DIR (the hung run's logs: boot-hang/)"
    vm_run_guests
}

# vm_guests_never_up: prints the letters of the guests of VM_RUN_DIR that
# the harness killed and whose console has no line of tests/vm/guest-runner
# ("rsim: ..."), if the run lasted 60 s or more; else nothing.
vm_guests_never_up() {
    local i letters=()
    ((${VM_RUN_SECONDS%.*} >= 60)) || return 0
    for ((i = 0; i < VM_NGUESTS; i++)); do
        [[ -f $VM_RUN_DIR/g$i/killed ]] || continue
        grep -q '^rsim: ' "$VM_RUN_DIR/g$i/serial.log" 2>/dev/null ||
            letters+=("$(vm_guest_letter "$i")")
    done
    echo "${letters[*]}"
}
