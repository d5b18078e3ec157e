/*
 * rdma-sim: the device's properties - one table of each one's name,
 * default, range and meaning, which each host presents its own way (QEMU:
 * a QOM property per row, -device rdma-sim,help; the unit tests' host:
 * the defaults)
 *
 * docs/datasheet.md section 2 lists the same; a test compares the two
 * (tests/docs/datasheet-props.py).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "platform.h"
#include "device.h"

#define PROP(field) offsetof(RdmaSimProps, field)

const RdmaSimPropInfo rdma_sim_props[] = {
    { "max-qp", PROP(max_qp), 1024, 2, RDMA_SIM_MAX_QP_LIMIT,
      "QP table size; QPNs 2..max-qp-1 (QPN 1 is the GSI QP)" },
    { "max-cq", PROP(max_cq), 1024, 1, RDMA_SIM_MAX_OBJECTS,
      "completion queues" },
    { "max-srq", PROP(max_srq), 256, 1, RDMA_SIM_MAX_OBJECTS,
      "shared receive queues" },
    { "max-mr", PROP(max_mr), 8192, 1, RDMA_SIM_MAX_OBJECTS,
      "MR/stag table entries (the key index range)" },
    { "max-pd", PROP(max_pd), 1024, 1, RDMA_SIM_MAX_OBJECTS,
      "protection domains" },
    { "max-ah", PROP(max_ah), 1024, 2, RDMA_SIM_MAX_OBJECTS,
      "address handles (numbers 1..max-ah-1)" },
    { "max-gid", PROP(max_gid), 16, 1, 256,
      "GID table entries of the port" },
    { "max-sge", PROP(max_sge), 16, 1, RDMA_SIM_MAX_SGE,
      "scatter/gather entries per send, receive and SRQ work request" },
    { "max-qp-wr", PROP(max_qp_wr), 16384, 1, 32767,
      "work requests per send/receive queue" },
    { "max-cqe", PROP(max_cqe), 65535, 1, 4194303,
      "entries per completion queue" },
    { "max-inline", PROP(max_inline), 512, 0, RDMA_SIM_MAX_INLINE,
      "inline data bytes per send work request" },
    { "max-rd-atom", PROP(max_rd_atom), 128, 1, 128,
      "RDMA READ/atomic operations in flight per QP, each direction" },
    { "db-pages", PROP(db_pages), 64, 1, RDMA_SIM_MAX_DB_PAGES,
      "4 KiB doorbell pages in BAR2 (page 0: the kernel driver's)" },
    { "msix-vectors", PROP(msix_vectors), 9, 2, RDMA_SIM_MAX_MSIX,
      "MSI-X vectors: 0 for admin and async events, the rest for "
      "completion EQs" },
    { "tx-window", PROP(tx_window), 80, 4, 1024,
      "KiB of unacknowledged RC payload the port keeps in flight, all QPs "
      "together, READ responses included (they leave it at this much per "
      "round trip); keep it below what the receiving host's UDP socket "
      "buffers (80 fits its default 208 KiB, counted with the kernel's "
      "overhead)" },
    { "fault-drop", PROP(fault_drop), 0, 0, 1000000,
      "drop this share of transmitted RoCE frames, parts per million" },
    { "fault-dup", PROP(fault_dup), 0, 0, 1000000,
      "duplicate this share of transmitted RoCE frames, ppm" },
    { "fault-reorder", PROP(fault_reorder), 0, 0, 1000000,
      "hold this share of transmitted RoCE frames back behind the next "
      "one, ppm" },
    { "fault-corrupt", PROP(fault_corrupt), 0, 0, 1000000,
      "flip a bit in this share of transmitted RoCE frames, ppm" },
    { "fault-driver", PROP(fault_driver), 0, 0, 1000000,
      "damage one field in this share of the completions, events and "
      "admin completions written for the driver, ppm" },
};

#undef PROP

const size_t rdma_sim_nprops = ARRAY_SIZE(rdma_sim_props);

/* Send WQEs of the largest max-sge and max-inline fit a ring element */
QEMU_BUILD_BUG_ON(RSIM_SEND_WQE_HDR_SIZE + RDMA_SIM_MAX_INLINE >
                  RDMA_SIM_MAX_ELEM_SIZE);
QEMU_BUILD_BUG_ON(RSIM_SEND_WQE_HDR_SIZE + RDMA_SIM_MAX_SGE * 16 >
                  RDMA_SIM_MAX_ELEM_SIZE);

uint32_t *rdma_sim_prop_ptr(RdmaSimProps *props, const RdmaSimPropInfo *info)
{
    return (uint32_t *)((uint8_t *)props + info->offset);
}

void rdma_sim_props_default(RdmaSimProps *props)
{
    for (size_t i = 0; i < rdma_sim_nprops; i++) {
        *rdma_sim_prop_ptr(props, &rdma_sim_props[i]) = rdma_sim_props[i].def;
    }
}
