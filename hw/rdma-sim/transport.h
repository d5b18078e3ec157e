/*
 * rdma-sim: interface of the RoCEv2 transport engine
 *
 * The control plane (qp.c, net.c) calls these hooks; the engine itself
 * (requester, responder, completer) lives behind them.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_SIM_TRANSPORT_H
#define HW_RDMA_SIM_TRANSPORT_H

#include "rdma-sim.h"

/* QP life cycle */
void rsim_transport_qp_reset(RdmaSimState *s, RsimQp *qp);
void rsim_transport_qp_modified(RdmaSimState *s, RsimQp *qp,
                                unsigned old_state);
void rsim_transport_qp_error(RdmaSimState *s, RsimQp *qp);
void rsim_transport_qp_destroy(RdmaSimState *s, RsimQp *qp);

/* doorbells */
void rsim_transport_sq_kick(RdmaSimState *s, RsimQp *qp);
void rsim_transport_rq_kick(RdmaSimState *s, RsimQp *qp);

/*
 * A frame for the port's MAC: consumed (true) if it is RoCEv2 traffic,
 * otherwise left for the Ethernet RX ring (false).
 */
bool rsim_transport_rx(RdmaSimState *s, const uint8_t *frame, size_t len);

#endif /* HW_RDMA_SIM_TRANSPORT_H */
