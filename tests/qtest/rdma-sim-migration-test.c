/*
 * QTest testcase for the rdma-sim RDMA NIC: migration to another QEMU.
 * Idle objects of every kind arrive as they were and go on working as
 * they would have on the source; RC work posted just before the
 * switchover completes on the destination, byte for byte; frames lost on
 * the source are retransmitted by the destination, whose clock is not
 * the source's.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <glib/gstdio.h>
#include "libqos/rdma-sim.h"

#define PROPS       "id=" QSIM_QOM_ID

/* ==== Idle objects ==== */

/* QPs in every state, by index in Objects.qp (the QSimEnv's is in ERR) */
enum { QP_RESET, QP_INIT, QP_RTR, QP_RTS, QP_UD, QP_SRQ, NQP };

static const uint8_t qp_state[NQP] = {
    RSIM_QPS_RESET, RSIM_QPS_INIT, RSIM_QPS_RTR, RSIM_QPS_RTS, RSIM_QPS_RTS,
    RSIM_QPS_RESET,
};

typedef struct Objects {
    QSimEnv env;                /* PD, EQ (vector 1), CQ, the QP in ERR */
    QSimEq eq2;                 /* vector 2 */
    QSimRing cq2;
    uint32_t cqn2, srqn;
    QSimQp qp[NQP];
    struct rsim_qp_attr attr[NQP];
    uint64_t buf;               /* 4 pages the MRs cover */
    uint32_t key, dead_key, pbl_key, stag, phys_key;
} Objects;

/* What the device hands out next: the source's twin must agree */
typedef struct Next {
    uint32_t key, qpn, ahn;
} Next;

/* The registers that hold state (the others follow from the properties) */
static const uint32_t state_regs[] = {
    A_RSIM_DEV_CTRL, A_RSIM_DEV_STATUS, A_RSIM_INTR_MASK,
    A_RSIM_AQ_BASE_LO, A_RSIM_AQ_BASE_HI, A_RSIM_AQ_DEPTH, A_RSIM_AQ_HEAD,
    A_RSIM_ACQ_BASE_LO, A_RSIM_ACQ_BASE_HI, A_RSIM_ACQ_DEPTH, A_RSIM_ACQ_TAIL,
    A_RSIM_AEQ_BASE_LO, A_RSIM_AEQ_BASE_HI, A_RSIM_AEQ_DEPTH, A_RSIM_AEQ_TAIL,
};

/* QPNs 3-8 in qp[], QPN 9 destroyed: round robin gives 10 next */
static void make_qps(QSimDev *d, Objects *o)
{
    struct rsim_cmd_create_qp c;
    struct rsim_qp_attr a;
    QSimQp tmp;

    for (unsigned i = 0; i < NQP; i++) {
        qsim_qp_rings(d, &o->qp[i], RSIM_PBL_LEVEL0);
        qsim_qp_cmd(&c, i == QP_UD ? RSIM_QPT_UD : RSIM_QPT_RC, o->env.pdn,
                    o->cqn2, o->env.cqn, &o->qp[i]);
        if (i == QP_SRQ) {
            c.srqn = cpu_to_le32(o->srqn);
            memset(&c.rq, 0, sizeof(c.rq));
        }
        o->qp[i].qpn = qsim_create(d, &c, NULL);
    }
    qsim_qp_rc_to_init(d, o->qp[QP_INIT].qpn);
    qsim_qp_rc_to_init(d, o->qp[QP_RTR].qpn);
    qsim_attr_rc_rtr(&a);
    qsim_qp_modify_ok(d, o->qp[QP_RTR].qpn, &a);
    qsim_qp_rc_to_rts(d, o->qp[QP_RTS].qpn);
    qsim_qp_ud_ready(d, o->qp[QP_UD].qpn, 0x11111111);
    qsim_qp_create(d, &tmp, RSIM_QPT_RC, o->env.pdn, o->cqn2,
                   RSIM_PBL_LEVEL0);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_QP, tmp.qpn, RSIM_STS_OK);
}

/* MRs 1-5: level 0, (deregistered), level 1 over buf backwards, stag, PHYS */
static void make_mrs(QSimDev *d, Objects *o)
{
    struct rsim_cmd_alloc_stag sc;
    struct rsim_cmd_reg_mr c;
    uint64_t pages[4], len = 4 * QSIM_PAGE;
    uint32_t pdn = o->env.pdn;

    o->buf = qsim_alloc(d, len);
    o->key = qsim_mr_reg_l0(d, pdn, QSIM_ACC_LW, o->buf, len);
    o->dead_key = qsim_mr_reg_l0(d, pdn, QSIM_ACC_ALL, o->buf, len);
    for (unsigned i = 0; i < 4; i++) {
        pages[i] = o->buf + (3 - i) * QSIM_PAGE;
    }
    qsim_mr_cmd(&c, pdn, QSIM_ACC_ALL, 0x7000000, len, RSIM_PBL_LEVEL1,
                qsim_pbl_build(d, RSIM_PBL_LEVEL1, pages, 4), 4, 12, 0);
    o->pbl_key = qsim_create(d, &c, NULL);
    QSIM_CMD_INIT(sc, RSIM_CMD_ALLOC_STAG);
    sc.pdn = cpu_to_le32(pdn);
    sc.max_pages = cpu_to_le32(16);
    sc.pbl_addr = cpu_to_le64(qsim_alloc(d, QSIM_PAGE));
    o->stag = qsim_create(d, &sc, NULL);
    qsim_mr_cmd(&c, pdn, QSIM_ACC_LW, 0, 0, 0, 0, 0, 0, 0);
    c.flags = cpu_to_le32(RSIM_MR_FLAG_PHYS);
    o->phys_key = qsim_create(d, &c, NULL);
    /* index 2 has had a key: its next one must differ from it */
    qsim_handle_expect(d, RSIM_CMD_DEREG_MR, o->dead_key, RSIM_STS_OK);
}

static void make_objects(QSimDev *d, Objects *o)
{
    struct rsim_cmd_create_srq sc;
    struct rsim_cmd_create_ethq ec;
    struct rsim_cmd_create_ah ac;
    QSimRing srq;
    uint8_t gid[16];

    memset(o, 0, sizeof(*o));
    qsim_msix_setup(d);
    qsim_gid_add_v4(d, 0, 1);
    qsim_gid_v6(gid, 7);
    qsim_gid_add(d, 5, gid);
    qsim_env_setup(d, &o->env, RSIM_PBL_LEVEL1, 4);
    qsim_eq_create(d, &o->eq2, 2, 32);
    o->cqn2 = qsim_cq_create(d, &o->cq2, o->eq2.eqn, RSIM_PBL_LEVEL2, 5);
    qsim_ring_init(d, &srq, RSIM_PBL_LEVEL0, 3, 6);
    qsim_srq_cmd(&sc, o->env.pdn, &srq, 1, 2);
    o->srqn = qsim_create(d, &sc, NULL);
    make_qps(d, o);
    qsim_ah_cmd(&ac, o->env.pdn);
    g_assert_cmpuint(qsim_create(d, &ac, NULL), ==, 1);
    g_assert_cmpuint(qsim_create(d, &ac, NULL), ==, 2);
    make_mrs(d, o);
    qsim_ethq_cmd(&ec, RSIM_ETHQ_TX, o->eq2.eqn,
                  qsim_alloc(d, 16 * RSIM_ETH_DESC_SIZE), 16);
    qsim_cmd_expect(d, &ec, RSIM_STS_OK);
    qsim_ethq_cmd(&ec, RSIM_ETHQ_RX, o->eq2.eqn,
                  qsim_alloc(d, 16 * RSIM_ETH_DESC_SIZE), 16);
    qsim_cmd_expect(d, &ec, RSIM_STS_OK);

    /* three flushed sends move the CQ's index; then CQ and EQ are armed */
    qsim_flush_sends(d, &o->env, 3, 1);
    for (unsigned i = 1; i <= 3; i++) {
        qsim_cq_expect_flush(d, &o->env.cq, i, RSIM_WC_SEND, o->env.qp.qpn);
    }
    qsim_eq_doorbell(d, &o->env.eq, true);
    qsim_cq_arm_db(d, 0, o->env.cqn, RSIM_CQ_ARM_NEXT);
    for (unsigned i = 0; i < NQP; i++) {
        qsim_qp_query(d, o->qp[i].qpn, &o->attr[i]);
    }
}

/* The QPs' attributes, the armed CQ and EQ, the keys */
static void use_qps_mrs(QSimDev *d, Objects *o)
{
    uint32_t pdn = o->env.pdn;
    struct rsim_mr_translate_resp tr;
    struct rsim_qp_attr a;

    for (unsigned i = 0; i < NQP; i++) {
        qsim_qp_query(d, o->qp[i].qpn, &a);
        g_assert_cmpuint(a.qp_state, ==, qp_state[i]);
        g_assert_cmpmem(&a, sizeof(a), &o->attr[i], sizeof(a));
    }
    g_assert_cmpuint(qsim_qp_state(d, o->env.qp.qpn), ==, RSIM_QPS_ERR);
    /* the next completion: at index 3, an event and MSI-X vector 1 */
    qsim_flush_sends(d, &o->env, 1, 4);
    qsim_cq_expect_flush(d, &o->env.cq, 4, RSIM_WC_SEND, o->env.qp.qpn);
    qsim_eq_expect(d, &o->env.eq, RSIM_EV_COMPLETION, o->env.cqn);
    g_assert_true(qsim_irq_fired(d, 1));

    qsim_assert_sts(qsim_mr_translate(d, o->key, pdn, QSIM_ACC_LW,
                                      o->buf + 5, 1, &tr), RSIM_STS_OK);
    g_assert_cmphex(le64_to_cpu(tr.addr), ==, o->buf + 5);
    qsim_assert_sts(qsim_mr_translate(d, o->pbl_key, pdn, QSIM_ACC_RA,
                                      0x7000000 + QSIM_PAGE + 8, 8, &tr),
                    RSIM_STS_OK);
    g_assert_cmphex(le64_to_cpu(tr.addr), ==, o->buf + 2 * QSIM_PAGE + 8);
    qsim_assert_sts(qsim_mr_translate(d, o->phys_key, pdn, QSIM_ACC_LW,
                                      0x123456, 8, &tr), RSIM_STS_OK);
    g_assert_cmphex(le64_to_cpu(tr.addr), ==, 0x123456);
    qsim_xlate_fail(d, o->dead_key, pdn, 0, o->buf, 1, RSIM_STS_ACCESS);
    /* FREE until a REG_MR work request */
    qsim_xlate_fail(d, o->stag, pdn, 0, 0, 1, RSIM_STS_ACCESS);
}

/* New objects and what is taken or in use: *n for the twin's */
static void use_tables(QSimDev *d, Objects *o, Next *n)
{
    struct rsim_cmd_create_ethq ec;
    struct rsim_cmd_create_ah ac;
    struct rsim_cmd_gid gc;
    uint8_t gid[16];
    QSimQp qp;

    n->key = qsim_mr_reg_l0(d, o->env.pdn, QSIM_ACC_LW, o->buf, QSIM_PAGE);
    g_assert_cmpuint(RSIM_KEY_INDEX(n->key), ==,
                     RSIM_KEY_INDEX(o->dead_key));
    g_assert_cmphex(n->key, !=, o->dead_key);
    n->qpn = qsim_qp_create(d, &qp, RSIM_QPT_RC, o->env.pdn, o->cqn2,
                            RSIM_PBL_LEVEL0);
    g_assert_cmpuint(n->qpn, ==, o->qp[NQP - 1].qpn + 2);
    qsim_ah_cmd(&ac, o->env.pdn);
    n->ahn = qsim_create(d, &ac, NULL);
    g_assert_cmpuint(n->ahn, ==, 3);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_AH, 2, RSIM_STS_OK);

    qsim_gid_v4(gid, 10, 0, 0, 9);
    qsim_gid_cmd(&gc, RSIM_CMD_ADD_GID, 5, gid);
    qsim_cmd_expect(d, &gc, RSIM_STS_EXISTS);
    qsim_gid_cmd(&gc, RSIM_CMD_DEL_GID, 1, NULL);
    qsim_cmd_expect(d, &gc, RSIM_STS_BAD_HANDLE);
    qsim_gid_cmd(&gc, RSIM_CMD_DEL_GID, 5, NULL);
    qsim_cmd_expect(d, &gc, RSIM_STS_OK);

    qsim_ethq_cmd(&ec, RSIM_ETHQ_TX, o->eq2.eqn, o->buf, 16);
    qsim_cmd_expect(d, &ec, RSIM_STS_EXISTS);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_ETHQ, RSIM_ETHQ_RX, RSIM_STS_OK);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_SRQ, o->srqn, RSIM_STS_BUSY);
    qsim_handle_expect(d, RSIM_CMD_DEALLOC_PD, o->env.pdn, RSIM_STS_BUSY);
    qsim_handle_expect(d, RSIM_CMD_DESTROY_EQ, o->eq2.eqn, RSIM_STS_BUSY);
}

static void assert_same_state(QSimDev *a, QSimDev *b)
{
    QDict *x = qsim_introspect(a), *y = qsim_introspect(b);

    qsim_assert_same_dict(x, y);
    qobject_unref(x);
    qobject_unref(y);
}

/*
 * Objects of every kind migrate: the destination shows what the source
 * showed, registers and counters included, and it goes on as the source
 * would have: a twin QEMU that got the same commands does the same next.
 */
static void test_idle_objects(const char *machine)
{
    QSimDev *src = qsim_up(machine, PROPS), *twin = qsim_up(machine, PROPS);
    QSimRegVal regs[ARRAY_SIZE(state_regs)];
    QDict *before, *after;
    Objects o, ot;
    Next n, nt;
    QSimDev *d;

    make_objects(src, &o);
    make_objects(twin, &ot);
    /* the twin is one: it stands for the source after the migration */
    assert_same_state(src, twin);
    for (size_t i = 0; i < ARRAY_SIZE(state_regs); i++) {
        regs[i].off = state_regs[i];
        regs[i].val = qsim_rd(src, state_regs[i]);
    }
    before = qsim_introspect(src);

    d = qsim_migrate(src, NULL);
    after = qsim_introspect(d);
    qsim_assert_same_dict(before, after);
    qobject_unref(before);
    qobject_unref(after);
    qsim_check_regs(d, regs, ARRAY_SIZE(regs));

    use_qps_mrs(d, &o);
    use_qps_mrs(twin, &ot);
    use_tables(d, &o, &n);
    use_tables(twin, &ot, &nt);
    g_assert_cmphex(n.key, ==, nt.key);
    g_assert_cmpuint(n.qpn, ==, nt.qpn);
    g_assert_cmpuint(n.ahn, ==, nt.ahn);
    assert_same_state(d, twin);
    qsim_stop(d);
    qsim_stop(twin);
}

/* ==== RC traffic across the switchover ==== */

/* One message per 64 KiB slot of two buffers: 64 packets at MTU 1024 */
#define CHUNK       (64 * 1024)
#define NSLOT       16
/* The SEND that finds no receive before the switchover (RNR) */
#define RNR_SLOT    13
/* The atomics' slot: CAS at offset 0, FETCH_AND_ADD at 8 */
#define ATOM_SLOT   12
#define CAS_OLD     0x1111222233334444ull
#define CAS_NEW     0x5555666677778888ull
#define FADD_OLD    100
#define FADD_ADD    7

/* A's SQ: its wr_id is the index; slot in xa and xb, pattern seed slot */
static const struct {
    uint32_t wr;                /* RSIM_WR_* */
    unsigned wc;                /* RSIM_WC_* */
    unsigned slot;
} batch[] = {
    { RSIM_WR_RDMA_WRITE, RSIM_WC_RDMA_WRITE, 0 },
    { RSIM_WR_SEND, RSIM_WC_SEND, 4 },
    { RSIM_WR_RDMA_READ, RSIM_WC_RDMA_READ, 8 },
    { RSIM_WR_RDMA_WRITE, RSIM_WC_RDMA_WRITE, 1 },
    { RSIM_WR_SEND, RSIM_WC_SEND, 5 },
    { RSIM_WR_RDMA_READ, RSIM_WC_RDMA_READ, 9 },
    { RSIM_WR_RDMA_WRITE, RSIM_WC_RDMA_WRITE, 2 },
    { RSIM_WR_SEND, RSIM_WC_SEND, 6 },
    { RSIM_WR_RDMA_READ, RSIM_WC_RDMA_READ, 10 },
    { RSIM_WR_RDMA_WRITE, RSIM_WC_RDMA_WRITE, 3 },
    { RSIM_WR_SEND, RSIM_WC_SEND, 7 },
    { RSIM_WR_RDMA_READ, RSIM_WC_RDMA_READ, 11 },
    { RSIM_WR_ATOMIC_CMP_AND_SWP, RSIM_WC_COMP_SWAP, ATOM_SLOT },
    { RSIM_WR_ATOMIC_FETCH_AND_ADD, RSIM_WC_FETCH_ADD, ATOM_SLOT },
    /* this one waits for the RNR timer, and the rest behind it */
    { RSIM_WR_SEND, RSIM_WC_SEND, RNR_SLOT },
    { RSIM_WR_RDMA_WRITE, RSIM_WC_RDMA_WRITE, 14 },
    { RSIM_WR_RDMA_READ, RSIM_WC_RDMA_READ, 15 },
    { RSIM_WR_ATOMIC_FETCH_AND_ADD, RSIM_WC_FETCH_ADD, ATOM_SLOT },
};

static bool is_atomic(unsigned i)
{
    return batch[i].slot == ATOM_SLOT;
}

/* A receive on B into the slot of xb */
static void b_recv(QSimPair *p, const QSimMr *xb, unsigned slot)
{
    struct rsim_sge sge = qsim_sge(xb, (uint64_t)slot * CHUNK, CHUNK);

    qsim_post_recv(p->d, &p->b.qp.rq, 0x100 + slot, &sge);
}

/* Data, atomics' targets and B's receives (not the RNR one); post all */
static void batch_post(QSimPair *p, const QSimMr *xa, const QSimMr *xb)
{
    uint64_t atom = xb->addr + ATOM_SLOT * CHUNK;

    qtest_writeq(p->d->qts, atom, CAS_OLD);
    qtest_writeq(p->d->qts, atom + 8, FADD_OLD);
    for (unsigned i = 0; i < ARRAY_SIZE(batch); i++) {
        uint64_t off = (uint64_t)batch[i].slot * CHUNK;
        QSimWr wr = {
            .wr_id = i, .opcode = batch[i].wr, .nsge = 1,
            .sge[0] = qsim_sge(xa, off, CHUNK),
        };

        if (batch[i].wr != RSIM_WR_SEND) {
            wr.remote_addr = xb->addr + off;
            wr.rkey = xb->rkey;
        }
        if (batch[i].wr == RSIM_WR_RDMA_READ) {
            qsim_fill_pattern(p->d, xb->addr + off, CHUNK, batch[i].slot);
        } else if (!is_atomic(i)) {
            qsim_fill_pattern(p->d, xa->addr + off, CHUNK, batch[i].slot);
        }
        if (batch[i].wr == RSIM_WR_SEND && batch[i].slot != RNR_SLOT) {
            b_recv(p, xb, batch[i].slot);
        }
        if (batch[i].wr == RSIM_WR_ATOMIC_CMP_AND_SWP) {
            wr.compare_add = CAS_OLD;
            wr.swap = CAS_NEW;
        } else if (batch[i].wr == RSIM_WR_ATOMIC_FETCH_AND_ADD) {
            wr.remote_addr += 8;
            wr.compare_add = FADD_ADD;
        }
        if (is_atomic(i)) {
            /* the original value lands at 8 * wr_id in A's slot */
            wr.sge[0] = qsim_sge(xa, off + 8 * i, 8);
        }
        qsim_post_send(p->d, &p->a.qp.sq, &wr);
    }
    qsim_sq_doorbell(p->d, 0, p->a.qp.qpn);
}

/* Every completion in order, every byte, the atomics' values */
static void batch_check(QSimPair *p, const QSimMr *xa, const QSimMr *xb)
{
    QTestState *qts = p->d->qts;
    uint64_t atom_a = xa->addr + ATOM_SLOT * CHUNK;
    uint64_t atom_b = xb->addr + ATOM_SLOT * CHUNK;
    unsigned fadds = 0;

    for (unsigned i = 0; i < ARRAY_SIZE(batch); i++) {
        uint64_t off = (uint64_t)batch[i].slot * CHUNK;

        qsim_note("batch WQE %u", i);
        qsim_cq_expect(p->d, &p->a.scq, i, RSIM_WC_SUCCESS, batch[i].wc,
                       is_atomic(i) ? 8 : CHUNK, p->a.qp.qpn);
        if (batch[i].wr == RSIM_WR_SEND) {
            qsim_cq_expect(p->d, &p->b.rcq, 0x100 + batch[i].slot,
                           RSIM_WC_SUCCESS, RSIM_WC_RECV, CHUNK, p->b.qp.qpn);
        }
        if (batch[i].wr == RSIM_WR_RDMA_READ) {
            qsim_check_pattern(p->d, xa->addr + off, CHUNK, batch[i].slot);
        } else if (!is_atomic(i)) {
            qsim_check_pattern(p->d, xb->addr + off, CHUNK, batch[i].slot);
        } else if (batch[i].wr == RSIM_WR_ATOMIC_CMP_AND_SWP) {
            g_assert_cmphex(qtest_readq(qts, atom_a + 8 * i), ==, CAS_OLD);
        } else {
            g_assert_cmpuint(qtest_readq(qts, atom_a + 8 * i), ==,
                             FADD_OLD + FADD_ADD * fadds);
            fadds++;
        }
    }
    g_assert_cmphex(qtest_readq(qts, atom_b), ==, CAS_NEW);
    g_assert_cmpuint(qtest_readq(qts, atom_b + 8), ==,
                     FADD_OLD + FADD_ADD * fadds);
}

/* A WRITE, a SEND and a READ of a few packets each, in the pair's MRs */
#define W_LEN       3000
#define S_OFF       8192
#define S_LEN       2500
#define R_OFF       16384
#define R_LEN       2000

static void round_post(QSimPair *p, uint8_t seed)
{
    struct rsim_sge rsge = qsim_sge(&p->mb, S_OFF, 4096);
    QSimWr w = {
        .wr_id = 1, .opcode = RSIM_WR_RDMA_WRITE, .nsge = 1,
        .remote_addr = p->mb.addr, .rkey = p->mb.rkey,
        .sge[0] = qsim_sge(&p->ma, 0, W_LEN),
    };
    QSimWr s = {
        .wr_id = 2, .opcode = RSIM_WR_SEND, .nsge = 1,
        .sge[0] = qsim_sge(&p->ma, S_OFF, S_LEN),
    };
    QSimWr r = {
        .wr_id = 3, .opcode = RSIM_WR_RDMA_READ, .nsge = 1,
        .remote_addr = p->mb.addr + R_OFF, .rkey = p->mb.rkey,
        .sge[0] = qsim_sge(&p->ma, R_OFF, R_LEN),
    };

    qsim_fill_pattern(p->d, p->ma.addr, W_LEN, seed);
    qsim_fill_pattern(p->d, p->ma.addr + S_OFF, S_LEN, seed + 1);
    qsim_fill_pattern(p->d, p->mb.addr + R_OFF, R_LEN, seed + 2);
    qsim_post_recv(p->d, &p->b.qp.rq, 4, &rsge);
    qsim_post_send(p->d, &p->a.qp.sq, &w);
    qsim_post_send(p->d, &p->a.qp.sq, &s);
    qsim_post_send(p->d, &p->a.qp.sq, &r);
    qsim_sq_doorbell(p->d, 0, p->a.qp.qpn);
}

static void round_check(QSimPair *p, uint8_t seed)
{
    uint32_t a = p->a.qp.qpn;

    qsim_cq_expect(p->d, &p->a.scq, 1, RSIM_WC_SUCCESS, RSIM_WC_RDMA_WRITE,
                   W_LEN, a);
    qsim_cq_expect(p->d, &p->a.scq, 2, RSIM_WC_SUCCESS, RSIM_WC_SEND, S_LEN,
                   a);
    qsim_cq_expect(p->d, &p->a.scq, 3, RSIM_WC_SUCCESS, RSIM_WC_RDMA_READ,
                   R_LEN, a);
    qsim_cq_expect(p->d, &p->b.rcq, 4, RSIM_WC_SUCCESS, RSIM_WC_RECV, S_LEN,
                   p->b.qp.qpn);
    qsim_check_pattern(p->d, p->mb.addr, W_LEN, seed);
    qsim_check_pattern(p->d, p->mb.addr + S_OFF, S_LEN, seed + 1);
    qsim_check_pattern(p->d, p->ma.addr + R_OFF, R_LEN, seed + 2);
}

static void assert_pair_rts(QSimPair *p)
{
    g_assert_cmpuint(qsim_qp_state(p->d, p->a.qp.qpn), ==, RSIM_QPS_RTS);
    g_assert_cmpuint(qsim_qp_state(p->d, p->b.qp.qpn), ==, RSIM_QPS_RTS);
}

/*
 * A batch of 1 MiB of WRITEs, SENDs, READs and atomics, posted right
 * before the migration: what the source did not finish, the destination
 * does, byte for byte.  One SEND finds no receive until the destination
 * posts it, so at least it and the work behind it are still to do at the
 * switchover.  Then the QPs carry more traffic, also after a second
 * migration, and every completion was counted once.
 */
static void test_rc_in_flight(const char *machine)
{
    QSimPair p;
    QSimMr xa, xb;

    qsim_pair_start(&p, machine, NULL);
    xa = qsim_mr_alloc(p.d, p.pdn, NSLOT * CHUNK, QSIM_ACC_ALL);
    xb = qsim_mr_alloc(p.d, p.pdn, NSLOT * CHUNK, QSIM_ACC_ALL);
    batch_post(&p, &xa, &xb);
    p.d = qsim_migrate(p.d, NULL);
    b_recv(&p, &xb, RNR_SLOT);
    batch_check(&p, &xa, &xb);
    assert_pair_rts(&p);

    round_post(&p, 50);
    round_check(&p, 50);
    p.d = qsim_migrate(p.d, NULL);
    round_post(&p, 60);
    round_check(&p, 60);
    assert_pair_rts(&p);
    /* the batch: 18 + 5 (the SENDs' receives), each round 3 + 1 */
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_COMPLETIONS), ==, 31);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_RX_ICRC_ERR), ==, 0);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_RX_DROP_MALFORMED), ==, 0);
    qsim_stop(p.d);
}

/* How far the source's clock is ahead of the destination's */
#define CLOCK_JUMP_NS   (1000 * 1000 * 1000 * 1000LL)

/*
 * Every frame of the source is lost (fault-drop), none of the
 * destination's.  Nothing moves on the source while its clock stands
 * still; the destination's clock starts 1000 s behind the source's, and
 * its retransmissions complete the work all the same.
 */
static void test_rc_retransmit(const char *machine)
{
    QSimPair p;
    uint64_t dropped;

    qsim_pair_start(&p, machine,
                    &(QSimPairConf){ .props = "fault-drop=1000000" });
    qtest_clock_step(p.d->qts, CLOCK_JUMP_NS);
    round_post(&p, 70);
    qsim_settle(p.d);
    dropped = qsim_stat(p.d, RSIM_STAT_FAULT_DROP);
    g_assert_cmpuint(dropped, >, 0);
    qsim_settle(p.d);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_FAULT_DROP), ==, dropped);
    g_assert_cmpuint(qsim_ring_prod(p.d, &p.a.scq), ==, 0);

    p.d = qsim_migrate(p.d, "fault-drop=0");
    round_check(&p, 70);
    assert_pair_rts(&p);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_FAULT_DROP), ==, dropped);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_RETRANSMITS), >, 0);
    qsim_stop(p.d);
}

static void vm_cmd(QSimDev *d, const char *cmd)
{
    qtest_qmp_assert_success(d->qts, "{'execute': %s}", cmd);
}

/* A member of an introspection property (admin commands wait, too) */
static int64_t inspect(QSimDev *d, const char *property, const char *key)
{
    QObject *o = qsim_qom_get(d, property);
    int64_t n = qdict_get_int(qobject_to(QDict, o), key);

    qobject_unref(o);
    return n;
}

/*
 * A stopped VM's device does nothing until the VM runs: a doorbell rung
 * meanwhile sends its first packet into the loopback queue, and the rest
 * waits.  That packet and the waiting work travel in the stream; the
 * destination arrives stopped, does nothing either, and finishes the
 * work once it runs.
 */
static void test_stopped(const char *machine)
{
    QSimPair p;

    qsim_pair_start(&p, machine, &(QSimPairConf){ .props = PROPS });
    vm_cmd(p.d, "stop");
    round_post(&p, 80);
    qsim_settle(p.d);
    g_assert_cmpint(inspect(p.d, "port", "loopback-queued"), ==, 1);
    g_assert_cmpint(inspect(p.d, "counters", "tx_roce_packets"), ==, 1);
    g_assert_cmpuint(qsim_ring_prod(p.d, &p.a.scq), ==, 0);

    p.d = qsim_migrate(p.d, NULL);
    g_assert_false(qsim_vm_running(p.d));
    g_assert_cmpint(inspect(p.d, "port", "loopback-queued"), ==, 1);
    qsim_settle(p.d);
    g_assert_cmpint(inspect(p.d, "counters", "tx_roce_packets"), ==, 1);
    vm_cmd(p.d, "cont");
    round_check(&p, 80);
    assert_pair_rts(&p);
    g_assert_cmpint(inspect(p.d, "port", "loopback-queued"), ==, 0);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_RETRANSMITS), ==, 0);
    qsim_stop(p.d);
}

/*
 * A destination whose tables or MSI-X vectors are sized differently
 * refuses the stream and exits; the source, continued, goes on.
 */
static void test_refused(const char *machine)
{
    QSimPair p;

    qsim_pair_start(&p, machine, NULL);
    qsim_migrate_refused(p.d, "max-qp=64");
    qsim_migrate_refused(p.d, "msix-vectors=4");
    round_post(&p, 90);
    round_check(&p, 90);
    assert_pair_rts(&p);
    qsim_stop(p.d);
}

/*
 * A snapshot taken with a round in flight; the QPs then move on; loading
 * the snapshot puts both QPs (one device) back at that moment, with its
 * PSNs, counters and guest memory: the round in flight completes again,
 * byte for byte, and new work follows.  The driver's view (the test's
 * ring indexes) goes back with it.
 */
static void test_snapshot(const char *machine)
{
    g_autofree char *dir = g_dir_make_tmp("rdma-sim-snap-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "snap.qcow2", NULL);
    const char *asan = g_getenv("ASAN_OPTIONS");
    QSimPair p, saved;
    int64_t done;

    if (asan) {
        /* tests/fuzz/lsan.supp: a leak of QEMU 7.2's snapshot code */
        g_autofree char *full = g_strconcat(asan, ":fast_unwind_on_malloc=0",
                                            NULL);

        g_setenv("ASAN_OPTIONS", full, true);
    }
    qsim_pair_start(&p, machine, &(QSimPairConf){ .props = PROPS });
    qsim_snapshot_disk(p.d, path);
    round_post(&p, 110);
    round_check(&p, 110);
    vm_cmd(p.d, "stop");
    round_post(&p, 120);
    qsim_settle(p.d);
    done = inspect(p.d, "counters", "completions");
    g_assert_cmpint(inspect(p.d, "port", "loopback-queued"), ==, 1);
    qsim_snapshot_save(p.d, "s1");
    g_assert_false(qsim_vm_running(p.d));
    saved = p;

    vm_cmd(p.d, "cont");
    round_check(&p, 120);
    round_post(&p, 130);
    round_check(&p, 130);
    assert_pair_rts(&p);
    g_assert_cmpint(inspect(p.d, "counters", "completions"), ==, done + 8);

    vm_cmd(p.d, "stop");
    qsim_snapshot_load(p.d, "s1");
    p = saved;
    g_assert_false(qsim_vm_running(p.d));
    g_assert_cmpint(inspect(p.d, "counters", "completions"), ==, done);
    g_assert_cmpint(inspect(p.d, "port", "loopback-queued"), ==, 1);
    vm_cmd(p.d, "cont");
    round_check(&p, 120);
    round_post(&p, 140);
    round_check(&p, 140);
    assert_pair_rts(&p);
    g_assert_cmpint(inspect(p.d, "counters", "completions"), ==, done + 8);
    g_assert_cmpuint(qsim_stat(p.d, RSIM_STAT_RX_DROP_MALFORMED), ==, 0);
    qsim_stop(p.d);
    g_unlink(path);
    g_assert_cmpint(g_rmdir(dir), ==, 0);
}

/*
 * What the device adds to a migration stream: a fixed part of about 1 KiB,
 * then a little per object and per WQE in flight (the tables are sparse,
 * a WQE travels as a copy).  Measured with RSIM_TEST_VERBOSE=1; the
 * datasheet ("Migration and snapshots") gives the figures.
 */
static size_t device_section(QSimDev *d)
{
    g_autofree char *id = g_strdup_printf("0000:00:%02x.%x/rdma-sim",
                                          d->dev->devfn >> 3,
                                          d->dev->devfn & 7);
    size_t size = qsim_stream_section_size(d, id);

    qsim_note("the device's section of the stream: %zu bytes", size);
    return size;
}

static void test_stream_size(const char *machine)
{
    QSimDev *d = qsim_up(machine, PROPS), *big;
    size_t idle, objects, in_flight;
    Objects o;
    QSimPair p;

    idle = device_section(d);
    /* tables 64 and 32 times larger, empty: not a byte more */
    big = qsim_up(machine, PROPS ",max-qp=65536,max-mr=262144");
    g_assert_cmpuint(device_section(big), ==, idle);
    qsim_stop(big);
    make_objects(d, &o);
    objects = device_section(d);
    qsim_stop(d);
    g_assert_cmpuint(idle, <=, 2048);
    g_assert_cmpuint(idle, <, objects);
    g_assert_cmpuint(objects, <=, 16 * 1024);

    qsim_pair_start(&p, machine, &(QSimPairConf){ .props = PROPS });
    vm_cmd(p.d, "stop");
    round_post(&p, 100);
    in_flight = device_section(p.d);
    vm_cmd(p.d, "cont");
    round_check(&p, 100);
    assert_pair_rts(&p);
    qsim_stop(p.d);
    g_assert_cmpuint(in_flight, >, idle);
    g_assert_cmpuint(in_flight, <=, 16 * 1024);
}

static const QSimTest tests[] = {
    { "migration/idle-objects", test_idle_objects },
    { "migration/rc-in-flight", test_rc_in_flight, QSIM_ONCE },
    { "migration/rc-retransmit", test_rc_retransmit, QSIM_ONCE },
    { "migration/stopped", test_stopped, QSIM_ONCE },
    { "migration/refused", test_refused, QSIM_ONCE },
    { "migration/snapshot", test_snapshot, QSIM_ONCE },
    { "migration/stream-size", test_stream_size, QSIM_ONCE },
};

int main(int argc, char **argv)
{
    return qsim_main(argc, argv, tests, ARRAY_SIZE(tests));
}
