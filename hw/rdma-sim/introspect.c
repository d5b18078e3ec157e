/*
 * rdma-sim: the device's objects and counters as QOM properties
 *
 * A bring-up engineer with a real NIC reads its state through a debug
 * port; here the QEMU monitor is that port.  Read-only properties of the
 * device return what the device itself knows, as JSON through QMP's
 * qom-get (scripts/rdma-sim-top shows them live):
 *
 *   port      link state, MAC, MTU, host memory used, loopback queue,
 *             the transmit budget (READ responses' part as of their last
 *             transmission or wait) and round trip
 *   counters  every QUERY_STATS counter, by name
 *   pds       protection domains: number and references
 *   qps       queue pairs: type, state, PSNs, rings, outstanding work
 *   cqs       completion queues: EQ, ring, producer index, arming
 *   srqs      shared receive queues
 *   mrs       the MR/stag table: keys, PD, access, range, page list
 *   eqs       completion event queues: vector, indexes, arming
 *
 * Nothing here reads guest memory: the producer indexes the driver keeps
 * in its rings are not shown, only the device's own consumer indexes.
 * The lists are as long as the objects the guest created, which the
 * device's limits (max-qp, max-mr, ...) bound; only the host's monitor
 * asks for them.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "device.h"
#include "transport.h"

/* The visitor calls for one value: output visitors take a pointer */
static bool rdma_sim_v_u32(Visitor *v, const char *name, uint32_t val,
                           Error **errp)
{
    return visit_type_uint32(v, name, &val, errp);
}

static bool rdma_sim_v_u64(Visitor *v, const char *name, uint64_t val,
                           Error **errp)
{
    return visit_type_uint64(v, name, &val, errp);
}

static bool rdma_sim_v_bool(Visitor *v, const char *name, bool val,
                            Error **errp)
{
    return visit_type_bool(v, name, &val, errp);
}

static bool rdma_sim_v_str(Visitor *v, const char *name, const char *val,
                           Error **errp)
{
    char *str = (char *)val;

    return visit_type_str(v, name, &str, errp);
}

static bool rdma_sim_v_end_struct(Visitor *v, Error **errp)
{
    bool ok = visit_check_struct(v, errp);

    visit_end_struct(v, NULL);
    return ok;
}

static bool rdma_sim_v_end_list(Visitor *v, Error **errp)
{
    bool ok = visit_check_list(v, errp);

    visit_end_list(v, NULL);
    return ok;
}

static const char *rdma_sim_qp_type_name(unsigned type)
{
    switch (type) {
    case RSIM_QPT_GSI:
        return "GSI";
    case RSIM_QPT_RC:
        return "RC";
    case RSIM_QPT_UC:
        return "UC";
    case RSIM_QPT_UD:
        return "UD";
    }
    return "?";
}

static const char *rdma_sim_cq_arm_name(unsigned arm)
{
    static const char *const names[] = { "none", "next", "solicited" };

    return arm < ARRAY_SIZE(names) ? names[arm] : "?";
}

/* IB access flags, as ibv_devinfo and rdma-core spell them */
static char *rdma_sim_access_str(uint32_t access)
{
    static const struct {
        uint32_t bit;
        const char *name;
    } flags[] = {
        { RSIM_ACCESS_LOCAL_WRITE, "LOCAL_WRITE" },
        { RSIM_ACCESS_REMOTE_WRITE, "REMOTE_WRITE" },
        { RSIM_ACCESS_REMOTE_READ, "REMOTE_READ" },
        { RSIM_ACCESS_REMOTE_ATOMIC, "REMOTE_ATOMIC" },
    };
    GString *str = g_string_new(NULL);

    for (size_t i = 0; i < ARRAY_SIZE(flags); i++) {
        if (access & flags[i].bit) {
            g_string_append_printf(str, "%s%s", str->len ? "|" : "",
                                   flags[i].name);
        }
    }
    return g_string_free(str, false);
}

static bool rdma_sim_v_ring(Visitor *v, const char *name,
                            const RdmaSimRing *ring, uint32_t cons,
                            Error **errp)
{
    return visit_start_struct(v, name, NULL, 0, errp) &&
           rdma_sim_v_u32(v, "depth", ring->depth, errp) &&
           rdma_sim_v_u32(v, "elem-size", 1u << ring->log2_elem, errp) &&
           rdma_sim_v_u32(v, "level", ring->pl.level, errp) &&
           rdma_sim_v_u32(v, "device-index", cons, errp) &&
           rdma_sim_v_end_struct(v, errp);
}

static void rdma_sim_get_port(Object *obj, Visitor *v, const char *name,
                              void *opaque, Error **errp)
{
    RdmaSimState *s = RDMA_SIM(obj);
    g_autofree char *mac = qemu_mac_strdup_printf(s->mac);

    if (visit_start_struct(v, name, NULL, 0, errp) &&
        rdma_sim_v_bool(v, "active", s->port_active, errp) &&
        rdma_sim_v_bool(v, "driver-ready", rdma_sim_ready(s), errp) &&
        rdma_sim_v_bool(v, "fatal", rdma_sim_stopped(s), errp) &&
        rdma_sim_v_str(v, "mac", mac, errp) &&
        rdma_sim_v_u32(v, "eth-mtu", s->eth_mtu, errp) &&
        rdma_sim_v_u64(v, "host-mem", s->host_mem, errp) &&
        rdma_sim_v_u64(v, "host-mem-max", RDMA_SIM_HOST_MEM_MAX, errp) &&
        rdma_sim_v_u32(v, "loopback-queued",
                       g_queue_get_length(&s->loop_frames), errp) &&
        rdma_sim_v_u64(v, "tx-inflight", s->tx_inflight, errp) &&
        rdma_sim_v_u64(v, "tx-budget", s->tx_cwnd, errp) &&
        rdma_sim_v_u64(v, "tx-read-responses", s->tx_resp_inflight, errp) &&
        rdma_sim_v_u64(v, "srtt-us", s->tx_srtt_ns / 1000, errp) &&
        rdma_sim_v_u64(v, "read-pace-rtt-us", s->tx_pace_rtt_ns / 1000,
                       errp)) {
        rdma_sim_v_end_struct(v, errp);
    }
}

static void rdma_sim_get_counters(Object *obj, Visitor *v, const char *name,
                                  void *opaque, Error **errp)
{
#define RSIM_STAT_NAME(n, str) str
    static const char *const names[] = RSIM_STATS_LIST(RSIM_STAT_NAME);
#undef RSIM_STAT_NAME
    RdmaSimState *s = RDMA_SIM(obj);

    QEMU_BUILD_BUG_ON(ARRAY_SIZE(names) != RSIM_STAT_COUNT);
    if (!visit_start_struct(v, name, NULL, 0, errp)) {
        return;
    }
    for (size_t i = 0; i < RSIM_STAT_COUNT; i++) {
        if (!rdma_sim_v_u64(v, names[i], s->stats[i], errp)) {
            return;
        }
    }
    rdma_sim_v_end_struct(v, errp);
}

/*
 * A list property: table slots 0 .. n - 1, each visited by one(), which
 * skips an empty slot (returning true) and fails only if the visitor does.
 */
typedef bool RdmaSimVisitSlot(Visitor *v, RdmaSimState *s, uint32_t i,
                              Error **errp);

static void rdma_sim_v_list(Visitor *v, const char *name, RdmaSimState *s,
                            uint32_t n, RdmaSimVisitSlot *one, Error **errp)
{
    if (!visit_start_list(v, name, NULL, 0, errp)) {
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!one(v, s, i, errp)) {
            return;
        }
    }
    rdma_sim_v_end_list(v, errp);
}

static bool rdma_sim_v_pd(Visitor *v, RdmaSimState *s, uint32_t pdn,
                          Error **errp)
{
    if (!s->pds[pdn].valid) {
        return true;
    }
    return visit_start_struct(v, NULL, NULL, 0, errp) &&
           rdma_sim_v_u32(v, "pdn", pdn, errp) &&
           rdma_sim_v_u32(v, "refs", s->pds[pdn].refs, errp) &&
           rdma_sim_v_end_struct(v, errp);
}

/* The requester's and responder's progress: what is outstanding */
static bool rdma_sim_v_xport(Visitor *v, const RdmaSimQp *qp, Error **errp)
{
    const RdmaSimXport *x = qp->x;

    if (!x) {
        return true;
    }
    return rdma_sim_v_u32(v, "path-mtu", x->mtu, errp) &&
           rdma_sim_v_u32(v, "next-psn", x->next_psn, errp) &&
           rdma_sim_v_u32(v, "oldest-unacked-psn", x->comp_psn, errp) &&
           rdma_sim_v_u32(v, "unacked-psns",
                          (x->next_psn - x->comp_psn) & ROCE_PSN_MASK,
                          errp) &&
           rdma_sim_v_u32(v, "wqes-in-flight",
                          (x->req_idx - qp->sq_cons) & qp->sq.mask, errp) &&
           rdma_sim_v_u32(v, "rd-atomic-out", x->rd_atomic_out, errp) &&
           rdma_sim_v_u32(v, "retry-left", x->retry_left, errp) &&
           rdma_sim_v_u32(v, "rnr-retry-left", x->rnr_left, errp) &&
           rdma_sim_v_bool(v, "rnr-wait", x->rnr_wait, errp) &&
           rdma_sim_v_u64(v, "srtt-us", x->srtt_ns / 1000, errp) &&
           rdma_sim_v_u32(v, "expected-psn", x->epsn, errp) &&
           rdma_sim_v_u32(v, "msn", x->msn, errp) &&
           rdma_sim_v_u32(v, "read-responses-queued", x->rd_count, errp);
}

static bool rdma_sim_v_qp(Visitor *v, RdmaSimState *s, uint32_t qpn,
                          Error **errp)
{
    const RdmaSimQp *qp = s->qps[qpn];
    bool srq;

    if (!qp) {
        return true;
    }
    srq = qp->srqn != RSIM_NO_SRQ;
    return visit_start_struct(v, NULL, NULL, 0, errp) &&
           rdma_sim_v_u32(v, "qpn", qp->qpn, errp) &&
           rdma_sim_v_str(v, "type", rdma_sim_qp_type_name(qp->type), errp) &&
           rdma_sim_v_str(v, "state", rdma_sim_qp_state_name(qp->state),
                          errp) &&
           rdma_sim_v_u32(v, "pdn", qp->pdn, errp) &&
           rdma_sim_v_u32(v, "send-cqn", qp->send_cqn, errp) &&
           rdma_sim_v_u32(v, "recv-cqn", qp->recv_cqn, errp) &&
           (!srq || rdma_sim_v_u32(v, "srqn", qp->srqn, errp)) &&
           rdma_sim_v_u32(v, "dest-qpn", qp->dest_qpn, errp) &&
           rdma_sim_v_u32(v, "sq-psn", qp->sq_psn, errp) &&
           rdma_sim_v_u32(v, "rq-psn", qp->rq_psn, errp) &&
           rdma_sim_v_u32(v, "qkey", qp->qkey, errp) &&
           rdma_sim_v_u32(v, "timeout", qp->timeout, errp) &&
           rdma_sim_v_u32(v, "retry-cnt", qp->retry_cnt, errp) &&
           rdma_sim_v_u32(v, "rnr-retry", qp->rnr_retry, errp) &&
           rdma_sim_v_ring(v, "sq", &qp->sq, qp->sq_cons, errp) &&
           (srq || rdma_sim_v_ring(v, "rq", &qp->rq, qp->rq_cons, errp)) &&
           rdma_sim_v_xport(v, qp, errp) &&
           rdma_sim_v_end_struct(v, errp);
}

static bool rdma_sim_v_cq(Visitor *v, RdmaSimState *s, uint32_t i,
                          Error **errp)
{
    const RdmaSimCq *cq = s->cqs[i];

    if (!cq) {
        return true;
    }
    return visit_start_struct(v, NULL, NULL, 0, errp) &&
           rdma_sim_v_u32(v, "cqn", cq->cqn, errp) &&
           rdma_sim_v_u32(v, "eqn", cq->eqn, errp) &&
           rdma_sim_v_u32(v, "refs", cq->refs, errp) &&
           rdma_sim_v_str(v, "arm", rdma_sim_cq_arm_name(cq->arm), errp) &&
           rdma_sim_v_bool(v, "overflowed", cq->overflow_reported, errp) &&
           rdma_sim_v_ring(v, "ring", &cq->ring, cq->prod, errp) &&
           rdma_sim_v_end_struct(v, errp);
}

static bool rdma_sim_v_srq(Visitor *v, RdmaSimState *s, uint32_t i,
                           Error **errp)
{
    const RdmaSimSrq *srq = s->srqs[i];

    if (!srq) {
        return true;
    }
    return visit_start_struct(v, NULL, NULL, 0, errp) &&
           rdma_sim_v_u32(v, "srqn", srq->srqn, errp) &&
           rdma_sim_v_u32(v, "pdn", srq->pdn, errp) &&
           rdma_sim_v_u32(v, "refs", srq->refs, errp) &&
           rdma_sim_v_u32(v, "limit", srq->limit, errp) &&
           rdma_sim_v_ring(v, "ring", &srq->ring, srq->cons, errp) &&
           rdma_sim_v_end_struct(v, errp);
}

static bool rdma_sim_v_mr(Visitor *v, RdmaSimState *s, uint32_t index,
                          Error **errp)
{
    const RdmaSimMr *mr = &s->mrs[index];
    g_autofree char *access = NULL;
    const char *kind = mr->phys ? "dma" : mr->fast_reg ? "fast_reg" : "user";

    if (mr->state == RSIM_MR_STATE_INVALID) {
        return true;
    }
    access = rdma_sim_access_str(mr->access);
    return visit_start_struct(v, NULL, NULL, 0, errp) &&
           rdma_sim_v_u32(v, "index", index, errp) &&
           rdma_sim_v_u32(v, "key", mr->key, errp) &&
           rdma_sim_v_str(v, "kind", kind, errp) &&
           rdma_sim_v_bool(v, "valid", mr->state == RSIM_MR_STATE_VALID,
                           errp) &&
           rdma_sim_v_u32(v, "pdn", mr->pdn, errp) &&
           rdma_sim_v_str(v, "access", access, errp) &&
           rdma_sim_v_u64(v, "iova", mr->iova, errp) &&
           rdma_sim_v_u64(v, "length", mr->length, errp) &&
           /* a DMA MR has no page list */
           (mr->phys ||
            (rdma_sim_v_u32(v, "level", mr->pl.level, errp) &&
             rdma_sim_v_u32(v, "pages", mr->pl.npages, errp) &&
             rdma_sim_v_u32(v, "page-shift", mr->pl.page_shift, errp))) &&
           rdma_sim_v_end_struct(v, errp);
}

static bool rdma_sim_v_eq(Visitor *v, RdmaSimState *s, uint32_t eqn,
                          Error **errp)
{
    const RdmaSimEq *eq;

    /* vector 0 is the admin queues': there is one EQ fewer than vectors */
    if (eqn >= rdma_sim_num_eqs(s) || !s->eqs[eqn].valid) {
        return true;
    }
    eq = &s->eqs[eqn];
    return visit_start_struct(v, NULL, NULL, 0, errp) &&
           rdma_sim_v_u32(v, "eqn", eqn, errp) &&
           rdma_sim_v_u32(v, "vector", eq->vector, errp) &&
           rdma_sim_v_u32(v, "depth", eq->depth, errp) &&
           rdma_sim_v_u32(v, "device-index", eq->tail, errp) &&
           rdma_sim_v_u32(v, "driver-index", eq->head, errp) &&
           rdma_sim_v_bool(v, "armed", eq->armed, errp) &&
           rdma_sim_v_u32(v, "refs", eq->refs, errp) &&
           rdma_sim_v_end_struct(v, errp);
}

/* A list property: its slot visitor and the property that sizes the table */
typedef struct RdmaSimListProp {
    RdmaSimVisitSlot *one;
    size_t max_offset;          /* in RdmaSimProps */
} RdmaSimListProp;

static void rdma_sim_get_list(Object *obj, Visitor *v, const char *name,
                              void *opaque, Error **errp)
{
    RdmaSimState *s = RDMA_SIM(obj);
    const RdmaSimListProp *lp = opaque;
    uint32_t n = *(uint32_t *)((uint8_t *)&s->props + lp->max_offset);

    rdma_sim_v_list(v, name, s, n, lp->one, errp);
}

#define RSIM_LIST(one, max) { one, offsetof(RdmaSimProps, max) }

void rdma_sim_introspect_class_init(ObjectClass *klass)
{
    static const struct {
        const char *name, *type, *desc;
        ObjectPropertyAccessor *get;
        RdmaSimListProp list;           /* rdma_sim_get_list's opaque */
    } props[] = {
        { "port", "RdmaSimPort", "link, MAC, MTU, host memory",
          rdma_sim_get_port },
        { "counters", "RdmaSimCounters", "the QUERY_STATS counters by name",
          rdma_sim_get_counters },
        { "pds", "RdmaSimPdList", "protection domains", rdma_sim_get_list,
          RSIM_LIST(rdma_sim_v_pd, max_pd) },
        { "qps", "RdmaSimQpList", "queue pairs: state, PSNs, work in flight",
          rdma_sim_get_list, RSIM_LIST(rdma_sim_v_qp, max_qp) },
        { "cqs", "RdmaSimCqList", "completion queues", rdma_sim_get_list,
          RSIM_LIST(rdma_sim_v_cq, max_cq) },
        { "srqs", "RdmaSimSrqList", "shared receive queues",
          rdma_sim_get_list, RSIM_LIST(rdma_sim_v_srq, max_srq) },
        { "mrs", "RdmaSimMrList", "memory regions and stags",
          rdma_sim_get_list, RSIM_LIST(rdma_sim_v_mr, max_mr) },
        /* one slot per MSI-X vector: rdma_sim_v_eq skips the last */
        { "eqs", "RdmaSimEqList", "completion event queues",
          rdma_sim_get_list, RSIM_LIST(rdma_sim_v_eq, msix_vectors) },
    };

    for (size_t i = 0; i < ARRAY_SIZE(props); i++) {
        object_class_property_add(klass, props[i].name, props[i].type,
                                  props[i].get, NULL, NULL,
                                  (void *)&props[i].list);
        object_class_property_set_description(klass, props[i].name,
                                              props[i].desc);
    }
}
