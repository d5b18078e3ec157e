/*
 * libqos helpers for the rdma-sim qtests: the device, its registers, admin
 * queue and events, and test registration (see rdma-sim.h); the machine
 * around it (migration, snapshots) is rdma-sim-machine.c
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <sys/socket.h>
#include <glib/gstdio.h>
#if QEMU_VERSION_MAJOR >= 10
#include "qobject/qjson.h"
#else
#include "qapi/qmp/qjson.h"
#endif
#include "libqos/malloc-pc.h"
#include "libqos/pci-pc.h"
#include "libqos/rdma-sim.h"

/* Limit for one test (each takes a few seconds at most) */
#define TEST_TIMEOUT_US     (60 * G_USEC_PER_SEC)

/* ---- Registration, random numbers, notes ---- */

static bool verbose;
/* RSIM_TEST_SLOW=N multiplies the time limit of a test */
static unsigned timeout_factor = 1;
/* The random generator of a test subprocess */
static GRand *rng;

void qsim_note(const char *fmt, ...)
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

uint32_t qsim_rand(void)
{
    return g_rand_int(rng);
}

int32_t qsim_rand_range(int32_t begin, int32_t end)
{
    return g_rand_int_range(rng, begin, end);
}

typedef struct TestRun {
    const QSimTest *test;
    const char *machine;
} TestRun;

/*
 * Each test runs in a subprocess: a failed assertion ends only that test
 * (its QEMU dies with it: libqtest sets PR_SET_PDEATHSIG), the others
 * still run.  The seed of the subprocess's generator travels in
 * RSIM_TEST_CHILD_SEED.
 */
int64_t qsim_deadline(int64_t usec)
{
    return g_get_monotonic_time() + usec * timeout_factor;
}

static void run_test(const void *opaque)
{
    const TestRun *run = opaque;

    if (g_test_subprocess()) {
        const char *seed = g_getenv("RSIM_TEST_CHILD_SEED");

        rng = g_rand_new_with_seed(seed ? g_ascii_strtoull(seed, NULL, 10)
                                        : 0);
        run->test->fn(run->machine);
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
        g_printerr("%s: %s on %s failed\n", g_get_prgname(),
                   run->test->name, run->machine);
        g_test_fail();
    }
}

static void add_test(const QSimTest *test, const char *machine,
                     bool machine_in_path)
{
    g_autofree char *path = NULL;
    TestRun *run;

    /* a subprocess runs a test its parent found a machine for */
    if (!g_test_subprocess() && !qtest_has_machine(machine)) {
        return;
    }
    run = g_new(TestRun, 1);
    run->test = test;
    run->machine = machine;
    if (machine_in_path) {
        path = g_strdup_printf("rdma-sim/%s/%s", machine, test->name);
    } else {
        path = g_strdup_printf("rdma-sim/%s", test->name);
    }
    qtest_add_data_func_full(path, run, run_test, g_free);
}

int qsim_main(int argc, char **argv, const QSimTest *tests, size_t n)
{
    static const char *const machines[] = { "pc", "q35" };

    g_test_init(&argc, &argv, NULL);
    verbose = !g_strcmp0(getenv("RSIM_TEST_VERBOSE"), "1");
    if (getenv("RSIM_TEST_SLOW")) {
        timeout_factor = MAX(1, atoi(getenv("RSIM_TEST_SLOW")));
    }
    for (size_t m = 0; m < ARRAY_SIZE(machines); m++) {
        for (size_t i = 0; i < n; i++) {
            if (tests[i].machines == QSIM_PC_Q35 ||
                (tests[i].machines == QSIM_PC_ONLY && m == 0)) {
                add_test(&tests[i], machines[m], true);
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (tests[i].machines == QSIM_ONCE) {
            add_test(&tests[i], "pc", false);
        }
    }
    return g_test_run();
}

/* ---- The device ---- */

void qsim_memset(QSimDev *d, uint64_t addr, uint8_t byte, size_t len)
{
    uint8_t buf[QSIM_PAGE];

    if (!d->run) {
        qtest_memset(d->qts, addr, byte, len);
        return;
    }
    /* in process: QEMU's fuzzing qtest_memset() never frees its copy */
    memset(buf, byte, MIN(len, sizeof(buf)));
    for (size_t off = 0; off < len; off += sizeof(buf)) {
        qtest_memwrite(d->qts, addr + off, buf, MIN(len - off, sizeof(buf)));
    }
}

uint64_t qsim_alloc(QSimDev *d, size_t size)
{
    uint64_t addr = guest_alloc(&d->qs->alloc, size);

    g_assert(addr);
    qsim_memset(d, addr, 0, size);
    return addr;
}

uint32_t qsim_rd(QSimDev *d, uint32_t off)
{
    return qpci_io_readl(d->dev, d->bar0, off);
}

void qsim_wr(QSimDev *d, uint32_t off, uint32_t val)
{
    qpci_io_writel(d->dev, d->bar0, off, val);
}

void qsim_db(QSimDev *d, unsigned page, uint32_t off, uint32_t val)
{
    qpci_io_writel(d->dev, d->bar2, (uint64_t)page * RSIM_DB_PAGE_SIZE + off,
                   val);
}

void qsim_wr64(QSimDev *d, uint32_t lo_off, uint64_t val)
{
    qsim_wr(d, lo_off, (uint32_t)val);
    qsim_wr(d, lo_off + 4, val >> 32);
}

uint64_t qsim_rd64(QSimDev *d, uint32_t lo_off)
{
    return qsim_rd(d, lo_off) | (uint64_t)qsim_rd(d, lo_off + 4) << 32;
}

void qsim_map_bars(QSimDev *d)
{
    qpci_device_enable(d->dev);
    d->bar0 = qpci_iomap(d->dev, RSIM_BAR_REGS, &d->bar0_size);
    d->bar2 = qpci_iomap(d->dev, RSIM_BAR_DOORBELL, &d->bar2_size);
}

/* The function at devfn of the machine qs: BARs mapped, scratch page */
static QSimDev *dev_new(QOSState *qs, int devfn, uint16_t first_cmd_id,
                        void (*run)(QSimDev *d))
{
    QSimDev *d = g_new0(QSimDev, 1);

    d->qs = qs;
    d->run = run;
    d->qts = qs->qts;
    d->sock = -1;
    d->ring_pages = g_ptr_array_new_with_free_func(g_free);
    d->dev = qpci_device_find(qs->pcibus, devfn);
    g_assert(d->dev);
    qsim_map_bars(d);
    d->scratch = qsim_alloc(d, QSIM_PAGE);
    d->cmd_id = d->first_cmd_id = first_cmd_id;
    return d;
}

QSimDev *qsim_start(const char *machine, const char *props,
                    const char *netdev)
{
    return qsim_start_args(machine, props, netdev, NULL);
}

QOSState *qsim_boot(const char *machine, const char *props,
                    const char *netdev, const char *args,
                    const char *incoming)
{
    g_autofree char *dev = g_strdup_printf("rdma-sim,addr=04.0,mac=" QSIM_MAC
                                           "%s%s%s",
                                           netdev ? ",netdev=n0" : "",
                                           props ? "," : "", props ?: "");
    g_autofree char *net = netdev ? g_strdup_printf("-netdev %s", netdev)
                                  : g_strdup("");
    g_autofree char *in = incoming ? g_strdup_printf("-incoming %s", incoming)
                                   : g_strdup("");

    return qtest_pc_boot("-M %s -nodefaults -device %s %s %s %s %s", machine,
                         dev, net, args ?: "", in,
                         getenv("RSIM_QTEST_ARGS") ?: "");
}

QSimDev *qsim_start_args(const char *machine, const char *props,
                         const char *netdev, const char *args)
{
    QOSState *qs = qsim_boot(machine, props, netdev, args, NULL);
    QSimDev *d = dev_new(qs, QSIM_DEVFN, 0x100, NULL);

    d->machine = g_strdup(machine);
    d->props = g_strdup(props);
    d->netdev = g_strdup(netdev);
    d->args = g_strdup(args);
    return d;
}

QSimDev *qsim_in_process(QTestState *qts, void (*run)(QSimDev *d))
{
    QOSState *qs = g_new0(QOSState, 1);

    qs->qts = qts;
    pc_alloc_init(&qs->alloc, qts, ALLOC_NO_FLAGS);
    qs->pcibus = qpci_new_pc(qts, &qs->alloc);
    return dev_new(qs, QSIM_DEVFN, 0x100, run);
}

void qsim_forget(QSimDev *d)
{
    alloc_destroy(&d->qs->alloc);
    pc_alloc_init(&d->qs->alloc, d->qts, ALLOC_NO_FLAGS);
    g_ptr_array_set_size(d->ring_pages, 0);
    d->aq = d->acq = d->aeq = 0;
    d->aq_depth = d->acq_depth = d->aeq_depth = 0;
    d->aq_tail = d->acq_head = d->aeq_head = 0;
    d->acq_phase = d->aeq_phase = false;
    d->msix_mem = 0;
    d->cmd_id = d->first_cmd_id;
    d->scratch = qsim_alloc(d, QSIM_PAGE);
}

QSimDev *qsim_start_stream(const char *machine)
{
    struct timeval tv = { .tv_sec = 5 };
    g_autofree char *netdev = NULL;
    int sv[2];
    QSimDev *d;

    g_assert_cmpint(socketpair(PF_UNIX, SOCK_STREAM, 0, sv), ==, 0);
    netdev = g_strdup_printf("socket,fd=%d,id=n0", sv[1]);
    d = qsim_start(machine, NULL, netdev);
    close(sv[1]);
    d->sock = sv[0];
    setsockopt(d->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return d;
}

QSimDev *qsim_up(const char *machine, const char *props)
{
    QSimDev *d = qsim_start(machine, props, NULL);

    qsim_bringup(d);
    return d;
}

void qsim_stop(QSimDev *d)
{
    if (d->sock >= 0) {
        close(d->sock);
    }
    g_free(d->dev);
    g_ptr_array_unref(d->ring_pages);
    g_free(d->machine);
    g_free(d->props);
    g_free(d->netdev);
    g_free(d->args);
    qtest_shutdown(d->qs);
    g_free(d);
}

QSimDev *qsim_attach(QSimDev *d, int devfn)
{
    return dev_new(d->qs, devfn, 0x200, d->run);
}

void qsim_detach(QSimDev *h)
{
    g_free(h->dev);
    g_ptr_array_unref(h->ring_pages);
    g_free(h);
}

/* The registers after reset, with the default properties */
static const QSimRegVal reset_regs[] = {
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

void qsim_check_regs(QSimDev *d, const QSimRegVal *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        qsim_note("register 0x%03x", r[i].off);
        g_assert_cmphex(qsim_rd(d, r[i].off), ==, r[i].val);
    }
}

void qsim_check_reset_regs(QSimDev *d)
{
    qsim_check_regs(d, reset_regs, ARRAY_SIZE(reset_regs));
}

void qsim_reset(QSimDev *d)
{
    qsim_wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_RESET_MASK);
    g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_STATUS), ==, 0);
    g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_CTRL), ==, 0);
}

void qsim_set_queues(QSimDev *d, uint32_t aq_depth, uint32_t acq_depth,
                     uint32_t aeq_depth)
{
    d->aq = qsim_alloc(d, aq_depth * RSIM_AQ_ENTRY_SIZE);
    d->acq = qsim_alloc(d, acq_depth * RSIM_ACQ_ENTRY_SIZE);
    d->aeq = qsim_alloc(d, aeq_depth * RSIM_EQ_ENTRY_SIZE);
    d->aq_depth = aq_depth;
    d->acq_depth = acq_depth;
    d->aeq_depth = aeq_depth;
    d->aq_tail = d->acq_head = d->aeq_head = 0;
    d->acq_phase = d->aeq_phase = true;
    qsim_wr64(d, A_RSIM_AQ_BASE_LO, d->aq);
    qsim_wr(d, A_RSIM_AQ_DEPTH, aq_depth);
    qsim_wr64(d, A_RSIM_ACQ_BASE_LO, d->acq);
    qsim_wr(d, A_RSIM_ACQ_DEPTH, acq_depth);
    qsim_wr64(d, A_RSIM_AEQ_BASE_LO, d->aeq);
    qsim_wr(d, A_RSIM_AEQ_DEPTH, aeq_depth);
}

void qsim_enable(QSimDev *d, uint32_t aq_depth, uint32_t acq_depth,
                 uint32_t aeq_depth)
{
    qsim_set_queues(d, aq_depth, acq_depth, aeq_depth);
    qsim_wr(d, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
    g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_STATUS), ==, QSIM_READY);
}

void qsim_bringup(QSimDev *d)
{
    qsim_reset(d);
    qsim_enable(d, 32, 32, 64);
    qsim_aeq_expect(d, RSIM_EV_PORT_ACTIVE, 1);
}

void qsim_run(QSimDev *d)
{
    if (d->run) {
        d->run(d);
    }
}

void qsim_settle(QSimDev *d)
{
    int64_t deadline = g_get_monotonic_time() + QSIM_QUIET_US;

    do {
        qsim_run(d);
        qsim_rd(d, A_RSIM_DEV_STATUS);
    } while (g_get_monotonic_time() < deadline);
}

/* ---- Event queue entries ---- */

unsigned qsim_eqe_type(const struct rsim_eqe *e)
{
    return FIELD_EX32(le32_to_cpu(e->dw0), RSIM_EQE_HDR, TYPE);
}

bool qsim_eqe_poll(QSimDev *d, uint64_t base, uint32_t depth,
                   uint32_t *head, bool *phase, struct rsim_eqe *e,
                   int64_t timeout_us)
{
    uint64_t addr = base + (uint64_t)*head * RSIM_EQ_ENTRY_SIZE;
    int64_t deadline = g_get_monotonic_time() + timeout_us;

    do {
        uint32_t dw0;

        qsim_run(d);
        dw0 = qtest_readl(d->qts, addr);
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

bool qsim_aeq_poll(QSimDev *d, struct rsim_eqe *e, int64_t timeout_us)
{
    if (!qsim_eqe_poll(d, d->aeq, d->aeq_depth, &d->aeq_head,
                       &d->aeq_phase, e, timeout_us)) {
        return false;
    }
    qsim_wr(d, A_RSIM_AEQ_HEAD, d->aeq_head);
    return true;
}

void qsim_aeq_expect_data(QSimDev *d, unsigned type, uint32_t object,
                          uint64_t data)
{
    struct rsim_eqe e;

    g_assert_true(qsim_aeq_poll(d, &e, QSIM_POLL_US));
    g_assert_cmphex(qsim_eqe_type(&e), ==, type);
    g_assert_cmpuint(le32_to_cpu(e.object), ==, object);
    g_assert_cmphex(le64_to_cpu(e.data), ==, data);
    /* bits other than phase and type are 0 */
    g_assert_cmphex(le32_to_cpu(e.dw0) & ~0xff01u, ==, 0);
}

void qsim_aeq_expect(QSimDev *d, unsigned type, uint32_t object)
{
    qsim_aeq_expect_data(d, type, object, 0);
}

void qsim_aeq_expect_none(QSimDev *d)
{
    struct rsim_eqe e;

    if (qsim_aeq_poll(d, &e, QSIM_QUIET_US)) {
        fprintf(stderr, "unexpected async event type 0x%x object %u\n",
                qsim_eqe_type(&e), le32_to_cpu(e.object));
        g_assert_cmphex(qsim_eqe_type(&e), ==, 0);
    }
}

/* ---- Admin commands ---- */

const char *qsim_sts_name(unsigned st)
{
    static const char *const names[] = {
        "OK", "BAD_OPCODE", "INVALID", "RESERVED", "BAD_HANDLE", "BAD_STATE",
        "NO_RESOURCES", "LIMIT", "BUSY", "DMA", "ACCESS", "UNSUPPORTED",
        "RANGE", "EXISTS",
    };

    return st < ARRAY_SIZE(names) ? names[st] : "(not a status)";
}

uint16_t qsim_aq_put(QSimDev *d, const void *cmd)
{
    struct rsim_admin_cmd c;
    uint32_t dw0;

    memcpy(&c, cmd, sizeof(c));
    dw0 = FIELD_DP32(le32_to_cpu(c.dw0), RSIM_CMD_HDR, ID, ++d->cmd_id);
    qsim_note("command 0x%02x id 0x%04x",
              FIELD_EX32(dw0, RSIM_CMD_HDR, OPCODE), d->cmd_id);
    c.dw0 = cpu_to_le32(dw0);
    qtest_memwrite(d->qts, d->aq + (uint64_t)d->aq_tail * RSIM_AQ_ENTRY_SIZE,
                   &c, sizeof(c));
    d->aq_tail = (d->aq_tail + 1) % d->aq_depth;
    return d->cmd_id;
}

uint16_t qsim_aq_submit(QSimDev *d, const void *cmd)
{
    uint16_t id = qsim_aq_put(d, cmd);

    qsim_wr(d, A_RSIM_AQ_TAIL, d->aq_tail);
    return id;
}

bool qsim_acq_poll(QSimDev *d, struct rsim_admin_cqe *cqe,
                   int64_t timeout_us)
{
    uint64_t addr = d->acq + (uint64_t)d->acq_head * RSIM_ACQ_ENTRY_SIZE;
    int64_t deadline = g_get_monotonic_time() + timeout_us;

    do {
        uint32_t dw0;

        qsim_run(d);
        dw0 = qtest_readl(d->qts, addr);
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

void qsim_acq_ack(QSimDev *d)
{
    qsim_wr(d, A_RSIM_ACQ_HEAD, d->acq_head);
}

unsigned qsim_cqe_id(const struct rsim_admin_cqe *cqe)
{
    return FIELD_EX32(le32_to_cpu(cqe->dw0), RSIM_CQE_HDR, ID);
}

unsigned qsim_cqe_status(const struct rsim_admin_cqe *cqe)
{
    return FIELD_EX32(le32_to_cpu(cqe->dw0), RSIM_CQE_HDR, STATUS);
}

/* Wait for the completion of the command with ID id and check its frame. */
static unsigned acq_expect(QSimDev *d, uint16_t id, uint32_t sq_head,
                           void *result)
{
    struct rsim_admin_cqe cqe;

    g_assert_true(qsim_acq_poll(d, &cqe, QSIM_POLL_US));
    qsim_acq_ack(d);
    g_assert_cmphex(qsim_cqe_id(&cqe), ==, id);
    g_assert_cmpuint(le16_to_cpu(cqe.sq_head), ==, sq_head);
    g_assert_cmphex(le32_to_cpu(cqe.dw0) & 0x7f000000u, ==, 0);
    g_assert_cmphex(le16_to_cpu(cqe.reserved), ==, 0);
    if (result) {
        memcpy(result, cqe.result, sizeof(cqe.result));
    }
    return qsim_cqe_status(&cqe);
}

unsigned qsim_cmd_exec(QSimDev *d, const void *cmd, void *result)
{
    uint16_t id = qsim_aq_submit(d, cmd);

    return acq_expect(d, id, d->aq_tail, result);
}

void qsim_assert_alive(QSimDev *d)
{
    struct rsim_admin_cmd c;

    g_assert_true(qtest_probe_child(d->qts));
    g_assert_cmphex(qsim_rd(d, A_RSIM_DEV_STATUS) &
                    (QSIM_READY | QSIM_FATAL), ==, QSIM_READY);
    QSIM_CMD_INIT(c, RSIM_CMD_NOP);
    qsim_assert_sts(qsim_cmd_exec(d, &c, NULL), RSIM_STS_OK);
}

void qsim_cmd_expect(QSimDev *d, const void *cmd, unsigned want)
{
    qsim_assert_sts(qsim_cmd_exec(d, cmd, NULL), want);
    if (want != RSIM_STS_OK) {
        qsim_assert_alive(d);
    }
}

void qsim_handle_expect(QSimDev *d, uint8_t op, uint32_t handle,
                        unsigned want)
{
    struct rsim_cmd_handle c;

    QSIM_CMD_INIT(c, op);
    c.handle = cpu_to_le32(handle);
    qsim_cmd_expect(d, &c, want);
}

uint32_t qsim_resp_handle(const struct rsim_create_resp *r)
{
    return le32_to_cpu(r->handle);
}

uint32_t qsim_create(QSimDev *d, const void *cmd, uint32_t *handle2)
{
    struct rsim_create_resp r;

    qsim_assert_sts(qsim_cmd_exec(d, cmd, &r), RSIM_STS_OK);
    if (handle2) {
        *handle2 = le32_to_cpu(r.handle2);
    }
    return qsim_resp_handle(&r);
}

uint64_t qsim_stat(QSimDev *d, unsigned index)
{
    struct rsim_cmd_query_stats c;
    struct rsim_query_stats_resp r;

    QSIM_CMD_INIT(c, RSIM_CMD_QUERY_STATS);
    c.addr = cpu_to_le64(d->scratch);
    c.len = cpu_to_le32(RSIM_STAT_COUNT * 8);
    qsim_assert_sts(qsim_cmd_exec(d, &c, &r), RSIM_STS_OK);
    g_assert_cmpuint(le32_to_cpu(r.count), ==, RSIM_STAT_COUNT);
    return qtest_readq(d->qts, d->scratch + index * 8);
}

int64_t qsim_clock_now(QSimDev *d)
{
    /* QEMU 10.0 refuses a step of 0 ns; 7.2 reads the clock with it */
    return qtest_clock_step(d->qts, 1);
}

/* ---- Introspection ---- */

QObject *qsim_qom_get(QSimDev *d, const char *property)
{
    QDict *rsp = qtest_qmp(d->qts, "{'execute': 'qom-get', 'arguments': "
                           "{'path': %s, 'property': %s}}",
                           "/machine/peripheral/" QSIM_QOM_ID, property);
    QObject *ret;

    g_assert(rsp);
    g_assert(qdict_haskey(rsp, "return"));
    ret = qobject_ref(qdict_get(rsp, "return"));
    qobject_unref(rsp);
    return ret;
}

QDict *qsim_introspect(QSimDev *d)
{
    static const char *const props[] = {
        "port", "counters", "pds", "qps", "cqs", "srqs", "mrs", "eqs",
    };
    QDict *all = qdict_new();

    for (size_t i = 0; i < ARRAY_SIZE(props); i++) {
        qdict_put_obj(all, props[i], qsim_qom_get(d, props[i]));
    }
    return all;
}

void qsim_assert_same_dict(QDict *a, QDict *b)
{
    const QDictEntry *e;

    for (e = qdict_first(a); e; e = qdict_next(a, e)) {
        QObject *x = qdict_entry_value(e);
        QObject *y = qdict_get(b, qdict_entry_key(e));

        if (!y || !qobject_is_equal(x, y)) {
            g_autoptr(GString) jx = qobject_to_json_pretty(x, true);
            g_autoptr(GString) jy = y ? qobject_to_json_pretty(y, true)
                                      : g_string_new("(none)");

            fprintf(stderr, "member %s differs\n", qdict_entry_key(e));
            g_assert_cmpstr(jx->str, ==, jy->str);
            g_assert_not_reached();
        }
    }
    g_assert_cmpuint(qdict_size(a), ==, qdict_size(b));
}

/* ---- MSI-X ---- */

void qsim_msix_setup(QSimDev *d)
{
    QPCIDevice *dev = d->dev;
    uint16_t n = qpci_msix_table_size(dev);

    if (!dev->msix_enabled) {
        qpci_msix_enable(dev);
    } else {
        /*
         * Enabled before the device's reset, whose caller put the BARs
         * back (the fuzz targets' qsim_fuzz_reset()): the table is where
         * it was; qpci_msix_enable() would map its BAR anew
         */
        uint8_t cap = qpci_find_capability(dev, PCI_CAP_ID_MSIX, 0);
        uint16_t flags = qpci_config_readw(dev, cap + PCI_MSIX_FLAGS);

        qpci_config_writew(dev, cap + PCI_MSIX_FLAGS,
                           flags | PCI_MSIX_FLAGS_ENABLE);
    }
    d->msix_mem = qsim_alloc(d, QSIM_PAGE);
    for (uint16_t v = 0; v < n; v++) {
        uint64_t e = dev->msix_table_off + v * PCI_MSIX_ENTRY_SIZE;
        uint64_t addr = d->msix_mem + 4 * v;

        qpci_io_writel(dev, dev->msix_table_bar,
                       e + PCI_MSIX_ENTRY_LOWER_ADDR, (uint32_t)addr);
        qpci_io_writel(dev, dev->msix_table_bar,
                       e + PCI_MSIX_ENTRY_UPPER_ADDR, addr >> 32);
        qpci_io_writel(dev, dev->msix_table_bar,
                       e + PCI_MSIX_ENTRY_DATA, QSIM_MSIX_DATA(v));
        qpci_io_writel(dev, dev->msix_table_bar,
                       e + PCI_MSIX_ENTRY_VECTOR_CTRL, 0);
    }
}

bool qsim_irq_fired(QSimDev *d, unsigned v)
{
    uint32_t val = qtest_readl(d->qts, d->msix_mem + 4 * v);

    if (!val) {
        return false;
    }
    g_assert_cmphex(val, ==, QSIM_MSIX_DATA(v));
    qtest_writel(d->qts, d->msix_mem + 4 * v, 0);
    return true;
}
