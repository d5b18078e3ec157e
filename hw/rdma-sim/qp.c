/*
 * rdma-sim: queue pairs and the QP state machine
 *
 * MODIFY_QP follows the InfiniBand transition table (datasheet section 8):
 * the whole attribute block is validated before anything changes, so a
 * refused modify leaves the QP as it was.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "platform.h"
#include "device.h"
#include "stages.h"
#include "trace.h"

RdmaSimQp *rdma_sim_qp_lookup(RdmaSimState *s, uint32_t qpn)
{
    return qpn < s->props.max_qp ? s->qps[qpn] : NULL;
}

const char *rdma_sim_qp_state_name(unsigned state)
{
    static const char *const names[] = {
        "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
    };

    return state < ARRAY_SIZE(names) ? names[state] : "?";
}

/*
 * The transition table
 */

/* Columns of the table: transport classes that share attribute rules. */
enum { TC_RC, TC_UC, TC_UD, TC_GSI, TC_N };

typedef struct RdmaSimTransition {
    bool valid;
    uint32_t req[TC_N];
    uint32_t opt[TC_N];
} RdmaSimTransition;

#define S(x) RSIM_QPS_ ## x
#define A(x) RSIM_QP_ ## x

static const RdmaSimTransition rdma_sim_qp_table[7][7] = {
    [S(RESET)] = {
        [S(RESET)] = { .valid = true },
        [S(INIT)] = {
            .valid = true,
            .req = {
                [TC_RC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
                [TC_UC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
                [TC_UD] = A(PKEY_INDEX) | A(PORT) | A(QKEY),
                [TC_GSI] = A(PKEY_INDEX) | A(QKEY),
            },
        },
    },
    [S(INIT)] = {
        [S(RESET)] = { .valid = true },
        [S(ERR)] = { .valid = true },
        [S(INIT)] = {
            .valid = true,
            .opt = {
                [TC_RC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
                [TC_UC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
                [TC_UD] = A(PKEY_INDEX) | A(PORT) | A(QKEY),
                [TC_GSI] = A(PKEY_INDEX) | A(QKEY),
            },
        },
        [S(RTR)] = {
            .valid = true,
            .req = {
                [TC_RC] = A(AV) | A(PATH_MTU) | A(DEST_QPN) |
                          A(RQ_PSN) | A(MAX_DEST_RD_ATOMIC) |
                          A(MIN_RNR_TIMER),
                [TC_UC] = A(AV) | A(PATH_MTU) | A(DEST_QPN) |
                          A(RQ_PSN),
            },
            .opt = {
                [TC_RC] = A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX),
                [TC_UC] = A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX),
                [TC_UD] = A(PKEY_INDEX) | A(QKEY),
                [TC_GSI] = A(PKEY_INDEX) | A(QKEY),
            },
        },
    },
    [S(RTR)] = {
        [S(RESET)] = { .valid = true },
        [S(ERR)] = { .valid = true },
        [S(RTS)] = {
            .valid = true,
            .req = {
                [TC_RC] = A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) |
                          A(SQ_PSN) | A(MAX_QP_RD_ATOMIC),
                [TC_UC] = A(SQ_PSN),
                [TC_UD] = A(SQ_PSN),
                [TC_GSI] = A(SQ_PSN),
            },
            .opt = {
                [TC_RC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) |
                          A(MIN_RNR_TIMER) | A(PATH_MIG_STATE),
                [TC_UC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) |
                          A(PATH_MIG_STATE),
                [TC_UD] = A(CUR_STATE) | A(QKEY),
                [TC_GSI] = A(CUR_STATE) | A(QKEY),
            },
        },
    },
    [S(RTS)] = {
        [S(RESET)] = { .valid = true },
        [S(ERR)] = { .valid = true },
        [S(RTS)] = {
            .valid = true,
            .opt = {
                [TC_RC] = A(CUR_STATE) | A(ACCESS_FLAGS) | A(ALT_PATH) |
                          A(PATH_MIG_STATE) | A(MIN_RNR_TIMER),
                [TC_UC] = A(CUR_STATE) | A(ACCESS_FLAGS) | A(ALT_PATH) |
                          A(PATH_MIG_STATE),
                [TC_UD] = A(CUR_STATE) | A(QKEY),
                [TC_GSI] = A(CUR_STATE) | A(QKEY),
            },
        },
        [S(SQD)] = {
            .valid = true,
            .opt = {
                [TC_RC] = A(EN_SQD_ASYNC_NOTIFY),
                [TC_UC] = A(EN_SQD_ASYNC_NOTIFY),
                [TC_UD] = A(EN_SQD_ASYNC_NOTIFY),
                [TC_GSI] = A(EN_SQD_ASYNC_NOTIFY),
            },
        },
    },
    [S(SQD)] = {
        [S(RESET)] = { .valid = true },
        [S(ERR)] = { .valid = true },
        [S(RTS)] = {
            .valid = true,
            .opt = {
                [TC_RC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) |
                          A(MIN_RNR_TIMER) | A(PATH_MIG_STATE),
                [TC_UC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) |
                          A(PATH_MIG_STATE),
                [TC_UD] = A(CUR_STATE) | A(QKEY),
                [TC_GSI] = A(CUR_STATE) | A(QKEY),
            },
        },
        [S(SQD)] = {
            .valid = true,
            .opt = {
                [TC_RC] = A(PORT) | A(AV) | A(TIMEOUT) | A(RETRY_CNT) |
                          A(RNR_RETRY) | A(MAX_QP_RD_ATOMIC) |
                          A(MAX_DEST_RD_ATOMIC) | A(ALT_PATH) |
                          A(ACCESS_FLAGS) | A(PKEY_INDEX) |
                          A(MIN_RNR_TIMER) | A(PATH_MIG_STATE),
                [TC_UC] = A(AV) | A(ALT_PATH) | A(ACCESS_FLAGS) |
                          A(PKEY_INDEX) | A(PATH_MIG_STATE),
                [TC_UD] = A(PKEY_INDEX) | A(QKEY),
                [TC_GSI] = A(PKEY_INDEX) | A(QKEY),
            },
        },
    },
    [S(SQE)] = {
        [S(RESET)] = { .valid = true },
        [S(ERR)] = { .valid = true },
        [S(RTS)] = {
            .valid = true,
            .opt = {
                [TC_UC] = A(CUR_STATE) | A(ACCESS_FLAGS),
                [TC_UD] = A(CUR_STATE) | A(QKEY),
                [TC_GSI] = A(CUR_STATE) | A(QKEY),
            },
        },
    },
    [S(ERR)] = {
        [S(RESET)] = { .valid = true },
        [S(ERR)] = { .valid = true },
    },
};

#undef S
#undef A

static unsigned rdma_sim_qp_class(const RdmaSimQp *qp)
{
    switch (qp->type) {
    case RSIM_QPT_RC:
        return TC_RC;
    case RSIM_QPT_UC:
        return TC_UC;
    case RSIM_QPT_UD:
        return TC_UD;
    default:
        return TC_GSI;
    }
}

/* Check an address vector against the GID table. */
enum rsim_status rdma_sim_av_check(RdmaSimState *s, const struct rsim_av *av,
                                   const char **why)
{
    const RdmaSimGid *sgid;

    if (av->reserved) {
        *why = "AV reserved byte set";
        return RSIM_STS_RESERVED;
    }
    if (av->sgid_index >= s->props.max_gid ||
        !s->gids[av->sgid_index].valid) {
        *why = "AV names an empty source GID entry";
        return RSIM_STS_INVALID;
    }
    sgid = &s->gids[av->sgid_index];
    if (av->network_type != RSIM_NET_IPV4 &&
        av->network_type != RSIM_NET_IPV6) {
        *why = "AV network type is neither IPv4 nor IPv6";
        return RSIM_STS_INVALID;
    }
    if (roce_gid_is_v4mapped(av->dgid) !=
        (av->network_type == RSIM_NET_IPV4) ||
        roce_gid_is_v4mapped(sgid->gid) !=
        (av->network_type == RSIM_NET_IPV4)) {
        *why = "AV network type does not match the GIDs";
        return RSIM_STS_INVALID;
    }
    if (le32_to_cpu(av->flow_label) >= (1u << 20)) {
        *why = "AV flow label above 20 bits";
        return RSIM_STS_INVALID;
    }
    return RSIM_STS_OK;
}

/* Values of the attributes present in mask. */
static enum rsim_status rdma_sim_qp_check_values(RdmaSimState *s,
                                                 const struct rsim_qp_attr *a,
                                                 uint32_t mask,
                                                 const char **why)
{
    if ((mask & RSIM_QP_ACCESS_FLAGS) &&
        (le32_to_cpu(a->qp_access_flags) &
         ~(RSIM_ACCESS_LOCAL_WRITE | RSIM_ACCESS_REMOTE))) {
        *why = "access flags other than local write and remote rights";
        return RSIM_STS_INVALID;
    }
    if ((mask & RSIM_QP_PKEY_INDEX) && le16_to_cpu(a->pkey_index) != 0) {
        *why = "P_Key index must be 0 (one P_Key)";
        return RSIM_STS_INVALID;
    }
    if ((mask & RSIM_QP_PORT) && a->port_num != 1) {
        *why = "port must be 1";
        return RSIM_STS_INVALID;
    }
    if (mask & RSIM_QP_PATH_MTU) {
        if (a->path_mtu < RSIM_MTU_256) {
            *why = "path MTU 0";
            return RSIM_STS_INVALID;
        }
        if (a->path_mtu > RSIM_MTU_4096) {
            *why = "path MTU above the device's 4096";
            return RSIM_STS_LIMIT;
        }
    }
    if (((mask & RSIM_QP_RQ_PSN) && le32_to_cpu(a->rq_psn) >> 24) ||
        ((mask & RSIM_QP_SQ_PSN) && le32_to_cpu(a->sq_psn) >> 24) ||
        ((mask & RSIM_QP_DEST_QPN) && le32_to_cpu(a->dest_qp_num) >> 24)) {
        *why = "PSN or destination QPN above 24 bits";
        return RSIM_STS_INVALID;
    }
    if (((mask & RSIM_QP_TIMEOUT) && a->timeout > 31) ||
        ((mask & RSIM_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31) ||
        ((mask & RSIM_QP_RETRY_CNT) && a->retry_cnt > 7) ||
        ((mask & RSIM_QP_RNR_RETRY) && a->rnr_retry > 7) ||
        ((mask & RSIM_QP_PATH_MIG_STATE) && a->path_mig_state > 2) ||
        ((mask & RSIM_QP_STATE) && a->qp_state > RSIM_QPS_ERR)) {
        *why = "timer, retry count, migration state or state out of range";
        return RSIM_STS_INVALID;
    }
    if (((mask & RSIM_QP_MAX_QP_RD_ATOMIC) &&
         a->max_rd_atomic > s->props.max_rd_atom) ||
        ((mask & RSIM_QP_MAX_DEST_RD_ATOMIC) &&
         a->max_dest_rd_atomic > s->props.max_rd_atom)) {
        *why = "RDMA READ/atomic depth above CAP_MAX_(INIT_)RD_ATOM";
        return RSIM_STS_LIMIT;
    }
    if (mask & RSIM_QP_AV) {
        return rdma_sim_av_check(s, &a->av, why);
    }
    return RSIM_STS_OK;
}

static void rdma_sim_qp_apply(RdmaSimQp *qp, const struct rsim_qp_attr *a,
                              uint32_t mask)
{
    if (mask & RSIM_QP_ACCESS_FLAGS) {
        qp->access = le32_to_cpu(a->qp_access_flags);
    }
    if (mask & RSIM_QP_PKEY_INDEX) {
        qp->pkey_index = le16_to_cpu(a->pkey_index);
    }
    if (mask & RSIM_QP_PORT) {
        qp->port = a->port_num;
    }
    if (mask & RSIM_QP_QKEY) {
        qp->qkey = le32_to_cpu(a->qkey);
    }
    if (mask & RSIM_QP_AV) {
        qp->av = a->av;
    }
    if (mask & RSIM_QP_PATH_MTU) {
        qp->path_mtu = a->path_mtu;
    }
    if (mask & RSIM_QP_TIMEOUT) {
        qp->timeout = a->timeout;
    }
    if (mask & RSIM_QP_RETRY_CNT) {
        qp->retry_cnt = a->retry_cnt;
    }
    if (mask & RSIM_QP_RNR_RETRY) {
        qp->rnr_retry = a->rnr_retry;
    }
    if (mask & RSIM_QP_RQ_PSN) {
        qp->rq_psn = le32_to_cpu(a->rq_psn);
    }
    if (mask & RSIM_QP_SQ_PSN) {
        qp->sq_psn = le32_to_cpu(a->sq_psn);
    }
    if (mask & RSIM_QP_MAX_QP_RD_ATOMIC) {
        qp->max_rd_atomic = a->max_rd_atomic;
    }
    if (mask & RSIM_QP_MAX_DEST_RD_ATOMIC) {
        qp->max_dest_rd_atomic = a->max_dest_rd_atomic;
    }
    if (mask & RSIM_QP_MIN_RNR_TIMER) {
        qp->min_rnr_timer = a->min_rnr_timer;
    }
    if (mask & RSIM_QP_PATH_MIG_STATE) {
        qp->path_mig_state = a->path_mig_state;
    }
    if (mask & RSIM_QP_DEST_QPN) {
        qp->dest_qpn = le32_to_cpu(a->dest_qp_num);
    }
    if (mask & RSIM_QP_EN_SQD_ASYNC_NOTIFY) {
        qp->en_sqd_async_notify = a->en_sqd_async_notify;
    }
}

/* Entering RESET: empty both rings and forget every attribute. */
static void rdma_sim_qp_reset(RdmaSimState *s, RdmaSimQp *qp)
{
    rdma_sim_xport_free(s, qp);
    qp->sq_cons = 0;
    qp->rq_cons = 0;
    qp->sq_draining = false;
    qp->qkey = qp->rq_psn = qp->sq_psn = qp->dest_qpn = qp->access = 0;
    qp->pkey_index = 0;
    qp->port = 0;
    qp->path_mtu = qp->path_mig_state = 0;
    qp->max_rd_atomic = qp->max_dest_rd_atomic = 0;
    qp->min_rnr_timer = qp->timeout = qp->retry_cnt = qp->rnr_retry = 0;
    qp->en_sqd_async_notify = false;
    memset(&qp->av, 0, sizeof(qp->av));
    if (rdma_sim_ring_write_index(s, &qp->sq, RSIM_QUEUE_PROD_OFFSET, 0) ||
        rdma_sim_ring_write_index(s, &qp->sq, RSIM_QUEUE_CONS_OFFSET, 0) ||
        (qp->srqn == RSIM_NO_SRQ &&
         (rdma_sim_ring_write_index(s, &qp->rq, RSIM_QUEUE_PROD_OFFSET, 0) ||
          rdma_sim_ring_write_index(s, &qp->rq, RSIM_QUEUE_CONS_OFFSET, 0)))) {
        rdma_sim_guest_error(s, "qp", "QP %u rings not accessible on reset",
                             qp->qpn);
    }
}

enum rsim_status rdma_sim_qp_modify(RdmaSimState *s, RdmaSimQp *qp,
                                    const struct rsim_qp_attr *attr,
                                    const char **why)
{
    uint32_t mask = le32_to_cpu(attr->attr_mask);
    unsigned cur = qp->state;
    unsigned next = (mask & RSIM_QP_STATE) ? attr->qp_state : cur;
    unsigned tc = rdma_sim_qp_class(qp);
    const RdmaSimTransition *t;
    enum rsim_status st;

    if (mask & ~RSIM_QP_ATTR_SUPPORTED & ~RSIM_QP_ALT_PATH) {
        *why = "attribute mask has reserved bits";
        return RSIM_STS_RESERVED;
    }
    if (mask & RSIM_QP_ALT_PATH) {
        *why = "alternate paths are not supported";
        return RSIM_STS_UNSUPPORTED;
    }
    if (next > RSIM_QPS_ERR) {
        *why = "no such QP state";
        return RSIM_STS_INVALID;
    }
    if ((mask & RSIM_QP_CUR_STATE) && attr->cur_qp_state != cur) {
        *why = "CUR_STATE does not match the QP's state";
        return RSIM_STS_BAD_STATE;
    }
    t = &rdma_sim_qp_table[cur][next];
    if (!t->valid) {
        *why = "illegal state transition";
        return RSIM_STS_BAD_STATE;
    }
    if ((mask & t->req[tc]) != t->req[tc]) {
        *why = "a required attribute is missing";
        return RSIM_STS_INVALID;
    }
    if (mask & ~(t->req[tc] | t->opt[tc] | RSIM_QP_STATE)) {
        *why = "an attribute not allowed in this transition";
        return RSIM_STS_INVALID;
    }
    st = rdma_sim_qp_check_values(s, attr, mask, why);
    if (st != RSIM_STS_OK) {
        return st;
    }

    /* Everything is valid: apply. */
    rdma_sim_qp_apply(qp, attr, mask);
    trace_rdma_sim_qp_state(qp->qpn, rdma_sim_qp_state_name(cur),
                            rdma_sim_qp_state_name(next), mask);
    if (next == RSIM_QPS_RESET) {
        qp->state = RSIM_QPS_RESET;
        rdma_sim_qp_reset(s, qp);
        return RSIM_STS_OK;
    }
    if (next == RSIM_QPS_ERR) {
        if (cur != RSIM_QPS_ERR) {
            rdma_sim_qp_to_error(s, qp);
        }
        return RSIM_STS_OK;
    }
    qp->state = next;
    if (next == RSIM_QPS_SQD && cur != RSIM_QPS_SQD) {
        qp->sq_draining = true;
    }
    return RSIM_STS_OK;
}

void rdma_sim_qp_query(RdmaSimState *s, RdmaSimQp *qp, struct rsim_qp_attr *a)
{
    memset(a, 0, sizeof(*a));
    a->qp_state = qp->state;
    a->cur_qp_state = qp->state;
    a->path_mtu = qp->path_mtu;
    a->path_mig_state = qp->path_mig_state;
    a->qkey = cpu_to_le32(qp->qkey);
    a->rq_psn = cpu_to_le32(qp->rq_psn);
    a->sq_psn = cpu_to_le32(qp->sq_psn);
    a->dest_qp_num = cpu_to_le32(qp->dest_qpn);
    a->qp_access_flags = cpu_to_le32(qp->access);
    a->pkey_index = cpu_to_le16(qp->pkey_index);
    a->port_num = qp->port;
    a->sq_draining = qp->sq_draining;
    a->max_rd_atomic = qp->max_rd_atomic;
    a->max_dest_rd_atomic = qp->max_dest_rd_atomic;
    a->min_rnr_timer = qp->min_rnr_timer;
    a->timeout = qp->timeout;
    a->retry_cnt = qp->retry_cnt;
    a->rnr_retry = qp->rnr_retry;
    a->en_sqd_async_notify = qp->en_sqd_async_notify;
    a->qp_type = qp->type;
    a->max_send_wr = cpu_to_le32(qp->sq.mask);
    a->max_recv_wr = cpu_to_le32(qp->srqn == RSIM_NO_SRQ ? qp->rq.mask : 0);
    a->max_send_sge = cpu_to_le32(qp->max_send_sge);
    a->max_recv_sge = cpu_to_le32(qp->max_recv_sge);
    a->max_inline_data = cpu_to_le32(qp->max_inline);
    a->av = qp->av;
}

/*
 * The rules every QP meets, however it comes: from CREATE_QP (admin.c) or
 * a migration stream (migration.c) - its type, its PD, CQs and SRQ, its
 * SGEs and inline size, its doorbell page.  The status is CREATE_QP's;
 * why says what was wrong.
 */
enum rsim_status rdma_sim_qp_new_check(RdmaSimState *s, const RdmaSimQp *qp,
                                       const char **why)
{
    if (qp->type != RSIM_QPT_RC && qp->type != RSIM_QPT_UC &&
        qp->type != RSIM_QPT_UD && qp->type != RSIM_QPT_GSI) {
        *why = "QP type not RC, UC, UD or GSI";
        return RSIM_STS_UNSUPPORTED;
    }
    if (!rdma_sim_pd_valid(s, qp->pdn)) {
        *why = "no such PD";
        return RSIM_STS_BAD_HANDLE;
    }
    if (!rdma_sim_cq_lookup(s, qp->send_cqn) ||
        !rdma_sim_cq_lookup(s, qp->recv_cqn)) {
        *why = "no such send or receive CQ";
        return RSIM_STS_BAD_HANDLE;
    }
    if (qp->srqn != RSIM_NO_SRQ && !rdma_sim_srq_lookup(s, qp->srqn)) {
        *why = "no such SRQ";
        return RSIM_STS_BAD_HANDLE;
    }
    if (qp->max_send_sge > s->props.max_sge ||
        qp->max_recv_sge > s->props.max_sge ||
        qp->max_inline > s->props.max_inline) {
        *why = "SGEs or inline size above the caps";
        return RSIM_STS_LIMIT;
    }
    if (qp->db_page >= s->props.db_pages) {
        *why = "doorbell page beyond DB_PAGES";
        return RSIM_STS_INVALID;
    }
    return RSIM_STS_OK;
}

/*
 * A QP built by CREATE_QP or read from a migration stream joins the table
 * and references its PD, CQs and SRQ; rdma_sim_qp_destroy() undoes it.
 */
void rdma_sim_qp_attach(RdmaSimState *s, RdmaSimQp *qp)
{
    RdmaSimSrq *srq = qp->srqn != RSIM_NO_SRQ ?
                      rdma_sim_srq_lookup(s, qp->srqn) : NULL;

    s->pds[qp->pdn].refs++;
    rdma_sim_cq_lookup(s, qp->send_cqn)->refs++;
    rdma_sim_cq_lookup(s, qp->recv_cqn)->refs++;
    if (srq) {
        srq->refs++;
    }
    s->qps[qp->qpn] = qp;
}

void rdma_sim_qp_destroy(RdmaSimState *s, RdmaSimQp *qp)
{
    RdmaSimCq *scq = rdma_sim_cq_lookup(s, qp->send_cqn);
    RdmaSimCq *rcq = rdma_sim_cq_lookup(s, qp->recv_cqn);
    RdmaSimSrq *srq = rdma_sim_srq_lookup(s, qp->srqn);

    trace_rdma_sim_qp_destroy(qp->qpn);
    rdma_sim_xport_free(s, qp);
    if (scq) {
        scq->refs--;
    }
    if (rcq) {
        rcq->refs--;
    }
    if (srq && qp->srqn != RSIM_NO_SRQ) {
        srq->refs--;
    }
    s->pds[qp->pdn].refs--;
    s->qps[qp->qpn] = NULL;
    rdma_sim_ring_free(s, &qp->sq);
    rdma_sim_ring_free(s, &qp->rq);
    rdma_sim_host_mem_put(s, qp->xport_mem);
    g_free(qp);
}

/*
 * Flushing (QP in ERR)
 */

uint32_t rdma_sim_wc_opcode(uint32_t wr_opcode)
{
    switch (wr_opcode) {
    case RSIM_WR_RDMA_WRITE:
    case RSIM_WR_RDMA_WRITE_WITH_IMM:
        return RSIM_WC_RDMA_WRITE;
    case RSIM_WR_RDMA_READ:
        return RSIM_WC_RDMA_READ;
    case RSIM_WR_ATOMIC_WRITE:
        return RSIM_WC_ATOMIC_WRITE;
    case RSIM_WR_ATOMIC_CMP_AND_SWP:
        return RSIM_WC_COMP_SWAP;
    case RSIM_WR_ATOMIC_FETCH_AND_ADD:
        return RSIM_WC_FETCH_ADD;
    case RSIM_WR_LOCAL_INV:
        return RSIM_WC_LOCAL_INV;
    case RSIM_WR_REG_MR:
        return RSIM_WC_REG_MR;
    default:
        return RSIM_WC_SEND;
    }
}

/*
 * Complete the WQEs of a ring from *cons up to the producer index with
 * WR_FLUSH_ERR.  Stops early if the CQ is full; the rest is flushed on the
 * next doorbell or when the transport retries.
 */
static void rdma_sim_flush_ring(RdmaSimState *s, RdmaSimQp *qp,
                                RdmaSimRing *ring, uint32_t *cons,
                                RdmaSimCq *cq, bool send)
{
    struct rsim_cqe cqe;
    uint32_t prod;
    struct {
        uint64_t wr_id;
        uint32_t reserved;
        uint32_t opcode;
    } head;

    if (!cq ||
        rdma_sim_ring_read_index(s, ring, RSIM_QUEUE_PROD_OFFSET, &prod)) {
        return;
    }
    while (*cons != prod) {
        if (rdma_sim_ring_read_elem(s, ring, *cons, &head, sizeof(head))) {
            rdma_sim_guest_error(s, "qp", "QP %u ring not accessible", qp->qpn);
            return;
        }
        memset(&cqe, 0, sizeof(cqe));
        cqe.wr_id = head.wr_id;
        cqe.status = cpu_to_le32(RSIM_WC_WR_FLUSH_ERR);
        cqe.opcode = cpu_to_le32(send ? rdma_sim_wc_opcode(le32_to_cpu(
                                             head.opcode)) : RSIM_WC_RECV);
        cqe.qp_num = cpu_to_le32(qp->qpn);
        cqe.port_num = 1;
        if (!rdma_sim_cq_post(s, cq, &cqe, false)) {
            return;
        }
        *cons = (*cons + 1) & ring->mask;
        if (rdma_sim_ring_write_index(s, ring, RSIM_QUEUE_CONS_OFFSET, *cons)) {
            return;
        }
    }
}

void rdma_sim_qp_flush(RdmaSimState *s, RdmaSimQp *qp)
{
    rdma_sim_flush_ring(s, qp, &qp->sq, &qp->sq_cons,
                        rdma_sim_cq_lookup(s, qp->send_cqn), true);
    if (qp->srqn == RSIM_NO_SRQ) {
        rdma_sim_flush_ring(s, qp, &qp->rq, &qp->rq_cons,
                            rdma_sim_cq_lookup(s, qp->recv_cqn), false);
    }
}

void rdma_sim_qp_to_error(RdmaSimState *s, RdmaSimQp *qp)
{
    if (qp->state == RSIM_QPS_ERR) {
        return;
    }
    trace_rdma_sim_qp_error(qp->qpn, rdma_sim_qp_state_name(qp->state));
    qp->state = RSIM_QPS_ERR;
    qp->sq_draining = false;
    /* Completions for WQEs in flight come first, then the flush. */
    rdma_sim_xport_error(s, qp);
    rdma_sim_qp_flush(s, qp);
    if (qp->srqn != RSIM_NO_SRQ) {
        rdma_sim_aeq_post(s, RSIM_EV_QP_LAST_WQE, qp->qpn, 0);
    }
}

/* The QP fails: report ev (if not 0) as an async event, and enter ERR. */
void rdma_sim_qp_fail(RdmaSimState *s, RdmaSimQp *qp, enum rsim_event_type ev)
{
    if (ev) {
        rdma_sim_aeq_post(s, ev, qp->qpn, 0);
    }
    rdma_sim_qp_to_error(s, qp);
}

/*
 * Send WQEs in ERR are flushed (true); otherwise they are the transport
 * engine's (false: the caller hands them over).
 */
bool rdma_sim_qp_sq_doorbell(RdmaSimState *s, RdmaSimQp *qp)
{
    if (qp->state == RSIM_QPS_ERR) {
        rdma_sim_qp_flush(s, qp);
        return true;
    }
    return false;
}

/* Receive WQEs are read when a message arrives; in ERR they are flushed. */
void rdma_sim_qp_rq_doorbell(RdmaSimState *s, RdmaSimQp *qp)
{
    if (qp->state == RSIM_QPS_ERR) {
        rdma_sim_qp_flush(s, qp);
    }
}
