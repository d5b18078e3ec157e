/*
 * QTest testcase for the rdma-sim RDMA NIC: work and completion queues,
 * event queues, doorbells and MSI-X
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqos/rdma-sim.h"

static const struct {
    uint32_t wr;
    uint32_t wc;
} send_ops[] = {
    { RSIM_WR_SEND, RSIM_WC_SEND },
    { RSIM_WR_RDMA_WRITE, RSIM_WC_RDMA_WRITE },
    { RSIM_WR_RDMA_READ, RSIM_WC_RDMA_READ },
    { RSIM_WR_ATOMIC_FETCH_AND_ADD, RSIM_WC_FETCH_ADD },
    { RSIM_WR_ATOMIC_CMP_AND_SWP, RSIM_WC_COMP_SWAP },
    { RSIM_WR_SEND_WITH_IMM, RSIM_WC_SEND },
    { RSIM_WR_RDMA_WRITE_WITH_IMM, RSIM_WC_RDMA_WRITE },
    { RSIM_WR_LOCAL_INV, RSIM_WC_LOCAL_INV },
    { RSIM_WR_SEND_WITH_INV, RSIM_WC_SEND },
    { RSIM_WR_REG_MR, RSIM_WC_REG_MR },
};

/*
 * Posted send and receive WQEs complete with WR_FLUSH_ERR when the QP
 * enters ERR, and later ones as they are posted.  Rings and CQ at the
 * given page list level, several pages each.
 */
static void test_queue_flush(const char *machine, unsigned level)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_cmd_create_qp c;
    struct rsim_cqe e;
    uint32_t pdn, cqn, qpn;
    const unsigned ns = 20, nr = 10;
    QSimRing cq;
    QSimQp qp;
    QSimEq eq;

    pdn = qsim_pd_alloc(d);
    qsim_eq_create(d, &eq, 1, 16);
    cqn = qsim_cq_create(d, &cq, eq.eqn, level, 6); /* 64 x 64: 2 pages */
    qsim_ring_init(d, &qp.sq, level, 5, 8);         /* 32 x 256: 3 pages */
    qsim_ring_init(d, &qp.rq, level, 6, 6);         /* 64 x 64: 2 pages */
    qsim_qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &qp);
    qpn = qsim_create(d, &c, NULL);
    qsim_qp_rc_to_init(d, qpn);

    for (unsigned i = 0; i < ns; i++) {
        qsim_post_empty(d, &qp.sq, 0x1000 + i,
                        send_ops[i % ARRAY_SIZE(send_ops)].wr);
    }
    for (unsigned i = 0; i < nr; i++) {
        qsim_post_recv(d, &qp.rq, 0x2000 + i, NULL);
    }
    /* INIT does not execute anything */
    qsim_sq_doorbell(d, 0, qpn);
    qsim_db(d, 0, A_RSIM_DB_RQ, qpn);
    qsim_cq_expect_empty(d, &cq);
    g_assert_cmpuint(qsim_ring_cons(d, &qp.sq), ==, 0);
    g_assert_cmpuint(qsim_ring_cons(d, &qp.rq), ==, 0);

    qsim_qp_move(d, qpn, RSIM_QPS_ERR);
    for (unsigned i = 0; i < ns; i++) {
        qsim_cq_poll(d, &cq, &e);
        qsim_cqe_check(&e, 0x1000 + i, RSIM_WC_WR_FLUSH_ERR,
                       send_ops[i % ARRAY_SIZE(send_ops)].wc, 0, qpn);
        g_assert_cmpuint(e.port_num, ==, 1);
    }
    for (unsigned i = 0; i < nr; i++) {
        qsim_cq_expect_flush(d, &cq, 0x2000 + i, RSIM_WC_RECV, qpn);
    }
    qsim_cq_expect_empty(d, &cq);
    g_assert_cmpuint(qsim_ring_prod(d, &cq), ==, ns + nr);
    g_assert_cmpuint(qsim_ring_cons(d, &qp.sq), ==, ns);
    g_assert_cmpuint(qsim_ring_cons(d, &qp.rq), ==, nr);

    /* posted in ERR: flushed on the doorbell, wrapping the rings */
    for (unsigned round = 0; round < 3; round++) {
        for (unsigned i = 0; i < 10; i++) {
            qsim_post_empty(d, &qp.sq, 0x3000 + round * 16 + i, RSIM_WR_SEND);
        }
        qsim_post_recv(d, &qp.rq, 0x4000 + round, NULL);
        qsim_sq_doorbell(d, 0, qpn);
        for (unsigned i = 0; i < 10; i++) {
            qsim_cq_expect_flush(d, &cq, 0x3000 + round * 16 + i, RSIM_WC_SEND,
                                 qpn);
        }
        qsim_cq_expect_flush(d, &cq, 0x4000 + round, RSIM_WC_RECV, qpn);
        qsim_cq_expect_empty(d, &cq);
    }
    /* the receive doorbell flushes as well */
    qsim_post_recv(d, &qp.rq, 0x5000, NULL);
    qsim_db(d, 0, A_RSIM_DB_RQ, qpn);
    qsim_cq_expect_flush(d, &cq, 0x5000, RSIM_WC_RECV, qpn);
    g_assert_cmpuint(qsim_ring_cons(d, &qp.sq), ==, (ns + 30) % 32);
    g_assert_cmpuint(qsim_ring_cons(d, &qp.rq), ==, (nr + 4) % 64);
    g_assert_cmpuint(qsim_ring_prod(d, &cq), ==, (ns + nr + 34) % 64);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_COMPLETIONS), ==, ns + nr + 34);

    /* RESET empties the rings */
    qsim_qp_move(d, qpn, RSIM_QPS_RESET);
    g_assert_cmpuint(qsim_ring_prod(d, &qp.sq), ==, 0);
    g_assert_cmpuint(qsim_ring_cons(d, &qp.sq), ==, 0);
    g_assert_cmpuint(qsim_ring_prod(d, &qp.rq), ==, 0);
    g_assert_cmpuint(qsim_ring_cons(d, &qp.rq), ==, 0);
    /* destroying a QP discards work without completions */
    qsim_qp_rc_to_init(d, qpn);
    qsim_post_empty(d, &qp.sq, 0x6000, RSIM_WR_SEND);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_QP, qpn, RSIM_STS_OK);
    qsim_sq_doorbell(d, 0, qpn);
    qsim_cq_expect_empty(d, &cq);
    qsim_aeq_expect_none(d);
    qsim_stop(d);
}

static void test_queue_flush_l0(const char *machine)
{
    test_queue_flush(machine, RSIM_PBL_LEVEL0);
}

static void test_queue_flush_l1(const char *machine)
{
    test_queue_flush(machine, RSIM_PBL_LEVEL1);
}

static void test_queue_flush_l2(const char *machine)
{
    test_queue_flush(machine, RSIM_PBL_LEVEL2);
}

/* CQ arming, COMPLETION events and the EQ's MSI-X vector */
static void test_queue_cq_eq_msix(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_cmd_arm_cq ac;
    QSimEnv env;
    uint32_t qpn;

    qsim_msix_setup(d);
    qsim_env_setup(d, &env, RSIM_PBL_LEVEL0, 5);
    qpn = env.qp.qpn;
    qsim_qp_move(d, qpn, RSIM_QPS_ERR);

    /* armed EQ, armed CQ: event + interrupt */
    qsim_eq_doorbell(d, &env.eq, true);
    qsim_cq_arm_db(d, 0, env.cqn, RSIM_CQ_ARM_NEXT);
    qsim_flush_sends(d, &env, 1, 1);
    qsim_cq_expect_flush(d, &env.cq, 1, RSIM_WC_SEND, qpn);
    {
        struct rsim_eqe e;

        qtest_memread(d->qts, env.eq.addr, &e, sizeof(e));
        g_assert_cmphex(le32_to_cpu(e.dw0), ==, RSIM_EV_COMPLETION << 8 |
                        R_RSIM_EQE_HDR_PHASE_MASK);
    }
    qsim_eq_expect(d, &env.eq, RSIM_EV_COMPLETION, env.cqn);
    g_assert_true(qsim_irq_fired(d, 1));
    g_assert_false(qsim_irq_fired(d, 0)); /* INTR_MASK.ADMIN is set */

    /* the CQ fired and is disarmed: no event */
    qsim_flush_sends(d, &env, 1, 2);
    qsim_cq_expect_flush(d, &env.cq, 2, RSIM_WC_SEND, qpn);
    qsim_eq_expect_none(d, &env.eq);
    g_assert_false(qsim_irq_fired(d, 1));

    /* re-armed CQ (ARM_CQ), EQ not armed: event, no interrupt */
    QSIM_CMD_INIT(ac, RSIM_CMD_ARM_CQ);
    ac.cqn = cpu_to_le32(env.cqn);
    ac.arm = cpu_to_le32(RSIM_CQ_ARM_NEXT);
    qsim_cmd_expect(d, &ac, RSIM_STS_OK);
    qsim_flush_sends(d, &env, 1, 3);
    qsim_cq_expect_flush(d, &env.cq, 3, RSIM_WC_SEND, qpn);
    qsim_eq_expect(d, &env.eq, RSIM_EV_COMPLETION, env.cqn);
    g_assert_false(qsim_irq_fired(d, 1));

    /* arming while events are pending beyond CONS signals at once */
    env.eq.head--;
    qsim_eq_doorbell(d, &env.eq, true);
    g_assert_true(qsim_irq_fired(d, 1));
    env.eq.head++;
    /* armed with nothing pending: nothing */
    qsim_eq_doorbell(d, &env.eq, true);
    g_assert_false(qsim_irq_fired(d, 1));

    /* SOLICITED fires on an error completion */
    qsim_cq_arm_db(d, 0, env.cqn, RSIM_CQ_ARM_SOLICITED);
    qsim_flush_sends(d, &env, 1, 4);
    qsim_cq_expect_flush(d, &env.cq, 4, RSIM_WC_SEND, qpn);
    qsim_eq_expect(d, &env.eq, RSIM_EV_COMPLETION, env.cqn);
    g_assert_true(qsim_irq_fired(d, 1));

    /* SOLICITED does not weaken a pending NEXT; NONE changes nothing */
    qsim_eq_doorbell(d, &env.eq, true);
    qsim_cq_arm_db(d, 0, env.cqn, RSIM_CQ_ARM_NEXT);
    qsim_cq_arm_db(d, 0, env.cqn, RSIM_CQ_ARM_SOLICITED);
    qsim_cq_arm_db(d, 0, env.cqn, RSIM_CQ_ARM_NONE);
    qsim_cq_arm_db(d, 0, env.cqn, 3);               /* invalid: ignored */
    qsim_flush_sends(d, &env, 1, 5);
    qsim_cq_expect_flush(d, &env.cq, 5, RSIM_WC_SEND, qpn);
    qsim_eq_expect(d, &env.eq, RSIM_EV_COMPLETION, env.cqn);
    g_assert_true(qsim_irq_fired(d, 1));

    /* one event per arm: many completions, one event */
    qsim_eq_doorbell(d, &env.eq, true);
    qsim_cq_arm_db(d, 0, env.cqn, RSIM_CQ_ARM_NEXT);
    qsim_flush_sends(d, &env, 5, 6);
    for (unsigned i = 0; i < 5; i++) {
        qsim_cq_expect_flush(d, &env.cq, 6 + i, RSIM_WC_SEND, qpn);
    }
    qsim_eq_expect(d, &env.eq, RSIM_EV_COMPLETION, env.cqn);
    qsim_eq_expect_none(d, &env.eq);
    g_assert_true(qsim_irq_fired(d, 1));
    g_assert_false(qsim_irq_fired(d, 1));

    /* many arm/fire cycles wrap the EQ (16 entries): phases flip */
    for (unsigned i = 0; i < 40; i++) {
        qsim_eq_doorbell(d, &env.eq, true);
        qsim_cq_arm_db(d, 0, env.cqn, RSIM_CQ_ARM_NEXT);
        qsim_flush_sends(d, &env, 1, 0x100 + i);
        qsim_cq_expect_flush(d, &env.cq, 0x100 + i, RSIM_WC_SEND, qpn);
        qsim_eq_expect(d, &env.eq, RSIM_EV_COMPLETION, env.cqn);
        g_assert_true(qsim_irq_fired(d, 1));
    }
    g_assert_false(qsim_irq_fired(d, 0));
    qsim_aeq_expect_none(d);
    qsim_stop(d);
}

/* A full EQ keeps events inside the device until the driver frees slots. */
static void test_queue_eq_full(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_eqe e;
    uint32_t pdn, cqa, cqb;
    QSimRing ra, rb;
    QSimQp qa, qb;
    QSimEq eq;

    qsim_msix_setup(d);
    pdn = qsim_pd_alloc(d);
    qsim_eq_create(d, &eq, 3, 2);           /* holds one event */
    cqa = qsim_cq_create(d, &ra, eq.eqn, RSIM_PBL_LEVEL0, 3);
    cqb = qsim_cq_create(d, &rb, eq.eqn, RSIM_PBL_LEVEL1, 3);
    qsim_qp_create(d, &qa, RSIM_QPT_UD, pdn, cqa, RSIM_PBL_LEVEL0);
    qsim_qp_create(d, &qb, RSIM_QPT_UD, pdn, cqb, RSIM_PBL_LEVEL0);
    {
        struct rsim_qp_attr a;

        qsim_attr_init(&a, RSIM_QPS_INIT, RSIM_QP_PKEY_INDEX | RSIM_QP_PORT |
                       RSIM_QP_QKEY);
        a.port_num = 1;
        qsim_qp_modify_ok(d, qa.qpn, &a);
        qsim_qp_modify_ok(d, qb.qpn, &a);
    }
    qsim_qp_move(d, qa.qpn, RSIM_QPS_ERR);
    qsim_qp_move(d, qb.qpn, RSIM_QPS_ERR);

    qsim_eq_doorbell(d, &eq, true);
    qsim_cq_arm_db(d, 0, cqa, RSIM_CQ_ARM_NEXT);
    qsim_cq_arm_db(d, 0, cqb, RSIM_CQ_ARM_NEXT);
    qsim_post_empty(d, &qa.sq, 0xa1, RSIM_WR_SEND);
    qsim_sq_doorbell(d, 0, qa.qpn);
    qsim_post_empty(d, &qb.sq, 0xb1, RSIM_WR_SEND);
    qsim_sq_doorbell(d, 0, qb.qpn);
    qsim_cq_expect_flush(d, &ra, 0xa1, RSIM_WC_SEND, qa.qpn);
    qsim_cq_expect_flush(d, &rb, 0xb1, RSIM_WC_SEND, qb.qpn);
    /* slot 0: CQ A; CQ B's event waits */
    g_assert_true(qsim_eq_poll(d, &eq, &e, QSIM_POLL_US));
    g_assert_cmpuint(le32_to_cpu(e.object), ==, cqa);
    g_assert_true(qsim_irq_fired(d, 3));
    qsim_settle(d);
    g_assert_cmphex(qtest_readl(d->qts, eq.addr + 16), ==, 0);
    /* the consumer index frees the slot: the event is written */
    qsim_eq_doorbell(d, &eq, true);
    qsim_eq_expect(d, &eq, RSIM_EV_COMPLETION, cqb);
    g_assert_true(qsim_irq_fired(d, 3));
    /* again, into slot 0 with phase 0 */
    qsim_eq_doorbell(d, &eq, false);
    qsim_cq_arm_db(d, 0, cqa, RSIM_CQ_ARM_NEXT);
    qsim_cq_arm_db(d, 0, cqb, RSIM_CQ_ARM_NEXT);
    qsim_post_empty(d, &qb.sq, 0xb2, RSIM_WR_SEND);
    qsim_sq_doorbell(d, 0, qb.qpn);
    qsim_cq_expect_flush(d, &rb, 0xb2, RSIM_WC_SEND, qb.qpn);
    qsim_post_empty(d, &qa.sq, 0xa2, RSIM_WR_SEND);
    qsim_sq_doorbell(d, 0, qa.qpn);
    qsim_cq_expect_flush(d, &ra, 0xa2, RSIM_WC_SEND, qa.qpn);
    g_assert_true(qsim_eq_poll(d, &eq, &e, QSIM_POLL_US));
    g_assert_cmphex(le32_to_cpu(e.dw0), ==, RSIM_EV_COMPLETION << 8);
    g_assert_cmpuint(le32_to_cpu(e.object), ==, cqb);
    qsim_eq_doorbell(d, &eq, false);
    qsim_eq_expect(d, &eq, RSIM_EV_COMPLETION, cqa);
    g_assert_false(qsim_irq_fired(d, 3));   /* not armed */
    /* a waiting event of a destroyed CQ is dropped */
    qsim_eq_doorbell(d, &eq, false);
    qsim_cq_arm_db(d, 0, cqa, RSIM_CQ_ARM_NEXT);
    qsim_cq_arm_db(d, 0, cqb, RSIM_CQ_ARM_NEXT);
    qsim_post_empty(d, &qa.sq, 0xa3, RSIM_WR_SEND);
    qsim_sq_doorbell(d, 0, qa.qpn);
    qsim_post_empty(d, &qb.sq, 0xb3, RSIM_WR_SEND);
    qsim_sq_doorbell(d, 0, qb.qpn);
    qsim_cq_expect_flush(d, &ra, 0xa3, RSIM_WC_SEND, qa.qpn);
    qsim_cq_expect_flush(d, &rb, 0xb3, RSIM_WC_SEND, qb.qpn);
    qsim_eq_expect(d, &eq, RSIM_EV_COMPLETION, cqa);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_QP, qb.qpn, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_CQ, cqb, RSIM_STS_OK);
    qsim_eq_doorbell(d, &eq, false);
    qsim_eq_expect_none(d, &eq);
    /* EQ_DB for a missing EQ or beyond the depth: ignored */
    qsim_wr(d, A_RSIM_EQ_DB, 5 << R_RSIM_EQ_DB_EQN_SHIFT);
    qsim_wr(d, A_RSIM_EQ_DB, eq.eqn << R_RSIM_EQ_DB_EQN_SHIFT | 2);
    qsim_wr(d, A_RSIM_EQ_DB, 0xffffffff);
    qsim_assert_alive(d);
    qsim_stop(d);
}

/* A CQ that overflows: CQ_ERR, nothing overwritten, resumes when drained */
static void test_queue_cq_overflow(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_cqe e;
    QSimEnv env;
    uint32_t qpn;

    qsim_env_setup(d, &env, RSIM_PBL_LEVEL0, 2);    /* holds 3 */
    qpn = env.qp.qpn;
    qsim_flush_sends(d, &env, 5, 0x10);
    qsim_aeq_expect(d, RSIM_EV_CQ_ERR, env.cqn);
    g_assert_cmpuint(qsim_ring_prod(d, &env.cq), ==, 3);
    g_assert_cmpuint(qsim_ring_cons(d, &env.qp.sq), ==, 3);
    for (unsigned i = 0; i < 3; i++) {
        qsim_elem_read(d, &env.cq, i, &e, sizeof(e));
        qsim_cqe_check(&e, 0x10 + i, RSIM_WC_WR_FLUSH_ERR, RSIM_WC_SEND, 0,
                       qpn);
    }
    /* the free slot is untouched */
    qsim_elem_read(d, &env.cq, 3, &e, sizeof(e));
    g_assert_cmphex(le64_to_cpu(e.wr_id), ==, 0);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_CQ_OVERFLOW), ==, 1);
    /* another doorbell while still full: no second event */
    qsim_sq_doorbell(d, 0, qpn);
    qsim_aeq_expect_none(d);

    /* consume all three, ring: the rest arrives */
    env.cq.cons = 3;
    qsim_ring_set_cons(d, &env.cq, 3);
    qsim_sq_doorbell(d, 0, qpn);
    qsim_cq_expect_flush(d, &env.cq, 0x13, RSIM_WC_SEND, qpn);
    qsim_cq_expect_flush(d, &env.cq, 0x14, RSIM_WC_SEND, qpn);
    g_assert_cmpuint(qsim_ring_prod(d, &env.cq), ==, 1);
    g_assert_cmpuint(qsim_ring_cons(d, &env.qp.sq), ==, 5);
    qsim_aeq_expect_none(d);

    /* a new overflow is reported again */
    qsim_flush_sends(d, &env, 4, 0x20);
    qsim_aeq_expect(d, RSIM_EV_CQ_ERR, env.cqn);
    for (unsigned i = 0; i < 3; i++) {
        qsim_cq_expect_flush(d, &env.cq, 0x20 + i, RSIM_WC_SEND, qpn);
    }
    qsim_sq_doorbell(d, 0, qpn);
    qsim_cq_expect_flush(d, &env.cq, 0x23, RSIM_WC_SEND, qpn);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_CQ_OVERFLOW), ==, 2);
    qsim_aeq_expect_none(d);
    qsim_assert_alive(d);
    qsim_stop(d);
}

/* A CQ whose memory is not accessible: CQ_ERR (data 1), the device lives */
static void test_queue_cq_bad_ring(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_cmd_create_cq c;
    struct rsim_create_resp r;
    QSimRing cq;
    QSimEnv env;
    QSimQp qp;

    qsim_env_setup(d, &env, RSIM_PBL_LEVEL0, 3);
    qsim_ring_init(d, &cq, RSIM_PBL_LEVEL0, 3, RSIM_CQE_LOG2_SLOT);
    qsim_cq_cmd(&c, env.eq.eqn, &cq);
    c.q.addr = cpu_to_le64(QSIM_UNMAPPED);  /* level 0 is not read here */
    qsim_assert_sts(qsim_cmd_exec(d, &c, &r), RSIM_STS_OK);
    qsim_qp_create(d, &qp, RSIM_QPT_RC, env.pdn, qsim_resp_handle(&r),
                   RSIM_PBL_LEVEL1);
    qsim_qp_rc_to_init(d, qp.qpn);
    qsim_post_empty(d, &qp.sq, 1, RSIM_WR_SEND);
    qsim_post_empty(d, &qp.sq, 2, RSIM_WR_SEND);
    qsim_qp_move(d, qp.qpn, RSIM_QPS_ERR);
    qsim_aeq_expect_data(d, RSIM_EV_CQ_ERR, qsim_resp_handle(&r), 1);
    g_assert_cmpuint(qsim_ring_cons(d, &qp.sq), ==, 0);
    qsim_sq_doorbell(d, 0, qp.qpn);
    qsim_aeq_expect_none(d);
    qsim_assert_alive(d);
    /* the other CQ still works */
    qsim_flush_sends(d, &env, 1, 7);
    qsim_cq_expect_flush(d, &env.cq, 7, RSIM_WC_SEND, env.qp.qpn);
    qsim_stop(d);
}

/* An AEQ without room drops events and sets DEV_STATUS.AEQ_OVERFLOW. */
static void test_queue_aeq_overflow(const char *machine)
{
    QSimDev *d = qsim_start(machine, NULL, NULL);
    struct rsim_qp_attr a;
    struct rsim_eqe e;
    QSimEnv env;

    qsim_reset(d);
    qsim_enable(d, 8, 8, 2);                /* holds one event */
    qsim_gid_add_v4(d, 0, 1);
    qsim_env_setup(d, &env, RSIM_PBL_LEVEL0, 4);
    qsim_attr_rc_rtr(&a);
    qsim_qp_modify_ok(d, env.qp.qpn, &a);
    qsim_attr_rc_rts(&a);
    qsim_qp_modify_ok(d, env.qp.qpn, &a);
    /* the port event fills the AEQ; SQ_DRAINED is dropped */
    qsim_attr_init(&a, RSIM_QPS_SQD, RSIM_QP_EN_SQD_ASYNC_NOTIFY);
    a.en_sqd_async_notify = 1;
    qsim_qp_modify_ok(d, env.qp.qpn, &a);
    qsim_settle(d);
    g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_STATUS), ==,
                    QSIM_READY | R_RSIM_DEV_STATUS_AEQ_OVERFLOW_MASK);
    g_assert_cmpuint(qsim_rd(d, A_RSIM_AEQ_TAIL), ==, 1);
    g_assert_cmphex(qtest_readl(d->qts, d->aeq + 16), ==, 0);
    qsim_aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    /* room again: the next event is written, the flag is sticky */
    qsim_qp_move(d, env.qp.qpn, RSIM_QPS_RTS);
    qsim_qp_modify_ok(d, env.qp.qpn, &a);
    g_assert_true(qsim_aeq_poll(d, &e, QSIM_POLL_US));
    g_assert_cmphex(le32_to_cpu(e.dw0), ==, RSIM_EV_SQ_DRAINED << 8 |
                    R_RSIM_EQE_HDR_PHASE_MASK);
    g_assert_cmpuint(le32_to_cpu(e.object), ==, env.qp.qpn);
    qsim_qp_move(d, env.qp.qpn, RSIM_QPS_RTS);
    qsim_qp_modify_ok(d, env.qp.qpn, &a);
    g_assert_true(qsim_aeq_poll(d, &e, QSIM_POLL_US)); /* slot 0, phase 0 */
    g_assert_cmphex(le32_to_cpu(e.dw0), ==, RSIM_EV_SQ_DRAINED << 8);
    g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_STATUS), ==,
                    QSIM_READY | R_RSIM_DEV_STATUS_AEQ_OVERFLOW_MASK);
    qsim_reset(d);
    qsim_stop(d);
}

/* A completion EQ in memory that does not exist: the device goes fatal. */
static void test_queue_eq_bad_ring(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_cmd_create_eq ec;
    struct rsim_cmd_create_cq cc;
    struct rsim_create_resp r;
    uint32_t pdn, cqn;
    QSimRing cq;
    QSimQp qp;

    pdn = qsim_pd_alloc(d);
    qsim_eq_cmd(&ec, 1, QSIM_UNMAPPED, 8);
    qsim_assert_sts(qsim_cmd_exec(d, &ec, &r), RSIM_STS_OK);
    qsim_ring_init(d, &cq, RSIM_PBL_LEVEL0, 3, RSIM_CQE_LOG2_SLOT);
    qsim_cq_cmd(&cc, qsim_resp_handle(&r), &cq);
    cqn = qsim_create(d, &cc, NULL);
    qsim_qp_create(d, &qp, RSIM_QPT_RC, pdn, cqn, RSIM_PBL_LEVEL0);
    qsim_qp_rc_to_init(d, qp.qpn);
    qsim_qp_move(d, qp.qpn, RSIM_QPS_ERR);
    /* no event without arming: nothing happens */
    qsim_post_empty(d, &qp.sq, 1, RSIM_WR_SEND);
    qsim_sq_doorbell(d, 0, qp.qpn);
    qsim_cq_expect_flush(d, &cq, 1, RSIM_WC_SEND, qp.qpn);
    qsim_assert_alive(d);
    /* the event write fails: DEVICE_FATAL (EQ_DMA), READY drops */
    qsim_cq_arm_db(d, 0, cqn, RSIM_CQ_ARM_NEXT);
    qsim_post_empty(d, &qp.sq, 2, RSIM_WR_SEND);
    qsim_sq_doorbell(d, 0, qp.qpn);
    qsim_cq_expect_flush(d, &cq, 2, RSIM_WC_SEND, qp.qpn);
    g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_STATUS), ==,
                    QSIM_FATAL_STATUS(RSIM_FATAL_EQ_DMA));
    qsim_aeq_expect_data(d, RSIM_EV_DEVICE_FATAL, 0, RSIM_FATAL_EQ_DMA);
    /* fatal: commands are not executed, doorbells ignored */
    {
        struct rsim_admin_cmd c;
        struct rsim_admin_cqe cqe;

        QSIM_CMD_INIT(c, RSIM_CMD_NOP);
        qsim_aq_put(d, &c);
        qsim_wr(d, A_RSIM_AQ_TAIL, d->aq_tail);
        qsim_post_empty(d, &qp.sq, 3, RSIM_WR_SEND);
        qsim_sq_doorbell(d, 0, qp.qpn);
        qsim_settle(d);
        g_assert_false(qsim_acq_poll(d, &cqe, 0));
        qsim_cq_expect_empty(d, &cq);
    }
    qsim_bringup(d);
    qsim_assert_alive(d);
    qsim_stop(d);
}

static void test_doorbells(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_cmd_create_cq cc;
    struct rsim_cmd_create_qp qc;
    uint32_t pdn, cqn;
    QSimRing cq;
    QSimEq eq;
    QSimQp qp;

    pdn = qsim_pd_alloc(d);
    qsim_eq_create(d, &eq, 1, 8);
    qsim_ring_init(d, &cq, RSIM_PBL_LEVEL0, 4, RSIM_CQE_LOG2_SLOT);
    qsim_cq_cmd(&cc, eq.eqn, &cq);
    cc.db_page = cpu_to_le32(3);
    cqn = qsim_create(d, &cc, NULL);
    qsim_qp_rings(d, &qp, RSIM_PBL_LEVEL0);
    qsim_qp_cmd(&qc, RSIM_QPT_RC, pdn, cqn, cqn, &qp);
    qc.db_page = cpu_to_le16(3);
    qp.qpn = qsim_create(d, &qc, NULL);
    qsim_qp_rc_to_init(d, qp.qpn);
    qsim_qp_move(d, qp.qpn, RSIM_QPS_ERR);

    /* another user's page: ignored */
    qsim_post_empty(d, &qp.sq, 1, RSIM_WR_SEND);
    qsim_sq_doorbell(d, 5, qp.qpn);
    qsim_db(d, 5, A_RSIM_DB_RQ, qp.qpn);
    qsim_db(d, 63, A_RSIM_DB_SQ, qp.qpn);
    qsim_cq_expect_empty(d, &cq);
    g_assert_cmpuint(qsim_ring_cons(d, &qp.sq), ==, 0);
    /* its own page and the kernel's page 0 work */
    qsim_sq_doorbell(d, 3, qp.qpn);
    qsim_cq_expect_flush(d, &cq, 1, RSIM_WC_SEND, qp.qpn);
    qsim_post_empty(d, &qp.sq, 2, RSIM_WR_SEND);
    qsim_sq_doorbell(d, 0, qp.qpn);
    qsim_cq_expect_flush(d, &cq, 2, RSIM_WC_SEND, qp.qpn);

    /* CQ doorbell from a foreign page: the CQ stays disarmed */
    qsim_eq_doorbell(d, &eq, true);
    qsim_cq_arm_db(d, 4, cqn, RSIM_CQ_ARM_NEXT);
    qsim_post_empty(d, &qp.sq, 3, RSIM_WR_SEND);
    qsim_sq_doorbell(d, 3, qp.qpn);
    qsim_cq_expect_flush(d, &cq, 3, RSIM_WC_SEND, qp.qpn);
    qsim_eq_expect_none(d, &eq);
    qsim_cq_arm_db(d, 3, cqn, RSIM_CQ_ARM_NEXT);
    qsim_post_empty(d, &qp.sq, 4, RSIM_WR_SEND);
    qsim_sq_doorbell(d, 3, qp.qpn);
    qsim_cq_expect_flush(d, &cq, 4, RSIM_WC_SEND, qp.qpn);
    qsim_eq_expect(d, &eq, RSIM_EV_COMPLETION, cqn);

    /* objects that do not exist, offsets that are not doorbells */
    qsim_post_empty(d, &qp.sq, 5, RSIM_WR_SEND);
    for (unsigned page = 0; page < 64; page += 21) {
        qsim_db(d, page, A_RSIM_DB_SQ, 999);
        qsim_db(d, page, A_RSIM_DB_SQ, 0);
        qsim_db(d, page, A_RSIM_DB_SQ, 1);
        qsim_db(d, page, A_RSIM_DB_SQ, 0xffffffff);
        qsim_db(d, page, A_RSIM_DB_RQ, 0x7fffffff);
        qsim_db(d, page, A_RSIM_DB_SRQ, 77);
        qsim_db(d, page, A_RSIM_DB_SRQ, 0xffffffff);
        qsim_db(d, page, A_RSIM_DB_CQ, 0xffffff | RSIM_CQ_ARM_NEXT << 24);
        qsim_db(d, page, A_RSIM_DB_CQ, cqn | 3u << 24);
        qsim_db(d, page, 0x10, qp.qpn);
        qsim_db(d, page, 0xffc, qp.qpn);
        g_assert_cmphex(qpci_io_readl(d->dev, d->bar2,
                                      page * RSIM_DB_PAGE_SIZE), ==, 0);
    }
    qsim_cq_expect_empty(d, &cq);
    qsim_assert_alive(d);
    /* doorbells while the device is not ready are ignored */
    qsim_wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_RESET_MASK);
    qsim_sq_doorbell(d, 0, qp.qpn);
    qsim_cq_arm_db(d, 0, cqn, RSIM_CQ_ARM_NEXT);
    qsim_wr(d, A_RSIM_EQ_DB, R_RSIM_EQ_DB_ARM_MASK);
    g_assert_cmpuint(qsim_ring_cons(d, &qp.sq), ==, 4);
    qsim_bringup(d);
    qsim_assert_alive(d);
    qsim_stop(d);
}

static void msix_mask(QSimDev *d, uint16_t v, bool mask)
{
    QPCIDevice *dev = d->dev;

    qpci_io_writel(dev, dev->msix_table_bar, dev->msix_table_off +
                   v * PCI_MSIX_ENTRY_SIZE + PCI_MSIX_ENTRY_VECTOR_CTRL,
                   mask ? PCI_MSIX_ENTRY_CTRL_MASKBIT : 0);
}

static void nop(QSimDev *d)
{
    struct rsim_admin_cmd c;

    QSIM_CMD_INIT(c, RSIM_CMD_NOP);
    qsim_assert_sts(qsim_cmd_exec(d, &c, NULL), RSIM_STS_OK);
}

static void test_msix_admin(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_admin_cmd c;

    qsim_msix_setup(d);
    nop(d);
    g_assert_false(qsim_irq_fired(d, 0));       /* INTR_MASK = 3 */
    qsim_wr(d, A_RSIM_INTR_MASK, R_RSIM_INTR_MASK_ASYNC_MASK);
    nop(d);
    g_assert_true(qsim_irq_fired(d, 0));
    nop(d);
    g_assert_true(qsim_irq_fired(d, 0));
    QSIM_CMD_INIT(c, 0x55);                     /* errors complete too */
    qsim_assert_sts(qsim_cmd_exec(d, &c, NULL), RSIM_STS_BAD_OPCODE);
    g_assert_true(qsim_irq_fired(d, 0));
    qsim_wr(d, A_RSIM_INTR_MASK, R_RSIM_INTR_MASK_ADMIN_MASK);
    nop(d);
    g_assert_false(qsim_irq_fired(d, 0));
    qsim_wr(d, A_RSIM_INTR_MASK, 0);
    nop(d);
    g_assert_true(qsim_irq_fired(d, 0));
    for (unsigned v = 1; v < 9; v++) {
        g_assert_false(qsim_irq_fired(d, v));
    }

    /* a masked vector stays pending and fires when unmasked */
    msix_mask(d, 0, true);
    nop(d);
    g_assert_false(qsim_irq_fired(d, 0));
    g_assert_true(qpci_msix_pending(d->dev, 0));
    msix_mask(d, 0, false);
    g_assert_true(qsim_irq_fired(d, 0));

    /* without MSI-X the device works, polled */
    qpci_msix_disable(d->dev);
    nop(d);
    nop(d);
    g_assert_false(qsim_irq_fired(d, 0));
    qsim_msix_setup(d);
    nop(d);
    g_assert_true(qsim_irq_fired(d, 0));
    qsim_stop(d);
}

static void test_msix_async(const char *machine)
{
    QSimDev *d = qsim_start(machine, NULL, NULL);
    struct rsim_qp_attr sqd;
    QSimEnv env;

    qsim_msix_setup(d);
    qsim_reset(d);
    /* unmasked before ENABLE: the port event interrupts */
    qsim_wr(d, A_RSIM_INTR_MASK, R_RSIM_INTR_MASK_ADMIN_MASK);
    qsim_enable(d, 16, 16, 16);
    g_assert_true(qsim_irq_fired(d, 0));
    qsim_aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    qsim_gid_add_v4(d, 0, 1);
    g_assert_false(qsim_irq_fired(d, 0));       /* admin: masked */
    qsim_env_setup(d, &env, RSIM_PBL_LEVEL0, 4);
    qsim_qp_move(d, env.qp.qpn, RSIM_QPS_RESET);
    qsim_qp_rc_to_rts(d, env.qp.qpn);
    qsim_attr_init(&sqd, RSIM_QPS_SQD, RSIM_QP_EN_SQD_ASYNC_NOTIFY);
    sqd.en_sqd_async_notify = 1;
    g_assert_false(qsim_irq_fired(d, 0));
    qsim_qp_modify_ok(d, env.qp.qpn, &sqd);
    qsim_aeq_expect(d, RSIM_EV_SQ_DRAINED, env.qp.qpn);
    g_assert_true(qsim_irq_fired(d, 0));
    /* masked: the event is written, no interrupt */
    qsim_wr(d, A_RSIM_INTR_MASK, 3);
    qsim_qp_move(d, env.qp.qpn, RSIM_QPS_RTS);
    qsim_qp_modify_ok(d, env.qp.qpn, &sqd);
    qsim_aeq_expect(d, RSIM_EV_SQ_DRAINED, env.qp.qpn);
    g_assert_false(qsim_irq_fired(d, 0));
    /* CQ_ERR is an async event as well */
    qsim_wr(d, A_RSIM_INTR_MASK, R_RSIM_INTR_MASK_ADMIN_MASK);
    {
        QSimEnv e2;

        qsim_env_setup(d, &e2, RSIM_PBL_LEVEL0, 1); /* holds one */
        g_assert_false(qsim_irq_fired(d, 0));
        qsim_flush_sends(d, &e2, 2, 1);
        qsim_aeq_expect(d, RSIM_EV_CQ_ERR, e2.cqn);
        g_assert_true(qsim_irq_fired(d, 0));
    }
    g_assert_false(qsim_irq_fired(d, 1));
    qsim_stop(d);
}

static const QSimTest tests[] = {
    { "queue/flush-level0", test_queue_flush_l0 },
    { "queue/flush-level1", test_queue_flush_l1 },
    { "queue/flush-level2", test_queue_flush_l2 },
    { "queue/cq-eq-msix", test_queue_cq_eq_msix },
    { "queue/eq-full", test_queue_eq_full },
    { "queue/cq-overflow", test_queue_cq_overflow },
    { "queue/cq-bad-ring", test_queue_cq_bad_ring },
    { "queue/aeq-overflow", test_queue_aeq_overflow },
    { "queue/eq-bad-ring", test_queue_eq_bad_ring },
    { "doorbell/pages", test_doorbells },
    { "msix/admin", test_msix_admin },
    { "msix/async", test_msix_async },
};

int main(int argc, char **argv)
{
    return qsim_main(argc, argv, tests, ARRAY_SIZE(tests));
}
