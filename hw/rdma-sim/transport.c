/*
 * rdma-sim: RoCEv2 transport engine
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "transport.h"
#include "trace.h"

void rsim_transport_qp_reset(RdmaSimState *s, RsimQp *qp)
{
}

void rsim_transport_qp_modified(RdmaSimState *s, RsimQp *qp,
                                unsigned old_state)
{
    /* Nothing is in flight yet: an SQD drain finishes at once. */
    if (qp->state == RSIM_QPS_SQD && qp->sq_draining) {
        qp->sq_draining = false;
        if (qp->en_sqd_async_notify) {
            rsim_aeq_post(s, RSIM_EV_SQ_DRAINED, qp->qpn, 0);
        }
    }
}

void rsim_transport_qp_error(RdmaSimState *s, RsimQp *qp)
{
}

void rsim_transport_qp_destroy(RdmaSimState *s, RsimQp *qp)
{
}

void rsim_transport_sq_kick(RdmaSimState *s, RsimQp *qp)
{
}

void rsim_transport_rq_kick(RdmaSimState *s, RsimQp *qp)
{
}

bool rsim_transport_rx(RdmaSimState *s, const uint8_t *frame, size_t len)
{
    return false;
}
