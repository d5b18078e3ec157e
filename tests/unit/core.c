/*
 * The unit tests' device with the whole core (host.h): what rdma-sim.c's
 * realize and reset do with QEMU, for a plain program.  Linked only into
 * the tests that link every core file.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "host.h"
#include "transport.h"

RdmaSimState *unit_core_new(uint64_t mem_size, uint8_t addr)
{
    RdmaSimState *s = unit_dev_new(mem_size);
    RdmaSimProps *p = &s->props;

    /* the defaults, and tables small enough to fill in a test */
    rdma_sim_props_default(p);
    p->max_qp = 16;
    p->max_cq = 16;
    p->max_srq = 4;
    p->max_mr = 16;
    p->max_pd = 8;
    p->max_ah = 8;
    p->max_gid = 4;
    p->max_sge = 4;
    p->max_qp_wr = 64;
    p->max_cqe = 256;
    p->max_inline = 256;
    p->max_rd_atom = 4;
    p->db_pages = 4;
    p->msix_vectors = 4;
    rdma_sim_objects_init(s);
    rdma_sim_admin_init(s);
    rdma_sim_transport_init(s);
    memcpy(s->perm_mac, "\x52\x54\x00\x5e\x00", 5);
    s->perm_mac[5] = addr;
    rdma_sim_reset_state(s);
    return s;
}

RdmaSimState *unit_core_ready(uint64_t mem_size, uint8_t addr)
{
    RdmaSimState *s = unit_core_new(mem_size, addr);

    s->dev_status = FIELD_DP32(s->dev_status, RSIM_DEV_STATUS, READY, 1);
    s->port_active = true;
    s->gids[0].valid = true;
    s->gids[0].gid[10] = s->gids[0].gid[11] = 0xff;
    s->gids[0].gid[12] = 10;
    s->gids[0].gid[15] = addr;
    return s;
}

void unit_core_free(RdmaSimState *s)
{
    rdma_sim_reset_state(s);
    rdma_sim_transport_cleanup(s);
    qemu_bh_delete(s->admin_bh);
    rdma_sim_objects_free(s);
    unit_dev_free(s);
}
