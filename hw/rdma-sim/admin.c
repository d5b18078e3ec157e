/*
 * rdma-sim: admin queue and admin commands
 *
 * Doorbells (AQ_TAIL, ACQ_HEAD) only schedule rdma_sim_admin_bh, which executes
 * commands in order and writes one completion per command (datasheet
 * section 5).  Each command is one function taking the 64-byte command and
 * returning a status; a refused command changes nothing.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "platform.h"
#include "device.h"
#include "transport.h"
#include "trace.h"

typedef struct RdmaSimCmd {
    struct rsim_admin_cmd cmd;  /* device-private copy of the command */
    uint8_t result[56];
    const char *why;            /* reason of a refusal, for the log */
} RdmaSimCmd;

/* Reinterpret the copy of the command as a command-specific layout. */
#define CMD(c, type) ((const type *)&(c)->cmd)
#define RESULT(c, type) ((type *)(c)->result)

QEMU_BUILD_BUG_ON(sizeof(struct rsim_create_resp) != 56);

/* Refuse the command with status; why goes to the log. */
static enum rsim_status refuse(RdmaSimCmd *c, enum rsim_status status,
                               const char *why)
{
    c->why = why;
    return status;
}

/* Is a reserved field of the command not zero?  (Then it is refused.) */
static bool rdma_sim_reserved_set(RdmaSimCmd *c, const void *field, size_t n)
{
    if (buffer_is_zero(field, n)) {
        return false;
    }
    c->why = "reserved field not 0";
    return true;
}
#define RESERVED_SET(c, field) rdma_sim_reserved_set(c, &(field), sizeof(field))

static void rdma_sim_set_handle(RdmaSimCmd *c, uint32_t handle,
                                uint32_t handle2)
{
    struct rsim_create_resp *r = RESULT(c, struct rsim_create_resp);

    r->handle = cpu_to_le32(handle);
    r->handle2 = cpu_to_le32(handle2);
}

static uint32_t rdma_sim_cmd_handle(RdmaSimCmd *c)
{
    return le32_to_cpu(CMD(c, struct rsim_cmd_handle)->handle);
}

static enum rsim_status rdma_sim_check_handle_cmd(RdmaSimCmd *c)
{
    if (RESERVED_SET(c, CMD(c, struct rsim_cmd_handle)->reserved)) {
        return RSIM_STS_RESERVED;
    }
    return RSIM_STS_OK;
}

/*
 * What every destroy checks: reserved fields, that the object exists and
 * that nothing uses it any more.
 */
static enum rsim_status rdma_sim_check_destroy(RdmaSimCmd *c, bool exists,
                                               uint32_t refs,
                                               const char *missing,
                                               const char *in_use)
{
    if (rdma_sim_check_handle_cmd(c)) {
        return RSIM_STS_RESERVED;
    }
    if (!exists) {
        return refuse(c, RSIM_STS_BAD_HANDLE, missing);
    }
    if (refs) {
        return refuse(c, RSIM_STS_BUSY, in_use);
    }
    return RSIM_STS_OK;
}

/*
 * Device and port
 */

static enum rsim_status rdma_sim_cmd_nop(RdmaSimState *s, RdmaSimCmd *c)
{
    if (RESERVED_SET(c, c->cmd.data)) {
        return RSIM_STS_RESERVED;
    }
    return RSIM_STS_OK;
}

/* Node GUID: the port MAC as an EUI-64 (0xfffe inserted, U/L flipped). */
static uint64_t rdma_sim_node_guid(RdmaSimState *s)
{
    const uint8_t *m = s->perm_mac;

    return (uint64_t)(m[0] ^ 2) << 56 | (uint64_t)m[1] << 48 |
           (uint64_t)m[2] << 40 | 0xfffeull << 24 | (uint64_t)m[3] << 16 |
           (uint64_t)m[4] << 8 | m[5];
}

static enum rsim_status rdma_sim_cmd_query_device(RdmaSimState *s,
                                                  RdmaSimCmd *c)
{
    struct rsim_query_device_resp *r =
        RESULT(c, struct rsim_query_device_resp);

    if (RESERVED_SET(c, c->cmd.data)) {
        return RSIM_STS_RESERVED;
    }
    r->node_guid = cpu_to_le64(rdma_sim_node_guid(s));
    r->sys_image_guid = r->node_guid;
    r->fw_ver = cpu_to_le64((uint64_t)RSIM_VERSION_MAJOR << 32 |
                            RSIM_VERSION_MINOR << 16);
    r->vendor_id = cpu_to_le32(RSIM_PCI_VENDOR_ID);
    r->vendor_part_id = cpu_to_le32(RSIM_PCI_DEVICE_ID);
    r->hw_ver = cpu_to_le32(RSIM_PCI_REVISION);
    return RSIM_STS_OK;
}

static enum rsim_status rdma_sim_cmd_query_port(RdmaSimState *s, RdmaSimCmd *c)
{
    struct rsim_query_port_resp *r = RESULT(c, struct rsim_query_port_resp);

    if (RESERVED_SET(c, c->cmd.data)) {
        return RSIM_STS_RESERVED;
    }
    r->state = s->port_active ? RSIM_PORT_ACTIVE : RSIM_PORT_DOWN;
    r->phys_state = s->port_active ? 5 : 3;
    r->max_mtu = RSIM_MTU_4096;
    r->active_mtu = rdma_sim_active_mtu(s->eth_mtu);
    r->eth_mtu = cpu_to_le32(s->eth_mtu);
    memcpy(r->mac, s->mac, sizeof(r->mac));
    r->active_speed = 32;       /* IB_SPEED_EDR: 25 Gb/s per lane */
    r->active_width = 1;        /* IB_WIDTH_1X */
    r->gid_tbl_len = cpu_to_le32(s->props.max_gid);
    return RSIM_STS_OK;
}

static enum rsim_status rdma_sim_cmd_set_port(RdmaSimState *s, RdmaSimCmd *c)
{
    const struct rsim_cmd_set_port *p = CMD(c, struct rsim_cmd_set_port);
    uint32_t mask = le32_to_cpu(p->mask);
    uint32_t mtu = le32_to_cpu(p->eth_mtu);
    static const uint8_t zero_mac[6];

    if (RESERVED_SET(c, p->reserved)) {
        return RSIM_STS_RESERVED;
    }
    if (mask & ~(RSIM_SET_PORT_MTU | RSIM_SET_PORT_MAC)) {
        return refuse(c, RSIM_STS_INVALID, "unknown SET_PORT mask bits");
    }
    if ((mask & RSIM_SET_PORT_MTU) &&
        (mtu < RSIM_MIN_ETH_MTU || mtu > RSIM_MAX_ETH_MTU)) {
        return refuse(c, RSIM_STS_INVALID, "MTU outside 68..9000");
    }
    if ((mask & RSIM_SET_PORT_MAC) &&
        ((p->mac[0] & 1) || !memcmp(p->mac, zero_mac, sizeof(zero_mac)))) {
        return refuse(c, RSIM_STS_INVALID, "MAC is multicast or zero");
    }
    if (mask & RSIM_SET_PORT_MTU) {
        s->eth_mtu = mtu;
    }
    if (mask & RSIM_SET_PORT_MAC) {
        memcpy(s->mac, p->mac, sizeof(s->mac));
    }
    trace_rdma_sim_port_set(s->eth_mtu, s->mac[0], s->mac[1], s->mac[2],
                            s->mac[3], s->mac[4], s->mac[5]);
    return RSIM_STS_OK;
}

static enum rsim_status rdma_sim_cmd_query_stats(RdmaSimState *s, RdmaSimCmd *c)
{
    const struct rsim_cmd_query_stats *p =
        CMD(c, struct rsim_cmd_query_stats);
    uint64_t addr = le64_to_cpu(p->addr);
    uint32_t count = MIN(le32_to_cpu(p->len) / 8, RSIM_STAT_COUNT);
    uint64_t buf[RSIM_STAT_COUNT];

    if (RESERVED_SET(c, p->reserved) || RESERVED_SET(c, p->reserved0)) {
        return RSIM_STS_RESERVED;
    }
    if (addr & 7) {
        return refuse(c, RSIM_STS_INVALID, "stats buffer not 8-byte aligned");
    }
    for (uint32_t i = 0; i < count; i++) {
        buf[i] = cpu_to_le64(s->stats[i]);
    }
    if (count && rdma_sim_dma_write(s, addr, buf, count * 8) != MEMTX_OK) {
        return refuse(c, RSIM_STS_DMA, "stats buffer not writable");
    }
    RESULT(c, struct rsim_query_stats_resp)->count = cpu_to_le32(count);
    return RSIM_STS_OK;
}

/*
 * Event queues and Ethernet rings
 */

static enum rsim_status rdma_sim_cmd_create_eq(RdmaSimState *s, RdmaSimCmd *c)
{
    const struct rsim_cmd_create_eq *p = CMD(c, struct rsim_cmd_create_eq);
    uint32_t vector = le32_to_cpu(p->vector);
    uint32_t depth = le32_to_cpu(p->depth);
    uint64_t addr = le64_to_cpu(p->addr);
    uint32_t eqn;
    RdmaSimEq *eq;

    if (RESERVED_SET(c, p->reserved)) {
        return RSIM_STS_RESERVED;
    }
    if (vector < 1 || vector >= s->props.msix_vectors) {
        return refuse(c, RSIM_STS_INVALID, "EQ vector must be 1..vectors-1");
    }
    if (!addr || !QEMU_IS_ALIGNED(addr, RSIM_QUEUE_ALIGN)) {
        return refuse(c, RSIM_STS_INVALID,
                      "EQ ring zero or not 64-byte aligned");
    }
    if (!is_power_of_2(depth) || depth < 2) {
        return refuse(c, RSIM_STS_INVALID,
                      "EQ depth not a power of two >= 2");
    }
    if (depth > RDMA_SIM_MAX_EQ_DEPTH) {
        return refuse(c, RSIM_STS_LIMIT, "EQ depth above CAP_MAX_EQE");
    }
    for (eqn = 0; eqn < rdma_sim_num_eqs(s) && s->eqs[eqn].valid; eqn++) {
        continue;
    }
    if (eqn == rdma_sim_num_eqs(s)) {
        return refuse(c, RSIM_STS_NO_RESOURCES, "all EQs in use");
    }
    eq = &s->eqs[eqn];
    rdma_sim_eq_reset(s, eq);
    eq->valid = true;
    eq->vector = vector;
    eq->addr = addr;
    eq->depth = depth;
    eq->phase = true;
    rdma_sim_set_handle(c, eqn, 0);
    return RSIM_STS_OK;
}

static enum rsim_status rdma_sim_cmd_destroy_eq(RdmaSimState *s, RdmaSimCmd *c)
{
    RdmaSimEq *eq = rdma_sim_eq_lookup(s, rdma_sim_cmd_handle(c));
    enum rsim_status st;

    st = rdma_sim_check_destroy(c, eq, eq ? eq->refs : 0, "no such EQ",
                                "CQs or Ethernet rings use the EQ");
    if (st != RSIM_STS_OK) {
        return st;
    }
    rdma_sim_eq_reset(s, eq);
    return RSIM_STS_OK;
}

static enum rsim_status rdma_sim_cmd_create_ethq(RdmaSimState *s, RdmaSimCmd *c)
{
    const struct rsim_cmd_create_ethq *p =
        CMD(c, struct rsim_cmd_create_ethq);
    uint32_t depth = le32_to_cpu(p->depth);
    uint64_t addr = le64_to_cpu(p->addr);
    RdmaSimEq *eq = rdma_sim_eq_lookup(s, le32_to_cpu(p->eqn));
    RdmaSimEthq *q;

    if (RESERVED_SET(c, p->reserved) || RESERVED_SET(c, p->reserved0) ||
        RESERVED_SET(c, p->reserved1)) {
        return RSIM_STS_RESERVED;
    }
    if (p->kind > RSIM_ETHQ_RX) {
        return refuse(c, RSIM_STS_INVALID, "Ethernet ring kind not TX or RX");
    }
    if (!eq) {
        return refuse(c, RSIM_STS_BAD_HANDLE, "no such EQ");
    }
    if (!addr || (addr & 15) || !is_power_of_2(depth) || depth < 2) {
        return refuse(c, RSIM_STS_INVALID,
                      "ring zero, misaligned or depth not a power of two");
    }
    if (depth > RDMA_SIM_MAX_ETH_DEPTH) {
        return refuse(c, RSIM_STS_LIMIT, "depth above CAP_MAX_ETH_DEPTH");
    }
    q = &s->ethq[p->kind];
    if (q->valid) {
        return refuse(c, RSIM_STS_EXISTS, "the port already has this ring");
    }
    memset(q, 0, sizeof(*q));
    q->valid = true;
    q->eqn = eq - s->eqs;
    q->addr = addr;
    q->depth = depth;
    eq->refs++;
    if (p->kind == RSIM_ETHQ_RX) {
        rdma_sim_net_rx_ready(s);
    }
    return RSIM_STS_OK;
}

static enum rsim_status rdma_sim_cmd_destroy_ethq(RdmaSimState *s,
                                                  RdmaSimCmd *c)
{
    uint32_t kind = rdma_sim_cmd_handle(c);
    RdmaSimEthq *q;

    if (rdma_sim_check_handle_cmd(c)) {
        return RSIM_STS_RESERVED;
    }
    if (kind > RSIM_ETHQ_RX || !s->ethq[kind].valid) {
        return refuse(c, RSIM_STS_BAD_HANDLE, "no such Ethernet ring");
    }
    q = &s->ethq[kind];
    s->eqs[q->eqn].refs--;
    s->eqs[q->eqn].eth_waiting[kind] = false;
    memset(q, 0, sizeof(*q));
    return RSIM_STS_OK;
}

/*
 * Protection domains
 */

static enum rsim_status rdma_sim_cmd_alloc_pd(RdmaSimState *s, RdmaSimCmd *c)
{
    uint32_t pdn;

    if (RESERVED_SET(c, c->cmd.data)) {
        return RSIM_STS_RESERVED;
    }
    for (pdn = 0; pdn < s->props.max_pd && s->pds[pdn].valid; pdn++) {
        continue;
    }
    if (pdn == s->props.max_pd) {
        return refuse(c, RSIM_STS_NO_RESOURCES, "all PDs in use");
    }
    s->pds[pdn].valid = true;
    s->pds[pdn].refs = 0;
    rdma_sim_set_handle(c, pdn, 0);
    return RSIM_STS_OK;
}

static enum rsim_status rdma_sim_cmd_dealloc_pd(RdmaSimState *s, RdmaSimCmd *c)
{
    uint32_t pdn = rdma_sim_cmd_handle(c);
    bool valid = rdma_sim_pd_valid(s, pdn);
    enum rsim_status st;

    st = rdma_sim_check_destroy(c, valid, valid ? s->pds[pdn].refs : 0,
                                "no such PD",
                                "QPs, SRQs, MRs or AHs use the PD");
    if (st != RSIM_STS_OK) {
        return st;
    }
    s->pds[pdn].valid = false;
    return RSIM_STS_OK;
}

/*
 * Completion queues
 */

static uint32_t rdma_sim_max_depth(uint32_t max_entries)
{
    return pow2ceil(max_entries + 1);
}

static enum rsim_status rdma_sim_cmd_create_cq(RdmaSimState *s, RdmaSimCmd *c)
{
    const struct rsim_cmd_create_cq *p = CMD(c, struct rsim_cmd_create_cq);
    g_autofree RdmaSimCq *cq = g_new0(RdmaSimCq, 1);
    const char *why;
    enum rsim_status st;
    uint32_t cqn;

    if (RESERVED_SET(c, p->reserved)) {
        return RSIM_STS_RESERVED;
    }
    cq->eqn = le32_to_cpu(p->eqn);
    /* 32 bits in the command, 16 in the CQ: a larger one stays too large */
    cq->db_page = MIN(le32_to_cpu(p->db_page), UINT16_MAX);
    st = rdma_sim_cq_new_check(s, cq, &why);
    if (st != RSIM_STS_OK) {
        return refuse(c, st, why);
    }
    for (cqn = 0; cqn < s->props.max_cq && s->cqs[cqn]; cqn++) {
        continue;
    }
    if (cqn == s->props.max_cq) {
        return refuse(c, RSIM_STS_NO_RESOURCES, "all CQs in use");
    }
    st = rdma_sim_ring_init(s, &cq->ring, &p->q, RSIM_CQE_SIZE,
                            1u << RSIM_CQE_LOG2_SLOT,
                            rdma_sim_max_depth(s->props.max_cqe));
    if (st != RSIM_STS_OK) {
        return refuse(c, st, "bad CQ ring descriptor");
    }
    cq->cqn = cqn;
    rdma_sim_cq_attach(s, cq);
    trace_rdma_sim_cq_create(cqn, cq->ring.depth, cq->eqn);
    g_steal_pointer(&cq);       /* the table's now */
    rdma_sim_set_handle(c, cqn, 0);
    return RSIM_STS_OK;
}

static enum rsim_status rdma_sim_cmd_resize_cq(RdmaSimState *s, RdmaSimCmd *c)
{
    const struct rsim_cmd_resize_cq *p = CMD(c, struct rsim_cmd_resize_cq);
    RdmaSimCq *cq = rdma_sim_cq_lookup(s, le32_to_cpu(p->cqn));
    enum rsim_status st;
    RdmaSimRing ring;
    uint32_t cons;

    if (RESERVED_SET(c, p->reserved)) {
        return RSIM_STS_RESERVED;
    }
    if (!cq) {
        return refuse(c, RSIM_STS_BAD_HANDLE, "no such CQ");
    }
    st = rdma_sim_ring_init(s, &ring, &p->q, RSIM_CQE_SIZE,
                            1u << RSIM_CQE_LOG2_SLOT,
                            rdma_sim_max_depth(s->props.max_cqe));
    if (st != RSIM_STS_OK) {
        return refuse(c, st, "bad CQ ring descriptor");
    }
    if (rdma_sim_ring_read_index(s, &cq->ring, RSIM_QUEUE_CONS_OFFSET, &cons)) {
        rdma_sim_ring_free(s, &ring);
        return refuse(c, RSIM_STS_DMA, "old CQ ring not accessible");
    }
    st = rdma_sim_ring_move(s, &cq->ring, cons, cq->prod, &ring);
    if (st != RSIM_STS_OK) {
        rdma_sim_ring_free(s, &ring);
        return refuse(c, st, "pending completions do not fit the new ring");
    }
    rdma_sim_ring_free(s, &cq->ring);
    cq->prod = (cq->prod - cons) & cq->ring.mask;
    cq->ring = ring;
    cq->overflow_reported = false;
    trace_rdma_sim_cq_resize(cq->cqn, ring.depth, cq->prod);
    return RSIM_STS_OK;
}

static enum rsim_status rdma_sim_cmd_destroy_cq(RdmaSimState *s, RdmaSimCmd *c)
{
    RdmaSimCq *cq = rdma_sim_cq_lookup(s, rdma_sim_cmd_handle(c));
    enum rsim_status st;

    st = rdma_sim_check_destroy(c, cq, cq ? cq->refs : 0, "no such CQ",
                                "QPs use the CQ");
    if (st != RSIM_STS_OK) {
        return st;
    }
    trace_rdma_sim_cq_destroy(cq->cqn);
    rdma_sim_cq_destroy(s, cq);
    return RSIM_STS_OK;
}

static enum rsim_status rdma_sim_cmd_arm_cq(RdmaSimState *s, RdmaSimCmd *c)
{
    const struct rsim_cmd_arm_cq *p = CMD(c, struct rsim_cmd_arm_cq);
    RdmaSimCq *cq = rdma_sim_cq_lookup(s, le32_to_cpu(p->cqn));
    uint32_t arm = le32_to_cpu(p->arm);

    if (RESERVED_SET(c, p->reserved)) {
        return RSIM_STS_RESERVED;
    }
    if (!cq) {
        return refuse(c, RSIM_STS_BAD_HANDLE, "no such CQ");
    }
    if (arm != RSIM_CQ_ARM_NEXT && arm != RSIM_CQ_ARM_SOLICITED) {
        return refuse(c, RSIM_STS_INVALID, "arm must be NEXT or SOLICITED");
    }
    rdma_sim_cq_arm(s, cq, arm);
    return RSIM_STS_OK;
}

/*
 * Queue pairs
 */

static enum rsim_status rdma_sim_qp_alloc_qpn(RdmaSimState *s, uint8_t type,
                                              uint32_t *qpn)
{
    uint32_t n = s->props.max_qp - 2;

    if (type == RSIM_QPT_GSI) {
        if (s->qps[RSIM_GSI_QPN]) {
            return RSIM_STS_EXISTS;
        }
        *qpn = RSIM_GSI_QPN;
        return RSIM_STS_OK;
    }
    /* Round robin over 2..max_qp-1 so numbers are not reused soon. */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t cand = 2 + (s->next_qpn - 2 + i) % n;

        if (!s->qps[cand]) {
            *qpn = cand;
            s->next_qpn = 2 + (cand - 2 + 1) % n;
            return RSIM_STS_OK;
        }
    }
    return RSIM_STS_NO_RESOURCES;
}

static enum rsim_status rdma_sim_cmd_create_qp(RdmaSimState *s, RdmaSimCmd *c)
{
    const struct rsim_cmd_create_qp *p = CMD(c, struct rsim_cmd_create_qp);
    uint32_t max_depth = rdma_sim_max_depth(s->props.max_qp_wr);
    uint32_t next_qpn = s->next_qpn;
    g_autofree RdmaSimQp *qp = g_new0(RdmaSimQp, 1);
    RdmaSimSrq *srq;
    const char *why;
    enum rsim_status st;
    uint32_t qpn;

    if (RESERVED_SET(c, p->reserved)) {
        return RSIM_STS_RESERVED;
    }
    if (p->flags & ~RSIM_QP_FLAG_SQ_SIG_ALL) {
        return refuse(c, RSIM_STS_RESERVED, "unknown QP flags");
    }
    qp->type = p->qp_type;
    qp->pdn = le32_to_cpu(p->pdn);
    qp->send_cqn = le32_to_cpu(p->send_cqn);
    qp->recv_cqn = le32_to_cpu(p->recv_cqn);
    qp->srqn = le32_to_cpu(p->srqn);
    qp->max_send_sge = p->max_send_sge;
    qp->max_recv_sge = p->max_recv_sge;
    qp->max_inline = le16_to_cpu(p->max_inline);
    qp->db_page = le16_to_cpu(p->db_page);
    st = rdma_sim_qp_new_check(s, qp, &why);
    if (st != RSIM_STS_OK) {
        return refuse(c, st, why);
    }
    srq = rdma_sim_srq_lookup(s, qp->srqn);
    if (srq && RESERVED_SET(c, p->rq)) {
        return RSIM_STS_RESERVED;
    }
    st = rdma_sim_qp_alloc_qpn(s, qp->type, &qpn);
    if (st != RSIM_STS_OK) {
        return refuse(c, st, st == RSIM_STS_EXISTS ? "a GSI QP exists"
                      : "all QPs in use");
    }

    st = rdma_sim_ring_init(s, &qp->sq, &p->sq, RSIM_SEND_WQE_HDR_SIZE +
                            MAX(16u * qp->max_send_sge, qp->max_inline),
                            rdma_sim_sq_elem_max(s), max_depth);
    if (st == RSIM_STS_OK && !srq) {
        st = rdma_sim_ring_init(s, &qp->rq, &p->rq, RSIM_RECV_WQE_HDR_SIZE +
                                16u * qp->max_recv_sge,
                                rdma_sim_rq_elem_max(s), max_depth);
        if (st != RSIM_STS_OK) {
            rdma_sim_ring_free(s, &qp->sq);
        }
    }
    if (st != RSIM_STS_OK) {
        s->next_qpn = next_qpn;     /* a refused command changes nothing */
        return refuse(c, st, st == RSIM_STS_NO_RESOURCES ?
                      "device memory for rings exhausted" :
                      "bad send or receive queue descriptor");
    }
    /* the transport state it gets at RTR is reserved now */
    qp->xport_mem = rdma_sim_xport_mem(qp, srq, s->props.max_rd_atom);
    if (!rdma_sim_host_mem_get(s, qp->xport_mem)) {
        rdma_sim_ring_free(s, &qp->sq);
        rdma_sim_ring_free(s, &qp->rq);
        s->next_qpn = next_qpn;
        return refuse(c, RSIM_STS_NO_RESOURCES,
                      "device memory for QPs exhausted");
    }
    qp->qpn = qpn;
    qp->state = RSIM_QPS_RESET;
    qp->sig_all = p->flags & RSIM_QP_FLAG_SQ_SIG_ALL;
    rdma_sim_qp_attach(s, qp);
    trace_rdma_sim_qp_create(qpn, qp->type, qp->sq.depth,
                             srq ? 0 : qp->rq.depth);
    g_steal_pointer(&qp);       /* the table's now */
    rdma_sim_set_handle(c, qpn, 0);
    return RSIM_STS_OK;
}

static enum rsim_status rdma_sim_qp_attr_cmd(RdmaSimState *s, RdmaSimCmd *c,
                                             RdmaSimQp **qpp, uint64_t *addr)
{
    const struct rsim_cmd_qp_attr *p = CMD(c, struct rsim_cmd_qp_attr);

    if (RESERVED_SET(c, p->reserved)) {
        return RSIM_STS_RESERVED;
    }
    *qpp = rdma_sim_qp_lookup(s, le32_to_cpu(p->qpn));
    if (!*qpp) {
        return refuse(c, RSIM_STS_BAD_HANDLE, "no such QP");
    }
    *addr = le64_to_cpu(p->addr);
    if (*addr & 7) {
        return refuse(c, RSIM_STS_INVALID,
                      "attribute block not 8-byte aligned");
    }
    return RSIM_STS_OK;
}

static enum rsim_status rdma_sim_cmd_modify_qp(RdmaSimState *s, RdmaSimCmd *c)
{
    struct rsim_qp_attr attr;
    enum rsim_status st;
    uint64_t addr;
    RdmaSimQp *qp;
    unsigned cur;

    st = rdma_sim_qp_attr_cmd(s, c, &qp, &addr);
    if (st != RSIM_STS_OK) {
        return st;
    }
    if (rdma_sim_dma_read(s, addr, &attr, sizeof(attr)) != MEMTX_OK) {
        return refuse(c, RSIM_STS_DMA, "attribute block not readable");
    }
    if (!buffer_is_zero(attr.reserved1, sizeof(attr.reserved1)) ||
        attr.reserved0) {
        return refuse(c, RSIM_STS_RESERVED, "reserved attribute bytes not 0");
    }
    cur = qp->state;
    st = rdma_sim_qp_modify(s, qp, &attr, &c->why);
    /* the engine takes up a QP that can receive or send (RTR and on) */
    if (st == RSIM_STS_OK && qp->state != RSIM_QPS_RESET &&
        qp->state != RSIM_QPS_ERR) {
        rdma_sim_transport_qp_modified(s, qp, cur);
    }
    return st;
}

static enum rsim_status rdma_sim_cmd_query_qp(RdmaSimState *s, RdmaSimCmd *c)
{
    struct rsim_qp_attr attr;
    enum rsim_status st;
    uint64_t addr;
    RdmaSimQp *qp;

    st = rdma_sim_qp_attr_cmd(s, c, &qp, &addr);
    if (st != RSIM_STS_OK) {
        return st;
    }
    rdma_sim_qp_query(s, qp, &attr);
    if (rdma_sim_dma_write(s, addr, &attr, sizeof(attr)) != MEMTX_OK) {
        return refuse(c, RSIM_STS_DMA, "attribute block not writable");
    }
    return RSIM_STS_OK;
}

static enum rsim_status rdma_sim_cmd_destroy_qp(RdmaSimState *s, RdmaSimCmd *c)
{
    RdmaSimQp *qp = rdma_sim_qp_lookup(s, rdma_sim_cmd_handle(c));

    if (rdma_sim_check_handle_cmd(c)) {
        return RSIM_STS_RESERVED;
    }
    if (!qp) {
        return refuse(c, RSIM_STS_BAD_HANDLE, "no such QP");
    }
    rdma_sim_qp_destroy(s, qp);
    return RSIM_STS_OK;
}

/*
 * Shared receive queues
 */

static enum rsim_status rdma_sim_cmd_create_srq(RdmaSimState *s, RdmaSimCmd *c)
{
    const struct rsim_cmd_create_srq *p = CMD(c, struct rsim_cmd_create_srq);
    g_autofree RdmaSimSrq *srq = g_new0(RdmaSimSrq, 1);
    const char *why;
    enum rsim_status st;
    uint32_t srqn;

    if (RESERVED_SET(c, p->reserved) || RESERVED_SET(c, p->reserved0)) {
        return RSIM_STS_RESERVED;
    }
    srq->pdn = le32_to_cpu(p->pdn);
    srq->db_page = le16_to_cpu(p->db_page);
    srq->max_sge = p->max_sge;
    srq->limit = le32_to_cpu(p->limit);
    st = rdma_sim_srq_new_check(s, srq, &why);
    if (st != RSIM_STS_OK) {
        return refuse(c, st, why);
    }
    for (srqn = 0; srqn < s->props.max_srq && s->srqs[srqn]; srqn++) {
        continue;
    }
    if (srqn == s->props.max_srq) {
        return refuse(c, RSIM_STS_NO_RESOURCES, "all SRQs in use");
    }
    st = rdma_sim_ring_init(s, &srq->ring, &p->q,
                            RSIM_RECV_WQE_HDR_SIZE + 16u * p->max_sge,
                            rdma_sim_rq_elem_max(s),
                            rdma_sim_max_depth(s->props.max_qp_wr));
    if (st != RSIM_STS_OK) {
        return refuse(c, st, "bad SRQ ring descriptor");
    }
    if (srq->limit >= srq->ring.depth) {
        rdma_sim_ring_free(s, &srq->ring);
        return refuse(c, RSIM_STS_INVALID, "SRQ limit not below its depth");
    }
    srq->srqn = srqn;
    rdma_sim_srq_attach(s, srq);
    trace_rdma_sim_srq_create(srqn, srq->ring.depth, srq->limit);
    g_steal_pointer(&srq);      /* the table's now */
    rdma_sim_set_handle(c, srqn, 0);
    return RSIM_STS_OK;
}

static enum rsim_status rdma_sim_cmd_modify_srq(RdmaSimState *s, RdmaSimCmd *c)
{
    const struct rsim_cmd_modify_srq *p = CMD(c, struct rsim_cmd_modify_srq);
    RdmaSimSrq *srq = rdma_sim_srq_lookup(s, le32_to_cpu(p->srqn));
    uint32_t mask = le32_to_cpu(p->mask);
    uint32_t limit = le32_to_cpu(p->limit);
    uint32_t depth, prod;
    enum rsim_status st;
    RdmaSimRing ring;

    if (RESERVED_SET(c, p->reserved)) {
        return RSIM_STS_RESERVED;
    }
    if (!srq) {
        return refuse(c, RSIM_STS_BAD_HANDLE, "no such SRQ");
    }
    if (mask & ~(RSIM_SRQ_MAX_WR | RSIM_SRQ_LIMIT)) {
        return refuse(c, RSIM_STS_INVALID, "unknown MODIFY_SRQ mask bits");
    }
    if (!(mask & RSIM_SRQ_MAX_WR)) {
        if (RESERVED_SET(c, p->q)) {
            return RSIM_STS_RESERVED;
        }
    }
    depth = srq->ring.depth;
    if (mask & RSIM_SRQ_MAX_WR) {
        st = rdma_sim_ring_init(s, &ring, &p->q, RSIM_RECV_WQE_HDR_SIZE +
                                16u * srq->max_sge, rdma_sim_rq_elem_max(s),
                                rdma_sim_max_depth(s->props.max_qp_wr));
        if (st != RSIM_STS_OK) {
            return refuse(c, st, "bad SRQ ring descriptor");
        }
        depth = ring.depth;
    }
    if ((mask & RSIM_SRQ_LIMIT) && limit >= depth) {
        if (mask & RSIM_SRQ_MAX_WR) {
            rdma_sim_ring_free(s, &ring);
        }
        return refuse(c, RSIM_STS_INVALID, "SRQ limit not below its depth");
    }
    if (mask & RSIM_SRQ_MAX_WR) {
        if (rdma_sim_ring_read_index(s, &srq->ring, RSIM_QUEUE_PROD_OFFSET,
                                     &prod)) {
            rdma_sim_ring_free(s, &ring);
            return refuse(c, RSIM_STS_DMA, "old SRQ ring not accessible");
        }
        st = rdma_sim_ring_move(s, &srq->ring, srq->cons, prod, &ring);
        if (st != RSIM_STS_OK) {
            rdma_sim_ring_free(s, &ring);
            return refuse(c, st, "posted receives do not fit the new ring");
        }
        rdma_sim_ring_free(s, &srq->ring);
        srq->ring = ring;
        srq->cons = 0;
    }
    if (mask & RSIM_SRQ_LIMIT) {
        srq->limit = limit;
    }
    trace_rdma_sim_srq_modify(srq->srqn, srq->ring.depth, srq->limit);
    return RSIM_STS_OK;
}

static enum rsim_status rdma_sim_cmd_query_srq(RdmaSimState *s, RdmaSimCmd *c)
{
    RdmaSimSrq *srq = rdma_sim_srq_lookup(s, rdma_sim_cmd_handle(c));
    struct rsim_query_srq_resp *r = RESULT(c, struct rsim_query_srq_resp);

    if (rdma_sim_check_handle_cmd(c)) {
        return RSIM_STS_RESERVED;
    }
    if (!srq) {
        return refuse(c, RSIM_STS_BAD_HANDLE, "no such SRQ");
    }
    r->max_wr = cpu_to_le32(srq->ring.mask);
    r->max_sge = cpu_to_le32(srq->max_sge);
    r->limit = cpu_to_le32(srq->limit);
    return RSIM_STS_OK;
}

static enum rsim_status rdma_sim_cmd_destroy_srq(RdmaSimState *s, RdmaSimCmd *c)
{
    RdmaSimSrq *srq = rdma_sim_srq_lookup(s, rdma_sim_cmd_handle(c));
    enum rsim_status st;

    st = rdma_sim_check_destroy(c, srq, srq ? srq->refs : 0, "no such SRQ",
                                "QPs use the SRQ");
    if (st != RSIM_STS_OK) {
        return st;
    }
    rdma_sim_srq_destroy(s, srq);
    return RSIM_STS_OK;
}

/*
 * Address handles
 */

static enum rsim_status rdma_sim_cmd_create_ah(RdmaSimState *s, RdmaSimCmd *c)
{
    const struct rsim_cmd_create_ah *p = CMD(c, struct rsim_cmd_create_ah);
    uint32_t pdn = le32_to_cpu(p->pdn);
    enum rsim_status st;
    uint32_t ahn;

    if (RESERVED_SET(c, p->reserved)) {
        return RSIM_STS_RESERVED;
    }
    if (!rdma_sim_pd_valid(s, pdn)) {
        return refuse(c, RSIM_STS_BAD_HANDLE, "no such PD");
    }
    st = rdma_sim_av_check(s, &p->av, &c->why);
    if (st != RSIM_STS_OK) {
        return st;
    }
    for (ahn = 1; ahn < s->props.max_ah && s->ahs[ahn].valid; ahn++) {
        continue;
    }
    if (ahn == s->props.max_ah) {
        return refuse(c, RSIM_STS_NO_RESOURCES, "all AHs in use");
    }
    s->ahs[ahn].valid = true;
    s->ahs[ahn].pdn = pdn;
    s->ahs[ahn].av = p->av;
    s->pds[pdn].refs++;
    rdma_sim_set_handle(c, ahn, 0);
    return RSIM_STS_OK;
}

static enum rsim_status rdma_sim_cmd_destroy_ah(RdmaSimState *s, RdmaSimCmd *c)
{
    uint32_t ahn = rdma_sim_cmd_handle(c);

    if (rdma_sim_check_handle_cmd(c)) {
        return RSIM_STS_RESERVED;
    }
    if (!ahn || ahn >= s->props.max_ah || !s->ahs[ahn].valid) {
        return refuse(c, RSIM_STS_BAD_HANDLE, "no such AH");
    }
    s->pds[s->ahs[ahn].pdn].refs--;
    s->ahs[ahn].valid = false;
    return RSIM_STS_OK;
}

/*
 * Memory registration
 */

/* Lowest free MR index; index 0 is never used so no key is 0. */
static bool rdma_sim_mr_alloc_index(RdmaSimState *s, uint32_t *index)
{
    for (uint32_t i = 1; i < s->props.max_mr; i++) {
        if (s->mrs[i].state == RSIM_MR_STATE_INVALID) {
            *index = i;
            return true;
        }
    }
    return false;
}

static enum rsim_status rdma_sim_check_mr_access(RdmaSimCmd *c, uint32_t access)
{
    if (access & ~RSIM_ACCESS_SUPPORTED) {
        return refuse(c, RSIM_STS_INVALID, "unknown access bits");
    }
    if ((access & (RSIM_ACCESS_REMOTE_WRITE | RSIM_ACCESS_REMOTE_ATOMIC)) &&
        !(access & RSIM_ACCESS_LOCAL_WRITE)) {
        return refuse(c, RSIM_STS_INVALID,
                      "remote write or atomic access needs local write");
    }
    return RSIM_STS_OK;
}

static enum rsim_status rdma_sim_cmd_reg_mr(RdmaSimState *s, RdmaSimCmd *c)
{
    const struct rsim_cmd_reg_mr *p = CMD(c, struct rsim_cmd_reg_mr);
    uint32_t pdn = le32_to_cpu(p->pdn);
    uint32_t access = le32_to_cpu(p->access);
    uint32_t flags = le32_to_cpu(p->flags);
    uint64_t iova = le64_to_cpu(p->iova);
    uint64_t length = le64_to_cpu(p->length);
    RdmaSimPageList pl = {
        .addr = le64_to_cpu(p->pbl_addr),
        .npages = le32_to_cpu(p->npages),
        .fbo = le32_to_cpu(p->fbo),
        .level = p->level,
        .page_shift = p->page_shift,
    };
    enum rsim_status st;
    uint32_t index;
    RdmaSimMr *mr;

    if (RESERVED_SET(c, p->reserved) || RESERVED_SET(c, p->reserved0)) {
        return RSIM_STS_RESERVED;
    }
    if (flags & ~RSIM_MR_FLAG_PHYS) {
        return refuse(c, RSIM_STS_RESERVED, "unknown MR flags");
    }
    if (!rdma_sim_pd_valid(s, pdn)) {
        return refuse(c, RSIM_STS_BAD_HANDLE, "no such PD");
    }
    st = rdma_sim_check_mr_access(c, access);
    if (st != RSIM_STS_OK) {
        return st;
    }
    if (flags & RSIM_MR_FLAG_PHYS) {
        if (pl.addr || pl.npages || pl.fbo || pl.level || pl.page_shift ||
            iova || length) {
            return refuse(c, RSIM_STS_INVALID,
                          "a PHYS MR takes no address, length or page list");
        }
    } else {
        if (!length) {
            return refuse(c, RSIM_STS_INVALID, "MR length 0");
        }
        if (iova + length - 1 < iova) {
            return refuse(c, RSIM_STS_RANGE, "iova + length wraps");
        }
        st = rdma_sim_pl_check(s, &pl, length);
        if (st != RSIM_STS_OK) {
            return refuse(c, st, "bad page list");
        }
    }
    if (!rdma_sim_mr_alloc_index(s, &index)) {
        return refuse(c, RSIM_STS_NO_RESOURCES, "MR table full");
    }
    mr = &s->mrs[index];
    mr->key = rdma_sim_new_key(s, index, mr->key);
    mr->state = RSIM_MR_STATE_VALID;
    mr->phys = flags & RSIM_MR_FLAG_PHYS;
    mr->fast_reg = false;
    mr->pdn = pdn;
    mr->access = access;
    mr->iova = iova;
    mr->length = length;
    mr->pl = pl;
    s->pds[pdn].refs++;
    trace_rdma_sim_mr_reg(mr->key, pdn, access, iova, length, pl.level,
                          pl.page_shift, pl.npages);
    rdma_sim_set_handle(c, mr->key,
                        (access & RSIM_ACCESS_REMOTE) ? mr->key : 0);
    return RSIM_STS_OK;
}

static enum rsim_status rdma_sim_cmd_dereg_mr(RdmaSimState *s, RdmaSimCmd *c)
{
    uint32_t key = rdma_sim_cmd_handle(c);
    uint32_t index = RSIM_KEY_INDEX(key);
    RdmaSimMr *mr;

    if (rdma_sim_check_handle_cmd(c)) {
        return RSIM_STS_RESERVED;
    }
    if (!index || index >= s->props.max_mr) {
        return refuse(c, RSIM_STS_BAD_HANDLE, "key index out of range");
    }
    mr = &s->mrs[index];
    if (mr->state == RSIM_MR_STATE_INVALID || mr->key != key) {
        return refuse(c, RSIM_STS_BAD_HANDLE, "no MR with this key");
    }
    trace_rdma_sim_mr_dereg(key);
    s->pds[mr->pdn].refs--;
    mr->state = RSIM_MR_STATE_INVALID;
    return RSIM_STS_OK;
}

static enum rsim_status rdma_sim_cmd_alloc_stag(RdmaSimState *s, RdmaSimCmd *c)
{
    const struct rsim_cmd_alloc_stag *p = CMD(c, struct rsim_cmd_alloc_stag);
    uint32_t pdn = le32_to_cpu(p->pdn);
    uint32_t max_pages = le32_to_cpu(p->max_pages);
    uint64_t pbl = le64_to_cpu(p->pbl_addr);
    uint32_t index;
    RdmaSimMr *mr;

    if (RESERVED_SET(c, p->reserved) || RESERVED_SET(c, p->reserved0)) {
        return RSIM_STS_RESERVED;
    }
    if (!rdma_sim_pd_valid(s, pdn)) {
        return refuse(c, RSIM_STS_BAD_HANDLE, "no such PD");
    }
    if (!max_pages) {
        return refuse(c, RSIM_STS_INVALID, "max_pages 0");
    }
    if (max_pages > RDMA_SIM_MAX_FAST_REG_PAGES) {
        return refuse(c, RSIM_STS_LIMIT, "above CAP_MAX_FAST_REG_PAGES");
    }
    if (!pbl || (pbl & 7)) {
        return refuse(c, RSIM_STS_INVALID, "page list zero or misaligned");
    }
    if (!rdma_sim_mr_alloc_index(s, &index)) {
        return refuse(c, RSIM_STS_NO_RESOURCES, "MR table full");
    }
    mr = &s->mrs[index];
    mr->key = rdma_sim_new_key(s, index, mr->key);
    mr->state = RSIM_MR_STATE_FREE;
    mr->phys = false;
    mr->fast_reg = true;
    mr->pdn = pdn;
    mr->access = 0;
    mr->iova = mr->length = 0;
    mr->max_pages = max_pages;
    mr->fr_list = pbl;
    memset(&mr->pl, 0, sizeof(mr->pl));
    s->pds[pdn].refs++;
    trace_rdma_sim_mr_alloc_stag(mr->key, pdn, max_pages);
    rdma_sim_set_handle(c, mr->key, mr->key);
    return RSIM_STS_OK;
}

static enum rsim_status rdma_sim_cmd_mr_translate(RdmaSimState *s,
                                                  RdmaSimCmd *c)
{
    const struct rsim_cmd_mr_translate *p =
        CMD(c, struct rsim_cmd_mr_translate);
    struct rsim_mr_translate_resp *r =
        RESULT(c, struct rsim_mr_translate_resp);
    uint32_t key = le32_to_cpu(p->key);
    uint64_t iova = le64_to_cpu(p->iova);
    uint64_t len = le64_to_cpu(p->length);
    uint32_t access = le32_to_cpu(p->access);
    enum rsim_status st;
    RdmaSimMr *mr;
    RdmaSimSeg seg;

    if (RESERVED_SET(c, p->reserved)) {
        return RSIM_STS_RESERVED;
    }
    if (access & ~RSIM_ACCESS_SUPPORTED) {
        return refuse(c, RSIM_STS_INVALID, "unknown access bits");
    }
    if (RSIM_KEY_INDEX(key) < s->props.max_mr) {
        mr = &s->mrs[RSIM_KEY_INDEX(key)];
        r->state = mr->key == key ? mr->state : RSIM_MR_STATE_INVALID;
        r->level = mr->pl.level;
        r->page_shift = mr->pl.page_shift;
    }
    /* A zero-length remote READ/WRITE passes without a key check (IBTA). */
    if (!len && access &&
        !(access & ~(RSIM_ACCESS_REMOTE_READ | RSIM_ACCESS_REMOTE_WRITE))) {
        return RSIM_STS_OK;
    }
    st = rdma_sim_mr_check(s, key, le32_to_cpu(p->pdn), access, iova, len, &mr);
    if (st == RSIM_STS_OK) {
        st = rdma_sim_mr_map(s, mr, iova, MAX(len, 1), &seg);
    }
    if (st != RSIM_STS_OK) {
        return refuse(c, st, "translation refused");
    }
    r->addr = cpu_to_le64(seg.addr);
    r->contig = cpu_to_le64(MIN(seg.len, len));
    return RSIM_STS_OK;
}

/*
 * GID table
 */

static enum rsim_status rdma_sim_cmd_add_gid(RdmaSimState *s, RdmaSimCmd *c)
{
    const struct rsim_cmd_gid *p = CMD(c, struct rsim_cmd_gid);
    uint32_t index = le32_to_cpu(p->index);

    if (RESERVED_SET(c, p->reserved)) {
        return RSIM_STS_RESERVED;
    }
    if (index >= s->props.max_gid) {
        return refuse(c, RSIM_STS_LIMIT, "GID index above CAP_MAX_GID");
    }
    if (p->type != RSIM_GID_TYPE_ROCE_V2) {
        return refuse(c, RSIM_STS_UNSUPPORTED, "only RoCEv2 GIDs");
    }
    if (buffer_is_zero(p->gid, sizeof(p->gid))) {
        return refuse(c, RSIM_STS_INVALID, "GID is zero");
    }
    if (s->gids[index].valid) {
        return refuse(c, RSIM_STS_EXISTS, "GID slot in use");
    }
    s->gids[index].valid = true;
    memcpy(s->gids[index].gid, p->gid, sizeof(p->gid));
    trace_rdma_sim_gid(index, "add");
    return RSIM_STS_OK;
}

static enum rsim_status rdma_sim_cmd_del_gid(RdmaSimState *s, RdmaSimCmd *c)
{
    const struct rsim_cmd_gid *p = CMD(c, struct rsim_cmd_gid);
    uint32_t index = le32_to_cpu(p->index);

    if (RESERVED_SET(c, p->reserved) || RESERVED_SET(c, p->gid)) {
        return RSIM_STS_RESERVED;
    }
    if (p->type) {
        return refuse(c, RSIM_STS_RESERVED, "type must be 0");
    }
    if (index >= s->props.max_gid) {
        return refuse(c, RSIM_STS_LIMIT, "GID index above CAP_MAX_GID");
    }
    if (!s->gids[index].valid) {
        return refuse(c, RSIM_STS_BAD_HANDLE, "GID slot empty");
    }
    memset(&s->gids[index], 0, sizeof(s->gids[index]));
    trace_rdma_sim_gid(index, "del");
    return RSIM_STS_OK;
}

/*
 * Dispatch and the queue machinery
 */

typedef enum rsim_status (*RdmaSimCmdFn)(RdmaSimState *s, RdmaSimCmd *c);

static const struct {
    const char *name;
    RdmaSimCmdFn fn;
} rdma_sim_cmds[RSIM_CMD_MAX] = {
#define C(op, fn) [RSIM_CMD_ ## op] = { #op, fn }
    C(NOP, rdma_sim_cmd_nop),
    C(QUERY_DEVICE, rdma_sim_cmd_query_device),
    C(QUERY_PORT, rdma_sim_cmd_query_port),
    C(SET_PORT, rdma_sim_cmd_set_port),
    C(QUERY_STATS, rdma_sim_cmd_query_stats),
    C(CREATE_EQ, rdma_sim_cmd_create_eq),
    C(DESTROY_EQ, rdma_sim_cmd_destroy_eq),
    C(CREATE_ETHQ, rdma_sim_cmd_create_ethq),
    C(DESTROY_ETHQ, rdma_sim_cmd_destroy_ethq),
    C(ALLOC_PD, rdma_sim_cmd_alloc_pd),
    C(DEALLOC_PD, rdma_sim_cmd_dealloc_pd),
    C(CREATE_CQ, rdma_sim_cmd_create_cq),
    C(RESIZE_CQ, rdma_sim_cmd_resize_cq),
    C(DESTROY_CQ, rdma_sim_cmd_destroy_cq),
    C(ARM_CQ, rdma_sim_cmd_arm_cq),
    C(CREATE_QP, rdma_sim_cmd_create_qp),
    C(MODIFY_QP, rdma_sim_cmd_modify_qp),
    C(QUERY_QP, rdma_sim_cmd_query_qp),
    C(DESTROY_QP, rdma_sim_cmd_destroy_qp),
    C(CREATE_SRQ, rdma_sim_cmd_create_srq),
    C(MODIFY_SRQ, rdma_sim_cmd_modify_srq),
    C(QUERY_SRQ, rdma_sim_cmd_query_srq),
    C(DESTROY_SRQ, rdma_sim_cmd_destroy_srq),
    C(CREATE_AH, rdma_sim_cmd_create_ah),
    C(DESTROY_AH, rdma_sim_cmd_destroy_ah),
    C(REG_MR, rdma_sim_cmd_reg_mr),
    C(DEREG_MR, rdma_sim_cmd_dereg_mr),
    C(ALLOC_STAG, rdma_sim_cmd_alloc_stag),
    C(MR_TRANSLATE, rdma_sim_cmd_mr_translate),
    C(ADD_GID, rdma_sim_cmd_add_gid),
    C(DEL_GID, rdma_sim_cmd_del_gid),
#undef C
};

const char *rdma_sim_cmd_name(unsigned opcode)
{
    if (opcode < RSIM_CMD_MAX && rdma_sim_cmds[opcode].name) {
        return rdma_sim_cmds[opcode].name;
    }
    return "UNKNOWN";
}

static enum rsim_status rdma_sim_exec(RdmaSimState *s, RdmaSimCmd *c)
{
    uint32_t dw0 = le32_to_cpu(c->cmd.dw0);
    unsigned opcode = FIELD_EX32(dw0, RSIM_CMD_HDR, OPCODE);

    if (opcode >= RSIM_CMD_MAX || !rdma_sim_cmds[opcode].fn) {
        c->why = "unknown opcode";
        return RSIM_STS_BAD_OPCODE;
    }
    if (FIELD_EX32(dw0, RSIM_CMD_HDR, FLAGS)) {
        c->why = "command flags must be 0";
        return RSIM_STS_RESERVED;
    }
    return rdma_sim_cmds[opcode].fn(s, c);
}

/* Write the completion of the command at the current head. */
static bool rdma_sim_post_completion(RdmaSimState *s, uint16_t id,
                                     enum rsim_status st, const uint8_t *result)
{
    uint64_t addr = s->acq_base + (uint64_t)s->acq_tail * RSIM_ACQ_ENTRY_SIZE;
    struct rsim_admin_cqe cqe = { 0 };
    uint32_t dw0 = 0;

    dw0 = FIELD_DP32(dw0, RSIM_CQE_HDR, ID, id);
    dw0 = FIELD_DP32(dw0, RSIM_CQE_HDR, STATUS, st);
    dw0 = FIELD_DP32(dw0, RSIM_CQE_HDR, PHASE, s->acq_phase);
    cqe.dw0 = cpu_to_le32(dw0);
    cqe.sq_head = cpu_to_le16(s->aq_head);
    memcpy(cqe.result, result, sizeof(cqe.result));
    rdma_sim_fault_driver(s, RDMA_SIM_FAULT_ACQE, &cqe);
    if (rdma_sim_dma_write(s, addr + 4, (uint8_t *)&cqe + 4,
                           sizeof(cqe) - 4) != MEMTX_OK) {
        return false;
    }
    /* the body must be visible before the phase bit that validates it */
    smp_wmb();
    if (rdma_sim_dma_write(s, addr, &cqe.dw0, sizeof(cqe.dw0)) != MEMTX_OK) {
        return false;
    }
    s->acq_tail = (s->acq_tail + 1) & (s->acq_depth - 1);
    if (!s->acq_tail) {
        s->acq_phase = !s->acq_phase;
    }
    return true;
}

static void rdma_sim_admin_bh(void *opaque)
{
    RdmaSimState *s = opaque;
    unsigned budget = RDMA_SIM_ADMIN_BURST;
    bool posted = false;

    /* a stopped VM's device waits: rdma_sim_vm_state_change() */
    if (!rdma_sim_vm_running()) {
        return;
    }
    rdma_sim_transport_run(s);
    s->busy++;
    while (rdma_sim_ready(s) && s->aq_head != s->aq_tail &&
           ((s->acq_tail + 1) & (s->acq_depth - 1)) != s->acq_head) {
        RdmaSimCmd c = { 0 };
        unsigned opcode;
        enum rsim_status st;
        uint16_t id;

        if (rdma_sim_dma_read(s, s->aq_base + (uint64_t)s->aq_head *
                              RSIM_AQ_ENTRY_SIZE, &c.cmd, sizeof(c.cmd))) {
            rdma_sim_set_fatal(s, RSIM_FATAL_ADMIN_DMA);
            break;
        }
        opcode = FIELD_EX32(le32_to_cpu(c.cmd.dw0), RSIM_CMD_HDR, OPCODE);
        id = FIELD_EX32(le32_to_cpu(c.cmd.dw0), RSIM_CMD_HDR, ID);
        st = rdma_sim_exec(s, &c);
        if (st == RSIM_STS_OK) {
            trace_rdma_sim_cmd(id, rdma_sim_cmd_name(opcode));
        } else {
            trace_rdma_sim_cmd_error(id, rdma_sim_cmd_name(opcode), st,
                                     c.why ? c.why : "");
            if (st != RSIM_STS_NO_RESOURCES && st != RSIM_STS_BUSY) {
                rdma_sim_guest_error(s, "admin",
                                     "%s (id %u) refused with status "
                                     "0x%x: %s",
                                     rdma_sim_cmd_name(opcode), id, st,
                                     c.why ? c.why : "");
            }
        }
        /* The command may have reset or broken the device. */
        if (!rdma_sim_ready(s)) {
            break;
        }
        s->aq_head = (s->aq_head + 1) & (s->aq_depth - 1);
        if (!rdma_sim_post_completion(s, id, st, c.result)) {
            rdma_sim_set_fatal(s, RSIM_FATAL_ADMIN_DMA);
            break;
        }
        posted = true;
        if (!--budget) {
            /* the main loop gets its turn; the rest in the next pass */
            qemu_bh_schedule(s->admin_bh);
            break;
        }
    }
    if (posted && !FIELD_EX32(s->intr_mask, RSIM_INTR_MASK, ADMIN)) {
        rdma_sim_msix_notify(s, RSIM_MSIX_VECTOR_ADMIN);
    }
    s->busy--;
}

void rdma_sim_admin_kick(RdmaSimState *s)
{
    qemu_bh_schedule(s->admin_bh);
}

void rdma_sim_admin_init(RdmaSimState *s)
{
    s->admin_bh = rdma_sim_bh_new(s, rdma_sim_admin_bh);
}

/*
 * The object tables, sized by the properties: allocated once, emptied by
 * every reset (each object destroyed through its owner), freed with the
 * device.
 */
void rdma_sim_objects_init(RdmaSimState *s)
{
    const RdmaSimProps *p = &s->props;

    s->pds = g_new0(RdmaSimPd, p->max_pd);
    s->mrs = g_new0(RdmaSimMr, p->max_mr);
    s->ahs = g_new0(RdmaSimAh, p->max_ah);
    s->gids = g_new0(RdmaSimGid, p->max_gid);
    s->eqs = g_new0(RdmaSimEq, p->msix_vectors - 1);
    s->cqs = g_new0(RdmaSimCq *, p->max_cq);
    s->srqs = g_new0(RdmaSimSrq *, p->max_srq);
    s->qps = g_new0(RdmaSimQp *, p->max_qp);
    for (uint32_t i = 0; i < p->msix_vectors - 1; i++) {
        QTAILQ_INIT(&s->eqs[i].waiting);
    }
}

void rdma_sim_objects_reset(RdmaSimState *s)
{
    uint32_t i;

    for (i = 0; i < s->props.max_qp; i++) {
        if (s->qps[i]) {
            rdma_sim_qp_destroy(s, s->qps[i]);
        }
    }
    for (i = 0; i < s->props.max_srq; i++) {
        if (s->srqs[i]) {
            rdma_sim_srq_destroy(s, s->srqs[i]);
        }
    }
    for (i = 0; i < s->props.max_cq; i++) {
        if (s->cqs[i]) {
            s->cqs[i]->refs = 0;
            rdma_sim_cq_destroy(s, s->cqs[i]);
        }
    }
    for (i = 0; i < s->props.msix_vectors - 1; i++) {
        rdma_sim_eq_reset(s, &s->eqs[i]);
    }
    rdma_sim_mr_reset(s);
    memset(s->pds, 0, sizeof(*s->pds) * s->props.max_pd);
    memset(s->ahs, 0, sizeof(*s->ahs) * s->props.max_ah);
    memset(s->gids, 0, sizeof(*s->gids) * s->props.max_gid);
    memset(s->ethq, 0, sizeof(s->ethq));
    memset(s->stats, 0, sizeof(s->stats));
}

void rdma_sim_objects_free(RdmaSimState *s)
{
    g_free(s->pds);
    g_free(s->mrs);
    g_free(s->ahs);
    g_free(s->gids);
    g_free(s->eqs);
    g_free(s->cqs);
    g_free(s->srqs);
    g_free(s->qps);
}
