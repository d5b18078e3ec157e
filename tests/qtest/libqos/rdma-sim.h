/*
 * libqos helpers for the rdma-sim qtests: the test plays the guest driver
 *
 * They drive the device the way a driver does (docs/datasheet.md):
 * registers in BAR0, doorbells in BAR2, MSI-X, and the admin, event, work
 * and completion queues in guest memory.  Each test file registers its
 * tests with qsim_main(): every test runs in a subprocess with its own
 * QEMU, so that a failed assertion ends only that test.
 *
 * rdma-sim.c: the device, its admin queue and events, test registration;
 * rdma-sim-objects.c: rings, objects (PDs, EQs, CQs, QPs, MRs, GIDs),
 * work requests and completions; rdma-sim-roce.c: RoCEv2 frames (ICRC).
 *
 * Environment: RSIM_TEST_VERBOSE=1 prints every command and loop step on
 * stderr; RSIM_TEST_SLOW=N allows N times the time per test (valgrind);
 * RSIM_QTEST_ARGS adds QEMU arguments (e.g. -trace rdma_sim_*).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef LIBQOS_RDMA_SIM_H
#define LIBQOS_RDMA_SIM_H

#include "qemu/bswap.h"
/* QDict, QList (qtest_qmp() answers): include/qapi/qmp/ before QEMU 10.0 */
#if QEMU_VERSION_MAJOR >= 10
#include "qobject/qdict.h"
#include "qobject/qlist.h"
#else
#include "qapi/qmp/qdict.h"
#include "qapi/qmp/qlist.h"
#endif
#include "libqtest.h"
#include "libqos/libqos-pc.h"
#include "libqos/pci.h"
#include "hw/pci/pci_regs.h"
/* for hw/rdma-sim/rdma_sim_hw.h: in hw/core/ from 11.0 (10.2.50) on */
#if QEMU_VERSION_MAJOR * 10000 + QEMU_VERSION_MINOR * 100 + \
    QEMU_VERSION_MICRO >= 100250
#include "hw/core/registerfields.h"
#else
#include "hw/registerfields.h"
#endif
#include "hw/rdma-sim/rdma_sim_hw.h"

/* The device is at 00:04.0 with this MAC, unless a test says otherwise */
#define QSIM_DEVFN          QPCI_DEVFN(4, 0)
#define QSIM_MAC            "52:54:00:12:34:56"
/* EUI-64 of QSIM_MAC: 0xfffe inserted, U/L bit (0x02 of byte 0) flipped */
#define QSIM_GUID           0x505400fffe123456ULL
/* Guest-physical address where nothing is mapped */
#define QSIM_UNMAPPED       0xfff000000000ULL
#define QSIM_PAGE           4096u
/* How long to wait for something the device must do, and for "nothing" */
#define QSIM_POLL_US        (5 * G_USEC_PER_SEC)
#define QSIM_QUIET_US       (20 * 1000)
/* Data of the MSI-X message of vector v (see qsim_msix_setup()) */
#define QSIM_MSIX_DATA(v)   (0xa000u + (v))

#define QSIM_READY          R_RSIM_DEV_STATUS_READY_MASK
#define QSIM_FATAL          R_RSIM_DEV_STATUS_FATAL_MASK
#define QSIM_FATAL_STATUS(r) \
    (QSIM_FATAL | ((r) << R_RSIM_DEV_STATUS_FATAL_REASON_SHIFT))

#define QSIM_ACC_LW         RSIM_ACCESS_LOCAL_WRITE
#define QSIM_ACC_RW         RSIM_ACCESS_REMOTE_WRITE
#define QSIM_ACC_RR         RSIM_ACCESS_REMOTE_READ
#define QSIM_ACC_RA         RSIM_ACCESS_REMOTE_ATOMIC
#define QSIM_ACC_ALL        (QSIM_ACC_LW | QSIM_ACC_RW | QSIM_ACC_RR | \
                             QSIM_ACC_RA)

/* ==== Test registration (rdma-sim.c) ==== */

/* The machines a test runs on, and its path below /<arch>/rdma-sim/ */
typedef enum QSimMachines {
    QSIM_PC_Q35,        /* (0) on pc and on q35: <machine>/<name> */
    QSIM_PC_ONLY,       /* only on pc (ACPI hotplug): pc/<name> */
    QSIM_ONCE,          /* the machine does not matter: <name>, on pc */
} QSimMachines;

typedef struct QSimTest {
    const char *name;
    void (*fn)(const char *machine);
    QSimMachines machines;
} QSimTest;

/*
 * Register the tests and run them, each in a subprocess with a time limit.
 * The subprocess's random numbers (qsim_rand()) come from a seed the
 * parent draws with g_test_rand_int(): a run with the same --seed repeats.
 */
int qsim_main(int argc, char **argv, const QSimTest *tests, size_t n);

uint32_t qsim_rand(void);
int32_t qsim_rand_range(int32_t begin, int32_t end);

/* A progress note (loop index, command) on stderr if RSIM_TEST_VERBOSE=1 */
void G_GNUC_PRINTF(1, 2) qsim_note(const char *fmt, ...);
/* When a wait of usec from now ends, scaled as the test's own limit */
int64_t qsim_deadline(int64_t usec);

/* ==== The device, its registers and admin queues (rdma-sim.c) ==== */

typedef struct QSimDev {
    QOSState *qs;
    QTestState *qts;
    QPCIDevice *dev;
    QPCIBar bar0, bar2;
    uint64_t bar0_size, bar2_size;
    uint64_t scratch;           /* 4 KiB: attribute blocks, stats */
    /* admin queues as the driver tracks them */
    uint64_t aq, acq, aeq;
    uint32_t aq_depth, acq_depth, aeq_depth;
    uint32_t aq_tail, acq_head, aeq_head;
    bool acq_phase, aeq_phase;
    uint16_t cmd_id, first_cmd_id;
    /* MSI-X: vector v writes QSIM_MSIX_DATA(v) to msix_mem + 4 * v */
    uint64_t msix_mem;
    int sock;                   /* our end of a stream netdev, or -1 */
    GPtrArray *ring_pages;      /* QSimRing.pages, freed with the device */
    /*
     * Lets QEMU run while a helper waits for the device: NULL when QEMU is
     * a process of its own (the qtests); the fuzz targets, whose QEMU runs
     * in their own process, run its main loop.
     */
    void (*run)(struct QSimDev *d);
    /* How qsim_start_args() started QEMU, for qsim_migrate() (else NULL) */
    char *machine, *props, *netdev, *args;
} QSimDev;

/*
 * Boot QEMU on machine with the device at 00:04.0, MAC QSIM_MAC.
 * props: more -device properties ("max-qp=64,..."; a mac= there comes
 * later and wins), or NULL; netdev: the options of a -netdev with id n0
 * that the port is connected to, or NULL.
 */
QSimDev *qsim_start(const char *machine, const char *props,
                    const char *netdev);
/* ... and more QEMU arguments (e.g. "-d guest_errors -D FILE") */
QSimDev *qsim_start_args(const char *machine, const char *props,
                         const char *netdev, const char *args);
/* The QEMU qsim_start_args() starts, with -incoming incoming unless NULL */
QOSState *qsim_boot(const char *machine, const char *props,
                    const char *netdev, const char *args,
                    const char *incoming);
/*
 * ... with the port on a stream socket netdev whose other end is d->sock
 * (frames carry a 4-byte big-endian length)
 */
QSimDev *qsim_start_stream(const char *machine);
/* qsim_start() and qsim_bringup() */
QSimDev *qsim_up(const char *machine, const char *props);
void qsim_stop(QSimDev *d);
/* The device at QSIM_DEVFN of a pc machine that runs in this process */
QSimDev *qsim_in_process(QTestState *qts, void (*run)(QSimDev *d));
/*
 * After the device's reset and guest RAM zeroed (the fuzz targets): every
 * guest allocation and what the driver knew of the device forgotten; the
 * BARs and the MSI-X table stay where they are.
 */
void qsim_forget(QSimDev *d);
/* Another rdma-sim function of the same machine (hot-plugged) */
QSimDev *qsim_attach(QSimDev *d, int devfn);
void qsim_detach(QSimDev *h);
/* Enable the device and map its BARs (again, after a machine reset) */
void qsim_map_bars(QSimDev *d);

/* ---- The machine: migration, saving, snapshots (rdma-sim-machine.c) ---- */

/*
 * Migrate src's machine to a new QEMU started the same way (with props
 * instead of src's -device properties unless NULL: only fault-* may
 * differ) and return the device there.  What the driver knows moves with
 * it: queues, indexes, allocations, MSI-X, BARs, so every helper goes on
 * where it left off, with the QSimRings, QSimEqs, QSimPair... made on src
 * (a pair: p->d = qsim_migrate(p->d, NULL)).  src's QEMU, paused in
 * postmigrate, is ended and src freed.  A stopped machine arrives
 * stopped.  The virtual clock does not move with the machine: the
 * destination's starts from its own count.  Not for
 * a device with a stream peer (d->sock), in process or hot-plugged.
 */
QSimDev *qsim_migrate(QSimDev *src, const char *props);
/*
 * Migrate src's machine to a QEMU started with other -device props
 * (props: all of them): the destination refuses the stream and exits
 * with status 1.  src runs on: continued if it finished sending (it
 * has no return path to hear of the failure).
 */
void qsim_migrate_refused(QSimDev *src, const char *props);
/*
 * Save d's machine to a file (a migration; a running machine runs on) and
 * return the length of the stream's section idstr (e.g.
 * "0000:00:04.0/rdma-sim"): its header, fields and footer.
 */
size_t qsim_stream_section_size(QSimDev *d, const char *idstr);
/*
 * Snapshots (savevm / loadvm as QMP jobs): qsim_snapshot_disk() creates a
 * qcow2 image at path, the node that holds them; save and load keep a
 * stopped machine stopped and a running one running.
 */
void qsim_snapshot_disk(QSimDev *d, const char *path);
void qsim_snapshot_save(QSimDev *d, const char *tag);
void qsim_snapshot_load(QSimDev *d, const char *tag);
/* Is d's machine running (QMP query-status)? */
bool qsim_vm_running(QSimDev *d);
/*
 * Wait (bounded) until d's outgoing migration completed; d's machine is
 * then paused in postmigrate.
 */
void qsim_wait_migrated(QSimDev *d);

/* ---- Guest memory, registers, bring-up ---- */

/* Zeroed guest memory */
uint64_t qsim_alloc(QSimDev *d, size_t size);
/* len bytes of guest memory at addr set to byte */
void qsim_memset(QSimDev *d, uint64_t addr, uint8_t byte, size_t len);

uint32_t qsim_rd(QSimDev *d, uint32_t off);
void qsim_wr(QSimDev *d, uint32_t off, uint32_t val);
uint64_t qsim_rd64(QSimDev *d, uint32_t lo_off);
void qsim_wr64(QSimDev *d, uint32_t lo_off, uint64_t val);
/* Write a doorbell register in a page of BAR2. */
void qsim_db(QSimDev *d, unsigned page, uint32_t off, uint32_t val);

typedef struct QSimRegVal {
    uint32_t off;
    uint32_t val;
} QSimRegVal;

void qsim_check_regs(QSimDev *d, const QSimRegVal *r, size_t n);
/* Every register has its value after reset (default properties) */
void qsim_check_reset_regs(QSimDev *d);

/* DEV_CTRL.RESET: complete when the write returns. */
void qsim_reset(QSimDev *d);
/* Allocate zeroed admin queues and program (but do not enable) them. */
void qsim_set_queues(QSimDev *d, uint32_t aq_depth, uint32_t acq_depth,
                     uint32_t aeq_depth);
void qsim_enable(QSimDev *d, uint32_t aq_depth, uint32_t acq_depth,
                 uint32_t aeq_depth);
/* Reset and enable with roomy queues; consume the port event. */
void qsim_bringup(QSimDev *d);

/* Let the device run whatever it has to do: a short quiet period. */
void qsim_settle(QSimDev *d);
/* One step of a helper's wait for the device (see QSimDev.run) */
void qsim_run(QSimDev *d);

/* ---- event queue entries (the AEQ and completion EQs) ---- */

unsigned qsim_eqe_type(const struct rsim_eqe *e);
/* Take the next entry of an EQ ring, if one arrives in time. */
bool qsim_eqe_poll(QSimDev *d, uint64_t base, uint32_t depth,
                   uint32_t *head, bool *phase, struct rsim_eqe *e,
                   int64_t timeout_us);
/* Take the next async event, if one arrives in time, and report it read. */
bool qsim_aeq_poll(QSimDev *d, struct rsim_eqe *e, int64_t timeout_us);
void qsim_aeq_expect_data(QSimDev *d, unsigned type, uint32_t object,
                          uint64_t data);
void qsim_aeq_expect(QSimDev *d, unsigned type, uint32_t object);
void qsim_aeq_expect_none(QSimDev *d);

/* ---- admin commands ---- */

#define QSIM_CMD_INIT(c, op)                                            \
    do {                                                                \
        memset(&(c), 0, sizeof(c));                                     \
        (c).dw0 = cpu_to_le32(op);                                      \
    } while (0)

const char *qsim_sts_name(unsigned st);

/* Compare statuses by name first, so that a failure says what happened. */
#define qsim_assert_sts(got, want)                                      \
    do {                                                                \
        unsigned got_ = (got), want_ = (want);                          \
        if (got_ != want_) {                                            \
            g_assert_cmpstr(qsim_sts_name(got_), ==,                    \
                            qsim_sts_name(want_));                      \
            g_assert_cmphex(got_, ==, want_);                           \
        }                                                               \
    } while (0)

/* Put a command (its ID replaced by the next one) into the AQ. */
uint16_t qsim_aq_put(QSimDev *d, const void *cmd);
/* ... and write AQ_TAIL */
uint16_t qsim_aq_submit(QSimDev *d, const void *cmd);
/* Take the next admin completion, if one arrives in time (no ACQ_HEAD). */
bool qsim_acq_poll(QSimDev *d, struct rsim_admin_cqe *cqe,
                   int64_t timeout_us);
void qsim_acq_ack(QSimDev *d);
unsigned qsim_cqe_id(const struct rsim_admin_cqe *cqe);
unsigned qsim_cqe_status(const struct rsim_admin_cqe *cqe);
/* Execute one command; its status; result (56 bytes) may be NULL. */
unsigned qsim_cmd_exec(QSimDev *d, const void *cmd, void *result);
/* The device is alive and usable: READY, not FATAL, a NOP completes OK. */
void qsim_assert_alive(QSimDev *d);
/* Execute and check the status; after an error, check the device lives. */
void qsim_cmd_expect(QSimDev *d, const void *cmd, unsigned want);
/* Commands that only name an object */
void qsim_handle_expect(QSimDev *d, uint8_t op, uint32_t handle,
                        unsigned want);
/* A command that creates an object: it must succeed; the handle(s) */
uint32_t qsim_create(QSimDev *d, const void *cmd, uint32_t *handle2);
uint32_t qsim_resp_handle(const struct rsim_create_resp *r);

/* One statistics counter (enum rsim_stat) */
uint64_t qsim_stat(QSimDev *d, unsigned index);
/* The virtual clock, in ns (it moves on by 1 ns) */
int64_t qsim_clock_now(QSimDev *d);

/* ---- Introspection: the device's QOM properties (introspect.c) ---- */

/* The device's id for qom-get: give it the property "id=" QSIM_QOM_ID */
#define QSIM_QOM_ID         "rsim"

/* qom-get of a property of the device QSIM_QOM_ID */
QObject *qsim_qom_get(QSimDev *d, const char *property);
/* Every introspection property (port, counters, qps, ...) by name */
QDict *qsim_introspect(QSimDev *d);
/* a and b have the same members, equal; a difference is shown as JSON */
void qsim_assert_same_dict(QDict *a, QDict *b);

/* ---- MSI-X: messages land in guest memory ---- */

/* MSI-X on, each vector's message to its word of d->msix_mem */
void qsim_msix_setup(QSimDev *d);
/* Did vector v fire since the last call?  Clears the record. */
bool qsim_irq_fired(QSimDev *d, unsigned v);

/* ==== Rings, objects, work requests (rdma-sim-objects.c) ==== */

/* An SQ, RQ, SRQ or CQ ring */
typedef struct QSimRing {
    struct rsim_queue_desc desc;   /* little-endian, ready for commands */
    uint32_t depth;
    uint32_t log2_elem;
    uint64_t bytes;                /* header + elements */
    uint64_t base;                 /* level 0 */
    uint32_t npages;               /* levels 1 and 2 */
    uint64_t *pages;               /* as long as the QSimDev lives */
    uint32_t cons;                 /* our consumer index of a CQ */
} QSimRing;

/* A level 1 list or a level 2 root + leaves for n page addresses */
uint64_t qsim_pbl_build(QSimDev *d, unsigned level, const uint64_t *pages,
                        uint32_t n);
/*
 * A ring of 2^log2_depth elements of 2^log2_elem bytes.  Levels 1 and 2
 * use separately allocated 4 KiB pages in reverse address order, so that
 * the ring is not contiguous.
 */
void qsim_ring_init(QSimDev *d, QSimRing *r, unsigned level,
                    unsigned log2_depth, unsigned log2_elem);
void qsim_elem_write(QSimDev *d, const QSimRing *r, uint32_t index,
                     const void *buf, size_t len);
void qsim_elem_read(QSimDev *d, const QSimRing *r, uint32_t index,
                    void *buf, size_t len);
uint32_t qsim_ring_prod(QSimDev *d, const QSimRing *r);
uint32_t qsim_ring_cons(QSimDev *d, const QSimRing *r);
void qsim_ring_set_prod(QSimDev *d, const QSimRing *r, uint32_t val);
void qsim_ring_set_cons(QSimDev *d, const QSimRing *r, uint32_t val);

/* ---- work requests (Soft-RoCE WQE layout) ---- */

typedef struct QSimWr {
    uint64_t wr_id;
    uint32_t opcode;
    uint32_t flags;             /* RSIM_SEND_SIGNALED is added ... */
    bool unsignaled;            /* ... unless this is set */
    uint32_t ex;
    uint64_t remote_addr;
    uint32_t rkey;
    uint64_t compare_add;
    uint64_t swap;
    uint32_t ah_num;            /* UD */
    uint32_t remote_qpn;
    uint32_t remote_qkey;
    uint32_t nsge;
    struct rsim_sge sge[4];     /* ATOMIC_WRITE: its 8 bytes in sge[0] */
    uint32_t dma_length;        /* dma.length: read only for inline data */
} QSimWr;

/* Put a send WQE into sq (no doorbell) */
void qsim_post_send(QSimDev *d, const QSimRing *sq, const QSimWr *wr);
/* Put a send WQE without data into sq (no doorbell): to flush or refuse */
void qsim_post_empty(QSimDev *d, const QSimRing *sq, uint64_t wr_id,
                     uint32_t opcode);
/* Put a receive WQE with one SGE, or none if sge is NULL, into rq. */
void qsim_post_recv(QSimDev *d, const QSimRing *rq, uint64_t wr_id,
                    const struct rsim_sge *sge);

/* ---- completions ---- */

/*
 * Take the next completion of a CQ; it must come in time.  The virtual
 * clock moves meanwhile, for the transport's timers.
 */
void qsim_cq_poll(QSimDev *d, QSimRing *cq, struct rsim_cqe *e);
/*
 * A completion's fields.  An error other than a flush leaves opcode and
 * byte_len undefined (IBTA): they are checked on success and flush only.
 */
void qsim_cqe_check(const struct rsim_cqe *e, uint64_t wr_id,
                    unsigned status, unsigned opcode, uint32_t byte_len,
                    uint32_t qpn);
void qsim_cq_expect(QSimDev *d, QSimRing *cq, uint64_t wr_id,
                    unsigned status, unsigned opcode, uint32_t byte_len,
                    uint32_t qpn);
void qsim_cq_expect_flush(QSimDev *d, QSimRing *cq, uint64_t wr_id,
                          unsigned opcode, uint32_t qpn);
void qsim_cq_expect_empty(QSimDev *d, QSimRing *cq);

/* ---- PDs, EQs, CQs ---- */

uint32_t qsim_pd_alloc(QSimDev *d);

typedef struct QSimEq {
    uint32_t eqn;
    uint32_t vector;
    uint64_t addr;
    uint32_t depth;
    uint32_t head;
    bool phase;
} QSimEq;

void qsim_eq_cmd(struct rsim_cmd_create_eq *c, uint32_t vector,
                 uint64_t addr, uint32_t depth);
uint32_t qsim_eq_create(QSimDev *d, QSimEq *eq, uint32_t vector,
                        uint32_t depth);
bool qsim_eq_poll(QSimDev *d, QSimEq *eq, struct rsim_eqe *e,
                  int64_t timeout_us);
/* Report our consumer index, optionally arming the EQ. */
void qsim_eq_doorbell(QSimDev *d, QSimEq *eq, bool arm);
void qsim_eq_expect(QSimDev *d, QSimEq *eq, unsigned type, uint32_t object);
void qsim_eq_expect_none(QSimDev *d, QSimEq *eq);

void qsim_cq_cmd(struct rsim_cmd_create_cq *c, uint32_t eqn,
                 const QSimRing *r);
uint32_t qsim_cq_create(QSimDev *d, QSimRing *r, uint32_t eqn,
                        unsigned level, unsigned log2_depth);
/* CQ doorbell: arm a CQ from a doorbell page */
void qsim_cq_arm_db(QSimDev *d, unsigned page, uint32_t cqn, unsigned arm);

void qsim_srq_cmd(struct rsim_cmd_create_srq *c, uint32_t pdn,
                  const QSimRing *r, uint8_t max_sge, uint32_t limit);
void qsim_ethq_cmd(struct rsim_cmd_create_ethq *c, uint8_t kind,
                   uint32_t eqn, uint64_t addr, uint32_t depth);

/* ---- GIDs and address vectors ---- */

/* A v4-mapped RoCEv2 GID ::ffff:a.b.c.e */
void qsim_gid_v4(uint8_t *gid, uint8_t a, uint8_t b, uint8_t c, uint8_t e);
/* fe80::x */
void qsim_gid_v6(uint8_t *gid, uint8_t x);
void qsim_gid_cmd(struct rsim_cmd_gid *c, uint8_t op, uint32_t index,
                  const uint8_t *gid);
void qsim_gid_add(QSimDev *d, uint32_t index, const uint8_t *gid);
/* GID index: ::ffff:10.0.0.last */
void qsim_gid_add_v4(QSimDev *d, uint32_t index, uint8_t last);
/* An IPv4 address vector towards 10.0.0.2 through GID sgid_index */
void qsim_av_v4(struct rsim_av *av, uint8_t sgid_index);
/* CREATE_AH with qsim_av_v4(..., 0) */
void qsim_ah_cmd(struct rsim_cmd_create_ah *c, uint32_t pdn);

/* ---- QPs ---- */

typedef struct QSimQp {
    uint32_t qpn;
    QSimRing sq, rq;
} QSimQp;

/* SQ: 8 x 256 bytes (header + 1 SGE); RQ: 8 x 64 bytes (header + 1 SGE) */
void qsim_qp_rings(QSimDev *d, QSimQp *qp, unsigned level);
/* CREATE_QP for qp's rings with one SGE each way and no SRQ */
void qsim_qp_cmd(struct rsim_cmd_create_qp *c, uint8_t type, uint32_t pdn,
                 uint32_t scqn, uint32_t rcqn, const QSimQp *qp);
/* qsim_qp_rings(), a QP with CQ cqn for both */
uint32_t qsim_qp_create(QSimDev *d, QSimQp *qp, uint8_t type, uint32_t pdn,
                        uint32_t cqn, unsigned level);
/* MODIFY_QP; its status */
unsigned qsim_qp_modify(QSimDev *d, uint32_t qpn,
                        const struct rsim_qp_attr *a);
void qsim_qp_query(QSimDev *d, uint32_t qpn, struct rsim_qp_attr *a);
unsigned qsim_qp_state(QSimDev *d, uint32_t qpn);
void qsim_attr_init(struct rsim_qp_attr *a, uint8_t state, uint32_t mask);
void qsim_attr_set_mask(struct rsim_qp_attr *a, uint32_t mask);
uint32_t qsim_attr_mask(const struct rsim_qp_attr *a);
/* Modify that must succeed, then the state must be the new one. */
void qsim_qp_modify_ok(QSimDev *d, uint32_t qpn,
                       const struct rsim_qp_attr *a);
/* A transition without attributes (to ERR, RESET, SQD, ...) */
void qsim_qp_move(QSimDev *d, uint32_t qpn, uint8_t state);
/* The attributes of each RC transition, with distinctive values */
void qsim_attr_rc_init(struct rsim_qp_attr *a);
void qsim_attr_rc_rtr(struct rsim_qp_attr *a);
void qsim_attr_rc_rts(struct rsim_qp_attr *a);
void qsim_qp_rc_to_init(QSimDev *d, uint32_t qpn);
/* RESET -> INIT -> RTR -> RTS; needs GID 0 */
void qsim_qp_rc_to_rts(QSimDev *d, uint32_t qpn);
void qsim_sq_doorbell(QSimDev *d, unsigned page, uint32_t qpn);

/* A common setup: PD, EQ (vector 1), CQ and an RC QP in INIT */
typedef struct QSimEnv {
    uint32_t pdn;
    QSimEq eq;
    QSimRing cq;
    uint32_t cqn;
    QSimQp qp;
} QSimEnv;

void qsim_env_setup(QSimDev *d, QSimEnv *env, unsigned level,
                    unsigned cq_log2_depth);
/* Flush n send WQEs of env's QP into its CQ (the QP ends up in ERR) */
void qsim_flush_sends(QSimDev *d, QSimEnv *env, unsigned n,
                      uint64_t first_id);

/* ---- memory registration ---- */

void qsim_mr_cmd(struct rsim_cmd_reg_mr *c, uint32_t pdn, uint32_t access,
                 uint64_t iova, uint64_t length, unsigned level,
                 uint64_t pbl, uint32_t npages, unsigned page_shift,
                 uint32_t fbo);
/* A level 0 MR over [addr, addr + length) with iova == addr */
uint32_t qsim_mr_reg_l0(QSimDev *d, uint32_t pdn, uint32_t access,
                        uint64_t addr, uint64_t length);
/* MR_TRANSLATE; its status; the response in r unless NULL */
unsigned qsim_mr_translate(QSimDev *d, uint32_t key, uint32_t pdn,
                           uint32_t access, uint64_t iova, uint64_t len,
                           struct rsim_mr_translate_resp *r);
void qsim_xlate_fail(QSimDev *d, uint32_t key, uint32_t pdn,
                     uint32_t access, uint64_t iova, uint64_t len,
                     unsigned want);

/* A buffer of new guest memory with a level 0 MR over it (iova = addr) */
typedef struct QSimMr {
    uint64_t addr;
    uint64_t len;
    uint32_t lkey;
    uint32_t rkey;
} QSimMr;

QSimMr qsim_mr_alloc(QSimDev *d, uint32_t pdn, uint64_t len,
                     uint32_t access);
/* An SGE over [off, off + len) of mr */
struct rsim_sge qsim_sge(const QSimMr *mr, uint64_t off, uint32_t len);

/* ---- QPs that move data ---- */

/*
 * A QP with a send and a receive CQ of its own: 64-entry level 0 rings,
 * 1 KiB send and 256-byte receive elements, 4 SGEs, 256 bytes inline.
 */
typedef struct QSimEndpoint {
    QSimQp qp;
    QSimRing scq, rcq;
    uint32_t scqn, rcqn;
} QSimEndpoint;

void qsim_endpoint_create(QSimDev *d, QSimEndpoint *ep, uint8_t type,
                          uint32_t pdn, uint32_t eqn);

/* Where an RC or UC QP sends to, and how */
typedef struct QSimPath {
    uint8_t type;               /* RSIM_QPT_RC or RSIM_QPT_UC */
    uint32_t access;            /* the QP's access flags */
    struct rsim_av av;
    uint8_t path_mtu;
    uint32_t dest_qpn, rq_psn, sq_psn;
    uint8_t timeout, retry_cnt; /* RC */
    uint8_t rd_atomic;          /* max_rd_atomic, max_dest_rd_atomic */
    uint8_t min_rnr_timer;      /* RC */
    uint8_t state;              /* where to stop: INIT, RTR; 0: RTS */
} QSimPath;

/*
 * RESET -> INIT -> RTR -> RTS on path, or only up to path->state (RNR
 * retries: infinite)
 */
void qsim_qp_connect(QSimDev *d, uint32_t qpn, const QSimPath *path);
/* RESET -> INIT -> RTR -> RTS for a UD or GSI QP with a Q_Key */
void qsim_qp_ud_ready(QSimDev *d, uint32_t qpn, uint32_t qkey);
/* Post wr to qp's SQ and ring its doorbell (page 0). */
void qsim_send(QSimDev *d, const QSimQp *qp, const QSimWr *wr);

/* ---- A pair of connected QPs (RC or UC) of one device ---- */

#define QSIM_PAIR_EQ_DEPTH      64
#define QSIM_PAIR_BUF_SIZE      (256 * 1024)

/* GID 0 of the device: ::ffff:192.168.7.1, or 2001:db8::42 */
extern const uint8_t qsim_pair_gid_v4[16];
extern const uint8_t qsim_pair_gid_v6[16];

/* A pair of QPs A and B, connected to each other, with a buffer each */
typedef struct QSimPair {
    QSimDev *d;
    uint32_t pdn;
    QSimEq eq;
    QSimEndpoint a, b;
    QSimMr ma, mb;
} QSimPair;

/*
 * How a pair differs from RC over IPv4 with path MTU 1024, B granting
 * all access, a local ACK timeout of 10 (4.096 us << 10) and 7 retries
 */
typedef struct QSimPairConf {
    const char *props;          /* more -device properties */
    uint8_t type;               /* 0: RSIM_QPT_RC */
    bool ipv6;                  /* a global GID: frames with IPv6 headers */
    uint8_t path_mtu;
    uint32_t b_access;
    uint8_t timeout;
    uint8_t retry;
    uint64_t eq_addr;           /* the EQ's ring (0: allocated) */
    uint8_t b_rd_atomic;        /* B's READ/atomic limits (0: 4, as A's) */
    const uint8_t *dmac;        /* the AVs' MAC (NULL: the port's) */
    const char *args;           /* more QEMU arguments (e.g. -trace) */
} QSimPairConf;

/* Bring a device up with a connected pair (conf NULL: the defaults) */
void qsim_pair_start(QSimPair *p, const char *machine,
                     const QSimPairConf *conf);
/* The port's MAC: loopback traffic is addressed to it */
void qsim_port_mac(QSimDev *d, uint8_t *mac);
/* Fault injection props (in ppm) with RSIM_QTEST_SEED, else this seed */
char *qsim_faults(const char *props, const char *seed);

/* ==== RoCEv2 frames (rdma-sim-roce.c) ==== */

/* ICRC of the RoCEv2 frame f of len bytes, not counting its last 4 (IPv4/6) */
uint32_t qsim_icrc(const uint8_t *f, size_t len);

/* What qsim_roce_finish() leaves as it is */
#define QSIM_KEEP_IP_LEN    (1u << 0)   /* IPv4 total / IPv6 payload length */
#define QSIM_KEEP_IP_CSUM   (1u << 1)   /* IPv4 header checksum */
#define QSIM_KEEP_UDP_LEN   (1u << 2)
#define QSIM_KEEP_ICRC      (1u << 3)   /* the frame's last 4 bytes are it */

/*
 * Make the len bytes at f, an Ethernet frame with a RoCEv2 packet without
 * its ICRC, a valid frame: IP and UDP lengths, IPv4 header checksum, ICRC
 * appended (f has room for 4 more bytes), except what keep (QSIM_KEEP_*)
 * names.  Fields a frame is too short for, and all of a frame that is not
 * IPv4 or IPv6, stay as they are (an ICRC that cannot be computed is 0).
 * Returns the length of the frame.
 */
size_t qsim_roce_finish(uint8_t *f, size_t len, unsigned keep);

/* Byte i of the test pattern with this seed */
uint8_t qsim_pattern_byte(uint8_t seed, size_t i);
void qsim_fill_pattern(QSimDev *d, uint64_t addr, size_t len, uint8_t seed);
void qsim_check_pattern(QSimDev *d, uint64_t addr, size_t len,
                        uint8_t seed);

#endif
