/*
 * rdma-sim: emulated RoCEv2 RDMA NIC - PCI function, registers, doorbells
 *
 * BAR0 holds the registers of docs/datasheet.md section 3, BAR2 the
 * doorbell pages, BAR4 the MSI-X table.  Register writes only record
 * values; admin commands run later in a bottom half (admin.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qemu/units.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "hw/pci/msix.h"
#include "migration/vmstate.h"
#include "rdma-sim.h"
#include "transport.h"
#include "trace.h"

/* Destroy every object and return to the power-on register state. */
void rdma_sim_reset_state(RdmaSimState *s)
{
    trace_rdma_sim_reset();
    rdma_sim_objects_reset(s);
    rdma_sim_transport_reset(s);
    rdma_sim_net_reset(s);

    qemu_bh_cancel(s->admin_bh);
    s->dev_ctrl = 0;
    s->dev_status = 0;
    s->intr_mask = R_RSIM_INTR_MASK_ADMIN_MASK | R_RSIM_INTR_MASK_ASYNC_MASK;
    s->aq_base = s->acq_base = s->aeq_base = 0;
    s->aq_depth = s->acq_depth = s->aeq_depth = 0;
    s->aq_tail = s->aq_head = 0;
    s->acq_tail = s->acq_head = 0;
    s->aeq_tail = s->aeq_head = 0;
    s->acq_phase = s->aeq_phase = true;
    s->next_qpn = 2;
    s->eth_mtu = 1500;
    memcpy(s->perm_mac, s->conf.macaddr.a, sizeof(s->perm_mac));
    memcpy(s->mac, s->conf.macaddr.a, sizeof(s->mac));
    s->port_active = false;
}

static bool rdma_sim_ring_regs_ok(uint64_t base, uint32_t depth, uint32_t max)
{
    return base && QEMU_IS_ALIGNED(base, RSIM_QUEUE_ALIGN) &&
           is_power_of_2(depth) && depth >= 2 &&
           depth <= max;
}

/* DEV_CTRL.ENABLE 0 -> 1: validate the admin queue registers and go live. */
static void rdma_sim_enable(RdmaSimState *s)
{
    if (!rdma_sim_ring_regs_ok(s->aq_base, s->aq_depth,
                               RDMA_SIM_MAX_AQ_DEPTH) ||
        !rdma_sim_ring_regs_ok(s->acq_base, s->acq_depth,
                               RDMA_SIM_MAX_AQ_DEPTH) ||
        !rdma_sim_ring_regs_ok(s->aeq_base, s->aeq_depth,
                               RDMA_SIM_MAX_EQ_DEPTH)) {
        rdma_sim_guest_error(s, "enable",
                             "bad admin queue registers: aq 0x%" PRIx64 "/%u "
                             "acq 0x%" PRIx64 "/%u aeq 0x%" PRIx64 "/%u",
                             s->aq_base, s->aq_depth, s->acq_base, s->acq_depth,
                             s->aeq_base, s->aeq_depth);
        rdma_sim_set_fatal(s, RSIM_FATAL_BAD_ADMIN_CONFIG);
        return;
    }
    s->dev_status = FIELD_DP32(s->dev_status, RSIM_DEV_STATUS, READY, 1);
    trace_rdma_sim_enable(s->aq_depth, s->acq_depth, s->aeq_depth);
    rdma_sim_port_update(s, true);
}

static void rdma_sim_write_dev_ctrl(RdmaSimState *s, uint32_t val)
{
    bool was_enabled = FIELD_EX32(s->dev_ctrl, RSIM_DEV_CTRL, ENABLE);

    if (val & ~(R_RSIM_DEV_CTRL_ENABLE_MASK | R_RSIM_DEV_CTRL_RESET_MASK)) {
        rdma_sim_guest_error(s, "mmio", "reserved DEV_CTRL bits 0x%x", val);
    }
    if (FIELD_EX32(val, RSIM_DEV_CTRL, RESET) ||
        (was_enabled && !FIELD_EX32(val, RSIM_DEV_CTRL, ENABLE))) {
        rdma_sim_reset_state(s);
        return;
    }
    if (!was_enabled && FIELD_EX32(val, RSIM_DEV_CTRL, ENABLE)) {
        if (FIELD_EX32(s->dev_status, RSIM_DEV_STATUS, FATAL)) {
            rdma_sim_guest_error(s, "mmio", "ENABLE while fatal; reset first");
            return;
        }
        s->dev_ctrl = R_RSIM_DEV_CTRL_ENABLE_MASK;
        rdma_sim_enable(s);
    }
}

static uint32_t rdma_sim_cap_read(RdmaSimState *s, hwaddr addr)
{
    const RdmaSimProps *p = &s->props;

    switch (addr) {
    case A_RSIM_CAP_MAX_QP:
        return p->max_qp;
    case A_RSIM_CAP_MAX_CQ:
        return p->max_cq;
    case A_RSIM_CAP_MAX_SRQ:
        return p->max_srq;
    case A_RSIM_CAP_MAX_MR:
        return p->max_mr;
    case A_RSIM_CAP_MAX_PD:
        return p->max_pd;
    case A_RSIM_CAP_MAX_AH:
        return p->max_ah;
    case A_RSIM_CAP_MAX_GID:
        return p->max_gid;
    case A_RSIM_CAP_MAX_SEND_SGE:
    case A_RSIM_CAP_MAX_RECV_SGE:
    case A_RSIM_CAP_MAX_SRQ_SGE:
        return p->max_sge;
    case A_RSIM_CAP_MAX_QP_WR:
    case A_RSIM_CAP_MAX_SRQ_WR:
        return p->max_qp_wr;
    case A_RSIM_CAP_MAX_CQE:
        return p->max_cqe;
    case A_RSIM_CAP_MAX_INLINE:
        return p->max_inline;
    case A_RSIM_CAP_MAX_MR_SIZE_LO:
        return (uint32_t)RDMA_SIM_MAX_MR_SIZE;
    case A_RSIM_CAP_MAX_MR_SIZE_HI:
        return RDMA_SIM_MAX_MR_SIZE >> 32;
    case A_RSIM_CAP_PAGE_SIZES:
        return RDMA_SIM_PAGE_SIZES;
    case A_RSIM_CAP_MTU:
        return RSIM_MTU_4096;
    case A_RSIM_CAP_MAX_RD_ATOM:
    case A_RSIM_CAP_MAX_INIT_RD_ATOM:
        return p->max_rd_atom;
    case A_RSIM_CAP_MAX_EQ:
        return p->msix_vectors - 1;
    case A_RSIM_CAP_MAX_EQE:
        return RDMA_SIM_MAX_EQ_DEPTH;
    case A_RSIM_CAP_MAX_PBL_L1:
        return RDMA_SIM_MAX_PBL_L1;
    case A_RSIM_CAP_MAX_PBL_ROOT:
        return RDMA_SIM_MAX_PBL_ROOT;
    case A_RSIM_CAP_MAX_FAST_REG_PAGES:
        return RDMA_SIM_MAX_FAST_REG_PAGES;
    case A_RSIM_CAP_MAX_AQ_DEPTH:
        return RDMA_SIM_MAX_AQ_DEPTH;
    case A_RSIM_CAP_MAX_ETH_DEPTH:
        return RDMA_SIM_MAX_ETH_DEPTH;
    case A_RSIM_CAP_MAX_PKEYS:
        return 1;
    default:
        return 0;
    }
}

/*
 * The register blocks of the AQ, ACQ and AEQ share one layout: BASE_LO,
 * BASE_HI, DEPTH (writable while the device is disabled), the driver's
 * index (its own register, handled by the write handler) and the device's.
 */
#define QREG_BASE_LO    0x0
#define QREG_BASE_HI    0x4
#define QREG_DEPTH      0x8
#define QREG_DEV_INDEX  0x10
QEMU_BUILD_BUG_ON(A_RSIM_AQ_BASE_HI != A_RSIM_AQ_BASE_LO + QREG_BASE_HI ||
                  A_RSIM_AQ_DEPTH != A_RSIM_AQ_BASE_LO + QREG_DEPTH ||
                  A_RSIM_AQ_HEAD != A_RSIM_AQ_BASE_LO + QREG_DEV_INDEX ||
                  A_RSIM_ACQ_BASE_HI != A_RSIM_ACQ_BASE_LO + QREG_BASE_HI ||
                  A_RSIM_ACQ_DEPTH != A_RSIM_ACQ_BASE_LO + QREG_DEPTH ||
                  A_RSIM_ACQ_TAIL != A_RSIM_ACQ_BASE_LO + QREG_DEV_INDEX ||
                  A_RSIM_AEQ_BASE_HI != A_RSIM_AEQ_BASE_LO + QREG_BASE_HI ||
                  A_RSIM_AEQ_DEPTH != A_RSIM_AEQ_BASE_LO + QREG_DEPTH ||
                  A_RSIM_AEQ_TAIL != A_RSIM_AEQ_BASE_LO + QREG_DEV_INDEX);

typedef struct RdmaSimQueueRegs {
    uint64_t *base;
    uint32_t *depth;
    uint32_t *dev_index;        /* AQ_HEAD, ACQ_TAIL, AEQ_TAIL */
} RdmaSimQueueRegs;

/* The queue whose block holds addr, and addr's offset in it; false: none */
static bool rdma_sim_queue_regs(RdmaSimState *s, hwaddr addr,
                                RdmaSimQueueRegs *q, hwaddr *off)
{
    const struct {
        hwaddr block;
        RdmaSimQueueRegs regs;
    } queues[] = {
        { A_RSIM_AQ_BASE_LO, { &s->aq_base, &s->aq_depth, &s->aq_head } },
        { A_RSIM_ACQ_BASE_LO, { &s->acq_base, &s->acq_depth, &s->acq_tail } },
        { A_RSIM_AEQ_BASE_LO, { &s->aeq_base, &s->aeq_depth, &s->aeq_tail } },
    };

    for (size_t i = 0; i < ARRAY_SIZE(queues); i++) {
        if (addr >= queues[i].block &&
            addr <= queues[i].block + QREG_DEV_INDEX) {
            *q = queues[i].regs;
            *off = addr - queues[i].block;
            return true;
        }
    }
    return false;
}

static uint32_t rdma_sim_queue_reg_read(RdmaSimState *s, hwaddr addr)
{
    RdmaSimQueueRegs q;
    hwaddr off;

    if (!rdma_sim_queue_regs(s, addr, &q, &off)) {
        return 0;
    }
    switch (off) {
    case QREG_BASE_LO:
        return *q.base;
    case QREG_BASE_HI:
        return *q.base >> 32;
    case QREG_DEPTH:
        return *q.depth;
    case QREG_DEV_INDEX:
        return *q.dev_index;
    default:
        return 0;               /* the driver's index is write-only */
    }
}

/* BASE_LO, BASE_HI, DEPTH of a queue; false for any other register */
static bool rdma_sim_queue_reg_write(RdmaSimState *s, hwaddr addr,
                                     uint32_t val)
{
    RdmaSimQueueRegs q;
    hwaddr off;

    if (!rdma_sim_queue_regs(s, addr, &q, &off) || off > QREG_DEPTH) {
        return false;
    }
    if (FIELD_EX32(s->dev_ctrl, RSIM_DEV_CTRL, ENABLE)) {
        rdma_sim_guest_error(s, "mmio", "write to 0x%" HWADDR_PRIx
                             " while enabled (ignored)", addr);
    } else if (off == QREG_DEPTH) {
        *q.depth = val;
    } else {
        *q.base = deposit64(*q.base, off == QREG_BASE_HI ? 32 : 0, 32, val);
    }
    return true;
}

static uint64_t rdma_sim_regs_read(void *opaque, hwaddr addr, unsigned size)
{
    RdmaSimState *s = opaque;
    uint32_t val;

    if (s->busy) {
        rdma_sim_guest_error(s, "mmio", "register read 0x%" HWADDR_PRIx
                             " from the device's own DMA", addr);
        return 0;
    }
    switch (addr) {
    case A_RSIM_VERSION:
        val = RSIM_VERSION_MAJOR << R_RSIM_VERSION_MAJOR_SHIFT |
              RSIM_VERSION_MINOR;
        break;
    case A_RSIM_FEATURES:
        val = R_RSIM_FEATURES_RC_MASK | R_RSIM_FEATURES_UC_MASK |
              R_RSIM_FEATURES_UD_MASK | R_RSIM_FEATURES_SRQ_MASK |
              R_RSIM_FEATURES_ATOMIC_MASK | R_RSIM_FEATURES_FAST_REG_MASK |
              R_RSIM_FEATURES_IPV6_MASK | R_RSIM_FEATURES_LOOPBACK_MASK |
              R_RSIM_FEATURES_ETH_MASK;
        break;
    case A_RSIM_DMA_WIDTH:
        val = 64;
        break;
    case A_RSIM_DEV_CTRL:
        val = s->dev_ctrl;
        break;
    case A_RSIM_DEV_STATUS:
        val = s->dev_status;
        break;
    case A_RSIM_ADMIN_TIMEOUT:
        val = RSIM_ADMIN_TIMEOUT_MS;
        break;
    case A_RSIM_RESET_TIMEOUT:
        val = RSIM_RESET_TIMEOUT_MS;
        break;
    case A_RSIM_INTR_MASK:
        val = s->intr_mask;
        break;
    case A_RSIM_DB_PAGES:
        val = s->props.db_pages;
        break;
    case A_RSIM_MSIX_VECTORS:
        val = s->props.msix_vectors;
        break;
    case A_RSIM_NUM_PORTS:
        val = 1;
        break;
    case A_RSIM_CAP_MAX_QP ... A_RSIM_CAP_MAX_PKEYS:
        val = rdma_sim_cap_read(s, addr);
        break;
    default:
        /* the queues' blocks; write-only and unassigned offsets read 0 */
        val = rdma_sim_queue_reg_read(s, addr);
        break;
    }
    trace_rdma_sim_reg_read(addr, val);
    return val;
}


/*
 * Unmasking a cause whose queue holds entries the driver has not consumed
 * signals at once, so nothing posted while masked goes unnoticed.
 */
static void rdma_sim_write_intr_mask(RdmaSimState *s, uint32_t val)
{
    uint32_t unmasked = s->intr_mask & ~val;

    s->intr_mask = val & (R_RSIM_INTR_MASK_ADMIN_MASK |
                          R_RSIM_INTR_MASK_ASYNC_MASK);
    if (rdma_sim_ready(s) &&
        (((unmasked & R_RSIM_INTR_MASK_ADMIN_MASK) &&
          s->acq_tail != s->acq_head) ||
         ((unmasked & R_RSIM_INTR_MASK_ASYNC_MASK) &&
          s->aeq_tail != s->aeq_head))) {
        rdma_sim_msix_notify(s, RSIM_MSIX_VECTOR_ADMIN);
    }
}

static void rdma_sim_write_aq_tail(RdmaSimState *s, uint32_t val)
{
    if (!rdma_sim_ready(s) || val >= s->aq_depth) {
        rdma_sim_guest_error(s, "admin",
                             "AQ_TAIL %u (depth %u, ready %d) ignored", val,
                             s->aq_depth, rdma_sim_ready(s));
        return;
    }
    s->aq_tail = val;
    rdma_sim_admin_kick(s);
}

static void rdma_sim_write_acq_head(RdmaSimState *s, uint32_t val)
{
    if (!rdma_sim_ready(s) || val >= s->acq_depth) {
        rdma_sim_guest_error(s, "admin", "ACQ_HEAD %u (depth %u) ignored",
                             val, s->acq_depth);
        return;
    }
    s->acq_head = val;
    rdma_sim_admin_kick(s);
}

static void rdma_sim_write_aeq_head(RdmaSimState *s, uint32_t val)
{
    if (!rdma_sim_ready(s) || val >= s->aeq_depth) {
        rdma_sim_guest_error(s, "aeq", "AEQ_HEAD %u (depth %u) ignored",
                             val, s->aeq_depth);
        return;
    }
    s->aeq_head = val;
}

static void rdma_sim_regs_write(void *opaque, hwaddr addr, uint64_t val64,
                                unsigned size)
{
    RdmaSimState *s = opaque;
    uint32_t val = val64;

    if (s->busy) {
        rdma_sim_guest_error(s, "mmio", "register write 0x%" HWADDR_PRIx
                             " from the device's own DMA", addr);
        return;
    }
    trace_rdma_sim_reg_write(addr, val);
    switch (addr) {
    case A_RSIM_DEV_CTRL:
        rdma_sim_write_dev_ctrl(s, val);
        break;
    case A_RSIM_INTR_MASK:
        rdma_sim_write_intr_mask(s, val);
        break;
    case A_RSIM_AQ_TAIL:
        rdma_sim_write_aq_tail(s, val);
        break;
    case A_RSIM_ACQ_HEAD:
        rdma_sim_write_acq_head(s, val);
        break;
    case A_RSIM_AEQ_HEAD:
        rdma_sim_write_aeq_head(s, val);
        break;
    case A_RSIM_EQ_DB:
        rdma_sim_eq_doorbell(s, val);
        break;
    case A_RSIM_ETH_TX_DB:
        rdma_sim_eth_tx_doorbell(s, val);
        break;
    case A_RSIM_ETH_RX_DB:
        rdma_sim_eth_rx_doorbell(s, val);
        break;
    default:
        if (!rdma_sim_queue_reg_write(s, addr, val)) {
            rdma_sim_guest_error(s, "mmio",
                                 "write 0x%x to read-only or "
                                 "unassigned register 0x%" HWADDR_PRIx,
                                 val, addr);
        }
        break;
    }
}

static const MemoryRegionOps rdma_sim_regs_ops = {
    .read = rdma_sim_regs_read,
    .write = rdma_sim_regs_write,
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
 * Doorbell pages: page 0 (the kernel's) may ring any object, page n only
 * objects created with db_page n.
 */
static bool rdma_sim_db_page_ok(RdmaSimState *s, unsigned page, unsigned owner,
                                const char *what, uint32_t num)
{
    if (page && page != owner) {
        rdma_sim_guest_error(s, "doorbell", "%s %u rung from page %u, owned by "
                             "page %u", what, num, page, owner);
        return false;
    }
    return true;
}

static void rdma_sim_db_write(void *opaque, hwaddr addr, uint64_t val64,
                              unsigned size)
{
    RdmaSimState *s = opaque;
    unsigned page = addr / RSIM_DB_PAGE_SIZE;
    uint32_t val = val64;
    RdmaSimQp *qp;
    RdmaSimCq *cq;
    RdmaSimSrq *srq;

    if (s->busy) {
        rdma_sim_guest_error(s, "doorbell", "write 0x%" HWADDR_PRIx
                             " from the device's own DMA", addr);
        return;
    }
    if (!rdma_sim_ready(s)) {
        rdma_sim_guest_error(s, "doorbell", "write 0x%" HWADDR_PRIx
                             " while the device is not ready", addr);
        return;
    }
    trace_rdma_sim_doorbell(page, addr % RSIM_DB_PAGE_SIZE, val);
    switch (addr % RSIM_DB_PAGE_SIZE) {
    case A_RSIM_DB_SQ:
        qp = rdma_sim_qp_lookup(s, val);
        if (!qp) {
            rdma_sim_guest_error(s, "doorbell", "SQ doorbell for no QP %u",
                                 val);
        } else if (rdma_sim_db_page_ok(s, page, qp->db_page, "QP", val) &&
                   !rdma_sim_qp_sq_doorbell(s, qp)) {
            rdma_sim_transport_sq_kick(s, qp);
        }
        break;
    case A_RSIM_DB_RQ:
        qp = rdma_sim_qp_lookup(s, val);
        if (!qp) {
            rdma_sim_guest_error(s, "doorbell", "RQ doorbell for no QP %u",
                                 val);
        } else if (rdma_sim_db_page_ok(s, page, qp->db_page, "QP", val)) {
            rdma_sim_qp_rq_doorbell(s, qp);
        }
        break;
    case A_RSIM_DB_SRQ:
        srq = rdma_sim_srq_lookup(s, val);
        if (!srq) {
            rdma_sim_guest_error(s, "doorbell", "doorbell for no SRQ %u", val);
        } else {
            rdma_sim_db_page_ok(s, page, srq->db_page, "SRQ", val);
        }
        break;
    case A_RSIM_DB_CQ:
        cq = rdma_sim_cq_lookup(s, FIELD_EX32(val, RSIM_DB_CQ, CQN));
        if (!cq) {
            rdma_sim_guest_error(s, "doorbell", "CQ doorbell for no CQ %u",
                                 FIELD_EX32(val, RSIM_DB_CQ, CQN));
        } else if (rdma_sim_db_page_ok(s, page, cq->db_page, "CQ", cq->cqn)) {
            rdma_sim_cq_arm(s, cq, FIELD_EX32(val, RSIM_DB_CQ, ARM));
        }
        break;
    default:
        rdma_sim_guest_error(s, "doorbell", "write to unassigned doorbell 0x%"
                             HWADDR_PRIx, addr);
        break;
    }
}

static uint64_t rdma_sim_db_read(void *opaque, hwaddr addr, unsigned size)
{
    return 0;
}

static const MemoryRegionOps rdma_sim_db_ops = {
    .read = rdma_sim_db_read,
    .write = rdma_sim_db_write,
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
