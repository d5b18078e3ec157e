/*
 * QTest testcase for the rdma-sim RDMA NIC: the bounds of what a guest or
 * a peer can make the device spend, FATAL as a full stop, and re-entrant
 * delivery.  Each test tries to go past a bound and checks that the device
 * holds it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqos/rdma-sim.h"

/* The device's bounds, as the datasheet states them */
#define LOOP_MAX            512
#define LOG_PER_SEC         20

/* The QEMU of this test: our child (libqtest execs it from a fork) */
static pid_t qemu_pid(void)
{
    g_autoptr(GDir) dir = g_dir_open("/proc", 0, NULL);
    const char *name;

    g_assert_nonnull(dir);
    while ((name = g_dir_read_name(dir))) {
        g_autofree char *path = g_strdup_printf("/proc/%s/stat", name);
        g_autofree char *stat = NULL;
        const char *end;
        int ppid;

        if (!g_ascii_isdigit(name[0]) ||
            !g_file_get_contents(path, &stat, NULL, NULL) ||
            !strstr(stat, "(qemu-system")) {
            continue;
        }
        end = strrchr(stat, ')');
        if (sscanf(end + 1, " %*c %d", &ppid) == 1 && ppid == getpid()) {
            return atoi(name);
        }
    }
    g_assert_not_reached();
}

/* QEMU's resident memory, from /proc */
static uint64_t qemu_rss_kib(void)
{
    g_autofree char *path = g_strdup_printf("/proc/%d/status", qemu_pid());
    g_autofree char *text = NULL;
    const char *line;

    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    line = strstr(text, "VmRSS:");
    g_assert_nonnull(line);
    return g_ascii_strtoull(line + strlen("VmRSS:"), NULL, 10);
}

/*
 * A UD QP floods its own GID with 4 KiB datagrams, unsignaled, as any
 * unprivileged guest process can through the stock provider.  The frames
 * wait in the device's loopback queue: it never holds more than LOOP_MAX,
 * the senders wait for room instead of losing frames, and QEMU's memory
 * stays flat.
 */
static void test_loopback_flood(const char *machine)
{
    enum { LOG2_DEPTH = 12, ROUNDS = 3, LEN = 4096 };
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_cmd_create_qp qc;
    struct rsim_cmd_create_ah ah;
    struct rsim_qp_attr a;
    uint32_t pdn, cqn, ahn, qpn, sent = 0;
    uint64_t rss_before;
    QSimRing cq, sq, rq;
    QSimEq eq;
    QSimMr m;

    pdn = qsim_pd_alloc(d);
    qsim_gid_add(d, 0, qsim_pair_gid_v4);
    qsim_eq_create(d, &eq, 1, 16);
    cqn = qsim_cq_create(d, &cq, eq.eqn, RSIM_PBL_LEVEL0, 4);
    qsim_ring_init(d, &sq, RSIM_PBL_LEVEL0, LOG2_DEPTH, 9);
    qsim_ring_init(d, &rq, RSIM_PBL_LEVEL0, 1, 6);
    qsim_qp_cmd(&qc, RSIM_QPT_UD, pdn, cqn, cqn,
                &(QSimQp){ .sq = sq, .rq = rq });
    qpn = qsim_create(d, &qc, NULL);
    qsim_attr_init(&a, RSIM_QPS_INIT, RSIM_QP_STATE | RSIM_QP_PKEY_INDEX |
                   RSIM_QP_PORT | RSIM_QP_QKEY);
    a.port_num = 1;
    a.qkey = cpu_to_le32(0x1234);
    qsim_qp_modify_ok(d, qpn, &a);
    qsim_qp_move(d, qpn, RSIM_QPS_RTR);
    qsim_attr_init(&a, RSIM_QPS_RTS, RSIM_QP_STATE | RSIM_QP_SQ_PSN);
    qsim_qp_modify_ok(d, qpn, &a);
    qsim_ah_cmd(&ah, pdn);
    memcpy(ah.av.dgid, qsim_pair_gid_v4, 16);
    qsim_port_mac(d, ah.av.dmac);
    ahn = qsim_create(d, &ah, NULL);
    m = qsim_mr_alloc(d, pdn, LEN, QSIM_ACC_LW);

    rss_before = qemu_rss_kib();
    for (int round = 0; round < ROUNDS; round++) {
        uint32_t n = (1u << LOG2_DEPTH) - 1;
        QSimWr wr = {
            .opcode = RSIM_WR_SEND,
            .unsignaled = true,
            .ah_num = ahn,
            .remote_qpn = qpn,
            .remote_qkey = 0x1234,
            .nsge = 1,
        };

        wr.sge[0] = qsim_sge(&m, 0, 1000);
        for (uint32_t i = 0; i < n; i++) {
            wr.wr_id = sent + i;
            qsim_post_send(d, &sq, &wr);
        }
        qsim_sq_doorbell(d, 0, qpn);
        /* the device takes every WQE: nothing is lost on the way */
        for (int64_t t = 0; qsim_ring_cons(d, &sq) != qsim_ring_prod(d, &sq);
             t += 1000) {
            g_assert_cmpint(t, <, QSIM_POLL_US);
            g_usleep(1000);
        }
        sent += n;
    }
    qsim_settle(d);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_LOOPBACK_PKTS), ==, sent);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_LOOPBACK_DROPS), ==, 0);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_LOOPBACK_PEAK), >, 0);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_LOOPBACK_PEAK), <=, LOOP_MAX);
    /* no receive WQE: every datagram arrived and was dropped */
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_DROP_NO_QP), ==, sent);
    /* the old unbounded queue took 8.5 KB a frame: 100 MB here */
    g_assert_cmpuint(qemu_rss_kib(), <, rss_before + 32 * 1024);
    qsim_cq_expect_empty(d, &cq);
    qsim_assert_alive(d);
    qsim_stop(d);
}

/*
 * FATAL means stopped.  B's receive completion writes an event into an EQ
 * with no memory behind it: the device goes FATAL.  A's send completion is
 * waiting for room in its full CQ meanwhile; after FATAL nothing may write
 * it, not when room comes and not after any time.
 */
static void test_fatal_stops(const char *machine)
{
    QSimPair p;
    QSimWr wr = { .wr_id = 0x77, .opcode = RSIM_WR_SEND, .nsge = 1 };
    struct rsim_sge sge;

    qsim_pair_start(&p, machine, &(QSimPairConf){
                        .eq_addr = QSIM_UNMAPPED });
    sge = qsim_sge(&p.mb, 0, 64);
    qsim_post_recv(p.d, &p.b.qp.rq, 0x78, &sge);
    qsim_cq_arm_db(p.d, 0, p.b.rcqn, RSIM_CQ_ARM_NEXT);
    /* consumer one ahead of the producer: A's send CQ is full */
    qsim_ring_set_cons(p.d, &p.a.scq, 1);
    wr.sge[0] = qsim_sge(&p.ma, 0, 64);
    qsim_send(p.d, &p.a.qp, &wr);
    for (int64_t t = 0; !(qsim_rd(p.d, A_RSIM_DEV_STATUS) & QSIM_FATAL);
         t += 1000) {
        g_assert_cmpint(t, <, QSIM_POLL_US);
        qtest_clock_step(p.d->qts, 100 * 1000);
        g_usleep(1000);
    }
    g_assert_cmphex(qsim_rd(p.d, A_RSIM_DEV_STATUS), ==,
                    QSIM_FATAL_STATUS(RSIM_FATAL_EQ_DMA));
    /* room in A's CQ, and a second of retries and timeouts */
    qsim_ring_set_cons(p.d, &p.a.scq, 0);
    for (int i = 0; i < 100; i++) {
        qtest_clock_step(p.d->qts, 10 * 1000 * 1000);
    }
    qsim_settle(p.d);
    g_assert_cmpuint(qsim_ring_prod(p.d, &p.a.scq), ==, 0);
    g_assert_cmpuint(qtest_readq(p.d->qts, p.a.scq.base +
                                 RSIM_QUEUE_DATA_OFFSET), ==, 0);
    /* a reset brings it back */
    qsim_bringup(p.d);
    qsim_assert_alive(p.d);
    qsim_stop(p.d);
}

/*
 * A guest that makes a thousand errors a second gets LOG_PER_SEC lines a
 * second in the log, not a thousand; the rest are counted.
 */
static void test_log_rate(const char *machine)
{
    enum { ERRORS = 1000 };
    g_autofree char *log = g_strdup_printf("%s/rdma-sim-log.XXXXXX",
                                           g_get_tmp_dir());
    g_autofree char *args = NULL;
    g_autofree char *text = NULL;
    int64_t start, secs;
    unsigned lines = 0;
    uint64_t errors;
    QSimDev *d;
    int fd = g_mkstemp(log);

    g_assert_cmpint(fd, >=, 0);
    close(fd);
    args = g_strdup_printf("-d guest_errors -D %s", log);
    d = qsim_start_args(machine, NULL, NULL, args);
    qsim_bringup(d);
    start = g_get_monotonic_time();
    for (int i = 0; i < ERRORS; i++) {
        qsim_wr(d, 0xffc, i);           /* an unassigned register */
    }
    secs = (g_get_monotonic_time() - start) / G_USEC_PER_SEC + 1;
    errors = qsim_stat(d, RSIM_STAT_GUEST_ERRORS);
    g_assert_cmpuint(errors, >=, ERRORS);
    /*
     * The device's seconds are whole wall-clock seconds, so a run of
     * secs - 1 to secs seconds touches up to secs + 1 of them.
     */
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_LOG_SUPPRESSED), >=,
                     ERRORS - LOG_PER_SEC * (secs + 1));
    qsim_stop(d);
    g_assert_true(g_file_get_contents(log, &text, NULL, NULL));
    for (const char *s = text; (s = strstr(s, "rdma-sim: ")); s++) {
        lines++;
    }
    unlink(log);
    /* LOG_PER_SEC lines and one "more not logged" line per second */
    g_assert_cmpuint(lines, >=, LOG_PER_SEC);
    g_assert_cmpuint(lines, <=, (LOG_PER_SEC + 1) * (secs + 1));
}

/*
 * A backend link event posts an async event and signals MSI-X vector 0.
 * With the vector's message aimed at the device's own DEV_CTRL (RESET),
 * that write is the device's own DMA: refused, not a reset.
 */
static void test_link_reentry(const char *machine)
{
    QSimDev *d = qsim_start(machine, NULL, "user,id=n0");
    QPCIDevice *dev = d->dev;
    uint64_t target = d->bar0.addr + A_RSIM_DEV_CTRL;
    uint64_t errors;
    QDict *resp;

    qsim_bringup(d);
    qsim_msix_setup(d);
    qsim_wr(d, A_RSIM_INTR_MASK, R_RSIM_INTR_MASK_ADMIN_MASK);
    qpci_io_writel(dev, dev->msix_table_bar,
                   dev->msix_table_off + PCI_MSIX_ENTRY_LOWER_ADDR,
                   (uint32_t)target);
    qpci_io_writel(dev, dev->msix_table_bar,
                   dev->msix_table_off + PCI_MSIX_ENTRY_UPPER_ADDR,
                   target >> 32);
    qpci_io_writel(dev, dev->msix_table_bar,
                   dev->msix_table_off + PCI_MSIX_ENTRY_DATA,
                   R_RSIM_DEV_CTRL_RESET_MASK);
    errors = qsim_stat(d, RSIM_STAT_GUEST_ERRORS);
    resp = qtest_qmp(d->qts, "{'execute': 'set_link', 'arguments': "
                     "{'name': 'n0', 'up': false}}");
    g_assert_true(qdict_haskey(resp, "return"));
    qobject_unref(resp);
    qsim_aeq_expect(d, RSIM_EV_PORT_DOWN, 1);
    g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_STATUS), ==, QSIM_READY);
    g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_CTRL), ==,
                    R_RSIM_DEV_CTRL_ENABLE_MASK);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_GUEST_ERRORS), ==, errors + 1);
    qsim_assert_alive(d);
    qsim_stop(d);
}

/*
 * Two devices on one hub: the hub hands a frame to the other device at
 * once.  B answers A's SEND, which finds no receive WQE, with an RNR NAK
 * while A is still sending it: A receives the NAK after its packet, never
 * in the middle, and the SEND completes once B posts a receive.
 */
static void test_hub_reentry(const char *machine)
{
    static const uint8_t gid_b[16] = {
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 7, 2,
    };
    QSimDev *d = qsim_start_args(machine, NULL, "hubport,id=n0,hubid=0",
                                 "-netdev hubport,id=n1,hubid=0 -device "
                                 "rdma-sim,addr=05.0,netdev=n1,"
                                 "mac=52:54:00:12:34:57");
    QSimDev *e = qsim_attach(d, QPCI_DEVFN(5, 0));
    QSimWr wr = { .wr_id = 0x99, .opcode = RSIM_WR_SEND, .nsge = 1 };
    QSimPath path = {
        .type = RSIM_QPT_RC,
        .access = QSIM_ACC_ALL,
        .av.hop_limit = 64,
        .av.network_type = RSIM_NET_IPV4,
        .path_mtu = RSIM_MTU_1024,
        .timeout = 14,
        .retry_cnt = 7,
        .rd_atomic = 4,
        .min_rnr_timer = 1,
    };
    QSimEndpoint a, b;
    struct rsim_sge sge;
    struct rsim_cqe cqe;
    QSimEq eqa, eqb;
    QSimMr ma, mb;
    uint32_t pda, pdb;

    qsim_bringup(d);
    qsim_bringup(e);
    pda = qsim_pd_alloc(d);
    pdb = qsim_pd_alloc(e);
    qsim_gid_add(d, 0, qsim_pair_gid_v4);
    qsim_gid_add(e, 0, gid_b);
    qsim_eq_create(d, &eqa, 1, 16);
    qsim_eq_create(e, &eqb, 1, 16);
    qsim_endpoint_create(d, &a, RSIM_QPT_RC, pda, eqa.eqn);
    qsim_endpoint_create(e, &b, RSIM_QPT_RC, pdb, eqb.eqn);
    ma = qsim_mr_alloc(d, pda, 4096, QSIM_ACC_ALL);
    mb = qsim_mr_alloc(e, pdb, 4096, QSIM_ACC_ALL);
    memcpy(path.av.dgid, gid_b, 16);
    qsim_port_mac(e, path.av.dmac);
    path.dest_qpn = b.qp.qpn;
    qsim_qp_connect(d, a.qp.qpn, &path);
    memcpy(path.av.dgid, qsim_pair_gid_v4, 16);
    qsim_port_mac(d, path.av.dmac);
    path.dest_qpn = a.qp.qpn;
    qsim_qp_connect(e, b.qp.qpn, &path);

    qsim_fill_pattern(d, ma.addr, 512, 9);
    wr.sge[0] = qsim_sge(&ma, 0, 512);
    qsim_send(d, &a.qp, &wr);
    qsim_settle(d);
    g_assert_cmpuint(qsim_stat(e, RSIM_STAT_RNR_NAK_SENT), >=, 1);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_DEFERRED), >=, 1);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RX_DROP_BUSY), ==, 0);
    g_assert_cmpuint(qsim_stat(d, RSIM_STAT_RNR_NAK_RCVD), >=, 1);
    sge = qsim_sge(&mb, 0, 512);
    qsim_post_recv(e, &b.qp.rq, 0x9a, &sge);
    qsim_cq_expect(d, &a.scq, 0x99, RSIM_WC_SUCCESS, RSIM_WC_SEND, 512,
                   a.qp.qpn);
    qsim_cq_poll(e, &b.rcq, &cqe);
    qsim_cqe_check(&cqe, 0x9a, RSIM_WC_SUCCESS, RSIM_WC_RECV, 512,
                   b.qp.qpn);
    qsim_check_pattern(e, mb.addr, 512, 9);
    qsim_assert_alive(d);
    qsim_assert_alive(e);
    qsim_detach(e);
    qsim_stop(d);
}

/*
 * An atomic works on 8 bytes in one piece.  An MR whose iova is aligned
 * but whose memory starts 4 bytes into a page puts the target astride:
 * refused as an invalid request before anything is written.
 */
static void test_atomic_split(const char *machine)
{
    QSimPair p;
    struct rsim_cmd_reg_mr c;
    QSimWr wr = {
        .wr_id = 0x51,
        .opcode = RSIM_WR_ATOMIC_FETCH_AND_ADD,
        .remote_addr = 0x100000,
        .compare_add = 1,
        .nsge = 1,
    };

    qsim_pair_start(&p, machine, NULL);
    qsim_mr_cmd(&c, p.pdn, QSIM_ACC_ALL, 0x100000, 64, RSIM_PBL_LEVEL0,
                p.mb.addr + 4, 0, 0, 0);
    qsim_create(p.d, &c, &wr.rkey);
    qtest_writeq(p.d->qts, p.mb.addr + 4, 0x1111222233334444ull);
    wr.sge[0] = qsim_sge(&p.ma, 0, 8);
    qsim_send(p.d, &p.a.qp, &wr);
    qsim_cq_expect(p.d, &p.a.scq, 0x51, RSIM_WC_REM_INV_REQ_ERR,
                   RSIM_WC_FETCH_ADD, 8, p.a.qp.qpn);
    g_assert_cmphex(qtest_readq(p.d->qts, p.mb.addr + 4), ==,
                    0x1111222233334444ull);
    qsim_assert_alive(p.d);
    qsim_stop(p.d);
}

/*
 * B grants one READ or atomic in flight (max_dest_rd_atomic 1), A sends
 * two (its max_rd_atomic is 4): a READ whose responses B is still sending,
 * then an atomic.  B has no resource left for the atomic: it refuses it,
 * and memory stays as it was (an atomic must not execute when its answer
 * cannot be kept).
 */
static void test_atomic_no_resource(const char *machine)
{
    QSimPair p;
    QSimWr rd = {
        .wr_id = 0x61,
        .opcode = RSIM_WR_RDMA_READ,
        .nsge = 1,
    };
    QSimWr fa = {
        .wr_id = 0x62,
        .opcode = RSIM_WR_ATOMIC_FETCH_AND_ADD,
        .compare_add = 5,
        .nsge = 1,
    };

    qsim_pair_start(&p, machine, &(QSimPairConf){ .b_rd_atomic = 1 });
    qtest_writeq(p.d->qts, p.mb.addr + 128 * 1024, 1000);
    rd.remote_addr = p.mb.addr;
    rd.rkey = p.mb.rkey;
    rd.sge[0] = qsim_sge(&p.ma, 0, 64 * 1024);
    fa.remote_addr = p.mb.addr + 128 * 1024;
    fa.rkey = p.mb.rkey;
    fa.sge[0] = qsim_sge(&p.ma, 128 * 1024, 8);
    qsim_post_send(p.d, &p.a.qp.sq, &rd);
    qsim_post_send(p.d, &p.a.qp.sq, &fa);
    qsim_sq_doorbell(p.d, 0, p.a.qp.qpn);
    for (int64_t t = 0; qsim_qp_state(p.d, p.b.qp.qpn) != RSIM_QPS_ERR;
         t += 1000) {
        g_assert_cmpint(t, <, QSIM_POLL_US);
        qtest_clock_step(p.d->qts, 100 * 1000);
        g_usleep(1000);
    }
    g_assert_cmpuint(qtest_readq(p.d->qts, p.mb.addr + 128 * 1024), ==,
                     1000);
    qsim_assert_alive(p.d);
    qsim_stop(p.d);
}

/*
 * A ring's elements are what its type needs (CQ: one 64-byte slot; SQ,
 * RQ, SRQ: a WQE with the device's most SGEs or inline data), not what the
 * guest asks for: an 8 KiB CQ entry would make the device keep 128 times
 * the page list a CQ needs.
 */
static void test_ring_elements(const char *machine)
{
    QSimDev *d = qsim_up(machine, NULL);
    struct rsim_cmd_create_cq cc;
    struct rsim_cmd_create_qp qc;
    uint32_t pdn, cqn;
    QSimRing cq;
    QSimQp qp;
    QSimEq eq;

    pdn = qsim_pd_alloc(d);
    qsim_eq_create(d, &eq, 1, 16);
    cqn = qsim_cq_create(d, &cq, eq.eqn, RSIM_PBL_LEVEL0, 4);
    for (unsigned log2 = 5; log2 <= 13; log2++) {
        qsim_ring_init(d, &cq, RSIM_PBL_LEVEL1, 6, log2);
        qsim_cq_cmd(&cc, eq.eqn, &cq);
        qsim_cmd_expect(d, &cc, log2 == RSIM_CQE_LOG2_SLOT ?
                        RSIM_STS_OK : RSIM_STS_INVALID);
    }
    /* default caps: 16 SGEs, 512 bytes inline: 1 KiB send WQEs at most */
    for (unsigned log2 = 8; log2 <= 13; log2++) {
        qsim_ring_init(d, &qp.sq, RSIM_PBL_LEVEL1, 4, log2);
        qsim_ring_init(d, &qp.rq, RSIM_PBL_LEVEL1, 4, 6);
        qsim_qp_cmd(&qc, RSIM_QPT_RC, pdn, cqn, cqn, &qp);
        qsim_cmd_expect(d, &qc, log2 <= 10 ? RSIM_STS_OK : RSIM_STS_INVALID);
    }
    /* and 512-byte receive WQEs */
    for (unsigned log2 = 6; log2 <= 13; log2++) {
        qsim_ring_init(d, &qp.sq, RSIM_PBL_LEVEL1, 4, 8);
        qsim_ring_init(d, &qp.rq, RSIM_PBL_LEVEL1, 4, log2);
        qsim_qp_cmd(&qc, RSIM_QPT_RC, pdn, cqn, cqn, &qp);
        qsim_cmd_expect(d, &qc, log2 <= 9 ? RSIM_STS_OK : RSIM_STS_INVALID);
    }
    qsim_assert_alive(d);
    qsim_stop(d);
}

/*
 * The largest rings of every kind, all on one guest page of data behind a
 * level 2 list whose entries all point at it: tiny in guest memory, the
 * most host memory a guest can ask for.  The device keeps at most
 * RDMA_SIM_HOST_MEM_MAX for them and refuses the rest with NO_RESOURCES,
 * and a command takes little time of the main loop.
 */
static void test_host_memory(const char *machine)
{
    enum { HOST_MEM_MAX_MIB = 256 };
    QSimDev *d = qsim_up(machine, NULL);
    uint64_t root = qsim_alloc(d, QSIM_PAGE), leaf = qsim_alloc(d, QSIM_PAGE);
    uint64_t data = qsim_alloc(d, QSIM_PAGE), rss_before;
    uint64_t entries[QSIM_PAGE / 8];
    unsigned made = 0, refused = 0;
    int64_t start, took;
    uint32_t pdn, cqn;
    QSimEq eq;
    struct rsim_queue_desc q = {
        .addr = cpu_to_le64(root),
        .level = RSIM_PBL_LEVEL2,
        .page_shift = 12,
        .npages = cpu_to_le32(1u << 22),
    };

    for (size_t i = 0; i < ARRAY_SIZE(entries); i++) {
        entries[i] = cpu_to_le64(leaf);
    }
    qtest_memwrite(d->qts, root, entries, sizeof(entries));
    for (size_t i = 0; i < ARRAY_SIZE(entries); i++) {
        entries[i] = cpu_to_le64(data);
    }
    qtest_memwrite(d->qts, leaf, entries, sizeof(entries));
    pdn = qsim_pd_alloc(d);
    qsim_eq_create(d, &eq, 1, 16);
    rss_before = qemu_rss_kib();
    start = g_get_monotonic_time();
    for (unsigned i = 0; i < 1023; i++) {
        struct rsim_cmd_create_cq c;
        struct rsim_create_resp r;
        unsigned st;

        QSIM_CMD_INIT(c, RSIM_CMD_CREATE_CQ);
        c.eqn = cpu_to_le32(eq.eqn);
        c.q = q;
        c.q.log2_elem_size = RSIM_CQE_LOG2_SLOT;
        c.q.log2_depth = 16;                /* 65536: max-cqe 65535 */
        st = qsim_cmd_exec(d, &c, &r);
        g_assert(st == RSIM_STS_OK || st == RSIM_STS_NO_RESOURCES);
        made += st == RSIM_STS_OK;
        refused += st != RSIM_STS_OK;
        cqn = qsim_resp_handle(&r);
    }
    for (unsigned i = 0; i < 1022; i++) {
        struct rsim_cmd_create_qp c;
        struct rsim_create_resp r;
        unsigned st;

        QSIM_CMD_INIT(c, RSIM_CMD_CREATE_QP);
        c.qp_type = RSIM_QPT_RC;
        c.pdn = cpu_to_le32(pdn);
        c.send_cqn = c.recv_cqn = cpu_to_le32(cqn);
        c.srqn = cpu_to_le32(RSIM_NO_SRQ);
        c.max_send_sge = 16;
        c.max_recv_sge = 16;
        c.max_inline = cpu_to_le16(512);
        c.sq = c.rq = q;
        c.sq.log2_elem_size = 10;           /* 1 KiB: the default caps */
        c.rq.log2_elem_size = 9;
        c.sq.log2_depth = c.rq.log2_depth = 15; /* 32768: max-qp-wr 16384 */
        st = qsim_cmd_exec(d, &c, &r);
        g_assert(st == RSIM_STS_OK || st == RSIM_STS_NO_RESOURCES);
        made += st == RSIM_STS_OK;
        refused += st != RSIM_STS_OK;
    }
    took = g_get_monotonic_time() - start;
    qsim_note("%u made, %u refused in %" PRId64 " ms, RSS +%" PRIu64
              " MiB", made, refused, took / 1000,
              (qemu_rss_kib() - rss_before) / 1024);
    g_assert_cmpuint(refused, >, 0);
    g_assert_cmpuint(qemu_rss_kib(), <,
                     rss_before + (HOST_MEM_MAX_MIB + 64) * 1024);
    /* the old page-by-page walk took 14 ms a command on average */
    g_assert_cmpint(took / (made + refused), <, 5000);
    qsim_assert_alive(d);
    qsim_stop(d);
}

static const QSimTest tests[] = {
    { "bounds/loopback-flood", test_loopback_flood, QSIM_ONCE },
    { "bounds/fatal-stops", test_fatal_stops, QSIM_ONCE },
    { "bounds/log-rate", test_log_rate, QSIM_ONCE },
    { "bounds/link-reentry", test_link_reentry, QSIM_ONCE },
    { "bounds/hub-reentry", test_hub_reentry, QSIM_ONCE },
    { "bounds/atomic-split", test_atomic_split, QSIM_ONCE },
    { "bounds/atomic-no-resource", test_atomic_no_resource, QSIM_ONCE },
    { "bounds/ring-elements", test_ring_elements, QSIM_ONCE },
    { "bounds/host-memory", test_host_memory, QSIM_ONCE },
};

int main(int argc, char **argv)
{
    return qsim_main(argc, argv, tests, ARRAY_SIZE(tests));
}
