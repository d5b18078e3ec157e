/* core: all */
/*
 * Unit tests of the port (port.c): the Ethernet rings of the guest's net
 * device, the receive filter, and frames that come while the device is
 * busy - driven through the admin queue, doorbells and the port's
 * receive function, as QEMU's net.c hands frames over.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "driver.h"

#define MEM_SIZE        (1 * MiB)
#define DEPTH           4
#define BUF_SIZE        RSIM_ETH_MIN_RX_BUF

typedef struct UEth {
    UDev d;
    uint64_t ring[2];           /* descriptors, by enum rsim_ethq_kind */
    uint64_t buf[2];            /* one buffer per descriptor slot */
} UEth;

static uint64_t eth_stat(UEth *e, unsigned stat)
{
    return e->d.s->stats[stat];
}

static struct rsim_eth_desc *eth_desc(UEth *e, unsigned kind, unsigned i)
{
    return unit_mem(e->d.s, e->ring[kind] + i * RSIM_ETH_DESC_SIZE,
                    RSIM_ETH_DESC_SIZE);
}

/* Both rings on one EQ; the driver's first RX buffer posted */
static void eth_start(UEth *e)
{
    struct rsim_cmd_create_eq eq = { 0 };
    struct rsim_cmd_create_ethq q = { 0 };
    uint32_t object, eqn;

    udrv_start(&e->d, 9, MEM_SIZE);
    g_assert_cmpuint(udrv_event(&e->d, &object), ==, RSIM_EV_PORT_ACTIVE);
    eq.vector = cpu_to_le32(1);
    eq.addr = cpu_to_le64(udrv_alloc(&e->d, 16 * RSIM_EQ_ENTRY_SIZE));
    eq.depth = cpu_to_le32(16);
    eqn = udrv_create(&e->d, RSIM_CMD_CREATE_EQ, &eq, sizeof(eq), NULL);
    for (unsigned kind = RSIM_ETHQ_TX; kind <= RSIM_ETHQ_RX; kind++) {
        e->ring[kind] = udrv_alloc(&e->d, DEPTH * RSIM_ETH_DESC_SIZE);
        e->buf[kind] = udrv_alloc(&e->d, DEPTH * BUF_SIZE);
        memset(&q, 0, sizeof(q));
        q.kind = kind;
        q.eqn = cpu_to_le32(eqn);
        q.addr = cpu_to_le64(e->ring[kind]);
        q.depth = cpu_to_le32(DEPTH);
        /* the command's parameters follow its first word, dw0 */
        g_assert_cmpuint(udrv_cmd(&e->d, RSIM_CMD_CREATE_ETHQ,
                                  (uint8_t *)&q + 4, sizeof(q) - 4, NULL),
                         ==, RSIM_STS_OK);
    }
}

/* Descriptor i of a ring points at buffer i, len bytes long */
static void eth_post(UEth *e, unsigned kind, unsigned i, uint16_t len)
{
    struct rsim_eth_desc *d = eth_desc(e, kind, i);

    memset(d, 0, sizeof(*d));
    d->addr = cpu_to_le64(e->buf[kind] + i * BUF_SIZE);
    d->len = cpu_to_le16(len);
}

/* An Ethernet frame (IPv4 ethertype, not RoCE: no UDP) from src to dst */
static size_t eth_frame(uint8_t *f, const uint8_t *dst, uint8_t src_addr,
                        size_t len)
{
    memset(f, 0, len);
    memcpy(f, dst, 6);
    memcpy(f + 6, "\x52\x54\x00\x5e\x00", 5);
    f[11] = src_addr;
    f[12] = 0x08;
    f[13] = 0x00;
    for (size_t i = 14; i < len; i++) {
        f[i] = i;
    }
    return len;
}

/*
 * TX: a frame in a descriptor leaves the port whole and its descriptor is
 * DONE; one shorter than an Ethernet header is refused with ERR and a
 * guest error, and nothing leaves.
 */
static void test_tx(void)
{
    GPtrArray *sent;
    GByteArray *f;
    uint8_t *buf;
    UEth e;

    eth_start(&e);
    sent = unit_host(e.d.s)->sent;
    buf = unit_mem(e.d.s, e.buf[RSIM_ETHQ_TX], 2 * BUF_SIZE);
    eth_frame(buf, (const uint8_t *)"\xff\xff\xff\xff\xff\xff", 9, 100);
    eth_post(&e, RSIM_ETHQ_TX, 0, 100);
    eth_post(&e, RSIM_ETHQ_TX, 1, 10);
    rdma_sim_regs_write(e.d.s, A_RSIM_ETH_TX_DB, 2);

    g_assert_cmpuint(sent->len, ==, 1);
    f = g_ptr_array_index(sent, 0);
    g_assert_cmpuint(f->len, ==, 100);
    g_assert_cmpmem(f->data, 100, buf, 100);
    g_assert_cmphex(le16_to_cpu(eth_desc(&e, RSIM_ETHQ_TX, 0)->flags), ==,
                    RSIM_ETH_DESC_DONE);
    g_assert_cmphex(le16_to_cpu(eth_desc(&e, RSIM_ETHQ_TX, 1)->flags), ==,
                    RSIM_ETH_DESC_DONE | RSIM_ETH_DESC_ERR);
    g_assert_cmpuint(eth_stat(&e, RSIM_STAT_TX_ETH_FRAMES), ==, 1);
    g_assert_cmpuint(eth_stat(&e, RSIM_STAT_TX_FRAMES), ==, 1);
    g_assert_cmpuint(eth_stat(&e, RSIM_STAT_TX_BYTES), ==, 100);
    g_assert_cmpuint(unit_host(e.d.s)->guest_errors, ==, 1);

    /* a producer index outside the ring: refused, nothing moves */
    rdma_sim_regs_write(e.d.s, A_RSIM_ETH_TX_DB, DEPTH);
    g_assert_cmpuint(sent->len, ==, 1);
    g_assert_cmpuint(unit_host(e.d.s)->guest_errors, ==, 2);
    udrv_stop(&e.d);
}

/*
 * RX and the filter: a broadcast frame goes into the posted buffer; the
 * next finds no buffer; a frame to another MAC, one the port sent itself
 * (a shared medium hands it back) and a runt are dropped and counted.
 */
static void test_rx_filter(void)
{
    static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    static const uint8_t other[6] = { 0x52, 0x54, 0x00, 0x5e, 0x00, 0x42 };
    struct rsim_eth_desc *d;
    uint8_t f[200];
    UEth e;

    eth_start(&e);
    eth_post(&e, RSIM_ETHQ_RX, 0, BUF_SIZE);
    rdma_sim_regs_write(e.d.s, A_RSIM_ETH_RX_DB, 1);

    rdma_sim_port_receive(e.d.s, f, eth_frame(f, bcast, 3, sizeof(f)));
    d = eth_desc(&e, RSIM_ETHQ_RX, 0);
    g_assert_cmphex(le16_to_cpu(d->flags), ==, RSIM_ETH_DESC_DONE);
    g_assert_cmpuint(le16_to_cpu(d->len), ==, sizeof(f));
    g_assert_cmpmem(unit_mem(e.d.s, e.buf[RSIM_ETHQ_RX], sizeof(f)),
                    sizeof(f), f, sizeof(f));
    g_assert_cmpuint(eth_stat(&e, RSIM_STAT_RX_ETH_FRAMES), ==, 1);

    rdma_sim_port_receive(e.d.s, f, eth_frame(f, bcast, 3, sizeof(f)));
    g_assert_cmpuint(eth_stat(&e, RSIM_STAT_RX_ETH_NO_BUF), ==, 1);
    rdma_sim_port_receive(e.d.s, f, eth_frame(f, other, 3, sizeof(f)));
    g_assert_cmpuint(eth_stat(&e, RSIM_STAT_RX_DROP_FILTER), ==, 1);
    rdma_sim_port_receive(e.d.s, f, eth_frame(f, bcast, 9, sizeof(f)));
    g_assert_cmpuint(eth_stat(&e, RSIM_STAT_RX_DROP_OWN), ==, 1);
    rdma_sim_port_receive(e.d.s, f, 13);
    g_assert_cmpuint(eth_stat(&e, RSIM_STAT_RX_DROP_FILTER), ==, 2);
    g_assert_cmpuint(eth_stat(&e, RSIM_STAT_RX_FRAMES), ==, 5);
    g_assert_cmpuint(eth_stat(&e, RSIM_STAT_RX_ETH_FRAMES), ==, 1);
    g_assert_cmpuint(unit_host(e.d.s)->guest_errors, ==, 0);
    udrv_stop(&e.d);
}

/*
 * A frame handed over while the device is busy (a backend delivering in
 * the middle of a frame the device sends) waits for the bottom half, and
 * the next one waits behind it, so they arrive in order; beyond
 * RDMA_SIM_RX_DEFER_MAX waiting, frames are dropped and counted.
 */
static void test_busy_defer(void)
{
    static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    uint8_t f[64];
    UEth e;

    eth_start(&e);
    for (unsigned i = 0; i < 2; i++) {
        eth_post(&e, RSIM_ETHQ_RX, i, BUF_SIZE);
    }
    rdma_sim_regs_write(e.d.s, A_RSIM_ETH_RX_DB, 2);

    e.d.s->busy++;
    eth_frame(f, bcast, 1, sizeof(f));
    rdma_sim_port_receive(e.d.s, f, sizeof(f));
    e.d.s->busy--;
    f[20] = 0xaa;
    rdma_sim_port_receive(e.d.s, f, sizeof(f));
    g_assert_cmpuint(eth_stat(&e, RSIM_STAT_RX_DEFERRED), ==, 2);
    g_assert_cmpuint(eth_stat(&e, RSIM_STAT_RX_ETH_FRAMES), ==, 0);
    unit_run_bhs();
    g_assert_cmpuint(eth_stat(&e, RSIM_STAT_RX_ETH_FRAMES), ==, 2);
    g_assert_cmphex(*(uint8_t *)unit_mem(e.d.s, e.buf[RSIM_ETHQ_RX] + 20, 1),
                    ==, 20);
    g_assert_cmphex(*(uint8_t *)unit_mem(e.d.s, e.buf[RSIM_ETHQ_RX] +
                                         BUF_SIZE + 20, 1), ==, 0xaa);

    e.d.s->busy++;
    for (unsigned i = 0; i < RDMA_SIM_RX_DEFER_MAX + 3; i++) {
        rdma_sim_port_receive(e.d.s, f, sizeof(f));
    }
    e.d.s->busy--;
    g_assert_cmpuint(eth_stat(&e, RSIM_STAT_RX_DEFERRED), ==,
                     2 + RDMA_SIM_RX_DEFER_MAX);
    g_assert_cmpuint(eth_stat(&e, RSIM_STAT_RX_DROP_BUSY), ==, 3);
    unit_run_bhs();
    g_assert_cmpuint(eth_stat(&e, RSIM_STAT_RX_ETH_NO_BUF), ==,
                     RDMA_SIM_RX_DEFER_MAX);
    udrv_stop(&e.d);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/port/tx", test_tx);
    g_test_add_func("/port/rx-filter", test_rx_filter);
    g_test_add_func("/port/busy-defer", test_busy_defer);
    return g_test_run();
}
