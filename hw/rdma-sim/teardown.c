/*
 * rdma-sim: tearing down a QP's transport state - in ERR, and when it
 * is freed
 *
 * qp.c calls these as its QP enters ERR or RESET or is destroyed: the
 * engine keeps no part of its own in the QP's life cycle, so the QP
 * objects sit below the engine (which fails a QP through qp.c when a
 * stage reports it: rdma_sim_xport_fail()).  The transport state is made
 * by the engine (transport.c: rdma_sim_xport_new(), whose timers call the
 * stages).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "platform.h"
#include "stages.h"

/* Forget all responses still to be sent (the QP went to ERR). */
static void rdma_sim_xport_read_cancel(RdmaSimXport *x)
{
    for (uint32_t i = 0; i < x->nres; i++) {
        x->res[i].pending = false;
    }
    x->rd_head = 0;
    x->rd_count = 0;
}

/*
 * The QP entered ERR: a receive WQE taken from an SRQ is no longer in any
 * ring, so it is flushed here, before qp.c flushes the rings (completions
 * for WQEs in flight come first); the timers stop, the QP leaves the work
 * list and the port's budget, and the responder forgets the responses
 * still to send.
 */
void rdma_sim_xport_error(RdmaSimState *s, RdmaSimQp *qp)
{
    RdmaSimXport *x = qp->x;

    if (!x) {
        return;
    }
    if (x->have_rwqe && x->rwqe_from_srq) {
        rdma_sim_rwqe_complete(s, qp, RSIM_WC_WR_FLUSH_ERR, RSIM_WC_RECV, 0, 0,
                               0, false, qp->dest_qpn, 0);
    }
    x->have_rwqe = false;
    x->ack_pending = false;
    x->msg = RDMA_SIM_RESP_IDLE;
    rdma_sim_xport_read_cancel(x);
    rdma_sim_flow_qp_stop(s, qp);
    timer_del(x->retry_timer);
    timer_del(x->rnr_timer);
    rdma_sim_qp_unschedule(s, qp);
    x->rnr_wait = false;
    x->cq_stalled = false;
    x->go_back = false;
    x->fail = false;
}

/* The QP is reset or destroyed: its transport state goes. */
void rdma_sim_xport_free(RdmaSimState *s, RdmaSimQp *qp)
{
    RdmaSimXport *x = qp->x;

    if (!x) {
        return;
    }
    rdma_sim_qp_unschedule(s, qp);
    rdma_sim_flow_qp_stop(s, qp);
    timer_free(x->retry_timer);
    timer_free(x->rnr_timer);
    timer_free(x->probe_timer);
    g_free(x->slots);
    g_free(x->rwqe_sge);
    g_free(x->res);
    g_free(x->rd_fifo);
    g_free(x);
    qp->x = NULL;
}
