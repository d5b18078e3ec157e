/*
 * rdma-sim: what differs between the QEMU versions the device builds into
 *
 * One device source builds into Debian 12's QEMU 7.2, Debian 13's QEMU
 * 10.0 and QEMU 10.2 (and compiles against 11.x).  Every API difference
 * between them is absorbed here, where possible under the name the newest
 * QEMU uses, so that the device's own files have no version checks.
 * QEMU_VERSION_MAJOR, _MINOR and _MICRO come from config-host.h, which
 * qemu/osdep.h includes.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_SIM_QEMU_COMPAT_H
#define HW_RDMA_SIM_QEMU_COMPAT_H

#include "hw/pci/pci.h"
#include "migration/vmstate.h"
#include "qapi/error.h"

/*
 * QEMU major.minor.micro or later.  A change is dated by the development
 * tree it went into: x.y.50 is the one after release x.y, which leads to
 * the next release.
 */
#define RSIM_QEMU_AT_LEAST(major, minor, micro) \
    (QEMU_VERSION_MAJOR * 10000 + QEMU_VERSION_MINOR * 100 + \
     QEMU_VERSION_MICRO >= (major) * 10000 + (minor) * 100 + (micro))

/*
 * 11.0 (10.2.50) moved the qdev headers to hw/core/, qdev-core.h as
 * qdev.h, and registerfields.h (include/rdma-sim/rdma_sim_hw.h needs it)
 */
#if RSIM_QEMU_AT_LEAST(10, 2, 50)
#include "hw/core/qdev.h"
#include "hw/core/qdev-properties.h"
#include "hw/core/registerfields.h"
#else
#include "hw/qdev-core.h"
#include "hw/qdev-properties.h"
#include "hw/registerfields.h"
#endif

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

/*
 * 10.1 (10.0.50) made the data argument of TypeInfo.class_init const; a
 * class_init function takes RsimClassData *data.
 */
#if RSIM_QEMU_AT_LEAST(10, 0, 50)
typedef const void RsimClassData;
#else
typedef void RsimClassData;
#endif

#if !RSIM_QEMU_AT_LEAST(10, 1, 50)
/*
 * 10.2 (10.1.50) gave vmstate_load_state() and vmstate_save_state() an
 * Error **, where they had reported their errors themselves: the error set
 * here only says which description failed.
 */
static inline int rsim_vmstate_load_state(QEMUFile *f,
                                          const VMStateDescription *vmsd,
                                          void *opaque, int version_id,
                                          Error **errp)
{
    int ret = vmstate_load_state(f, vmsd, opaque, version_id);

    if (ret) {
        error_setg_errno(errp, -ret, "loading %s failed", vmsd->name);
    }
    return ret;
}

static inline int rsim_vmstate_save_state(QEMUFile *f,
                                          const VMStateDescription *vmsd,
                                          void *opaque, JSONWriter *vmdesc,
                                          Error **errp)
{
    int ret = vmstate_save_state(f, vmsd, opaque, vmdesc);

    if (ret) {
        error_setg_errno(errp, -ret, "saving %s failed", vmsd->name);
    }
    return ret;
}

#define vmstate_load_state rsim_vmstate_load_state
#define vmstate_save_state rsim_vmstate_save_state
#endif

#if !RSIM_QEMU_AT_LEAST(11, 0, 50)
/*
 * 11.1 (11.0.50) dropped the last argument of the VMSTATE_*_EQUAL()
 * macros, a hint printed when the values differ, which every caller
 * passed as NULL.
 */
#undef VMSTATE_UINT32_EQUAL
#define VMSTATE_UINT32_EQUAL(_f, _s) VMSTATE_UINT32_EQUAL_V(_f, _s, 0, NULL)
#endif

#endif /* HW_RDMA_SIM_QEMU_COMPAT_H */
