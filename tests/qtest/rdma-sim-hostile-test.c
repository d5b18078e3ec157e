/*
 * QTest testcase for the rdma-sim RDMA NIC: hostile input (random
 * commands and fields, ring indices, MMIO, DMA at its own BARs,
 * resets mid-stream): every case completes defined and the device
 * still answers.  And its other half, hostile output for the driver:
 * the fault-driver property damages the configured share of what the
 * device writes for the driver, the same for the same fault-seed.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <math.h>
#include "libqos/rdma-sim.h"

static const uint8_t all_opcodes[] = {
    RSIM_CMD_NOP, RSIM_CMD_QUERY_DEVICE, RSIM_CMD_QUERY_PORT,
    RSIM_CMD_SET_PORT, RSIM_CMD_QUERY_STATS, RSIM_CMD_CREATE_EQ,
    RSIM_CMD_DESTROY_EQ, RSIM_CMD_CREATE_ETHQ, RSIM_CMD_DESTROY_ETHQ,
    RSIM_CMD_ALLOC_PD, RSIM_CMD_DEALLOC_PD, RSIM_CMD_CREATE_CQ,
    RSIM_CMD_RESIZE_CQ, RSIM_CMD_DESTROY_CQ, RSIM_CMD_ARM_CQ,
    RSIM_CMD_CREATE_QP, RSIM_CMD_MODIFY_QP, RSIM_CMD_QUERY_QP,
    RSIM_CMD_DESTROY_QP, RSIM_CMD_CREATE_SRQ, RSIM_CMD_MODIFY_SRQ,
    RSIM_CMD_QUERY_SRQ, RSIM_CMD_DESTROY_SRQ, RSIM_CMD_CREATE_AH,
    RSIM_CMD_DESTROY_AH, RSIM_CMD_REG_MR, RSIM_CMD_DEREG_MR,
    RSIM_CMD_ALLOC_STAG, RSIM_CMD_MR_TRANSLATE, RSIM_CMD_ADD_GID,
    RSIM_CMD_DEL_GID,
};

/*
 * A random dword biased towards values that reach deep into the
 * commands.  Never an address inside the RAM the test uses (1 MiB ..):
 * the low dword of an address is < 16 or >= 2 GiB.
 */
static uint32_t rand_dword(void)
{
    switch (qsim_rand_range(0, 5)) {
    case 0:
        return 0;
    case 1:
        return qsim_rand_range(0, 16);
    case 2:
        return qsim_rand_range(0, 16) << 8 |
               qsim_rand_range(0, 16);
    case 3:
        return 0xffffffff;
    default:
        return qsim_rand() | 0x80000000;
    }
}

static void check_status_range(unsigned st)
{
    g_assert_cmpuint(st, <=, RSIM_STS_EXISTS);
}

/* Seeded random commands: every one completes with a defined status. */
static void test_hostile_garbage(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_qp_attr a, before, after;
    unsigned counts[256] = { 0 };
    QSimEnv env;

    qsim_gid_add_v4(d, 0, 1);
    qsim_env_setup(d, &env, RSIM_PBL_LEVEL0, 4);
    for (unsigned i = 0; i < 600; i++) {
        uint32_t cmd[16];
        unsigned st;

        if (qsim_rand_range(0, 3)) {
            for (unsigned k = 1; k < 16; k++) {
                cmd[k] = cpu_to_le32(rand_dword());
            }
        } else {
            /* mostly zero: commands with few parameters get through */
            memset(cmd, 0, sizeof(cmd));
            cmd[qsim_rand_range(1, 16)] = cpu_to_le32(rand_dword());
        }
        if (qsim_rand_range(0, 4)) {
            cmd[0] = all_opcodes[qsim_rand_range(0,
                                                 ARRAY_SIZE(all_opcodes))];
        } else {
            cmd[0] = qsim_rand_range(0, 256);
        }
        if (!qsim_rand_range(0, 8)) {
            cmd[0] |= qsim_rand_range(1, 256) << 8;
        }
        if (qsim_rand_range(0, 2)) {
            /* clear the tail, where most reserved fields are */
            memset(&cmd[qsim_rand_range(4, 16)], 0, 4);
            memset(&cmd[12], 0, 16);
        }
        cmd[0] = cpu_to_le32(cmd[0]);
        st = qsim_cmd_exec(d, cmd, NULL);
        check_status_range(st);
        counts[st]++;
        if (st != RSIM_STS_OK) {
            qsim_assert_alive(d);
        }
    }
    for (unsigned st = 0; st <= RSIM_STS_EXISTS; st++) {
        g_test_message("%-12s %u", qsim_sts_name(st), counts[st]);
    }
    g_assert_cmpuint(counts[RSIM_STS_OK], >, 0);
    qsim_assert_alive(d);

    /* random attribute blocks: a refused modify changes nothing */
    for (unsigned i = 0; i < 300; i++) {
        uint32_t *w = (uint32_t *)&a;
        unsigned st;

        for (unsigned k = 0; k < sizeof(a) / 4; k++) {
            w[k] = cpu_to_le32(rand_dword());
        }
        qsim_attr_set_mask(&a, qsim_rand() &
                           (qsim_rand_range(0, 8) ? RSIM_QP_ATTR_SUPPORTED
                            : 0xffffffff));
        a.qp_state = qsim_rand_range(0, 8);
        a.av.sgid_index = qsim_rand_range(0, 2);
        a.av.network_type = qsim_rand_range(0, 3);
        if (qsim_rand_range(0, 8)) {
            a.reserved0 = 0;
            memset(a.reserved1, 0, sizeof(a.reserved1));
            a.av.reserved = 0;
        }
        qsim_qp_query(d, env.qp.qpn, &before);
        st = qsim_qp_modify(d, env.qp.qpn, &a);
        check_status_range(st);
        g_assert_cmpuint(st, !=, RSIM_STS_DMA);
        if (st != RSIM_STS_OK) {
            qsim_assert_alive(d);
            qsim_qp_query(d, env.qp.qpn, &after);
            g_assert_cmpmem(&before, sizeof(before), &after, sizeof(after));
        }
    }
    /* a reset after all that leaves a working device */
    qsim_bringup(d);
    qsim_assert_alive(d);
    g_assert_cmpuint(qsim_pd_alloc(d), ==, 0);
    qsim_stop(d);
}

/* Execute a mutated command; destroy what it made if it was accepted. */
static bool mutation_ok(QSimDev *d, const void *cmd, uint8_t destroy)
{
    struct rsim_create_resp r;
    unsigned st = qsim_cmd_exec(d, cmd, &r);

    check_status_range(st);
    g_assert_cmpuint(st, !=, RSIM_STS_BAD_OPCODE);
    if (st != RSIM_STS_OK) {
        qsim_assert_alive(d);
        return false;
    }
    qsim_handle_expect(d, destroy, qsim_resp_handle(&r), RSIM_STS_OK);
    return true;
}

/*
 * Mutate every byte and every dword of a valid command with extreme
 * values; whatever is accepted is destroyed again.
 */
static void fuzz_cmd(QSimDev *d, const void *base, uint8_t destroy)
{
    static const uint8_t bytes[] = { 0xff, 0x80, 0x7f, 0x01, 0x00 };
    static const uint32_t dwords[] = {
        0xffffffff, 0x80000000, 0x7fffffff, 0x00010000, 0x00001000, 0,
    };
    uint8_t cmd[64];
    unsigned ok = 0, n = 0;

    for (unsigned off = 4; off < 64; off++) {
        for (size_t v = 0; v < ARRAY_SIZE(bytes); v++) {
            memcpy(cmd, base, sizeof(cmd));
            if (cmd[off] == bytes[v]) {
                continue;
            }
            cmd[off] = bytes[v];
            ok += mutation_ok(d, cmd, destroy);
            n++;
        }
    }
    for (unsigned off = 4; off < 64; off += 4) {
        for (size_t v = 0; v < ARRAY_SIZE(dwords); v++) {
            uint32_t le = cpu_to_le32(dwords[v]);

            memcpy(cmd, base, sizeof(cmd));
            memcpy(cmd + off, &le, 4);
            ok += mutation_ok(d, cmd, destroy);
            n++;
        }
    }
    g_test_message("%u of %u mutations accepted", ok, n);
    /* the base command itself still works */
    g_assert_true(mutation_ok(d, base, destroy));
    qsim_assert_alive(d);
}

static void test_hostile_fields(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_cmd_create_qp qc;
    struct rsim_cmd_reg_mr mc;
    struct rsim_cmd_create_cq cc;
    struct rsim_cmd_create_srq sc;
    struct rsim_cmd_create_eq ec;
    struct rsim_cmd_create_ah ac;
    struct rsim_qp_attr base, a, before, after;
    uint64_t pages[4];
    QSimRing srq;
    QSimEnv env;
    QSimQp qp;

    qsim_gid_add_v4(d, 0, 1);
    qsim_env_setup(d, &env, RSIM_PBL_LEVEL0, 4);

    qsim_qp_rings(d, &qp, RSIM_PBL_LEVEL1);
    qsim_qp_cmd(&qc, RSIM_QPT_RC, env.pdn, env.cqn, env.cqn, &qp);
    fuzz_cmd(d, &qc, RSIM_CMD_DESTROY_QP);

    for (unsigned i = 0; i < 4; i++) {
        pages[i] = 0x600000000ULL + i * 0x1000;
    }
    qsim_mr_cmd(&mc, env.pdn, QSIM_ACC_LW | QSIM_ACC_RR, 0x10000123, 3 * 4096,
                RSIM_PBL_LEVEL1, qsim_pbl_build(d, RSIM_PBL_LEVEL1, pages,
                                                4), 4, 12,
                0x123);
    fuzz_cmd(d, &mc, RSIM_CMD_DEREG_MR);

    {
        QSimRing cq;

        qsim_ring_init(d, &cq, RSIM_PBL_LEVEL2, 4, RSIM_CQE_LOG2_SLOT);
        qsim_cq_cmd(&cc, env.eq.eqn, &cq);
        fuzz_cmd(d, &cc, RSIM_CMD_DESTROY_CQ);
    }
    qsim_ring_init(d, &srq, RSIM_PBL_LEVEL0, 3, 6);
    qsim_srq_cmd(&sc, env.pdn, &srq, 1, 2);
    fuzz_cmd(d, &sc, RSIM_CMD_DESTROY_SRQ);
    qsim_eq_cmd(&ec, 2, qsim_alloc(d, 16 * 16), 16);
    fuzz_cmd(d, &ec, RSIM_CMD_DESTROY_EQ);
    qsim_ah_cmd(&ac, env.pdn);
    fuzz_cmd(d, &ac, RSIM_CMD_DESTROY_AH);

    /* MODIFY_QP INIT -> RTR: every byte of the attribute block */
    qsim_attr_rc_rtr(&base);
    for (unsigned off = 0; off < sizeof(base); off++) {
        static const uint8_t vals[] = { 0xff, 0x80, 0x01, 0x00 };

        for (size_t v = 0; v < ARRAY_SIZE(vals); v++) {
            unsigned st;

            a = base;
            if (((uint8_t *)&a)[off] == vals[v]) {
                continue;
            }
            ((uint8_t *)&a)[off] = vals[v];
            qsim_qp_query(d, env.qp.qpn, &before);
            st = qsim_qp_modify(d, env.qp.qpn, &a);
            check_status_range(st);
            if (st == RSIM_STS_OK) {
                qsim_qp_move(d, env.qp.qpn, RSIM_QPS_RESET);
                qsim_qp_rc_to_init(d, env.qp.qpn);
            } else {
                qsim_assert_alive(d);
                qsim_qp_query(d, env.qp.qpn, &after);
                g_assert_cmpmem(&before, sizeof(before), &after,
                                sizeof(after));
            }
        }
    }
    qsim_qp_modify_ok(d, env.qp.qpn, &base);
    qsim_assert_alive(d);
    qsim_stop(d);
}

/* Ring indices and WQE contents are the guest's: any value is survived. */
static void test_hostile_rings(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_send_wqe w;
    struct rsim_cqe e;
    QSimEnv env;

    qsim_env_setup(d, &env, RSIM_PBL_LEVEL1, 5);
    qsim_qp_move(d, env.qp.qpn, RSIM_QPS_ERR);
    /* indices are masked: 0xfffffff5 is 5 in a ring of 8 */
    qsim_ring_set_prod(d, &env.qp.sq, 0xfffffff5);
    qsim_ring_set_cons(d, &env.cq, 0xffffff00);
    qsim_sq_doorbell(d, 0, env.qp.qpn);
    qsim_settle(d);
    g_assert_cmpuint(qsim_ring_prod(d, &env.cq), ==, 5);
    g_assert_cmpuint(qsim_ring_cons(d, &env.qp.sq), ==, 5);
    /* garbage WQEs: unknown opcodes complete as SEND */
    memset(&w, 0xff, sizeof(w));
    qsim_elem_write(d, &env.qp.sq, 5, &w, sizeof(w));
    qsim_ring_set_prod(d, &env.qp.sq, 6);
    qsim_db(d, 0, A_RSIM_DB_RQ, env.qp.qpn);
    qsim_settle(d);
    qsim_elem_read(d, &env.cq, 5, &e, sizeof(e));
    qsim_cqe_check(&e, 0xffffffffffffffffULL, RSIM_WC_WR_FLUSH_ERR,
                   RSIM_WC_SEND, 0, env.qp.qpn);
    /* a CQ consumer index just ahead of the producer: the CQ is full */
    qsim_ring_set_cons(d, &env.cq, 7);
    qsim_ring_set_prod(d, &env.qp.sq, 0);       /* two more WQEs */
    qsim_sq_doorbell(d, 0, env.qp.qpn);
    qsim_aeq_expect(d, RSIM_EV_CQ_ERR, env.cqn);
    g_assert_cmpuint(qsim_ring_cons(d, &env.qp.sq), ==, 6);
    g_assert_cmpuint(qsim_ring_prod(d, &env.cq), ==, 6);
    qsim_ring_set_cons(d, &env.cq, 6);
    qsim_sq_doorbell(d, 0, env.qp.qpn);
    qsim_settle(d);
    g_assert_cmpuint(qsim_ring_cons(d, &env.qp.sq), ==, 0);
    g_assert_cmpuint(qsim_ring_prod(d, &env.cq), ==, 8);
    /* an RQ producer index beyond the ring: masked to 7 */
    qsim_ring_set_prod(d, &env.qp.rq, 0xffffffff);
    qsim_db(d, 0, A_RSIM_DB_RQ, env.qp.qpn);
    qsim_settle(d);
    g_assert_cmpuint(qsim_ring_cons(d, &env.qp.rq), ==, 7);
    g_assert_cmpuint(qsim_ring_prod(d, &env.cq), ==, 15);
    qsim_aeq_expect_none(d);
    qsim_assert_alive(d);
    /* RESET puts the rings in order again */
    qsim_qp_move(d, env.qp.qpn, RSIM_QPS_RESET);
    g_assert_cmpuint(qsim_ring_prod(d, &env.qp.rq), ==, 0);
    g_assert_cmpuint(qsim_ring_cons(d, &env.qp.rq), ==, 0);
    qsim_assert_alive(d);
    qsim_stop(d);
}

/* Wrong sizes, misaligned and read-only accesses change nothing. */
static void test_hostile_mmio(const char *machine)
{
    static const uint32_t ro[] = {
        A_RSIM_VERSION, A_RSIM_FEATURES, A_RSIM_DMA_WIDTH, A_RSIM_DEV_STATUS,
        A_RSIM_ADMIN_TIMEOUT, A_RSIM_RESET_TIMEOUT, A_RSIM_DB_PAGES,
        A_RSIM_MSIX_VECTORS, A_RSIM_NUM_PORTS, A_RSIM_AQ_HEAD,
        A_RSIM_ACQ_TAIL, A_RSIM_AEQ_TAIL,
    };
    static const uint32_t wo[] = {
        A_RSIM_AQ_TAIL, A_RSIM_ACQ_HEAD, A_RSIM_AEQ_HEAD, A_RSIM_EQ_DB,
        A_RSIM_ETH_TX_DB, A_RSIM_ETH_RX_DB,
    };
    QSimDev *d = qsim_up(machine, NULL);
    g_autofree uint32_t *regs = g_new(uint32_t, 1024);
    uint64_t b0 = d->bar0.addr;
    QSimEnv env;

    /* the whole BAR reads without side effects */
    for (uint32_t off = 0; off < 4096; off += 4) {
        regs[off / 4] = qsim_rd(d, off);
    }
    for (uint32_t off = 0; off < 4096; off += 4) {
        g_assert_cmphex(qsim_rd(d, off), ==, regs[off / 4]);
    }
    for (uint32_t off = 0xb0; off < 0x100; off += 4) {
        g_assert_cmphex(regs[off / 4], ==, 0);
    }
    for (uint32_t off = 0x180; off < 4096; off += 4) {
        g_assert_cmphex(regs[off / 4], ==, 0);
    }
    for (size_t i = 0; i < ARRAY_SIZE(wo); i++) {
        g_assert_cmphex(regs[wo[i] / 4], ==, 0);
    }

    /* read-only registers ignore writes */
    for (size_t i = 0; i < ARRAY_SIZE(ro); i++) {
        qsim_wr(d, ro[i], 0xffffffff);
        qsim_wr(d, ro[i], 0);
        g_assert_cmphex(qsim_rd(d, ro[i]), ==, regs[ro[i] / 4]);
    }
    for (uint32_t off = A_RSIM_CAP_MAX_QP; off <= A_RSIM_CAP_MAX_PKEYS;
         off += 4) {
        qsim_wr(d, off, 0x12345678);
        g_assert_cmphex(qsim_rd(d, off), ==, regs[off / 4]);
    }
    /* unassigned offsets */
    for (uint32_t off = 0x180; off < 4096; off += 0x124) {
        qsim_wr(d, off, 0xffffffff);
    }
    qsim_assert_alive(d);

    /* INTR_MASK keeps its two bits */
    qsim_wr(d, A_RSIM_INTR_MASK, 0xffffffff);
    g_assert_cmphex(qsim_rd(d, A_RSIM_INTR_MASK), ==, 3);
    qsim_wr(d, A_RSIM_INTR_MASK, 0xfffffffe);
    g_assert_cmphex(qsim_rd(d, A_RSIM_INTR_MASK), ==, 2);
    qsim_wr(d, A_RSIM_INTR_MASK, 3);

    /* reserved DEV_CTRL bits with ENABLE kept: nothing happens */
    qsim_wr(d, A_RSIM_DEV_CTRL, 0xfffffffd);
    g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_STATUS), ==, QSIM_READY);
    g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_CTRL), ==,
                    R_RSIM_DEV_CTRL_ENABLE_MASK);

    /*
     * 1- and 2-byte and misaligned accesses are ignored.  (An 8-byte
     * qtest access is split into two 4-byte ones by the memory core.)
     */
    qtest_writeb(d->qts, b0 + A_RSIM_DEV_CTRL, 2);
    qtest_writew(d->qts, b0 + A_RSIM_DEV_CTRL, 2);
    qtest_writel(d->qts, b0 + A_RSIM_DEV_CTRL + 1, 0xffffffff);
    qtest_writel(d->qts, b0 + A_RSIM_DEV_CTRL + 2, 0xffffffff);
    qtest_writel(d->qts, b0 + A_RSIM_DEV_STATUS - 1, 0xffffffff);
    qtest_writeb(d->qts, b0 + A_RSIM_INTR_MASK, 0);
    qtest_writew(d->qts, b0 + A_RSIM_INTR_MASK, 0);
    qtest_writeb(d->qts, b0 + A_RSIM_AQ_TAIL, 5);
    qtest_writel(d->qts, b0 + 0xffe, 0xffffffff);
    {
        uint8_t junk[7] = { 2, 2, 2, 2, 2, 2, 2 };

        qtest_memwrite(d->qts, b0 + A_RSIM_DEV_CTRL + 1, junk, sizeof(junk));
    }
    qtest_readb(d->qts, b0 + A_RSIM_VERSION + 2);
    qtest_readw(d->qts, b0 + A_RSIM_VERSION + 1);
    qtest_readl(d->qts, b0 + A_RSIM_DEV_STATUS + 3);
    qtest_readl(d->qts, b0 + 0xffd);
    g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_STATUS), ==, QSIM_READY);
    g_assert_cmphex(qsim_rd(d, A_RSIM_INTR_MASK), ==, 3);
    g_assert_cmpuint(qsim_rd(d, A_RSIM_AQ_HEAD), ==, d->aq_tail);
    qsim_settle(d);
    g_assert_cmpuint(qsim_rd(d, A_RSIM_AQ_HEAD), ==, d->aq_tail);
    qsim_assert_alive(d);

    /* the same on a doorbell: only a full 32-bit write rings */
    qsim_env_setup(d, &env, RSIM_PBL_LEVEL0, 4);
    qsim_qp_move(d, env.qp.qpn, RSIM_QPS_ERR);
    qsim_post_empty(d, &env.qp.sq, 9, RSIM_WR_SEND);
    qtest_writeb(d->qts, d->bar2.addr + A_RSIM_DB_SQ, env.qp.qpn);
    qtest_writew(d->qts, d->bar2.addr + A_RSIM_DB_SQ, env.qp.qpn);
    qtest_writel(d->qts, d->bar2.addr + A_RSIM_DB_SQ + 2, env.qp.qpn);
    qtest_writel(d->qts, d->bar2.addr + 0xfff, env.qp.qpn);
    qtest_readb(d->qts, d->bar2.addr + 3);
    qsim_cq_expect_empty(d, &env.cq);
    qsim_sq_doorbell(d, 0, env.qp.qpn);
    qsim_cq_expect_flush(d, &env.cq, 9, RSIM_WC_SEND, env.qp.qpn);
    qsim_assert_alive(d);
    qsim_stop(d);
}

/*
 * DMA aimed at the device's own BARs: it must neither re-enter itself
 * nor hang; command and event queue DMA failing makes it fatal.
 */
static void test_hostile_dma_self(const char *machine)
{
    QSimDev *d = qsim_start(machine, NULL, NULL);
    uint64_t b0 = d->bar0.addr, b2 = d->bar2.addr;
    struct rsim_cmd_query_stats sc;
    struct rsim_cmd_qp_attr qc;
    struct rsim_cmd_create_cq cc;
    struct rsim_cmd_reg_mr mc;
    struct rsim_admin_cmd nop;
    uint32_t key, cqn;
    QSimRing cq;
    QSimEnv env;
    QSimQp qp;

    QSIM_CMD_INIT(nop, RSIM_CMD_NOP);

    /* the AQ in BAR0 and in BAR2 */
    for (unsigned i = 0; i < 2; i++) {
        qsim_reset(d);
        qsim_set_queues(d, 8, 8, 8);
        qsim_wr64(d, A_RSIM_AQ_BASE_LO, i ? b2 : b0);
        qsim_wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
        qsim_aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
        qsim_wr(d, A_RSIM_AQ_TAIL, 1);
        qsim_settle(d);
        g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_STATUS), ==,
                        QSIM_FATAL_STATUS(RSIM_FATAL_ADMIN_DMA));
        qsim_aeq_expect_data(d, RSIM_EV_DEVICE_FATAL, 0, RSIM_FATAL_ADMIN_DMA);
        g_assert_cmphex(qtest_readl(d->qts, d->acq), ==, 0);
    }
    /* the ACQ in BAR0 */
    qsim_reset(d);
    qsim_set_queues(d, 8, 8, 8);
    qsim_wr64(d, A_RSIM_ACQ_BASE_LO, b0);
    qsim_wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
    qsim_aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    qsim_aq_submit(d, &nop);
    qsim_settle(d);
    g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_STATUS), ==,
                    QSIM_FATAL_STATUS(RSIM_FATAL_ADMIN_DMA));
    qsim_aeq_expect_data(d, RSIM_EV_DEVICE_FATAL, 0, RSIM_FATAL_ADMIN_DMA);
    /* the AEQ in BAR0: the port event fails at ENABLE */
    qsim_reset(d);
    qsim_set_queues(d, 8, 8, 8);
    qsim_wr64(d, A_RSIM_AEQ_BASE_LO, b0 + 0x40);
    qsim_wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
    g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_STATUS), ==,
                    QSIM_FATAL_STATUS(RSIM_FATAL_AEQ_DMA));
    g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_CTRL), ==,
                    R_RSIM_DEV_CTRL_ENABLE_MASK);

    /* command buffers in the BARs: DMA status, registers unchanged */
    qsim_bringup(d);
    QSIM_CMD_INIT(sc, RSIM_CMD_QUERY_STATS);
    sc.addr = cpu_to_le64(b0);
    sc.len = cpu_to_le32(RSIM_STAT_COUNT * 8);
    qsim_cmd_expect(d, &sc, RSIM_STS_DMA);
    sc.addr = cpu_to_le64(b2);
    qsim_cmd_expect(d, &sc, RSIM_STS_DMA);
    g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_CTRL), ==,
                    R_RSIM_DEV_CTRL_ENABLE_MASK);
    g_assert_cmphex(qsim_rd(d, A_RSIM_INTR_MASK), ==, 3);
    g_assert_cmphex(qsim_rd64(d, A_RSIM_AQ_BASE_LO), ==, d->aq);
    qsim_env_setup(d, &env, RSIM_PBL_LEVEL0, 4);
    QSIM_CMD_INIT(qc, RSIM_CMD_QUERY_QP);
    qc.qpn = cpu_to_le32(env.qp.qpn);
    qc.addr = cpu_to_le64(b0 + 0x100);
    qsim_cmd_expect(d, &qc, RSIM_STS_DMA);
    g_assert_cmphex(qsim_rd64(d, A_RSIM_AQ_BASE_LO), ==, d->aq);
    QSIM_CMD_INIT(qc, RSIM_CMD_MODIFY_QP);
    qc.qpn = cpu_to_le32(env.qp.qpn);
    qc.addr = cpu_to_le64(b0);
    qsim_cmd_expect(d, &qc, RSIM_STS_DMA);
    /* a CQ ring over the doorbells */
    qsim_ring_init(d, &cq, RSIM_PBL_LEVEL0, 3, RSIM_CQE_LOG2_SLOT);
    qsim_cq_cmd(&cc, env.eq.eqn, &cq);
    cc.q.addr = cpu_to_le64(b2);
    cqn = qsim_create(d, &cc, NULL);
    qsim_qp_create(d, &qp, RSIM_QPT_RC, env.pdn, cqn, RSIM_PBL_LEVEL0);
    qsim_qp_rc_to_init(d, qp.qpn);
    qsim_post_empty(d, &qp.sq, 1, RSIM_WR_SEND);
    qsim_qp_move(d, qp.qpn, RSIM_QPS_ERR);
    qsim_aeq_expect_data(d, RSIM_EV_CQ_ERR, cqn, 1);
    /* a page list in BAR0 */
    qsim_mr_cmd(&mc, env.pdn, QSIM_ACC_LW, 0, 4096, RSIM_PBL_LEVEL1, b0, 1, 12,
                0);
    key = qsim_create(d, &mc, NULL);
    qsim_xlate_fail(d, key, env.pdn, 0, 0, 1, RSIM_STS_DMA);
    /* a QP ring page list in BAR0 */
    {
        struct rsim_cmd_create_qp c;
        QSimQp l1;

        qsim_qp_rings(d, &l1, RSIM_PBL_LEVEL1);
        qsim_qp_cmd(&c, RSIM_QPT_RC, env.pdn, env.cqn, env.cqn, &l1);
        c.sq.addr = cpu_to_le64(b0);
        qsim_cmd_expect(d, &c, RSIM_STS_DMA);
    }
    /* the admin MSI-X message aimed at DEV_CTRL with RESET */
    qsim_msix_setup(d);
    {
        QPCIDevice *dev = d->dev;

        qpci_io_writel(dev, dev->msix_table_bar, dev->msix_table_off +
                       PCI_MSIX_ENTRY_LOWER_ADDR, b0 + A_RSIM_DEV_CTRL);
        qpci_io_writel(dev, dev->msix_table_bar, dev->msix_table_off +
                       PCI_MSIX_ENTRY_UPPER_ADDR, 0);
        qpci_io_writel(dev, dev->msix_table_bar, dev->msix_table_off +
                       PCI_MSIX_ENTRY_DATA, R_RSIM_DEV_CTRL_RESET_MASK);
    }
    qsim_wr(d, A_RSIM_INTR_MASK, 0);
    qsim_assert_alive(d);
    qsim_assert_alive(d);
    g_assert_cmphex(qsim_rd(d, A_RSIM_INTR_MASK), ==, 0);
    qsim_bringup(d);
    qsim_assert_alive(d);
    qsim_stop(d);
}

/* Commands queued before a reset never run afterwards. */
static void test_hostile_reset_midstream(const char *machine)
{
    QSimDev *d = qsim_start(machine, NULL, NULL);
    uint8_t before[2 * RSIM_ACQ_ENTRY_SIZE], after[2 * RSIM_ACQ_ENTRY_SIZE];
    struct rsim_admin_cmd c;
    struct rsim_admin_cqe cqe;
    uint64_t old_aq, old_acq;

    qsim_reset(d);
    qsim_enable(d, 8, 2, 8);
    qsim_aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    QSIM_CMD_INIT(c, RSIM_CMD_ALLOC_PD);
    for (unsigned i = 0; i < 5; i++) {
        qsim_aq_submit(d, &c);
    }
    qsim_settle(d);
    g_assert_cmpuint(qsim_rd(d, A_RSIM_AQ_HEAD), ==, 1); /* ACQ full */
    old_aq = d->aq;
    old_acq = d->acq;
    qtest_memread(d->qts, old_acq, before, sizeof(before));

    qsim_reset(d);
    /* same AQ memory, still holding the stale commands */
    qsim_set_queues(d, 8, 8, 8);
    qsim_wr64(d, A_RSIM_AQ_BASE_LO, old_aq);
    d->aq = old_aq;
    qsim_wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
    qsim_aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    qsim_settle(d);
    g_assert_cmpuint(qsim_rd(d, A_RSIM_AQ_HEAD), ==, 0);
    g_assert_cmpuint(qsim_rd(d, A_RSIM_ACQ_TAIL), ==, 0);
    g_assert_false(qsim_acq_poll(d, &cqe, 0));
    qtest_memread(d->qts, old_acq, after, sizeof(after));
    g_assert_cmpmem(before, sizeof(before), after, sizeof(after));
    /* the PD made before the reset is gone, no stale one was made */
    QSIM_CMD_INIT(c, RSIM_CMD_NOP);
    qsim_assert_sts(qsim_cmd_exec(d, &c, NULL), RSIM_STS_OK);
    g_assert_cmpuint(qsim_pd_alloc(d), ==, 0);
    g_assert_cmpuint(qsim_pd_alloc(d), ==, 1);

    /* a reset right behind the doorbell: whatever ran, nothing after */
    for (unsigned i = 0; i < 10; i++) {
        QSIM_CMD_INIT(c, RSIM_CMD_ALLOC_PD);
        qsim_aq_submit(d, &c);
        qsim_aq_submit(d, &c);
        qsim_wr(d, A_RSIM_DEV_CTRL, i & 1 ? 0 : R_RSIM_DEV_CTRL_RESET_MASK);
        qsim_settle(d);
        qsim_check_reset_regs(d);
        qsim_enable(d, 4, 4, 4);
        qsim_aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
        g_assert_cmpuint(qsim_pd_alloc(d), ==, 0);
    }
    qsim_assert_alive(d);
    qsim_stop(d);
}

/* Admin doorbells with values out of range */
static void test_hostile_aq_tail(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_admin_cqe cqe;

    qsim_assert_alive(d);
    qsim_wr(d, A_RSIM_AQ_TAIL, 32);
    qsim_wr(d, A_RSIM_AQ_TAIL, 33);
    qsim_wr(d, A_RSIM_AQ_TAIL, 0xffffffff);
    qsim_wr(d, A_RSIM_AQ_TAIL, 0x80000001);
    qsim_settle(d);
    g_assert_cmpuint(qsim_rd(d, A_RSIM_AQ_HEAD), ==, 1);
    g_assert_false(qsim_acq_poll(d, &cqe, 0));
    qsim_wr(d, A_RSIM_ACQ_HEAD, 32);
    qsim_wr(d, A_RSIM_ACQ_HEAD, 0xffffffff);
    qsim_wr(d, A_RSIM_AEQ_HEAD, 64);
    qsim_wr(d, A_RSIM_AEQ_HEAD, 0x80000000);
    qsim_assert_alive(d);

    /* a tail over zeroed slots: they are NOPs with ID 0 */
    qsim_wr(d, A_RSIM_AQ_TAIL, d->aq_tail + 3);
    for (unsigned i = 0; i < 3; i++) {
        g_assert_true(qsim_acq_poll(d, &cqe, QSIM_POLL_US));
        g_assert_cmpuint(qsim_cqe_id(&cqe), ==, 0);
        g_assert_cmpuint(qsim_cqe_status(&cqe), ==, RSIM_STS_OK);
        g_assert_cmpuint(le16_to_cpu(cqe.sq_head), ==, d->aq_tail + i + 1);
    }
    qsim_acq_ack(d);
    d->aq_tail += 3;
    qsim_assert_alive(d);
    qsim_stop(d);
}

/*
 * fault-driver: a run of the device whose completions, events and admin
 * completions the test checks against what they should say.
 */
typedef struct FaultRun {
    QSimDev *d;
    unsigned entries;           /* written by the device */
    unsigned damaged;           /* ... differing from what they should say */
    GByteArray *seen;           /* all of them, to compare runs */
} FaultRun;

static void fault_seen(FaultRun *r, const void *entry, size_t len, bool bad)
{
    r->entries++;
    r->damaged += bad;
    g_byte_array_append(r->seen, entry, len);
}

/*
 * A command that succeeds: commands run one at a time, so the next admin
 * completion is its one, whatever the id and status in it say.
 */
static void fault_exec(FaultRun *r, const void *cmd, void *result)
{
    struct rsim_admin_cqe cqe;
    uint16_t id = qsim_aq_submit(r->d, cmd);

    g_assert_true(qsim_acq_poll(r->d, &cqe, QSIM_POLL_US));
    qsim_acq_ack(r->d);
    fault_seen(r, &cqe, sizeof(cqe), qsim_cqe_id(&cqe) != id ||
               qsim_cqe_status(&cqe) != RSIM_STS_OK);
    if (result) {
        memcpy(result, cqe.result, sizeof(cqe.result));
    }
}

static uint32_t fault_create(FaultRun *r, const void *cmd)
{
    struct rsim_create_resp resp;

    fault_exec(r, cmd, &resp);
    return qsim_resp_handle(&resp);
}

static void fault_eqe(FaultRun *r, const struct rsim_eqe *e, unsigned type,
                      uint32_t object)
{
    fault_seen(r, e, sizeof(*e), qsim_eqe_type(e) != type ||
               le32_to_cpu(e->object) != object);
}

/*
 * Bring a device with these properties up, make it write n flush
 * completions with a completion event each, and check that its counter
 * of damaged entries agrees with the test.
 */
static void fault_run(FaultRun *r, const char *machine, const char *props,
                      unsigned n)
{
    struct rsim_cmd_handle pd;
    struct rsim_cmd_create_eq ec;
    struct rsim_cmd_create_cq cc;
    struct rsim_cmd_create_qp qc;
    struct rsim_cmd_qp_attr mc;
    struct rsim_cmd_query_stats sc;
    struct rsim_qp_attr a[2];
    struct rsim_eqe e;
    QSimEq eq = { .vector = 1, .depth = 16, .phase = true };
    QSimRing cq;
    QSimQp qp;
    uint32_t pdn, cqn, damaged;

    r->d = qsim_start(machine, props, NULL);
    r->seen = g_byte_array_new();
    qsim_reset(r->d);
    qsim_enable(r->d, 32, 32, 64);
    g_assert_true(qsim_aeq_poll(r->d, &e, QSIM_POLL_US));
    fault_eqe(r, &e, RSIM_EV_PORT_ACTIVE, 1);

    QSIM_CMD_INIT(pd, RSIM_CMD_ALLOC_PD);
    pdn = fault_create(r, &pd);
    eq.addr = qsim_alloc(r->d, eq.depth * RSIM_EQ_ENTRY_SIZE);
    qsim_eq_cmd(&ec, eq.vector, eq.addr, eq.depth);
    eq.eqn = fault_create(r, &ec);
    qsim_ring_init(r->d, &cq, RSIM_PBL_LEVEL0, 4, RSIM_CQE_LOG2_SLOT);
    qsim_cq_cmd(&cc, eq.eqn, &cq);
    cqn = fault_create(r, &cc);
    qsim_qp_rings(r->d, &qp, RSIM_PBL_LEVEL0);
    qsim_qp_cmd(&qc, RSIM_QPT_RC, pdn, cqn, cqn, &qp);
    qp.qpn = fault_create(r, &qc);
    /* to ERR through INIT: doorbells flush what the SQ holds */
    qsim_attr_rc_init(&a[0]);
    qsim_attr_init(&a[1], RSIM_QPS_ERR, 0);
    for (unsigned i = 0; i < ARRAY_SIZE(a); i++) {
        qtest_memwrite(r->d->qts, r->d->scratch, &a[i], sizeof(a[i]));
        QSIM_CMD_INIT(mc, RSIM_CMD_MODIFY_QP);
        mc.qpn = cpu_to_le32(qp.qpn);
        mc.addr = cpu_to_le64(r->d->scratch);
        fault_exec(r, &mc, NULL);
    }

    for (unsigned i = 0; i < n; i++) {
        struct rsim_cqe c;

        qsim_cq_arm_db(r->d, 0, cqn, RSIM_CQ_ARM_NEXT);
        qsim_post_empty(r->d, &qp.sq, i, RSIM_WR_SEND);
        qsim_sq_doorbell(r->d, 0, qp.qpn);
        qsim_cq_poll(r->d, &cq, &c);
        fault_seen(r, &c, sizeof(c), le64_to_cpu(c.wr_id) != i ||
                   le32_to_cpu(c.status) != RSIM_WC_WR_FLUSH_ERR ||
                   le32_to_cpu(c.opcode) != RSIM_WC_SEND ||
                   le32_to_cpu(c.qp_num) != qp.qpn || c.byte_len);
        g_assert_true(qsim_eq_poll(r->d, &eq, &e, QSIM_POLL_US));
        fault_eqe(r, &e, RSIM_EV_COMPLETION, cqn);
        qsim_eq_doorbell(r->d, &eq, false);
    }

    /* The counters are written before the completion of the command. */
    damaged = r->damaged;
    QSIM_CMD_INIT(sc, RSIM_CMD_QUERY_STATS);
    sc.addr = cpu_to_le64(r->d->scratch);
    sc.len = cpu_to_le32(RSIM_STAT_COUNT * 8);
    fault_exec(r, &sc, NULL);
    g_assert_cmpuint(qtest_readq(r->d->qts, r->d->scratch +
                                 RSIM_STAT_FAULT_DRIVER * 8), ==, damaged);
    qsim_note("%s: %u of %u entries damaged", props, r->damaged,
              r->entries);
    /* The device itself went on with the true values. */
    g_assert_cmphex(qsim_rd(r->d, A_RSIM_DEV_STATUS), ==, QSIM_READY);
    qsim_stop(r->d);
}

/* The share of damaged entries is the configured one. */
static void test_fault_driver_share(const char *machine)
{
    static const uint32_t ppm[] = { 0, 100000, 1000000 };

    for (unsigned i = 0; i < ARRAY_SIZE(ppm); i++) {
        g_autofree char *props = g_strdup_printf("fault-driver=%u", ppm[i]);
        FaultRun r = { 0 };
        double want, sd;

        fault_run(&r, machine, props, 500);
        g_byte_array_unref(r.seen);
        want = (double)r.entries * ppm[i] / 1e6;
        sd = sqrt(want * (1 - ppm[i] / 1e6));
        g_assert_cmpfloat(fabs(r.damaged - want), <=, 5 * sd);
    }
}

/* The same fault-seed damages the same entries the same way. */
static void test_fault_driver_seed(const char *machine)
{
    FaultRun r[3] = { 0 };

    fault_run(&r[0], machine, "fault-driver=100000,fault-seed=42", 200);
    fault_run(&r[1], machine, "fault-driver=100000,fault-seed=42", 200);
    fault_run(&r[2], machine, "fault-driver=100000,fault-seed=43", 200);
    g_assert_cmpuint(r[0].damaged, >, 0);
    g_assert_cmpmem(r[0].seen->data, r[0].seen->len,
                    r[1].seen->data, r[1].seen->len);
    g_assert_cmpuint(r[0].seen->len, ==, r[2].seen->len);
    g_assert_true(memcmp(r[0].seen->data, r[2].seen->data,
                         r[0].seen->len));
    for (unsigned i = 0; i < ARRAY_SIZE(r); i++) {
        g_byte_array_unref(r[i].seen);
    }
}

static const QSimTest tests[] = {
    { "hostile/garbage", test_hostile_garbage },
    { "hostile/fields", test_hostile_fields },
    { "hostile/rings", test_hostile_rings },
    { "hostile/mmio", test_hostile_mmio },
    { "hostile/dma-self", test_hostile_dma_self },
    { "hostile/reset-midstream", test_hostile_reset_midstream },
    { "hostile/aq-tail", test_hostile_aq_tail },
    { "fault-driver/share", test_fault_driver_share, QSIM_ONCE },
    { "fault-driver/seed", test_fault_driver_seed, QSIM_ONCE },
};

int main(int argc, char **argv)
{
    return qsim_main(argc, argv, tests, ARRAY_SIZE(tests));
}
