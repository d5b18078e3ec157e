/*
 * rdma-sim: a QP's transport state and what every stage of the engine
 * reads of it
 *
 * The types of transport.h's engine and stages (the per-QP RdmaSimXport,
 * the device's copies of send WQEs, the responder's resources), the limits
 * they work within, and the small checks they all make.  Data and pure
 * functions only: nothing here calls into a file of the device, so every
 * file may include it (transport.h includes it for the engine's files).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_SIM_XPORT_H
#define HW_RDMA_SIM_XPORT_H

#include "device.h"
#include "roce.h"

/* flow.c's limits (its header comment says why) */
/* Probe timeout bounds, and before the first round trip was measured */
#define RDMA_SIM_PTO_MIN_NS     (2 * SCALE_MS)
#define RDMA_SIM_PTO_MAX_NS     (200 * SCALE_MS)
#define RDMA_SIM_PTO_INITIAL_NS (5 * SCALE_MS)
/* Doublings of the probe timeout while probes go unanswered */
#define RDMA_SIM_PTO_MAX_BACKOFF 6

/* The least the port's budget is cut to */
#define RDMA_SIM_CWND_MIN       (16 * KiB)

/* The READ responses' round trip while none was measured (flow.c) */
#define RDMA_SIM_PACE_RTT_INITIAL_NS    SCALE_MS
#define RDMA_SIM_PACE_RTT_MIN_NS        (250 * SCALE_US)

/* The largest IBTA path MTU (enum rsim_mtu) a RoCEv2 packet fits in */
static inline uint8_t rdma_sim_active_mtu(uint32_t eth_mtu)
{
    uint32_t room = eth_mtu > RSIM_ROCE_OVERHEAD ?
                    eth_mtu - RSIM_ROCE_OVERHEAD : 0;
    uint8_t mtu = RSIM_MTU_256;

    while (mtu < RSIM_MTU_4096 && (256u << mtu) <= room) {
        mtu++;
    }
    return mtu;
}

/*
 * Unacknowledged PSNs a requester may have outstanding: at most
 * RDMA_SIM_WINDOW packets and about the tx-window property's KiB of payload.
 * A host UDP socket (the usual link between VMs) buffers 208 KiB by
 * default, counted with the kernel's per-packet overhead; a burst larger
 * than it holds is lost at the receiver and has to be sent again.
 */
#define RDMA_SIM_WINDOW         256
/* A request with AckReq at least every this many packets */
#define RDMA_SIM_ACKREQ_INTERVAL 32
/* Packets one QP may send per scheduling round */
#define RDMA_SIM_BURST          64
/*
 * Packets an SQ doorbell sends at once, from the vCPU thread that rang it
 * (the requester's next one; rdma_sim_transport_sq_kick()).  The rest goes
 * from the bottom half.
 */
#define RDMA_SIM_DOORBELL_BURST 1
/* The largest message IBTA allows (2^31 bytes) */
#define RDMA_SIM_MAX_MSG        (1u << 31)
/* How often a completer blocked on a full CQ looks again (ns) */
#define RDMA_SIM_CQ_RETRY_NS    (1 * SCALE_MS)

/* A scatter/gather entry, host byte order */
typedef struct RdmaSimSgl {
    uint64_t addr;
    uint32_t length;
    uint32_t lkey;
} RdmaSimSgl;

/* Device-private, validated copy of a send WQE and its progress */
typedef struct RdmaSimWqe {
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
    /* RdmaSimSgl[num_sge] (hence the alignment) or inline bytes */
    uint8_t data[] QEMU_ALIGNED(8);
} RdmaSimWqe;

/* A READ or atomic the responder executed, kept for duplicates */
typedef struct RdmaSimResource {
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
} RdmaSimResource;

enum rdma_sim_resp_msg {
    RDMA_SIM_RESP_IDLE,
    RDMA_SIM_RESP_SEND,         /* between SEND first and last */
    RDMA_SIM_RESP_WRITE,        /* between WRITE first and last */
};

typedef struct RdmaSimXport {
    RdmaSimState *dev;
    RocePath path;
    uint32_t mtu;
    uint32_t window;            /* PSNs in flight, see RDMA_SIM_WINDOW */

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
    bool go_back;               /* the completer found packets to resend */
    uint32_t go_back_psn;       /* ... from this PSN on */
    /*
     * A stage found that the QP fails (rdma_sim_xport_fail()): it stops
     * there, and the engine moves the QP to ERR as the stage returns.
     * Set only within one call of the engine, so never migrated.
     */
    bool fail;
    enum rsim_event_type fail_ev;   /* the async event to report, or 0 */
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
    enum rdma_sim_resp_msg msg;
    bool have_rwqe;             /* rwqe holds the current receive WQE */
    bool rwqe_from_srq;
    uint32_t recv_len;          /* bytes placed into rwqe */
    uint64_t rwqe_id;
    uint32_t rwqe_nsge;
    RdmaSimSgl *rwqe_sge;       /* rwqe_max entries */
    uint32_t rwqe_max;
    uint32_t rwqe_pdn;
    uint64_t write_va;
    uint32_t write_rkey;
    uint32_t write_len;
    uint32_t write_resid;
    RdmaSimResource *res;
    uint32_t nres;
    uint32_t res_next;          /* resource the next request gets */
    uint32_t *rd_fifo;          /* resources with responses to send */
    uint32_t rd_head;
    uint32_t rd_count;

    /*
     * migration.c, while saving or loading: time left of the retry, RNR
     * and probe timers and the age of rtt_sent_ns (-1: idle, none)
     */
    int64_t saved_timer_ns[3];
    int64_t saved_rtt_age_ns;
} RdmaSimXport;

/*
 * Shared checks
 */

static inline bool rdma_sim_wr_is_atomic(uint32_t op)
{
    return op == RSIM_WR_ATOMIC_CMP_AND_SWP ||
           op == RSIM_WR_ATOMIC_FETCH_AND_ADD;
}

/* Does a send WQE of this opcode finish with responses (READ, atomic)? */
static inline bool rdma_sim_wr_needs_response(uint32_t op)
{
    return op == RSIM_WR_RDMA_READ || rdma_sim_wr_is_atomic(op);
}

static inline bool rdma_sim_qp_is_datagram(const RdmaSimQp *qp)
{
    return qp->type == RSIM_QPT_UD || qp->type == RSIM_QPT_GSI;
}

/* The QP's local ACK timeout: 4.096 us * 2^timeout (IBTA 9.7.6.1.3) */
static inline int64_t rdma_sim_qp_timeout_ns(const RdmaSimQp *qp)
{
    return (int64_t)4096 << qp->timeout;
}

/* PSNs an RC requester has sent and not yet seen acknowledged */
static inline uint32_t rdma_sim_xport_outstanding(const RdmaSimQp *qp)
{
    const RdmaSimXport *x = qp->x;

    if (!x || qp->type != RSIM_QPT_RC) {
        return 0;               /* only RC waits for acknowledgements */
    }
    return roce_psn_cmp(x->next_psn, x->comp_psn);
}

/*
 * A stage's news that the QP fails, reporting async event ev (0: none):
 * the stage stops at once, and the engine, which called it, moves the
 * QP to ERR through qp.c when it returns (transport.c).  Stages never
 * call up into qp.c.
 */
static inline void rdma_sim_xport_fail(RdmaSimQp *qp, enum rsim_event_type ev)
{
    qp->x->fail = true;
    qp->x->fail_ev = ev;
}

/* The QP is in ERR, or a stage of this call found that it fails */
static inline bool rdma_sim_xport_failed(const RdmaSimQp *qp)
{
    return qp->state == RSIM_QPS_ERR || (qp->x && qp->x->fail);
}

/* Send WQEs: the private copy of SQ index sq_index */
static inline RdmaSimWqe *rdma_sim_wqe_slot(RdmaSimXport *x,
                                            uint32_t sq_index)
{
    return (RdmaSimWqe *)(x->slots + (size_t)(sq_index & (x->nslots - 1)) *
                          x->slot_size);
}

static inline const RdmaSimSgl *rdma_sim_wqe_sgl(const RdmaSimWqe *w)
{
    return (const RdmaSimSgl *)w->data;
}

#endif /* HW_RDMA_SIM_XPORT_H */
