# shellcheck shell=bash
# scripts/vm/harness.sh - host side of the rdma-sim VM harness, which the
# VM tests, make bench, make demo and scripts/rdma-sim-vm run guests with.
#
# Source it from bash (scripts/vm/vm, scripts/rdma-sim-vm).  It defines the
# settings below and sources its parts, one concern each:
#   common.sh   messages, tools, the cache lock, kernel ABIs and QEMUs
#   kernel.sh   Debian's kernels in the cache, vmlinux, the initramfs
#   fabric.sh   the network between the guests (UDP, multicast, bridges, VXLAN)
#   setup.sh    a run's directory, each guest's environment and QEMU command
#   options.sh  the command-line options of scripts/vm/vm and rdma-sim-vm
#   run.sh      the run loop: boot, watch, end, read the devices at a failure
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
#                (Debian's sshd, unpacked by scripts/vm/openssh.sh, not run on
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

# The parts, in the order they build on one another.
# shellcheck source=scripts/vm/common.sh
. "$VM_LIB_DIR/common.sh"
# shellcheck source=scripts/vm/kernel.sh
. "$VM_LIB_DIR/kernel.sh"
# shellcheck source=scripts/vm/fabric.sh
. "$VM_LIB_DIR/fabric.sh"
# shellcheck source=scripts/vm/setup.sh
. "$VM_LIB_DIR/setup.sh"
# shellcheck source=scripts/vm/options.sh
. "$VM_LIB_DIR/options.sh"
# shellcheck source=scripts/vm/run.sh
. "$VM_LIB_DIR/run.sh"
