/*
 * rdma-sim: rings in guest memory, completions and event queues; the CQ
 * and SRQ objects; the engine's queues of frames to receive
 *
 * Work and completion queues use the Soft-RoCE ring layout (datasheet
 * section 7).  Their page list is resolved once when the ring is created;
 * indices read from guest memory are always masked before use.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "platform.h"
#include "device.h"
#include "trace.h"

/*
 * Rings
 */

/*
 * Host memory the device keeps for guest objects (the page arrays of
 * rings, the transport state of QPs) comes from one budget: an object that
 * would go beyond it is refused with NO_RESOURCES.
 */
bool rdma_sim_host_mem_get(RdmaSimState *s, uint64_t bytes)
{
    if (bytes > RDMA_SIM_HOST_MEM_MAX - s->host_mem) {
        return false;
    }
    s->host_mem += bytes;
    return true;
}

void rdma_sim_host_mem_put(RdmaSimState *s, uint64_t bytes)
{
    s->host_mem -= MIN(bytes, s->host_mem);
}

/* The largest element a ring whose elements need need bytes may have */
static uint32_t rdma_sim_elem_max(uint32_t need)
{
    return pow2ceil(MAX(need, RDMA_SIM_MIN_ELEM_SIZE));
}

/* ... a send queue: a WQE with the device's most SGEs or inline data */
uint32_t rdma_sim_sq_elem_max(RdmaSimState *s)
{
    return rdma_sim_elem_max(RSIM_SEND_WQE_HDR_SIZE +
                             MAX(16u * s->props.max_sge,
                                 s->props.max_inline));
}

/* ... a receive queue or SRQ: a WQE with the device's most SGEs */
uint32_t rdma_sim_rq_elem_max(RdmaSimState *s)
{
    return rdma_sim_elem_max(RSIM_RECV_WQE_HDR_SIZE + 16u * s->props.max_sge);
}

/*
 * Set up a ring from a descriptor.  min_elem is the smallest element the
 * ring's users need, max_elem the largest the device's caps need (the
 * element size follows the ring's type, not the guest's wish: the host
 * memory of the ring's page array grows with it), max_depth the largest
 * depth the caps allow.
 */
enum rsim_status rdma_sim_ring_init(RdmaSimState *s, RdmaSimRing *ring,
                                    const struct rsim_queue_desc *d,
                                    uint32_t min_elem, uint32_t max_elem,
                                    uint32_t max_depth)
{
    RdmaSimPageList pl = {
        .addr = le64_to_cpu(d->addr),
        .npages = le32_to_cpu(d->npages),
        .level = d->level,
        .page_shift = d->page_shift,
    };
    uint64_t bytes;
    enum rsim_status st;

    memset(ring, 0, sizeof(*ring));
    if (d->log2_elem_size > 13 || (1u << d->log2_elem_size) < min_elem ||
        (1u << d->log2_elem_size) > max_elem) {
        return RSIM_STS_INVALID;
    }
    if (d->log2_depth < 1 || d->log2_depth > 22) {
        return RSIM_STS_INVALID;
    }
    if ((1u << d->log2_depth) > max_depth) {
        return RSIM_STS_LIMIT;
    }
    if (pl.level == RSIM_PBL_LEVEL0) {
        if (!QEMU_IS_ALIGNED(pl.addr, RSIM_QUEUE_ALIGN)) {
            return RSIM_STS_INVALID;
        }
    }
    bytes = RSIM_QUEUE_DATA_OFFSET +
            ((uint64_t)1 << (d->log2_depth + d->log2_elem_size));
    st = rdma_sim_pl_check(s, &pl, bytes);
    if (st != RSIM_STS_OK) {
        return st;
    }
    ring->pl = pl;
    ring->bytes = bytes;
    ring->depth = 1u << d->log2_depth;
    ring->mask = ring->depth - 1;
    ring->log2_elem = d->log2_elem_size;

    if (pl.level != RSIM_PBL_LEVEL0) {
        uint64_t n = (bytes + (1ull << pl.page_shift) - 1) >> pl.page_shift;

        if (!rdma_sim_host_mem_get(s, n * sizeof(*ring->pages))) {
            return RSIM_STS_NO_RESOURCES;
        }
        ring->host_mem = n * sizeof(*ring->pages);
        ring->pages = g_new(dma_addr_t, n);
        ring->pages_len = n;
        st = rdma_sim_pl_pages(s, &pl, 0, n, ring->pages);
        if (st != RSIM_STS_OK) {
            rdma_sim_ring_free(s, ring);
            return st;
        }
    }
    return RSIM_STS_OK;
}

void rdma_sim_ring_free(RdmaSimState *s, RdmaSimRing *ring)
{
    rdma_sim_host_mem_put(s, ring->host_mem);
    ring->host_mem = 0;
    g_free(ring->pages);
    ring->pages = NULL;
    ring->pages_len = 0;
}

/* Access [offset, offset + len) of a ring; the range must lie inside. */
MemTxResult rdma_sim_ring_rw(RdmaSimState *s, const RdmaSimRing *ring,
                             uint64_t offset, void *buf, uint64_t len,
                             DMADirection dir)
{
    uint8_t *p = buf;

    if (offset > ring->bytes || len > ring->bytes - offset) {
        return MEMTX_DECODE_ERROR;
    }
    while (len) {
        dma_addr_t addr;
        uint64_t chunk;
        MemTxResult r;

        if (!ring->pages) {
            addr = ring->pl.addr + offset;
            chunk = len;
        } else {
            uint64_t page_size = 1ull << ring->pl.page_shift;
            uint64_t in_page = offset & (page_size - 1);

            addr = ring->pages[offset >> ring->pl.page_shift] + in_page;
            chunk = MIN(len, page_size - in_page);
        }
        r = dir == DMA_DIRECTION_TO_DEVICE ?
            rdma_sim_dma_read(s, addr, p, chunk) :
            rdma_sim_dma_write(s, addr, p, chunk);
        if (r != MEMTX_OK) {
            return r;
        }
        p += chunk;
        offset += chunk;
        len -= chunk;
    }
    return MEMTX_OK;
}

/* Read an index from the ring header; the value is masked. */
MemTxResult rdma_sim_ring_read_index(RdmaSimState *s, const RdmaSimRing *ring,
                                     unsigned offset, uint32_t *index)
{
    uint32_t le;
    MemTxResult r;

    r = rdma_sim_ring_rw(s, ring, offset, &le, sizeof(le),
                         DMA_DIRECTION_TO_DEVICE);
    /* Pairs with the producer's release store of the index. */
    smp_rmb();
    *index = le32_to_cpu(le) & ring->mask;
    return r;
}

MemTxResult rdma_sim_ring_write_index(RdmaSimState *s, const RdmaSimRing *ring,
                                      unsigned offset, uint32_t index)
{
    uint32_t le = cpu_to_le32(index & ring->mask);

    /* Elements must be visible before the index that publishes them. */
    smp_wmb();
    return rdma_sim_ring_rw(s, ring, offset, &le, sizeof(le),
                            DMA_DIRECTION_FROM_DEVICE);
}

/* Where element index starts in the ring's memory */
uint64_t rdma_sim_ring_elem_offset(const RdmaSimRing *ring, uint32_t index)
{
    return RSIM_QUEUE_DATA_OFFSET +
           ((uint64_t)(index & ring->mask) << ring->log2_elem);
}

MemTxResult rdma_sim_ring_read_elem(RdmaSimState *s, const RdmaSimRing *ring,
                                    uint32_t index, void *buf, uint32_t len)
{
    if (len > (1u << ring->log2_elem)) {
        return MEMTX_DECODE_ERROR;
    }
    return rdma_sim_ring_rw(s, ring, rdma_sim_ring_elem_offset(ring, index),
                            buf, len, DMA_DIRECTION_TO_DEVICE);
}

MemTxResult rdma_sim_ring_write_elem(RdmaSimState *s, const RdmaSimRing *ring,
                                     uint32_t index, const void *buf,
                                     uint32_t len)
{
    if (len > (1u << ring->log2_elem)) {
        return MEMTX_DECODE_ERROR;
    }
    return rdma_sim_ring_rw(s, ring, rdma_sim_ring_elem_offset(ring, index),
                            (void *)buf, len, DMA_DIRECTION_FROM_DEVICE);
}

/*
 * Move the elements [from_cons, from_prod) of one ring to slots 0.. of
 * another and publish them there (CQ resize, SRQ resize).
 */
enum rsim_status rdma_sim_ring_move(RdmaSimState *s, RdmaSimRing *from,
                                    uint32_t from_cons, uint32_t from_prod,
                                    RdmaSimRing *to)
{
    uint32_t count = (from_prod - from_cons) & from->mask;
    uint32_t elem = 1u << MIN(from->log2_elem, to->log2_elem);
    g_autofree uint8_t *buf = g_malloc(elem);

    if (count > to->mask) {
        return RSIM_STS_BUSY;
    }
    for (uint32_t i = 0; i < count; i++) {
        if (rdma_sim_ring_read_elem(s, from, from_cons + i, buf, elem) ||
            rdma_sim_ring_write_elem(s, to, i, buf, elem)) {
            return RSIM_STS_DMA;
        }
    }
    if (rdma_sim_ring_write_index(s, to, RSIM_QUEUE_CONS_OFFSET, 0) ||
        rdma_sim_ring_write_index(s, to, RSIM_QUEUE_PROD_OFFSET, count)) {
        return RSIM_STS_DMA;
    }
    return RSIM_STS_OK;
}

/*
 * Event queues
 */

/* Write one 16-byte entry: dword 0 (phase, type) last. */
static MemTxResult rdma_sim_write_eqe(RdmaSimState *s, uint64_t addr,
                                      bool phase, unsigned type,
                                      uint32_t object, uint64_t data)
{
    struct rsim_eqe e = {
        .object = cpu_to_le32(object),
        .data = cpu_to_le64(data),
    };
    uint32_t dw0 = 0;
    MemTxResult r;

    dw0 = FIELD_DP32(dw0, RSIM_EQE_HDR, PHASE, phase);
    dw0 = FIELD_DP32(dw0, RSIM_EQE_HDR, TYPE, type);
    e.dw0 = cpu_to_le32(dw0);
    rdma_sim_fault_driver(s, RDMA_SIM_FAULT_EQE, &e);
    r = rdma_sim_dma_write(s, addr + 4, (uint8_t *)&e + 4, sizeof(e) - 4);
    if (r != MEMTX_OK) {
        return r;
    }
    /* the body must be visible before the phase bit that validates it */
    smp_wmb();
    return rdma_sim_dma_write(s, addr, &e.dw0, sizeof(e.dw0));
}

void rdma_sim_aeq_post(RdmaSimState *s, enum rsim_event_type type,
                       uint32_t object, uint64_t data)
{
    if (!rdma_sim_ready(s)) {
        return;
    }
    if (((s->aeq_tail + 1) & (s->aeq_depth - 1)) == s->aeq_head) {
        trace_rdma_sim_aeq_overflow(type, object);
        s->dev_status = FIELD_DP32(s->dev_status, RSIM_DEV_STATUS,
                                   AEQ_OVERFLOW, 1);
        return;
    }
    trace_rdma_sim_async_event(type, object, data);
    if (rdma_sim_write_eqe(s, s->aeq_base + (uint64_t)s->aeq_tail *
                           RSIM_EQ_ENTRY_SIZE, s->aeq_phase, type, object,
                           data) != MEMTX_OK) {
        rdma_sim_set_fatal(s, RSIM_FATAL_AEQ_DMA);
        return;
    }
    s->aeq_tail = (s->aeq_tail + 1) & (s->aeq_depth - 1);
    if (!s->aeq_tail) {
        s->aeq_phase = !s->aeq_phase;
    }
    if (!FIELD_EX32(s->intr_mask, RSIM_INTR_MASK, ASYNC)) {
        rdma_sim_msix_notify(s, RSIM_MSIX_VECTOR_ADMIN);
    }
}

/*
 * The device failed: tell the driver (while the AEQ may still work), then
 * stop until reset.  Commands, DMA, doorbells, timers and received frames
 * stop at once (rdma_sim_ready(), rdma_sim_stopped()); the engine stops
 * itself in its bottom half, scheduled here, so that a stage that finds
 * the failure is not pulled out from under itself: what that stage sends
 * as it finishes its turn still goes out, as when the stop was a call
 * (transport.c, rdma_sim_xport_bh).
 */
void rdma_sim_set_fatal(RdmaSimState *s, enum rsim_fatal_reason reason)
{
    if (FIELD_EX32(s->dev_status, RSIM_DEV_STATUS, FATAL)) {
        return;
    }
    trace_rdma_sim_fatal(reason);
    rdma_sim_log("rdma-sim: device fatal error (reason %u); "
                 "the driver must reset the device\n", reason);
    if (reason != RSIM_FATAL_AEQ_DMA) {
        rdma_sim_aeq_post(s, RSIM_EV_DEVICE_FATAL, 0, reason);
    }
    s->dev_status = FIELD_DP32(s->dev_status, RSIM_DEV_STATUS, FATAL, 1);
    s->dev_status = FIELD_DP32(s->dev_status, RSIM_DEV_STATUS, FATAL_REASON,
                               reason);
    s->dev_status = FIELD_DP32(s->dev_status, RSIM_DEV_STATUS, READY, 0);
    qemu_bh_cancel(s->admin_bh);
    qemu_bh_schedule(s->xport_bh);
}

static bool rdma_sim_eq_full(RdmaSimEq *eq)
{
    return ((eq->tail + 1) & (eq->depth - 1)) == eq->head;
}

/* Write an event into a completion EQ that has room; interrupt if armed. */
static bool rdma_sim_eq_write(RdmaSimState *s, RdmaSimEq *eq, unsigned type,
                              uint32_t object)
{
    uint64_t addr = eq->addr + (uint64_t)eq->tail * RSIM_EQ_ENTRY_SIZE;

    if (rdma_sim_eq_full(eq)) {
        return false;
    }
    if (rdma_sim_write_eqe(s, addr, eq->phase, type, object, 0) != MEMTX_OK) {
        rdma_sim_set_fatal(s, RSIM_FATAL_EQ_DMA);
        return false;
    }
    trace_rdma_sim_eq_event(eq - s->eqs, type, object);
    eq->tail = (eq->tail + 1) & (eq->depth - 1);
    if (!eq->tail) {
        eq->phase = !eq->phase;
    }
    if (eq->armed) {
        eq->armed = false;
        rdma_sim_msix_notify(s, eq->vector);
    }
    return true;
}

/* Write events that waited for room, oldest first. */
static void rdma_sim_eq_drain_waiting(RdmaSimState *s, RdmaSimEq *eq)
{
    RdmaSimCq *cq;

    for (unsigned kind = 0; kind < 2; kind++) {
        if (eq->eth_waiting[kind] &&
            rdma_sim_eq_write(s, eq, RSIM_EV_ETH, kind)) {
            eq->eth_waiting[kind] = false;
        }
    }
    while ((cq = QTAILQ_FIRST(&eq->waiting)) != NULL) {
        if (!rdma_sim_eq_write(s, eq, RSIM_EV_COMPLETION, cq->cqn)) {
            return;
        }
        QTAILQ_REMOVE(&eq->waiting, cq, wait_link);
        cq->event_waiting = false;
    }
}

void rdma_sim_eq_doorbell(RdmaSimState *s, uint32_t val)
{
    uint32_t eqn = FIELD_EX32(val, RSIM_EQ_DB, EQN);
    uint32_t cons = FIELD_EX32(val, RSIM_EQ_DB, CONS);
    RdmaSimEq *eq;

    if (!rdma_sim_ready(s) || eqn >= s->props.msix_vectors - 1 ||
        !s->eqs[eqn].valid) {
        rdma_sim_guest_error(s, "eq", "EQ_DB 0x%08x for no EQ %u", val, eqn);
        return;
    }
    eq = &s->eqs[eqn];
    if (cons >= eq->depth) {
        rdma_sim_guest_error(s, "eq", "EQ %u consumer index %u >= depth %u",
                             eqn, cons, eq->depth);
        return;
    }
    eq->head = cons;
    rdma_sim_eq_drain_waiting(s, eq);
    if (FIELD_EX32(val, RSIM_EQ_DB, ARM)) {
        /* Entries the driver has not seen yet: signal now. */
        if (eq->tail != eq->head) {
            eq->armed = false;
            rdma_sim_msix_notify(s, eq->vector);
        } else {
            eq->armed = true;
        }
    }
}

void rdma_sim_eq_post_eth(RdmaSimState *s, unsigned kind)
{
    RdmaSimEq *eq = &s->eqs[s->ethq[kind].eqn];

    if (!eq->eth_waiting[kind] &&
        !rdma_sim_eq_write(s, eq, RSIM_EV_ETH, kind)) {
        eq->eth_waiting[kind] = true;
    }
}

void rdma_sim_eq_reset(RdmaSimState *s, RdmaSimEq *eq)
{
    RdmaSimCq *cq, *next;

    QTAILQ_FOREACH_SAFE(cq, &eq->waiting, wait_link, next) {
        QTAILQ_REMOVE(&eq->waiting, cq, wait_link);
        cq->event_waiting = false;
    }
    memset(eq, 0, sizeof(*eq));
    QTAILQ_INIT(&eq->waiting);
}

/*
 * Completion queues
 */

RdmaSimCq *rdma_sim_cq_lookup(RdmaSimState *s, uint32_t cqn)
{
    return cqn < s->props.max_cq ? s->cqs[cqn] : NULL;
}

RdmaSimSrq *rdma_sim_srq_lookup(RdmaSimState *s, uint32_t srqn)
{
    return srqn < s->props.max_srq ? s->srqs[srqn] : NULL;
}

/*
 * The rules every SRQ meets, however it comes: from CREATE_SRQ (admin.c)
 * or a migration stream (migration.c) - its PD, SGEs and doorbell page
 * (its limit is below its ring's depth: checked once the ring is known).
 * The status is CREATE_SRQ's; why says what was wrong.
 */
enum rsim_status rdma_sim_srq_new_check(RdmaSimState *s,
                                        const RdmaSimSrq *srq,
                                        const char **why)
{
    if (!rdma_sim_pd_valid(s, srq->pdn)) {
        *why = "no such PD";
        return RSIM_STS_BAD_HANDLE;
    }
    if (!srq->max_sge) {
        *why = "SRQ with 0 SGEs";
        return RSIM_STS_INVALID;
    }
    if (srq->max_sge > s->props.max_sge) {
        *why = "SRQ SGEs above CAP_MAX_SRQ_SGE";
        return RSIM_STS_LIMIT;
    }
    if (srq->db_page >= s->props.db_pages) {
        *why = "doorbell page beyond DB_PAGES";
        return RSIM_STS_INVALID;
    }
    return RSIM_STS_OK;
}

/*
 * An SRQ built by CREATE_SRQ or read from a migration stream joins the
 * table and references its PD; rdma_sim_srq_destroy() undoes it.
 */
void rdma_sim_srq_attach(RdmaSimState *s, RdmaSimSrq *srq)
{
    srq->valid = true;
    s->pds[srq->pdn].refs++;
    s->srqs[srq->srqn] = srq;
}

/*
 * The end of every SRQ: its DESTROY_SRQ and the device's reset both come
 * here, as they come to rdma_sim_cq_destroy() for a CQ.
 */
void rdma_sim_srq_destroy(RdmaSimState *s, RdmaSimSrq *srq)
{
    s->pds[srq->pdn].refs--;
    s->srqs[srq->srqn] = NULL;
    rdma_sim_ring_free(s, &srq->ring);
    g_free(srq);
}

static void rdma_sim_cq_event(RdmaSimState *s, RdmaSimCq *cq)
{
    RdmaSimEq *eq = &s->eqs[cq->eqn];

    cq->arm = RSIM_CQ_ARM_NONE;
    if (cq->event_waiting) {
        return;
    }
    if (!QTAILQ_EMPTY(&eq->waiting) ||
        !rdma_sim_eq_write(s, eq, RSIM_EV_COMPLETION, cq->cqn)) {
        QTAILQ_INSERT_TAIL(&eq->waiting, cq, wait_link);
        cq->event_waiting = true;
    }
}

/* The CQ's ring is not accessible: tell the guest (CQ_ERR) once. */
static void rdma_sim_cq_bad_ring(RdmaSimState *s, RdmaSimCq *cq)
{
    rdma_sim_guest_error(s, "cq", "CQ %u ring not accessible", cq->cqn);
    if (!cq->overflow_reported) {
        cq->overflow_reported = true;
        rdma_sim_aeq_post(s, RSIM_EV_CQ_ERR, cq->cqn, 1);
    }
}

/*
 * Can the CQ take one more completion?  A full CQ is reported once with a
 * CQ_ERR async event (again after a completion fitted); nothing in it is
 * ever overwritten.  No CQ (NULL) has no room.
 */
bool rdma_sim_cq_has_room(RdmaSimState *s, RdmaSimCq *cq)
{
    uint32_t cons;

    if (!cq) {
        return false;
    }
    if (rdma_sim_ring_read_index(s, &cq->ring, RSIM_QUEUE_CONS_OFFSET, &cons)) {
        rdma_sim_cq_bad_ring(s, cq);
        return false;
    }
    if (((cq->prod + 1) & cq->ring.mask) == cons) {
        if (!cq->overflow_reported) {
            cq->overflow_reported = true;
            s->stats[RSIM_STAT_CQ_OVERFLOW]++;
            trace_rdma_sim_cq_overflow(cq->cqn);
            rdma_sim_aeq_post(s, RSIM_EV_CQ_ERR, cq->cqn, 0);
        }
        return false;
    }
    return true;
}

/*
 * Append a completion.  Returns false when the CQ is full or unusable: the
 * completion is not written and the caller keeps it to retry.
 */
bool rdma_sim_cq_post(RdmaSimState *s, RdmaSimCq *cq,
                      const struct rsim_cqe *cqe, bool solicited)
{
    return rdma_sim_cq_has_room(s, cq) &&
           rdma_sim_cq_write(s, cq, cqe, solicited);
}

/*
 * Append a completion to a CQ that rdma_sim_cq_has_room() said has room:
 * for a caller that must do something between that check and the write.
 * Returns false when the CQ's ring cannot be written.
 */
bool rdma_sim_cq_write(RdmaSimState *s, RdmaSimCq *cq,
                       const struct rsim_cqe *cqe, bool solicited)
{
    struct rsim_cqe out = *cqe;

    cq->overflow_reported = false;
    rdma_sim_fault_driver(s, RDMA_SIM_FAULT_CQE, &out);
    if (rdma_sim_ring_write_elem(s, &cq->ring, cq->prod, &out, sizeof(out)) ||
        rdma_sim_ring_write_index(s, &cq->ring, RSIM_QUEUE_PROD_OFFSET,
                                  (cq->prod + 1) & cq->ring.mask)) {
        rdma_sim_cq_bad_ring(s, cq);
        return false;
    }
    cq->prod = (cq->prod + 1) & cq->ring.mask;
    s->stats[RSIM_STAT_COMPLETIONS]++;
    trace_rdma_sim_cqe(cq->cqn, le32_to_cpu(cqe->qp_num),
                       le32_to_cpu(cqe->opcode), le32_to_cpu(cqe->status),
                       le32_to_cpu(cqe->byte_len));
    if (cq->arm == RSIM_CQ_ARM_NEXT ||
        (cq->arm == RSIM_CQ_ARM_SOLICITED &&
         (solicited || cqe->status != cpu_to_le32(RSIM_WC_SUCCESS)))) {
        rdma_sim_cq_event(s, cq);
    }
    return true;
}

/*
 * Arm a CQ.  If it already holds completions its consumer has not taken
 * (the ring's consumer index behind the device's producer index), the
 * event fires at once: a consumer arms, then polls, then sleeps, and a
 * doorbell can reach the device after a completion the poll did not see -
 * out of process the doorbell is a posted message that waits behind the
 * device's own work.  An event too many only makes the consumer poll; one
 * too few leaves it asleep.  (Hardware NICs close the same race so.)
 */
void rdma_sim_cq_arm(RdmaSimState *s, RdmaSimCq *cq, unsigned arm)
{
    uint32_t cons;

    if (arm > RSIM_CQ_ARM_SOLICITED) {
        rdma_sim_guest_error(s, "cq", "CQ %u bad arm value %u", cq->cqn, arm);
        return;
    }
    trace_rdma_sim_cq_arm(cq->cqn, arm);
    /* NEXT is the stronger request; SOLICITED never weakens it. */
    if (arm == RSIM_CQ_ARM_NEXT || cq->arm == RSIM_CQ_ARM_NONE) {
        cq->arm = arm;
    }
    if (cq->arm == RSIM_CQ_ARM_NONE) {
        return;
    }
    if (rdma_sim_ring_read_index(s, &cq->ring, RSIM_QUEUE_CONS_OFFSET,
                                 &cons)) {
        rdma_sim_cq_bad_ring(s, cq);    /* (a sleeper learns of it so) */
    } else if (cons != cq->prod) {
        rdma_sim_cq_event(s, cq);
    }
}

uint32_t rdma_sim_num_eqs(RdmaSimState *s)
{
    return s->props.msix_vectors - 1;
}

RdmaSimEq *rdma_sim_eq_lookup(RdmaSimState *s, uint32_t eqn)
{
    return eqn < rdma_sim_num_eqs(s) && s->eqs[eqn].valid ? &s->eqs[eqn] : NULL;
}

/*
 * The rules every CQ meets, however it comes: from CREATE_CQ (admin.c) or
 * a migration stream (migration.c) - its EQ and its doorbell page.  The
 * status is CREATE_CQ's; why says what was wrong.
 */
enum rsim_status rdma_sim_cq_new_check(RdmaSimState *s, const RdmaSimCq *cq,
                                       const char **why)
{
    if (!rdma_sim_eq_lookup(s, cq->eqn)) {
        *why = "no such EQ";
        return RSIM_STS_BAD_HANDLE;
    }
    if (cq->db_page >= s->props.db_pages) {
        *why = "doorbell page beyond DB_PAGES";
        return RSIM_STS_INVALID;
    }
    return RSIM_STS_OK;
}

/*
 * A CQ built by CREATE_CQ or read from a migration stream joins the table
 * and references its EQ; rdma_sim_cq_destroy() undoes it.
 */
void rdma_sim_cq_attach(RdmaSimState *s, RdmaSimCq *cq)
{
    cq->valid = true;
    s->eqs[cq->eqn].refs++;
    s->cqs[cq->cqn] = cq;
}

void rdma_sim_cq_destroy(RdmaSimState *s, RdmaSimCq *cq)
{
    RdmaSimEq *eq = &s->eqs[cq->eqn];

    if (cq->event_waiting) {
        QTAILQ_REMOVE(&eq->waiting, cq, wait_link);
    }
    eq->refs--;
    s->cqs[cq->cqn] = NULL;
    rdma_sim_ring_free(s, &cq->ring);
    g_free(cq);
}

/*
 * Report the port state to the driver: on every change, and when the
 * device is enabled (announce).
 */
void rdma_sim_port_update(RdmaSimState *s, bool announce)
{
    bool active = rdma_sim_link_up(s);

    if (!rdma_sim_ready(s)) {
        s->port_active = false;
        return;
    }
    if (active == s->port_active && !announce) {
        return;
    }
    s->port_active = active;
    trace_rdma_sim_port_state(active);
    rdma_sim_aeq_post(s, active ? RSIM_EV_PORT_ACTIVE : RSIM_EV_PORT_DOWN,
                      1, 0);
}

/*
 * Frames for the engine's bottom half (looped back, or delivered while the
 * device was busy), each queue bounded by its max.
 */
bool rdma_sim_frame_queue(RdmaSimState *s, GQueue *q, unsigned max,
                          const uint8_t *data, size_t len)
{
    if (g_queue_get_length(q) >= max) {
        return false;
    }
    g_queue_push_tail(q, g_byte_array_append(g_byte_array_sized_new(len),
                                             data, len));
    qemu_bh_schedule(s->xport_bh);
    return true;
}
