/*
 * rdma-sim: emulated RoCEv2 RDMA NIC - the QEMU device: PCI function, BARs,
 * MSI-X table, properties, life cycle
 *
 * BAR0 holds the registers of docs/datasheet.md section 3, BAR2 the
 * doorbell pages, BAR4 the MSI-X table.  What an access to BAR0 or BAR2
 * means is the core's (regs.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/module.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "hw/pci/msix.h"
#include "migration/vmstate.h"
#include "device.h"
#include "transport.h"

static uint64_t rdma_sim_regs_mmio_read(void *opaque, hwaddr addr,
                                        unsigned size)
{
    return rdma_sim_regs_read(opaque, addr);
}

static void rdma_sim_regs_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                                     unsigned size)
{
    rdma_sim_regs_write(opaque, addr, val);
}

static const MemoryRegionOps rdma_sim_regs_ops = {
    .read = rdma_sim_regs_mmio_read,
    .write = rdma_sim_regs_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
        .unaligned = false,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

static uint64_t rdma_sim_db_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    return 0;
}

static void rdma_sim_db_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                                   unsigned size)
{
    rdma_sim_db_write(opaque, addr, val);
}

static const MemoryRegionOps rdma_sim_db_ops = {
    .read = rdma_sim_db_mmio_read,
    .write = rdma_sim_db_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
        .unaligned = false,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

/*
 * While the VM is stopped the device does nothing: its bottom halves wait
 * (timers wait with the virtual clock, the netdev delivers no frames), so
 * that a paused guest sees no completions appear and a migration or
 * snapshot saves the device as it was when the VM stopped.  Doorbells a
 * debugger or qtest writes meanwhile are taken, and their work waits.  One
 * exception: a device that failed drops its engine's queued work in the
 * bottom half even then (rdma_sim_set_fatal()); no guest sees it.
 */
static void rdma_sim_vm_state_change(void *opaque, bool running,
                                     RunState state)
{
    RdmaSimState *s = opaque;

    if (running && rdma_sim_ready(s)) {
        rdma_sim_admin_kick(s);
        rdma_sim_transport_resume(s);
        rdma_sim_port_update(s, false);
    }
}

static void rdma_sim_realize(PCIDevice *pci, Error **errp)
{
    RdmaSimState *s = RDMA_SIM(pci);
    uint32_t db_size;

    pci->config[PCI_INTERRUPT_PIN] = 0;
    pci_config_set_revision(pci->config, RSIM_PCI_REVISION);

    memory_region_init_io(&s->regs_mr, OBJECT(s), &rdma_sim_regs_ops, s,
                          "rdma-sim-regs", RSIM_REGS_SIZE);
    pci_register_bar(pci, RSIM_BAR_REGS, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->regs_mr);

    /* BAR sizes must be powers of two */
    db_size = pow2ceil(s->props.db_pages) * RSIM_DB_PAGE_SIZE;
    memory_region_init_io(&s->db_mr, OBJECT(s), &rdma_sim_db_ops, s,
                          "rdma-sim-doorbells", db_size);
    pci_register_bar(pci, RSIM_BAR_DOORBELL, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->db_mr);

    if (msix_init_exclusive_bar(pci, s->props.msix_vectors, RSIM_BAR_MSIX,
                                errp)) {
        return;
    }
    for (unsigned i = 0; i < s->props.msix_vectors; i++) {
        msix_vector_use(pci, i);
    }

    rdma_sim_objects_init(s);
    rdma_sim_admin_init(s);
    rdma_sim_transport_init(s);
    rdma_sim_net_init(s, errp);
    memcpy(s->perm_mac, s->conf.macaddr.a, sizeof(s->perm_mac));
    rdma_sim_reset_state(s);
    s->vm_state = qemu_add_vm_change_state_handler(rdma_sim_vm_state_change,
                                                   s);
}

static void rdma_sim_exit(PCIDevice *pci)
{
    RdmaSimState *s = RDMA_SIM(pci);

    qemu_del_vm_change_state_handler(s->vm_state);
    rdma_sim_reset_state(s);
    rdma_sim_net_cleanup(s);
    rdma_sim_transport_cleanup(s);
    qemu_bh_delete(s->admin_bh);
    msix_uninit_exclusive_bar(pci);
    rdma_sim_objects_free(s);
}

static void rdma_sim_qdev_reset(DeviceState *dev)
{
    rdma_sim_reset_state(RDMA_SIM(dev));
}

/*
 * Properties: a uint32 QOM property per row of the core's table
 * (props.c), whose setter refuses a value outside the row's range, and
 * whose help shows the default, the range and the meaning.
 */
static void rdma_sim_prop_get(Object *obj, Visitor *v, const char *name,
                              void *opaque, Error **errp)
{
    visit_type_uint32(v, name, rdma_sim_prop_ptr(&RDMA_SIM(obj)->props, opaque),
                      errp);
}

static void rdma_sim_prop_set(Object *obj, Visitor *v, const char *name,
                              void *opaque, Error **errp)
{
    const RdmaSimPropInfo *info = opaque;
    uint32_t val;

    if (DEVICE(obj)->realized) {
        qdev_prop_set_after_realize(DEVICE(obj), name, errp);
        return;
    }
    if (!visit_type_uint32(v, name, &val, errp)) {
        return;
    }
    if (val < info->min || val > info->max) {
        error_setg(errp, "rdma-sim: %s must be %u..%u, not %u", name,
                   info->min, info->max, val);
        return;
    }
    *rdma_sim_prop_ptr(&RDMA_SIM(obj)->props, info) = val;
}

static void rdma_sim_class_add_props(ObjectClass *klass)
{
    for (size_t i = 0; i < rdma_sim_nprops; i++) {
        const RdmaSimPropInfo *info = &rdma_sim_props[i];
        g_autofree char *desc = g_strdup_printf("%s; %u..%u", info->desc,
                                                info->min, info->max);
        ObjectProperty *op;

        op = object_class_property_add(klass, info->name, "uint32",
                                       rdma_sim_prop_get, rdma_sim_prop_set,
                                       NULL, (void *)info);
        object_property_set_default_uint(op, info->def);
        object_class_property_set_description(klass, info->name, desc);
    }
}

static const Property rdma_sim_properties[] = {
    DEFINE_NIC_PROPERTIES(RdmaSimState, conf),
    DEFINE_PROP_UINT64("fault-seed", RdmaSimState, props.fault_seed, 0),
    RSIM_PROPS_END
};

static void rdma_sim_class_init(ObjectClass *klass, RsimClassData *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    pc->realize = rdma_sim_realize;
    pc->exit = rdma_sim_exit;
    pc->vendor_id = RSIM_PCI_VENDOR_ID;
    pc->device_id = RSIM_PCI_DEVICE_ID;
    pc->subsystem_vendor_id = RSIM_PCI_SUBSYS_VENDOR_ID;
    pc->subsystem_id = RSIM_PCI_SUBSYS_ID;
    pc->revision = RSIM_PCI_REVISION;
    pc->class_id = PCI_CLASS_NETWORK_ETHERNET;
    dc->desc = "rdma-sim RoCEv2 RDMA NIC (Soft-RoCE compatible)";
    device_class_set_legacy_reset(dc, rdma_sim_qdev_reset);
    dc->vmsd = &vmstate_rdma_sim;
    rsim_set_props(dc, rdma_sim_properties);
    object_class_property_set_description(klass, "fault-seed",
        "seed of the fault generator: the same seed gives the same faults "
        "(0: a fixed default)");
    rdma_sim_class_add_props(klass);
    rdma_sim_introspect_class_init(klass);
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
}

static const TypeInfo rdma_sim_info = {
    .name = TYPE_RDMA_SIM,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(RdmaSimState),
    .class_init = rdma_sim_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_CONVENTIONAL_PCI_DEVICE },
        { },
    },
};

static void rdma_sim_register_types(void)
{
    type_register_static(&rdma_sim_info);
}

type_init(rdma_sim_register_types)
