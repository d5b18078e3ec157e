/*
 * QTest testcase for the rdma-sim RDMA NIC: the admin queue (bring-up,
 * phases, back-pressure, opcodes) and the device-wide commands
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqos/rdma-sim.h"

static void test_admin_bringup(const char *machine)
{
    QSimDev *d = qsim_start(machine, NULL, NULL);
    struct rsim_admin_cqe cqe;
    struct rsim_admin_cmd c;
    struct rsim_eqe e;
    uint16_t id;

    g_assert_cmpuint(FIELD_EX32(qsim_rd(d, A_RSIM_VERSION), RSIM_VERSION,
                                MAJOR), ==, 1);
    qsim_reset(d);
    qsim_set_queues(d, 16, 16, 32);
    g_assert_cmphex(qsim_rd64(d, A_RSIM_AQ_BASE_LO), ==, d->aq);
    g_assert_cmphex(qsim_rd64(d, A_RSIM_ACQ_BASE_LO), ==, d->acq);
    g_assert_cmphex(qsim_rd64(d, A_RSIM_AEQ_BASE_LO), ==, d->aeq);
    g_assert_cmpuint(qsim_rd(d, A_RSIM_AQ_DEPTH), ==, 16);
    g_assert_cmpuint(qsim_rd(d, A_RSIM_ACQ_DEPTH), ==, 16);
    g_assert_cmpuint(qsim_rd(d, A_RSIM_AEQ_DEPTH), ==, 32);
    g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_STATUS), ==, 0);

    /* READY before the write returns, then the port event */
    qsim_wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
    g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_STATUS), ==, QSIM_READY);
    g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_CTRL), ==,
                    R_RSIM_DEV_CTRL_ENABLE_MASK);
    g_assert_cmpuint(qsim_rd(d, A_RSIM_AEQ_TAIL), ==, 1);
    qtest_memread(d->qts, d->aeq, &e, sizeof(e));
    g_assert_cmphex(le32_to_cpu(e.dw0), ==,
                    RSIM_EV_PORT_ACTIVE << 8 | R_RSIM_EQE_HDR_PHASE_MASK);
    g_assert_cmpuint(le32_to_cpu(e.object), ==, 1);
    g_assert_cmphex(le64_to_cpu(e.data), ==, 0);
    g_assert_cmphex(qtest_readl(d->qts, d->aeq + 16), ==, 0);
    qsim_aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);

    /* first completion: slot 0, phase 1 */
    QSIM_CMD_INIT(c, RSIM_CMD_NOP);
    id = qsim_aq_submit(d, &c);
    g_assert_true(qsim_acq_poll(d, &cqe, QSIM_POLL_US));
    g_assert_cmphex(le32_to_cpu(cqe.dw0), ==, R_RSIM_CQE_HDR_PHASE_MASK | id);
    g_assert_cmpuint(le16_to_cpu(cqe.sq_head), ==, 1);
    for (size_t i = 0; i < sizeof(cqe.result); i++) {
        g_assert_cmphex(cqe.result[i], ==, 0);
    }
    qsim_acq_ack(d);
    g_assert_cmpuint(qsim_rd(d, A_RSIM_AQ_HEAD), ==, 1);
    g_assert_cmpuint(qsim_rd(d, A_RSIM_ACQ_TAIL), ==, 1);
    g_assert_cmphex(qtest_readl(d->qts, d->acq + 64), ==, 0);
    qsim_aeq_expect_none(d);
    qsim_assert_alive(d);
    qsim_stop(d);
}

/* Invalid admin queue registers make ENABLE fatal (BAD_ADMIN_CONFIG). */
static void test_admin_bad_config(const char *machine)
{
    static const struct {
        uint32_t reg;
        int64_t val;        /* < 0: base + -val (misalign) */
    } bad[] = {
        { A_RSIM_AQ_DEPTH, 0 }, { A_RSIM_AQ_DEPTH, 1 },
        { A_RSIM_AQ_DEPTH, 3 }, { A_RSIM_AQ_DEPTH, 12 },
        { A_RSIM_AQ_DEPTH, 512 }, { A_RSIM_AQ_DEPTH, 0x80000000 },
        { A_RSIM_ACQ_DEPTH, 0 }, { A_RSIM_ACQ_DEPTH, 6 },
        { A_RSIM_ACQ_DEPTH, 512 },
        { A_RSIM_AEQ_DEPTH, 1 }, { A_RSIM_AEQ_DEPTH, 5 },
        { A_RSIM_AEQ_DEPTH, 8192 },
        { A_RSIM_AQ_BASE_LO, -32 }, { A_RSIM_AQ_BASE_LO, -1 },
        { A_RSIM_ACQ_BASE_LO, -8 }, { A_RSIM_AEQ_BASE_LO, -16 },
        { A_RSIM_AQ_BASE_LO, 0 }, { A_RSIM_ACQ_BASE_LO, 0 },
        { A_RSIM_AEQ_BASE_LO, 0 },
    };
    QSimDev *d = qsim_start(machine, NULL, NULL);

    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        uint32_t val = bad[i].val;

        qsim_note("register 0x%x value %" PRId64, bad[i].reg, bad[i].val);
        qsim_reset(d);
        qsim_set_queues(d, 8, 8, 8);
        if (bad[i].val < 0) {
            val = qsim_rd(d, bad[i].reg) - bad[i].val;
        } else if (bad[i].reg != A_RSIM_AQ_DEPTH &&
                   bad[i].reg != A_RSIM_ACQ_DEPTH &&
                   bad[i].reg != A_RSIM_AEQ_DEPTH) {
            qsim_wr(d, bad[i].reg + 4, 0);  /* base 0 */
        }
        qsim_wr(d, bad[i].reg, val);
        qsim_wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
        g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_STATUS), ==,
                        QSIM_FATAL_STATUS(RSIM_FATAL_BAD_ADMIN_CONFIG));
        /* no port event, and ENABLE again does not help */
        g_assert_cmphex(qtest_readl(d->qts, d->aeq), ==, 0);
        qsim_wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
        g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_STATUS), ==,
                        QSIM_FATAL_STATUS(RSIM_FATAL_BAD_ADMIN_CONFIG));
    }

    /* the boundaries are accepted: 2 .. CAP_MAX_AQ_DEPTH, .. CAP_MAX_EQE */
    qsim_reset(d);
    qsim_enable(d, 2, 2, 2);
    qsim_aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    qsim_assert_alive(d);
    qsim_assert_alive(d);
    qsim_assert_alive(d);
    qsim_reset(d);
    qsim_enable(d, 256, 256, 4096);
    qsim_aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    qsim_assert_alive(d);

    /* base and depth registers are read-only while enabled */
    qsim_bringup(d);
    for (uint32_t reg = A_RSIM_AQ_BASE_LO; reg <= A_RSIM_AEQ_DEPTH;
         reg += 4) {
        uint32_t old;

        if (reg != A_RSIM_AQ_BASE_LO && reg != A_RSIM_AQ_BASE_HI &&
            reg != A_RSIM_AQ_DEPTH && reg != A_RSIM_ACQ_BASE_LO &&
            reg != A_RSIM_ACQ_BASE_HI && reg != A_RSIM_ACQ_DEPTH &&
            reg != A_RSIM_AEQ_BASE_LO && reg != A_RSIM_AEQ_BASE_HI &&
            reg != A_RSIM_AEQ_DEPTH) {
            continue;
        }
        old = qsim_rd(d, reg);
        qsim_wr(d, reg, 0x40);
        g_assert_cmphex(qsim_rd(d, reg), ==, old);
    }
    qsim_assert_alive(d);
    qsim_stop(d);
}

/* A small AQ and ACQ wrap many times: phases, IDs, heads and tails. */
static void admin_wrap(QSimDev *d, uint32_t aq_depth, uint32_t acq_depth,
                       unsigned n, unsigned batch)
{
    struct rsim_admin_cmd c;
    unsigned done = 0;

    qsim_reset(d);
    qsim_enable(d, aq_depth, acq_depth, 8);
    qsim_aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    /* IDs wrap too */
    d->cmd_id = 0xfff0;
    QSIM_CMD_INIT(c, RSIM_CMD_NOP);
    while (done < n) {
        uint16_t ids[8];

        for (unsigned b = 0; b < batch; b++) {
            ids[b] = qsim_aq_submit(d, &c);
        }
        for (unsigned b = 0; b < batch; b++, done++) {
            struct rsim_admin_cqe cqe;
            uint32_t slot = done % acq_depth;
            bool phase = !((done / acq_depth) & 1);

            g_assert_cmpuint(d->acq_head, ==, slot);
            g_assert_true(qsim_acq_poll(d, &cqe, QSIM_POLL_US));
            g_assert_cmphex(le32_to_cpu(cqe.dw0), ==,
                            (uint32_t)phase << 31 | ids[b]);
            g_assert_cmpuint(le16_to_cpu(cqe.sq_head), ==,
                             (done + 1) % aq_depth);
            qsim_acq_ack(d);
        }
        qsim_settle(d);
        g_assert_cmpuint(qsim_rd(d, A_RSIM_AQ_HEAD), ==, done % aq_depth);
        g_assert_cmpuint(qsim_rd(d, A_RSIM_ACQ_TAIL), ==, done % acq_depth);
    }
    qsim_assert_alive(d);
}

static void test_admin_phase_wrap(const char *machine)
{
    QSimDev *d = qsim_start(machine, NULL, NULL);

    admin_wrap(d, 4, 4, 40, 1);
    admin_wrap(d, 4, 4, 36, 3);     /* AQ full: depth - 1 outstanding */
    admin_wrap(d, 4, 8, 40, 3);
    admin_wrap(d, 8, 4, 42, 3);
    admin_wrap(d, 2, 2, 12, 1);
    qsim_stop(d);
}

/* The device stops reading commands while the ACQ has no free slot. */
static void test_admin_backpressure(const char *machine)
{
    QSimDev *d = qsim_start(machine, NULL, NULL);
    struct rsim_admin_cmd c;
    uint16_t ids[5];

    qsim_reset(d);
    qsim_enable(d, 8, 2, 8);            /* the ACQ holds one completion */
    qsim_aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    QSIM_CMD_INIT(c, RSIM_CMD_NOP);
    for (unsigned i = 0; i < 5; i++) {
        ids[i] = qsim_aq_submit(d, &c);
    }
    for (unsigned i = 0; i < 5; i++) {
        struct rsim_admin_cqe cqe;
        uint64_t other = d->acq + (1 - d->acq_head) * RSIM_ACQ_ENTRY_SIZE;
        uint32_t other_dw0 = qtest_readl(d->qts, other);

        g_assert_true(qsim_acq_poll(d, &cqe, QSIM_POLL_US));
        g_assert_cmpuint(qsim_cqe_id(&cqe), ==, ids[i]);
        g_assert_cmpuint(le16_to_cpu(cqe.sq_head), ==, i + 1);
        /* nothing more happens until ACQ_HEAD is written */
        qsim_settle(d);
        g_assert_cmpuint(qsim_rd(d, A_RSIM_AQ_HEAD), ==, i + 1);
        g_assert_cmpuint(qsim_rd(d, A_RSIM_ACQ_TAIL), ==, (i + 1) % 2);
        g_assert_cmphex(qtest_readl(d->qts, other), ==, other_dw0);
        qsim_acq_ack(d);
    }
    qsim_settle(d);
    g_assert_cmpuint(qsim_rd(d, A_RSIM_AQ_HEAD), ==, 5);
    qsim_assert_alive(d);
    qsim_stop(d);
}

static void test_admin_opcodes(const char *machine)
{
    static const uint8_t unknown[] = {
        0x05, 0x06, 0x07, 0x0c, 0x0f, 0x12, 0x17, 0x1c, 0x24, 0x2c, 0x32,
        0x37, 0x3c, 0x42, 0x43, 0x7f, 0x80, 0xfe, 0xff,
    };
    static const uint8_t no_params[] = {
        RSIM_CMD_NOP, RSIM_CMD_QUERY_DEVICE, RSIM_CMD_QUERY_PORT,
        RSIM_CMD_ALLOC_PD,
    };
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_admin_cmd c;

    for (size_t i = 0; i < ARRAY_SIZE(unknown); i++) {
        QSIM_CMD_INIT(c, unknown[i]);
        qsim_cmd_expect(d, &c, RSIM_STS_BAD_OPCODE);
        /* the opcode is checked before the flags */
        QSIM_CMD_INIT(c, unknown[i] | 0x100);
        qsim_cmd_expect(d, &c, RSIM_STS_BAD_OPCODE);
    }
    /* flags are reserved, for every opcode */
    for (uint8_t op = 0; op < RSIM_CMD_MAX; op++) {
        for (unsigned bit = 0; bit < 8; bit++) {
            QSIM_CMD_INIT(c, op | 0x100u << bit);
            qsim_assert_sts(qsim_cmd_exec(d, &c, NULL),
                            op == 0x05 || op == 0x06 || op == 0x07 ||
                            (op >= 0x0c && op <= 0x0f) ||
                            (op >= 0x12 && op <= 0x17) ||
                            (op >= 0x1c && op <= 0x1f) ||
                            (op >= 0x24 && op <= 0x27) ||
                            (op >= 0x2c && op <= 0x2f) ||
                            (op >= 0x32 && op <= 0x37) ||
                            (op >= 0x3c && op <= 0x3f) ?
                            RSIM_STS_BAD_OPCODE : RSIM_STS_RESERVED);
        }
    }
    qsim_assert_alive(d);
    /* commands without parameters: every other byte is reserved */
    for (size_t i = 0; i < ARRAY_SIZE(no_params); i++) {
        for (unsigned off = 0; off < sizeof(c.data); off += 7) {
            QSIM_CMD_INIT(c, no_params[i]);
            c.data[off] = 0x40;
            qsim_cmd_expect(d, &c, RSIM_STS_RESERVED);
        }
    }
    /* ... and the refused ALLOC_PDs allocated nothing */
    g_assert_cmpuint(qsim_pd_alloc(d), ==, 0);
    qsim_stop(d);
}

static void test_admin_device_port(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    static const uint8_t mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
    static const uint8_t mac2[6] = { 0x02, 0x00, 0x00, 0xaa, 0xbb, 0xcc };
    static const struct {
        uint32_t mtu;
        uint8_t active;
    } mtus[] = {
        { 9000, RSIM_MTU_4096 }, { 4200, RSIM_MTU_4096 },
        { 4176, RSIM_MTU_4096 }, { 4175, RSIM_MTU_2048 },
        { 2128, RSIM_MTU_2048 }, { 2127, RSIM_MTU_1024 },
        { 1500, RSIM_MTU_1024 }, { 1104, RSIM_MTU_1024 },
        { 1103, RSIM_MTU_512 }, { 592, RSIM_MTU_512 },
        { 591, RSIM_MTU_256 }, { 68, RSIM_MTU_256 },
    };
    struct rsim_query_device_resp dev;
    struct rsim_query_port_resp port;
    struct rsim_cmd_set_port sp;
    struct rsim_admin_cmd c;

    QSIM_CMD_INIT(c, RSIM_CMD_QUERY_DEVICE);
    qsim_assert_sts(qsim_cmd_exec(d, &c, &dev), RSIM_STS_OK);
    g_assert_cmphex(le64_to_cpu(dev.node_guid), ==, QSIM_GUID);
    g_assert_cmphex(le64_to_cpu(dev.sys_image_guid), ==, QSIM_GUID);
    {
        /*
         * Little-endian like every field: the GUID's first byte (0x50) is
         * the number's most significant, so the last in memory.
         */
        static const uint8_t bytes[8] = {
            0x56, 0x34, 0x12, 0xfe, 0xff, 0x00, 0x54, 0x50
        };

        g_assert_cmpmem(&dev.node_guid, 8, bytes, 8);
    }
    g_assert_cmphex(le64_to_cpu(dev.fw_ver), ==, 1ULL << 32);
    g_assert_cmphex(le32_to_cpu(dev.vendor_id), ==, 0x1b36);
    g_assert_cmphex(le32_to_cpu(dev.vendor_part_id), ==, 0x0120);
    g_assert_cmphex(le32_to_cpu(dev.hw_ver), ==, 1);
    for (size_t i = 0; i < ARRAY_SIZE(dev.reserved); i++) {
        g_assert_cmphex(dev.reserved[i], ==, 0);
    }

    QSIM_CMD_INIT(c, RSIM_CMD_QUERY_PORT);
    qsim_assert_sts(qsim_cmd_exec(d, &c, &port), RSIM_STS_OK);
    g_assert_cmpuint(port.state, ==, RSIM_PORT_ACTIVE);
    g_assert_cmpuint(port.phys_state, ==, 5);
    g_assert_cmpuint(port.max_mtu, ==, RSIM_MTU_4096);
    g_assert_cmpuint(port.active_mtu, ==, RSIM_MTU_1024);
    g_assert_cmpuint(le32_to_cpu(port.eth_mtu), ==, 1500);
    g_assert_cmpmem(port.mac, 6, mac, 6);
    g_assert_cmpuint(port.active_speed, ==, 32);
    g_assert_cmpuint(port.active_width, ==, 1);
    g_assert_cmpuint(le32_to_cpu(port.gid_tbl_len), ==, 16);

    /* SET_PORT MTU: active_mtu = largest IB MTU <= eth_mtu - 80 */
    for (size_t i = 0; i < ARRAY_SIZE(mtus); i++) {
        qsim_note("eth_mtu %u", mtus[i].mtu);
        QSIM_CMD_INIT(sp, RSIM_CMD_SET_PORT);
        sp.mask = cpu_to_le32(RSIM_SET_PORT_MTU);
        sp.eth_mtu = cpu_to_le32(mtus[i].mtu);
        qsim_cmd_expect(d, &sp, RSIM_STS_OK);
        qsim_assert_sts(qsim_cmd_exec(d, &c, &port), RSIM_STS_OK);
        g_assert_cmpuint(le32_to_cpu(port.eth_mtu), ==, mtus[i].mtu);
        g_assert_cmpuint(port.active_mtu, ==, mtus[i].active);
        g_assert_cmpuint(port.max_mtu, ==, RSIM_MTU_4096);
    }

    /* SET_PORT MAC; the node GUID stays the one of the device */
    QSIM_CMD_INIT(sp, RSIM_CMD_SET_PORT);
    sp.mask = cpu_to_le32(RSIM_SET_PORT_MAC | RSIM_SET_PORT_MTU);
    sp.eth_mtu = cpu_to_le32(9000);
    memcpy(sp.mac, mac2, 6);
    qsim_cmd_expect(d, &sp, RSIM_STS_OK);
    qsim_assert_sts(qsim_cmd_exec(d, &c, &port), RSIM_STS_OK);
    g_assert_cmpmem(port.mac, 6, mac2, 6);
    g_assert_cmpuint(le32_to_cpu(port.eth_mtu), ==, 9000);
    g_assert_cmpuint(port.active_mtu, ==, RSIM_MTU_4096);
    {
        struct rsim_admin_cmd qd;

        QSIM_CMD_INIT(qd, RSIM_CMD_QUERY_DEVICE);
        qsim_assert_sts(qsim_cmd_exec(d, &qd, &dev), RSIM_STS_OK);
        g_assert_cmphex(le64_to_cpu(dev.node_guid), ==, QSIM_GUID);
    }

    /* refused SET_PORTs change nothing */
    {
        static const uint8_t mcast[6] = { 0x01, 0x00, 0x5e, 0, 0, 1 };
        static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
        static const uint8_t zero[6];
        struct {
            uint32_t mask, mtu;
            const uint8_t *mac;
            unsigned off;           /* reserved byte to set, 0 = none */
            unsigned st;
        } bad[] = {
            { RSIM_SET_PORT_MTU, 67, NULL, 0, RSIM_STS_INVALID },
            { RSIM_SET_PORT_MTU, 9001, NULL, 0, RSIM_STS_INVALID },
            { RSIM_SET_PORT_MTU, 0, NULL, 0, RSIM_STS_INVALID },
            { RSIM_SET_PORT_MTU, 0xffffffff, NULL, 0, RSIM_STS_INVALID },
            { RSIM_SET_PORT_MAC, 0, mcast, 0, RSIM_STS_INVALID },
            { RSIM_SET_PORT_MAC, 0, bcast, 0, RSIM_STS_INVALID },
            { RSIM_SET_PORT_MAC, 0, zero, 0, RSIM_STS_INVALID },
            { RSIM_SET_PORT_MTU | RSIM_SET_PORT_MAC, 1500, zero, 0,
              RSIM_STS_INVALID },
            { RSIM_SET_PORT_MTU | RSIM_SET_PORT_MAC, 100000, mac, 0,
              RSIM_STS_INVALID },
            { 1u << 2, 0, NULL, 0, RSIM_STS_INVALID },
            { 0x80000000 | RSIM_SET_PORT_MTU, 1500, NULL, 0,
              RSIM_STS_INVALID },
            { RSIM_SET_PORT_MTU, 1500, NULL, 18, RSIM_STS_RESERVED },
            { RSIM_SET_PORT_MTU, 1500, NULL, 63, RSIM_STS_RESERVED },
        };

        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
            qsim_note("bad SET_PORT %zu", i);
            QSIM_CMD_INIT(sp, RSIM_CMD_SET_PORT);
            sp.mask = cpu_to_le32(bad[i].mask);
            sp.eth_mtu = cpu_to_le32(bad[i].mtu);
            if (bad[i].mac) {
                memcpy(sp.mac, bad[i].mac, 6);
            }
            if (bad[i].off) {
                ((uint8_t *)&sp)[bad[i].off] = 1;
            }
            qsim_cmd_expect(d, &sp, bad[i].st);
            qsim_assert_sts(qsim_cmd_exec(d, &c, &port), RSIM_STS_OK);
            g_assert_cmpmem(port.mac, 6, mac2, 6);
            g_assert_cmpuint(le32_to_cpu(port.eth_mtu), ==, 9000);
        }
    }
    /* a mask of 0 changes nothing */
    QSIM_CMD_INIT(sp, RSIM_CMD_SET_PORT);
    qsim_cmd_expect(d, &sp, RSIM_STS_OK);
    qsim_assert_sts(qsim_cmd_exec(d, &c, &port), RSIM_STS_OK);
    g_assert_cmpmem(port.mac, 6, mac2, 6);
    g_assert_cmpuint(le32_to_cpu(port.eth_mtu), ==, 9000);

    /* a reset restores MTU 1500 and the device's own MAC */
    qsim_bringup(d);
    qsim_assert_sts(qsim_cmd_exec(d, &c, &port), RSIM_STS_OK);
    g_assert_cmpmem(port.mac, 6, mac, 6);
    g_assert_cmpuint(le32_to_cpu(port.eth_mtu), ==, 1500);
    qsim_stop(d);
}

static void set_link(QSimDev *d, bool up)
{
    QDict *resp = qtest_qmp(d->qts, "{'execute': 'set_link', 'arguments': "
                            "{'name': 'n0', 'up': %i}}", up);

    g_assert_true(qdict_haskey(resp, "return"));
    qobject_unref(resp);
}

static void port_expect(QSimDev *d, uint8_t state, uint8_t phys)
{
    struct rsim_query_port_resp port;
    struct rsim_admin_cmd c;

    QSIM_CMD_INIT(c, RSIM_CMD_QUERY_PORT);
    qsim_assert_sts(qsim_cmd_exec(d, &c, &port), RSIM_STS_OK);
    g_assert_cmpuint(port.state, ==, state);
    g_assert_cmpuint(port.phys_state, ==, phys);
}

/* The backend's link state: PORT_DOWN / PORT_ACTIVE events and queries */
static void test_admin_port_link(const char *machine)
{
    QSimDev *d = qsim_start_stream(machine);

    qsim_bringup(d);
    port_expect(d, RSIM_PORT_ACTIVE, 5);
    set_link(d, false);
    qsim_aeq_expect(d, RSIM_EV_PORT_DOWN, 1);
    port_expect(d, RSIM_PORT_DOWN, 3);
    set_link(d, false);
    qsim_aeq_expect_none(d);
    set_link(d, true);
    qsim_aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    port_expect(d, RSIM_PORT_ACTIVE, 5);

    /* ENABLE reports the state the link has then */
    set_link(d, false);
    qsim_aeq_expect(d, RSIM_EV_PORT_DOWN, 1);
    qsim_reset(d);
    qsim_enable(d, 8, 8, 8);
    qsim_aeq_expect(d, RSIM_EV_PORT_DOWN, 1);
    port_expect(d, RSIM_PORT_DOWN, 3);
    /* not ready: no event */
    qsim_reset(d);
    set_link(d, true);
    qsim_enable(d, 8, 8, 8);
    qsim_aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    qsim_aeq_expect_none(d);
    qsim_assert_alive(d);
    qsim_stop(d);
}

static void test_admin_stats(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_query_stats_resp r;
    struct rsim_cmd_query_stats c;
    struct rsim_admin_cmd bad;
    const uint32_t lens[] = { 0, 7, 8, 16, 100, 240, 4096 };
    uint64_t buf = qsim_alloc(d, 2 * QSIM_PAGE);

    /* fresh device: every counter 0 */
    for (unsigned i = 0; i < RSIM_STAT_COUNT; i++) {
        g_assert_cmpuint(qsim_stat(d, i), ==, 0);
    }
    /* every refused command counts as a guest error */
    QSIM_CMD_INIT(bad, 0x77);
    for (unsigned i = 0; i < 3; i++) {
        qsim_assert_sts(qsim_cmd_exec(d, &bad, NULL), RSIM_STS_BAD_OPCODE);
    }
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_GUEST_ERRORS), ==, 3);

    /* min(len / 8, count) counters, nothing beyond */
    for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
        uint32_t n = MIN(lens[i] / 8, RSIM_STAT_COUNT);

        qtest_memset(d->qts, buf, 0xa5, 2 * QSIM_PAGE);
        QSIM_CMD_INIT(c, RSIM_CMD_QUERY_STATS);
        c.addr = cpu_to_le64(buf);
        c.len = cpu_to_le32(lens[i]);
        qsim_assert_sts(qsim_cmd_exec(d, &c, &r), RSIM_STS_OK);
        g_assert_cmpuint(le32_to_cpu(r.count), ==, n);
        for (unsigned k = 0; k < ARRAY_SIZE(r.reserved); k++) {
            g_assert_cmphex(r.reserved[k], ==, 0);
        }
        for (uint32_t k = 0; k < n; k++) {
            g_assert_cmphex(qtest_readq(d->qts, buf + k * 8), ==,
                            k == RSIM_STAT_GUEST_ERRORS ? 3 : 0);
        }
        g_assert_cmphex(qtest_readq(d->qts, buf + n * 8), ==,
                        0xa5a5a5a5a5a5a5a5ULL);
    }

    QSIM_CMD_INIT(c, RSIM_CMD_QUERY_STATS);
    c.len = cpu_to_le32(240);
    c.addr = cpu_to_le64(buf + 4);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    c.addr = cpu_to_le64(buf + 1);
    qsim_cmd_expect(d, &c, RSIM_STS_INVALID);
    c.addr = cpu_to_le64(QSIM_UNMAPPED);
    qsim_cmd_expect(d, &c, RSIM_STS_DMA);
    c.addr = cpu_to_le64(buf);
    c.reserved0 = cpu_to_le32(1);
    qsim_cmd_expect(d, &c, RSIM_STS_RESERVED);
    c.reserved0 = 0;
    c.reserved[43] = 1;
    qsim_cmd_expect(d, &c, RSIM_STS_RESERVED);
    qsim_stop(d);
}

static const QSimTest tests[] = {
    { "admin/bringup", test_admin_bringup },
    { "admin/bad-config", test_admin_bad_config },
    { "admin/phase-wrap", test_admin_phase_wrap },
    { "admin/backpressure", test_admin_backpressure },
    { "admin/opcodes", test_admin_opcodes },
    { "admin/device-port", test_admin_device_port },
    { "admin/port-link", test_admin_port_link },
    { "admin/stats", test_admin_stats },
};

int main(int argc, char **argv)
{
    return qsim_main(argc, argv, tests, ARRAY_SIZE(tests));
}
