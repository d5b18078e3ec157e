/*
 * rdma-sim-server: one vfio-user connection - receiving a client's
 * messages, answering them for the PCI function, its memory and its
 * interrupts
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef RDMA_SIM_SERVER_VFU_SERVER_H
#define RDMA_SIM_SERVER_VFU_SERVER_H

#include "device.h"
#include "pci.h"
#include "vfu-msg.h"

/* What the device behind the function does with its BARs and a reset */
typedef struct VfuDeviceOps {
    /* An access of len (1, 2, 4 or 8) bytes at offset of BAR bar */
    uint64_t (*bar_read)(void *opaque, unsigned bar, uint64_t offset,
                         unsigned len);
    void (*bar_write)(void *opaque, unsigned bar, uint64_t offset,
                      uint64_t val, unsigned len);
    void (*reset)(void *opaque);
} VfuDeviceOps;

/* A window of the client's memory (DMA_MAP) */
typedef struct VfuDmaWindow {
    uint64_t address, size;
    uint32_t prot;              /* VFU_DMA_READ_OK | VFU_DMA_WRITE_OK */
    uint8_t *map;               /* mapped from the client's fd, or NULL */
} VfuDmaWindow;

typedef struct VfuServer {
    int fd;                     /* the connection, -1 when none */
    bool negotiated;            /* VERSION done */
    VfuCaps caps;               /* the client's */
    VfuPci pci;
    GArray *dma;                /* VfuDmaWindow, at most VFU_MAX_DMA_MAPS */
    int msix_fd[RDMA_SIM_MAX_MSIX];     /* eventfds, -1: none */
    int err_fd;                 /* the error interrupt's: never signalled */
    const VfuDeviceOps *ops;
    void *opaque;
    uint64_t errors;            /* messages refused */
    /* a message's payload must arrive within this after its header */
    unsigned recv_timeout_ms;
    int64_t log_sec;            /* the log's rate limit: this second's */
    unsigned log_count;         /* lines */
} VfuServer;

void vfu_server_init(VfuServer *v, const VfuDeviceOps *ops, void *opaque,
                     unsigned db_pages, unsigned msix_vectors);
/* A client connected on fd: the server owns it now */
void vfu_server_attach(VfuServer *v, int fd);
/*
 * The connection is readable: receive and answer one message.  Returns
 * false when the connection ended (closed by the client, or by the
 * server for a message it cannot read past); the server is then free for
 * the next client.
 */
bool vfu_server_receive(VfuServer *v);
void vfu_server_detach(VfuServer *v);

/* The device raises MSI-X vector v (no eventfd: nothing happens) */
void vfu_server_msix(VfuServer *v, unsigned vector);

#endif /* RDMA_SIM_SERVER_VFU_SERVER_H */
