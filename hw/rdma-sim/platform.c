/*
 * rdma-sim: the platform interface's services as QEMU gives them - DMA to
 * and from guest memory, MSI-X interrupts, the guest error log and the
 * user log, the device's bottom halves, the VM's run state, the NIC's
 * frames and link state
 *
 * The ground floor of the device: every other file may call these, and
 * they call nothing of the device's but its status (a device stopped by a
 * fatal error does no more DMA).  The device core's unit tests implement
 * the same functions without QEMU (tests/unit/host.c); platform.h says
 * what else the core takes from its host.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/pci/msix.h"
#include "device.h"
#include "trace.h"

void rdma_sim_guest_error(RdmaSimState *s, const char *what, const char *fmt,
                          ...)
{
    g_autofree char *text = NULL;
    va_list ap;

    va_start(ap, fmt);
    text = rdma_sim_guest_error_text(s, what,
                                     qemu_clock_get_ms(QEMU_CLOCK_REALTIME) /
                                     1000, fmt, ap);
    va_end(ap);
    if (text) {
        qemu_log_mask(LOG_GUEST_ERROR, "%s", text);
    }
}

void rdma_sim_msix_notify(RdmaSimState *s, unsigned vector)
{
    PCIDevice *pci = PCI_DEVICE(s);

    if (vector < s->props.msix_vectors && msix_enabled(pci)) {
        trace_rdma_sim_irq(vector);
        msix_notify(pci, vector);
    }
}

/*
 * One DMA transfer, refused for an address range that wraps or a stopped
 * device; a failure is traced, and the caller says what it means.
 */
static MemTxResult rdma_sim_dma_rw(RdmaSimState *s, dma_addr_t addr,
                                   void *buf, dma_addr_t len, DMADirection dir)
{
    MemTxResult r;

    if (rdma_sim_dma_refused(s, addr, len)) {
        return MEMTX_DECODE_ERROR;
    }
    r = pci_dma_rw(PCI_DEVICE(s), addr, buf, len, dir, MEMTXATTRS_UNSPECIFIED);
    if (r != MEMTX_OK) {
        trace_rdma_sim_dma_error(dir == DMA_DIRECTION_TO_DEVICE ? "read" :
                                 "write", addr, len);
    }
    return r;
}

MemTxResult rdma_sim_dma_read(RdmaSimState *s, dma_addr_t addr, void *buf,
                              dma_addr_t len)
{
    return rdma_sim_dma_rw(s, addr, buf, len, DMA_DIRECTION_TO_DEVICE);
}

MemTxResult rdma_sim_dma_write(RdmaSimState *s, dma_addr_t addr,
                               const void *buf, dma_addr_t len)
{
    /* pci_dma_write() drops the const the same way: nothing writes buf */
    return rdma_sim_dma_rw(s, addr, (void *)buf, len,
                           DMA_DIRECTION_FROM_DEVICE);
}

QEMUBH *rdma_sim_bh_new_named(RdmaSimState *s, QEMUBHFunc *cb,
                              const char *name)
{
    /* an MMIO access by the device's own DMA does not re-enter it */
    return qemu_bh_new_full(cb, s, name, &DEVICE(s)->mem_reentrancy_guard);
}

/* The network: the NIC that net.c set up */

void rdma_sim_net_send(RdmaSimState *s, const uint8_t *frame, size_t len)
{
    if (s->nic) {
        qemu_send_packet(qemu_get_queue(s->nic), frame, len);
    }
}

/* The port can take frames again: QEMU hands over what it queued */
void rdma_sim_net_rx_ready(RdmaSimState *s)
{
    if (s->nic) {
        qemu_flush_queued_packets(qemu_get_queue(s->nic));
    }
}

void rdma_sim_net_reset(RdmaSimState *s)
{
    if (s->nic) {
        qemu_purge_queued_packets(qemu_get_queue(s->nic));
    }
}

bool rdma_sim_link_up(RdmaSimState *s)
{
    return s->nic && !qemu_get_queue(s->nic)->link_down;
}

bool rdma_sim_vm_running(void)
{
    return runstate_is_running();
}

void rdma_sim_log(const char *fmt, ...)
{
    g_autofree char *msg = NULL;
    va_list ap;

    if (!qemu_loglevel_mask(LOG_GUEST_ERROR)) {
        return;
    }
    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    qemu_log_mask(LOG_GUEST_ERROR, "%s", msg);
}
