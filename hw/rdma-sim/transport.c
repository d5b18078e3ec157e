/*
 * rdma-sim: transport engine - turns, timers, receive
 *
 * An SQ doorbell gives its QP a turn of one packet at once, on the vCPU
 * thread; then, and for everything else, the QP goes on the work list of
 * rdma_sim_xport_bh, which gives the QPs turns round robin, with a packet
 * budget each: in a turn the responder sends what it owes, the requester
 * what its window allows, and the completer retires what is finished.
 * Frames for one of the device's own addresses (internal loopback) are
 * queued and received by the same bottom half, never recursively, as are
 * frames that came from the network while the device was busy.  What the
 * stages call on (transmission, paths, scheduling) is in xmit.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "platform.h"
#include "transport.h"
#include "stages.h"
#include "trace.h"

/* Loopback frames received per bottom-half run before yielding */
#define RDMA_SIM_LOOP_BUDGET    256
/* Requester rounds per bottom-half run before yielding */
#define RDMA_SIM_ROUNDS         16

/*
 * Scheduling and timers
 */

/*
 * What a stage left for the engine, applied as it returns: a QP it found
 * failing enters ERR (qp.c, which ends its transport state in teardown.c);
 * packets the completer found lost are sent again from the earliest.
 * Returns true when the QP failed.
 */
static bool rdma_sim_xport_outcome(RdmaSimState *s, RdmaSimQp *qp)
{
    RdmaSimXport *x = qp->x;

    if (!x) {
        return false;
    }
    if (x->fail) {
        rdma_sim_qp_fail(s, qp, x->fail_ev);
        return true;
    }
    if (x->go_back) {
        x->go_back = false;
        if (qp->state == RSIM_QPS_RTS || qp->state == RSIM_QPS_SQD) {
            rdma_sim_req_restart(s, qp, x->go_back_psn);
        }
    }
    return false;
}

/*
 * One turn of a QP, burst packets at most: what the responder owes (a
 * coalesced ACK, READ responses) goes first, then the requester sends new
 * and resent packets, then the completer retires the WQEs that finished.
 * Returns true when the QP has more to send now (it goes to the end of the
 * work list).
 */
static bool rdma_sim_qp_turn(RdmaSimState *s, RdmaSimQp *qp, unsigned burst)
{
    RdmaSimXport *x = qp->x;
    unsigned resp = burst / 2, req;
    bool more;

    if (!x || qp->state == RSIM_QPS_ERR) {
        return false;
    }
    /*
     * The responder's READ responses and the requester's own packets
     * share the turn: half each, and what one leaves to the other.  A
     * stage that fails the QP ends the turn.
     */
    rdma_sim_resp_run(s, qp, &resp);
    req = burst - burst / 2 + resp;
    more = rdma_sim_req_run(s, qp, &req);
    more = (!x->fail && rdma_sim_resp_run(s, qp, &req)) || more;
    if (!x->fail) {
        rdma_sim_comp_run(s, qp);
    }
    if (x->fail) {
        rdma_sim_xport_outcome(s, qp);      /* the QP enters ERR */
        return false;
    }
    return more;
}

static void rdma_sim_rx_frame(RdmaSimState *s, const uint8_t *frame,
                              size_t len);

/* Frames the bottom half has yet to receive (loopback or deferred) */
static bool rdma_sim_xport_rx_waiting(RdmaSimState *s)
{
    return !g_queue_is_empty(&s->loop_frames) ||
           !g_queue_is_empty(&s->rx_deferred);
}

/* No QP waits for a turn and no frame waits to be received. */
static bool rdma_sim_xport_idle(RdmaSimState *s)
{
    return QTAILQ_EMPTY(&s->work) && !rdma_sim_xport_rx_waiting(s);
}

static void rdma_sim_xport_bh(void *opaque)
{
    RdmaSimState *s = opaque;
    unsigned budget = RDMA_SIM_LOOP_BUDGET;
    GByteArray *frame;

    if (rdma_sim_stopped(s)) {
        /* the device failed (rdma_sim_set_fatal()): stop until reset */
        rdma_sim_transport_stop(s);
        return;
    }
    /* a stopped VM's device waits: rdma_sim_transport_resume() */
    if (!rdma_sim_vm_running()) {
        return;
    }
    s->busy++;
    for (unsigned round = 0; round < RDMA_SIM_ROUNDS &&
                              !rdma_sim_stopped(s); round++) {
        unsigned n = 0;
        RdmaSimQp *qp;

        while (budget && !rdma_sim_stopped(s) &&
               (frame = g_queue_pop_head(&s->rx_deferred))) {
            rdma_sim_port_rx_frame(s, frame->data, frame->len);
            g_byte_array_unref(frame);
            budget--;
        }
        while (budget && !rdma_sim_stopped(s) &&
               (frame = g_queue_pop_head(&s->loop_frames))) {
            rdma_sim_rx_frame(s, frame->data, frame->len);
            g_byte_array_unref(frame);
            budget--;
        }
        if (QTAILQ_EMPTY(&s->work) || !rdma_sim_xmit_room(s) ||
            rdma_sim_stopped(s)) {
            break;
        }
        /* one turn for each QP waiting now; those with more go again */
        QTAILQ_FOREACH(qp, &s->work, work_link) {
            n++;
        }
        /* (a frame or turn that failed the device ends the loops) */
        while (n-- && !rdma_sim_stopped(s) &&
               (qp = QTAILQ_FIRST(&s->work)) != NULL) {
            QTAILQ_REMOVE(&s->work, qp, work_link);
            qp->on_work_list = false;
            if (rdma_sim_qp_turn(s, qp, RDMA_SIM_BURST)) {
                rdma_sim_qp_schedule(s, qp);
            }
        }
    }
    if (rdma_sim_stopped(s)) {
        /* a turn failed the device: its stages are done, stop now */
        rdma_sim_transport_stop(s);
    } else if (!rdma_sim_xport_idle(s)) {
        qemu_bh_schedule(s->xport_bh);
    } else if (s->held_frame) {
        /* nothing followed the held frame: let it go now */
        rdma_sim_release_held(s);
        if (!g_queue_is_empty(&s->loop_frames)) {
            qemu_bh_schedule(s->xport_bh);
        }
    }
    s->busy--;
}

/*
 * Doorbells rung before an admin command take effect before it (as Soft-RoCE
 * posts synchronously): the admin bottom half runs the engine's pending
 * turns first, e.g. so that RESIZE_CQ sees the completions of sends posted
 * just before it.
 */
void rdma_sim_transport_run(RdmaSimState *s)
{
    if (!rdma_sim_xport_idle(s)) {
        qemu_bh_cancel(s->xport_bh);
        rdma_sim_xport_bh(s);
    }
}

void rdma_sim_transport_resume(RdmaSimState *s)
{
    if (!rdma_sim_xport_idle(s) || s->held_frame) {
        qemu_bh_schedule(s->xport_bh);
    }
}

/* The retransmission timer expired (or a CQ-full retry is due). */
static void rdma_sim_retry_timer_cb(void *opaque)
{
    RdmaSimQp *qp = opaque;
    RdmaSimState *s = qp->x->dev;

    if (rdma_sim_stopped(s)) {
        return;
    }
    s->busy++;
    rdma_sim_comp_timeout(s, qp);
    rdma_sim_xport_outcome(s, qp);
    s->busy--;
}

/* An RNR NAK's wait is over: the requester sends again. */
static void rdma_sim_rnr_timer_cb(void *opaque)
{
    RdmaSimQp *qp = opaque;
    RdmaSimState *s = qp->x->dev;

    if (rdma_sim_stopped(s)) {
        return;
    }
    s->busy++;
    rdma_sim_comp_rnr_expired(s, qp);
    rdma_sim_xport_outcome(s, qp);
    s->busy--;
}

/*
 * Nothing was acknowledged for a probe timeout (flow.c): send a packet
 * again with AckReq, so that the answer shows what the responder has.
 */
static void rdma_sim_probe_timer_cb(void *opaque)
{
    RdmaSimQp *qp = opaque;
    RdmaSimXport *x = qp->x;
    RdmaSimState *s = x->dev;
    enum rdma_sim_probe kind;
    uint32_t psn;
    bool sent = false;

    if (rdma_sim_stopped(s) ||
        (qp->state != RSIM_QPS_RTS && qp->state != RSIM_QPS_SQD) ||
        x->rnr_wait || x->cq_stalled || x->req_error ||
        !rdma_sim_xport_outstanding(qp)) {
        return;
    }
    s->busy++;
    kind = rdma_sim_flow_probe_psn(qp, &psn);
    if (kind != RDMA_SIM_PROBE_NONE) {
        sent = rdma_sim_req_probe(s, qp, psn);
    }
    if (kind == RDMA_SIM_PROBE_OLDEST && !sent) {
        /* a READ or atomic: its responses come only when asked again */
        rdma_sim_comp_resend(s, qp, psn);
        rdma_sim_xport_outcome(s, qp);
    }
    rdma_sim_flow_probed(s, qp, kind, psn, sent);
    s->busy--;
}

/*
 * The READ responses the port's budget counts have drained as far as the
 * QPs waiting for it need (flow.c): they get turns.
 */
static void rdma_sim_pace_timer_cb(void *opaque)
{
    RdmaSimState *s = opaque;

    if (rdma_sim_stopped(s)) {
        return;
    }
    s->busy++;
    rdma_sim_flow_paced(s);
    s->busy--;
}

/*
 * QP life cycle
 */

/* The private copies of send WQEs: how many, and how large */
static uint32_t rdma_sim_xport_nslots(const RdmaSimQp *qp)
{
    return MIN(qp->sq.depth, pow2ceil(RDMA_SIM_WINDOW));
}

static uint32_t rdma_sim_xport_slot_size(const RdmaSimQp *qp)
{
    /* SGEs, inline data, or the 8 bytes of an ATOMIC_WRITE */
    uint32_t data = MAX(MAX(qp->max_send_sge * sizeof(RdmaSimSgl),
                            qp->max_inline), 8);

    return ROUND_UP(sizeof(RdmaSimWqe) + data, 8);
}

static uint32_t rdma_sim_xport_rwqe_sges(const RdmaSimQp *qp,
                                         const RdmaSimSrq *srq)
{
    return MAX(qp->max_recv_sge, srq ? srq->max_sge : 0) + 1;
}

/*
 * The host memory a QP's transport state takes, with nres responder
 * resources at most: charged to the device's budget when the QP is
 * created.
 */
uint64_t rdma_sim_xport_mem(const RdmaSimQp *qp, const RdmaSimSrq *srq,
                            uint32_t nres)
{
    return sizeof(RdmaSimXport) +
           (uint64_t)rdma_sim_xport_nslots(qp) * rdma_sim_xport_slot_size(qp) +
           rdma_sim_xport_rwqe_sges(qp, srq) * sizeof(RdmaSimSgl) +
           (uint64_t)MAX(1, nres) * (sizeof(RdmaSimResource) +
                                     sizeof(uint32_t));
}

RdmaSimXport *rdma_sim_xport_new(RdmaSimState *s, RdmaSimQp *qp)
{
    RdmaSimXport *x = g_new0(RdmaSimXport, 1);
    RdmaSimSrq *srq = rdma_sim_srq_lookup(s, qp->srqn);

    x->dev = s;
    x->nslots = rdma_sim_xport_nslots(qp);
    x->slot_size = rdma_sim_xport_slot_size(qp);
    x->slots = g_malloc0((size_t)x->nslots * x->slot_size);
    x->rwqe_max = rdma_sim_xport_rwqe_sges(qp, srq);
    x->rwqe_sge = g_new0(RdmaSimSgl, x->rwqe_max);
    x->retry_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, rdma_sim_retry_timer_cb,
                                  qp);
    x->rnr_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, rdma_sim_rnr_timer_cb, qp);
    x->probe_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, rdma_sim_probe_timer_cb,
                                  qp);
    return x;
}

static void rdma_sim_xport_set_path(RdmaSimState *s, RdmaSimQp *qp)
{
    RdmaSimXport *x = qp->x;

    if (qp->type == RSIM_QPT_RC || qp->type == RSIM_QPT_UC) {
        rdma_sim_path_from_av(s, &qp->av, qp->qpn, qp->dest_qpn, &x->path);
        x->mtu = 128u << qp->path_mtu;
    } else {
        x->mtu = rdma_sim_ud_max_msg(s);
    }
    x->window = MIN(RDMA_SIM_WINDOW,
                    MAX(4, s->props.tx_window * KiB / x->mtu));
}

void rdma_sim_transport_qp_modified(RdmaSimState *s, RdmaSimQp *qp,
                                    unsigned old_state)
{
    RdmaSimXport *x;

    if (qp->state < RSIM_QPS_RTR) {
        return;
    }
    if (!qp->x) {
        qp->x = rdma_sim_xport_new(s, qp);
    }
    x = qp->x;
    /* responder resources: what the QP granted its peer (RTR, SQD) */
    if (x->nres != MAX(1, qp->max_dest_rd_atomic)) {
        rdma_sim_resp_resources(x, MAX(1, qp->max_dest_rd_atomic));
    }
    rdma_sim_xport_set_path(s, qp);
    if (old_state == RSIM_QPS_INIT) {
        rdma_sim_resp_clear(x);
        x->epsn = qp->rq_psn;
        x->msn = 0;
    }
    if (qp->state == RSIM_QPS_RTS && old_state == RSIM_QPS_RTR) {
        x->next_psn = x->comp_psn = qp->sq_psn;
        x->tx_psn = x->tx_high = qp->sq_psn;
        x->req_idx = x->fetched = qp->sq_cons;
        x->retry_left = qp->retry_cnt;
        x->rnr_left = qp->rnr_retry;
    }
    if (qp->state == RSIM_QPS_SQD && qp->sq_draining) {
        /* nothing may be in flight: the drain can be over at once */
        rdma_sim_comp_run(s, qp);
        if (rdma_sim_xport_outcome(s, qp)) {
            return;
        }
        rdma_sim_comp_check_drained(s, qp);
    }
    rdma_sim_qp_schedule(s, qp);
}

/*
 * An SQ doorbell.  The QP gets a short turn at once, on the vCPU thread
 * that rang: a short message leaves without waiting for the main loop to
 * wake up for the bottom half (and, with patches/qemu, without waiting for
 * the end of its pass: rdma_sim_net_burst_tx()).  The turn is
 * RDMA_SIM_DOORBELL_BURST packets, besides an ACK or a probe the QP owes,
 * and its completer retires what finished (at most the QP's WQE window),
 * so a doorbell costs its vCPU little and a bounded amount; the bottom
 * half sends the rest, and a QP already on the work list keeps its place
 * there.  Other QPs' work waiting does not matter (each QP's packets keep
 * their order), frames waiting to be received do: they may change what the
 * QP sends, so the bottom half goes first then.
 */
void rdma_sim_transport_sq_kick(RdmaSimState *s, RdmaSimQp *qp)
{
    bool more;

    if (qp->state != RSIM_QPS_RTS) {
        return;
    }
    if (!qp->x || rdma_sim_stopped(s) || rdma_sim_xport_rx_waiting(s)) {
        rdma_sim_qp_schedule(s, qp);
        return;
    }
    s->busy++;
    s->xmit_at_once = true;
    more = rdma_sim_qp_turn(s, qp, RDMA_SIM_DOORBELL_BURST);
    s->xmit_at_once = false;
    if (more) {
        rdma_sim_qp_schedule(s, qp);
    }
    s->busy--;
}

/*
 * Receive
 */

static void rdma_sim_rx_packet(RdmaSimState *s, const RocePkt *pkt)
{
    RdmaSimQp *qp = rdma_sim_qp_lookup(s, pkt->dqpn);

    if (pkt->pkey != ROCE_DEFAULT_PKEY && pkt->pkey != 0x7fff) {
        s->stats[RSIM_STAT_RX_DROP_MALFORMED]++;
        return;
    }
    if (qp && qp->x && ROCE_OPCODE_CLASS(pkt->opcode) == ROCE_CLASS_UD &&
        rdma_sim_qp_is_datagram(qp)) {
        trace_rdma_sim_rx_packet(qp->qpn, pkt->opcode, pkt->psn, pkt->paylen);
        rdma_sim_ud_rx(s, qp, pkt);
        rdma_sim_xport_outcome(s, qp);
        return;
    }
    if (!qp || !qp->x ||
        !((qp->type == RSIM_QPT_RC &&
           ROCE_OPCODE_CLASS(pkt->opcode) == ROCE_CLASS_RC) ||
          (qp->type == RSIM_QPT_UC &&
           ROCE_OPCODE_CLASS(pkt->opcode) == ROCE_CLASS_UC))) {
        s->stats[RSIM_STAT_RX_DROP_NO_QP]++;
        trace_rdma_sim_rx_drop(pkt->dqpn, pkt->opcode, "no QP of that type");
        return;
    }
    /* RC: only the connected peer may talk to the QP */
    if (memcmp(pkt->sip, qp->av.dgid, 16) ||
        memcmp(pkt->dip, qp->x->path.sip, 16)) {
        s->stats[RSIM_STAT_RX_DROP_NO_QP]++;
        trace_rdma_sim_rx_drop(pkt->dqpn, pkt->opcode, "not from the peer");
        return;
    }
    trace_rdma_sim_rx_packet(qp->qpn, pkt->opcode, pkt->psn, pkt->paylen);
    if (pkt->flags & ROCE_F_RESP) {
        rdma_sim_comp_rx(s, qp, pkt);
        rdma_sim_xport_outcome(s, qp);
    } else {
        rdma_sim_resp_rx(s, qp, pkt);
        rdma_sim_xport_outcome(s, qp);
    }
}

static void rdma_sim_rx_result(RdmaSimState *s, enum roce_parse_result r,
                               const RocePkt *pkt)
{
    switch (r) {
    case ROCE_OK:
        s->stats[RSIM_STAT_RX_ROCE_PKTS]++;
        rdma_sim_rx_packet(s, pkt);
        break;
    case ROCE_BAD_ICRC:
        s->stats[RSIM_STAT_RX_ICRC_ERR]++;
        trace_rdma_sim_rx_drop(pkt->dqpn, pkt->opcode, "bad ICRC");
        break;
    default:
        s->stats[RSIM_STAT_RX_DROP_MALFORMED]++;
        trace_rdma_sim_rx_drop(0, 0, "malformed RoCEv2 packet");
        break;
    }
}

/* A looped-back frame: addressed to this device by construction. */
static void rdma_sim_rx_frame(RdmaSimState *s, const uint8_t *frame, size_t len)
{
    RocePkt pkt;

    rdma_sim_rx_result(s, roce_parse(frame, len, &pkt), &pkt);
}

/* s->roce_rx: see device.h */
static bool rdma_sim_transport_rx(RdmaSimState *s, const uint8_t *frame,
                                  size_t len)
{
    RocePkt pkt;
    enum roce_parse_result r = roce_parse(frame, len, &pkt);

    if (r == ROCE_NOT_ROCE ||
        (r != ROCE_MALFORMED && !rdma_sim_is_own_gid(s, pkt.dip))) {
        return false;
    }
    rdma_sim_rx_result(s, r, &pkt);
    return true;
}

/*
 * Device life cycle
 */

void rdma_sim_transport_init(RdmaSimState *s)
{
    s->roce_rx = rdma_sim_transport_rx;
    QTAILQ_INIT(&s->work);
    g_queue_init(&s->loop_frames);
    g_queue_init(&s->rx_deferred);
    s->tx_pace_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, rdma_sim_pace_timer_cb,
                                    s);
    rdma_sim_flow_reset(s);
    s->xport_bh = rdma_sim_bh_new(s, rdma_sim_xport_bh);
}

static void rdma_sim_drop_frames(RdmaSimState *s)
{
    GByteArray *frame;

    while ((frame = g_queue_pop_head(&s->loop_frames)) ||
           (frame = g_queue_pop_head(&s->rx_deferred))) {
        g_byte_array_unref(frame);
    }
    if (s->held_frame) {
        g_byte_array_unref(s->held_frame);
        s->held_frame = NULL;
    }
    qemu_bh_cancel(s->xport_bh);
}

/*
 * The device went FATAL: nothing moves until the reset that destroys the
 * QPs.  Their state stays as it is; their timers, turns and frames go.
 */
void rdma_sim_transport_stop(RdmaSimState *s)
{
    RdmaSimQp *qp;

    while ((qp = QTAILQ_FIRST(&s->work)) != NULL) {
        rdma_sim_qp_unschedule(s, qp);
    }
    for (uint32_t i = 0; i < s->props.max_qp; i++) {
        RdmaSimXport *x = s->qps[i] ? s->qps[i]->x : NULL;

        if (x) {
            timer_del(x->retry_timer);
            timer_del(x->rnr_timer);
            timer_del(x->probe_timer);
        }
    }
    timer_del(s->tx_pace_timer);
    rdma_sim_drop_frames(s);
}

/* Drop queued frames; every QP is gone by now. */
void rdma_sim_transport_reset(RdmaSimState *s)
{
    rdma_sim_drop_frames(s);
    rdma_sim_flow_reset(s);
    s->fault_rng = s->props.fault_seed ? s->props.fault_seed
                                       : 0x9e3779b97f4a7c15ull;
}

void rdma_sim_transport_cleanup(RdmaSimState *s)
{
    rdma_sim_transport_reset(s);
    qemu_bh_delete(s->xport_bh);
    timer_free(s->tx_pace_timer);
    s->tx_pace_timer = NULL;
}
