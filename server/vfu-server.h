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
    /*
     * DMA by messages (windows the client mapped without a descriptor):
     * the server's own requests' ids, a wait for a reply in progress, a
     * wait to end at once (a reset or a full deferred queue), a client
     * that failed a wait (no more requests: the connection ends), DMA
     * writes sent without a reply asked since the last reply (an
     * interrupt must not overtake them) and where the last one went
     */
    uint16_t next_id;
    bool waiting;
    bool abort_wait;
    bool broken;
    bool posted;
    uint64_t fence_addr;
    unsigned dma_timeout_ms;    /* a DMA request's reply must come within */
    GQueue deferred;            /* what arrived during a wait, to apply */
    guint deferred_src;         /* the idle source that applies it */
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

/*
 * The device raises MSI-X vector v (no eventfd: nothing happens), after
 * the DMA writes sent before it reached the client's memory
 */
void vfu_server_msix(VfuServer *v, unsigned vector);

/* The DMA window holding addr, or NULL (valid until the next message) */
const VfuDmaWindow *vfu_server_dma_window(VfuServer *v, uint64_t addr);

/*
 * A DMA transfer of len bytes at addr, inside a window the client mapped
 * without a descriptor, through DMA_READ/DMA_WRITE messages: 0, or
 * -errno (outside such a window, refused by the client, no reply in
 * time, a reply that does not match).  While it waits for a reply the
 * server answers the client's messages that need not the device
 * (configuration space, register reads, DMA windows, interrupts) and
 * keeps the rest (BAR writes, a reset) for vfu_server_run_deferred().
 */
int vfu_server_dma_msg(VfuServer *v, uint64_t addr, void *buf, uint64_t len,
                       bool write);

/*
 * Apply what arrived while the device waited for a DMA reply, in order:
 * after the device's step, from the main loop (an idle source does it)
 */
void vfu_server_run_deferred(VfuServer *v);

#endif /* RDMA_SIM_SERVER_VFU_SERVER_H */
