/*
 * rdma-sim: fault injection: the generator, and the faults towards the driver
 *
 * One generator draws every injected fault, so that fault-seed makes a run
 * repeat: the wire's faults (fault-drop, -reorder, -dup, -corrupt, applied
 * where transport.c sends a frame) and the driver's (fault-driver, here).
 *
 * A driver must survive a device that tells it nonsense, as the device
 * survives a guest that does.  On request the device damages one field of
 * a share of the entries it writes for the driver: completions, event
 * queue entries (async and completion EQs) and admin completions.  The
 * phase bits stay intact: the entry arrives, with a wrong value in it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "platform.h"
#include "device.h"
#include "trace.h"

/* xorshift64*: a small generator whose sequence the fault-seed fixes */
uint32_t rdma_sim_fault_rand(RdmaSimState *s)
{
    s->fault_rng ^= s->fault_rng >> 12;
    s->fault_rng ^= s->fault_rng << 25;
    s->fault_rng ^= s->fault_rng >> 27;
    return (s->fault_rng * 0x2545f4914f6cdd1dull) >> 32;
}

bool rdma_sim_fault_hit(RdmaSimState *s, uint32_t ppm)
{
    return ppm && rdma_sim_fault_rand(s) % 1000000 < ppm;
}

/* A little-endian field of an entry, size 1, 2, 4 or 8 bytes */
typedef struct RdmaSimFaultField {
    const char *name;
    uint8_t offset, size;
} RdmaSimFaultField;

#define F(type, field, name) \
    { name, offsetof(type, field), sizeof_field(type, field) }

static const RdmaSimFaultField rdma_sim_cqe_fields[] = {
    F(struct rsim_cqe, wr_id, "wr_id"),
    F(struct rsim_cqe, status, "status"),
    F(struct rsim_cqe, opcode, "opcode"),
    F(struct rsim_cqe, qp_num, "qp_num"),
    F(struct rsim_cqe, byte_len, "byte_len"),
};

/* TYPE is byte 1 of dword 0 (PHASE is bit 0) */
static const RdmaSimFaultField rdma_sim_eqe_fields[] = {
    { "type", 1, 1 },
    F(struct rsim_eqe, object, "object"),
};

/* ID is bytes 0-1 of dword 0, STATUS byte 2 (PHASE is bit 31) */
static const RdmaSimFaultField rdma_sim_acqe_fields[] = {
    { "id", 0, 2 },
    { "status", 2, 1 },
};

#undef F

QEMU_BUILD_BUG_ON(R_RSIM_EQE_HDR_TYPE_SHIFT != 8 ||
                  R_RSIM_EQE_HDR_TYPE_LENGTH != 8 ||
                  R_RSIM_CQE_HDR_ID_SHIFT != 0 ||
                  R_RSIM_CQE_HDR_ID_LENGTH != 16 ||
                  R_RSIM_CQE_HDR_STATUS_SHIFT != 16 ||
                  R_RSIM_CQE_HDR_STATUS_LENGTH != 8);

static const struct {
    const char *name;
    const RdmaSimFaultField *fields;
    unsigned n;
} rdma_sim_fault_entries[] = {
    [RDMA_SIM_FAULT_CQE] = { "CQE", rdma_sim_cqe_fields,
                             ARRAY_SIZE(rdma_sim_cqe_fields) },
    [RDMA_SIM_FAULT_EQE] = { "EQE", rdma_sim_eqe_fields,
                             ARRAY_SIZE(rdma_sim_eqe_fields) },
    [RDMA_SIM_FAULT_ACQE] = { "admin CQE", rdma_sim_acqe_fields,
                              ARRAY_SIZE(rdma_sim_acqe_fields) },
};

void rdma_sim_fault_driver(RdmaSimState *s, RdmaSimFaultEntry kind,
                           void *entry)
{
    const RdmaSimFaultField *f;
    uint64_t old, val;
    uint8_t *p;

    if (!rdma_sim_fault_hit(s, s->props.fault_driver)) {
        return;
    }
    f = &rdma_sim_fault_entries[kind].fields[rdma_sim_fault_rand(s) %
                                             rdma_sim_fault_entries[kind].n];
    p = (uint8_t *)entry + f->offset;
    old = ldn_le_p(p, f->size);
    /*
     * Small values are what valid handles, types, opcodes and statuses
     * look like: the driver has to notice that they are the wrong ones.
     */
    val = (uint64_t)rdma_sim_fault_rand(s) << 32 | rdma_sim_fault_rand(s);
    switch (rdma_sim_fault_rand(s) % 3) {
    case 0:
        val %= 16;
        break;
    case 1:
        val %= 256;
        break;
    }
    if (f->size < 8) {
        val &= (1ull << (f->size * 8)) - 1;
    }
    if (val == old) {
        val ^= 1;
    }
    stn_le_p(p, f->size, val);
    s->stats[RSIM_STAT_FAULT_DRIVER]++;
    trace_rdma_sim_fault_driver(rdma_sim_fault_entries[kind].name, f->name,
                                old, val);
}
