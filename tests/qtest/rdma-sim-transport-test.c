/*
 * qtest for the rdma-sim RC transport, driven entirely from the test:
 * two QPs of one device connected over the device's internal loopback.
 *
 * The test plays the guest driver: it brings the device up through the
 * admin queue, builds rings and MRs in guest memory, posts Soft-RoCE format
 * WQEs, rings doorbells and checks completions and memory byte for byte.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "libqos/pci-pc.h"
#include "libqos/malloc-pc.h"
#include "hw/rdma-sim/rdma_sim_hw.h"
#include <sys/socket.h>
#include <netinet/in.h>

#define AQ_DEPTH        16
#define EQ_DEPTH        64
#define RING_DEPTH_LOG2 6               /* 64-entry rings */
#define SQ_ELEM_LOG2    10              /* 1 KiB send WQEs */
#define RQ_ELEM_LOG2    8
#define BUF_SIZE        (256 * 1024)
#define POLL_LIMIT      200000

typedef struct Dev {
    QTestState *qts;
    QGuestAllocator alloc;
    QPCIBus *bus;
    QPCIDevice *pdev;
    QPCIBar bar0;
    QPCIBar bar2;
    uint64_t aq, acq, aeq;
    uint32_t aq_tail;
    uint32_t acq_head;
    bool acq_phase;
    uint16_t next_id;
    uint8_t mac[6];
} Dev;

/* A ring in guest memory with the test's own view of its indices */
typedef struct Ring {
    uint64_t addr;
    uint32_t depth;
    uint8_t log2_elem;
    uint32_t prod;                      /* SQ/RQ: what the test produced */
    uint32_t cons;                      /* CQ: what the test consumed */
} Ring;

typedef struct Qp {
    uint32_t qpn;
    Ring sq;
    Ring rq;
    Ring scq;
    Ring rcq;
    uint32_t scqn;
    uint32_t rcqn;
} Qp;

typedef struct Mr {
    uint64_t addr;
    uint64_t len;
    uint32_t lkey;
    uint32_t rkey;
} Mr;

static void find_dev(QPCIDevice *pdev, int devfn, void *data)
{
    *(QPCIDevice **)data = pdev;
}

/*
 * Admin queue
 */

static uint32_t dev_cmd(Dev *d, void *cmd, void *result)
{
    struct rsim_admin_cmd *c = cmd;
    uint64_t slot = d->aq + (uint64_t)d->aq_tail * RSIM_AQ_ENTRY_SIZE;
    uint64_t cqe = d->acq + (uint64_t)d->acq_head * RSIM_ACQ_ENTRY_SIZE;
    uint16_t id = d->next_id++;
    uint32_t dw0;
    int i;

    c->dw0 = cpu_to_le32(le32_to_cpu(c->dw0) | (uint32_t)id << 16);
    qtest_memwrite(d->qts, slot, c, sizeof(*c));
    d->aq_tail = (d->aq_tail + 1) % AQ_DEPTH;
    qpci_io_writel(d->pdev, d->bar0, A_RSIM_AQ_TAIL, d->aq_tail);
    for (i = 0; i < POLL_LIMIT; i++) {
        dw0 = qtest_readl(d->qts, cqe);
        if (((dw0 >> 31) & 1) == d->acq_phase) {
            break;
        }
    }
    g_assert_cmpint(i, <, POLL_LIMIT);
    g_assert_cmpuint(dw0 & 0xffff, ==, id);
    if (result) {
        qtest_memread(d->qts, cqe + 8, result, 56);
    }
    d->acq_head = (d->acq_head + 1) % AQ_DEPTH;
    if (!d->acq_head) {
        d->acq_phase = !d->acq_phase;
    }
    qpci_io_writel(d->pdev, d->bar0, A_RSIM_ACQ_HEAD, d->acq_head);
    return (dw0 >> 16) & 0xff;
}

static void cmd_init(void *cmd, size_t size, unsigned opcode)
{
    memset(cmd, 0, size);
    ((struct rsim_cmd_hdr *)cmd)->dw0 = cpu_to_le32(opcode);
}

/* Run a create-style command that must succeed; returns the handle. */
static uint32_t dev_create(Dev *d, void *cmd, uint32_t *handle2)
{
    struct rsim_create_resp r;

    g_assert_cmpuint(dev_cmd(d, cmd, &r), ==, RSIM_STS_OK);
    if (handle2) {
        *handle2 = le32_to_cpu(r.handle2);
    }
    return le32_to_cpu(r.handle);
}

static void dev_start(Dev *d, const char *props)
{
    struct rsim_admin_cmd c;
    struct rsim_query_port_resp port;
    QPCIDevice *pdev = NULL;

    memset(d, 0, sizeof(*d));
    /* RSIM_QTEST_ARGS: extra QEMU arguments, e.g. -trace for debugging */
    d->qts = qtest_initf("-M pc -device rdma-sim,mac=52:54:00:aa:bb:01%s %s",
                         props ? props : "",
                         getenv("RSIM_QTEST_ARGS") ?: "");
    pc_alloc_init(&d->alloc, d->qts, ALLOC_NO_FLAGS);
    d->bus = qpci_new_pc(d->qts, &d->alloc);
    qpci_device_foreach(d->bus, RSIM_PCI_VENDOR_ID, RSIM_PCI_DEVICE_ID,
                        find_dev, &pdev);
    g_assert(pdev);
    d->pdev = pdev;
    qpci_device_enable(pdev);
    d->bar0 = qpci_iomap(pdev, RSIM_BAR_REGS, NULL);
    d->bar2 = qpci_iomap(pdev, RSIM_BAR_DOORBELL, NULL);
    qpci_msix_enable(pdev);

    d->aq = guest_alloc(&d->alloc, AQ_DEPTH * RSIM_AQ_ENTRY_SIZE);
    d->acq = guest_alloc(&d->alloc, AQ_DEPTH * RSIM_ACQ_ENTRY_SIZE);
    d->aeq = guest_alloc(&d->alloc, 64 * RSIM_EQ_ENTRY_SIZE);
    qtest_memset(d->qts, d->acq, 0, AQ_DEPTH * RSIM_ACQ_ENTRY_SIZE);
    qtest_memset(d->qts, d->aeq, 0, 64 * RSIM_EQ_ENTRY_SIZE);
    qpci_io_writel(pdev, d->bar0, A_RSIM_AQ_BASE_LO, d->aq);
    qpci_io_writel(pdev, d->bar0, A_RSIM_AQ_BASE_HI, d->aq >> 32);
    qpci_io_writel(pdev, d->bar0, A_RSIM_AQ_DEPTH, AQ_DEPTH);
    qpci_io_writel(pdev, d->bar0, A_RSIM_ACQ_BASE_LO, d->acq);
    qpci_io_writel(pdev, d->bar0, A_RSIM_ACQ_BASE_HI, d->acq >> 32);
    qpci_io_writel(pdev, d->bar0, A_RSIM_ACQ_DEPTH, AQ_DEPTH);
    qpci_io_writel(pdev, d->bar0, A_RSIM_AEQ_BASE_LO, d->aeq);
    qpci_io_writel(pdev, d->bar0, A_RSIM_AEQ_BASE_HI, d->aeq >> 32);
    qpci_io_writel(pdev, d->bar0, A_RSIM_AEQ_DEPTH, 64);
    qpci_io_writel(pdev, d->bar0, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
    g_assert_cmphex(qpci_io_readl(pdev, d->bar0, A_RSIM_DEV_STATUS) &
                    R_RSIM_DEV_STATUS_READY_MASK, ==,
                    R_RSIM_DEV_STATUS_READY_MASK);
    d->acq_phase = true;

    cmd_init(&c, sizeof(c), RSIM_CMD_QUERY_PORT);
    g_assert_cmpuint(dev_cmd(d, &c, &port), ==, RSIM_STS_OK);
    memcpy(d->mac, port.mac, 6);
}

static void dev_stop(Dev *d)
{
    qpci_iounmap(d->pdev, d->bar0);
    qpci_iounmap(d->pdev, d->bar2);
    g_free(d->pdev);
    qpci_free_pc(d->bus);
    alloc_destroy(&d->alloc);
    qtest_quit(d->qts);
}

/* Is the device alive and answering? */
static void dev_check_alive(Dev *d)
{
    struct rsim_admin_cmd c;

    cmd_init(&c, sizeof(c), RSIM_CMD_NOP);
    g_assert_cmpuint(dev_cmd(d, &c, NULL), ==, RSIM_STS_OK);
}

static uint64_t dev_stat(Dev *d, enum rsim_stat which)
{
    struct rsim_cmd_query_stats c;
    uint64_t buf = guest_alloc(&d->alloc, RSIM_STAT_COUNT * 8);
    uint64_t val;

    cmd_init(&c, sizeof(c), RSIM_CMD_QUERY_STATS);
    c.addr = cpu_to_le64(buf);
    c.len = cpu_to_le32(RSIM_STAT_COUNT * 8);
    g_assert_cmpuint(dev_cmd(d, &c, NULL), ==, RSIM_STS_OK);
    val = qtest_readq(d->qts, buf + which * 8);
    guest_free(&d->alloc, buf);
    return val;
}

/*
 * Objects
 */

static void ring_alloc(Dev *d, Ring *r, uint8_t log2_elem)
{
    uint64_t bytes = RSIM_QUEUE_DATA_OFFSET +
                     ((uint64_t)1 << (RING_DEPTH_LOG2 + log2_elem));

    r->addr = guest_alloc(&d->alloc, bytes);
    qtest_memset(d->qts, r->addr, 0, bytes);
    r->depth = 1u << RING_DEPTH_LOG2;
    r->log2_elem = log2_elem;
    qtest_writel(d->qts, r->addr + RSIM_QUEUE_LOG2_ELEM_OFFSET, log2_elem);
    qtest_writel(d->qts, r->addr + RSIM_QUEUE_MASK_OFFSET, r->depth - 1);
}

static void ring_desc(const Ring *r, struct rsim_queue_desc *q)
{
    q->addr = cpu_to_le64(r->addr);
    q->level = RSIM_PBL_LEVEL0;
    q->log2_elem_size = r->log2_elem;
    q->log2_depth = RING_DEPTH_LOG2;
}

static uint64_t ring_elem(const Ring *r, uint32_t idx)
{
    return r->addr + RSIM_QUEUE_DATA_OFFSET +
           ((uint64_t)(idx & (r->depth - 1)) << r->log2_elem);
}

static uint32_t create_cq(Dev *d, Ring *r, uint32_t eqn)
{
    struct rsim_cmd_create_cq c;

    ring_alloc(d, r, RSIM_CQE_LOG2_SLOT);
    cmd_init(&c, sizeof(c), RSIM_CMD_CREATE_CQ);
    c.eqn = cpu_to_le32(eqn);
    ring_desc(r, &c.q);
    return dev_create(d, &c, NULL);
}

static void create_qp_type(Dev *d, Qp *qp, uint32_t pdn, uint32_t eqn,
                           uint8_t type)
{
    struct rsim_cmd_create_qp c;

    qp->scqn = create_cq(d, &qp->scq, eqn);
    qp->rcqn = create_cq(d, &qp->rcq, eqn);
    ring_alloc(d, &qp->sq, SQ_ELEM_LOG2);
    ring_alloc(d, &qp->rq, RQ_ELEM_LOG2);
    cmd_init(&c, sizeof(c), RSIM_CMD_CREATE_QP);
    c.qp_type = type;
    c.max_send_sge = 4;
    c.max_recv_sge = 4;
    c.pdn = cpu_to_le32(pdn);
    c.send_cqn = cpu_to_le32(qp->scqn);
    c.recv_cqn = cpu_to_le32(qp->rcqn);
    c.srqn = cpu_to_le32(RSIM_NO_SRQ);
    ring_desc(&qp->sq, &c.sq);
    ring_desc(&qp->rq, &c.rq);
    c.max_inline = cpu_to_le16(256);
    qp->qpn = dev_create(d, &c, NULL);
}

/* The connected service of the pair: RC, or UC where a test says so */
static uint8_t test_qp_type = RSIM_QPT_RC;

static void create_qp(Dev *d, Qp *qp, uint32_t pdn, uint32_t eqn)
{
    create_qp_type(d, qp, pdn, eqn, test_qp_type);
}

static uint32_t modify_qp(Dev *d, uint32_t qpn, struct rsim_qp_attr *a)
{
    struct rsim_cmd_qp_attr c;
    uint64_t buf = guest_alloc(&d->alloc, sizeof(*a));
    uint32_t st;

    qtest_memwrite(d->qts, buf, a, sizeof(*a));
    cmd_init(&c, sizeof(c), RSIM_CMD_MODIFY_QP);
    c.qpn = cpu_to_le32(qpn);
    c.addr = cpu_to_le64(buf);
    st = dev_cmd(d, &c, NULL);
    guest_free(&d->alloc, buf);
    return st;
}

static uint8_t query_qp_state(Dev *d, uint32_t qpn)
{
    struct rsim_cmd_qp_attr c;
    struct rsim_qp_attr a;
    uint64_t buf = guest_alloc(&d->alloc, sizeof(a));

    cmd_init(&c, sizeof(c), RSIM_CMD_QUERY_QP);
    c.qpn = cpu_to_le32(qpn);
    c.addr = cpu_to_le64(buf);
    g_assert_cmpuint(dev_cmd(d, &c, NULL), ==, RSIM_STS_OK);
    qtest_memread(d->qts, buf, &a, sizeof(a));
    guest_free(&d->alloc, buf);
    return a.qp_state;
}

static const uint8_t test_gid_v4[16] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 7, 1,
};
static const uint8_t test_gid_v6[16] = {
    0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x42,
};
/* The pair's address family: set before pair_start() */
static bool test_ipv6;
/* Local ACK timeout of the pairs' QPs: 4.096 us << test_timeout */
static uint8_t test_timeout = 10;

static const uint8_t *test_gid(void)
{
    return test_ipv6 ? test_gid_v6 : test_gid_v4;
}

/* RESET -> INIT -> RTR -> RTS, connected to dest over the loopback. */
static void connect_qp(Dev *d, uint32_t qpn, uint32_t dest, uint32_t access,
                       uint8_t path_mtu, uint8_t timeout, uint8_t retry)
{
    struct rsim_qp_attr a;

    memset(&a, 0, sizeof(a));
    a.attr_mask = cpu_to_le32(RSIM_QP_STATE | RSIM_QP_PKEY_INDEX |
                              RSIM_QP_PORT | RSIM_QP_ACCESS_FLAGS);
    a.qp_state = RSIM_QPS_INIT;
    a.port_num = 1;
    a.qp_access_flags = cpu_to_le32(access);
    g_assert_cmpuint(modify_qp(d, qpn, &a), ==, RSIM_STS_OK);

    memset(&a, 0, sizeof(a));
    a.attr_mask = cpu_to_le32(RSIM_QP_STATE | RSIM_QP_AV | RSIM_QP_PATH_MTU |
                              RSIM_QP_DEST_QPN | RSIM_QP_RQ_PSN |
                              (test_qp_type == RSIM_QPT_RC ?
                               RSIM_QP_MAX_DEST_RD_ATOMIC |
                               RSIM_QP_MIN_RNR_TIMER : 0));
    a.qp_state = RSIM_QPS_RTR;
    a.path_mtu = path_mtu;
    a.dest_qp_num = cpu_to_le32(dest);
    a.rq_psn = cpu_to_le32(0xfffff0 + dest % 8);   /* wraps soon */
    a.max_dest_rd_atomic = 4;
    a.min_rnr_timer = 1;
    memcpy(a.av.dgid, test_gid(), 16);
    memcpy(a.av.dmac, d->mac, 6);
    a.av.hop_limit = 64;
    a.av.network_type = test_ipv6 ? RSIM_NET_IPV6 : RSIM_NET_IPV4;
    g_assert_cmpuint(modify_qp(d, qpn, &a), ==, RSIM_STS_OK);

    memset(&a, 0, sizeof(a));
    a.attr_mask = cpu_to_le32(RSIM_QP_STATE | RSIM_QP_SQ_PSN |
                              (test_qp_type == RSIM_QPT_RC ?
                               RSIM_QP_TIMEOUT | RSIM_QP_RETRY_CNT |
                               RSIM_QP_RNR_RETRY |
                               RSIM_QP_MAX_QP_RD_ATOMIC : 0));
    a.qp_state = RSIM_QPS_RTS;
    a.timeout = timeout;
    a.retry_cnt = retry;
    a.rnr_retry = 7;
    a.sq_psn = cpu_to_le32(0xfffff0 + qpn % 8);
    a.max_rd_atomic = 4;
    g_assert_cmpuint(modify_qp(d, qpn, &a), ==, RSIM_STS_OK);
}

static Mr reg_mr(Dev *d, uint32_t pdn, uint64_t len, uint32_t access)
{
    struct rsim_cmd_reg_mr c;
    Mr mr = { .len = len };

    mr.addr = guest_alloc(&d->alloc, len);
    cmd_init(&c, sizeof(c), RSIM_CMD_REG_MR);
    c.pdn = cpu_to_le32(pdn);
    c.access = cpu_to_le32(access);
    c.iova = cpu_to_le64(mr.addr);
    c.length = cpu_to_le64(len);
    c.pbl_addr = cpu_to_le64(mr.addr);
    c.level = RSIM_PBL_LEVEL0;
    mr.lkey = dev_create(d, &c, &mr.rkey);
    return mr;
}

/*
 * Work requests and completions
 */

typedef struct Wr {
    uint64_t wr_id;
    uint32_t opcode;
    uint32_t flags;
    uint32_t ex;
    uint64_t remote_addr;
    uint32_t rkey;
    uint64_t compare_add;
    uint64_t swap;
    uint32_t ah_num;                    /* UD */
    uint32_t remote_qpn;
    uint32_t remote_qkey;
    uint32_t nsge;
    struct rsim_sge sge[4];
} Wr;

static void post_send(Dev *d, Qp *qp, const Wr *wr)
{
    struct rsim_send_wqe w;
    uint64_t slot = ring_elem(&qp->sq, qp->sq.prod);

    memset(&w, 0, sizeof(w));
    w.wr_id = cpu_to_le64(wr->wr_id);
    w.opcode = cpu_to_le32(wr->opcode);
    w.send_flags = cpu_to_le32(wr->flags | RSIM_SEND_SIGNALED);
    w.ex = wr->ex;
    if (wr->opcode == RSIM_WR_ATOMIC_CMP_AND_SWP ||
        wr->opcode == RSIM_WR_ATOMIC_FETCH_AND_ADD) {
        w.wr.atomic.remote_addr = cpu_to_le64(wr->remote_addr);
        w.wr.atomic.rkey = cpu_to_le32(wr->rkey);
        w.wr.atomic.compare_add = cpu_to_le64(wr->compare_add);
        w.wr.atomic.swap = cpu_to_le64(wr->swap);
    } else if (wr->ah_num) {
        w.wr.ud.ah_num = cpu_to_le32(wr->ah_num);
        w.wr.ud.remote_qpn = cpu_to_le32(wr->remote_qpn);
        w.wr.ud.remote_qkey = cpu_to_le32(wr->remote_qkey);
    } else {
        w.wr.rdma.remote_addr = cpu_to_le64(wr->remote_addr);
        w.wr.rdma.rkey = cpu_to_le32(wr->rkey);
    }
    w.dma.num_sge = cpu_to_le32(wr->nsge);
    qtest_memwrite(d->qts, slot, &w, sizeof(w));
    /* the SGEs, or the 8 bytes of an ATOMIC_WRITE (in sge[0].addr) */
    qtest_memwrite(d->qts, slot + sizeof(w), wr->sge,
                   wr->opcode == RSIM_WR_ATOMIC_WRITE ? 8 :
                   wr->nsge * sizeof(wr->sge[0]));
    qp->sq.prod = (qp->sq.prod + 1) % qp->sq.depth;
    qtest_writel(d->qts, qp->sq.addr + RSIM_QUEUE_PROD_OFFSET, qp->sq.prod);
    qpci_io_writel(d->pdev, d->bar2, A_RSIM_DB_SQ, qp->qpn);
}

static void post_recv(Dev *d, Qp *qp, uint64_t wr_id, uint64_t addr,
                      uint32_t len, uint32_t lkey)
{
    struct rsim_recv_wqe w;
    struct rsim_sge sge = {
        .addr = cpu_to_le64(addr),
        .length = cpu_to_le32(len),
        .lkey = cpu_to_le32(lkey),
    };
    uint64_t slot = ring_elem(&qp->rq, qp->rq.prod);

    memset(&w, 0, sizeof(w));
    w.wr_id = cpu_to_le64(wr_id);
    w.dma.num_sge = cpu_to_le32(1);
    qtest_memwrite(d->qts, slot, &w, sizeof(w));
    qtest_memwrite(d->qts, slot + sizeof(w), &sge, sizeof(sge));
    qp->rq.prod = (qp->rq.prod + 1) % qp->rq.depth;
    qtest_writel(d->qts, qp->rq.addr + RSIM_QUEUE_PROD_OFFSET, qp->rq.prod);
}

/* Wait for the next completion of a CQ (the clock moves for timers). */
static void poll_cq(Dev *d, Ring *cq, struct rsim_cqe *cqe)
{
    int i;

    for (i = 0; i < POLL_LIMIT; i++) {
        if (qtest_readl(d->qts, cq->addr + RSIM_QUEUE_PROD_OFFSET) !=
            cq->cons) {
            break;
        }
        if (i % 16 == 15) {
            qtest_clock_step(d->qts, 1000 * 1000);
        }
    }
    g_assert_cmpint(i, <, POLL_LIMIT);
    qtest_memread(d->qts, ring_elem(cq, cq->cons), cqe, sizeof(*cqe));
    cq->cons = (cq->cons + 1) % cq->depth;
    qtest_writel(d->qts, cq->addr + RSIM_QUEUE_CONS_OFFSET, cq->cons);
}

static void expect_cqe(Dev *d, Ring *cq, uint64_t wr_id, uint32_t status,
                       uint32_t opcode, uint32_t byte_len, uint32_t qpn)
{
    struct rsim_cqe cqe;

    poll_cq(d, cq, &cqe);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, wr_id);
    g_assert_cmpuint(le32_to_cpu(cqe.status), ==, status);
    if (status == RSIM_WC_SUCCESS) {
        g_assert_cmpuint(le32_to_cpu(cqe.opcode), ==, opcode);
        g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, byte_len);
    }
    g_assert_cmpuint(le32_to_cpu(cqe.qp_num), ==, qpn);
}

/* Byte i of the test pattern with this seed. */
static uint8_t pattern_byte(uint8_t seed, size_t i)
{
    return seed + i * 7 + (i >> 8);
}

static void fill_pattern(Dev *d, uint64_t addr, size_t len, uint8_t seed)
{
    g_autofree uint8_t *buf = g_malloc(len);

    for (size_t i = 0; i < len; i++) {
        buf[i] = pattern_byte(seed, i);
    }
    qtest_memwrite(d->qts, addr, buf, len);
}

static void check_pattern(Dev *d, uint64_t addr, size_t len, uint8_t seed)
{
    g_autofree uint8_t *buf = g_malloc(len);

    qtest_memread(d->qts, addr, buf, len);
    for (size_t i = 0; i < len; i++) {
        if (buf[i] != pattern_byte(seed, i)) {
            g_error("byte %zu of %zu differs: 0x%02x", i, len, buf[i]);
        }
    }
}

/*
 * Scenarios
 */

typedef struct Pair {
    Dev d;
    uint32_t pdn;
    uint32_t eqn;
    uint64_t eq;                        /* the EQ's ring */
    Qp a;
    Qp b;
    Mr ma;
    Mr mb;
} Pair;

#define ACCESS_ALL (RSIM_ACCESS_LOCAL_WRITE | RSIM_ACCESS_REMOTE_WRITE | \
                    RSIM_ACCESS_REMOTE_READ | RSIM_ACCESS_REMOTE_ATOMIC)

static void pair_start(Pair *p, const char *props, uint8_t path_mtu,
                       uint32_t b_access, uint8_t retry)
{
    struct rsim_admin_cmd c;
    struct rsim_cmd_gid g;
    struct rsim_cmd_create_eq e;

    memset(p, 0, sizeof(*p));
    dev_start(&p->d, props);
    cmd_init(&c, sizeof(c), RSIM_CMD_ALLOC_PD);
    p->pdn = dev_create(&p->d, &c, NULL);
    cmd_init(&g, sizeof(g), RSIM_CMD_ADD_GID);
    memcpy(g.gid, test_gid(), 16);
    g.type = RSIM_GID_TYPE_ROCE_V2;
    g_assert_cmpuint(dev_cmd(&p->d, &g, NULL), ==, RSIM_STS_OK);
    cmd_init(&e, sizeof(e), RSIM_CMD_CREATE_EQ);
    e.vector = cpu_to_le32(1);
    p->eq = guest_alloc(&p->d.alloc, EQ_DEPTH * RSIM_EQ_ENTRY_SIZE);
    qtest_memset(p->d.qts, p->eq, 0, EQ_DEPTH * RSIM_EQ_ENTRY_SIZE);
    e.addr = cpu_to_le64(p->eq);
    e.depth = cpu_to_le32(EQ_DEPTH);
    p->eqn = dev_create(&p->d, &e, NULL);

    create_qp(&p->d, &p->a, p->pdn, p->eqn);
    create_qp(&p->d, &p->b, p->pdn, p->eqn);
    connect_qp(&p->d, p->a.qpn, p->b.qpn, ACCESS_ALL, path_mtu, test_timeout,
               retry);
    connect_qp(&p->d, p->b.qpn, p->a.qpn, b_access, path_mtu, test_timeout,
               retry);
    p->ma = reg_mr(&p->d, p->pdn, BUF_SIZE, ACCESS_ALL);
    p->mb = reg_mr(&p->d, p->pdn, BUF_SIZE, ACCESS_ALL);
}

static struct rsim_sge sge_of(const Mr *mr, uint64_t off, uint32_t len)
{
    struct rsim_sge s = {
        .addr = cpu_to_le64(mr->addr + off),
        .length = cpu_to_le32(len),
        .lkey = cpu_to_le32(mr->lkey),
    };

    return s;
}

/* SEND of len bytes from A to B, the receive split over the whole MR. */
static void do_send(Pair *p, uint32_t len, uint8_t seed, bool imm)
{
    Wr wr = {
        .wr_id = 0x1000 + len,
        .opcode = imm ? RSIM_WR_SEND_WITH_IMM : RSIM_WR_SEND,
        .ex = cpu_to_be32(0xcafe0000 | (len & 0xffff)),
        .nsge = 2,
    };
    uint32_t half = len / 2;
    struct rsim_cqe cqe;

    fill_pattern(&p->d, p->ma.addr, len, seed);
    qtest_memset(p->d.qts, p->mb.addr, 0, len + 64);
    post_recv(&p->d, &p->b, 0x2000 + len, p->mb.addr, BUF_SIZE, p->mb.lkey);
    wr.sge[0] = sge_of(&p->ma, 0, half);
    wr.sge[1] = sge_of(&p->ma, half, len - half);
    post_send(&p->d, &p->a, &wr);
    expect_cqe(&p->d, &p->a.scq, wr.wr_id, RSIM_WC_SUCCESS, RSIM_WC_SEND,
               len, p->a.qpn);
    poll_cq(&p->d, &p->b.rcq, &cqe);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x2000 + len);
    g_assert_cmpuint(le32_to_cpu(cqe.status), ==, RSIM_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.opcode), ==, RSIM_WC_RECV);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, len);
    g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, p->a.qpn);
    if (imm) {
        g_assert_cmphex(le32_to_cpu(cqe.wc_flags), ==, RSIM_WC_WITH_IMM);
        g_assert_cmphex(cqe.ex, ==, cpu_to_be32(0xcafe0000 | (len & 0xffff)));
    } else {
        g_assert_cmphex(le32_to_cpu(cqe.wc_flags), ==, 0);
    }
    check_pattern(&p->d, p->mb.addr, len, seed);
    g_assert_cmpuint(qtest_readb(p->d.qts, p->mb.addr + len), ==, 0);
}

static void do_write_imm(Pair *p, uint32_t len, uint8_t seed)
{
    Wr wr = {
        .wr_id = 0x3000 + len,
        .opcode = RSIM_WR_RDMA_WRITE_WITH_IMM,
        .ex = cpu_to_be32(0x12345678),
        .remote_addr = p->mb.addr + 8,
        .rkey = p->mb.rkey,
        .nsge = 1,
    };
    struct rsim_cqe cqe;

    fill_pattern(&p->d, p->ma.addr, len, seed);
    qtest_memset(p->d.qts, p->mb.addr, 0, len + 16);
    post_recv(&p->d, &p->b, 0x4000 + len, 0, 0, 0);
    wr.sge[0] = sge_of(&p->ma, 0, len);
    post_send(&p->d, &p->a, &wr);
    expect_cqe(&p->d, &p->a.scq, wr.wr_id, RSIM_WC_SUCCESS,
               RSIM_WC_RDMA_WRITE, len, p->a.qpn);
    poll_cq(&p->d, &p->b.rcq, &cqe);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x4000 + len);
    g_assert_cmpuint(le32_to_cpu(cqe.status), ==, RSIM_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.opcode), ==, RSIM_WC_RECV_RDMA_WITH_IMM);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, len);
    g_assert_cmphex(le32_to_cpu(cqe.wc_flags), ==, RSIM_WC_WITH_IMM);
    g_assert_cmphex(cqe.ex, ==, cpu_to_be32(0x12345678));
    g_assert_cmpuint(qtest_readq(p->d.qts, p->mb.addr), ==, 0);
    check_pattern(&p->d, p->mb.addr + 8, len, seed);
    g_assert_cmpuint(qtest_readl(p->d.qts, p->mb.addr + 8 + len), ==, 0);
}

static void do_read(Pair *p, uint32_t len, uint8_t seed)
{
    Wr wr = {
        .wr_id = 0x5000 + len,
        .opcode = RSIM_WR_RDMA_READ,
        .remote_addr = p->mb.addr + 16,
        .rkey = p->mb.rkey,
        .nsge = 1,
    };

    fill_pattern(&p->d, p->mb.addr + 16, len, seed);
    qtest_memset(p->d.qts, p->ma.addr, 0, len + 16);
    wr.sge[0] = sge_of(&p->ma, 4, len);
    post_send(&p->d, &p->a, &wr);
    expect_cqe(&p->d, &p->a.scq, wr.wr_id, RSIM_WC_SUCCESS,
               RSIM_WC_RDMA_READ, len, p->a.qpn);
    g_assert_cmpuint(qtest_readl(p->d.qts, p->ma.addr), ==, 0);
    check_pattern(&p->d, p->ma.addr + 4, len, seed);
    g_assert_cmpuint(qtest_readl(p->d.qts, p->ma.addr + 4 + len), ==, 0);
}

static void do_atomics(Pair *p)
{
    Wr cas = {
        .wr_id = 0x6001,
        .opcode = RSIM_WR_ATOMIC_CMP_AND_SWP,
        .remote_addr = p->mb.addr + 64,
        .rkey = p->mb.rkey,
        .compare_add = 0x1111222233334444ull,
        .swap = 0x5555666677778888ull,
        .nsge = 1,
    };
    Wr awr = {
        .wr_id = 0x6003,
        .opcode = RSIM_WR_ATOMIC_WRITE,
        .remote_addr = p->mb.addr + 72,
        .rkey = p->mb.rkey,
        .nsge = 0,
        .sge[0].addr = cpu_to_le64(0x0123456789abcdefull),
    };
    Wr fadd = {
        .wr_id = 0x6002,
        .opcode = RSIM_WR_ATOMIC_FETCH_AND_ADD,
        .remote_addr = p->mb.addr + 64,
        .rkey = p->mb.rkey,
        .compare_add = 0x10,
        .nsge = 1,
    };

    qtest_writeq(p->d.qts, p->mb.addr + 64, 0x1111222233334444ull);
    cas.sge[0] = sge_of(&p->ma, 128, 8);
    post_send(&p->d, &p->a, &cas);
    expect_cqe(&p->d, &p->a.scq, cas.wr_id, RSIM_WC_SUCCESS,
               RSIM_WC_COMP_SWAP, 8, p->a.qpn);
    g_assert_cmphex(qtest_readq(p->d.qts, p->ma.addr + 128), ==,
                    0x1111222233334444ull);
    g_assert_cmphex(qtest_readq(p->d.qts, p->mb.addr + 64), ==,
                    0x5555666677778888ull);

    /* compare fails: memory unchanged, old value returned */
    post_send(&p->d, &p->a, &cas);
    expect_cqe(&p->d, &p->a.scq, cas.wr_id, RSIM_WC_SUCCESS,
               RSIM_WC_COMP_SWAP, 8, p->a.qpn);
    g_assert_cmphex(qtest_readq(p->d.qts, p->ma.addr + 128), ==,
                    0x5555666677778888ull);
    g_assert_cmphex(qtest_readq(p->d.qts, p->mb.addr + 64), ==,
                    0x5555666677778888ull);

    fadd.sge[0] = sge_of(&p->ma, 136, 8);
    for (int i = 0; i < 5; i++) {
        post_send(&p->d, &p->a, &fadd);
        expect_cqe(&p->d, &p->a.scq, fadd.wr_id, RSIM_WC_SUCCESS,
                   RSIM_WC_FETCH_ADD, 8, p->a.qpn);
        g_assert_cmphex(qtest_readq(p->d.qts, p->ma.addr + 136), ==,
                        0x5555666677778888ull + 0x10 * i);
    }
    /* exactly five additions, even with duplicated or lost packets */
    g_assert_cmphex(qtest_readq(p->d.qts, p->mb.addr + 64), ==,
                    0x5555666677778888ull + 0x50);

    /* ATOMIC_WRITE: 8 bytes from the WQE, written as one */
    post_send(&p->d, &p->a, &awr);
    expect_cqe(&p->d, &p->a.scq, awr.wr_id, RSIM_WC_SUCCESS,
               RSIM_WC_ATOMIC_WRITE, 8, p->a.qpn);
    g_assert_cmphex(qtest_readq(p->d.qts, p->mb.addr + 72), ==,
                    0x0123456789abcdefull);
}

/* Every operation at several sizes: the mix a run of perftest makes. */
static void run_all_ops(Pair *p)
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

static void test_loopback_ops(void)
{
    Pair p;

    pair_start(&p, NULL, RSIM_MTU_1024, ACCESS_ALL, 7);
    run_all_ops(&p);
    g_assert_cmpuint(dev_stat(&p.d, RSIM_STAT_LOOPBACK_PKTS), >, 0);
    g_assert_cmpuint(dev_stat(&p.d, RSIM_STAT_RX_ICRC_ERR), ==, 0);
    g_assert_cmpuint(dev_stat(&p.d, RSIM_STAT_RETRANSMITS), ==, 0);
    dev_stop(&p.d);
}

/*
 * A window smaller than one message (4 KiB: 4 packets): the ACKs the
 * requester asks for keep it moving, no retry timer is needed.
 */
static void test_loopback_small_window(void)
{
    Pair p;

    pair_start(&p, ",tx-window=4", RSIM_MTU_1024, ACCESS_ALL, 7);
    run_all_ops(&p);
    g_assert_cmpuint(dev_stat(&p.d, RSIM_STAT_TIMEOUTS), ==, 0);
    g_assert_cmpuint(dev_stat(&p.d, RSIM_STAT_RETRANSMITS), ==, 0);
    dev_stop(&p.d);
}

/* The same over IPv6 (a global GID, so the frames carry IPv6 headers). */
static void test_loopback_ipv6(void)
{
    Pair p;

    test_ipv6 = true;
    pair_start(&p, NULL, RSIM_MTU_2048, ACCESS_ALL, 7);
    run_all_ops(&p);
    g_assert_cmpuint(dev_stat(&p.d, RSIM_STAT_RX_DROP_MALFORMED), ==, 0);
    g_assert_cmpuint(dev_stat(&p.d, RSIM_STAT_RX_ICRC_ERR), ==, 0);
    test_ipv6 = false;
    dev_stop(&p.d);
}

static void test_loopback_mtu4096(void)
{
    Pair p;

    pair_start(&p, NULL, RSIM_MTU_4096, ACCESS_ALL, 7);
    run_all_ops(&p);
    dev_stop(&p.d);
}

/* 2% loss and 2% reordering: every operation still completes correctly. */
static void test_loopback_loss(void)
{
    Pair p;

    g_autofree char *props =
        g_strdup_printf(",fault-drop=20000,fault-reorder=20000,"
                        "fault-seed=%s", getenv("RSIM_QTEST_SEED") ?: "7");

    pair_start(&p, props, RSIM_MTU_1024, ACCESS_ALL, 7);
    run_all_ops(&p);
    g_assert_cmpuint(dev_stat(&p.d, RSIM_STAT_FAULT_DROP), >, 0);
    g_assert_cmpuint(dev_stat(&p.d, RSIM_STAT_FAULT_REORDER), >, 0);
    g_assert_cmpuint(dev_stat(&p.d, RSIM_STAT_RETRANSMITS), >, 0);
    dev_stop(&p.d);
}

/*
 * A QP timeout of 268 ms, as applications set it, and 2% loss: a lost last
 * packet of a burst (every lost single-packet message, every lost READ
 * response at the end) is found by a probe after a few milliseconds, never
 * by the retransmission timer; and the lost time shows it.
 */
static void test_loopback_tail_loss(void)
{
    g_autofree char *props =
        g_strdup_printf(",fault-drop=20000,fault-seed=%s",
                        getenv("RSIM_QTEST_SEED") ?: "9");
    int64_t start;
    Pair p;

    test_timeout = 16;
    pair_start(&p, props, RSIM_MTU_1024, ACCESS_ALL, 7);
    start = qtest_clock_step(p.d.qts, 0);
    run_all_ops(&p);
    g_assert_cmpuint(dev_stat(&p.d, RSIM_STAT_FAULT_DROP), >, 0);
    g_assert_cmpuint(dev_stat(&p.d, RSIM_STAT_LOSS_PROBES), >, 0);
    g_assert_cmpuint(dev_stat(&p.d, RSIM_STAT_TIMEOUTS), ==, 0);
    /* far less than one timeout per lost frame */
    g_assert_cmpint(qtest_clock_step(p.d.qts, 0) - start, <,
                    dev_stat(&p.d, RSIM_STAT_FAULT_DROP) * 268 * 1000 * 1000 /
                    4);
    test_timeout = 10;
    dev_stop(&p.d);
}

/*
 * Many small READs in flight at once over a lossy link (what ib_read_bw
 * does): every one completes, in order, with its data.
 */
static void test_loopback_read_burst(void)
{
    g_autofree char *props =
        g_strdup_printf(",fault-drop=30000,fault-reorder=30000,"
                        "fault-seed=%s", getenv("RSIM_QTEST_SEED") ?: "5");
    Pair p;

    pair_start(&p, props, RSIM_MTU_1024, ACCESS_ALL, 7);
    for (int round = 0; round < 8; round++) {
        for (int i = 0; i < 40; i++) {
            Wr wr = {
                .wr_id = round * 100 + i,
                .opcode = RSIM_WR_RDMA_READ,
                .remote_addr = p.mb.addr + 4096 + i,
                .rkey = p.mb.rkey,
                .nsge = 1,
            };

            qtest_writeb(p.d.qts, p.mb.addr + 4096 + i, round * 40 + i);
            wr.sge[0] = sge_of(&p.ma, i, 1);
            post_send(&p.d, &p.a, &wr);
        }
        for (int i = 0; i < 40; i++) {
            expect_cqe(&p.d, &p.a.scq, round * 100 + i, RSIM_WC_SUCCESS,
                       RSIM_WC_RDMA_READ, 1, p.a.qpn);
            g_assert_cmpuint(qtest_readb(p.d.qts, p.ma.addr + i), ==,
                             (uint8_t)(round * 40 + i));
        }
    }
    g_assert_cmpuint(dev_stat(&p.d, RSIM_STAT_FAULT_DROP), >, 0);
    dev_stop(&p.d);
}

/* Duplicates and corruption: detected, never executed twice. */
static void test_loopback_dup_corrupt(void)
{
    Pair p;

    g_autofree char *props =
        g_strdup_printf(",fault-dup=50000,fault-corrupt=20000,"
                        "fault-seed=%s", getenv("RSIM_QTEST_SEED") ?: "3");

    pair_start(&p, props, RSIM_MTU_1024, ACCESS_ALL, 7);
    run_all_ops(&p);
    g_assert_cmpuint(dev_stat(&p.d, RSIM_STAT_FAULT_DUP), >, 0);
    g_assert_cmpuint(dev_stat(&p.d, RSIM_STAT_DUP_REQ), >, 0);
    /* a damaged frame fails the ICRC, or earlier checks if the BTH broke */
    g_assert_cmpuint(dev_stat(&p.d, RSIM_STAT_FAULT_CORRUPT), >, 0);
    g_assert_cmpuint(dev_stat(&p.d, RSIM_STAT_RX_ICRC_ERR) +
                     dev_stat(&p.d, RSIM_STAT_RX_DROP_MALFORMED), >=,
                     dev_stat(&p.d, RSIM_STAT_FAULT_CORRUPT));
    dev_stop(&p.d);
}

/* A WRITE with an rkey the responder's MR does not grant. */
static void test_rkey_violation(void)
{
    Pair p;
    Wr wr = {
        .wr_id = 0x7001,
        .opcode = RSIM_WR_RDMA_WRITE,
        .nsge = 1,
    };
    struct rsim_cqe cqe;

    pair_start(&p, NULL, RSIM_MTU_1024, ACCESS_ALL, 7);
    post_recv(&p.d, &p.b, 0x7100, p.mb.addr, 64, p.mb.lkey);
    wr.remote_addr = p.mb.addr;
    wr.rkey = p.mb.rkey ^ 0x1;          /* wrong key variant */
    wr.sge[0] = sge_of(&p.ma, 0, 64);
    post_send(&p.d, &p.a, &wr);
    expect_cqe(&p.d, &p.a.scq, wr.wr_id, RSIM_WC_REM_ACCESS_ERR, 0, 0,
               p.a.qpn);
    g_assert_cmpuint(query_qp_state(&p.d, p.a.qpn), ==, RSIM_QPS_ERR);
    /* the responder went to ERR too: its posted receive is flushed */
    poll_cq(&p.d, &p.b.rcq, &cqe);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x7100);
    g_assert_cmpuint(le32_to_cpu(cqe.status), ==, RSIM_WC_WR_FLUSH_ERR);
    g_assert_cmpuint(query_qp_state(&p.d, p.b.qpn), ==, RSIM_QPS_ERR);
    g_assert_cmpuint(dev_stat(&p.d, RSIM_STAT_REM_ACCESS_ERR), ==, 1);
    dev_check_alive(&p.d);
    dev_stop(&p.d);
}

/* A READ beyond the end of the remote MR. */
static void test_read_out_of_range(void)
{
    Pair p;
    Wr wr = {
        .wr_id = 0x7002,
        .opcode = RSIM_WR_RDMA_READ,
        .nsge = 1,
    };

    pair_start(&p, NULL, RSIM_MTU_1024, ACCESS_ALL, 7);
    wr.remote_addr = p.mb.addr + BUF_SIZE - 100;
    wr.rkey = p.mb.rkey;
    wr.sge[0] = sge_of(&p.ma, 0, 200);
    post_send(&p.d, &p.a, &wr);
    expect_cqe(&p.d, &p.a.scq, wr.wr_id, RSIM_WC_REM_ACCESS_ERR, 0, 0,
               p.a.qpn);
    dev_check_alive(&p.d);
    dev_stop(&p.d);
}

/* A local SGE with a bad lkey: local protection error, then the flush. */
static void test_bad_lkey(void)
{
    Pair p;
    Wr wr = {
        .wr_id = 0x7003,
        .opcode = RSIM_WR_SEND,
        .nsge = 1,
    };
    Wr next = {
        .wr_id = 0x7004,
        .opcode = RSIM_WR_SEND,
        .nsge = 1,
    };

    pair_start(&p, NULL, RSIM_MTU_1024, ACCESS_ALL, 7);
    wr.sge[0] = sge_of(&p.ma, 0, 64);
    wr.sge[0].lkey = cpu_to_le32(p.ma.lkey + 0x100);  /* another index */
    next.sge[0] = sge_of(&p.ma, 0, 64);
    post_send(&p.d, &p.a, &wr);
    post_send(&p.d, &p.a, &next);
    expect_cqe(&p.d, &p.a.scq, wr.wr_id, RSIM_WC_LOC_PROT_ERR, 0, 0,
               p.a.qpn);
    expect_cqe(&p.d, &p.a.scq, next.wr_id, RSIM_WC_WR_FLUSH_ERR, 0, 0,
               p.a.qpn);
    g_assert_cmpuint(query_qp_state(&p.d, p.a.qpn), ==, RSIM_QPS_ERR);
    g_assert_cmpuint(qtest_readl(p.d.qts,
                                 p.a.sq.addr + RSIM_QUEUE_CONS_OFFSET), ==,
                     p.a.sq.prod);
    dev_check_alive(&p.d);
    dev_stop(&p.d);
}

/* The responder QP lacks REMOTE_WRITE: invalid request for the requester. */
static void test_qp_access_denied(void)
{
    Pair p;
    Wr wr = {
        .wr_id = 0x7005,
        .opcode = RSIM_WR_RDMA_WRITE,
        .nsge = 1,
    };

    pair_start(&p, NULL, RSIM_MTU_1024, RSIM_ACCESS_LOCAL_WRITE, 7);
    wr.remote_addr = p.mb.addr;
    wr.rkey = p.mb.rkey;
    wr.sge[0] = sge_of(&p.ma, 0, 64);
    post_send(&p.d, &p.a, &wr);
    expect_cqe(&p.d, &p.a.scq, wr.wr_id, RSIM_WC_REM_INV_REQ_ERR, 0, 0,
               p.a.qpn);
    dev_check_alive(&p.d);
    dev_stop(&p.d);
}

/* A SEND without a posted receive waits (RNR) and lands once one is. */
static void test_rnr_then_receive(void)
{
    Pair p;
    Wr wr = {
        .wr_id = 0x7006,
        .opcode = RSIM_WR_SEND,
        .nsge = 1,
    };
    struct rsim_cqe cqe;

    pair_start(&p, NULL, RSIM_MTU_1024, ACCESS_ALL, 7);
    fill_pattern(&p.d, p.ma.addr, 3000, 9);
    wr.sge[0] = sge_of(&p.ma, 0, 3000);
    post_send(&p.d, &p.a, &wr);
    for (int i = 0; i < 50; i++) {
        qtest_clock_step(p.d.qts, 100 * 1000);
    }
    g_assert_cmpuint(dev_stat(&p.d, RSIM_STAT_RNR_NAK_SENT), >, 0);
    g_assert_cmpuint(qtest_readl(p.d.qts,
                                 p.a.scq.addr + RSIM_QUEUE_PROD_OFFSET), ==,
                     0);
    post_recv(&p.d, &p.b, 0x7106, p.mb.addr, 4096, p.mb.lkey);
    expect_cqe(&p.d, &p.a.scq, wr.wr_id, RSIM_WC_SUCCESS, RSIM_WC_SEND, 3000,
               p.a.qpn);
    poll_cq(&p.d, &p.b.rcq, &cqe);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 3000);
    check_pattern(&p.d, p.mb.addr, 3000, 9);
    dev_stop(&p.d);
}

/* A QP moved to ERR flushes what is posted and what is posted later. */
static void test_error_flush(void)
{
    Pair p;
    struct rsim_qp_attr a = {
        .attr_mask = cpu_to_le32(RSIM_QP_STATE),
        .qp_state = RSIM_QPS_ERR,
    };
    Wr wr = {
        .wr_id = 0x7007,
        .opcode = RSIM_WR_SEND,
        .nsge = 1,
    };

    pair_start(&p, NULL, RSIM_MTU_1024, ACCESS_ALL, 7);
    post_recv(&p.d, &p.b, 0x7201, p.mb.addr, 64, p.mb.lkey);
    post_recv(&p.d, &p.b, 0x7202, p.mb.addr, 64, p.mb.lkey);
    g_assert_cmpuint(modify_qp(&p.d, p.b.qpn, &a), ==, RSIM_STS_OK);
    expect_cqe(&p.d, &p.b.rcq, 0x7201, RSIM_WC_WR_FLUSH_ERR, 0, 0, p.b.qpn);
    expect_cqe(&p.d, &p.b.rcq, 0x7202, RSIM_WC_WR_FLUSH_ERR, 0, 0, p.b.qpn);
    g_assert_cmpuint(modify_qp(&p.d, p.a.qpn, &a), ==, RSIM_STS_OK);
    wr.sge[0] = sge_of(&p.ma, 0, 64);
    post_send(&p.d, &p.a, &wr);
    expect_cqe(&p.d, &p.a.scq, wr.wr_id, RSIM_WC_WR_FLUSH_ERR, 0, 0,
               p.a.qpn);
    dev_stop(&p.d);
}

/* Solicited-only arming: only a solicited message raises an event. */
static void test_solicited_events(void)
{
    Pair p;
    Wr wr = {
        .wr_id = 0x9001,
        .opcode = RSIM_WR_SEND,
        .nsge = 1,
    };
    struct rsim_cqe cqe;
    uint32_t v = 0, dw0;

    pair_start(&p, NULL, RSIM_MTU_1024, ACCESS_ALL, 7);
    v = FIELD_DP32(v, RSIM_EQ_DB, EQN, p.eqn);
    v = FIELD_DP32(v, RSIM_EQ_DB, ARM, 1);
    qpci_io_writel(p.d.pdev, p.d.bar0, A_RSIM_EQ_DB, v);
    v = 0;
    v = FIELD_DP32(v, RSIM_DB_CQ, CQN, p.b.rcqn);
    v = FIELD_DP32(v, RSIM_DB_CQ, ARM, RSIM_CQ_ARM_SOLICITED);
    qpci_io_writel(p.d.pdev, p.d.bar2, A_RSIM_DB_CQ, v);

    /* not solicited: a completion, no event */
    post_recv(&p.d, &p.b, 0x9101, p.mb.addr, 64, p.mb.lkey);
    wr.sge[0] = sge_of(&p.ma, 0, 64);
    post_send(&p.d, &p.a, &wr);
    expect_cqe(&p.d, &p.a.scq, 0x9001, RSIM_WC_SUCCESS, RSIM_WC_SEND, 64,
               p.a.qpn);
    poll_cq(&p.d, &p.b.rcq, &cqe);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x9101);
    g_assert_cmphex(qtest_readl(p.d.qts, p.eq), ==, 0);
    g_assert_false(qpci_msix_pending(p.d.pdev, 1));

    /* solicited: the event for the receive CQ, and the interrupt */
    post_recv(&p.d, &p.b, 0x9102, p.mb.addr, 64, p.mb.lkey);
    wr.wr_id = 0x9002;
    wr.flags = RSIM_SEND_SOLICITED;
    post_send(&p.d, &p.a, &wr);
    expect_cqe(&p.d, &p.a.scq, 0x9002, RSIM_WC_SUCCESS, RSIM_WC_SEND, 64,
               p.a.qpn);
    poll_cq(&p.d, &p.b.rcq, &cqe);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x9102);
    dw0 = qtest_readl(p.d.qts, p.eq);
    g_assert_cmpuint(FIELD_EX32(dw0, RSIM_EQE_HDR, PHASE), ==, 1);
    g_assert_cmphex(FIELD_EX32(dw0, RSIM_EQE_HDR, TYPE), ==,
                    RSIM_EV_COMPLETION);
    g_assert_cmpuint(qtest_readl(p.d.qts, p.eq + 4), ==, p.b.rcqn);
    g_assert_true(qpci_msix_pending(p.d.pdev, 1));
    /* firing disarmed the CQ: the next solicited message is silent */
    post_recv(&p.d, &p.b, 0x9103, p.mb.addr, 64, p.mb.lkey);
    wr.wr_id = 0x9003;
    post_send(&p.d, &p.a, &wr);
    expect_cqe(&p.d, &p.a.scq, 0x9003, RSIM_WC_SUCCESS, RSIM_WC_SEND, 64,
               p.a.qpn);
    poll_cq(&p.d, &p.b.rcq, &cqe);
    g_assert_cmphex(qtest_readl(p.d.qts, p.eq + RSIM_EQ_ENTRY_SIZE), ==, 0);
    dev_stop(&p.d);
}

/*
 * A receive CQ that is full: the message is neither lost nor overwrites
 * a completion; the device reports CQ_ERR and delivers once there is room.
 */
static void test_recv_cq_full(void)
{
    Pair p;
    struct rsim_cqe cqe;
    int i;

    pair_start(&p, NULL, RSIM_MTU_1024, ACCESS_ALL, 7);
    for (i = 0; i < 60; i++) {
        post_recv(&p.d, &p.b, 0xa000 + i, p.mb.addr + i * 64, 64,
                  p.mb.lkey);
    }
    /* 63 completions fill the 64-slot ring */
    for (i = 0; i < 70; i++) {
        Wr wr = {
            .wr_id = 0xb000 + i,
            .opcode = RSIM_WR_SEND,
            .nsge = 1,
        };

        if (i == 60) {
            for (int k = 60; k < 70; k++) {
                post_recv(&p.d, &p.b, 0xa000 + k, p.mb.addr + k * 64, 64,
                          p.mb.lkey);
            }
        }
        qtest_writeb(p.d.qts, p.ma.addr + i, i);
        wr.sge[0] = sge_of(&p.ma, i, 1);
        post_send(&p.d, &p.a, &wr);
        if (i < 63) {
            expect_cqe(&p.d, &p.a.scq, 0xb000 + i, RSIM_WC_SUCCESS,
                       RSIM_WC_SEND, 1, p.a.qpn);
        }
    }
    for (i = 0; i < 200; i++) {
        qtest_clock_step(p.d.qts, 1000 * 1000);
    }
    g_assert_cmpuint(dev_stat(&p.d, RSIM_STAT_CQ_OVERFLOW), >=, 1);
    g_assert_cmpuint(qtest_readl(p.d.qts,
                                 p.b.rcq.addr + RSIM_QUEUE_PROD_OFFSET), ==,
                     63);
    /* consume: the rest arrives, in order, nothing lost */
    for (i = 0; i < 70; i++) {
        poll_cq(&p.d, &p.b.rcq, &cqe);
        g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0xa000 + i);
        g_assert_cmpuint(le32_to_cpu(cqe.status), ==, RSIM_WC_SUCCESS);
        g_assert_cmpuint(qtest_readb(p.d.qts, p.mb.addr + i * 64), ==, i);
    }
    for (i = 63; i < 70; i++) {
        expect_cqe(&p.d, &p.a.scq, 0xb000 + i, RSIM_WC_SUCCESS,
                   RSIM_WC_SEND, 1, p.a.qpn);
    }
    g_assert_cmpuint(query_qp_state(&p.d, p.b.qpn), ==, RSIM_QPS_RTS);
    dev_stop(&p.d);
}

/*
 * UC: SENDs and WRITEs with immediate between two UC QPs; with loss, a
 * message may be lost but never hangs the QP, and what arrives is right.
 */
static void test_uc(void)
{
    Pair p;
    g_autofree char *props =
        g_strdup_printf(",fault-drop=50000,fault-seed=%s",
                        getenv("RSIM_QTEST_SEED") ?: "9");
    unsigned delivered = 0, last_msg = 0;

    test_qp_type = RSIM_QPT_UC;
    pair_start(&p, NULL, RSIM_MTU_1024, ACCESS_ALL, 0);
    do_send(&p, 5000, 1, true);
    do_write_imm(&p, 3000, 2);
    g_assert_cmpuint(dev_stat(&p.d, RSIM_STAT_RETRANSMITS), ==, 0);
    dev_stop(&p.d);

    pair_start(&p, props, RSIM_MTU_1024, ACCESS_ALL, 0);
    for (int i = 0; i < 40; i++) {
        Wr wr = {
            .wr_id = 0xc000 + i,
            .opcode = RSIM_WR_SEND,
            .nsge = 1,
        };

        post_recv(&p.d, &p.b, 0xd000 + i, p.mb.addr + i * 4096, 4096,
                  p.mb.lkey);
        fill_pattern(&p.d, p.ma.addr + i * 4096, 3000, i);
        wr.sge[0] = sge_of(&p.ma, i * 4096, 3000);
        post_send(&p.d, &p.a, &wr);
        /* the sender completes every message: UC does not wait */
        expect_cqe(&p.d, &p.a.scq, 0xc000 + i, RSIM_WC_SUCCESS,
                   RSIM_WC_SEND, 3000, p.a.qpn);
    }
    /*
     * Each message that arrived is whole, in order; a receive WQE whose
     * message was lost takes the next one (message m >= WQE id).
     */
    while (qtest_readl(p.d.qts, p.b.rcq.addr + RSIM_QUEUE_PROD_OFFSET) !=
           p.b.rcq.cons) {
        struct rsim_cqe cqe;
        uint64_t id;
        uint8_t m;

        poll_cq(&p.d, &p.b.rcq, &cqe);
        id = le64_to_cpu(cqe.wr_id) - 0xd000;
        g_assert_cmpuint(le32_to_cpu(cqe.status), ==, RSIM_WC_SUCCESS);
        g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 3000);
        g_assert_cmpuint(id, ==, delivered);
        m = qtest_readb(p.d.qts, p.mb.addr + id * 4096);
        g_assert_cmpuint(m, >=, id);
        g_assert_cmpuint(m, <, 40);
        g_assert_cmpuint(m, >=, last_msg);
        check_pattern(&p.d, p.mb.addr + id * 4096, 3000, m);
        last_msg = m + 1;
        delivered++;
    }
    g_assert_cmpuint(delivered, >, 20);
    g_assert_cmpuint(delivered, <, 40);
    g_assert_cmpuint(query_qp_state(&p.d, p.b.qpn), ==, RSIM_QPS_RTS);
    g_assert_cmpuint(query_qp_state(&p.d, p.a.qpn), ==, RSIM_QPS_RTS);
    test_qp_type = RSIM_QPT_RC;
    dev_stop(&p.d);
}

/* Nobody answers (the peer QP is gone): retry count exceeded. */
static void test_retry_exceeded(void)
{
    Pair p;
    struct rsim_cmd_handle c;
    Wr wr = {
        .wr_id = 0x7008,
        .opcode = RSIM_WR_RDMA_WRITE,
        .nsge = 1,
    };

    pair_start(&p, NULL, RSIM_MTU_1024, ACCESS_ALL, 3);
    cmd_init(&c, sizeof(c), RSIM_CMD_DESTROY_QP);
    c.handle = cpu_to_le32(p.b.qpn);
    g_assert_cmpuint(dev_cmd(&p.d, &c, NULL), ==, RSIM_STS_OK);
    wr.remote_addr = p.mb.addr;
    wr.rkey = p.mb.rkey;
    wr.sge[0] = sge_of(&p.ma, 0, 64);
    post_send(&p.d, &p.a, &wr);
    expect_cqe(&p.d, &p.a.scq, wr.wr_id, RSIM_WC_RETRY_EXC_ERR, 0, 0,
               p.a.qpn);
    /* the first try and three retries each timed out */
    g_assert_cmpuint(dev_stat(&p.d, RSIM_STAT_TIMEOUTS), ==, 4);
    g_assert_cmpuint(dev_stat(&p.d, RSIM_STAT_RETRANSMITS), ==, 3);
    dev_stop(&p.d);
}

/*
 * Wire compatibility: frames from and to a UDP socket of the test
 */

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

static const uint8_t rxe_send_last[1010] = {
    0x52, 0x54, 0x00, 0x5e, 0x00, 0x01, 0x52, 0x54, 0x00, 0x5e, 0x00, 0x02,
    0x08, 0x00, 0x45, 0x00, 0x03, 0xe4, 0x75, 0xe6, 0x40, 0x00, 0x40, 0x11,
    0xad, 0x20, 0x0a, 0x00, 0x00, 0x02, 0x0a, 0x00, 0x00, 0x01, 0xc1, 0x21,
    0x12, 0xb7, 0x03, 0xd0, 0x00, 0x00, 0x02, 0x00, 0xff, 0xff, 0x00, 0x00,
    0x00, 0x11, 0x80, 0x6f, 0x04, 0x00, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b,
    0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0x1d, 0x9e,
    0x49, 0xdf,
};

/* CRC-32 (zlib polynomial), bit by bit: independent of the device's */
static uint32_t test_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++) {
            crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
        }
    }
    return ~crc;
}

/* ICRC of an IPv4 RoCEv2 frame of len bytes (without its last 4). */
static uint32_t test_icrc(const uint8_t *f, size_t len)
{
    static const uint8_t lrh[8] = {
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    };
    uint8_t pseudo[40];
    uint32_t crc;

    memcpy(pseudo, f + 14, 40);
    pseudo[1] = 0xff;                   /* TOS */
    pseudo[8] = 0xff;                   /* TTL */
    pseudo[10] = pseudo[11] = 0xff;     /* IP checksum */
    pseudo[26] = pseudo[27] = 0xff;     /* UDP checksum */
    pseudo[32] = 0xff;                  /* BTH reserved byte */
    crc = test_crc32(0, lrh, 8);
    crc = test_crc32(crc, pseudo, 40);
    return test_crc32(crc, f + 54, len - 54 - 4);
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
 * socket,udp= or, with dgram, -netdev dgram.
 */
static void wire_start_on(Dev *d, Wire *w, const char *mac, bool dgram)
{
    int probe = socket(AF_INET, SOCK_DGRAM, 0);
    uint16_t dev_port, my_port;
    g_autofree char *args = NULL;

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
        args = g_strdup_printf("%s,netdev=n0 -netdev dgram,id=n0,"
                               "remote.type=inet,remote.host=127.0.0.1,"
                               "remote.port=%u,local.type=inet,"
                               "local.host=127.0.0.1,local.port=%u",
                               mac, my_port, dev_port);
    } else {
        args = g_strdup_printf("%s,netdev=n0 -netdev socket,id=n0,"
                               "udp=127.0.0.1:%u,localaddr=127.0.0.1:%u",
                               mac, my_port, dev_port);
    }
    dev_start(d, args);
}

static void wire_start(Dev *d, Wire *w, const char *mac)
{
    wire_start_on(d, w, mac, false);
}

static void wire_send(Dev *d, Wire *w, const uint8_t *f, size_t len)
{
    g_assert_cmpint(sendto(w->fd, f, len, 0, (struct sockaddr *)&w->dev,
                           sizeof(w->dev)), ==, len);
}

/* Receive the next frame the device sends; the clock moves meanwhile. */
static ssize_t wire_recv(Dev *d, Wire *w, uint8_t *buf, size_t size)
{
    for (int i = 0; i < 2000; i++) {
        ssize_t n = recv(w->fd, buf, size, 0);

        if (n > 0) {
            return n;
        }
        qtest_clock_step(d->qts, 100 * 1000);
        g_usleep(1000);
    }
    g_assert_not_reached();
}

static void add_gid(Dev *d, uint32_t index, const uint8_t *ip4)
{
    struct rsim_cmd_gid g;

    cmd_init(&g, sizeof(g), RSIM_CMD_ADD_GID);
    g.index = cpu_to_le32(index);
    g.gid[10] = g.gid[11] = 0xff;
    memcpy(g.gid + 12, ip4, 4);
    g.type = RSIM_GID_TYPE_ROCE_V2;
    g_assert_cmpuint(dev_cmd(d, &g, NULL), ==, RSIM_STS_OK);
}

/* Wait until the device has received n frames. */
static void wait_rx_frames(Dev *d, uint64_t n)
{
    for (int i = 0; i < 2000 && dev_stat(d, RSIM_STAT_RX_FRAMES) < n; i++) {
        g_usleep(1000);
    }
    g_assert_cmpuint(dev_stat(d, RSIM_STAT_RX_FRAMES), ==, n);
}

/* The device accepts Soft-RoCE's frames: headers and ICRC check out. */
static void test_wire_rxe_frames(void)
{
    static const uint8_t ip1[4] = { 10, 0, 0, 1 }, ip2[4] = { 10, 0, 0, 2 };
    static const uint8_t mac1[6] = { 0x52, 0x54, 0, 0x5e, 0, 1 };
    struct rsim_cmd_set_port sp;
    uint8_t bad[sizeof(rxe_ack)];
    Dev d;
    Wire w;

    wire_start(&d, &w, ",mac=52:54:00:5e:00:02");
    add_gid(&d, 0, ip2);
    wire_send(&d, &w, rxe_ack, sizeof(rxe_ack));
    wait_rx_frames(&d, 1);
    g_assert_cmpuint(dev_stat(&d, RSIM_STAT_RX_ROCE_PKTS), ==, 1);
    g_assert_cmpuint(dev_stat(&d, RSIM_STAT_RX_ICRC_ERR), ==, 0);
    g_assert_cmpuint(dev_stat(&d, RSIM_STAT_RX_DROP_NO_QP), ==, 1);

    /* one flipped payload bit: the ICRC catches it */
    memcpy(bad, rxe_ack, sizeof(bad));
    bad[sizeof(bad) - 8] ^= 0x10;
    wire_send(&d, &w, bad, sizeof(bad));
    wait_rx_frames(&d, 2);
    g_assert_cmpuint(dev_stat(&d, RSIM_STAT_RX_ICRC_ERR), ==, 1);

    /* the other direction's frame, once the port has that address */
    cmd_init(&sp, sizeof(sp), RSIM_CMD_SET_PORT);
    sp.mask = cpu_to_le32(RSIM_SET_PORT_MAC);
    memcpy(sp.mac, mac1, 6);
    g_assert_cmpuint(dev_cmd(&d, &sp, NULL), ==, RSIM_STS_OK);
    add_gid(&d, 1, ip1);
    wire_send(&d, &w, rxe_send_last, sizeof(rxe_send_last));
    wait_rx_frames(&d, 3);
    g_assert_cmpuint(dev_stat(&d, RSIM_STAT_RX_ROCE_PKTS), ==, 2);
    g_assert_cmpuint(dev_stat(&d, RSIM_STAT_RX_ICRC_ERR), ==, 1);
    close(w.fd);
    dev_stop(&d);
}

/*
 * A burst of frames larger than the socket netdev reads per wakeup
 * (NET_DGRAM_BURST, patches/qemu/0001): every one arrives, once.
 */
static void test_wire_burst(void)
{
    static const uint8_t ip2[4] = { 10, 0, 0, 2 };
    const unsigned frames = 200;
    Dev d;
    Wire w;

    wire_start(&d, &w, ",mac=52:54:00:5e:00:02");
    add_gid(&d, 0, ip2);
    for (unsigned i = 0; i < frames; i++) {
        wire_send(&d, &w, rxe_ack, sizeof(rxe_ack));
    }
    wait_rx_frames(&d, frames);
    g_assert_cmpuint(dev_stat(&d, RSIM_STAT_RX_ROCE_PKTS), ==, frames);
    g_assert_cmpuint(dev_stat(&d, RSIM_STAT_RX_DROP_NO_QP), ==, frames);
    g_assert_cmpuint(dev_stat(&d, RSIM_STAT_RX_ICRC_ERR), ==, 0);
    /* nothing more trickles in */
    g_usleep(50 * 1000);
    g_assert_cmpuint(dev_stat(&d, RSIM_STAT_RX_FRAMES), ==, frames);
    close(w.fd);
    dev_stop(&d);
}

/*
 * A device on a UDP wire with an RC QP in RTS, connected to QPN 0x11 at
 * 10.0.0.1 (played by the test), first PSN 0x123456.  Returns the PD.
 */
static uint32_t wire_rc_connect_on(Dev *d, Wire *w, Qp *qp, bool dgram)
{
    static const uint8_t ip_dev[4] = { 10, 0, 0, 2 };
    static const uint8_t peer_mac[6] = { 0x52, 0x54, 0, 0x5e, 0, 1 };
    struct rsim_cmd_create_eq e;
    struct rsim_admin_cmd c;
    struct rsim_qp_attr a;
    uint32_t pdn, eqn;

    memset(qp, 0, sizeof(*qp));
    wire_start_on(d, w, ",mac=52:54:00:5e:00:02", dgram);
    add_gid(d, 0, ip_dev);
    cmd_init(&c, sizeof(c), RSIM_CMD_ALLOC_PD);
    pdn = dev_create(d, &c, NULL);
    cmd_init(&e, sizeof(e), RSIM_CMD_CREATE_EQ);
    e.vector = cpu_to_le32(1);
    e.addr = cpu_to_le64(guest_alloc(&d->alloc, EQ_DEPTH * 16));
    e.depth = cpu_to_le32(EQ_DEPTH);
    eqn = dev_create(d, &e, NULL);
    create_qp(d, qp, pdn, eqn);

    memset(&a, 0, sizeof(a));
    a.attr_mask = cpu_to_le32(RSIM_QP_STATE | RSIM_QP_PKEY_INDEX |
                              RSIM_QP_PORT | RSIM_QP_ACCESS_FLAGS);
    a.qp_state = RSIM_QPS_INIT;
    a.port_num = 1;
    g_assert_cmpuint(modify_qp(d, qp->qpn, &a), ==, RSIM_STS_OK);
    memset(&a, 0, sizeof(a));
    a.attr_mask = cpu_to_le32(RSIM_QP_STATE | RSIM_QP_AV | RSIM_QP_PATH_MTU |
                              RSIM_QP_DEST_QPN | RSIM_QP_RQ_PSN |
                              RSIM_QP_MAX_DEST_RD_ATOMIC |
                              RSIM_QP_MIN_RNR_TIMER);
    a.qp_state = RSIM_QPS_RTR;
    a.path_mtu = RSIM_MTU_1024;
    a.dest_qp_num = cpu_to_le32(0x11);
    a.av.dgid[10] = a.av.dgid[11] = 0xff;
    a.av.dgid[12] = 10;
    a.av.dgid[15] = 1;
    memcpy(a.av.dmac, peer_mac, 6);
    a.av.hop_limit = 64;
    a.av.traffic_class = 0x10;
    a.av.network_type = RSIM_NET_IPV4;
    g_assert_cmpuint(modify_qp(d, qp->qpn, &a), ==, RSIM_STS_OK);
    memset(&a, 0, sizeof(a));
    a.attr_mask = cpu_to_le32(RSIM_QP_STATE | RSIM_QP_TIMEOUT |
                              RSIM_QP_RETRY_CNT | RSIM_QP_RNR_RETRY |
                              RSIM_QP_SQ_PSN | RSIM_QP_MAX_QP_RD_ATOMIC);
    a.qp_state = RSIM_QPS_RTS;
    a.timeout = 20;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.sq_psn = cpu_to_le32(0x123456);
    g_assert_cmpuint(modify_qp(d, qp->qpn, &a), ==, RSIM_STS_OK);
    return pdn;
}

static uint32_t wire_rc_connect(Dev *d, Wire *w, Qp *qp)
{
    return wire_rc_connect_on(d, w, qp, false);
}

/* AETH syndromes: ACK (credits invalid), NAK for a PSN sequence error */
#define AETH_SYN_ACK            0x1f
#define AETH_SYN_NAK_PSN_SEQ    0x60

/* Send the peer's acknowledgement (AETH syndrome syn) of psn to the QP. */
static void wire_send_aeth(Dev *d, Wire *w, uint32_t qpn, uint8_t syn,
                           uint32_t psn)
{
    uint8_t ack[sizeof(rxe_ack)];

    /* built as Soft-RoCE builds it */
    memcpy(ack, rxe_ack, sizeof(ack));
    stl_be_p(ack + 46, qpn);
    stl_be_p(ack + 50, psn);
    ack[54] = syn;
    stl_le_p(ack + 58, test_icrc(ack, sizeof(ack)));
    wire_send(d, w, ack, sizeof(ack));
}

/*
 * The device's frames on the wire: a SEND to a remote peer played by the
 * test, checked field by field and with an independent ICRC, then
 * acknowledged by a frame the test builds; the send completes.
 */
static void test_wire_device_frames(void)
{
    static const uint8_t peer_mac[6] = { 0x52, 0x54, 0, 0x5e, 0, 1 };
    uint8_t f[2048];
    uint32_t pdn, psn, sum = 0;
    ssize_t n;
    Dev d;
    Wire w;
    Qp qp;
    Mr mr;
    Wr wr = { .wr_id = 0x99, .opcode = RSIM_WR_SEND, .nsge = 1 };

    pdn = wire_rc_connect(&d, &w, &qp);
    mr = reg_mr(&d, pdn, 4096, RSIM_ACCESS_LOCAL_WRITE);
    fill_pattern(&d, mr.addr, 333, 5);
    wr.sge[0] = sge_of(&mr, 0, 333);
    post_send(&d, &qp, &wr);

    n = wire_recv(&d, &w, f, sizeof(f));
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
    g_assert_cmphex((uint32_t)ldl_le_p(f + n - 4), ==, test_icrc(f, n));
    check_pattern(&d, mr.addr, 333, 5);
    for (int i = 0; i < 333; i++) {
        g_assert_cmpuint(f[54 + i], ==, pattern_byte(5, i));
    }

    /* the peer's ACK */
    psn = ldl_be_p(f + 50) & 0xffffff;
    wire_send_aeth(&d, &w, qp.qpn, AETH_SYN_ACK, psn);
    expect_cqe(&d, &qp.scq, 0x99, RSIM_WC_SUCCESS, RSIM_WC_SEND, 333,
               qp.qpn);
    close(w.fd);
    dev_stop(&d);
}

/*
 * The frames of a burst leave the datagram netdevs batched
 * (patches/qemu/0002): each still arrives as a datagram of its own, in
 * order, whole.  A 20580-byte SEND is 20 full packets and a short one; the
 * 64-byte SEND behind it has a size of its own and starts a new batch.
 */
static void wire_tx_burst(bool dgram)
{
    const uint32_t big = 20 * 1024 + 100, small = 64;
    const unsigned packets = 21 + 1;
    g_autofree uint8_t *f = g_malloc(65536);
    uint32_t pdn, psn = 0x123456, off = 0;
    Dev d;
    Wire w;
    Qp qp;
    Mr mr;
    Wr wr = { .wr_id = 1, .opcode = RSIM_WR_SEND, .nsge = 1 };

    pdn = wire_rc_connect_on(&d, &w, &qp, dgram);
    mr = reg_mr(&d, pdn, 32768, RSIM_ACCESS_LOCAL_WRITE);
    fill_pattern(&d, mr.addr, big + small, 9);
    wr.sge[0] = sge_of(&mr, 0, big);
    post_send(&d, &qp, &wr);
    wr.wr_id = 2;
    wr.sge[0] = sge_of(&mr, big, small);
    post_send(&d, &qp, &wr);

    for (unsigned i = 0; i < packets; i++) {
        /* a datagram holding two frames would show here as a wrong size */
        ssize_t n = wire_recv(&d, &w, f, 65536);
        uint32_t payload = i < 20 ? 1024 : i == 20 ? 100 : small;
        uint8_t opcode = i == 0 ? 0x00 : i < 20 ? 0x01 : i == 20 ? 0x02 : 0x04;

        g_assert_cmpint(n, ==, 14 + 20 + 8 + 12 + payload + 4);
        g_assert_cmphex(f[42], ==, opcode);
        g_assert_cmphex(ldl_be_p(f + 50) & 0xffffff, ==, psn + i);
        g_assert_cmphex((uint32_t)ldl_le_p(f + n - 4), ==, test_icrc(f, n));
        for (uint32_t j = 0; j < payload; j++, off++) {
            g_assert_cmpuint(f[54 + j], ==, pattern_byte(9, off));
        }
    }
    wire_send_aeth(&d, &w, qp.qpn, AETH_SYN_ACK, psn + packets - 1);
    expect_cqe(&d, &qp.scq, 1, RSIM_WC_SUCCESS, RSIM_WC_SEND, big, qp.qpn);
    expect_cqe(&d, &qp.scq, 2, RSIM_WC_SUCCESS, RSIM_WC_SEND, small, qp.qpn);
    /* nothing more: the batch sent each frame once */
    g_usleep(50 * 1000);
    g_assert_cmpint(recv(w.fd, f, 65536, 0), ==, -1);
    g_assert_cmpuint(dev_stat(&d, RSIM_STAT_TX_FRAMES), ==, packets);
    close(w.fd);
    dev_stop(&d);
}

static void test_wire_tx_burst(void)
{
    wire_tx_burst(false);
}

static void test_wire_tx_burst_dgram(void)
{
    wire_tx_burst(true);
}

/*
 * A NAK and, right behind it, an ACK of the packets it asked for again:
 * the peer had them after all (they came out of order).  Whether the
 * requester sent them again in between or not, every SEND completes; it
 * must not wait for packets to be sent again that are acknowledged.  The
 * two frames reach the device in one read only sometimes, hence rounds.
 */
static void test_wire_nak_then_ack(void)
{
    const unsigned rounds = 20, sends = 4;
    uint32_t next = 0x123456;       /* PSN of the next new packet */
    uint8_t f[2048];
    uint32_t pdn;
    Dev d;
    Wire w;
    Qp qp;
    Mr mr;

    pdn = wire_rc_connect(&d, &w, &qp);
    mr = reg_mr(&d, pdn, 4096, RSIM_ACCESS_LOCAL_WRITE);
    fill_pattern(&d, mr.addr, 64, 3);
    for (unsigned round = 0; round < rounds; round++) {
        for (unsigned i = 0; i < sends; i++) {
            Wr wr = { .wr_id = round * sends + i, .opcode = RSIM_WR_SEND,
                      .nsge = 1 };

            wr.sge[0] = sge_of(&mr, 0, 64);
            post_send(&d, &qp, &wr);
        }
        /* the new packets, in order; those sent again are older */
        for (unsigned got = 0; got < sends;) {
            ssize_t n = wire_recv(&d, &w, f, sizeof(f));
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
        wire_send_aeth(&d, &w, qp.qpn, AETH_SYN_NAK_PSN_SEQ, next - sends + 1);
        wire_send_aeth(&d, &w, qp.qpn, AETH_SYN_ACK, next - 1);
        for (unsigned i = 0; i < sends; i++) {
            expect_cqe(&d, &qp.scq, round * sends + i, RSIM_WC_SUCCESS,
                       RSIM_WC_SEND, 64, qp.qpn);
        }
    }
    g_assert_cmpuint(dev_stat(&d, RSIM_STAT_SEQ_NAK_RCVD), ==, rounds);
    close(w.fd);
    dev_stop(&d);
}

/* Garbage from the network: dropped and counted, never a crash. */
static void test_wire_garbage(void)
{
    static const uint8_t ip2[4] = { 10, 0, 0, 2 };
    uint8_t f[1500];
    GRand *r = g_rand_new_with_seed(42);
    Dev d;
    Wire w;

    wire_start(&d, &w, ",mac=52:54:00:5e:00:02");
    add_gid(&d, 0, ip2);
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
        wire_send(&d, &w, f, len);
        if (i % 500 == 499) {
            dev_check_alive(&d);
        }
    }
    dev_check_alive(&d);
    g_assert_cmpuint(dev_stat(&d, RSIM_STAT_RX_DROP_MALFORMED) +
                     dev_stat(&d, RSIM_STAT_RX_ICRC_ERR), >, 0);
    g_rand_free(r);
    close(w.fd);
    dev_stop(&d);
}

/*
 * Datagrams: UD QPs over the loopback
 */

/* RESET -> INIT -> RTR -> RTS for a UD QP with a Q_Key. */
static void ud_ready(Dev *d, uint32_t qpn, uint32_t qkey)
{
    struct rsim_qp_attr a;

    memset(&a, 0, sizeof(a));
    a.attr_mask = cpu_to_le32(RSIM_QP_STATE | RSIM_QP_PKEY_INDEX |
                              RSIM_QP_PORT | RSIM_QP_QKEY);
    a.qp_state = RSIM_QPS_INIT;
    a.port_num = 1;
    a.qkey = cpu_to_le32(qkey);
    g_assert_cmpuint(modify_qp(d, qpn, &a), ==, RSIM_STS_OK);
    memset(&a, 0, sizeof(a));
    a.attr_mask = cpu_to_le32(RSIM_QP_STATE);
    a.qp_state = RSIM_QPS_RTR;
    g_assert_cmpuint(modify_qp(d, qpn, &a), ==, RSIM_STS_OK);
    memset(&a, 0, sizeof(a));
    a.attr_mask = cpu_to_le32(RSIM_QP_STATE | RSIM_QP_SQ_PSN);
    a.qp_state = RSIM_QPS_RTS;
    a.sq_psn = cpu_to_le32(100);
    g_assert_cmpuint(modify_qp(d, qpn, &a), ==, RSIM_STS_OK);
}

static void test_ud_loopback(void)
{
    struct rsim_cmd_create_eq e;
    struct rsim_cmd_create_ah ah;
    struct rsim_admin_cmd c;
    struct rsim_cmd_gid g;
    struct rsim_cqe cqe;
    uint8_t grh[40];
    uint32_t pdn, eqn, ahn;
    Qp a, b;
    Mr ma, mb;
    Dev d;
    Wr wr = {
        .wr_id = 0x8001,
        .opcode = RSIM_WR_SEND_WITH_IMM,
        .ex = cpu_to_be32(0xabcd0123),
        .remote_qkey = 0x1234,
        .nsge = 1,
    };

    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    dev_start(&d, NULL);
    cmd_init(&c, sizeof(c), RSIM_CMD_ALLOC_PD);
    pdn = dev_create(&d, &c, NULL);
    cmd_init(&g, sizeof(g), RSIM_CMD_ADD_GID);
    memcpy(g.gid, test_gid_v4, 16);
    g.type = RSIM_GID_TYPE_ROCE_V2;
    g_assert_cmpuint(dev_cmd(&d, &g, NULL), ==, RSIM_STS_OK);
    cmd_init(&e, sizeof(e), RSIM_CMD_CREATE_EQ);
    e.vector = cpu_to_le32(1);
    e.addr = cpu_to_le64(guest_alloc(&d.alloc, EQ_DEPTH * 16));
    e.depth = cpu_to_le32(EQ_DEPTH);
    eqn = dev_create(&d, &e, NULL);
    create_qp_type(&d, &a, pdn, eqn, RSIM_QPT_UD);
    create_qp_type(&d, &b, pdn, eqn, RSIM_QPT_UD);
    ud_ready(&d, a.qpn, 0x1234);
    ud_ready(&d, b.qpn, 0x1234);
    cmd_init(&ah, sizeof(ah), RSIM_CMD_CREATE_AH);
    ah.pdn = cpu_to_le32(pdn);
    memcpy(ah.av.dgid, test_gid_v4, 16);
    memcpy(ah.av.dmac, d.mac, 6);
    ah.av.hop_limit = 64;
    ah.av.network_type = RSIM_NET_IPV4;
    ahn = dev_create(&d, &ah, NULL);
    ma = reg_mr(&d, pdn, 8192, RSIM_ACCESS_LOCAL_WRITE);
    mb = reg_mr(&d, pdn, 8192, RSIM_ACCESS_LOCAL_WRITE);

    /* a datagram with immediate data: GRH, then the payload */
    fill_pattern(&d, ma.addr, 1000, 77);
    post_recv(&d, &b, 0x8101, mb.addr, 4096, mb.lkey);
    wr.ah_num = ahn;
    wr.remote_qpn = b.qpn;
    wr.sge[0] = sge_of(&ma, 0, 1000);
    post_send(&d, &a, &wr);
    expect_cqe(&d, &a.scq, 0x8001, RSIM_WC_SUCCESS, RSIM_WC_SEND, 1000,
               a.qpn);
    poll_cq(&d, &b.rcq, &cqe);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x8101);
    g_assert_cmpuint(le32_to_cpu(cqe.status), ==, RSIM_WC_SUCCESS);
    g_assert_cmpuint(le32_to_cpu(cqe.opcode), ==, RSIM_WC_RECV);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 40 + 1000);
    g_assert_cmpuint(le32_to_cpu(cqe.src_qp), ==, a.qpn);
    g_assert_cmphex(le32_to_cpu(cqe.wc_flags), ==,
                    RSIM_WC_GRH | RSIM_WC_WITH_IMM);
    g_assert_cmphex(cqe.ex, ==, cpu_to_be32(0xabcd0123));
    qtest_memread(d.qts, mb.addr, grh, sizeof(grh));
    for (int i = 0; i < 20; i++) {
        g_assert_cmpuint(grh[i], ==, 0);
    }
    g_assert_cmphex(grh[20], ==, 0x45);                 /* IPv4 header */
    g_assert_cmpuint(grh[29], ==, 17);
    g_assert(!memcmp(grh + 32, test_gid_v4 + 12, 4));
    g_assert(!memcmp(grh + 36, test_gid_v4 + 12, 4));
    check_pattern(&d, mb.addr + 40, 1000, 77);

    /* a wrong Q_Key is dropped; the QP's own one (high bit) is not */
    post_recv(&d, &b, 0x8102, mb.addr, 4096, mb.lkey);
    wr.wr_id = 0x8002;
    wr.opcode = RSIM_WR_SEND;
    wr.remote_qkey = 0x9999;
    post_send(&d, &a, &wr);
    expect_cqe(&d, &a.scq, 0x8002, RSIM_WC_SUCCESS, RSIM_WC_SEND, 1000,
               a.qpn);
    g_assert_cmpuint(dev_stat(&d, RSIM_STAT_RX_DROP_NO_QP), ==, 1);
    wr.wr_id = 0x8003;
    wr.remote_qkey = 0x80000000;
    wr.sge[0] = sge_of(&ma, 0, 10);
    post_send(&d, &a, &wr);
    expect_cqe(&d, &a.scq, 0x8003, RSIM_WC_SUCCESS, RSIM_WC_SEND, 10,
               a.qpn);
    poll_cq(&d, &b.rcq, &cqe);
    g_assert_cmphex(le64_to_cpu(cqe.wr_id), ==, 0x8102);
    g_assert_cmpuint(le32_to_cpu(cqe.byte_len), ==, 40 + 10);

    /* larger than the port MTU (1500 gives 1024): a local length error */
    wr.wr_id = 0x8004;
    wr.sge[0] = sge_of(&ma, 0, 1025);
    post_send(&d, &a, &wr);
    expect_cqe(&d, &a.scq, 0x8004, RSIM_WC_LOC_LEN_ERR, 0, 0, a.qpn);
    g_assert_cmpuint(query_qp_state(&d, a.qpn), ==, RSIM_QPS_RTS);
    dev_check_alive(&d);
    dev_stop(&d);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/rdma-sim/transport/loopback-ops", test_loopback_ops);
    qtest_add_func("/rdma-sim/transport/loopback-mtu4096",
                   test_loopback_mtu4096);
    qtest_add_func("/rdma-sim/transport/loopback-ipv6", test_loopback_ipv6);
    qtest_add_func("/rdma-sim/transport/small-window",
                   test_loopback_small_window);
    qtest_add_func("/rdma-sim/transport/loss-reorder", test_loopback_loss);
    qtest_add_func("/rdma-sim/transport/tail-loss-probe",
                   test_loopback_tail_loss);
    qtest_add_func("/rdma-sim/transport/read-burst-lossy",
                   test_loopback_read_burst);
    qtest_add_func("/rdma-sim/transport/dup-corrupt",
                   test_loopback_dup_corrupt);
    qtest_add_func("/rdma-sim/transport/rkey-violation", test_rkey_violation);
    qtest_add_func("/rdma-sim/transport/read-out-of-range",
                   test_read_out_of_range);
    qtest_add_func("/rdma-sim/transport/bad-lkey", test_bad_lkey);
    qtest_add_func("/rdma-sim/transport/qp-access-denied",
                   test_qp_access_denied);
    qtest_add_func("/rdma-sim/transport/rnr", test_rnr_then_receive);
    qtest_add_func("/rdma-sim/transport/error-flush", test_error_flush);
    qtest_add_func("/rdma-sim/transport/solicited-events",
                   test_solicited_events);
    qtest_add_func("/rdma-sim/transport/recv-cq-full", test_recv_cq_full);
    qtest_add_func("/rdma-sim/transport/retry-exceeded", test_retry_exceeded);
    qtest_add_func("/rdma-sim/ud/loopback", test_ud_loopback);
    qtest_add_func("/rdma-sim/uc/loopback", test_uc);
    qtest_add_func("/rdma-sim/wire/rxe-frames", test_wire_rxe_frames);
    qtest_add_func("/rdma-sim/wire/burst", test_wire_burst);
    qtest_add_func("/rdma-sim/wire/nak-then-ack", test_wire_nak_then_ack);
    qtest_add_func("/rdma-sim/wire/device-frames", test_wire_device_frames);
    qtest_add_func("/rdma-sim/wire/tx-burst", test_wire_tx_burst);
    qtest_add_func("/rdma-sim/wire/tx-burst-dgram", test_wire_tx_burst_dgram);
    qtest_add_func("/rdma-sim/wire/garbage", test_wire_garbage);
    return g_test_run();
}
