/*
 * rdma-sim: the device's objects and counters, read out
 *
 * A bring-up engineer with a real NIC reads its state through a debug
 * port; here the QEMU monitor is that port, or rdma-sim-server's control
 * socket.  Read-only properties of the device return what the device
 * itself knows, as JSON: through QMP's qom-get in QEMU (QOM properties,
 * introspect-qom.c), through the control socket's small QMP out of
 * process (server/control.c); scripts/rdma-sim-top shows them live.  This
 * file walks the state into an emitter (introspect.h) and gives the
 * emitter of JSON text.  The properties:
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
 * or control socket asks for them.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "platform.h"
#include "device.h"
#include "introspect.h"
#include "transport.h"

/* One value or bracket through the emitter */
static bool rdma_sim_e_u32(RdmaSimEmitter *e, const char *name, uint32_t val)
{
    return e->ops->u32(e, name, val);
}

static bool rdma_sim_e_u64(RdmaSimEmitter *e, const char *name, uint64_t val)
{
    return e->ops->u64(e, name, val);
}

static bool rdma_sim_e_bool(RdmaSimEmitter *e, const char *name, bool val)
{
    return e->ops->boolean(e, name, val);
}

static bool rdma_sim_e_str(RdmaSimEmitter *e, const char *name,
                           const char *val)
{
    return e->ops->str(e, name, val);
}

static bool rdma_sim_e_end_struct(RdmaSimEmitter *e)
{
    return e->ops->end_struct(e);
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

static bool rdma_sim_e_ring(RdmaSimEmitter *e, const char *name,
                            const RdmaSimRing *ring, uint32_t cons)
{
    return e->ops->start_struct(e, name) &&
           rdma_sim_e_u32(e, "depth", ring->depth) &&
           rdma_sim_e_u32(e, "elem-size", 1u << ring->log2_elem) &&
           rdma_sim_e_u32(e, "level", ring->pl.level) &&
           rdma_sim_e_u32(e, "device-index", cons) &&
           rdma_sim_e_end_struct(e);
}

/* A MAC as QEMU's qemu_mac_strdup_printf() spells it */
static char *rdma_sim_mac_str(const uint8_t *mac)
{
    return g_strdup_printf("%.2x:%.2x:%.2x:%.2x:%.2x:%.2x", mac[0], mac[1],
                           mac[2], mac[3], mac[4], mac[5]);
}

static bool rdma_sim_e_port(RdmaSimEmitter *e, RdmaSimState *s,
                            const char *name)
{
    g_autofree char *mac = rdma_sim_mac_str(s->mac);

    return e->ops->start_struct(e, name) &&
           rdma_sim_e_bool(e, "active", s->port_active) &&
           rdma_sim_e_bool(e, "driver-ready", rdma_sim_ready(s)) &&
           rdma_sim_e_bool(e, "fatal", rdma_sim_stopped(s)) &&
           rdma_sim_e_str(e, "mac", mac) &&
           rdma_sim_e_u32(e, "eth-mtu", s->eth_mtu) &&
           rdma_sim_e_u64(e, "host-mem", s->host_mem) &&
           rdma_sim_e_u64(e, "host-mem-max", RDMA_SIM_HOST_MEM_MAX) &&
           rdma_sim_e_u32(e, "loopback-queued",
                          g_queue_get_length(&s->loop_frames)) &&
           rdma_sim_e_u64(e, "tx-inflight", s->tx_inflight) &&
           rdma_sim_e_u64(e, "tx-budget", s->tx_cwnd) &&
           rdma_sim_e_u64(e, "tx-read-responses", s->tx_resp_inflight) &&
           rdma_sim_e_u64(e, "srtt-us", s->tx_srtt_ns / 1000) &&
           rdma_sim_e_u64(e, "read-pace-rtt-us", s->tx_pace_rtt_ns / 1000) &&
           rdma_sim_e_end_struct(e);
}

static bool rdma_sim_e_counters(RdmaSimEmitter *e, RdmaSimState *s,
                                const char *name)
{
#define RSIM_STAT_NAME(n, str) str
    static const char *const names[] = RSIM_STATS_LIST(RSIM_STAT_NAME);
#undef RSIM_STAT_NAME

    QEMU_BUILD_BUG_ON(ARRAY_SIZE(names) != RSIM_STAT_COUNT);
    if (!e->ops->start_struct(e, name)) {
        return false;
    }
    for (size_t i = 0; i < RSIM_STAT_COUNT; i++) {
        if (!rdma_sim_e_u64(e, names[i], s->stats[i])) {
            return false;
        }
    }
    return rdma_sim_e_end_struct(e);
}

/*
 * A list property's element: table slot i, which one() skips when empty
 * (returning true); it fails only if the emitter does.
 */
typedef bool RdmaSimEmitSlot(RdmaSimEmitter *e, RdmaSimState *s, uint32_t i);

static bool rdma_sim_e_pd(RdmaSimEmitter *e, RdmaSimState *s, uint32_t pdn)
{
    if (!s->pds[pdn].valid) {
        return true;
    }
    return e->ops->start_struct(e, NULL) &&
           rdma_sim_e_u32(e, "pdn", pdn) &&
           rdma_sim_e_u32(e, "refs", s->pds[pdn].refs) &&
           rdma_sim_e_end_struct(e);
}

/* The requester's and responder's progress: what is outstanding */
static bool rdma_sim_e_xport(RdmaSimEmitter *e, const RdmaSimQp *qp)
{
    const RdmaSimXport *x = qp->x;

    if (!x) {
        return true;
    }
    return rdma_sim_e_u32(e, "path-mtu", x->mtu) &&
           rdma_sim_e_u32(e, "next-psn", x->next_psn) &&
           rdma_sim_e_u32(e, "oldest-unacked-psn", x->comp_psn) &&
           rdma_sim_e_u32(e, "unacked-psns",
                          (x->next_psn - x->comp_psn) & ROCE_PSN_MASK) &&
           rdma_sim_e_u32(e, "wqes-in-flight",
                          (x->req_idx - qp->sq_cons) & qp->sq.mask) &&
           rdma_sim_e_u32(e, "rd-atomic-out", x->rd_atomic_out) &&
           rdma_sim_e_u32(e, "retry-left", x->retry_left) &&
           rdma_sim_e_u32(e, "rnr-retry-left", x->rnr_left) &&
           rdma_sim_e_bool(e, "rnr-wait", x->rnr_wait) &&
           rdma_sim_e_u64(e, "srtt-us", x->srtt_ns / 1000) &&
           rdma_sim_e_u32(e, "expected-psn", x->epsn) &&
           rdma_sim_e_u32(e, "msn", x->msn) &&
           rdma_sim_e_u32(e, "read-responses-queued", x->rd_count);
}

static bool rdma_sim_e_qp(RdmaSimEmitter *e, RdmaSimState *s, uint32_t qpn)
{
    const RdmaSimQp *qp = s->qps[qpn];
    bool srq;

    if (!qp) {
        return true;
    }
    srq = qp->srqn != RSIM_NO_SRQ;
    return e->ops->start_struct(e, NULL) &&
           rdma_sim_e_u32(e, "qpn", qp->qpn) &&
           rdma_sim_e_str(e, "type", rdma_sim_qp_type_name(qp->type)) &&
           rdma_sim_e_str(e, "state", rdma_sim_qp_state_name(qp->state)) &&
           rdma_sim_e_u32(e, "pdn", qp->pdn) &&
           rdma_sim_e_u32(e, "send-cqn", qp->send_cqn) &&
           rdma_sim_e_u32(e, "recv-cqn", qp->recv_cqn) &&
           (!srq || rdma_sim_e_u32(e, "srqn", qp->srqn)) &&
           rdma_sim_e_u32(e, "dest-qpn", qp->dest_qpn) &&
           rdma_sim_e_u32(e, "sq-psn", qp->sq_psn) &&
           rdma_sim_e_u32(e, "rq-psn", qp->rq_psn) &&
           rdma_sim_e_u32(e, "qkey", qp->qkey) &&
           rdma_sim_e_u32(e, "timeout", qp->timeout) &&
           rdma_sim_e_u32(e, "retry-cnt", qp->retry_cnt) &&
           rdma_sim_e_u32(e, "rnr-retry", qp->rnr_retry) &&
           rdma_sim_e_ring(e, "sq", &qp->sq, qp->sq_cons) &&
           (srq || rdma_sim_e_ring(e, "rq", &qp->rq, qp->rq_cons)) &&
           rdma_sim_e_xport(e, qp) &&
           rdma_sim_e_end_struct(e);
}

static bool rdma_sim_e_cq(RdmaSimEmitter *e, RdmaSimState *s, uint32_t i)
{
    const RdmaSimCq *cq = s->cqs[i];

    if (!cq) {
        return true;
    }
    return e->ops->start_struct(e, NULL) &&
           rdma_sim_e_u32(e, "cqn", cq->cqn) &&
           rdma_sim_e_u32(e, "eqn", cq->eqn) &&
           rdma_sim_e_u32(e, "refs", cq->refs) &&
           rdma_sim_e_str(e, "arm", rdma_sim_cq_arm_name(cq->arm)) &&
           rdma_sim_e_bool(e, "overflowed", cq->overflow_reported) &&
           rdma_sim_e_ring(e, "ring", &cq->ring, cq->prod) &&
           rdma_sim_e_end_struct(e);
}

static bool rdma_sim_e_srq(RdmaSimEmitter *e, RdmaSimState *s, uint32_t i)
{
    const RdmaSimSrq *srq = s->srqs[i];

    if (!srq) {
        return true;
    }
    return e->ops->start_struct(e, NULL) &&
           rdma_sim_e_u32(e, "srqn", srq->srqn) &&
           rdma_sim_e_u32(e, "pdn", srq->pdn) &&
           rdma_sim_e_u32(e, "refs", srq->refs) &&
           rdma_sim_e_u32(e, "limit", srq->limit) &&
           rdma_sim_e_ring(e, "ring", &srq->ring, srq->cons) &&
           rdma_sim_e_end_struct(e);
}

static bool rdma_sim_e_mr(RdmaSimEmitter *e, RdmaSimState *s, uint32_t index)
{
    const RdmaSimMr *mr = &s->mrs[index];
    g_autofree char *access = NULL;
    const char *kind = mr->phys ? "dma" : mr->fast_reg ? "fast_reg" : "user";

    if (mr->state == RSIM_MR_STATE_INVALID) {
        return true;
    }
    access = rdma_sim_access_str(mr->access);
    return e->ops->start_struct(e, NULL) &&
           rdma_sim_e_u32(e, "index", index) &&
           rdma_sim_e_u32(e, "key", mr->key) &&
           rdma_sim_e_str(e, "kind", kind) &&
           rdma_sim_e_bool(e, "valid", mr->state == RSIM_MR_STATE_VALID) &&
           rdma_sim_e_u32(e, "pdn", mr->pdn) &&
           rdma_sim_e_str(e, "access", access) &&
           rdma_sim_e_u64(e, "iova", mr->iova) &&
           rdma_sim_e_u64(e, "length", mr->length) &&
           /* a DMA MR has no page list */
           (mr->phys ||
            (rdma_sim_e_u32(e, "level", mr->pl.level) &&
             rdma_sim_e_u32(e, "pages", mr->pl.npages) &&
             rdma_sim_e_u32(e, "page-shift", mr->pl.page_shift))) &&
           rdma_sim_e_end_struct(e);
}

static bool rdma_sim_e_eq(RdmaSimEmitter *e, RdmaSimState *s, uint32_t eqn)
{
    const RdmaSimEq *eq;

    /* vector 0 is the admin queues': there is one EQ fewer than vectors */
    if (eqn >= rdma_sim_num_eqs(s) || !s->eqs[eqn].valid) {
        return true;
    }
    eq = &s->eqs[eqn];
    return e->ops->start_struct(e, NULL) &&
           rdma_sim_e_u32(e, "eqn", eqn) &&
           rdma_sim_e_u32(e, "vector", eq->vector) &&
           rdma_sim_e_u32(e, "depth", eq->depth) &&
           rdma_sim_e_u32(e, "device-index", eq->tail) &&
           rdma_sim_e_u32(e, "driver-index", eq->head) &&
           rdma_sim_e_bool(e, "armed", eq->armed) &&
           rdma_sim_e_u32(e, "refs", eq->refs) &&
           rdma_sim_e_end_struct(e);
}

/*
 * The properties: port and counters one struct each, the others a list of
 * table slots 0 .. n - 1, n the property at max_offset in RdmaSimProps
 */
typedef struct RdmaSimListProp {
    RdmaSimEmitSlot *slot;
    size_t max_offset;          /* in RdmaSimProps */
} RdmaSimListProp;

#define RSIM_LIST(slot, max) { slot, offsetof(RdmaSimProps, max) }

static const struct {
    const char *name, *type, *desc;
    bool (*one)(RdmaSimEmitter *e, RdmaSimState *s, const char *name);
    RdmaSimListProp list;       /* if not one */
} rdma_sim_introspect_props[] = {
    { "port", "RdmaSimPort", "link, MAC, MTU, host memory",
      rdma_sim_e_port },
    { "counters", "RdmaSimCounters", "the QUERY_STATS counters by name",
      rdma_sim_e_counters },
    { "pds", "RdmaSimPdList", "protection domains",
      NULL, RSIM_LIST(rdma_sim_e_pd, max_pd) },
    { "qps", "RdmaSimQpList", "queue pairs: state, PSNs, work in flight",
      NULL, RSIM_LIST(rdma_sim_e_qp, max_qp) },
    { "cqs", "RdmaSimCqList", "completion queues",
      NULL, RSIM_LIST(rdma_sim_e_cq, max_cq) },
    { "srqs", "RdmaSimSrqList", "shared receive queues",
      NULL, RSIM_LIST(rdma_sim_e_srq, max_srq) },
    { "mrs", "RdmaSimMrList", "memory regions and stags",
      NULL, RSIM_LIST(rdma_sim_e_mr, max_mr) },
    /* one slot per MSI-X vector: rdma_sim_e_eq skips the last */
    { "eqs", "RdmaSimEqList", "completion event queues",
      NULL, RSIM_LIST(rdma_sim_e_eq, msix_vectors) },
};

const char *rdma_sim_introspect_prop(size_t i, const char **type,
                                     const char **desc)
{
    QEMU_BUILD_BUG_ON(ARRAY_SIZE(rdma_sim_introspect_props) !=
                      RDMA_SIM_INTROSPECT_PROPS);
    if (i >= RDMA_SIM_INTROSPECT_PROPS) {
        return NULL;
    }
    if (type) {
        *type = rdma_sim_introspect_props[i].type;
    }
    if (desc) {
        *desc = rdma_sim_introspect_props[i].desc;
    }
    return rdma_sim_introspect_props[i].name;
}

bool rdma_sim_introspect(RdmaSimState *s, size_t i, const char *name,
                         RdmaSimEmitter *e)
{
    uint32_t n;

    g_assert(i < RDMA_SIM_INTROSPECT_PROPS);
    if (rdma_sim_introspect_props[i].one) {
        return rdma_sim_introspect_props[i].one(e, s, name);
    }
    n = *(uint32_t *)((uint8_t *)&s->props +
                      rdma_sim_introspect_props[i].list.max_offset);
    if (!e->ops->start_list(e, name)) {
        return false;
    }
    for (uint32_t slot = 0; slot < n; slot++) {
        if (!rdma_sim_introspect_props[i].list.slot(e, s, slot)) {
            return false;
        }
    }
    return e->ops->end_list(e);
}

/*
 * The emitter of rdma_sim_introspect_json(): JSON text as QEMU's QMP
 * writes it (", " between members, ": " after a name)
 */
typedef struct RdmaSimJson {
    RdmaSimEmitter e;
    GString *out;
    bool comma;                 /* a value came before, at this level */
} RdmaSimJson;

void rdma_sim_json_quote(GString *out, const char *str)
{
    g_string_append_c(out, '"');
    for (const char *p = str; *p; p++) {
        if (*p == '"' || *p == '\\') {
            g_string_append_printf(out, "\\%c", *p);
        } else if ((unsigned char)*p < 0x20) {
            g_string_append_printf(out, "\\u%04x", (unsigned char)*p);
        } else {
            g_string_append_c(out, *p);
        }
    }
    g_string_append_c(out, '"');
}

/* Before a value: the comma after the one before it, and its name */
static RdmaSimJson *rdma_sim_json_next(RdmaSimEmitter *e, const char *name)
{
    RdmaSimJson *j = container_of(e, RdmaSimJson, e);

    if (j->comma) {
        g_string_append(j->out, ", ");
    }
    if (name) {
        rdma_sim_json_quote(j->out, name);
        g_string_append(j->out, ": ");
    }
    j->comma = true;
    return j;
}

static bool rdma_sim_json_open(RdmaSimEmitter *e, const char *name, char c)
{
    RdmaSimJson *j = rdma_sim_json_next(e, name);

    g_string_append_c(j->out, c);
    j->comma = false;
    return true;
}

static bool rdma_sim_json_close(RdmaSimEmitter *e, char c)
{
    RdmaSimJson *j = container_of(e, RdmaSimJson, e);

    g_string_append_c(j->out, c);
    j->comma = true;
    return true;
}

static bool rdma_sim_json_start_struct(RdmaSimEmitter *e, const char *name)
{
    return rdma_sim_json_open(e, name, '{');
}

static bool rdma_sim_json_end_struct(RdmaSimEmitter *e)
{
    return rdma_sim_json_close(e, '}');
}

static bool rdma_sim_json_start_list(RdmaSimEmitter *e, const char *name)
{
    return rdma_sim_json_open(e, name, '[');
}

static bool rdma_sim_json_end_list(RdmaSimEmitter *e)
{
    return rdma_sim_json_close(e, ']');
}

static bool rdma_sim_json_u32(RdmaSimEmitter *e, const char *name,
                              uint32_t val)
{
    g_string_append_printf(rdma_sim_json_next(e, name)->out, "%" PRIu32, val);
    return true;
}

static bool rdma_sim_json_u64(RdmaSimEmitter *e, const char *name,
                              uint64_t val)
{
    g_string_append_printf(rdma_sim_json_next(e, name)->out, "%" PRIu64, val);
    return true;
}

static bool rdma_sim_json_bool(RdmaSimEmitter *e, const char *name, bool val)
{
    g_string_append(rdma_sim_json_next(e, name)->out, val ? "true" : "false");
    return true;
}

static bool rdma_sim_json_string(RdmaSimEmitter *e, const char *name,
                                 const char *val)
{
    rdma_sim_json_quote(rdma_sim_json_next(e, name)->out, val);
    return true;
}

static const RdmaSimEmitOps rdma_sim_json_ops = {
    .start_struct = rdma_sim_json_start_struct,
    .end_struct = rdma_sim_json_end_struct,
    .start_list = rdma_sim_json_start_list,
    .end_list = rdma_sim_json_end_list,
    .u32 = rdma_sim_json_u32,
    .u64 = rdma_sim_json_u64,
    .boolean = rdma_sim_json_bool,
    .str = rdma_sim_json_string,
};

char *rdma_sim_introspect_json(RdmaSimState *s, const char *prop)
{
    RdmaSimJson j = { .e.ops = &rdma_sim_json_ops };

    for (size_t i = 0; i < RDMA_SIM_INTROSPECT_PROPS; i++) {
        if (!strcmp(prop, rdma_sim_introspect_props[i].name)) {
            j.out = g_string_new(NULL);
            rdma_sim_introspect(s, i, NULL, &j.e);
            return g_string_free(j.out, false);
        }
    }
    return NULL;
}
