/*
 * rdma-sim: what the driver's register accesses mean - BAR0's registers
 * (docs/datasheet.md section 3) and the doorbell pages of BAR2
 *
 * Register writes only record values or hand work on: admin commands run
 * later in a bottom half (admin.c), doorbells go to their queue's owner.
 * An access by the device's own DMA (its BARs hit while it works) is
 * refused.  The QEMU glue (rdma-sim.c) maps the BARs onto these functions;
 * the unit tests call them directly.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "platform.h"
#include "device.h"
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
    memcpy(s->mac, s->perm_mac, sizeof(s->mac));
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

static uint32_t rdma_sim_cap_read(RdmaSimState *s, uint64_t addr)
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
static bool rdma_sim_queue_regs(RdmaSimState *s, uint64_t addr,
                                RdmaSimQueueRegs *q, uint64_t *off)
{
    const struct {
        uint64_t block;
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

static uint32_t rdma_sim_queue_reg_read(RdmaSimState *s, uint64_t addr)
{
    RdmaSimQueueRegs q;
    uint64_t off;

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
static bool rdma_sim_queue_reg_write(RdmaSimState *s, uint64_t addr,
                                     uint32_t val)
{
    RdmaSimQueueRegs q;
    uint64_t off;

    if (!rdma_sim_queue_regs(s, addr, &q, &off) || off > QREG_DEPTH) {
        return false;
    }
    if (FIELD_EX32(s->dev_ctrl, RSIM_DEV_CTRL, ENABLE)) {
        rdma_sim_guest_error(s, "mmio", "write to 0x%" PRIx64
                             " while enabled (ignored)", addr);
    } else if (off == QREG_DEPTH) {
        *q.depth = val;
    } else {
        *q.base = deposit64(*q.base, off == QREG_BASE_HI ? 32 : 0, 32, val);
    }
    return true;
}

/* Reading a register has no side effect: it only returns a value */
uint32_t rdma_sim_regs_peek(RdmaSimState *s, uint64_t addr)
{
    uint32_t val;

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

uint32_t rdma_sim_regs_read(RdmaSimState *s, uint64_t addr)
{
    if (s->busy) {
        rdma_sim_guest_error(s, "mmio", "register read 0x%" PRIx64
                             " from the device's own DMA", addr);
        return 0;
    }
    return rdma_sim_regs_peek(s, addr);
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

void rdma_sim_regs_write(RdmaSimState *s, uint64_t addr, uint32_t val)
{
    if (s->busy) {
        rdma_sim_guest_error(s, "mmio", "register write 0x%" PRIx64
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
                                 "unassigned register 0x%" PRIx64,
                                 val, addr);
        }
        break;
    }
}

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

void rdma_sim_db_write(RdmaSimState *s, uint64_t addr, uint32_t val)
{
    unsigned page = addr / RSIM_DB_PAGE_SIZE;
    RdmaSimQp *qp;
    RdmaSimCq *cq;
    RdmaSimSrq *srq;

    if (s->busy) {
        rdma_sim_guest_error(s, "doorbell", "write 0x%" PRIx64
                             " from the device's own DMA", addr);
        return;
    }
    if (!rdma_sim_ready(s)) {
        rdma_sim_guest_error(s, "doorbell", "write 0x%" PRIx64
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
                             PRIx64, addr);
        break;
    }
}
