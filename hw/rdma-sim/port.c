/*
 * rdma-sim: the port - the Ethernet rings of the guest's net device, the
 * receive filter, and where each frame goes
 *
 * Frames from the network (the host hands them to rdma_sim_port_receive())
 * are filtered by MAC address; RoCEv2 frames go to the transport engine,
 * everything else to the RX ring of the guest's Ethernet net device
 * (datasheet section 10).  The port calls nothing of the engine: the
 * engine registers its receive handler (RdmaSimState.roce_rx), as a NIC
 * registers its own with QEMU's net layer, and frames that come while the
 * device is busy are queued for its bottom half.  Frames leave through
 * the host's rdma_sim_net_send() (QEMU's: platform.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "platform.h"
#include "device.h"
#include "roce.h"
#include "trace.h"

/* A frame to the network: counted here, sent by the host */
void rdma_sim_port_send(RdmaSimState *s, const uint8_t *frame, size_t len)
{
    s->stats[RSIM_STAT_TX_FRAMES]++;
    s->stats[RSIM_STAT_TX_BYTES] += len;
    rdma_sim_net_send(s, frame, len);
}

/*
 * Ethernet rings
 */

static MemTxResult rdma_sim_eth_desc_rw(RdmaSimState *s, RdmaSimEthq *q,
                                        uint32_t index,
                                        struct rsim_eth_desc *d, bool write)
{
    uint64_t addr = q->addr + (uint64_t)(index & (q->depth - 1)) *
                    RSIM_ETH_DESC_SIZE;

    return write ? rdma_sim_dma_write(s, addr, d, sizeof(*d))
                 : rdma_sim_dma_read(s, addr, d, sizeof(*d));
}

static void rdma_sim_eth_completed(RdmaSimState *s, unsigned kind)
{
    RdmaSimEthq *q = &s->ethq[kind];

    if (q->armed) {
        q->armed = false;
        rdma_sim_eq_post_eth(s, kind);
    }
}

static void rdma_sim_eth_transmit(RdmaSimState *s)
{
    RdmaSimEthq *q = &s->ethq[RSIM_ETHQ_TX];
    g_autofree uint8_t *frame = g_malloc(RSIM_MAX_ETH_MTU +
                                         RSIM_ETH_FRAME_OVERHEAD);
    bool done = false;

    s->busy++;
    while (q->valid && q->cons != q->prod) {
        struct rsim_eth_desc d;
        uint16_t len, flags = RSIM_ETH_DESC_DONE;

        if (rdma_sim_eth_desc_rw(s, q, q->cons, &d, false)) {
            rdma_sim_guest_error(s, "eth", "TX descriptor %u not readable",
                                 q->cons);
            break;
        }
        len = le16_to_cpu(d.len);
        if (len < ROCE_ETH_LEN || len > s->eth_mtu + RSIM_ETH_FRAME_OVERHEAD) {
            rdma_sim_guest_error(s, "eth", "TX frame length %u outside %u..%u",
                                 len, ROCE_ETH_LEN,
                                 s->eth_mtu + RSIM_ETH_FRAME_OVERHEAD);
            flags |= RSIM_ETH_DESC_ERR;
        } else if (rdma_sim_dma_read(s, le64_to_cpu(d.addr), frame, len)) {
            rdma_sim_guest_error(s, "eth",
                                 "TX buffer 0x%" PRIx64 " not readable",
                                 le64_to_cpu(d.addr));
            flags |= RSIM_ETH_DESC_ERR;
        } else {
            s->stats[RSIM_STAT_TX_ETH_FRAMES]++;
            rdma_sim_port_send(s, frame, len);
        }
        d.flags = cpu_to_le16(flags);
        if (rdma_sim_eth_desc_rw(s, q, q->cons, &d, true)) {
            rdma_sim_guest_error(s, "eth", "TX descriptor %u not writable",
                                 q->cons);
            break;
        }
        q->cons = (q->cons + 1) & (q->depth - 1);
        done = true;
    }
    if (done) {
        rdma_sim_eth_completed(s, RSIM_ETHQ_TX);
    }
    s->busy--;
}

static bool rdma_sim_eth_doorbell(RdmaSimState *s, unsigned kind, uint32_t prod,
                                  bool arm)
{
    RdmaSimEthq *q = &s->ethq[kind];

    if (!rdma_sim_ready(s) || !q->valid) {
        rdma_sim_guest_error(s, "eth", "%s doorbell without the ring",
                             kind == RSIM_ETHQ_TX ? "TX" : "RX");
        return false;
    }
    if (prod >= q->depth) {
        rdma_sim_guest_error(s, "eth", "%s producer index %u >= depth %u",
                             kind == RSIM_ETHQ_TX ? "TX" : "RX", prod,
                             q->depth);
        return false;
    }
    q->prod = prod;
    if (arm) {
        q->armed = true;
    }
    return true;
}

void rdma_sim_eth_tx_doorbell(RdmaSimState *s, uint32_t val)
{
    if (rdma_sim_eth_doorbell(s, RSIM_ETHQ_TX,
                              FIELD_EX32(val, RSIM_ETH_TX_DB, PROD),
                              FIELD_EX32(val, RSIM_ETH_TX_DB, ARM))) {
        rdma_sim_eth_transmit(s);
    }
}

void rdma_sim_eth_rx_doorbell(RdmaSimState *s, uint32_t val)
{
    rdma_sim_eth_doorbell(s, RSIM_ETHQ_RX,
                          FIELD_EX32(val, RSIM_ETH_RX_DB, PROD),
                          FIELD_EX32(val, RSIM_ETH_RX_DB, ARM));
}

/* Put a received frame into the next posted RX buffer. */
static void rdma_sim_eth_receive(RdmaSimState *s, const uint8_t *buf,
                                 size_t len)
{
    RdmaSimEthq *q = &s->ethq[RSIM_ETHQ_RX];
    struct rsim_eth_desc d;

    if (!q->valid || q->cons == q->prod) {
        s->stats[RSIM_STAT_RX_ETH_NO_BUF]++;
        return;
    }
    if (rdma_sim_eth_desc_rw(s, q, q->cons, &d, false)) {
        rdma_sim_guest_error(s, "eth", "RX descriptor %u not readable",
                             q->cons);
        return;
    }
    if (len > le16_to_cpu(d.len) ||
        rdma_sim_dma_write(s, le64_to_cpu(d.addr), buf, len)) {
        rdma_sim_guest_error(s, "eth", "RX buffer %u too small (%u < %zu) or "
                             "not writable", q->cons, le16_to_cpu(d.len), len);
        d.flags = cpu_to_le16(RSIM_ETH_DESC_DONE | RSIM_ETH_DESC_ERR);
        d.len = 0;
    } else {
        d.flags = cpu_to_le16(RSIM_ETH_DESC_DONE);
        d.len = cpu_to_le16(len);
        s->stats[RSIM_STAT_RX_ETH_FRAMES]++;
    }
    if (rdma_sim_eth_desc_rw(s, q, q->cons, &d, true)) {
        rdma_sim_guest_error(s, "eth", "RX descriptor %u not writable",
                             q->cons);
        return;
    }
    q->cons = (q->cons + 1) & (q->depth - 1);
    rdma_sim_eth_completed(s, RSIM_ETHQ_RX);
}

/*
 * Receive
 */

/* For us: to our MAC, broadcast or multicast. */
static bool rdma_sim_mac_accepts(RdmaSimState *s, const uint8_t *dst)
{
    return (dst[0] & 1) || !memcmp(dst, s->mac, sizeof(s->mac));
}

/*
 * A shared medium (QEMU's mcast socket netdev, a hub) hands each frame back
 * to its sender too; a NIC does not receive its own transmissions.
 */
static bool rdma_sim_mac_own(RdmaSimState *s, const uint8_t *frame)
{
    return !memcmp(frame + sizeof(s->mac), s->mac, sizeof(s->mac));
}

/*
 * A frame the NIC delivered while the device itself was busy (a hub or a
 * filter hands frames over synchronously, in the middle of a packet the
 * device sends): received later by the bottom half, never re-entrantly.
 */
static void rdma_sim_rx_defer(RdmaSimState *s, const uint8_t *frame,
                              size_t len)
{
    if (rdma_sim_frame_queue(s, &s->rx_deferred, RDMA_SIM_RX_DEFER_MAX,
                             frame, len)) {
        s->stats[RSIM_STAT_RX_DEFERRED]++;
    } else {
        s->stats[RSIM_STAT_RX_DROP_BUSY]++;
    }
}

void rdma_sim_port_receive(RdmaSimState *s, const uint8_t *buf, size_t size)
{
    if (!rdma_sim_ready(s)) {
        return;
    }
    if (s->busy || !g_queue_is_empty(&s->rx_deferred)) {
        /*
         * Sent to us while we send: received after the current packet.
         * And while such frames wait, the next ones wait behind them, so
         * that frames are received in the order they came.
         */
        rdma_sim_rx_defer(s, buf, size);
        return;
    }
    s->busy++;
    rdma_sim_port_rx_frame(s, buf, size);
    s->busy--;
}

/*
 * A frame from the network, to the transport engine (its receive handler,
 * s->roce_rx, takes RoCEv2 frames for the port's addresses) or the
 * Ethernet RX ring.
 */
void rdma_sim_port_rx_frame(RdmaSimState *s, const uint8_t *buf, size_t size)
{
    s->stats[RSIM_STAT_RX_FRAMES]++;
    s->stats[RSIM_STAT_RX_BYTES] += size;
    if (size >= ROCE_ETH_LEN && rdma_sim_mac_own(s, buf)) {
        s->stats[RSIM_STAT_RX_DROP_OWN]++;
    } else if (size < ROCE_ETH_LEN || !rdma_sim_mac_accepts(s, buf)) {
        s->stats[RSIM_STAT_RX_DROP_FILTER]++;
    } else if (!s->roce_rx(s, buf, size)) {
        rdma_sim_eth_receive(s, buf, size);
    }
}

/* The host's link changed: the port event DMA is the device's own work. */
void rdma_sim_port_link_changed(RdmaSimState *s)
{
    s->busy++;
    rdma_sim_port_update(s, false);
    s->busy--;
}
