/*
 * core: core.c regs.c admin.c completer.c fault.c flow.c mr.c qp.c queue.c
 * requester.c responder.c teardown.c transport.c ud.c wqe.c xmit.c roce.c
 */
/*
 * Unit tests of the device core driven as a driver drives it: registers,
 * the admin queue and its completions, the async event queue, in guest
 * memory of the unit tests' host; no QEMU, no guest.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "host.h"

#define MEM_SIZE        (1 * MiB)
#define AQ_DEPTH        16
#define AEQ_DEPTH       16
#define AQ_ADDR         (UNIT_MEM_BASE + 0x0000)
#define ACQ_ADDR        (UNIT_MEM_BASE + 0x1000)
#define AEQ_ADDR        (UNIT_MEM_BASE + 0x2000)

/* The driver's side of the admin queue */
typedef struct Admin {
    RdmaSimState *s;
    uint32_t tail;              /* AQ producer */
    uint32_t cq_head;           /* ACQ consumer */
    uint32_t eq_head;           /* AEQ consumer */
    uint16_t id;
} Admin;

static void wr_reg(RdmaSimState *s, uint64_t addr, uint32_t val)
{
    rdma_sim_regs_write(s, addr, val);
}

static void admin_regs(RdmaSimState *s, uint64_t aq)
{
    wr_reg(s, A_RSIM_AQ_BASE_LO, aq);
    wr_reg(s, A_RSIM_AQ_BASE_HI, aq >> 32);
    wr_reg(s, A_RSIM_AQ_DEPTH, AQ_DEPTH);
    wr_reg(s, A_RSIM_ACQ_BASE_LO, (uint32_t)ACQ_ADDR);
    wr_reg(s, A_RSIM_ACQ_BASE_HI, ACQ_ADDR >> 32);
    wr_reg(s, A_RSIM_ACQ_DEPTH, AQ_DEPTH);
    wr_reg(s, A_RSIM_AEQ_BASE_LO, (uint32_t)AEQ_ADDR);
    wr_reg(s, A_RSIM_AEQ_BASE_HI, AEQ_ADDR >> 32);
    wr_reg(s, A_RSIM_AEQ_DEPTH, AEQ_DEPTH);
}

/* A device enabled through its registers, as a driver's probe does */
static void admin_start(Admin *a)
{
    a->s = unit_core_new(MEM_SIZE, 7);
    a->tail = a->cq_head = a->eq_head = 0;
    a->id = 0x100;
    admin_regs(a->s, AQ_ADDR);
    /* both causes masked after reset, as the datasheet says */
    g_assert_cmphex(rdma_sim_regs_read(a->s, A_RSIM_INTR_MASK), ==,
                    R_RSIM_INTR_MASK_ADMIN_MASK | R_RSIM_INTR_MASK_ASYNC_MASK);
    wr_reg(a->s, A_RSIM_INTR_MASK, 0);
    wr_reg(a->s, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
    g_assert_cmphex(rdma_sim_regs_read(a->s, A_RSIM_DEV_STATUS), ==,
                    R_RSIM_DEV_STATUS_READY_MASK);
}

static void admin_stop(Admin *a)
{
    unit_core_free(a->s);
}

/* The next async event, which must be there; returns its type */
static unsigned admin_event(Admin *a, uint32_t *object)
{
    const struct rsim_eqe *e = unit_mem(a->s, AEQ_ADDR + 16 * (a->eq_head %
                                        AEQ_DEPTH), 16);
    uint32_t dw0 = le32_to_cpu(e->dw0);

    g_assert_cmpuint(FIELD_EX32(dw0, RSIM_EQE_HDR, PHASE), ==,
                     !((a->eq_head / AEQ_DEPTH) & 1));
    *object = le32_to_cpu(e->object);
    a->eq_head++;
    wr_reg(a->s, A_RSIM_AEQ_HEAD, a->eq_head % AEQ_DEPTH);
    return FIELD_EX32(dw0, RSIM_EQE_HDR, TYPE);
}

/*
 * Post a command (params: len bytes after dword 0), let the device run,
 * and take its completion: returns the status, the result in *cqe
 */
static unsigned admin_cmd(Admin *a, unsigned opcode, const void *params,
                          size_t len, struct rsim_admin_cqe *cqe)
{
    struct rsim_admin_cmd *c = unit_mem(a->s, AQ_ADDR + 64 * a->tail, 64);
    const struct rsim_admin_cqe *done;
    uint32_t dw0;
    uint16_t id = a->id++;

    memset(c, 0, sizeof(*c));
    if (len) {
        memcpy(c->data, params, len);
    }
    c->dw0 = cpu_to_le32(opcode | (uint32_t)id << R_RSIM_CMD_HDR_ID_SHIFT);
    a->tail = (a->tail + 1) % AQ_DEPTH;
    wr_reg(a->s, A_RSIM_AQ_TAIL, a->tail);
    unit_run_bhs();

    done = unit_mem(a->s, ACQ_ADDR + 64 * (a->cq_head % AQ_DEPTH), 64);
    dw0 = le32_to_cpu(done->dw0);
    g_assert_cmpuint(FIELD_EX32(dw0, RSIM_CQE_HDR, PHASE), ==,
                     !((a->cq_head / AQ_DEPTH) & 1));
    g_assert_cmphex(FIELD_EX32(dw0, RSIM_CQE_HDR, ID), ==, id);
    g_assert_cmpuint(le16_to_cpu(done->sq_head), ==, a->tail);
    if (cqe) {
        *cqe = *done;
    }
    a->cq_head++;
    wr_reg(a->s, A_RSIM_ACQ_HEAD, a->cq_head % AQ_DEPTH);
    return FIELD_EX32(dw0, RSIM_CQE_HDR, STATUS);
}

/*
 * Enabled, the device announces its port (the host's link is up) and
 * answers QUERY_DEVICE with the node GUID its MAC makes; MSI-X vector 0
 * signals each completion and event.
 */
static void test_enable_query(void)
{
    struct rsim_admin_cqe cqe;
    const struct rsim_query_device_resp *r = (const void *)cqe.result;
    uint32_t object;
    Admin a;

    admin_start(&a);
    g_assert_cmpuint(admin_event(&a, &object), ==, RSIM_EV_PORT_ACTIVE);
    g_assert_cmpuint(object, ==, 1);
    g_assert_cmpuint(unit_host(a.s)->msix[0], ==, 1);

    g_assert_cmpuint(admin_cmd(&a, RSIM_CMD_QUERY_DEVICE, NULL, 0, &cqe), ==,
                     RSIM_STS_OK);
    g_assert_cmphex(le64_to_cpu(r->node_guid), ==, 0x505400fffe5e0007ull);
    g_assert_cmphex(le32_to_cpu(r->vendor_part_id), ==, RSIM_PCI_DEVICE_ID);
    g_assert_cmpuint(unit_host(a.s)->msix[0], ==, 2);

    /* the link goes down: an event, and QUERY_PORT says so */
    unit_host(a.s)->link_down = true;
    rdma_sim_port_update(a.s, false);
    g_assert_cmpuint(admin_event(&a, &object), ==, RSIM_EV_PORT_DOWN);
    g_assert_cmpuint(unit_host(a.s)->guest_errors, ==, 0);
    admin_stop(&a);
}

/*
 * Commands round the queue (three times its depth): phases flip on every
 * wrap; PDs up to the limit, then NO_RESOURCES; an unknown opcode,
 * reserved bytes set and a bad handle each get their status and change
 * nothing.
 */
static void test_commands(void)
{
    struct rsim_admin_cqe cqe;
    uint8_t params[60] = { 0 };
    uint32_t object, pdn;
    Admin a;

    admin_start(&a);
    admin_event(&a, &object);
    for (unsigned i = 0; i < 3 * AQ_DEPTH; i++) {
        g_assert_cmpuint(admin_cmd(&a, RSIM_CMD_NOP, NULL, 0, NULL), ==,
                         RSIM_STS_OK);
    }
    for (pdn = 0; pdn < a.s->props.max_pd; pdn++) {
        g_assert_cmpuint(admin_cmd(&a, RSIM_CMD_ALLOC_PD, NULL, 0, &cqe), ==,
                         RSIM_STS_OK);
        g_assert_cmpuint(le32_to_cpu(((struct rsim_create_resp *)
                                      cqe.result)->handle), ==, pdn);
    }
    g_assert_cmpuint(admin_cmd(&a, RSIM_CMD_ALLOC_PD, NULL, 0, NULL), ==,
                     RSIM_STS_NO_RESOURCES);
    g_assert_cmpuint(admin_cmd(&a, RSIM_CMD_MAX, NULL, 0, NULL), ==,
                     RSIM_STS_BAD_OPCODE);
    params[59] = 1;
    g_assert_cmpuint(admin_cmd(&a, RSIM_CMD_NOP, params, 60, NULL), ==,
                     RSIM_STS_RESERVED);
    memset(params, 0, sizeof(params));
    stl_le_p(params, 99);                       /* no PD 99 */
    g_assert_cmpuint(admin_cmd(&a, RSIM_CMD_DEALLOC_PD, params, 4, NULL), ==,
                     RSIM_STS_BAD_HANDLE);
    stl_le_p(params, 3);
    g_assert_cmpuint(admin_cmd(&a, RSIM_CMD_DEALLOC_PD, params, 4, NULL), ==,
                     RSIM_STS_OK);
    g_assert_cmpuint(admin_cmd(&a, RSIM_CMD_ALLOC_PD, NULL, 0, &cqe), ==,
                     RSIM_STS_OK);
    g_assert_cmpuint(le32_to_cpu(((struct rsim_create_resp *)
                                  cqe.result)->handle), ==, 3);
    /* the guest's three mistakes are logged; running out of PDs is not one */
    g_assert_cmpuint(unit_host(a.s)->guest_errors, ==, 3);
    admin_stop(&a);
}

/*
 * Hostile registers: ENABLE with an admin queue off its alignment is a
 * fatal error with its reason, and the device does nothing until reset;
 * a reset and good registers bring it back.
 */
static void test_bad_enable(void)
{
    RdmaSimState *s = unit_core_new(MEM_SIZE, 7);
    uint32_t st;

    admin_regs(s, AQ_ADDR + 8);
    wr_reg(s, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
    st = rdma_sim_regs_read(s, A_RSIM_DEV_STATUS);
    g_assert_true(FIELD_EX32(st, RSIM_DEV_STATUS, FATAL));
    g_assert_false(FIELD_EX32(st, RSIM_DEV_STATUS, READY));
    g_assert_cmpuint(FIELD_EX32(st, RSIM_DEV_STATUS, FATAL_REASON), ==,
                     RSIM_FATAL_BAD_ADMIN_CONFIG);
    wr_reg(s, A_RSIM_AQ_TAIL, 1);               /* ignored, logged */
    g_assert_cmpuint(unit_host(s)->guest_errors, ==, 2);

    wr_reg(s, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_RESET_MASK);
    g_assert_cmphex(rdma_sim_regs_read(s, A_RSIM_DEV_STATUS), ==, 0);
    admin_regs(s, AQ_ADDR);
    wr_reg(s, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
    g_assert_cmphex(rdma_sim_regs_read(s, A_RSIM_DEV_STATUS), ==,
                    R_RSIM_DEV_STATUS_READY_MASK);
    unit_core_free(s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/admin/enable-query", test_enable_query);
    g_test_add_func("/admin/commands", test_commands);
    g_test_add_func("/admin/bad-enable", test_bad_enable);
    return g_test_run();
}
