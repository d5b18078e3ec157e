/*
 * QTest testcase for the rdma-sim RDMA NIC: frames on its port.  Raw
 * Ethernet through the Ethernet rings and a stream socket netdev.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <sys/socket.h>
#include "libqos/rdma-sim.h"

static void sock_send_frame(QSimDev *d, const uint8_t *frame, size_t len)
{
    uint32_t be = cpu_to_be32(len);

    g_assert_cmpint(send(d->sock, &be, 4, 0), ==, 4);
    g_assert_cmpint(send(d->sock, frame, len, 0), ==, len);
}

static size_t sock_recv_frame(QSimDev *d, uint8_t *frame, size_t max)
{
    uint32_t be;
    size_t len, got = 0;

    g_assert_cmpint(recv(d->sock, &be, 4, MSG_WAITALL), ==, 4);
    len = be32_to_cpu(be);
    g_assert_cmpuint(len, <=, max);
    while (got < len) {
        ssize_t r = recv(d->sock, frame + got, len - got, 0);

        g_assert_cmpint(r, >, 0);
        got += r;
    }
    return len;
}

static bool sock_quiet(QSimDev *d)
{
    uint8_t b;

    qsim_settle(d);
    return recv(d->sock, &b, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN;
}

static void make_frame(uint8_t *f, size_t len, const uint8_t *dst,
                       uint8_t seed)
{
    static const uint8_t src[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };

    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    f[12] = 0x88;                       /* local experimental ethertype */
    f[13] = 0xb5;
    for (size_t i = 14; i < len; i++) {
        f[i] = seed + i;
    }
}

static void eth_desc_write(QSimDev *d, uint64_t ring, uint32_t i, uint64_t addr,
                           uint16_t len)
{
    struct rsim_eth_desc e = {
        .addr = cpu_to_le64(addr),
        .len = cpu_to_le16(len),
    };

    qtest_memwrite(d->qts, ring + i * RSIM_ETH_DESC_SIZE, &e, sizeof(e));
}

static void eth_desc_wait(QSimDev *d, uint64_t ring, uint32_t i,
                          struct rsim_eth_desc *e)
{
    int64_t deadline = g_get_monotonic_time() + QSIM_POLL_US;

    do {
        qtest_memread(d->qts, ring + i * RSIM_ETH_DESC_SIZE, e, sizeof(*e));
        if (le16_to_cpu(e->flags) & RSIM_ETH_DESC_DONE) {
            return;
        }
    } while (g_get_monotonic_time() < deadline);
    g_assert_not_reached();
}

static void test_eth_datapath(const char *machine)
{
    static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    static const uint8_t mcast[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };
    static const uint8_t own[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
    static const uint8_t other[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x57 };
    QSimDev *d = qsim_start_stream(machine);
    struct rsim_cmd_create_ethq c;
    struct rsim_eth_desc e;
    uint64_t tx = qsim_alloc(d, 8 * RSIM_ETH_DESC_SIZE);
    uint64_t rx = qsim_alloc(d, 8 * RSIM_ETH_DESC_SIZE);
    uint64_t tbuf = qsim_alloc(d, 2 * QSIM_PAGE);
    uint64_t rbuf[4];
    uint8_t f[1518], g[1518];
    size_t len;
    QSimEq eq;

    qsim_bringup(d);
    qsim_msix_setup(d);
    qsim_eq_create(d, &eq, 2, 8);
    qsim_ethq_cmd(&c, RSIM_ETHQ_TX, eq.eqn, tx, 8);
    qsim_cmd_expect(d, &c, RSIM_STS_OK);
    qsim_ethq_cmd(&c, RSIM_ETHQ_RX, eq.eqn, rx, 8);
    qsim_cmd_expect(d, &c, RSIM_STS_OK);
    qsim_eq_doorbell(d, &eq, true);

    /* TX: the frame leaves through the backend, DONE, an ETH event */
    make_frame(f, 60, bcast, 1);
    qtest_memwrite(d->qts, tbuf, f, 60);
    eth_desc_write(d, tx, 0, tbuf, 60);
    qsim_wr(d, A_RSIM_ETH_TX_DB, 1 | R_RSIM_ETH_TX_DB_ARM_MASK);
    eth_desc_wait(d, tx, 0, &e);
    g_assert_cmphex(le16_to_cpu(e.flags), ==, RSIM_ETH_DESC_DONE);
    len = sock_recv_frame(d, g, sizeof(g));
    g_assert_cmpmem(g, len, f, 60);
    qsim_eq_expect(d, &eq, RSIM_EV_ETH, RSIM_ETHQ_TX);
    g_assert_true(qsim_irq_fired(d, 2));

    /* bad lengths and addresses: DONE | ERR, nothing sent, no event */
    eth_desc_write(d, tx, 1, tbuf, 13);
    eth_desc_write(d, tx, 2, tbuf, 1519);       /* MTU 1500 + 18 */
    eth_desc_write(d, tx, 3, QSIM_UNMAPPED, 60);
    eth_desc_write(d, tx, 4, tbuf, 0);
    qsim_wr(d, A_RSIM_ETH_TX_DB, 5);
    for (uint32_t i = 1; i < 5; i++) {
        eth_desc_wait(d, tx, i, &e);
        g_assert_cmphex(le16_to_cpu(e.flags), ==,
                        RSIM_ETH_DESC_DONE | RSIM_ETH_DESC_ERR);
    }
    g_assert_true(sock_quiet(d));
    qsim_eq_expect_none(d, &eq);
    /* the largest frame, wrapping the ring */
    make_frame(f, 1518, own, 7);
    qtest_memwrite(d->qts, tbuf + 100, f, 1518);
    for (uint32_t i = 5; i < 10; i++) {
        eth_desc_write(d, tx, i % 8, tbuf + 100, 1518);
    }
    qsim_wr(d, A_RSIM_ETH_TX_DB, 2);
    for (uint32_t i = 5; i < 10; i++) {
        eth_desc_wait(d, tx, i % 8, &e);
        g_assert_cmphex(le16_to_cpu(e.flags), ==, RSIM_ETH_DESC_DONE);
        len = sock_recv_frame(d, g, sizeof(g));
        g_assert_cmpmem(g, len, f, 1518);
    }
    /* producer index beyond the ring: ignored */
    qsim_wr(d, A_RSIM_ETH_TX_DB, 8);
    g_assert_true(sock_quiet(d));
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_TX_ETH_FRAMES), ==, 6);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_TX_FRAMES), ==, 6);

    /* RX: two buffers posted */
    for (unsigned i = 0; i < 4; i++) {
        rbuf[i] = qsim_alloc(d, RSIM_ETH_MIN_RX_BUF);
    }
    eth_desc_write(d, rx, 0, rbuf[0], RSIM_ETH_MIN_RX_BUF);
    eth_desc_write(d, rx, 1, rbuf[1], RSIM_ETH_MIN_RX_BUF);
    qsim_eq_doorbell(d, &eq, true);
    qsim_wr(d, A_RSIM_ETH_RX_DB, 2 | R_RSIM_ETH_RX_DB_ARM_MASK);

    make_frame(f, 64, bcast, 3);
    sock_send_frame(d, f, 64);
    eth_desc_wait(d, rx, 0, &e);
    g_assert_cmphex(le16_to_cpu(e.flags), ==, RSIM_ETH_DESC_DONE);
    g_assert_cmpuint(le16_to_cpu(e.len), ==, 64);
    qtest_memread(d->qts, rbuf[0], g, 64);
    g_assert_cmpmem(g, 64, f, 64);
    qsim_eq_expect(d, &eq, RSIM_EV_ETH, RSIM_ETHQ_RX);
    g_assert_true(qsim_irq_fired(d, 2));

    /* not for us: dropped by the filter */
    make_frame(f, 80, other, 4);
    sock_send_frame(d, f, 80);
    /* for our MAC */
    make_frame(f, 100, own, 5);
    sock_send_frame(d, f, 100);
    eth_desc_wait(d, rx, 1, &e);
    g_assert_cmpuint(le16_to_cpu(e.len), ==, 100);
    qtest_memread(d->qts, rbuf[1], g, 100);
    g_assert_cmpmem(g, 100, f, 100);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_DROP_FILTER), ==, 1);
    /* RX ring disarmed: no event */
    qsim_eq_expect_none(d, &eq);

    /* no buffer: dropped and counted */
    make_frame(f, 60, mcast, 6);
    sock_send_frame(d, f, 60);
    qsim_settle(d);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_ETH_NO_BUF), ==, 1);
    /* multicast is accepted; a buffer too small gives DONE | ERR */
    eth_desc_write(d, rx, 2, rbuf[2], 32);
    eth_desc_write(d, rx, 3, rbuf[3], RSIM_ETH_MIN_RX_BUF);
    qsim_wr(d, A_RSIM_ETH_RX_DB, 4);
    sock_send_frame(d, f, 60);
    eth_desc_wait(d, rx, 2, &e);
    g_assert_cmphex(le16_to_cpu(e.flags), ==,
                    RSIM_ETH_DESC_DONE | RSIM_ETH_DESC_ERR);
    sock_send_frame(d, f, 60);
    eth_desc_wait(d, rx, 3, &e);
    g_assert_cmphex(le16_to_cpu(e.flags), ==, RSIM_ETH_DESC_DONE);
    g_assert_cmpuint(le16_to_cpu(e.len), ==, 60);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_ETH_FRAMES), ==, 3);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_FRAMES), ==, 6);

    /* buffers in the device's own registers: refused, no side effect */
    eth_desc_write(d, tx, 2, d->bar0.addr, 60);
    qsim_wr(d, A_RSIM_ETH_TX_DB, 3);
    eth_desc_wait(d, tx, 2, &e);
    g_assert_cmphex(le16_to_cpu(e.flags), ==,
                    RSIM_ETH_DESC_DONE | RSIM_ETH_DESC_ERR);
    eth_desc_write(d, rx, 4, d->bar0.addr, RSIM_ETH_MIN_RX_BUF);
    qsim_wr(d, A_RSIM_ETH_RX_DB, 5);
    make_frame(f, 64, bcast, 0);
    memset(f + 14, 0x02, 50);               /* DEV_CTRL.RESET if written */
    sock_send_frame(d, f, 64);
    eth_desc_wait(d, rx, 4, &e);
    g_assert_cmphex(le16_to_cpu(e.flags), ==,
                    RSIM_ETH_DESC_DONE | RSIM_ETH_DESC_ERR);
    g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_STATUS), ==, QSIM_READY);
    g_assert_cmphex(qsim_rd(d, A_RSIM_INTR_MASK), ==, 3);
    qsim_assert_alive(d);
    qsim_stop(d);
}

/* Wait until a statistics counter reaches a value */
static void stat_wait(QSimDev *d, unsigned index, uint64_t val)
{
    int64_t deadline = g_get_monotonic_time() + QSIM_POLL_US;

    while (qsim_stat(d, index) < val && g_get_monotonic_time() < deadline) {
        qsim_settle(d);
    }
    g_assert_cmpuint(qsim_stat(d, index), ==, val);
}

/*
 * Frames that arrive while the device is not enabled are dropped, not
 * kept for later; an enabled device receives with or without an RX ring.
 */
static void test_eth_disabled(const char *machine)
{
    static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    QSimDev *d = qsim_start_stream(machine);
    struct rsim_cmd_create_ethq c;
    struct rsim_eth_desc e;
    uint64_t rx = qsim_alloc(d, 4 * RSIM_ETH_DESC_SIZE);
    uint64_t buf = qsim_alloc(d, 2 * RSIM_ETH_MIN_RX_BUF);
    uint8_t f[64], g[64];
    QSimEq eq;

    qsim_reset(d);
    make_frame(f, 64, bcast, 1);
    sock_send_frame(d, f, 64);
    qsim_settle(d);
    qsim_enable(d, 8, 8, 8);
    qsim_aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    make_frame(f, 64, bcast, 2);
    sock_send_frame(d, f, 64);
    stat_wait(d, RSIM_STAT_RX_FRAMES, 1);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_ETH_NO_BUF), ==, 1);

    qsim_eq_create(d, &eq, 1, 8);
    qsim_ethq_cmd(&c, RSIM_ETHQ_RX, eq.eqn, rx, 4);
    qsim_cmd_expect(d, &c, RSIM_STS_OK);
    eth_desc_write(d, rx, 0, buf, RSIM_ETH_MIN_RX_BUF);
    eth_desc_write(d, rx, 1, buf + RSIM_ETH_MIN_RX_BUF, RSIM_ETH_MIN_RX_BUF);
    qsim_wr(d, A_RSIM_ETH_RX_DB, 2);
    qsim_settle(d);
    g_assert_cmphex(qtest_readw(d->qts, rx + 10), ==, 0);   /* flags */
    make_frame(f, 64, bcast, 3);
    sock_send_frame(d, f, 64);
    eth_desc_wait(d, rx, 0, &e);
    qtest_memread(d->qts, buf, g, 64);
    g_assert_cmpmem(g, 64, f, 64);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_FRAMES), ==, 2);

    /* the same after a reset: nothing queued across it */
    qsim_reset(d);
    make_frame(f, 64, bcast, 4);
    sock_send_frame(d, f, 64);
    qsim_settle(d);
    qsim_enable(d, 8, 8, 8);
    qsim_aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    qsim_eq_create(d, &eq, 1, 8);
    qtest_memset(d->qts, rx, 0, 4 * RSIM_ETH_DESC_SIZE);
    qsim_ethq_cmd(&c, RSIM_ETHQ_RX, eq.eqn, rx, 4);
    qsim_cmd_expect(d, &c, RSIM_STS_OK);
    eth_desc_write(d, rx, 0, buf, RSIM_ETH_MIN_RX_BUF);
    qsim_wr(d, A_RSIM_ETH_RX_DB, 1);
    qsim_settle(d);
    g_assert_cmphex(qtest_readw(d->qts, rx + 10), ==, 0);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_FRAMES), ==, 0);
    make_frame(f, 64, bcast, 5);
    sock_send_frame(d, f, 64);
    eth_desc_wait(d, rx, 0, &e);
    qtest_memread(d->qts, buf, g, 64);
    g_assert_cmpmem(g, 64, f, 64);
    qsim_assert_alive(d);
    qsim_stop(d);
}

static const QSimTest tests[] = {
    { "eth/datapath", test_eth_datapath },
    { "eth/disabled", test_eth_disabled },
};

int main(int argc, char **argv)
{
    return qsim_main(argc, argv, tests, ARRAY_SIZE(tests));
}
