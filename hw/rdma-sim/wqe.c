/*
 * rdma-sim: work queue elements - the device's copies of send and receive
 * WQEs, and moving message bytes between them and packets
 *
 * A send WQE is copied once into a slot of the QP's private window (the
 * requester fills it, the completer retires it); a receive WQE is copied
 * when the message it receives starts.  Their scatter/gather lists are
 * read from guest memory once, and every byte moved through them goes
 * through the MR table with the rights the direction needs.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "platform.h"
#include "stages.h"
#include "trace.h"

/*
 * Scatter/gather lists
 */

/* Read n SGEs at offset off of a ring into sgl, in host byte order. */
MemTxResult rdma_sim_sgl_read(RdmaSimState *s, const RdmaSimRing *ring,
                              uint64_t off, uint32_t n, RdmaSimSgl *sgl)
{
    struct rsim_sge sge[RDMA_SIM_MAX_SGE];
    MemTxResult r;

    if (n > RDMA_SIM_MAX_SGE) {
        return MEMTX_DECODE_ERROR;
    }
    r = rdma_sim_ring_rw(s, ring, off, sge, n * sizeof(sge[0]),
                         DMA_DIRECTION_TO_DEVICE);
    if (r != MEMTX_OK) {
        return r;
    }
    for (uint32_t i = 0; i < n; i++) {
        sgl[i].addr = le64_to_cpu(sge[i].addr);
        sgl[i].length = le32_to_cpu(sge[i].length);
        sgl[i].lkey = le32_to_cpu(sge[i].lkey);
    }
    return MEMTX_OK;
}

/*
 * Copy n message bytes at message offset off between buf and the memory
 * an SGL describes: DMA_DIRECTION_TO_DEVICE reads the SGL into buf (local
 * read rights), DMA_DIRECTION_FROM_DEVICE writes buf into it (local write
 * rights).  *copied counts the bytes moved; RSIM_STS_RANGE when the SGL
 * ends first.
 */
static enum rsim_status rdma_sim_sgl_copy(RdmaSimState *s,
                                          const RdmaSimSgl *sgl,
                                          uint32_t nsge, uint32_t pdn,
                                          uint32_t off, uint8_t *buf,
                                          uint32_t n, DMADirection dir,
                                          uint32_t *copied)
{
    uint32_t access = dir == DMA_DIRECTION_TO_DEVICE ?
                      RSIM_ACCESS_LOCAL_READ : RSIM_ACCESS_LOCAL_WRITE;

    *copied = 0;
    for (uint32_t i = 0; i < nsge && n; i++) {
        uint32_t chunk;
        enum rsim_status st;

        if (off >= sgl[i].length) {
            off -= sgl[i].length;
            continue;
        }
        chunk = MIN(n, sgl[i].length - off);
        st = rdma_sim_mr_dma(s, sgl[i].lkey, pdn, access, sgl[i].addr + off,
                             buf, chunk, dir);
        if (st != RSIM_STS_OK) {
            return st;
        }
        *copied += chunk;
        buf += chunk;
        n -= chunk;
        off = 0;
    }
    return n ? RSIM_STS_RANGE : RSIM_STS_OK;
}

/*
 * Send WQEs
 */

/* The started, unfinished send WQE whose PSN range holds psn, if any */
RdmaSimWqe *rdma_sim_wqe_find(RdmaSimQp *qp, uint32_t psn)
{
    RdmaSimXport *x = qp->x;

    for (uint32_t idx = qp->sq_cons; idx != x->fetched;
         idx = (idx + 1) & qp->sq.mask) {
        RdmaSimWqe *w = rdma_sim_wqe_slot(x, idx);
        int32_t d;

        if (!w->started) {
            break;
        }
        if (w->done || !w->npkts) {
            continue;
        }
        d = roce_psn_cmp(psn, w->first_psn);
        if (d >= 0 && d < (int32_t)w->npkts) {
            return w;
        }
    }
    return NULL;
}

/* Copy message bytes [off, off + n) of a send WQE into buf. */
enum rsim_status rdma_sim_wqe_gather(RdmaSimState *s, RdmaSimQp *qp,
                                     const RdmaSimWqe *w, uint32_t off,
                                     uint8_t *buf, uint32_t n)
{
    uint32_t copied;

    if (w->is_inline) {
        memcpy(buf, w->data + off, n);
        return RSIM_STS_OK;
    }
    return rdma_sim_sgl_copy(s, rdma_sim_wqe_sgl(w), w->num_sge, qp->pdn,
                             off, buf, n, DMA_DIRECTION_TO_DEVICE, &copied);
}

/* Write received bytes (READ response, atomic result) into a send WQE. */
enum rsim_status rdma_sim_wqe_scatter(RdmaSimState *s, RdmaSimQp *qp,
                                      const RdmaSimWqe *w, uint32_t off,
                                      const uint8_t *buf, uint32_t n)
{
    uint32_t copied;

    return rdma_sim_sgl_copy(s, rdma_sim_wqe_sgl(w), w->num_sge, qp->pdn,
                             off, (uint8_t *)buf, n,
                             DMA_DIRECTION_FROM_DEVICE, &copied);
}

/*
 * Receive WQEs
 */

/* SRQ below its armed limit: report once and disarm. */
static void rdma_sim_srq_check_limit(RdmaSimState *s, RdmaSimSrq *srq,
                                     uint32_t prod)
{
    if (srq->limit && ((prod - srq->cons) & srq->ring.mask) < srq->limit) {
        srq->limit = 0;
        rdma_sim_aeq_post(s, RSIM_EV_SRQ_LIMIT, srq->srqn, 0);
    }
}

/*
 * Make x->rwqe the receive WQE for the message that starts now: the head
 * of the RQ (consumed when the message completes) or one taken from the
 * SRQ.
 */
enum rdma_sim_rwqe_result rdma_sim_rwqe_get(RdmaSimState *s, RdmaSimQp *qp)
{
    RdmaSimXport *x = qp->x;
    RdmaSimSrq *srq = qp->srqn != RSIM_NO_SRQ ?
                      rdma_sim_srq_lookup(s, qp->srqn) : NULL;
    RdmaSimRing *ring = srq ? &srq->ring : &qp->rq;
    uint32_t cons = srq ? srq->cons : qp->rq_cons;
    uint32_t max_sge = srq ? srq->max_sge : qp->max_recv_sge;
    struct rsim_recv_wqe hdr;
    uint32_t prod, nsge;

    if (x->have_rwqe) {
        return RDMA_SIM_RWQE_OK;
    }
    if (qp->srqn != RSIM_NO_SRQ && !srq) {
        return RDMA_SIM_RWQE_BAD;
    }
    if (rdma_sim_ring_read_index(s, ring, RSIM_QUEUE_PROD_OFFSET, &prod)) {
        return RDMA_SIM_RWQE_BAD;
    }
    if (cons == prod) {
        return RDMA_SIM_RWQE_NONE;
    }
    if (rdma_sim_ring_read_elem(s, ring, cons, &hdr, sizeof(hdr))) {
        return RDMA_SIM_RWQE_BAD;
    }
    nsge = le32_to_cpu(hdr.dma.num_sge);
    if (nsge > max_sge ||
        rdma_sim_sgl_read(s, ring, rdma_sim_ring_elem_offset(ring, cons) +
                          RSIM_RECV_WQE_HDR_SIZE, nsge, x->rwqe_sge)) {
        rdma_sim_guest_error(s, "rq", "QP %u: receive WQE %u malformed",
                             qp->qpn, cons);
        return RDMA_SIM_RWQE_BAD;
    }
    /* only a count that fits rwqe_sge[] is kept (migration.c relies on it) */
    x->rwqe_nsge = nsge;
    memcpy(&x->rwqe_id, &hdr.wr_id, sizeof(x->rwqe_id));
    x->rwqe_pdn = srq ? srq->pdn : qp->pdn;
    x->rwqe_from_srq = srq != NULL;
    x->recv_len = 0;
    x->have_rwqe = true;
    if (srq) {
        srq->cons = (srq->cons + 1) & srq->ring.mask;
        if (rdma_sim_ring_write_index(s, &srq->ring, RSIM_QUEUE_CONS_OFFSET,
                                      srq->cons)) {
            rdma_sim_aeq_post(s, RSIM_EV_SRQ_ERR, srq->srqn, 0);
        }
        rdma_sim_srq_check_limit(s, srq, prod);
    }
    return RDMA_SIM_RWQE_OK;
}

/* Can the receive CQ take the receive WQE's completion? */
bool rdma_sim_rwqe_cq_room(RdmaSimState *s, RdmaSimQp *qp)
{
    return rdma_sim_cq_has_room(s, rdma_sim_cq_lookup(s, qp->recv_cqn));
}

/* Place received bytes into the receive WQE, after those placed before. */
uint8_t rdma_sim_rwqe_place(RdmaSimState *s, RdmaSimQp *qp,
                            const uint8_t *buf, uint32_t n)
{
    RdmaSimXport *x = qp->x;
    uint32_t copied;
    enum rsim_status st;

    st = rdma_sim_sgl_copy(s, x->rwqe_sge, x->rwqe_nsge, x->rwqe_pdn,
                           x->recv_len, (uint8_t *)buf, n,
                           DMA_DIRECTION_FROM_DEVICE, &copied);
    x->recv_len += copied;
    if (st == RSIM_STS_RANGE) {
        return RSIM_WC_LOC_LEN_ERR;
    }
    if (st != RSIM_STS_OK) {
        s->stats[RSIM_STAT_LOC_PROT_ERR]++;
        return RSIM_WC_LOC_PROT_ERR;
    }
    return RSIM_WC_SUCCESS;
}

/*
 * Complete the receive WQE in use with a message from src_qp (sl as
 * RSIM_CQE_SL_* says); false (the WQE stays in use) when the CQ is full.
 */
bool rdma_sim_rwqe_complete(RdmaSimState *s, RdmaSimQp *qp, uint8_t status,
                            uint32_t opcode, uint32_t byte_len, uint32_t ex,
                            uint32_t wc_flags, bool se, uint32_t src_qp,
                            uint8_t sl)
{
    RdmaSimXport *x = qp->x;
    struct rsim_cqe cqe = {
        .wr_id = x->rwqe_id,
        .status = cpu_to_le32(status),
        .opcode = cpu_to_le32(opcode),
        .byte_len = cpu_to_le32(byte_len),
        .ex = ex,
        .qp_num = cpu_to_le32(qp->qpn),
        .src_qp = cpu_to_le32(src_qp),
        .wc_flags = cpu_to_le32(wc_flags),
        .sl = sl,
        .port_num = 1,
    };

    if (!rdma_sim_cq_post(s, rdma_sim_cq_lookup(s, qp->recv_cqn), &cqe, se)) {
        return false;
    }
    x->have_rwqe = false;
    if (!x->rwqe_from_srq) {
        qp->rq_cons = (qp->rq_cons + 1) & qp->rq.mask;
        rdma_sim_ring_write_index(s, &qp->rq, RSIM_QUEUE_CONS_OFFSET,
                                  qp->rq_cons);
    }
    return true;
}
