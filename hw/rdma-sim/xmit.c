/*
 * rdma-sim: what the transport's stages call on - transmission, paths, a
 * QP's turn and its retransmission timer
 *
 * A finished frame goes to one of the device's own addresses (internal
 * loopback: queued for the engine's bottom half to receive) or to the
 * network, through the fault injection of the fault-* properties.  These
 * services call nothing of the engine or its stages: the engine's bottom
 * half (transport.c) is only scheduled, so the stages (requester,
 * responder, completer, ud.c, flow.c) sit above this file and below the
 * engine.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "platform.h"
#include "stages.h"
#include "trace.h"

/*
 * Transmission
 */

/* Is gid one of the device's own (an entry of its GID table)? */
bool rdma_sim_is_own_gid(RdmaSimState *s, const uint8_t *gid)
{
    for (uint32_t i = 0; i < s->props.max_gid; i++) {
        if (s->gids[i].valid && !memcmp(s->gids[i].gid, gid, 16)) {
            return true;
        }
    }
    return false;
}

/*
 * May the requester and the READ responder send now?  Not while the
 * frames the device sent to itself fill half its loopback queue: they get
 * another turn once the bottom half has received some.  (Frames to the
 * network are never held here: the netdev has its own queue.)
 */
bool rdma_sim_xmit_room(RdmaSimState *s)
{
    return g_queue_get_length(&s->loop_frames) < RDMA_SIM_LOOP_MAX / 2;
}

static void rdma_sim_deliver(RdmaSimState *s, const uint8_t *data, size_t len,
                             bool loop)
{
    s->stats[RSIM_STAT_TX_ROCE_PKTS]++;
    if (loop) {
        s->stats[RSIM_STAT_LOOPBACK_PKTS]++;
        if (!rdma_sim_frame_queue(s, &s->loop_frames, RDMA_SIM_LOOP_MAX,
                                  data, len)) {
            s->stats[RSIM_STAT_LOOPBACK_DROPS]++;
            return;
        }
        s->stats[RSIM_STAT_LOOPBACK_PEAK] =
            MAX(s->stats[RSIM_STAT_LOOPBACK_PEAK],
                g_queue_get_length(&s->loop_frames));
    } else {
        rdma_sim_port_send(s, data, len);
    }
}

/* Send the frame fault-reorder holds back, if any. */
void rdma_sim_release_held(RdmaSimState *s)
{
    GByteArray *held = s->held_frame;

    if (held) {
        s->held_frame = NULL;
        rdma_sim_deliver(s, held->data, held->len, s->held_loop);
        g_byte_array_unref(held);
    }
}

/* The GID of a destination address: IPv6, or IPv4 (4 bytes) mapped */
static void rdma_sim_dest_gid(bool ipv6, const uint8_t *dip, uint8_t *gid)
{
    if (ipv6) {
        memcpy(gid, dip, 16);
    } else {
        memset(gid, 0, 10);
        gid[10] = gid[11] = 0xff;
        memcpy(gid + 12, dip, 4);
    }
}

/* As rdma_sim_xmit() decides for the path's frames */
bool rdma_sim_path_is_local(RdmaSimState *s, const RocePath *p)
{
    uint8_t gid[16];

    rdma_sim_dest_gid(p->ipv6, p->ipv6 ? p->dip : p->dip + 12, gid);
    return rdma_sim_is_own_gid(s, gid);
}

/* Send a finished RoCE frame: to ourselves or to the network. */
void rdma_sim_xmit(RdmaSimState *s, RoceFrame *f)
{
    const uint8_t *dip = f->data + f->l3 + (f->ipv6 ? 24 : 16);
    uint8_t gid[16];
    bool loop;

    rdma_sim_dest_gid(f->ipv6, dip, gid);
    loop = rdma_sim_is_own_gid(s, gid);
    if (s->xmit_at_once) {
        s->stats[RSIM_STAT_TX_AT_DOORBELL]++;
    }
    /* BTH: opcode, then the destination QP and the PSN (24 bits each) */
    trace_rdma_sim_tx_packet(ldl_be_p(f->data + f->bth + 4) & ROCE_QPN_MASK,
                             f->data[f->bth],
                             ldl_be_p(f->data + f->bth + 8) & ROCE_PSN_MASK,
                             f->len, loop);

    if (rdma_sim_fault_hit(s, s->props.fault_drop)) {
        s->stats[RSIM_STAT_FAULT_DROP]++;
        trace_rdma_sim_fault("dropped");
        return;
    }
    if (rdma_sim_fault_hit(s, s->props.fault_corrupt)) {
        /* flip a bit past the headers: the ICRC check must catch it */
        unsigned pos = f->bth + rdma_sim_fault_rand(s) % (f->len - f->bth);

        s->stats[RSIM_STAT_FAULT_CORRUPT]++;
        trace_rdma_sim_fault("corrupted");
        f->data[pos] ^= 1u << (rdma_sim_fault_rand(s) % 8);
    }
    if (!s->held_frame && rdma_sim_fault_hit(s, s->props.fault_reorder)) {
        s->stats[RSIM_STAT_FAULT_REORDER]++;
        trace_rdma_sim_fault("held back (reordered)");
        s->held_frame = g_byte_array_append(g_byte_array_sized_new(f->len),
                                            f->data, f->len);
        s->held_loop = loop;
        /* released after the next frame, or when the engine goes idle */
        qemu_bh_schedule(s->xport_bh);
        return;
    }
    rdma_sim_deliver(s, f->data, f->len, loop);
    if (rdma_sim_fault_hit(s, s->props.fault_dup)) {
        s->stats[RSIM_STAT_FAULT_DUP]++;
        trace_rdma_sim_fault("duplicated");
        rdma_sim_deliver(s, f->data, f->len, loop);
    }
    rdma_sim_release_held(s);
}

/*
 * Paths
 */

/* Addresses of packets from QP qpn to dqpn along an address vector. */
void rdma_sim_path_from_av(RdmaSimState *s, const struct rsim_av *av,
                           uint32_t qpn, uint32_t dqpn, RocePath *p)
{
    memset(p, 0, sizeof(*p));
    memcpy(p->smac, s->mac, 6);
    memcpy(p->dmac, av->dmac, 6);
    if (av->sgid_index < s->props.max_gid) {
        memcpy(p->sip, s->gids[av->sgid_index].gid, 16);
    }
    memcpy(p->dip, av->dgid, 16);
    p->ipv6 = av->network_type == RSIM_NET_IPV6;
    p->tclass = av->traffic_class;
    p->hop_limit = av->hop_limit ? av->hop_limit : 64;
    p->flow_label = le32_to_cpu(av->flow_label);
    /* any port in 0xc000..0xffff is valid; spread flows by QP numbers */
    p->sport = 0xc000 | ((qpn ^ dqpn ^ (qpn >> 14)) & 0x3fff);
}

/*
 * A QP's turn and its retransmission timer
 */

void rdma_sim_qp_schedule(RdmaSimState *s, RdmaSimQp *qp)
{
    if (!qp->x || qp->on_work_list || rdma_sim_stopped(s)) {
        return;
    }
    qp->on_work_list = true;
    QTAILQ_INSERT_TAIL(&s->work, qp, work_link);
    qemu_bh_schedule(s->xport_bh);
}

/* Off the work list (the QP has nothing more to do, or no transport). */
void rdma_sim_qp_unschedule(RdmaSimState *s, RdmaSimQp *qp)
{
    if (qp->on_work_list) {
        QTAILQ_REMOVE(&s->work, qp, work_link);
        qp->on_work_list = false;
    }
}

/* Keep the retransmission timer running while PSNs are unacknowledged. */
void rdma_sim_retry_timer_update(RdmaSimState *s, RdmaSimQp *qp)
{
    RdmaSimXport *x = qp->x;

    if (!x || x->cq_stalled || x->rnr_wait) {
        return;
    }
    if (!qp->timeout || !rdma_sim_xport_outstanding(qp)) {
        timer_del(x->retry_timer);
    } else if (!timer_pending(x->retry_timer)) {
        timer_mod(x->retry_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                  rdma_sim_qp_timeout_ns(qp));
    }
}
