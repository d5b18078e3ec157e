/*
 * QTest testcase for the rdma-sim RDMA NIC: the transport between two QPs
 * of one device over its internal loopback.  RC with every operation at
 * several sizes, also with injected loss, reordering, duplication and
 * corruption; its error cases; UD and UC.  Memory is checked byte for
 * byte.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqos/rdma-sim.h"

#define BUF_SIZE        QSIM_PAIR_BUF_SIZE

/* A receive into [off, off + len) of B's buffer */
static void b_recv(QSimPair *p, uint64_t wr_id, uint64_t off, uint32_t len)
{
    struct rsim_sge sge = qsim_sge(&p->mb, off, len);

    qsim_post_recv(p->d, &p->b.qp.rq, wr_id, &sge);
}

/* The next completion of A's send CQ */
static void a_done(QSimPair *p, uint64_t wr_id, unsigned status,
                   unsigned opcode, uint32_t byte_len)
{
    qsim_cq_expect(p->d, &p->a.scq, wr_id, status, opcode, byte_len,
                   p->a.qp.qpn);
}

/*
 * SEND of len bytes from A to B, the receive split over the whole MR.  The
 * WQE's dma.length is wrong on purpose: with SGEs their sum is the length.
 */
static void do_send(QSimPair *p, uint32_t len, uint8_t seed, bool imm)
{
    QSimWr wr = {
        .wr_id = 0x1000 + len,
        .opcode = imm ? RSIM_WR_SEND_WITH_IMM : RSIM_WR_SEND,
        .ex = cpu_to_be32(0xcafe0000 | (len & 0xffff)),
        .nsge = 2,
        .dma_length = 2 * len + 50,
    };
    uint32_t half = len / 2;
    struct rsim_cqe cqe;

    qsim_fill_pattern(p->d, p->ma.addr, len, seed);
    qtest_memset(p->d->qts, p->mb.addr, 0, len + 64);
    b_recv(p, 0x2000 + len, 0, BUF_SIZE);
    wr.sge[0] = qsim_sge(&p->ma, 0, half);
    wr.sge[1] = qsim_sge(&p->ma, half, len - half);
    qsim_send(p->d, &p->a.qp, &wr);
    a_done(p, wr.wr_id, RSIM_WC_SUCCESS, RSIM_WC_SEND, len);
    qsim_cq_poll(p->d, &p->b.rcq, &cqe);
    qsim_cqe_check(&cqe, 0x2000 + len, RSIM_WC_SUCCESS, RSIM_WC_RECV, len,
                   p->b.qp.qpn);
    g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, p->a.qp.qpn);
    g_assert_cmpuint(cqe.sl, ==, 0);
    if (imm) {
        g_assert_cmphex(le32_to_cpu(cqe.wc_flags), ==, RSIM_WC_WITH_IMM);
        g_assert_cmphex(cqe.ex, ==, cpu_to_be32(0xcafe0000 | (len & 0xffff)));
    } else {
        g_assert_cmphex(le32_to_cpu(cqe.wc_flags), ==, 0);
    }
    qsim_check_pattern(p->d, p->mb.addr, len, seed);
    g_assert_cmpuint(qtest_readb(p->d->qts, p->mb.addr + len), ==, 0);
}

static void do_write_imm(QSimPair *p, uint32_t len, uint8_t seed)
{
    static const struct rsim_sge no_buffer;
    QSimWr wr = {
        .wr_id = 0x3000 + len,
        .opcode = RSIM_WR_RDMA_WRITE_WITH_IMM,
        .ex = cpu_to_be32(0x12345678),
        .remote_addr = p->mb.addr + 8,
        .rkey = p->mb.rkey,
        .nsge = 1,
    };
    struct rsim_cqe cqe;

    qsim_fill_pattern(p->d, p->ma.addr, len, seed);
    qtest_memset(p->d->qts, p->mb.addr, 0, len + 16);
    qsim_post_recv(p->d, &p->b.qp.rq, 0x4000 + len, &no_buffer);
    wr.sge[0] = qsim_sge(&p->ma, 0, len);
    qsim_send(p->d, &p->a.qp, &wr);
    a_done(p, wr.wr_id, RSIM_WC_SUCCESS, RSIM_WC_RDMA_WRITE, len);
    qsim_cq_poll(p->d, &p->b.rcq, &cqe);
    qsim_cqe_check(&cqe, 0x4000 + len, RSIM_WC_SUCCESS,
                   RSIM_WC_RECV_RDMA_WITH_IMM, len, p->b.qp.qpn);
    g_assert_cmphex(le32_to_cpu(cqe.wc_flags), ==, RSIM_WC_WITH_IMM);
    g_assert_cmphex(cqe.ex, ==, cpu_to_be32(0x12345678));
    g_assert_cmpuint(qtest_readq(p->d->qts, p->mb.addr), ==, 0);
    qsim_check_pattern(p->d, p->mb.addr + 8, len, seed);
    g_assert_cmpuint(qtest_readl(p->d->qts, p->mb.addr + 8 + len), ==, 0);
}

static void do_read(QSimPair *p, uint32_t len, uint8_t seed)
{
    QSimWr wr = {
        .wr_id = 0x5000 + len,
        .opcode = RSIM_WR_RDMA_READ,
        .remote_addr = p->mb.addr + 16,
        .rkey = p->mb.rkey,
        .nsge = 1,
    };

    qsim_fill_pattern(p->d, p->mb.addr + 16, len, seed);
    qtest_memset(p->d->qts, p->ma.addr, 0, len + 16);
    wr.sge[0] = qsim_sge(&p->ma, 4, len);
    qsim_send(p->d, &p->a.qp, &wr);
    a_done(p, wr.wr_id, RSIM_WC_SUCCESS, RSIM_WC_RDMA_READ, len);
    g_assert_cmpuint(qtest_readl(p->d->qts, p->ma.addr), ==, 0);
    qsim_check_pattern(p->d, p->ma.addr + 4, len, seed);
    g_assert_cmpuint(qtest_readl(p->d->qts, p->ma.addr + 4 + len), ==, 0);
}

static void do_atomics(QSimPair *p)
{
    QTestState *qts = p->d->qts;
    QSimWr cas = {
        .wr_id = 0x6001,
        .opcode = RSIM_WR_ATOMIC_CMP_AND_SWP,
        .remote_addr = p->mb.addr + 64,
        .rkey = p->mb.rkey,
        .compare_add = 0x1111222233334444ull,
        .swap = 0x5555666677778888ull,
        .nsge = 1,
    };
    QSimWr awr = {
        .wr_id = 0x6003,
        .opcode = RSIM_WR_ATOMIC_WRITE,
        .remote_addr = p->mb.addr + 72,
        .rkey = p->mb.rkey,
        .nsge = 0,
        .sge[0].addr = cpu_to_le64(0x0123456789abcdefull),
    };
    QSimWr fadd = {
        .wr_id = 0x6002,
        .opcode = RSIM_WR_ATOMIC_FETCH_AND_ADD,
        .remote_addr = p->mb.addr + 64,
        .rkey = p->mb.rkey,
        .compare_add = 0x10,
        .nsge = 1,
    };

    qtest_writeq(qts, p->mb.addr + 64, 0x1111222233334444ull);
    cas.sge[0] = qsim_sge(&p->ma, 128, 8);
    qsim_send(p->d, &p->a.qp, &cas);
    a_done(p, cas.wr_id, RSIM_WC_SUCCESS, RSIM_WC_COMP_SWAP, 8);
    g_assert_cmphex(qtest_readq(qts, p->ma.addr + 128), ==,
                    0x1111222233334444ull);
    g_assert_cmphex(qtest_readq(qts, p->mb.addr + 64), ==,
                    0x5555666677778888ull);

    /* compare fails: memory unchanged, old value returned */
    qsim_send(p->d, &p->a.qp, &cas);
    a_done(p, cas.wr_id, RSIM_WC_SUCCESS, RSIM_WC_COMP_SWAP, 8);
    g_assert_cmphex(qtest_readq(qts, p->ma.addr + 128), ==,
                    0x5555666677778888ull);
    g_assert_cmphex(qtest_readq(qts, p->mb.addr + 64), ==,
                    0x5555666677778888ull);

    fadd.sge[0] = qsim_sge(&p->ma, 136, 8);
    for (int i = 0; i < 5; i++) {
        qsim_send(p->d, &p->a.qp, &fadd);
        a_done(p, fadd.wr_id, RSIM_WC_SUCCESS, RSIM_WC_FETCH_ADD, 8);
        g_assert_cmphex(qtest_readq(qts, p->ma.addr + 136), ==,
                        0x5555666677778888ull + 0x10 * i);
    }
    /* exactly five additions, even with duplicated or lost packets */
    g_assert_cmphex(qtest_readq(qts, p->mb.addr + 64), ==,
                    0x5555666677778888ull + 0x50);

    /* ATOMIC_WRITE: 8 bytes from the WQE, written as one */
    qsim_send(p->d, &p->a.qp, &awr);
    a_done(p, awr.wr_id, RSIM_WC_SUCCESS, RSIM_WC_ATOMIC_WRITE, 8);
    g_assert_cmphex(qtest_readq(qts, p->mb.addr + 72), ==,
                    0x0123456789abcdefull);
}

/* Every operation at several sizes: the mix a run of perftest makes. */
static void run_all_ops(QSimPair *p)
{
    static const uint32_t sizes[] = { 0, 1, 255, 1024, 1025, 4096, 65536,
                                      200000 };

    for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
        do_send(p, sizes[i], i, i & 1);
        do_write_imm(p, sizes[i], i + 50);
        do_read(p, sizes[i], i + 100);
    }
    do_atomics(p);
}

static void test_loopback_ops(const char *machine)
{
    QSimPair p;

    qsim_pair_start(&p, machine, NULL);
    run_all_ops(&p);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_LOOPBACK_PKTS), >, 0);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_RX_ICRC_ERR), ==, 0);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_RETRANSMITS), ==, 0);
    qsim_stop(p.d);
}

/*
 * A window smaller than one message (4 KiB: 4 packets): the ACKs the
 * requester asks for keep it moving, no retry timer is needed.
 */
static void test_loopback_small_window(const char *machine)
{
    QSimPair p;

    qsim_pair_start(&p, machine, &(QSimPairConf){ .props = "tx-window=4" });
    run_all_ops(&p);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_TIMEOUTS), ==, 0);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_RETRANSMITS), ==, 0);
    qsim_stop(p.d);
}

/* The same over IPv6 (a global GID, so the frames carry IPv6 headers). */
static void test_loopback_ipv6(const char *machine)
{
    QSimPair p;

    qsim_pair_start(&p, machine, &(QSimPairConf){
        .ipv6 = true, .path_mtu = RSIM_MTU_2048 });
    run_all_ops(&p);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_RX_DROP_MALFORMED), ==, 0);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_RX_ICRC_ERR), ==, 0);
    qsim_stop(p.d);
}

static void test_loopback_mtu4096(const char *machine)
{
    QSimPair p;

    qsim_pair_start(&p, machine, &(QSimPairConf){ .path_mtu = RSIM_MTU_4096 });
    run_all_ops(&p);
    qsim_stop(p.d);
}

/*
 * Frames to the device's own GID go through the internal loopback whatever
 * MAC the address vector names: none reaches the network.
 */
static void test_loopback_any_mac(const char *machine)
{
    static const uint8_t other_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
    QSimPair p;

    qsim_pair_start(&p, machine, &(QSimPairConf){ .dmac = other_mac });
    do_send(&p, 3000, 1, false);
    do_write_imm(&p, 5000, 2);
    do_read(&p, 7000, 3);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_LOOPBACK_PKTS), ==,
                     qsim_stat(p.d, RSIM_STAT_TX_ROCE_PKTS));
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_LOOPBACK_PKTS), >=, 15);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_TX_FRAMES), ==, 0);
    qsim_stop(p.d);
}

/* 2% loss and 2% reordering: every operation still completes correctly. */
static void test_loopback_loss(const char *machine)
{
    g_autofree char *props =
        qsim_faults("fault-drop=20000,fault-reorder=20000", "7");
    QSimPair p;

    qsim_pair_start(&p, machine, &(QSimPairConf){ .props = props });
    run_all_ops(&p);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_FAULT_DROP), >, 0);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_FAULT_REORDER), >, 0);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_RETRANSMITS), >, 0);
    qsim_stop(p.d);
}

/*
 * A QP timeout of 268 ms, as applications set it, and 2% loss: a lost last
 * packet of a burst (every lost single-packet message, every lost READ
 * response at the end) is found by a probe after a few milliseconds, never
 * by the retransmission timer; and the lost time shows it.
 */
static void test_loopback_tail_loss(const char *machine)
{
    g_autofree char *props = qsim_faults("fault-drop=20000", "9");
    int64_t start;
    QSimPair p;

    qsim_pair_start(&p, machine,
                    &(QSimPairConf){ .props = props, .timeout = 16 });
    start = qsim_clock_now(p.d);
    run_all_ops(&p);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_FAULT_DROP), >, 0);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_LOSS_PROBES), >, 0);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_TIMEOUTS), ==, 0);
    /* far less than one timeout per lost frame */
    g_assert_cmpint(qsim_clock_now(p.d) - start, <,
                    qsim_stat(p.d, RSIM_STAT_FAULT_DROP) * 268 * 1000 *
                    1000 / 4);
    qsim_stop(p.d);
}

/*
 * Many small READs in flight at once over a lossy link (what ib_read_bw
 * does): every one completes, in order, with its data.
 */
static void test_loopback_read_burst(const char *machine)
{
    g_autofree char *props =
        qsim_faults("fault-drop=30000,fault-reorder=30000", "5");
    QSimPair p;

    qsim_pair_start(&p, machine, &(QSimPairConf){ .props = props });
    for (int round = 0; round < 8; round++) {
        for (int i = 0; i < 40; i++) {
            QSimWr wr = {
                .wr_id = round * 100 + i,
                .opcode = RSIM_WR_RDMA_READ,
                .remote_addr = p.mb.addr + 4096 + i,
                .rkey = p.mb.rkey,
                .nsge = 1,
            };

            qtest_writeb(p.d->qts, p.mb.addr + 4096 + i, round * 40 + i);
            wr.sge[0] = qsim_sge(&p.ma, i, 1);
            qsim_send(p.d, &p.a.qp, &wr);
        }
        for (int i = 0; i < 40; i++) {
            a_done(&p, round * 100 + i, RSIM_WC_SUCCESS, RSIM_WC_RDMA_READ,
                   1);
            g_assert_cmpuint(qtest_readb(p.d->qts, p.ma.addr + i), ==,
                             (uint8_t)(round * 40 + i));
        }
    }
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_FAULT_DROP), >, 0);
    qsim_stop(p.d);
}

/* Duplicates and corruption: detected, never executed twice. */
static void test_loopback_dup_corrupt(const char *machine)
{
    g_autofree char *props =
        qsim_faults("fault-dup=50000,fault-corrupt=20000", "3");
    QSimPair p;

    qsim_pair_start(&p, machine, &(QSimPairConf){ .props = props });
    run_all_ops(&p);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_FAULT_DUP), >, 0);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_DUP_REQ), >, 0);
    /* a damaged frame fails the ICRC, or earlier checks if the BTH broke */
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_FAULT_CORRUPT), >, 0);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_RX_ICRC_ERR) +
                     qsim_stat(p.d, RSIM_STAT_RX_DROP_MALFORMED), >=,
                     qsim_stat(p.d, RSIM_STAT_FAULT_CORRUPT));
    qsim_stop(p.d);
}

/* An RDMA WRITE or READ of len bytes of B's memory that fails */
static void remote_op_fails(QSimPair *p, uint64_t wr_id, uint32_t opcode,
                            uint64_t remote_addr, uint32_t rkey,
                            uint32_t len, unsigned status)
{
    QSimWr wr = {
        .wr_id = wr_id,
        .opcode = opcode,
        .remote_addr = remote_addr,
        .rkey = rkey,
        .nsge = 1,
    };

    wr.sge[0] = qsim_sge(&p->ma, 0, len);
    qsim_send(p->d, &p->a.qp, &wr);
    a_done(p, wr_id, status, opcode == RSIM_WR_RDMA_READ ?
           RSIM_WC_RDMA_READ : RSIM_WC_RDMA_WRITE, len);
}

/* A WRITE with an rkey the responder's MR does not grant. */
static void test_rkey_violation(const char *machine)
{
    struct rsim_cqe cqe;
    QSimPair p;

    qsim_pair_start(&p, machine, NULL);
    b_recv(&p, 0x7100, 0, 64);
    /* the rkey of another variant of B's MR */
    remote_op_fails(&p, 0x7001, RSIM_WR_RDMA_WRITE, p.mb.addr,
                    p.mb.rkey ^ 0x1, 64, RSIM_WC_REM_ACCESS_ERR);
    g_assert_cmpuint(qsim_qp_state(p.d, p.a.qp.qpn), ==, RSIM_QPS_ERR);
    /* the responder went to ERR too: its posted receive is flushed */
    qsim_cq_poll(p.d, &p.b.rcq, &cqe);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x7100);
    g_assert_cmpuint(le32_to_cpu(cqe.status), ==, RSIM_WC_WR_FLUSH_ERR);
    g_assert_cmpuint(qsim_qp_state(p.d, p.b.qp.qpn), ==, RSIM_QPS_ERR);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_REM_ACCESS_ERR), ==, 1);
    /* the responder's QP raises the event; the requester has its CQE */
    qsim_aeq_expect(p.d, RSIM_EV_QP_ACCESS_ERR, p.b.qp.qpn);
    qsim_aeq_expect_none(p.d);
    qsim_assert_alive(p.d);
    qsim_stop(p.d);
}

/* A READ beyond the end of the remote MR. */
static void test_read_out_of_range(const char *machine)
{
    QSimPair p;

    qsim_pair_start(&p, machine, NULL);
    remote_op_fails(&p, 0x7002, RSIM_WR_RDMA_READ,
                    p.mb.addr + BUF_SIZE - 100, p.mb.rkey, 200,
                    RSIM_WC_REM_ACCESS_ERR);
    qsim_assert_alive(p.d);
    qsim_stop(p.d);
}

/* A local SGE with a bad lkey: local protection error, then the flush. */
static void test_bad_lkey(const char *machine)
{
    QSimPair p;
    QSimWr wr = {
        .wr_id = 0x7003,
        .opcode = RSIM_WR_SEND,
        .nsge = 1,
    };
    QSimWr next = {
        .wr_id = 0x7004,
        .opcode = RSIM_WR_SEND,
        .nsge = 1,
    };

    qsim_pair_start(&p, machine, NULL);
    wr.sge[0] = qsim_sge(&p.ma, 0, 64);
    wr.sge[0].lkey = cpu_to_le32(p.ma.lkey + 0x100);  /* another index */
    next.sge[0] = qsim_sge(&p.ma, 0, 64);
    qsim_send(p.d, &p.a.qp, &wr);
    qsim_send(p.d, &p.a.qp, &next);
    a_done(&p, wr.wr_id, RSIM_WC_LOC_PROT_ERR, RSIM_WC_SEND, 64);
    a_done(&p, next.wr_id, RSIM_WC_WR_FLUSH_ERR, RSIM_WC_SEND, 0);
    g_assert_cmpuint(qsim_qp_state(p.d, p.a.qp.qpn), ==, RSIM_QPS_ERR);
    g_assert_cmpuint(qsim_ring_cons(p.d, &p.a.qp.sq), ==,
                     qsim_ring_prod(p.d, &p.a.qp.sq));
    /* an error the requester finds is reported by its completion alone */
    qsim_aeq_expect_none(p.d);
    qsim_assert_alive(p.d);
    qsim_stop(p.d);
}

/* The responder QP lacks REMOTE_WRITE: invalid request for the requester. */
static void test_qp_access_denied(const char *machine)
{
    QSimPair p;

    qsim_pair_start(&p, machine, &(QSimPairConf){ .b_access = QSIM_ACC_LW });
    remote_op_fails(&p, 0x7005, RSIM_WR_RDMA_WRITE, p.mb.addr, p.mb.rkey, 64,
                    RSIM_WC_REM_INV_REQ_ERR);
    qsim_aeq_expect(p.d, RSIM_EV_QP_REQ_ERR, p.b.qp.qpn);
    qsim_aeq_expect_none(p.d);
    qsim_assert_alive(p.d);
    qsim_stop(p.d);
}

/* A SEND without a posted receive waits (RNR) and lands once one is. */
static void test_rnr_then_receive(const char *machine)
{
    QSimPair p;
    QSimWr wr = {
        .wr_id = 0x7006,
        .opcode = RSIM_WR_SEND,
        .nsge = 1,
    };
    struct rsim_cqe cqe;

    qsim_pair_start(&p, machine, NULL);
    qsim_fill_pattern(p.d, p.ma.addr, 3000, 9);
    wr.sge[0] = qsim_sge(&p.ma, 0, 3000);
    qsim_send(p.d, &p.a.qp, &wr);
    for (int i = 0; i < 50; i++) {
        qtest_clock_step(p.d->qts, 100 * 1000);
    }
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_RNR_NAK_SENT), >, 0);
    g_assert_cmpuint(qsim_ring_prod(p.d, &p.a.scq), ==, 0);
    b_recv(&p, 0x7106, 0, 4096);
    a_done(&p, wr.wr_id, RSIM_WC_SUCCESS, RSIM_WC_SEND, 3000);
    qsim_cq_poll(p.d, &p.b.rcq, &cqe);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 3000);
    qsim_check_pattern(p.d, p.mb.addr, 3000, 9);
    qsim_stop(p.d);
}

/* A QP moved to ERR flushes what is posted and what is posted later. */
static void test_error_flush(const char *machine)
{
    QSimPair p;
    QSimWr wr = {
        .wr_id = 0x7007,
        .opcode = RSIM_WR_SEND,
        .nsge = 1,
    };

    qsim_pair_start(&p, machine, NULL);
    b_recv(&p, 0x7201, 0, 64);
    b_recv(&p, 0x7202, 0, 64);
    qsim_qp_move(p.d, p.b.qp.qpn, RSIM_QPS_ERR);
    qsim_cq_expect_flush(p.d, &p.b.rcq, 0x7201, RSIM_WC_RECV, p.b.qp.qpn);
    qsim_cq_expect_flush(p.d, &p.b.rcq, 0x7202, RSIM_WC_RECV, p.b.qp.qpn);
    qsim_qp_move(p.d, p.a.qp.qpn, RSIM_QPS_ERR);
    wr.sge[0] = qsim_sge(&p.ma, 0, 64);
    qsim_send(p.d, &p.a.qp, &wr);
    a_done(&p, wr.wr_id, RSIM_WC_WR_FLUSH_ERR, RSIM_WC_SEND, 0);
    qsim_stop(p.d);
}

/* Solicited-only arming: only a solicited message raises an event. */
static void test_solicited_events(const char *machine)
{
    QSimPair p;
    QSimWr wr = {
        .wr_id = 0x9001,
        .opcode = RSIM_WR_SEND,
        .nsge = 1,
    };
    struct rsim_cqe cqe;
    uint32_t dw0;

    qsim_pair_start(&p, machine, NULL);
    /* enabled, every vector masked: a message shows as pending */
    qpci_msix_enable(p.d->dev);
    qsim_eq_doorbell(p.d, &p.eq, true);
    qsim_cq_arm_db(p.d, 0, p.b.rcqn, RSIM_CQ_ARM_SOLICITED);

    /* not solicited: a completion, no event */
    b_recv(&p, 0x9101, 0, 64);
    wr.sge[0] = qsim_sge(&p.ma, 0, 64);
    qsim_send(p.d, &p.a.qp, &wr);
    a_done(&p, 0x9001, RSIM_WC_SUCCESS, RSIM_WC_SEND, 64);
    qsim_cq_poll(p.d, &p.b.rcq, &cqe);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x9101);
    g_assert_cmphex(qtest_readl(p.d->qts, p.eq.addr), ==, 0);
    g_assert_false(qpci_msix_pending(p.d->dev, 1));

    /* solicited: the event for the receive CQ, and the interrupt */
    b_recv(&p, 0x9102, 0, 64);
    wr.wr_id = 0x9002;
    wr.flags = RSIM_SEND_SOLICITED;
    qsim_send(p.d, &p.a.qp, &wr);
    a_done(&p, 0x9002, RSIM_WC_SUCCESS, RSIM_WC_SEND, 64);
    qsim_cq_poll(p.d, &p.b.rcq, &cqe);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x9102);
    dw0 = qtest_readl(p.d->qts, p.eq.addr);
    g_assert_cmpuint(FIELD_EX32(dw0, RSIM_EQE_HDR, PHASE), ==, 1);
    g_assert_cmphex(FIELD_EX32(dw0, RSIM_EQE_HDR, TYPE), ==,
                    RSIM_EV_COMPLETION);
    g_assert_cmpuint(qtest_readl(p.d->qts, p.eq.addr + 4), ==, p.b.rcqn);
    g_assert_true(qpci_msix_pending(p.d->dev, 1));
    /* firing disarmed the CQ: the next solicited message is silent */
    b_recv(&p, 0x9103, 0, 64);
    wr.wr_id = 0x9003;
    qsim_send(p.d, &p.a.qp, &wr);
    a_done(&p, 0x9003, RSIM_WC_SUCCESS, RSIM_WC_SEND, 64);
    qsim_cq_poll(p.d, &p.b.rcq, &cqe);
    g_assert_cmphex(qtest_readl(p.d->qts, p.eq.addr + RSIM_EQ_ENTRY_SIZE), ==,
                    0);
    qsim_stop(p.d);
}

/*
 * A receive CQ that is full: the message is neither lost nor overwrites
 * a completion; the device reports CQ_ERR and delivers once there is room.
 */
static void test_recv_cq_full(const char *machine)
{
    QSimPair p;
    struct rsim_cqe cqe;
    int i;

    qsim_pair_start(&p, machine, NULL);
    for (i = 0; i < 60; i++) {
        b_recv(&p, 0xa000 + i, i * 64, 64);
    }
    /* 63 completions fill the 64-slot ring */
    for (i = 0; i < 70; i++) {
        QSimWr wr = {
            .wr_id = 0xb000 + i,
            .opcode = RSIM_WR_SEND,
            .nsge = 1,
        };

        if (i == 60) {
            for (int k = 60; k < 70; k++) {
                b_recv(&p, 0xa000 + k, k * 64, 64);
            }
        }
        qtest_writeb(p.d->qts, p.ma.addr + i, i);
        wr.sge[0] = qsim_sge(&p.ma, i, 1);
        qsim_send(p.d, &p.a.qp, &wr);
        if (i < 63) {
            a_done(&p, 0xb000 + i, RSIM_WC_SUCCESS, RSIM_WC_SEND, 1);
        }
    }
    for (i = 0; i < 200; i++) {
        qtest_clock_step(p.d->qts, 1000 * 1000);
    }
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_CQ_OVERFLOW), >=, 1);
    g_assert_cmpuint(qsim_ring_prod(p.d, &p.b.rcq), ==, 63);
    /* consume: the rest arrives, in order, nothing lost */
    for (i = 0; i < 70; i++) {
        qsim_cq_poll(p.d, &p.b.rcq, &cqe);
        g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0xa000 + i);
        g_assert_cmpuint(le32_to_cpu(cqe.status), ==, RSIM_WC_SUCCESS);
        g_assert_cmpuint(qtest_readb(p.d->qts, p.mb.addr + i * 64), ==, i);
    }
    for (i = 63; i < 70; i++) {
        a_done(&p, 0xb000 + i, RSIM_WC_SUCCESS, RSIM_WC_SEND, 1);
    }
    g_assert_cmpuint(qsim_qp_state(p.d, p.b.qp.qpn), ==, RSIM_QPS_RTS);
    qsim_stop(p.d);
}

/*
 * UC: SENDs and WRITEs with immediate between two UC QPs; with loss, a
 * message may be lost but never hangs the QP, and what arrives is right.
 */
static void test_uc(const char *machine)
{
    g_autofree char *props = qsim_faults("fault-drop=50000", "9");
    unsigned delivered = 0, last_msg = 0;
    QSimPair p;

    qsim_pair_start(&p, machine, &(QSimPairConf){ .type = RSIM_QPT_UC });
    do_send(&p, 5000, 1, true);
    do_write_imm(&p, 3000, 2);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_RETRANSMITS), ==, 0);
    qsim_stop(p.d);

    qsim_pair_start(&p, machine, &(QSimPairConf){
        .type = RSIM_QPT_UC, .props = props });
    for (int i = 0; i < 40; i++) {
        QSimWr wr = {
            .wr_id = 0xc000 + i,
            .opcode = RSIM_WR_SEND,
            .nsge = 1,
        };

        b_recv(&p, 0xd000 + i, i * 4096, 4096);
        qsim_fill_pattern(p.d, p.ma.addr + i * 4096, 3000, i);
        wr.sge[0] = qsim_sge(&p.ma, i * 4096, 3000);
        qsim_send(p.d, &p.a.qp, &wr);
        /* the sender completes every message: UC does not wait */
        a_done(&p, 0xc000 + i, RSIM_WC_SUCCESS, RSIM_WC_SEND, 3000);
    }
    /*
     * Each message that arrived is whole, in order; a receive WQE whose
     * message was lost takes the next one (message m >= WQE id).
     */
    while (qsim_ring_prod(p.d, &p.b.rcq) != p.b.rcq.cons) {
        struct rsim_cqe cqe;
        uint64_t id;
        uint8_t m;

        qsim_cq_poll(p.d, &p.b.rcq, &cqe);
        id = le64_to_cpu(cqe.wr_id) - 0xd000;
        g_assert_cmpuint(le32_to_cpu(cqe.status), ==, RSIM_WC_SUCCESS);
        g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 3000);
        g_assert_cmpuint(id, ==, delivered);
        m = qtest_readb(p.d->qts, p.mb.addr + id * 4096);
        g_assert_cmpuint(m, >=, id);
        g_assert_cmpuint(m, <, 40);
        g_assert_cmpuint(m, >=, last_msg);
        qsim_check_pattern(p.d, p.mb.addr + id * 4096, 3000, m);
        last_msg = m + 1;
        delivered++;
    }
    g_assert_cmpuint(delivered, >, 20);
    g_assert_cmpuint(delivered, <, 40);
    g_assert_cmpuint(qsim_qp_state(p.d, p.b.qp.qpn), ==, RSIM_QPS_RTS);
    g_assert_cmpuint(qsim_qp_state(p.d, p.a.qp.qpn), ==, RSIM_QPS_RTS);
    qsim_stop(p.d);
}

/* Nobody answers (the peer QP is gone): retry count exceeded. */
static void test_retry_exceeded(const char *machine)
{
    QSimPair p;

    qsim_pair_start(&p, machine, &(QSimPairConf){ .retry = 3 });
    qsim_handle_expect(p.d, RSIM_CMD_DESTROY_QP, p.b.qp.qpn, RSIM_STS_OK);
    remote_op_fails(&p, 0x7008, RSIM_WR_RDMA_WRITE, p.mb.addr, p.mb.rkey, 64,
                    RSIM_WC_RETRY_EXC_ERR);
    /* the first try and three retries each timed out */
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_TIMEOUTS), ==, 4);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_RETRANSMITS), ==, 3);
    qsim_stop(p.d);
}

/*
 * Datagram wr from UD QP a to b, received by the receive WQE recv_id
 * posted with sge: both complete successfully, b's completion in *cqe.
 */
static void ud_datagram(QSimDev *d, QSimEndpoint *a, QSimEndpoint *b,
                        QSimWr *wr, struct rsim_sge *sge, uint64_t recv_id,
                        uint32_t len, struct rsim_cqe *cqe)
{
    qsim_post_recv(d, &b->qp.rq, recv_id, sge);
    qsim_send(d, &a->qp, wr);
    qsim_cq_expect(d, &a->scq, wr->wr_id, RSIM_WC_SUCCESS, RSIM_WC_SEND, len,
                   a->qp.qpn);
    qsim_cq_poll(d, &b->rcq, cqe);
    qsim_cqe_check(cqe, recv_id, RSIM_WC_SUCCESS, RSIM_WC_RECV, 40 + len,
                   b->qp.qpn);
}

/* Datagrams between two UD QPs: GRH, immediate, Q_Keys, the MTU */
static void test_ud_loopback(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_cmd_create_ah ah;
    struct rsim_sge sge;
    struct rsim_cqe cqe;
    uint8_t grh[40];
    uint32_t pdn, ahn;
    QSimEndpoint a, b;
    QSimMr ma, mb;
    QSimEq eq;
    QSimWr wr = {
        .wr_id = 0x8001,
        .opcode = RSIM_WR_SEND_WITH_IMM,
        .ex = cpu_to_be32(0xabcd0123),
        .remote_qkey = 0x1234,
        .nsge = 1,
    };

    pdn = qsim_pd_alloc(d);
    qsim_gid_add(d, 0, qsim_pair_gid_v4);
    qsim_eq_create(d, &eq, 1, QSIM_PAIR_EQ_DEPTH);
    qsim_endpoint_create(d, &a, RSIM_QPT_UD, pdn, eq.eqn);
    qsim_endpoint_create(d, &b, RSIM_QPT_UD, pdn, eq.eqn);
    qsim_qp_ud_ready(d, a.qp.qpn, 0x1234);
    qsim_qp_ud_ready(d, b.qp.qpn, 0x1234);
    qsim_ah_cmd(&ah, pdn);
    memcpy(ah.av.dgid, qsim_pair_gid_v4, 16);
    qsim_port_mac(d, ah.av.dmac);
    ahn = qsim_create(d, &ah, NULL);
    ma = qsim_mr_alloc(d, pdn, 8192, QSIM_ACC_LW);
    mb = qsim_mr_alloc(d, pdn, 8192, QSIM_ACC_LW);
    sge = qsim_sge(&mb, 0, 4096);

    /* a datagram with immediate data: GRH, then the payload */
    qsim_fill_pattern(d, ma.addr, 1000, 77);
    wr.ah_num = ahn;
    wr.remote_qpn = b.qp.qpn;
    wr.sge[0] = qsim_sge(&ma, 0, 1000);
    ud_datagram(d, &a, &b, &wr, &sge, 0x8101, 1000, &cqe);
    g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, a.qp.qpn);
    g_assert_cmphex(le32_to_cpu(cqe.wc_flags), ==,
                    RSIM_WC_GRH | RSIM_WC_WITH_IMM);
    g_assert_cmphex(cqe.ex, ==, cpu_to_be32(0xabcd0123));
    g_assert_cmphex(cqe.sl, ==, 0xa);                   /* RoCEv2, IPv4 */
    qtest_memread(d->qts, mb.addr, grh, sizeof(grh));
    for (int i = 0; i < 20; i++) {
        g_assert_cmpuint(grh[i], ==, 0);
    }
    g_assert_cmphex(grh[20], ==, 0x45);                 /* IPv4 header */
    g_assert_cmpuint(grh[29], ==, 17);
    g_assert(!memcmp(grh + 32, qsim_pair_gid_v4 + 12, 4));
    g_assert(!memcmp(grh + 36, qsim_pair_gid_v4 + 12, 4));
    qsim_check_pattern(d, mb.addr + 40, 1000, 77);

    /* a wrong Q_Key is dropped; the QP's own one (high bit) is not */
    qsim_post_recv(d, &b.qp.rq, 0x8102, &sge);
    wr.wr_id = 0x8002;
    wr.opcode = RSIM_WR_SEND;
    wr.remote_qkey = 0x9999;
    qsim_send(d, &a.qp, &wr);
    qsim_cq_expect(d, &a.scq, 0x8002, RSIM_WC_SUCCESS, RSIM_WC_SEND, 1000,
                   a.qp.qpn);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_DROP_NO_QP), ==, 1);
    wr.wr_id = 0x8003;
    wr.remote_qkey = 0x80000000;
    wr.sge[0] = qsim_sge(&ma, 0, 10);
    qsim_send(d, &a.qp, &wr);
    qsim_cq_expect(d, &a.scq, 0x8003, RSIM_WC_SUCCESS, RSIM_WC_SEND, 10,
                   a.qp.qpn);
    qsim_cq_poll(d, &b.rcq, &cqe);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x8102);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 40 + 10);

    /* over IPv6 the GRH bytes are the IPv6 header, and sl says so */
    qsim_gid_add(d, 1, qsim_pair_gid_v6);
    ah.av.sgid_index = 1;
    ah.av.network_type = RSIM_NET_IPV6;
    memcpy(ah.av.dgid, qsim_pair_gid_v6, 16);
    wr.ah_num = qsim_create(d, &ah, NULL);
    wr.wr_id = 0x8005;
    ud_datagram(d, &a, &b, &wr, &sge, 0x8105, 10, &cqe);
    g_assert_cmphex(cqe.sl, ==, 0x9);                   /* RoCEv2, IPv6 */
    qtest_memread(d->qts, mb.addr, grh, sizeof(grh));
    g_assert_cmphex(grh[0] >> 4, ==, 6);
    g_assert_cmpuint(grh[6], ==, 17);
    g_assert(!memcmp(grh + 8, qsim_pair_gid_v6, 16));
    g_assert(!memcmp(grh + 24, qsim_pair_gid_v6, 16));
    wr.ah_num = ahn;

    /* larger than the port MTU (1500 gives 1024): a local length error */
    wr.wr_id = 0x8004;
    wr.sge[0] = qsim_sge(&ma, 0, 1025);
    qsim_send(d, &a.qp, &wr);
    qsim_cq_expect(d, &a.scq, 0x8004, RSIM_WC_LOC_LEN_ERR, RSIM_WC_SEND,
                   1025, a.qp.qpn);
    g_assert_cmpuint(qsim_qp_state(d, a.qp.qpn), ==, RSIM_QPS_RTS);
    qsim_assert_alive(d);
    qsim_stop(d);
}

static const QSimTest tests[] = {
    { "transport/loopback-ops", test_loopback_ops, QSIM_ONCE },
    { "transport/loopback-mtu4096", test_loopback_mtu4096, QSIM_ONCE },
    { "transport/loopback-ipv6", test_loopback_ipv6, QSIM_ONCE },
    { "transport/loopback-any-mac", test_loopback_any_mac, QSIM_ONCE },
    { "transport/small-window", test_loopback_small_window, QSIM_ONCE },
    { "transport/loss-reorder", test_loopback_loss, QSIM_ONCE },
    { "transport/tail-loss-probe", test_loopback_tail_loss, QSIM_ONCE },
    { "transport/read-burst-lossy", test_loopback_read_burst, QSIM_ONCE },
    { "transport/dup-corrupt", test_loopback_dup_corrupt, QSIM_ONCE },
    { "transport/rkey-violation", test_rkey_violation, QSIM_ONCE },
    { "transport/read-out-of-range", test_read_out_of_range, QSIM_ONCE },
    { "transport/bad-lkey", test_bad_lkey, QSIM_ONCE },
    { "transport/qp-access-denied", test_qp_access_denied, QSIM_ONCE },
    { "transport/rnr", test_rnr_then_receive, QSIM_ONCE },
    { "transport/error-flush", test_error_flush, QSIM_ONCE },
    { "transport/solicited-events", test_solicited_events, QSIM_ONCE },
    { "transport/recv-cq-full", test_recv_cq_full, QSIM_ONCE },
    { "transport/retry-exceeded", test_retry_exceeded, QSIM_ONCE },
    { "ud/loopback", test_ud_loopback, QSIM_ONCE },
    { "uc/loopback", test_uc, QSIM_ONCE },
};

int main(int argc, char **argv)
{
    return qsim_main(argc, argv, tests, ARRAY_SIZE(tests));
}
