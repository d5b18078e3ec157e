/*
 * rdma-sim-server: the PCI function a vfio-user client sees
 *
 * Its configuration space is what QEMU builds for -device rdma-sim: the
 * same IDs, class and revision, no INTx, BAR0 (registers), BAR2
 * (doorbell pages) and BAR4 (the MSI-X table and PBA, laid out as QEMU's
 * msix_init_exclusive_bar() does), and one capability, MSI-X.  A vfio-user
 * client (QEMU's vfio-user-pci) emulates the BAR registers, the MSI-X
 * table and the capability's control word itself, from what it reads
 * here; of the writes it forwards, only the command register's bits a
 * conventional function implements are kept.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "platform.h"
#include "hw/rdma-sim/rdma_sim_hw.h"
#include "pci.h"

/* PCI configuration space offsets and bits (the PCI Local Bus spec) */
enum {
    CFG_VENDOR_ID = 0x00,
    CFG_DEVICE_ID = 0x02,
    CFG_COMMAND = 0x04,
    CFG_STATUS = 0x06,
    CFG_REVISION = 0x08,
    CFG_CLASS_PROG = 0x09,
    CFG_CLASS_DEVICE = 0x0a,
    CFG_HEADER_TYPE = 0x0e,
    CFG_BAR0 = 0x10,
    CFG_SUBSYS_VENDOR_ID = 0x2c,
    CFG_SUBSYS_ID = 0x2e,
    CFG_CAP_LIST = 0x34,
    CFG_INTERRUPT_PIN = 0x3d,
};
/* I/O, memory, bus master, parity, SERR, INTx disable */
#define CMD_WRITABLE    0x0547
#define STATUS_CAP_LIST 0x0010
#define CAP_ID_MSIX     0x11
#define BAR_MEM32       0x0     /* memory, 32-bit, not prefetchable */

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = v;
    p[1] = v >> 8;
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, v);
    put16(p + 2, v >> 16);
}

void vfu_pci_init(VfuPci *pci, unsigned db_pages, unsigned msix_vectors)
{
    uint8_t *c = pci->config, *cap = c + VFU_PCI_MSIX_CAP;

    memset(pci, 0, sizeof(*pci));
    pci->msix_vectors = msix_vectors;
    pci->bar_size[RSIM_BAR_REGS] = RSIM_REGS_SIZE;
    /* BAR sizes are powers of two, as rdma-sim.c makes BAR2 */
    pci->bar_size[RSIM_BAR_DOORBELL] = pow2ceil(db_pages) * RSIM_DB_PAGE_SIZE;
    pci->bar_size[RSIM_BAR_MSIX] = VFU_PCI_MSIX_BAR_SIZE;

    put16(c + CFG_VENDOR_ID, RSIM_PCI_VENDOR_ID);
    put16(c + CFG_DEVICE_ID, RSIM_PCI_DEVICE_ID);
    put16(c + CFG_STATUS, STATUS_CAP_LIST);
    c[CFG_REVISION] = RSIM_PCI_REVISION;
    c[CFG_CLASS_PROG] = 0;
    put16(c + CFG_CLASS_DEVICE, RSIM_PCI_CLASS);
    c[CFG_HEADER_TYPE] = 0;
    for (unsigned bar = 0; bar < 6; bar++) {
        put32(c + CFG_BAR0 + 4 * bar, BAR_MEM32);
    }
    put16(c + CFG_SUBSYS_VENDOR_ID, RSIM_PCI_SUBSYS_VENDOR_ID);
    put16(c + CFG_SUBSYS_ID, RSIM_PCI_SUBSYS_ID);
    c[CFG_CAP_LIST] = VFU_PCI_MSIX_CAP;
    c[CFG_INTERRUPT_PIN] = 0;

    /* MSI-X: table at BAR4 offset 0, PBA at its upper half */
    cap[0] = CAP_ID_MSIX;
    cap[1] = 0;
    put16(cap + 2, msix_vectors - 1);
    put32(cap + 4, 0 | RSIM_BAR_MSIX);
    put32(cap + 8, VFU_PCI_MSIX_PBA_OFFSET | RSIM_BAR_MSIX);
}

bool vfu_pci_region_info(const VfuPci *pci, uint32_t index,
                         struct vfu_region_info *info)
{
    memset(info, 0, sizeof(*info));
    info->argsz = sizeof(*info);
    info->index = index;
    if (index == VFU_PCI_CONFIG) {
        info->size = VFU_PCI_CONFIG_SIZE;
    } else if (index <= 5) {
        info->size = pci->bar_size[index];
    } else if (index >= VFU_PCI_NUM_REGIONS) {
        return false;
    }
    if (info->size) {
        info->flags = VFU_REGION_READ_OK | VFU_REGION_WRITE_OK;
    }
    return true;
}

void vfu_pci_config_read(const VfuPci *pci, uint32_t offset, void *buf,
                         uint32_t len)
{
    memcpy(buf, pci->config + offset, len);
}

void vfu_pci_config_write(VfuPci *pci, uint32_t offset, const void *buf,
                          uint32_t len)
{
    const uint8_t *b = buf;

    /* byte by byte: only the command register's writable bits change */
    for (uint32_t i = 0; i < len; i++) {
        uint32_t at = offset + i;
        uint8_t mask;

        if (at == CFG_COMMAND || at == CFG_COMMAND + 1) {
            mask = CMD_WRITABLE >> (8 * (at - CFG_COMMAND));
            pci->config[at] = (pci->config[at] & ~mask) | (b[i] & mask);
        }
    }
}
