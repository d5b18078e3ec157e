# shellcheck shell=bash disable=SC2034,SC2153  # the settings: harness.sh; the VM_* results: read by the other parts
# scripts/vm/options.sh - the options scripts/vm/vm and scripts/rdma-sim-vm
# share.
# Sourced by scripts/vm/harness.sh, after the settings it defines.

# Option parsing shared by scripts/vm/vm and scripts/rdma-sim-vm.
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

# shellcheck disable=SC2034  # printed by scripts/vm/vm and scripts/rdma-sim-vm
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
