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
 * Properties
 *
 * One table gives each property its default, range and meaning: the
 * class gets one uint32 property per row, whose setter refuses a value
 * outside the range, and -device rdma-sim,help shows all three.
 * docs/datasheet.md section 2 lists the same; a test compares the two.
 */
typedef struct RdmaSimPropInfo {
    const char *name;
    size_t offset;              /* of the value in RdmaSimProps */
    uint32_t def, min, max;
    const char *desc;
} RdmaSimPropInfo;

#define PROP(field) offsetof(RdmaSimProps, field)

static const RdmaSimPropInfo rdma_sim_props[] = {
    { "max-qp", PROP(max_qp), 1024, 2, RDMA_SIM_MAX_QP_LIMIT,
      "QP table size; QPNs 2..max-qp-1 (QPN 1 is the GSI QP)" },
    { "max-cq", PROP(max_cq), 1024, 1, RDMA_SIM_MAX_OBJECTS,
      "completion queues" },
    { "max-srq", PROP(max_srq), 256, 1, RDMA_SIM_MAX_OBJECTS,
      "shared receive queues" },
    { "max-mr", PROP(max_mr), 8192, 1, RDMA_SIM_MAX_OBJECTS,
      "MR/stag table entries (the key index range)" },
    { "max-pd", PROP(max_pd), 1024, 1, RDMA_SIM_MAX_OBJECTS,
      "protection domains" },
    { "max-ah", PROP(max_ah), 1024, 2, RDMA_SIM_MAX_OBJECTS,
      "address handles (numbers 1..max-ah-1)" },
    { "max-gid", PROP(max_gid), 16, 1, 256,
      "GID table entries of the port" },
    { "max-sge", PROP(max_sge), 16, 1, RDMA_SIM_MAX_SGE,
      "scatter/gather entries per send, receive and SRQ work request" },
    { "max-qp-wr", PROP(max_qp_wr), 16384, 1, 32767,
      "work requests per send/receive queue" },
    { "max-cqe", PROP(max_cqe), 65535, 1, 4194303,
      "entries per completion queue" },
    { "max-inline", PROP(max_inline), 512, 0, RDMA_SIM_MAX_INLINE,
      "inline data bytes per send work request" },
    { "max-rd-atom", PROP(max_rd_atom), 128, 1, 128,
      "RDMA READ/atomic operations in flight per QP, each direction" },
    { "db-pages", PROP(db_pages), 64, 1, RDMA_SIM_MAX_DB_PAGES,
      "4 KiB doorbell pages in BAR2 (page 0: the kernel driver's)" },
    { "msix-vectors", PROP(msix_vectors), 9, 2, RDMA_SIM_MAX_MSIX,
      "MSI-X vectors: 0 for admin and async events, the rest for "
      "completion EQs" },
    { "tx-window", PROP(tx_window), 80, 4, 1024,
      "KiB of unacknowledged RC payload the port keeps in flight, all QPs "
      "together, READ responses included (they leave it at this much per "
      "round trip); keep it below what the receiving host's UDP socket "
      "buffers (80 fits its default 208 KiB, counted with the kernel's "
      "overhead)" },
    { "fault-drop", PROP(fault_drop), 0, 0, 1000000,
      "drop this share of transmitted RoCE frames, parts per million" },
    { "fault-dup", PROP(fault_dup), 0, 0, 1000000,
      "duplicate this share of transmitted RoCE frames, ppm" },
    { "fault-reorder", PROP(fault_reorder), 0, 0, 1000000,
      "hold this share of transmitted RoCE frames back behind the next "
      "one, ppm" },
    { "fault-corrupt", PROP(fault_corrupt), 0, 0, 1000000,
      "flip a bit in this share of transmitted RoCE frames, ppm" },
    { "fault-driver", PROP(fault_driver), 0, 0, 1000000,
      "damage one field in this share of the completions, events and "
      "admin completions written for the driver, ppm" },
};

#undef PROP

/* Send WQEs of the largest max-sge and max-inline fit a ring element */
QEMU_BUILD_BUG_ON(RSIM_SEND_WQE_HDR_SIZE +
                  MAX_CONST(RDMA_SIM_MAX_INLINE, RDMA_SIM_MAX_SGE * 16) >
                  RDMA_SIM_MAX_ELEM_SIZE);

static uint32_t *rdma_sim_prop_ptr(Object *obj, const RdmaSimPropInfo *info)
{
    return (uint32_t *)((uint8_t *)&RDMA_SIM(obj)->props + info->offset);
}

static void rdma_sim_prop_get(Object *obj, Visitor *v, const char *name,
                              void *opaque, Error **errp)
{
    visit_type_uint32(v, name, rdma_sim_prop_ptr(obj, opaque), errp);
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
    *rdma_sim_prop_ptr(obj, info) = val;
}

static void rdma_sim_class_add_props(ObjectClass *klass)
{
    for (size_t i = 0; i < ARRAY_SIZE(rdma_sim_props); i++) {
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
