/*
 * QTest testcase for the rdma-sim RDMA NIC: queue pairs, their state
 * machine and attributes
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqos/rdma-sim.h"

static void test_qp_create(const char *machine)
{
    QSimDev *d = qsim_up(machine, "max-qp=6");
    struct rsim_cmd_create_qp c;
    QSimEnv env;
    QSimQp q, t;
    uint32_t pdn, cqn;

    qsim_env_setup(d, &env, RSIM_PBL_LEVEL0, 4);    /* QPN 2 */
    pdn = env.pdn;
    cqn = env.cqn;
    g_assert_cmpuint(env.qp.qpn, ==, 2);
    /* round robin: a destroyed number is not reused at once */
    qsim_handle_expect(d, RSIM_CMD_DESTROY_QP, 2, RSIM_STS_OK);
    g_assert_cmpuint(qsim_qp_create(d, &q, RSIM_QPT_RC, pdn, cqn,
                                    RSIM_PBL_LEVEL1), ==, 3);
    g_assert_cmpuint(qsim_qp_create(d, &q, RSIM_QPT_UC, pdn, cqn,
                                    RSIM_PBL_LEVEL2), ==, 4);
    g_assert_cmpuint(qsim_qp_create(d, &q, RSIM_QPT_UD, pdn, cqn,
                                    RSIM_PBL_LEVEL0), ==, 5);
    g_assert_cmpuint(qsim_qp_create(d, &q, RSIM_QPT_RC, pdn, cqn,
                                    RSIM_PBL_LEVEL0), ==, 2);
    qsim_qp_rings(d, &t, RSIM_PBL_LEVEL0);
    qsim_qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    qsim_cmd_expect(d, &c, RSIM_STS_NO_RESOURCES);
    /* GSI is always QPN 1, and there is only one */
    qsim_qp_cmd(&c, RSIM_QPT_GSI, pdn, cqn, cqn, &t);
    g_assert_cmpuint(qsim_create(d, &c, NULL), ==, RSIM_GSI_QPN);
    qsim_cmd_expect(d, &c, RSIM_STS_EXISTS);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_QP, 1, RSIM_STS_OK);
    g_assert_cmpuint(qsim_create(d, &c, NULL), ==, RSIM_GSI_QPN);

    qsim_handle_expect(d, RSIM_CMD_DESTROY_QP, 0, RSIM_STS_BAD_HANDLE);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_QP, 6, RSIM_STS_BAD_HANDLE);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_QP, 0xffffffff, RSIM_STS_BAD_HANDLE);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_QP, 3, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_QP, 3, RSIM_STS_BAD_HANDLE);

    /* validation, with one QPN free */
    qsim_qp_cmd(&c, 0, pdn, cqn, cqn, &t);
    qsim_cmd_expect(d, &c, RSIM_STS_UNSUPPORTED);
    c.qp_type = 5;
    qsim_cmd_expect(d, &c, RSIM_STS_UNSUPPORTED);
    c.qp_type = 0xff;
    qsim_cmd_expect(d, &c, RSIM_STS_UNSUPPORTED);
    qsim_qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.flags = 2;
    qsim_cmd_expect(d, &c, RSIM_STS_RESERVED);
    c.flags = 0x80;
    qsim_cmd_expect(d, &c, RSIM_STS_RESERVED);
    qsim_qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.reserved = cpu_to_le32(1);
    qsim_cmd_expect(d, &c, RSIM_STS_RESERVED);
    qsim_qp_cmd(&c, RSIM_QPT_RC, pdn + 1, cqn, cqn, &t);
    qsim_cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    qsim_qp_cmd(&c, RSIM_QPT_RC, pdn, cqn + 1, cqn, &t);
    qsim_cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    qsim_qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, 0xffffffff, &t);
    qsim_cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    qsim_qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.srqn = 0;                                 /* no SRQ 0 */
    memset(&c.rq, 0, sizeof(c.rq));
    qsim_cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    qsim_qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.max_send_sge = 17;
    qsim_cmd_expect(d, &c, RSIM_STS_LIMIT);
    qsim_qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.max_recv_sge = 17;
    qsim_cmd_expect(d, &c, RSIM_STS_LIMIT);
    qsim_qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.max_inline = cpu_to_le16(513);
    qsim_cmd_expect(d, &c, RSIM_STS_LIMIT);
    qsim_qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.db_page = cpu_to_le16(64);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    /* send elements: 208 + max(16 x SGEs, inline) bytes */
    qsim_qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.max_send_sge = 4;                         /* 272 > 256 */
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    c.max_send_sge = 3;                         /* 256 */
    c.max_inline = cpu_to_le16(49);             /* 257 > 256 */
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    /* receive elements: 40 + 16 x SGEs bytes */
    qsim_qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.max_recv_sge = 2;                         /* 72 > 64 */
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.sq.log2_elem_size = 14;                   /* above 8 KiB */
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.sq.log2_depth = 16;                       /* above 32768 */
    qsim_cmd_expect(d, &c, RSIM_STS_LIMIT);
    qsim_qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.rq.log2_depth = 0;
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.sq.addr = cpu_to_le64(t.sq.base + 16);    /* misaligned level 0 */
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    {
        QSimQp l1;

        qsim_qp_rings(d, &l1, RSIM_PBL_LEVEL1);
        qsim_ring_init(d, &l1.sq, RSIM_PBL_LEVEL1, 5, 8); /* 3 pages */
        qsim_qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &l1);
        c.sq.npages = cpu_to_le32(2);
        qsim_cmd_expect(d, &c, RSIM_STS_RANGE);
        qsim_qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &l1);
        c.rq.addr = cpu_to_le64(QSIM_UNMAPPED);
        qsim_cmd_expect(d, &c, RSIM_STS_DMA);
        /* all at the limits: 16 SGEs in 512 bytes, 32768 entries */
        qsim_qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &l1);
        c.sq.log2_depth = 15;
        c.sq.level = 0;
        c.sq.page_shift = 0;
        c.sq.npages = 0;
        c.sq.addr = cpu_to_le64(t.sq.base);
        c.sq.log2_elem_size = 9;
        c.max_send_sge = 16;
        c.max_inline = cpu_to_le16(304);
        c.db_page = cpu_to_le16(63);
        c.flags = RSIM_QP_FLAG_SQ_SIG_ALL;
        g_assert_cmpuint(qsim_create(d, &c, NULL), ==, 3);
    }
    /* the table is full again */
    qsim_qp_cmd(&c, RSIM_QPT_UD, pdn, cqn, cqn, &t);
    qsim_cmd_expect(d, &c, RSIM_STS_NO_RESOURCES);
    /* a refused create leaves the CQ and PD unreferenced */
    for (uint32_t qpn = 1; qpn < 6; qpn++) {
        qsim_handle_expect(d, RSIM_CMD_DESTROY_QP, qpn, RSIM_STS_OK);
    }
    qsim_handle_expect(d, RSIM_CMD_DESTROY_CQ, cqn, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DEALLOC_PD, pdn, RSIM_STS_OK);
    qsim_stop(d);
}

static void av_expect(const struct rsim_av *got, const struct rsim_av *want)
{
    g_assert_cmpmem(got, sizeof(*got), want, sizeof(*want));
}

/* Every attribute set by MODIFY_QP comes back from QUERY_QP. */
static void test_qp_query(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_cmd_create_qp c;
    struct rsim_qp_attr a, q;
    struct rsim_av av;
    uint32_t qpn;
    QSimEnv env;
    QSimQp qp;

    qsim_env_setup(d, &env, RSIM_PBL_LEVEL0, 4);
    qsim_gid_add_v4(d, 0, 1);
    qsim_ring_init(d, &qp.sq, RSIM_PBL_LEVEL1, 4, 8);
    qsim_ring_init(d, &qp.rq, RSIM_PBL_LEVEL0, 5, 7);
    qsim_qp_cmd(&c, RSIM_QPT_RC, env.pdn, env.cqn, env.cqn, &qp);
    c.max_send_sge = 2;
    c.max_recv_sge = 3;
    c.max_inline = cpu_to_le16(48);
    qpn = qsim_create(d, &c, NULL);

    /* RESET: caps, no attributes */
    qsim_qp_query(d, qpn, &q);
    g_assert_cmpuint(q.qp_state, ==, RSIM_QPS_RESET);
    g_assert_cmpuint(q.cur_qp_state, ==, RSIM_QPS_RESET);
    g_assert_cmpuint(q.qp_type, ==, RSIM_QPT_RC);
    g_assert_cmpuint(le32_to_cpu(q.max_send_wr), ==, 15);
    g_assert_cmpuint(le32_to_cpu(q.max_recv_wr), ==, 31);
    g_assert_cmpuint(le32_to_cpu(q.max_send_sge), ==, 2);
    g_assert_cmpuint(le32_to_cpu(q.max_recv_sge), ==, 3);
    g_assert_cmpuint(le32_to_cpu(q.max_inline_data), ==, 48);
    g_assert_cmpuint(q.sq_draining, ==, 0);

    qsim_attr_rc_init(&a);
    qsim_qp_modify_ok(d, qpn, &a);
    qsim_qp_query(d, qpn, &q);
    g_assert_cmpuint(q.port_num, ==, 1);
    g_assert_cmpuint(le16_to_cpu(q.pkey_index), ==, 0);
    g_assert_cmphex(le32_to_cpu(q.qp_access_flags), ==, QSIM_ACC_ALL);

    qsim_attr_init(&a, RSIM_QPS_INIT, RSIM_QP_ACCESS_FLAGS);
    a.qp_access_flags = cpu_to_le32(QSIM_ACC_LW | QSIM_ACC_RR);
    qsim_qp_modify_ok(d, qpn, &a);
    qsim_qp_query(d, qpn, &q);
    g_assert_cmphex(le32_to_cpu(q.qp_access_flags), ==,
                    QSIM_ACC_LW | QSIM_ACC_RR);

    qsim_attr_rc_rtr(&a);
    a.av.traffic_class = 0x28;
    a.av.sl = 3;
    a.av.hop_limit = 17;
    a.av.flow_label = cpu_to_le32(0xabcde);
    a.path_mtu = RSIM_MTU_4096;
    a.dest_qp_num = cpu_to_le32(0xffffff);
    a.rq_psn = cpu_to_le32(0xfffffe);
    a.max_dest_rd_atomic = 16;
    a.min_rnr_timer = 31;
    qsim_qp_modify_ok(d, qpn, &a);
    qsim_qp_query(d, qpn, &q);
    av_expect(&q.av, &a.av);
    av = a.av;
    g_assert_cmpuint(q.path_mtu, ==, RSIM_MTU_4096);
    g_assert_cmphex(le32_to_cpu(q.dest_qp_num), ==, 0xffffff);
    g_assert_cmphex(le32_to_cpu(q.rq_psn), ==, 0xfffffe);
    g_assert_cmpuint(q.max_dest_rd_atomic, ==, 16);
    g_assert_cmpuint(q.min_rnr_timer, ==, 31);
    g_assert_cmphex(le32_to_cpu(q.qp_access_flags), ==,
                    QSIM_ACC_LW | QSIM_ACC_RR);

    qsim_attr_rc_rts(&a);
    qsim_attr_set_mask(&a, qsim_attr_mask(&a) | RSIM_QP_CUR_STATE |
                       RSIM_QP_MIN_RNR_TIMER | RSIM_QP_PATH_MIG_STATE |
                       RSIM_QP_ACCESS_FLAGS);
    a.cur_qp_state = RSIM_QPS_RTR;
    a.timeout = 31;
    a.retry_cnt = 7;
    a.rnr_retry = 6;
    a.sq_psn = cpu_to_le32(0xffffff);
    a.max_rd_atomic = 16;
    a.min_rnr_timer = 20;
    a.path_mig_state = 0;
    a.qp_access_flags = cpu_to_le32(QSIM_ACC_LW | QSIM_ACC_RW);
    qsim_qp_modify_ok(d, qpn, &a);
    qsim_qp_query(d, qpn, &q);
    g_assert_cmpuint(q.timeout, ==, 31);
    g_assert_cmpuint(q.retry_cnt, ==, 7);
    g_assert_cmpuint(q.rnr_retry, ==, 6);
    g_assert_cmphex(le32_to_cpu(q.sq_psn), ==, 0xffffff);
    g_assert_cmpuint(q.max_rd_atomic, ==, 16);
    g_assert_cmpuint(q.min_rnr_timer, ==, 20);
    g_assert_cmpuint(q.path_mig_state, ==, 0);
    g_assert_cmphex(le32_to_cpu(q.qp_access_flags), ==,
                    QSIM_ACC_LW | QSIM_ACC_RW);
    /* untouched ones stay */
    g_assert_cmphex(le32_to_cpu(q.rq_psn), ==, 0xfffffe);
    g_assert_cmpuint(q.max_dest_rd_atomic, ==, 16);
    av_expect(&q.av, &av);

    /* RTS -> SQD with notification, then SQD -> SQD with everything */
    qsim_attr_init(&a, RSIM_QPS_SQD, RSIM_QP_EN_SQD_ASYNC_NOTIFY);
    a.en_sqd_async_notify = 1;
    qsim_qp_modify_ok(d, qpn, &a);
    qsim_aeq_expect(d, RSIM_EV_SQ_DRAINED, qpn);
    qsim_qp_query(d, qpn, &q);
    g_assert_cmpuint(q.en_sqd_async_notify, ==, 1);
    g_assert_cmpuint(q.sq_draining, ==, 0);

    qsim_attr_init(&a, RSIM_QPS_SQD, RSIM_QP_PORT | RSIM_QP_AV |
                   RSIM_QP_TIMEOUT | RSIM_QP_RETRY_CNT | RSIM_QP_RNR_RETRY |
                   RSIM_QP_MAX_QP_RD_ATOMIC | RSIM_QP_MAX_DEST_RD_ATOMIC |
                   RSIM_QP_ACCESS_FLAGS | RSIM_QP_PKEY_INDEX |
                   RSIM_QP_MIN_RNR_TIMER | RSIM_QP_PATH_MIG_STATE);
    a.port_num = 1;
    qsim_av_v4(&a.av, 0);
    qsim_gid_v4(a.av.dgid, 172, 16, 0, 9);
    a.av.dmac[5] = 0x99;
    a.av.sl = 7;
    a.timeout = 3;
    a.retry_cnt = 2;
    a.rnr_retry = 1;
    a.max_rd_atomic = 1;
    a.max_dest_rd_atomic = 2;
    a.qp_access_flags = 0;
    a.min_rnr_timer = 1;
    qsim_qp_modify_ok(d, qpn, &a);
    qsim_qp_query(d, qpn, &q);
    av_expect(&q.av, &a.av);
    g_assert_cmpuint(q.timeout, ==, 3);
    g_assert_cmpuint(q.retry_cnt, ==, 2);
    g_assert_cmpuint(q.rnr_retry, ==, 1);
    g_assert_cmpuint(q.max_rd_atomic, ==, 1);
    g_assert_cmpuint(q.max_dest_rd_atomic, ==, 2);
    g_assert_cmphex(le32_to_cpu(q.qp_access_flags), ==, 0);
    g_assert_cmpuint(q.min_rnr_timer, ==, 1);
    g_assert_cmpuint(q.qp_state, ==, RSIM_QPS_SQD);
    /* the caps never change */
    g_assert_cmpuint(le32_to_cpu(q.max_send_wr), ==, 15);
    g_assert_cmpuint(le32_to_cpu(q.max_recv_wr), ==, 31);
    g_assert_cmpuint(le32_to_cpu(q.max_send_sge), ==, 2);
    g_assert_cmpuint(le32_to_cpu(q.max_recv_sge), ==, 3);
    g_assert_cmpuint(le32_to_cpu(q.max_inline_data), ==, 48);
    g_assert_cmpuint(q.qp_type, ==, RSIM_QPT_RC);

    /* RESET empties the rings */
    qsim_qp_move(d, qpn, RSIM_QPS_RESET);
    g_assert_cmpuint(qsim_ring_prod(d, &qp.sq), ==, 0);
    g_assert_cmpuint(qsim_ring_cons(d, &qp.sq), ==, 0);
    g_assert_cmpuint(qsim_ring_prod(d, &qp.rq), ==, 0);
    g_assert_cmpuint(qsim_ring_cons(d, &qp.rq), ==, 0);
    qsim_aeq_expect_none(d);
    qsim_stop(d);
}

/* The RC state machine with exactly the required attributes */
static void test_qp_rc_states(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_qp_attr a;
    uint32_t qpn;
    QSimEnv env;

    qsim_gid_add_v4(d, 0, 1);
    qsim_env_setup(d, &env, RSIM_PBL_LEVEL0, 4);    /* RESET -> INIT */
    qpn = env.qp.qpn;
    g_assert_cmpuint(qsim_qp_state(d, qpn), ==, RSIM_QPS_INIT);
    qsim_qp_move(d, qpn, RSIM_QPS_INIT);            /* INIT -> INIT */
    qsim_attr_rc_rtr(&a);
    qsim_qp_modify_ok(d, qpn, &a);
    qsim_attr_rc_rts(&a);
    qsim_qp_modify_ok(d, qpn, &a);
    qsim_qp_move(d, qpn, RSIM_QPS_RTS);             /* RTS -> RTS */
    /* without STATE in the mask the QP stays where it is */
    qsim_attr_init(&a, 0, RSIM_QP_MIN_RNR_TIMER);
    qsim_attr_set_mask(&a, RSIM_QP_MIN_RNR_TIMER);
    a.min_rnr_timer = 9;
    qsim_qp_modify_ok(d, qpn, &a);
    g_assert_cmpuint(qsim_qp_state(d, qpn), ==, RSIM_QPS_RTS);
    /* SQD without notification: no event */
    qsim_qp_move(d, qpn, RSIM_QPS_SQD);
    qsim_aeq_expect_none(d);
    qsim_qp_move(d, qpn, RSIM_QPS_SQD);             /* SQD -> SQD */
    qsim_qp_move(d, qpn, RSIM_QPS_RTS);
    /* with notification */
    qsim_attr_init(&a, RSIM_QPS_SQD, RSIM_QP_EN_SQD_ASYNC_NOTIFY);
    a.en_sqd_async_notify = 1;
    qsim_qp_modify_ok(d, qpn, &a);
    qsim_aeq_expect(d, RSIM_EV_SQ_DRAINED, qpn);
    qsim_qp_move(d, qpn, RSIM_QPS_RTS);
    qsim_qp_move(d, qpn, RSIM_QPS_ERR);
    qsim_qp_move(d, qpn, RSIM_QPS_ERR);             /* ERR -> ERR */
    qsim_qp_move(d, qpn, RSIM_QPS_RESET);
    qsim_qp_move(d, qpn, RSIM_QPS_RESET);           /* RESET -> RESET */

    /* every state can go to ERR and RESET */
    qsim_qp_rc_to_init(d, qpn);
    qsim_qp_move(d, qpn, RSIM_QPS_ERR);
    qsim_qp_move(d, qpn, RSIM_QPS_RESET);
    qsim_qp_rc_to_init(d, qpn);
    qsim_qp_move(d, qpn, RSIM_QPS_RESET);
    qsim_qp_rc_to_init(d, qpn);
    qsim_attr_rc_rtr(&a);
    qsim_qp_modify_ok(d, qpn, &a);
    qsim_qp_move(d, qpn, RSIM_QPS_ERR);
    qsim_qp_move(d, qpn, RSIM_QPS_RESET);
    qsim_qp_rc_to_init(d, qpn);
    qsim_attr_rc_rtr(&a);
    qsim_qp_modify_ok(d, qpn, &a);
    qsim_qp_move(d, qpn, RSIM_QPS_RESET);
    qsim_qp_rc_to_rts(d, qpn);
    qsim_qp_move(d, qpn, RSIM_QPS_SQD);
    qsim_qp_move(d, qpn, RSIM_QPS_ERR);
    qsim_qp_move(d, qpn, RSIM_QPS_RESET);
    qsim_qp_rc_to_rts(d, qpn);
    qsim_qp_move(d, qpn, RSIM_QPS_SQD);
    qsim_qp_move(d, qpn, RSIM_QPS_RESET);
    qsim_qp_rc_to_rts(d, qpn);
    qsim_qp_move(d, qpn, RSIM_QPS_RESET);
    qsim_aeq_expect_none(d);
    qsim_assert_alive(d);
    qsim_stop(d);
}

typedef void (*AttrFn)(struct rsim_qp_attr *a);

/*
 * A refused MODIFY_QP: expected status, and the QP (state and every
 * attribute) is exactly as before.
 */
static void qp_modify_refused(QSimDev *d, uint32_t qpn,
                              const struct rsim_qp_attr *a, unsigned want)
{
    struct rsim_qp_attr before, after;

    qsim_qp_query(d, qpn, &before);
    qsim_assert_sts(qsim_qp_modify(d, qpn, a), want);
    qsim_assert_alive(d);
    qsim_qp_query(d, qpn, &after);
    g_assert_cmpmem(&before, sizeof(before), &after, sizeof(after));
}

/* The valid RC attribute set of base with one fault: refused with want */
static void bad_attr(QSimDev *d, uint32_t qpn, AttrFn base, AttrFn fault,
                     unsigned want)
{
    struct rsim_qp_attr a;

    base(&a);
    fault(&a);
    qp_modify_refused(d, qpn, &a, want);
}

static void add_mask(struct rsim_qp_attr *a, uint32_t bits)
{
    qsim_attr_set_mask(a, qsim_attr_mask(a) | bits);
}

static void del_mask(struct rsim_qp_attr *a, uint32_t bits)
{
    qsim_attr_set_mask(a, qsim_attr_mask(a) & ~bits);
}

/* One wrong value or mask bit each, applied to a valid set */
#define BAD_ATTR(name, change) \
    static void name(struct rsim_qp_attr *a) { change; }

BAD_ATTR(f_to_rtr, a->qp_state = RSIM_QPS_RTR)
BAD_ATTR(f_to_rts, a->qp_state = RSIM_QPS_RTS)
BAD_ATTR(f_to_err, a->qp_state = RSIM_QPS_ERR)
BAD_ATTR(f_to_sqd, a->qp_state = RSIM_QPS_SQD)
BAD_ATTR(f_to_sqe, a->qp_state = RSIM_QPS_SQE)
BAD_ATTR(f_to_init, a->qp_state = RSIM_QPS_INIT)
BAD_ATTR(f_state7, a->qp_state = 7)
BAD_ATTR(f_state_ff, a->qp_state = 0xff)
BAD_ATTR(f_no_access, del_mask(a, RSIM_QP_ACCESS_FLAGS))
BAD_ATTR(f_no_port, del_mask(a, RSIM_QP_PORT))
BAD_ATTR(f_qkey, add_mask(a, RSIM_QP_QKEY))
BAD_ATTR(f_port2, a->port_num = 2)
BAD_ATTR(f_port0, a->port_num = 0)
BAD_ATTR(f_pkey1, a->pkey_index = cpu_to_le16(1))
BAD_ATTR(f_mw_bind, a->qp_access_flags = cpu_to_le32(RSIM_ACCESS_MW_BIND))
BAD_ATTR(f_acc_hi, a->qp_access_flags = cpu_to_le32(0x80000000))
BAD_ATTR(f_alt, add_mask(a, RSIM_QP_ALT_PATH))
BAD_ATTR(f_bit21, add_mask(a, 1u << 21))
BAD_ATTR(f_rate, add_mask(a, 1u << 25))
BAD_ATTR(f_bit31, add_mask(a, 1u << 31))
BAD_ATTR(f_res0, a->reserved0 = cpu_to_le32(1))
BAD_ATTR(f_res1, a->reserved1[31] = 1)
BAD_ATTR(f_cur_init, add_mask(a, RSIM_QP_CUR_STATE);
         a->cur_qp_state = RSIM_QPS_INIT)
BAD_ATTR(f_cur_rtr, add_mask(a, RSIM_QP_CUR_STATE);
         a->cur_qp_state = RSIM_QPS_RTR)
BAD_ATTR(f_no_rnr, del_mask(a, RSIM_QP_MIN_RNR_TIMER))
BAD_ATTR(f_no_av, del_mask(a, RSIM_QP_AV))
BAD_ATTR(f_timeout_bit, add_mask(a, RSIM_QP_TIMEOUT))
BAD_ATTR(f_mtu6, a->path_mtu = 6)
BAD_ATTR(f_mtu0, a->path_mtu = 0)
BAD_ATTR(f_mtu_ff, a->path_mtu = 0xff)
BAD_ATTR(f_dest_rd129, a->max_dest_rd_atomic = 129)
BAD_ATTR(f_rq_psn, a->rq_psn = cpu_to_le32(1u << 24))
BAD_ATTR(f_dest_qpn, a->dest_qp_num = cpu_to_le32(0xffffffff))
BAD_ATTR(f_rnr32, a->min_rnr_timer = 32)
BAD_ATTR(f_sgid5, a->av.sgid_index = 5)
BAD_ATTR(f_sgid_ff, a->av.sgid_index = 0xff)
BAD_ATTR(f_net6, a->av.network_type = RSIM_NET_IPV6)
BAD_ATTR(f_net0, a->av.network_type = 0)
BAD_ATTR(f_dgid6, qsim_gid_v6(a->av.dgid, 5))
BAD_ATTR(f_flow, a->av.flow_label = cpu_to_le32(1u << 20))
BAD_ATTR(f_av_res, a->av.reserved = 1)
BAD_ATTR(f_no_psn, del_mask(a, RSIM_QP_SQ_PSN))
BAD_ATTR(f_retry8, a->retry_cnt = 8)
BAD_ATTR(f_rnr_retry8, a->rnr_retry = 8)
BAD_ATTR(f_timeout32, a->timeout = 32)
BAD_ATTR(f_sq_psn, a->sq_psn = cpu_to_le32(1u << 24))
BAD_ATTR(f_rd129, a->max_rd_atomic = 129)
BAD_ATTR(f_rd_ff, a->max_rd_atomic = 0xff)
BAD_ATTR(f_mig3, add_mask(a, RSIM_QP_PATH_MIG_STATE); a->path_mig_state = 3)
BAD_ATTR(f_av_bit, add_mask(a, RSIM_QP_AV))
BAD_ATTR(f_cap_bit, add_mask(a, RSIM_QP_CAP))

/* Illegal transitions, wrong attribute sets and bad values */
static void test_qp_illegal(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_qp_attr a;
    uint32_t qpn;
    QSimEnv env;

    qsim_gid_add_v4(d, 0, 1);
    qsim_env_setup(d, &env, RSIM_PBL_LEVEL0, 4);
    qpn = env.qp.qpn;
    qsim_qp_move(d, qpn, RSIM_QPS_RESET);

    /* in RESET */
    bad_attr(d, qpn, qsim_attr_rc_rtr, f_to_rtr, RSIM_STS_BAD_STATE);
    bad_attr(d, qpn, qsim_attr_rc_rts, f_to_rts, RSIM_STS_BAD_STATE);
    bad_attr(d, qpn, qsim_attr_rc_init, f_to_err, RSIM_STS_BAD_STATE);
    bad_attr(d, qpn, qsim_attr_rc_init, f_to_sqd, RSIM_STS_BAD_STATE);
    bad_attr(d, qpn, qsim_attr_rc_init, f_to_sqe, RSIM_STS_BAD_STATE);
    qsim_attr_init(&a, RSIM_QPS_ERR, 0);
    qp_modify_refused(d, qpn, &a, RSIM_STS_BAD_STATE);
    bad_attr(d, qpn, qsim_attr_rc_init, f_state7, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_init, f_state_ff, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_init, f_no_access, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_init, f_no_port, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_init, f_qkey, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_init, f_av_bit, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_init, f_cap_bit, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_init, f_port2, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_init, f_port0, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_init, f_pkey1, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_init, f_mw_bind, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_init, f_acc_hi, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_init, f_alt, RSIM_STS_UNSUPPORTED);
    bad_attr(d, qpn, qsim_attr_rc_init, f_bit21, RSIM_STS_RESERVED);
    bad_attr(d, qpn, qsim_attr_rc_init, f_rate, RSIM_STS_RESERVED);
    bad_attr(d, qpn, qsim_attr_rc_init, f_bit31, RSIM_STS_RESERVED);
    bad_attr(d, qpn, qsim_attr_rc_init, f_res0, RSIM_STS_RESERVED);
    bad_attr(d, qpn, qsim_attr_rc_init, f_res1, RSIM_STS_RESERVED);
    bad_attr(d, qpn, qsim_attr_rc_init, f_cur_init, RSIM_STS_BAD_STATE);

    /* in INIT */
    qsim_qp_rc_to_init(d, qpn);
    bad_attr(d, qpn, qsim_attr_rc_rts, f_to_rts, RSIM_STS_BAD_STATE);
    bad_attr(d, qpn, qsim_attr_rc_init, f_to_sqd, RSIM_STS_BAD_STATE);
    bad_attr(d, qpn, qsim_attr_rc_rtr, f_no_rnr, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_rtr, f_no_av, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_rtr, f_timeout_bit, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_rtr, f_qkey, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_rtr, f_mtu6, RSIM_STS_LIMIT);
    bad_attr(d, qpn, qsim_attr_rc_rtr, f_mtu_ff, RSIM_STS_LIMIT);
    bad_attr(d, qpn, qsim_attr_rc_rtr, f_mtu0, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_rtr, f_dest_rd129, RSIM_STS_LIMIT);
    bad_attr(d, qpn, qsim_attr_rc_rtr, f_rq_psn, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_rtr, f_dest_qpn, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_rtr, f_rnr32, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_rtr, f_sgid5, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_rtr, f_sgid_ff, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_rtr, f_net6, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_rtr, f_net0, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_rtr, f_dgid6, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_rtr, f_flow, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_rtr, f_av_res, RSIM_STS_RESERVED);
    bad_attr(d, qpn, qsim_attr_rc_rtr, f_alt, RSIM_STS_UNSUPPORTED);
    bad_attr(d, qpn, qsim_attr_rc_rtr, f_cur_rtr, RSIM_STS_BAD_STATE);
    /* values of attributes outside the mask are ignored */
    qsim_attr_rc_rtr(&a);
    a.qp_access_flags = cpu_to_le32(RSIM_ACCESS_MW_BIND);
    a.timeout = 0xff;
    a.qkey = cpu_to_le32(0xffffffff);
    qsim_qp_modify_ok(d, qpn, &a);

    /* in RTR */
    bad_attr(d, qpn, qsim_attr_rc_rts, f_no_psn, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_rts, f_retry8, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_rts, f_rnr_retry8, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_rts, f_timeout32, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_rts, f_sq_psn, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_rts, f_rd129, RSIM_STS_LIMIT);
    bad_attr(d, qpn, qsim_attr_rc_rts, f_rd_ff, RSIM_STS_LIMIT);
    bad_attr(d, qpn, qsim_attr_rc_rts, f_cur_init, RSIM_STS_BAD_STATE);
    bad_attr(d, qpn, qsim_attr_rc_rts, f_mig3, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_rts, f_av_bit, RSIM_STS_INVALID);
    bad_attr(d, qpn, qsim_attr_rc_rts, f_to_sqd, RSIM_STS_BAD_STATE);
    bad_attr(d, qpn, qsim_attr_rc_rts, f_to_init, RSIM_STS_BAD_STATE);
    bad_attr(d, qpn, qsim_attr_rc_rtr, f_to_rtr, RSIM_STS_BAD_STATE);

    /* in RTS */
    qsim_attr_rc_rts(&a);
    qsim_qp_modify_ok(d, qpn, &a);
    qsim_attr_init(&a, RSIM_QPS_RTS, RSIM_QP_AV);
    qsim_av_v4(&a.av, 0);
    qp_modify_refused(d, qpn, &a, RSIM_STS_INVALID);
    qsim_attr_init(&a, RSIM_QPS_RTS, RSIM_QP_SQ_PSN);
    qp_modify_refused(d, qpn, &a, RSIM_STS_INVALID);
    qsim_attr_init(&a, RSIM_QPS_SQD, RSIM_QP_TIMEOUT);
    qp_modify_refused(d, qpn, &a, RSIM_STS_INVALID);
    qsim_attr_init(&a, RSIM_QPS_INIT, 0);
    qp_modify_refused(d, qpn, &a, RSIM_STS_BAD_STATE);
    qsim_attr_init(&a, RSIM_QPS_RTR, 0);
    qp_modify_refused(d, qpn, &a, RSIM_STS_BAD_STATE);
    qsim_attr_init(&a, RSIM_QPS_SQE, 0);
    qp_modify_refused(d, qpn, &a, RSIM_STS_BAD_STATE);

    /* in SQD */
    qsim_qp_move(d, qpn, RSIM_QPS_SQD);
    qsim_attr_init(&a, RSIM_QPS_INIT, 0);
    qp_modify_refused(d, qpn, &a, RSIM_STS_BAD_STATE);
    qsim_attr_init(&a, RSIM_QPS_SQD, RSIM_QP_QKEY);
    qp_modify_refused(d, qpn, &a, RSIM_STS_INVALID);
    qsim_attr_init(&a, RSIM_QPS_SQD, RSIM_QP_RQ_PSN);
    qp_modify_refused(d, qpn, &a, RSIM_STS_INVALID);
    qsim_attr_init(&a, RSIM_QPS_RTS, RSIM_QP_TIMEOUT);
    qp_modify_refused(d, qpn, &a, RSIM_STS_INVALID);

    /* in ERR */
    qsim_qp_move(d, qpn, RSIM_QPS_ERR);
    qsim_attr_init(&a, RSIM_QPS_RTS, 0);
    qp_modify_refused(d, qpn, &a, RSIM_STS_BAD_STATE);
    qsim_attr_init(&a, RSIM_QPS_INIT, 0);
    qp_modify_refused(d, qpn, &a, RSIM_STS_BAD_STATE);
    qsim_attr_init(&a, RSIM_QPS_ERR, RSIM_QP_TIMEOUT);
    qp_modify_refused(d, qpn, &a, RSIM_STS_INVALID);
    qsim_attr_init(&a, RSIM_QPS_RESET, RSIM_QP_QKEY);
    qp_modify_refused(d, qpn, &a, RSIM_STS_INVALID);
    qsim_aeq_expect_none(d);
    qsim_stop(d);
}

/* UD, GSI and UC transitions and their attribute sets */
static void test_qp_ud_gsi_uc(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_cmd_create_qp c;
    struct rsim_qp_attr a, q;
    QSimEnv env;
    QSimQp ud, gsi, uc;

    qsim_gid_add_v4(d, 0, 1);
    qsim_env_setup(d, &env, RSIM_PBL_LEVEL0, 4);
    qsim_qp_create(d, &ud, RSIM_QPT_UD, env.pdn, env.cqn, RSIM_PBL_LEVEL1);
    qsim_qp_rings(d, &gsi, RSIM_PBL_LEVEL0);
    qsim_qp_cmd(&c, RSIM_QPT_GSI, env.pdn, env.cqn, env.cqn, &gsi);
    gsi.qpn = qsim_create(d, &c, NULL);
    g_assert_cmpuint(gsi.qpn, ==, 1);
    qsim_qp_create(d, &uc, RSIM_QPT_UC, env.pdn, env.cqn, RSIM_PBL_LEVEL0);

    /* UD: RESET -> INIT needs PKEY_INDEX, PORT, QKEY */
    qsim_attr_init(&a, RSIM_QPS_INIT, RSIM_QP_PKEY_INDEX | RSIM_QP_QKEY);
    a.qkey = cpu_to_le32(0x11111111);
    qp_modify_refused(d, ud.qpn, &a, RSIM_STS_INVALID);
    add_mask(&a, RSIM_QP_PORT | RSIM_QP_ACCESS_FLAGS);
    a.port_num = 1;
    qp_modify_refused(d, ud.qpn, &a, RSIM_STS_INVALID);
    del_mask(&a, RSIM_QP_ACCESS_FLAGS);
    qsim_qp_modify_ok(d, ud.qpn, &a);
    qsim_attr_init(&a, RSIM_QPS_INIT, RSIM_QP_QKEY);
    a.qkey = cpu_to_le32(0x80010000);
    qsim_qp_modify_ok(d, ud.qpn, &a);
    qsim_attr_init(&a, RSIM_QPS_RTR, RSIM_QP_AV);
    qsim_av_v4(&a.av, 0);
    qp_modify_refused(d, ud.qpn, &a, RSIM_STS_INVALID);
    qsim_qp_move(d, ud.qpn, RSIM_QPS_RTR);
    qsim_attr_init(&a, RSIM_QPS_RTS, 0);
    qp_modify_refused(d, ud.qpn, &a, RSIM_STS_INVALID);     /* SQ_PSN */
    qsim_attr_init(&a, RSIM_QPS_RTS, RSIM_QP_SQ_PSN | RSIM_QP_RETRY_CNT);
    qp_modify_refused(d, ud.qpn, &a, RSIM_STS_INVALID);
    qsim_attr_init(&a, RSIM_QPS_RTS, RSIM_QP_SQ_PSN | RSIM_QP_QKEY);
    a.sq_psn = cpu_to_le32(77);
    a.qkey = cpu_to_le32(0x22222222);
    qsim_qp_modify_ok(d, ud.qpn, &a);
    qsim_qp_query(d, ud.qpn, &q);
    g_assert_cmphex(le32_to_cpu(q.qkey), ==, 0x22222222);
    g_assert_cmpuint(le32_to_cpu(q.sq_psn), ==, 77);
    g_assert_cmpuint(q.port_num, ==, 1);
    g_assert_cmpuint(q.qp_type, ==, RSIM_QPT_UD);
    qsim_qp_move(d, ud.qpn, RSIM_QPS_SQD);
    qsim_attr_init(&a, RSIM_QPS_SQD, RSIM_QP_PORT);
    a.port_num = 1;
    qp_modify_refused(d, ud.qpn, &a, RSIM_STS_INVALID);
    qsim_attr_init(&a, RSIM_QPS_RTS, RSIM_QP_QKEY | RSIM_QP_CUR_STATE);
    a.cur_qp_state = RSIM_QPS_SQD;
    a.qkey = cpu_to_le32(0x33);
    qsim_qp_modify_ok(d, ud.qpn, &a);
    qsim_qp_move(d, ud.qpn, RSIM_QPS_ERR);
    qsim_qp_move(d, ud.qpn, RSIM_QPS_RESET);

    /* GSI: like UD but without PORT */
    qsim_attr_init(&a, RSIM_QPS_INIT, RSIM_QP_PKEY_INDEX | RSIM_QP_QKEY |
                   RSIM_QP_PORT);
    a.port_num = 1;
    a.qkey = cpu_to_le32(0x80010000);
    qp_modify_refused(d, gsi.qpn, &a, RSIM_STS_INVALID);
    del_mask(&a, RSIM_QP_PORT);
    qsim_qp_modify_ok(d, gsi.qpn, &a);
    qsim_qp_move(d, gsi.qpn, RSIM_QPS_RTR);
    qsim_attr_init(&a, RSIM_QPS_RTS, RSIM_QP_SQ_PSN);
    a.sq_psn = cpu_to_le32(0xffffff);
    qsim_qp_modify_ok(d, gsi.qpn, &a);
    qsim_qp_query(d, gsi.qpn, &q);
    g_assert_cmpuint(q.qp_type, ==, RSIM_QPT_GSI);
    g_assert_cmphex(le32_to_cpu(q.qkey), ==, 0x80010000);
    qsim_qp_move(d, gsi.qpn, RSIM_QPS_ERR);
    qsim_qp_move(d, gsi.qpn, RSIM_QPS_RESET);

    /* UC: no RDMA READ/atomic attributes, no retries */
    qsim_attr_rc_init(&a);
    qsim_qp_modify_ok(d, uc.qpn, &a);
    qsim_attr_rc_rtr(&a);
    qp_modify_refused(d, uc.qpn, &a, RSIM_STS_INVALID);
    del_mask(&a, RSIM_QP_MAX_DEST_RD_ATOMIC | RSIM_QP_MIN_RNR_TIMER);
    qsim_qp_modify_ok(d, uc.qpn, &a);
    qsim_attr_rc_rts(&a);
    qp_modify_refused(d, uc.qpn, &a, RSIM_STS_INVALID);
    qsim_attr_init(&a, RSIM_QPS_RTS, RSIM_QP_SQ_PSN);
    qsim_qp_modify_ok(d, uc.qpn, &a);
    qsim_attr_init(&a, RSIM_QPS_RTS, RSIM_QP_MIN_RNR_TIMER);
    qp_modify_refused(d, uc.qpn, &a, RSIM_STS_INVALID);
    qsim_qp_move(d, uc.qpn, RSIM_QPS_ERR);
    qsim_qp_move(d, uc.qpn, RSIM_QPS_RESET);
    qsim_aeq_expect_none(d);
    qsim_stop(d);
}

/* MODIFY_QP / QUERY_QP attribute blocks that cannot be used */
static void test_qp_attr_block(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_cmd_qp_attr c;
    QSimEnv env;

    qsim_env_setup(d, &env, RSIM_PBL_LEVEL0, 4);
    for (int op = RSIM_CMD_MODIFY_QP; op <= RSIM_CMD_QUERY_QP; op++) {
        QSIM_CMD_INIT(c, op);
        c.qpn = cpu_to_le32(env.qp.qpn);
        c.addr = cpu_to_le64(QSIM_UNMAPPED);
        qsim_cmd_expect(d, &c, RSIM_STS_DMA);
        c.addr = cpu_to_le64(QSIM_UNMAPPED + 0x10000000000000ULL);
        qsim_cmd_expect(d, &c, RSIM_STS_DMA);
        c.addr = cpu_to_le64(0xffffffffffffff80ULL);    /* wraps */
        qsim_cmd_expect(d, &c, RSIM_STS_DMA);
        c.addr = cpu_to_le64(d->scratch + 4);
        qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
        c.addr = cpu_to_le64(d->scratch);
        c.qpn = cpu_to_le32(env.qp.qpn + 1);
        qsim_cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
        c.qpn = cpu_to_le32(env.qp.qpn);
        c.reserved[47] = 1;
        qsim_cmd_expect(d, &c, RSIM_STS_RESERVED);
    }
    g_assert_cmpuint(qsim_qp_state(d, env.qp.qpn), ==, RSIM_QPS_INIT);
    qsim_stop(d);
}

static const QSimTest tests[] = {
    { "qp/create", test_qp_create },
    { "qp/query", test_qp_query },
    { "qp/rc-states", test_qp_rc_states },
    { "qp/illegal", test_qp_illegal },
    { "qp/ud-gsi-uc", test_qp_ud_gsi_uc },
    { "qp/attr-block", test_qp_attr_block },
};

int main(int argc, char **argv)
{
    return qsim_main(argc, argv, tests, ARRAY_SIZE(tests));
}
