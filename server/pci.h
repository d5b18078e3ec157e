/*
 * rdma-sim-server: the PCI function a vfio-user client sees - its
 * configuration space (the same identity, BARs and MSI-X capability as
 * the device built into QEMU) and its regions
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef RDMA_SIM_SERVER_PCI_H
#define RDMA_SIM_SERVER_PCI_H

#include <stdbool.h>
#include <stdint.h>
#include "vfio-user.h"

/* Conventional PCI: 256 bytes of configuration space */
#define VFU_PCI_CONFIG_SIZE     256
/* Where the MSI-X capability is, as QEMU places the first one */
#define VFU_PCI_MSIX_CAP        0x40
/* The MSI-X BAR, as QEMU's msix_init_exclusive_bar() lays it out */
#define VFU_PCI_MSIX_BAR_SIZE   4096
#define VFU_PCI_MSIX_PBA_OFFSET 2048

typedef struct VfuPci {
    uint8_t config[VFU_PCI_CONFIG_SIZE];
    uint64_t bar_size[6];       /* 0: no BAR */
    unsigned msix_vectors;
} VfuPci;

/*
 * The function of a device with db_pages doorbell pages and msix_vectors
 * MSI-X vectors (the device's properties, already in their ranges)
 */
void vfu_pci_init(VfuPci *pci, unsigned db_pages, unsigned msix_vectors);

/* DEVICE_GET_REGION_INFO's answer for region index (false: none such) */
bool vfu_pci_region_info(const VfuPci *pci, uint32_t index,
                         struct vfu_region_info *info);

/*
 * Configuration space accesses, anywhere and of any size inside it (the
 * caller has checked offset + len against VFU_PCI_CONFIG_SIZE): a write
 * changes only the bits the function lets software change.
 */
void vfu_pci_config_read(const VfuPci *pci, uint32_t offset, void *buf,
                         uint32_t len);
void vfu_pci_config_write(VfuPci *pci, uint32_t offset, const void *buf,
                          uint32_t len);

#endif /* RDMA_SIM_SERVER_PCI_H */
