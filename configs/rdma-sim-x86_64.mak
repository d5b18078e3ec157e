# QEMU device configuration for the rdma-sim build of qemu-system-x86_64.
#
# Used with `configure --without-default-devices --with-devices-x86_64=rdma-sim`
# (scripts/qemu-tree.sh copies this file to configs/devices/x86_64-softmmu/rdma-sim.mak
# in the QEMU tree). In this mode Kconfig "default y" and "imply" are ignored:
# every device we want must be listed here; `select`ed dependencies follow
# automatically. Build with `make QEMU_DEVICES=default` to get all of QEMU's
# default devices instead.

# Machines: -M pc (i440fx) and -M q35
CONFIG_I440FX=y
CONFIG_Q35=y

# Our device
CONFIG_RDMA_SIM=y

# PCI(e) plumbing
CONFIG_PCIE_PORT=y

# Default devices of pc/q35, needed when -nodefaults is not given
CONFIG_VGA_PCI=y
CONFIG_PARALLEL=y

# Networking: virtio-net, e1000 (pc default NIC), e1000e (q35 default NIC)
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_NET=y
CONFIG_E1000_PCI=y
CONFIG_E1000E_PCI_EXPRESS=y

# Guest file system sharing (virtio-9p-pci) and other cheap virtio devices
CONFIG_VIRTIO_9P=y
CONFIG_VIRTIO_SERIAL=y
CONFIG_VIRTIO_BLK=y
CONFIG_VIRTIO_RNG=y

# Test helpers: isa-debug-exit (exit QEMU with a status), pvpanic
CONFIG_ISA_DEBUG=y
CONFIG_PVPANIC_ISA=y
