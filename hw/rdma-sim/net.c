/*
 * rdma-sim: the port - QEMU NIC, Ethernet rings and the receive filter
 *
 * Frames from the network backend are filtered by destination MAC; RoCEv2
 * frames go to the transport engine, everything else to the RX ring of
 * the guest's Ethernet net device (datasheet section 10).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qapi/error.h"
#include "net/eth.h"
#include "rdma-sim.h"
#include "transport.h"
#include "trace.h"

/* Largest IB MTU that fits the Ethernet MTU with RoCEv2 headers. */
uint8_t rsim_active_mtu(uint32_t eth_mtu)
{
    uint32_t room = eth_mtu > 80 ? eth_mtu - 80 : 0;
    uint8_t mtu = RSIM_MTU_256;

    while (mtu < RSIM_MTU_4096 && (256u << mtu) <= room) {
        mtu++;
    }
    return mtu;
}

/*
 * Report the port state to the driver: on every change, and when the
 * device is enabled (announce).
 */
void rsim_port_update(RdmaSimState *s, bool announce)
{
    bool active = s->nic && !qemu_get_queue(s->nic)->link_down;

    if (!rsim_ready(s)) {
        s->port_active = false;
        return;
    }
    if (active == s->port_active && !announce) {
        return;
    }
    s->port_active = active;
    trace_rdma_sim_port_state(active);
    rsim_aeq_post(s, active ? RSIM_EV_PORT_ACTIVE : RSIM_EV_PORT_DOWN, 1, 0);
}

/*
 * Ethernet rings
 */

static MemTxResult rsim_eth_desc_rw(RdmaSimState *s, RsimEthq *q,
                                    uint32_t index,
                                    struct rsim_eth_desc *d, bool write)
{
    uint64_t addr = q->addr + (uint64_t)(index & (q->depth - 1)) *
                    RSIM_ETH_DESC_SIZE;

    return write ? rsim_dma_write(s, addr, d, sizeof(*d))
                 : rsim_dma_read(s, addr, d, sizeof(*d));
}

static void rsim_eth_completed(RdmaSimState *s, unsigned kind)
{
    RsimEthq *q = &s->ethq[kind];

    if (q->armed) {
        q->armed = false;
        rsim_eq_post_eth(s, kind);
    }
}

static void rsim_eth_transmit(RdmaSimState *s)
{
    RsimEthq *q = &s->ethq[RSIM_ETHQ_TX];
    g_autofree uint8_t *frame = g_malloc(RSIM_MAX_ETH_MTU + 18);
    bool done = false;

    s->busy++;
    while (q->valid && q->cons != q->prod) {
        struct rsim_eth_desc d;
        uint16_t len, flags = RSIM_ETH_DESC_DONE;

        if (rsim_eth_desc_rw(s, q, q->cons, &d, false)) {
            rsim_guest_error(s, "eth", "TX descriptor %u not readable",
                             q->cons);
            break;
        }
        len = le16_to_cpu(d.len);
        if (len < ETH_HLEN || len > s->eth_mtu + 18) {
            rsim_guest_error(s, "eth", "TX frame length %u outside 14..%u",
                             len, s->eth_mtu + 18);
            flags |= RSIM_ETH_DESC_ERR;
        } else if (rsim_dma_read(s, le64_to_cpu(d.addr), frame, len)) {
            rsim_guest_error(s, "eth", "TX buffer 0x%" PRIx64 " not readable",
                             le64_to_cpu(d.addr));
            flags |= RSIM_ETH_DESC_ERR;
        } else {
            s->stats[RSIM_STAT_TX_ETH_FRAMES]++;
            rsim_net_transmit(s, frame, len);
        }
        d.flags = cpu_to_le16(flags);
        if (rsim_eth_desc_rw(s, q, q->cons, &d, true)) {
            rsim_guest_error(s, "eth", "TX descriptor %u not writable",
                             q->cons);
            break;
        }
        q->cons = (q->cons + 1) & (q->depth - 1);
        done = true;
    }
    if (done) {
        rsim_eth_completed(s, RSIM_ETHQ_TX);
    }
    s->busy--;
}

static bool rsim_eth_doorbell(RdmaSimState *s, unsigned kind, uint32_t prod,
                              bool arm)
{
    RsimEthq *q = &s->ethq[kind];

    if (!rsim_ready(s) || !q->valid) {
        rsim_guest_error(s, "eth", "%s doorbell without the ring",
                         kind == RSIM_ETHQ_TX ? "TX" : "RX");
        return false;
    }
    if (prod >= q->depth) {
        rsim_guest_error(s, "eth", "%s producer index %u >= depth %u",
                         kind == RSIM_ETHQ_TX ? "TX" : "RX", prod, q->depth);
        return false;
    }
    q->prod = prod;
    if (arm) {
        q->armed = true;
    }
    return true;
}

void rsim_eth_tx_doorbell(RdmaSimState *s, uint32_t val)
{
    if (rsim_eth_doorbell(s, RSIM_ETHQ_TX,
                          FIELD_EX32(val, RSIM_ETH_TX_DB, PROD),
                          FIELD_EX32(val, RSIM_ETH_TX_DB, ARM))) {
        rsim_eth_transmit(s);
    }
}

void rsim_eth_rx_doorbell(RdmaSimState *s, uint32_t val)
{
    rsim_eth_doorbell(s, RSIM_ETHQ_RX, FIELD_EX32(val, RSIM_ETH_RX_DB, PROD),
                      FIELD_EX32(val, RSIM_ETH_RX_DB, ARM));
}

/* Put a received frame into the next posted RX buffer. */
static void rsim_eth_receive(RdmaSimState *s, const uint8_t *buf, size_t len)
{
    RsimEthq *q = &s->ethq[RSIM_ETHQ_RX];
    struct rsim_eth_desc d;

    if (!q->valid || q->cons == q->prod) {
        s->stats[RSIM_STAT_RX_ETH_NO_BUF]++;
        return;
    }
    if (rsim_eth_desc_rw(s, q, q->cons, &d, false)) {
        rsim_guest_error(s, "eth", "RX descriptor %u not readable", q->cons);
        return;
    }
    if (len > le16_to_cpu(d.len) ||
        rsim_dma_write(s, le64_to_cpu(d.addr), buf, len)) {
        rsim_guest_error(s, "eth", "RX buffer %u too small (%u < %zu) or "
                         "not writable", q->cons, le16_to_cpu(d.len), len);
        d.flags = cpu_to_le16(RSIM_ETH_DESC_DONE | RSIM_ETH_DESC_ERR);
        d.len = 0;
    } else {
        d.flags = cpu_to_le16(RSIM_ETH_DESC_DONE);
        d.len = cpu_to_le16(len);
        s->stats[RSIM_STAT_RX_ETH_FRAMES]++;
    }
    if (rsim_eth_desc_rw(s, q, q->cons, &d, true)) {
        rsim_guest_error(s, "eth", "RX descriptor %u not writable", q->cons);
        return;
    }
    q->cons = (q->cons + 1) & (q->depth - 1);
    rsim_eth_completed(s, RSIM_ETHQ_RX);
}

/*
 * The NIC
 */

void rsim_net_transmit(RdmaSimState *s, const uint8_t *frame, size_t len)
{
    s->stats[RSIM_STAT_TX_FRAMES]++;
    s->stats[RSIM_STAT_TX_BYTES] += len;
    if (s->nic) {
        qemu_send_packet(qemu_get_queue(s->nic), frame, len);
    }
}

static bool rsim_mac_accepts(RdmaSimState *s, const uint8_t *dst)
{
    return (dst[0] & 1) || !memcmp(dst, s->mac, sizeof(s->mac));
}

/*
 * Frames are accepted even without RX buffers: RoCE needs no buffers.
 * While the device is not ready rsim_receive() drops them: refusing them
 * here would queue them in the backend, which then stops delivering
 * frames until a flush, and would hand stale frames over later.
 */
static bool rsim_can_receive(NetClientState *nc)
{
    return true;
}

static ssize_t rsim_receive(NetClientState *nc, const uint8_t *buf,
                            size_t size)
{
    RdmaSimState *s = qemu_get_nic_opaque(nc);

    if (!rsim_ready(s)) {
        return size;
    }
    s->busy++;
    s->stats[RSIM_STAT_RX_FRAMES]++;
    s->stats[RSIM_STAT_RX_BYTES] += size;
    if (size < ETH_HLEN || !rsim_mac_accepts(s, buf)) {
        s->stats[RSIM_STAT_RX_DROP_FILTER]++;
    } else if (!rsim_transport_rx(s, buf, size)) {
        rsim_eth_receive(s, buf, size);
    }
    s->busy--;
    return size;
}

static void rsim_link_status_changed(NetClientState *nc)
{
    rsim_port_update(qemu_get_nic_opaque(nc), false);
}

static NetClientInfo rsim_net_info = {
    .type = NET_CLIENT_DRIVER_NIC,
    .size = sizeof(NICState),
    .can_receive = rsim_can_receive,
    .receive = rsim_receive,
    .link_status_changed = rsim_link_status_changed,
};

void rsim_net_init(RdmaSimState *s, Error **errp)
{
    DeviceState *dev = DEVICE(s);

    qemu_macaddr_default_if_unset(&s->conf.macaddr);
    s->nic = qemu_new_nic(&rsim_net_info, &s->conf,
                          object_get_typename(OBJECT(s)), dev->id,
                          &dev->mem_reentrancy_guard, s);
    qemu_format_nic_info_str(qemu_get_queue(s->nic), s->conf.macaddr.a);
}

void rsim_net_cleanup(RdmaSimState *s)
{
    if (s->nic) {
        qemu_del_nic(s->nic);
        s->nic = NULL;
    }
}

void rsim_net_reset(RdmaSimState *s)
{
    if (s->nic) {
        qemu_purge_queued_packets(qemu_get_queue(s->nic));
    }
}
