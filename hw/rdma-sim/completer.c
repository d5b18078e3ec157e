/*
 * rdma-sim: RC completer - acknowledgements, responses, retries and send
 * completions
 *
 * Send WQEs complete strictly in order.  A WQE is finished when the
 * responder acknowledged its last PSN (SEND, WRITE), when its last response
 * arrived (READ, atomic) or when the requester executed it (local
 * operations).  Errors complete the failing WQE with its status and move
 * the QP to ERR, which flushes the rest.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "platform.h"
#include "stages.h"
#include "trace.h"

/* IBTA RNR NAK timer field to nanoseconds */
static int64_t rdma_sim_rnr_ns(unsigned code)
{
    static const uint32_t us[32] = {
        655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
        1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
        40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
    };

    return (int64_t)us[code & 31] * SCALE_US;
}

static uint32_t rdma_sim_wqe_byte_len(const RdmaSimWqe *w)
{
    switch (w->opcode) {
    case RSIM_WR_ATOMIC_CMP_AND_SWP:
    case RSIM_WR_ATOMIC_FETCH_AND_ADD:
        return 8;
    case RSIM_WR_LOCAL_INV:
    case RSIM_WR_REG_MR:
        return 0;
    default:
        return w->length;
    }
}

/* SQD: once nothing started is left, the drain is over. */
void rdma_sim_comp_check_drained(RdmaSimState *s, RdmaSimQp *qp)
{
    RdmaSimXport *x = qp->x;

    if (qp->state == RSIM_QPS_SQD && qp->sq_draining &&
        qp->sq_cons == x->req_idx) {
        qp->sq_draining = false;
        trace_rdma_sim_sq_drained(qp->qpn);
        if (qp->en_sqd_async_notify) {
            rdma_sim_aeq_post(s, RSIM_EV_SQ_DRAINED, qp->qpn, 0);
        }
    }
}

/*
 * Tell the driver how far the SQ is consumed; a QP whose SQ header cannot
 * be written fails (and true is returned).
 */
static bool rdma_sim_comp_sq_cons(RdmaSimState *s, RdmaSimQp *qp)
{
    if (rdma_sim_ring_write_index(s, &qp->sq, RSIM_QUEUE_CONS_OFFSET,
                                  qp->sq_cons)) {
        rdma_sim_guest_error(s, "sq", "QP %u SQ header not writable",
                             qp->qpn);
        rdma_sim_xport_fail(qp, RSIM_EV_QP_FATAL);
        return true;
    }
    return false;
}

/* Complete finished WQEs from the oldest on. */
void rdma_sim_comp_run(RdmaSimState *s, RdmaSimQp *qp)
{
    RdmaSimXport *x = qp->x;
    RdmaSimCq *cq = rdma_sim_cq_lookup(s, qp->send_cqn);
    bool progress = false;

    if (!x || rdma_sim_xport_failed(qp)) {
        return;             /* in ERR, qp.c flushes what is left */
    }
    while (qp->sq_cons != x->fetched) {
        RdmaSimWqe *w = rdma_sim_wqe_slot(x, qp->sq_cons);
        uint8_t status;

        if (!w->started) {
            break;
        }
        if (!w->done) {
            if (rdma_sim_wr_needs_response(w->opcode) || !w->npkts ||
                w->next_pkt < w->npkts ||
                roce_psn_cmp(roce_psn_add(w->first_psn, w->npkts - 1),
                             x->comp_psn) >= 0) {
                break;
            }
            w->done = true;
        }
        status = w->status;
        if ((w->signaled || status) && !rdma_sim_cq_has_room(s, cq)) {
            /* CQ full: keep the WQE, look again soon */
            x->cq_stalled = true;
            timer_mod(x->retry_timer,
                      qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                      RDMA_SIM_CQ_RETRY_NS);
            break;
        }
        if (rdma_sim_wr_needs_response(w->opcode) && w->npkts) {
            x->rd_atomic_out--;
        }
        qp->sq_cons = (qp->sq_cons + 1) & qp->sq.mask;
        progress = true;
        if (w->signaled || status) {
            struct rsim_cqe cqe = {
                .wr_id = w->wr_id,
                .status = cpu_to_le32(status),
                .opcode = cpu_to_le32(rdma_sim_wc_opcode(w->opcode)),
                .byte_len = cpu_to_le32(rdma_sim_wqe_byte_len(w)),
                .qp_num = cpu_to_le32(qp->qpn),
                .port_num = 1,
            };

            /*
             * The WQE's slot is the driver's again before its completion
             * shows: a program that posts its next send when it sees the
             * completion must find the SQ with room (librxe reads the
             * consumer index; Soft-RoCE advances it first too).  In the
             * other order, ibv_rc_pingpong's one-deep SQ was seen full
             * now and then ("Couldn't post send").
             */
            if (rdma_sim_comp_sq_cons(s, qp)) {
                return;
            }
            rdma_sim_cq_write(s, cq, &cqe, false);
        }
        if (status && qp->type == RSIM_QPT_RC) {
            /* the consumer index went out with the completion above */
            trace_rdma_sim_wqe_error(qp->qpn, w->opcode, status);
            rdma_sim_xport_fail(qp, 0);
            return;
        }
    }
    x->cq_stalled = x->cq_stalled && !progress;
    if (progress) {
        if (rdma_sim_comp_sq_cons(s, qp)) {
            return;
        }
        rdma_sim_comp_check_drained(s, qp);
        /* the window, the READ limit or a fence may have opened */
        rdma_sim_qp_schedule(s, qp);
    }
}

/*
 * The oldest READ or atomic still waiting for responses, and the PSN of
 * the response it needs next.  Responses arrive in PSN order, so any other
 * response means some were lost.
 */
static RdmaSimWqe *rdma_sim_comp_awaited(RdmaSimQp *qp, uint32_t *psn)
{
    RdmaSimXport *x = qp->x;

    for (uint32_t idx = qp->sq_cons; idx != x->fetched;
         idx = (idx + 1) & qp->sq.mask) {
        RdmaSimWqe *w = rdma_sim_wqe_slot(x, idx);

        if (!w->started) {
            break;
        }
        if (!w->done && rdma_sim_wr_needs_response(w->opcode) && w->npkts) {
            *psn = roce_psn_add(w->first_psn, w->rcvd_pkts);
            return w;
        }
    }
    return NULL;
}

/*
 * Packets from psn on must be sent again.  The requester goes back to the
 * earliest PSN asked for (transport.c hands it over when the completer is
 * done); the QP gets a turn to send them.
 */
static void rdma_sim_comp_go_back(RdmaSimState *s, RdmaSimQp *qp,
                                  uint32_t psn)
{
    RdmaSimXport *x = qp->x;

    if (!x->go_back || roce_psn_cmp(psn, x->go_back_psn) < 0) {
        x->go_back_psn = psn;
    }
    x->go_back = true;
    rdma_sim_qp_schedule(s, qp);
}

/* Resend from psn, once per gap: the responses that follow are dropped. */
static void rdma_sim_comp_gap(RdmaSimState *s, RdmaSimQp *qp, uint32_t psn)
{
    RdmaSimXport *x = qp->x;

    if (x->nak_restart_valid && x->last_nak_psn == psn) {
        return;
    }
    x->nak_restart_valid = true;
    x->last_nak_psn = psn;
    s->stats[RSIM_STAT_RETRANSMITS]++;
    rdma_sim_flow_loss(s, qp);
    rdma_sim_comp_go_back(s, qp, psn);
}

/*
 * Resend from psn whatever gaps were handled before: a probe found a READ
 * or atomic unanswered, and only asking again brings its responses.
 */
void rdma_sim_comp_resend(RdmaSimState *s, RdmaSimQp *qp, uint32_t psn)
{
    qp->x->nak_restart_valid = false;
    rdma_sim_comp_go_back(s, qp, psn);
}

/* The oldest unfinished WQE fails with status; the QP goes to ERR. */
static void rdma_sim_comp_fail(RdmaSimState *s, RdmaSimQp *qp, RdmaSimWqe *w,
                               uint8_t status)
{
    RdmaSimXport *x = qp->x;

    if (!w) {
        for (uint32_t idx = qp->sq_cons; idx != x->fetched;
             idx = (idx + 1) & qp->sq.mask) {
            if (!rdma_sim_wqe_slot(x, idx)->done) {
                w = rdma_sim_wqe_slot(x, idx);
                break;
            }
        }
    }
    if (w) {
        w->status = status;
        w->done = true;
        x->req_error = true;
        rdma_sim_comp_run(s, qp);
    }
}

/* Progress: every PSN before new_comp is acknowledged. */
static void rdma_sim_comp_advance(RdmaSimState *s, RdmaSimQp *qp,
                                  uint32_t new_comp)
{
    RdmaSimXport *x = qp->x;
    uint32_t missing, old_comp = x->comp_psn;

    if (roce_psn_cmp(new_comp, x->comp_psn) <= 0) {
        return;
    }
    /*
     * An acknowledgement beyond a READ or atomic that has no response yet
     * means the responses were lost: ask again (implicit NAK).
     */
    if (rdma_sim_comp_awaited(qp, &missing) &&
        roce_psn_cmp(missing, new_comp) < 0) {
        new_comp = missing;
        if (roce_psn_cmp(new_comp, x->comp_psn) > 0) {
            x->comp_psn = new_comp;
        }
        rdma_sim_comp_gap(s, qp, missing);
    }
    if (roce_psn_cmp(new_comp, x->comp_psn) > 0) {
        x->comp_psn = new_comp;
    }
    x->retry_left = qp->retry_cnt;
    x->rnr_left = qp->rnr_retry;
    timer_del(x->retry_timer);
    if (rdma_sim_flow_acked(s, qp, old_comp)) {
        /* a probe's answer: what came after it was lost */
        rdma_sim_comp_gap(s, qp, x->comp_psn);
    }
    /* the window moved: the requester may send more of a long message */
    rdma_sim_qp_schedule(s, qp);
}

static void rdma_sim_comp_read_resp(RdmaSimState *s, RdmaSimQp *qp,
                                    const RocePkt *pkt)
{
    RdmaSimXport *x = qp->x;
    uint32_t expected, off, want;
    RdmaSimWqe *w = rdma_sim_comp_awaited(qp, &expected);
    bool first, last;

    if (!w || pkt->psn != expected) {
        if (w && roce_psn_cmp(pkt->psn, expected) > 0) {
            rdma_sim_comp_gap(s, qp, expected); /* responses went missing */
        }
        return;                 /* duplicate or stale: ignore */
    }
    if (w->opcode != RSIM_WR_RDMA_READ) {
        rdma_sim_comp_fail(s, qp, w, RSIM_WC_BAD_RESP_ERR);
        return;
    }
    /* each request of the READ has its own first and last response */
    first = w->rcvd_pkts % w->read_chunk == 0;
    last = w->rcvd_pkts == w->npkts - 1 ||
           (w->rcvd_pkts + 1) % w->read_chunk == 0;
    off = w->rcvd_pkts * x->mtu;
    want = w->rcvd_pkts == w->npkts - 1 ? w->length - off : x->mtu;
    if (first != !!(pkt->flags & ROCE_F_FIRST) ||
        last != !!(pkt->flags & ROCE_F_LAST) || pkt->paylen != want ||
        ((pkt->flags & ROCE_F_AETH) &&
         (pkt->syndrome & ROCE_AETH_TYPE_MASK) != ROCE_AETH_ACK)) {
        rdma_sim_guest_error(s, "read", "QP %u: bad READ response PSN %u",
                             qp->qpn, pkt->psn);
        rdma_sim_comp_fail(s, qp, w, RSIM_WC_BAD_RESP_ERR);
        return;
    }
    if (want && rdma_sim_wqe_scatter(s, qp, w, off, pkt->payload, want) !=
        RSIM_STS_OK) {
        s->stats[RSIM_STAT_LOC_PROT_ERR]++;
        rdma_sim_comp_fail(s, qp, w, RSIM_WC_LOC_PROT_ERR);
        return;
    }
    w->rcvd_pkts++;
    if (w->rcvd_pkts == w->npkts) {
        w->done = true;
    }
    rdma_sim_comp_advance(s, qp, roce_psn_add(pkt->psn, 1));
    rdma_sim_comp_run(s, qp);
}

static void rdma_sim_comp_atomic_ack(RdmaSimState *s, RdmaSimQp *qp,
                                     const RocePkt *pkt)
{
    uint32_t expected;
    RdmaSimWqe *w = rdma_sim_comp_awaited(qp, &expected);
    uint64_t orig = cpu_to_le64(pkt->orig);

    if (!w || pkt->psn != expected) {
        if (w && roce_psn_cmp(pkt->psn, expected) > 0) {
            rdma_sim_comp_gap(s, qp, expected);
        }
        return;
    }
    if (w->opcode == RSIM_WR_RDMA_READ) {
        rdma_sim_comp_fail(s, qp, w, RSIM_WC_BAD_RESP_ERR);
        return;
    }
    if ((pkt->syndrome & ROCE_AETH_TYPE_MASK) != ROCE_AETH_ACK) {
        rdma_sim_comp_fail(s, qp, w, RSIM_WC_BAD_RESP_ERR);
        return;
    }
    if (rdma_sim_wqe_scatter(s, qp, w, 0, (const uint8_t *)&orig, 8) !=
        RSIM_STS_OK) {
        s->stats[RSIM_STAT_LOC_PROT_ERR]++;
        rdma_sim_comp_fail(s, qp, w, RSIM_WC_LOC_PROT_ERR);
        return;
    }
    w->rcvd_pkts = 1;
    w->done = true;
    rdma_sim_comp_advance(s, qp, roce_psn_add(pkt->psn, 1));
    rdma_sim_comp_run(s, qp);
}

static void rdma_sim_comp_rnr(RdmaSimState *s, RdmaSimQp *qp,
                              const RocePkt *pkt)
{
    RdmaSimXport *x = qp->x;

    s->stats[RSIM_STAT_RNR_NAK_RCVD]++;
    rdma_sim_comp_advance(s, qp, pkt->psn);
    rdma_sim_comp_run(s, qp);
    if (rdma_sim_xport_failed(qp) || x->rnr_wait) {
        return;
    }
    if (qp->rnr_retry != 7) {
        if (!x->rnr_left) {
            rdma_sim_comp_fail(s, qp, rdma_sim_wqe_find(qp, pkt->psn),
                               RSIM_WC_RNR_RETRY_EXC_ERR);
            return;
        }
        x->rnr_left--;
    }
    x->rnr_wait = true;
    x->rnr_psn = pkt->psn;
    timer_del(x->retry_timer);
    timer_mod(x->rnr_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
              rdma_sim_rnr_ns(pkt->syndrome));
}

void rdma_sim_comp_rnr_expired(RdmaSimState *s, RdmaSimQp *qp)
{
    RdmaSimXport *x = qp->x;

    if (!x->rnr_wait) {
        return;
    }
    x->rnr_wait = false;
    rdma_sim_comp_go_back(s, qp, x->rnr_psn);
}

static void rdma_sim_comp_nak(RdmaSimState *s, RdmaSimQp *qp,
                              const RocePkt *pkt)
{
    uint8_t status;

    rdma_sim_comp_advance(s, qp, pkt->psn);
    rdma_sim_comp_run(s, qp);
    if (rdma_sim_xport_failed(qp)) {
        return;
    }
    switch (pkt->syndrome) {
    case ROCE_NAK_PSN_SEQ:
        s->stats[RSIM_STAT_SEQ_NAK_RCVD]++;
        rdma_sim_comp_gap(s, qp, pkt->psn);
        return;
    case ROCE_NAK_INVALID_REQ:
        status = RSIM_WC_REM_INV_REQ_ERR;
        break;
    case ROCE_NAK_REM_ACCESS:
        status = RSIM_WC_REM_ACCESS_ERR;
        break;
    default:
        status = RSIM_WC_REM_OP_ERR;
        break;
    }
    trace_rdma_sim_nak_rcvd(qp->qpn, pkt->psn, pkt->syndrome);
    rdma_sim_comp_fail(s, qp, rdma_sim_wqe_find(qp, pkt->psn), status);
}

/* A response packet (ACK, NAK, READ response, atomic ACK) for this QP. */
void rdma_sim_comp_rx(RdmaSimState *s, RdmaSimQp *qp, const RocePkt *pkt)
{
    RdmaSimXport *x = qp->x;

    if (!x || (qp->state != RSIM_QPS_RTS && qp->state != RSIM_QPS_SQD)) {
        return;
    }
    /* Only PSNs the requester has sent can be answered. */
    if (roce_psn_cmp(pkt->psn, x->next_psn) >= 0 ||
        roce_psn_cmp(pkt->psn, x->comp_psn) < -1) {
        return;
    }
    switch (pkt->opcode) {
    case ROCE_RC_ACK:
        switch (pkt->syndrome & ROCE_AETH_TYPE_MASK) {
        case ROCE_AETH_ACK:
            rdma_sim_comp_advance(s, qp, roce_psn_add(pkt->psn, 1));
            rdma_sim_comp_run(s, qp);
            break;
        case ROCE_AETH_RNR_NAK:
            rdma_sim_comp_rnr(s, qp, pkt);
            break;
        case ROCE_AETH_NAK:
            rdma_sim_comp_nak(s, qp, pkt);
            break;
        default:
            break;              /* reserved syndrome: ignore */
        }
        break;
    case ROCE_RC_ATOMIC_ACK:
        rdma_sim_comp_atomic_ack(s, qp, pkt);
        break;
    default:
        rdma_sim_comp_read_resp(s, qp, pkt);
        break;
    }
    /*
     * Whatever happened, unacknowledged PSNs need the timer: a resent
     * packet can be lost again.
     */
    if (!rdma_sim_xport_failed(qp)) {
        rdma_sim_retry_timer_update(s, qp);
    }
}

/* The retransmission timer expired (or a CQ-full retry is due). */
void rdma_sim_comp_timeout(RdmaSimState *s, RdmaSimQp *qp)
{
    RdmaSimXport *x = qp->x;

    if (!x || (qp->state != RSIM_QPS_RTS && qp->state != RSIM_QPS_SQD)) {
        return;
    }
    if (x->cq_stalled) {
        rdma_sim_comp_run(s, qp);
        if (x->cq_stalled || x->fail) {
            return;
        }
    }
    if (!rdma_sim_xport_outstanding(qp) || x->rnr_wait) {
        return;
    }
    s->stats[RSIM_STAT_TIMEOUTS]++;
    if (qp->retry_cnt != 7) {
        if (!x->retry_left) {
            trace_rdma_sim_retry_exceeded(qp->qpn, x->comp_psn);
            rdma_sim_comp_fail(s, qp, NULL, RSIM_WC_RETRY_EXC_ERR);
            return;
        }
        x->retry_left--;
    }
    s->stats[RSIM_STAT_RETRANSMITS]++;
    x->nak_restart_valid = false;
    rdma_sim_flow_loss(s, qp);
    rdma_sim_comp_go_back(s, qp, x->comp_psn);
    rdma_sim_retry_timer_update(s, qp);
}
