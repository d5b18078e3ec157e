/* core: all */
/*
 * Unit tests of the RC transport between two devices built plain: each
 * device's frames are carried to the other by the test (maybe losing
 * some), its clock moved by the test; a driver of the tests' own
 * (driver.c) sets up the objects and posts work.  No QEMU, no guest.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "driver.h"
#include "xport.h"

#define MEM_SIZE        (2 * MiB)
#define BUF_LEN         (64 * 1024)

typedef struct Pair {
    UDev a, b;
    UQp qa, qb;
} Pair;

static void pair_start(Pair *p)
{
    udrv_start(&p->a, 1, MEM_SIZE);
    udrv_start(&p->b, 2, MEM_SIZE);
    udrv_qp(&p->a, &p->qa, BUF_LEN);
    udrv_qp(&p->b, &p->qb, BUF_LEN);
    udrv_connect(&p->a, &p->qa, &p->b, &p->qb);
    for (unsigned i = 0; i < BUF_LEN; i++) {
        ((uint8_t *)unit_mem(p->a.s, p->qa.buf, BUF_LEN))[i] = i * 7 + 1;
        ((uint8_t *)unit_mem(p->b.s, p->qb.buf, BUF_LEN))[i] = i * 11 + 3;
    }
}

static void pair_stop(Pair *p)
{
    udrv_stop(&p->a);
    udrv_stop(&p->b);
}

/* The next completion, which must be there, with this id and status */
static struct rsim_cqe expect_cqe(UDev *d, UQp *qp, uint64_t wr_id,
                                  unsigned opcode)
{
    struct rsim_cqe c;

    g_assert_true(udrv_poll(d, qp, &c));
    g_assert_cmphex(le64_to_cpu(c.wr_id), ==, wr_id);
    g_assert_cmpuint(le32_to_cpu(c.status), ==, RSIM_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(c.opcode), ==, opcode);
    g_assert_cmpuint(le32_to_cpu(c.qp_num), ==, qp->qpn);
    return c;
}

static void expect_same(Pair *p, uint64_t a_off, uint64_t b_off, size_t len)
{
    g_assert_cmpmem(unit_mem(p->a.s, p->qa.buf + a_off, len), len,
                    unit_mem(p->b.s, p->qb.buf + b_off, len), len);
}

/* A SEND of 5000 bytes (five packets at MTU 1024) lands in the receive */
static void test_send(void)
{
    struct rsim_cqe c;
    Pair p;

    pair_start(&p);
    udrv_recv(&p.b, &p.qb, 0x10, 0, 8192);
    udrv_send(&p.a, &p.qa, 0x20, RSIM_WR_SEND, 100, 5000, 0, 0);
    g_assert_cmpuint(udrv_pump(&p.a, &p.b, 0), >=, 6);  /* 5 + the ACK */
    expect_cqe(&p.a, &p.qa, 0x20, RSIM_WC_SEND);
    c = expect_cqe(&p.b, &p.qb, 0x10, RSIM_WC_RECV);
    g_assert_cmpuint(le32_to_cpu(c.byte_len), ==, 5000);
    g_assert_cmpuint(le32_to_cpu(c.src_qp), ==, p.qa.qpn);
    expect_same(&p, 100, 0, 5000);
    g_assert_false(udrv_poll(&p.a, &p.qa, &c));
    g_assert_false(udrv_poll(&p.b, &p.qb, &c));
    g_assert_cmpuint(p.a.s->stats[RSIM_STAT_RETRANSMITS], ==, 0);
    pair_stop(&p);
}

/*
 * An RDMA WRITE into the peer's MR and an RDMA READ from it: the bytes
 * move, only the requester sees completions.
 */
static void test_write_read(void)
{
    struct rsim_cqe c;
    Pair p;

    pair_start(&p);
    udrv_send(&p.a, &p.qa, 0x30, RSIM_WR_RDMA_WRITE, 0, 20000,
              p.qb.buf + 4096, p.qb.rkey);
    udrv_send(&p.a, &p.qa, 0x31, RSIM_WR_RDMA_READ, 32768, 12000,
              p.qb.buf + 50000, p.qb.rkey);
    udrv_pump(&p.a, &p.b, 0);
    expect_cqe(&p.a, &p.qa, 0x30, RSIM_WC_RDMA_WRITE);
    c = expect_cqe(&p.a, &p.qa, 0x31, RSIM_WC_RDMA_READ);
    g_assert_cmpuint(le32_to_cpu(c.byte_len), ==, 12000);
    expect_same(&p, 0, 4096, 20000);
    expect_same(&p, 32768, 50000, 12000);
    g_assert_false(udrv_poll(&p.b, &p.qb, &c));
    pair_stop(&p);
}

/*
 * Every fifth frame lost, both ways: 20 SENDs of 3000 bytes still arrive
 * each exactly once and in order, their data intact, by NAKs, probes and
 * retransmission as the clock moves.
 */
static void test_lossy(void)
{
    struct rsim_cqe c;
    unsigned got = 0, sent = 0;
    Pair p;

    pair_start(&p);
    for (unsigned i = 0; i < 20; i++) {
        udrv_recv(&p.b, &p.qb, 0x100 + i, 3000 * i, 3000);
    }
    for (unsigned i = 0; i < 20; i++) {
        udrv_send(&p.a, &p.qa, 0x200 + i, RSIM_WR_SEND, 3000 * i, 3000, 0,
                  0);
    }
    for (unsigned ms = 0; ms < 5000 && (got < 20 || sent < 20); ms++) {
        udrv_pump(&p.a, &p.b, 5);
        while (udrv_poll(&p.b, &p.qb, &c)) {
            g_assert_cmphex(le64_to_cpu(c.wr_id), ==, 0x100 + got);
            g_assert_cmpuint(le32_to_cpu(c.status), ==, RSIM_WC_SUCCESS);
            g_assert_cmpuint(le32_to_cpu(c.byte_len), ==, 3000);
            got++;
        }
        while (udrv_poll(&p.a, &p.qa, &c)) {
            g_assert_cmphex(le64_to_cpu(c.wr_id), ==, 0x200 + sent);
            g_assert_cmpuint(le32_to_cpu(c.status), ==, RSIM_WC_SUCCESS);
            sent++;
        }
        unit_clock_advance(SCALE_MS);
    }
    g_assert_cmpuint(got, ==, 20);
    g_assert_cmpuint(sent, ==, 20);
    g_test_message("all 20 done at %" PRId64 " ms: %" PRIu64 " retransmits, %"
                   PRIu64 " probes, %" PRIu64 " duplicates",
                   unit_clock_ns() / SCALE_MS,
                   p.a.s->stats[RSIM_STAT_RETRANSMITS],
                   p.a.s->stats[RSIM_STAT_LOSS_PROBES],
                   p.b.s->stats[RSIM_STAT_DUP_REQ]);
    /* nothing more, whatever is still to come: no message twice */
    for (unsigned ms = 0; ms < 1000; ms++) {
        udrv_pump(&p.a, &p.b, 5);
        unit_clock_advance(SCALE_MS);
    }
    g_assert_false(udrv_poll(&p.a, &p.qa, &c));
    g_assert_false(udrv_poll(&p.b, &p.qb, &c));
    g_assert_cmpuint(p.b.s->stats[RSIM_STAT_RNR_NAK_SENT], ==, 0);
    expect_same(&p, 0, 0, 60000);
    g_assert_cmpuint(p.a.s->stats[RSIM_STAT_RETRANSMITS], >, 0);
    g_assert_cmpuint(p.b.s->stats[RSIM_STAT_DUP_REQ], >, 0);
    g_assert_cmpuint(unit_host(p.a.s)->guest_errors +
                     unit_host(p.b.s)->guest_errors, ==, 0);
    g_assert_cmpuint(unit_host(p.a.s)->dma_errors +
                     unit_host(p.b.s)->dma_errors, ==, 0);
    pair_stop(&p);
}

/*
 * A READ answered slowly: the responder's pace is at its slowest (the
 * round trip it assumes 200 ms, its budget 16 KiB), as losses on a busy
 * host leave it.  The requester's probes and timeouts come long before
 * the responses, and must ask for what is missing only: asking again
 * from the start of the request counted as a loss at the responder each
 * time, which kept the pace at its slowest and the READ from ever
 * completing (make check's t-perftest, ib_read_bw -q 4: 600 s).
 */
static void test_read_slow_pace(void)
{
    struct rsim_cqe c;
    bool done = false;
    unsigned ms;
    Pair p;

    pair_start(&p);
    p.b.s->tx_pace_rtt_ns = RDMA_SIM_PTO_MAX_NS;
    p.b.s->tx_cwnd = RDMA_SIM_CWND_MIN;
    udrv_send(&p.a, &p.qa, 0x40, RSIM_WR_RDMA_READ, 0, BUF_LEN, p.qb.buf,
              p.qb.rkey);
    for (ms = 0; ms < 5000 && !done; ms++) {
        udrv_pump(&p.a, &p.b, 0);
        done = udrv_poll(&p.a, &p.qa, &c);
        unit_clock_advance(SCALE_MS);
    }
    g_test_message("READ of 64 KiB done at %u ms: %" PRIu64 " probes, %"
                   PRIu64 " retransmits, %" PRIu64 " duplicates, %" PRIu64
                   " budget cuts at the responder", ms,
                   p.a.s->stats[RSIM_STAT_LOSS_PROBES],
                   p.a.s->stats[RSIM_STAT_RETRANSMITS],
                   p.b.s->stats[RSIM_STAT_DUP_REQ],
                   p.b.s->stats[RSIM_STAT_TX_BUDGET_CUTS]);
    g_assert_true(done);
    /* the requester did ask again before the responses came */
    g_assert_cmpuint(p.a.s->stats[RSIM_STAT_LOSS_PROBES], >, 0);
    g_assert_cmpuint(p.b.s->stats[RSIM_STAT_DUP_REQ], >, 0);
    g_assert_cmphex(le64_to_cpu(c.wr_id), ==, 0x40);
    g_assert_cmpuint(le32_to_cpu(c.status), ==, RSIM_WC_SUCCESS);
    expect_same(&p, 0, 0, BUF_LEN);
    /* nothing was lost, so the responder saw no loss */
    g_assert_cmpuint(p.b.s->stats[RSIM_STAT_TX_BUDGET_CUTS], ==, 0);
    pair_stop(&p);
}

/*
 * A send fails while its completion cannot be written (the CQ is full:
 * 63 RDMA WRITEs fill its 64 slots, then one with a key the responder
 * refuses is NAKed).  The QP fails when the driver makes room: the WRITE
 * completes with REM_ACCESS_ERR and the QP is in ERR, and the retry that
 * found it failing counts no timeout, no retransmission and no cut of
 * the port's budget (a failed QP sends nothing again).
 */
static void test_cq_full_fail(void)
{
    struct rsim_cqe c;
    RdmaSimQp *qp;
    Pair p;

    pair_start(&p);
    for (unsigned round = 0; round < 3; round++) {
        for (unsigned i = 0; i < 21; i++) {
            udrv_send(&p.a, &p.qa, round * 21 + i, RSIM_WR_RDMA_WRITE, 0, 8,
                      p.qb.buf, p.qb.rkey);
        }
        udrv_pump(&p.a, &p.b, 0);
    }
    udrv_send(&p.a, &p.qa, 100, RSIM_WR_RDMA_WRITE, 0, 8, p.qb.buf,
              p.qb.rkey ^ 0x100);
    udrv_pump(&p.a, &p.b, 0);
    qp = rdma_sim_qp_lookup(p.a.s, p.qa.qpn);
    g_assert_cmpuint(qp->state, ==, RSIM_QPS_RTS);
    g_assert_true(qp->x->cq_stalled);

    expect_cqe(&p.a, &p.qa, 0, RSIM_WC_RDMA_WRITE);
    unit_clock_advance(2 * SCALE_MS);
    unit_run_bhs();
    g_assert_cmpuint(qp->state, ==, RSIM_QPS_ERR);
    for (unsigned i = 1; i < 63; i++) {
        expect_cqe(&p.a, &p.qa, i, RSIM_WC_RDMA_WRITE);
    }
    g_assert_true(udrv_poll(&p.a, &p.qa, &c));
    g_assert_cmphex(le64_to_cpu(c.wr_id), ==, 100);
    g_assert_cmpuint(le32_to_cpu(c.status), ==, RSIM_WC_REM_ACCESS_ERR);
    g_assert_cmpuint(p.a.s->stats[RSIM_STAT_TIMEOUTS], ==, 0);
    g_assert_cmpuint(p.a.s->stats[RSIM_STAT_RETRANSMITS], ==, 0);
    g_assert_cmpuint(p.a.s->stats[RSIM_STAT_TX_BUDGET_CUTS], ==, 0);
    g_assert_false(qp->on_work_list);
    unit_clock_advance(1000 * SCALE_MS);
    unit_run_bhs();
    g_assert_cmpuint(p.a.s->stats[RSIM_STAT_TIMEOUTS], ==, 0);
    pair_stop(&p);
}

/*
 * Arming a CQ that holds a completion its consumer has not taken fires the
 * event at once (a doorbell that arrives after the completion, as out of
 * process it can, must not leave the consumer asleep); arming an empty one
 * waits for the next completion; polling it empty and arming again waits.
 */
static void test_arm_pending(void)
{
    Pair p;
    RdmaSimCq *cq;
    RdmaSimEq *eq;
    uint32_t tail;

    pair_start(&p);
    cq = rdma_sim_cq_lookup(p.b.s, p.qb.cqn);
    g_assert_nonnull(cq);
    eq = &p.b.s->eqs[cq->eqn];
    tail = eq->tail;

    /* a completion arrives in B's CQ, unarmed: no event */
    udrv_recv(&p.b, &p.qb, 0x51, 0, 64);
    udrv_send(&p.a, &p.qa, 0x50, RSIM_WR_SEND, 0, 64, 0, 0);
    udrv_pump(&p.a, &p.b, 0);
    g_assert_cmpuint(eq->tail, ==, tail);

    /* armed with it still there: the event at once, the CQ disarmed */
    rdma_sim_db_write(p.b.s, A_RSIM_DB_CQ, p.qb.cqn |
                      (RSIM_CQ_ARM_NEXT << R_RSIM_DB_CQ_ARM_SHIFT));
    g_assert_cmpuint(eq->tail, ==, tail + 1);
    g_assert_cmpuint(cq->arm, ==, RSIM_CQ_ARM_NONE);

    /* taken, then armed: it waits for the next completion */
    expect_cqe(&p.b, &p.qb, 0x51, RSIM_WC_RECV);
    rdma_sim_db_write(p.b.s, A_RSIM_DB_CQ, p.qb.cqn |
                      (RSIM_CQ_ARM_NEXT << R_RSIM_DB_CQ_ARM_SHIFT));
    g_assert_cmpuint(eq->tail, ==, tail + 1);
    g_assert_cmpuint(cq->arm, ==, RSIM_CQ_ARM_NEXT);
    udrv_recv(&p.b, &p.qb, 0x53, 0, 64);
    udrv_send(&p.a, &p.qa, 0x52, RSIM_WR_SEND, 0, 64, 0, 0);
    udrv_pump(&p.a, &p.b, 0);
    g_assert_cmpuint(eq->tail, ==, tail + 2);
    expect_cqe(&p.b, &p.qb, 0x53, RSIM_WC_RECV);
    pair_stop(&p);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/rc/send", test_send);
    g_test_add_func("/rc/write-read", test_write_read);
    g_test_add_func("/rc/lossy", test_lossy);
    g_test_add_func("/rc/read-slow-pace", test_read_slow_pace);
    g_test_add_func("/rc/cq-full-fail", test_cq_full_fail);
    g_test_add_func("/rc/arm-pending", test_arm_pending);
    return g_test_run();
}
