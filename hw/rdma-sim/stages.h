/*
 * rdma-sim: the RoCEv2 transport engine's parts (RC, UC, UD) - its
 * stages and the services they share, as the engine and they use them
 *
 * One packet's way through the engine, and the file that owns each step:
 *
 *   doorbell -> work list -> requester -> wire -> responder -> completer
 *   (qp.c)      (transport.c) (requester.c) (transport.c) (responder.c)
 *                                                       (completer.c)
 *
 *   transport.c  the engine: the per-QP scheduling loop, timers, receive
 *                dispatch, what the stages report applied (transport.h)
 *   xmit.c       transmission (loopback, fault injection), paths, the
 *                work list, the retransmission timer
 *   teardown.c   the end of a QP's transport state (qp.c calls it)
 *   requester.c  send WQEs to request packets; go-back-N
 *   responder.c  executes incoming requests: ACKs, NAKs, READ responses,
 *                atomics, duplicates
 *   completer.c  ACKs, NAKs and responses to send completions; retries
 *   ud.c         the datagram service (UD and GSI QPs)
 *   wqe.c        the device's copies of send and receive WQEs, and moving
 *                message bytes between them and packets
 *   flow.c       round-trip times, probe timing, the port's budget of
 *                unacknowledged bytes and READ responses
 *
 * transport.c calls the requester, the responder, the completer and
 * ud.c.  These do not call one another but for one call: the requester
 * hands a UD or GSI send WQE to ud.c (rdma_sim_ud_send()), which sends
 * the datagram whole.  Where the completer finds that packets must be
 * sent again, it records where (go_back) and transport.c hands that to
 * the requester; a stage that finds the QP failing records that
 * (rdma_sim_xport_fail()) and stops, and transport.c moves the QP to ERR
 * through qp.c as the stage returns.  All of them use wqe.c, flow.c and
 * the services of xmit.c below; none calls up into the engine or qp.c.
 *
 * The engine runs in the main loop (bottom half, timers, NIC receive) and
 * never waits: a QP that cannot progress (window full, RNR wait, CQ full)
 * is resumed by the event that unblocks it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_SIM_STAGES_H
#define HW_RDMA_SIM_STAGES_H

#include "xport.h"

/*
 * teardown.c: the end of a QP's transport state, as qp.c's QP enters ERR
 * (before the rings are flushed), RESET or is destroyed
 */

void rdma_sim_xport_error(RdmaSimState *s, RdmaSimQp *qp);
void rdma_sim_xport_free(RdmaSimState *s, RdmaSimQp *qp);

/*
 * xmit.c: services for the requester, responder, completer, ud.c and
 * flow.c (and the engine)
 */

void rdma_sim_xmit(RdmaSimState *s, RoceFrame *f);
bool rdma_sim_xmit_room(RdmaSimState *s);
void rdma_sim_qp_schedule(RdmaSimState *s, RdmaSimQp *qp);
void rdma_sim_qp_unschedule(RdmaSimState *s, RdmaSimQp *qp);
void rdma_sim_retry_timer_update(RdmaSimState *s, RdmaSimQp *qp);
void rdma_sim_path_from_av(RdmaSimState *s, const struct rsim_av *av,
                           uint32_t qpn, uint32_t dqpn, RocePath *p);
/* Does the path lead to one of the device's own GIDs (internal loopback)? */
bool rdma_sim_path_is_local(RdmaSimState *s, const RocePath *p);
bool rdma_sim_is_own_gid(RdmaSimState *s, const uint8_t *gid);
void rdma_sim_release_held(RdmaSimState *s);

/*
 * requester.c
 */

bool rdma_sim_req_run(RdmaSimState *s, RdmaSimQp *qp, unsigned *budget);
void rdma_sim_req_restart(RdmaSimState *s, RdmaSimQp *qp, uint32_t psn);
bool rdma_sim_req_probe(RdmaSimState *s, RdmaSimQp *qp, uint32_t psn);

/*
 * responder.c
 */

void rdma_sim_resp_rx(RdmaSimState *s, RdmaSimQp *qp, const RocePkt *pkt);
bool rdma_sim_resp_run(RdmaSimState *s, RdmaSimQp *qp, unsigned *budget);
void rdma_sim_resp_clear(RdmaSimXport *x);
void rdma_sim_resp_resources(RdmaSimXport *x, uint32_t n);

/*
 * completer.c
 */

void rdma_sim_comp_rx(RdmaSimState *s, RdmaSimQp *qp, const RocePkt *pkt);
void rdma_sim_comp_run(RdmaSimState *s, RdmaSimQp *qp);
void rdma_sim_comp_check_drained(RdmaSimState *s, RdmaSimQp *qp);
void rdma_sim_comp_timeout(RdmaSimState *s, RdmaSimQp *qp);
void rdma_sim_comp_rnr_expired(RdmaSimState *s, RdmaSimQp *qp);
void rdma_sim_comp_resend(RdmaSimState *s, RdmaSimQp *qp, uint32_t psn);

/*
 * ud.c
 */

uint32_t rdma_sim_ud_max_msg(RdmaSimState *s);
uint8_t rdma_sim_ud_send(RdmaSimState *s, RdmaSimQp *qp, RdmaSimWqe *w);
void rdma_sim_ud_rx(RdmaSimState *s, RdmaSimQp *qp, const RocePkt *pkt);

/*
 * wqe.c
 */

MemTxResult rdma_sim_sgl_read(RdmaSimState *s, const RdmaSimRing *ring,
                              uint64_t off, uint32_t n, RdmaSimSgl *sgl);
RdmaSimWqe *rdma_sim_wqe_find(RdmaSimQp *qp, uint32_t psn);
enum rsim_status rdma_sim_wqe_gather(RdmaSimState *s, RdmaSimQp *qp,
                                     const RdmaSimWqe *w, uint32_t off,
                                     uint8_t *buf, uint32_t n);
enum rsim_status rdma_sim_wqe_scatter(RdmaSimState *s, RdmaSimQp *qp,
                                      const RdmaSimWqe *w, uint32_t off,
                                      const uint8_t *buf, uint32_t n);

/* Receive WQEs */
enum rdma_sim_rwqe_result {
    RDMA_SIM_RWQE_OK,
    RDMA_SIM_RWQE_NONE,         /* receive queue empty: RNR */
    RDMA_SIM_RWQE_BAD,          /* malformed or inaccessible WQE */
};
enum rdma_sim_rwqe_result rdma_sim_rwqe_get(RdmaSimState *s, RdmaSimQp *qp);
bool rdma_sim_rwqe_cq_room(RdmaSimState *s, RdmaSimQp *qp);
uint8_t rdma_sim_rwqe_place(RdmaSimState *s, RdmaSimQp *qp,
                            const uint8_t *buf, uint32_t n);
bool rdma_sim_rwqe_complete(RdmaSimState *s, RdmaSimQp *qp, uint8_t status,
                            uint32_t opcode, uint32_t byte_len, uint32_t ex,
                            uint32_t wc_flags, bool se, uint32_t src_qp,
                            uint8_t sl);

/*
 * flow.c
 */

void rdma_sim_flow_reset(RdmaSimState *s);
void rdma_sim_flow_qp_stop(RdmaSimState *s, RdmaSimQp *qp);
uint32_t rdma_sim_flow_window(RdmaSimState *s, RdmaSimQp *qp);
bool rdma_sim_flow_at_edge(RdmaSimState *s, RdmaSimQp *qp, uint32_t psn);
bool rdma_sim_flow_may_send(RdmaSimState *s, RdmaSimQp *qp, uint32_t pkts);
bool rdma_sim_flow_resp_may_send(RdmaSimState *s, RdmaSimQp *qp);
void rdma_sim_flow_resp_sent(RdmaSimState *s, RdmaSimQp *qp);
void rdma_sim_flow_paced(RdmaSimState *s);
bool rdma_sim_flow_ack_wanted(RdmaSimQp *qp, uint32_t *psn);
void rdma_sim_flow_sent(RdmaSimState *s, RdmaSimQp *qp, uint32_t psn,
                        uint32_t pkts, bool ackreq);
void rdma_sim_flow_restart(RdmaSimState *s, RdmaSimQp *qp, uint32_t psn);
bool rdma_sim_flow_acked(RdmaSimState *s, RdmaSimQp *qp, uint32_t old_comp);
void rdma_sim_flow_loss(RdmaSimState *s, RdmaSimQp *qp);
void rdma_sim_flow_resp_lost(RdmaSimState *s, RdmaSimQp *qp);
bool rdma_sim_flow_pace_valid(const RdmaSimState *s);
bool rdma_sim_flow_pace_learned(const RdmaSimState *s);

/* Tail-loss probes: which packet the probe timer sends again */
enum rdma_sim_probe {
    RDMA_SIM_PROBE_NONE,        /* nothing in flight to send again */
    RDMA_SIM_PROBE_NEWEST,      /* the newest packet sent */
    RDMA_SIM_PROBE_OLDEST,      /* the oldest unacknowledged one */
};
enum rdma_sim_probe rdma_sim_flow_probe_psn(RdmaSimQp *qp, uint32_t *psn);
void rdma_sim_flow_probed(RdmaSimState *s, RdmaSimQp *qp,
                          enum rdma_sim_probe kind, uint32_t psn, bool sent);

#endif /* HW_RDMA_SIM_STAGES_H */
