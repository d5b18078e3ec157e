/*
 * rdma-sim: RC requester - send WQEs to request packets
 *
 * Each WQE is read once from the guest's SQ into a device-private slot,
 * validated there and only ever used from there.  PSNs are assigned when a
 * WQE is first sent and reused when it is sent again after a NAK or a
 * timeout (go-back-N from the first unacknowledged PSN).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "platform.h"
#include "stages.h"
#include "trace.h"

static bool rdma_sim_wr_is_send(uint32_t op)
{
    return op == RSIM_WR_SEND || op == RSIM_WR_SEND_WITH_IMM ||
           op == RSIM_WR_SEND_WITH_INV;
}

static bool rdma_sim_wr_is_write(uint32_t op)
{
    return op == RSIM_WR_RDMA_WRITE || op == RSIM_WR_RDMA_WRITE_WITH_IMM ||
           op == RSIM_WR_ATOMIC_WRITE;
}

static bool rdma_sim_wr_is_local(uint32_t op)
{
    return op == RSIM_WR_LOCAL_INV || op == RSIM_WR_REG_MR;
}

/* Is this opcode allowed on this QP type? */
static bool rdma_sim_wr_valid(const RdmaSimQp *qp, uint32_t op)
{
    switch (qp->type) {
    case RSIM_QPT_RC:
        return rdma_sim_wr_is_send(op) || rdma_sim_wr_is_write(op) ||
               op == RSIM_WR_RDMA_READ || rdma_sim_wr_is_atomic(op) ||
               rdma_sim_wr_is_local(op);
    case RSIM_QPT_UC:
        return op == RSIM_WR_SEND || op == RSIM_WR_SEND_WITH_IMM ||
               op == RSIM_WR_RDMA_WRITE || op == RSIM_WR_RDMA_WRITE_WITH_IMM ||
               rdma_sim_wr_is_local(op);
    default:
        return op == RSIM_WR_SEND || op == RSIM_WR_SEND_WITH_IMM ||
               rdma_sim_wr_is_local(op);
    }
}

/*
 * Read and validate the WQE at SQ index idx into w.  On a bad WQE, w is
 * marked done with an error status; the completer reports it in order.
 */
static void rdma_sim_req_fetch(RdmaSimState *s, RdmaSimQp *qp, uint32_t idx,
                               RdmaSimWqe *w)
{
    struct rsim_send_wqe hdr;
    uint32_t avail = (1u << qp->sq.log2_elem) - RSIM_SEND_WQE_HDR_SIZE;
    /* inline data or SGEs follow the header */
    uint64_t data_off = rdma_sim_ring_elem_offset(&qp->sq, idx) +
                        RSIM_SEND_WQE_HDR_SIZE;
    uint64_t total = 0;

    memset(w, 0, sizeof(*w));
    w->started = false;
    if (rdma_sim_ring_read_elem(s, &qp->sq, idx, &hdr, sizeof(hdr))) {
        rdma_sim_guest_error(s, "sq", "QP %u SQ element %u not readable",
                             qp->qpn, idx);
        w->status = RSIM_WC_LOC_QP_OP_ERR;
        goto bad;
    }
    memcpy(&w->wr_id, &hdr.wr_id, sizeof(w->wr_id));
    w->opcode = le32_to_cpu(hdr.opcode);
    w->flags = le32_to_cpu(hdr.send_flags);
    w->signaled = qp->sig_all || (w->flags & RSIM_SEND_SIGNALED);
    memcpy(&w->ex, &hdr.ex, sizeof(w->ex));
    if (!rdma_sim_wr_valid(qp, w->opcode)) {
        rdma_sim_guest_error(s, "sq",
                             "QP %u: opcode %u not valid for QP type %u",
                             qp->qpn, w->opcode, qp->type);
        w->status = RSIM_WC_LOC_QP_OP_ERR;
        goto bad;
    }
    if (rdma_sim_wr_is_atomic(w->opcode)) {
        w->remote_addr = le64_to_cpu(hdr.wr.atomic.remote_addr);
        w->rkey = le32_to_cpu(hdr.wr.atomic.rkey);
        w->compare_add = le64_to_cpu(hdr.wr.atomic.compare_add);
        w->swap = le64_to_cpu(hdr.wr.atomic.swap);
    } else if (w->opcode == RSIM_WR_REG_MR) {
        w->reg = hdr.wr.reg;
        w->done = true;
        return;
    } else if (w->opcode == RSIM_WR_LOCAL_INV) {
        w->rkey = le32_to_cpu(hdr.ex);
        return;
    } else if (rdma_sim_qp_is_datagram(qp)) {
        w->ah_num = le32_to_cpu(hdr.wr.ud.ah_num);
        w->remote_qpn = le32_to_cpu(hdr.wr.ud.remote_qpn) & ROCE_QPN_MASK;
        w->remote_qkey = le32_to_cpu(hdr.wr.ud.remote_qkey);
    } else {
        w->remote_addr = le64_to_cpu(hdr.wr.rdma.remote_addr);
        w->rkey = le32_to_cpu(hdr.wr.rdma.rkey);
    }
    if (w->opcode == RSIM_WR_SEND_WITH_INV) {
        w->ex = le32_to_cpu(hdr.ex);
    }

    /*
     * Inline data follows the header; so do the 8 bytes of an ATOMIC_WRITE
     * (always: Soft-RoCE's provider puts them there, not in an SGE).
     */
    if (w->opcode == RSIM_WR_ATOMIC_WRITE ||
        ((w->flags & RSIM_SEND_INLINE) &&
         (rdma_sim_wr_is_send(w->opcode) || rdma_sim_wr_is_write(w->opcode)))) {
        w->length = w->opcode == RSIM_WR_ATOMIC_WRITE ? 8 :
                    le32_to_cpu(hdr.dma.length);
        if (w->length > MAX(qp->max_inline, 8) || w->length > avail) {
            rdma_sim_guest_error(s, "sq", "QP %u: inline length %u above %u",
                                 qp->qpn, w->length, qp->max_inline);
            w->status = RSIM_WC_LOC_LEN_ERR;
            goto bad;
        }
        w->is_inline = true;
        if (w->length &&
            rdma_sim_ring_rw(s, &qp->sq, data_off, w->data, w->length,
                             DMA_DIRECTION_TO_DEVICE)) {
            w->status = RSIM_WC_LOC_QP_OP_ERR;
            goto bad;
        }
        return;
    }

    w->num_sge = le32_to_cpu(hdr.dma.num_sge);
    if (w->num_sge > qp->max_send_sge) {
        rdma_sim_guest_error(s, "sq", "QP %u: %u SGEs, QP allows %u",
                             qp->qpn, w->num_sge, qp->max_send_sge);
        w->status = RSIM_WC_LOC_QP_OP_ERR;
        goto bad;
    }
    if (w->num_sge) {
        RdmaSimSgl *sgl = (RdmaSimSgl *)w->data;
        uint32_t access = rdma_sim_wr_needs_response(w->opcode) ?
                          RSIM_ACCESS_LOCAL_WRITE : RSIM_ACCESS_LOCAL_READ;

        if (rdma_sim_sgl_read(s, &qp->sq, data_off, w->num_sge, sgl)) {
            w->status = RSIM_WC_LOC_QP_OP_ERR;
            goto bad;
        }
        for (uint32_t i = 0; i < w->num_sge; i++) {
            RdmaSimMr *mr;

            total += sgl[i].length;
            if (sgl[i].length &&
                rdma_sim_mr_check(s, sgl[i].lkey, qp->pdn, access, sgl[i].addr,
                                  sgl[i].length, &mr) != RSIM_STS_OK) {
                s->stats[RSIM_STAT_LOC_PROT_ERR]++;
                w->status = RSIM_WC_LOC_PROT_ERR;
                goto bad;
            }
        }
    }
    if (total > RDMA_SIM_MAX_MSG) {
        w->status = RSIM_WC_LOC_LEN_ERR;
        goto bad;
    }
    w->length = total;
    if (rdma_sim_wr_is_atomic(w->opcode) && w->length < 8) {
        w->status = RSIM_WC_LOC_LEN_ERR;
        goto bad;
    }
    return;

bad:
    w->done = true;
    if (!w->status) {
        w->status = RSIM_WC_LOC_QP_OP_ERR;
    }
}

static uint8_t rdma_sim_send_opcode(const RdmaSimWqe *w, bool first, bool last)
{
    bool write = rdma_sim_wr_is_write(w->opcode);

    if (first && last) {
        switch (w->opcode) {
        case RSIM_WR_ATOMIC_WRITE:
            return ROCE_RC_ATOMIC_WRITE;
        case RSIM_WR_SEND_WITH_IMM:
            return ROCE_RC_SEND_ONLY_IMM;
        case RSIM_WR_SEND_WITH_INV:
            return ROCE_RC_SEND_ONLY_INV;
        case RSIM_WR_RDMA_WRITE:
            return ROCE_RC_WRITE_ONLY;
        case RSIM_WR_RDMA_WRITE_WITH_IMM:
            return ROCE_RC_WRITE_ONLY_IMM;
        default:
            return ROCE_RC_SEND_ONLY;
        }
    }
    if (first) {
        return write ? ROCE_RC_WRITE_FIRST : ROCE_RC_SEND_FIRST;
    }
    if (!last) {
        return write ? ROCE_RC_WRITE_MIDDLE : ROCE_RC_SEND_MIDDLE;
    }
    switch (w->opcode) {
    case RSIM_WR_SEND_WITH_IMM:
        return ROCE_RC_SEND_LAST_IMM;
    case RSIM_WR_SEND_WITH_INV:
        return ROCE_RC_SEND_LAST_INV;
    case RSIM_WR_RDMA_WRITE:
        return ROCE_RC_WRITE_LAST;
    case RSIM_WR_RDMA_WRITE_WITH_IMM:
        return ROCE_RC_WRITE_LAST_IMM;
    default:
        return ROCE_RC_SEND_LAST;
    }
}

/*
 * Send packet pkt of a SEND or WRITE.  A probe always asks for an ACK and
 * leaves the requester's own progress alone.
 */
static bool rdma_sim_req_send_packet_at(RdmaSimState *s, RdmaSimQp *qp,
                                        const RdmaSimWqe *w, uint32_t pkt,
                                        bool probe)
{
    RdmaSimXport *x = qp->x;
    RoceFrame frame, *f = &frame;
    uint32_t off = pkt * x->mtu;
    uint32_t n = MIN(x->mtu, w->length - off);
    uint32_t psn = roce_psn_add(w->first_psn, pkt);
    bool first = pkt == 0;
    bool last = pkt == w->npkts - 1;
    bool uc = qp->type == RSIM_QPT_UC;
    /* UC numbers its opcodes like RC, in its own range */
    uint8_t opcode = rdma_sim_send_opcode(w, first, last) |
                     (uc ? ROCE_CLASS_UC : ROCE_CLASS_RC);
    uint16_t fl = roce_opcode_flags(opcode);
    /*
     * Ask for an ACK at the end of a message, often enough that one comes
     * back before the window is full (every half window at most), and
     * whenever the window or the port's budget stops the QP after this
     * packet: the ACK is what lets it go on.  UC is never acknowledged.
     */
    bool ackreq = !uc &&
                  (probe || last || x->pkts_since_ackreq + 1 >=
                   MAX(1, MIN(RDMA_SIM_ACKREQ_INTERVAL,
                              rdma_sim_flow_window(s, qp) / 2)) ||
                   rdma_sim_flow_at_edge(s, qp, psn));
    bool se = last && (w->flags & RSIM_SEND_SOLICITED) &&
              w->opcode != RSIM_WR_RDMA_WRITE;

    roce_frame_start(f, &x->path, opcode, se, ackreq, qp->dest_qpn, psn);
    if (fl & ROCE_F_RETH) {
        roce_put_reth(f, w->remote_addr, w->rkey, w->length);
    }
    if (fl & ROCE_F_IMMDT) {
        memcpy(roce_frame_put(f, 4), &w->ex, 4);
    }
    if (fl & ROCE_F_IETH) {
        roce_put_u32(f, w->ex);
    }
    if (n && rdma_sim_wqe_gather(s, qp, w, off, roce_frame_put(f, n), n) !=
        RSIM_STS_OK) {
        return false;
    }
    roce_frame_finish(f, n);
    rdma_sim_xmit(s, f);
    if (!probe) {
        x->pkts_since_ackreq = ackreq ? 0 : x->pkts_since_ackreq + 1;
        if (!uc) {
            rdma_sim_flow_sent(s, qp, psn, 1, ackreq);
        }
    }
    return true;
}

/* Send packet w->next_pkt of a SEND or WRITE. */
static bool rdma_sim_req_send_packet(RdmaSimState *s, RdmaSimQp *qp,
                                     RdmaSimWqe *w)
{
    if (!rdma_sim_req_send_packet_at(s, qp, w, w->next_pkt, false)) {
        s->stats[RSIM_STAT_LOC_PROT_ERR]++;
        w->status = RSIM_WC_LOC_PROT_ERR;
        w->done = true;
        return false;
    }
    w->next_pkt++;
    return true;
}

/*
 * Send the packet with PSN psn again, as a probe (flow.c).  Only SEND and
 * WRITE packets can be probed: false for anything else.
 */
bool rdma_sim_req_probe(RdmaSimState *s, RdmaSimQp *qp, uint32_t psn)
{
    RdmaSimWqe *w = rdma_sim_wqe_find(qp, psn);

    if (!w || w->opcode == RSIM_WR_RDMA_READ ||
        rdma_sim_wr_is_atomic(w->opcode) ||
        roce_psn_cmp(psn, roce_psn_add(w->first_psn, w->next_pkt)) >= 0) {
        return false;
    }
    return rdma_sim_req_send_packet_at(s, qp, w,
                                       roce_psn_cmp(psn, w->first_psn), true);
}

/*
 * Packets of the next READ request of w: from w->next_pkt to the end of
 * the request it belongs to (the WQE's responses come in requests of
 * read_chunk packets; one asked again asks from its first missing
 * response on).
 */
static uint32_t rdma_sim_req_read_pkts(const RdmaSimWqe *w)
{
    return MIN(w->npkts - w->next_pkt,
               w->read_chunk - w->next_pkt % w->read_chunk);
}

/* Send the READ request for the next chunk of a READ WQE. */
static void rdma_sim_req_send_read(RdmaSimState *s, RdmaSimQp *qp,
                                   RdmaSimWqe *w)
{
    RdmaSimXport *x = qp->x;
    RoceFrame frame, *f = &frame;
    uint32_t off = w->next_pkt * x->mtu;
    uint32_t pkts = rdma_sim_req_read_pkts(w);
    uint32_t len = MIN((uint64_t)pkts * x->mtu, w->length - off);
    uint32_t psn = roce_psn_add(w->first_psn, w->next_pkt);

    x->pkts_since_ackreq = 0;
    roce_frame_start(f, &x->path, ROCE_RC_READ_REQUEST, false, true,
                     qp->dest_qpn, psn);
    roce_put_reth(f, w->remote_addr + off, w->rkey, len);
    roce_frame_finish(f, 0);
    rdma_sim_xmit(s, f);
    rdma_sim_flow_sent(s, qp, psn, pkts, true);
    w->next_pkt += pkts;
}

static void rdma_sim_req_send_atomic(RdmaSimState *s, RdmaSimQp *qp,
                                     RdmaSimWqe *w)
{
    RdmaSimXport *x = qp->x;
    RoceFrame frame, *f = &frame;
    bool cas = w->opcode == RSIM_WR_ATOMIC_CMP_AND_SWP;

    x->pkts_since_ackreq = 0;
    roce_frame_start(f, &x->path, cas ? ROCE_RC_CMP_SWAP : ROCE_RC_FETCH_ADD,
                     false, true, qp->dest_qpn, w->first_psn);
    roce_put_atmeth(f, w->remote_addr, w->rkey,
                    cas ? w->swap : w->compare_add, cas ? w->compare_add : 0);
    roce_frame_finish(f, 0);
    rdma_sim_xmit(s, f);
    rdma_sim_flow_sent(s, qp, w->first_psn, 1, true);
    w->next_pkt = 1;
}

/* Start a WQE: execute local operations, assign PSNs to the others. */
static bool rdma_sim_req_start(RdmaSimState *s, RdmaSimQp *qp, RdmaSimWqe *w)
{
    RdmaSimXport *x = qp->x;

    if (w->done) {
        /* invalid WQE or REG_MR waiting for execution */
        if (w->opcode == RSIM_WR_REG_MR && !w->status &&
            !rdma_sim_stag_register(s, qp->pdn, &w->reg)) {
            w->status = RSIM_WC_LOC_QP_OP_ERR;
        }
        w->started = true;
        return true;
    }
    if (w->opcode == RSIM_WR_LOCAL_INV) {
        w->status = rdma_sim_stag_invalidate(s, w->rkey, qp->pdn) ?
                    RSIM_WC_SUCCESS : RSIM_WC_LOC_QP_OP_ERR;
        w->started = true;
        w->done = true;
        return true;
    }
    if ((w->flags & RSIM_SEND_FENCE) && x->rd_atomic_out) {
        return false;
    }
    if (rdma_sim_wr_needs_response(w->opcode)) {
        if (x->rd_atomic_out >= MAX(qp->max_rd_atomic, 1)) {
            return false;
        }
        x->rd_atomic_out++;
    }
    w->next_pkt = 0;
    w->started = true;
    if (rdma_sim_qp_is_datagram(qp)) {
        w->npkts = 1;           /* the datagram takes its PSN when sent */
        return true;
    }
    w->npkts = rdma_sim_wr_is_atomic(w->opcode) ? 1 :
               MAX(1, DIV_ROUND_UP(w->length, x->mtu));
    /*
     * A READ is asked for in requests of at most one window of response
     * packets, so the responder never sends more than the window at once:
     * a larger burst would overflow the receiving host's socket buffer.
     * The responder handles each request as a READ of its own.
     */
    w->read_chunk = rdma_sim_flow_window(s, qp);
    w->first_psn = x->next_psn;
    x->next_psn = roce_psn_add(x->next_psn, w->npkts);
    return true;
}

/*
 * The requester went back to packets of w (a NAK, a timeout) and an ACK
 * has covered some of them since, before they were sent again: the
 * responder has them, so they are not sent again.  Returns true when all
 * of w is acknowledged.  READ and atomic requests go by their responses.
 */
static bool rdma_sim_req_skip_acked(RdmaSimXport *x, RdmaSimWqe *w)
{
    int32_t acked;

    if (rdma_sim_wr_needs_response(w->opcode)) {
        return false;
    }
    acked = roce_psn_cmp(x->comp_psn, roce_psn_add(w->first_psn, w->next_pkt));
    if (acked > 0) {
        w->next_pkt = MIN(w->npkts, w->next_pkt + (uint32_t)acked);
    }
    return w->next_pkt >= w->npkts;
}

/*
 * The window or the port's budget stopped the QP.  If none of its packets
 * in flight asks for an ACK, nothing would let it go on before a probe:
 * ask now, with its newest packet again.
 */
static void rdma_sim_req_ask_ack(RdmaSimState *s, RdmaSimQp *qp)
{
    uint32_t newest;

    if (rdma_sim_flow_ack_wanted(qp, &newest) &&
        rdma_sim_req_probe(s, qp, newest)) {
        rdma_sim_flow_sent(s, qp, newest, 1, true);
    }
}

/* Move past the WQE at req_idx. */
static void rdma_sim_req_next(RdmaSimXport *x, RdmaSimQp *qp)
{
    x->req_idx = (x->req_idx + 1) & qp->sq.mask;
}

/*
 * Send what the window allows, at most *budget packets.  WQEs that finish
 * here (local operations, datagrams, UC, failures) are left for the
 * completer, which runs after the requester.  Returns true when the QP
 * still has packets it could send now, or waits for room in the device's
 * loopback queue: it gets another turn.
 */
bool rdma_sim_req_run(RdmaSimState *s, RdmaSimQp *qp, unsigned *budget)
{
    RdmaSimXport *x = qp->x;
    uint32_t prod;
    bool sent = false, blocked = false;

    if ((qp->state != RSIM_QPS_RTS && qp->state != RSIM_QPS_SQD) ||
        x->rnr_wait || x->req_error) {
        return false;
    }
    if (rdma_sim_ring_read_index(s, &qp->sq, RSIM_QUEUE_PROD_OFFSET, &prod)) {
        rdma_sim_guest_error(s, "sq", "QP %u SQ header not readable", qp->qpn);
        rdma_sim_xport_fail(qp, RSIM_EV_QP_FATAL);
        return false;
    }
    while (*budget) {
        RdmaSimWqe *w;

        if (!rdma_sim_xmit_room(s)) {
            blocked = true;
            break;
        }
        if (x->req_idx == x->fetched) {
            /* a new WQE: room in the private window, and not draining */
            if (x->fetched == prod || qp->state == RSIM_QPS_SQD ||
                ((x->fetched - qp->sq_cons) & qp->sq.mask) >= x->nslots) {
                break;
            }
            rdma_sim_req_fetch(s, qp, x->fetched,
                               rdma_sim_wqe_slot(x, x->fetched));
            x->fetched = (x->fetched + 1) & qp->sq.mask;
        }
        w = rdma_sim_wqe_slot(x, x->req_idx);
        if (!w->started &&
            (qp->state == RSIM_QPS_SQD || !rdma_sim_req_start(s, qp, w))) {
            break;
        }
        if (w->done) {
            /*
             * Executed locally or failed: nothing goes on the wire.  After
             * a failed WQE nothing more is sent; the completer reports it
             * when it is the oldest and moves the QP to ERR.
             */
            rdma_sim_req_next(x, qp);
            if (w->status && qp->type == RSIM_QPT_RC) {
                x->req_error = true;
                break;
            }
            continue;
        }
        if (w->next_pkt >= w->npkts) {
            rdma_sim_req_next(x, qp);
            continue;
        }
        if (rdma_sim_qp_is_datagram(qp)) {
            /* a datagram: sent once, complete at once */
            w->status = rdma_sim_ud_send(s, qp, w);
            w->next_pkt = w->npkts;
            w->done = true;
            rdma_sim_req_next(x, qp);
            (*budget)--;
            continue;
        }
        /*
         * RC: within the window; a READ request only when all its responses
         * fit.  UC is never acknowledged and has no window.
         */
        if (qp->type == RSIM_QPT_RC) {
            uint32_t pkts = w->opcode == RSIM_WR_RDMA_READ ?
                            rdma_sim_req_read_pkts(w) : 1;

            if (rdma_sim_req_skip_acked(x, w)) {
                /* all of it arrived: nothing to send again */
                rdma_sim_req_next(x, qp);
                continue;
            }
            if (roce_psn_cmp(roce_psn_add(w->first_psn,
                                          w->next_pkt + pkts - 1),
                             x->comp_psn) >= (int32_t)x->window ||
                !rdma_sim_flow_may_send(s, qp, pkts)) {
                rdma_sim_req_ask_ack(s, qp);
                break;
            }
        }
        if (w->opcode == RSIM_WR_RDMA_READ) {
            rdma_sim_req_send_read(s, qp, w);
        } else if (rdma_sim_wr_is_atomic(w->opcode)) {
            rdma_sim_req_send_atomic(s, qp, w);
        } else if (!rdma_sim_req_send_packet(s, qp, w)) {
            x->req_error = true;
            break;
        } else if (qp->type == RSIM_QPT_UC && w->next_pkt == w->npkts) {
            /* unreliable: done once sent, nothing to wait for */
            w->done = true;
            x->comp_psn = x->next_psn;
        }
        sent = true;
        (*budget)--;
    }
    if (sent) {
        rdma_sim_retry_timer_update(s, qp);
    }
    return *budget == 0 || blocked;
}

/*
 * Go back to psn: the next packet sent is the one with that PSN, and every
 * started WQE after it is sent again in full.
 */
void rdma_sim_req_restart(RdmaSimState *s, RdmaSimQp *qp, uint32_t psn)
{
    RdmaSimXport *x = qp->x;
    bool found = false;

    for (uint32_t idx = qp->sq_cons; idx != x->fetched;
         idx = (idx + 1) & qp->sq.mask) {
        RdmaSimWqe *w = rdma_sim_wqe_slot(x, idx);

        if (!w->started) {
            break;
        }
        if (w->done || !w->npkts) {
            continue;
        }
        if (!found) {
            int32_t d = roce_psn_cmp(psn, w->first_psn);

            if (d >= (int32_t)w->npkts) {
                /*
                 * Wholly before psn, so acknowledged (or resent when the
                 * timer goes back to it): the requester moves past it, and
                 * the completer must see it as sent or it never finishes.
                 */
                if (!rdma_sim_wr_needs_response(w->opcode)) {
                    w->next_pkt = w->npkts;
                }
                continue;
            }
            found = true;
            x->req_idx = idx;
            w->next_pkt = MAX(d, 0);
        } else {
            w->next_pkt = 0;
        }
        if (w->opcode == RSIM_WR_RDMA_READ) {
            /*
             * Ask again for the missing responses only, from the first
             * one to the end of its request: the responder answers a
             * duplicate request from the PSN asked for (IBTA: a retried
             * READ rereads only what was not responded to), and one that
             * has not sent them yet does not take it for a loss.
             */
            w->next_pkt = w->rcvd_pkts;
        }
    }
    if (found) {
        RdmaSimWqe *w = rdma_sim_wqe_slot(x, x->req_idx);

        x->pkts_since_ackreq = 0;
        rdma_sim_flow_restart(s, qp, roce_psn_add(w->first_psn, w->next_pkt));
        trace_rdma_sim_req_restart(qp->qpn, psn);
        rdma_sim_qp_schedule(s, qp);
    }
}
