/*
 * QTest testcase for the rdma-sim RDMA NIC: the commands that create and
 * destroy objects (EQs, Ethernet rings, PDs, CQs, SRQs, AHs, GIDs)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqos/rdma-sim.h"

static void test_cmd_eq(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_cmd_create_eq c;
    uint64_t ring = qsim_alloc(d, 4096 * RSIM_EQ_ENTRY_SIZE);
    QSimEq eq[8];
    QSimRing cq;
    uint32_t cqn;

    /* validation */
    qsim_eq_cmd(&c, 0, ring, 8);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_eq_cmd(&c, 9, ring, 8);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_eq_cmd(&c, 0xffffffff, ring, 8);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_eq_cmd(&c, 1, 0, 8);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_eq_cmd(&c, 1, ring + 32, 8);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_eq_cmd(&c, 1, ring + 16, 8);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    for (uint32_t depth = 0; depth < 8; depth++) {
        if (depth != 2 && depth != 4) {
            qsim_eq_cmd(&c, 1, ring, depth);
            qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
        }
    }
    qsim_eq_cmd(&c, 1, ring, 12);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_eq_cmd(&c, 1, ring, 8192);
    qsim_cmd_expect(d, &c, RSIM_STS_LIMIT);
    qsim_eq_cmd(&c, 1, ring, 0x80000000);
    qsim_cmd_expect(d, &c, RSIM_STS_LIMIT);
    qsim_eq_cmd(&c, 1, ring, 8);
    c.reserved[43] = 1;
    qsim_cmd_expect(d, &c, RSIM_STS_RESERVED);

    /* 8 EQs (9 vectors); vectors may be shared; boundary depths */
    for (uint32_t i = 0; i < 8; i++) {
        uint32_t depth = i == 0 ? 4096 : (i == 1 ? 2 : 16);

        g_assert_cmpuint(qsim_eq_create(d, &eq[i], i == 7 ? 8 : 1 + i % 2,
                                        depth), ==, i);
    }
    qsim_eq_cmd(&c, 1, ring, 8);
    qsim_cmd_expect(d, &c, RSIM_STS_NO_RESOURCES);
    /* lowest free number */
    qsim_handle_expect(d, RSIM_CMD_DESTROY_EQ, 3, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_EQ, 5, RSIM_STS_OK);
    g_assert_cmpuint(qsim_eq_create(d, &eq[3], 2, 8), ==, 3);
    g_assert_cmpuint(qsim_eq_create(d, &eq[5], 2, 8), ==, 5);

    /* DESTROY_EQ */
    qsim_handle_expect(d, RSIM_CMD_DESTROY_EQ, 8, RSIM_STS_BAD_HANDLE);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_EQ, 0xffffffff, RSIM_STS_BAD_HANDLE);
    {
        struct rsim_cmd_handle hc;

        QSIM_CMD_INIT(hc, RSIM_CMD_DESTROY_EQ);
        hc.handle = cpu_to_le32(6);
        hc.reserved[55] = 1;
        qsim_cmd_expect(d, &hc, RSIM_STS_RESERVED);
    }
    cqn = qsim_cq_create(d, &cq, 6, RSIM_PBL_LEVEL0, 3);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_EQ, 6, RSIM_STS_BUSY);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_CQ, cqn, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_EQ, 6, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_EQ, 6, RSIM_STS_BAD_HANDLE);
    /* a CQ needs an existing EQ */
    qsim_ring_init(d, &cq, RSIM_PBL_LEVEL0, 3, RSIM_CQE_LOG2_SLOT);
    {
        struct rsim_cmd_create_cq cc;

        qsim_cq_cmd(&cc, 6, &cq);
        qsim_cmd_expect(d, &cc, RSIM_STS_BAD_HANDLE);
    }
    qsim_stop(d);
}

static void test_cmd_ethq(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_cmd_create_ethq c;
    uint64_t ring = qsim_alloc(d, 4096 * RSIM_ETH_DESC_SIZE);
    QSimEq eq;

    qsim_eq_create(d, &eq, 1, 8);
    qsim_ethq_cmd(&c, 2, eq.eqn, ring, 8);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_ethq_cmd(&c, 0xff, eq.eqn, ring, 8);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_ethq_cmd(&c, RSIM_ETHQ_TX, eq.eqn + 1, ring, 8);
    qsim_cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    qsim_ethq_cmd(&c, RSIM_ETHQ_TX, 0xffffffff, ring, 8);
    qsim_cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    qsim_ethq_cmd(&c, RSIM_ETHQ_TX, eq.eqn, 0, 8);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_ethq_cmd(&c, RSIM_ETHQ_TX, eq.eqn, ring + 8, 8);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_ethq_cmd(&c, RSIM_ETHQ_TX, eq.eqn, ring, 3);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_ethq_cmd(&c, RSIM_ETHQ_TX, eq.eqn, ring, 1);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_ethq_cmd(&c, RSIM_ETHQ_TX, eq.eqn, ring, 8192);
    qsim_cmd_expect(d, &c, RSIM_STS_LIMIT);
    qsim_ethq_cmd(&c, RSIM_ETHQ_TX, eq.eqn, ring, 8);
    c.reserved0[1] = 1;
    qsim_cmd_expect(d, &c, RSIM_STS_RESERVED);
    qsim_ethq_cmd(&c, RSIM_ETHQ_TX, eq.eqn, ring, 8);
    c.reserved1 = cpu_to_le32(1);
    qsim_cmd_expect(d, &c, RSIM_STS_RESERVED);
    qsim_ethq_cmd(&c, RSIM_ETHQ_TX, eq.eqn, ring, 8);
    c.reserved[35] = 1;
    qsim_cmd_expect(d, &c, RSIM_STS_RESERVED);

    /* one TX and one RX ring; 16-byte alignment and 4096 entries are ok */
    qsim_ethq_cmd(&c, RSIM_ETHQ_TX, eq.eqn, ring + 16, 2);
    qsim_cmd_expect(d, &c, RSIM_STS_OK);
    qsim_ethq_cmd(&c, RSIM_ETHQ_TX, eq.eqn, ring, 8);
    qsim_cmd_expect(d, &c, RSIM_STS_EXISTS);
    qsim_ethq_cmd(&c, RSIM_ETHQ_RX, eq.eqn, ring, 4096);
    qsim_cmd_expect(d, &c, RSIM_STS_OK);
    qsim_ethq_cmd(&c, RSIM_ETHQ_RX, eq.eqn, ring, 8);
    qsim_cmd_expect(d, &c, RSIM_STS_EXISTS);

    /* the EQ is in use until both rings are gone */
    qsim_handle_expect(d, RSIM_CMD_DESTROY_EQ, eq.eqn, RSIM_STS_BUSY);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_ETHQ, 2, RSIM_STS_BAD_HANDLE);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_ETHQ, RSIM_ETHQ_TX, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_ETHQ, RSIM_ETHQ_TX,
                       RSIM_STS_BAD_HANDLE);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_EQ, eq.eqn, RSIM_STS_BUSY);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_ETHQ, RSIM_ETHQ_RX, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_EQ, eq.eqn, RSIM_STS_OK);
    /* doorbells without rings are ignored */
    qsim_wr(d, A_RSIM_ETH_TX_DB, 1);
    qsim_wr(d, A_RSIM_ETH_RX_DB, 1 | R_RSIM_ETH_RX_DB_ARM_MASK);
    qsim_assert_alive(d);
    qsim_stop(d);
}

static void test_cmd_pd(const char *machine)
{
    QSimDev *d = qsim_up(machine, "max-pd=4");
    struct rsim_cmd_create_srq sc;
    struct rsim_cmd_create_ah ac;
    struct rsim_admin_cmd c;
    uint64_t errs;
    QSimRing srq, cq;
    uint32_t key, cqn;
    QSimEq eq;
    QSimQp qp;

    for (uint32_t i = 0; i < 4; i++) {
        g_assert_cmpuint(qsim_pd_alloc(d), ==, i);
    }
    /* a full table is not a guest error */
    errs = qsim_stat(d, RSIM_STAT_GUEST_ERRORS);
    QSIM_CMD_INIT(c, RSIM_CMD_ALLOC_PD);
    qsim_cmd_expect(d, &c, RSIM_STS_NO_RESOURCES);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_GUEST_ERRORS), ==, errs);
    qsim_handle_expect(d, RSIM_CMD_DEALLOC_PD, 1, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DEALLOC_PD, 1, RSIM_STS_BAD_HANDLE);
    g_assert_cmpuint(qsim_pd_alloc(d), ==, 1);
    qsim_handle_expect(d, RSIM_CMD_DEALLOC_PD, 4, RSIM_STS_BAD_HANDLE);
    qsim_handle_expect(d, RSIM_CMD_DEALLOC_PD, 0xffffffff, RSIM_STS_BAD_HANDLE);
    {
        struct rsim_cmd_handle hc;

        QSIM_CMD_INIT(hc, RSIM_CMD_DEALLOC_PD);
        hc.handle = cpu_to_le32(1);
        hc.reserved[0] = 1;
        qsim_cmd_expect(d, &hc, RSIM_STS_RESERVED);
    }

    /* in use by an MR, a QP, an SRQ, an AH: BUSY */
    qsim_gid_add_v4(d, 0, 1);
    key = qsim_mr_reg_l0(d, 0, QSIM_ACC_LW, 0x200000, 100);
    qsim_eq_create(d, &eq, 1, 8);
    cqn = qsim_cq_create(d, &cq, eq.eqn, RSIM_PBL_LEVEL0, 3);
    qsim_qp_create(d, &qp, RSIM_QPT_RC, 1, cqn, RSIM_PBL_LEVEL0);
    qsim_ring_init(d, &srq, RSIM_PBL_LEVEL0, 3, 6);
    qsim_srq_cmd(&sc, 2, &srq, 1, 0);
    qsim_cmd_expect(d, &sc, RSIM_STS_OK);
    qsim_ah_cmd(&ac, 3);
    qsim_cmd_expect(d, &ac, RSIM_STS_OK);
    errs = qsim_stat(d, RSIM_STAT_GUEST_ERRORS);
    for (uint32_t i = 0; i < 4; i++) {
        qsim_handle_expect(d, RSIM_CMD_DEALLOC_PD, i, RSIM_STS_BUSY);
    }
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_GUEST_ERRORS), ==, errs);
    qsim_handle_expect(d, RSIM_CMD_DEREG_MR, key, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DEALLOC_PD, 0, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_QP, qp.qpn, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DEALLOC_PD, 1, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_SRQ, 0, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DEALLOC_PD, 2, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_AH, 1, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DEALLOC_PD, 3, RSIM_STS_OK);
    g_assert_cmpuint(qsim_pd_alloc(d), ==, 0);
    qsim_stop(d);
}

static void test_cmd_cq(const char *machine)
{
    QSimDev *d = qsim_up(machine, "max-cq=4");
    struct rsim_cmd_create_cq c;
    struct rsim_cmd_arm_cq ac;
    QSimRing r[4], t;
    QSimEq eq;
    QSimQp qp;

    qsim_eq_create(d, &eq, 1, 8);
    /* the three page list levels; CQNs are the lowest free ones */
    g_assert_cmpuint(qsim_cq_create(d, &r[0], eq.eqn, RSIM_PBL_LEVEL0, 4),
                     ==, 0);
    g_assert_cmpuint(qsim_cq_create(d, &r[1], eq.eqn, RSIM_PBL_LEVEL1, 7),
                     ==, 1);
    g_assert_cmpuint(qsim_cq_create(d, &r[2], eq.eqn, RSIM_PBL_LEVEL2, 1),
                     ==, 2);

    /* descriptor validation (one slot free) */
    qsim_ring_init(d, &t, RSIM_PBL_LEVEL0, 3, RSIM_CQE_LOG2_SLOT);
    qsim_cq_cmd(&c, eq.eqn + 1, &t);
    qsim_cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    qsim_cq_cmd(&c, 0xffffffff, &t);            /* there is no "no EQ" */
    qsim_cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    qsim_cq_cmd(&c, eq.eqn, &t);
    c.db_page = cpu_to_le32(64);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_cq_cmd(&c, eq.eqn, &t);
    c.reserved[35] = 1;
    qsim_cmd_expect(d, &c, RSIM_STS_RESERVED);
    qsim_cq_cmd(&c, eq.eqn, &t);
    c.q.log2_elem_size = 5;                     /* 32 < 48 bytes */
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    c.q.log2_elem_size = 14;                    /* above 8 KiB */
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_cq_cmd(&c, eq.eqn, &t);
    c.q.log2_depth = 0;
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    c.q.log2_depth = 17;            /* 131072 > roundup_pow_of_two(65536) */
    qsim_cmd_expect(d, &c, RSIM_STS_LIMIT);
    c.q.log2_depth = 23;
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    c.q.log2_depth = 0xff;
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_cq_cmd(&c, eq.eqn, &t);
    c.q.addr = cpu_to_le64(t.base + 32);        /* level 0: 64-byte aligned */
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_cq_cmd(&c, eq.eqn, &t);
    c.q.page_shift = 12;                        /* level 0: no page list */
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_cq_cmd(&c, eq.eqn, &t);
    c.q.npages = cpu_to_le32(1);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_cq_cmd(&c, eq.eqn, &r[1]);             /* needs 3 pages */
    c.q.npages = cpu_to_le32(2);
    qsim_cmd_expect(d, &c, RSIM_STS_RANGE);
    qsim_cq_cmd(&c, eq.eqn, &r[1]);
    c.q.page_shift = 13;
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    c.q.page_shift = 0;
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_cq_cmd(&c, eq.eqn, &r[1]);
    c.q.level = 3;
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_cq_cmd(&c, eq.eqn, &r[1]);
    c.q.addr = cpu_to_le64(QSIM_UNMAPPED);      /* the list is read */
    qsim_cmd_expect(d, &c, RSIM_STS_DMA);
    qsim_cq_cmd(&c, eq.eqn, &r[1]);
    c.q.addr = cpu_to_le64(le64_to_cpu(r[1].desc.addr) + 4);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    {
        /* a misaligned page entry; a level 2 root with no leaf */
        uint64_t pages[2] = { t.base | 0x40, t.base };
        uint64_t root = qsim_alloc(d, 8);

        qsim_cq_cmd(&c, eq.eqn, &t);
        c.q.level = RSIM_PBL_LEVEL1;
        c.q.page_shift = 12;
        c.q.npages = cpu_to_le32(2);
        c.q.addr = cpu_to_le64(qsim_pbl_build(d, RSIM_PBL_LEVEL1, pages, 2));
        qsim_cmd_expect(d, &c, RSIM_STS_DMA);
        c.q.level = RSIM_PBL_LEVEL2;
        c.q.addr = cpu_to_le64(root);
        qsim_cmd_expect(d, &c, RSIM_STS_DMA);
    }
    /* the largest depth is accepted (level 0 memory is not read) */
    qsim_cq_cmd(&c, eq.eqn, &t);
    c.q.log2_depth = 16;
    c.db_page = cpu_to_le32(63);
    qsim_cmd_expect(d, &c, RSIM_STS_OK);
    /* table full */
    qsim_cq_cmd(&c, eq.eqn, &t);
    qsim_cmd_expect(d, &c, RSIM_STS_NO_RESOURCES);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_CQ, 1, RSIM_STS_OK);
    g_assert_cmpuint(qsim_cq_create(d, &r[1], eq.eqn, RSIM_PBL_LEVEL1, 3),
                     ==, 1);

    /* DESTROY_CQ */
    qsim_handle_expect(d, RSIM_CMD_DESTROY_CQ, 4, RSIM_STS_BAD_HANDLE);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_CQ, 0x80000000, RSIM_STS_BAD_HANDLE);
    qsim_qp_create(d, &qp, RSIM_QPT_UD, qsim_pd_alloc(d), 2, RSIM_PBL_LEVEL0);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_CQ, 2, RSIM_STS_BUSY);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_QP, qp.qpn, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_CQ, 2, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_CQ, 2, RSIM_STS_BAD_HANDLE);

    /* ARM_CQ */
    QSIM_CMD_INIT(ac, RSIM_CMD_ARM_CQ);
    ac.cqn = cpu_to_le32(0);
    ac.arm = cpu_to_le32(RSIM_CQ_ARM_NEXT);
    qsim_cmd_expect(d, &ac, RSIM_STS_OK);
    ac.arm = cpu_to_le32(RSIM_CQ_ARM_SOLICITED);
    qsim_cmd_expect(d, &ac, RSIM_STS_OK);
    ac.arm = cpu_to_le32(RSIM_CQ_ARM_NONE);
    qsim_cmd_expect(d, &ac, RSIM_STS_INVALID);
    ac.arm = cpu_to_le32(3);
    qsim_cmd_expect(d, &ac, RSIM_STS_INVALID);
    ac.arm = cpu_to_le32(RSIM_CQ_ARM_NEXT);
    ac.cqn = cpu_to_le32(2);
    qsim_cmd_expect(d, &ac, RSIM_STS_BAD_HANDLE);
    ac.cqn = 0;
    ac.reserved[51] = 1;
    qsim_cmd_expect(d, &ac, RSIM_STS_RESERVED);
    qsim_stop(d);
}

static void test_cmd_cq_resize(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_cmd_resize_cq c;
    QSimRing small, tiny, big;
    QSimEnv env;
    struct rsim_cqe e;

    qsim_env_setup(d, &env, RSIM_PBL_LEVEL1, 3);    /* holds 7 */
    qsim_flush_sends(d, &env, 5, 0x100);
    qsim_settle(d);
    g_assert_cmpuint(qsim_ring_prod(d, &env.cq), ==, 5);
    /* consume two */
    qsim_cq_expect_flush(d, &env.cq, 0x100, RSIM_WC_SEND, env.qp.qpn);
    qsim_cq_expect_flush(d, &env.cq, 0x101, RSIM_WC_SEND, env.qp.qpn);

    /* three pending do not fit a ring that holds one */
    qsim_ring_init(d, &tiny, RSIM_PBL_LEVEL0, 1, RSIM_CQE_LOG2_SLOT);
    QSIM_CMD_INIT(c, RSIM_CMD_RESIZE_CQ);
    c.cqn = cpu_to_le32(env.cqn);
    c.q = tiny.desc;
    qsim_cmd_expect(d, &c, RSIM_STS_BUSY);
    g_assert_cmpuint(qsim_ring_prod(d, &tiny), ==, 0);
    g_assert_cmpuint(qsim_ring_prod(d, &env.cq), ==, 5);

    /* errors */
    c.cqn = cpu_to_le32(env.cqn + 1);
    qsim_cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    c.cqn = cpu_to_le32(env.cqn);
    c.q.log2_elem_size = 5;
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    c.q = tiny.desc;
    c.q.log2_depth = 17;
    qsim_cmd_expect(d, &c, RSIM_STS_LIMIT);
    c.q = tiny.desc;
    c.reserved[39] = 1;
    qsim_cmd_expect(d, &c, RSIM_STS_RESERVED);

    /* move to a level 2 ring that holds exactly three */
    qsim_ring_init(d, &small, RSIM_PBL_LEVEL2, 2, RSIM_CQE_LOG2_SLOT);
    QSIM_CMD_INIT(c, RSIM_CMD_RESIZE_CQ);
    c.cqn = cpu_to_le32(env.cqn);
    c.q = small.desc;
    qsim_cmd_expect(d, &c, RSIM_STS_OK);
    g_assert_cmpuint(qsim_ring_prod(d, &small), ==, 3);
    g_assert_cmpuint(qsim_ring_cons(d, &small), ==, 0);
    for (unsigned i = 0; i < 3; i++) {
        qsim_elem_read(d, &small, i, &e, sizeof(e));
        qsim_cqe_check(&e, 0x102 + i, RSIM_WC_WR_FLUSH_ERR, RSIM_WC_SEND, 0,
                       env.qp.qpn);
    }
    /* the new ring is in use: full now, so a new completion waits */
    qsim_flush_sends(d, &env, 1, 0x105);
    qsim_aeq_expect(d, RSIM_EV_CQ_ERR, env.cqn);
    g_assert_cmpuint(qsim_ring_prod(d, &small), ==, 3);
    qsim_cq_expect_flush(d, &small, 0x102, RSIM_WC_SEND, env.qp.qpn);
    qsim_sq_doorbell(d, 0, env.qp.qpn);
    qsim_cq_expect_flush(d, &small, 0x103, RSIM_WC_SEND, env.qp.qpn);
    qsim_cq_expect_flush(d, &small, 0x104, RSIM_WC_SEND, env.qp.qpn);
    qsim_cq_expect_flush(d, &small, 0x105, RSIM_WC_SEND, env.qp.qpn);
    g_assert_cmpuint(qsim_ring_prod(d, &small), ==, 0); /* wrapped */
    qsim_cq_expect_empty(d, &small);
    /* the old ring is no longer written */
    g_assert_cmpuint(qsim_ring_prod(d, &env.cq), ==, 5);

    /* an empty CQ moves to a big ring */
    qsim_ring_init(d, &big, RSIM_PBL_LEVEL0, 8, RSIM_CQE_LOG2_SLOT);
    c.q = big.desc;
    qsim_cmd_expect(d, &c, RSIM_STS_OK);
    g_assert_cmpuint(qsim_ring_prod(d, &big), ==, 0);
    qsim_flush_sends(d, &env, 2, 0x106);
    qsim_cq_expect_flush(d, &big, 0x106, RSIM_WC_SEND, env.qp.qpn);
    qsim_cq_expect_flush(d, &big, 0x107, RSIM_WC_SEND, env.qp.qpn);
    qsim_aeq_expect_none(d);
    qsim_stop(d);
}

static void srq_query_expect(QSimDev *d, uint32_t srqn, uint32_t max_wr,
                             uint32_t max_sge, uint32_t limit)
{
    struct rsim_query_srq_resp r;
    struct rsim_cmd_handle c;

    QSIM_CMD_INIT(c, RSIM_CMD_QUERY_SRQ);
    c.handle = cpu_to_le32(srqn);
    qsim_assert_sts(qsim_cmd_exec(d, &c, &r), RSIM_STS_OK);
    g_assert_cmpuint(le32_to_cpu(r.max_wr), ==, max_wr);
    g_assert_cmpuint(le32_to_cpu(r.max_sge), ==, max_sge);
    g_assert_cmpuint(le32_to_cpu(r.limit), ==, limit);
    for (size_t i = 0; i < ARRAY_SIZE(r.reserved); i++) {
        g_assert_cmphex(r.reserved[i], ==, 0);
    }
}

static void test_cmd_srq(const char *machine)
{
    QSimDev *d = qsim_up(machine, "max-srq=2");
    struct rsim_cmd_create_srq c;
    struct rsim_cmd_modify_srq m;
    struct rsim_cmd_create_qp qc;
    QSimRing s0, s1, t, big, tiny;
    struct rsim_recv_wqe w;
    QSimEnv env;
    QSimQp qp;

    qsim_env_setup(d, &env, RSIM_PBL_LEVEL0, 5);
    /* level 1, 8 entries of 2 SGEs; level 2 */
    qsim_ring_init(d, &s0, RSIM_PBL_LEVEL1, 3, 7);
    qsim_srq_cmd(&c, env.pdn, &s0, 2, 3);
    g_assert_cmpuint(qsim_create(d, &c, NULL), ==, 0);
    srq_query_expect(d, 0, 7, 2, 3);
    qsim_ring_init(d, &s1, RSIM_PBL_LEVEL2, 4, 6);
    qsim_srq_cmd(&c, env.pdn, &s1, 1, 0);
    g_assert_cmpuint(qsim_create(d, &c, NULL), ==, 1);
    srq_query_expect(d, 1, 15, 1, 0);
    qsim_srq_cmd(&c, env.pdn, &s1, 1, 0);
    qsim_cmd_expect(d, &c, RSIM_STS_NO_RESOURCES);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_SRQ, 1, RSIM_STS_OK);

    /* validation */
    qsim_ring_init(d, &t, RSIM_PBL_LEVEL0, 3, 6);
    qsim_srq_cmd(&c, env.pdn + 1, &t, 1, 0);
    qsim_cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    qsim_srq_cmd(&c, env.pdn, &t, 17, 0);
    qsim_cmd_expect(d, &c, RSIM_STS_LIMIT);
    qsim_srq_cmd(&c, env.pdn, &t, 0, 0);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_srq_cmd(&c, env.pdn, &t, 2, 0);        /* 64 < 40 + 32 */
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_srq_cmd(&c, env.pdn, &t, 1, 8);        /* limit < depth */
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_srq_cmd(&c, env.pdn, &t, 1, 0);
    c.q.log2_depth = 16;
    qsim_cmd_expect(d, &c, RSIM_STS_LIMIT);
    qsim_srq_cmd(&c, env.pdn, &t, 1, 0);
    c.q.addr = cpu_to_le64(t.base + 8);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_srq_cmd(&c, env.pdn, &t, 1, 0);
    c.db_page = cpu_to_le16(64);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_srq_cmd(&c, env.pdn, &t, 1, 0);
    c.reserved0 = 1;
    qsim_cmd_expect(d, &c, RSIM_STS_RESERVED);
    qsim_srq_cmd(&c, env.pdn, &t, 1, 0);
    c.reserved[31] = 1;
    qsim_cmd_expect(d, &c, RSIM_STS_RESERVED);
    qsim_srq_cmd(&c, env.pdn, &t, 1, 7);
    c.db_page = cpu_to_le16(63);
    qsim_cmd_expect(d, &c, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_SRQ, 1, RSIM_STS_OK);

    /* MODIFY_SRQ limit */
    QSIM_CMD_INIT(m, RSIM_CMD_MODIFY_SRQ);
    m.srqn = 0;
    m.mask = cpu_to_le32(RSIM_SRQ_LIMIT);
    m.limit = cpu_to_le32(5);
    qsim_cmd_expect(d, &m, RSIM_STS_OK);
    srq_query_expect(d, 0, 7, 2, 5);
    m.limit = cpu_to_le32(8);
    qsim_cmd_expect(d, &m, RSIM_STS_INVALID);
    m.limit = 0;
    qsim_cmd_expect(d, &m, RSIM_STS_OK);
    srq_query_expect(d, 0, 7, 2, 0);
    m.mask = cpu_to_le32(4);
    qsim_cmd_expect(d, &m, RSIM_STS_INVALID);
    m.mask = cpu_to_le32(RSIM_SRQ_LIMIT);
    m.srqn = cpu_to_le32(1);
    qsim_cmd_expect(d, &m, RSIM_STS_BAD_HANDLE);
    m.srqn = 0;
    m.q.log2_depth = 3;                 /* no MAX_WR: must be 0 */
    qsim_cmd_expect(d, &m, RSIM_STS_RESERVED);
    m.q.log2_depth = 0;
    m.reserved[31] = 1;
    qsim_cmd_expect(d, &m, RSIM_STS_RESERVED);
    srq_query_expect(d, 0, 7, 2, 0);

    /* MODIFY_SRQ MAX_WR moves the posted receives */
    for (unsigned i = 0; i < 3; i++) {
        qsim_post_recv(d, &s0, 0x500 + i, NULL);
    }
    qsim_ring_init(d, &tiny, RSIM_PBL_LEVEL0, 1, 7);
    QSIM_CMD_INIT(m, RSIM_CMD_MODIFY_SRQ);
    m.mask = cpu_to_le32(RSIM_SRQ_MAX_WR);
    m.q = tiny.desc;
    qsim_cmd_expect(d, &m, RSIM_STS_BUSY);
    srq_query_expect(d, 0, 7, 2, 0);
    m.q.log2_elem_size = 6;                 /* too small for 2 SGEs */
    qsim_cmd_expect(d, &m, RSIM_STS_INVALID);
    qsim_ring_init(d, &big, RSIM_PBL_LEVEL1, 5, 7);
    m.q = big.desc;
    m.mask = cpu_to_le32(RSIM_SRQ_MAX_WR | RSIM_SRQ_LIMIT);
    m.limit = cpu_to_le32(32);              /* checked against the new depth */
    qsim_cmd_expect(d, &m, RSIM_STS_INVALID);
    srq_query_expect(d, 0, 7, 2, 0);
    m.limit = cpu_to_le32(20);
    qsim_cmd_expect(d, &m, RSIM_STS_OK);
    srq_query_expect(d, 0, 31, 2, 20);
    g_assert_cmpuint(qsim_ring_prod(d, &big), ==, 3);
    g_assert_cmpuint(qsim_ring_cons(d, &big), ==, 0);
    for (unsigned i = 0; i < 3; i++) {
        qsim_elem_read(d, &big, i, &w, sizeof(w));
        g_assert_cmphex(le64_to_cpu(w.wr_id), ==, 0x500 + i);
    }
    qsim_handle_expect(d, RSIM_CMD_QUERY_SRQ, 1, RSIM_STS_BAD_HANDLE);

    /* a QP on the SRQ: the RQ descriptor must be 0 */
    qsim_qp_rings(d, &qp, RSIM_PBL_LEVEL0);
    qsim_qp_cmd(&qc, RSIM_QPT_RC, env.pdn, env.cqn, env.cqn, &qp);
    qc.srqn = 0;
    qsim_cmd_expect(d, &qc, RSIM_STS_RESERVED);
    qc.srqn = cpu_to_le32(1);
    memset(&qc.rq, 0, sizeof(qc.rq));
    qsim_cmd_expect(d, &qc, RSIM_STS_BAD_HANDLE);
    qc.srqn = 0;
    qp.qpn = qsim_create(d, &qc, NULL);
    {
        struct rsim_qp_attr a;

        qsim_qp_query(d, qp.qpn, &a);
        g_assert_cmpuint(le32_to_cpu(a.max_recv_wr), ==, 0);
    }
    qsim_handle_expect(d, RSIM_CMD_DESTROY_SRQ, 0, RSIM_STS_BUSY);
    qsim_handle_expect(d, RSIM_CMD_DEALLOC_PD, env.pdn, RSIM_STS_BUSY);
    /* ERR: QP_LAST_WQE; the SRQ's receives are not flushed */
    qsim_qp_rc_to_init(d, qp.qpn);
    qsim_post_empty(d, &qp.sq, 0x600, RSIM_WR_SEND);
    qsim_qp_move(d, qp.qpn, RSIM_QPS_ERR);
    qsim_aeq_expect(d, RSIM_EV_QP_LAST_WQE, qp.qpn);
    qsim_cq_expect_flush(d, &env.cq, 0x600, RSIM_WC_SEND, qp.qpn);
    qsim_cq_expect_empty(d, &env.cq);
    g_assert_cmpuint(qsim_ring_cons(d, &big), ==, 0);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_QP, qp.qpn, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_SRQ, 0, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_SRQ, 0, RSIM_STS_BAD_HANDLE);
    {
        struct rsim_cmd_handle hc;

        QSIM_CMD_INIT(hc, RSIM_CMD_QUERY_SRQ);
        hc.reserved[1] = 1;
        qsim_cmd_expect(d, &hc, RSIM_STS_RESERVED);
    }
    qsim_stop(d);
}

static void test_cmd_ah(const char *machine)
{
    QSimDev *d = qsim_up(machine, "max-ah=3");
    struct rsim_cmd_create_ah c;
    struct rsim_cmd_gid gc;
    uint8_t gid[16];
    uint32_t pdn = qsim_pd_alloc(d);

    /* the source GID must exist */
    qsim_ah_cmd(&c, pdn);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_gid_add_v4(d, 0, 1);
    qsim_gid_v6(gid, 1);
    qsim_gid_cmd(&gc, RSIM_CMD_ADD_GID, 1, gid);
    qsim_cmd_expect(d, &gc, RSIM_STS_OK);

    /* numbers start at 1 */
    qsim_ah_cmd(&c, pdn);
    g_assert_cmpuint(qsim_create(d, &c, NULL), ==, 1);
    qsim_ah_cmd(&c, pdn);
    c.av.sgid_index = 1;
    c.av.network_type = RSIM_NET_IPV6;
    qsim_gid_v6(c.av.dgid, 2);
    c.av.flow_label = cpu_to_le32(0xfffff);
    g_assert_cmpuint(qsim_create(d, &c, NULL), ==, 2);
    qsim_ah_cmd(&c, pdn);
    qsim_cmd_expect(d, &c, RSIM_STS_NO_RESOURCES);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_AH, 1, RSIM_STS_OK);

    /* validation */
    qsim_ah_cmd(&c, pdn + 1);
    qsim_cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    qsim_ah_cmd(&c, pdn);
    qsim_gid_v6(c.av.dgid, 2);              /* IPv4 type, IPv6 GID */
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_ah_cmd(&c, pdn);
    c.av.network_type = RSIM_NET_IPV6;      /* IPv6 type, IPv4 GIDs */
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_ah_cmd(&c, pdn);
    c.av.sgid_index = 1;                    /* IPv4 type, IPv6 source */
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_ah_cmd(&c, pdn);
    c.av.network_type = 0;
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    c.av.network_type = 3;
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_ah_cmd(&c, pdn);
    c.av.flow_label = cpu_to_le32(1u << 20);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_ah_cmd(&c, pdn);
    c.av.sgid_index = 2;                    /* empty */
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    c.av.sgid_index = 255;                  /* beyond the table */
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_ah_cmd(&c, pdn);
    c.av.reserved = 1;
    qsim_cmd_expect(d, &c, RSIM_STS_RESERVED);
    qsim_ah_cmd(&c, pdn);
    c.reserved[23] = 1;
    qsim_cmd_expect(d, &c, RSIM_STS_RESERVED);
    qsim_ah_cmd(&c, pdn);
    g_assert_cmpuint(qsim_create(d, &c, NULL), ==, 1);

    qsim_handle_expect(d, RSIM_CMD_DESTROY_AH, 0, RSIM_STS_BAD_HANDLE);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_AH, 3, RSIM_STS_BAD_HANDLE);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_AH, 0xffffffff, RSIM_STS_BAD_HANDLE);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_AH, 2, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_AH, 2, RSIM_STS_BAD_HANDLE);
    qsim_stop(d);
}

static void test_cmd_gid(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_cmd_gid c;
    uint8_t gid[16], zero[16] = { 0 };

    qsim_gid_v4(gid, 192, 168, 1, 1);
    qsim_gid_cmd(&c, RSIM_CMD_ADD_GID, 0, gid);
    qsim_cmd_expect(d, &c, RSIM_STS_OK);
    qsim_cmd_expect(d, &c, RSIM_STS_EXISTS);
    qsim_gid_cmd(&c, RSIM_CMD_ADD_GID, 15, gid); /* same GID twice: ok */
    qsim_cmd_expect(d, &c, RSIM_STS_OK);
    qsim_gid_cmd(&c, RSIM_CMD_ADD_GID, 16, gid);
    qsim_cmd_expect(d, &c, RSIM_STS_LIMIT);
    qsim_gid_cmd(&c, RSIM_CMD_ADD_GID, 0xffffffff, gid);
    qsim_cmd_expect(d, &c, RSIM_STS_LIMIT);
    qsim_gid_cmd(&c, RSIM_CMD_ADD_GID, 1, gid);
    c.type = 1;                                 /* RoCEv1 */
    qsim_cmd_expect(d, &c, RSIM_STS_UNSUPPORTED);
    c.type = 0;
    qsim_cmd_expect(d, &c, RSIM_STS_UNSUPPORTED);
    qsim_gid_cmd(&c, RSIM_CMD_ADD_GID, 1, zero);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    qsim_gid_cmd(&c, RSIM_CMD_ADD_GID, 1, gid);
    c.reserved[38] = 1;
    qsim_cmd_expect(d, &c, RSIM_STS_RESERVED);

    qsim_gid_cmd(&c, RSIM_CMD_DEL_GID, 1, NULL);
    qsim_cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    qsim_gid_cmd(&c, RSIM_CMD_DEL_GID, 16, NULL);
    qsim_cmd_expect(d, &c, RSIM_STS_LIMIT);
    qsim_gid_cmd(&c, RSIM_CMD_DEL_GID, 0, gid); /* index only */
    qsim_cmd_expect(d, &c, RSIM_STS_RESERVED);
    qsim_gid_cmd(&c, RSIM_CMD_DEL_GID, 0, NULL);
    c.type = RSIM_GID_TYPE_ROCE_V2;
    qsim_cmd_expect(d, &c, RSIM_STS_RESERVED);
    qsim_gid_cmd(&c, RSIM_CMD_DEL_GID, 0, NULL);
    qsim_cmd_expect(d, &c, RSIM_STS_OK);
    qsim_cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    qsim_gid_cmd(&c, RSIM_CMD_DEL_GID, 15, NULL);
    qsim_cmd_expect(d, &c, RSIM_STS_OK);
    /* the slot is free again */
    qsim_gid_cmd(&c, RSIM_CMD_ADD_GID, 0, gid);
    qsim_cmd_expect(d, &c, RSIM_STS_OK);
    qsim_stop(d);
}

/* The smallest tables the properties allow */
static void test_cmd_min_tables(const char *machine)
{
    QSimDev *d = qsim_start(machine, "max-qp=2,max-cq=1,max-srq=1,max-mr=1,"
                            "max-pd=1,max-ah=2,max-gid=1,msix-vectors=2,"
                            "db-pages=1,max-sge=1,max-qp-wr=1,max-cqe=1,"
                            "max-inline=0,max-rd-atom=1", NULL);
    static const QSimRegVal regs[] = {
        { A_RSIM_CAP_MAX_QP, 2 }, { A_RSIM_CAP_MAX_CQ, 1 },
        { A_RSIM_CAP_MAX_SRQ, 1 }, { A_RSIM_CAP_MAX_MR, 1 },
        { A_RSIM_CAP_MAX_PD, 1 }, { A_RSIM_CAP_MAX_AH, 2 },
        { A_RSIM_CAP_MAX_GID, 1 }, { A_RSIM_CAP_MAX_EQ, 1 },
        { A_RSIM_DB_PAGES, 1 }, { A_RSIM_MSIX_VECTORS, 2 },
        { A_RSIM_CAP_MAX_SEND_SGE, 1 }, { A_RSIM_CAP_MAX_QP_WR, 1 },
        { A_RSIM_CAP_MAX_CQE, 1 }, { A_RSIM_CAP_MAX_INLINE, 0 },
        { A_RSIM_CAP_MAX_RD_ATOM, 1 },
    };
    struct rsim_cmd_create_qp qc;
    struct rsim_cmd_create_cq cc;
    struct rsim_cmd_create_eq ec;
    struct rsim_cmd_create_srq sc;
    struct rsim_cmd_create_ah ac;
    struct rsim_cmd_alloc_stag stc;
    struct rsim_cmd_reg_mr mc;
    struct rsim_cmd_gid gc;
    struct rsim_admin_cmd c;
    uint8_t gid[16];
    uint32_t pdn, cqn;
    QSimRing cq, srq;
    QSimEq eq;
    QSimQp qp;

    qsim_check_regs(d, regs, ARRAY_SIZE(regs));
    g_assert_cmpuint(d->bar2_size, ==, 4096);
    g_assert_cmpuint(qpci_msix_table_size(d->dev), ==, 2);
    qsim_bringup(d);

    pdn = qsim_pd_alloc(d);
    QSIM_CMD_INIT(c, RSIM_CMD_ALLOC_PD);
    qsim_cmd_expect(d, &c, RSIM_STS_NO_RESOURCES);
    qsim_eq_cmd(&ec, 2, qsim_alloc(d, 64), 4);
    qsim_cmd_expect(d, &ec, RSIM_STS_INVALID);
    qsim_eq_create(d, &eq, 1, 4);
    qsim_eq_cmd(&ec, 1, qsim_alloc(d, 64), 4);
    qsim_cmd_expect(d, &ec, RSIM_STS_NO_RESOURCES);

    /* max-cqe=1: depth up to 2 */
    qsim_ring_init(d, &cq, RSIM_PBL_LEVEL0, 2, RSIM_CQE_LOG2_SLOT);
    qsim_cq_cmd(&cc, eq.eqn, &cq);
    qsim_cmd_expect(d, &cc, RSIM_STS_LIMIT);
    qsim_cq_cmd(&cc, eq.eqn, &cq);
    cc.db_page = cpu_to_le32(1);
    qsim_cmd_expect(d, &cc, RSIM_STS_INVALID);
    cqn = qsim_cq_create(d, &cq, eq.eqn, RSIM_PBL_LEVEL1, 1);
    qsim_cq_cmd(&cc, eq.eqn, &cq);
    qsim_cmd_expect(d, &cc, RSIM_STS_NO_RESOURCES);

    /* max-qp=2: only the GSI QP; max-qp-wr=1: depth 2 */
    qsim_ring_init(d, &qp.sq, RSIM_PBL_LEVEL0, 1, 8);
    qsim_ring_init(d, &qp.rq, RSIM_PBL_LEVEL0, 1, 6);
    qsim_qp_cmd(&qc, RSIM_QPT_RC, pdn, cqn, cqn, &qp);
    qsim_cmd_expect(d, &qc, RSIM_STS_NO_RESOURCES);
    qsim_qp_cmd(&qc, RSIM_QPT_GSI, pdn, cqn, cqn, &qp);
    qc.max_inline = cpu_to_le16(1);
    qsim_cmd_expect(d, &qc, RSIM_STS_LIMIT);
    qsim_qp_cmd(&qc, RSIM_QPT_GSI, pdn, cqn, cqn, &qp);
    qc.sq.log2_depth = 2;
    qsim_cmd_expect(d, &qc, RSIM_STS_LIMIT);
    qsim_qp_cmd(&qc, RSIM_QPT_GSI, pdn, cqn, cqn, &qp);
    g_assert_cmpuint(qsim_create(d, &qc, NULL), ==, RSIM_GSI_QPN);
    qsim_cmd_expect(d, &qc, RSIM_STS_EXISTS);
    qsim_qp_cmd(&qc, RSIM_QPT_UD, pdn, cqn, cqn, &qp);
    qsim_cmd_expect(d, &qc, RSIM_STS_NO_RESOURCES);

    qsim_ring_init(d, &srq, RSIM_PBL_LEVEL0, 1, 6);
    qsim_srq_cmd(&sc, pdn, &srq, 1, 1);
    qsim_cmd_expect(d, &sc, RSIM_STS_OK);
    qsim_cmd_expect(d, &sc, RSIM_STS_NO_RESOURCES);

    /* max-mr=1: index 0 is never used, so no MR at all */
    qsim_mr_cmd(&mc, pdn, QSIM_ACC_LW, 0x1000, 4096, 0, 0x1000, 0, 0, 0);
    qsim_cmd_expect(d, &mc, RSIM_STS_NO_RESOURCES);
    QSIM_CMD_INIT(stc, RSIM_CMD_ALLOC_STAG);
    stc.pdn = cpu_to_le32(pdn);
    stc.max_pages = cpu_to_le32(1);
    stc.pbl_addr = cpu_to_le64(d->scratch);
    qsim_cmd_expect(d, &stc, RSIM_STS_NO_RESOURCES);

    /* one GID, one AH */
    qsim_gid_v4(gid, 10, 0, 0, 1);
    qsim_gid_cmd(&gc, RSIM_CMD_ADD_GID, 1, gid);
    qsim_cmd_expect(d, &gc, RSIM_STS_LIMIT);
    qsim_gid_add_v4(d, 0, 1);
    qsim_ah_cmd(&ac, pdn);
    qsim_cmd_expect(d, &ac, RSIM_STS_OK);
    qsim_cmd_expect(d, &ac, RSIM_STS_NO_RESOURCES);
    qsim_assert_alive(d);
    qsim_stop(d);
}

static const QSimTest tests[] = {
    { "cmd/eq", test_cmd_eq },
    { "cmd/ethq", test_cmd_ethq },
    { "cmd/pd", test_cmd_pd },
    { "cmd/cq", test_cmd_cq },
    { "cmd/cq-resize", test_cmd_cq_resize },
    { "cmd/srq", test_cmd_srq },
    { "cmd/ah", test_cmd_ah },
    { "cmd/gid", test_cmd_gid },
    { "cmd/min-tables", test_cmd_min_tables },
};

int main(int argc, char **argv)
{
    return qsim_main(argc, argv, tests, ARRAY_SIZE(tests));
}
