/*
 * rdma-sim: the datagram service - UD QPs and the GSI QP (QP1)
 *
 * A UD send is one packet (UD_SEND_ONLY, with a DETH carrying the Q_Key
 * and the source QPN) to the address of the work request's AH; it
 * completes as soon as it is sent.  A received datagram fills one receive
 * WQE: 40 bytes of GRH (for IPv4 the IP header in its last 20 bytes, as
 * Soft-RoCE does, so the kernel can tell the network type) and the
 * payload; the completion's sl says which it was (RSIM_CQE_SL_*).
 * Nothing is acknowledged or retried: a datagram without a receive WQE,
 * with a wrong Q_Key or too long for the buffer is dropped and counted.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "platform.h"
#include "stages.h"
#include "trace.h"

#define RDMA_SIM_GRH_LEN        40
/* Q_Key with the high bit set in a work request: use the QP's Q_Key */
#define RDMA_SIM_QKEY_USE_QP    0x80000000u

/* Largest UD message: the port's active MTU. */
uint32_t rdma_sim_ud_max_msg(RdmaSimState *s)
{
    return 128u << rdma_sim_active_mtu(s->eth_mtu);
}

/*
 * Send a UD or GSI WQE.  Returns the completion status: errors concern
 * this WQE only, the QP stays usable.
 */
uint8_t rdma_sim_ud_send(RdmaSimState *s, RdmaSimQp *qp, RdmaSimWqe *w)
{
    RdmaSimXport *x = qp->x;
    const RdmaSimAh *ah;
    RoceFrame frame;
    RocePath path;
    uint32_t qkey = w->remote_qkey;
    bool imm = w->opcode == RSIM_WR_SEND_WITH_IMM;

    if (!w->ah_num || w->ah_num >= s->props.max_ah ||
        !s->ahs[w->ah_num].valid || s->ahs[w->ah_num].pdn != qp->pdn) {
        rdma_sim_guest_error(s, "ud", "QP %u: send with bad AH %u", qp->qpn,
                             w->ah_num);
        return RSIM_WC_LOC_QP_OP_ERR;
    }
    if (w->length > rdma_sim_ud_max_msg(s)) {
        return RSIM_WC_LOC_LEN_ERR;
    }
    ah = &s->ahs[w->ah_num];
    if (qkey & RDMA_SIM_QKEY_USE_QP) {
        qkey = qp->qkey;
    }
    rdma_sim_path_from_av(s, &ah->av, qp->qpn, w->remote_qpn, &path);
    roce_frame_start(&frame, &path, imm ? ROCE_UD_SEND_ONLY_IMM
                                        : ROCE_UD_SEND_ONLY,
                     w->flags & RSIM_SEND_SOLICITED, false,
                     w->remote_qpn, x->next_psn);
    x->next_psn = roce_psn_add(x->next_psn, 1);
    roce_put_u32(&frame, qkey);
    roce_put_u32(&frame, qp->qpn);
    if (imm) {
        memcpy(roce_frame_put(&frame, 4), &w->ex, 4);
    }
    if (w->length &&
        rdma_sim_wqe_gather(s, qp, w, 0, roce_frame_put(&frame, w->length),
                            w->length) != RSIM_STS_OK) {
        s->stats[RSIM_STAT_LOC_PROT_ERR]++;
        return RSIM_WC_LOC_PROT_ERR;
    }
    roce_frame_finish(&frame, w->length);
    rdma_sim_xmit(s, &frame);
    return RSIM_WC_SUCCESS;
}

/* A datagram for a UD or GSI QP. */
void rdma_sim_ud_rx(RdmaSimState *s, RdmaSimQp *qp, const RocePkt *pkt)
{
    uint8_t grh[RDMA_SIM_GRH_LEN] = { 0 };
    uint32_t wc_flags = RSIM_WC_GRH, ex = 0;
    uint8_t status;

    if (qp->state < RSIM_QPS_RTR || qp->state == RSIM_QPS_ERR) {
        return;
    }
    if (pkt->qkey != qp->qkey) {
        s->stats[RSIM_STAT_RX_DROP_NO_QP]++;
        trace_rdma_sim_rx_drop(qp->qpn, pkt->opcode, "Q_Key mismatch");
        return;
    }
    switch (rdma_sim_rwqe_get(s, qp)) {
    case RDMA_SIM_RWQE_NONE:
        s->stats[RSIM_STAT_RX_DROP_NO_QP]++;
        trace_rdma_sim_rx_drop(qp->qpn, pkt->opcode, "no receive WQE");
        return;
    case RDMA_SIM_RWQE_BAD:
        rdma_sim_xport_fail(qp, RSIM_EV_QP_FATAL);
        return;
    default:
        break;
    }
    if (!rdma_sim_rwqe_cq_room(s, qp)) {
        return;                 /* the WQE stays for the next datagram */
    }
    if (pkt->ipv6) {
        memcpy(grh, pkt->l3, RDMA_SIM_GRH_LEN);
    } else {
        memcpy(grh + RDMA_SIM_GRH_LEN - 20, pkt->l3, 20);
    }
    status = rdma_sim_rwqe_place(s, qp, grh, sizeof(grh));
    if (status == RSIM_WC_SUCCESS && pkt->paylen) {
        status = rdma_sim_rwqe_place(s, qp, pkt->payload, pkt->paylen);
    }
    if (pkt->flags & ROCE_F_IMMDT) {
        wc_flags |= RSIM_WC_WITH_IMM;
        ex = pkt->imm;
    }
    rdma_sim_rwqe_complete(s, qp, status, RSIM_WC_RECV, qp->x->recv_len, ex,
                           wc_flags, pkt->se, pkt->src_qpn,
                           RSIM_CQE_SL_UDP | (pkt->ipv6 ? RSIM_CQE_SL_L3_IPV6
                                                        : RSIM_CQE_SL_L3_IPV4));
}
