/*
 * rdma-sim: emulated RoCEv2 RDMA NIC - device state
 *
 * The programming model (registers, commands, queue formats) lives in
 * include/rdma-sim/rdma_sim_hw.h and docs/datasheet.md; this header holds
 * only the emulation's own state and the interfaces between its files:
 *
 *   platform.h  what the core takes from its host: QEMU, or the unit
 *               tests' host (tests/unit/host.c) when built plain; the
 *               host's services
 *   status.h    ready / stopped, from DEV_STATUS
 *   qemu-compat.h  what differs between the QEMU versions (7.2 to 11.x)
 *   rdma-sim.c  PCI function, BARs, MSI-X table, properties (QEMU)
 *   props.c     the properties: names, defaults, ranges, meanings
 *   log.c       the guest error log's rate limit
 *   regs.c      what register and doorbell accesses mean, reset
 *   platform.c  DMA, MSI-X, the guest error log, bottom halves, from QEMU
 *   admin.c     admin queue and one function per admin command
 *   mr.c        page lists, the MR/stag table and address translation;
 *               PDs
 *   queue.c     rings in guest memory, CQs and SRQs, CQ completions, event
 *               queues, port state reports, the engine's frame queues
 *   qp.c        QP objects and the QP state machine
 *   port.c      the Ethernet rings, the receive filter and dispatch
 *   net.c       the QEMU NIC the port's frames come and go by
 *   introspect.c  the objects and counters read out through an emitter
 *               (introspect.h), and its emitter of JSON text
 *   introspect-qom.c  the same as QOM properties (qom-get)
 *   migration.c the device's state in a migration stream (VMState)
 *
 * Everything runs in the main loop with the BQL held (MMIO handlers, bottom
 * halves, timers and NIC receive callbacks), so no extra locking is needed.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_SIM_DEVICE_H
#define HW_RDMA_SIM_DEVICE_H

#include "platform.h"
#include "hw/rdma-sim/rdma_sim_hw.h"

/* Hard limits of this model; the properties below stay within them */
#define RDMA_SIM_MAX_QP_LIMIT   (1u << 20)
/* CQs, SRQs, MRs, PDs, AHs: MR keys carry a 24-bit index */
#define RDMA_SIM_MAX_OBJECTS    (1u << 24)
#define RDMA_SIM_MAX_MSIX       32
#define RDMA_SIM_MAX_SGE        64
#define RDMA_SIM_MAX_INLINE     4096
/*
 * Frames the device receives from itself (to one of its own GIDs), queued
 * for its bottom half: senders stop while half of this waits, a frame
 * beyond it is dropped, as a full socket buffer drops it.
 */
#define RDMA_SIM_LOOP_MAX       512
/* Frames delivered while the device was sending, kept for its bottom half */
#define RDMA_SIM_RX_DEFER_MAX   256
/* Guest errors logged per second; the trace event sees every one */
#define RDMA_SIM_LOG_PER_SEC    20
#define RDMA_SIM_MAX_DB_PAGES   1024
#define RDMA_SIM_MAX_ELEM_SIZE  8192
/* Ring elements are at least a cache line, as Soft-RoCE's */
#define RDMA_SIM_MIN_ELEM_SIZE  64
/* Admin commands executed per bottom-half run, before the main loop */
#define RDMA_SIM_ADMIN_BURST    16
/* Host memory for the guest's rings and QPs, all together */
#define RDMA_SIM_HOST_MEM_MAX   (256 * MiB)
#define RDMA_SIM_MAX_EQ_DEPTH   4096
#define RDMA_SIM_MAX_AQ_DEPTH   256
#define RDMA_SIM_MAX_ETH_DEPTH  4096
#define RDMA_SIM_MAX_PBL_L1     8192
#define RDMA_SIM_MAX_PBL_ROOT   8192
#define RDMA_SIM_MAX_FAST_REG_PAGES 512
#define RDMA_SIM_MAX_MR_SIZE    (1ull << 34)
#define RDMA_SIM_PAGE_SIZES     ((1u << 12) | (1u << 21) | (1u << 30))

/* A page list: how a ring or an MR maps onto guest memory */
typedef struct RdmaSimPageList {
    uint64_t addr;              /* buffer (level 0), list or root */
    uint32_t npages;
    uint32_t fbo;
    uint8_t level;
    uint8_t page_shift;
} RdmaSimPageList;

/* A contiguous piece of guest memory found by translation */
typedef struct RdmaSimSeg {
    dma_addr_t addr;
    uint64_t len;
} RdmaSimSeg;

/*
 * A Soft-RoCE format ring in guest memory.  The page list is resolved once
 * at creation into pages[] so that element accesses need no list walks.
 */
typedef struct RdmaSimRing {
    RdmaSimPageList pl;
    dma_addr_t *pages;          /* pages_len entries; NULL for level 0 */
    uint32_t pages_len;
    uint64_t host_mem;          /* of the budget: pages[] */
    uint64_t bytes;             /* header + elements */
    uint32_t depth;
    uint32_t mask;
    uint8_t log2_elem;
} RdmaSimRing;

typedef struct RdmaSimPd {
    bool valid;
    uint32_t refs;              /* QPs, SRQs, MRs, AHs */
} RdmaSimPd;

typedef struct RdmaSimMr {
    uint8_t state;              /* enum rsim_mr_state */
    bool phys;                  /* DMA MR: iova == guest address */
    bool fast_reg;              /* from ALLOC_STAG */
    uint32_t key;
    uint32_t pdn;
    uint32_t access;
    uint64_t iova;
    uint64_t length;
    uint32_t max_pages;         /* fast registration list capacity */
    uint64_t fr_list;           /* fast registration list address */
    RdmaSimPageList pl;
} RdmaSimMr;

typedef struct RdmaSimCq RdmaSimCq;

typedef struct RdmaSimEq {
    bool valid;
    bool armed;
    uint32_t vector;
    uint64_t addr;
    uint32_t depth;
    uint32_t tail;              /* next entry the device writes */
    uint32_t head;              /* consumer index from EQ_DB */
    bool phase;
    uint32_t refs;              /* CQs and Ethernet rings */
    /* CQs whose event waits for room in the ring */
    QTAILQ_HEAD(, RdmaSimCq) waiting;
    bool eth_waiting[2];
} RdmaSimEq;

struct RdmaSimCq {
    bool valid;
    uint32_t cqn;
    uint32_t eqn;
    uint16_t db_page;
    uint8_t arm;                /* enum rsim_cq_arm */
    bool event_waiting;         /* on eq->waiting */
    bool overflow_reported;
    uint32_t refs;              /* QPs */
    uint32_t prod;              /* device's producer index */
    RdmaSimRing ring;
    QTAILQ_ENTRY(RdmaSimCq) wait_link;
};

typedef struct RdmaSimSrq {
    bool valid;
    uint32_t srqn;
    uint32_t pdn;
    uint16_t db_page;
    uint8_t max_sge;
    uint32_t limit;
    uint32_t refs;              /* QPs */
    uint32_t cons;              /* device's consumer index */
    RdmaSimRing ring;
} RdmaSimSrq;

typedef struct RdmaSimAh {
    bool valid;
    uint32_t pdn;
    struct rsim_av av;
} RdmaSimAh;

typedef struct RdmaSimGid {
    bool valid;
    uint8_t gid[16];
} RdmaSimGid;

struct RdmaSimXport;

typedef struct RdmaSimQp {
    uint32_t qpn;
    uint8_t type;               /* enum rsim_qp_type */
    uint8_t state;              /* enum rsim_qp_state */
    bool sig_all;
    bool sq_draining;
    uint16_t db_page;
    uint32_t pdn;
    uint32_t send_cqn;
    uint32_t recv_cqn;
    uint32_t srqn;
    uint8_t max_send_sge;
    uint8_t max_recv_sge;
    uint16_t max_inline;
    RdmaSimRing sq;
    RdmaSimRing rq;             /* unused with an SRQ */
    uint32_t sq_cons;           /* device's SQ consumer index */
    uint32_t rq_cons;           /* device's RQ consumer index */

    /* attributes set by MODIFY_QP */
    uint32_t qkey;
    uint32_t rq_psn;
    uint32_t sq_psn;
    uint32_t dest_qpn;
    uint32_t access;
    uint16_t pkey_index;
    uint8_t port;
    uint8_t path_mtu;
    uint8_t path_mig_state;
    uint8_t max_rd_atomic;
    uint8_t max_dest_rd_atomic;
    uint8_t min_rnr_timer;
    uint8_t timeout;
    uint8_t retry_cnt;
    uint8_t rnr_retry;
    bool en_sqd_async_notify;
    struct rsim_av av;

    struct RdmaSimXport *x;     /* transport state, from RTR on */
    uint64_t xport_mem;         /* of the host memory budget, for x */
    bool on_work_list;
    QTAILQ_ENTRY(RdmaSimQp) work_link;
    bool flow_blocked;          /* waits for the port's budget */
    QTAILQ_ENTRY(RdmaSimQp) flow_link;
} RdmaSimQp;

/* One Ethernet descriptor ring of the port's net device */
typedef struct RdmaSimEthq {
    bool valid;
    bool armed;
    uint32_t eqn;
    uint64_t addr;
    uint32_t depth;
    uint32_t prod;              /* from the doorbell */
    uint32_t cons;              /* device's consumer index */
} RdmaSimEthq;

/* Property values; defaults, ranges and meanings: rdma_sim_props[] */
typedef struct RdmaSimProps {
    uint32_t max_qp;
    uint32_t max_cq;
    uint32_t max_srq;
    uint32_t max_mr;
    uint32_t max_pd;
    uint32_t max_ah;
    uint32_t max_gid;
    uint32_t max_sge;
    uint32_t max_qp_wr;
    uint32_t max_cqe;
    uint32_t max_inline;
    uint32_t max_rd_atom;
    uint32_t db_pages;
    uint32_t msix_vectors;
    uint32_t tx_window;
    uint32_t fault_drop;
    uint32_t fault_dup;
    uint32_t fault_reorder;
    uint32_t fault_corrupt;
    uint32_t fault_driver;
    uint64_t fault_seed;
} RdmaSimProps;

/* A property: a uint32 of RdmaSimProps (props.c has the table) */
typedef struct RdmaSimPropInfo {
    const char *name;
    size_t offset;              /* of the value in RdmaSimProps */
    uint32_t def, min, max;
    const char *desc;
} RdmaSimPropInfo;

struct RdmaSimState {
    RDMA_SIM_HOST_STATE         /* the host's part: platform.h */
    RdmaSimProps props;

    /* registers */
    uint32_t dev_ctrl;
    uint32_t dev_status;
    uint32_t intr_mask;
    uint64_t aq_base, acq_base, aeq_base;
    uint32_t aq_depth, acq_depth, aeq_depth;
    uint32_t aq_tail, aq_head;
    uint32_t acq_tail, acq_head;
    bool acq_phase;
    uint32_t aeq_tail, aeq_head;
    bool aeq_phase;

    QEMUBH *admin_bh;
    /*
     * Non-zero while the device itself is working (admin commands, frame
     * processing).  An MMIO access arriving then can only come from the
     * device's own DMA hitting its BARs; it is refused instead of
     * re-entering the device.
     */
    unsigned busy;
    /* a doorbell's own turn: its frames leave at once, not in a batch */
    bool xmit_at_once;

    /* port */
    uint8_t perm_mac[6];        /* the mac property: the node GUID's */
    uint8_t mac[6];
    uint32_t eth_mtu;
    bool port_active;

    /* object tables */
    RdmaSimPd *pds;
    RdmaSimMr *mrs;
    RdmaSimAh *ahs;
    RdmaSimGid *gids;
    RdmaSimEq *eqs;
    RdmaSimCq **cqs;
    RdmaSimSrq **srqs;
    RdmaSimQp **qps;
    uint32_t next_qpn;          /* round-robin QPN allocation */
    uint32_t key_seed;          /* variant of the next new key */
    RdmaSimEthq ethq[2];

    /* transport engine (transport.c) */
    QEMUBH *xport_bh;
    /*
     * Its receive handler for a frame from the network: consumes (true) a
     * RoCEv2 frame for one of the port's addresses, else leaves it for the
     * Ethernet RX ring
     */
    bool (*roce_rx)(RdmaSimState *s, const uint8_t *frame, size_t len);
    QTAILQ_HEAD(, RdmaSimQp) work;      /* QPs with requester work */
    GQueue loop_frames;                 /* looped-back frames to receive */
    GQueue rx_deferred;                 /* frames that came while busy */
    GByteArray *held_frame;             /* a frame held back to reorder */
    bool held_loop;                     /* ... addressed to this device */
    uint64_t fault_rng;

    /* the port's budget of unacknowledged RC bytes (flow.c) */
    uint64_t tx_inflight;
    uint64_t tx_cwnd;
    uint64_t tx_cwnd_acc;               /* acknowledged since it grew */
    int64_t tx_cut_ns;                  /* when it was last cut */
    QTAILQ_HEAD(, RdmaSimQp) tx_blocked; /* QPs waiting for it */
    uint64_t tx_resp_inflight;          /* READ responses' part of it */
    int64_t tx_resp_drained_ns;         /* when that last drained */
    int64_t tx_srtt_ns;                 /* port's round trip, 0: unknown */
    int64_t tx_pace_rtt_ns;             /* the responses' while unknown */
    uint64_t tx_pace_acc;               /* drained since it shrank */
    QEMUTimer *tx_pace_timer;           /* responses drained: wake QPs */

    uint64_t stats[RSIM_STAT_COUNT];
    uint64_t host_mem;                  /* bytes of RDMA_SIM_HOST_MEM_MAX */
    /* migration.c: age of tx_cut_ns while saving or loading (-1: none) */
    int64_t saved_cut_age_ns;
    /* ... of tx_resp_drained_ns, and tx_pace_timer's time left (-1: idle) */
    int64_t saved_drained_age_ns;
    int64_t saved_pace_ns;

    /* rate limit of the guest error log (log.c) */
    int64_t log_sec;
    uint32_t log_count;
    uint32_t log_suppressed;
};

/* log.c */
char *rdma_sim_guest_error_text(RdmaSimState *s, const char *what,
                                int64_t now_sec, const char *fmt, va_list ap)
    G_GNUC_PRINTF(4, 0);

/* props.c */
extern const RdmaSimPropInfo rdma_sim_props[];
extern const size_t rdma_sim_nprops;
uint32_t *rdma_sim_prop_ptr(RdmaSimProps *props, const RdmaSimPropInfo *info);
void rdma_sim_props_default(RdmaSimProps *props);

/* regs.c */
/* Back to power-on state: every object destroyed, registers cleared */
void rdma_sim_reset_state(RdmaSimState *s);
/* A 32-bit access to BAR0 at addr, or a doorbell write at addr in BAR2 */
uint32_t rdma_sim_regs_read(RdmaSimState *s, uint64_t addr);
/*
 * A register's value without the own-DMA check of rdma_sim_regs_read(): for
 * a host that answers the driver's reads while the device waits in a step
 * (rdma-sim-server waiting for a DMA reply from its client)
 */
uint32_t rdma_sim_regs_peek(RdmaSimState *s, uint64_t addr);
void rdma_sim_regs_write(RdmaSimState *s, uint64_t addr, uint32_t val);
void rdma_sim_db_write(RdmaSimState *s, uint64_t addr, uint32_t val);

/* admin.c */
void rdma_sim_admin_init(RdmaSimState *s);
/* The object tables: allocated, emptied (by reset), freed */
void rdma_sim_objects_init(RdmaSimState *s);
void rdma_sim_objects_reset(RdmaSimState *s);
void rdma_sim_objects_free(RdmaSimState *s);
void rdma_sim_admin_kick(RdmaSimState *s);
const char *rdma_sim_cmd_name(unsigned opcode);

/* mr.c */
enum rsim_status rdma_sim_pl_check(RdmaSimState *s, const RdmaSimPageList *pl,
                                   uint64_t length);
enum rsim_status rdma_sim_pl_pages(RdmaSimState *s, const RdmaSimPageList *pl,
                                   uint64_t first, uint64_t n, uint64_t *out);
enum rsim_status rdma_sim_pl_map(RdmaSimState *s, const RdmaSimPageList *pl,
                                 uint64_t offset, uint64_t len,
                                 RdmaSimSeg *seg);
enum rsim_status rdma_sim_mr_check(RdmaSimState *s, uint32_t key, uint32_t pdn,
                                   uint32_t access, uint64_t iova, uint64_t len,
                                   RdmaSimMr **mrp);
enum rsim_status rdma_sim_mr_map(RdmaSimState *s, const RdmaSimMr *mr,
                                 uint64_t iova, uint64_t len, RdmaSimSeg *seg);
enum rsim_status rdma_sim_mr_dma(RdmaSimState *s, uint32_t key, uint32_t pdn,
                                 uint32_t access, uint64_t iova, void *buf,
                                 uint64_t len, DMADirection dir);
uint32_t rdma_sim_new_key(RdmaSimState *s, uint32_t index, uint32_t old_key);
bool rdma_sim_stag_invalidate(RdmaSimState *s, uint32_t key, uint32_t pdn);
bool rdma_sim_stag_register(RdmaSimState *s, uint32_t pdn,
                            const struct rsim_wr_reg *r);
void rdma_sim_mr_reset(RdmaSimState *s);
bool rdma_sim_pd_valid(RdmaSimState *s, uint32_t pdn);

/* queue.c */
bool rdma_sim_host_mem_get(RdmaSimState *s, uint64_t bytes);
void rdma_sim_host_mem_put(RdmaSimState *s, uint64_t bytes);
uint32_t rdma_sim_sq_elem_max(RdmaSimState *s);
uint32_t rdma_sim_rq_elem_max(RdmaSimState *s);
enum rsim_status rdma_sim_ring_init(RdmaSimState *s, RdmaSimRing *ring,
                                    const struct rsim_queue_desc *d,
                                    uint32_t min_elem, uint32_t max_elem,
                                    uint32_t max_depth);
void rdma_sim_ring_free(RdmaSimState *s, RdmaSimRing *ring);
MemTxResult rdma_sim_ring_rw(RdmaSimState *s, const RdmaSimRing *ring,
                             uint64_t offset, void *buf, uint64_t len,
                             DMADirection dir);
MemTxResult rdma_sim_ring_read_index(RdmaSimState *s, const RdmaSimRing *ring,
                                     unsigned offset, uint32_t *index);
MemTxResult rdma_sim_ring_write_index(RdmaSimState *s, const RdmaSimRing *ring,
                                      unsigned offset, uint32_t index);
uint64_t rdma_sim_ring_elem_offset(const RdmaSimRing *ring, uint32_t index);
MemTxResult rdma_sim_ring_read_elem(RdmaSimState *s, const RdmaSimRing *ring,
                                    uint32_t index, void *buf, uint32_t len);
MemTxResult rdma_sim_ring_write_elem(RdmaSimState *s, const RdmaSimRing *ring,
                                     uint32_t index, const void *buf,
                                     uint32_t len);
void rdma_sim_set_fatal(RdmaSimState *s, enum rsim_fatal_reason reason);
void rdma_sim_aeq_post(RdmaSimState *s, enum rsim_event_type type,
                       uint32_t object, uint64_t data);
void rdma_sim_eq_doorbell(RdmaSimState *s, uint32_t val);
void rdma_sim_eq_post_eth(RdmaSimState *s, unsigned kind);
/* Report the port state to the driver: on a change, or announce it */
void rdma_sim_port_update(RdmaSimState *s, bool announce);
void rdma_sim_eq_reset(RdmaSimState *s, RdmaSimEq *eq);
bool rdma_sim_cq_has_room(RdmaSimState *s, RdmaSimCq *cq);
bool rdma_sim_cq_post(RdmaSimState *s, RdmaSimCq *cq,
                      const struct rsim_cqe *cqe, bool solicited);
bool rdma_sim_cq_write(RdmaSimState *s, RdmaSimCq *cq,
                       const struct rsim_cqe *cqe, bool solicited);
void rdma_sim_cq_arm(RdmaSimState *s, RdmaSimCq *cq, unsigned arm);
uint32_t rdma_sim_num_eqs(RdmaSimState *s);
RdmaSimEq *rdma_sim_eq_lookup(RdmaSimState *s, uint32_t eqn);
enum rsim_status rdma_sim_cq_new_check(RdmaSimState *s, const RdmaSimCq *cq,
                                       const char **why);
void rdma_sim_cq_attach(RdmaSimState *s, RdmaSimCq *cq);
void rdma_sim_cq_destroy(RdmaSimState *s, RdmaSimCq *cq);
RdmaSimCq *rdma_sim_cq_lookup(RdmaSimState *s, uint32_t cqn);
RdmaSimSrq *rdma_sim_srq_lookup(RdmaSimState *s, uint32_t srqn);
enum rsim_status rdma_sim_srq_new_check(RdmaSimState *s,
                                        const RdmaSimSrq *srq,
                                        const char **why);
void rdma_sim_srq_attach(RdmaSimState *s, RdmaSimSrq *srq);
void rdma_sim_srq_destroy(RdmaSimState *s, RdmaSimSrq *srq);
/*
 * Queue a copy of a frame for the engine's bottom half to receive, if q
 * holds fewer than max frames
 */
bool rdma_sim_frame_queue(RdmaSimState *s, GQueue *q, unsigned max,
                          const uint8_t *data, size_t len);
enum rsim_status rdma_sim_ring_move(RdmaSimState *s, RdmaSimRing *from,
                                    uint32_t from_cons, uint32_t from_prod,
                                    RdmaSimRing *to);

/*
 * fault.c: the fault generator (fault-seed; hit: true for ppm parts per
 * million), and what the device writes for the driver, maybe damaged
 */
uint32_t rdma_sim_fault_rand(RdmaSimState *s);
bool rdma_sim_fault_hit(RdmaSimState *s, uint32_t ppm);
typedef enum RdmaSimFaultEntry {
    RDMA_SIM_FAULT_CQE,         /* struct rsim_cqe */
    RDMA_SIM_FAULT_EQE,         /* struct rsim_eqe, async or completion EQ */
    RDMA_SIM_FAULT_ACQE,        /* struct rsim_admin_cqe */
} RdmaSimFaultEntry;
void rdma_sim_fault_driver(RdmaSimState *s, RdmaSimFaultEntry kind,
                           void *entry);

/* qp.c */
RdmaSimQp *rdma_sim_qp_lookup(RdmaSimState *s, uint32_t qpn);
enum rsim_status rdma_sim_qp_modify(RdmaSimState *s, RdmaSimQp *qp,
                                    const struct rsim_qp_attr *attr,
                                    const char **why);
void rdma_sim_qp_query(RdmaSimState *s, RdmaSimQp *qp,
                       struct rsim_qp_attr *attr);
enum rsim_status rdma_sim_qp_new_check(RdmaSimState *s, const RdmaSimQp *qp,
                                       const char **why);
void rdma_sim_qp_attach(RdmaSimState *s, RdmaSimQp *qp);
void rdma_sim_qp_destroy(RdmaSimState *s, RdmaSimQp *qp);
bool rdma_sim_qp_sq_doorbell(RdmaSimState *s, RdmaSimQp *qp);
void rdma_sim_qp_rq_doorbell(RdmaSimState *s, RdmaSimQp *qp);
void rdma_sim_qp_to_error(RdmaSimState *s, RdmaSimQp *qp);
void rdma_sim_qp_fail(RdmaSimState *s, RdmaSimQp *qp, enum rsim_event_type ev);
void rdma_sim_qp_flush(RdmaSimState *s, RdmaSimQp *qp);
const char *rdma_sim_qp_state_name(unsigned state);
uint32_t rdma_sim_wc_opcode(uint32_t wr_opcode);
enum rsim_status rdma_sim_av_check(RdmaSimState *s, const struct rsim_av *av,
                                   const char **why);

/* port.c */
void rdma_sim_port_send(RdmaSimState *s, const uint8_t *frame, size_t len);
/* A frame from the host's network backend, when the device may be busy */
void rdma_sim_port_receive(RdmaSimState *s, const uint8_t *buf, size_t size);
/* A frame to filter and dispatch now (the engine's deferred ones) */
void rdma_sim_port_rx_frame(RdmaSimState *s, const uint8_t *buf, size_t size);
void rdma_sim_port_link_changed(RdmaSimState *s);
void rdma_sim_eth_tx_doorbell(RdmaSimState *s, uint32_t val);
void rdma_sim_eth_rx_doorbell(RdmaSimState *s, uint32_t val);

/*
 * The device's status, which every file asks: its functions read the state
 * above, so status.h comes after it
 */
#include "status.h"

#endif /* HW_RDMA_SIM_DEVICE_H */
