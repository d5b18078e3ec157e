/*
 * QTest testcase for the rdma-sim RoCEv2 RDMA NIC, at register level
 *
 * The tests drive the device the way a driver does (docs/datasheet.md):
 * registers in BAR0, doorbells in BAR2, MSI-X, and the admin, event, work
 * and completion queues in guest memory.  Every check compares concrete
 * values.  Each test case boots its own QEMU, so a failure cannot cascade,
 * and every error case is followed by a check that the device still
 * answers a NOP.
 *
 * Layout of this file:
 *   - a small driver-like helper layer: device bring-up, admin commands
 *     with phase tracking, event queues, rings and page lists, objects
 *   - the tests, grouped by area (PCI, reset, admin queue, commands, QPs,
 *     queues, MRs, doorbells, hostile input, MSI-X)
 *   - registration: every test runs on -M pc and -M q35, each in its own
 *     subprocess, so that a failed assertion ends only that test
 *
 * Run one test:  QTEST_QEMU_BINARY=./qemu-system-x86_64
 *                ./tests/qtest/rdma-sim-test -p /x86_64/rdma-sim/pc/qp/illegal
 * RSIM_TEST_VERBOSE=1 prints every command and loop step on stderr;
 * RSIM_TEST_SLOW=N allows N times the time per test (e.g. under valgrind).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <sys/socket.h>
#include "qemu/bswap.h"
#include "libqtest.h"
#include "libqos/libqos-pc.h"
#include "libqos/pci.h"
#include "qapi/qmp/qdict.h"
#include "hw/pci/pci_regs.h"
#include "hw/rdma-sim/rdma_sim_hw.h"

/*
 * ------------------------------------------------------------------------
 * Constants of the test setup
 * ------------------------------------------------------------------------
 */

#define RSIM_DEVFN          QPCI_DEVFN(4, 0)
#define TEST_MAC            "52:54:00:12:34:56"
/* EUI-64 of TEST_MAC: 0xfffe inserted, U/L bit (0x02 of byte 0) flipped */
#define TEST_GUID           0x505400fffe123456ULL
/* Guest-physical address where nothing is mapped */
#define UNMAPPED            0xfff000000000ULL
#define PAGE                4096u
/* How long to wait for something the device must do, and for "nothing" */
#define POLL_US             (5 * G_USEC_PER_SEC)
#define QUIET_US            (20 * 1000)
/* Limit for one test case (they take well under a second each) */
#define TEST_TIMEOUT_US     (60 * G_USEC_PER_SEC)
/* Data of the MSI-X message of vector v */
#define MSIX_DATA(v)        (0xa000u + (v))

#define DEV_READY           R_RSIM_DEV_STATUS_READY_MASK
#define DEV_FATAL           R_RSIM_DEV_STATUS_FATAL_MASK
#define FATAL_STATUS(r)     \
    (DEV_FATAL | ((r) << R_RSIM_DEV_STATUS_FATAL_REASON_SHIFT))

#define ACC_LW              RSIM_ACCESS_LOCAL_WRITE
#define ACC_RW              RSIM_ACCESS_REMOTE_WRITE
#define ACC_RR              RSIM_ACCESS_REMOTE_READ
#define ACC_RA              RSIM_ACCESS_REMOTE_ATOMIC
#define ACC_ALL             (ACC_LW | ACC_RW | ACC_RR | ACC_RA)

/*
 * ------------------------------------------------------------------------
 * The device and its admin queues
 * ------------------------------------------------------------------------
 */

typedef struct Rsim {
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
    uint16_t cmd_id;
    /* MSI-X: vector v writes MSIX_DATA(v) to msix_mem + 4 * v */
    uint64_t msix_mem;
    int sock;                   /* our end of the netdev socket, or -1 */
} Rsim;

static const char *sts_name(unsigned st)
{
    static const char *const names[] = {
        "OK", "BAD_OPCODE", "INVALID", "RESERVED", "BAD_HANDLE", "BAD_STATE",
        "NO_RESOURCES", "LIMIT", "BUSY", "DMA", "ACCESS", "UNSUPPORTED",
        "RANGE", "EXISTS",
    };

    return st < ARRAY_SIZE(names) ? names[st] : "(not a status)";
}

/* Compare statuses by name first, so that a failure says what happened. */
#define assert_sts(got, want)                                           \
    do {                                                                \
        unsigned got_ = (got), want_ = (want);                          \
        if (got_ != want_) {                                            \
            g_assert_cmpstr(sts_name(got_), ==, sts_name(want_));       \
            g_assert_cmphex(got_, ==, want_);                           \
        }                                                               \
    } while (0)

/*
 * Progress notes (loop indexes, commands): printed on stderr when the
 * environment has RSIM_TEST_VERBOSE=1, to locate a failure.
 */
static bool verbose;
/* RSIM_TEST_SLOW=N multiplies the time limit of a test (valgrind) */
static unsigned timeout_factor = 1;

static void G_GNUC_PRINTF(1, 2) note(const char *fmt, ...)
{
    va_list ap;

    if (!verbose) {
        return;
    }
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static uint64_t galloc(Rsim *d, size_t size)
{
    uint64_t addr = guest_alloc(&d->qs->alloc, size);

    g_assert(addr);
    qtest_memset(d->qts, addr, 0, size);
    return addr;
}

static uint32_t rd(Rsim *d, uint32_t off)
{
    return qpci_io_readl(d->dev, d->bar0, off);
}

static void wr(Rsim *d, uint32_t off, uint32_t val)
{
    qpci_io_writel(d->dev, d->bar0, off, val);
}

/* Write a doorbell register in a page of BAR2. */
static void db(Rsim *d, unsigned page, uint32_t off, uint32_t val)
{
    qpci_io_writel(d->dev, d->bar2, (uint64_t)page * RSIM_DB_PAGE_SIZE + off,
                   val);
}

static void wr64(Rsim *d, uint32_t lo_off, uint64_t val)
{
    wr(d, lo_off, (uint32_t)val);
    wr(d, lo_off + 4, val >> 32);
}

static uint64_t rd64(Rsim *d, uint32_t lo_off)
{
    return rd(d, lo_off) | (uint64_t)rd(d, lo_off + 4) << 32;
}

static void map_bars(Rsim *d)
{
    qpci_device_enable(d->dev);
    d->bar0 = qpci_iomap(d->dev, RSIM_BAR_REGS, &d->bar0_size);
    d->bar2 = qpci_iomap(d->dev, RSIM_BAR_DOORBELL, &d->bar2_size);
}

/*
 * Boot QEMU with the device at 00:04.0.  props are extra -device
 * properties; with net the port is connected to a socket netdev whose
 * other end is d->sock (frames carry a 4-byte big-endian length).
 */
static Rsim *rsim_start(const char *machine, const char *props, bool net)
{
    Rsim *d = g_new0(Rsim, 1);
    g_autofree char *netdev = NULL;
    int sv[2] = { -1, -1 };

    if (net) {
        g_assert_cmpint(socketpair(PF_UNIX, SOCK_STREAM, 0, sv), ==, 0);
        netdev = g_strdup_printf(" -netdev socket,fd=%d,id=n0", sv[1]);
    }
    d->qs = qtest_pc_boot("-M %s -nodefaults%s "
                          "-device rdma-sim,addr=04.0,mac=" TEST_MAC "%s%s%s",
                          machine, net ? netdev : "", net ? ",netdev=n0" : "",
                          props ? "," : "", props ? props : "");
    d->qts = d->qs->qts;
    d->sock = -1;
    if (net) {
        struct timeval tv = { .tv_sec = 5 };

        close(sv[1]);
        d->sock = sv[0];
        setsockopt(d->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    }
    d->dev = qpci_device_find(d->qs->pcibus, RSIM_DEVFN);
    g_assert(d->dev);
    map_bars(d);
    d->scratch = galloc(d, PAGE);
    d->cmd_id = 0x100;
    return d;
}

static void rsim_stop(Rsim *d)
{
    if (d->sock >= 0) {
        close(d->sock);
    }
    g_free(d->dev);
    qtest_shutdown(d->qs);
    g_free(d);
}

/* Another rdma-sim function of the same machine (hot-plugged) */
static Rsim *rsim_attach(Rsim *d, int devfn)
{
    Rsim *h = g_new0(Rsim, 1);

    h->qs = d->qs;
    h->qts = d->qts;
    h->sock = -1;
    h->dev = qpci_device_find(d->qs->pcibus, devfn);
    g_assert(h->dev);
    map_bars(h);
    h->scratch = galloc(h, PAGE);
    h->cmd_id = 0x200;
    return h;
}

static void rsim_detach(Rsim *h)
{
    g_free(h->dev);
    g_free(h);
}

/* DEV_CTRL.RESET: complete when the write returns. */
static void rsim_reset(Rsim *d)
{
    wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_RESET_MASK);
    g_assert_cmphex(rd(d, A_RSIM_DEV_STATUS), ==, 0);
    g_assert_cmphex(rd(d, A_RSIM_DEV_CTRL), ==, 0);
}

/* Allocate zeroed admin queues and program (but do not enable) them. */
static void rsim_set_queues(Rsim *d, uint32_t aq_depth, uint32_t acq_depth,
                            uint32_t aeq_depth)
{
    d->aq = galloc(d, aq_depth * RSIM_AQ_ENTRY_SIZE);
    d->acq = galloc(d, acq_depth * RSIM_ACQ_ENTRY_SIZE);
    d->aeq = galloc(d, aeq_depth * RSIM_EQ_ENTRY_SIZE);
    d->aq_depth = aq_depth;
    d->acq_depth = acq_depth;
    d->aeq_depth = aeq_depth;
    d->aq_tail = d->acq_head = d->aeq_head = 0;
    d->acq_phase = d->aeq_phase = true;
    wr64(d, A_RSIM_AQ_BASE_LO, d->aq);
    wr(d, A_RSIM_AQ_DEPTH, aq_depth);
    wr64(d, A_RSIM_ACQ_BASE_LO, d->acq);
    wr(d, A_RSIM_ACQ_DEPTH, acq_depth);
    wr64(d, A_RSIM_AEQ_BASE_LO, d->aeq);
    wr(d, A_RSIM_AEQ_DEPTH, aeq_depth);
}

static void rsim_enable(Rsim *d, uint32_t aq_depth, uint32_t acq_depth,
                        uint32_t aeq_depth)
{
    rsim_set_queues(d, aq_depth, acq_depth, aeq_depth);
    wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
    g_assert_cmphex(rd(d, A_RSIM_DEV_STATUS), ==, DEV_READY);
}

/* ---- event queue entries (AEQ and completion EQs) ---- */

static bool eqe_poll(Rsim *d, uint64_t base, uint32_t depth, uint32_t *head,
                     bool *phase, struct rsim_eqe *e, int64_t timeout_us)
{
    uint64_t addr = base + (uint64_t)*head * RSIM_EQ_ENTRY_SIZE;
    int64_t deadline = g_get_monotonic_time() + timeout_us;

    do {
        uint32_t dw0 = qtest_readl(d->qts, addr);

        if (FIELD_EX32(dw0, RSIM_EQE_HDR, PHASE) == *phase) {
            qtest_memread(d->qts, addr, e, sizeof(*e));
            *head = (*head + 1) % depth;
            if (!*head) {
                *phase = !*phase;
            }
            return true;
        }
    } while (g_get_monotonic_time() < deadline);
    return false;
}

static unsigned eqe_type(const struct rsim_eqe *e)
{
    return FIELD_EX32(le32_to_cpu(e->dw0), RSIM_EQE_HDR, TYPE);
}

/* Take the next async event, if one arrives in time, and report progress. */
static bool aeq_poll(Rsim *d, struct rsim_eqe *e, int64_t timeout_us)
{
    if (!eqe_poll(d, d->aeq, d->aeq_depth, &d->aeq_head, &d->aeq_phase, e,
                  timeout_us)) {
        return false;
    }
    wr(d, A_RSIM_AEQ_HEAD, d->aeq_head);
    return true;
}

static void aeq_expect_data(Rsim *d, unsigned type, uint32_t object,
                            uint64_t data)
{
    struct rsim_eqe e;

    g_assert_true(aeq_poll(d, &e, POLL_US));
    g_assert_cmphex(eqe_type(&e), ==, type);
    g_assert_cmpuint(le32_to_cpu(e.object), ==, object);
    g_assert_cmphex(le64_to_cpu(e.data), ==, data);
    /* bits other than phase and type are 0 */
    g_assert_cmphex(le32_to_cpu(e.dw0) & ~0xff01u, ==, 0);
}

static void aeq_expect(Rsim *d, unsigned type, uint32_t object)
{
    aeq_expect_data(d, type, object, 0);
}

static void aeq_expect_none(Rsim *d)
{
    struct rsim_eqe e;

    if (aeq_poll(d, &e, QUIET_US)) {
        fprintf(stderr, "unexpected async event type 0x%x object %u\n",
                       eqe_type(&e), le32_to_cpu(e.object));
        g_assert_cmphex(eqe_type(&e), ==, 0);
    }
}

/* Reset and enable with roomy queues; consume the port event. */
static void rsim_bringup(Rsim *d)
{
    rsim_reset(d);
    rsim_enable(d, 32, 32, 64);
    aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
}

static Rsim *rsim_up(const char *machine, const char *props)
{
    Rsim *d = rsim_start(machine, props, false);

    rsim_bringup(d);
    return d;
}

/* ---- admin commands ---- */

#define CMD_INIT(c, op)                                                 \
    do {                                                                \
        memset(&(c), 0, sizeof(c));                                     \
        (c).dw0 = cpu_to_le32(op);                                      \
    } while (0)

/* Put a command (its ID replaced by the next one) into the AQ. */
static uint16_t aq_put(Rsim *d, const void *cmd)
{
    struct rsim_admin_cmd c;
    uint32_t dw0;

    memcpy(&c, cmd, sizeof(c));
    dw0 = FIELD_DP32(le32_to_cpu(c.dw0), RSIM_CMD_HDR, ID, ++d->cmd_id);
    note("command 0x%02x id 0x%04x", FIELD_EX32(dw0, RSIM_CMD_HDR, OPCODE),
         d->cmd_id);
    c.dw0 = cpu_to_le32(dw0);
    qtest_memwrite(d->qts, d->aq + (uint64_t)d->aq_tail * RSIM_AQ_ENTRY_SIZE,
                   &c, sizeof(c));
    d->aq_tail = (d->aq_tail + 1) % d->aq_depth;
    return d->cmd_id;
}

static uint16_t aq_submit(Rsim *d, const void *cmd)
{
    uint16_t id = aq_put(d, cmd);

    wr(d, A_RSIM_AQ_TAIL, d->aq_tail);
    return id;
}

/* Take the next admin completion, if one arrives in time (no ACQ_HEAD). */
static bool acq_poll(Rsim *d, struct rsim_admin_cqe *cqe, int64_t timeout_us)
{
    uint64_t addr = d->acq + (uint64_t)d->acq_head * RSIM_ACQ_ENTRY_SIZE;
    int64_t deadline = g_get_monotonic_time() + timeout_us;

    do {
        uint32_t dw0 = qtest_readl(d->qts, addr);

        if (FIELD_EX32(dw0, RSIM_CQE_HDR, PHASE) == d->acq_phase) {
            qtest_memread(d->qts, addr, cqe, sizeof(*cqe));
            d->acq_head = (d->acq_head + 1) % d->acq_depth;
            if (!d->acq_head) {
                d->acq_phase = !d->acq_phase;
            }
            return true;
        }
    } while (g_get_monotonic_time() < deadline);
    return false;
}

static void acq_ack(Rsim *d)
{
    wr(d, A_RSIM_ACQ_HEAD, d->acq_head);
}

static unsigned cqe_id(const struct rsim_admin_cqe *cqe)
{
    return FIELD_EX32(le32_to_cpu(cqe->dw0), RSIM_CQE_HDR, ID);
}

static unsigned cqe_status(const struct rsim_admin_cqe *cqe)
{
    return FIELD_EX32(le32_to_cpu(cqe->dw0), RSIM_CQE_HDR, STATUS);
}

/* Wait for the completion of the command with ID id and check its frame. */
static unsigned acq_expect(Rsim *d, uint16_t id, uint32_t sq_head,
                           void *result)
{
    struct rsim_admin_cqe cqe;

    g_assert_true(acq_poll(d, &cqe, POLL_US));
    acq_ack(d);
    g_assert_cmphex(cqe_id(&cqe), ==, id);
    g_assert_cmpuint(le16_to_cpu(cqe.sq_head), ==, sq_head);
    g_assert_cmphex(le32_to_cpu(cqe.dw0) & 0x7f000000u, ==, 0);
    g_assert_cmphex(le16_to_cpu(cqe.reserved), ==, 0);
    if (result) {
        memcpy(result, cqe.result, sizeof(cqe.result));
    }
    return cqe_status(&cqe);
}

/* Execute one command; result (56 bytes) may be NULL. */
static unsigned cmd_exec(Rsim *d, const void *cmd, void *result)
{
    uint16_t id = aq_submit(d, cmd);

    return acq_expect(d, id, d->aq_tail, result);
}

/* The device is alive and usable: READY, not FATAL, a NOP completes OK. */
static void assert_alive(Rsim *d)
{
    struct rsim_admin_cmd c;

    g_assert_true(qtest_probe_child(d->qts));
    g_assert_cmphex(rd(d, A_RSIM_DEV_STATUS) &
                    (DEV_READY | DEV_FATAL), ==, DEV_READY);
    CMD_INIT(c, RSIM_CMD_NOP);
    assert_sts(cmd_exec(d, &c, NULL), RSIM_STS_OK);
}

/* Execute and check the status; after an error, check the device lives. */
static void cmd_expect_res(Rsim *d, const void *cmd, unsigned want,
                           void *result)
{
    assert_sts(cmd_exec(d, cmd, result), want);
    if (want != RSIM_STS_OK) {
        assert_alive(d);
    }
}

static void cmd_expect(Rsim *d, const void *cmd, unsigned want)
{
    cmd_expect_res(d, cmd, want, NULL);
}

/* Commands that only name an object */
static void handle_expect(Rsim *d, uint8_t op, uint32_t handle, unsigned want)
{
    struct rsim_cmd_handle c;

    CMD_INIT(c, op);
    c.handle = cpu_to_le32(handle);
    cmd_expect(d, &c, want);
}

/* Let the device run whatever it has to do: a short quiet period. */
static void settle(Rsim *d)
{
    int64_t deadline = g_get_monotonic_time() + QUIET_US;

    do {
        rd(d, A_RSIM_DEV_STATUS);
    } while (g_get_monotonic_time() < deadline);
}

static uint32_t resp_handle(const struct rsim_create_resp *r)
{
    return le32_to_cpu(r->handle);
}

/* ---- MSI-X: messages land in guest memory ---- */

static void msix_setup(Rsim *d)
{
    QPCIDevice *dev = d->dev;
    uint16_t n = qpci_msix_table_size(dev);

    qpci_msix_enable(dev);
    d->msix_mem = galloc(d, PAGE);
    for (uint16_t v = 0; v < n; v++) {
        uint64_t e = dev->msix_table_off + v * PCI_MSIX_ENTRY_SIZE;
        uint64_t addr = d->msix_mem + 4 * v;

        qpci_io_writel(dev, dev->msix_table_bar,
                       e + PCI_MSIX_ENTRY_LOWER_ADDR, (uint32_t)addr);
        qpci_io_writel(dev, dev->msix_table_bar,
                       e + PCI_MSIX_ENTRY_UPPER_ADDR, addr >> 32);
        qpci_io_writel(dev, dev->msix_table_bar,
                       e + PCI_MSIX_ENTRY_DATA, MSIX_DATA(v));
        qpci_io_writel(dev, dev->msix_table_bar,
                       e + PCI_MSIX_ENTRY_VECTOR_CTRL, 0);
    }
}

static void msix_mask(Rsim *d, uint16_t v, bool mask)
{
    QPCIDevice *dev = d->dev;

    qpci_io_writel(dev, dev->msix_table_bar, dev->msix_table_off +
                   v * PCI_MSIX_ENTRY_SIZE + PCI_MSIX_ENTRY_VECTOR_CTRL,
                   mask ? PCI_MSIX_ENTRY_CTRL_MASKBIT : 0);
}

/* Did vector v fire since the last call?  Clears the record. */
static bool irq_fired(Rsim *d, unsigned v)
{
    uint32_t val = qtest_readl(d->qts, d->msix_mem + 4 * v);

    if (!val) {
        return false;
    }
    g_assert_cmphex(val, ==, MSIX_DATA(v));
    qtest_writel(d->qts, d->msix_mem + 4 * v, 0);
    return true;
}

/*
 * ------------------------------------------------------------------------
 * Rings (SQ, RQ, SRQ, CQ) and page lists
 * ------------------------------------------------------------------------
 */

typedef struct TRing {
    struct rsim_queue_desc desc;   /* little-endian, ready for commands */
    uint32_t depth;
    uint32_t log2_elem;
    uint64_t bytes;                /* header + elements */
    uint64_t base;                 /* level 0 */
    uint32_t npages;               /* levels 1 and 2 */
    uint64_t *pages;
    uint32_t cons;                 /* our consumer index of a CQ */
} TRing;

/* Write a level 1 list or a level 2 root + leaves for n page addresses. */
static uint64_t pbl_build(Rsim *d, unsigned level, const uint64_t *pages,
                          uint32_t n)
{
    g_autofree uint64_t *le = g_new(uint64_t, MAX(n, 1));
    uint64_t list;

    for (uint32_t i = 0; i < n; i++) {
        le[i] = cpu_to_le64(pages[i]);
    }
    if (level == RSIM_PBL_LEVEL1) {
        list = galloc(d, MAX(n, 1) * 8);
        qtest_memwrite(d->qts, list, le, n * 8);
        return list;
    }
    g_assert_cmpuint(level, ==, RSIM_PBL_LEVEL2);
    {
        uint32_t nleaves = DIV_ROUND_UP(n, RSIM_PBL_LEAF_ENTRIES);
        g_autofree uint64_t *root = g_new(uint64_t, nleaves);

        for (uint32_t l = 0; l < nleaves; l++) {
            uint32_t cnt = MIN(n - l * RSIM_PBL_LEAF_ENTRIES,
                               RSIM_PBL_LEAF_ENTRIES);
            uint64_t leaf = galloc(d, PAGE);

            qtest_memwrite(d->qts, leaf, le + l * RSIM_PBL_LEAF_ENTRIES,
                           cnt * 8);
            root[l] = cpu_to_le64(leaf);
        }
        list = galloc(d, nleaves * 8);
        qtest_memwrite(d->qts, list, root, nleaves * 8);
    }
    return list;
}

/*
 * A ring of 2^log2_depth elements of 2^log2_elem bytes.  Levels 1 and 2
 * use separately allocated 4 KiB pages in reverse address order, so that
 * the ring is not contiguous.
 */
static void tring_init(Rsim *d, TRing *r, unsigned level, unsigned log2_depth,
                       unsigned log2_elem)
{
    uint32_t hdr[2];

    memset(r, 0, sizeof(*r));
    r->depth = 1u << log2_depth;
    r->log2_elem = log2_elem;
    r->bytes = RSIM_QUEUE_DATA_OFFSET + ((uint64_t)r->depth << log2_elem);
    r->desc.level = level;
    r->desc.log2_elem_size = log2_elem;
    r->desc.log2_depth = log2_depth;
    if (level == RSIM_PBL_LEVEL0) {
        r->base = galloc(d, r->bytes);
        r->desc.addr = cpu_to_le64(r->base);
    } else {
        r->npages = DIV_ROUND_UP(r->bytes, PAGE);
        r->pages = g_new(uint64_t, r->npages);
        for (uint32_t i = r->npages; i-- > 0;) {
            r->pages[i] = galloc(d, PAGE);
        }
        r->desc.addr = cpu_to_le64(pbl_build(d, level, r->pages, r->npages));
        r->desc.page_shift = 12;
        r->desc.npages = cpu_to_le32(r->npages);
    }
    hdr[0] = cpu_to_le32(log2_elem);
    hdr[1] = cpu_to_le32(r->depth - 1);
    if (r->pages) {
        qtest_memwrite(d->qts, r->pages[0], hdr, sizeof(hdr));
    } else {
        qtest_memwrite(d->qts, r->base, hdr, sizeof(hdr));
    }
}

static uint64_t tring_gpa(const TRing *r, uint64_t off)
{
    g_assert_cmpuint(off, <, r->bytes);
    if (!r->pages) {
        return r->base + off;
    }
    return r->pages[off / PAGE] + off % PAGE;
}

static void tring_rw(Rsim *d, const TRing *r, uint64_t off, void *buf,
                     size_t len, bool write)
{
    uint8_t *p = buf;

    while (len) {
        size_t chunk = r->pages ? MIN(len, PAGE - off % PAGE) : len;

        if (write) {
            qtest_memwrite(d->qts, tring_gpa(r, off), p, chunk);
        } else {
            qtest_memread(d->qts, tring_gpa(r, off), p, chunk);
        }
        p += chunk;
        off += chunk;
        len -= chunk;
    }
}

static uint64_t elem_off(const TRing *r, uint32_t index)
{
    return RSIM_QUEUE_DATA_OFFSET +
           ((uint64_t)(index & (r->depth - 1)) << r->log2_elem);
}

static void elem_write(Rsim *d, const TRing *r, uint32_t index,
                       const void *buf, size_t len)
{
    tring_rw(d, r, elem_off(r, index), (void *)buf, len, true);
}

static void elem_read(Rsim *d, const TRing *r, uint32_t index, void *buf,
                      size_t len)
{
    tring_rw(d, r, elem_off(r, index), buf, len, false);
}

static uint32_t ring_prod(Rsim *d, const TRing *r)
{
    return qtest_readl(d->qts, tring_gpa(r, RSIM_QUEUE_PROD_OFFSET));
}

static uint32_t ring_cons(Rsim *d, const TRing *r)
{
    return qtest_readl(d->qts, tring_gpa(r, RSIM_QUEUE_CONS_OFFSET));
}

static void ring_set_prod(Rsim *d, const TRing *r, uint32_t val)
{
    qtest_writel(d->qts, tring_gpa(r, RSIM_QUEUE_PROD_OFFSET), val);
}

static void ring_set_cons(Rsim *d, const TRing *r, uint32_t val)
{
    qtest_writel(d->qts, tring_gpa(r, RSIM_QUEUE_CONS_OFFSET), val);
}

/* ---- posting work requests (Soft-RoCE WQE layout) ---- */

static void post_send(Rsim *d, const TRing *sq, uint64_t wr_id,
                      uint32_t opcode)
{
    struct rsim_send_wqe w;
    uint32_t prod = ring_prod(d, sq);

    memset(&w, 0, sizeof(w));
    w.wr_id = cpu_to_le64(wr_id);
    w.opcode = cpu_to_le32(opcode);
    w.send_flags = cpu_to_le32(RSIM_SEND_SIGNALED);
    elem_write(d, sq, prod, &w, sizeof(w));
    ring_set_prod(d, sq, (prod + 1) & (sq->depth - 1));
}

static void post_recv(Rsim *d, const TRing *rq, uint64_t wr_id)
{
    struct rsim_recv_wqe w;
    uint32_t prod = ring_prod(d, rq);

    memset(&w, 0, sizeof(w));
    w.wr_id = cpu_to_le64(wr_id);
    elem_write(d, rq, prod, &w, sizeof(w));
    ring_set_prod(d, rq, (prod + 1) & (rq->depth - 1));
}

/* ---- reading completions ---- */

static bool cq_poll(Rsim *d, TRing *cq, struct rsim_cqe *e, int64_t timeout)
{
    int64_t deadline = g_get_monotonic_time() + timeout;

    do {
        if (ring_prod(d, cq) != cq->cons) {
            elem_read(d, cq, cq->cons, e, sizeof(*e));
            cq->cons = (cq->cons + 1) & (cq->depth - 1);
            ring_set_cons(d, cq, cq->cons);
            return true;
        }
    } while (g_get_monotonic_time() < deadline);
    return false;
}

static void cqe_check(const struct rsim_cqe *e, uint64_t wr_id,
                      unsigned status, unsigned opcode, uint32_t qpn)
{
    g_assert_cmphex(le64_to_cpu(e->wr_id), ==, wr_id);
    g_assert_cmpuint(le32_to_cpu(e->status), ==, status);
    g_assert_cmpuint(le32_to_cpu(e->opcode), ==, opcode);
    g_assert_cmpuint(le32_to_cpu(e->qp_num), ==, qpn);
    g_assert_cmpuint(le32_to_cpu(e->vendor_err), ==, 0);
    g_assert_cmpuint(le32_to_cpu(e->byte_len), ==, 0);
}

static void cq_expect(Rsim *d, TRing *cq, uint64_t wr_id, unsigned status,
                      unsigned opcode, uint32_t qpn)
{
    struct rsim_cqe e;

    g_assert_true(cq_poll(d, cq, &e, POLL_US));
    cqe_check(&e, wr_id, status, opcode, qpn);
}

static void cq_expect_flush(Rsim *d, TRing *cq, uint64_t wr_id,
                            unsigned opcode, uint32_t qpn)
{
    cq_expect(d, cq, wr_id, RSIM_WC_WR_FLUSH_ERR, opcode, qpn);
}

static void cq_expect_empty(Rsim *d, TRing *cq)
{
    settle(d);
    g_assert_cmpuint(ring_prod(d, cq), ==, cq->cons);
}

/*
 * ------------------------------------------------------------------------
 * Objects
 * ------------------------------------------------------------------------
 */

static uint32_t pd_alloc(Rsim *d)
{
    struct rsim_cmd_handle c;
    struct rsim_create_resp r;

    CMD_INIT(c, RSIM_CMD_ALLOC_PD);
    assert_sts(cmd_exec(d, &c, &r), RSIM_STS_OK);
    return resp_handle(&r);
}

typedef struct TEq {
    uint32_t eqn;
    uint32_t vector;
    uint64_t addr;
    uint32_t depth;
    uint32_t head;
    bool phase;
} TEq;

static void eq_cmd(struct rsim_cmd_create_eq *c, uint32_t vector,
                   uint64_t addr, uint32_t depth)
{
    CMD_INIT(*c, RSIM_CMD_CREATE_EQ);
    c->vector = cpu_to_le32(vector);
    c->addr = cpu_to_le64(addr);
    c->depth = cpu_to_le32(depth);
}

static uint32_t eq_create(Rsim *d, TEq *eq, uint32_t vector, uint32_t depth)
{
    struct rsim_cmd_create_eq c;
    struct rsim_create_resp r;

    memset(eq, 0, sizeof(*eq));
    eq->addr = galloc(d, depth * RSIM_EQ_ENTRY_SIZE);
    eq->depth = depth;
    eq->vector = vector;
    eq->phase = true;
    eq_cmd(&c, vector, eq->addr, depth);
    assert_sts(cmd_exec(d, &c, &r), RSIM_STS_OK);
    eq->eqn = resp_handle(&r);
    return eq->eqn;
}

static bool eq_poll(Rsim *d, TEq *eq, struct rsim_eqe *e, int64_t timeout)
{
    return eqe_poll(d, eq->addr, eq->depth, &eq->head, &eq->phase, e,
                    timeout);
}

/* Report our consumer index, optionally arming the EQ. */
static void eq_doorbell(Rsim *d, TEq *eq, bool arm)
{
    uint32_t v = 0;

    v = FIELD_DP32(v, RSIM_EQ_DB, CONS, eq->head);
    v = FIELD_DP32(v, RSIM_EQ_DB, EQN, eq->eqn);
    v = FIELD_DP32(v, RSIM_EQ_DB, ARM, arm);
    wr(d, A_RSIM_EQ_DB, v);
}

static void eq_expect(Rsim *d, TEq *eq, unsigned type, uint32_t object)
{
    struct rsim_eqe e;

    g_assert_true(eq_poll(d, eq, &e, POLL_US));
    g_assert_cmphex(eqe_type(&e), ==, type);
    g_assert_cmpuint(le32_to_cpu(e.object), ==, object);
    g_assert_cmphex(le64_to_cpu(e.data), ==, 0);
}

static void eq_expect_none(Rsim *d, TEq *eq)
{
    struct rsim_eqe e;

    settle(d);
    if (eq_poll(d, eq, &e, 0)) {
        fprintf(stderr, "unexpected event type 0x%x object %u in EQ %u\n",
                       eqe_type(&e), le32_to_cpu(e.object), eq->eqn);
        g_assert_cmphex(eqe_type(&e), ==, 0);
    }
}

static void cq_cmd(struct rsim_cmd_create_cq *c, uint32_t eqn,
                   const TRing *r)
{
    CMD_INIT(*c, RSIM_CMD_CREATE_CQ);
    c->eqn = cpu_to_le32(eqn);
    c->q = r->desc;
}

static uint32_t cq_create(Rsim *d, TRing *r, uint32_t eqn, unsigned level,
                          unsigned log2_depth)
{
    struct rsim_cmd_create_cq c;
    struct rsim_create_resp res;

    tring_init(d, r, level, log2_depth, RSIM_CQE_LOG2_SLOT);
    cq_cmd(&c, eqn, r);
    assert_sts(cmd_exec(d, &c, &res), RSIM_STS_OK);
    return resp_handle(&res);
}

/* CQ doorbell: arm a CQ from a doorbell page */
static void cq_arm_db(Rsim *d, unsigned page, uint32_t cqn, unsigned arm)
{
    uint32_t v = 0;

    v = FIELD_DP32(v, RSIM_DB_CQ, CQN, cqn);
    v = FIELD_DP32(v, RSIM_DB_CQ, ARM, arm);
    db(d, page, A_RSIM_DB_CQ, v);
}

typedef struct TQp {
    uint32_t qpn;
    TRing sq, rq;
} TQp;

/* SQ: 8 x 256 bytes (header + 1 SGE); RQ: 8 x 64 bytes (header + 1 SGE) */
static void qp_rings(Rsim *d, TQp *qp, unsigned level)
{
    tring_init(d, &qp->sq, level, 3, 8);
    tring_init(d, &qp->rq, level, 3, 6);
}

static void qp_cmd(struct rsim_cmd_create_qp *c, uint8_t type, uint32_t pdn,
                   uint32_t scqn, uint32_t rcqn, const TQp *qp)
{
    CMD_INIT(*c, RSIM_CMD_CREATE_QP);
    c->qp_type = type;
    c->max_send_sge = 1;
    c->max_recv_sge = 1;
    c->pdn = cpu_to_le32(pdn);
    c->send_cqn = cpu_to_le32(scqn);
    c->recv_cqn = cpu_to_le32(rcqn);
    c->srqn = cpu_to_le32(RSIM_NO_SRQ);
    c->sq = qp->sq.desc;
    c->rq = qp->rq.desc;
}

static uint32_t qp_create_cmd(Rsim *d, const struct rsim_cmd_create_qp *c)
{
    struct rsim_create_resp r;

    assert_sts(cmd_exec(d, c, &r), RSIM_STS_OK);
    return resp_handle(&r);
}

static uint32_t qp_create(Rsim *d, TQp *qp, uint8_t type, uint32_t pdn,
                          uint32_t cqn, unsigned level)
{
    struct rsim_cmd_create_qp c;

    qp_rings(d, qp, level);
    qp_cmd(&c, type, pdn, cqn, cqn, qp);
    qp->qpn = qp_create_cmd(d, &c);
    return qp->qpn;
}

static unsigned qp_modify(Rsim *d, uint32_t qpn, const struct rsim_qp_attr *a)
{
    struct rsim_cmd_qp_attr c;

    qtest_memwrite(d->qts, d->scratch, a, sizeof(*a));
    CMD_INIT(c, RSIM_CMD_MODIFY_QP);
    c.qpn = cpu_to_le32(qpn);
    c.addr = cpu_to_le64(d->scratch);
    return cmd_exec(d, &c, NULL);
}

static void qp_query(Rsim *d, uint32_t qpn, struct rsim_qp_attr *a)
{
    struct rsim_cmd_qp_attr c;

    /* a pattern, so that we see that the device writes the whole block */
    qtest_memset(d->qts, d->scratch, 0xa5, sizeof(*a));
    CMD_INIT(c, RSIM_CMD_QUERY_QP);
    c.qpn = cpu_to_le32(qpn);
    c.addr = cpu_to_le64(d->scratch);
    assert_sts(cmd_exec(d, &c, NULL), RSIM_STS_OK);
    qtest_memread(d->qts, d->scratch, a, sizeof(*a));
    g_assert_cmphex(le32_to_cpu(a->reserved0), ==, 0);
    for (size_t i = 0; i < sizeof(a->reserved1); i++) {
        g_assert_cmphex(a->reserved1[i], ==, 0);
    }
}

static unsigned qp_state(Rsim *d, uint32_t qpn)
{
    struct rsim_qp_attr a;

    qp_query(d, qpn, &a);
    g_assert_cmpuint(a.cur_qp_state, ==, a.qp_state);
    return a.qp_state;
}

static void attr_init(struct rsim_qp_attr *a, uint8_t state, uint32_t mask)
{
    memset(a, 0, sizeof(*a));
    a->attr_mask = cpu_to_le32(mask | RSIM_QP_STATE);
    a->qp_state = state;
}

static void attr_set_mask(struct rsim_qp_attr *a, uint32_t mask)
{
    a->attr_mask = cpu_to_le32(mask);
}

static uint32_t attr_mask(const struct rsim_qp_attr *a)
{
    return le32_to_cpu(a->attr_mask);
}

/* Modify that must succeed, then the state must be the new one. */
static void qp_modify_ok(Rsim *d, uint32_t qpn, const struct rsim_qp_attr *a)
{
    unsigned want = (attr_mask(a) & RSIM_QP_STATE) ? a->qp_state
                                                  : qp_state(d, qpn);

    assert_sts(qp_modify(d, qpn, a), RSIM_STS_OK);
    g_assert_cmpuint(qp_state(d, qpn), ==, want);
}

/* A transition without attributes (to ERR, RESET, SQD, ...) */
static void qp_move(Rsim *d, uint32_t qpn, uint8_t state)
{
    struct rsim_qp_attr a;

    attr_init(&a, state, 0);
    qp_modify_ok(d, qpn, &a);
}

/* A v4-mapped RoCEv2 GID ::ffff:a.b.c.e */
static void gid_v4(uint8_t *gid, uint8_t a, uint8_t b, uint8_t c, uint8_t e)
{
    memset(gid, 0, 16);
    gid[10] = gid[11] = 0xff;
    gid[12] = a;
    gid[13] = b;
    gid[14] = c;
    gid[15] = e;
}

/* fe80::x */
static void gid_v6(uint8_t *gid, uint8_t x)
{
    memset(gid, 0, 16);
    gid[0] = 0xfe;
    gid[1] = 0x80;
    gid[15] = x;
}

static void gid_cmd(struct rsim_cmd_gid *c, uint8_t op, uint32_t index,
                    const uint8_t *gid)
{
    CMD_INIT(*c, op);
    c->index = cpu_to_le32(index);
    if (gid) {
        memcpy(c->gid, gid, 16);
        c->type = RSIM_GID_TYPE_ROCE_V2;
    }
}

static void gid_add_v4(Rsim *d, uint32_t index, uint8_t last)
{
    struct rsim_cmd_gid c;
    uint8_t gid[16];

    gid_v4(gid, 10, 0, 0, last);
    gid_cmd(&c, RSIM_CMD_ADD_GID, index, gid);
    cmd_expect(d, &c, RSIM_STS_OK);
}

/* An IPv4 address vector towards 10.0.0.2 through GID sgid_index */
static void av_v4(struct rsim_av *av, uint8_t sgid_index)
{
    static const uint8_t dmac[6] = { 0x52, 0x54, 0x00, 0xab, 0xcd, 0xef };

    memset(av, 0, sizeof(*av));
    gid_v4(av->dgid, 10, 0, 0, 2);
    memcpy(av->dmac, dmac, sizeof(dmac));
    av->sgid_index = sgid_index;
    av->hop_limit = 64;
    av->network_type = RSIM_NET_IPV4;
}

/* The attributes of each RC transition, with distinctive values */
static void attr_rc_init(struct rsim_qp_attr *a)
{
    attr_init(a, RSIM_QPS_INIT, RSIM_QP_PKEY_INDEX | RSIM_QP_PORT |
              RSIM_QP_ACCESS_FLAGS);
    a->port_num = 1;
    a->qp_access_flags = cpu_to_le32(ACC_ALL);
}

static void attr_rc_rtr(struct rsim_qp_attr *a)
{
    attr_init(a, RSIM_QPS_RTR, RSIM_QP_AV | RSIM_QP_PATH_MTU |
              RSIM_QP_DEST_QPN | RSIM_QP_RQ_PSN |
              RSIM_QP_MAX_DEST_RD_ATOMIC | RSIM_QP_MIN_RNR_TIMER);
    av_v4(&a->av, 0);
    a->path_mtu = RSIM_MTU_1024;
    a->dest_qp_num = cpu_to_le32(0xabcde);
    a->rq_psn = cpu_to_le32(0x123456);
    a->max_dest_rd_atomic = 7;
    a->min_rnr_timer = 12;
}

static void attr_rc_rts(struct rsim_qp_attr *a)
{
    attr_init(a, RSIM_QPS_RTS, RSIM_QP_TIMEOUT | RSIM_QP_RETRY_CNT |
              RSIM_QP_RNR_RETRY | RSIM_QP_SQ_PSN | RSIM_QP_MAX_QP_RD_ATOMIC);
    a->timeout = 14;
    a->retry_cnt = 6;
    a->rnr_retry = 7;
    a->sq_psn = cpu_to_le32(0x654321);
    a->max_rd_atomic = 5;
}

/* RESET -> INIT -> RTR -> RTS; needs GID 0 */
static void qp_rc_to_rts(Rsim *d, uint32_t qpn)
{
    struct rsim_qp_attr a;

    attr_rc_init(&a);
    qp_modify_ok(d, qpn, &a);
    attr_rc_rtr(&a);
    qp_modify_ok(d, qpn, &a);
    attr_rc_rts(&a);
    qp_modify_ok(d, qpn, &a);
}

static void qp_rc_to_init(Rsim *d, uint32_t qpn)
{
    struct rsim_qp_attr a;

    attr_rc_init(&a);
    qp_modify_ok(d, qpn, &a);
}

/* A common setup: PD, EQ (vector 1), CQ and an RC QP in INIT */
typedef struct TEnv {
    uint32_t pdn;
    TEq eq;
    TRing cq;
    uint32_t cqn;
    TQp qp;
} TEnv;

static void env_setup(Rsim *d, TEnv *env, unsigned level,
                      unsigned cq_log2_depth)
{
    memset(env, 0, sizeof(*env));
    env->pdn = pd_alloc(d);
    eq_create(d, &env->eq, 1, 16);
    env->cqn = cq_create(d, &env->cq, env->eq.eqn, level, cq_log2_depth);
    qp_create(d, &env->qp, RSIM_QPT_RC, env->pdn, env->cqn, level);
    qp_rc_to_init(d, env->qp.qpn);
}

static void sq_doorbell(Rsim *d, unsigned page, uint32_t qpn)
{
    db(d, page, A_RSIM_DB_SQ, qpn);
}

/* ---- memory registration ---- */

static void mr_cmd(struct rsim_cmd_reg_mr *c, uint32_t pdn, uint32_t access,
                   uint64_t iova, uint64_t length, unsigned level,
                   uint64_t pbl, uint32_t npages, unsigned page_shift,
                   uint32_t fbo)
{
    CMD_INIT(*c, RSIM_CMD_REG_MR);
    c->pdn = cpu_to_le32(pdn);
    c->access = cpu_to_le32(access);
    c->iova = cpu_to_le64(iova);
    c->length = cpu_to_le64(length);
    c->pbl_addr = cpu_to_le64(pbl);
    c->npages = cpu_to_le32(npages);
    c->level = level;
    c->page_shift = page_shift;
    c->fbo = cpu_to_le32(fbo);
}

static uint32_t mr_reg(Rsim *d, const struct rsim_cmd_reg_mr *c,
                       uint32_t *rkey)
{
    struct rsim_create_resp r;

    assert_sts(cmd_exec(d, c, &r), RSIM_STS_OK);
    if (rkey) {
        *rkey = le32_to_cpu(r.handle2);
    }
    return resp_handle(&r);
}

/* A level 0 MR over [addr, addr + length) with iova == addr */
static uint32_t mr_reg_l0(Rsim *d, uint32_t pdn, uint32_t access,
                          uint64_t addr, uint64_t length)
{
    struct rsim_cmd_reg_mr c;

    mr_cmd(&c, pdn, access, addr, length, RSIM_PBL_LEVEL0, addr, 0, 0, 0);
    return mr_reg(d, &c, NULL);
}

static unsigned mr_translate(Rsim *d, uint32_t key, uint32_t pdn,
                             uint32_t access, uint64_t iova, uint64_t len,
                             struct rsim_mr_translate_resp *r)
{
    struct rsim_cmd_mr_translate c;
    struct rsim_mr_translate_resp tmp;

    CMD_INIT(c, RSIM_CMD_MR_TRANSLATE);
    c.key = cpu_to_le32(key);
    c.pdn = cpu_to_le32(pdn);
    c.access = cpu_to_le32(access);
    c.iova = cpu_to_le64(iova);
    c.length = cpu_to_le64(len);
    return cmd_exec(d, &c, r ? r : &tmp);
}

static void xlate_expect(Rsim *d, uint32_t key, uint32_t pdn, uint32_t access,
                         uint64_t iova, uint64_t len, uint64_t addr,
                         uint64_t contig)
{
    struct rsim_mr_translate_resp r;

    assert_sts(mr_translate(d, key, pdn, access, iova, len, &r),
               RSIM_STS_OK);
    g_assert_cmphex(le64_to_cpu(r.addr), ==, addr);
    g_assert_cmphex(le64_to_cpu(r.contig), ==, contig);
    g_assert_cmpuint(r.state, ==, RSIM_MR_STATE_VALID);
}

static void xlate_fail(Rsim *d, uint32_t key, uint32_t pdn, uint32_t access,
                       uint64_t iova, uint64_t len, unsigned want)
{
    assert_sts(mr_translate(d, key, pdn, access, iova, len, NULL), want);
    assert_alive(d);
}

static uint64_t stat_get(Rsim *d, unsigned index)
{
    struct rsim_cmd_query_stats c;
    struct rsim_query_stats_resp r;
    uint64_t v;

    CMD_INIT(c, RSIM_CMD_QUERY_STATS);
    c.addr = cpu_to_le64(d->scratch);
    c.len = cpu_to_le32(RSIM_STAT_COUNT * 8);
    assert_sts(cmd_exec(d, &c, &r), RSIM_STS_OK);
    g_assert_cmpuint(le32_to_cpu(r.count), ==, RSIM_STAT_COUNT);
    v = qtest_readq(d->qts, d->scratch + index * 8);
    return v;
}

/*
 * ========================================================================
 * PCI identity, registers, properties
 * ========================================================================
 */

typedef struct RegVal {
    uint32_t off;
    uint32_t val;
} RegVal;

static void check_regs(Rsim *d, const RegVal *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        note("register 0x%03x", r[i].off);
        g_assert_cmphex(rd(d, r[i].off), ==, r[i].val);
    }
}

static const RegVal default_regs[] = {
    { A_RSIM_VERSION, 0x00010000 },
    { A_RSIM_FEATURES, 0x1ff },
    { A_RSIM_DMA_WIDTH, 64 },
    { A_RSIM_DEV_CTRL, 0 },
    { A_RSIM_DEV_STATUS, 0 },
    { A_RSIM_ADMIN_TIMEOUT, 5000 },
    { A_RSIM_RESET_TIMEOUT, 1000 },
    { A_RSIM_INTR_MASK, 3 },
    { A_RSIM_DB_PAGES, 64 },
    { A_RSIM_MSIX_VECTORS, 9 },
    { A_RSIM_NUM_PORTS, 1 },
    { A_RSIM_CAP_MAX_QP, 1024 },
    { A_RSIM_CAP_MAX_CQ, 1024 },
    { A_RSIM_CAP_MAX_SRQ, 256 },
    { A_RSIM_CAP_MAX_MR, 8192 },
    { A_RSIM_CAP_MAX_PD, 1024 },
    { A_RSIM_CAP_MAX_AH, 1024 },
    { A_RSIM_CAP_MAX_GID, 16 },
    { A_RSIM_CAP_MAX_SEND_SGE, 16 },
    { A_RSIM_CAP_MAX_RECV_SGE, 16 },
    { A_RSIM_CAP_MAX_SRQ_SGE, 16 },
    { A_RSIM_CAP_MAX_QP_WR, 16384 },
    { A_RSIM_CAP_MAX_CQE, 65535 },
    { A_RSIM_CAP_MAX_SRQ_WR, 16384 },
    { A_RSIM_CAP_MAX_INLINE, 512 },
    { A_RSIM_CAP_MAX_MR_SIZE_LO, 0 },
    { A_RSIM_CAP_MAX_MR_SIZE_HI, 4 },            /* 2^34 */
    { A_RSIM_CAP_PAGE_SIZES, 0x40201000 },
    { A_RSIM_CAP_MTU, 5 },
    { A_RSIM_CAP_MAX_RD_ATOM, 128 },
    { A_RSIM_CAP_MAX_INIT_RD_ATOM, 128 },
    { A_RSIM_CAP_MAX_EQ, 8 },
    { A_RSIM_CAP_MAX_EQE, 4096 },
    { A_RSIM_CAP_MAX_PBL_L1, 8192 },
    { A_RSIM_CAP_MAX_PBL_ROOT, 8192 },
    { A_RSIM_CAP_MAX_FAST_REG_PAGES, 512 },
    { A_RSIM_CAP_MAX_AQ_DEPTH, 256 },
    { A_RSIM_CAP_MAX_ETH_DEPTH, 4096 },
    { A_RSIM_CAP_MAX_PKEYS, 1 },
    /* queue registers are 0 after reset */
    { A_RSIM_AQ_BASE_LO, 0 }, { A_RSIM_AQ_BASE_HI, 0 },
    { A_RSIM_AQ_DEPTH, 0 }, { A_RSIM_AQ_HEAD, 0 },
    { A_RSIM_ACQ_BASE_LO, 0 }, { A_RSIM_ACQ_BASE_HI, 0 },
    { A_RSIM_ACQ_DEPTH, 0 }, { A_RSIM_ACQ_TAIL, 0 },
    { A_RSIM_AEQ_BASE_LO, 0 }, { A_RSIM_AEQ_BASE_HI, 0 },
    { A_RSIM_AEQ_DEPTH, 0 }, { A_RSIM_AEQ_TAIL, 0 },
};

static void test_pci_ids(const char *machine)
{
    Rsim *d = rsim_start(machine, NULL, false);
    QPCIDevice *dev = d->dev;
    uint8_t cap;
    uint32_t bar;

    g_assert_cmphex(qpci_config_readw(dev, PCI_VENDOR_ID), ==, 0x1b36);
    g_assert_cmphex(qpci_config_readw(dev, PCI_DEVICE_ID), ==, 0x0120);
    g_assert_cmphex(qpci_config_readw(dev, PCI_CLASS_DEVICE), ==, 0x0200);
    g_assert_cmphex(qpci_config_readb(dev, PCI_CLASS_PROG), ==, 0x00);
    g_assert_cmphex(qpci_config_readb(dev, PCI_REVISION_ID), ==, 0x01);
    g_assert_cmphex(qpci_config_readw(dev, PCI_SUBSYSTEM_VENDOR_ID), ==,
                    0x1b36);
    g_assert_cmphex(qpci_config_readw(dev, PCI_SUBSYSTEM_ID), ==, 0x0001);
    g_assert_cmphex(qpci_config_readb(dev, PCI_HEADER_TYPE) & 0x7f, ==,
                    PCI_HEADER_TYPE_NORMAL);
    /* MSI-X only: no INTx pin */
    g_assert_cmphex(qpci_config_readb(dev, PCI_INTERRUPT_PIN), ==, 0);

    /* BAR0 4 KiB and BAR2 db-pages x 4 KiB: 32-bit, non-prefetchable */
    g_assert_cmpuint(d->bar0_size, ==, 4096);
    g_assert_cmpuint(d->bar2_size, ==, 64 * 4096);
    bar = qpci_config_readl(dev, PCI_BASE_ADDRESS_0);
    g_assert_cmphex(bar & 0xf, ==, PCI_BASE_ADDRESS_SPACE_MEMORY |
                    PCI_BASE_ADDRESS_MEM_TYPE_32);
    bar = qpci_config_readl(dev, PCI_BASE_ADDRESS_2);
    g_assert_cmphex(bar & 0xf, ==, PCI_BASE_ADDRESS_SPACE_MEMORY |
                    PCI_BASE_ADDRESS_MEM_TYPE_32);
    /* no BAR1, BAR3, BAR5 */
    g_assert_cmphex(qpci_config_readl(dev, PCI_BASE_ADDRESS_1), ==, 0);
    g_assert_cmphex(qpci_config_readl(dev, PCI_BASE_ADDRESS_3), ==, 0);
    g_assert_cmphex(qpci_config_readl(dev, PCI_BASE_ADDRESS_5), ==, 0);

    /* MSI-X: 9 entries, table and PBA in BAR4 */
    cap = qpci_find_capability(dev, PCI_CAP_ID_MSIX, 0);
    g_assert_cmphex(cap, !=, 0);
    g_assert_cmpuint(qpci_msix_table_size(dev), ==, 9);
    g_assert_cmpuint(qpci_config_readl(dev, cap + PCI_MSIX_TABLE) &
                     PCI_MSIX_FLAGS_BIRMASK, ==, RSIM_BAR_MSIX);
    g_assert_cmpuint(qpci_config_readl(dev, cap + PCI_MSIX_PBA) &
                     PCI_MSIX_FLAGS_BIRMASK, ==, RSIM_BAR_MSIX);

    check_regs(d, default_regs, ARRAY_SIZE(default_regs));
    rsim_stop(d);
}

#define SMALL_PROPS "max-qp=64,max-cq=32,max-srq=16,max-mr=128,max-pd=8," \
                    "max-ah=8,max-gid=4,max-sge=4,max-qp-wr=100,"         \
                    "max-cqe=200,max-inline=64,max-rd-atom=4,db-pages=5," \
                    "msix-vectors=4"

static const RegVal small_regs[] = {
    { A_RSIM_DB_PAGES, 5 },
    { A_RSIM_MSIX_VECTORS, 4 },
    { A_RSIM_CAP_MAX_QP, 64 },
    { A_RSIM_CAP_MAX_CQ, 32 },
    { A_RSIM_CAP_MAX_SRQ, 16 },
    { A_RSIM_CAP_MAX_MR, 128 },
    { A_RSIM_CAP_MAX_PD, 8 },
    { A_RSIM_CAP_MAX_AH, 8 },
    { A_RSIM_CAP_MAX_GID, 4 },
    { A_RSIM_CAP_MAX_SEND_SGE, 4 },
    { A_RSIM_CAP_MAX_RECV_SGE, 4 },
    { A_RSIM_CAP_MAX_SRQ_SGE, 4 },
    { A_RSIM_CAP_MAX_QP_WR, 100 },
    { A_RSIM_CAP_MAX_CQE, 200 },
    { A_RSIM_CAP_MAX_SRQ_WR, 100 },
    { A_RSIM_CAP_MAX_INLINE, 64 },
    { A_RSIM_CAP_MAX_RD_ATOM, 4 },
    { A_RSIM_CAP_MAX_INIT_RD_ATOM, 4 },
    { A_RSIM_CAP_MAX_EQ, 3 },
    /* not property dependent */
    { A_RSIM_VERSION, 0x00010000 },
    { A_RSIM_CAP_MTU, 5 },
    { A_RSIM_CAP_MAX_EQE, 4096 },
    { A_RSIM_CAP_MAX_AQ_DEPTH, 256 },
};

/* Non-default properties change the capabilities and what is accepted. */
static void test_pci_props(const char *machine)
{
    Rsim *d = rsim_start(machine, SMALL_PROPS, false);
    struct rsim_cmd_create_qp qc;
    struct rsim_cmd_create_cq cc;
    struct rsim_cmd_create_eq ec;
    struct rsim_query_port_resp port;
    struct rsim_cmd_handle hc;
    struct rsim_qp_attr a;
    TRing cq;
    TQp qp;
    TEq eq;
    uint32_t pdn;

    check_regs(d, small_regs, ARRAY_SIZE(small_regs));
    /* BAR sizes are powers of two: 5 pages -> 8 */
    g_assert_cmpuint(d->bar2_size, ==, 8 * 4096);
    g_assert_cmpuint(qpci_msix_table_size(d->dev), ==, 4);

    rsim_bringup(d);
    CMD_INIT(hc, RSIM_CMD_QUERY_PORT);
    assert_sts(cmd_exec(d, &hc, &port), RSIM_STS_OK);
    g_assert_cmpuint(le32_to_cpu(port.gid_tbl_len), ==, 4);

    /* EQs: vectors 1..3 */
    eq_cmd(&ec, 4, galloc(d, 256), 16);
    cmd_expect(d, &ec, RSIM_STS_INVALID);
    eq_create(d, &eq, 3, 16);
    eq_create(d, &eq, 1, 16);
    eq_create(d, &eq, 2, 16);
    eq_cmd(&ec, 1, galloc(d, 256), 16);
    cmd_expect(d, &ec, RSIM_STS_NO_RESOURCES);

    /* CQ depth up to roundup_pow_of_two(201) = 256 */
    tring_init(d, &cq, RSIM_PBL_LEVEL0, 9, RSIM_CQE_LOG2_SLOT);
    cq_cmd(&cc, 0, &cq);
    cmd_expect(d, &cc, RSIM_STS_LIMIT);
    cq_create(d, &cq, 0, RSIM_PBL_LEVEL0, 8);
    /* doorbell pages 0..4 */
    cq_cmd(&cc, 0, &cq);
    cc.db_page = cpu_to_le32(5);
    cmd_expect(d, &cc, RSIM_STS_INVALID);
    cc.db_page = cpu_to_le32(4);
    cmd_expect(d, &cc, RSIM_STS_OK);

    /* QP caps: 4 SGEs, 64 inline bytes, depth <= 128 */
    pdn = pd_alloc(d);
    qp_rings(d, &qp, RSIM_PBL_LEVEL0);
    qp_cmd(&qc, RSIM_QPT_RC, pdn, 0, 0, &qp);
    qc.max_send_sge = 5;
    cmd_expect(d, &qc, RSIM_STS_LIMIT);
    qp_cmd(&qc, RSIM_QPT_RC, pdn, 0, 0, &qp);
    qc.max_recv_sge = 5;
    cmd_expect(d, &qc, RSIM_STS_LIMIT);
    qp_cmd(&qc, RSIM_QPT_RC, pdn, 0, 0, &qp);
    qc.max_inline = cpu_to_le16(65);
    cmd_expect(d, &qc, RSIM_STS_LIMIT);
    tring_init(d, &qp.sq, RSIM_PBL_LEVEL0, 8, 9);
    qp_cmd(&qc, RSIM_QPT_RC, pdn, 0, 0, &qp);
    cmd_expect(d, &qc, RSIM_STS_LIMIT);
    tring_init(d, &qp.sq, RSIM_PBL_LEVEL0, 7, 9);
    qp_cmd(&qc, RSIM_QPT_RC, pdn, 0, 0, &qp);
    qc.max_send_sge = 4;
    qc.max_inline = cpu_to_le16(64);
    qc.db_page = cpu_to_le16(5);
    cmd_expect(d, &qc, RSIM_STS_INVALID);
    qc.db_page = cpu_to_le16(4);
    qp.qpn = qp_create_cmd(d, &qc);
    g_assert_cmpuint(qp.qpn, ==, 2);

    /* max_rd_atomic and max_dest_rd_atomic up to 4 */
    gid_add_v4(d, 0, 1);
    qp_rc_to_init(d, qp.qpn);
    attr_rc_rtr(&a);
    a.max_dest_rd_atomic = 5;
    assert_sts(qp_modify(d, qp.qpn, &a), RSIM_STS_LIMIT);
    a.max_dest_rd_atomic = 4;
    qp_modify_ok(d, qp.qpn, &a);
    attr_rc_rts(&a);
    a.max_rd_atomic = 5;
    assert_sts(qp_modify(d, qp.qpn, &a), RSIM_STS_LIMIT);
    a.max_rd_atomic = 4;
    qp_modify_ok(d, qp.qpn, &a);

    /* GID indexes 0..3 */
    {
        struct rsim_cmd_gid gc;
        uint8_t gid[16];

        gid_v4(gid, 10, 0, 0, 9);
        gid_cmd(&gc, RSIM_CMD_ADD_GID, 4, gid);
        cmd_expect(d, &gc, RSIM_STS_LIMIT);
        gid_cmd(&gc, RSIM_CMD_ADD_GID, 3, gid);
        cmd_expect(d, &gc, RSIM_STS_OK);
    }
    assert_alive(d);
    rsim_stop(d);
}

/* Property values outside their ranges are refused at realize. */
static void test_pci_bad_props(const char *machine)
{
    static const struct {
        const char *name;
        int64_t val;
    } bad[] = {
        { "max-qp", 1 }, { "max-qp", 2000000 }, { "max-mr", 0 },
        { "max-mr", 20000000 }, { "max-cq", 0 }, { "max-pd", 0 },
        { "max-srq", 0 }, { "max-ah", 1 }, { "max-gid", 0 },
        { "max-gid", 257 }, { "max-sge", 0 }, { "max-sge", 65 },
        { "max-qp-wr", 0 }, { "max-qp-wr", 32768 }, { "max-cqe", 0 },
        { "max-cqe", 4194304 }, { "max-inline", 4097 },
        { "max-rd-atom", 0 }, { "max-rd-atom", 129 }, { "db-pages", 0 },
        { "db-pages", 1025 }, { "msix-vectors", 1 },
        { "msix-vectors", 33 },
    };
    QTestState *qts = qtest_initf("-M %s -nodefaults", machine);

    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        QDict *resp;

        note("%s=%" PRId64, bad[i].name, bad[i].val);
        resp = qtest_qmp(qts, "{'execute': 'device_add', 'arguments': {"
                         "'driver': 'rdma-sim', 'addr': '05.0', "
                         "%s: %" PRId64 "}}", bad[i].name, bad[i].val);
        g_assert_true(qdict_haskey(resp, "error"));
        qobject_unref(resp);
    }
    /* a good one is accepted (pc supports PCI hotplug) */
    qtest_qmp_device_add(qts, "rdma-sim", "r1",
                         "{'addr': '05.0', 'max-qp': 64}");
    qtest_quit(qts);
}

/*
 * ========================================================================
 * Reset
 * ========================================================================
 */

static void check_reset_regs(Rsim *d)
{
    check_regs(d, default_regs, ARRAY_SIZE(default_regs));
}

static void test_reset_regs(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    g_autofree uint8_t *before = g_malloc(32 * RSIM_ACQ_ENTRY_SIZE);
    g_autofree uint8_t *after = g_malloc(32 * RSIM_ACQ_ENTRY_SIZE);
    struct rsim_admin_cmd c;

    wr(d, A_RSIM_INTR_MASK, 0);
    assert_alive(d);
    g_assert_cmpuint(rd(d, A_RSIM_AQ_HEAD), ==, 1);
    g_assert_cmpuint(rd(d, A_RSIM_ACQ_TAIL), ==, 1);
    g_assert_cmpuint(rd(d, A_RSIM_AEQ_TAIL), ==, 1);
    g_assert_cmphex(rd(d, A_RSIM_DEV_CTRL), ==, R_RSIM_DEV_CTRL_ENABLE_MASK);

    /* DEV_CTRL.RESET: every register back to its reset value */
    wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_RESET_MASK);
    check_reset_regs(d);

    /* after a reset the device leaves guest memory alone */
    qtest_memread(d->qts, d->acq, before, 32 * RSIM_ACQ_ENTRY_SIZE);
    CMD_INIT(c, RSIM_CMD_NOP);
    aq_put(d, &c);
    wr(d, A_RSIM_AQ_TAIL, d->aq_tail);      /* ignored: not ready */
    wr(d, A_RSIM_ACQ_HEAD, 1);
    settle(d);
    qtest_memread(d->qts, d->acq, after, 32 * RSIM_ACQ_ENTRY_SIZE);
    g_assert_cmpmem(before, 32 * RSIM_ACQ_ENTRY_SIZE, after,
                    32 * RSIM_ACQ_ENTRY_SIZE);
    check_reset_regs(d);

    /* ENABLE 1 -> 0 resets as well */
    rsim_enable(d, 8, 8, 8);
    aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    assert_alive(d);
    wr(d, A_RSIM_INTR_MASK, 1);
    wr(d, A_RSIM_DEV_CTRL, 0);
    check_reset_regs(d);

    /* a reset clears FATAL */
    rsim_set_queues(d, 3, 8, 8);
    wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
    g_assert_cmphex(rd(d, A_RSIM_DEV_STATUS), ==,
                    FATAL_STATUS(RSIM_FATAL_BAD_ADMIN_CONFIG));
    wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_RESET_MASK);
    check_reset_regs(d);

    rsim_bringup(d);
    assert_alive(d);
    rsim_stop(d);
}

/* Objects of every kind, to be destroyed by a reset */
typedef struct TObjs {
    uint32_t pdn, eqn, cqn, qpn, srqn, ahn, key;
} TObjs;

static void make_objects(Rsim *d, TObjs *o)
{
    struct rsim_cmd_create_srq sc;
    struct rsim_cmd_create_ah ac;
    struct rsim_cmd_create_ethq ec;
    struct rsim_create_resp r;
    TRing srq;
    TEnv env;

    gid_add_v4(d, 0, 1);
    env_setup(d, &env, RSIM_PBL_LEVEL1, 4);
    o->pdn = env.pdn;
    o->eqn = env.eq.eqn;
    o->cqn = env.cqn;
    o->qpn = env.qp.qpn;
    post_send(d, &env.qp.sq, 1, RSIM_WR_SEND);

    tring_init(d, &srq, RSIM_PBL_LEVEL0, 3, 6);
    CMD_INIT(sc, RSIM_CMD_CREATE_SRQ);
    sc.pdn = cpu_to_le32(o->pdn);
    sc.q = srq.desc;
    sc.max_sge = 1;
    assert_sts(cmd_exec(d, &sc, &r), RSIM_STS_OK);
    o->srqn = resp_handle(&r);

    CMD_INIT(ac, RSIM_CMD_CREATE_AH);
    ac.pdn = cpu_to_le32(o->pdn);
    av_v4(&ac.av, 0);
    assert_sts(cmd_exec(d, &ac, &r), RSIM_STS_OK);
    o->ahn = resp_handle(&r);

    o->key = mr_reg_l0(d, o->pdn, ACC_LW, 0x100000, 4096);

    CMD_INIT(ec, RSIM_CMD_CREATE_ETHQ);
    ec.kind = RSIM_ETHQ_TX;
    ec.eqn = cpu_to_le32(o->eqn);
    ec.addr = cpu_to_le64(galloc(d, 16 * 16));
    ec.depth = cpu_to_le32(16);
    cmd_expect(d, &ec, RSIM_STS_OK);
}

/* A reset with live objects destroys them all; numbers start over. */
static void test_reset_objects(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_cmd_query_stats sc;
    struct rsim_cmd_qp_attr qc;
    struct rsim_cmd_gid gc;
    TObjs o, n;

    make_objects(d, &o);
    g_assert_cmpuint(o.pdn, ==, 0);
    g_assert_cmpuint(o.eqn, ==, 0);
    g_assert_cmpuint(o.cqn, ==, 0);
    g_assert_cmpuint(o.qpn, ==, 2);
    g_assert_cmpuint(o.srqn, ==, 0);
    g_assert_cmpuint(o.ahn, ==, 1);
    g_assert_cmpuint(RSIM_KEY_INDEX(o.key), ==, 1);
    /* a refused command counts as a guest error */
    handle_expect(d, RSIM_CMD_DESTROY_QP, 77, RSIM_STS_BAD_HANDLE);
    g_assert_cmpuint(stat_get(d, RSIM_STAT_GUEST_ERRORS), >=, 1);

    rsim_bringup(d);

    /* statistics are cleared */
    CMD_INIT(sc, RSIM_CMD_QUERY_STATS);
    sc.addr = cpu_to_le64(d->scratch);
    sc.len = cpu_to_le32(RSIM_STAT_COUNT * 8);
    qtest_memset(d->qts, d->scratch, 0xa5, RSIM_STAT_COUNT * 8);
    cmd_expect(d, &sc, RSIM_STS_OK);
    for (unsigned i = 0; i < RSIM_STAT_COUNT; i++) {
        g_assert_cmphex(qtest_readq(d->qts, d->scratch + i * 8), ==, 0);
    }

    /* the old handles are gone */
    handle_expect(d, RSIM_CMD_DESTROY_QP, o.qpn, RSIM_STS_BAD_HANDLE);
    CMD_INIT(qc, RSIM_CMD_QUERY_QP);
    qc.qpn = cpu_to_le32(o.qpn);
    qc.addr = cpu_to_le64(d->scratch);
    cmd_expect(d, &qc, RSIM_STS_BAD_HANDLE);
    handle_expect(d, RSIM_CMD_DESTROY_SRQ, o.srqn, RSIM_STS_BAD_HANDLE);
    handle_expect(d, RSIM_CMD_QUERY_SRQ, o.srqn, RSIM_STS_BAD_HANDLE);
    handle_expect(d, RSIM_CMD_DESTROY_AH, o.ahn, RSIM_STS_BAD_HANDLE);
    handle_expect(d, RSIM_CMD_DEREG_MR, o.key, RSIM_STS_BAD_HANDLE);
    xlate_fail(d, o.key, o.pdn, 0, 0x100000, 1, RSIM_STS_ACCESS);
    handle_expect(d, RSIM_CMD_DESTROY_CQ, o.cqn, RSIM_STS_BAD_HANDLE);
    handle_expect(d, RSIM_CMD_DESTROY_ETHQ, RSIM_ETHQ_TX,
                  RSIM_STS_BAD_HANDLE);
    handle_expect(d, RSIM_CMD_DESTROY_EQ, o.eqn, RSIM_STS_BAD_HANDLE);
    handle_expect(d, RSIM_CMD_DEALLOC_PD, o.pdn, RSIM_STS_BAD_HANDLE);
    gid_cmd(&gc, RSIM_CMD_DEL_GID, 0, NULL);
    cmd_expect(d, &gc, RSIM_STS_BAD_HANDLE);

    /* and the same numbers come back: the GID slot is free again */
    make_objects(d, &n);
    g_assert_cmpuint(n.pdn, ==, o.pdn);
    g_assert_cmpuint(n.eqn, ==, o.eqn);
    g_assert_cmpuint(n.cqn, ==, o.cqn);
    g_assert_cmpuint(n.qpn, ==, o.qpn);
    g_assert_cmpuint(n.srqn, ==, o.srqn);
    g_assert_cmpuint(n.ahn, ==, o.ahn);
    g_assert_cmpuint(RSIM_KEY_INDEX(n.key), ==, RSIM_KEY_INDEX(o.key));
    assert_alive(d);
    rsim_stop(d);
}

/* A machine reset (PCI reset) returns the device to power-on state. */
static void test_reset_system(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    QDict *resp;

    g_assert_cmpuint(pd_alloc(d), ==, 0);
    g_assert_cmpuint(pd_alloc(d), ==, 1);
    wr(d, A_RSIM_INTR_MASK, 0);

    resp = qtest_qmp(d->qts, "{'execute': 'system_reset'}");
    g_assert_true(qdict_haskey(resp, "return"));
    qobject_unref(resp);
    qtest_qmp_eventwait(d->qts, "RESET");

    /* the PCI configuration is reset too: map the BARs again */
    map_bars(d);
    check_reset_regs(d);
    rsim_bringup(d);
    handle_expect(d, RSIM_CMD_DEALLOC_PD, 1, RSIM_STS_BAD_HANDLE);
    g_assert_cmpuint(pd_alloc(d), ==, 0);
    assert_alive(d);
    rsim_stop(d);
}

/*
 * Hot-plug a second device, give it live objects of every kind and
 * unplug it (unrealize); then again.  The first device is unaffected.
 */
static void test_pci_hotplug(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    TObjs o;

    g_assert_cmpuint(pd_alloc(d), ==, 0);
    for (unsigned i = 0; i < 2; i++) {
        Rsim *h;

        qtest_qmp_device_add(d->qts, "rdma-sim", "r2", "{'addr': '05.0'}");
        h = rsim_attach(d, QPCI_DEVFN(5, 0));
        check_reset_regs(h);
        msix_setup(h);
        rsim_bringup(h);
        make_objects(h, &o);
        g_assert_cmpuint(o.pdn, ==, 0);
        g_assert_cmpuint(o.qpn, ==, 2);
        cq_arm_db(h, 0, o.cqn, RSIM_CQ_ARM_NEXT);
        wr(h, A_RSIM_INTR_MASK, 0);
        assert_alive(h);
        qpci_unplug_acpi_device_test(d->qts, "r2", 5);
        rsim_detach(h);
        assert_alive(d);
    }
    g_assert_cmpuint(pd_alloc(d), ==, 1);
    rsim_stop(d);
}

/*
 * ========================================================================
 * Admin queue
 * ========================================================================
 */

static void test_admin_bringup(const char *machine)
{
    Rsim *d = rsim_start(machine, NULL, false);
    struct rsim_admin_cqe cqe;
    struct rsim_admin_cmd c;
    struct rsim_eqe e;
    uint16_t id;

    g_assert_cmpuint(FIELD_EX32(rd(d, A_RSIM_VERSION), RSIM_VERSION, MAJOR),
                     ==, 1);
    rsim_reset(d);
    rsim_set_queues(d, 16, 16, 32);
    g_assert_cmphex(rd64(d, A_RSIM_AQ_BASE_LO), ==, d->aq);
    g_assert_cmphex(rd64(d, A_RSIM_ACQ_BASE_LO), ==, d->acq);
    g_assert_cmphex(rd64(d, A_RSIM_AEQ_BASE_LO), ==, d->aeq);
    g_assert_cmpuint(rd(d, A_RSIM_AQ_DEPTH), ==, 16);
    g_assert_cmpuint(rd(d, A_RSIM_ACQ_DEPTH), ==, 16);
    g_assert_cmpuint(rd(d, A_RSIM_AEQ_DEPTH), ==, 32);
    g_assert_cmphex(rd(d, A_RSIM_DEV_STATUS), ==, 0);

    /* READY before the write returns, then the port event */
    wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
    g_assert_cmphex(rd(d, A_RSIM_DEV_STATUS), ==, DEV_READY);
    g_assert_cmphex(rd(d, A_RSIM_DEV_CTRL), ==, R_RSIM_DEV_CTRL_ENABLE_MASK);
    g_assert_cmpuint(rd(d, A_RSIM_AEQ_TAIL), ==, 1);
    qtest_memread(d->qts, d->aeq, &e, sizeof(e));
    g_assert_cmphex(le32_to_cpu(e.dw0), ==,
                    RSIM_EV_PORT_ACTIVE << 8 | R_RSIM_EQE_HDR_PHASE_MASK);
    g_assert_cmpuint(le32_to_cpu(e.object), ==, 1);
    g_assert_cmphex(le64_to_cpu(e.data), ==, 0);
    g_assert_cmphex(qtest_readl(d->qts, d->aeq + 16), ==, 0);
    aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);

    /* first completion: slot 0, phase 1 */
    CMD_INIT(c, RSIM_CMD_NOP);
    id = aq_submit(d, &c);
    g_assert_true(acq_poll(d, &cqe, POLL_US));
    g_assert_cmphex(le32_to_cpu(cqe.dw0), ==, R_RSIM_CQE_HDR_PHASE_MASK | id);
    g_assert_cmpuint(le16_to_cpu(cqe.sq_head), ==, 1);
    for (size_t i = 0; i < sizeof(cqe.result); i++) {
        g_assert_cmphex(cqe.result[i], ==, 0);
    }
    acq_ack(d);
    g_assert_cmpuint(rd(d, A_RSIM_AQ_HEAD), ==, 1);
    g_assert_cmpuint(rd(d, A_RSIM_ACQ_TAIL), ==, 1);
    g_assert_cmphex(qtest_readl(d->qts, d->acq + 64), ==, 0);
    aeq_expect_none(d);
    assert_alive(d);
    rsim_stop(d);
}

/* Invalid admin queue registers make ENABLE fatal (BAD_ADMIN_CONFIG). */
static void test_admin_bad_config(const char *machine)
{
    static const struct {
        uint32_t reg;
        int64_t val;        /* < 0: base + -val (misalign) */
    } bad[] = {
        { A_RSIM_AQ_DEPTH, 0 }, { A_RSIM_AQ_DEPTH, 1 },
        { A_RSIM_AQ_DEPTH, 3 }, { A_RSIM_AQ_DEPTH, 12 },
        { A_RSIM_AQ_DEPTH, 512 }, { A_RSIM_AQ_DEPTH, 0x80000000 },
        { A_RSIM_ACQ_DEPTH, 0 }, { A_RSIM_ACQ_DEPTH, 6 },
        { A_RSIM_ACQ_DEPTH, 512 },
        { A_RSIM_AEQ_DEPTH, 1 }, { A_RSIM_AEQ_DEPTH, 5 },
        { A_RSIM_AEQ_DEPTH, 8192 },
        { A_RSIM_AQ_BASE_LO, -32 }, { A_RSIM_AQ_BASE_LO, -1 },
        { A_RSIM_ACQ_BASE_LO, -8 }, { A_RSIM_AEQ_BASE_LO, -16 },
        { A_RSIM_AQ_BASE_LO, 0 }, { A_RSIM_ACQ_BASE_LO, 0 },
        { A_RSIM_AEQ_BASE_LO, 0 },
    };
    Rsim *d = rsim_start(machine, NULL, false);

    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        uint32_t val = bad[i].val;

        note("register 0x%x value %" PRId64, bad[i].reg,
                       bad[i].val);
        rsim_reset(d);
        rsim_set_queues(d, 8, 8, 8);
        if (bad[i].val < 0) {
            val = rd(d, bad[i].reg) - bad[i].val;
        } else if (bad[i].reg != A_RSIM_AQ_DEPTH &&
                   bad[i].reg != A_RSIM_ACQ_DEPTH &&
                   bad[i].reg != A_RSIM_AEQ_DEPTH) {
            wr(d, bad[i].reg + 4, 0);       /* base 0 */
        }
        wr(d, bad[i].reg, val);
        wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
        g_assert_cmphex(rd(d, A_RSIM_DEV_STATUS), ==,
                        FATAL_STATUS(RSIM_FATAL_BAD_ADMIN_CONFIG));
        /* no port event, and ENABLE again does not help */
        g_assert_cmphex(qtest_readl(d->qts, d->aeq), ==, 0);
        wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
        g_assert_cmphex(rd(d, A_RSIM_DEV_STATUS), ==,
                        FATAL_STATUS(RSIM_FATAL_BAD_ADMIN_CONFIG));
    }

    /* the boundaries are accepted: 2 .. CAP_MAX_AQ_DEPTH, .. CAP_MAX_EQE */
    rsim_reset(d);
    rsim_enable(d, 2, 2, 2);
    aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    assert_alive(d);
    assert_alive(d);
    assert_alive(d);
    rsim_reset(d);
    rsim_enable(d, 256, 256, 4096);
    aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    assert_alive(d);

    /* base and depth registers are read-only while enabled */
    rsim_bringup(d);
    for (uint32_t reg = A_RSIM_AQ_BASE_LO; reg <= A_RSIM_AEQ_DEPTH;
         reg += 4) {
        uint32_t old;

        if (reg != A_RSIM_AQ_BASE_LO && reg != A_RSIM_AQ_BASE_HI &&
            reg != A_RSIM_AQ_DEPTH && reg != A_RSIM_ACQ_BASE_LO &&
            reg != A_RSIM_ACQ_BASE_HI && reg != A_RSIM_ACQ_DEPTH &&
            reg != A_RSIM_AEQ_BASE_LO && reg != A_RSIM_AEQ_BASE_HI &&
            reg != A_RSIM_AEQ_DEPTH) {
            continue;
        }
        old = rd(d, reg);
        wr(d, reg, 0x40);
        g_assert_cmphex(rd(d, reg), ==, old);
    }
    assert_alive(d);
    rsim_stop(d);
}

/* A small AQ and ACQ wrap many times: phases, IDs, heads and tails. */
static void admin_wrap(Rsim *d, uint32_t aq_depth, uint32_t acq_depth,
                       unsigned n, unsigned batch)
{
    struct rsim_admin_cmd c;
    unsigned done = 0;

    rsim_reset(d);
    rsim_enable(d, aq_depth, acq_depth, 8);
    aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    /* IDs wrap too */
    d->cmd_id = 0xfff0;
    CMD_INIT(c, RSIM_CMD_NOP);
    while (done < n) {
        uint16_t ids[8];

        for (unsigned b = 0; b < batch; b++) {
            ids[b] = aq_submit(d, &c);
        }
        for (unsigned b = 0; b < batch; b++, done++) {
            struct rsim_admin_cqe cqe;
            uint32_t slot = done % acq_depth;
            bool phase = !((done / acq_depth) & 1);

            g_assert_cmpuint(d->acq_head, ==, slot);
            g_assert_true(acq_poll(d, &cqe, POLL_US));
            g_assert_cmphex(le32_to_cpu(cqe.dw0), ==,
                            (uint32_t)phase << 31 | ids[b]);
            g_assert_cmpuint(le16_to_cpu(cqe.sq_head), ==,
                             (done + 1) % aq_depth);
            acq_ack(d);
        }
        settle(d);
        g_assert_cmpuint(rd(d, A_RSIM_AQ_HEAD), ==, done % aq_depth);
        g_assert_cmpuint(rd(d, A_RSIM_ACQ_TAIL), ==, done % acq_depth);
    }
    assert_alive(d);
}

static void test_admin_phase_wrap(const char *machine)
{
    Rsim *d = rsim_start(machine, NULL, false);

    admin_wrap(d, 4, 4, 40, 1);
    admin_wrap(d, 4, 4, 36, 3);     /* AQ full: depth - 1 outstanding */
    admin_wrap(d, 4, 8, 40, 3);
    admin_wrap(d, 8, 4, 42, 3);
    admin_wrap(d, 2, 2, 12, 1);
    rsim_stop(d);
}

/* The device stops reading commands while the ACQ has no free slot. */
static void test_admin_backpressure(const char *machine)
{
    Rsim *d = rsim_start(machine, NULL, false);
    struct rsim_admin_cmd c;
    uint16_t ids[5];

    rsim_reset(d);
    rsim_enable(d, 8, 2, 8);            /* the ACQ holds one completion */
    aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    CMD_INIT(c, RSIM_CMD_NOP);
    for (unsigned i = 0; i < 5; i++) {
        ids[i] = aq_submit(d, &c);
    }
    for (unsigned i = 0; i < 5; i++) {
        struct rsim_admin_cqe cqe;
        uint64_t other = d->acq + (1 - d->acq_head) * RSIM_ACQ_ENTRY_SIZE;
        uint32_t other_dw0 = qtest_readl(d->qts, other);

        g_assert_true(acq_poll(d, &cqe, POLL_US));
        g_assert_cmpuint(cqe_id(&cqe), ==, ids[i]);
        g_assert_cmpuint(le16_to_cpu(cqe.sq_head), ==, i + 1);
        /* nothing more happens until ACQ_HEAD is written */
        settle(d);
        g_assert_cmpuint(rd(d, A_RSIM_AQ_HEAD), ==, i + 1);
        g_assert_cmpuint(rd(d, A_RSIM_ACQ_TAIL), ==, (i + 1) % 2);
        g_assert_cmphex(qtest_readl(d->qts, other), ==, other_dw0);
        acq_ack(d);
    }
    settle(d);
    g_assert_cmpuint(rd(d, A_RSIM_AQ_HEAD), ==, 5);
    assert_alive(d);
    rsim_stop(d);
}

static void test_admin_opcodes(const char *machine)
{
    static const uint8_t unknown[] = {
        0x05, 0x06, 0x07, 0x0c, 0x0f, 0x12, 0x17, 0x1c, 0x24, 0x2c, 0x32,
        0x37, 0x3c, 0x42, 0x43, 0x7f, 0x80, 0xfe, 0xff,
    };
    static const uint8_t no_params[] = {
        RSIM_CMD_NOP, RSIM_CMD_QUERY_DEVICE, RSIM_CMD_QUERY_PORT,
        RSIM_CMD_ALLOC_PD,
    };
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_admin_cmd c;

    for (size_t i = 0; i < ARRAY_SIZE(unknown); i++) {
        CMD_INIT(c, unknown[i]);
        cmd_expect(d, &c, RSIM_STS_BAD_OPCODE);
        /* the opcode is checked before the flags */
        CMD_INIT(c, unknown[i] | 0x100);
        cmd_expect(d, &c, RSIM_STS_BAD_OPCODE);
    }
    /* flags are reserved, for every opcode */
    for (uint8_t op = 0; op < RSIM_CMD_MAX; op++) {
        for (unsigned bit = 0; bit < 8; bit++) {
            CMD_INIT(c, op | 0x100u << bit);
            assert_sts(cmd_exec(d, &c, NULL),
                       op == 0x05 || op == 0x06 || op == 0x07 ||
                       (op >= 0x0c && op <= 0x0f) ||
                       (op >= 0x12 && op <= 0x17) ||
                       (op >= 0x1c && op <= 0x1f) ||
                       (op >= 0x24 && op <= 0x27) ||
                       (op >= 0x2c && op <= 0x2f) ||
                       (op >= 0x32 && op <= 0x37) ||
                       (op >= 0x3c && op <= 0x3f) ?
                       RSIM_STS_BAD_OPCODE : RSIM_STS_RESERVED);
        }
    }
    assert_alive(d);
    /* commands without parameters: every other byte is reserved */
    for (size_t i = 0; i < ARRAY_SIZE(no_params); i++) {
        for (unsigned off = 0; off < sizeof(c.data); off += 7) {
            CMD_INIT(c, no_params[i]);
            c.data[off] = 0x40;
            cmd_expect(d, &c, RSIM_STS_RESERVED);
        }
    }
    /* ... and the refused ALLOC_PDs allocated nothing */
    g_assert_cmpuint(pd_alloc(d), ==, 0);
    rsim_stop(d);
}

static void test_admin_device_port(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    static const uint8_t mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
    static const uint8_t mac2[6] = { 0x02, 0x00, 0x00, 0xaa, 0xbb, 0xcc };
    static const struct {
        uint32_t mtu;
        uint8_t active;
    } mtus[] = {
        { 9000, RSIM_MTU_4096 }, { 4200, RSIM_MTU_4096 },
        { 4176, RSIM_MTU_4096 }, { 4175, RSIM_MTU_2048 },
        { 2128, RSIM_MTU_2048 }, { 2127, RSIM_MTU_1024 },
        { 1500, RSIM_MTU_1024 }, { 1104, RSIM_MTU_1024 },
        { 1103, RSIM_MTU_512 }, { 592, RSIM_MTU_512 },
        { 591, RSIM_MTU_256 }, { 68, RSIM_MTU_256 },
    };
    struct rsim_query_device_resp dev;
    struct rsim_query_port_resp port;
    struct rsim_cmd_set_port sp;
    struct rsim_admin_cmd c;

    CMD_INIT(c, RSIM_CMD_QUERY_DEVICE);
    assert_sts(cmd_exec(d, &c, &dev), RSIM_STS_OK);
    g_assert_cmphex(le64_to_cpu(dev.node_guid), ==, TEST_GUID);
    g_assert_cmphex(le64_to_cpu(dev.sys_image_guid), ==, TEST_GUID);
    g_assert_cmphex(le64_to_cpu(dev.fw_ver), ==, 1ULL << 32);
    g_assert_cmphex(le32_to_cpu(dev.vendor_id), ==, 0x1b36);
    g_assert_cmphex(le32_to_cpu(dev.vendor_part_id), ==, 0x0120);
    g_assert_cmphex(le32_to_cpu(dev.hw_ver), ==, 1);
    for (size_t i = 0; i < ARRAY_SIZE(dev.reserved); i++) {
        g_assert_cmphex(dev.reserved[i], ==, 0);
    }

    CMD_INIT(c, RSIM_CMD_QUERY_PORT);
    assert_sts(cmd_exec(d, &c, &port), RSIM_STS_OK);
    g_assert_cmpuint(port.state, ==, RSIM_PORT_ACTIVE);
    g_assert_cmpuint(port.phys_state, ==, 5);
    g_assert_cmpuint(port.max_mtu, ==, RSIM_MTU_4096);
    g_assert_cmpuint(port.active_mtu, ==, RSIM_MTU_1024);
    g_assert_cmpuint(le32_to_cpu(port.eth_mtu), ==, 1500);
    g_assert_cmpmem(port.mac, 6, mac, 6);
    g_assert_cmpuint(port.active_speed, ==, 32);
    g_assert_cmpuint(port.active_width, ==, 1);
    g_assert_cmpuint(le32_to_cpu(port.gid_tbl_len), ==, 16);

    /* SET_PORT MTU: active_mtu = largest IB MTU <= eth_mtu - 80 */
    for (size_t i = 0; i < ARRAY_SIZE(mtus); i++) {
        note("eth_mtu %u", mtus[i].mtu);
        CMD_INIT(sp, RSIM_CMD_SET_PORT);
        sp.mask = cpu_to_le32(RSIM_SET_PORT_MTU);
        sp.eth_mtu = cpu_to_le32(mtus[i].mtu);
        cmd_expect(d, &sp, RSIM_STS_OK);
        assert_sts(cmd_exec(d, &c, &port), RSIM_STS_OK);
        g_assert_cmpuint(le32_to_cpu(port.eth_mtu), ==, mtus[i].mtu);
        g_assert_cmpuint(port.active_mtu, ==, mtus[i].active);
        g_assert_cmpuint(port.max_mtu, ==, RSIM_MTU_4096);
    }

    /* SET_PORT MAC; the node GUID stays the one of the device */
    CMD_INIT(sp, RSIM_CMD_SET_PORT);
    sp.mask = cpu_to_le32(RSIM_SET_PORT_MAC | RSIM_SET_PORT_MTU);
    sp.eth_mtu = cpu_to_le32(9000);
    memcpy(sp.mac, mac2, 6);
    cmd_expect(d, &sp, RSIM_STS_OK);
    assert_sts(cmd_exec(d, &c, &port), RSIM_STS_OK);
    g_assert_cmpmem(port.mac, 6, mac2, 6);
    g_assert_cmpuint(le32_to_cpu(port.eth_mtu), ==, 9000);
    g_assert_cmpuint(port.active_mtu, ==, RSIM_MTU_4096);
    {
        struct rsim_admin_cmd qd;

        CMD_INIT(qd, RSIM_CMD_QUERY_DEVICE);
        assert_sts(cmd_exec(d, &qd, &dev), RSIM_STS_OK);
        g_assert_cmphex(le64_to_cpu(dev.node_guid), ==, TEST_GUID);
    }

    /* refused SET_PORTs change nothing */
    {
        static const uint8_t mcast[6] = { 0x01, 0x00, 0x5e, 0, 0, 1 };
        static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
        static const uint8_t zero[6];
        struct {
            uint32_t mask, mtu;
            const uint8_t *mac;
            unsigned off;           /* reserved byte to set, 0 = none */
            unsigned st;
        } bad[] = {
            { RSIM_SET_PORT_MTU, 67, NULL, 0, RSIM_STS_INVALID },
            { RSIM_SET_PORT_MTU, 9001, NULL, 0, RSIM_STS_INVALID },
            { RSIM_SET_PORT_MTU, 0, NULL, 0, RSIM_STS_INVALID },
            { RSIM_SET_PORT_MTU, 0xffffffff, NULL, 0, RSIM_STS_INVALID },
            { RSIM_SET_PORT_MAC, 0, mcast, 0, RSIM_STS_INVALID },
            { RSIM_SET_PORT_MAC, 0, bcast, 0, RSIM_STS_INVALID },
            { RSIM_SET_PORT_MAC, 0, zero, 0, RSIM_STS_INVALID },
            { RSIM_SET_PORT_MTU | RSIM_SET_PORT_MAC, 1500, zero, 0,
              RSIM_STS_INVALID },
            { RSIM_SET_PORT_MTU | RSIM_SET_PORT_MAC, 100000, mac, 0,
              RSIM_STS_INVALID },
            { 1u << 2, 0, NULL, 0, RSIM_STS_INVALID },
            { 0x80000000 | RSIM_SET_PORT_MTU, 1500, NULL, 0,
              RSIM_STS_INVALID },
            { RSIM_SET_PORT_MTU, 1500, NULL, 18, RSIM_STS_RESERVED },
            { RSIM_SET_PORT_MTU, 1500, NULL, 63, RSIM_STS_RESERVED },
        };

        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
            note("bad SET_PORT %zu", i);
            CMD_INIT(sp, RSIM_CMD_SET_PORT);
            sp.mask = cpu_to_le32(bad[i].mask);
            sp.eth_mtu = cpu_to_le32(bad[i].mtu);
            if (bad[i].mac) {
                memcpy(sp.mac, bad[i].mac, 6);
            }
            if (bad[i].off) {
                ((uint8_t *)&sp)[bad[i].off] = 1;
            }
            cmd_expect(d, &sp, bad[i].st);
            assert_sts(cmd_exec(d, &c, &port), RSIM_STS_OK);
            g_assert_cmpmem(port.mac, 6, mac2, 6);
            g_assert_cmpuint(le32_to_cpu(port.eth_mtu), ==, 9000);
        }
    }
    /* a mask of 0 changes nothing */
    CMD_INIT(sp, RSIM_CMD_SET_PORT);
    cmd_expect(d, &sp, RSIM_STS_OK);
    assert_sts(cmd_exec(d, &c, &port), RSIM_STS_OK);
    g_assert_cmpmem(port.mac, 6, mac2, 6);
    g_assert_cmpuint(le32_to_cpu(port.eth_mtu), ==, 9000);

    /* a reset restores MTU 1500 and the device's own MAC */
    rsim_bringup(d);
    assert_sts(cmd_exec(d, &c, &port), RSIM_STS_OK);
    g_assert_cmpmem(port.mac, 6, mac, 6);
    g_assert_cmpuint(le32_to_cpu(port.eth_mtu), ==, 1500);
    rsim_stop(d);
}

static void set_link(Rsim *d, bool up)
{
    QDict *resp = qtest_qmp(d->qts, "{'execute': 'set_link', 'arguments': "
                            "{'name': 'n0', 'up': %i}}", up);

    g_assert_true(qdict_haskey(resp, "return"));
    qobject_unref(resp);
}

static void port_expect(Rsim *d, uint8_t state, uint8_t phys)
{
    struct rsim_query_port_resp port;
    struct rsim_admin_cmd c;

    CMD_INIT(c, RSIM_CMD_QUERY_PORT);
    assert_sts(cmd_exec(d, &c, &port), RSIM_STS_OK);
    g_assert_cmpuint(port.state, ==, state);
    g_assert_cmpuint(port.phys_state, ==, phys);
}

/* The backend's link state: PORT_DOWN / PORT_ACTIVE events and queries */
static void test_admin_port_link(const char *machine)
{
    Rsim *d = rsim_start(machine, NULL, true);

    rsim_bringup(d);
    port_expect(d, RSIM_PORT_ACTIVE, 5);
    set_link(d, false);
    aeq_expect(d, RSIM_EV_PORT_DOWN, 1);
    port_expect(d, RSIM_PORT_DOWN, 3);
    set_link(d, false);
    aeq_expect_none(d);
    set_link(d, true);
    aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    port_expect(d, RSIM_PORT_ACTIVE, 5);

    /* ENABLE reports the state the link has then */
    set_link(d, false);
    aeq_expect(d, RSIM_EV_PORT_DOWN, 1);
    rsim_reset(d);
    rsim_enable(d, 8, 8, 8);
    aeq_expect(d, RSIM_EV_PORT_DOWN, 1);
    port_expect(d, RSIM_PORT_DOWN, 3);
    /* not ready: no event */
    rsim_reset(d);
    set_link(d, true);
    rsim_enable(d, 8, 8, 8);
    aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    aeq_expect_none(d);
    assert_alive(d);
    rsim_stop(d);
}

static void test_admin_stats(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_query_stats_resp r;
    struct rsim_cmd_query_stats c;
    struct rsim_admin_cmd bad;
    const uint32_t lens[] = { 0, 7, 8, 16, 100, 240, 4096 };
    uint64_t buf = galloc(d, 2 * PAGE);

    /* fresh device: every counter 0 */
    for (unsigned i = 0; i < RSIM_STAT_COUNT; i++) {
        g_assert_cmpuint(stat_get(d, i), ==, 0);
    }
    /* every refused command counts as a guest error */
    CMD_INIT(bad, 0x77);
    for (unsigned i = 0; i < 3; i++) {
        assert_sts(cmd_exec(d, &bad, NULL), RSIM_STS_BAD_OPCODE);
    }
    g_assert_cmpuint(stat_get(d, RSIM_STAT_GUEST_ERRORS), ==, 3);

    /* min(len / 8, count) counters, nothing beyond */
    for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
        uint32_t n = MIN(lens[i] / 8, RSIM_STAT_COUNT);

        qtest_memset(d->qts, buf, 0xa5, 2 * PAGE);
        CMD_INIT(c, RSIM_CMD_QUERY_STATS);
        c.addr = cpu_to_le64(buf);
        c.len = cpu_to_le32(lens[i]);
        assert_sts(cmd_exec(d, &c, &r), RSIM_STS_OK);
        g_assert_cmpuint(le32_to_cpu(r.count), ==, n);
        for (unsigned k = 0; k < ARRAY_SIZE(r.reserved); k++) {
            g_assert_cmphex(r.reserved[k], ==, 0);
        }
        for (uint32_t k = 0; k < n; k++) {
            g_assert_cmphex(qtest_readq(d->qts, buf + k * 8), ==,
                            k == RSIM_STAT_GUEST_ERRORS ? 3 : 0);
        }
        g_assert_cmphex(qtest_readq(d->qts, buf + n * 8), ==,
                        0xa5a5a5a5a5a5a5a5ULL);
    }

    CMD_INIT(c, RSIM_CMD_QUERY_STATS);
    c.len = cpu_to_le32(240);
    c.addr = cpu_to_le64(buf + 4);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    c.addr = cpu_to_le64(buf + 1);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    c.addr = cpu_to_le64(UNMAPPED);
    cmd_expect(d, &c, RSIM_STS_DMA);
    c.addr = cpu_to_le64(buf);
    c.reserved0 = cpu_to_le32(1);
    cmd_expect(d, &c, RSIM_STS_RESERVED);
    c.reserved0 = 0;
    c.reserved[43] = 1;
    cmd_expect(d, &c, RSIM_STS_RESERVED);
    rsim_stop(d);
}

/*
 * ========================================================================
 * Commands: EQs, Ethernet rings, PDs, CQs, SRQs, AHs, GIDs
 * ========================================================================
 */

static void test_cmd_eq(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_cmd_create_eq c;
    uint64_t ring = galloc(d, 4096 * RSIM_EQ_ENTRY_SIZE);
    TEq eq[8];
    TRing cq;
    uint32_t cqn;

    /* validation */
    eq_cmd(&c, 0, ring, 8);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    eq_cmd(&c, 9, ring, 8);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    eq_cmd(&c, 0xffffffff, ring, 8);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    eq_cmd(&c, 1, 0, 8);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    eq_cmd(&c, 1, ring + 32, 8);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    eq_cmd(&c, 1, ring + 16, 8);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    for (uint32_t depth = 0; depth < 8; depth++) {
        if (depth != 2 && depth != 4) {
            eq_cmd(&c, 1, ring, depth);
            cmd_expect(d, &c, RSIM_STS_INVALID);
        }
    }
    eq_cmd(&c, 1, ring, 12);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    eq_cmd(&c, 1, ring, 8192);
    cmd_expect(d, &c, RSIM_STS_LIMIT);
    eq_cmd(&c, 1, ring, 0x80000000);
    cmd_expect(d, &c, RSIM_STS_LIMIT);
    eq_cmd(&c, 1, ring, 8);
    c.reserved[43] = 1;
    cmd_expect(d, &c, RSIM_STS_RESERVED);

    /* 8 EQs (9 vectors); vectors may be shared; boundary depths */
    for (uint32_t i = 0; i < 8; i++) {
        g_assert_cmpuint(eq_create(d, &eq[i], i == 7 ? 8 : 1 + i % 2,
                                   i == 0 ? 4096 : (i == 1 ? 2 : 16)), ==, i);
    }
    eq_cmd(&c, 1, ring, 8);
    cmd_expect(d, &c, RSIM_STS_NO_RESOURCES);
    /* lowest free number */
    handle_expect(d, RSIM_CMD_DESTROY_EQ, 3, RSIM_STS_OK);
    handle_expect(d, RSIM_CMD_DESTROY_EQ, 5, RSIM_STS_OK);
    g_assert_cmpuint(eq_create(d, &eq[3], 2, 8), ==, 3);
    g_assert_cmpuint(eq_create(d, &eq[5], 2, 8), ==, 5);

    /* DESTROY_EQ */
    handle_expect(d, RSIM_CMD_DESTROY_EQ, 8, RSIM_STS_BAD_HANDLE);
    handle_expect(d, RSIM_CMD_DESTROY_EQ, 0xffffffff, RSIM_STS_BAD_HANDLE);
    {
        struct rsim_cmd_handle hc;

        CMD_INIT(hc, RSIM_CMD_DESTROY_EQ);
        hc.handle = cpu_to_le32(6);
        hc.reserved[55] = 1;
        cmd_expect(d, &hc, RSIM_STS_RESERVED);
    }
    cqn = cq_create(d, &cq, 6, RSIM_PBL_LEVEL0, 3);
    handle_expect(d, RSIM_CMD_DESTROY_EQ, 6, RSIM_STS_BUSY);
    handle_expect(d, RSIM_CMD_DESTROY_CQ, cqn, RSIM_STS_OK);
    handle_expect(d, RSIM_CMD_DESTROY_EQ, 6, RSIM_STS_OK);
    handle_expect(d, RSIM_CMD_DESTROY_EQ, 6, RSIM_STS_BAD_HANDLE);
    /* a CQ needs an existing EQ */
    tring_init(d, &cq, RSIM_PBL_LEVEL0, 3, RSIM_CQE_LOG2_SLOT);
    {
        struct rsim_cmd_create_cq cc;

        cq_cmd(&cc, 6, &cq);
        cmd_expect(d, &cc, RSIM_STS_BAD_HANDLE);
    }
    rsim_stop(d);
}

static void ethq_cmd(struct rsim_cmd_create_ethq *c, uint8_t kind,
                     uint32_t eqn, uint64_t addr, uint32_t depth)
{
    CMD_INIT(*c, RSIM_CMD_CREATE_ETHQ);
    c->kind = kind;
    c->eqn = cpu_to_le32(eqn);
    c->addr = cpu_to_le64(addr);
    c->depth = cpu_to_le32(depth);
}

static void test_cmd_ethq(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_cmd_create_ethq c;
    uint64_t ring = galloc(d, 4096 * RSIM_ETH_DESC_SIZE);
    TEq eq;

    eq_create(d, &eq, 1, 8);
    ethq_cmd(&c, 2, eq.eqn, ring, 8);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    ethq_cmd(&c, 0xff, eq.eqn, ring, 8);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    ethq_cmd(&c, RSIM_ETHQ_TX, eq.eqn + 1, ring, 8);
    cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    ethq_cmd(&c, RSIM_ETHQ_TX, 0xffffffff, ring, 8);
    cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    ethq_cmd(&c, RSIM_ETHQ_TX, eq.eqn, 0, 8);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    ethq_cmd(&c, RSIM_ETHQ_TX, eq.eqn, ring + 8, 8);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    ethq_cmd(&c, RSIM_ETHQ_TX, eq.eqn, ring, 3);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    ethq_cmd(&c, RSIM_ETHQ_TX, eq.eqn, ring, 1);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    ethq_cmd(&c, RSIM_ETHQ_TX, eq.eqn, ring, 8192);
    cmd_expect(d, &c, RSIM_STS_LIMIT);
    ethq_cmd(&c, RSIM_ETHQ_TX, eq.eqn, ring, 8);
    c.reserved0[1] = 1;
    cmd_expect(d, &c, RSIM_STS_RESERVED);
    ethq_cmd(&c, RSIM_ETHQ_TX, eq.eqn, ring, 8);
    c.reserved1 = cpu_to_le32(1);
    cmd_expect(d, &c, RSIM_STS_RESERVED);
    ethq_cmd(&c, RSIM_ETHQ_TX, eq.eqn, ring, 8);
    c.reserved[35] = 1;
    cmd_expect(d, &c, RSIM_STS_RESERVED);

    /* one TX and one RX ring; 16-byte alignment and 4096 entries are ok */
    ethq_cmd(&c, RSIM_ETHQ_TX, eq.eqn, ring + 16, 2);
    cmd_expect(d, &c, RSIM_STS_OK);
    ethq_cmd(&c, RSIM_ETHQ_TX, eq.eqn, ring, 8);
    cmd_expect(d, &c, RSIM_STS_EXISTS);
    ethq_cmd(&c, RSIM_ETHQ_RX, eq.eqn, ring, 4096);
    cmd_expect(d, &c, RSIM_STS_OK);
    ethq_cmd(&c, RSIM_ETHQ_RX, eq.eqn, ring, 8);
    cmd_expect(d, &c, RSIM_STS_EXISTS);

    /* the EQ is in use until both rings are gone */
    handle_expect(d, RSIM_CMD_DESTROY_EQ, eq.eqn, RSIM_STS_BUSY);
    handle_expect(d, RSIM_CMD_DESTROY_ETHQ, 2, RSIM_STS_BAD_HANDLE);
    handle_expect(d, RSIM_CMD_DESTROY_ETHQ, RSIM_ETHQ_TX, RSIM_STS_OK);
    handle_expect(d, RSIM_CMD_DESTROY_ETHQ, RSIM_ETHQ_TX, RSIM_STS_BAD_HANDLE);
    handle_expect(d, RSIM_CMD_DESTROY_EQ, eq.eqn, RSIM_STS_BUSY);
    handle_expect(d, RSIM_CMD_DESTROY_ETHQ, RSIM_ETHQ_RX, RSIM_STS_OK);
    handle_expect(d, RSIM_CMD_DESTROY_EQ, eq.eqn, RSIM_STS_OK);
    /* doorbells without rings are ignored */
    wr(d, A_RSIM_ETH_TX_DB, 1);
    wr(d, A_RSIM_ETH_RX_DB, 1 | R_RSIM_ETH_RX_DB_ARM_MASK);
    assert_alive(d);
    rsim_stop(d);
}

/* ---- Ethernet datapath through a socket netdev ---- */

static void sock_send_frame(Rsim *d, const uint8_t *frame, size_t len)
{
    uint32_t be = cpu_to_be32(len);

    g_assert_cmpint(send(d->sock, &be, 4, 0), ==, 4);
    g_assert_cmpint(send(d->sock, frame, len, 0), ==, len);
}

static size_t sock_recv_frame(Rsim *d, uint8_t *frame, size_t max)
{
    uint32_t be;
    size_t len, got = 0;

    g_assert_cmpint(recv(d->sock, &be, 4, MSG_WAITALL), ==, 4);
    len = be32_to_cpu(be);
    g_assert_cmpuint(len, <=, max);
    while (got < len) {
        ssize_t r = recv(d->sock, frame + got, len - got, 0);

        g_assert_cmpint(r, >, 0);
        got += r;
    }
    return len;
}

static bool sock_quiet(Rsim *d)
{
    uint8_t b;

    settle(d);
    return recv(d->sock, &b, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN;
}

static void make_frame(uint8_t *f, size_t len, const uint8_t *dst,
                       uint8_t seed)
{
    static const uint8_t src[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };

    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    f[12] = 0x88;                       /* local experimental ethertype */
    f[13] = 0xb5;
    for (size_t i = 14; i < len; i++) {
        f[i] = seed + i;
    }
}

static void eth_desc_write(Rsim *d, uint64_t ring, uint32_t i, uint64_t addr,
                           uint16_t len)
{
    struct rsim_eth_desc e = {
        .addr = cpu_to_le64(addr),
        .len = cpu_to_le16(len),
    };

    qtest_memwrite(d->qts, ring + i * RSIM_ETH_DESC_SIZE, &e, sizeof(e));
}

static void eth_desc_wait(Rsim *d, uint64_t ring, uint32_t i,
                          struct rsim_eth_desc *e)
{
    int64_t deadline = g_get_monotonic_time() + POLL_US;

    do {
        qtest_memread(d->qts, ring + i * RSIM_ETH_DESC_SIZE, e, sizeof(*e));
        if (le16_to_cpu(e->flags) & RSIM_ETH_DESC_DONE) {
            return;
        }
    } while (g_get_monotonic_time() < deadline);
    g_assert_not_reached();
}

static void test_eth_datapath(const char *machine)
{
    static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    static const uint8_t mcast[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };
    static const uint8_t own[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
    static const uint8_t other[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x57 };
    Rsim *d = rsim_start(machine, NULL, true);
    struct rsim_cmd_create_ethq c;
    struct rsim_eth_desc e;
    uint64_t tx = galloc(d, 8 * RSIM_ETH_DESC_SIZE);
    uint64_t rx = galloc(d, 8 * RSIM_ETH_DESC_SIZE);
    uint64_t tbuf = galloc(d, 2 * PAGE);
    uint64_t rbuf[4];
    uint8_t f[1518], g[1518];
    size_t len;
    TEq eq;

    rsim_bringup(d);
    msix_setup(d);
    eq_create(d, &eq, 2, 8);
    ethq_cmd(&c, RSIM_ETHQ_TX, eq.eqn, tx, 8);
    cmd_expect(d, &c, RSIM_STS_OK);
    ethq_cmd(&c, RSIM_ETHQ_RX, eq.eqn, rx, 8);
    cmd_expect(d, &c, RSIM_STS_OK);
    eq_doorbell(d, &eq, true);

    /* TX: the frame leaves through the backend, DONE, an ETH event */
    make_frame(f, 60, bcast, 1);
    qtest_memwrite(d->qts, tbuf, f, 60);
    eth_desc_write(d, tx, 0, tbuf, 60);
    wr(d, A_RSIM_ETH_TX_DB, 1 | R_RSIM_ETH_TX_DB_ARM_MASK);
    eth_desc_wait(d, tx, 0, &e);
    g_assert_cmphex(le16_to_cpu(e.flags), ==, RSIM_ETH_DESC_DONE);
    len = sock_recv_frame(d, g, sizeof(g));
    g_assert_cmpmem(g, len, f, 60);
    eq_expect(d, &eq, RSIM_EV_ETH, RSIM_ETHQ_TX);
    g_assert_true(irq_fired(d, 2));

    /* bad lengths and addresses: DONE | ERR, nothing sent, no event */
    eth_desc_write(d, tx, 1, tbuf, 13);
    eth_desc_write(d, tx, 2, tbuf, 1519);       /* MTU 1500 + 18 */
    eth_desc_write(d, tx, 3, UNMAPPED, 60);
    eth_desc_write(d, tx, 4, tbuf, 0);
    wr(d, A_RSIM_ETH_TX_DB, 5);
    for (uint32_t i = 1; i < 5; i++) {
        eth_desc_wait(d, tx, i, &e);
        g_assert_cmphex(le16_to_cpu(e.flags), ==,
                        RSIM_ETH_DESC_DONE | RSIM_ETH_DESC_ERR);
    }
    g_assert_true(sock_quiet(d));
    eq_expect_none(d, &eq);
    /* the largest frame, wrapping the ring */
    make_frame(f, 1518, own, 7);
    qtest_memwrite(d->qts, tbuf + 100, f, 1518);
    for (uint32_t i = 5; i < 10; i++) {
        eth_desc_write(d, tx, i % 8, tbuf + 100, 1518);
    }
    wr(d, A_RSIM_ETH_TX_DB, 2);
    for (uint32_t i = 5; i < 10; i++) {
        eth_desc_wait(d, tx, i % 8, &e);
        g_assert_cmphex(le16_to_cpu(e.flags), ==, RSIM_ETH_DESC_DONE);
        len = sock_recv_frame(d, g, sizeof(g));
        g_assert_cmpmem(g, len, f, 1518);
    }
    /* producer index beyond the ring: ignored */
    wr(d, A_RSIM_ETH_TX_DB, 8);
    g_assert_true(sock_quiet(d));
    g_assert_cmpuint(stat_get(d, RSIM_STAT_TX_ETH_FRAMES), ==, 6);
    g_assert_cmpuint(stat_get(d, RSIM_STAT_TX_FRAMES), ==, 6);

    /* RX: two buffers posted */
    for (unsigned i = 0; i < 4; i++) {
        rbuf[i] = galloc(d, RSIM_ETH_MIN_RX_BUF);
    }
    eth_desc_write(d, rx, 0, rbuf[0], RSIM_ETH_MIN_RX_BUF);
    eth_desc_write(d, rx, 1, rbuf[1], RSIM_ETH_MIN_RX_BUF);
    eq_doorbell(d, &eq, true);
    wr(d, A_RSIM_ETH_RX_DB, 2 | R_RSIM_ETH_RX_DB_ARM_MASK);

    make_frame(f, 64, bcast, 3);
    sock_send_frame(d, f, 64);
    eth_desc_wait(d, rx, 0, &e);
    g_assert_cmphex(le16_to_cpu(e.flags), ==, RSIM_ETH_DESC_DONE);
    g_assert_cmpuint(le16_to_cpu(e.len), ==, 64);
    qtest_memread(d->qts, rbuf[0], g, 64);
    g_assert_cmpmem(g, 64, f, 64);
    eq_expect(d, &eq, RSIM_EV_ETH, RSIM_ETHQ_RX);
    g_assert_true(irq_fired(d, 2));

    /* not for us: dropped by the filter */
    make_frame(f, 80, other, 4);
    sock_send_frame(d, f, 80);
    /* for our MAC */
    make_frame(f, 100, own, 5);
    sock_send_frame(d, f, 100);
    eth_desc_wait(d, rx, 1, &e);
    g_assert_cmpuint(le16_to_cpu(e.len), ==, 100);
    qtest_memread(d->qts, rbuf[1], g, 100);
    g_assert_cmpmem(g, 100, f, 100);
    g_assert_cmpuint(stat_get(d, RSIM_STAT_RX_DROP_FILTER), ==, 1);
    /* RX ring disarmed: no event */
    eq_expect_none(d, &eq);

    /* no buffer: dropped and counted */
    make_frame(f, 60, mcast, 6);
    sock_send_frame(d, f, 60);
    settle(d);
    g_assert_cmpuint(stat_get(d, RSIM_STAT_RX_ETH_NO_BUF), ==, 1);
    /* multicast is accepted; a buffer too small gives DONE | ERR */
    eth_desc_write(d, rx, 2, rbuf[2], 32);
    eth_desc_write(d, rx, 3, rbuf[3], RSIM_ETH_MIN_RX_BUF);
    wr(d, A_RSIM_ETH_RX_DB, 4);
    sock_send_frame(d, f, 60);
    eth_desc_wait(d, rx, 2, &e);
    g_assert_cmphex(le16_to_cpu(e.flags), ==,
                    RSIM_ETH_DESC_DONE | RSIM_ETH_DESC_ERR);
    sock_send_frame(d, f, 60);
    eth_desc_wait(d, rx, 3, &e);
    g_assert_cmphex(le16_to_cpu(e.flags), ==, RSIM_ETH_DESC_DONE);
    g_assert_cmpuint(le16_to_cpu(e.len), ==, 60);
    g_assert_cmpuint(stat_get(d, RSIM_STAT_RX_ETH_FRAMES), ==, 3);
    g_assert_cmpuint(stat_get(d, RSIM_STAT_RX_FRAMES), ==, 6);

    /* buffers in the device's own registers: refused, no side effect */
    eth_desc_write(d, tx, 2, d->bar0.addr, 60);
    wr(d, A_RSIM_ETH_TX_DB, 3);
    eth_desc_wait(d, tx, 2, &e);
    g_assert_cmphex(le16_to_cpu(e.flags), ==,
                    RSIM_ETH_DESC_DONE | RSIM_ETH_DESC_ERR);
    eth_desc_write(d, rx, 4, d->bar0.addr, RSIM_ETH_MIN_RX_BUF);
    wr(d, A_RSIM_ETH_RX_DB, 5);
    make_frame(f, 64, bcast, 0);
    memset(f + 14, 0x02, 50);               /* DEV_CTRL.RESET if written */
    sock_send_frame(d, f, 64);
    eth_desc_wait(d, rx, 4, &e);
    g_assert_cmphex(le16_to_cpu(e.flags), ==,
                    RSIM_ETH_DESC_DONE | RSIM_ETH_DESC_ERR);
    g_assert_cmphex(rd(d, A_RSIM_DEV_STATUS), ==, DEV_READY);
    g_assert_cmphex(rd(d, A_RSIM_INTR_MASK), ==, 3);
    assert_alive(d);
    rsim_stop(d);
}

/* Wait until a statistics counter reaches a value */
static void stat_wait(Rsim *d, unsigned index, uint64_t val)
{
    int64_t deadline = g_get_monotonic_time() + POLL_US;

    while (stat_get(d, index) < val && g_get_monotonic_time() < deadline) {
        settle(d);
    }
    g_assert_cmpuint(stat_get(d, index), ==, val);
}

/*
 * Frames that arrive while the device is not enabled are dropped, not
 * kept for later; an enabled device receives with or without an RX ring.
 */
static void test_eth_disabled(const char *machine)
{
    static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    Rsim *d = rsim_start(machine, NULL, true);
    struct rsim_cmd_create_ethq c;
    struct rsim_eth_desc e;
    uint64_t rx = galloc(d, 4 * RSIM_ETH_DESC_SIZE);
    uint64_t buf = galloc(d, 2 * RSIM_ETH_MIN_RX_BUF);
    uint8_t f[64], g[64];
    TEq eq;

    rsim_reset(d);
    make_frame(f, 64, bcast, 1);
    sock_send_frame(d, f, 64);
    settle(d);
    rsim_enable(d, 8, 8, 8);
    aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    make_frame(f, 64, bcast, 2);
    sock_send_frame(d, f, 64);
    stat_wait(d, RSIM_STAT_RX_FRAMES, 1);
    g_assert_cmpuint(stat_get(d, RSIM_STAT_RX_ETH_NO_BUF), ==, 1);

    eq_create(d, &eq, 1, 8);
    ethq_cmd(&c, RSIM_ETHQ_RX, eq.eqn, rx, 4);
    cmd_expect(d, &c, RSIM_STS_OK);
    eth_desc_write(d, rx, 0, buf, RSIM_ETH_MIN_RX_BUF);
    eth_desc_write(d, rx, 1, buf + RSIM_ETH_MIN_RX_BUF, RSIM_ETH_MIN_RX_BUF);
    wr(d, A_RSIM_ETH_RX_DB, 2);
    settle(d);
    g_assert_cmphex(qtest_readw(d->qts, rx + 10), ==, 0);   /* flags */
    make_frame(f, 64, bcast, 3);
    sock_send_frame(d, f, 64);
    eth_desc_wait(d, rx, 0, &e);
    qtest_memread(d->qts, buf, g, 64);
    g_assert_cmpmem(g, 64, f, 64);
    g_assert_cmpuint(stat_get(d, RSIM_STAT_RX_FRAMES), ==, 2);

    /* the same after a reset: nothing queued across it */
    rsim_reset(d);
    make_frame(f, 64, bcast, 4);
    sock_send_frame(d, f, 64);
    settle(d);
    rsim_enable(d, 8, 8, 8);
    aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    eq_create(d, &eq, 1, 8);
    qtest_memset(d->qts, rx, 0, 4 * RSIM_ETH_DESC_SIZE);
    ethq_cmd(&c, RSIM_ETHQ_RX, eq.eqn, rx, 4);
    cmd_expect(d, &c, RSIM_STS_OK);
    eth_desc_write(d, rx, 0, buf, RSIM_ETH_MIN_RX_BUF);
    wr(d, A_RSIM_ETH_RX_DB, 1);
    settle(d);
    g_assert_cmphex(qtest_readw(d->qts, rx + 10), ==, 0);
    g_assert_cmpuint(stat_get(d, RSIM_STAT_RX_FRAMES), ==, 0);
    make_frame(f, 64, bcast, 5);
    sock_send_frame(d, f, 64);
    eth_desc_wait(d, rx, 0, &e);
    qtest_memread(d->qts, buf, g, 64);
    g_assert_cmpmem(g, 64, f, 64);
    assert_alive(d);
    rsim_stop(d);
}

static void test_cmd_pd(const char *machine)
{
    Rsim *d = rsim_up(machine, "max-pd=4");
    struct rsim_cmd_create_srq sc;
    struct rsim_cmd_create_ah ac;
    struct rsim_admin_cmd c;
    uint64_t errs;
    TRing srq, cq;
    uint32_t key, cqn;
    TEq eq;
    TQp qp;

    for (uint32_t i = 0; i < 4; i++) {
        g_assert_cmpuint(pd_alloc(d), ==, i);
    }
    /* a full table is not a guest error */
    errs = stat_get(d, RSIM_STAT_GUEST_ERRORS);
    CMD_INIT(c, RSIM_CMD_ALLOC_PD);
    cmd_expect(d, &c, RSIM_STS_NO_RESOURCES);
    g_assert_cmpuint(stat_get(d, RSIM_STAT_GUEST_ERRORS), ==, errs);
    handle_expect(d, RSIM_CMD_DEALLOC_PD, 1, RSIM_STS_OK);
    handle_expect(d, RSIM_CMD_DEALLOC_PD, 1, RSIM_STS_BAD_HANDLE);
    g_assert_cmpuint(pd_alloc(d), ==, 1);
    handle_expect(d, RSIM_CMD_DEALLOC_PD, 4, RSIM_STS_BAD_HANDLE);
    handle_expect(d, RSIM_CMD_DEALLOC_PD, 0xffffffff, RSIM_STS_BAD_HANDLE);
    {
        struct rsim_cmd_handle hc;

        CMD_INIT(hc, RSIM_CMD_DEALLOC_PD);
        hc.handle = cpu_to_le32(1);
        hc.reserved[0] = 1;
        cmd_expect(d, &hc, RSIM_STS_RESERVED);
    }

    /* in use by an MR, a QP, an SRQ, an AH: BUSY */
    gid_add_v4(d, 0, 1);
    key = mr_reg_l0(d, 0, ACC_LW, 0x200000, 100);
    eq_create(d, &eq, 1, 8);
    cqn = cq_create(d, &cq, eq.eqn, RSIM_PBL_LEVEL0, 3);
    qp_create(d, &qp, RSIM_QPT_RC, 1, cqn, RSIM_PBL_LEVEL0);
    tring_init(d, &srq, RSIM_PBL_LEVEL0, 3, 6);
    CMD_INIT(sc, RSIM_CMD_CREATE_SRQ);
    sc.pdn = cpu_to_le32(2);
    sc.q = srq.desc;
    sc.max_sge = 1;
    cmd_expect(d, &sc, RSIM_STS_OK);
    CMD_INIT(ac, RSIM_CMD_CREATE_AH);
    ac.pdn = cpu_to_le32(3);
    av_v4(&ac.av, 0);
    cmd_expect(d, &ac, RSIM_STS_OK);
    errs = stat_get(d, RSIM_STAT_GUEST_ERRORS);
    for (uint32_t i = 0; i < 4; i++) {
        handle_expect(d, RSIM_CMD_DEALLOC_PD, i, RSIM_STS_BUSY);
    }
    g_assert_cmpuint(stat_get(d, RSIM_STAT_GUEST_ERRORS), ==, errs);
    handle_expect(d, RSIM_CMD_DEREG_MR, key, RSIM_STS_OK);
    handle_expect(d, RSIM_CMD_DEALLOC_PD, 0, RSIM_STS_OK);
    handle_expect(d, RSIM_CMD_DESTROY_QP, qp.qpn, RSIM_STS_OK);
    handle_expect(d, RSIM_CMD_DEALLOC_PD, 1, RSIM_STS_OK);
    handle_expect(d, RSIM_CMD_DESTROY_SRQ, 0, RSIM_STS_OK);
    handle_expect(d, RSIM_CMD_DEALLOC_PD, 2, RSIM_STS_OK);
    handle_expect(d, RSIM_CMD_DESTROY_AH, 1, RSIM_STS_OK);
    handle_expect(d, RSIM_CMD_DEALLOC_PD, 3, RSIM_STS_OK);
    g_assert_cmpuint(pd_alloc(d), ==, 0);
    rsim_stop(d);
}

static void test_cmd_cq(const char *machine)
{
    Rsim *d = rsim_up(machine, "max-cq=4");
    struct rsim_cmd_create_cq c;
    struct rsim_cmd_arm_cq ac;
    TRing r[4], t;
    TEq eq;
    TQp qp;

    eq_create(d, &eq, 1, 8);
    /* the three page list levels; CQNs are the lowest free ones */
    g_assert_cmpuint(cq_create(d, &r[0], eq.eqn, RSIM_PBL_LEVEL0, 4), ==, 0);
    g_assert_cmpuint(cq_create(d, &r[1], eq.eqn, RSIM_PBL_LEVEL1, 7), ==, 1);
    g_assert_cmpuint(cq_create(d, &r[2], eq.eqn, RSIM_PBL_LEVEL2, 1), ==, 2);

    /* descriptor validation (one slot free) */
    tring_init(d, &t, RSIM_PBL_LEVEL0, 3, RSIM_CQE_LOG2_SLOT);
    cq_cmd(&c, eq.eqn + 1, &t);
    cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    cq_cmd(&c, eq.eqn, &t);
    c.db_page = cpu_to_le32(64);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    cq_cmd(&c, eq.eqn, &t);
    c.reserved[35] = 1;
    cmd_expect(d, &c, RSIM_STS_RESERVED);
    cq_cmd(&c, eq.eqn, &t);
    c.q.log2_elem_size = 5;                     /* 32 < 48 bytes */
    cmd_expect(d, &c, RSIM_STS_INVALID);
    c.q.log2_elem_size = 14;                    /* above 8 KiB */
    cmd_expect(d, &c, RSIM_STS_INVALID);
    cq_cmd(&c, eq.eqn, &t);
    c.q.log2_depth = 0;
    cmd_expect(d, &c, RSIM_STS_INVALID);
    c.q.log2_depth = 17;            /* 131072 > roundup_pow_of_two(65536) */
    cmd_expect(d, &c, RSIM_STS_LIMIT);
    c.q.log2_depth = 23;
    cmd_expect(d, &c, RSIM_STS_INVALID);
    c.q.log2_depth = 0xff;
    cmd_expect(d, &c, RSIM_STS_INVALID);
    cq_cmd(&c, eq.eqn, &t);
    c.q.addr = cpu_to_le64(t.base + 32);        /* level 0: 64-byte aligned */
    cmd_expect(d, &c, RSIM_STS_INVALID);
    cq_cmd(&c, eq.eqn, &t);
    c.q.page_shift = 12;                        /* level 0: no page list */
    cmd_expect(d, &c, RSIM_STS_INVALID);
    cq_cmd(&c, eq.eqn, &t);
    c.q.npages = cpu_to_le32(1);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    cq_cmd(&c, eq.eqn, &r[1]);                  /* needs 3 pages */
    c.q.npages = cpu_to_le32(2);
    cmd_expect(d, &c, RSIM_STS_RANGE);
    cq_cmd(&c, eq.eqn, &r[1]);
    c.q.page_shift = 13;
    cmd_expect(d, &c, RSIM_STS_INVALID);
    c.q.page_shift = 0;
    cmd_expect(d, &c, RSIM_STS_INVALID);
    cq_cmd(&c, eq.eqn, &r[1]);
    c.q.level = 3;
    cmd_expect(d, &c, RSIM_STS_INVALID);
    cq_cmd(&c, eq.eqn, &r[1]);
    c.q.addr = cpu_to_le64(UNMAPPED);           /* the list is read */
    cmd_expect(d, &c, RSIM_STS_DMA);
    cq_cmd(&c, eq.eqn, &r[1]);
    c.q.addr = cpu_to_le64(le64_to_cpu(r[1].desc.addr) + 4);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    {
        /* a misaligned page entry; a level 2 root with no leaf */
        uint64_t pages[2] = { t.base | 0x40, t.base };
        uint64_t root = galloc(d, 8);

        cq_cmd(&c, eq.eqn, &t);
        c.q.level = RSIM_PBL_LEVEL1;
        c.q.page_shift = 12;
        c.q.npages = cpu_to_le32(2);
        c.q.addr = cpu_to_le64(pbl_build(d, RSIM_PBL_LEVEL1, pages, 2));
        cmd_expect(d, &c, RSIM_STS_DMA);
        c.q.level = RSIM_PBL_LEVEL2;
        c.q.addr = cpu_to_le64(root);
        cmd_expect(d, &c, RSIM_STS_DMA);
    }
    /* the largest depth is accepted (level 0 memory is not read) */
    cq_cmd(&c, eq.eqn, &t);
    c.q.log2_depth = 16;
    c.db_page = cpu_to_le32(63);
    cmd_expect(d, &c, RSIM_STS_OK);
    /* table full */
    cq_cmd(&c, eq.eqn, &t);
    cmd_expect(d, &c, RSIM_STS_NO_RESOURCES);
    handle_expect(d, RSIM_CMD_DESTROY_CQ, 1, RSIM_STS_OK);
    g_assert_cmpuint(cq_create(d, &r[1], eq.eqn, RSIM_PBL_LEVEL1, 3), ==, 1);

    /* DESTROY_CQ */
    handle_expect(d, RSIM_CMD_DESTROY_CQ, 4, RSIM_STS_BAD_HANDLE);
    handle_expect(d, RSIM_CMD_DESTROY_CQ, 0x80000000, RSIM_STS_BAD_HANDLE);
    qp_create(d, &qp, RSIM_QPT_UD, pd_alloc(d), 2, RSIM_PBL_LEVEL0);
    handle_expect(d, RSIM_CMD_DESTROY_CQ, 2, RSIM_STS_BUSY);
    handle_expect(d, RSIM_CMD_DESTROY_QP, qp.qpn, RSIM_STS_OK);
    handle_expect(d, RSIM_CMD_DESTROY_CQ, 2, RSIM_STS_OK);
    handle_expect(d, RSIM_CMD_DESTROY_CQ, 2, RSIM_STS_BAD_HANDLE);

    /* ARM_CQ */
    CMD_INIT(ac, RSIM_CMD_ARM_CQ);
    ac.cqn = cpu_to_le32(0);
    ac.arm = cpu_to_le32(RSIM_CQ_ARM_NEXT);
    cmd_expect(d, &ac, RSIM_STS_OK);
    ac.arm = cpu_to_le32(RSIM_CQ_ARM_SOLICITED);
    cmd_expect(d, &ac, RSIM_STS_OK);
    ac.arm = cpu_to_le32(RSIM_CQ_ARM_NONE);
    cmd_expect(d, &ac, RSIM_STS_INVALID);
    ac.arm = cpu_to_le32(3);
    cmd_expect(d, &ac, RSIM_STS_INVALID);
    ac.arm = cpu_to_le32(RSIM_CQ_ARM_NEXT);
    ac.cqn = cpu_to_le32(2);
    cmd_expect(d, &ac, RSIM_STS_BAD_HANDLE);
    ac.cqn = 0;
    ac.reserved[51] = 1;
    cmd_expect(d, &ac, RSIM_STS_RESERVED);
    rsim_stop(d);
}

/* Flush n send WQEs of env's QP into its CQ (QP ends up in ERR) */
static void flush_sends(Rsim *d, TEnv *env, unsigned n, uint64_t first_id)
{
    for (unsigned i = 0; i < n; i++) {
        post_send(d, &env->qp.sq, first_id + i, RSIM_WR_SEND);
    }
    if (qp_state(d, env->qp.qpn) != RSIM_QPS_ERR) {
        qp_move(d, env->qp.qpn, RSIM_QPS_ERR);
    } else {
        sq_doorbell(d, 0, env->qp.qpn);
    }
}

static void test_cmd_cq_resize(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_cmd_resize_cq c;
    TRing small, tiny, big;
    TEnv env;
    struct rsim_cqe e;

    env_setup(d, &env, RSIM_PBL_LEVEL1, 3);         /* holds 7 */
    flush_sends(d, &env, 5, 0x100);
    settle(d);
    g_assert_cmpuint(ring_prod(d, &env.cq), ==, 5);
    /* consume two */
    cq_expect_flush(d, &env.cq, 0x100, RSIM_WC_SEND, env.qp.qpn);
    cq_expect_flush(d, &env.cq, 0x101, RSIM_WC_SEND, env.qp.qpn);

    /* three pending do not fit a ring that holds one */
    tring_init(d, &tiny, RSIM_PBL_LEVEL0, 1, RSIM_CQE_LOG2_SLOT);
    CMD_INIT(c, RSIM_CMD_RESIZE_CQ);
    c.cqn = cpu_to_le32(env.cqn);
    c.q = tiny.desc;
    cmd_expect(d, &c, RSIM_STS_BUSY);
    g_assert_cmpuint(ring_prod(d, &tiny), ==, 0);
    g_assert_cmpuint(ring_prod(d, &env.cq), ==, 5);

    /* errors */
    c.cqn = cpu_to_le32(env.cqn + 1);
    cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    c.cqn = cpu_to_le32(env.cqn);
    c.q.log2_elem_size = 5;
    cmd_expect(d, &c, RSIM_STS_INVALID);
    c.q = tiny.desc;
    c.q.log2_depth = 17;
    cmd_expect(d, &c, RSIM_STS_LIMIT);
    c.q = tiny.desc;
    c.reserved[39] = 1;
    cmd_expect(d, &c, RSIM_STS_RESERVED);

    /* move to a level 2 ring that holds exactly three */
    tring_init(d, &small, RSIM_PBL_LEVEL2, 2, RSIM_CQE_LOG2_SLOT);
    CMD_INIT(c, RSIM_CMD_RESIZE_CQ);
    c.cqn = cpu_to_le32(env.cqn);
    c.q = small.desc;
    cmd_expect(d, &c, RSIM_STS_OK);
    g_assert_cmpuint(ring_prod(d, &small), ==, 3);
    g_assert_cmpuint(ring_cons(d, &small), ==, 0);
    for (unsigned i = 0; i < 3; i++) {
        elem_read(d, &small, i, &e, sizeof(e));
        cqe_check(&e, 0x102 + i, RSIM_WC_WR_FLUSH_ERR, RSIM_WC_SEND,
                  env.qp.qpn);
    }
    /* the new ring is in use: full now, so a new completion waits */
    flush_sends(d, &env, 1, 0x105);
    aeq_expect(d, RSIM_EV_CQ_ERR, env.cqn);
    g_assert_cmpuint(ring_prod(d, &small), ==, 3);
    cq_expect_flush(d, &small, 0x102, RSIM_WC_SEND, env.qp.qpn);
    sq_doorbell(d, 0, env.qp.qpn);
    cq_expect_flush(d, &small, 0x103, RSIM_WC_SEND, env.qp.qpn);
    cq_expect_flush(d, &small, 0x104, RSIM_WC_SEND, env.qp.qpn);
    cq_expect_flush(d, &small, 0x105, RSIM_WC_SEND, env.qp.qpn);
    g_assert_cmpuint(ring_prod(d, &small), ==, 0);  /* wrapped */
    cq_expect_empty(d, &small);
    /* the old ring is no longer written */
    g_assert_cmpuint(ring_prod(d, &env.cq), ==, 5);

    /* an empty CQ moves to a big ring */
    tring_init(d, &big, RSIM_PBL_LEVEL0, 8, RSIM_CQE_LOG2_SLOT);
    c.q = big.desc;
    cmd_expect(d, &c, RSIM_STS_OK);
    g_assert_cmpuint(ring_prod(d, &big), ==, 0);
    flush_sends(d, &env, 2, 0x106);
    cq_expect_flush(d, &big, 0x106, RSIM_WC_SEND, env.qp.qpn);
    cq_expect_flush(d, &big, 0x107, RSIM_WC_SEND, env.qp.qpn);
    aeq_expect_none(d);
    rsim_stop(d);
}

static void srq_cmd(struct rsim_cmd_create_srq *c, uint32_t pdn,
                    const TRing *r, uint8_t max_sge, uint32_t limit)
{
    CMD_INIT(*c, RSIM_CMD_CREATE_SRQ);
    c->pdn = cpu_to_le32(pdn);
    c->q = r->desc;
    c->max_sge = max_sge;
    c->limit = cpu_to_le32(limit);
}

static void srq_query_expect(Rsim *d, uint32_t srqn, uint32_t max_wr,
                             uint32_t max_sge, uint32_t limit)
{
    struct rsim_query_srq_resp r;
    struct rsim_cmd_handle c;

    CMD_INIT(c, RSIM_CMD_QUERY_SRQ);
    c.handle = cpu_to_le32(srqn);
    assert_sts(cmd_exec(d, &c, &r), RSIM_STS_OK);
    g_assert_cmpuint(le32_to_cpu(r.max_wr), ==, max_wr);
    g_assert_cmpuint(le32_to_cpu(r.max_sge), ==, max_sge);
    g_assert_cmpuint(le32_to_cpu(r.limit), ==, limit);
    for (size_t i = 0; i < ARRAY_SIZE(r.reserved); i++) {
        g_assert_cmphex(r.reserved[i], ==, 0);
    }
}

static void test_cmd_srq(const char *machine)
{
    Rsim *d = rsim_up(machine, "max-srq=2");
    struct rsim_cmd_create_srq c;
    struct rsim_cmd_modify_srq m;
    struct rsim_cmd_create_qp qc;
    struct rsim_create_resp res;
    TRing s0, s1, t, big, tiny;
    struct rsim_recv_wqe w;
    TEnv env;
    TQp qp;

    env_setup(d, &env, RSIM_PBL_LEVEL0, 5);
    /* level 1, 8 entries of 2 SGEs; level 2 */
    tring_init(d, &s0, RSIM_PBL_LEVEL1, 3, 7);
    srq_cmd(&c, env.pdn, &s0, 2, 3);
    assert_sts(cmd_exec(d, &c, &res), RSIM_STS_OK);
    g_assert_cmpuint(resp_handle(&res), ==, 0);
    srq_query_expect(d, 0, 7, 2, 3);
    tring_init(d, &s1, RSIM_PBL_LEVEL2, 4, 6);
    srq_cmd(&c, env.pdn, &s1, 1, 0);
    assert_sts(cmd_exec(d, &c, &res), RSIM_STS_OK);
    g_assert_cmpuint(resp_handle(&res), ==, 1);
    srq_query_expect(d, 1, 15, 1, 0);
    srq_cmd(&c, env.pdn, &s1, 1, 0);
    cmd_expect(d, &c, RSIM_STS_NO_RESOURCES);
    handle_expect(d, RSIM_CMD_DESTROY_SRQ, 1, RSIM_STS_OK);

    /* validation */
    tring_init(d, &t, RSIM_PBL_LEVEL0, 3, 6);
    srq_cmd(&c, env.pdn + 1, &t, 1, 0);
    cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    srq_cmd(&c, env.pdn, &t, 17, 0);
    cmd_expect(d, &c, RSIM_STS_LIMIT);
    srq_cmd(&c, env.pdn, &t, 0, 0);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    srq_cmd(&c, env.pdn, &t, 2, 0);             /* 64 < 40 + 32 */
    cmd_expect(d, &c, RSIM_STS_INVALID);
    srq_cmd(&c, env.pdn, &t, 1, 8);             /* limit < depth */
    cmd_expect(d, &c, RSIM_STS_INVALID);
    srq_cmd(&c, env.pdn, &t, 1, 0);
    c.q.log2_depth = 16;
    cmd_expect(d, &c, RSIM_STS_LIMIT);
    srq_cmd(&c, env.pdn, &t, 1, 0);
    c.q.addr = cpu_to_le64(t.base + 8);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    srq_cmd(&c, env.pdn, &t, 1, 0);
    c.db_page = cpu_to_le16(64);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    srq_cmd(&c, env.pdn, &t, 1, 0);
    c.reserved0 = 1;
    cmd_expect(d, &c, RSIM_STS_RESERVED);
    srq_cmd(&c, env.pdn, &t, 1, 0);
    c.reserved[31] = 1;
    cmd_expect(d, &c, RSIM_STS_RESERVED);
    srq_cmd(&c, env.pdn, &t, 1, 7);
    c.db_page = cpu_to_le16(63);
    cmd_expect(d, &c, RSIM_STS_OK);
    handle_expect(d, RSIM_CMD_DESTROY_SRQ, 1, RSIM_STS_OK);

    /* MODIFY_SRQ limit */
    CMD_INIT(m, RSIM_CMD_MODIFY_SRQ);
    m.srqn = 0;
    m.mask = cpu_to_le32(RSIM_SRQ_LIMIT);
    m.limit = cpu_to_le32(5);
    cmd_expect(d, &m, RSIM_STS_OK);
    srq_query_expect(d, 0, 7, 2, 5);
    m.limit = cpu_to_le32(8);
    cmd_expect(d, &m, RSIM_STS_INVALID);
    m.limit = 0;
    cmd_expect(d, &m, RSIM_STS_OK);
    srq_query_expect(d, 0, 7, 2, 0);
    m.mask = cpu_to_le32(4);
    cmd_expect(d, &m, RSIM_STS_INVALID);
    m.mask = cpu_to_le32(RSIM_SRQ_LIMIT);
    m.srqn = cpu_to_le32(1);
    cmd_expect(d, &m, RSIM_STS_BAD_HANDLE);
    m.srqn = 0;
    m.q.log2_depth = 3;                 /* no MAX_WR: must be 0 */
    cmd_expect(d, &m, RSIM_STS_RESERVED);
    m.q.log2_depth = 0;
    m.reserved[31] = 1;
    cmd_expect(d, &m, RSIM_STS_RESERVED);
    srq_query_expect(d, 0, 7, 2, 0);

    /* MODIFY_SRQ MAX_WR moves the posted receives */
    for (unsigned i = 0; i < 3; i++) {
        post_recv(d, &s0, 0x500 + i);
    }
    tring_init(d, &tiny, RSIM_PBL_LEVEL0, 1, 7);
    CMD_INIT(m, RSIM_CMD_MODIFY_SRQ);
    m.mask = cpu_to_le32(RSIM_SRQ_MAX_WR);
    m.q = tiny.desc;
    cmd_expect(d, &m, RSIM_STS_BUSY);
    srq_query_expect(d, 0, 7, 2, 0);
    m.q.log2_elem_size = 6;                 /* too small for 2 SGEs */
    cmd_expect(d, &m, RSIM_STS_INVALID);
    tring_init(d, &big, RSIM_PBL_LEVEL1, 5, 7);
    m.q = big.desc;
    m.mask = cpu_to_le32(RSIM_SRQ_MAX_WR | RSIM_SRQ_LIMIT);
    m.limit = cpu_to_le32(32);              /* checked against the new depth */
    cmd_expect(d, &m, RSIM_STS_INVALID);
    srq_query_expect(d, 0, 7, 2, 0);
    m.limit = cpu_to_le32(20);
    cmd_expect(d, &m, RSIM_STS_OK);
    srq_query_expect(d, 0, 31, 2, 20);
    g_assert_cmpuint(ring_prod(d, &big), ==, 3);
    g_assert_cmpuint(ring_cons(d, &big), ==, 0);
    for (unsigned i = 0; i < 3; i++) {
        elem_read(d, &big, i, &w, sizeof(w));
        g_assert_cmphex(le64_to_cpu(w.wr_id), ==, 0x500 + i);
    }
    handle_expect(d, RSIM_CMD_QUERY_SRQ, 1, RSIM_STS_BAD_HANDLE);

    /* a QP on the SRQ: the RQ descriptor must be 0 */
    qp_rings(d, &qp, RSIM_PBL_LEVEL0);
    qp_cmd(&qc, RSIM_QPT_RC, env.pdn, env.cqn, env.cqn, &qp);
    qc.srqn = 0;
    cmd_expect(d, &qc, RSIM_STS_RESERVED);
    qc.srqn = cpu_to_le32(1);
    memset(&qc.rq, 0, sizeof(qc.rq));
    cmd_expect(d, &qc, RSIM_STS_BAD_HANDLE);
    qc.srqn = 0;
    qp.qpn = qp_create_cmd(d, &qc);
    {
        struct rsim_qp_attr a;

        qp_query(d, qp.qpn, &a);
        g_assert_cmpuint(le32_to_cpu(a.max_recv_wr), ==, 0);
    }
    handle_expect(d, RSIM_CMD_DESTROY_SRQ, 0, RSIM_STS_BUSY);
    handle_expect(d, RSIM_CMD_DEALLOC_PD, env.pdn, RSIM_STS_BUSY);
    /* ERR: QP_LAST_WQE; the SRQ's receives are not flushed */
    qp_rc_to_init(d, qp.qpn);
    post_send(d, &qp.sq, 0x600, RSIM_WR_SEND);
    qp_move(d, qp.qpn, RSIM_QPS_ERR);
    aeq_expect(d, RSIM_EV_QP_LAST_WQE, qp.qpn);
    cq_expect_flush(d, &env.cq, 0x600, RSIM_WC_SEND, qp.qpn);
    cq_expect_empty(d, &env.cq);
    g_assert_cmpuint(ring_cons(d, &big), ==, 0);
    handle_expect(d, RSIM_CMD_DESTROY_QP, qp.qpn, RSIM_STS_OK);
    handle_expect(d, RSIM_CMD_DESTROY_SRQ, 0, RSIM_STS_OK);
    handle_expect(d, RSIM_CMD_DESTROY_SRQ, 0, RSIM_STS_BAD_HANDLE);
    {
        struct rsim_cmd_handle hc;

        CMD_INIT(hc, RSIM_CMD_QUERY_SRQ);
        hc.reserved[1] = 1;
        cmd_expect(d, &hc, RSIM_STS_RESERVED);
    }
    rsim_stop(d);
}

static void ah_cmd(struct rsim_cmd_create_ah *c, uint32_t pdn)
{
    CMD_INIT(*c, RSIM_CMD_CREATE_AH);
    c->pdn = cpu_to_le32(pdn);
    av_v4(&c->av, 0);
}

static void test_cmd_ah(const char *machine)
{
    Rsim *d = rsim_up(machine, "max-ah=3");
    struct rsim_cmd_create_ah c;
    struct rsim_create_resp r;
    struct rsim_cmd_gid gc;
    uint8_t gid[16];
    uint32_t pdn = pd_alloc(d);

    /* the source GID must exist */
    ah_cmd(&c, pdn);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    gid_add_v4(d, 0, 1);
    gid_v6(gid, 1);
    gid_cmd(&gc, RSIM_CMD_ADD_GID, 1, gid);
    cmd_expect(d, &gc, RSIM_STS_OK);

    /* numbers start at 1 */
    ah_cmd(&c, pdn);
    assert_sts(cmd_exec(d, &c, &r), RSIM_STS_OK);
    g_assert_cmpuint(resp_handle(&r), ==, 1);
    ah_cmd(&c, pdn);
    c.av.sgid_index = 1;
    c.av.network_type = RSIM_NET_IPV6;
    gid_v6(c.av.dgid, 2);
    c.av.flow_label = cpu_to_le32(0xfffff);
    assert_sts(cmd_exec(d, &c, &r), RSIM_STS_OK);
    g_assert_cmpuint(resp_handle(&r), ==, 2);
    ah_cmd(&c, pdn);
    cmd_expect(d, &c, RSIM_STS_NO_RESOURCES);
    handle_expect(d, RSIM_CMD_DESTROY_AH, 1, RSIM_STS_OK);

    /* validation */
    ah_cmd(&c, pdn + 1);
    cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    ah_cmd(&c, pdn);
    gid_v6(c.av.dgid, 2);                   /* IPv4 type, IPv6 GID */
    cmd_expect(d, &c, RSIM_STS_INVALID);
    ah_cmd(&c, pdn);
    c.av.network_type = RSIM_NET_IPV6;      /* IPv6 type, IPv4 GIDs */
    cmd_expect(d, &c, RSIM_STS_INVALID);
    ah_cmd(&c, pdn);
    c.av.sgid_index = 1;                    /* IPv4 type, IPv6 source */
    cmd_expect(d, &c, RSIM_STS_INVALID);
    ah_cmd(&c, pdn);
    c.av.network_type = 0;
    cmd_expect(d, &c, RSIM_STS_INVALID);
    c.av.network_type = 3;
    cmd_expect(d, &c, RSIM_STS_INVALID);
    ah_cmd(&c, pdn);
    c.av.flow_label = cpu_to_le32(1u << 20);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    ah_cmd(&c, pdn);
    c.av.sgid_index = 2;                    /* empty */
    cmd_expect(d, &c, RSIM_STS_INVALID);
    c.av.sgid_index = 255;                  /* beyond the table */
    cmd_expect(d, &c, RSIM_STS_INVALID);
    ah_cmd(&c, pdn);
    c.av.reserved = 1;
    cmd_expect(d, &c, RSIM_STS_RESERVED);
    ah_cmd(&c, pdn);
    c.reserved[23] = 1;
    cmd_expect(d, &c, RSIM_STS_RESERVED);
    ah_cmd(&c, pdn);
    assert_sts(cmd_exec(d, &c, &r), RSIM_STS_OK);
    g_assert_cmpuint(resp_handle(&r), ==, 1);

    handle_expect(d, RSIM_CMD_DESTROY_AH, 0, RSIM_STS_BAD_HANDLE);
    handle_expect(d, RSIM_CMD_DESTROY_AH, 3, RSIM_STS_BAD_HANDLE);
    handle_expect(d, RSIM_CMD_DESTROY_AH, 0xffffffff, RSIM_STS_BAD_HANDLE);
    handle_expect(d, RSIM_CMD_DESTROY_AH, 2, RSIM_STS_OK);
    handle_expect(d, RSIM_CMD_DESTROY_AH, 2, RSIM_STS_BAD_HANDLE);
    rsim_stop(d);
}

static void test_cmd_gid(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_cmd_gid c;
    uint8_t gid[16], zero[16] = { 0 };

    gid_v4(gid, 192, 168, 1, 1);
    gid_cmd(&c, RSIM_CMD_ADD_GID, 0, gid);
    cmd_expect(d, &c, RSIM_STS_OK);
    cmd_expect(d, &c, RSIM_STS_EXISTS);
    gid_cmd(&c, RSIM_CMD_ADD_GID, 15, gid);     /* same GID twice: ok */
    cmd_expect(d, &c, RSIM_STS_OK);
    gid_cmd(&c, RSIM_CMD_ADD_GID, 16, gid);
    cmd_expect(d, &c, RSIM_STS_LIMIT);
    gid_cmd(&c, RSIM_CMD_ADD_GID, 0xffffffff, gid);
    cmd_expect(d, &c, RSIM_STS_LIMIT);
    gid_cmd(&c, RSIM_CMD_ADD_GID, 1, gid);
    c.type = 1;                                 /* RoCEv1 */
    cmd_expect(d, &c, RSIM_STS_UNSUPPORTED);
    c.type = 0;
    cmd_expect(d, &c, RSIM_STS_UNSUPPORTED);
    gid_cmd(&c, RSIM_CMD_ADD_GID, 1, zero);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    gid_cmd(&c, RSIM_CMD_ADD_GID, 1, gid);
    c.reserved[38] = 1;
    cmd_expect(d, &c, RSIM_STS_RESERVED);

    gid_cmd(&c, RSIM_CMD_DEL_GID, 1, NULL);
    cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    gid_cmd(&c, RSIM_CMD_DEL_GID, 16, NULL);
    cmd_expect(d, &c, RSIM_STS_LIMIT);
    gid_cmd(&c, RSIM_CMD_DEL_GID, 0, gid);      /* index only */
    cmd_expect(d, &c, RSIM_STS_RESERVED);
    gid_cmd(&c, RSIM_CMD_DEL_GID, 0, NULL);
    c.type = RSIM_GID_TYPE_ROCE_V2;
    cmd_expect(d, &c, RSIM_STS_RESERVED);
    gid_cmd(&c, RSIM_CMD_DEL_GID, 0, NULL);
    cmd_expect(d, &c, RSIM_STS_OK);
    cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    gid_cmd(&c, RSIM_CMD_DEL_GID, 15, NULL);
    cmd_expect(d, &c, RSIM_STS_OK);
    /* the slot is free again */
    gid_cmd(&c, RSIM_CMD_ADD_GID, 0, gid);
    cmd_expect(d, &c, RSIM_STS_OK);
    rsim_stop(d);
}

/*
 * ========================================================================
 * Queue pairs
 * ========================================================================
 */

static void test_qp_create(const char *machine)
{
    Rsim *d = rsim_up(machine, "max-qp=6");
    struct rsim_cmd_create_qp c;
    TEnv env;
    TQp q, t;
    uint32_t pdn, cqn;

    env_setup(d, &env, RSIM_PBL_LEVEL0, 4);         /* QPN 2 */
    pdn = env.pdn;
    cqn = env.cqn;
    g_assert_cmpuint(env.qp.qpn, ==, 2);
    /* round robin: a destroyed number is not reused at once */
    handle_expect(d, RSIM_CMD_DESTROY_QP, 2, RSIM_STS_OK);
    g_assert_cmpuint(qp_create(d, &q, RSIM_QPT_RC, pdn, cqn,
                               RSIM_PBL_LEVEL1), ==, 3);
    g_assert_cmpuint(qp_create(d, &q, RSIM_QPT_UC, pdn, cqn,
                               RSIM_PBL_LEVEL2), ==, 4);
    g_assert_cmpuint(qp_create(d, &q, RSIM_QPT_UD, pdn, cqn,
                               RSIM_PBL_LEVEL0), ==, 5);
    g_assert_cmpuint(qp_create(d, &q, RSIM_QPT_RC, pdn, cqn,
                               RSIM_PBL_LEVEL0), ==, 2);
    qp_rings(d, &t, RSIM_PBL_LEVEL0);
    qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    cmd_expect(d, &c, RSIM_STS_NO_RESOURCES);
    /* GSI is always QPN 1, and there is only one */
    qp_cmd(&c, RSIM_QPT_GSI, pdn, cqn, cqn, &t);
    g_assert_cmpuint(qp_create_cmd(d, &c), ==, RSIM_GSI_QPN);
    cmd_expect(d, &c, RSIM_STS_EXISTS);
    handle_expect(d, RSIM_CMD_DESTROY_QP, 1, RSIM_STS_OK);
    g_assert_cmpuint(qp_create_cmd(d, &c), ==, RSIM_GSI_QPN);

    handle_expect(d, RSIM_CMD_DESTROY_QP, 0, RSIM_STS_BAD_HANDLE);
    handle_expect(d, RSIM_CMD_DESTROY_QP, 6, RSIM_STS_BAD_HANDLE);
    handle_expect(d, RSIM_CMD_DESTROY_QP, 0xffffffff, RSIM_STS_BAD_HANDLE);
    handle_expect(d, RSIM_CMD_DESTROY_QP, 3, RSIM_STS_OK);
    handle_expect(d, RSIM_CMD_DESTROY_QP, 3, RSIM_STS_BAD_HANDLE);

    /* validation, with one QPN free */
    qp_cmd(&c, 0, pdn, cqn, cqn, &t);
    cmd_expect(d, &c, RSIM_STS_UNSUPPORTED);
    c.qp_type = 5;
    cmd_expect(d, &c, RSIM_STS_UNSUPPORTED);
    c.qp_type = 0xff;
    cmd_expect(d, &c, RSIM_STS_UNSUPPORTED);
    qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.flags = 2;
    cmd_expect(d, &c, RSIM_STS_RESERVED);
    c.flags = 0x80;
    cmd_expect(d, &c, RSIM_STS_RESERVED);
    qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.reserved = cpu_to_le32(1);
    cmd_expect(d, &c, RSIM_STS_RESERVED);
    qp_cmd(&c, RSIM_QPT_RC, pdn + 1, cqn, cqn, &t);
    cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    qp_cmd(&c, RSIM_QPT_RC, pdn, cqn + 1, cqn, &t);
    cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, 0xffffffff, &t);
    cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.srqn = 0;                                 /* no SRQ 0 */
    memset(&c.rq, 0, sizeof(c.rq));
    cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
    qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.max_send_sge = 17;
    cmd_expect(d, &c, RSIM_STS_LIMIT);
    qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.max_recv_sge = 17;
    cmd_expect(d, &c, RSIM_STS_LIMIT);
    qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.max_inline = cpu_to_le16(513);
    cmd_expect(d, &c, RSIM_STS_LIMIT);
    qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.db_page = cpu_to_le16(64);
    cmd_expect(d, &c, RSIM_STS_INVALID);
    /* send elements: 208 + max(16 x SGEs, inline) bytes */
    qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.max_send_sge = 4;                         /* 272 > 256 */
    cmd_expect(d, &c, RSIM_STS_INVALID);
    c.max_send_sge = 3;                         /* 256 */
    c.max_inline = cpu_to_le16(49);             /* 257 > 256 */
    cmd_expect(d, &c, RSIM_STS_INVALID);
    /* receive elements: 40 + 16 x SGEs bytes */
    qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.max_recv_sge = 2;                         /* 72 > 64 */
    cmd_expect(d, &c, RSIM_STS_INVALID);
    qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.sq.log2_elem_size = 14;                   /* above 8 KiB */
    cmd_expect(d, &c, RSIM_STS_INVALID);
    qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.sq.log2_depth = 16;                       /* above 32768 */
    cmd_expect(d, &c, RSIM_STS_LIMIT);
    qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.rq.log2_depth = 0;
    cmd_expect(d, &c, RSIM_STS_INVALID);
    qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &t);
    c.sq.addr = cpu_to_le64(t.sq.base + 16);    /* misaligned level 0 */
    cmd_expect(d, &c, RSIM_STS_INVALID);
    {
        TQp l1;

        qp_rings(d, &l1, RSIM_PBL_LEVEL1);
        tring_init(d, &l1.sq, RSIM_PBL_LEVEL1, 5, 8);   /* 3 pages */
        qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &l1);
        c.sq.npages = cpu_to_le32(2);
        cmd_expect(d, &c, RSIM_STS_RANGE);
        qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &l1);
        c.rq.addr = cpu_to_le64(UNMAPPED);
        cmd_expect(d, &c, RSIM_STS_DMA);
        /* all at the limits: 16 SGEs in 512 bytes, 32768 entries */
        qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &l1);
        c.sq.log2_depth = 15;
        c.sq.level = 0;
        c.sq.page_shift = 0;
        c.sq.npages = 0;
        c.sq.addr = cpu_to_le64(t.sq.base);
        c.sq.log2_elem_size = 9;
        c.max_send_sge = 16;
        c.max_inline = cpu_to_le16(304);
        c.db_page = cpu_to_le16(63);
        c.flags = RSIM_QP_FLAG_SQ_SIG_ALL;
        g_assert_cmpuint(qp_create_cmd(d, &c), ==, 3);
    }
    /* the table is full again */
    qp_cmd(&c, RSIM_QPT_UD, pdn, cqn, cqn, &t);
    cmd_expect(d, &c, RSIM_STS_NO_RESOURCES);
    /* a refused create leaves the CQ and PD unreferenced */
    for (uint32_t qpn = 1; qpn < 6; qpn++) {
        handle_expect(d, RSIM_CMD_DESTROY_QP, qpn, RSIM_STS_OK);
    }
    handle_expect(d, RSIM_CMD_DESTROY_CQ, cqn, RSIM_STS_OK);
    handle_expect(d, RSIM_CMD_DEALLOC_PD, pdn, RSIM_STS_OK);
    rsim_stop(d);
}

static void av_expect(const struct rsim_av *got, const struct rsim_av *want)
{
    g_assert_cmpmem(got, sizeof(*got), want, sizeof(*want));
}

/* Every attribute set by MODIFY_QP comes back from QUERY_QP. */
static void test_qp_query(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_cmd_create_qp c;
    struct rsim_qp_attr a, q;
    struct rsim_av av;
    uint32_t qpn;
    TEnv env;
    TQp qp;

    env_setup(d, &env, RSIM_PBL_LEVEL0, 4);
    gid_add_v4(d, 0, 1);
    tring_init(d, &qp.sq, RSIM_PBL_LEVEL1, 4, 8);
    tring_init(d, &qp.rq, RSIM_PBL_LEVEL0, 5, 7);
    qp_cmd(&c, RSIM_QPT_RC, env.pdn, env.cqn, env.cqn, &qp);
    c.max_send_sge = 2;
    c.max_recv_sge = 3;
    c.max_inline = cpu_to_le16(48);
    qpn = qp_create_cmd(d, &c);

    /* RESET: caps, no attributes */
    qp_query(d, qpn, &q);
    g_assert_cmpuint(q.qp_state, ==, RSIM_QPS_RESET);
    g_assert_cmpuint(q.cur_qp_state, ==, RSIM_QPS_RESET);
    g_assert_cmpuint(q.qp_type, ==, RSIM_QPT_RC);
    g_assert_cmpuint(le32_to_cpu(q.max_send_wr), ==, 15);
    g_assert_cmpuint(le32_to_cpu(q.max_recv_wr), ==, 31);
    g_assert_cmpuint(le32_to_cpu(q.max_send_sge), ==, 2);
    g_assert_cmpuint(le32_to_cpu(q.max_recv_sge), ==, 3);
    g_assert_cmpuint(le32_to_cpu(q.max_inline_data), ==, 48);
    g_assert_cmpuint(q.sq_draining, ==, 0);

    attr_rc_init(&a);
    qp_modify_ok(d, qpn, &a);
    qp_query(d, qpn, &q);
    g_assert_cmpuint(q.port_num, ==, 1);
    g_assert_cmpuint(le16_to_cpu(q.pkey_index), ==, 0);
    g_assert_cmphex(le32_to_cpu(q.qp_access_flags), ==, ACC_ALL);

    attr_init(&a, RSIM_QPS_INIT, RSIM_QP_ACCESS_FLAGS);
    a.qp_access_flags = cpu_to_le32(ACC_LW | ACC_RR);
    qp_modify_ok(d, qpn, &a);
    qp_query(d, qpn, &q);
    g_assert_cmphex(le32_to_cpu(q.qp_access_flags), ==, ACC_LW | ACC_RR);

    attr_rc_rtr(&a);
    a.av.traffic_class = 0x28;
    a.av.sl = 3;
    a.av.hop_limit = 17;
    a.av.flow_label = cpu_to_le32(0xabcde);
    a.path_mtu = RSIM_MTU_4096;
    a.dest_qp_num = cpu_to_le32(0xffffff);
    a.rq_psn = cpu_to_le32(0xfffffe);
    a.max_dest_rd_atomic = 16;
    a.min_rnr_timer = 31;
    qp_modify_ok(d, qpn, &a);
    qp_query(d, qpn, &q);
    av_expect(&q.av, &a.av);
    av = a.av;
    g_assert_cmpuint(q.path_mtu, ==, RSIM_MTU_4096);
    g_assert_cmphex(le32_to_cpu(q.dest_qp_num), ==, 0xffffff);
    g_assert_cmphex(le32_to_cpu(q.rq_psn), ==, 0xfffffe);
    g_assert_cmpuint(q.max_dest_rd_atomic, ==, 16);
    g_assert_cmpuint(q.min_rnr_timer, ==, 31);
    g_assert_cmphex(le32_to_cpu(q.qp_access_flags), ==, ACC_LW | ACC_RR);

    attr_rc_rts(&a);
    attr_set_mask(&a, attr_mask(&a) | RSIM_QP_CUR_STATE |
                  RSIM_QP_MIN_RNR_TIMER | RSIM_QP_PATH_MIG_STATE |
                  RSIM_QP_ACCESS_FLAGS);
    a.cur_qp_state = RSIM_QPS_RTR;
    a.timeout = 31;
    a.retry_cnt = 7;
    a.rnr_retry = 6;
    a.sq_psn = cpu_to_le32(0xffffff);
    a.max_rd_atomic = 16;
    a.min_rnr_timer = 20;
    a.path_mig_state = 0;
    a.qp_access_flags = cpu_to_le32(ACC_LW | ACC_RW);
    qp_modify_ok(d, qpn, &a);
    qp_query(d, qpn, &q);
    g_assert_cmpuint(q.timeout, ==, 31);
    g_assert_cmpuint(q.retry_cnt, ==, 7);
    g_assert_cmpuint(q.rnr_retry, ==, 6);
    g_assert_cmphex(le32_to_cpu(q.sq_psn), ==, 0xffffff);
    g_assert_cmpuint(q.max_rd_atomic, ==, 16);
    g_assert_cmpuint(q.min_rnr_timer, ==, 20);
    g_assert_cmpuint(q.path_mig_state, ==, 0);
    g_assert_cmphex(le32_to_cpu(q.qp_access_flags), ==, ACC_LW | ACC_RW);
    /* untouched ones stay */
    g_assert_cmphex(le32_to_cpu(q.rq_psn), ==, 0xfffffe);
    g_assert_cmpuint(q.max_dest_rd_atomic, ==, 16);
    av_expect(&q.av, &av);

    /* RTS -> SQD with notification, then SQD -> SQD with everything */
    attr_init(&a, RSIM_QPS_SQD, RSIM_QP_EN_SQD_ASYNC_NOTIFY);
    a.en_sqd_async_notify = 1;
    qp_modify_ok(d, qpn, &a);
    aeq_expect(d, RSIM_EV_SQ_DRAINED, qpn);
    qp_query(d, qpn, &q);
    g_assert_cmpuint(q.en_sqd_async_notify, ==, 1);
    g_assert_cmpuint(q.sq_draining, ==, 0);

    attr_init(&a, RSIM_QPS_SQD, RSIM_QP_PORT | RSIM_QP_AV |
              RSIM_QP_TIMEOUT | RSIM_QP_RETRY_CNT | RSIM_QP_RNR_RETRY |
              RSIM_QP_MAX_QP_RD_ATOMIC | RSIM_QP_MAX_DEST_RD_ATOMIC |
              RSIM_QP_ACCESS_FLAGS | RSIM_QP_PKEY_INDEX |
              RSIM_QP_MIN_RNR_TIMER | RSIM_QP_PATH_MIG_STATE);
    a.port_num = 1;
    av_v4(&a.av, 0);
    gid_v4(a.av.dgid, 172, 16, 0, 9);
    a.av.dmac[5] = 0x99;
    a.av.sl = 7;
    a.timeout = 3;
    a.retry_cnt = 2;
    a.rnr_retry = 1;
    a.max_rd_atomic = 1;
    a.max_dest_rd_atomic = 2;
    a.qp_access_flags = 0;
    a.min_rnr_timer = 1;
    qp_modify_ok(d, qpn, &a);
    qp_query(d, qpn, &q);
    av_expect(&q.av, &a.av);
    g_assert_cmpuint(q.timeout, ==, 3);
    g_assert_cmpuint(q.retry_cnt, ==, 2);
    g_assert_cmpuint(q.rnr_retry, ==, 1);
    g_assert_cmpuint(q.max_rd_atomic, ==, 1);
    g_assert_cmpuint(q.max_dest_rd_atomic, ==, 2);
    g_assert_cmphex(le32_to_cpu(q.qp_access_flags), ==, 0);
    g_assert_cmpuint(q.min_rnr_timer, ==, 1);
    g_assert_cmpuint(q.qp_state, ==, RSIM_QPS_SQD);
    /* the caps never change */
    g_assert_cmpuint(le32_to_cpu(q.max_send_wr), ==, 15);
    g_assert_cmpuint(le32_to_cpu(q.max_recv_wr), ==, 31);
    g_assert_cmpuint(le32_to_cpu(q.max_send_sge), ==, 2);
    g_assert_cmpuint(le32_to_cpu(q.max_recv_sge), ==, 3);
    g_assert_cmpuint(le32_to_cpu(q.max_inline_data), ==, 48);
    g_assert_cmpuint(q.qp_type, ==, RSIM_QPT_RC);

    /* RESET empties the rings */
    qp_move(d, qpn, RSIM_QPS_RESET);
    g_assert_cmpuint(ring_prod(d, &qp.sq), ==, 0);
    g_assert_cmpuint(ring_cons(d, &qp.sq), ==, 0);
    g_assert_cmpuint(ring_prod(d, &qp.rq), ==, 0);
    g_assert_cmpuint(ring_cons(d, &qp.rq), ==, 0);
    aeq_expect_none(d);
    rsim_stop(d);
}

/* The RC state machine with exactly the required attributes */
static void test_qp_rc_states(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_qp_attr a;
    uint32_t qpn;
    TEnv env;

    gid_add_v4(d, 0, 1);
    env_setup(d, &env, RSIM_PBL_LEVEL0, 4);         /* RESET -> INIT */
    qpn = env.qp.qpn;
    g_assert_cmpuint(qp_state(d, qpn), ==, RSIM_QPS_INIT);
    qp_move(d, qpn, RSIM_QPS_INIT);                 /* INIT -> INIT */
    attr_rc_rtr(&a);
    qp_modify_ok(d, qpn, &a);
    attr_rc_rts(&a);
    qp_modify_ok(d, qpn, &a);
    qp_move(d, qpn, RSIM_QPS_RTS);                  /* RTS -> RTS */
    /* without STATE in the mask the QP stays where it is */
    attr_init(&a, 0, RSIM_QP_MIN_RNR_TIMER);
    attr_set_mask(&a, RSIM_QP_MIN_RNR_TIMER);
    a.min_rnr_timer = 9;
    qp_modify_ok(d, qpn, &a);
    g_assert_cmpuint(qp_state(d, qpn), ==, RSIM_QPS_RTS);
    /* SQD without notification: no event */
    qp_move(d, qpn, RSIM_QPS_SQD);
    aeq_expect_none(d);
    qp_move(d, qpn, RSIM_QPS_SQD);                  /* SQD -> SQD */
    qp_move(d, qpn, RSIM_QPS_RTS);
    /* with notification */
    attr_init(&a, RSIM_QPS_SQD, RSIM_QP_EN_SQD_ASYNC_NOTIFY);
    a.en_sqd_async_notify = 1;
    qp_modify_ok(d, qpn, &a);
    aeq_expect(d, RSIM_EV_SQ_DRAINED, qpn);
    qp_move(d, qpn, RSIM_QPS_RTS);
    qp_move(d, qpn, RSIM_QPS_ERR);
    qp_move(d, qpn, RSIM_QPS_ERR);                  /* ERR -> ERR */
    qp_move(d, qpn, RSIM_QPS_RESET);
    qp_move(d, qpn, RSIM_QPS_RESET);                /* RESET -> RESET */

    /* every state can go to ERR and RESET */
    qp_rc_to_init(d, qpn);
    qp_move(d, qpn, RSIM_QPS_ERR);
    qp_move(d, qpn, RSIM_QPS_RESET);
    qp_rc_to_init(d, qpn);
    qp_move(d, qpn, RSIM_QPS_RESET);
    qp_rc_to_init(d, qpn);
    attr_rc_rtr(&a);
    qp_modify_ok(d, qpn, &a);
    qp_move(d, qpn, RSIM_QPS_ERR);
    qp_move(d, qpn, RSIM_QPS_RESET);
    qp_rc_to_init(d, qpn);
    attr_rc_rtr(&a);
    qp_modify_ok(d, qpn, &a);
    qp_move(d, qpn, RSIM_QPS_RESET);
    qp_rc_to_rts(d, qpn);
    qp_move(d, qpn, RSIM_QPS_SQD);
    qp_move(d, qpn, RSIM_QPS_ERR);
    qp_move(d, qpn, RSIM_QPS_RESET);
    qp_rc_to_rts(d, qpn);
    qp_move(d, qpn, RSIM_QPS_SQD);
    qp_move(d, qpn, RSIM_QPS_RESET);
    qp_rc_to_rts(d, qpn);
    qp_move(d, qpn, RSIM_QPS_RESET);
    aeq_expect_none(d);
    assert_alive(d);
    rsim_stop(d);
}

typedef void (*AttrFn)(struct rsim_qp_attr *a);

/*
 * A refused MODIFY_QP: expected status, and the QP (state and every
 * attribute) is exactly as before.
 */
static void qp_modify_refused(Rsim *d, uint32_t qpn,
                              const struct rsim_qp_attr *a, unsigned want)
{
    struct rsim_qp_attr before, after;

    qp_query(d, qpn, &before);
    assert_sts(qp_modify(d, qpn, a), want);
    assert_alive(d);
    qp_query(d, qpn, &after);
    g_assert_cmpmem(&before, sizeof(before), &after, sizeof(after));
}

static void bad_init(Rsim *d, uint32_t qpn, AttrFn fix,
                     unsigned want)
{
    struct rsim_qp_attr a;

    attr_rc_init(&a);
    fix(&a);
    qp_modify_refused(d, qpn, &a, want);
}

static void bad_rtr(Rsim *d, uint32_t qpn, AttrFn fix,
                    unsigned want)
{
    struct rsim_qp_attr a;

    attr_rc_rtr(&a);
    fix(&a);
    qp_modify_refused(d, qpn, &a, want);
}

static void bad_rts(Rsim *d, uint32_t qpn, AttrFn fix,
                    unsigned want)
{
    struct rsim_qp_attr a;

    attr_rc_rts(&a);
    fix(&a);
    qp_modify_refused(d, qpn, &a, want);
}

static void add_mask(struct rsim_qp_attr *a, uint32_t bits)
{
    attr_set_mask(a, attr_mask(a) | bits);
}

static void del_mask(struct rsim_qp_attr *a, uint32_t bits)
{
    attr_set_mask(a, attr_mask(a) & ~bits);
}

static void f_to_rtr(struct rsim_qp_attr *a)
{
    a->qp_state = RSIM_QPS_RTR;
}

static void f_to_rts(struct rsim_qp_attr *a)
{
    a->qp_state = RSIM_QPS_RTS;
}

static void f_to_err(struct rsim_qp_attr *a)
{
    a->qp_state = RSIM_QPS_ERR;
}

static void f_to_sqd(struct rsim_qp_attr *a)
{
    a->qp_state = RSIM_QPS_SQD;
}

static void f_to_sqe(struct rsim_qp_attr *a)
{
    a->qp_state = RSIM_QPS_SQE;
}

static void f_to_init(struct rsim_qp_attr *a)
{
    a->qp_state = RSIM_QPS_INIT;
}

static void f_state7(struct rsim_qp_attr *a)
{
    a->qp_state = 7;
}

static void f_state_ff(struct rsim_qp_attr *a)
{
    a->qp_state = 0xff;
}

static void f_no_access(struct rsim_qp_attr *a)
{
    del_mask(a, RSIM_QP_ACCESS_FLAGS);
}

static void f_no_port(struct rsim_qp_attr *a)
{
    del_mask(a, RSIM_QP_PORT);
}

static void f_qkey(struct rsim_qp_attr *a)
{
    add_mask(a, RSIM_QP_QKEY);
}

static void f_port2(struct rsim_qp_attr *a)
{
    a->port_num = 2;
}

static void f_port0(struct rsim_qp_attr *a)
{
    a->port_num = 0;
}

static void f_pkey1(struct rsim_qp_attr *a)
{
    a->pkey_index = cpu_to_le16(1);
}

static void f_mw_bind(struct rsim_qp_attr *a)
{
    a->qp_access_flags = cpu_to_le32(RSIM_ACCESS_MW_BIND);
}

static void f_acc_hi(struct rsim_qp_attr *a)
{
    a->qp_access_flags = cpu_to_le32(0x80000000);
}

static void f_alt(struct rsim_qp_attr *a)
{
    add_mask(a, RSIM_QP_ALT_PATH);
}

static void f_bit21(struct rsim_qp_attr *a)
{
    add_mask(a, 1u << 21);
}

static void f_rate(struct rsim_qp_attr *a)
{
    add_mask(a, 1u << 25);
}

static void f_bit31(struct rsim_qp_attr *a)
{
    add_mask(a, 1u << 31);
}

static void f_res0(struct rsim_qp_attr *a)
{
    a->reserved0 = cpu_to_le32(1);
}

static void f_res1(struct rsim_qp_attr *a)
{
    a->reserved1[31] = 1;
}

static void f_cur_init(struct rsim_qp_attr *a)
{
    add_mask(a, RSIM_QP_CUR_STATE);
    a->cur_qp_state = RSIM_QPS_INIT;
}

static void f_cur_rtr(struct rsim_qp_attr *a)
{
    add_mask(a, RSIM_QP_CUR_STATE);
    a->cur_qp_state = RSIM_QPS_RTR;
}

static void f_no_rnr(struct rsim_qp_attr *a)
{
    del_mask(a, RSIM_QP_MIN_RNR_TIMER);
}

static void f_no_av(struct rsim_qp_attr *a)
{
    del_mask(a, RSIM_QP_AV);
}

static void f_timeout_bit(struct rsim_qp_attr *a)
{
    add_mask(a, RSIM_QP_TIMEOUT);
}

static void f_mtu6(struct rsim_qp_attr *a)
{
    a->path_mtu = 6;
}

static void f_mtu0(struct rsim_qp_attr *a)
{
    a->path_mtu = 0;
}

static void f_mtu_ff(struct rsim_qp_attr *a)
{
    a->path_mtu = 0xff;
}

static void f_dest_rd129(struct rsim_qp_attr *a)
{
    a->max_dest_rd_atomic = 129;
}

static void f_rq_psn(struct rsim_qp_attr *a)
{
    a->rq_psn = cpu_to_le32(1u << 24);
}

static void f_dest_qpn(struct rsim_qp_attr *a)
{
    a->dest_qp_num = cpu_to_le32(0xffffffff);
}

static void f_rnr32(struct rsim_qp_attr *a)
{
    a->min_rnr_timer = 32;
}

static void f_sgid5(struct rsim_qp_attr *a)
{
    a->av.sgid_index = 5;
}

static void f_sgid_ff(struct rsim_qp_attr *a)
{
    a->av.sgid_index = 0xff;
}

static void f_net6(struct rsim_qp_attr *a)
{
    a->av.network_type = RSIM_NET_IPV6;
}

static void f_net0(struct rsim_qp_attr *a)
{
    a->av.network_type = 0;
}

static void f_dgid6(struct rsim_qp_attr *a)
{
    gid_v6(a->av.dgid, 5);
}

static void f_flow(struct rsim_qp_attr *a)
{
    a->av.flow_label = cpu_to_le32(1u << 20);
}

static void f_av_res(struct rsim_qp_attr *a)
{
    a->av.reserved = 1;
}

static void f_no_psn(struct rsim_qp_attr *a)
{
    del_mask(a, RSIM_QP_SQ_PSN);
}

static void f_retry8(struct rsim_qp_attr *a)
{
    a->retry_cnt = 8;
}

static void f_rnr_retry8(struct rsim_qp_attr *a)
{
    a->rnr_retry = 8;
}

static void f_timeout32(struct rsim_qp_attr *a)
{
    a->timeout = 32;
}

static void f_sq_psn(struct rsim_qp_attr *a)
{
    a->sq_psn = cpu_to_le32(1u << 24);
}

static void f_rd129(struct rsim_qp_attr *a)
{
    a->max_rd_atomic = 129;
}

static void f_rd_ff(struct rsim_qp_attr *a)
{
    a->max_rd_atomic = 0xff;
}

static void f_mig3(struct rsim_qp_attr *a)
{
    add_mask(a, RSIM_QP_PATH_MIG_STATE);
    a->path_mig_state = 3;
}

static void f_av_bit(struct rsim_qp_attr *a)
{
    add_mask(a, RSIM_QP_AV);
}

static void f_cap_bit(struct rsim_qp_attr *a)
{
    add_mask(a, RSIM_QP_CAP);
}

/* Illegal transitions, wrong attribute sets and bad values */
static void test_qp_illegal(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_qp_attr a;
    uint32_t qpn;
    TEnv env;

    gid_add_v4(d, 0, 1);
    env_setup(d, &env, RSIM_PBL_LEVEL0, 4);
    qpn = env.qp.qpn;
    qp_move(d, qpn, RSIM_QPS_RESET);

    /* in RESET */
    bad_rtr(d, qpn, f_to_rtr, RSIM_STS_BAD_STATE);
    bad_rts(d, qpn, f_to_rts, RSIM_STS_BAD_STATE);
    bad_init(d, qpn, f_to_err, RSIM_STS_BAD_STATE);
    bad_init(d, qpn, f_to_sqd, RSIM_STS_BAD_STATE);
    bad_init(d, qpn, f_to_sqe, RSIM_STS_BAD_STATE);
    attr_init(&a, RSIM_QPS_ERR, 0);
    qp_modify_refused(d, qpn, &a, RSIM_STS_BAD_STATE);
    bad_init(d, qpn, f_state7, RSIM_STS_INVALID);
    bad_init(d, qpn, f_state_ff, RSIM_STS_INVALID);
    bad_init(d, qpn, f_no_access, RSIM_STS_INVALID);
    bad_init(d, qpn, f_no_port, RSIM_STS_INVALID);
    bad_init(d, qpn, f_qkey, RSIM_STS_INVALID);
    bad_init(d, qpn, f_av_bit, RSIM_STS_INVALID);
    bad_init(d, qpn, f_cap_bit, RSIM_STS_INVALID);
    bad_init(d, qpn, f_port2, RSIM_STS_INVALID);
    bad_init(d, qpn, f_port0, RSIM_STS_INVALID);
    bad_init(d, qpn, f_pkey1, RSIM_STS_INVALID);
    bad_init(d, qpn, f_mw_bind, RSIM_STS_INVALID);
    bad_init(d, qpn, f_acc_hi, RSIM_STS_INVALID);
    bad_init(d, qpn, f_alt, RSIM_STS_UNSUPPORTED);
    bad_init(d, qpn, f_bit21, RSIM_STS_RESERVED);
    bad_init(d, qpn, f_rate, RSIM_STS_RESERVED);
    bad_init(d, qpn, f_bit31, RSIM_STS_RESERVED);
    bad_init(d, qpn, f_res0, RSIM_STS_RESERVED);
    bad_init(d, qpn, f_res1, RSIM_STS_RESERVED);
    bad_init(d, qpn, f_cur_init, RSIM_STS_BAD_STATE);

    /* in INIT */
    qp_rc_to_init(d, qpn);
    bad_rts(d, qpn, f_to_rts, RSIM_STS_BAD_STATE);
    bad_init(d, qpn, f_to_sqd, RSIM_STS_BAD_STATE);
    bad_rtr(d, qpn, f_no_rnr, RSIM_STS_INVALID);
    bad_rtr(d, qpn, f_no_av, RSIM_STS_INVALID);
    bad_rtr(d, qpn, f_timeout_bit, RSIM_STS_INVALID);
    bad_rtr(d, qpn, f_qkey, RSIM_STS_INVALID);
    bad_rtr(d, qpn, f_mtu6, RSIM_STS_LIMIT);
    bad_rtr(d, qpn, f_mtu_ff, RSIM_STS_LIMIT);
    bad_rtr(d, qpn, f_mtu0, RSIM_STS_INVALID);
    bad_rtr(d, qpn, f_dest_rd129, RSIM_STS_LIMIT);
    bad_rtr(d, qpn, f_rq_psn, RSIM_STS_INVALID);
    bad_rtr(d, qpn, f_dest_qpn, RSIM_STS_INVALID);
    bad_rtr(d, qpn, f_rnr32, RSIM_STS_INVALID);
    bad_rtr(d, qpn, f_sgid5, RSIM_STS_INVALID);
    bad_rtr(d, qpn, f_sgid_ff, RSIM_STS_INVALID);
    bad_rtr(d, qpn, f_net6, RSIM_STS_INVALID);
    bad_rtr(d, qpn, f_net0, RSIM_STS_INVALID);
    bad_rtr(d, qpn, f_dgid6, RSIM_STS_INVALID);
    bad_rtr(d, qpn, f_flow, RSIM_STS_INVALID);
    bad_rtr(d, qpn, f_av_res, RSIM_STS_RESERVED);
    bad_rtr(d, qpn, f_alt, RSIM_STS_UNSUPPORTED);
    bad_rtr(d, qpn, f_cur_rtr, RSIM_STS_BAD_STATE);
    /* values of attributes outside the mask are ignored */
    attr_rc_rtr(&a);
    a.qp_access_flags = cpu_to_le32(RSIM_ACCESS_MW_BIND);
    a.timeout = 0xff;
    a.qkey = cpu_to_le32(0xffffffff);
    qp_modify_ok(d, qpn, &a);

    /* in RTR */
    bad_rts(d, qpn, f_no_psn, RSIM_STS_INVALID);
    bad_rts(d, qpn, f_retry8, RSIM_STS_INVALID);
    bad_rts(d, qpn, f_rnr_retry8, RSIM_STS_INVALID);
    bad_rts(d, qpn, f_timeout32, RSIM_STS_INVALID);
    bad_rts(d, qpn, f_sq_psn, RSIM_STS_INVALID);
    bad_rts(d, qpn, f_rd129, RSIM_STS_LIMIT);
    bad_rts(d, qpn, f_rd_ff, RSIM_STS_LIMIT);
    bad_rts(d, qpn, f_cur_init, RSIM_STS_BAD_STATE);
    bad_rts(d, qpn, f_mig3, RSIM_STS_INVALID);
    bad_rts(d, qpn, f_av_bit, RSIM_STS_INVALID);
    bad_rts(d, qpn, f_to_sqd, RSIM_STS_BAD_STATE);
    bad_rts(d, qpn, f_to_init, RSIM_STS_BAD_STATE);
    bad_rtr(d, qpn, f_to_rtr, RSIM_STS_BAD_STATE);

    /* in RTS */
    attr_rc_rts(&a);
    qp_modify_ok(d, qpn, &a);
    attr_init(&a, RSIM_QPS_RTS, RSIM_QP_AV);
    av_v4(&a.av, 0);
    qp_modify_refused(d, qpn, &a, RSIM_STS_INVALID);
    attr_init(&a, RSIM_QPS_RTS, RSIM_QP_SQ_PSN);
    qp_modify_refused(d, qpn, &a, RSIM_STS_INVALID);
    attr_init(&a, RSIM_QPS_SQD, RSIM_QP_TIMEOUT);
    qp_modify_refused(d, qpn, &a, RSIM_STS_INVALID);
    attr_init(&a, RSIM_QPS_INIT, 0);
    qp_modify_refused(d, qpn, &a, RSIM_STS_BAD_STATE);
    attr_init(&a, RSIM_QPS_RTR, 0);
    qp_modify_refused(d, qpn, &a, RSIM_STS_BAD_STATE);
    attr_init(&a, RSIM_QPS_SQE, 0);
    qp_modify_refused(d, qpn, &a, RSIM_STS_BAD_STATE);

    /* in SQD */
    qp_move(d, qpn, RSIM_QPS_SQD);
    attr_init(&a, RSIM_QPS_INIT, 0);
    qp_modify_refused(d, qpn, &a, RSIM_STS_BAD_STATE);
    attr_init(&a, RSIM_QPS_SQD, RSIM_QP_QKEY);
    qp_modify_refused(d, qpn, &a, RSIM_STS_INVALID);
    attr_init(&a, RSIM_QPS_SQD, RSIM_QP_RQ_PSN);
    qp_modify_refused(d, qpn, &a, RSIM_STS_INVALID);
    attr_init(&a, RSIM_QPS_RTS, RSIM_QP_TIMEOUT);
    qp_modify_refused(d, qpn, &a, RSIM_STS_INVALID);

    /* in ERR */
    qp_move(d, qpn, RSIM_QPS_ERR);
    attr_init(&a, RSIM_QPS_RTS, 0);
    qp_modify_refused(d, qpn, &a, RSIM_STS_BAD_STATE);
    attr_init(&a, RSIM_QPS_INIT, 0);
    qp_modify_refused(d, qpn, &a, RSIM_STS_BAD_STATE);
    attr_init(&a, RSIM_QPS_ERR, RSIM_QP_TIMEOUT);
    qp_modify_refused(d, qpn, &a, RSIM_STS_INVALID);
    attr_init(&a, RSIM_QPS_RESET, RSIM_QP_QKEY);
    qp_modify_refused(d, qpn, &a, RSIM_STS_INVALID);
    aeq_expect_none(d);
    rsim_stop(d);
}

/* UD, GSI and UC transitions and their attribute sets */
static void test_qp_ud_gsi_uc(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_cmd_create_qp c;
    struct rsim_qp_attr a, q;
    TEnv env;
    TQp ud, gsi, uc;

    gid_add_v4(d, 0, 1);
    env_setup(d, &env, RSIM_PBL_LEVEL0, 4);
    qp_create(d, &ud, RSIM_QPT_UD, env.pdn, env.cqn, RSIM_PBL_LEVEL1);
    qp_rings(d, &gsi, RSIM_PBL_LEVEL0);
    qp_cmd(&c, RSIM_QPT_GSI, env.pdn, env.cqn, env.cqn, &gsi);
    gsi.qpn = qp_create_cmd(d, &c);
    g_assert_cmpuint(gsi.qpn, ==, 1);
    qp_create(d, &uc, RSIM_QPT_UC, env.pdn, env.cqn, RSIM_PBL_LEVEL0);

    /* UD: RESET -> INIT needs PKEY_INDEX, PORT, QKEY */
    attr_init(&a, RSIM_QPS_INIT, RSIM_QP_PKEY_INDEX | RSIM_QP_QKEY);
    a.qkey = cpu_to_le32(0x11111111);
    qp_modify_refused(d, ud.qpn, &a, RSIM_STS_INVALID);
    add_mask(&a, RSIM_QP_PORT | RSIM_QP_ACCESS_FLAGS);
    a.port_num = 1;
    qp_modify_refused(d, ud.qpn, &a, RSIM_STS_INVALID);
    del_mask(&a, RSIM_QP_ACCESS_FLAGS);
    qp_modify_ok(d, ud.qpn, &a);
    attr_init(&a, RSIM_QPS_INIT, RSIM_QP_QKEY);
    a.qkey = cpu_to_le32(0x80010000);
    qp_modify_ok(d, ud.qpn, &a);
    attr_init(&a, RSIM_QPS_RTR, RSIM_QP_AV);
    av_v4(&a.av, 0);
    qp_modify_refused(d, ud.qpn, &a, RSIM_STS_INVALID);
    qp_move(d, ud.qpn, RSIM_QPS_RTR);
    attr_init(&a, RSIM_QPS_RTS, 0);
    qp_modify_refused(d, ud.qpn, &a, RSIM_STS_INVALID);     /* SQ_PSN */
    attr_init(&a, RSIM_QPS_RTS, RSIM_QP_SQ_PSN | RSIM_QP_RETRY_CNT);
    qp_modify_refused(d, ud.qpn, &a, RSIM_STS_INVALID);
    attr_init(&a, RSIM_QPS_RTS, RSIM_QP_SQ_PSN | RSIM_QP_QKEY);
    a.sq_psn = cpu_to_le32(77);
    a.qkey = cpu_to_le32(0x22222222);
    qp_modify_ok(d, ud.qpn, &a);
    qp_query(d, ud.qpn, &q);
    g_assert_cmphex(le32_to_cpu(q.qkey), ==, 0x22222222);
    g_assert_cmpuint(le32_to_cpu(q.sq_psn), ==, 77);
    g_assert_cmpuint(q.port_num, ==, 1);
    g_assert_cmpuint(q.qp_type, ==, RSIM_QPT_UD);
    qp_move(d, ud.qpn, RSIM_QPS_SQD);
    attr_init(&a, RSIM_QPS_SQD, RSIM_QP_PORT);
    a.port_num = 1;
    qp_modify_refused(d, ud.qpn, &a, RSIM_STS_INVALID);
    attr_init(&a, RSIM_QPS_RTS, RSIM_QP_QKEY | RSIM_QP_CUR_STATE);
    a.cur_qp_state = RSIM_QPS_SQD;
    a.qkey = cpu_to_le32(0x33);
    qp_modify_ok(d, ud.qpn, &a);
    qp_move(d, ud.qpn, RSIM_QPS_ERR);
    qp_move(d, ud.qpn, RSIM_QPS_RESET);

    /* GSI: like UD but without PORT */
    attr_init(&a, RSIM_QPS_INIT, RSIM_QP_PKEY_INDEX | RSIM_QP_QKEY |
              RSIM_QP_PORT);
    a.port_num = 1;
    a.qkey = cpu_to_le32(0x80010000);
    qp_modify_refused(d, gsi.qpn, &a, RSIM_STS_INVALID);
    del_mask(&a, RSIM_QP_PORT);
    qp_modify_ok(d, gsi.qpn, &a);
    qp_move(d, gsi.qpn, RSIM_QPS_RTR);
    attr_init(&a, RSIM_QPS_RTS, RSIM_QP_SQ_PSN);
    a.sq_psn = cpu_to_le32(0xffffff);
    qp_modify_ok(d, gsi.qpn, &a);
    qp_query(d, gsi.qpn, &q);
    g_assert_cmpuint(q.qp_type, ==, RSIM_QPT_GSI);
    g_assert_cmphex(le32_to_cpu(q.qkey), ==, 0x80010000);
    qp_move(d, gsi.qpn, RSIM_QPS_ERR);
    qp_move(d, gsi.qpn, RSIM_QPS_RESET);

    /* UC: no RDMA READ/atomic attributes, no retries */
    attr_rc_init(&a);
    qp_modify_ok(d, uc.qpn, &a);
    attr_rc_rtr(&a);
    qp_modify_refused(d, uc.qpn, &a, RSIM_STS_INVALID);
    del_mask(&a, RSIM_QP_MAX_DEST_RD_ATOMIC | RSIM_QP_MIN_RNR_TIMER);
    qp_modify_ok(d, uc.qpn, &a);
    attr_rc_rts(&a);
    qp_modify_refused(d, uc.qpn, &a, RSIM_STS_INVALID);
    attr_init(&a, RSIM_QPS_RTS, RSIM_QP_SQ_PSN);
    qp_modify_ok(d, uc.qpn, &a);
    attr_init(&a, RSIM_QPS_RTS, RSIM_QP_MIN_RNR_TIMER);
    qp_modify_refused(d, uc.qpn, &a, RSIM_STS_INVALID);
    qp_move(d, uc.qpn, RSIM_QPS_ERR);
    qp_move(d, uc.qpn, RSIM_QPS_RESET);
    aeq_expect_none(d);
    rsim_stop(d);
}

/* MODIFY_QP / QUERY_QP attribute blocks that cannot be used */
static void test_qp_attr_block(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_cmd_qp_attr c;
    TEnv env;

    env_setup(d, &env, RSIM_PBL_LEVEL0, 4);
    for (int op = RSIM_CMD_MODIFY_QP; op <= RSIM_CMD_QUERY_QP; op++) {
        CMD_INIT(c, op);
        c.qpn = cpu_to_le32(env.qp.qpn);
        c.addr = cpu_to_le64(UNMAPPED);
        cmd_expect(d, &c, RSIM_STS_DMA);
        c.addr = cpu_to_le64(UNMAPPED + 0x10000000000000ULL);
        cmd_expect(d, &c, RSIM_STS_DMA);
        c.addr = cpu_to_le64(0xffffffffffffff80ULL);    /* wraps */
        cmd_expect(d, &c, RSIM_STS_DMA);
        c.addr = cpu_to_le64(d->scratch + 4);
        cmd_expect(d, &c, RSIM_STS_INVALID);
        c.addr = cpu_to_le64(d->scratch);
        c.qpn = cpu_to_le32(env.qp.qpn + 1);
        cmd_expect(d, &c, RSIM_STS_BAD_HANDLE);
        c.qpn = cpu_to_le32(env.qp.qpn);
        c.reserved[47] = 1;
        cmd_expect(d, &c, RSIM_STS_RESERVED);
    }
    g_assert_cmpuint(qp_state(d, env.qp.qpn), ==, RSIM_QPS_INIT);
    rsim_stop(d);
}

/*
 * ========================================================================
 * Work queues, completions, event queues
 * ========================================================================
 */

static const struct {
    uint32_t wr;
    uint32_t wc;
} send_ops[] = {
    { RSIM_WR_SEND, RSIM_WC_SEND },
    { RSIM_WR_RDMA_WRITE, RSIM_WC_RDMA_WRITE },
    { RSIM_WR_RDMA_READ, RSIM_WC_RDMA_READ },
    { RSIM_WR_ATOMIC_FETCH_AND_ADD, RSIM_WC_FETCH_ADD },
    { RSIM_WR_ATOMIC_CMP_AND_SWP, RSIM_WC_COMP_SWAP },
    { RSIM_WR_SEND_WITH_IMM, RSIM_WC_SEND },
    { RSIM_WR_RDMA_WRITE_WITH_IMM, RSIM_WC_RDMA_WRITE },
    { RSIM_WR_LOCAL_INV, RSIM_WC_LOCAL_INV },
    { RSIM_WR_SEND_WITH_INV, RSIM_WC_SEND },
    { RSIM_WR_REG_MR, RSIM_WC_REG_MR },
};

/*
 * Posted send and receive WQEs complete with WR_FLUSH_ERR when the QP
 * enters ERR, and later ones as they are posted.  Rings and CQ at the
 * given page list level, several pages each.
 */
static void test_queue_flush(const char *machine, unsigned level)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_cmd_create_qp c;
    struct rsim_cqe e;
    uint32_t pdn, cqn, qpn;
    const unsigned ns = 20, nr = 10;
    TRing cq;
    TQp qp;
    TEq eq;

    pdn = pd_alloc(d);
    eq_create(d, &eq, 1, 16);
    cqn = cq_create(d, &cq, eq.eqn, level, 6);      /* 64 x 64: 2 pages */
    tring_init(d, &qp.sq, level, 5, 8);             /* 32 x 256: 3 pages */
    tring_init(d, &qp.rq, level, 6, 6);             /* 64 x 64: 2 pages */
    qp_cmd(&c, RSIM_QPT_RC, pdn, cqn, cqn, &qp);
    qpn = qp_create_cmd(d, &c);
    qp_rc_to_init(d, qpn);

    for (unsigned i = 0; i < ns; i++) {
        post_send(d, &qp.sq, 0x1000 + i, send_ops[i % ARRAY_SIZE(send_ops)].wr);
    }
    for (unsigned i = 0; i < nr; i++) {
        post_recv(d, &qp.rq, 0x2000 + i);
    }
    /* INIT does not execute anything */
    sq_doorbell(d, 0, qpn);
    db(d, 0, A_RSIM_DB_RQ, qpn);
    cq_expect_empty(d, &cq);
    g_assert_cmpuint(ring_cons(d, &qp.sq), ==, 0);
    g_assert_cmpuint(ring_cons(d, &qp.rq), ==, 0);

    qp_move(d, qpn, RSIM_QPS_ERR);
    for (unsigned i = 0; i < ns; i++) {
        g_assert_true(cq_poll(d, &cq, &e, POLL_US));
        cqe_check(&e, 0x1000 + i, RSIM_WC_WR_FLUSH_ERR,
                  send_ops[i % ARRAY_SIZE(send_ops)].wc, qpn);
        g_assert_cmpuint(e.port_num, ==, 1);
    }
    for (unsigned i = 0; i < nr; i++) {
        cq_expect_flush(d, &cq, 0x2000 + i, RSIM_WC_RECV, qpn);
    }
    cq_expect_empty(d, &cq);
    g_assert_cmpuint(ring_prod(d, &cq), ==, ns + nr);
    g_assert_cmpuint(ring_cons(d, &qp.sq), ==, ns);
    g_assert_cmpuint(ring_cons(d, &qp.rq), ==, nr);

    /* posted in ERR: flushed on the doorbell, wrapping the rings */
    for (unsigned round = 0; round < 3; round++) {
        for (unsigned i = 0; i < 10; i++) {
            post_send(d, &qp.sq, 0x3000 + round * 16 + i, RSIM_WR_SEND);
        }
        post_recv(d, &qp.rq, 0x4000 + round);
        sq_doorbell(d, 0, qpn);
        for (unsigned i = 0; i < 10; i++) {
            cq_expect_flush(d, &cq, 0x3000 + round * 16 + i, RSIM_WC_SEND,
                            qpn);
        }
        cq_expect_flush(d, &cq, 0x4000 + round, RSIM_WC_RECV, qpn);
        cq_expect_empty(d, &cq);
    }
    /* the receive doorbell flushes as well */
    post_recv(d, &qp.rq, 0x5000);
    db(d, 0, A_RSIM_DB_RQ, qpn);
    cq_expect_flush(d, &cq, 0x5000, RSIM_WC_RECV, qpn);
    g_assert_cmpuint(ring_cons(d, &qp.sq), ==, (ns + 30) % 32);
    g_assert_cmpuint(ring_cons(d, &qp.rq), ==, (nr + 4) % 64);
    g_assert_cmpuint(ring_prod(d, &cq), ==, (ns + nr + 34) % 64);
    g_assert_cmpuint(stat_get(d, RSIM_STAT_COMPLETIONS), ==, ns + nr + 34);

    /* RESET empties the rings */
    qp_move(d, qpn, RSIM_QPS_RESET);
    g_assert_cmpuint(ring_prod(d, &qp.sq), ==, 0);
    g_assert_cmpuint(ring_cons(d, &qp.sq), ==, 0);
    g_assert_cmpuint(ring_prod(d, &qp.rq), ==, 0);
    g_assert_cmpuint(ring_cons(d, &qp.rq), ==, 0);
    /* destroying a QP discards work without completions */
    qp_rc_to_init(d, qpn);
    post_send(d, &qp.sq, 0x6000, RSIM_WR_SEND);
    handle_expect(d, RSIM_CMD_DESTROY_QP, qpn, RSIM_STS_OK);
    sq_doorbell(d, 0, qpn);
    cq_expect_empty(d, &cq);
    aeq_expect_none(d);
    rsim_stop(d);
}

static void test_queue_flush_l0(const char *machine)
{
    test_queue_flush(machine, RSIM_PBL_LEVEL0);
}

static void test_queue_flush_l1(const char *machine)
{
    test_queue_flush(machine, RSIM_PBL_LEVEL1);
}

static void test_queue_flush_l2(const char *machine)
{
    test_queue_flush(machine, RSIM_PBL_LEVEL2);
}

/* CQ arming, COMPLETION events and the EQ's MSI-X vector */
static void test_queue_cq_eq_msix(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_cmd_arm_cq ac;
    TEnv env;
    uint32_t qpn;

    msix_setup(d);
    env_setup(d, &env, RSIM_PBL_LEVEL0, 5);
    qpn = env.qp.qpn;
    qp_move(d, qpn, RSIM_QPS_ERR);

    /* armed EQ, armed CQ: event + interrupt */
    eq_doorbell(d, &env.eq, true);
    cq_arm_db(d, 0, env.cqn, RSIM_CQ_ARM_NEXT);
    flush_sends(d, &env, 1, 1);
    cq_expect_flush(d, &env.cq, 1, RSIM_WC_SEND, qpn);
    {
        struct rsim_eqe e;

        qtest_memread(d->qts, env.eq.addr, &e, sizeof(e));
        g_assert_cmphex(le32_to_cpu(e.dw0), ==, RSIM_EV_COMPLETION << 8 |
                        R_RSIM_EQE_HDR_PHASE_MASK);
    }
    eq_expect(d, &env.eq, RSIM_EV_COMPLETION, env.cqn);
    g_assert_true(irq_fired(d, 1));
    g_assert_false(irq_fired(d, 0));    /* INTR_MASK.ADMIN is set */

    /* the CQ fired and is disarmed: no event */
    flush_sends(d, &env, 1, 2);
    cq_expect_flush(d, &env.cq, 2, RSIM_WC_SEND, qpn);
    eq_expect_none(d, &env.eq);
    g_assert_false(irq_fired(d, 1));

    /* re-armed CQ (ARM_CQ), EQ not armed: event, no interrupt */
    CMD_INIT(ac, RSIM_CMD_ARM_CQ);
    ac.cqn = cpu_to_le32(env.cqn);
    ac.arm = cpu_to_le32(RSIM_CQ_ARM_NEXT);
    cmd_expect(d, &ac, RSIM_STS_OK);
    flush_sends(d, &env, 1, 3);
    cq_expect_flush(d, &env.cq, 3, RSIM_WC_SEND, qpn);
    eq_expect(d, &env.eq, RSIM_EV_COMPLETION, env.cqn);
    g_assert_false(irq_fired(d, 1));

    /* arming while events are pending beyond CONS signals at once */
    env.eq.head--;
    eq_doorbell(d, &env.eq, true);
    g_assert_true(irq_fired(d, 1));
    env.eq.head++;
    /* armed with nothing pending: nothing */
    eq_doorbell(d, &env.eq, true);
    g_assert_false(irq_fired(d, 1));

    /* SOLICITED fires on an error completion */
    cq_arm_db(d, 0, env.cqn, RSIM_CQ_ARM_SOLICITED);
    flush_sends(d, &env, 1, 4);
    cq_expect_flush(d, &env.cq, 4, RSIM_WC_SEND, qpn);
    eq_expect(d, &env.eq, RSIM_EV_COMPLETION, env.cqn);
    g_assert_true(irq_fired(d, 1));

    /* SOLICITED does not weaken a pending NEXT; NONE changes nothing */
    eq_doorbell(d, &env.eq, true);
    cq_arm_db(d, 0, env.cqn, RSIM_CQ_ARM_NEXT);
    cq_arm_db(d, 0, env.cqn, RSIM_CQ_ARM_SOLICITED);
    cq_arm_db(d, 0, env.cqn, RSIM_CQ_ARM_NONE);
    cq_arm_db(d, 0, env.cqn, 3);                    /* invalid: ignored */
    flush_sends(d, &env, 1, 5);
    cq_expect_flush(d, &env.cq, 5, RSIM_WC_SEND, qpn);
    eq_expect(d, &env.eq, RSIM_EV_COMPLETION, env.cqn);
    g_assert_true(irq_fired(d, 1));

    /* one event per arm: many completions, one event */
    eq_doorbell(d, &env.eq, true);
    cq_arm_db(d, 0, env.cqn, RSIM_CQ_ARM_NEXT);
    flush_sends(d, &env, 5, 6);
    for (unsigned i = 0; i < 5; i++) {
        cq_expect_flush(d, &env.cq, 6 + i, RSIM_WC_SEND, qpn);
    }
    eq_expect(d, &env.eq, RSIM_EV_COMPLETION, env.cqn);
    eq_expect_none(d, &env.eq);
    g_assert_true(irq_fired(d, 1));
    g_assert_false(irq_fired(d, 1));

    /* many arm/fire cycles wrap the EQ (16 entries): phases flip */
    for (unsigned i = 0; i < 40; i++) {
        eq_doorbell(d, &env.eq, true);
        cq_arm_db(d, 0, env.cqn, RSIM_CQ_ARM_NEXT);
        flush_sends(d, &env, 1, 0x100 + i);
        cq_expect_flush(d, &env.cq, 0x100 + i, RSIM_WC_SEND, qpn);
        eq_expect(d, &env.eq, RSIM_EV_COMPLETION, env.cqn);
        g_assert_true(irq_fired(d, 1));
    }
    g_assert_false(irq_fired(d, 0));
    aeq_expect_none(d);
    rsim_stop(d);
}

/* A full EQ keeps events inside the device until the driver frees slots. */
static void test_queue_eq_full(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_eqe e;
    uint32_t pdn, cqa, cqb;
    TRing ra, rb;
    TQp qa, qb;
    TEq eq;

    msix_setup(d);
    pdn = pd_alloc(d);
    eq_create(d, &eq, 3, 2);                /* holds one event */
    cqa = cq_create(d, &ra, eq.eqn, RSIM_PBL_LEVEL0, 3);
    cqb = cq_create(d, &rb, eq.eqn, RSIM_PBL_LEVEL1, 3);
    qp_create(d, &qa, RSIM_QPT_UD, pdn, cqa, RSIM_PBL_LEVEL0);
    qp_create(d, &qb, RSIM_QPT_UD, pdn, cqb, RSIM_PBL_LEVEL0);
    {
        struct rsim_qp_attr a;

        attr_init(&a, RSIM_QPS_INIT, RSIM_QP_PKEY_INDEX | RSIM_QP_PORT |
                  RSIM_QP_QKEY);
        a.port_num = 1;
        qp_modify_ok(d, qa.qpn, &a);
        qp_modify_ok(d, qb.qpn, &a);
    }
    qp_move(d, qa.qpn, RSIM_QPS_ERR);
    qp_move(d, qb.qpn, RSIM_QPS_ERR);

    eq_doorbell(d, &eq, true);
    cq_arm_db(d, 0, cqa, RSIM_CQ_ARM_NEXT);
    cq_arm_db(d, 0, cqb, RSIM_CQ_ARM_NEXT);
    post_send(d, &qa.sq, 0xa1, RSIM_WR_SEND);
    sq_doorbell(d, 0, qa.qpn);
    post_send(d, &qb.sq, 0xb1, RSIM_WR_SEND);
    sq_doorbell(d, 0, qb.qpn);
    cq_expect_flush(d, &ra, 0xa1, RSIM_WC_SEND, qa.qpn);
    cq_expect_flush(d, &rb, 0xb1, RSIM_WC_SEND, qb.qpn);
    /* slot 0: CQ A; CQ B's event waits */
    g_assert_true(eq_poll(d, &eq, &e, POLL_US));
    g_assert_cmpuint(le32_to_cpu(e.object), ==, cqa);
    g_assert_true(irq_fired(d, 3));
    settle(d);
    g_assert_cmphex(qtest_readl(d->qts, eq.addr + 16), ==, 0);
    /* the consumer index frees the slot: the event is written */
    eq_doorbell(d, &eq, true);
    eq_expect(d, &eq, RSIM_EV_COMPLETION, cqb);
    g_assert_true(irq_fired(d, 3));
    /* again, into slot 0 with phase 0 */
    eq_doorbell(d, &eq, false);
    cq_arm_db(d, 0, cqa, RSIM_CQ_ARM_NEXT);
    cq_arm_db(d, 0, cqb, RSIM_CQ_ARM_NEXT);
    post_send(d, &qb.sq, 0xb2, RSIM_WR_SEND);
    sq_doorbell(d, 0, qb.qpn);
    cq_expect_flush(d, &rb, 0xb2, RSIM_WC_SEND, qb.qpn);
    post_send(d, &qa.sq, 0xa2, RSIM_WR_SEND);
    sq_doorbell(d, 0, qa.qpn);
    cq_expect_flush(d, &ra, 0xa2, RSIM_WC_SEND, qa.qpn);
    g_assert_true(eq_poll(d, &eq, &e, POLL_US));
    g_assert_cmphex(le32_to_cpu(e.dw0), ==, RSIM_EV_COMPLETION << 8);
    g_assert_cmpuint(le32_to_cpu(e.object), ==, cqb);
    eq_doorbell(d, &eq, false);
    eq_expect(d, &eq, RSIM_EV_COMPLETION, cqa);
    g_assert_false(irq_fired(d, 3));        /* not armed */
    /* a waiting event of a destroyed CQ is dropped */
    eq_doorbell(d, &eq, false);
    cq_arm_db(d, 0, cqa, RSIM_CQ_ARM_NEXT);
    cq_arm_db(d, 0, cqb, RSIM_CQ_ARM_NEXT);
    post_send(d, &qa.sq, 0xa3, RSIM_WR_SEND);
    sq_doorbell(d, 0, qa.qpn);
    post_send(d, &qb.sq, 0xb3, RSIM_WR_SEND);
    sq_doorbell(d, 0, qb.qpn);
    cq_expect_flush(d, &ra, 0xa3, RSIM_WC_SEND, qa.qpn);
    cq_expect_flush(d, &rb, 0xb3, RSIM_WC_SEND, qb.qpn);
    eq_expect(d, &eq, RSIM_EV_COMPLETION, cqa);
    handle_expect(d, RSIM_CMD_DESTROY_QP, qb.qpn, RSIM_STS_OK);
    handle_expect(d, RSIM_CMD_DESTROY_CQ, cqb, RSIM_STS_OK);
    eq_doorbell(d, &eq, false);
    eq_expect_none(d, &eq);
    /* EQ_DB for a missing EQ or beyond the depth: ignored */
    wr(d, A_RSIM_EQ_DB, 5 << R_RSIM_EQ_DB_EQN_SHIFT);
    wr(d, A_RSIM_EQ_DB, eq.eqn << R_RSIM_EQ_DB_EQN_SHIFT | 2);
    wr(d, A_RSIM_EQ_DB, 0xffffffff);
    assert_alive(d);
    rsim_stop(d);
}

/* A CQ that overflows: CQ_ERR, nothing overwritten, resumes when drained */
static void test_queue_cq_overflow(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_cqe e;
    TEnv env;
    uint32_t qpn;

    env_setup(d, &env, RSIM_PBL_LEVEL0, 2);         /* holds 3 */
    qpn = env.qp.qpn;
    flush_sends(d, &env, 5, 0x10);
    aeq_expect(d, RSIM_EV_CQ_ERR, env.cqn);
    g_assert_cmpuint(ring_prod(d, &env.cq), ==, 3);
    g_assert_cmpuint(ring_cons(d, &env.qp.sq), ==, 3);
    for (unsigned i = 0; i < 3; i++) {
        elem_read(d, &env.cq, i, &e, sizeof(e));
        cqe_check(&e, 0x10 + i, RSIM_WC_WR_FLUSH_ERR, RSIM_WC_SEND, qpn);
    }
    /* the free slot is untouched */
    elem_read(d, &env.cq, 3, &e, sizeof(e));
    g_assert_cmphex(le64_to_cpu(e.wr_id), ==, 0);
    g_assert_cmpuint(stat_get(d, RSIM_STAT_CQ_OVERFLOW), ==, 1);
    /* another doorbell while still full: no second event */
    sq_doorbell(d, 0, qpn);
    aeq_expect_none(d);

    /* consume all three, ring: the rest arrives */
    env.cq.cons = 3;
    ring_set_cons(d, &env.cq, 3);
    sq_doorbell(d, 0, qpn);
    cq_expect_flush(d, &env.cq, 0x13, RSIM_WC_SEND, qpn);
    cq_expect_flush(d, &env.cq, 0x14, RSIM_WC_SEND, qpn);
    g_assert_cmpuint(ring_prod(d, &env.cq), ==, 1);
    g_assert_cmpuint(ring_cons(d, &env.qp.sq), ==, 5);
    aeq_expect_none(d);

    /* a new overflow is reported again */
    flush_sends(d, &env, 4, 0x20);
    aeq_expect(d, RSIM_EV_CQ_ERR, env.cqn);
    for (unsigned i = 0; i < 3; i++) {
        cq_expect_flush(d, &env.cq, 0x20 + i, RSIM_WC_SEND, qpn);
    }
    sq_doorbell(d, 0, qpn);
    cq_expect_flush(d, &env.cq, 0x23, RSIM_WC_SEND, qpn);
    g_assert_cmpuint(stat_get(d, RSIM_STAT_CQ_OVERFLOW), ==, 2);
    aeq_expect_none(d);
    assert_alive(d);
    rsim_stop(d);
}

/* A CQ whose memory is not accessible: CQ_ERR (data 1), the device lives */
static void test_queue_cq_bad_ring(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_cmd_create_cq c;
    struct rsim_create_resp r;
    TRing cq;
    TEnv env;
    TQp qp;

    env_setup(d, &env, RSIM_PBL_LEVEL0, 3);
    tring_init(d, &cq, RSIM_PBL_LEVEL0, 3, RSIM_CQE_LOG2_SLOT);
    cq_cmd(&c, env.eq.eqn, &cq);
    c.q.addr = cpu_to_le64(UNMAPPED);       /* level 0 is not read here */
    assert_sts(cmd_exec(d, &c, &r), RSIM_STS_OK);
    qp_create(d, &qp, RSIM_QPT_RC, env.pdn, resp_handle(&r),
              RSIM_PBL_LEVEL1);
    qp_rc_to_init(d, qp.qpn);
    post_send(d, &qp.sq, 1, RSIM_WR_SEND);
    post_send(d, &qp.sq, 2, RSIM_WR_SEND);
    qp_move(d, qp.qpn, RSIM_QPS_ERR);
    aeq_expect_data(d, RSIM_EV_CQ_ERR, resp_handle(&r), 1);
    g_assert_cmpuint(ring_cons(d, &qp.sq), ==, 0);
    sq_doorbell(d, 0, qp.qpn);
    aeq_expect_none(d);
    assert_alive(d);
    /* the other CQ still works */
    flush_sends(d, &env, 1, 7);
    cq_expect_flush(d, &env.cq, 7, RSIM_WC_SEND, env.qp.qpn);
    rsim_stop(d);
}

/* An AEQ without room drops events and sets DEV_STATUS.AEQ_OVERFLOW. */
static void test_queue_aeq_overflow(const char *machine)
{
    Rsim *d = rsim_start(machine, NULL, false);
    struct rsim_qp_attr a;
    struct rsim_eqe e;
    TEnv env;

    rsim_reset(d);
    rsim_enable(d, 8, 8, 2);                /* holds one event */
    gid_add_v4(d, 0, 1);
    env_setup(d, &env, RSIM_PBL_LEVEL0, 4);
    attr_rc_rtr(&a);
    qp_modify_ok(d, env.qp.qpn, &a);
    attr_rc_rts(&a);
    qp_modify_ok(d, env.qp.qpn, &a);
    /* the port event fills the AEQ; SQ_DRAINED is dropped */
    attr_init(&a, RSIM_QPS_SQD, RSIM_QP_EN_SQD_ASYNC_NOTIFY);
    a.en_sqd_async_notify = 1;
    qp_modify_ok(d, env.qp.qpn, &a);
    settle(d);
    g_assert_cmphex(rd(d, A_RSIM_DEV_STATUS), ==,
                    DEV_READY | R_RSIM_DEV_STATUS_AEQ_OVERFLOW_MASK);
    g_assert_cmpuint(rd(d, A_RSIM_AEQ_TAIL), ==, 1);
    g_assert_cmphex(qtest_readl(d->qts, d->aeq + 16), ==, 0);
    aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    /* room again: the next event is written, the flag is sticky */
    qp_move(d, env.qp.qpn, RSIM_QPS_RTS);
    qp_modify_ok(d, env.qp.qpn, &a);
    g_assert_true(aeq_poll(d, &e, POLL_US));
    g_assert_cmphex(le32_to_cpu(e.dw0), ==, RSIM_EV_SQ_DRAINED << 8 |
                    R_RSIM_EQE_HDR_PHASE_MASK);
    g_assert_cmpuint(le32_to_cpu(e.object), ==, env.qp.qpn);
    qp_move(d, env.qp.qpn, RSIM_QPS_RTS);
    qp_modify_ok(d, env.qp.qpn, &a);
    g_assert_true(aeq_poll(d, &e, POLL_US));   /* slot 0, phase 0 */
    g_assert_cmphex(le32_to_cpu(e.dw0), ==, RSIM_EV_SQ_DRAINED << 8);
    g_assert_cmphex(rd(d, A_RSIM_DEV_STATUS), ==,
                    DEV_READY | R_RSIM_DEV_STATUS_AEQ_OVERFLOW_MASK);
    rsim_reset(d);
    rsim_stop(d);
}

/*
 * ========================================================================
 * Doorbells
 * ========================================================================
 */

static void test_doorbells(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_cmd_create_cq cc;
    struct rsim_cmd_create_qp qc;
    struct rsim_create_resp r;
    uint32_t pdn, cqn;
    TRing cq;
    TEq eq;
    TQp qp;

    pdn = pd_alloc(d);
    eq_create(d, &eq, 1, 8);
    tring_init(d, &cq, RSIM_PBL_LEVEL0, 4, RSIM_CQE_LOG2_SLOT);
    cq_cmd(&cc, eq.eqn, &cq);
    cc.db_page = cpu_to_le32(3);
    assert_sts(cmd_exec(d, &cc, &r), RSIM_STS_OK);
    cqn = resp_handle(&r);
    qp_rings(d, &qp, RSIM_PBL_LEVEL0);
    qp_cmd(&qc, RSIM_QPT_RC, pdn, cqn, cqn, &qp);
    qc.db_page = cpu_to_le16(3);
    qp.qpn = qp_create_cmd(d, &qc);
    qp_rc_to_init(d, qp.qpn);
    qp_move(d, qp.qpn, RSIM_QPS_ERR);

    /* another user's page: ignored */
    post_send(d, &qp.sq, 1, RSIM_WR_SEND);
    sq_doorbell(d, 5, qp.qpn);
    db(d, 5, A_RSIM_DB_RQ, qp.qpn);
    db(d, 63, A_RSIM_DB_SQ, qp.qpn);
    cq_expect_empty(d, &cq);
    g_assert_cmpuint(ring_cons(d, &qp.sq), ==, 0);
    /* its own page and the kernel's page 0 work */
    sq_doorbell(d, 3, qp.qpn);
    cq_expect_flush(d, &cq, 1, RSIM_WC_SEND, qp.qpn);
    post_send(d, &qp.sq, 2, RSIM_WR_SEND);
    sq_doorbell(d, 0, qp.qpn);
    cq_expect_flush(d, &cq, 2, RSIM_WC_SEND, qp.qpn);

    /* CQ doorbell from a foreign page: the CQ stays disarmed */
    eq_doorbell(d, &eq, true);
    cq_arm_db(d, 4, cqn, RSIM_CQ_ARM_NEXT);
    post_send(d, &qp.sq, 3, RSIM_WR_SEND);
    sq_doorbell(d, 3, qp.qpn);
    cq_expect_flush(d, &cq, 3, RSIM_WC_SEND, qp.qpn);
    eq_expect_none(d, &eq);
    cq_arm_db(d, 3, cqn, RSIM_CQ_ARM_NEXT);
    post_send(d, &qp.sq, 4, RSIM_WR_SEND);
    sq_doorbell(d, 3, qp.qpn);
    cq_expect_flush(d, &cq, 4, RSIM_WC_SEND, qp.qpn);
    eq_expect(d, &eq, RSIM_EV_COMPLETION, cqn);

    /* objects that do not exist, offsets that are not doorbells */
    post_send(d, &qp.sq, 5, RSIM_WR_SEND);
    for (unsigned page = 0; page < 64; page += 21) {
        db(d, page, A_RSIM_DB_SQ, 999);
        db(d, page, A_RSIM_DB_SQ, 0);
        db(d, page, A_RSIM_DB_SQ, 1);
        db(d, page, A_RSIM_DB_SQ, 0xffffffff);
        db(d, page, A_RSIM_DB_RQ, 0x7fffffff);
        db(d, page, A_RSIM_DB_SRQ, 77);
        db(d, page, A_RSIM_DB_SRQ, 0xffffffff);
        db(d, page, A_RSIM_DB_CQ, 0xffffff | RSIM_CQ_ARM_NEXT << 24);
        db(d, page, A_RSIM_DB_CQ, cqn | 3u << 24);
        db(d, page, 0x10, qp.qpn);
        db(d, page, 0xffc, qp.qpn);
        g_assert_cmphex(qpci_io_readl(d->dev, d->bar2,
                                      page * RSIM_DB_PAGE_SIZE), ==, 0);
    }
    cq_expect_empty(d, &cq);
    assert_alive(d);
    /* doorbells while the device is not ready are ignored */
    wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_RESET_MASK);
    sq_doorbell(d, 0, qp.qpn);
    cq_arm_db(d, 0, cqn, RSIM_CQ_ARM_NEXT);
    wr(d, A_RSIM_EQ_DB, R_RSIM_EQ_DB_ARM_MASK);
    g_assert_cmpuint(ring_cons(d, &qp.sq), ==, 4);
    rsim_bringup(d);
    assert_alive(d);
    rsim_stop(d);
}

/*
 * ========================================================================
 * Memory registration and translation
 * ========================================================================
 */

/* The translation a page list must give for byte off of the MR */
static uint64_t pl_addr(const uint64_t *pages, unsigned shift, uint32_t fbo,
                        uint64_t off)
{
    uint64_t pos = off + fbo;

    return pages[pos >> shift] + (pos & ((1ULL << shift) - 1));
}

static uint64_t pl_contig(unsigned shift, uint32_t fbo, uint64_t off,
                          uint64_t len)
{
    uint64_t pos = off + fbo;

    return MIN(len, (1ULL << shift) - (pos & ((1ULL << shift) - 1)));
}

typedef struct TMr {
    uint32_t key;
    uint32_t pdn;
    uint64_t iova, length;
    const uint64_t *pages;
    unsigned shift;
    uint32_t fbo;
} TMr;

static void mr_check_at(Rsim *d, const TMr *m, uint64_t off, uint64_t len)
{
    note("offset 0x%" PRIx64 " length 0x%" PRIx64, off, len);
    xlate_expect(d, m->key, m->pdn, 0, m->iova + off, len,
                 pl_addr(m->pages, m->shift, m->fbo, off),
                 pl_contig(m->shift, m->fbo, off, len));
}

static void test_mr_levels(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_mr_translate_resp r;
    struct rsim_cmd_reg_mr c;
    uint64_t p1[5], p2m[3], list;
    g_autofree uint64_t *p600 = g_new(uint64_t, 600);
    uint32_t pdn = pd_alloc(d);
    uint32_t rkey;
    TMr m;

    /* level 0: contiguous, any address */
    {
        const uint64_t a = 0x1234560040ULL, iova = 0x7f0000000000ULL;
        uint32_t key;

        mr_cmd(&c, pdn, ACC_LW, iova, 10000, RSIM_PBL_LEVEL0, a, 0, 0, 0);
        key = mr_reg(d, &c, &rkey);
        g_assert_cmphex(rkey, ==, 0);
        xlate_expect(d, key, pdn, 0, iova, 100, a, 100);
        xlate_expect(d, key, pdn, ACC_LW, iova, 10000, a, 10000);
        xlate_expect(d, key, pdn, 0, iova + 5000, 1, a + 5000, 1);
        xlate_expect(d, key, pdn, 0, iova + 9999, 1, a + 9999, 1);
        assert_sts(mr_translate(d, key, pdn, 0, iova, 1, &r), RSIM_STS_OK);
        g_assert_cmpuint(r.level, ==, RSIM_PBL_LEVEL0);
        xlate_fail(d, key, pdn, 0, iova + 9999, 2, RSIM_STS_RANGE);
        xlate_fail(d, key, pdn, 0, iova - 1, 1, RSIM_STS_RANGE);
    }

    /* level 1, 4 KiB pages in reverse order, fbo 0x234 */
    for (unsigned i = 0; i < 5; i++) {
        p1[i] = 0x100000000ULL + (4 - i) * 0x5000;
    }
    m = (TMr) {
        .pdn = pdn, .iova = 0x500000000234ULL, .length = 5 * 4096 - 0x234 - 100,
        .pages = p1, .shift = 12, .fbo = 0x234,
    };
    list = pbl_build(d, RSIM_PBL_LEVEL1, p1, 5);
    mr_cmd(&c, pdn, ACC_LW | ACC_RR, m.iova, m.length, RSIM_PBL_LEVEL1, list,
           5, 12, m.fbo);
    m.key = mr_reg(d, &c, &rkey);
    g_assert_cmphex(rkey, ==, m.key);
    mr_check_at(d, &m, 0, 100);
    mr_check_at(d, &m, 0, 10000);                   /* to the page end */
    mr_check_at(d, &m, 6000, 4096);                 /* middle */
    mr_check_at(d, &m, 4096 - 0x234, 5000);         /* page boundary */
    mr_check_at(d, &m, 4096 - 0x234 - 1, 5000);     /* last byte of page 0 */
    mr_check_at(d, &m, m.length - 1, 1);            /* last byte */
    mr_check_at(d, &m, m.length - 4000, 4000);
    assert_sts(mr_translate(d, m.key, pdn, ACC_RR, m.iova, 1, &r),
               RSIM_STS_OK);
    g_assert_cmpuint(r.level, ==, RSIM_PBL_LEVEL1);
    g_assert_cmpuint(r.page_shift, ==, 12);
    xlate_fail(d, m.key, pdn, 0, m.iova + m.length - 1, 2, RSIM_STS_RANGE);
    /* the list is read when translating: a new entry is used at once */
    qtest_writeq(d->qts, list + 8, 0x7770000000ULL);
    p1[1] = 0x7770000000ULL;
    mr_check_at(d, &m, 4096 - 0x234 + 17, 3);

    /* level 1 with 2 MiB pages */
    for (unsigned i = 0; i < 3; i++) {
        p2m[i] = 0x4000000000ULL + i * 3 * (2ULL << 20);
    }
    m = (TMr) {
        .pdn = pdn, .iova = 0x10000, .length = 3 * (2ULL << 20) - 0x1000,
        .pages = p2m, .shift = 21, .fbo = 0x1000,
    };
    mr_cmd(&c, pdn, ACC_LW, m.iova, m.length, RSIM_PBL_LEVEL1,
           pbl_build(d, RSIM_PBL_LEVEL1, p2m, 3), 3, 21, m.fbo);
    m.key = mr_reg(d, &c, NULL);
    mr_check_at(d, &m, 0, m.length);
    mr_check_at(d, &m, (2ULL << 20) - 0x1000, 4096);
    mr_check_at(d, &m, (2ULL << 20) - 0x1001, 4096);
    mr_check_at(d, &m, m.length - 1, 1);
    assert_sts(mr_translate(d, m.key, pdn, 0, m.iova, 1, &r), RSIM_STS_OK);
    g_assert_cmpuint(r.page_shift, ==, 21);

    /* level 2: 600 pages in two leaves, a permutation, fbo 0x10 */
    for (unsigned i = 0; i < 600; i++) {
        p600[i] = 0x200000000ULL + ((i * 7) % 600) * 0x1000ULL;
    }
    m = (TMr) {
        .pdn = pdn, .iova = 0x1000000000ULL, .length = 600 * 4096 - 0x10 - 5,
        .pages = p600, .shift = 12, .fbo = 0x10,
    };
    mr_cmd(&c, pdn, ACC_ALL, m.iova, m.length, RSIM_PBL_LEVEL2,
           pbl_build(d, RSIM_PBL_LEVEL2, p600, 600), 600, 12, m.fbo);
    m.key = mr_reg(d, &c, &rkey);
    g_assert_cmphex(rkey, ==, m.key);
    mr_check_at(d, &m, 0, 4096);
    mr_check_at(d, &m, 511 * 4096 - 0x10, 8192);    /* page 511 */
    mr_check_at(d, &m, 512 * 4096 - 0x10 - 1, 2);   /* end of leaf 0 */
    mr_check_at(d, &m, 512 * 4096 - 0x10, 8192);    /* start of leaf 1 */
    mr_check_at(d, &m, 300 * 4096 + 0x77 - 0x10, 77);
    mr_check_at(d, &m, m.length - 1, 1);
    mr_check_at(d, &m, m.length - 4090, 4090);      /* whole last page */
    assert_sts(mr_translate(d, m.key, pdn, ACC_RA, m.iova, 1, &r),
               RSIM_STS_OK);
    g_assert_cmpuint(r.level, ==, RSIM_PBL_LEVEL2);
    xlate_fail(d, m.key, pdn, 0, m.iova + m.length, 1, RSIM_STS_RANGE);

    /* the PHYS MR covers guest memory with iova == address */
    mr_cmd(&c, pdn, ACC_LW | ACC_RW, 0, 0, 0, 0, 0, 0, 0);
    c.flags = cpu_to_le32(RSIM_MR_FLAG_PHYS);
    m.key = mr_reg(d, &c, &rkey);
    g_assert_cmphex(rkey, ==, m.key);
    xlate_expect(d, m.key, pdn, ACC_RW, 0x12345678, 0x1000, 0x12345678,
                 0x1000);
    xlate_expect(d, m.key, pdn, 0, 0, 1ULL << 40, 0, 1ULL << 40);
    xlate_fail(d, m.key, pdn, 0, 0xffffffffffffff00ULL, 0x200,
               RSIM_STS_RANGE);
    xlate_fail(d, m.key, pdn, ACC_RR, 0x1000, 1, RSIM_STS_ACCESS);
    rsim_stop(d);
}

static void test_mr_errors(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_cmd_reg_mr c;
    struct rsim_cmd_mr_translate tc;
    uint64_t pages[8], list;
    uint32_t pdn = pd_alloc(d), pdn2 = pd_alloc(d);
    uint32_t key, key0;
    const uint64_t iova = 0x40000;

    for (unsigned i = 0; i < 8; i++) {
        pages[i] = 0x300000000ULL + i * 0x3000;
    }
    list = pbl_build(d, RSIM_PBL_LEVEL1, pages, 8);

#define REG_BAD(want)  cmd_expect(d, &c, (want))
    mr_cmd(&c, pdn + 7, ACC_LW, iova, 4096, 1, list, 8, 12, 0);
    REG_BAD(RSIM_STS_BAD_HANDLE);
    mr_cmd(&c, pdn, ACC_LW, iova, 4096, 1, list, 8, 12, 0);
    c.flags = cpu_to_le32(2);
    REG_BAD(RSIM_STS_RESERVED);
    c.flags = cpu_to_le32(0x80000000);
    REG_BAD(RSIM_STS_RESERVED);
    mr_cmd(&c, pdn, ACC_LW, iova, 4096, 1, list, 8, 12, 0);
    c.reserved0 = cpu_to_le16(1);
    REG_BAD(RSIM_STS_RESERVED);
    mr_cmd(&c, pdn, ACC_LW, iova, 4096, 1, list, 8, 12, 0);
    c.reserved[7] = 1;
    REG_BAD(RSIM_STS_RESERVED);
    /* access rights */
    mr_cmd(&c, pdn, ACC_RW, iova, 4096, 1, list, 8, 12, 0);
    REG_BAD(RSIM_STS_INVALID);
    mr_cmd(&c, pdn, ACC_RA | ACC_RR, iova, 4096, 1, list, 8, 12, 0);
    REG_BAD(RSIM_STS_INVALID);
    mr_cmd(&c, pdn, 1u << 6, iova, 4096, 1, list, 8, 12, 0);
    REG_BAD(RSIM_STS_INVALID);
    mr_cmd(&c, pdn, ACC_LW | 0x80000000, iova, 4096, 1, list, 8, 12, 0);
    REG_BAD(RSIM_STS_INVALID);
    /* length and wrap */
    mr_cmd(&c, pdn, ACC_LW, iova, 0, 1, list, 8, 12, 0);
    REG_BAD(RSIM_STS_INVALID);
    mr_cmd(&c, pdn, ACC_LW, iova, (1ULL << 34) + 1, 0, 0x1000, 0, 0, 0);
    REG_BAD(RSIM_STS_LIMIT);
    mr_cmd(&c, pdn, ACC_LW, 0xfffffffffffff000ULL, 0x2000, 1, list, 8, 12, 0);
    REG_BAD(RSIM_STS_RANGE);
    mr_cmd(&c, pdn, ACC_LW, 2, 0xffffffffffffffffULL, 1, list, 8, 12, 0);
    REG_BAD(RSIM_STS_RANGE);
    /* level 0 */
    mr_cmd(&c, pdn, ACC_LW, iova, 4096, 0, 0x1000, 1, 0, 0);
    REG_BAD(RSIM_STS_INVALID);
    mr_cmd(&c, pdn, ACC_LW, iova, 4096, 0, 0x1000, 0, 0, 1);
    REG_BAD(RSIM_STS_INVALID);
    mr_cmd(&c, pdn, ACC_LW, iova, 0x2000, 0, 0xfffffffffffff000ULL, 0, 0, 0);
    REG_BAD(RSIM_STS_RANGE);
    /* levels 1 and 2 */
    mr_cmd(&c, pdn, ACC_LW, iova, 4 * 4096, 1, list, 3, 12, 0);
    REG_BAD(RSIM_STS_RANGE);
    mr_cmd(&c, pdn, ACC_LW, iova, 4 * 4096, 1, list, 4, 12, 1);
    REG_BAD(RSIM_STS_RANGE);
    mr_cmd(&c, pdn, ACC_LW, iova, 4096, 1, list, 8193, 12, 0);
    REG_BAD(RSIM_STS_LIMIT);
    mr_cmd(&c, pdn, ACC_LW, iova, 4096, 2, list, 8192 * 512 + 1, 12, 0);
    REG_BAD(RSIM_STS_LIMIT);
    mr_cmd(&c, pdn, ACC_LW, iova, 4096, 1, list, 8, 13, 0);
    REG_BAD(RSIM_STS_INVALID);
    mr_cmd(&c, pdn, ACC_LW, iova, 4096, 1, list, 8, 11, 0);
    REG_BAD(RSIM_STS_INVALID);
    mr_cmd(&c, pdn, ACC_LW, iova, 4096, 1, list, 8, 31, 0);
    REG_BAD(RSIM_STS_INVALID);
    mr_cmd(&c, pdn, ACC_LW, iova, 4096, 1, list, 8, 0xff, 0);
    REG_BAD(RSIM_STS_INVALID);
    mr_cmd(&c, pdn, ACC_LW, iova, 4096, 1, list, 8, 12, 4096);
    REG_BAD(RSIM_STS_INVALID);
    mr_cmd(&c, pdn, ACC_LW, iova, 4096, 1, list + 4, 8, 12, 0);
    REG_BAD(RSIM_STS_INVALID);
    mr_cmd(&c, pdn, ACC_LW, iova, 4096, 1, 0, 8, 12, 0);
    REG_BAD(RSIM_STS_INVALID);
    mr_cmd(&c, pdn, ACC_LW, iova, 4096, 3, list, 8, 12, 0);
    REG_BAD(RSIM_STS_INVALID);
    /* PHYS takes nothing else */
    mr_cmd(&c, pdn, ACC_LW, 1, 0, 0, 0, 0, 0, 0);
    c.flags = cpu_to_le32(RSIM_MR_FLAG_PHYS);
    REG_BAD(RSIM_STS_INVALID);
    mr_cmd(&c, pdn, ACC_LW, 0, 4096, 0, 0, 0, 0, 0);
    c.flags = cpu_to_le32(RSIM_MR_FLAG_PHYS);
    REG_BAD(RSIM_STS_INVALID);
    mr_cmd(&c, pdn, ACC_LW, 0, 0, 1, 0, 0, 0, 0);
    c.flags = cpu_to_le32(RSIM_MR_FLAG_PHYS);
    REG_BAD(RSIM_STS_INVALID);
    mr_cmd(&c, pdn, ACC_LW, 0, 0, 0, 0, 0, 12, 0);
    c.flags = cpu_to_le32(RSIM_MR_FLAG_PHYS);
    REG_BAD(RSIM_STS_INVALID);
    mr_cmd(&c, pdn, ACC_LW, 0, 0, 0, 0x1000, 0, 0, 0);
    c.flags = cpu_to_le32(RSIM_MR_FLAG_PHYS);
    REG_BAD(RSIM_STS_INVALID);
    mr_cmd(&c, pdn, ACC_LW, 0, 0, 0, 0, 0, 0, 64);
    c.flags = cpu_to_le32(RSIM_MR_FLAG_PHYS);
    REG_BAD(RSIM_STS_INVALID);
#undef REG_BAD
    /* boundaries that are accepted; the list is not read by REG_MR */
    mr_cmd(&c, pdn, ACC_LW, iova, 1ULL << 34, 0, 0x100000, 0, 0, 0);
    cmd_expect(d, &c, RSIM_STS_OK);
    mr_cmd(&c, pdn, ACC_LW, iova, 4096, 1, UNMAPPED, 8192, 12, 4095);
    cmd_expect(d, &c, RSIM_STS_OK);
    mr_cmd(&c, pdn, ACC_LW, 0xffffffffffffe000ULL, 0x2000, 1, list, 2, 12,
           0);
    cmd_expect(d, &c, RSIM_STS_OK);

    /* translation errors on a local-write MR over 8 pages */
    mr_cmd(&c, pdn, ACC_LW, iova, 8 * 4096, 1, list, 8, 12, 0);
    key = mr_reg(d, &c, NULL);
    xlate_expect(d, key, pdn, ACC_LW, iova + 8 * 4096 - 1, 1,
                 pages[7] + 4095, 1);
    xlate_fail(d, key, pdn, 0, iova - 1, 1, RSIM_STS_RANGE);
    xlate_fail(d, key, pdn, 0, iova - 1, 2, RSIM_STS_RANGE);
    xlate_fail(d, key, pdn, 0, 0, 1, RSIM_STS_RANGE);
    xlate_fail(d, key, pdn, 0, iova + 8 * 4096 - 10, 11, RSIM_STS_RANGE);
    xlate_fail(d, key, pdn, 0, iova + 8 * 4096, 1, RSIM_STS_RANGE);
    xlate_fail(d, key, pdn, 0, iova + 10, 0xfffffffffffffffaULL,
               RSIM_STS_RANGE);
    xlate_fail(d, key, pdn, 0, 0xffffffffffffff00ULL, 0x1000,
               RSIM_STS_RANGE);
    xlate_fail(d, key ^ 1, pdn, 0, iova, 1, RSIM_STS_ACCESS);
    xlate_fail(d, key ^ 0x80, pdn, 0, iova, 1, RSIM_STS_ACCESS);
    xlate_fail(d, 0xffffff00 | (key & 0xff), pdn, 0, iova, 1,
               RSIM_STS_ACCESS);
    xlate_fail(d, 0, pdn, 0, iova, 1, RSIM_STS_ACCESS);
    xlate_fail(d, key, pdn2, 0, iova, 1, RSIM_STS_ACCESS);
    xlate_fail(d, key, pdn + 100, 0, iova, 1, RSIM_STS_ACCESS);
    xlate_fail(d, key, pdn, ACC_RW, iova, 1, RSIM_STS_ACCESS);
    xlate_fail(d, key, pdn, ACC_RR, iova, 1, RSIM_STS_ACCESS);
    xlate_fail(d, key, pdn, ACC_RA, iova, 1, RSIM_STS_ACCESS);
    xlate_fail(d, key, pdn, 1u << 6, iova, 1, RSIM_STS_INVALID);
    CMD_INIT(tc, RSIM_CMD_MR_TRANSLATE);
    tc.key = cpu_to_le32(key);
    tc.pdn = cpu_to_le32(pdn);
    tc.iova = cpu_to_le64(iova);
    tc.length = cpu_to_le64(1);
    tc.reserved[31] = 1;
    cmd_expect(d, &tc, RSIM_STS_RESERVED);
    /* zero-length remote READ/WRITE: no key check (IBTA) */
    {
        struct rsim_mr_translate_resp r;

        assert_sts(mr_translate(d, 0x12345678, pdn + 9, ACC_RR, 0, 0, &r),
                   RSIM_STS_OK);
        g_assert_cmphex(le64_to_cpu(r.contig), ==, 0);
        assert_sts(mr_translate(d, 0, pdn, ACC_RW, UNMAPPED, 0, &r),
                   RSIM_STS_OK);
        g_assert_cmphex(le64_to_cpu(r.contig), ==, 0);
        xlate_fail(d, 0x12345678, pdn, 0, 0, 0, RSIM_STS_ACCESS);
        xlate_fail(d, 0x12345678, pdn, ACC_LW, 0, 0, RSIM_STS_ACCESS);
        xlate_fail(d, 0x12345678, pdn, ACC_RA, 0, 0, RSIM_STS_ACCESS);
        xlate_fail(d, key, pdn, ACC_RR, iova, 1, RSIM_STS_ACCESS);
    }
    /* a local-read-only MR refuses local writes */
    key0 = mr_reg_l0(d, pdn, 0, 0x100000, 4096);
    xlate_expect(d, key0, pdn, 0, 0x100000, 16, 0x100000, 16);
    xlate_fail(d, key0, pdn, ACC_LW, 0x100000, 16, RSIM_STS_ACCESS);

    /* a bad page list entry fails only the accesses that use it */
    qtest_writeq(d->qts, list + 2 * 8, pages[2] | 0x8);
    xlate_fail(d, key, pdn, 0, iova + 2 * 4096 + 5, 1, RSIM_STS_DMA);
    xlate_expect(d, key, pdn, 0, iova + 4096, 4096, pages[1], 4096);
    xlate_expect(d, key, pdn, 0, iova + 3 * 4096, 1, pages[3], 1);
    qtest_writeq(d->qts, list + 2 * 8, pages[2]);
    xlate_expect(d, key, pdn, 0, iova + 2 * 4096 + 5, 1, pages[2] + 5, 1);
    /* a list outside guest memory */
    mr_cmd(&c, pdn, ACC_LW, iova, 4096, 1, UNMAPPED, 1, 12, 0);
    key0 = mr_reg(d, &c, NULL);
    xlate_fail(d, key0, pdn, 0, iova, 1, RSIM_STS_DMA);
    /* a level 2 root with a missing second leaf */
    {
        g_autofree uint64_t *p = g_new(uint64_t, 600);
        uint64_t root;

        for (unsigned i = 0; i < 600; i++) {
            p[i] = 0x500000000ULL + i * 0x1000ULL;
        }
        root = pbl_build(d, RSIM_PBL_LEVEL2, p, 600);
        mr_cmd(&c, pdn, ACC_LW, 0, 600 * 4096, 2, root, 600, 12, 0);
        key0 = mr_reg(d, &c, NULL);
        xlate_expect(d, key0, pdn, 0, 513 * 4096, 1, p[513], 1);
        qtest_writeq(d->qts, root + 8, 0);
        xlate_fail(d, key0, pdn, 0, 513 * 4096, 1, RSIM_STS_DMA);
        qtest_writeq(d->qts, root + 8, UNMAPPED);
        xlate_fail(d, key0, pdn, 0, 513 * 4096, 1, RSIM_STS_DMA);
        qtest_writeq(d->qts, root + 8, 0x10004);
        xlate_fail(d, key0, pdn, 0, 513 * 4096, 1, RSIM_STS_DMA);
        xlate_expect(d, key0, pdn, 0, 511 * 4096, 1, p[511], 1);
    }

    /* deregistered: invalid key */
    handle_expect(d, RSIM_CMD_DEREG_MR, key, RSIM_STS_OK);
    {
        struct rsim_mr_translate_resp r;

        assert_sts(mr_translate(d, key, pdn, 0, iova, 1, &r),
                   RSIM_STS_ACCESS);
        g_assert_cmpuint(r.state, ==, RSIM_MR_STATE_INVALID);
    }
    handle_expect(d, RSIM_CMD_DEREG_MR, key, RSIM_STS_BAD_HANDLE);
    rsim_stop(d);
}

static void test_mr_keys(const char *machine)
{
    Rsim *d = rsim_up(machine, "max-mr=4");
    struct rsim_cmd_alloc_stag sc;
    struct rsim_mr_translate_resp tr;
    struct rsim_create_resp r;
    struct rsim_cmd_reg_mr c;
    uint32_t pdn = pd_alloc(d);
    uint64_t pbl = galloc(d, PAGE);
    uint32_t k1, k2, k3, rkey, old, stag;

    /* index 0 is never used; rkey only with remote rights */
    mr_cmd(&c, pdn, ACC_LW, 0x1000, 4096, 0, 0x1000, 0, 0, 0);
    k1 = mr_reg(d, &c, &rkey);
    g_assert_cmpuint(RSIM_KEY_INDEX(k1), ==, 1);
    g_assert_cmphex(rkey, ==, 0);
    mr_cmd(&c, pdn, ACC_RR, 0x1000, 4096, 0, 0x1000, 0, 0, 0);
    k2 = mr_reg(d, &c, &rkey);
    g_assert_cmpuint(RSIM_KEY_INDEX(k2), ==, 2);
    g_assert_cmphex(rkey, ==, k2);
    mr_cmd(&c, pdn, ACC_LW | ACC_RA, 0x1000, 4096, 0, 0x1000, 0, 0, 0);
    k3 = mr_reg(d, &c, &rkey);
    g_assert_cmpuint(RSIM_KEY_INDEX(k3), ==, 3);
    g_assert_cmphex(rkey, ==, k3);
    /* table full */
    cmd_expect(d, &c, RSIM_STS_NO_RESOURCES);
    CMD_INIT(sc, RSIM_CMD_ALLOC_STAG);
    sc.pdn = cpu_to_le32(pdn);
    sc.max_pages = cpu_to_le32(16);
    sc.pbl_addr = cpu_to_le64(pbl);
    cmd_expect(d, &sc, RSIM_STS_NO_RESOURCES);

    /* DEREG_MR needs the exact key */
    handle_expect(d, RSIM_CMD_DEREG_MR, k2 ^ 1, RSIM_STS_BAD_HANDLE);
    handle_expect(d, RSIM_CMD_DEREG_MR, k2 & 0xff, RSIM_STS_BAD_HANDLE);
    handle_expect(d, RSIM_CMD_DEREG_MR, 4 << 8 | (k2 & 0xff),
                  RSIM_STS_BAD_HANDLE);
    handle_expect(d, RSIM_CMD_DEREG_MR, 0xffffffff, RSIM_STS_BAD_HANDLE);
    /* re-registering an index gives a new variant; the old key is dead */
    old = k2;
    for (unsigned i = 0; i < 20; i++) {
        handle_expect(d, RSIM_CMD_DEREG_MR, old, RSIM_STS_OK);
        k2 = mr_reg(d, &c, NULL);
        g_assert_cmpuint(RSIM_KEY_INDEX(k2), ==, 2);
        g_assert_cmphex(k2, !=, old);
        xlate_fail(d, old, pdn, 0, 0x1000, 1, RSIM_STS_ACCESS);
        xlate_expect(d, k2, pdn, 0, 0x1000, 1, 0x1000, 1);
        old = k2;
    }

    /* ALLOC_STAG: a FREE key */
    handle_expect(d, RSIM_CMD_DEREG_MR, k1, RSIM_STS_OK);
    CMD_INIT(sc, RSIM_CMD_ALLOC_STAG);
    sc.pdn = cpu_to_le32(pdn);
    sc.pbl_addr = cpu_to_le64(pbl);
    sc.max_pages = 0;
    cmd_expect(d, &sc, RSIM_STS_INVALID);
    sc.max_pages = cpu_to_le32(513);
    cmd_expect(d, &sc, RSIM_STS_LIMIT);
    sc.max_pages = cpu_to_le32(512);
    sc.pbl_addr = cpu_to_le64(pbl + 4);
    cmd_expect(d, &sc, RSIM_STS_INVALID);
    sc.pbl_addr = 0;
    cmd_expect(d, &sc, RSIM_STS_INVALID);
    sc.pbl_addr = cpu_to_le64(pbl);
    sc.pdn = cpu_to_le32(pdn + 1);
    cmd_expect(d, &sc, RSIM_STS_BAD_HANDLE);
    sc.pdn = cpu_to_le32(pdn);
    sc.reserved0 = cpu_to_le32(1);
    cmd_expect(d, &sc, RSIM_STS_RESERVED);
    sc.reserved0 = 0;
    sc.reserved[39] = 1;
    cmd_expect(d, &sc, RSIM_STS_RESERVED);
    sc.reserved[39] = 0;
    assert_sts(cmd_exec(d, &sc, &r), RSIM_STS_OK);
    stag = resp_handle(&r);
    g_assert_cmpuint(RSIM_KEY_INDEX(stag), ==, 1);
    g_assert_cmphex(le32_to_cpu(r.handle2), ==, stag);
    g_assert_cmphex(stag, !=, k1);
    assert_sts(mr_translate(d, stag, pdn, 0, 0, 1, &tr), RSIM_STS_ACCESS);
    g_assert_cmpuint(tr.state, ==, RSIM_MR_STATE_FREE);
    assert_sts(mr_translate(d, k3, pdn, 0, 0x1000, 1, &tr), RSIM_STS_OK);
    g_assert_cmpuint(tr.state, ==, RSIM_MR_STATE_VALID);
    /* the PD is in use by the stag */
    handle_expect(d, RSIM_CMD_DEALLOC_PD, pdn, RSIM_STS_BUSY);
    handle_expect(d, RSIM_CMD_DEREG_MR, stag, RSIM_STS_OK);
    assert_sts(mr_translate(d, stag, pdn, 0, 0, 1, &tr), RSIM_STS_ACCESS);
    g_assert_cmpuint(tr.state, ==, RSIM_MR_STATE_INVALID);
    handle_expect(d, RSIM_CMD_DEREG_MR, k2, RSIM_STS_OK);
    handle_expect(d, RSIM_CMD_DEREG_MR, k3, RSIM_STS_OK);
    handle_expect(d, RSIM_CMD_DEALLOC_PD, pdn, RSIM_STS_OK);
    rsim_stop(d);
}

/* The smallest tables the properties allow */
static void test_cmd_min_tables(const char *machine)
{
    Rsim *d = rsim_start(machine, "max-qp=2,max-cq=1,max-srq=1,max-mr=1,"
                         "max-pd=1,max-ah=2,max-gid=1,msix-vectors=2,"
                         "db-pages=1,max-sge=1,max-qp-wr=1,max-cqe=1,"
                         "max-inline=0,max-rd-atom=1", false);
    static const RegVal regs[] = {
        { A_RSIM_CAP_MAX_QP, 2 }, { A_RSIM_CAP_MAX_CQ, 1 },
        { A_RSIM_CAP_MAX_SRQ, 1 }, { A_RSIM_CAP_MAX_MR, 1 },
        { A_RSIM_CAP_MAX_PD, 1 }, { A_RSIM_CAP_MAX_AH, 2 },
        { A_RSIM_CAP_MAX_GID, 1 }, { A_RSIM_CAP_MAX_EQ, 1 },
        { A_RSIM_DB_PAGES, 1 }, { A_RSIM_MSIX_VECTORS, 2 },
        { A_RSIM_CAP_MAX_SEND_SGE, 1 }, { A_RSIM_CAP_MAX_QP_WR, 1 },
        { A_RSIM_CAP_MAX_CQE, 1 }, { A_RSIM_CAP_MAX_INLINE, 0 },
        { A_RSIM_CAP_MAX_RD_ATOM, 1 },
    };
    struct rsim_cmd_create_qp qc;
    struct rsim_cmd_create_cq cc;
    struct rsim_cmd_create_eq ec;
    struct rsim_cmd_create_srq sc;
    struct rsim_cmd_create_ah ac;
    struct rsim_cmd_alloc_stag stc;
    struct rsim_cmd_reg_mr mc;
    struct rsim_cmd_gid gc;
    struct rsim_admin_cmd c;
    uint8_t gid[16];
    uint32_t pdn, cqn;
    TRing cq, srq;
    TEq eq;
    TQp qp;

    check_regs(d, regs, ARRAY_SIZE(regs));
    g_assert_cmpuint(d->bar2_size, ==, 4096);
    g_assert_cmpuint(qpci_msix_table_size(d->dev), ==, 2);
    rsim_bringup(d);

    pdn = pd_alloc(d);
    CMD_INIT(c, RSIM_CMD_ALLOC_PD);
    cmd_expect(d, &c, RSIM_STS_NO_RESOURCES);
    eq_cmd(&ec, 2, galloc(d, 64), 4);
    cmd_expect(d, &ec, RSIM_STS_INVALID);
    eq_create(d, &eq, 1, 4);
    eq_cmd(&ec, 1, galloc(d, 64), 4);
    cmd_expect(d, &ec, RSIM_STS_NO_RESOURCES);

    /* max-cqe=1: depth up to 2 */
    tring_init(d, &cq, RSIM_PBL_LEVEL0, 2, RSIM_CQE_LOG2_SLOT);
    cq_cmd(&cc, eq.eqn, &cq);
    cmd_expect(d, &cc, RSIM_STS_LIMIT);
    cq_cmd(&cc, eq.eqn, &cq);
    cc.db_page = cpu_to_le32(1);
    cmd_expect(d, &cc, RSIM_STS_INVALID);
    cqn = cq_create(d, &cq, eq.eqn, RSIM_PBL_LEVEL1, 1);
    cq_cmd(&cc, eq.eqn, &cq);
    cmd_expect(d, &cc, RSIM_STS_NO_RESOURCES);

    /* max-qp=2: only the GSI QP; max-qp-wr=1: depth 2 */
    tring_init(d, &qp.sq, RSIM_PBL_LEVEL0, 1, 8);
    tring_init(d, &qp.rq, RSIM_PBL_LEVEL0, 1, 6);
    qp_cmd(&qc, RSIM_QPT_RC, pdn, cqn, cqn, &qp);
    cmd_expect(d, &qc, RSIM_STS_NO_RESOURCES);
    qp_cmd(&qc, RSIM_QPT_GSI, pdn, cqn, cqn, &qp);
    qc.max_inline = cpu_to_le16(1);
    cmd_expect(d, &qc, RSIM_STS_LIMIT);
    qp_cmd(&qc, RSIM_QPT_GSI, pdn, cqn, cqn, &qp);
    qc.sq.log2_depth = 2;
    cmd_expect(d, &qc, RSIM_STS_LIMIT);
    qp_cmd(&qc, RSIM_QPT_GSI, pdn, cqn, cqn, &qp);
    g_assert_cmpuint(qp_create_cmd(d, &qc), ==, RSIM_GSI_QPN);
    cmd_expect(d, &qc, RSIM_STS_EXISTS);
    qp_cmd(&qc, RSIM_QPT_UD, pdn, cqn, cqn, &qp);
    cmd_expect(d, &qc, RSIM_STS_NO_RESOURCES);

    tring_init(d, &srq, RSIM_PBL_LEVEL0, 1, 6);
    srq_cmd(&sc, pdn, &srq, 1, 1);
    cmd_expect(d, &sc, RSIM_STS_OK);
    cmd_expect(d, &sc, RSIM_STS_NO_RESOURCES);

    /* max-mr=1: index 0 is never used, so no MR at all */
    mr_cmd(&mc, pdn, ACC_LW, 0x1000, 4096, 0, 0x1000, 0, 0, 0);
    cmd_expect(d, &mc, RSIM_STS_NO_RESOURCES);
    CMD_INIT(stc, RSIM_CMD_ALLOC_STAG);
    stc.pdn = cpu_to_le32(pdn);
    stc.max_pages = cpu_to_le32(1);
    stc.pbl_addr = cpu_to_le64(d->scratch);
    cmd_expect(d, &stc, RSIM_STS_NO_RESOURCES);

    /* one GID, one AH */
    gid_v4(gid, 10, 0, 0, 1);
    gid_cmd(&gc, RSIM_CMD_ADD_GID, 1, gid);
    cmd_expect(d, &gc, RSIM_STS_LIMIT);
    gid_add_v4(d, 0, 1);
    ah_cmd(&ac, pdn);
    cmd_expect(d, &ac, RSIM_STS_OK);
    cmd_expect(d, &ac, RSIM_STS_NO_RESOURCES);
    assert_alive(d);
    rsim_stop(d);
}

/* Migration of RDMA state is not supported: it is refused cleanly. */
static void test_pci_migration(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    QDict *resp;

    resp = qtest_qmp(d->qts, "{'execute': 'migrate', 'arguments': "
                     "{'uri': 'exec:cat > /dev/null'}}");
    g_assert_true(qdict_haskey(resp, "error"));
    qobject_unref(resp);
    assert_alive(d);
    rsim_stop(d);
}

/* A completion EQ in memory that does not exist: the device goes fatal. */
static void test_queue_eq_bad_ring(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_cmd_create_eq ec;
    struct rsim_cmd_create_cq cc;
    struct rsim_create_resp r;
    uint32_t pdn, cqn;
    TRing cq;
    TQp qp;

    pdn = pd_alloc(d);
    eq_cmd(&ec, 1, UNMAPPED, 8);
    assert_sts(cmd_exec(d, &ec, &r), RSIM_STS_OK);
    tring_init(d, &cq, RSIM_PBL_LEVEL0, 3, RSIM_CQE_LOG2_SLOT);
    cq_cmd(&cc, resp_handle(&r), &cq);
    assert_sts(cmd_exec(d, &cc, &r), RSIM_STS_OK);
    cqn = resp_handle(&r);
    qp_create(d, &qp, RSIM_QPT_RC, pdn, cqn, RSIM_PBL_LEVEL0);
    qp_rc_to_init(d, qp.qpn);
    qp_move(d, qp.qpn, RSIM_QPS_ERR);
    /* no event without arming: nothing happens */
    post_send(d, &qp.sq, 1, RSIM_WR_SEND);
    sq_doorbell(d, 0, qp.qpn);
    cq_expect_flush(d, &cq, 1, RSIM_WC_SEND, qp.qpn);
    assert_alive(d);
    /* the event write fails: DEVICE_FATAL (EQ_DMA), READY drops */
    cq_arm_db(d, 0, cqn, RSIM_CQ_ARM_NEXT);
    post_send(d, &qp.sq, 2, RSIM_WR_SEND);
    sq_doorbell(d, 0, qp.qpn);
    cq_expect_flush(d, &cq, 2, RSIM_WC_SEND, qp.qpn);
    g_assert_cmphex(rd(d, A_RSIM_DEV_STATUS), ==,
                    FATAL_STATUS(RSIM_FATAL_EQ_DMA));
    aeq_expect_data(d, RSIM_EV_DEVICE_FATAL, 0, RSIM_FATAL_EQ_DMA);
    /* fatal: commands are not executed, doorbells ignored */
    {
        struct rsim_admin_cmd c;
        struct rsim_admin_cqe cqe;

        CMD_INIT(c, RSIM_CMD_NOP);
        aq_put(d, &c);
        wr(d, A_RSIM_AQ_TAIL, d->aq_tail);
        post_send(d, &qp.sq, 3, RSIM_WR_SEND);
        sq_doorbell(d, 0, qp.qpn);
        settle(d);
        g_assert_false(acq_poll(d, &cqe, 0));
        cq_expect_empty(d, &cq);
    }
    rsim_bringup(d);
    assert_alive(d);
    rsim_stop(d);
}

/* Ring indices and WQE contents are the guest's: any value is survived. */
static void test_hostile_rings(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_send_wqe w;
    struct rsim_cqe e;
    TEnv env;

    env_setup(d, &env, RSIM_PBL_LEVEL1, 5);
    qp_move(d, env.qp.qpn, RSIM_QPS_ERR);
    /* indices are masked: 0xfffffff5 is 5 in a ring of 8 */
    ring_set_prod(d, &env.qp.sq, 0xfffffff5);
    ring_set_cons(d, &env.cq, 0xffffff00);
    sq_doorbell(d, 0, env.qp.qpn);
    settle(d);
    g_assert_cmpuint(ring_prod(d, &env.cq), ==, 5);
    g_assert_cmpuint(ring_cons(d, &env.qp.sq), ==, 5);
    /* garbage WQEs: unknown opcodes complete as SEND */
    memset(&w, 0xff, sizeof(w));
    elem_write(d, &env.qp.sq, 5, &w, sizeof(w));
    ring_set_prod(d, &env.qp.sq, 6);
    db(d, 0, A_RSIM_DB_RQ, env.qp.qpn);
    settle(d);
    elem_read(d, &env.cq, 5, &e, sizeof(e));
    cqe_check(&e, 0xffffffffffffffffULL, RSIM_WC_WR_FLUSH_ERR, RSIM_WC_SEND,
              env.qp.qpn);
    /* a CQ consumer index just ahead of the producer: the CQ is full */
    ring_set_cons(d, &env.cq, 7);
    ring_set_prod(d, &env.qp.sq, 0);            /* two more WQEs */
    sq_doorbell(d, 0, env.qp.qpn);
    aeq_expect(d, RSIM_EV_CQ_ERR, env.cqn);
    g_assert_cmpuint(ring_cons(d, &env.qp.sq), ==, 6);
    g_assert_cmpuint(ring_prod(d, &env.cq), ==, 6);
    ring_set_cons(d, &env.cq, 6);
    sq_doorbell(d, 0, env.qp.qpn);
    settle(d);
    g_assert_cmpuint(ring_cons(d, &env.qp.sq), ==, 0);
    g_assert_cmpuint(ring_prod(d, &env.cq), ==, 8);
    /* an RQ producer index beyond the ring: masked to 7 */
    ring_set_prod(d, &env.qp.rq, 0xffffffff);
    db(d, 0, A_RSIM_DB_RQ, env.qp.qpn);
    settle(d);
    g_assert_cmpuint(ring_cons(d, &env.qp.rq), ==, 7);
    g_assert_cmpuint(ring_prod(d, &env.cq), ==, 15);
    aeq_expect_none(d);
    assert_alive(d);
    /* RESET puts the rings in order again */
    qp_move(d, env.qp.qpn, RSIM_QPS_RESET);
    g_assert_cmpuint(ring_prod(d, &env.qp.rq), ==, 0);
    g_assert_cmpuint(ring_cons(d, &env.qp.rq), ==, 0);
    assert_alive(d);
    rsim_stop(d);
}

/*
 * ========================================================================
 * Hostile input
 * ========================================================================
 */

static const uint8_t all_opcodes[] = {
    RSIM_CMD_NOP, RSIM_CMD_QUERY_DEVICE, RSIM_CMD_QUERY_PORT,
    RSIM_CMD_SET_PORT, RSIM_CMD_QUERY_STATS, RSIM_CMD_CREATE_EQ,
    RSIM_CMD_DESTROY_EQ, RSIM_CMD_CREATE_ETHQ, RSIM_CMD_DESTROY_ETHQ,
    RSIM_CMD_ALLOC_PD, RSIM_CMD_DEALLOC_PD, RSIM_CMD_CREATE_CQ,
    RSIM_CMD_RESIZE_CQ, RSIM_CMD_DESTROY_CQ, RSIM_CMD_ARM_CQ,
    RSIM_CMD_CREATE_QP, RSIM_CMD_MODIFY_QP, RSIM_CMD_QUERY_QP,
    RSIM_CMD_DESTROY_QP, RSIM_CMD_CREATE_SRQ, RSIM_CMD_MODIFY_SRQ,
    RSIM_CMD_QUERY_SRQ, RSIM_CMD_DESTROY_SRQ, RSIM_CMD_CREATE_AH,
    RSIM_CMD_DESTROY_AH, RSIM_CMD_REG_MR, RSIM_CMD_DEREG_MR,
    RSIM_CMD_ALLOC_STAG, RSIM_CMD_MR_TRANSLATE, RSIM_CMD_ADD_GID,
    RSIM_CMD_DEL_GID,
};

/*
 * The random generator of a test subprocess.  Its seed comes from the
 * parent's g_test_rand_int() (RSIM_TEST_CHILD_SEED), so a run with the
 * same --seed repeats exactly.
 */
static GRand *rng;

static uint32_t rnd(void)
{
    return g_rand_int(rng);
}

static int32_t rnd_range(int32_t begin, int32_t end)
{
    return g_rand_int_range(rng, begin, end);
}

/*
 * A random dword biased towards values that reach deep into the
 * commands.  Never an address inside the RAM the test uses (1 MiB ..):
 * the low dword of an address is < 16 or >= 2 GiB.
 */
static uint32_t rand_dword(void)
{
    switch (rnd_range(0, 5)) {
    case 0:
        return 0;
    case 1:
        return rnd_range(0, 16);
    case 2:
        return rnd_range(0, 16) << 8 |
               rnd_range(0, 16);
    case 3:
        return 0xffffffff;
    default:
        return rnd() | 0x80000000;
    }
}

static void check_status_range(unsigned st)
{
    g_assert_cmpuint(st, <=, RSIM_STS_EXISTS);
}

/* Seeded random commands: every one completes with a defined status. */
static void test_hostile_garbage(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_qp_attr a, before, after;
    unsigned counts[256] = { 0 };
    TEnv env;

    gid_add_v4(d, 0, 1);
    env_setup(d, &env, RSIM_PBL_LEVEL0, 4);
    for (unsigned i = 0; i < 600; i++) {
        uint32_t cmd[16];
        unsigned st;

        if (rnd_range(0, 3)) {
            for (unsigned k = 1; k < 16; k++) {
                cmd[k] = cpu_to_le32(rand_dword());
            }
        } else {
            /* mostly zero: commands with few parameters get through */
            memset(cmd, 0, sizeof(cmd));
            cmd[rnd_range(1, 16)] = cpu_to_le32(rand_dword());
        }
        if (rnd_range(0, 4)) {
            cmd[0] = all_opcodes[rnd_range(0,
                                 ARRAY_SIZE(all_opcodes))];
        } else {
            cmd[0] = rnd_range(0, 256);
        }
        if (!rnd_range(0, 8)) {
            cmd[0] |= rnd_range(1, 256) << 8;
        }
        if (rnd_range(0, 2)) {
            /* clear the tail, where most reserved fields are */
            memset(&cmd[rnd_range(4, 16)], 0, 4);
            memset(&cmd[12], 0, 16);
        }
        cmd[0] = cpu_to_le32(cmd[0]);
        st = cmd_exec(d, cmd, NULL);
        check_status_range(st);
        counts[st]++;
        if (st != RSIM_STS_OK) {
            assert_alive(d);
        }
    }
    for (unsigned st = 0; st <= RSIM_STS_EXISTS; st++) {
        g_test_message("%-12s %u", sts_name(st), counts[st]);
    }
    g_assert_cmpuint(counts[RSIM_STS_OK], >, 0);
    assert_alive(d);

    /* random attribute blocks: a refused modify changes nothing */
    for (unsigned i = 0; i < 300; i++) {
        uint32_t *w = (uint32_t *)&a;
        unsigned st;

        for (unsigned k = 0; k < sizeof(a) / 4; k++) {
            w[k] = cpu_to_le32(rand_dword());
        }
        attr_set_mask(&a, rnd() &
                      (rnd_range(0, 8) ? RSIM_QP_ATTR_SUPPORTED
                                                   : 0xffffffff));
        a.qp_state = rnd_range(0, 8);
        a.av.sgid_index = rnd_range(0, 2);
        a.av.network_type = rnd_range(0, 3);
        if (rnd_range(0, 8)) {
            a.reserved0 = 0;
            memset(a.reserved1, 0, sizeof(a.reserved1));
            a.av.reserved = 0;
        }
        qp_query(d, env.qp.qpn, &before);
        st = qp_modify(d, env.qp.qpn, &a);
        check_status_range(st);
        g_assert_cmpuint(st, !=, RSIM_STS_DMA);
        if (st != RSIM_STS_OK) {
            assert_alive(d);
            qp_query(d, env.qp.qpn, &after);
            g_assert_cmpmem(&before, sizeof(before), &after, sizeof(after));
        }
    }
    /* a reset after all that leaves a working device */
    rsim_bringup(d);
    assert_alive(d);
    g_assert_cmpuint(pd_alloc(d), ==, 0);
    rsim_stop(d);
}

typedef void (*UndoFn)(Rsim *d, const uint8_t *cmd, const uint8_t *res);

static void undo_handle(Rsim *d, uint8_t op, const uint8_t *res)
{
    struct rsim_create_resp r;

    memcpy(&r, res, sizeof(r));
    handle_expect(d, op, resp_handle(&r), RSIM_STS_OK);
}

static void undo_qp(Rsim *d, const uint8_t *cmd, const uint8_t *res)
{
    undo_handle(d, RSIM_CMD_DESTROY_QP, res);
}

static void undo_mr(Rsim *d, const uint8_t *cmd, const uint8_t *res)
{
    undo_handle(d, RSIM_CMD_DEREG_MR, res);
}

static void undo_cq(Rsim *d, const uint8_t *cmd, const uint8_t *res)
{
    undo_handle(d, RSIM_CMD_DESTROY_CQ, res);
}

static void undo_srq(Rsim *d, const uint8_t *cmd, const uint8_t *res)
{
    undo_handle(d, RSIM_CMD_DESTROY_SRQ, res);
}

static void undo_eq(Rsim *d, const uint8_t *cmd, const uint8_t *res)
{
    undo_handle(d, RSIM_CMD_DESTROY_EQ, res);
}

static void undo_ah(Rsim *d, const uint8_t *cmd, const uint8_t *res)
{
    undo_handle(d, RSIM_CMD_DESTROY_AH, res);
}

/*
 * Mutate every byte and every dword of a valid command with extreme
 * values; whatever is accepted is undone.
 */
static void fuzz_cmd(Rsim *d, const void *base, UndoFn undo)
{
    static const uint8_t bytes[] = { 0xff, 0x80, 0x7f, 0x01, 0x00 };
    static const uint32_t dwords[] = {
        0xffffffff, 0x80000000, 0x7fffffff, 0x00010000, 0x00001000, 0,
    };
    uint8_t cmd[64], res[56];
    unsigned ok = 0, n = 0;

    for (unsigned off = 4; off < 64; off++) {
        for (size_t v = 0; v < ARRAY_SIZE(bytes); v++) {
            unsigned st;

            memcpy(cmd, base, sizeof(cmd));
            if (cmd[off] == bytes[v]) {
                continue;
            }
            cmd[off] = bytes[v];
            st = cmd_exec(d, cmd, res);
            check_status_range(st);
            g_assert_cmpuint(st, !=, RSIM_STS_BAD_OPCODE);
            n++;
            if (st == RSIM_STS_OK) {
                ok++;
                undo(d, cmd, res);
            } else {
                assert_alive(d);
            }
        }
    }
    for (unsigned off = 4; off < 64; off += 4) {
        for (size_t v = 0; v < ARRAY_SIZE(dwords); v++) {
            uint32_t le = cpu_to_le32(dwords[v]);
            unsigned st;

            memcpy(cmd, base, sizeof(cmd));
            memcpy(cmd + off, &le, 4);
            st = cmd_exec(d, cmd, res);
            check_status_range(st);
            n++;
            if (st == RSIM_STS_OK) {
                ok++;
                undo(d, cmd, res);
            } else {
                assert_alive(d);
            }
        }
    }
    g_test_message("%u of %u mutations accepted", ok, n);
    /* the base command itself still works */
    assert_sts(cmd_exec(d, base, res), RSIM_STS_OK);
    undo(d, base, res);
    assert_alive(d);
}

static void test_hostile_fields(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_cmd_create_qp qc;
    struct rsim_cmd_reg_mr mc;
    struct rsim_cmd_create_cq cc;
    struct rsim_cmd_create_srq sc;
    struct rsim_cmd_create_eq ec;
    struct rsim_cmd_create_ah ac;
    struct rsim_qp_attr base, a, before, after;
    uint64_t pages[4];
    TRing srq;
    TEnv env;
    TQp qp;

    gid_add_v4(d, 0, 1);
    env_setup(d, &env, RSIM_PBL_LEVEL0, 4);

    qp_rings(d, &qp, RSIM_PBL_LEVEL1);
    qp_cmd(&qc, RSIM_QPT_RC, env.pdn, env.cqn, env.cqn, &qp);
    fuzz_cmd(d, &qc, undo_qp);

    for (unsigned i = 0; i < 4; i++) {
        pages[i] = 0x600000000ULL + i * 0x1000;
    }
    mr_cmd(&mc, env.pdn, ACC_LW | ACC_RR, 0x10000123, 3 * 4096,
           RSIM_PBL_LEVEL1, pbl_build(d, RSIM_PBL_LEVEL1, pages, 4), 4, 12,
           0x123);
    fuzz_cmd(d, &mc, undo_mr);

    {
        TRing cq;

        tring_init(d, &cq, RSIM_PBL_LEVEL2, 4, RSIM_CQE_LOG2_SLOT);
        cq_cmd(&cc, env.eq.eqn, &cq);
        fuzz_cmd(d, &cc, undo_cq);
    }
    tring_init(d, &srq, RSIM_PBL_LEVEL0, 3, 6);
    srq_cmd(&sc, env.pdn, &srq, 1, 2);
    fuzz_cmd(d, &sc, undo_srq);
    eq_cmd(&ec, 2, galloc(d, 16 * 16), 16);
    fuzz_cmd(d, &ec, undo_eq);
    ah_cmd(&ac, env.pdn);
    fuzz_cmd(d, &ac, undo_ah);

    /* MODIFY_QP INIT -> RTR: every byte of the attribute block */
    attr_rc_rtr(&base);
    for (unsigned off = 0; off < sizeof(base); off++) {
        static const uint8_t vals[] = { 0xff, 0x80, 0x01, 0x00 };

        for (size_t v = 0; v < ARRAY_SIZE(vals); v++) {
            unsigned st;

            a = base;
            if (((uint8_t *)&a)[off] == vals[v]) {
                continue;
            }
            ((uint8_t *)&a)[off] = vals[v];
            qp_query(d, env.qp.qpn, &before);
            st = qp_modify(d, env.qp.qpn, &a);
            check_status_range(st);
            if (st == RSIM_STS_OK) {
                qp_move(d, env.qp.qpn, RSIM_QPS_RESET);
                qp_rc_to_init(d, env.qp.qpn);
            } else {
                assert_alive(d);
                qp_query(d, env.qp.qpn, &after);
                g_assert_cmpmem(&before, sizeof(before), &after,
                                sizeof(after));
            }
        }
    }
    qp_modify_ok(d, env.qp.qpn, &base);
    assert_alive(d);
    rsim_stop(d);
}

/* Wrong sizes, misaligned and read-only accesses change nothing. */
static void test_hostile_mmio(const char *machine)
{
    static const uint32_t ro[] = {
        A_RSIM_VERSION, A_RSIM_FEATURES, A_RSIM_DMA_WIDTH, A_RSIM_DEV_STATUS,
        A_RSIM_ADMIN_TIMEOUT, A_RSIM_RESET_TIMEOUT, A_RSIM_DB_PAGES,
        A_RSIM_MSIX_VECTORS, A_RSIM_NUM_PORTS, A_RSIM_AQ_HEAD,
        A_RSIM_ACQ_TAIL, A_RSIM_AEQ_TAIL,
    };
    static const uint32_t wo[] = {
        A_RSIM_AQ_TAIL, A_RSIM_ACQ_HEAD, A_RSIM_AEQ_HEAD, A_RSIM_EQ_DB,
        A_RSIM_ETH_TX_DB, A_RSIM_ETH_RX_DB,
    };
    Rsim *d = rsim_up(machine, NULL);
    g_autofree uint32_t *regs = g_new(uint32_t, 1024);
    uint64_t b0 = d->bar0.addr;
    TEnv env;

    /* the whole BAR reads without side effects */
    for (uint32_t off = 0; off < 4096; off += 4) {
        regs[off / 4] = rd(d, off);
    }
    for (uint32_t off = 0; off < 4096; off += 4) {
        g_assert_cmphex(rd(d, off), ==, regs[off / 4]);
    }
    for (uint32_t off = 0xb0; off < 0x100; off += 4) {
        g_assert_cmphex(regs[off / 4], ==, 0);
    }
    for (uint32_t off = 0x180; off < 4096; off += 4) {
        g_assert_cmphex(regs[off / 4], ==, 0);
    }
    for (size_t i = 0; i < ARRAY_SIZE(wo); i++) {
        g_assert_cmphex(regs[wo[i] / 4], ==, 0);
    }

    /* read-only registers ignore writes */
    for (size_t i = 0; i < ARRAY_SIZE(ro); i++) {
        wr(d, ro[i], 0xffffffff);
        wr(d, ro[i], 0);
        g_assert_cmphex(rd(d, ro[i]), ==, regs[ro[i] / 4]);
    }
    for (uint32_t off = A_RSIM_CAP_MAX_QP; off <= A_RSIM_CAP_MAX_PKEYS;
         off += 4) {
        wr(d, off, 0x12345678);
        g_assert_cmphex(rd(d, off), ==, regs[off / 4]);
    }
    /* unassigned offsets */
    for (uint32_t off = 0x180; off < 4096; off += 0x124) {
        wr(d, off, 0xffffffff);
    }
    assert_alive(d);

    /* INTR_MASK keeps its two bits */
    wr(d, A_RSIM_INTR_MASK, 0xffffffff);
    g_assert_cmphex(rd(d, A_RSIM_INTR_MASK), ==, 3);
    wr(d, A_RSIM_INTR_MASK, 0xfffffffe);
    g_assert_cmphex(rd(d, A_RSIM_INTR_MASK), ==, 2);
    wr(d, A_RSIM_INTR_MASK, 3);

    /* reserved DEV_CTRL bits with ENABLE kept: nothing happens */
    wr(d, A_RSIM_DEV_CTRL, 0xfffffffd);
    g_assert_cmphex(rd(d, A_RSIM_DEV_STATUS), ==, DEV_READY);
    g_assert_cmphex(rd(d, A_RSIM_DEV_CTRL), ==, R_RSIM_DEV_CTRL_ENABLE_MASK);

    /*
     * 1- and 2-byte and misaligned accesses are ignored.  (An 8-byte
     * qtest access is split into two 4-byte ones by the memory core.)
     */
    qtest_writeb(d->qts, b0 + A_RSIM_DEV_CTRL, 2);
    qtest_writew(d->qts, b0 + A_RSIM_DEV_CTRL, 2);
    qtest_writel(d->qts, b0 + A_RSIM_DEV_CTRL + 1, 0xffffffff);
    qtest_writel(d->qts, b0 + A_RSIM_DEV_CTRL + 2, 0xffffffff);
    qtest_writel(d->qts, b0 + A_RSIM_DEV_STATUS - 1, 0xffffffff);
    qtest_writeb(d->qts, b0 + A_RSIM_INTR_MASK, 0);
    qtest_writew(d->qts, b0 + A_RSIM_INTR_MASK, 0);
    qtest_writeb(d->qts, b0 + A_RSIM_AQ_TAIL, 5);
    qtest_writel(d->qts, b0 + 0xffe, 0xffffffff);
    {
        uint8_t junk[7] = { 2, 2, 2, 2, 2, 2, 2 };

        qtest_memwrite(d->qts, b0 + A_RSIM_DEV_CTRL + 1, junk, sizeof(junk));
    }
    qtest_readb(d->qts, b0 + A_RSIM_VERSION + 2);
    qtest_readw(d->qts, b0 + A_RSIM_VERSION + 1);
    qtest_readl(d->qts, b0 + A_RSIM_DEV_STATUS + 3);
    qtest_readl(d->qts, b0 + 0xffd);
    g_assert_cmphex(rd(d, A_RSIM_DEV_STATUS), ==, DEV_READY);
    g_assert_cmphex(rd(d, A_RSIM_INTR_MASK), ==, 3);
    g_assert_cmpuint(rd(d, A_RSIM_AQ_HEAD), ==, d->aq_tail);
    settle(d);
    g_assert_cmpuint(rd(d, A_RSIM_AQ_HEAD), ==, d->aq_tail);
    assert_alive(d);

    /* the same on a doorbell: only a full 32-bit write rings */
    env_setup(d, &env, RSIM_PBL_LEVEL0, 4);
    qp_move(d, env.qp.qpn, RSIM_QPS_ERR);
    post_send(d, &env.qp.sq, 9, RSIM_WR_SEND);
    qtest_writeb(d->qts, d->bar2.addr + A_RSIM_DB_SQ, env.qp.qpn);
    qtest_writew(d->qts, d->bar2.addr + A_RSIM_DB_SQ, env.qp.qpn);
    qtest_writel(d->qts, d->bar2.addr + A_RSIM_DB_SQ + 2, env.qp.qpn);
    qtest_writel(d->qts, d->bar2.addr + 0xfff, env.qp.qpn);
    qtest_readb(d->qts, d->bar2.addr + 3);
    cq_expect_empty(d, &env.cq);
    sq_doorbell(d, 0, env.qp.qpn);
    cq_expect_flush(d, &env.cq, 9, RSIM_WC_SEND, env.qp.qpn);
    assert_alive(d);
    rsim_stop(d);
}

/*
 * DMA aimed at the device's own BARs: it must neither re-enter itself
 * nor hang; command and event queue DMA failing makes it fatal.
 */
static void test_hostile_dma_self(const char *machine)
{
    Rsim *d = rsim_start(machine, NULL, false);
    uint64_t b0 = d->bar0.addr, b2 = d->bar2.addr;
    struct rsim_cmd_query_stats sc;
    struct rsim_cmd_qp_attr qc;
    struct rsim_cmd_create_cq cc;
    struct rsim_cmd_reg_mr mc;
    struct rsim_create_resp r;
    struct rsim_admin_cmd nop;
    uint32_t key, cqn;
    TRing cq;
    TEnv env;
    TQp qp;

    CMD_INIT(nop, RSIM_CMD_NOP);

    /* the AQ in BAR0 and in BAR2 */
    for (unsigned i = 0; i < 2; i++) {
        rsim_reset(d);
        rsim_set_queues(d, 8, 8, 8);
        wr64(d, A_RSIM_AQ_BASE_LO, i ? b2 : b0);
        wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
        aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
        wr(d, A_RSIM_AQ_TAIL, 1);
        settle(d);
        g_assert_cmphex(rd(d, A_RSIM_DEV_STATUS), ==,
                        FATAL_STATUS(RSIM_FATAL_ADMIN_DMA));
        aeq_expect_data(d, RSIM_EV_DEVICE_FATAL, 0, RSIM_FATAL_ADMIN_DMA);
        g_assert_cmphex(qtest_readl(d->qts, d->acq), ==, 0);
    }
    /* the ACQ in BAR0 */
    rsim_reset(d);
    rsim_set_queues(d, 8, 8, 8);
    wr64(d, A_RSIM_ACQ_BASE_LO, b0);
    wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
    aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    aq_submit(d, &nop);
    settle(d);
    g_assert_cmphex(rd(d, A_RSIM_DEV_STATUS), ==,
                    FATAL_STATUS(RSIM_FATAL_ADMIN_DMA));
    aeq_expect_data(d, RSIM_EV_DEVICE_FATAL, 0, RSIM_FATAL_ADMIN_DMA);
    /* the AEQ in BAR0: the port event fails at ENABLE */
    rsim_reset(d);
    rsim_set_queues(d, 8, 8, 8);
    wr64(d, A_RSIM_AEQ_BASE_LO, b0 + 0x40);
    wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
    g_assert_cmphex(rd(d, A_RSIM_DEV_STATUS), ==,
                    FATAL_STATUS(RSIM_FATAL_AEQ_DMA));
    g_assert_cmphex(rd(d, A_RSIM_DEV_CTRL), ==, R_RSIM_DEV_CTRL_ENABLE_MASK);

    /* command buffers in the BARs: DMA status, registers unchanged */
    rsim_bringup(d);
    CMD_INIT(sc, RSIM_CMD_QUERY_STATS);
    sc.addr = cpu_to_le64(b0);
    sc.len = cpu_to_le32(RSIM_STAT_COUNT * 8);
    cmd_expect(d, &sc, RSIM_STS_DMA);
    sc.addr = cpu_to_le64(b2);
    cmd_expect(d, &sc, RSIM_STS_DMA);
    g_assert_cmphex(rd(d, A_RSIM_DEV_CTRL), ==, R_RSIM_DEV_CTRL_ENABLE_MASK);
    g_assert_cmphex(rd(d, A_RSIM_INTR_MASK), ==, 3);
    g_assert_cmphex(rd64(d, A_RSIM_AQ_BASE_LO), ==, d->aq);
    env_setup(d, &env, RSIM_PBL_LEVEL0, 4);
    CMD_INIT(qc, RSIM_CMD_QUERY_QP);
    qc.qpn = cpu_to_le32(env.qp.qpn);
    qc.addr = cpu_to_le64(b0 + 0x100);
    cmd_expect(d, &qc, RSIM_STS_DMA);
    g_assert_cmphex(rd64(d, A_RSIM_AQ_BASE_LO), ==, d->aq);
    CMD_INIT(qc, RSIM_CMD_MODIFY_QP);
    qc.qpn = cpu_to_le32(env.qp.qpn);
    qc.addr = cpu_to_le64(b0);
    cmd_expect(d, &qc, RSIM_STS_DMA);
    /* a CQ ring over the doorbells */
    tring_init(d, &cq, RSIM_PBL_LEVEL0, 3, RSIM_CQE_LOG2_SLOT);
    cq_cmd(&cc, env.eq.eqn, &cq);
    cc.q.addr = cpu_to_le64(b2);
    assert_sts(cmd_exec(d, &cc, &r), RSIM_STS_OK);
    cqn = resp_handle(&r);
    qp_create(d, &qp, RSIM_QPT_RC, env.pdn, cqn, RSIM_PBL_LEVEL0);
    qp_rc_to_init(d, qp.qpn);
    post_send(d, &qp.sq, 1, RSIM_WR_SEND);
    qp_move(d, qp.qpn, RSIM_QPS_ERR);
    aeq_expect_data(d, RSIM_EV_CQ_ERR, cqn, 1);
    /* a page list in BAR0 */
    mr_cmd(&mc, env.pdn, ACC_LW, 0, 4096, RSIM_PBL_LEVEL1, b0, 1, 12, 0);
    key = mr_reg(d, &mc, NULL);
    xlate_fail(d, key, env.pdn, 0, 0, 1, RSIM_STS_DMA);
    /* a QP ring page list in BAR0 */
    {
        struct rsim_cmd_create_qp c;
        TQp l1;

        qp_rings(d, &l1, RSIM_PBL_LEVEL1);
        qp_cmd(&c, RSIM_QPT_RC, env.pdn, env.cqn, env.cqn, &l1);
        c.sq.addr = cpu_to_le64(b0);
        cmd_expect(d, &c, RSIM_STS_DMA);
    }
    /* the admin MSI-X message aimed at DEV_CTRL with RESET */
    msix_setup(d);
    {
        QPCIDevice *dev = d->dev;

        qpci_io_writel(dev, dev->msix_table_bar, dev->msix_table_off +
                       PCI_MSIX_ENTRY_LOWER_ADDR, b0 + A_RSIM_DEV_CTRL);
        qpci_io_writel(dev, dev->msix_table_bar, dev->msix_table_off +
                       PCI_MSIX_ENTRY_UPPER_ADDR, 0);
        qpci_io_writel(dev, dev->msix_table_bar, dev->msix_table_off +
                       PCI_MSIX_ENTRY_DATA, R_RSIM_DEV_CTRL_RESET_MASK);
    }
    wr(d, A_RSIM_INTR_MASK, 0);
    assert_alive(d);
    assert_alive(d);
    g_assert_cmphex(rd(d, A_RSIM_INTR_MASK), ==, 0);
    rsim_bringup(d);
    assert_alive(d);
    rsim_stop(d);
}

/* Commands queued before a reset never run afterwards. */
static void test_hostile_reset_midstream(const char *machine)
{
    Rsim *d = rsim_start(machine, NULL, false);
    uint8_t before[2 * RSIM_ACQ_ENTRY_SIZE], after[2 * RSIM_ACQ_ENTRY_SIZE];
    struct rsim_admin_cmd c;
    struct rsim_admin_cqe cqe;
    uint64_t old_aq, old_acq;

    rsim_reset(d);
    rsim_enable(d, 8, 2, 8);
    aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    CMD_INIT(c, RSIM_CMD_ALLOC_PD);
    for (unsigned i = 0; i < 5; i++) {
        aq_submit(d, &c);
    }
    settle(d);
    g_assert_cmpuint(rd(d, A_RSIM_AQ_HEAD), ==, 1);   /* ACQ full */
    old_aq = d->aq;
    old_acq = d->acq;
    qtest_memread(d->qts, old_acq, before, sizeof(before));

    rsim_reset(d);
    /* same AQ memory, still holding the stale commands */
    rsim_set_queues(d, 8, 8, 8);
    wr64(d, A_RSIM_AQ_BASE_LO, old_aq);
    d->aq = old_aq;
    wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
    aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    settle(d);
    g_assert_cmpuint(rd(d, A_RSIM_AQ_HEAD), ==, 0);
    g_assert_cmpuint(rd(d, A_RSIM_ACQ_TAIL), ==, 0);
    g_assert_false(acq_poll(d, &cqe, 0));
    qtest_memread(d->qts, old_acq, after, sizeof(after));
    g_assert_cmpmem(before, sizeof(before), after, sizeof(after));
    /* the PD made before the reset is gone, no stale one was made */
    CMD_INIT(c, RSIM_CMD_NOP);
    assert_sts(cmd_exec(d, &c, NULL), RSIM_STS_OK);
    g_assert_cmpuint(pd_alloc(d), ==, 0);
    g_assert_cmpuint(pd_alloc(d), ==, 1);

    /* a reset right behind the doorbell: whatever ran, nothing after */
    for (unsigned i = 0; i < 10; i++) {
        CMD_INIT(c, RSIM_CMD_ALLOC_PD);
        aq_submit(d, &c);
        aq_submit(d, &c);
        wr(d, A_RSIM_DEV_CTRL, i & 1 ? 0 : R_RSIM_DEV_CTRL_RESET_MASK);
        settle(d);
        check_reset_regs(d);
        rsim_enable(d, 4, 4, 4);
        aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
        g_assert_cmpuint(pd_alloc(d), ==, 0);
    }
    assert_alive(d);
    rsim_stop(d);
}

/* Admin doorbells with values out of range */
static void test_hostile_aq_tail(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_admin_cqe cqe;

    assert_alive(d);
    wr(d, A_RSIM_AQ_TAIL, 32);
    wr(d, A_RSIM_AQ_TAIL, 33);
    wr(d, A_RSIM_AQ_TAIL, 0xffffffff);
    wr(d, A_RSIM_AQ_TAIL, 0x80000001);
    settle(d);
    g_assert_cmpuint(rd(d, A_RSIM_AQ_HEAD), ==, 1);
    g_assert_false(acq_poll(d, &cqe, 0));
    wr(d, A_RSIM_ACQ_HEAD, 32);
    wr(d, A_RSIM_ACQ_HEAD, 0xffffffff);
    wr(d, A_RSIM_AEQ_HEAD, 64);
    wr(d, A_RSIM_AEQ_HEAD, 0x80000000);
    assert_alive(d);

    /* a tail over zeroed slots: they are NOPs with ID 0 */
    wr(d, A_RSIM_AQ_TAIL, d->aq_tail + 3);
    for (unsigned i = 0; i < 3; i++) {
        g_assert_true(acq_poll(d, &cqe, POLL_US));
        g_assert_cmpuint(cqe_id(&cqe), ==, 0);
        g_assert_cmpuint(cqe_status(&cqe), ==, RSIM_STS_OK);
        g_assert_cmpuint(le16_to_cpu(cqe.sq_head), ==, d->aq_tail + i + 1);
    }
    acq_ack(d);
    d->aq_tail += 3;
    assert_alive(d);
    rsim_stop(d);
}

/*
 * ========================================================================
 * MSI-X
 * ========================================================================
 */

static void nop(Rsim *d)
{
    struct rsim_admin_cmd c;

    CMD_INIT(c, RSIM_CMD_NOP);
    assert_sts(cmd_exec(d, &c, NULL), RSIM_STS_OK);
}

static void test_msix_admin(const char *machine)
{
    Rsim *d = rsim_up(machine, NULL);
    struct rsim_admin_cmd c;

    msix_setup(d);
    nop(d);
    g_assert_false(irq_fired(d, 0));            /* INTR_MASK = 3 */
    wr(d, A_RSIM_INTR_MASK, R_RSIM_INTR_MASK_ASYNC_MASK);
    nop(d);
    g_assert_true(irq_fired(d, 0));
    nop(d);
    g_assert_true(irq_fired(d, 0));
    CMD_INIT(c, 0x55);                          /* errors complete too */
    assert_sts(cmd_exec(d, &c, NULL), RSIM_STS_BAD_OPCODE);
    g_assert_true(irq_fired(d, 0));
    wr(d, A_RSIM_INTR_MASK, R_RSIM_INTR_MASK_ADMIN_MASK);
    nop(d);
    g_assert_false(irq_fired(d, 0));
    wr(d, A_RSIM_INTR_MASK, 0);
    nop(d);
    g_assert_true(irq_fired(d, 0));
    for (unsigned v = 1; v < 9; v++) {
        g_assert_false(irq_fired(d, v));
    }

    /* a masked vector stays pending and fires when unmasked */
    msix_mask(d, 0, true);
    nop(d);
    g_assert_false(irq_fired(d, 0));
    g_assert_true(qpci_msix_pending(d->dev, 0));
    msix_mask(d, 0, false);
    g_assert_true(irq_fired(d, 0));

    /* without MSI-X the device works, polled */
    qpci_msix_disable(d->dev);
    nop(d);
    nop(d);
    g_assert_false(irq_fired(d, 0));
    msix_setup(d);
    nop(d);
    g_assert_true(irq_fired(d, 0));
    rsim_stop(d);
}

static void test_msix_async(const char *machine)
{
    Rsim *d = rsim_start(machine, NULL, false);
    struct rsim_qp_attr sqd;
    TEnv env;

    msix_setup(d);
    rsim_reset(d);
    /* unmasked before ENABLE: the port event interrupts */
    wr(d, A_RSIM_INTR_MASK, R_RSIM_INTR_MASK_ADMIN_MASK);
    rsim_enable(d, 16, 16, 16);
    g_assert_true(irq_fired(d, 0));
    aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
    gid_add_v4(d, 0, 1);
    g_assert_false(irq_fired(d, 0));            /* admin: masked */
    env_setup(d, &env, RSIM_PBL_LEVEL0, 4);
    qp_move(d, env.qp.qpn, RSIM_QPS_RESET);
    qp_rc_to_rts(d, env.qp.qpn);
    attr_init(&sqd, RSIM_QPS_SQD, RSIM_QP_EN_SQD_ASYNC_NOTIFY);
    sqd.en_sqd_async_notify = 1;
    g_assert_false(irq_fired(d, 0));
    qp_modify_ok(d, env.qp.qpn, &sqd);
    aeq_expect(d, RSIM_EV_SQ_DRAINED, env.qp.qpn);
    g_assert_true(irq_fired(d, 0));
    /* masked: the event is written, no interrupt */
    wr(d, A_RSIM_INTR_MASK, 3);
    qp_move(d, env.qp.qpn, RSIM_QPS_RTS);
    qp_modify_ok(d, env.qp.qpn, &sqd);
    aeq_expect(d, RSIM_EV_SQ_DRAINED, env.qp.qpn);
    g_assert_false(irq_fired(d, 0));
    /* CQ_ERR is an async event as well */
    wr(d, A_RSIM_INTR_MASK, R_RSIM_INTR_MASK_ADMIN_MASK);
    {
        TEnv e2;

        env_setup(d, &e2, RSIM_PBL_LEVEL0, 1);      /* holds one */
        g_assert_false(irq_fired(d, 0));
        flush_sends(d, &e2, 2, 1);
        aeq_expect(d, RSIM_EV_CQ_ERR, e2.cqn);
        g_assert_true(irq_fired(d, 0));
    }
    g_assert_false(irq_fired(d, 1));
    rsim_stop(d);
}

/*
 * ========================================================================
 * Registration
 * ========================================================================
 */

typedef struct TestCase {
    const char *name;
    void (*fn)(const char *machine);
    bool pc_only;
} TestCase;

static const TestCase test_cases[] = {
    { "pci/ids", test_pci_ids },
    { "pci/props", test_pci_props },
    { "pci/bad-props", test_pci_bad_props, true },
    { "pci/migration", test_pci_migration },
    { "pci/hotplug", test_pci_hotplug, true },
    { "reset/registers", test_reset_regs },
    { "reset/objects", test_reset_objects },
    { "reset/system", test_reset_system },
    { "admin/bringup", test_admin_bringup },
    { "admin/bad-config", test_admin_bad_config },
    { "admin/phase-wrap", test_admin_phase_wrap },
    { "admin/backpressure", test_admin_backpressure },
    { "admin/opcodes", test_admin_opcodes },
    { "admin/device-port", test_admin_device_port },
    { "admin/port-link", test_admin_port_link },
    { "admin/stats", test_admin_stats },
    { "cmd/eq", test_cmd_eq },
    { "cmd/ethq", test_cmd_ethq },
    { "cmd/pd", test_cmd_pd },
    { "cmd/cq", test_cmd_cq },
    { "cmd/cq-resize", test_cmd_cq_resize },
    { "cmd/srq", test_cmd_srq },
    { "cmd/ah", test_cmd_ah },
    { "cmd/gid", test_cmd_gid },
    { "cmd/min-tables", test_cmd_min_tables },
    { "eth/datapath", test_eth_datapath },
    { "eth/disabled", test_eth_disabled },
    { "qp/create", test_qp_create },
    { "qp/query", test_qp_query },
    { "qp/rc-states", test_qp_rc_states },
    { "qp/illegal", test_qp_illegal },
    { "qp/ud-gsi-uc", test_qp_ud_gsi_uc },
    { "qp/attr-block", test_qp_attr_block },
    { "queue/flush-level0", test_queue_flush_l0 },
    { "queue/flush-level1", test_queue_flush_l1 },
    { "queue/flush-level2", test_queue_flush_l2 },
    { "queue/cq-eq-msix", test_queue_cq_eq_msix },
    { "queue/eq-full", test_queue_eq_full },
    { "queue/cq-overflow", test_queue_cq_overflow },
    { "queue/cq-bad-ring", test_queue_cq_bad_ring },
    { "queue/aeq-overflow", test_queue_aeq_overflow },
    { "queue/eq-bad-ring", test_queue_eq_bad_ring },
    { "doorbell/pages", test_doorbells },
    { "mr/levels", test_mr_levels },
    { "mr/errors", test_mr_errors },
    { "mr/keys", test_mr_keys },
    { "hostile/garbage", test_hostile_garbage },
    { "hostile/fields", test_hostile_fields },
    { "hostile/rings", test_hostile_rings },
    { "hostile/mmio", test_hostile_mmio },
    { "hostile/dma-self", test_hostile_dma_self },
    { "hostile/reset-midstream", test_hostile_reset_midstream },
    { "hostile/aq-tail", test_hostile_aq_tail },
    { "msix/admin", test_msix_admin },
    { "msix/async", test_msix_async },
};

typedef struct TestRun {
    const TestCase *tc;
    const char *machine;
} TestRun;

/*
 * Each test runs in a subprocess: a failed assertion ends only that test
 * (its QEMU dies with it: libqtest sets PR_SET_PDEATHSIG), the others
 * still run.
 */
static void run_test(const void *opaque)
{
    const TestRun *run = opaque;

    if (g_test_subprocess()) {
        const char *seed = g_getenv("RSIM_TEST_CHILD_SEED");

        rng = g_rand_new_with_seed(seed ? g_ascii_strtoull(seed, NULL, 10) : 0);
        run->tc->fn(run->machine);
        g_rand_free(rng);
        return;
    }
    {
        g_autofree char *seed = g_strdup_printf("%u", g_test_rand_int());

        g_setenv("RSIM_TEST_CHILD_SEED", seed, true);
    }
    g_test_trap_subprocess(NULL, TEST_TIMEOUT_US * timeout_factor,
                           G_TEST_SUBPROCESS_INHERIT_STDERR);
    if (!g_test_trap_has_passed()) {
        g_printerr("rdma-sim-test: %s on %s failed\n", run->tc->name,
                   run->machine);
        g_test_fail();
    }
}

int main(int argc, char **argv)
{
    static const char *const machines[] = { "pc", "q35" };
    static TestRun runs[ARRAY_SIZE(machines)][ARRAY_SIZE(test_cases)];

    g_test_init(&argc, &argv, NULL);
    verbose = !g_strcmp0(getenv("RSIM_TEST_VERBOSE"), "1");
    if (getenv("RSIM_TEST_SLOW")) {
        timeout_factor = MAX(1, atoi(getenv("RSIM_TEST_SLOW")));
    }
    for (size_t m = 0; m < ARRAY_SIZE(machines); m++) {
        if (!qtest_has_machine(machines[m])) {
            continue;
        }
        for (size_t i = 0; i < ARRAY_SIZE(test_cases); i++) {
            g_autofree char *path = NULL;

            if (test_cases[i].pc_only && strcmp(machines[m], "pc")) {
                continue;
            }
            runs[m][i].tc = &test_cases[i];
            runs[m][i].machine = machines[m];
            path = g_strdup_printf("rdma-sim/%s/%s", machines[m],
                                   test_cases[i].name);
            qtest_add_data_func(path, &runs[m][i], run_test);
        }
    }
    return g_test_run();
}
