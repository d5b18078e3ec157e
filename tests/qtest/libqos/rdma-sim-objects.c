/*
 * libqos helpers for the rdma-sim qtests: rings, objects, work requests
 * and completions (see rdma-sim.h)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqos/rdma-sim.h"

/* ---- Rings (SQ, RQ, SRQ, CQ) and page lists ---- */

uint64_t qsim_pbl_build(QSimDev *d, unsigned level, const uint64_t *pages,
                        uint32_t n)
{
    g_autofree uint64_t *le = g_new(uint64_t, MAX(n, 1));
    uint32_t nleaves = DIV_ROUND_UP(n, RSIM_PBL_LEAF_ENTRIES);
    g_autofree uint64_t *root = g_new(uint64_t, MAX(nleaves, 1));
    uint64_t list;

    for (uint32_t i = 0; i < n; i++) {
        le[i] = cpu_to_le64(pages[i]);
    }
    if (level == RSIM_PBL_LEVEL1) {
        list = qsim_alloc(d, MAX(n, 1) * 8);
        qtest_memwrite(d->qts, list, le, n * 8);
        return list;
    }
    g_assert_cmpuint(level, ==, RSIM_PBL_LEVEL2);
    for (uint32_t l = 0; l < nleaves; l++) {
        uint32_t cnt = MIN(n - l * RSIM_PBL_LEAF_ENTRIES,
                           RSIM_PBL_LEAF_ENTRIES);
        uint64_t leaf = qsim_alloc(d, QSIM_PAGE);

        qtest_memwrite(d->qts, leaf, le + l * RSIM_PBL_LEAF_ENTRIES,
                       cnt * 8);
        root[l] = cpu_to_le64(leaf);
    }
    list = qsim_alloc(d, nleaves * 8);
    qtest_memwrite(d->qts, list, root, nleaves * 8);
    return list;
}

void qsim_ring_init(QSimDev *d, QSimRing *r, unsigned level,
                    unsigned log2_depth, unsigned log2_elem)
{
    uint32_t hdr[2];

    memset(r, 0, sizeof(*r));
    r->depth = 1u << log2_depth;
    r->log2_elem = log2_elem;
    r->bytes = RSIM_QUEUE_DATA_OFFSET + ((uint64_t)r->depth << log2_elem);
    r->desc.level = level;
    r->desc.log2_elem_size = log2_elem;
    r->desc.log2_depth = log2_depth;
    if (level == RSIM_PBL_LEVEL0) {
        r->base = qsim_alloc(d, r->bytes);
        r->desc.addr = cpu_to_le64(r->base);
    } else {
        r->npages = DIV_ROUND_UP(r->bytes, QSIM_PAGE);
        r->pages = g_new(uint64_t, r->npages);
        g_ptr_array_add(d->ring_pages, r->pages);
        for (uint32_t i = r->npages; i-- > 0;) {
            r->pages[i] = qsim_alloc(d, QSIM_PAGE);
        }
        r->desc.addr = cpu_to_le64(qsim_pbl_build(d, level, r->pages,
                                                  r->npages));
        r->desc.page_shift = 12;
        r->desc.npages = cpu_to_le32(r->npages);
    }
    hdr[0] = cpu_to_le32(log2_elem);
    hdr[1] = cpu_to_le32(r->depth - 1);
    qtest_memwrite(d->qts, r->pages ? r->pages[0] : r->base, hdr,
                   sizeof(hdr));
}

/* The guest address of byte off of the ring */
static uint64_t ring_gpa(const QSimRing *r, uint64_t off)
{
    g_assert_cmpuint(off, <, r->bytes);
    if (!r->pages) {
        return r->base + off;
    }
    return r->pages[off / QSIM_PAGE] + off % QSIM_PAGE;
}

static void ring_rw(QSimDev *d, const QSimRing *r, uint64_t off, void *buf,
                    size_t len, bool write)
{
    uint8_t *p = buf;

    while (len) {
        size_t chunk = r->pages ? MIN(len, QSIM_PAGE - off % QSIM_PAGE)
                                : len;

        if (write) {
            qtest_memwrite(d->qts, ring_gpa(r, off), p, chunk);
        } else {
            qtest_memread(d->qts, ring_gpa(r, off), p, chunk);
        }
        p += chunk;
        off += chunk;
        len -= chunk;
    }
}

static uint64_t elem_off(const QSimRing *r, uint32_t index)
{
    return RSIM_QUEUE_DATA_OFFSET +
           ((uint64_t)(index & (r->depth - 1)) << r->log2_elem);
}

void qsim_elem_write(QSimDev *d, const QSimRing *r, uint32_t index,
                     const void *buf, size_t len)
{
    ring_rw(d, r, elem_off(r, index), (void *)buf, len, true);
}

void qsim_elem_read(QSimDev *d, const QSimRing *r, uint32_t index,
                    void *buf, size_t len)
{
    ring_rw(d, r, elem_off(r, index), buf, len, false);
}

uint32_t qsim_ring_prod(QSimDev *d, const QSimRing *r)
{
    return qtest_readl(d->qts, ring_gpa(r, RSIM_QUEUE_PROD_OFFSET));
}

uint32_t qsim_ring_cons(QSimDev *d, const QSimRing *r)
{
    return qtest_readl(d->qts, ring_gpa(r, RSIM_QUEUE_CONS_OFFSET));
}

void qsim_ring_set_prod(QSimDev *d, const QSimRing *r, uint32_t val)
{
    qtest_writel(d->qts, ring_gpa(r, RSIM_QUEUE_PROD_OFFSET), val);
}

void qsim_ring_set_cons(QSimDev *d, const QSimRing *r, uint32_t val)
{
    qtest_writel(d->qts, ring_gpa(r, RSIM_QUEUE_CONS_OFFSET), val);
}

/* ---- Work requests and completions ---- */

/* Put a send WQE into sq (no doorbell). */
void qsim_post_send(QSimDev *d, const QSimRing *sq, const QSimWr *wr)
{
    struct rsim_send_wqe w;
    uint32_t prod = qsim_ring_prod(d, sq);
    /* the SGEs, or the 8 bytes of an ATOMIC_WRITE (in sge[0].addr) */
    size_t sges = wr->opcode == RSIM_WR_ATOMIC_WRITE ? 8 :
                  wr->nsge * sizeof(wr->sge[0]);

    memset(&w, 0, sizeof(w));
    w.wr_id = cpu_to_le64(wr->wr_id);
    w.opcode = cpu_to_le32(wr->opcode);
    w.send_flags = cpu_to_le32(wr->flags |
                               (wr->unsignaled ? 0 : RSIM_SEND_SIGNALED));
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
    w.dma.length = cpu_to_le32(wr->dma_length);
    qsim_elem_write(d, sq, prod, &w, sizeof(w));
    if (sges) {
        ring_rw(d, sq, elem_off(sq, prod) + sizeof(w), (void *)wr->sge, sges,
                true);
    }
    qsim_ring_set_prod(d, sq, (prod + 1) & (sq->depth - 1));
}

void qsim_post_empty(QSimDev *d, const QSimRing *sq, uint64_t wr_id,
                     uint32_t opcode)
{
    QSimWr wr = { .wr_id = wr_id, .opcode = opcode };

    qsim_post_send(d, sq, &wr);
}

void qsim_post_recv(QSimDev *d, const QSimRing *rq, uint64_t wr_id,
                    const struct rsim_sge *sge)
{
    struct rsim_recv_wqe w;
    uint32_t prod = qsim_ring_prod(d, rq);

    memset(&w, 0, sizeof(w));
    w.wr_id = cpu_to_le64(wr_id);
    w.dma.num_sge = cpu_to_le32(sge ? 1 : 0);
    qsim_elem_write(d, rq, prod, &w, sizeof(w));
    if (sge) {
        ring_rw(d, rq, elem_off(rq, prod) + sizeof(w), (void *)sge,
                sizeof(*sge), true);
    }
    qsim_ring_set_prod(d, rq, (prod + 1) & (rq->depth - 1));
}

void qsim_cq_poll(QSimDev *d, QSimRing *cq, struct rsim_cqe *e)
{
    int64_t deadline = g_get_monotonic_time() + QSIM_POLL_US;

    for (unsigned i = 1; qsim_ring_prod(d, cq) == cq->cons; i++) {
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        qsim_run(d);
        if (i % 16 == 0) {
            qtest_clock_step(d->qts, 1000 * 1000);
        }
    }
    qsim_elem_read(d, cq, cq->cons, e, sizeof(*e));
    cq->cons = (cq->cons + 1) & (cq->depth - 1);
    qsim_ring_set_cons(d, cq, cq->cons);
}

void qsim_cqe_check(const struct rsim_cqe *e, uint64_t wr_id,
                    unsigned status, unsigned opcode, uint32_t byte_len,
                    uint32_t qpn)
{
    g_assert_cmphex(le64_to_cpu(e->wr_id), ==, wr_id);
    g_assert_cmpuint(le32_to_cpu(e->status), ==, status);
    g_assert_cmpuint(le32_to_cpu(e->qp_num), ==, qpn);
    g_assert_cmpuint(le32_to_cpu(e->vendor_err), ==, 0);
    if (status == RSIM_WC_SUCCESS || status == RSIM_WC_WR_FLUSH_ERR) {
        g_assert_cmpuint(le32_to_cpu(e->opcode), ==, opcode);
        g_assert_cmpuint(le32_to_cpu(e->byte_len), ==, byte_len);
    }
}

void qsim_cq_expect(QSimDev *d, QSimRing *cq, uint64_t wr_id,
                    unsigned status, unsigned opcode, uint32_t byte_len,
                    uint32_t qpn)
{
    struct rsim_cqe e;

    qsim_cq_poll(d, cq, &e);
    qsim_cqe_check(&e, wr_id, status, opcode, byte_len, qpn);
}

void qsim_cq_expect_flush(QSimDev *d, QSimRing *cq, uint64_t wr_id,
                          unsigned opcode, uint32_t qpn)
{
    qsim_cq_expect(d, cq, wr_id, RSIM_WC_WR_FLUSH_ERR, opcode, 0, qpn);
}

void qsim_cq_expect_empty(QSimDev *d, QSimRing *cq)
{
    qsim_settle(d);
    g_assert_cmpuint(qsim_ring_prod(d, cq), ==, cq->cons);
}

/* ---- PDs, EQs, CQs, SRQs, Ethernet rings ---- */

uint32_t qsim_pd_alloc(QSimDev *d)
{
    struct rsim_cmd_handle c;

    QSIM_CMD_INIT(c, RSIM_CMD_ALLOC_PD);
    return qsim_create(d, &c, NULL);
}

void qsim_eq_cmd(struct rsim_cmd_create_eq *c, uint32_t vector,
                 uint64_t addr, uint32_t depth)
{
    QSIM_CMD_INIT(*c, RSIM_CMD_CREATE_EQ);
    c->vector = cpu_to_le32(vector);
    c->addr = cpu_to_le64(addr);
    c->depth = cpu_to_le32(depth);
}

uint32_t qsim_eq_create(QSimDev *d, QSimEq *eq, uint32_t vector,
                        uint32_t depth)
{
    struct rsim_cmd_create_eq c;

    memset(eq, 0, sizeof(*eq));
    eq->addr = qsim_alloc(d, depth * RSIM_EQ_ENTRY_SIZE);
    eq->depth = depth;
    eq->vector = vector;
    eq->phase = true;
    qsim_eq_cmd(&c, vector, eq->addr, depth);
    eq->eqn = qsim_create(d, &c, NULL);
    return eq->eqn;
}

bool qsim_eq_poll(QSimDev *d, QSimEq *eq, struct rsim_eqe *e,
                  int64_t timeout_us)
{
    return qsim_eqe_poll(d, eq->addr, eq->depth, &eq->head, &eq->phase, e,
                         timeout_us);
}

void qsim_eq_doorbell(QSimDev *d, QSimEq *eq, bool arm)
{
    uint32_t v = 0;

    v = FIELD_DP32(v, RSIM_EQ_DB, CONS, eq->head);
    v = FIELD_DP32(v, RSIM_EQ_DB, EQN, eq->eqn);
    v = FIELD_DP32(v, RSIM_EQ_DB, ARM, arm);
    qsim_wr(d, A_RSIM_EQ_DB, v);
}

void qsim_eq_expect(QSimDev *d, QSimEq *eq, unsigned type, uint32_t object)
{
    struct rsim_eqe e;

    g_assert_true(qsim_eq_poll(d, eq, &e, QSIM_POLL_US));
    g_assert_cmphex(qsim_eqe_type(&e), ==, type);
    g_assert_cmpuint(le32_to_cpu(e.object), ==, object);
    g_assert_cmphex(le64_to_cpu(e.data), ==, 0);
}

void qsim_eq_expect_none(QSimDev *d, QSimEq *eq)
{
    struct rsim_eqe e;

    qsim_settle(d);
    if (qsim_eq_poll(d, eq, &e, 0)) {
        fprintf(stderr, "unexpected event type 0x%x object %u in EQ %u\n",
                qsim_eqe_type(&e), le32_to_cpu(e.object), eq->eqn);
        g_assert_cmphex(qsim_eqe_type(&e), ==, 0);
    }
}

void qsim_cq_cmd(struct rsim_cmd_create_cq *c, uint32_t eqn,
                 const QSimRing *r)
{
    QSIM_CMD_INIT(*c, RSIM_CMD_CREATE_CQ);
    c->eqn = cpu_to_le32(eqn);
    c->q = r->desc;
}

uint32_t qsim_cq_create(QSimDev *d, QSimRing *r, uint32_t eqn,
                        unsigned level, unsigned log2_depth)
{
    struct rsim_cmd_create_cq c;

    qsim_ring_init(d, r, level, log2_depth, RSIM_CQE_LOG2_SLOT);
    qsim_cq_cmd(&c, eqn, r);
    return qsim_create(d, &c, NULL);
}

void qsim_cq_arm_db(QSimDev *d, unsigned page, uint32_t cqn, unsigned arm)
{
    uint32_t v = 0;

    v = FIELD_DP32(v, RSIM_DB_CQ, CQN, cqn);
    v = FIELD_DP32(v, RSIM_DB_CQ, ARM, arm);
    qsim_db(d, page, A_RSIM_DB_CQ, v);
}

void qsim_srq_cmd(struct rsim_cmd_create_srq *c, uint32_t pdn,
                  const QSimRing *r, uint8_t max_sge, uint32_t limit)
{
    QSIM_CMD_INIT(*c, RSIM_CMD_CREATE_SRQ);
    c->pdn = cpu_to_le32(pdn);
    c->q = r->desc;
    c->max_sge = max_sge;
    c->limit = cpu_to_le32(limit);
}

void qsim_ethq_cmd(struct rsim_cmd_create_ethq *c, uint8_t kind,
                   uint32_t eqn, uint64_t addr, uint32_t depth)
{
    QSIM_CMD_INIT(*c, RSIM_CMD_CREATE_ETHQ);
    c->kind = kind;
    c->eqn = cpu_to_le32(eqn);
    c->addr = cpu_to_le64(addr);
    c->depth = cpu_to_le32(depth);
}

/* ---- GIDs and address vectors ---- */

void qsim_gid_v4(uint8_t *gid, uint8_t a, uint8_t b, uint8_t c, uint8_t e)
{
    memset(gid, 0, 16);
    gid[10] = gid[11] = 0xff;
    gid[12] = a;
    gid[13] = b;
    gid[14] = c;
    gid[15] = e;
}

void qsim_gid_v6(uint8_t *gid, uint8_t x)
{
    memset(gid, 0, 16);
    gid[0] = 0xfe;
    gid[1] = 0x80;
    gid[15] = x;
}

void qsim_gid_cmd(struct rsim_cmd_gid *c, uint8_t op, uint32_t index,
                  const uint8_t *gid)
{
    QSIM_CMD_INIT(*c, op);
    c->index = cpu_to_le32(index);
    if (gid) {
        memcpy(c->gid, gid, 16);
        c->type = RSIM_GID_TYPE_ROCE_V2;
    }
}

void qsim_gid_add(QSimDev *d, uint32_t index, const uint8_t *gid)
{
    struct rsim_cmd_gid c;

    qsim_gid_cmd(&c, RSIM_CMD_ADD_GID, index, gid);
    qsim_cmd_expect(d, &c, RSIM_STS_OK);
}

void qsim_gid_add_v4(QSimDev *d, uint32_t index, uint8_t last)
{
    uint8_t gid[16];

    qsim_gid_v4(gid, 10, 0, 0, last);
    qsim_gid_add(d, index, gid);
}

void qsim_av_v4(struct rsim_av *av, uint8_t sgid_index)
{
    static const uint8_t dmac[6] = { 0x52, 0x54, 0x00, 0xab, 0xcd, 0xef };

    memset(av, 0, sizeof(*av));
    qsim_gid_v4(av->dgid, 10, 0, 0, 2);
    memcpy(av->dmac, dmac, sizeof(dmac));
    av->sgid_index = sgid_index;
    av->hop_limit = 64;
    av->network_type = RSIM_NET_IPV4;
}

void qsim_ah_cmd(struct rsim_cmd_create_ah *c, uint32_t pdn)
{
    QSIM_CMD_INIT(*c, RSIM_CMD_CREATE_AH);
    c->pdn = cpu_to_le32(pdn);
    qsim_av_v4(&c->av, 0);
}

/* ---- QPs ---- */

void qsim_qp_rings(QSimDev *d, QSimQp *qp, unsigned level)
{
    qsim_ring_init(d, &qp->sq, level, 3, 8);
    qsim_ring_init(d, &qp->rq, level, 3, 6);
}

void qsim_qp_cmd(struct rsim_cmd_create_qp *c, uint8_t type, uint32_t pdn,
                 uint32_t scqn, uint32_t rcqn, const QSimQp *qp)
{
    QSIM_CMD_INIT(*c, RSIM_CMD_CREATE_QP);
    c->qp_type = type;
    c->max_send_sge = 1;
    c->max_recv_sge = 1;
    c->pdn = cpu_to_le32(pdn);
    c->send_cqn = cpu_to_le32(scqn);
    c->recv_cqn = cpu_to_le32(rcqn);
    c->srqn = cpu_to_le32(RSIM_NO_SRQ);
    c->sq = qp->sq.desc;
    c->rq = qp->rq.desc;
}

uint32_t qsim_qp_create(QSimDev *d, QSimQp *qp, uint8_t type, uint32_t pdn,
                        uint32_t cqn, unsigned level)
{
    struct rsim_cmd_create_qp c;

    qsim_qp_rings(d, qp, level);
    qsim_qp_cmd(&c, type, pdn, cqn, cqn, qp);
    qp->qpn = qsim_create(d, &c, NULL);
    return qp->qpn;
}

unsigned qsim_qp_modify(QSimDev *d, uint32_t qpn,
                        const struct rsim_qp_attr *a)
{
    struct rsim_cmd_qp_attr c;

    qtest_memwrite(d->qts, d->scratch, a, sizeof(*a));
    QSIM_CMD_INIT(c, RSIM_CMD_MODIFY_QP);
    c.qpn = cpu_to_le32(qpn);
    c.addr = cpu_to_le64(d->scratch);
    return qsim_cmd_exec(d, &c, NULL);
}

void qsim_qp_query(QSimDev *d, uint32_t qpn, struct rsim_qp_attr *a)
{
    struct rsim_cmd_qp_attr c;

    /* a pattern, so that we see that the device writes the whole block */
    qsim_memset(d, d->scratch, 0xa5, sizeof(*a));
    QSIM_CMD_INIT(c, RSIM_CMD_QUERY_QP);
    c.qpn = cpu_to_le32(qpn);
    c.addr = cpu_to_le64(d->scratch);
    qsim_assert_sts(qsim_cmd_exec(d, &c, NULL), RSIM_STS_OK);
    qtest_memread(d->qts, d->scratch, a, sizeof(*a));
    g_assert_cmphex(le32_to_cpu(a->reserved0), ==, 0);
    for (size_t i = 0; i < sizeof(a->reserved1); i++) {
        g_assert_cmphex(a->reserved1[i], ==, 0);
    }
}

unsigned qsim_qp_state(QSimDev *d, uint32_t qpn)
{
    struct rsim_qp_attr a;

    qsim_qp_query(d, qpn, &a);
    g_assert_cmpuint(a.cur_qp_state, ==, a.qp_state);
    return a.qp_state;
}

void qsim_attr_init(struct rsim_qp_attr *a, uint8_t state, uint32_t mask)
{
    memset(a, 0, sizeof(*a));
    a->attr_mask = cpu_to_le32(mask | RSIM_QP_STATE);
    a->qp_state = state;
}

void qsim_attr_set_mask(struct rsim_qp_attr *a, uint32_t mask)
{
    a->attr_mask = cpu_to_le32(mask);
}

uint32_t qsim_attr_mask(const struct rsim_qp_attr *a)
{
    return le32_to_cpu(a->attr_mask);
}

void qsim_qp_modify_ok(QSimDev *d, uint32_t qpn,
                       const struct rsim_qp_attr *a)
{
    unsigned want = (qsim_attr_mask(a) & RSIM_QP_STATE) ?
                    a->qp_state : qsim_qp_state(d, qpn);

    qsim_assert_sts(qsim_qp_modify(d, qpn, a), RSIM_STS_OK);
    g_assert_cmpuint(qsim_qp_state(d, qpn), ==, want);
}

void qsim_qp_move(QSimDev *d, uint32_t qpn, uint8_t state)
{
    struct rsim_qp_attr a;

    qsim_attr_init(&a, state, 0);
    qsim_qp_modify_ok(d, qpn, &a);
}

void qsim_attr_rc_init(struct rsim_qp_attr *a)
{
    qsim_attr_init(a, RSIM_QPS_INIT, RSIM_QP_PKEY_INDEX | RSIM_QP_PORT |
                   RSIM_QP_ACCESS_FLAGS);
    a->port_num = 1;
    a->qp_access_flags = cpu_to_le32(QSIM_ACC_ALL);
}

void qsim_attr_rc_rtr(struct rsim_qp_attr *a)
{
    qsim_attr_init(a, RSIM_QPS_RTR, RSIM_QP_AV | RSIM_QP_PATH_MTU |
                   RSIM_QP_DEST_QPN | RSIM_QP_RQ_PSN |
                   RSIM_QP_MAX_DEST_RD_ATOMIC | RSIM_QP_MIN_RNR_TIMER);
    qsim_av_v4(&a->av, 0);
    a->path_mtu = RSIM_MTU_1024;
    a->dest_qp_num = cpu_to_le32(0xabcde);
    a->rq_psn = cpu_to_le32(0x123456);
    a->max_dest_rd_atomic = 7;
    a->min_rnr_timer = 12;
}

void qsim_attr_rc_rts(struct rsim_qp_attr *a)
{
    qsim_attr_init(a, RSIM_QPS_RTS, RSIM_QP_TIMEOUT | RSIM_QP_RETRY_CNT |
                   RSIM_QP_RNR_RETRY | RSIM_QP_SQ_PSN |
                   RSIM_QP_MAX_QP_RD_ATOMIC);
    a->timeout = 14;
    a->retry_cnt = 6;
    a->rnr_retry = 7;
    a->sq_psn = cpu_to_le32(0x654321);
    a->max_rd_atomic = 5;
}

void qsim_qp_rc_to_init(QSimDev *d, uint32_t qpn)
{
    struct rsim_qp_attr a;

    qsim_attr_rc_init(&a);
    qsim_qp_modify_ok(d, qpn, &a);
}

void qsim_qp_rc_to_rts(QSimDev *d, uint32_t qpn)
{
    struct rsim_qp_attr a;

    qsim_qp_rc_to_init(d, qpn);
    qsim_attr_rc_rtr(&a);
    qsim_qp_modify_ok(d, qpn, &a);
    qsim_attr_rc_rts(&a);
    qsim_qp_modify_ok(d, qpn, &a);
}

void qsim_sq_doorbell(QSimDev *d, unsigned page, uint32_t qpn)
{
    qsim_db(d, page, A_RSIM_DB_SQ, qpn);
}

void qsim_env_setup(QSimDev *d, QSimEnv *env, unsigned level,
                    unsigned cq_log2_depth)
{
    memset(env, 0, sizeof(*env));
    env->pdn = qsim_pd_alloc(d);
    qsim_eq_create(d, &env->eq, 1, 16);
    env->cqn = qsim_cq_create(d, &env->cq, env->eq.eqn, level,
                              cq_log2_depth);
    qsim_qp_create(d, &env->qp, RSIM_QPT_RC, env->pdn, env->cqn, level);
    qsim_qp_rc_to_init(d, env->qp.qpn);
}

void qsim_flush_sends(QSimDev *d, QSimEnv *env, unsigned n,
                      uint64_t first_id)
{
    for (unsigned i = 0; i < n; i++) {
        qsim_post_empty(d, &env->qp.sq, first_id + i, RSIM_WR_SEND);
    }
    if (qsim_qp_state(d, env->qp.qpn) != RSIM_QPS_ERR) {
        qsim_qp_move(d, env->qp.qpn, RSIM_QPS_ERR);
    } else {
        qsim_sq_doorbell(d, 0, env->qp.qpn);
    }
}

/* ---- Memory registration ---- */

void qsim_mr_cmd(struct rsim_cmd_reg_mr *c, uint32_t pdn, uint32_t access,
                 uint64_t iova, uint64_t length, unsigned level,
                 uint64_t pbl, uint32_t npages, unsigned page_shift,
                 uint32_t fbo)
{
    QSIM_CMD_INIT(*c, RSIM_CMD_REG_MR);
    c->pdn = cpu_to_le32(pdn);
    c->access = cpu_to_le32(access);
    c->iova = cpu_to_le64(iova);
    c->length = cpu_to_le64(length);
    c->pbl_addr = cpu_to_le64(pbl);
    c->npages = cpu_to_le32(npages);
    c->level = level;
    c->page_shift = page_shift;
    c->fbo = cpu_to_le32(fbo);
}

uint32_t qsim_mr_reg_l0(QSimDev *d, uint32_t pdn, uint32_t access,
                        uint64_t addr, uint64_t length)
{
    struct rsim_cmd_reg_mr c;

    qsim_mr_cmd(&c, pdn, access, addr, length, RSIM_PBL_LEVEL0, addr, 0, 0,
                0);
    return qsim_create(d, &c, NULL);
}

unsigned qsim_mr_translate(QSimDev *d, uint32_t key, uint32_t pdn,
                           uint32_t access, uint64_t iova, uint64_t len,
                           struct rsim_mr_translate_resp *r)
{
    struct rsim_cmd_mr_translate c;
    struct rsim_mr_translate_resp tmp;

    QSIM_CMD_INIT(c, RSIM_CMD_MR_TRANSLATE);
    c.key = cpu_to_le32(key);
    c.pdn = cpu_to_le32(pdn);
    c.access = cpu_to_le32(access);
    c.iova = cpu_to_le64(iova);
    c.length = cpu_to_le64(len);
    return qsim_cmd_exec(d, &c, r ? r : &tmp);
}

void qsim_xlate_fail(QSimDev *d, uint32_t key, uint32_t pdn,
                     uint32_t access, uint64_t iova, uint64_t len,
                     unsigned want)
{
    qsim_assert_sts(qsim_mr_translate(d, key, pdn, access, iova, len, NULL),
                    want);
    qsim_assert_alive(d);
}

QSimMr qsim_mr_alloc(QSimDev *d, uint32_t pdn, uint64_t len,
                     uint32_t access)
{
    struct rsim_cmd_reg_mr c;
    QSimMr mr = { .len = len };

    mr.addr = qsim_alloc(d, len);
    qsim_mr_cmd(&c, pdn, access, mr.addr, len, RSIM_PBL_LEVEL0, mr.addr, 0,
                0, 0);
    mr.lkey = qsim_create(d, &c, &mr.rkey);
    return mr;
}

struct rsim_sge qsim_sge(const QSimMr *mr, uint64_t off, uint32_t len)
{
    struct rsim_sge s = {
        .addr = cpu_to_le64(mr->addr + off),
        .length = cpu_to_le32(len),
        .lkey = cpu_to_le32(mr->lkey),
    };

    return s;
}

/* ---- QPs that move data ---- */

void qsim_endpoint_create(QSimDev *d, QSimEndpoint *ep, uint8_t type,
                          uint32_t pdn, uint32_t eqn)
{
    struct rsim_cmd_create_qp c;

    memset(ep, 0, sizeof(*ep));
    ep->scqn = qsim_cq_create(d, &ep->scq, eqn, RSIM_PBL_LEVEL0, 6);
    ep->rcqn = qsim_cq_create(d, &ep->rcq, eqn, RSIM_PBL_LEVEL0, 6);
    qsim_ring_init(d, &ep->qp.sq, RSIM_PBL_LEVEL0, 6, 10);
    qsim_ring_init(d, &ep->qp.rq, RSIM_PBL_LEVEL0, 6, 8);
    qsim_qp_cmd(&c, type, pdn, ep->scqn, ep->rcqn, &ep->qp);
    c.max_send_sge = 4;
    c.max_recv_sge = 4;
    c.max_inline = cpu_to_le16(256);
    ep->qp.qpn = qsim_create(d, &c, NULL);
}

void qsim_qp_connect(QSimDev *d, uint32_t qpn, const QSimPath *path)
{
    struct rsim_qp_attr a;

    qsim_attr_rc_init(&a);
    a.qp_access_flags = cpu_to_le32(path->access);
    qsim_qp_modify_ok(d, qpn, &a);
    if (path->state == RSIM_QPS_INIT) {
        return;
    }

    qsim_attr_rc_rtr(&a);
    if (path->type == RSIM_QPT_UC) {
        qsim_attr_set_mask(&a, qsim_attr_mask(&a) &
                           ~(RSIM_QP_MAX_DEST_RD_ATOMIC |
                             RSIM_QP_MIN_RNR_TIMER));
    }
    a.av = path->av;
    a.path_mtu = path->path_mtu;
    a.dest_qp_num = cpu_to_le32(path->dest_qpn);
    a.rq_psn = cpu_to_le32(path->rq_psn);
    a.max_dest_rd_atomic = path->rd_atomic;
    a.min_rnr_timer = path->min_rnr_timer;
    qsim_qp_modify_ok(d, qpn, &a);
    if (path->state == RSIM_QPS_RTR) {
        return;
    }

    qsim_attr_rc_rts(&a);
    if (path->type == RSIM_QPT_UC) {
        qsim_attr_set_mask(&a, RSIM_QP_STATE | RSIM_QP_SQ_PSN);
    }
    a.timeout = path->timeout;
    a.retry_cnt = path->retry_cnt;
    a.sq_psn = cpu_to_le32(path->sq_psn);
    a.max_rd_atomic = path->rd_atomic;
    qsim_qp_modify_ok(d, qpn, &a);
}

void qsim_qp_ud_ready(QSimDev *d, uint32_t qpn, uint32_t qkey)
{
    struct rsim_qp_attr a;

    /* the GSI QP is the port's: no port number */
    qsim_attr_init(&a, RSIM_QPS_INIT, RSIM_QP_PKEY_INDEX | RSIM_QP_QKEY |
                   (qpn == RSIM_GSI_QPN ? 0 : RSIM_QP_PORT));
    a.port_num = qpn == RSIM_GSI_QPN ? 0 : 1;
    a.qkey = cpu_to_le32(qkey);
    qsim_qp_modify_ok(d, qpn, &a);
    qsim_qp_move(d, qpn, RSIM_QPS_RTR);
    qsim_attr_init(&a, RSIM_QPS_RTS, RSIM_QP_SQ_PSN);
    a.sq_psn = cpu_to_le32(100);
    qsim_qp_modify_ok(d, qpn, &a);
}

void qsim_send(QSimDev *d, const QSimQp *qp, const QSimWr *wr)
{
    qsim_post_send(d, &qp->sq, wr);
    qsim_sq_doorbell(d, 0, qp->qpn);
}

uint8_t qsim_pattern_byte(uint8_t seed, size_t i)
{
    return seed + i * 7 + (i >> 8);
}

void qsim_fill_pattern(QSimDev *d, uint64_t addr, size_t len, uint8_t seed)
{
    g_autofree uint8_t *buf = g_malloc(len);

    for (size_t i = 0; i < len; i++) {
        buf[i] = qsim_pattern_byte(seed, i);
    }
    qtest_memwrite(d->qts, addr, buf, len);
}

void qsim_check_pattern(QSimDev *d, uint64_t addr, size_t len,
                        uint8_t seed)
{
    g_autofree uint8_t *buf = g_malloc(len);

    qtest_memread(d->qts, addr, buf, len);
    for (size_t i = 0; i < len; i++) {
        if (buf[i] != qsim_pattern_byte(seed, i)) {
            g_error("byte %zu of %zu differs: 0x%02x", i, len, buf[i]);
        }
    }
}

/* ---- A pair of connected QPs ---- */

const uint8_t qsim_pair_gid_v4[16] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 7, 1,
};
const uint8_t qsim_pair_gid_v6[16] = {
    0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x42,
};

void qsim_port_mac(QSimDev *d, uint8_t *mac)
{
    struct rsim_query_port_resp port;
    struct rsim_admin_cmd c;

    QSIM_CMD_INIT(c, RSIM_CMD_QUERY_PORT);
    qsim_assert_sts(qsim_cmd_exec(d, &c, &port), RSIM_STS_OK);
    memcpy(mac, port.mac, 6);
}

char *qsim_faults(const char *props, const char *seed)
{
    return g_strdup_printf("%s,fault-seed=%s", props,
                           getenv("RSIM_QTEST_SEED") ?: seed);
}

/* qp on path towards QPN dest; the PSNs wrap soon */
static void pair_connect(QSimDev *d, uint32_t qpn, uint32_t dest,
                         QSimPath *path)
{
    path->dest_qpn = dest;
    path->rq_psn = 0xfffff0 + dest % 8;
    path->sq_psn = 0xfffff0 + qpn % 8;
    qsim_qp_connect(d, qpn, path);
}

void qsim_pair_start(QSimPair *p, const char *machine,
                     const QSimPairConf *conf)
{
    static const QSimPairConf defaults;
    const QSimPairConf *c = conf ?: &defaults;
    const uint8_t *gid = c->ipv6 ? qsim_pair_gid_v6 : qsim_pair_gid_v4;
    QSimPath path = {
        .type = c->type ?: RSIM_QPT_RC,
        .access = QSIM_ACC_ALL,
        .av.hop_limit = 64,
        .av.network_type = c->ipv6 ? RSIM_NET_IPV6 : RSIM_NET_IPV4,
        .path_mtu = c->path_mtu ?: RSIM_MTU_1024,
        .timeout = c->timeout ?: 10,
        .retry_cnt = c->retry ?: 7,
        .rd_atomic = 4,
        .min_rnr_timer = 1,
    };

    memset(p, 0, sizeof(*p));
    p->d = qsim_start_args(machine, c->props, NULL, c->args);
    qsim_bringup(p->d);
    p->pdn = qsim_pd_alloc(p->d);
    qsim_gid_add(p->d, 0, gid);
    if (c->eq_addr) {
        struct rsim_cmd_create_eq ec;

        qsim_eq_cmd(&ec, 1, c->eq_addr, QSIM_PAIR_EQ_DEPTH);
        p->eq.eqn = qsim_create(p->d, &ec, NULL);
    } else {
        qsim_eq_create(p->d, &p->eq, 1, QSIM_PAIR_EQ_DEPTH);
    }
    qsim_endpoint_create(p->d, &p->a, path.type, p->pdn, p->eq.eqn);
    qsim_endpoint_create(p->d, &p->b, path.type, p->pdn, p->eq.eqn);
    memcpy(path.av.dgid, gid, 16);
    if (c->dmac) {
        memcpy(path.av.dmac, c->dmac, sizeof(path.av.dmac));
    } else {
        qsim_port_mac(p->d, path.av.dmac);
    }
    pair_connect(p->d, p->a.qp.qpn, p->b.qp.qpn, &path);
    path.access = c->b_access ?: QSIM_ACC_ALL;
    path.rd_atomic = c->b_rd_atomic ?: path.rd_atomic;
    pair_connect(p->d, p->b.qp.qpn, p->a.qp.qpn, &path);
    p->ma = qsim_mr_alloc(p->d, p->pdn, QSIM_PAIR_BUF_SIZE, QSIM_ACC_ALL);
    p->mb = qsim_mr_alloc(p->d, p->pdn, QSIM_PAIR_BUF_SIZE, QSIM_ACC_ALL);
}
