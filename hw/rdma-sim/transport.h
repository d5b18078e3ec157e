/*
 * rdma-sim: the RoCEv2 RC transport engine
 *
 *   transport.c  scheduling, timers, transmission (loopback, fault
 *                injection), receive dispatch, the hooks qp.c calls
 *   requester.c  reads send WQEs and turns them into request packets
 *   responder.c  executes incoming requests, sends ACKs, NAKs, READ
 *                responses and atomic results
 *   completer.c  handles ACKs/NAKs/responses, retransmission and send
 *                completions
 *   flow.c       round-trip times, tail-loss probes, the port's budget of
 *                unacknowledged bytes
 *
 * The engine runs in the main loop (bottom half, timers, NIC receive), never
 * on a vCPU thread, and never waits: a QP that cannot progress (window
 * full, RNR wait, CQ full) is resumed by the event that unblocks it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_SIM_TRANSPORT_H
#define HW_RDMA_SIM_TRANSPORT_H

#include "qemu/timer.h"
#include "qemu/units.h"
#include "rdma-sim.h"
#include "roce.h"

/*
 * Unacknowledged PSNs a requester may have outstanding: at most
 * RSIM_WINDOW packets and about the tx-window property's KiB of payload.
 * A host UDP socket (the usual link between VMs) buffers 208 KiB by
 * default, counted with the kernel's per-packet overhead; a burst larger
 * than it holds is lost at the receiver and has to be sent again.
 */
#define RSIM_WINDOW             256
/* A request with AckReq at least every this many packets */
#define RSIM_ACKREQ_INTERVAL    32
/* Packets one QP may send per scheduling round */
#define RSIM_BURST              64
/* How often a completer blocked on a full CQ looks again (ns) */
#define RSIM_CQ_RETRY_NS        (1 * SCALE_MS)

/* A scatter/gather entry, host byte order */
typedef struct RsimSgl {
    uint64_t addr;
    uint32_t length;
    uint32_t lkey;
} RsimSgl;

/* Device-private, validated copy of a send WQE and its progress */
typedef struct RsimWqe {
    uint64_t wr_id;
    uint32_t opcode;            /* RSIM_WR_* */
    uint32_t flags;             /* RSIM_SEND_* */
    uint32_t ex;                /* immediate (wire order) or rkey */
    uint64_t remote_addr;
    uint32_t rkey;
    uint64_t compare_add;
    uint64_t swap;
    uint32_t ah_num;            /* UD */
    uint32_t remote_qpn;        /* UD */
    uint32_t remote_qkey;       /* UD */
    struct rsim_wr_reg reg;     /* REG_MR, little-endian as posted */
    uint32_t length;            /* message bytes */
    uint32_t num_sge;
    bool is_inline;
    bool signaled;

    bool started;               /* PSNs assigned */
    bool done;                  /* acknowledged, answered or executed */
    uint8_t status;             /* rsim_wc_status for an error */
    uint32_t first_psn;
    uint32_t npkts;
    uint32_t next_pkt;          /* next packet to (re)send */
    uint32_t rcvd_pkts;         /* READ response packets received */
    uint32_t read_chunk;        /* READ: response packets per request */
    uint8_t data[];             /* RsimSgl[num_sge] or inline bytes */
} RsimWqe;

/* A READ or atomic the responder executed, kept for duplicates */
typedef struct RsimResource {
    bool valid;
    bool atomic;
    bool pending;               /* READ responses still to send */
    uint32_t next_pkt;          /* next READ response packet */
    uint32_t first_psn;
    uint32_t npkts;
    uint64_t va;
    uint32_t rkey;
    uint32_t length;
    uint64_t orig;              /* atomic result */
} RsimResource;

enum rsim_resp_msg {
    RSIM_RESP_IDLE,
    RSIM_RESP_SEND,             /* between SEND first and last */
    RSIM_RESP_WRITE,            /* between WRITE first and last */
};

typedef struct RsimXport {
    RdmaSimState *dev;
    RocePath path;
    uint32_t mtu;
    uint32_t window;            /* PSNs in flight, see RSIM_WINDOW */

    /* requester */
    uint8_t *slots;             /* nslots WQE copies of slot_size bytes */
    uint32_t slot_size;
    uint32_t nslots;
    uint32_t req_idx;           /* SQ index of the next WQE to (re)send */
    uint32_t fetched;           /* SQ index of the first WQE not copied */
    uint32_t next_psn;          /* PSN of the next new WQE */
    uint32_t comp_psn;          /* oldest unacknowledged PSN */
    uint32_t rd_atomic_out;     /* READ/atomic WQEs awaiting responses */
    uint32_t pkts_since_ackreq;
    uint8_t retry_left;
    uint8_t rnr_left;
    bool rnr_wait;
    bool req_error;             /* a failed WQE stops the requester */
    bool cq_stalled;
    uint32_t last_nak_psn;      /* restart point of the last gap handled */
    bool nak_restart_valid;
    uint32_t rnr_psn;           /* where to resume after the RNR wait */
    QEMUTimer *retry_timer;
    QEMUTimer *rnr_timer;

    /* flow control and loss recovery (flow.c) */
    uint32_t tx_psn;            /* after the last PSN sent (since a go-back) */
    uint32_t tx_high;           /* after the newest PSN ever sent */
    uint64_t charged;           /* bytes counted in the port's tx_inflight */
    uint32_t ackreq_psn;        /* newest PSN sent with AckReq */
    bool ackreq_valid;
    int64_t srtt_ns;            /* smoothed round-trip time, 0: not known */
    int64_t rttvar_ns;
    uint32_t rtt_psn;           /* PSN whose acknowledgement is timed */
    int64_t rtt_sent_ns;        /* when it left; 0: nothing timed */
    bool probing;               /* a probe is out, its answer decides */
    uint32_t probe_high;        /* tx_psn when the probe left */
    unsigned probe_backoff;
    QEMUTimer *probe_timer;

    /* responder */
    uint32_t epsn;              /* expected request PSN */
    uint32_t ack_psn;           /* ACK to send from the bottom half */
    bool ack_pending;
    uint32_t msn;
    bool seq_nak_sent;
    bool uc_drop;               /* UC: dropping the rest of a message */
    bool comm_est;
    enum rsim_resp_msg msg;
    bool have_rwqe;             /* rwqe holds the current receive WQE */
    bool rwqe_from_srq;
    uint32_t recv_len;          /* bytes placed into rwqe */
    uint64_t rwqe_id;
    uint32_t rwqe_nsge;
    RsimSgl *rwqe_sge;
    uint32_t rwqe_pdn;
    uint64_t write_va;
    uint32_t write_rkey;
    uint32_t write_len;
    uint32_t write_resid;
    RsimResource *res;
    uint32_t nres;
    uint32_t res_next;          /* resource the next request gets */
    uint32_t *rd_fifo;          /* resources with responses to send */
    uint32_t rd_head;
    uint32_t rd_count;
} RsimXport;

static inline RsimWqe *rsim_slot(RsimXport *x, uint32_t sq_index)
{
    return (RsimWqe *)(x->slots + (size_t)(sq_index & (x->nslots - 1)) *
                       x->slot_size);
}

static inline const RsimSgl *rsim_wqe_sgl(const RsimWqe *w)
{
    return (const RsimSgl *)w->data;
}

/* transport.c */
void rsim_transport_init(RdmaSimState *s);
void rsim_transport_cleanup(RdmaSimState *s);
void rsim_transport_reset(RdmaSimState *s);
void rsim_xmit(RdmaSimState *s, RoceFrame *f);
void rsim_qp_schedule(RdmaSimState *s, RsimQp *qp);
void rsim_retry_timer_update(RdmaSimState *s, RsimQp *qp);

/* QP life cycle (qp.c) */
void rsim_transport_qp_reset(RdmaSimState *s, RsimQp *qp);
void rsim_transport_qp_modified(RdmaSimState *s, RsimQp *qp,
                                unsigned old_state);
void rsim_transport_qp_error(RdmaSimState *s, RsimQp *qp);
void rsim_transport_qp_destroy(RdmaSimState *s, RsimQp *qp);

/* doorbells */
void rsim_transport_sq_kick(RdmaSimState *s, RsimQp *qp);
void rsim_transport_rq_kick(RdmaSimState *s, RsimQp *qp);

/*
 * A frame for the port's MAC: consumed (true) if it is RoCEv2 traffic for
 * one of the port's addresses, otherwise left for the Ethernet RX ring.
 */
bool rsim_transport_rx(RdmaSimState *s, const uint8_t *frame, size_t len);

/* requester.c */
bool rsim_req_run(RdmaSimState *s, RsimQp *qp);
enum rsim_status rsim_wqe_gather(RdmaSimState *s, RsimQp *qp,
                                 const RsimWqe *w, uint32_t off,
                                 uint8_t *buf, uint32_t n);
void rsim_req_restart(RdmaSimState *s, RsimQp *qp, uint32_t psn);
bool rsim_req_probe(RdmaSimState *s, RsimQp *qp, uint32_t psn);
uint32_t rsim_req_outstanding(RsimQp *qp);

/* responder.c */
enum rsim_rwqe_result {
    RSIM_RWQE_OK,
    RSIM_RWQE_NONE,             /* receive queue empty: RNR */
    RSIM_RWQE_BAD,              /* malformed or inaccessible WQE */
};
enum rsim_rwqe_result rsim_resp_get_rwqe(RdmaSimState *s, RsimQp *qp);
bool rsim_resp_cq_room(RdmaSimState *s, RsimQp *qp);
uint8_t rsim_resp_place(RdmaSimState *s, RsimQp *qp, const uint8_t *buf,
                        uint32_t n);
void rsim_resp_finish_ud(RdmaSimState *s, RsimQp *qp, uint8_t status,
                         uint32_t src_qp, uint32_t ex, uint32_t wc_flags,
                         bool se);
void rsim_resp_rx(RdmaSimState *s, RsimQp *qp, const RocePkt *pkt);
bool rsim_resp_run(RdmaSimState *s, RsimQp *qp, unsigned *budget);
void rsim_resp_error(RdmaSimState *s, RsimQp *qp);
void rsim_resp_clear(RsimXport *x);

/* completer.c */
void rsim_comp_rx(RdmaSimState *s, RsimQp *qp, const RocePkt *pkt);
void rsim_comp_run(RdmaSimState *s, RsimQp *qp);
void rsim_comp_timeout(RdmaSimState *s, RsimQp *qp);
void rsim_comp_rnr_expired(RdmaSimState *s, RsimQp *qp);
RsimWqe *rsim_comp_find(RsimQp *qp, uint32_t psn);

/* flow.c */
void rsim_flow_reset(RdmaSimState *s);
void rsim_flow_qp_init(RsimXport *x, RsimQp *qp);
void rsim_flow_qp_stop(RdmaSimState *s, RsimQp *qp);
void rsim_flow_qp_free(RdmaSimState *s, RsimQp *qp);
uint32_t rsim_flow_window(RdmaSimState *s, RsimQp *qp);
bool rsim_flow_at_edge(RdmaSimState *s, RsimQp *qp, uint32_t psn);
bool rsim_flow_may_send(RdmaSimState *s, RsimQp *qp, uint32_t pkts);
void rsim_flow_stopped(RdmaSimState *s, RsimQp *qp);
void rsim_flow_sent(RdmaSimState *s, RsimQp *qp, uint32_t psn, uint32_t pkts,
                    bool ackreq);
void rsim_flow_restart(RdmaSimState *s, RsimQp *qp, uint32_t psn);
bool rsim_flow_acked(RdmaSimState *s, RsimQp *qp, uint32_t old_comp);
void rsim_flow_loss(RdmaSimState *s, RsimQp *qp);

/* ud.c */
uint32_t rsim_ud_max_msg(RdmaSimState *s);
uint8_t rsim_ud_send(RdmaSimState *s, RsimQp *qp, RsimWqe *w);
void rsim_ud_rx(RdmaSimState *s, RsimQp *qp, const RocePkt *pkt);

/* shared by the engine */
void rsim_path_from_av(RdmaSimState *s, const struct rsim_av *av,
                       uint32_t qpn, uint32_t dqpn, RocePath *p);
bool rsim_complete(RdmaSimState *s, RsimQp *qp, RsimCq *cq,
                   const struct rsim_cqe *cqe, bool solicited);
void rsim_fail_qp(RdmaSimState *s, RsimQp *qp, enum rsim_event_type ev);

#endif /* HW_RDMA_SIM_TRANSPORT_H */
