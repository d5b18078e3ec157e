/*
 * The unit tests' driver of the device core (driver.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "driver.h"

static void wr_reg(UDev *d, uint64_t addr, uint32_t val)
{
    rdma_sim_regs_write(d->s, addr, val);
}

/* The admin queue's registers: AQ at aq, the ACQ and AEQ as allocated */
void udrv_regs(UDev *d, uint64_t aq)
{
    wr_reg(d, A_RSIM_AQ_BASE_LO, aq);
    wr_reg(d, A_RSIM_AQ_BASE_HI, aq >> 32);
    wr_reg(d, A_RSIM_AQ_DEPTH, UDRV_AQ_DEPTH);
    wr_reg(d, A_RSIM_ACQ_BASE_LO, d->acq);
    wr_reg(d, A_RSIM_ACQ_BASE_HI, d->acq >> 32);
    wr_reg(d, A_RSIM_ACQ_DEPTH, UDRV_AQ_DEPTH);
    wr_reg(d, A_RSIM_AEQ_BASE_LO, d->aeq);
    wr_reg(d, A_RSIM_AEQ_BASE_HI, d->aeq >> 32);
    wr_reg(d, A_RSIM_AEQ_DEPTH, UDRV_AEQ_DEPTH);
}

uint64_t udrv_alloc(UDev *d, uint64_t size)
{
    uint64_t addr = d->next;

    d->next = ROUND_UP(d->next + size, 4096);
    g_assert_cmphex(d->next - UNIT_MEM_BASE, <=, unit_host(d->s)->mem_size);
    return addr;
}

void udrv_start(UDev *d, uint8_t addr, uint64_t mem_size)
{
    memset(d, 0, sizeof(*d));
    d->s = unit_core_new(mem_size, addr);
    d->addr = addr;
    d->next = UNIT_MEM_BASE;
    d->id = 0x100;
    d->aq = udrv_alloc(d, UDRV_AQ_DEPTH * RSIM_AQ_ENTRY_SIZE);
    d->acq = udrv_alloc(d, UDRV_AQ_DEPTH * RSIM_ACQ_ENTRY_SIZE);
    d->aeq = udrv_alloc(d, UDRV_AEQ_DEPTH * RSIM_EQ_ENTRY_SIZE);
    udrv_regs(d, d->aq);
    wr_reg(d, A_RSIM_INTR_MASK, 0);
    wr_reg(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
    g_assert_cmphex(rdma_sim_regs_read(d->s, A_RSIM_DEV_STATUS), ==,
                    R_RSIM_DEV_STATUS_READY_MASK);
}

void udrv_stop(UDev *d)
{
    unit_core_free(d->s);
}

unsigned udrv_event(UDev *d, uint32_t *object)
{
    const struct rsim_eqe *e =
        unit_mem(d->s, d->aeq + RSIM_EQ_ENTRY_SIZE *
                 (d->aeq_head % UDRV_AEQ_DEPTH), RSIM_EQ_ENTRY_SIZE);
    uint32_t dw0 = le32_to_cpu(e->dw0);

    g_assert_cmpuint(FIELD_EX32(dw0, RSIM_EQE_HDR, PHASE), ==,
                     !((d->aeq_head / UDRV_AEQ_DEPTH) & 1));
    *object = le32_to_cpu(e->object);
    d->aeq_head++;
    wr_reg(d, A_RSIM_AEQ_HEAD, d->aeq_head % UDRV_AEQ_DEPTH);
    return FIELD_EX32(dw0, RSIM_EQE_HDR, TYPE);
}

unsigned udrv_cmd(UDev *d, unsigned opcode, const void *params, size_t len,
                  struct rsim_admin_cqe *cqe)
{
    struct rsim_admin_cmd *c =
        unit_mem(d->s, d->aq + RSIM_AQ_ENTRY_SIZE * d->aq_tail,
                 RSIM_AQ_ENTRY_SIZE);
    const struct rsim_admin_cqe *done;
    uint32_t dw0;
    uint16_t id = d->id++;

    g_assert_cmpuint(len, <=, sizeof(c->data));
    memset(c, 0, sizeof(*c));
    if (len) {
        memcpy(c->data, params, len);
    }
    c->dw0 = cpu_to_le32(opcode | (uint32_t)id << R_RSIM_CMD_HDR_ID_SHIFT);
    d->aq_tail = (d->aq_tail + 1) % UDRV_AQ_DEPTH;
    wr_reg(d, A_RSIM_AQ_TAIL, d->aq_tail);
    unit_run_bhs();

    done = unit_mem(d->s, d->acq + RSIM_ACQ_ENTRY_SIZE *
                    (d->acq_head % UDRV_AQ_DEPTH), RSIM_ACQ_ENTRY_SIZE);
    dw0 = le32_to_cpu(done->dw0);
    g_assert_cmpuint(FIELD_EX32(dw0, RSIM_CQE_HDR, PHASE), ==,
                     !((d->acq_head / UDRV_AQ_DEPTH) & 1));
    g_assert_cmphex(FIELD_EX32(dw0, RSIM_CQE_HDR, ID), ==, id);
    g_assert_cmpuint(le16_to_cpu(done->sq_head), ==, d->aq_tail);
    if (cqe) {
        *cqe = *done;
    }
    d->acq_head++;
    wr_reg(d, A_RSIM_ACQ_HEAD, d->acq_head % UDRV_AQ_DEPTH);
    return FIELD_EX32(dw0, RSIM_CQE_HDR, STATUS);
}

uint32_t udrv_create(UDev *d, unsigned opcode, const void *params,
                     size_t len, uint32_t *h2)
{
    struct rsim_admin_cqe cqe;
    const struct rsim_create_resp *r = (const void *)cqe.result;

    /* params start with the command's dword 0, which udrv_cmd() fills */
    g_assert_cmpuint(udrv_cmd(d, opcode, (const uint8_t *)params + 4,
                              len - 4, &cqe), ==, RSIM_STS_OK);
    if (h2) {
        *h2 = le32_to_cpu(r->handle2);
    }
    return le32_to_cpu(r->handle);
}

/* A level-0 ring of 2^log2_depth elements of 2^log2_elem bytes */
static void udrv_ring(UDev *d, URing *r, struct rsim_queue_desc *desc,
                      unsigned log2_depth, unsigned log2_elem)
{
    uint64_t bytes = RSIM_QUEUE_DATA_OFFSET + ((uint64_t)1 << (log2_depth +
                                                               log2_elem));

    memset(r, 0, sizeof(*r));
    r->addr = udrv_alloc(d, bytes);
    r->depth = 1u << log2_depth;
    r->log2_elem = log2_elem;
    memset(desc, 0, sizeof(*desc));
    desc->addr = cpu_to_le64(r->addr);
    desc->level = RSIM_PBL_LEVEL0;
    desc->log2_elem_size = log2_elem;
    desc->log2_depth = log2_depth;
    stl_le_p(unit_mem(d->s, r->addr + RSIM_QUEUE_LOG2_ELEM_OFFSET, 4),
             log2_elem);
    stl_le_p(unit_mem(d->s, r->addr + RSIM_QUEUE_MASK_OFFSET, 4),
             r->depth - 1);
}

static void *udrv_elem(UDev *d, URing *r, uint32_t index)
{
    return unit_mem(d->s, r->addr + RSIM_QUEUE_DATA_OFFSET +
                    ((uint64_t)(index & (r->depth - 1)) << r->log2_elem),
                    1u << r->log2_elem);
}

void udrv_qp(UDev *d, UQp *qp, uint32_t len)
{
    struct rsim_cmd_handle pd = { 0 };
    struct rsim_cmd_create_eq eq = { 0 };
    struct rsim_cmd_create_cq cq = { 0 };
    struct rsim_cmd_create_qp q = { 0 };
    struct rsim_cmd_reg_mr mr = { 0 };
    struct rsim_cmd_gid gid = { 0 };
    uint32_t pdn, eqn;

    memset(qp, 0, sizeof(*qp));
    pdn = udrv_create(d, RSIM_CMD_ALLOC_PD, &pd, sizeof(pd), NULL);
    eq.vector = cpu_to_le32(1);
    eq.addr = cpu_to_le64(udrv_alloc(d, 64 * RSIM_EQ_ENTRY_SIZE));
    eq.depth = cpu_to_le32(64);
    eqn = udrv_create(d, RSIM_CMD_CREATE_EQ, &eq, sizeof(eq), NULL);
    cq.eqn = cpu_to_le32(eqn);
    udrv_ring(d, &qp->cq, &cq.q, 6, RSIM_CQE_LOG2_SLOT);
    qp->cqn = udrv_create(d, RSIM_CMD_CREATE_CQ, &cq, sizeof(cq), NULL);
    q.qp_type = RSIM_QPT_RC;
    q.max_send_sge = 1;
    q.max_recv_sge = 1;
    q.pdn = cpu_to_le32(pdn);
    q.send_cqn = q.recv_cqn = cpu_to_le32(qp->cqn);
    q.srqn = cpu_to_le32(RSIM_NO_SRQ);
    udrv_ring(d, &qp->sq, &q.sq, 5, 8);     /* 256-byte send WQEs */
    udrv_ring(d, &qp->rq, &q.rq, 5, 6);     /* 64-byte receive WQEs */
    qp->qpn = udrv_create(d, RSIM_CMD_CREATE_QP, &q, sizeof(q), NULL);

    qp->buf_len = len;
    qp->buf = udrv_alloc(d, len);
    mr.pdn = cpu_to_le32(pdn);
    mr.access = cpu_to_le32(RSIM_ACCESS_LOCAL_WRITE | RSIM_ACCESS_REMOTE);
    mr.iova = cpu_to_le64(qp->buf);
    mr.length = cpu_to_le64(len);
    mr.pbl_addr = cpu_to_le64(qp->buf);
    qp->lkey = udrv_create(d, RSIM_CMD_REG_MR, &mr, sizeof(mr), &qp->rkey);

    gid.gid[10] = gid.gid[11] = 0xff;
    gid.gid[12] = 10;
    gid.gid[15] = d->addr;
    gid.type = RSIM_GID_TYPE_ROCE_V2;
    g_assert_cmpuint(udrv_cmd(d, RSIM_CMD_ADD_GID, (uint8_t *)&gid + 4,
                              sizeof(gid) - 4, NULL), ==, RSIM_STS_OK);
}

static void udrv_modify(UDev *d, uint32_t qpn, struct rsim_qp_attr *a,
                        uint32_t mask)
{
    struct rsim_cmd_qp_attr c = { 0 };
    uint64_t addr = udrv_alloc(d, sizeof(*a));

    a->attr_mask = cpu_to_le32(mask | RSIM_QP_STATE);
    memcpy(unit_mem(d->s, addr, sizeof(*a)), a, sizeof(*a));
    c.qpn = cpu_to_le32(qpn);
    c.addr = cpu_to_le64(addr);
    g_assert_cmpuint(udrv_cmd(d, RSIM_CMD_MODIFY_QP, (uint8_t *)&c + 4,
                              sizeof(c) - 4, NULL), ==, RSIM_STS_OK);
}

/* a's QP to RTS, sending to b's */
static void udrv_connect_one(UDev *a, UQp *qa, UDev *b, UQp *qb)
{
    struct rsim_qp_attr at = { 0 };

    at.qp_state = RSIM_QPS_INIT;
    at.port_num = 1;
    at.qp_access_flags = cpu_to_le32(RSIM_ACCESS_REMOTE);
    udrv_modify(a, qa->qpn, &at, RSIM_QP_PKEY_INDEX | RSIM_QP_PORT |
                RSIM_QP_ACCESS_FLAGS);

    memset(&at, 0, sizeof(at));
    at.qp_state = RSIM_QPS_RTR;
    at.av.dgid[10] = at.av.dgid[11] = 0xff;
    at.av.dgid[12] = 10;
    at.av.dgid[15] = b->addr;
    memcpy(at.av.dmac, "\x52\x54\x00\x5e\x00", 5);
    at.av.dmac[5] = b->addr;
    at.av.hop_limit = 64;
    at.av.network_type = RSIM_NET_IPV4;
    at.path_mtu = RSIM_MTU_1024;
    at.dest_qp_num = cpu_to_le32(qb->qpn);
    at.rq_psn = cpu_to_le32(0x1000 + b->addr);
    at.max_dest_rd_atomic = 4;
    at.min_rnr_timer = 1;
    udrv_modify(a, qa->qpn, &at, RSIM_QP_AV | RSIM_QP_PATH_MTU |
                RSIM_QP_DEST_QPN | RSIM_QP_RQ_PSN |
                RSIM_QP_MAX_DEST_RD_ATOMIC | RSIM_QP_MIN_RNR_TIMER);

    memset(&at, 0, sizeof(at));
    at.qp_state = RSIM_QPS_RTS;
    at.timeout = 14;                    /* 67 ms */
    at.retry_cnt = 7;
    at.rnr_retry = 7;
    at.sq_psn = cpu_to_le32(0x1000 + a->addr);
    at.max_rd_atomic = 4;
    udrv_modify(a, qa->qpn, &at, RSIM_QP_TIMEOUT | RSIM_QP_RETRY_CNT |
                RSIM_QP_RNR_RETRY | RSIM_QP_SQ_PSN |
                RSIM_QP_MAX_QP_RD_ATOMIC);
}

void udrv_connect(UDev *a, UQp *qa, UDev *b, UQp *qb)
{
    udrv_connect_one(a, qa, b, qb);
    udrv_connect_one(b, qb, a, qa);
}

static void udrv_set_index(UDev *d, URing *r, unsigned offset)
{
    stl_le_p(unit_mem(d->s, r->addr + offset, 4), r->index & (r->depth - 1));
}

void udrv_recv(UDev *d, UQp *qp, uint64_t wr_id, uint32_t off, uint32_t len)
{
    struct rsim_recv_wqe *w = udrv_elem(d, &qp->rq, qp->rq.index);

    memset(w, 0, 1u << qp->rq.log2_elem);
    w->wr_id = cpu_to_le64(wr_id);
    w->dma.length = cpu_to_le32(len);
    w->dma.num_sge = cpu_to_le32(1);
    w->sge[0].addr = cpu_to_le64(qp->buf + off);
    w->sge[0].length = cpu_to_le32(len);
    w->sge[0].lkey = cpu_to_le32(qp->lkey);
    qp->rq.index++;
    udrv_set_index(d, &qp->rq, RSIM_QUEUE_PROD_OFFSET);
    rdma_sim_db_write(d->s, A_RSIM_DB_RQ, qp->qpn);
}

void udrv_send(UDev *d, UQp *qp, uint64_t wr_id, unsigned opcode,
               uint32_t off, uint32_t len, uint64_t raddr, uint32_t rkey)
{
    struct rsim_send_wqe *w = udrv_elem(d, &qp->sq, qp->sq.index);

    memset(w, 0, 1u << qp->sq.log2_elem);
    w->wr_id = cpu_to_le64(wr_id);
    w->opcode = cpu_to_le32(opcode);
    w->send_flags = cpu_to_le32(RSIM_SEND_SIGNALED);
    w->wr.rdma.remote_addr = cpu_to_le64(raddr);
    w->wr.rdma.rkey = cpu_to_le32(rkey);
    w->dma.length = cpu_to_le32(len);
    w->dma.num_sge = cpu_to_le32(1);
    w->sge[0].addr = cpu_to_le64(qp->buf + off);
    w->sge[0].length = cpu_to_le32(len);
    w->sge[0].lkey = cpu_to_le32(qp->lkey);
    qp->sq.index++;
    udrv_set_index(d, &qp->sq, RSIM_QUEUE_PROD_OFFSET);
    rdma_sim_db_write(d->s, A_RSIM_DB_SQ, qp->qpn);
}

bool udrv_poll(UDev *d, UQp *qp, struct rsim_cqe *cqe)
{
    uint32_t prod = ldl_le_p(unit_mem(d->s, qp->cq.addr +
                                      RSIM_QUEUE_PROD_OFFSET, 4));

    if ((qp->cq.index & (qp->cq.depth - 1)) == prod) {
        return false;
    }
    memcpy(cqe, udrv_elem(d, &qp->cq, qp->cq.index), sizeof(*cqe));
    qp->cq.index++;
    udrv_set_index(d, &qp->cq, RSIM_QUEUE_CONS_OFFSET);
    return true;
}

/*
 * Carry from's frames to to, through its port as a network backend hands
 * them over: each must pass the MAC filter and go to the engine; true if
 * there were any
 */
static bool udrv_carry(UDev *from, UDev *to, unsigned drop_every,
                       unsigned *n)
{
    GPtrArray *sent = unit_host(from->s)->sent;
    g_autoptr(GPtrArray) frames = g_ptr_array_new_with_free_func(
        (GDestroyNotify)g_byte_array_unref);
    bool any = sent->len;

    /* the receiver may send at once: take the batch first */
    while (sent->len) {
        g_ptr_array_add(frames, g_ptr_array_steal_index(sent, 0));
    }
    for (unsigned i = 0; i < frames->len; i++) {
        GByteArray *f = g_ptr_array_index(frames, i);

        if (!drop_every || ++from->sent % drop_every) {
            uint64_t roce = to->s->stats[RSIM_STAT_RX_FRAMES] -
                            to->s->stats[RSIM_STAT_RX_DROP_OWN] -
                            to->s->stats[RSIM_STAT_RX_DROP_FILTER] -
                            to->s->stats[RSIM_STAT_RX_ETH_NO_BUF];

            rdma_sim_port_receive(to->s, f->data, f->len);
            g_assert_cmpuint(to->s->stats[RSIM_STAT_RX_FRAMES] -
                             to->s->stats[RSIM_STAT_RX_DROP_OWN] -
                             to->s->stats[RSIM_STAT_RX_DROP_FILTER] -
                             to->s->stats[RSIM_STAT_RX_ETH_NO_BUF], ==,
                             roce + 1);
            ++*n;
        }
    }
    return any;
}

unsigned udrv_pump(UDev *a, UDev *b, unsigned drop_every)
{
    unsigned n = 0, rounds = 0;

    for (;;) {
        bool moved;

        unit_run_bhs();
        moved = udrv_carry(a, b, drop_every, &n);
        unit_run_bhs();
        moved = udrv_carry(b, a, drop_every, &n) || moved;
        if (!moved) {
            return n;
        }
        g_assert_cmpuint(++rounds, <, 100000);
    }
}
