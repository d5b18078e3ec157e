/*
 * rdma-sim-server: the vfio-user protocol, as QEMU's
 * docs/interop/vfio-user.rst specifies it (version 0.x) - the messages a
 * server of one PCI device receives and sends, and the limits this server
 * holds its clients to
 *
 * Every message is a 16-byte header and a payload; file descriptors come
 * as SCM_RIGHTS beside it.  All integers are in the host's byte order
 * (the protocol runs on one host).  The payload structures are the
 * specification's tables; their sizes are checked below at build time.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef RDMA_SIM_SERVER_VFIO_USER_H
#define RDMA_SIM_SERVER_VFIO_USER_H

#include <stdint.h>

/* The protocol version this server speaks (QEMU 10.1 to 11.1 propose 0.0) */
#define VFU_MAJOR               0
#define VFU_MINOR               1

/* Commands (the specification's "Commands" table) */
enum vfu_command {
    VFU_VERSION = 1,
    VFU_DMA_MAP = 2,
    VFU_DMA_UNMAP = 3,
    VFU_DEVICE_GET_INFO = 4,
    VFU_DEVICE_GET_REGION_INFO = 5,
    VFU_DEVICE_GET_REGION_IO_FDS = 6,
    VFU_DEVICE_GET_IRQ_INFO = 7,
    VFU_DEVICE_SET_IRQS = 8,
    VFU_REGION_READ = 9,
    VFU_REGION_WRITE = 10,
    VFU_DMA_READ = 11,
    VFU_DMA_WRITE = 12,
    VFU_DEVICE_RESET = 13,
    VFU_REGION_WRITE_MULTI = 15,
    VFU_DEVICE_FEATURE = 16,
    VFU_MIG_DATA_READ = 17,
    VFU_MIG_DATA_WRITE = 18,
    VFU_COMMAND_MAX = VFU_MIG_DATA_WRITE,
};

struct vfu_header {
    uint16_t id;                /* echoed in the reply */
    uint16_t command;           /* enum vfu_command */
    uint32_t size;              /* of the whole message, header included */
    uint32_t flags;             /* VFU_F_* */
    uint32_t error;             /* a reply's errno; 0 in a command */
};
#define VFU_HEADER_SIZE         16
#define VFU_F_TYPE_MASK         0xfu
#define VFU_F_TYPE_COMMAND      0x0u
#define VFU_F_TYPE_REPLY        0x1u
#define VFU_F_NO_REPLY          (1u << 4)
#define VFU_F_ERROR             (1u << 5)

/* VERSION: then a NUL-terminated JSON object of capabilities */
struct vfu_version {
    uint16_t major;
    uint16_t minor;
};

/* DMA_MAP (a file descriptor beside it when the memory is shared) */
struct vfu_dma_map {
    uint32_t argsz;
    uint32_t flags;             /* VFU_DMA_READ_OK | VFU_DMA_WRITE_OK */
    uint64_t offset;            /* into the file descriptor */
    uint64_t address;           /* the guest's DMA address */
    uint64_t size;
};
#define VFU_DMA_READ_OK         (1u << 0)
#define VFU_DMA_WRITE_OK        (1u << 1)

/* DMA_UNMAP: the reply is the request */
struct vfu_dma_unmap {
    uint32_t argsz;
    uint32_t flags;             /* 0, or VFU_DMA_UNMAP_ALL (address, size 0) */
    uint64_t address;
    uint64_t size;
};

#define VFU_DMA_UNMAP_ALL       (1u << 1)

/* DEVICE_GET_INFO */
struct vfu_device_info {
    uint32_t argsz;
    uint32_t flags;             /* VFU_DEVICE_RESET_OK | VFU_DEVICE_PCI */
    uint32_t num_regions;
    uint32_t num_irqs;
};
#define VFU_DEVICE_RESET_OK     (1u << 0)
#define VFU_DEVICE_PCI          (1u << 1)

/* DEVICE_GET_REGION_INFO, as Linux's struct vfio_region_info */
struct vfu_region_info {
    uint32_t argsz;
    uint32_t flags;             /* VFU_REGION_* */
    uint32_t index;
    uint32_t cap_offset;
    uint64_t size;
    uint64_t offset;
};
#define VFU_REGION_READ_OK      (1u << 0)
#define VFU_REGION_WRITE_OK     (1u << 1)
#define VFU_REGION_MMAP         (1u << 2)
#define VFU_REGION_CAPS         (1u << 3)

/* A PCI device's region indices (Linux's VFIO_PCI_*_REGION_INDEX) */
enum vfu_pci_region {
    VFU_PCI_BAR0 = 0,           /* BAR0 .. BAR5 are 0 .. 5 */
    VFU_PCI_ROM = 6,
    VFU_PCI_CONFIG = 7,
    VFU_PCI_VGA = 8,
    VFU_PCI_NUM_REGIONS = 9,
};

/* DEVICE_GET_IRQ_INFO, as Linux's struct vfio_irq_info */
struct vfu_irq_info {
    uint32_t argsz;
    uint32_t flags;             /* VFU_IRQ_INFO_* */
    uint32_t index;
    uint32_t count;
};
#define VFU_IRQ_INFO_EVENTFD    (1u << 0)
#define VFU_IRQ_INFO_MASKABLE   (1u << 1)
#define VFU_IRQ_INFO_AUTOMASKED (1u << 2)
#define VFU_IRQ_INFO_NORESIZE   (1u << 3)

/* A PCI device's interrupt indices (Linux's VFIO_PCI_*_IRQ_INDEX) */
enum vfu_pci_irq {
    VFU_PCI_INTX = 0,
    VFU_PCI_MSI = 1,
    VFU_PCI_MSIX = 2,
    VFU_PCI_ERR = 3,
    VFU_PCI_REQ = 4,
    VFU_PCI_NUM_IRQS = 5,
};

/* DEVICE_SET_IRQS, as Linux's struct vfio_irq_set; then the data */
struct vfu_irq_set {
    uint32_t argsz;
    uint32_t flags;             /* a VFU_IRQ_DATA_* and a VFU_IRQ_ACTION_* */
    uint32_t index;
    uint32_t start;
    uint32_t count;
};
#define VFU_IRQ_DATA_NONE       (1u << 0)
#define VFU_IRQ_DATA_BOOL       (1u << 1)
#define VFU_IRQ_DATA_EVENTFD    (1u << 2)
#define VFU_IRQ_DATA_MASK       0x7u
#define VFU_IRQ_ACTION_MASK     (1u << 3)
#define VFU_IRQ_ACTION_UNMASK   (1u << 4)
#define VFU_IRQ_ACTION_TRIGGER  (1u << 5)
#define VFU_IRQ_ACTION_ALL      0x38u

/* REGION_READ and REGION_WRITE; then the data */
struct vfu_region_access {
    uint64_t offset;
    uint32_t region;
    uint32_t count;
};

/* DMA_READ and DMA_WRITE (the server's commands); then the data */
struct vfu_dma_access {
    uint64_t address;
    uint64_t count;
};

/*
 * This server's limits, offered in its VERSION reply and enforced on every
 * message it receives: a message larger than VFU_MAX_MESSAGE, a transfer
 * larger than VFU_MAX_XFER, more than VFU_MAX_FDS descriptors or more
 * than VFU_MAX_DMA_MAPS windows is refused.  Its own DMA_READ/DMA_WRITE
 * requests move at most the smaller of VFU_MAX_XFER and the client's
 * max_data_xfer_size each.  It offers no write_multiple
 * (so a client sends no REGION_WRITE_MULTI) and no twin socket.
 */
#define VFU_MAX_XFER            (1u << 20)      /* the protocol's default */
#define VFU_MAX_MESSAGE         (VFU_HEADER_SIZE + 16 + VFU_MAX_XFER)
#define VFU_MAX_FDS             8
#define VFU_MAX_DMA_MAPS        1024
/*
 * BAR writes and resets that arrive while the device waits for a DMA reply
 * are kept to apply after its step: at most this many, then the wait ends
 * at once (the DMA fails) so that they can be applied
 */
#define VFU_MAX_DEFERRED        1024
/*
 * The reply to one of the server's DMA requests must arrive within this
 * (QEMU's own wait for a reply, x-msg-timeout, defaults to as long): a
 * client that does not answer fails the transfer and is disconnected
 */
#define VFU_DMA_TIMEOUT_MS      5000
/* The capabilities JSON of a VERSION message, terminating NUL included */
#define VFU_MAX_CAPS            4096
#define VFU_PAGE_SIZE           4096

_Static_assert(sizeof(struct vfu_header) == VFU_HEADER_SIZE, "header");
_Static_assert(sizeof(struct vfu_version) == 4, "version");
_Static_assert(sizeof(struct vfu_dma_map) == 32, "dma_map");
_Static_assert(sizeof(struct vfu_dma_unmap) == 24, "dma_unmap");
_Static_assert(sizeof(struct vfu_device_info) == 16, "device_info");
_Static_assert(sizeof(struct vfu_region_info) == 32, "region_info");
_Static_assert(sizeof(struct vfu_irq_info) == 16, "irq_info");
_Static_assert(sizeof(struct vfu_irq_set) == 20, "irq_set");
_Static_assert(sizeof(struct vfu_region_access) == 16, "region_access");
_Static_assert(sizeof(struct vfu_dma_access) == 16, "dma_access");

#endif /* RDMA_SIM_SERVER_VFIO_USER_H */
