/*
 * rdma-sim: RC flow control - round-trip times, tail-loss probes and the
 * port's transmit budget
 *
 * Between VMs the link is a host UDP socket.  It loses a frame only when
 * the receiving socket's buffer is full (about 208 KiB with the kernel's
 * per-packet overhead, some 90 KiB of RoCE payload), so how much a
 * requester may have in flight decides both speed and loss:
 *
 * - The port keeps one budget of unacknowledged bytes for all its RC QPs,
 *   since they all fill the same socket buffer at the other end.  It is
 *   tx-window KiB; the default, 80, stays below what a default socket
 *   buffer holds at every path MTU.  A loss (a PSN sequence NAK, a gap in
 *   responses, a timeout) cuts it to 7/10, at most once per round trip,
 *   for links that lose frames anyway (a busy hub, fault injection); it
 *   grows back by one path MTU per budget's worth of acknowledged bytes.
 *   A QP with nothing in flight may always send, so every QP progresses.
 *
 * - READ responses fill the same buffer, and no acknowledgement says when
 *   they have left it: their bytes count in the budget too, and leave it
 *   as time passes, the budget's worth per round trip of the port (the
 *   smoothed round trip of all its QPs that reach the network; 5 ms, the
 *   first probe timeout, while none was measured).  A responder sends
 *   while the budget has room and otherwise waits for the pace timer, set
 *   for when a quarter of the budget will be free, which fires at most
 *   four times a round trip; while none of the port's responses are
 *   counted it may always send one, so every QP progresses.  A repeated
 *   READ request for responses already sent means they were lost: it
 *   cuts the budget like any loss, and bytes that drained make it grow
 *   back as acknowledged ones do.  The default 80 KiB at a round trip of
 *   1 ms is 78 MiB/s, at 5 ms 15.6 MiB/s.  Responses to the device's own
 *   GIDs are not counted: the loopback queue holds back its responders
 *   itself (rdma_sim_xmit_room()).
 *
 * - A port that only answers READs (ib_read_bw's server) sends nothing a
 *   round trip could be measured on, and a fixed guess is either too slow
 *   for a fast peer or too fast for a slow one.  Its pace then learns from
 *   the only signal it has, losses: the round trip it assumes starts at
 *   1 ms, shrinks by an eighth per budget's worth drained without a loss,
 *   to 250 us, and doubles at each lost response, to the longest probe
 *   timeout.  A measured round trip replaces it.
 *
 * - A lost packet at the end of a burst is followed by nothing the
 *   responder could NAK, and the QP's timeout (perftest's 14 means 67 ms)
 *   would stall the QP.  After a probe timeout of about two round trips
 *   without an acknowledgement, the requester sends its newest packet
 *   again with AckReq: the responder acknowledges everything or NAKs the
 *   first gap.  If that brings nothing either (the responder NAKs a gap
 *   only once), the oldest unacknowledged packet goes out: a duplicate is
 *   acknowledged with its own PSN (or, while a READ after it is still
 *   being answered, by its responses: responder.c), the expected PSN is
 *   executed and acknowledged, and an answer that does not cover
 *   everything sent means the rest was lost: the requester goes back to
 *   it at once.  For a READ or atomic the request itself is sent again
 *   (a READ's from its first missing response: requester.c).
 *   Probes back off exponentially and count no retries: the QP's own
 *   retransmission timer and retry_cnt work exactly as IBTA says.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "platform.h"
#include "stages.h"
#include "trace.h"

static int64_t rdma_sim_flow_now(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static uint64_t rdma_sim_flow_cwnd_max(RdmaSimState *s)
{
    return (uint64_t)s->props.tx_window * KiB;
}

/*
 * Round trips and probes
 */

static int64_t rdma_sim_flow_pto(const RdmaSimXport *x)
{
    int64_t pto = x->srtt_ns ? x->srtt_ns + MAX(4 * x->rttvar_ns, x->srtt_ns)
                             : RDMA_SIM_PTO_INITIAL_NS;

    pto = MIN(MAX(pto, RDMA_SIM_PTO_MIN_NS), RDMA_SIM_PTO_MAX_NS);
    return pto << MIN(x->probe_backoff, RDMA_SIM_PTO_MAX_BACKOFF);
}

/* Keep the probe timer running while PSNs are unacknowledged. */
static void rdma_sim_flow_arm_probe(RdmaSimQp *qp, bool restart)
{
    RdmaSimXport *x = qp->x;
    int64_t pto = rdma_sim_flow_pto(x);

    if (!rdma_sim_xport_outstanding(qp) ||
        (qp->timeout && pto >= rdma_sim_qp_timeout_ns(qp))) {
        /* nothing to probe, or the QP's own timeout comes first */
        timer_del(x->probe_timer);
    } else if (restart || !timer_pending(x->probe_timer)) {
        timer_mod(x->probe_timer, rdma_sim_flow_now() + pto);
    }
}

static void rdma_sim_flow_rtt_sample(RdmaSimState *s, RdmaSimQp *qp,
                                     int64_t rtt)
{
    RdmaSimXport *x = qp->x;

    if (!x->srtt_ns) {
        x->srtt_ns = rtt;
        x->rttvar_ns = rtt / 2;
    } else {
        int64_t err = rtt - x->srtt_ns;

        x->srtt_ns += err / 8;
        x->rttvar_ns += ((err < 0 ? -err : err) - x->rttvar_ns) / 4;
    }
    /* the port's, for its READ responses: only what crossed the network */
    if (!rdma_sim_path_is_local(s, &x->path)) {
        s->tx_srtt_ns += s->tx_srtt_ns ? (rtt - s->tx_srtt_ns) / 8 : rtt;
    }
}

/*
 * The probe timer expired (transport.c): which packet to send again with
 * AckReq.  First the newest packet: the responder answers it with an ACK
 * of everything, or with a sequence NAK at the first gap.  Either is
 * unambiguous; acknowledgements still on their way change nothing.
 *
 * If that brought nothing either, the responder may have NAKed already and
 * drop everything but the PSN it expects.  After this long nothing else is
 * in flight, so the answer to the oldest packet decides: what it does not
 * cover is sent again (a responder that had the packet acknowledges just
 * that PSN, as a duplicate; one that lacked it answers for what follows).
 */
enum rdma_sim_probe rdma_sim_flow_probe_psn(RdmaSimQp *qp, uint32_t *psn)
{
    RdmaSimXport *x = qp->x;

    if (x->probe_backoff) {
        *psn = x->comp_psn;
        return RDMA_SIM_PROBE_OLDEST;
    }
    *psn = roce_psn_add(x->tx_psn, ROCE_PSN_MASK);
    return roce_psn_cmp(*psn, x->comp_psn) >= 0 ? RDMA_SIM_PROBE_NEWEST
                                                : RDMA_SIM_PROBE_NONE;
}

/*
 * The probe of kind went out (sent), or could not (a READ or atomic, which
 * the requester asks for again instead).  The next probe waits longer.
 */
void rdma_sim_flow_probed(RdmaSimState *s, RdmaSimQp *qp,
                          enum rdma_sim_probe kind, uint32_t psn, bool sent)
{
    RdmaSimXport *x = qp->x;

    x->rtt_sent_ns = 0;
    if (kind == RDMA_SIM_PROBE_OLDEST && sent) {
        /* its answer decides: what it does not cover was lost */
        x->probing = true;
        x->probe_high = x->tx_psn;
    }
    s->stats[RSIM_STAT_LOSS_PROBES]++;
    trace_rdma_sim_probe(qp->qpn, psn, x->probe_backoff);
    x->probe_backoff++;
    rdma_sim_flow_arm_probe(qp, true);
}

/*
 * The port's budget
 */

/* After a cut: one MTU more per budget's worth acknowledged or drained */
static void rdma_sim_flow_grow(RdmaSimState *s, uint64_t bytes, uint32_t mtu)
{
    s->tx_cwnd_acc += bytes;
    if (s->tx_cwnd_acc >= s->tx_cwnd) {
        s->tx_cwnd_acc = 0;
        if (s->tx_cwnd < rdma_sim_flow_cwnd_max(s)) {
            s->tx_cwnd = MIN(s->tx_cwnd + mtu, rdma_sim_flow_cwnd_max(s));
        }
    }
}

/* The round trip the budget's worth of READ responses drains in */
static uint32_t rdma_sim_flow_port_rtt(RdmaSimState *s)
{
    return s->tx_srtt_ns > 0 ? MIN(s->tx_srtt_ns, RDMA_SIM_PTO_MAX_NS)
                             : s->tx_pace_rtt_ns;
}

/* A budget's worth drained without a loss: assume a shorter round trip. */
static void rdma_sim_flow_pace_faster(RdmaSimState *s, uint64_t bytes)
{
    s->tx_pace_acc += bytes;
    if (s->tx_pace_acc >= s->tx_cwnd) {
        s->tx_pace_acc = 0;
        s->tx_pace_rtt_ns = MAX(s->tx_pace_rtt_ns - s->tx_pace_rtt_ns / 8,
                                RDMA_SIM_PACE_RTT_MIN_NS);
    }
}

/*
 * READ responses are never acknowledged: take out of the budget what of
 * them has drained since the last time, at the budget per round trip.
 * What drained counts toward the budget's growth (mtu: of the QP that
 * looks).
 */
static void rdma_sim_flow_drain(RdmaSimState *s, uint32_t mtu)
{
    int64_t now = rdma_sim_flow_now();
    int64_t elapsed = now - s->tx_resp_drained_ns;
    uint32_t rtt = rdma_sim_flow_port_rtt(s);
    uint64_t gone;

    if (!s->tx_resp_inflight) {
        s->tx_resp_drained_ns = now;    /* an empty budget banks no time */
        return;
    }
    if (elapsed <= 0) {
        return;
    }
    /* muldiv64() multiplies in 128 bits; below the time all take, gone fits */
    if ((uint64_t)elapsed >=
        muldiv64_round_up(s->tx_resp_inflight, rtt, s->tx_cwnd)) {
        gone = s->tx_resp_inflight;
    } else {
        gone = muldiv64(elapsed, s->tx_cwnd, rtt);
    }
    s->tx_resp_inflight -= gone;
    s->tx_inflight -= gone;
    s->tx_resp_drained_ns = now;
    rdma_sim_flow_grow(s, gone, mtu);
    rdma_sim_flow_pace_faster(s, gone);
}

/* Let the QPs waiting for the budget try again. */
static void rdma_sim_flow_wake(RdmaSimState *s)
{
    RdmaSimQp *w, *next;

    QTAILQ_FOREACH_SAFE(w, &s->tx_blocked, flow_link, next) {
        QTAILQ_REMOVE(&s->tx_blocked, w, flow_link);
        w->flow_blocked = false;
        rdma_sim_qp_schedule(s, w);
    }
}

/*
 * The QP waits for room for bytes in the budget (rdma_sim_flow_drain()
 * just ran): for an acknowledgement that frees some
 * (rdma_sim_flow_charge()) and, while READ responses are counted, for the
 * pace timer, set for when a quarter of the budget will be free (or, if
 * the requesters' bytes fill more than that, all responses have drained,
 * after which a responder may send one packet), but a quarter round trip
 * at least: responses leave in bursts, and the timer fires at most four
 * times a round trip, never one packet a timer.  It is always set in the
 * future, so a waiting QP never spins.
 */
static void rdma_sim_flow_block(RdmaSimState *s, RdmaSimQp *qp, uint64_t bytes)
{
    uint64_t want = s->tx_inflight + MAX(bytes, s->tx_cwnd / 4);
    uint64_t need = want > s->tx_cwnd ? want - s->tx_cwnd : 1;
    uint32_t rtt = rdma_sim_flow_port_rtt(s);

    if (!qp->flow_blocked) {
        qp->flow_blocked = true;
        QTAILQ_INSERT_TAIL(&s->tx_blocked, qp, flow_link);
    }
    if (!s->tx_resp_inflight) {
        return;
    }
    need = MIN(need, s->tx_resp_inflight);
    timer_mod_anticipate(s->tx_pace_timer, s->tx_resp_drained_ns +
                         MAX(muldiv64_round_up(need, rtt, s->tx_cwnd),
                             rtt / 4));
}

/* Charge the QP's unacknowledged bytes to the port; wake waiting QPs. */
static void rdma_sim_flow_charge(RdmaSimState *s, RdmaSimQp *qp, uint64_t bytes)
{
    RdmaSimXport *x = qp->x;

    rdma_sim_flow_drain(s, x->mtu);
    s->tx_inflight = s->tx_inflight - x->charged + bytes;
    x->charged = bytes;
    /* wake the waiting QPs when a quarter is free, not for every packet */
    if (s->tx_inflight + s->tx_cwnd / 4 <= s->tx_cwnd) {
        rdma_sim_flow_wake(s);
    }
}

static void rdma_sim_flow_recharge(RdmaSimState *s, RdmaSimQp *qp)
{
    RdmaSimXport *x = qp->x;
    int32_t pkts = roce_psn_cmp(x->tx_psn, x->comp_psn);

    rdma_sim_flow_charge(s, qp, pkts > 0 ? (uint64_t)pkts * x->mtu : 0);
}

/* Effective window of the QP in PSNs: its own and its share of the port's */
uint32_t rdma_sim_flow_window(RdmaSimState *s, RdmaSimQp *qp)
{
    RdmaSimXport *x = qp->x;

    return MAX(1, MIN(x->window, s->tx_cwnd / x->mtu));
}

/*
 * Should packet psn ask for an ACK because the window or the budget stops
 * the QP after it?  Only if no ACK is asked for already: an ACK that
 * frees some budget would otherwise make the next packet ask again, and
 * soon every other packet would be acknowledged.
 */
bool rdma_sim_flow_at_edge(RdmaSimState *s, RdmaSimQp *qp, uint32_t psn)
{
    RdmaSimXport *x = qp->x;

    if (x->ackreq_valid && roce_psn_cmp(x->ackreq_psn, x->comp_psn) >= 0) {
        return false;
    }
    return roce_psn_cmp(roce_psn_add(psn, 1), x->comp_psn) >=
           (int32_t)x->window ||
           s->tx_inflight + 2ull * x->mtu > s->tx_cwnd;
}

/*
 * The window or the budget stopped the QP.  Does it need to ask for an ACK
 * with its newest packet (*psn)?  Only when none of its packets in flight
 * asks for one already.
 */
bool rdma_sim_flow_ack_wanted(RdmaSimQp *qp, uint32_t *psn)
{
    RdmaSimXport *x = qp->x;

    *psn = roce_psn_add(x->tx_psn, ROCE_PSN_MASK);
    return roce_psn_cmp(*psn, x->comp_psn) >= 0 &&
           !(x->ackreq_valid && roce_psn_cmp(x->ackreq_psn, x->comp_psn) >= 0);
}

bool rdma_sim_flow_may_send(RdmaSimState *s, RdmaSimQp *qp, uint32_t pkts)
{
    RdmaSimXport *x = qp->x;

    rdma_sim_flow_drain(s, x->mtu);
    if (!x->charged ||
        s->tx_inflight + (uint64_t)pkts * x->mtu <= s->tx_cwnd) {
        return true;
    }
    rdma_sim_flow_block(s, qp, (uint64_t)pkts * x->mtu);
    return false;
}

/*
 * May the QP's responder send a READ response packet now?  It counts as
 * an MTU, as a requester's packet does.
 */
bool rdma_sim_flow_resp_may_send(RdmaSimState *s, RdmaSimQp *qp)
{
    RdmaSimXport *x = qp->x;

    if (rdma_sim_path_is_local(s, &x->path)) {
        return true;
    }
    rdma_sim_flow_drain(s, x->mtu);
    if (!s->tx_resp_inflight || s->tx_inflight + x->mtu <= s->tx_cwnd) {
        return true;
    }
    if (!qp->flow_blocked) {
        /* a wait, not each look during it (a turn looks twice) */
        s->stats[RSIM_STAT_READ_RESP_WAITS]++;
        trace_rdma_sim_resp_wait(qp->qpn, s->tx_resp_inflight,
                                 s->tx_inflight, s->tx_cwnd);
    }
    rdma_sim_flow_block(s, qp, x->mtu);
    return false;
}

/* A READ response packet left. */
void rdma_sim_flow_resp_sent(RdmaSimState *s, RdmaSimQp *qp)
{
    RdmaSimXport *x = qp->x;

    if (!rdma_sim_path_is_local(s, &x->path)) {
        s->tx_resp_inflight += x->mtu;
        s->tx_inflight += x->mtu;
    }
}

/*
 * The pace timer expired (transport.c): the responses have drained as far
 * as the waiting QPs needed.  They look again in their turns.
 */
void rdma_sim_flow_paced(RdmaSimState *s)
{
    trace_rdma_sim_resp_drained();
    rdma_sim_flow_wake(s);
}

/*
 * A loss showed: cut the port's budget, once per round trip.  Returns
 * whether it did.
 */
static bool rdma_sim_flow_cut(RdmaSimState *s, RdmaSimQp *qp)
{
    int64_t now = rdma_sim_flow_now();
    int64_t rtt = qp->x->srtt_ns ? qp->x->srtt_ns : s->tx_srtt_ns;

    if (s->tx_cut_ns && now - s->tx_cut_ns < MAX(rtt, RDMA_SIM_PTO_MIN_NS)) {
        return false;
    }
    s->tx_cut_ns = now;
    s->tx_cwnd = MAX(MIN(RDMA_SIM_CWND_MIN, rdma_sim_flow_cwnd_max(s)),
                     s->tx_cwnd * 7 / 10);
    s->tx_cwnd_acc = 0;
    s->stats[RSIM_STAT_TX_BUDGET_CUTS]++;
    trace_rdma_sim_budget(s->tx_cwnd, "cut");
    return true;
}

void rdma_sim_flow_loss(RdmaSimState *s, RdmaSimQp *qp)
{
    rdma_sim_flow_cut(s, qp);
}

/* The peer asked again for READ responses it was sent: they were lost. */
void rdma_sim_flow_resp_lost(RdmaSimState *s, RdmaSimQp *qp)
{
    if (rdma_sim_flow_cut(s, qp)) {
        s->tx_pace_rtt_ns = MIN(2 * s->tx_pace_rtt_ns, RDMA_SIM_PTO_MAX_NS);
        s->tx_pace_acc = 0;
    }
}

/*
 * Requester and completer hooks
 */

/* Packets [psn, psn + pkts) left (a READ request: its responses). */
void rdma_sim_flow_sent(RdmaSimState *s, RdmaSimQp *qp, uint32_t psn,
                        uint32_t pkts, bool ackreq)
{
    RdmaSimXport *x = qp->x;
    uint32_t end = roce_psn_add(psn, pkts);

    if (ackreq) {
        x->ackreq_psn = roce_psn_add(end, ROCE_PSN_MASK);
        x->ackreq_valid = true;
    }
    if (roce_psn_cmp(end, x->tx_psn) <= 0) {
        return;
    }
    /* time the first new AckReq packet; resent ones would mislead (Karn) */
    if (ackreq && !x->rtt_sent_ns && roce_psn_cmp(psn, x->tx_high) >= 0) {
        x->rtt_psn = roce_psn_add(end, ROCE_PSN_MASK);
        x->rtt_sent_ns = rdma_sim_flow_now();
    }
    x->tx_psn = end;
    if (roce_psn_cmp(end, x->tx_high) > 0) {
        x->tx_high = end;
    }
    rdma_sim_flow_recharge(s, qp);
    rdma_sim_flow_arm_probe(qp, false);
}

/* The requester goes back to psn: what followed counts as lost. */
void rdma_sim_flow_restart(RdmaSimState *s, RdmaSimQp *qp, uint32_t psn)
{
    RdmaSimXport *x = qp->x;

    if (roce_psn_cmp(psn, x->tx_psn) < 0) {
        x->tx_psn = psn;
    }
    x->rtt_sent_ns = 0;
    rdma_sim_flow_recharge(s, qp);
}

/*
 * comp_psn moved on from old_comp.  Returns true when a probe's answer
 * showed that packets after comp_psn were lost: the caller goes back.
 */
bool rdma_sim_flow_acked(RdmaSimState *s, RdmaSimQp *qp, uint32_t old_comp)
{
    RdmaSimXport *x = qp->x;
    int32_t pkts = roce_psn_cmp(x->comp_psn, old_comp);
    bool lost = false;

    if (pkts <= 0) {
        return false;
    }
    if (x->rtt_sent_ns && roce_psn_cmp(x->comp_psn, x->rtt_psn) > 0) {
        rdma_sim_flow_rtt_sample(s, qp, rdma_sim_flow_now() - x->rtt_sent_ns);
        x->rtt_sent_ns = 0;
    }
    if (x->probing) {
        x->probing = false;
        lost = roce_psn_cmp(x->comp_psn, x->probe_high) < 0;
    }
    if (roce_psn_cmp(x->tx_psn, x->comp_psn) < 0) {
        x->tx_psn = x->comp_psn;
    }
    x->probe_backoff = 0;
    rdma_sim_flow_grow(s, (uint64_t)pkts * x->mtu, x->mtu);
    rdma_sim_flow_recharge(s, qp);
    rdma_sim_flow_arm_probe(qp, true);
    return lost;
}

/*
 * Life cycle
 */

/* The QP stops sending (ERR, reset, destroy): nothing of it is in flight. */
void rdma_sim_flow_qp_stop(RdmaSimState *s, RdmaSimQp *qp)
{
    RdmaSimXport *x = qp->x;

    if (qp->flow_blocked) {
        QTAILQ_REMOVE(&s->tx_blocked, qp, flow_link);
        qp->flow_blocked = false;
    }
    if (x) {
        timer_del(x->probe_timer);
        x->probing = false;
        x->rtt_sent_ns = 0;
        rdma_sim_flow_charge(s, qp, 0);
    }
}

/* Is a loaded READ response pace one flow.c could have reached? */
bool rdma_sim_flow_pace_valid(const RdmaSimState *s)
{
    return s->tx_pace_rtt_ns >= RDMA_SIM_PACE_RTT_MIN_NS &&
           s->tx_pace_rtt_ns <= RDMA_SIM_PTO_MAX_NS &&
           s->tx_pace_acc <= (uint64_t)s->props.tx_window * KiB;
}

/* The pace a migration stream without one continues with */
bool rdma_sim_flow_pace_learned(const RdmaSimState *s)
{
    return s->tx_pace_rtt_ns != RDMA_SIM_PACE_RTT_INITIAL_NS ||
           s->tx_pace_acc;
}

/* Power-on state of the port's budget (every QP is gone). */
void rdma_sim_flow_reset(RdmaSimState *s)
{
    QTAILQ_INIT(&s->tx_blocked);
    s->tx_inflight = 0;
    s->tx_cwnd = rdma_sim_flow_cwnd_max(s);
    s->tx_cwnd_acc = 0;
    s->tx_cut_ns = 0;
    s->tx_resp_inflight = 0;
    s->tx_resp_drained_ns = 0;
    s->tx_srtt_ns = 0;
    s->tx_pace_rtt_ns = RDMA_SIM_PACE_RTT_INITIAL_NS;
    s->tx_pace_acc = 0;
    timer_del(s->tx_pace_timer);
}
