/* core: all */
/*
 * Unit tests of the device core driven as a driver drives it: registers,
 * the admin queue and its completions, the async event queue, in guest
 * memory of the unit tests' host; no QEMU, no guest.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "driver.h"

#define MEM_SIZE        (1 * MiB)

static void wr_reg(RdmaSimState *s, uint64_t addr, uint32_t val)
{
    rdma_sim_regs_write(s, addr, val);
}

/*
 * Enabled, the device announces its port (the host's link is up) and
 * answers QUERY_DEVICE with the node GUID its MAC makes; MSI-X vector 0
 * signals each completion and event.
 */
static void test_enable_query(void)
{
    struct rsim_admin_cqe cqe;
    struct rsim_query_device_resp r;
    uint32_t object;
    UDev a;

    udrv_start(&a, 7, MEM_SIZE);
    g_assert_cmpuint(udrv_event(&a, &object), ==, RSIM_EV_PORT_ACTIVE);
    g_assert_cmpuint(object, ==, 1);
    g_assert_cmpuint(unit_host(a.s)->msix[0], ==, 1);

    g_assert_cmpuint(udrv_cmd(&a, RSIM_CMD_QUERY_DEVICE, NULL, 0, &cqe), ==,
                     RSIM_STS_OK);
    memcpy(&r, cqe.result, sizeof(r));
    g_assert_cmphex(le64_to_cpu(r.node_guid), ==, 0x505400fffe5e0007ull);
    g_assert_cmphex(le32_to_cpu(r.vendor_part_id), ==, RSIM_PCI_DEVICE_ID);
    g_assert_cmpuint(unit_host(a.s)->msix[0], ==, 2);

    /* the link goes down: an event */
    unit_host(a.s)->link_down = true;
    rdma_sim_port_update(a.s, false);
    g_assert_cmpuint(udrv_event(&a, &object), ==, RSIM_EV_PORT_DOWN);
    g_assert_cmpuint(unit_host(a.s)->guest_errors, ==, 0);
    udrv_stop(&a);
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
    UDev a;

    udrv_start(&a, 7, MEM_SIZE);
    udrv_event(&a, &object);
    for (unsigned i = 0; i < 3 * UDRV_AQ_DEPTH; i++) {
        g_assert_cmpuint(udrv_cmd(&a, RSIM_CMD_NOP, NULL, 0, NULL), ==,
                         RSIM_STS_OK);
    }
    for (pdn = 0; pdn < a.s->props.max_pd; pdn++) {
        g_assert_cmpuint(udrv_cmd(&a, RSIM_CMD_ALLOC_PD, NULL, 0, &cqe), ==,
                         RSIM_STS_OK);
        g_assert_cmpuint(ldl_le_p(cqe.result), ==, pdn);  /* handle */
    }
    g_assert_cmpuint(udrv_cmd(&a, RSIM_CMD_ALLOC_PD, NULL, 0, NULL), ==,
                     RSIM_STS_NO_RESOURCES);
    g_assert_cmpuint(udrv_cmd(&a, RSIM_CMD_MAX, NULL, 0, NULL), ==,
                     RSIM_STS_BAD_OPCODE);
    params[59] = 1;
    g_assert_cmpuint(udrv_cmd(&a, RSIM_CMD_NOP, params, 60, NULL), ==,
                     RSIM_STS_RESERVED);
    memset(params, 0, sizeof(params));
    stl_le_p(params, 99);                       /* no PD 99 */
    g_assert_cmpuint(udrv_cmd(&a, RSIM_CMD_DEALLOC_PD, params, 4, NULL), ==,
                     RSIM_STS_BAD_HANDLE);
    stl_le_p(params, 3);
    g_assert_cmpuint(udrv_cmd(&a, RSIM_CMD_DEALLOC_PD, params, 4, NULL), ==,
                     RSIM_STS_OK);
    g_assert_cmpuint(udrv_cmd(&a, RSIM_CMD_ALLOC_PD, NULL, 0, &cqe), ==,
                     RSIM_STS_OK);
    g_assert_cmpuint(ldl_le_p(cqe.result), ==, 3);
    /* the guest's three mistakes are logged; running out of PDs is not one */
    g_assert_cmpuint(unit_host(a.s)->guest_errors, ==, 3);
    udrv_stop(&a);
}

/*
 * Hostile registers: ENABLE with an admin queue off its alignment is a
 * fatal error with its reason, and the device does nothing until reset;
 * a reset and good registers bring it back.
 */
static void test_bad_enable(void)
{
    UDev d;
    uint32_t st;

    udrv_start(&d, 7, MEM_SIZE);
    wr_reg(d.s, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_RESET_MASK);
    udrv_regs(&d, d.aq + 8);
    wr_reg(d.s, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
    st = rdma_sim_regs_read(d.s, A_RSIM_DEV_STATUS);
    g_assert_true(FIELD_EX32(st, RSIM_DEV_STATUS, FATAL));
    g_assert_false(FIELD_EX32(st, RSIM_DEV_STATUS, READY));
    g_assert_cmpuint(FIELD_EX32(st, RSIM_DEV_STATUS, FATAL_REASON), ==,
                     RSIM_FATAL_BAD_ADMIN_CONFIG);
    wr_reg(d.s, A_RSIM_AQ_TAIL, 1);             /* ignored, logged */
    g_assert_cmpuint(unit_host(d.s)->guest_errors, ==, 2);

    wr_reg(d.s, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_RESET_MASK);
    g_assert_cmphex(rdma_sim_regs_read(d.s, A_RSIM_DEV_STATUS), ==, 0);
    udrv_regs(&d, d.aq);
    wr_reg(d.s, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
    g_assert_cmphex(rdma_sim_regs_read(d.s, A_RSIM_DEV_STATUS), ==,
                    R_RSIM_DEV_STATUS_READY_MASK);
    udrv_stop(&d);
}

/*
 * CREATE_CQ's doorbell page is 32 bits wide: one beyond DB_PAGES is
 * refused however large (0x10000 once passed, cut to 16 bits before the
 * check), and the CQ made with the last page is good.
 */
static void test_cq_db_page(void)
{
    struct rsim_cmd_create_eq eq = { 0 };
    struct rsim_cmd_create_cq cq = { 0 };
    uint64_t bytes = RSIM_QUEUE_DATA_OFFSET +
                     (1ull << (6 + RSIM_CQE_LOG2_SLOT));
    static const uint32_t bad[] = { 4, 0x10000, 0x10003, UINT32_MAX };
    uint32_t object;
    uint64_t ring;
    UDev a;

    udrv_start(&a, 7, MEM_SIZE);
    udrv_event(&a, &object);
    eq.vector = cpu_to_le32(1);
    eq.addr = cpu_to_le64(udrv_alloc(&a, 64 * RSIM_EQ_ENTRY_SIZE));
    eq.depth = cpu_to_le32(64);
    cq.eqn = cpu_to_le32(udrv_create(&a, RSIM_CMD_CREATE_EQ, &eq, sizeof(eq),
                                     NULL));
    ring = udrv_alloc(&a, bytes);
    cq.q.addr = cpu_to_le64(ring);
    cq.q.level = RSIM_PBL_LEVEL0;
    cq.q.log2_elem_size = RSIM_CQE_LOG2_SLOT;
    cq.q.log2_depth = 6;
    stl_le_p(unit_mem(a.s, ring + RSIM_QUEUE_LOG2_ELEM_OFFSET, 4),
             RSIM_CQE_LOG2_SLOT);
    stl_le_p(unit_mem(a.s, ring + RSIM_QUEUE_MASK_OFFSET, 4), 63);
    g_assert_cmpuint(a.s->props.db_pages, ==, 4);
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        cq.db_page = cpu_to_le32(bad[i]);
        g_assert_cmpuint(udrv_cmd(&a, RSIM_CMD_CREATE_CQ, (uint8_t *)&cq + 4,
                                  sizeof(cq) - 4, NULL), ==, RSIM_STS_INVALID);
    }
    cq.db_page = cpu_to_le32(3);
    g_assert_cmpuint(udrv_cmd(&a, RSIM_CMD_CREATE_CQ, (uint8_t *)&cq + 4,
                              sizeof(cq) - 4, NULL), ==, RSIM_STS_OK);
    udrv_stop(&a);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/admin/enable-query", test_enable_query);
    g_test_add_func("/admin/commands", test_commands);
    g_test_add_func("/admin/bad-enable", test_bad_enable);
    g_test_add_func("/admin/cq-db-page", test_cq_db_page);
    return g_test_run();
}
