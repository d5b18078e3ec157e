/*
 * QTest testcase for the rdma-sim RDMA NIC: frames on its port.  Raw
 * Ethernet through the Ethernet rings and a stream socket netdev; RoCEv2
 * on a UDP wire whose other end the test plays: frames Soft-RoCE sent,
 * the device's own frames field by field, bursts, NAKs, a READ's share of
 * a QP's turn, READ responses paced by the port's budget, garbage.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <sys/socket.h>
#include <netinet/in.h>
#include "libqos/rdma-sim.h"

/* ---- Ethernet through the Ethernet rings and a stream socket netdev ---- */

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
    /* our own broadcast, handed back by a shared medium: dropped too */
    make_frame(f, 70, bcast, 7);
    memcpy(f + 6, own, 6);
    sock_send_frame(d, f, 70);
    /* for our MAC */
    make_frame(f, 100, own, 5);
    sock_send_frame(d, f, 100);
    eth_desc_wait(d, rx, 1, &e);
    g_assert_cmpuint(le16_to_cpu(e.len), ==, 100);
    qtest_memread(d->qts, rbuf[1], g, 100);
    g_assert_cmpmem(g, 100, f, 100);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_DROP_FILTER), ==, 1);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_DROP_OWN), ==, 1);
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
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_FRAMES), ==, 7);

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

/* ---- RoCEv2 frames from and to a UDP socket of the test ---- */

/*
 * Two frames Linux Soft-RoCE (rdma_rxe, Debian 6.1) sent during an
 * ibv_rc_pingpong between guests 10.0.0.1 (52:54:00:5e:00:01) and 10.0.0.2
 * (52:54:00:5e:00:02), captured with QEMU's filter-dump: an ACK for
 * 10.0.0.2 and a SEND_LAST for 10.0.0.1.
 */
static const uint8_t rxe_ack[62] = {
    0x52, 0x54, 0x00, 0x5e, 0x00, 0x02, 0x52, 0x54, 0x00, 0x5e, 0x00, 0x01,
    0x08, 0x00, 0x45, 0x00, 0x00, 0x30, 0x67, 0x73, 0x40, 0x00, 0x40, 0x11,
    0xbf, 0x47, 0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0xc1, 0x21,
    0x12, 0xb7, 0x00, 0x1c, 0x00, 0x00, 0x11, 0x00, 0xff, 0xff, 0x00, 0x00,
    0x00, 0x11, 0x00, 0x6f, 0x04, 0x00, 0x1f, 0x00, 0x00, 0x01, 0xef, 0x51,
    0xe4, 0x2a,
};

/* The SEND_LAST: its headers, 952 bytes of payload 0x7b, its ICRC */
#define RXE_SEND_LAST_LEN 1010

static void rxe_send_last(uint8_t *f)
{
    static const uint8_t hdr[54] = {
        0x52, 0x54, 0x00, 0x5e, 0x00, 0x01, 0x52, 0x54, 0x00, 0x5e, 0x00, 0x02,
        0x08, 0x00, 0x45, 0x00, 0x03, 0xe4, 0x75, 0xe6, 0x40, 0x00, 0x40, 0x11,
        0xad, 0x20, 0x0a, 0x00, 0x00, 0x02, 0x0a, 0x00, 0x00, 0x01, 0xc1, 0x21,
        0x12, 0xb7, 0x03, 0xd0, 0x00, 0x00, 0x02, 0x00, 0xff, 0xff, 0x00, 0x00,
        0x00, 0x11, 0x80, 0x6f, 0x04, 0x00,
    };
    static const uint8_t icrc[4] = { 0x1d, 0x9e, 0x49, 0xdf };

    memcpy(f, hdr, sizeof(hdr));
    memset(f + sizeof(hdr), 0x7b, RXE_SEND_LAST_LEN - sizeof(hdr) - 4);
    memcpy(f + RXE_SEND_LAST_LEN - 4, icrc, 4);
}

typedef struct Wire {
    int fd;                             /* the test's end of the link */
    struct sockaddr_in dev;             /* the device's end */
} Wire;

static uint16_t udp_bind_any(int fd)
{
    struct sockaddr_in a = { .sin_family = AF_INET };
    socklen_t alen = sizeof(a);

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    g_assert_cmpint(bind(fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
    g_assert_cmpint(getsockname(fd, (struct sockaddr *)&a, &alen), ==, 0);
    return ntohs(a.sin_port);
}

/*
 * A device whose netdev is a UDP socket pair with the test: -netdev
 * socket,udp= or, with dgram, -netdev dgram.  The device plays 10.0.0.2
 * at 52:54:00:5e:00:02 (GID 0), the guest the captured frames are for;
 * props: more of its properties, or NULL.
 */
static QSimDev *wire_start_props(const char *machine, Wire *w, bool dgram,
                                 const char *props)
{
    g_autofree char *mac = g_strdup_printf("mac=52:54:00:5e:00:02%s%s",
                                           props ? "," : "", props ?: "");
    int probe = socket(AF_INET, SOCK_DGRAM, 0);
    g_autofree char *netdev = NULL;
    uint16_t dev_port, my_port;
    QSimDev *d;

    w->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    g_assert_cmpint(w->fd, >=, 0);
    my_port = udp_bind_any(w->fd);
    dev_port = udp_bind_any(probe);     /* a free port for the device */
    close(probe);
    memset(&w->dev, 0, sizeof(w->dev));
    w->dev.sin_family = AF_INET;
    w->dev.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    w->dev.sin_port = htons(dev_port);
    if (dgram) {
        netdev = g_strdup_printf("dgram,id=n0,remote.type=inet,"
                                 "remote.host=127.0.0.1,remote.port=%u,"
                                 "local.type=inet,local.host=127.0.0.1,"
                                 "local.port=%u", my_port, dev_port);
    } else {
        netdev = g_strdup_printf("socket,id=n0,udp=127.0.0.1:%u,"
                                 "localaddr=127.0.0.1:%u", my_port, dev_port);
    }
    d = qsim_start(machine, mac, netdev);
    qsim_bringup(d);
    qsim_gid_add_v4(d, 0, 2);
    return d;
}

static QSimDev *wire_start(const char *machine, Wire *w, bool dgram)
{
    return wire_start_props(machine, w, dgram, NULL);
}

static void wire_stop(QSimDev *d, Wire *w)
{
    close(w->fd);
    qsim_stop(d);
}

static void wire_send(Wire *w, const uint8_t *f, size_t len)
{
    g_assert_cmpint(sendto(w->fd, f, len, 0, (struct sockaddr *)&w->dev,
                           sizeof(w->dev)), ==, len);
}

/* Receive the next frame the device sends; the clock moves meanwhile. */
static ssize_t wire_recv(QSimDev *d, Wire *w, uint8_t *buf, size_t size)
{
    int64_t deadline = g_get_monotonic_time() + QSIM_POLL_US;
    ssize_t n;

    while ((n = recv(w->fd, buf, size, 0)) <= 0) {
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        qtest_clock_step(d->qts, 100 * 1000);
        g_usleep(1000);
    }
    return n;
}

/* Receive the next frame the device sends, without moving the clock */
static ssize_t wire_recv_now(Wire *w, uint8_t *buf, size_t size)
{
    GPollFD p = { .fd = w->fd, .events = G_IO_IN };

    g_assert_cmpint(g_poll(&p, 1, QSIM_POLL_US / 1000), ==, 1);
    return recv(w->fd, buf, size, 0);
}

/* The device accepts Soft-RoCE's frames: headers and ICRC check out. */
static void test_wire_rxe_frames(const char *machine)
{
    static const uint8_t mac1[6] = { 0x52, 0x54, 0, 0x5e, 0, 1 };
    struct rsim_cmd_set_port sp;
    uint8_t bad[sizeof(rxe_ack)], send_last[RXE_SEND_LAST_LEN];
    Wire w;
    QSimDev *d = wire_start(machine, &w, false);

    wire_send(&w, rxe_ack, sizeof(rxe_ack));
    stat_wait(d, RSIM_STAT_RX_FRAMES, 1);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_ROCE_PKTS), ==, 1);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_ICRC_ERR), ==, 0);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_DROP_NO_QP), ==, 1);

    /* one flipped payload bit: the ICRC catches it */
    memcpy(bad, rxe_ack, sizeof(bad));
    bad[sizeof(bad) - 8] ^= 0x10;
    wire_send(&w, bad, sizeof(bad));
    stat_wait(d, RSIM_STAT_RX_FRAMES, 2);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_ICRC_ERR), ==, 1);

    /* the other direction's frame, once the port has that address */
    QSIM_CMD_INIT(sp, RSIM_CMD_SET_PORT);
    sp.mask = cpu_to_le32(RSIM_SET_PORT_MAC);
    memcpy(sp.mac, mac1, 6);
    qsim_cmd_expect(d, &sp, RSIM_STS_OK);
    qsim_gid_add_v4(d, 1, 1);
    rxe_send_last(send_last);
    wire_send(&w, send_last, sizeof(send_last));
    stat_wait(d, RSIM_STAT_RX_FRAMES, 3);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_ROCE_PKTS), ==, 2);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_ICRC_ERR), ==, 1);
    wire_stop(d, &w);
}

/*
 * A burst of frames larger than the socket netdev reads per wakeup
 * (NET_DGRAM_BURST, patches/qemu/0001): every one arrives, once.
 */
static void test_wire_burst(const char *machine)
{
    const unsigned frames = 200;
    Wire w;
    QSimDev *d = wire_start(machine, &w, false);

    for (unsigned i = 0; i < frames; i++) {
        wire_send(&w, rxe_ack, sizeof(rxe_ack));
    }
    stat_wait(d, RSIM_STAT_RX_FRAMES, frames);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_ROCE_PKTS), ==, frames);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_DROP_NO_QP), ==, frames);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_ICRC_ERR), ==, 0);
    /* nothing more trickles in */
    g_usleep(50 * 1000);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_FRAMES), ==, frames);
    wire_stop(d, &w);
}

/*
 * A device (with props, or NULL) on a UDP wire with an RC QP in RTS,
 * connected to QPN 0x11 at 10.0.0.1 (played by the test), first PSN
 * 0x123456; a buffer of len bytes with an MR.
 */
static QSimDev *wire_rc_connect_retry(const char *machine, Wire *w,
                                      bool dgram, QSimEndpoint *ep,
                                      QSimMr *mr, uint64_t len,
                                      uint8_t timeout, uint8_t retry_cnt,
                                      const char *props)
{
    static const uint8_t peer_mac[6] = { 0x52, 0x54, 0, 0x5e, 0, 1 };
    QSimDev *d = wire_start_props(machine, w, dgram, props);
    QSimPath path = {
        .type = RSIM_QPT_RC,
        .access = QSIM_ACC_ALL,
        .av.hop_limit = 64,
        .av.traffic_class = 0x10,
        .av.network_type = RSIM_NET_IPV4,
        .path_mtu = RSIM_MTU_1024,
        .dest_qpn = 0x11,
        .sq_psn = 0x123456,
        .timeout = timeout,
        .retry_cnt = retry_cnt,
        .rd_atomic = 4,
    };
    uint32_t pdn = qsim_pd_alloc(d);
    QSimEq eq;

    qsim_eq_create(d, &eq, 1, 64);
    qsim_endpoint_create(d, ep, RSIM_QPT_RC, pdn, eq.eqn);
    qsim_gid_v4(path.av.dgid, 10, 0, 0, 1);
    memcpy(path.av.dmac, peer_mac, 6);
    qsim_qp_connect(d, ep->qp.qpn, &path);
    *mr = qsim_mr_alloc(d, pdn, len, QSIM_ACC_ALL);
    return d;
}

/* ... with a local ACK timeout of 20 (4.3 s) and retry_cnt 7 (for ever) */
static QSimDev *wire_rc_connect(const char *machine, Wire *w, bool dgram,
                                QSimEndpoint *ep, QSimMr *mr, uint64_t len)
{
    return wire_rc_connect_retry(machine, w, dgram, ep, mr, len, 20, 7, NULL);
}

/*
 * AETH syndromes: ACK (credits invalid), NAKs for a PSN sequence error and
 * an invalid request, an RNR NAK asking for a wait of 10 us
 */
#define AETH_SYN_ACK            0x1f
#define AETH_SYN_NAK_PSN_SEQ    0x60
#define AETH_SYN_NAK_INVALID_REQ 0x61
#define AETH_SYN_RNR_NAK_10US   0x21

/* Send the peer's acknowledgement (AETH syndrome syn) of psn to the QP. */
static void wire_send_aeth(Wire *w, uint32_t qpn, uint8_t syn, uint32_t psn)
{
    uint8_t ack[sizeof(rxe_ack)];

    /* built as Soft-RoCE builds it */
    memcpy(ack, rxe_ack, sizeof(ack));
    stl_be_p(ack + 46, qpn);
    stl_be_p(ack + 50, psn);
    ack[54] = syn;
    stl_le_p(ack + 58, qsim_icrc(ack, sizeof(ack)));
    wire_send(w, ack, sizeof(ack));
}

/*
 * The device's frames on the wire: a SEND to a remote peer played by the
 * test, checked field by field and with an independent ICRC, then
 * acknowledged by a frame the test builds; the send completes.
 */
static void test_wire_device_frames(const char *machine)
{
    static const uint8_t peer_mac[6] = { 0x52, 0x54, 0, 0x5e, 0, 1 };
    uint8_t f[2048];
    uint32_t psn, sum = 0;
    ssize_t n;
    QSimEndpoint ep;
    QSimMr mr;
    Wire w;
    QSimWr wr = { .wr_id = 0x99, .opcode = RSIM_WR_SEND, .nsge = 1 };
    QSimDev *d = wire_rc_connect(machine, &w, false, &ep, &mr, 4096);

    qsim_fill_pattern(d, mr.addr, 333, 5);
    wr.sge[0] = qsim_sge(&mr, 0, 333);
    qsim_send(d, &ep.qp, &wr);

    n = wire_recv(d, &w, f, sizeof(f));
    /* Ethernet, IPv4 (with a valid header checksum), UDP 4791 */
    g_assert_cmpint(n, ==, 14 + 20 + 8 + 12 + 336 + 4);
    g_assert(!memcmp(f, peer_mac, 6));
    g_assert_cmphex(f[6], ==, 0x52);
    g_assert_cmphex(f[11], ==, 0x02);
    g_assert_cmphex(lduw_be_p(f + 12), ==, 0x0800);
    g_assert_cmphex(f[14], ==, 0x45);
    g_assert_cmphex(f[15], ==, 0x10);                   /* traffic class */
    g_assert_cmpuint(lduw_be_p(f + 16), ==, n - 14);
    g_assert_cmphex(lduw_be_p(f + 20), ==, 0x4000);     /* DF */
    g_assert_cmpuint(f[22], ==, 64);
    g_assert_cmpuint(f[23], ==, 17);
    for (int i = 14; i < 34; i += 2) {
        sum += lduw_be_p(f + i);
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    g_assert_cmphex(sum, ==, 0xffff);
    g_assert_cmphex(ldl_be_p(f + 26), ==, 0x0a000002);
    g_assert_cmphex(ldl_be_p(f + 30), ==, 0x0a000001);
    g_assert_cmphex(lduw_be_p(f + 34) & 0xc000, ==, 0xc000);
    g_assert_cmpuint(lduw_be_p(f + 36), ==, 4791);
    g_assert_cmpuint(lduw_be_p(f + 38), ==, n - 34);
    g_assert_cmphex(lduw_be_p(f + 40), ==, 0);
    /* BTH: SEND_ONLY, pad 3, P_Key 0xffff, dest QP, AckReq, PSN */
    g_assert_cmphex(f[42], ==, 0x04);
    g_assert_cmphex(f[43], ==, 0x30);
    g_assert_cmphex(lduw_be_p(f + 44), ==, 0xffff);
    g_assert_cmphex(ldl_be_p(f + 46), ==, 0x11);
    g_assert_cmphex((uint32_t)ldl_be_p(f + 50), ==, 0x80123456);
    g_assert_cmphex((uint32_t)ldl_le_p(f + n - 4), ==, qsim_icrc(f, n));
    qsim_check_pattern(d, mr.addr, 333, 5);
    for (int i = 0; i < 333; i++) {
        g_assert_cmpuint(f[54 + i], ==, qsim_pattern_byte(5, i));
    }

    /* the peer's ACK */
    psn = ldl_be_p(f + 50) & 0xffffff;
    wire_send_aeth(&w, ep.qp.qpn, AETH_SYN_ACK, psn);
    qsim_cq_expect(d, &ep.scq, 0x99, RSIM_WC_SUCCESS, RSIM_WC_SEND, 333,
                   ep.qp.qpn);
    wire_stop(d, &w);
}

/*
 * The frames of a burst leave the datagram netdevs batched
 * (patches/qemu/0002): each still arrives as a datagram of its own, in
 * order, whole.  A 20580-byte SEND is 20 full packets and a short one; the
 * 64-byte SEND behind it has a size of its own and starts a new batch.
 */
static void wire_tx_burst(const char *machine, bool dgram)
{
    const uint32_t big = 20 * 1024 + 100, small = 64;
    const unsigned packets = 21 + 1;
    g_autofree uint8_t *f = g_malloc(65536);
    uint32_t psn = 0x123456, off = 0;
    QSimEndpoint ep;
    QSimMr mr;
    Wire w;
    QSimWr wr = { .wr_id = 1, .opcode = RSIM_WR_SEND, .nsge = 1 };
    QSimDev *d = wire_rc_connect(machine, &w, dgram, &ep, &mr, 32768);

    qsim_fill_pattern(d, mr.addr, big + small, 9);
    wr.sge[0] = qsim_sge(&mr, 0, big);
    qsim_send(d, &ep.qp, &wr);
    wr.wr_id = 2;
    wr.sge[0] = qsim_sge(&mr, big, small);
    qsim_send(d, &ep.qp, &wr);

    for (unsigned i = 0; i < packets; i++) {
        /* a datagram holding two frames would show here as a wrong size */
        ssize_t n = wire_recv(d, &w, f, 65536);
        uint32_t payload = i < 20 ? 1024 : i == 20 ? 100 : small;
        uint8_t opcode = i == 0 ? 0x00 : i < 20 ? 0x01 : i == 20 ? 0x02 : 0x04;

        g_assert_cmpint(n, ==, 14 + 20 + 8 + 12 + payload + 4);
        g_assert_cmphex(f[42], ==, opcode);
        g_assert_cmphex(ldl_be_p(f + 50) & 0xffffff, ==, psn + i);
        g_assert_cmphex((uint32_t)ldl_le_p(f + n - 4), ==, qsim_icrc(f, n));
        for (uint32_t j = 0; j < payload; j++, off++) {
            g_assert_cmpuint(f[54 + j], ==, qsim_pattern_byte(9, off));
        }
    }
    wire_send_aeth(&w, ep.qp.qpn, AETH_SYN_ACK, psn + packets - 1);
    qsim_cq_expect(d, &ep.scq, 1, RSIM_WC_SUCCESS, RSIM_WC_SEND, big,
                   ep.qp.qpn);
    qsim_cq_expect(d, &ep.scq, 2, RSIM_WC_SUCCESS, RSIM_WC_SEND, small,
                   ep.qp.qpn);
    /* nothing more: the batch sent each frame once */
    g_usleep(50 * 1000);
    g_assert_cmpint(recv(w.fd, f, 65536, 0), ==, -1);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_TX_FRAMES), ==, packets);
    wire_stop(d, &w);
}

static void test_wire_tx_burst(const char *machine)
{
    wire_tx_burst(machine, false);
}

static void test_wire_tx_burst_dgram(const char *machine)
{
    wire_tx_burst(machine, true);
}

/*
 * An SQ doorbell sends the QP's next packet before the doorbell write
 * completes (tx_at_doorbell counts it by then), and only that one: the
 * rest of a longer message follows from the device's own turn.
 */
static void test_wire_doorbell_at_once(const char *machine)
{
    static const struct {
        uint32_t len;
        uint8_t opcode;                 /* of the first packet */
        unsigned packets;
    } msgs[] = {
        { 64, 0x04, 1 },                /* SEND_ONLY */
        { 4096, 0x00, 4 },              /* SEND_FIRST, MIDDLE x2, LAST */
    };
    uint32_t psn = 0x123456, frames = 0;
    uint8_t f[2048];
    QSimEndpoint ep;
    QSimMr mr;
    Wire w;
    QSimDev *d = wire_rc_connect(machine, &w, false, &ep, &mr, 8192);

    for (unsigned m = 0; m < ARRAY_SIZE(msgs); m++) {
        QSimWr wr = { .wr_id = m, .opcode = RSIM_WR_SEND, .nsge = 1 };
        ssize_t n;

        wr.sge[0] = qsim_sge(&mr, 0, msgs[m].len);
        qsim_send(d, &ep.qp, &wr);
        /* counted during the doorbell's write: the first packet only */
        g_assert_cmpuint(qsim_stat(d, RSIM_STAT_TX_AT_DOORBELL), ==, m + 1);
        /*
         * No clock step anywhere: a step would let the requester's probe
         * timer send a packet again.
         */
        n = wire_recv_now(&w, f, sizeof(f));
        g_assert_cmpint(n, ==, 14 + 20 + 8 + 12 + MIN(msgs[m].len, 1024) + 4);
        g_assert_cmphex(f[42], ==, msgs[m].opcode);
        g_assert_cmphex(ldl_be_p(f + 50) & 0xffffff, ==, psn);
        for (unsigned i = 1; i < msgs[m].packets; i++) {
            n = wire_recv_now(&w, f, sizeof(f));
            g_assert_cmphex(ldl_be_p(f + 50) & 0xffffff, ==, psn + i);
        }
        psn += msgs[m].packets;
        frames += msgs[m].packets;
        wire_send_aeth(&w, ep.qp.qpn, AETH_SYN_ACK, psn - 1);
        qsim_cq_expect(d, &ep.scq, m, RSIM_WC_SUCCESS, RSIM_WC_SEND,
                       msgs[m].len, ep.qp.qpn);
    }
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_TX_AT_DOORBELL), ==, 2);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_TX_FRAMES), ==, frames);
    wire_stop(d, &w);
}

/*
 * A NAK and, right behind it, an ACK of the packets it asked for again:
 * the peer had them after all (they came out of order).  Whether the
 * requester sent them again in between or not, every SEND completes; it
 * must not wait for packets to be sent again that are acknowledged.  The
 * two frames reach the device in one read only sometimes, hence rounds.
 */
static void test_wire_nak_then_ack(const char *machine)
{
    const unsigned rounds = 20, sends = 4;
    uint32_t next = 0x123456;       /* PSN of the next new packet */
    uint8_t f[2048];
    QSimEndpoint ep;
    QSimMr mr;
    Wire w;
    QSimDev *d = wire_rc_connect(machine, &w, false, &ep, &mr, 4096);

    qsim_fill_pattern(d, mr.addr, 64, 3);
    for (unsigned round = 0; round < rounds; round++) {
        for (unsigned i = 0; i < sends; i++) {
            QSimWr wr = { .wr_id = round * sends + i,
                          .opcode = RSIM_WR_SEND, .nsge = 1 };

            wr.sge[0] = qsim_sge(&mr, 0, 64);
            qsim_send(d, &ep.qp, &wr);
        }
        /* the new packets, in order; those sent again are older */
        for (unsigned got = 0; got < sends;) {
            ssize_t n = wire_recv(d, &w, f, sizeof(f));
            uint32_t psn = ldl_be_p(f + 50) & 0xffffff;

            g_assert_cmpint(n, ==, 14 + 20 + 8 + 12 + 64 + 4);
            if (psn == next) {
                next++;
                got++;
            } else {
                g_assert_cmphex(psn, <, next);
            }
        }
        /* PSN sequence error at the second packet, then all acknowledged */
        wire_send_aeth(&w, ep.qp.qpn, AETH_SYN_NAK_PSN_SEQ, next - sends + 1);
        wire_send_aeth(&w, ep.qp.qpn, AETH_SYN_ACK, next - 1);
        for (unsigned i = 0; i < sends; i++) {
            qsim_cq_expect(d, &ep.scq, round * sends + i, RSIM_WC_SUCCESS,
                           RSIM_WC_SEND, 64, ep.qp.qpn);
        }
    }
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_SEQ_NAK_RCVD), ==, rounds);
    wire_stop(d, &w);
}

/*
 * The peer's responder was put back by a snapshot to before two SENDs it
 * had acknowledged: it NAKs the next SEND with the PSN it expects, one the
 * requester has retired.  The requester must not take that NAK (its PSN
 * is outside what it can be answered for), nor send the retired packets
 * again: it sends the new one until retry_cnt runs out, then fails it
 * with RETRY_EXC_ERR and the QP goes to ERR (datasheet, "Migration and
 * snapshots").
 */
static void test_wire_peer_restored(const char *machine)
{
    const uint32_t first = 0x123456, retry_cnt = 2;
    unsigned sent = 1;          /* the third SEND's first transmission */
    int64_t deadline;
    uint8_t f[2048];
    QSimEndpoint ep;
    QSimMr mr;
    Wire w;
    QSimDev *d = wire_rc_connect_retry(machine, &w, false, &ep, &mr, 4096,
                                       14, retry_cnt, NULL);
    uint32_t acked;

    qsim_fill_pattern(d, mr.addr, 64, 4);
    for (unsigned i = 0; i < 3; i++) {
        QSimWr wr = { .wr_id = i, .opcode = RSIM_WR_SEND, .nsge = 1 };

        wr.sge[0] = qsim_sge(&mr, 0, 64);
        qsim_send(d, &ep.qp, &wr);
        wire_recv(d, &w, f, sizeof(f));
        g_assert_cmphex(ldl_be_p(f + 50) & 0xffffff, ==, first + i);
        if (i < 2) {
            wire_send_aeth(&w, ep.qp.qpn, AETH_SYN_ACK, first + i);
            qsim_cq_expect(d, &ep.scq, i, RSIM_WC_SUCCESS, RSIM_WC_SEND, 64,
                           ep.qp.qpn);
        }
    }
    acked = qsim_ring_prod(d, &ep.scq);
    wire_send_aeth(&w, ep.qp.qpn, AETH_SYN_NAK_PSN_SEQ, first);
    deadline = g_get_monotonic_time() + QSIM_POLL_US;
    /* every frame from now on: the third SEND, answered by the old NAK */
    do {
        ssize_t n = recv(w.fd, f, sizeof(f), 0);

        if (n < 0) {
            qtest_clock_step(d->qts, 10 * 1000 * 1000);
            g_usleep(1000);
        } else {
            g_assert_cmpint(n, ==, 14 + 20 + 8 + 12 + 64 + 4);
            g_assert_cmphex(ldl_be_p(f + 50) & 0xffffff, ==, first + 2);
            sent++;
            wire_send_aeth(&w, ep.qp.qpn, AETH_SYN_NAK_PSN_SEQ, first);
        }
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
    } while (qsim_ring_prod(d, &ep.scq) == acked);
    /* what went out in the clock step that failed it (loopback UDP: there) */
    for (ssize_t n; (n = recv(w.fd, f, sizeof(f), 0)) > 0; sent++) {
        g_assert_cmphex(ldl_be_p(f + 50) & 0xffffff, ==, first + 2);
    }
    qsim_cq_expect(d, &ep.scq, 2, RSIM_WC_RETRY_EXC_ERR, RSIM_WC_SEND, 0,
                   ep.qp.qpn);
    /* probes consume no retries; the last timeout finds none left */
    g_assert_cmpuint(sent, ==,
                     1 + qsim_stat(d, RSIM_STAT_LOSS_PROBES) + retry_cnt);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_TIMEOUTS), ==, retry_cnt + 1);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_SEQ_NAK_RCVD), ==, 0);
    g_assert_cmpuint(qsim_qp_state(d, ep.qp.qpn), ==, RSIM_QPS_ERR);
    wire_stop(d, &w);
}

/* Send the peer's READ request (AckReq) for len bytes at va to the QP. */
static void wire_send_read(Wire *w, uint32_t qpn, uint32_t psn, uint64_t va,
                           uint32_t rkey, uint32_t len)
{
    uint8_t rd[74];

    /* rxe_ack's headers as a READ request with a RETH */
    memcpy(rd, rxe_ack, 54);
    rd[42] = 0x0c;                              /* RC RDMA READ request */
    stl_be_p(rd + 46, qpn);
    stl_be_p(rd + 50, 0x80000000 | psn);        /* AckReq */
    stq_be_p(rd + 54, va);
    stl_be_p(rd + 62, rkey);
    stl_be_p(rd + 66, len);
    /* IP and UDP lengths, IP checksum, ICRC */
    g_assert_cmpuint(qsim_roce_finish(rd, sizeof(rd) - 4, 0), ==, sizeof(rd));
    wire_send(w, rd, sizeof(rd));
}

/* Send the peer's SEND_ONLY (AckReq) of 4 bytes with PSN psn to the QP. */
static void wire_send_send(Wire *w, uint32_t qpn, uint32_t psn)
{
    uint8_t f[62];

    /* rxe_ack's headers as a SEND with 4 bytes of payload (no pad) */
    memcpy(f, rxe_ack, 54);
    f[42] = 0x04;                               /* RC SEND_ONLY */
    stl_be_p(f + 46, qpn);
    stl_be_p(f + 50, 0x80000000 | psn);         /* AckReq */
    stl_be_p(f + 54, 0x5e4d0000 | psn);
    g_assert_cmpuint(qsim_roce_finish(f, sizeof(f) - 4, 0), ==, sizeof(f));
    wire_send(w, f, sizeof(f));
}

/* The next frame the device sends is an ACK; returns its PSN. */
static uint32_t wire_recv_ack(QSimDev *d, Wire *w)
{
    uint8_t f[2048];

    g_assert_cmpint(wire_recv(d, w, f, sizeof(f)), ==, 62);
    g_assert_cmphex(f[42], ==, 0x11);                   /* ACKNOWLEDGE */
    g_assert_cmphex(f[54] & 0x60, ==, 0);               /* an ACK, no NAK */
    return ldl_be_p(f + 50) & 0xffffff;
}

/*
 * A duplicate SEND is acknowledged again with its own PSN, not with the
 * newest one received: a requester that sends again from that PSN must
 * not see a later WQE completed before it has sent it again (Soft-RoCE's
 * requester stalls for good then: datasheet, tail-loss probes).
 */
static void test_wire_duplicate_ack(const char *machine)
{
    QSimEndpoint ep;
    QSimMr mr;
    Wire w;
    QSimDev *d = wire_rc_connect(machine, &w, false, &ep, &mr, 4096);

    for (unsigned i = 0; i < 3; i++) {
        struct rsim_sge sge = qsim_sge(&mr, i * 64, 64);

        qsim_post_recv(d, &ep.qp.rq, 0x40 + i, &sge);
    }
    wire_send_send(&w, ep.qp.qpn, 0);
    qsim_cq_expect(d, &ep.rcq, 0x40, RSIM_WC_SUCCESS, RSIM_WC_RECV, 4,
                   ep.qp.qpn);
    g_assert_cmpuint(wire_recv_ack(d, &w), ==, 0);
    wire_send_send(&w, ep.qp.qpn, 1);
    qsim_cq_expect(d, &ep.rcq, 0x41, RSIM_WC_SUCCESS, RSIM_WC_RECV, 4,
                   ep.qp.qpn);
    g_assert_cmpuint(wire_recv_ack(d, &w), ==, 1);

    /* PSN 0 again: acknowledged as 0, not 1, and not received twice */
    wire_send_send(&w, ep.qp.qpn, 0);
    g_assert_cmpuint(wire_recv_ack(d, &w), ==, 0);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_DUP_REQ), ==, 1);
    qsim_cq_expect_empty(d, &ep.rcq);
    for (unsigned i = 0; i < 2; i++) {
        uint8_t got[4];

        qtest_memread(d->qts, mr.addr + i * 64, got, 4);
        g_assert_cmphex(ldl_be_p(got), ==, 0x5e4d0000 | i);
    }
    wire_stop(d, &w);
}

/*
 * The next RoCE frame the device sends, the clock stepping 1 ms while there
 * is none; other frames are skipped.  Returns its length.
 */
static ssize_t wire_recv_roce(QSimDev *d, Wire *w, uint8_t *f, size_t size)
{
    for (unsigned ms = 0; ms < 1000; ms++) {
        ssize_t n = recv(w->fd, f, size, 0);

        if (n >= 0 && lduw_be_p(f + 12) == 0x0800) {
            return n;
        }
        if (n < 0) {
            g_assert_cmpint(errno, ==, EAGAIN);
            qtest_clock_step(d->qts, 1000 * 1000);
            qsim_settle(d);
        }
    }
    g_assert_not_reached();
}

/*
 * An ACK never overtakes READ responses, nor comes amid them for an older
 * PSN.  Soft-RoCE's completer takes an ACK beyond a READ whose responses
 * it has not all had for their loss (it asks again), and an older one,
 * arriving amid the responses, makes it forget it is inside a READ: the
 * next response fails its QP with a kernel warning.  So a SEND's ACK waits
 * for the responses to the READ before it (paced: 400 KiB are more than
 * the port's budget), and a duplicate of the SEND before the READ is not
 * acknowledged while the READ's responses are still being sent: they
 * acknowledge it.  Once they are, it is (a requester whose READ responses
 * were lost probes with it), as is a duplicate with no READ after it.
 */
static void test_wire_ack_after_read(const char *machine)
{
    const uint32_t pkts = 400, len = pkts * 1024;
    uint8_t f[2048];
    int rcvbuf = 1 << 20;
    QSimEndpoint ep;
    QSimMr mr;
    Wire w;
    QSimDev *d = wire_rc_connect(machine, &w, false, &ep, &mr, len + 128);

    g_assert_cmpint(setsockopt(w.fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
                               sizeof(rcvbuf)), ==, 0);
    qsim_fill_pattern(d, mr.addr, len, 5);
    for (unsigned i = 0; i < 2; i++) {
        struct rsim_sge sge = qsim_sge(&mr, len + i * 64, 64);

        qsim_post_recv(d, &ep.qp.rq, 0x50 + i, &sge);
    }
    wire_send_send(&w, ep.qp.qpn, 0);
    g_assert_cmpuint(wire_recv_ack(d, &w), ==, 0);

    /*
     * READ at PSN 1 (400 packets); amid its responses SEND 0 again and
     * SEND 401: no ACK of 0, the ACK of 401 after the last response
     */
    wire_send_read(&w, ep.qp.qpn, 1, mr.addr, mr.rkey, len);
    for (uint32_t i = 0; i < pkts; i++) {
        uint32_t hdr;

        if (i == 40) {
            g_assert_cmpuint(qsim_stat(d, RSIM_STAT_READ_RESP_WAITS), >=, 1);
            wire_send_send(&w, ep.qp.qpn, 0);
            stat_wait(d, RSIM_STAT_DUP_REQ, 1);
            wire_send_send(&w, ep.qp.qpn, 1 + pkts);
        }
        g_assert_cmpint(wire_recv_roce(d, &w, f, sizeof(f)), ==,
                        14 + 20 + 8 + 12 + (i && i < pkts - 1 ? 0 : 4) +
                        1024 + 4);
        g_assert_cmphex(f[42], ==, !i ? 0x0d : i == pkts - 1 ? 0x0f : 0x0e);
        g_assert_cmpuint(ldl_be_p(f + 50) & 0xffffff, ==, 1 + i);
        hdr = 14 + 20 + 8 + 12 + (f[42] == 0x0e ? 0 : 4);
        g_assert_cmphex(f[hdr + 7], ==, qsim_pattern_byte(5, i * 1024 + 7));
    }
    g_assert_cmpuint(wire_recv_ack(d, &w), ==, 1 + pkts);
    qsim_cq_expect(d, &ep.rcq, 0x50, RSIM_WC_SUCCESS, RSIM_WC_RECV, 4,
                   ep.qp.qpn);
    qsim_cq_expect(d, &ep.rcq, 0x51, RSIM_WC_SUCCESS, RSIM_WC_RECV, 4,
                   ep.qp.qpn);

    /* the READ answered, both duplicates are acknowledged, each its PSN */
    wire_send_send(&w, ep.qp.qpn, 0);
    g_assert_cmpuint(wire_recv_ack(d, &w), ==, 0);
    wire_send_send(&w, ep.qp.qpn, 1 + pkts);
    g_assert_cmpuint(wire_recv_ack(d, &w), ==, 1 + pkts);
    qsim_settle(d);
    g_assert_cmpint(recv(w.fd, f, sizeof(f), 0), <, 0);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_DUP_REQ), ==, 3);
    qsim_cq_expect_empty(d, &ep.rcq);
    wire_stop(d, &w);
}

/*
 * A READ request for more than IBTA's largest message (2^31 bytes): one
 * 74-byte frame must not make the device send 4 GiB.  NAKed as an invalid
 * request (before the MR is even looked at), the QP goes to ERR.
 */
static void test_wire_read_too_long(const char *machine)
{
    uint8_t nak[2048];
    QSimEndpoint ep;
    QSimMr mr;
    Wire w;
    QSimDev *d = wire_rc_connect(machine, &w, false, &ep, &mr, 4096);

    wire_send_read(&w, ep.qp.qpn, 0, mr.addr, mr.rkey, 0x80000001);
    g_assert_cmpint(wire_recv(d, &w, nak, sizeof(nak)), ==, 62);
    g_assert_cmphex(nak[42], ==, 0x11);                 /* ACKNOWLEDGE */
    g_assert_cmphex(ldl_be_p(nak + 50) & 0xffffff, ==, 0);
    g_assert_cmphex(nak[54], ==, AETH_SYN_NAK_INVALID_REQ);
    g_assert_cmpuint(qsim_qp_state(d, ep.qp.qpn), ==, RSIM_QPS_ERR);
    wire_stop(d, &w);
}

/*
 * A large READ from the peer cannot starve the QP's own SENDs: READ
 * responses and requests share the QP's turn, half each, and what one
 * leaves to the other (datasheet, RC QPs).  A turn is 64 packets
 * (RDMA_SIM_BURST): the responder sends 32, the requester 32 and what the
 * responder left, then the responder what the requester left.
 *
 * Both kinds must wait for the same turn.  The requester waits out an RNR
 * NAK; the peer's READ request for 96 packets waits in a filter-buffer on
 * the netdev (a filter-dump before it shows when it got there); one clock
 * step ends the RNR wait and lets the request through, before any turn.
 * Nothing else moves the clock, so no tail-loss probe (5 ms) adds a frame.
 * The 49 SEND packets (the one the RNR NAK sends back, then 3 x 16) and
 * the 96 READ responses leave in the runs below, each kind complete and in
 * PSN order.  Both count in the port's budget (tx-window, 145 KiB here),
 * which is not what this test is about: the device has 1 MiB.
 */
static void test_wire_read_shares_turn(const char *machine)
{
    /*
     * Turn 1: 32 + 32.  Turn 2: 32 responses, the last 17 SENDs and 15
     * responses more in what they left.  Turn 3: the last 17 responses.
     */
    static const struct {
        bool read;
        uint32_t n;
    } runs[] = {
        { true, 32 }, { false, 32 }, { true, 32 }, { false, 17 }, { true, 32 },
    };
    const uint32_t psn0 = 0x123456, rd_pkts = 96;
    uint8_t f[2048];
    g_autofree char *pcap = NULL;
    int64_t deadline;
    uint32_t r = 0, s = 0;
    int rcvbuf = 1 << 20;
    struct stat st;
    QSimEndpoint ep;
    QSimMr mr;
    Wire w;
    QSimWr wr = { .opcode = RSIM_WR_SEND, .nsge = 1 };
    QSimDev *d = wire_rc_connect_retry(machine, &w, false, &ep, &mr,
                                       rd_pkts * 1024, 20, 7,
                                       "tx-window=1024");

    /* 146 frames of 1 KiB wait in our socket: more than its default room */
    g_assert_cmpint(setsockopt(w.fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
                               sizeof(rcvbuf)), ==, 0);
    wr.sge[0] = qsim_sge(&mr, 0, 64);
    qsim_send(d, &ep.qp, &wr);
    stat_wait(d, RSIM_STAT_TX_FRAMES, 1);
    wire_send_aeth(&w, ep.qp.qpn, AETH_SYN_RNR_NAK_10US, psn0);
    stat_wait(d, RSIM_STAT_RNR_NAK_RCVD, 1);
    wr.sge[0] = qsim_sge(&mr, 0, 16 * 1024);
    for (int i = 0; i < 3; i++) {
        qsim_send(d, &ep.qp, &wr);
    }

    g_assert_cmpint(close(g_file_open_tmp("rsim-XXXXXX.pcap", &pcap, NULL)),
                    ==, 0);
    qtest_qmp_assert_success(d->qts, "{'execute': 'object-add', 'arguments':"
                             " {'qom-type': 'filter-dump', 'id': 'dump',"
                             " 'netdev': 'n0', 'queue': 'tx', 'file': %s}}",
                             pcap);
    qtest_qmp_assert_success(d->qts, "{'execute': 'object-add', 'arguments':"
                             " {'qom-type': 'filter-buffer', 'id': 'hold',"
                             " 'netdev': 'n0', 'queue': 'tx',"
                             " 'interval': 1000}}");
    /* a READ request (PSN 0) for all of mr: a frame of 74 bytes */
    wire_send_read(&w, ep.qp.qpn, 0, mr.addr, mr.rkey, rd_pkts * 1024);
    /* held once dumped: the pcap file header, a record header, the frame */
    deadline = g_get_monotonic_time() + QSIM_POLL_US;
    while (stat(pcap, &st) || (size_t)st.st_size < 24 + 16 + 74) {
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        g_usleep(1000);
    }
    unlink(pcap);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_TX_FRAMES), ==, 1);
    qtest_clock_step(d->qts, 2 * 1000 * 1000);     /* 2 ms */

    /* the SEND packet as first sent, then the turns */
    g_assert_cmpint(wire_recv_now(&w, f, sizeof(f)), ==,
                    14 + 20 + 8 + 12 + 64 + 4);
    g_assert_cmphex(ldl_be_p(f + 50) & 0xffffff, ==, psn0);
    for (size_t i = 0; i < ARRAY_SIZE(runs); i++) {
        for (uint32_t k = 0; k < runs[i].n; k++) {
            uint32_t psn = runs[i].read ? r++ : psn0 + s++;

            wire_recv_now(&w, f, sizeof(f));
            /* READ responses are opcodes 0x0d..0x10, SENDs 0x00..0x05 */
            g_assert_cmpuint(f[42] >= 0x0d, ==, runs[i].read);
            g_assert_cmphex(ldl_be_p(f + 50) & 0xffffff, ==, psn);
        }
    }
    g_assert_cmpuint(r, ==, rd_pkts);
    g_assert_cmpuint(s, ==, 1 + 3 * 16);
    qsim_settle(d);
    g_assert_cmpint(recv(w.fd, f, sizeof(f), 0), ==, -1);
    wire_stop(d, &w);
}

/*
 * The READ responses of 1 KiB that the device has sent by now, until it is
 * quiet: each checked (opcode, PSN *next on, payload of the pattern with
 * seed).  Returns how many.  Other frames than IPv4 (the announcements of
 * a migrated device's MAC) are skipped; so are other RoCE packets if
 * others is not NULL (it counts them).
 */
static uint32_t wire_take_read_resps(QSimDev *d, Wire *w, uint32_t *next,
                                     uint32_t pkts, uint8_t seed,
                                     uint32_t *others)
{
    uint8_t f[2048];
    uint32_t got = 0;
    bool settled = false;

    for (;;) {
        ssize_t n = recv(w->fd, f, sizeof(f), 0);
        uint32_t i = *next, hdr;

        if (n < 0) {
            g_assert_cmpint(errno, ==, EAGAIN);
            if (settled) {
                return got;
            }
            qsim_settle(d);
            settled = true;
            continue;
        }
        settled = false;
        if (lduw_be_p(f + 12) != 0x0800) {
            continue;
        }
        if (others && (f[42] < 0x0d || f[42] > 0x10)) {
            (*others)++;
            continue;
        }
        /*
         * FIRST 0x0d, MIDDLE 0x0e, LAST 0x0f; a response asked for again
         * from the middle is a MIDDLE, as Soft-RoCE answers one
         */
        g_assert_cmphex(f[42], ==, i == 0 ? 0x0d : i == pkts - 1 ? 0x0f
                                                                 : 0x0e);
        g_assert_cmphex(ldl_be_p(f + 50) & 0xffffff, ==, i);
        hdr = 14 + 20 + 8 + 12 + (f[42] == 0x0e ? 0 : 4);
        g_assert_cmpint(n, ==, hdr + 1024 + 4);
        for (uint32_t k = 0; k < 1024; k++) {
            if (f[hdr + k] != qsim_pattern_byte(seed, i * 1024 + k)) {
                g_assert_cmphex(f[hdr + k], ==,
                                qsim_pattern_byte(seed, i * 1024 + k));
            }
        }
        (*next)++;
        got++;
    }
}

/* The round trip the port's READ response pace assumes, in us */
static int64_t wire_pace_rtt_us(QSimDev *d)
{
    QObject *port = qsim_qom_get(d, "port");
    int64_t us = qdict_get_int(qobject_to(QDict, port), "read-pace-rtt-us");

    qobject_unref(port);
    return us;
}

/*
 * A READ the peer asks for is answered at the pace of the port's budget
 * (datasheet, "RC QPs"): the peer's socket buffer holds what does not fit
 * no better than the requester's.  At once, tx-window KiB (80: 80
 * responses); then tx-window KiB per round trip as the clock moves, in
 * order, with the right data.  The port has measured no round trip: the
 * pace assumes 1 ms and a shorter one for every budget's worth drained
 * without a loss.  The test's clock steps stand for the time the peer
 * takes.
 *
 * A second request for responses already sent says some were lost: the
 * port's budget is cut to 7/10 and the round trip the pace assumes doubles
 * (once per round trip: the same request twice is one loss), and the
 * responses go on from the PSN asked for.  What drains without a loss
 * after that grows the budget back, or a QP that only answers READs would
 * keep the cut budget for good.
 *
 * migrate: the device moves to a second QEMU after the first burst, the
 * responses in the budget and the time left until they have drained with
 * it: the destination sends nothing more at once, and the rest as above;
 * and again after the loss, with the pace it learned.
 */
static void wire_read_paced(const char *machine, bool migrate)
{
    const uint32_t pkts = 1024, len = pkts * 1024, again = 100;
    const uint32_t budget = 80 * 1024, cut = budget * 7 / 10;
    /* the longest round trip the pace assumes here: 1 ms, doubled once */
    const int64_t rtt = 2 * 1000 * 1000, step = 1000 * 1000;
    /* the whole READ and the part sent again, at the cut budget, twice */
    const int64_t most = 2 * (int64_t)(2 * len - again * 1024) / cut * rtt;
    uint32_t next = 0, sent;
    int64_t t = 0, pace_us;
    ssize_t n;
    int rcvbuf = 1 << 20;
    uint8_t f[2048];
    QObject *port;
    QSimEndpoint ep;
    QSimMr mr;
    Wire w;
    QSimDev *d = wire_rc_connect_retry(machine, &w, false, &ep, &mr, len,
                                       20, 7, "id=" QSIM_QOM_ID);

    g_assert_cmpint(setsockopt(w.fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
                               sizeof(rcvbuf)), ==, 0);
    qsim_fill_pattern(d, mr.addr, len, 6);
    wire_send_read(&w, ep.qp.qpn, 0, mr.addr, mr.rkey, len);

    /* the budget's worth at once, and no more while the clock stands */
    sent = wire_take_read_resps(d, &w, &next, pkts, 6, NULL);
    g_assert_cmpuint(sent * 1024, ==, budget);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_READ_RESP_WAITS), ==, 1);
    if (migrate) {
        d = qsim_migrate(d, NULL);
        port = qsim_qom_get(d, "port");
        g_assert_cmpint(qdict_get_int(qobject_to(QDict, port),
                                      "tx-read-responses"), ==, budget);
        g_assert_cmpint(qdict_get_int(qobject_to(QDict, port),
                                      "tx-inflight"), ==, budget);
        qobject_unref(port);
        g_assert_cmpuint(wire_take_read_resps(d, &w, &next, pkts, 6, NULL),
                         ==, 0);
        g_assert_cmpuint(qsim_stat(d, RSIM_STAT_READ_RESP_WAITS), ==, 1);
    }

    /*
     * then at most the budget per round trip: the shortest yet, as the
     * round trip assumed only shrinks while nothing is lost
     */
    pace_us = wire_pace_rtt_us(d);
    g_assert_cmpint(pace_us, ==, 1000);
    while (next < 3 * again) {
        t += step;
        qtest_clock_step(d->qts, step);
        sent += wire_take_read_resps(d, &w, &next, pkts, 6, NULL);
        pace_us = wire_pace_rtt_us(d);
        g_assert_cmpuint(sent * 1024ull, <=,
                         budget + t * budget / (pace_us * 1000));
        g_assert_cmpint(t, <, most);
    }
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_TX_BUDGET_CUTS), ==, 0);
    /* a budget's worth drained a step: 1 ms less an eighth a step */
    g_assert_cmpint(pace_us, ==, 669);

    /* the peer asks again for responses it was sent: twice, one loss */
    for (int i = 0; i < 2; i++) {
        wire_send_read(&w, ep.qp.qpn, again, mr.addr + again * 1024,
                       mr.rkey, len - again * 1024);
    }
    stat_wait(d, RSIM_STAT_DUP_REQ, 2);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_TX_BUDGET_CUTS), ==, 1);
    port = qsim_qom_get(d, "port");
    g_assert_cmpint(qdict_get_int(qobject_to(QDict, port), "tx-budget"), ==,
                    cut);
    qobject_unref(port);
    g_assert_cmpint(wire_pace_rtt_us(d), ==, 1339);
    if (migrate) {
        d = qsim_migrate(d, NULL);
        g_assert_cmpint(wire_pace_rtt_us(d), ==, 1339);
    }

    /* from the PSN asked for, to the end */
    next = again;
    while (next < pkts) {
        t += step;
        qtest_clock_step(d->qts, step);
        wire_take_read_resps(d, &w, &next, pkts, 6, NULL);
        g_assert_cmpint(t, <, most);
    }
    qsim_settle(d);
    /* nothing more, but for the announcements of a migrated device */
    while ((n = recv(w.fd, f, sizeof(f), 0)) >= 0) {
        g_assert_cmphex(lduw_be_p(f + 12), !=, 0x0800);
    }
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_TX_BUDGET_CUTS), ==, 1);
    port = qsim_qom_get(d, "port");
    qsim_note("%u KiB and %u KiB again in %" PRId64 " ms of the clock, the "
              "budget cut to %u bytes and back at %" PRId64, len / 1024,
              (len - again * 1024) / 1024, t / 1000000, cut,
              qdict_get_int(qobject_to(QDict, port), "tx-budget"));
    g_assert_cmpint(qdict_get_int(qobject_to(QDict, port), "tx-budget"), >,
                    cut);
    qobject_unref(port);
    wire_stop(d, &w);
}

static void test_wire_read_paced(const char *machine)
{
    wire_read_paced(machine, false);
}

/*
 * Every QP progresses: while the QP's own SENDs, which the peer does not
 * acknowledge, fill the port's budget, a READ the peer asks for is still
 * answered, a packet at a time as its responses drain, at most four a
 * round trip (a wait of 1 / 4 ms while the port has measured none and
 * drained less than a budget), and the budget is never exceeded by more
 * than that packet.
 */
static void test_wire_read_budget_full(const char *machine)
{
    const uint32_t pkts = 32, budget = 80 * 1024;
    const int64_t quarter = 1000 * 1000 / 4;
    uint32_t next = 0, sends = 0;
    int rcvbuf = 1 << 20, t;
    QObject *port;
    QSimEndpoint ep;
    QSimMr mr;
    Wire w;
    QSimWr wr = { .opcode = RSIM_WR_SEND, .nsge = 1 };
    QSimDev *d = wire_rc_connect_retry(machine, &w, false, &ep, &mr,
                                       128 * 1024, 20, 7, "id=" QSIM_QOM_ID);

    g_assert_cmpint(setsockopt(w.fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
                               sizeof(rcvbuf)), ==, 0);
    qsim_fill_pattern(d, mr.addr, pkts * 1024, 8);
    wr.sge[0] = qsim_sge(&mr, 0, 128 * 1024);
    qsim_send(d, &ep.qp, &wr);
    wire_take_read_resps(d, &w, &next, pkts, 8, &sends);
    g_assert_cmpuint(sends * 1024, ==, budget);

    wire_send_read(&w, ep.qp.qpn, 0, mr.addr, mr.rkey, pkts * 1024);
    for (t = 0; next < pkts; t++) {
        g_assert_cmpint(t, <, 2 * pkts);
        wire_take_read_resps(d, &w, &next, pkts, 8, &sends);
        g_assert_cmpuint(next, <=, 1 + t);
        port = qsim_qom_get(d, "port");
        g_assert_cmpint(qdict_get_int(qobject_to(QDict, port),
                                      "tx-inflight"), <=, budget + 1024);
        qobject_unref(port);
        qtest_clock_step(d->qts, quarter);
    }
    qsim_note("%u READ responses in %d quarter round trips, %u SEND packets",
              pkts, t, sends);
    wire_stop(d, &w);
}

static void test_wire_read_paced_migrated(const char *machine)
{
    wire_read_paced(machine, true);
}

/*
 * Garbage from the network: dropped and counted, never a crash.  The
 * generator has a seed of its own: the same 3000 frames every run.
 */
static void test_wire_garbage(const char *machine)
{
    uint8_t f[1500];
    GRand *r = g_rand_new_with_seed(42);
    Wire w;
    QSimDev *d = wire_start(machine, &w, false);

    for (int i = 0; i < 3000; i++) {
        size_t len = g_rand_int_range(r, 1, sizeof(f));

        for (size_t k = 0; k < len; k++) {
            f[k] = g_rand_int(r);
        }
        if (i % 2) {
            /* a RoCEv2 frame for the device with damaged contents */
            size_t keep = g_rand_int_range(r, 14, sizeof(rxe_ack));

            memcpy(f, rxe_ack, MIN(keep, sizeof(rxe_ack)));
            len = MAX(len, keep);
        }
        wire_send(&w, f, len);
        if (i % 500 == 499) {
            qsim_assert_alive(d);
        }
    }
    qsim_assert_alive(d);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_DROP_MALFORMED) +
                     qsim_stat(d, RSIM_STAT_RX_ICRC_ERR), >, 0);
    g_rand_free(r);
    wire_stop(d, &w);
}

static const QSimTest tests[] = {
    { "eth/datapath", test_eth_datapath },
    { "eth/disabled", test_eth_disabled },
    { "wire/rxe-frames", test_wire_rxe_frames, QSIM_ONCE },
    { "wire/burst", test_wire_burst, QSIM_ONCE },
    { "wire/doorbell-at-once", test_wire_doorbell_at_once, QSIM_ONCE },
    { "wire/nak-then-ack", test_wire_nak_then_ack, QSIM_ONCE },
    { "wire/peer-restored", test_wire_peer_restored, QSIM_ONCE },
    { "wire/device-frames", test_wire_device_frames, QSIM_ONCE },
    { "wire/tx-burst", test_wire_tx_burst, QSIM_ONCE },
    { "wire/tx-burst-dgram", test_wire_tx_burst_dgram, QSIM_ONCE },
    { "wire/duplicate-ack", test_wire_duplicate_ack, QSIM_ONCE },
    { "wire/ack-after-read", test_wire_ack_after_read, QSIM_ONCE },
    { "wire/read-too-long", test_wire_read_too_long, QSIM_ONCE },
    { "wire/read-shares-turn", test_wire_read_shares_turn, QSIM_ONCE },
    { "wire/read-paced", test_wire_read_paced, QSIM_ONCE },
    { "wire/read-paced-migrated", test_wire_read_paced_migrated, QSIM_ONCE },
    { "wire/read-budget-full", test_wire_read_budget_full, QSIM_ONCE },
    { "wire/garbage", test_wire_garbage, QSIM_ONCE },
};

int main(int argc, char **argv)
{
    return qsim_main(argc, argv, tests, ARRAY_SIZE(tests));
}
