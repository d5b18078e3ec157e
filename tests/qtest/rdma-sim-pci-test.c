/*
 * QTest testcase for the rdma-sim RDMA NIC: PCI identity, properties,
 * migration, hot-plug, and what each kind of reset leaves
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/pci/pci_regs.h"
#include "libqos/rdma-sim.h"

static void test_pci_ids(const char *machine)
{
    QSimDev *d = qsim_start(machine, NULL, NULL);
    QPCIDevice *dev = d->dev;
    uint8_t cap;
    uint32_t bar;

    g_assert_cmphex(qpci_config_readw(dev, PCI_VENDOR_ID), ==, 0x1b36);
    g_assert_cmphex(qpci_config_readw(dev, PCI_DEVICE_ID), ==, 0x0120);
    g_assert_cmphex(qpci_config_readw(dev, PCI_CLASS_DEVICE), ==, 0x0200);
    g_assert_cmphex(qpci_config_readb(dev, PCI_CLASS_PROG), ==, 0x00);
    g_assert_cmphex(qpci_config_readb(dev, PCI_REVISION_ID), ==, 0x01);
    g_assert_cmphex(qpci_config_readw(dev, PCI_SUBSYSTEM_VENDOR_ID), ==,
                    0x1b36);
    g_assert_cmphex(qpci_config_readw(dev, PCI_SUBSYSTEM_ID), ==, 0x0001);
    g_assert_cmphex(qpci_config_readb(dev, PCI_HEADER_TYPE) & 0x7f, ==,
                    PCI_HEADER_TYPE_NORMAL);
    /* MSI-X only: no INTx pin */
    g_assert_cmphex(qpci_config_readb(dev, PCI_INTERRUPT_PIN), ==, 0);

    /* BAR0 4 KiB and BAR2 db-pages x 4 KiB: 32-bit, non-prefetchable */
    g_assert_cmpuint(d->bar0_size, ==, 4096);
    g_assert_cmpuint(d->bar2_size, ==, 64 * 4096);
    bar = qpci_config_readl(dev, PCI_BASE_ADDRESS_0);
    g_assert_cmphex(bar & 0xf, ==, PCI_BASE_ADDRESS_SPACE_MEMORY |
                    PCI_BASE_ADDRESS_MEM_TYPE_32);
    bar = qpci_config_readl(dev, PCI_BASE_ADDRESS_2);
    g_assert_cmphex(bar & 0xf, ==, PCI_BASE_ADDRESS_SPACE_MEMORY |
                    PCI_BASE_ADDRESS_MEM_TYPE_32);
    /* no BAR1, BAR3, BAR5 */
    g_assert_cmphex(qpci_config_readl(dev, PCI_BASE_ADDRESS_1), ==, 0);
    g_assert_cmphex(qpci_config_readl(dev, PCI_BASE_ADDRESS_3), ==, 0);
    g_assert_cmphex(qpci_config_readl(dev, PCI_BASE_ADDRESS_5), ==, 0);

    /* MSI-X: 9 entries, table and PBA in BAR4 */
    cap = qpci_find_capability(dev, PCI_CAP_ID_MSIX, 0);
    g_assert_cmphex(cap, !=, 0);
    g_assert_cmpuint(qpci_msix_table_size(dev), ==, 9);
    g_assert_cmpuint(qpci_config_readl(dev, cap + PCI_MSIX_TABLE) &
                     PCI_MSIX_FLAGS_BIRMASK, ==, RSIM_BAR_MSIX);
    g_assert_cmpuint(qpci_config_readl(dev, cap + PCI_MSIX_PBA) &
                     PCI_MSIX_FLAGS_BIRMASK, ==, RSIM_BAR_MSIX);

    qsim_check_reset_regs(d);
    qsim_stop(d);
}

#define SMALL_PROPS "max-qp=64,max-cq=32,max-srq=16,max-mr=128,max-pd=8," \
                    "max-ah=8,max-gid=4,max-sge=4,max-qp-wr=100,"         \
                    "max-cqe=200,max-inline=64,max-rd-atom=4,db-pages=5," \
                    "msix-vectors=4"

static const QSimRegVal small_regs[] = {
    { A_RSIM_DB_PAGES, 5 },
    { A_RSIM_MSIX_VECTORS, 4 },
    { A_RSIM_CAP_MAX_QP, 64 },
    { A_RSIM_CAP_MAX_CQ, 32 },
    { A_RSIM_CAP_MAX_SRQ, 16 },
    { A_RSIM_CAP_MAX_MR, 128 },
    { A_RSIM_CAP_MAX_PD, 8 },
    { A_RSIM_CAP_MAX_AH, 8 },
    { A_RSIM_CAP_MAX_GID, 4 },
    { A_RSIM_CAP_MAX_SEND_SGE, 4 },
    { A_RSIM_CAP_MAX_RECV_SGE, 4 },
    { A_RSIM_CAP_MAX_SRQ_SGE, 4 },
    { A_RSIM_CAP_MAX_QP_WR, 100 },
    { A_RSIM_CAP_MAX_CQE, 200 },
    { A_RSIM_CAP_MAX_SRQ_WR, 100 },
    { A_RSIM_CAP_MAX_INLINE, 64 },
    { A_RSIM_CAP_MAX_RD_ATOM, 4 },
    { A_RSIM_CAP_MAX_INIT_RD_ATOM, 4 },
    { A_RSIM_CAP_MAX_EQ, 3 },
    /* not property dependent */
    { A_RSIM_VERSION, 0x00010000 },
    { A_RSIM_CAP_MTU, 5 },
    { A_RSIM_CAP_MAX_EQE, 4096 },
    { A_RSIM_CAP_MAX_AQ_DEPTH, 256 },
};

/* Non-default properties change the capabilities and what is accepted. */
static void test_pci_props(const char *machine)
{
    QSimDev *d = qsim_start(machine, SMALL_PROPS, NULL);
    struct rsim_cmd_create_qp qc;
    struct rsim_cmd_create_cq cc;
    struct rsim_cmd_create_eq ec;
    struct rsim_query_port_resp port;
    struct rsim_cmd_handle hc;
    struct rsim_qp_attr a;
    QSimRing cq;
    QSimQp qp;
    QSimEq eq;
    uint32_t pdn;

    qsim_check_regs(d, small_regs, ARRAY_SIZE(small_regs));
    /* BAR sizes are powers of two: 5 pages -> 8 */
    g_assert_cmpuint(d->bar2_size, ==, 8 * 4096);
    g_assert_cmpuint(qpci_msix_table_size(d->dev), ==, 4);

    qsim_bringup(d);
    QSIM_CMD_INIT(hc, RSIM_CMD_QUERY_PORT);
    qsim_assert_sts(qsim_cmd_exec(d, &hc, &port), RSIM_STS_OK);
    g_assert_cmpuint(le32_to_cpu(port.gid_tbl_len), ==, 4);

    /* EQs: vectors 1..3 */
    qsim_eq_cmd(&ec, 4, qsim_alloc(d, 256), 16);
    qsim_cmd_expect(d, &ec, RSIM_STS_INVALID);
    qsim_eq_create(d, &eq, 3, 16);
    qsim_eq_create(d, &eq, 1, 16);
    qsim_eq_create(d, &eq, 2, 16);
    qsim_eq_cmd(&ec, 1, qsim_alloc(d, 256), 16);
    qsim_cmd_expect(d, &ec, RSIM_STS_NO_RESOURCES);

    /* CQ depth up to roundup_pow_of_two(201) = 256 */
    qsim_ring_init(d, &cq, RSIM_PBL_LEVEL0, 9, RSIM_CQE_LOG2_SLOT);
    qsim_cq_cmd(&cc, 0, &cq);
    qsim_cmd_expect(d, &cc, RSIM_STS_LIMIT);
    qsim_cq_create(d, &cq, 0, RSIM_PBL_LEVEL0, 8);
    /* doorbell pages 0..4 */
    qsim_cq_cmd(&cc, 0, &cq);
    cc.db_page = cpu_to_le32(5);
    qsim_cmd_expect(d, &cc, RSIM_STS_INVALID);
    cc.db_page = cpu_to_le32(4);
    qsim_cmd_expect(d, &cc, RSIM_STS_OK);

    /* QP caps: 4 SGEs, 64 inline bytes, depth <= 128 */
    pdn = qsim_pd_alloc(d);
    qsim_qp_rings(d, &qp, RSIM_PBL_LEVEL0);
    qsim_qp_cmd(&qc, RSIM_QPT_RC, pdn, 0, 0, &qp);
    qc.max_send_sge = 5;
    qsim_cmd_expect(d, &qc, RSIM_STS_LIMIT);
    qsim_qp_cmd(&qc, RSIM_QPT_RC, pdn, 0, 0, &qp);
    qc.max_recv_sge = 5;
    qsim_cmd_expect(d, &qc, RSIM_STS_LIMIT);
    qsim_qp_cmd(&qc, RSIM_QPT_RC, pdn, 0, 0, &qp);
    qc.max_inline = cpu_to_le16(65);
    qsim_cmd_expect(d, &qc, RSIM_STS_LIMIT);
    qsim_ring_init(d, &qp.sq, RSIM_PBL_LEVEL0, 8, 9);
    qsim_qp_cmd(&qc, RSIM_QPT_RC, pdn, 0, 0, &qp);
    qsim_cmd_expect(d, &qc, RSIM_STS_LIMIT);
    qsim_ring_init(d, &qp.sq, RSIM_PBL_LEVEL0, 7, 9);
    qsim_qp_cmd(&qc, RSIM_QPT_RC, pdn, 0, 0, &qp);
    qc.max_send_sge = 4;
    qc.max_inline = cpu_to_le16(64);
    qc.db_page = cpu_to_le16(5);
    qsim_cmd_expect(d, &qc, RSIM_STS_INVALID);
    qc.db_page = cpu_to_le16(4);
    qp.qpn = qsim_create(d, &qc, NULL);
    g_assert_cmpuint(qp.qpn, ==, 2);

    /* max_rd_atomic and max_dest_rd_atomic up to 4 */
    qsim_gid_add_v4(d, 0, 1);
    qsim_qp_rc_to_init(d, qp.qpn);
    qsim_attr_rc_rtr(&a);
    a.max_dest_rd_atomic = 5;
    qsim_assert_sts(qsim_qp_modify(d, qp.qpn, &a), RSIM_STS_LIMIT);
    a.max_dest_rd_atomic = 4;
    qsim_qp_modify_ok(d, qp.qpn, &a);
    qsim_attr_rc_rts(&a);
    a.max_rd_atomic = 5;
    qsim_assert_sts(qsim_qp_modify(d, qp.qpn, &a), RSIM_STS_LIMIT);
    a.max_rd_atomic = 4;
    qsim_qp_modify_ok(d, qp.qpn, &a);

    /* GID indexes 0..3 */
    {
        struct rsim_cmd_gid gc;
        uint8_t gid[16];

        qsim_gid_v4(gid, 10, 0, 0, 9);
        qsim_gid_cmd(&gc, RSIM_CMD_ADD_GID, 4, gid);
        qsim_cmd_expect(d, &gc, RSIM_STS_LIMIT);
        qsim_gid_cmd(&gc, RSIM_CMD_ADD_GID, 3, gid);
        qsim_cmd_expect(d, &gc, RSIM_STS_OK);
    }
    qsim_assert_alive(d);
    qsim_stop(d);
}

/* Property values outside their ranges are refused at realize. */
static void test_pci_bad_props(const char *machine)
{
    static const struct {
        const char *name;
        int64_t val;
    } bad[] = {
        { "max-qp", 1 }, { "max-qp", 2000000 }, { "max-mr", 0 },
        { "max-mr", 20000000 }, { "max-cq", 0 }, { "max-pd", 0 },
        { "max-srq", 0 }, { "max-ah", 1 }, { "max-gid", 0 },
        { "max-gid", 257 }, { "max-sge", 0 }, { "max-sge", 65 },
        { "max-qp-wr", 0 }, { "max-qp-wr", 32768 }, { "max-cqe", 0 },
        { "max-cqe", 4194304 }, { "max-inline", 4097 },
        { "max-rd-atom", 0 }, { "max-rd-atom", 129 }, { "db-pages", 0 },
        { "db-pages", 1025 }, { "msix-vectors", 1 },
        { "msix-vectors", 33 },
    };
    QTestState *qts = qtest_initf("-M %s -nodefaults", machine);

    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        QDict *resp;

        qsim_note("%s=%" PRId64, bad[i].name, bad[i].val);
        resp = qtest_qmp(qts, "{'execute': 'device_add', 'arguments': {"
                         "'driver': 'rdma-sim', 'addr': '05.0', "
                         "%s: %" PRId64 "}}", bad[i].name, bad[i].val);
        g_assert_true(qdict_haskey(resp, "error"));
        qobject_unref(resp);
    }
    /* a good one is accepted (pc supports PCI hotplug) */
    qtest_qmp_device_add(qts, "rdma-sim", "r1",
                         "{'addr': '05.0', 'max-qp': 64}");
    qtest_quit(qts);
}

/*
 * An idle device that was brought up migrates (here to nowhere): the
 * migration completes and leaves the source paused in postmigrate.  The
 * source may go on after it, as after a snapshot to a file: the device
 * still works.  (rdma-sim-migration-test.c migrates to another QEMU.)
 */
static void test_pci_migration(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);

    qtest_qmp_assert_success(d->qts, "{'execute': 'migrate', 'arguments': "
                             "{'uri': 'exec:cat > /dev/null'}}");
    qsim_wait_migrated(d);
    qtest_qmp_assert_success(d->qts, "{'execute': 'cont'}");
    qsim_assert_alive(d);
    qsim_stop(d);
}

/* Objects of every kind, to be destroyed by a reset */
typedef struct Objects {
    uint32_t pdn, eqn, cqn, qpn, srqn, ahn, key;
} Objects;

static void make_objects(QSimDev *d, Objects *o)
{
    struct rsim_cmd_create_srq sc;
    struct rsim_cmd_create_ah ac;
    struct rsim_cmd_create_ethq ec;
    QSimRing srq;
    QSimEnv env;

    qsim_gid_add_v4(d, 0, 1);
    qsim_env_setup(d, &env, RSIM_PBL_LEVEL1, 4);
    o->pdn = env.pdn;
    o->eqn = env.eq.eqn;
    o->cqn = env.cqn;
    o->qpn = env.qp.qpn;
    qsim_post_empty(d, &env.qp.sq, 1, RSIM_WR_SEND);
    qsim_ring_init(d, &srq, RSIM_PBL_LEVEL0, 3, 6);
    qsim_srq_cmd(&sc, o->pdn, &srq, 1, 0);
    o->srqn = qsim_create(d, &sc, NULL);
    qsim_ah_cmd(&ac, o->pdn);
    o->ahn = qsim_create(d, &ac, NULL);
    o->key = qsim_mr_reg_l0(d, o->pdn, QSIM_ACC_LW, 0x100000, 4096);
    qsim_ethq_cmd(&ec, RSIM_ETHQ_TX, o->eqn, qsim_alloc(d, 16 * 16), 16);
    qsim_cmd_expect(d, &ec, RSIM_STS_OK);
}

/*
 * Hot-plug a second device, give it live objects of every kind and
 * unplug it (unrealize); then again.  The first device is unaffected.
 */
static void test_pci_hotplug(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    Objects o;

    g_assert_cmpuint(qsim_pd_alloc(d), ==, 0);
    for (unsigned i = 0; i < 2; i++) {
        QSimDev *h;

        qtest_qmp_device_add(d->qts, "rdma-sim", "r2", "{'addr': '05.0'}");
        h = qsim_attach(d, QPCI_DEVFN(5, 0));
        qsim_check_reset_regs(h);
        qsim_msix_setup(h);
        qsim_bringup(h);
        make_objects(h, &o);
        g_assert_cmpuint(o.pdn, ==, 0);
        g_assert_cmpuint(o.qpn, ==, 2);
        qsim_cq_arm_db(h, 0, o.cqn, RSIM_CQ_ARM_NEXT);
        qsim_wr(h, A_RSIM_INTR_MASK, 0);
        qsim_assert_alive(h);
        qpci_unplug_acpi_device_test(d->qts, "r2", 5);
        qsim_detach(h);
        qsim_assert_alive(d);
    }
    g_assert_cmpuint(qsim_pd_alloc(d), ==, 1);
    qsim_stop(d);
}

static void test_reset_regs(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    g_autofree uint8_t *before = g_malloc(32 * RSIM_ACQ_ENTRY_SIZE);
    g_autofree uint8_t *after = g_malloc(32 * RSIM_ACQ_ENTRY_SIZE);
    struct rsim_admin_cmd c;

    qsim_wr(d, A_RSIM_INTR_MASK, 0);
    qsim_assert_alive(d);
    g_assert_cmpuint(qsim_rd(d, A_RSIM_AQ_HEAD), ==, 1);
    g_assert_cmpuint(qsim_rd(d, A_RSIM_ACQ_TAIL), ==, 1);
    g_assert_cmpuint(qsim_rd(d, A_RSIM_AEQ_TAIL), ==, 1);
    g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_CTRL), ==,
                    R_RSIM_DEV_CTRL_ENABLE_MASK);

    /* DEV_CTRL.RESET: every register back to its reset value */
    qsim_wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_RESET_MASK);
    qsim_check_reset_regs(d);

    /* after a reset the device leaves guest memory alone */
    qtest_memread(d->qts, d->acq, before, 32 * RSIM_ACQ_ENTRY_SIZE);
    QSIM_CMD_INIT(c, RSIM_CMD_NOP);
    qsim_aq_put(d, &c);
    qsim_wr(d, A_RSIM_AQ_TAIL, d->aq_tail); /* ignored: not ready */
    qsim_wr(d, A_RSIM_ACQ_HEAD, 1);
    qsim_settle(d);
    qtest_memread(d->qts, d->acq, after, 32 * RSIM_ACQ_ENTRY_SIZE);
    g_assert_cmpmem(before, 32 * RSIM_ACQ_ENTRY_SIZE, after,
                    32 * RSIM_ACQ_ENTRY_SIZE);
    qsim_check_reset_regs(d);

    /* ENABLE 1 -> 0 resets as well */
    qsim_enable(d, 8, 8, 8);
    qsim_aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    qsim_assert_alive(d);
    qsim_wr(d, A_RSIM_INTR_MASK, 1);
    qsim_wr(d, A_RSIM_DEV_CTRL, 0);
    qsim_check_reset_regs(d);

    /* a reset clears FATAL */
    qsim_set_queues(d, 3, 8, 8);
    qsim_wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
    g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_STATUS), ==,
                    QSIM_FATAL_STATUS(RSIM_FATAL_BAD_ADMIN_CONFIG));
    qsim_wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_RESET_MASK);
    qsim_check_reset_regs(d);

    qsim_bringup(d);
    qsim_assert_alive(d);
    qsim_stop(d);
}

/* A reset with live objects destroys them all; numbers start over. */
static void test_reset_objects(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_cmd_query_stats sc;
    struct rsim_cmd_qp_attr qc;
    struct rsim_cmd_gid gc;
    Objects o, n;

    make_objects(d, &o);
    g_assert_cmpuint(o.pdn, ==, 0);
    g_assert_cmpuint(o.eqn, ==, 0);
    g_assert_cmpuint(o.cqn, ==, 0);
    g_assert_cmpuint(o.qpn, ==, 2);
    g_assert_cmpuint(o.srqn, ==, 0);
    g_assert_cmpuint(o.ahn, ==, 1);
    g_assert_cmpuint(RSIM_KEY_INDEX(o.key), ==, 1);
    /* a refused command counts as a guest error */
    qsim_handle_expect(d, RSIM_CMD_DESTROY_QP, 77, RSIM_STS_BAD_HANDLE);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_GUEST_ERRORS), >=, 1);

    qsim_bringup(d);

    /* statistics are cleared */
    QSIM_CMD_INIT(sc, RSIM_CMD_QUERY_STATS);
    sc.addr = cpu_to_le64(d->scratch);
    sc.len = cpu_to_le32(RSIM_STAT_COUNT * 8);
    qtest_memset(d->qts, d->scratch, 0xa5, RSIM_STAT_COUNT * 8);
    qsim_cmd_expect(d, &sc, RSIM_STS_OK);
    for (unsigned i = 0; i < RSIM_STAT_COUNT; i++) {
        g_assert_cmphex(qtest_readq(d->qts, d->scratch + i * 8), ==, 0);
    }

    /* the old handles are gone */
    qsim_handle_expect(d, RSIM_CMD_DESTROY_QP, o.qpn, RSIM_STS_BAD_HANDLE);
    QSIM_CMD_INIT(qc, RSIM_CMD_QUERY_QP);
    qc.qpn = cpu_to_le32(o.qpn);
    qc.addr = cpu_to_le64(d->scratch);
    qsim_cmd_expect(d, &qc, RSIM_STS_BAD_HANDLE);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_SRQ, o.srqn, RSIM_STS_BAD_HANDLE);
    qsim_handle_expect(d, RSIM_CMD_QUERY_SRQ, o.srqn, RSIM_STS_BAD_HANDLE);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_AH, o.ahn, RSIM_STS_BAD_HANDLE);
    qsim_handle_expect(d, RSIM_CMD_DEREG_MR, o.key, RSIM_STS_BAD_HANDLE);
    qsim_xlate_fail(d, o.key, o.pdn, 0, 0x100000, 1, RSIM_STS_ACCESS);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_CQ, o.cqn, RSIM_STS_BAD_HANDLE);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_ETHQ, RSIM_ETHQ_TX,
                       RSIM_STS_BAD_HANDLE);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_EQ, o.eqn, RSIM_STS_BAD_HANDLE);
    qsim_handle_expect(d, RSIM_CMD_DEALLOC_PD, o.pdn, RSIM_STS_BAD_HANDLE);
    qsim_gid_cmd(&gc, RSIM_CMD_DEL_GID, 0, NULL);
    qsim_cmd_expect(d, &gc, RSIM_STS_BAD_HANDLE);

    /* and the same numbers come back: the GID slot is free again */
    make_objects(d, &n);
    g_assert_cmpuint(n.pdn, ==, o.pdn);
    g_assert_cmpuint(n.eqn, ==, o.eqn);
    g_assert_cmpuint(n.cqn, ==, o.cqn);
    g_assert_cmpuint(n.qpn, ==, o.qpn);
    g_assert_cmpuint(n.srqn, ==, o.srqn);
    g_assert_cmpuint(n.ahn, ==, o.ahn);
    g_assert_cmpuint(RSIM_KEY_INDEX(n.key), ==, RSIM_KEY_INDEX(o.key));
    qsim_assert_alive(d);
    qsim_stop(d);
}

/* A machine reset (PCI reset) returns the device to power-on state. */
static void test_reset_system(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    QDict *resp;

    g_assert_cmpuint(qsim_pd_alloc(d), ==, 0);
    g_assert_cmpuint(qsim_pd_alloc(d), ==, 1);
    qsim_wr(d, A_RSIM_INTR_MASK, 0);

    resp = qtest_qmp(d->qts, "{'execute': 'system_reset'}");
    g_assert_true(qdict_haskey(resp, "return"));
    qobject_unref(resp);
    qtest_qmp_eventwait(d->qts, "RESET");

    /* the PCI configuration is reset too: map the BARs again */
    qsim_map_bars(d);
    qsim_check_reset_regs(d);
    qsim_bringup(d);
    qsim_handle_expect(d, RSIM_CMD_DEALLOC_PD, 1, RSIM_STS_BAD_HANDLE);
    g_assert_cmpuint(qsim_pd_alloc(d), ==, 0);
    qsim_assert_alive(d);
    qsim_stop(d);
}

static const QSimTest tests[] = {
    { "pci/ids", test_pci_ids },
    { "pci/props", test_pci_props },
    { "pci/bad-props", test_pci_bad_props, QSIM_PC_ONLY },
    { "pci/migration", test_pci_migration },
    { "pci/hotplug", test_pci_hotplug, QSIM_PC_ONLY },
    { "reset/registers", test_reset_regs },
    { "reset/objects", test_reset_objects },
    { "reset/system", test_reset_system },
};

int main(int argc, char **argv)
{
    return qsim_main(argc, argv, tests, ARRAY_SIZE(tests));
}
