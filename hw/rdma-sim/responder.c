/*
 * rdma-sim: RC responder - incoming requests
 *
 * Requests are executed strictly in PSN order.  A packet after a gap gets
 * one PSN sequence NAK; a duplicate SEND or WRITE is acknowledged again; a
 * duplicate READ or atomic is answered from the responder resources, so an
 * atomic is never executed twice.  A SEND (or WRITE with immediate) that
 * finds no receive WQE gets an RNR NAK and is retried by the requester.
 * Invalid requests, access violations and operational errors are NAKed
 * and move the QP to ERR, as IBTA class C errors require.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "platform.h"
#include "stages.h"
#include "trace.h"

static void rdma_sim_resp_send_aeth(RdmaSimState *s, RdmaSimQp *qp,
                                    uint8_t opcode, uint8_t syndrome,
                                    uint32_t psn, const uint64_t *orig)
{
    RoceFrame frame;

    roce_frame_start(&frame, &qp->x->path, opcode, false, false,
                     qp->dest_qpn, psn);
    roce_put_aeth(&frame, syndrome, qp->x->msn);
    if (orig) {
        roce_put_u64(&frame, *orig);
    }
    roce_frame_finish(&frame, 0);
    rdma_sim_xmit(s, &frame);
}

/*
 * Acknowledge everything up to psn.  ACKs are coalesced: the bottom half
 * sends one for the newest PSN after the frames that arrived together.
 */
static void rdma_sim_resp_ack(RdmaSimState *s, RdmaSimQp *qp, uint32_t psn)
{
    RdmaSimXport *x = qp->x;

    if (qp->type == RSIM_QPT_UC) {
        return;                 /* UC has no acknowledgements */
    }
    if (!x->ack_pending || roce_psn_cmp(psn, x->ack_psn) > 0) {
        x->ack_psn = psn;
    }
    x->ack_pending = true;
    rdma_sim_qp_schedule(s, qp);
}

static void rdma_sim_resp_nak(RdmaSimState *s, RdmaSimQp *qp, uint8_t syndrome,
                              uint32_t psn)
{
    trace_rdma_sim_nak_sent(qp->qpn, psn, syndrome);
    rdma_sim_resp_send_aeth(s, qp, ROCE_RC_ACK, syndrome, psn, NULL);
}

/*
 * UC: drop the rest of the current message; the next message starts
 * afresh (a receive WQE in use is kept for it).
 */
static void rdma_sim_resp_uc_drop(RdmaSimState *s, RdmaSimQp *qp,
                                  const char *why)
{
    s->stats[RSIM_STAT_RX_DROP_NO_QP]++;
    trace_rdma_sim_rx_drop(qp->qpn, 0, why);
    qp->x->uc_drop = true;
    qp->x->msg = RDMA_SIM_RESP_IDLE;
}

/*
 * UC has no retransmission: a packet out of sequence loses the message it
 * belongs to.  A first packet always starts a new message.  Returns
 * whether the packet is to be executed.
 */
static bool rdma_sim_resp_uc_sequence(RdmaSimState *s, RdmaSimQp *qp,
                                      const RocePkt *pkt)
{
    RdmaSimXport *x = qp->x;

    if (pkt->psn == x->epsn && !x->uc_drop) {
        return true;
    }
    if (pkt->flags & ROCE_F_FIRST) {
        x->msg = RDMA_SIM_RESP_IDLE;
        x->uc_drop = false;
        x->epsn = pkt->psn;
        return true;
    }
    rdma_sim_resp_uc_drop(s, qp, "UC packet out of sequence");
    x->epsn = roce_psn_add(pkt->psn, 1);
    return false;
}

/* Complete the receive WQE in use; the sender is the peer QP. */
static bool rdma_sim_resp_complete(RdmaSimState *s, RdmaSimQp *qp,
                                   uint8_t status, uint32_t opcode,
                                   uint32_t byte_len, uint32_t ex,
                                   uint32_t wc_flags, bool se)
{
    return rdma_sim_rwqe_complete(s, qp, status, opcode, byte_len, ex,
                                  wc_flags, se, qp->dest_qpn, 0);
}

/*
 * A class C error: NAK the request, complete the receive WQE in use with
 * status (if any) and move the QP to ERR, with the affiliated async event
 * IBTA gives the responder for the NAK: an invalid request raises
 * QP_REQ_ERR, an access violation QP_ACCESS_ERR; a receive WQE the QP
 * cannot use (remote operational error) is reported by its completion
 * alone.  UC has no NAKs: the message is dropped and the QP carries on.
 */
static void rdma_sim_resp_fatal(RdmaSimState *s, RdmaSimQp *qp,
                                const RocePkt *pkt, uint8_t syndrome,
                                uint8_t status)
{
    RdmaSimXport *x = qp->x;

    if (qp->type != RSIM_QPT_UC) {
        rdma_sim_resp_nak(s, qp, syndrome, pkt->psn);
    }
    if (x->have_rwqe && status) {
        rdma_sim_resp_complete(s, qp, status, RSIM_WC_RECV, x->recv_len, 0, 0,
                               false);
    }
    x->msg = RDMA_SIM_RESP_IDLE;
    if (qp->type == RSIM_QPT_UC) {
        rdma_sim_resp_uc_drop(s, qp, "error");
    } else {
        rdma_sim_xport_fail(qp, syndrome == ROCE_NAK_INVALID_REQ ?
                            RSIM_EV_QP_REQ_ERR :
                            syndrome == ROCE_NAK_REM_ACCESS ?
                            RSIM_EV_QP_ACCESS_ERR : 0);
    }
}

/* A remote access violation (key, PD, rights, bounds): class C. */
static void rdma_sim_resp_access_error(RdmaSimState *s, RdmaSimQp *qp,
                                       const RocePkt *pkt)
{
    s->stats[RSIM_STAT_REM_ACCESS_ERR]++;
    rdma_sim_resp_fatal(s, qp, pkt, ROCE_NAK_REM_ACCESS, 0);
}

/*
 * Requests
 */

/*
 * A message that consumes a receive WQE: have one (else RNR NAK), and for
 * its last packet room for the completion (else no ACK: the requester
 * sends the packet again).  Returns whether the packet may be executed.
 */
static bool rdma_sim_resp_need_rwqe(RdmaSimState *s, RdmaSimQp *qp,
                                    const RocePkt *pkt, bool completes)
{
    switch (rdma_sim_rwqe_get(s, qp)) {
    case RDMA_SIM_RWQE_NONE:
        if (qp->type == RSIM_QPT_UC) {
            rdma_sim_resp_uc_drop(s, qp, "no receive WQE");
            return false;
        }
        s->stats[RSIM_STAT_RNR_NAK_SENT]++;
        rdma_sim_resp_nak(s, qp, ROCE_AETH_RNR_NAK | qp->min_rnr_timer,
                          pkt->psn);
        return false;
    case RDMA_SIM_RWQE_BAD:
        rdma_sim_resp_fatal(s, qp, pkt, ROCE_NAK_REM_OP, RSIM_WC_LOC_QP_OP_ERR);
        return false;
    default:
        return !completes || rdma_sim_rwqe_cq_room(s, qp);
    }
}

static void rdma_sim_resp_send(RdmaSimState *s, RdmaSimQp *qp,
                               const RocePkt *pkt)
{
    RdmaSimXport *x = qp->x;
    bool last = pkt->flags & ROCE_F_LAST;
    uint32_t wc_flags = 0, ex = 0;
    uint8_t status;

    if (!rdma_sim_resp_need_rwqe(s, qp, pkt, last)) {
        return;
    }
    if (pkt->flags & ROCE_F_FIRST) {
        x->recv_len = 0;        /* a WQE kept from a dropped UC message */
    }
    status = rdma_sim_rwqe_place(s, qp, pkt->payload, pkt->paylen);
    if (status != RSIM_WC_SUCCESS) {
        rdma_sim_resp_fatal(s, qp, pkt, status == RSIM_WC_LOC_LEN_ERR ?
                            ROCE_NAK_INVALID_REQ : ROCE_NAK_REM_OP, status);
        return;
    }
    x->epsn = roce_psn_add(x->epsn, 1);
    if (!last) {
        x->msg = RDMA_SIM_RESP_SEND;
    } else {
        if (pkt->flags & ROCE_F_IMMDT) {
            wc_flags |= RSIM_WC_WITH_IMM;
            ex = pkt->imm;
        }
        if (pkt->flags & ROCE_F_IETH) {
            if (!rdma_sim_stag_invalidate(s, pkt->inv_rkey, qp->pdn)) {
                rdma_sim_resp_fatal(s, qp, pkt, ROCE_NAK_INVALID_REQ,
                                    RSIM_WC_REM_INV_REQ_ERR);
                return;
            }
            wc_flags |= RSIM_WC_WITH_INV;
            ex = cpu_to_le32(pkt->inv_rkey);
        }
        x->msg = RDMA_SIM_RESP_IDLE;
        x->msn = (x->msn + 1) & 0xffffff;
        rdma_sim_resp_complete(s, qp, RSIM_WC_SUCCESS, RSIM_WC_RECV,
                               x->recv_len, ex, wc_flags, pkt->se);
    }
    if (pkt->ackreq) {
        rdma_sim_resp_ack(s, qp, pkt->psn);
    }
}

static void rdma_sim_resp_write(RdmaSimState *s, RdmaSimQp *qp,
                                const RocePkt *pkt)
{
    RdmaSimXport *x = qp->x;
    bool last = pkt->flags & ROCE_F_LAST;
    RdmaSimMr *mr;

    if (pkt->flags & ROCE_F_FIRST) {
        if (pkt->dma_len &&
            rdma_sim_mr_check(s, pkt->rkey, qp->pdn, RSIM_ACCESS_REMOTE_WRITE,
                              pkt->va, pkt->dma_len, &mr) != RSIM_STS_OK) {
            s->stats[RSIM_STAT_REM_ACCESS_ERR]++;
            rdma_sim_resp_fatal(s, qp, pkt, ROCE_NAK_REM_ACCESS, 0);
            return;
        }
        x->write_va = pkt->va;
        x->write_rkey = pkt->rkey;
        x->write_len = pkt->dma_len;
        x->write_resid = pkt->dma_len;
    }
    if (pkt->paylen > x->write_resid ||
        (last && pkt->paylen != x->write_resid) ||
        (pkt->opcode == ROCE_RC_ATOMIC_WRITE &&
         (pkt->dma_len != 8 || (pkt->va & 7)))) {
        rdma_sim_resp_fatal(s, qp, pkt, ROCE_NAK_INVALID_REQ, 0);
        return;
    }
    if (last && (pkt->flags & ROCE_F_IMMDT)) {
        /* the immediate needs a receive WQE before anything is written */
        if (!rdma_sim_resp_need_rwqe(s, qp, pkt, true)) {
            return;
        }
    }
    if (pkt->paylen &&
        rdma_sim_mr_dma(s, x->write_rkey, qp->pdn, RSIM_ACCESS_REMOTE_WRITE,
                        x->write_va, (void *)pkt->payload, pkt->paylen,
                        DMA_DIRECTION_FROM_DEVICE) != RSIM_STS_OK) {
        rdma_sim_resp_access_error(s, qp, pkt);
        return;
    }
    x->write_va += pkt->paylen;
    x->write_resid -= pkt->paylen;
    x->epsn = roce_psn_add(x->epsn, 1);
    if (!last) {
        x->msg = RDMA_SIM_RESP_WRITE;
    } else {
        x->msg = RDMA_SIM_RESP_IDLE;
        x->msn = (x->msn + 1) & 0xffffff;
        if (pkt->flags & ROCE_F_IMMDT) {
            rdma_sim_resp_complete(s, qp, RSIM_WC_SUCCESS,
                                   RSIM_WC_RECV_RDMA_WITH_IMM, x->write_len,
                                   pkt->imm, RSIM_WC_WITH_IMM, pkt->se);
        }
    }
    if (pkt->ackreq) {
        rdma_sim_resp_ack(s, qp, pkt->psn);
    }
}

/*
 * Send the coalesced ACK if its PSN is before psn.  Responses leave in PSN
 * order: an ACK beyond READ responses still to send tells the requester
 * they were lost.
 */
static void rdma_sim_resp_ack_before(RdmaSimState *s, RdmaSimQp *qp,
                                     uint32_t psn)
{
    RdmaSimXport *x = qp->x;

    if (x->ack_pending && roce_psn_cmp(x->ack_psn, psn) < 0) {
        x->ack_pending = false;
        rdma_sim_resp_send_aeth(s, qp, ROCE_RC_ACK,
                                ROCE_AETH_ACK | ROCE_AETH_CREDITS_INVALID,
                                x->ack_psn, NULL);
    }
}

/* Send READ response packet res->next_pkt. */
static bool rdma_sim_resp_read_packet(RdmaSimState *s, RdmaSimQp *qp,
                                      RdmaSimResource *res)
{
    RdmaSimXport *x = qp->x;
    uint32_t i = res->next_pkt;
    uint32_t off = i * x->mtu;
    uint32_t n = MIN(x->mtu, res->length - off);
    bool first = i == 0, last = i == res->npkts - 1;
    uint32_t psn = roce_psn_add(res->first_psn, i);
    uint8_t opcode;
    RoceFrame frame;

    if (first && last) {
        opcode = ROCE_RC_READ_RESP_ONLY;
    } else if (first) {
        opcode = ROCE_RC_READ_RESP_FIRST;
    } else if (last) {
        opcode = ROCE_RC_READ_RESP_LAST;
    } else {
        opcode = ROCE_RC_READ_RESP_MIDDLE;
    }
    roce_frame_start(&frame, &x->path, opcode, false, false, qp->dest_qpn,
                     psn);
    if (roce_opcode_flags(opcode) & ROCE_F_AETH) {
        roce_put_aeth(&frame, ROCE_AETH_ACK | ROCE_AETH_CREDITS_INVALID,
                      x->msn);
    }
    if (n && rdma_sim_mr_dma(s, res->rkey, qp->pdn, RSIM_ACCESS_REMOTE_READ,
                             res->va + off, roce_frame_put(&frame, n), n,
                             DMA_DIRECTION_TO_DEVICE) != RSIM_STS_OK) {
        s->stats[RSIM_STAT_REM_ACCESS_ERR]++;
        rdma_sim_resp_nak(s, qp, ROCE_NAK_REM_ACCESS, psn);
        return false;
    }
    roce_frame_finish(&frame, n);
    rdma_sim_xmit(s, &frame);
    res->next_pkt++;
    return true;
}

/*
 * Send pending READ responses, oldest READ first, at most *budget packets
 * and what the port's budget allows (flow.c).  Returns true if responses
 * remain that may go now (the QP is scheduled again); a QP that waits for
 * the budget is scheduled again when it has room.
 */
bool rdma_sim_resp_run(RdmaSimState *s, RdmaSimQp *qp, unsigned *budget)
{
    RdmaSimXport *x = qp->x;

    while (x->rd_count && *budget && rdma_sim_xmit_room(s)) {
        RdmaSimResource *res = &x->res[x->rd_fifo[x->rd_head]];

        if (res->pending && res->next_pkt < res->npkts) {
            rdma_sim_resp_ack_before(s, qp, roce_psn_add(res->first_psn,
                                                         res->next_pkt));
            if (!rdma_sim_flow_resp_may_send(s, qp)) {
                return false;
            }
            if (rdma_sim_resp_read_packet(s, qp, res)) {
                rdma_sim_flow_resp_sent(s, qp);
                (*budget)--;
                continue;
            }
        }
        res->pending = false;
        x->rd_head = (x->rd_head + 1) % x->nres;
        x->rd_count--;
    }
    if (!x->rd_count) {
        rdma_sim_resp_ack_before(s, qp, x->epsn);
    }
    return x->rd_count != 0;
}

/*
 * Queue a resource's responses from packet from on.  Resources are queued
 * in the order of their requests, so responses leave in PSN order.
 */
static void rdma_sim_resp_read_start(RdmaSimState *s, RdmaSimQp *qp,
                                     RdmaSimResource *res, uint32_t from)
{
    RdmaSimXport *x = qp->x;

    res->pending = true;
    res->next_pkt = from;
    x->rd_fifo[(x->rd_head + x->rd_count) % x->nres] = res - x->res;
    x->rd_count++;
    rdma_sim_qp_schedule(s, qp);
}

/*
 * Forget the queued responses of requests after psn: the requester went
 * back to psn and sends those requests again.
 */
static void rdma_sim_resp_read_cancel_after(RdmaSimXport *x, uint32_t psn)
{
    while (x->rd_count) {
        uint32_t tail = (x->rd_head + x->rd_count - 1) % x->nres;
        RdmaSimResource *res = &x->res[x->rd_fifo[tail]];

        if (roce_psn_cmp(res->first_psn, psn) <= 0) {
            break;
        }
        res->pending = false;
        x->rd_count--;
    }
}

/*
 * The responder resource the next READ or atomic gets, or NULL when all of
 * them (max_dest_rd_atomic) still have READ responses to send.  Nothing
 * changes until rdma_sim_resp_take() takes it.
 */
static RdmaSimResource *rdma_sim_resp_free_resource(RdmaSimXport *x)
{
    RdmaSimResource *res = &x->res[x->res_next];

    return res->pending ? NULL : res;
}

static void rdma_sim_resp_take(RdmaSimXport *x, RdmaSimResource *res,
                               const RocePkt *pkt, uint32_t npkts)
{
    x->res_next = (x->res_next + 1) % x->nres;
    memset(res, 0, sizeof(*res));
    res->valid = true;
    res->first_psn = pkt->psn;
    res->npkts = npkts;
    x->epsn = roce_psn_add(x->epsn, npkts);
    x->msn = (x->msn + 1) & 0xffffff;
}

static void rdma_sim_resp_read(RdmaSimState *s, RdmaSimQp *qp,
                               const RocePkt *pkt)
{
    RdmaSimXport *x = qp->x;
    RdmaSimResource *res = rdma_sim_resp_free_resource(x);
    RdmaSimMr *mr;

    /* IBTA: a message is at most 2^31 bytes, and needs a resource */
    if (!qp->max_dest_rd_atomic || !res ||
        pkt->dma_len > RDMA_SIM_MAX_MSG) {
        rdma_sim_resp_fatal(s, qp, pkt, ROCE_NAK_INVALID_REQ, 0);
        return;
    }
    if (pkt->dma_len &&
        rdma_sim_mr_check(s, pkt->rkey, qp->pdn, RSIM_ACCESS_REMOTE_READ,
                          pkt->va, pkt->dma_len, &mr) != RSIM_STS_OK) {
        rdma_sim_resp_access_error(s, qp, pkt);
        return;
    }
    rdma_sim_resp_take(x, res, pkt,
                       MAX(1, DIV_ROUND_UP(pkt->dma_len, x->mtu)));
    res->va = pkt->va;
    res->rkey = pkt->rkey;
    res->length = pkt->dma_len;
    rdma_sim_resp_read_start(s, qp, res, 0);
}

/*
 * The 8 bytes an atomic works on: checked and translated, 8-byte aligned
 * in guest memory as well as in the MR, so one access reads them and one
 * writes them.  Returns a NAK syndrome, or 0.
 */
static uint8_t rdma_sim_resp_atomic_target(RdmaSimState *s, RdmaSimQp *qp,
                                           const RocePkt *pkt, dma_addr_t *pa)
{
    RdmaSimSeg seg;
    RdmaSimMr *mr;

    if (pkt->va & 7) {
        return ROCE_NAK_INVALID_REQ;
    }
    if (rdma_sim_mr_check(s, pkt->rkey, qp->pdn, RSIM_ACCESS_REMOTE_ATOMIC,
                          pkt->va, 8, &mr) != RSIM_STS_OK ||
        rdma_sim_mr_map(s, mr, pkt->va, 8, &seg) != RSIM_STS_OK) {
        return ROCE_NAK_REM_ACCESS;
    }
    if (seg.len < 8 || (seg.addr & 7)) {
        return ROCE_NAK_INVALID_REQ;    /* split over two pages */
    }
    *pa = seg.addr;
    return 0;
}

static void rdma_sim_resp_atomic(RdmaSimState *s, RdmaSimQp *qp,
                                 const RocePkt *pkt)
{
    RdmaSimXport *x = qp->x;
    RdmaSimResource *res = rdma_sim_resp_free_resource(x);
    uint64_t le, orig, val;
    uint8_t nak = 0;
    dma_addr_t pa;

    /* Everything is checked before memory changes. */
    if (!qp->max_dest_rd_atomic || !res) {
        nak = ROCE_NAK_INVALID_REQ;
    } else {
        nak = rdma_sim_resp_atomic_target(s, qp, pkt, &pa);
    }
    if (nak == ROCE_NAK_INVALID_REQ) {
        rdma_sim_resp_fatal(s, qp, pkt, nak, 0);
        return;
    }
    if (nak || rdma_sim_dma_read(s, pa, &le, 8) != MEMTX_OK) {
        rdma_sim_resp_access_error(s, qp, pkt);
        return;
    }
    /*
     * The engine runs under the BQL, so this read-modify-write is atomic
     * with respect to every other QP of the device.
     */
    orig = le64_to_cpu(le);
    if (pkt->opcode == ROCE_RC_CMP_SWAP) {
        val = orig == pkt->compare ? pkt->swap_add : orig;
    } else {
        val = orig + pkt->swap_add;
    }
    le = cpu_to_le64(val);
    if (rdma_sim_dma_write(s, pa, &le, 8) != MEMTX_OK) {
        rdma_sim_resp_access_error(s, qp, pkt);
        return;
    }
    rdma_sim_resp_take(x, res, pkt, 1);
    res->atomic = true;
    res->orig = orig;
    rdma_sim_resp_send_aeth(s, qp, ROCE_RC_ATOMIC_ACK,
                            ROCE_AETH_ACK | ROCE_AETH_CREDITS_INVALID,
                            pkt->psn, &res->orig);
}

/* A request with a PSN the responder has already executed. */
static void rdma_sim_resp_duplicate(RdmaSimState *s, RdmaSimQp *qp,
                                    const RocePkt *pkt)
{
    RdmaSimXport *x = qp->x;

    s->stats[RSIM_STAT_DUP_REQ]++;
    if (pkt->flags & (ROCE_F_READ | ROCE_F_ATOMIC)) {
        for (uint32_t i = 0; i < x->nres; i++) {
            RdmaSimResource *res = &x->res[i];
            int32_t d = roce_psn_cmp(pkt->psn, res->first_psn);

            if (!res->valid || d < 0 || d >= (int32_t)res->npkts ||
                res->atomic != !!(pkt->flags & ROCE_F_ATOMIC)) {
                continue;
            }
            if (res->atomic) {
                rdma_sim_resp_send_aeth(s, qp, ROCE_RC_ATOMIC_ACK,
                                        ROCE_AETH_ACK |
                                        ROCE_AETH_CREDITS_INVALID,
                                        pkt->psn, &res->orig);
            } else if (pkt->rkey != res->rkey) {
                return;
            } else if (res->pending && (uint32_t)d >= res->next_pkt) {
                /*
                 * Asked for before it was sent (it waits for the port's
                 * budget): the peer timed out, nothing was lost.
                 */
                return;
            } else {
                /*
                 * Asked for again after it was sent: lost.  The port's
                 * budget is cut as for any loss, and the responses go
                 * back to the packet asked for.
                 */
                trace_rdma_sim_read_again(qp->qpn, pkt->psn);
                rdma_sim_flow_resp_lost(s, qp);
                if (res->pending) {
                    res->next_pkt = d;
                } else {
                    /*
                     * The requester went back to this READ and sends every
                     * later request again: answer from here, in order.
                     */
                    rdma_sim_resp_read_cancel_after(x, res->first_psn);
                    rdma_sim_resp_read_start(s, qp, res, d);
                }
            }
            return;
        }
        return;                 /* too old to replay: the requester times out */
    }
    /*
     * A duplicate SEND or WRITE is acknowledged with its own PSN, not the
     * newest one received: the requester is sending again from some PSN,
     * and an ACK beyond what it has sent again may complete the WQE it is
     * still sending.  Soft-RoCE's requester stalls for good then (its SQ
     * index falls behind the completed WQEs and, with a one-deep SQ, finds
     * the queue empty when the next WQE is posted).
     *
     * Not at all while a READ after it still has responses to send: they
     * acknowledge it.  An ACK older than the READ responses a requester is
     * taking in makes Soft-RoCE's completer forget it is inside a READ: the
     * next response fails the QP (with a kernel warning).  Once they are
     * sent, a duplicate is acknowledged again (the oldest-packet probe of
     * a requester whose READ responses were lost needs the answer).
     */
    for (uint32_t i = 0; i < x->nres; i++) {
        const RdmaSimResource *res = &x->res[i];

        if (res->valid && res->pending && res->next_pkt < res->npkts &&
            roce_psn_cmp(res->first_psn, pkt->psn) > 0 &&
            roce_psn_cmp(res->first_psn, x->epsn) < 0) {
            trace_rdma_sim_dup_unacked(qp->qpn, pkt->psn, res->first_psn);
            return;
        }
    }
    rdma_sim_resp_ack(s, qp, pkt->psn);
}

/* Is this opcode allowed now, after the packets before it? */
static bool rdma_sim_resp_sequence_ok(RdmaSimXport *x, const RocePkt *pkt)
{
    bool first = pkt->flags & ROCE_F_FIRST;

    switch (x->msg) {
    case RDMA_SIM_RESP_SEND:
        return !first && (pkt->flags & ROCE_F_SEND);
    case RDMA_SIM_RESP_WRITE:
        return !first && (pkt->flags & ROCE_F_WRITE);
    default:
        return first;
    }
}

/* Payload sizes IBTA allows for a packet's position in its message. */
static bool rdma_sim_resp_length_ok(RdmaSimXport *x, const RocePkt *pkt)
{
    bool first = pkt->flags & ROCE_F_FIRST, last = pkt->flags & ROCE_F_LAST;

    if (!(pkt->flags & (ROCE_F_SEND | ROCE_F_WRITE))) {
        return true;
    }
    if (first && last) {
        return pkt->paylen <= x->mtu;
    }
    if (!last) {
        return pkt->paylen == x->mtu;
    }
    return pkt->paylen && pkt->paylen <= x->mtu;
}

static bool rdma_sim_resp_access_ok(RdmaSimQp *qp, const RocePkt *pkt)
{
    if (pkt->flags & ROCE_F_WRITE) {
        return qp->access & RSIM_ACCESS_REMOTE_WRITE;
    }
    if (pkt->flags & ROCE_F_READ) {
        return qp->access & RSIM_ACCESS_REMOTE_READ;
    }
    if (pkt->flags & ROCE_F_ATOMIC) {
        return qp->access & RSIM_ACCESS_REMOTE_ATOMIC;
    }
    return true;
}

void rdma_sim_resp_rx(RdmaSimState *s, RdmaSimQp *qp, const RocePkt *pkt)
{
    RdmaSimXport *x = qp->x;
    int32_t d;

    if (!x || qp->state < RSIM_QPS_RTR || qp->state == RSIM_QPS_ERR) {
        return;
    }
    if (qp->state == RSIM_QPS_RTR && !x->comm_est) {
        x->comm_est = true;
        rdma_sim_aeq_post(s, RSIM_EV_COMM_EST, qp->qpn, 0);
    }
    if (qp->type == RSIM_QPT_UC && !rdma_sim_resp_uc_sequence(s, qp, pkt)) {
        return;
    }
    d = roce_psn_cmp(pkt->psn, x->epsn);
    if (d > 0) {
        if (!x->seq_nak_sent) {
            x->seq_nak_sent = true;
            s->stats[RSIM_STAT_SEQ_NAK_SENT]++;
            rdma_sim_resp_nak(s, qp, ROCE_NAK_PSN_SEQ, x->epsn);
        }
        return;
    }
    if (d < 0) {
        rdma_sim_resp_duplicate(s, qp, pkt);
        return;
    }
    x->seq_nak_sent = false;
    if (!rdma_sim_resp_sequence_ok(x, pkt) ||
        !rdma_sim_resp_length_ok(x, pkt) || !rdma_sim_resp_access_ok(qp, pkt)) {
        rdma_sim_guest_error(s, "responder", "QP %u: invalid request opcode "
                             "0x%02x PSN %u length %u", qp->qpn, pkt->opcode,
                             pkt->psn, pkt->paylen);
        rdma_sim_resp_fatal(s, qp, pkt, ROCE_NAK_INVALID_REQ,
                            RSIM_WC_REM_INV_REQ_ERR);
        return;
    }
    if (pkt->flags & ROCE_F_SEND) {
        rdma_sim_resp_send(s, qp, pkt);
    } else if (pkt->flags & ROCE_F_WRITE) {
        rdma_sim_resp_write(s, qp, pkt);
    } else if (pkt->flags & ROCE_F_READ) {
        rdma_sim_resp_read(s, qp, pkt);
    } else {
        rdma_sim_resp_atomic(s, qp, pkt);
    }
}

/*
 * The QP grants its peer n READ/atomic requests in flight (its
 * max_dest_rd_atomic): n responder resources.  Those it had are forgotten
 * with the responses still to send (SQD to SQD: the peer asks again).
 */
void rdma_sim_resp_resources(RdmaSimXport *x, uint32_t n)
{
    g_free(x->res);
    g_free(x->rd_fifo);
    x->nres = n;
    x->res = g_new0(RdmaSimResource, n);
    x->rd_fifo = g_new0(uint32_t, n);
    x->res_next = 0;
    x->rd_head = 0;
    x->rd_count = 0;
}

void rdma_sim_resp_clear(RdmaSimXport *x)
{
    x->ack_pending = false;
    x->have_rwqe = false;
    x->msg = RDMA_SIM_RESP_IDLE;
    x->seq_nak_sent = false;
    x->comm_est = false;
    memset(x->res, 0, sizeof(*x->res) * x->nres);
    x->res_next = 0;
    x->rd_head = 0;
    x->rd_count = 0;
}
