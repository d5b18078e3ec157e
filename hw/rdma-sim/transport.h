/*
 * rdma-sim: the RoCEv2 transport engine (RC, UC, UD) as the floors above
 * it use it - the device's life cycle, admin commands, doorbells and
 * migration.  Its parts, and one packet's way through them: stages.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_SIM_TRANSPORT_H
#define HW_RDMA_SIM_TRANSPORT_H

#include "xport.h"

/*
 * transport.c: the engine
 */

void rdma_sim_transport_init(RdmaSimState *s);
void rdma_sim_transport_cleanup(RdmaSimState *s);
void rdma_sim_transport_reset(RdmaSimState *s);
void rdma_sim_transport_stop(RdmaSimState *s);
void rdma_sim_transport_run(RdmaSimState *s);
/* The VM runs again: the bottom half takes up what waits */
void rdma_sim_transport_resume(RdmaSimState *s);
uint64_t rdma_sim_xport_mem(const RdmaSimQp *qp, const RdmaSimSrq *srq,
                            uint32_t nres);
/* A QP's transport state as RTR creates it (also to load it into) */
RdmaSimXport *rdma_sim_xport_new(RdmaSimState *s, RdmaSimQp *qp);

/*
 * A MODIFY_QP that left the QP in a state other than RESET or ERR (the
 * admin command calls it after qp.c's transition): from RTR on the QP
 * gets its transport state and the engine takes it up.
 */
void rdma_sim_transport_qp_modified(RdmaSimState *s, RdmaSimQp *qp,
                                    unsigned old_state);
/* An SQ doorbell of a QP not in ERR (rdma-sim.c, after qp.c's check) */
void rdma_sim_transport_sq_kick(RdmaSimState *s, RdmaSimQp *qp);

#endif /* HW_RDMA_SIM_TRANSPORT_H */
