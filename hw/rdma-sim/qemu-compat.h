/*
 * rdma-sim: what differs between the QEMU versions the device builds into
 *
 * One device source builds into Debian 12's QEMU 7.2 and Debian 13's QEMU
 * 10.0.  Every API difference between the two is absorbed here, where
 * possible under the name the newer QEMU uses, so that the device's own
 * files have no version checks.  QEMU_VERSION_MAJOR comes from
 * config-host.h, which qemu/osdep.h includes.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_SIM_QEMU_COMPAT_H
#define HW_RDMA_SIM_QEMU_COMPAT_H

#include "hw/pci/pci.h"
#include "hw/qdev-core.h"

#if QEMU_VERSION_MAJOR >= 8
/* 8.0 moved PCIDevice and the DMA helpers out of pci.h */
#include "hw/pci/pci_device.h"
#endif

/* 10.0 has the system emulation headers in system/, 7.2 in sysemu/ */
#if QEMU_VERSION_MAJOR >= 10
#include "system/runstate.h"
#else
#include "sysemu/runstate.h"
#endif

#if QEMU_VERSION_MAJOR < 9
/*
 * 9.1 removed DeviceClass::reset; the device's reset handler is installed
 * with the function that replaced the assignment.
 */
static inline void device_class_set_legacy_reset(DeviceClass *dc,
                                                 DeviceReset dev_reset)
{
    dc->reset = dev_reset;
}
#endif

/*
 * Properties: 9.2 made property arrays const and counts their elements
 * (a terminating element is refused at build time); 7.2 takes a mutable
 * array, which it only reads, and needs the terminator.  An array ends
 * with RSIM_PROPS_END and is installed with rsim_set_props().
 */
#if QEMU_VERSION_MAJOR < 9
#define RSIM_PROPS_END DEFINE_PROP_END_OF_LIST()
#define rsim_set_props(dc, props) \
    device_class_set_props(dc, (Property *)(props))
#else
#define RSIM_PROPS_END
#define rsim_set_props(dc, props) device_class_set_props(dc, props)
#endif

#endif /* HW_RDMA_SIM_QEMU_COMPAT_H */
