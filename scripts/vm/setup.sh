# shellcheck shell=bash disable=SC2034,SC2153  # the settings: harness.sh; the VM_* results: read by the other parts
# scripts/vm/setup.sh - a run's set-up: QEMU and the kernels checked, the
# run directory, each guest's environment and QEMU command line.
# Sourced by scripts/vm/harness.sh, after the settings it defines.

# vm_check_qemu BINARY VARIABLE: BINARY (from VARIABLE) can run our guests.
vm_check_qemu() {
    local q=$1 var=$2
    if [[ ! -x $q ]]; then
        if [[ $q == "$VM_DEFAULT_QEMU" ]]; then
            vm_die "QEMU not built: $q is missing. Run 'make' (builds QEMU $GEN_DEFAULT_QEMU with rdma-sim), or set $var=/path/to/qemu-system-x86_64"
        fi
        vm_die "QEMU binary '$q' not found or not executable (set $var)"
    fi
    # grep -c reads all of it: grep -q would leave QEMU a SIGPIPE, a
    # failure under pipefail
    # (that device's help alone: -device help loads every module, and a
    # QEMU run from another tree, such as scripts/qemu-debian.sh's, may
    # find the host's QEMU's modules in its compiled-in directory)
    if ! "$q" -device virtio-9p-pci,help 2>/dev/null | grep -c 'fsdev=' > /dev/null; then
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
        VM_SSHD=$("$VM_LIB_DIR/openssh.sh") || vm_die "no sshd for the guests (scripts/vm/openssh.sh, above)"
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
# gINDEX/results/guest.env (read by scripts/vm/guest-runner in the guest),
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
        echo "# written by scripts/vm/harness.sh; sourced by scripts/vm/guest-runner"
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
    local -a server=()
    if [[ -n $VM_NIC ]]; then
        local nic=$VM_NIC mac=52:54:00:5e:00:0$((i + 1))
        if ((i == 1)) && [[ -n ${VM_NIC_B:-} ]]; then nic=$VM_NIC_B; fi
        if [[ ${nic%%,*} == rdma-sim-server ]]; then
            # rdma-sim out of process: an rdma-sim-server on the link,
            # QEMU's vfio-user client to it (QOM id rsimdev, for QMP's
            # device_del), the guest's memory shared
            local sock=$g/rdma-sim-server.sock prop
            server=("$VM_REPO/build/server/rdma-sim-server" --once --socket "$sock"
                --netdev "$netdev" --mac "$mac" -d guest_errors)
            if [[ $nic == *,* ]]; then
                local -a props
                IFS=, read -r -a props <<<"${nic#*,}"
                for prop in "${props[@]}"; do server+=("--$prop"); done
            fi
            [[ -x ${server[0]} ]] || vm_die "${server[0]} not built: run 'make server'"
            cmd+=(-object "memory-backend-memfd,id=rsimmem,size=${VM_MEM}M,share=on"
                -machine memory-backend=rsimmem
                -device "{\"driver\":\"vfio-user-pci\",\"id\":\"rsimdev\",\"socket\":{\"type\":\"unix\",\"path\":\"$sock\"}}")
        else
            cmd+=(-netdev "$netdev" -device "$nic,netdev=net0,mac=$mac")
        fi
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
        if ((${#server[@]} > 0)); then
            # the device's server first (it ends when QEMU goes: --once),
            # then QEMU once the server listens
            printf 'rm -f %q\n' "$sock"
            printf '%q ' "${server[@]}"
            printf '>%q 2>&1 &\n' "$g/server.log"
            # shellcheck disable=SC2016  # for qemu.sh to expand
            printf 'for _ in $(seq 100); do [ -S %q ] && break; sleep 0.05; done\n' "$sock"
        fi
        printf 'exec'
        # VM_LINK=bridge: QEMU runs in its simulated host's namespace, where its tap is
        [[ -z ${VM_GUEST_NETNS[i]:-} ]] || printf ' ip netns exec %q' "${VM_GUEST_NETNS[i]}"
        printf ' %q' "${cmd[@]}"
        printf ' "$@"\n'
    } >"$g/qemu.sh"
    chmod +x "$g/qemu.sh"
}
