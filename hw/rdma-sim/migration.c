/*
 * rdma-sim: migration and snapshots (VMState)
 *
 * Everything the device knows goes into the stream: registers, the admin
 * and event queues' positions, every object table, each QP's transport
 * state with its private WQE copies, timers and the frames waiting to be
 * received.  Nothing of it points into guest memory (all DMA is
 * synchronous), so a stream is complete without the RAM it comes with.
 *
 * The object tables are sparse and can be large (QPs up to 2^20, the
 * others up to 2^24 entries), so each goes as a list of (index, entry)
 * pairs of the entries in use, ended by RDMA_SIM_MIG_END, and is rebuilt
 * on load.  What can be recomputed is: reference counts, the host memory
 * charged, the port's bytes in flight and the lists that link objects
 * (work list, QPs waiting for the budget, CQs waiting for EQ room).  Times
 * travel as durations relative to QEMU_CLOCK_VIRTUAL at save, because a
 * destination's clock need not continue the source's (qtest's does not).
 *
 * A stream is untrusted input to the same degree as a command: every
 * index and count in it is checked before it is used, and a stream that
 * does not fit the destination's properties is refused with a message.
 * Later versions add state in subsections, so that they still load the
 * streams of this one.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "hw/pci/msix.h"
#include "migration/qemu-file-types.h"
#include "migration/vmstate.h"
#include "device.h"
#include "transport.h"
#include "stages.h"
#include "trace.h"

/* Ends a table's list of entries and a frame queue's list of frames */
#define RDMA_SIM_MIG_END        UINT32_MAX

static int rdma_sim_mig_refuse(const char *what, uint32_t index,
                               const char *why)
{
    error_report("rdma-sim: migration stream: %s %u: %s (the source and "
                 "destination must run the same rdma-sim with the same "
                 "properties)", what, index, why);
    return -EINVAL;
}

/*
 * One VMStateDescription's fields, inside the device's own VMStateInfo
 * callbacks, which have no Error ** to pass on: a failure is reported here.
 * The entries in a stream are all version 1 (later versions add
 * subsections).
 */
static int rdma_sim_vmsd_save(QEMUFile *f, const VMStateDescription *vmsd,
                              void *opaque)
{
    Error *err = NULL;
    int ret = vmstate_save_state(f, vmsd, opaque, NULL, &err);

    if (ret) {
        error_report_err(err);
    }
    return ret;
}

static int rdma_sim_vmsd_load(QEMUFile *f, const VMStateDescription *vmsd,
                              void *opaque)
{
    Error *err = NULL;
    int ret = vmstate_load_state(f, vmsd, opaque, 1, &err);

    if (ret) {
        error_report_err(err);
    }
    return ret;
}

static int64_t rdma_sim_mig_now(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

/* A timer as the time left until it fires, -1 when it is idle */
static int64_t rdma_sim_timer_save(QEMUTimer *t)
{
    int64_t at = timer_expire_time_ns(t);

    return at < 0 ? -1 : MAX(0, at - rdma_sim_mig_now());
}

static void rdma_sim_timer_load(QEMUTimer *t, int64_t left)
{
    if (left >= 0) {
        timer_mod(t, rdma_sim_mig_now() + left);
    }
}

/*
 * Rings
 */

static const VMStateDescription vmstate_rdma_sim_pl = {
    .name = "rdma-sim/page-list",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (VMStateField[]) {
        VMSTATE_UINT64(addr, RdmaSimPageList),
        VMSTATE_UINT32(npages, RdmaSimPageList),
        VMSTATE_UINT32(fbo, RdmaSimPageList),
        VMSTATE_UINT8(level, RdmaSimPageList),
        VMSTATE_UINT8(page_shift, RdmaSimPageList),
        VMSTATE_END_OF_LIST()
    }
};

static bool rdma_sim_page_shift_ok(unsigned shift)
{
    return shift < 32 && (RDMA_SIM_PAGE_SIZES & (1u << shift));
}

/*
 * Before pages[] is allocated: the ring's geometry must be one that
 * rdma_sim_ring_init() accepts, pages_len what it gives; the derived
 * fields follow from it.
 */
static bool rdma_sim_ring_geometry_ok(void *opaque, int version_id)
{
    RdmaSimRing *r = opaque;
    uint64_t n = 0;

    if (!r->depth) {                    /* an unused RQ (the QP has an SRQ) */
        return !r->pages_len && !r->log2_elem;
    }
    if (!is_power_of_2(r->depth) || r->depth > (1u << 22) ||
        r->log2_elem > 13 || r->pl.level > RSIM_PBL_LEVEL2 ||
        (r->pl.level != RSIM_PBL_LEVEL0 &&
         !rdma_sim_page_shift_ok(r->pl.page_shift))) {
        return false;
    }
    r->bytes = RSIM_QUEUE_DATA_OFFSET + ((uint64_t)r->depth << r->log2_elem);
    r->mask = r->depth - 1;
    if (r->pl.level != RSIM_PBL_LEVEL0) {
        n = (r->bytes + (1ull << r->pl.page_shift) - 1) >> r->pl.page_shift;
    }
    r->host_mem = n * sizeof(*r->pages);
    return r->pages_len == n;
}

static const VMStateDescription vmstate_rdma_sim_ring = {
    .name = "rdma-sim/ring",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (VMStateField[]) {
        VMSTATE_STRUCT(pl, RdmaSimRing, 1, vmstate_rdma_sim_pl,
                       RdmaSimPageList),
        VMSTATE_UINT32(depth, RdmaSimRing),
        VMSTATE_UINT8(log2_elem, RdmaSimRing),
        VMSTATE_UINT32(pages_len, RdmaSimRing),
        VMSTATE_VALIDATE("ring geometry", rdma_sim_ring_geometry_ok),
        VMSTATE_VARRAY_UINT32_ALLOC(pages, RdmaSimRing, pages_len, 0,
                                    vmstate_info_uint64, dma_addr_t),
        VMSTATE_END_OF_LIST()
    }
};

/*
 * Entries of the object tables
 */

static const VMStateDescription vmstate_rdma_sim_pd = {
    .name = "rdma-sim/pd",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (VMStateField[]) {
        VMSTATE_BOOL(valid, RdmaSimPd),
        VMSTATE_END_OF_LIST()
    }
};

static const VMStateDescription vmstate_rdma_sim_mr = {
    .name = "rdma-sim/mr",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (VMStateField[]) {
        VMSTATE_UINT8(state, RdmaSimMr),
        VMSTATE_BOOL(phys, RdmaSimMr),
        VMSTATE_BOOL(fast_reg, RdmaSimMr),
        VMSTATE_UINT32(key, RdmaSimMr),
        VMSTATE_UINT32(pdn, RdmaSimMr),
        VMSTATE_UINT32(access, RdmaSimMr),
        VMSTATE_UINT64(iova, RdmaSimMr),
        VMSTATE_UINT64(length, RdmaSimMr),
        VMSTATE_UINT32(max_pages, RdmaSimMr),
        VMSTATE_UINT64(fr_list, RdmaSimMr),
        VMSTATE_STRUCT(pl, RdmaSimMr, 1, vmstate_rdma_sim_pl,
                       RdmaSimPageList),
        VMSTATE_END_OF_LIST()
    }
};

/* struct rsim_av is the little-endian layout of the datasheet: raw bytes */
static const VMStateDescription vmstate_rdma_sim_ah = {
    .name = "rdma-sim/ah",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (VMStateField[]) {
        VMSTATE_BOOL(valid, RdmaSimAh),
        VMSTATE_UINT32(pdn, RdmaSimAh),
        VMSTATE_BUFFER_UNSAFE(av, RdmaSimAh, 1, sizeof(struct rsim_av)),
        VMSTATE_END_OF_LIST()
    }
};

static const VMStateDescription vmstate_rdma_sim_gid = {
    .name = "rdma-sim/gid",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (VMStateField[]) {
        VMSTATE_BOOL(valid, RdmaSimGid),
        VMSTATE_BUFFER(gid, RdmaSimGid),
        VMSTATE_END_OF_LIST()
    }
};

static const VMStateDescription vmstate_rdma_sim_eq = {
    .name = "rdma-sim/eq",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (VMStateField[]) {
        VMSTATE_BOOL(valid, RdmaSimEq),
        VMSTATE_BOOL(armed, RdmaSimEq),
        VMSTATE_UINT32(vector, RdmaSimEq),
        VMSTATE_UINT64(addr, RdmaSimEq),
        VMSTATE_UINT32(depth, RdmaSimEq),
        VMSTATE_UINT32(tail, RdmaSimEq),
        VMSTATE_UINT32(head, RdmaSimEq),
        VMSTATE_BOOL(phase, RdmaSimEq),
        VMSTATE_BOOL_ARRAY(eth_waiting, RdmaSimEq, 2),
        VMSTATE_END_OF_LIST()
    }
};

/* event_waiting: the CQ is put back on its EQ's waiting list */
static const VMStateDescription vmstate_rdma_sim_cq = {
    .name = "rdma-sim/cq",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (VMStateField[]) {
        VMSTATE_UINT32(cqn, RdmaSimCq),
        VMSTATE_UINT32(eqn, RdmaSimCq),
        VMSTATE_UINT16(db_page, RdmaSimCq),
        VMSTATE_UINT8(arm, RdmaSimCq),
        VMSTATE_BOOL(event_waiting, RdmaSimCq),
        VMSTATE_BOOL(overflow_reported, RdmaSimCq),
        VMSTATE_UINT32(prod, RdmaSimCq),
        VMSTATE_STRUCT(ring, RdmaSimCq, 1, vmstate_rdma_sim_ring, RdmaSimRing),
        VMSTATE_END_OF_LIST()
    }
};

static const VMStateDescription vmstate_rdma_sim_srq = {
    .name = "rdma-sim/srq",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (VMStateField[]) {
        VMSTATE_UINT32(srqn, RdmaSimSrq),
        VMSTATE_UINT32(pdn, RdmaSimSrq),
        VMSTATE_UINT16(db_page, RdmaSimSrq),
        VMSTATE_UINT8(max_sge, RdmaSimSrq),
        VMSTATE_UINT32(limit, RdmaSimSrq),
        VMSTATE_UINT32(cons, RdmaSimSrq),
        VMSTATE_STRUCT(ring, RdmaSimSrq, 1, vmstate_rdma_sim_ring,
                       RdmaSimRing),
        VMSTATE_END_OF_LIST()
    }
};

/* on_work_list and flow_blocked: the QP is put back on those lists */
static const VMStateDescription vmstate_rdma_sim_qp = {
    .name = "rdma-sim/qp",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (VMStateField[]) {
        VMSTATE_UINT32(qpn, RdmaSimQp),
        VMSTATE_UINT8(type, RdmaSimQp),
        VMSTATE_UINT8(state, RdmaSimQp),
        VMSTATE_BOOL(sig_all, RdmaSimQp),
        VMSTATE_BOOL(sq_draining, RdmaSimQp),
        VMSTATE_UINT16(db_page, RdmaSimQp),
        VMSTATE_UINT32(pdn, RdmaSimQp),
        VMSTATE_UINT32(send_cqn, RdmaSimQp),
        VMSTATE_UINT32(recv_cqn, RdmaSimQp),
        VMSTATE_UINT32(srqn, RdmaSimQp),
        VMSTATE_UINT8(max_send_sge, RdmaSimQp),
        VMSTATE_UINT8(max_recv_sge, RdmaSimQp),
        VMSTATE_UINT16(max_inline, RdmaSimQp),
        VMSTATE_STRUCT(sq, RdmaSimQp, 1, vmstate_rdma_sim_ring, RdmaSimRing),
        VMSTATE_STRUCT(rq, RdmaSimQp, 1, vmstate_rdma_sim_ring, RdmaSimRing),
        VMSTATE_UINT32(sq_cons, RdmaSimQp),
        VMSTATE_UINT32(rq_cons, RdmaSimQp),
        VMSTATE_UINT32(qkey, RdmaSimQp),
        VMSTATE_UINT32(rq_psn, RdmaSimQp),
        VMSTATE_UINT32(sq_psn, RdmaSimQp),
        VMSTATE_UINT32(dest_qpn, RdmaSimQp),
        VMSTATE_UINT32(access, RdmaSimQp),
        VMSTATE_UINT16(pkey_index, RdmaSimQp),
        VMSTATE_UINT8(port, RdmaSimQp),
        VMSTATE_UINT8(path_mtu, RdmaSimQp),
        VMSTATE_UINT8(path_mig_state, RdmaSimQp),
        VMSTATE_UINT8(max_rd_atomic, RdmaSimQp),
        VMSTATE_UINT8(max_dest_rd_atomic, RdmaSimQp),
        VMSTATE_UINT8(min_rnr_timer, RdmaSimQp),
        VMSTATE_UINT8(timeout, RdmaSimQp),
        VMSTATE_UINT8(retry_cnt, RdmaSimQp),
        VMSTATE_UINT8(rnr_retry, RdmaSimQp),
        VMSTATE_BOOL(en_sqd_async_notify, RdmaSimQp),
        VMSTATE_BUFFER_UNSAFE(av, RdmaSimQp, 1, sizeof(struct rsim_av)),
        VMSTATE_BOOL(on_work_list, RdmaSimQp),
        VMSTATE_BOOL(flow_blocked, RdmaSimQp),
        VMSTATE_END_OF_LIST()
    }
};

/*
 * A QP's transport state
 */

static const VMStateDescription vmstate_rdma_sim_path = {
    .name = "rdma-sim/path",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (VMStateField[]) {
        VMSTATE_BUFFER(smac, RocePath),
        VMSTATE_BUFFER(dmac, RocePath),
        VMSTATE_BUFFER(sip, RocePath),
        VMSTATE_BUFFER(dip, RocePath),
        VMSTATE_BOOL(ipv6, RocePath),
        VMSTATE_UINT8(tclass, RocePath),
        VMSTATE_UINT8(hop_limit, RocePath),
        VMSTATE_UINT32(flow_label, RocePath),
        VMSTATE_UINT16(sport, RocePath),
        VMSTATE_END_OF_LIST()
    }
};

static const VMStateDescription vmstate_rdma_sim_sgl = {
    .name = "rdma-sim/sge",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (VMStateField[]) {
        VMSTATE_UINT64(addr, RdmaSimSgl),
        VMSTATE_UINT32(length, RdmaSimSgl),
        VMSTATE_UINT32(lkey, RdmaSimSgl),
        VMSTATE_END_OF_LIST()
    }
};

static const VMStateDescription vmstate_rdma_sim_resource = {
    .name = "rdma-sim/responder-resource",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (VMStateField[]) {
        VMSTATE_BOOL(valid, RdmaSimResource),
        VMSTATE_BOOL(atomic, RdmaSimResource),
        VMSTATE_BOOL(pending, RdmaSimResource),
        VMSTATE_UINT32(next_pkt, RdmaSimResource),
        VMSTATE_UINT32(first_psn, RdmaSimResource),
        VMSTATE_UINT32(npkts, RdmaSimResource),
        VMSTATE_UINT64(va, RdmaSimResource),
        VMSTATE_UINT32(rkey, RdmaSimResource),
        VMSTATE_UINT32(length, RdmaSimResource),
        VMSTATE_UINT64(orig, RdmaSimResource),
        VMSTATE_END_OF_LIST()
    }
};

/* The header of a send WQE copy; its SGEs or inline bytes follow it */
static const VMStateDescription vmstate_rdma_sim_wqe = {
    .name = "rdma-sim/send-wqe",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (VMStateField[]) {
        VMSTATE_UINT64(wr_id, RdmaSimWqe),
        VMSTATE_UINT32(opcode, RdmaSimWqe),
        VMSTATE_UINT32(flags, RdmaSimWqe),
        VMSTATE_UINT32(ex, RdmaSimWqe),
        VMSTATE_UINT64(remote_addr, RdmaSimWqe),
        VMSTATE_UINT32(rkey, RdmaSimWqe),
        VMSTATE_UINT64(compare_add, RdmaSimWqe),
        VMSTATE_UINT64(swap, RdmaSimWqe),
        VMSTATE_UINT32(ah_num, RdmaSimWqe),
        VMSTATE_UINT32(remote_qpn, RdmaSimWqe),
        VMSTATE_UINT32(remote_qkey, RdmaSimWqe),
        /* as posted: little-endian */
        VMSTATE_BUFFER_UNSAFE(reg, RdmaSimWqe, 1, sizeof(struct rsim_wr_reg)),
        VMSTATE_UINT32(length, RdmaSimWqe),
        VMSTATE_UINT32(num_sge, RdmaSimWqe),
        VMSTATE_BOOL(is_inline, RdmaSimWqe),
        VMSTATE_BOOL(signaled, RdmaSimWqe),
        VMSTATE_BOOL(started, RdmaSimWqe),
        VMSTATE_BOOL(done, RdmaSimWqe),
        VMSTATE_UINT8(status, RdmaSimWqe),
        VMSTATE_UINT32(first_psn, RdmaSimWqe),
        VMSTATE_UINT32(npkts, RdmaSimWqe),
        VMSTATE_UINT32(next_pkt, RdmaSimWqe),
        VMSTATE_UINT32(rcvd_pkts, RdmaSimWqe),
        VMSTATE_UINT32(read_chunk, RdmaSimWqe),
        VMSTATE_END_OF_LIST()
    }
};

static int rdma_sim_xport_pre_save(void *opaque)
{
    RdmaSimXport *x = opaque;

    x->saved_timer_ns[0] = rdma_sim_timer_save(x->retry_timer);
    x->saved_timer_ns[1] = rdma_sim_timer_save(x->rnr_timer);
    x->saved_timer_ns[2] = rdma_sim_timer_save(x->probe_timer);
    x->saved_rtt_age_ns = x->rtt_sent_ns ?
                          rdma_sim_mig_now() - x->rtt_sent_ns : -1;
    return 0;
}

static bool rdma_sim_rwqe_nsge_ok(void *opaque, int version_id)
{
    RdmaSimXport *x = opaque;

    return x->rwqe_nsge <= x->rwqe_max;
}

static int rdma_sim_xport_post_load(void *opaque, int version_id)
{
    RdmaSimXport *x = opaque;
    int64_t sent;

    if (x->res_next >= x->nres || x->rd_head >= x->nres ||
        x->rd_count > x->nres || x->msg > RDMA_SIM_RESP_WRITE ||
        !x->window || x->window > RDMA_SIM_WINDOW || !x->mtu ||
        x->mtu > ROCE_MAX_PAYLOAD) {
        return -EINVAL;
    }
    for (uint32_t i = 0; i < x->nres; i++) {
        if (x->rd_fifo[i] >= x->nres) {
            return -EINVAL;
        }
    }
    /* 0 means "nothing timed": a sample that would land on it is lost */
    sent = x->saved_rtt_age_ns < 0 ? 0
           : rdma_sim_mig_now() - x->saved_rtt_age_ns;
    x->rtt_sent_ns = MAX(sent, 0);
    rdma_sim_timer_load(x->retry_timer, x->saved_timer_ns[0]);
    rdma_sim_timer_load(x->rnr_timer, x->saved_timer_ns[1]);
    rdma_sim_timer_load(x->probe_timer, x->saved_timer_ns[2]);
    return 0;
}

/* msg is an enum: the stream carries it as 32 bits */
QEMU_BUILD_BUG_ON(sizeof(enum rdma_sim_resp_msg) != sizeof(uint32_t));

/*
 * An array of nres structures at a pointer (QEMU's
 * VMSTATE_STRUCT_VARRAY_POINTER_UINT32 reads its count as an int32)
 */
#define RDMA_SIM_STRUCT_VARRAY(_field, _state, _num, _vmsd, _type) {     \
    .name = stringify(_field),                                   \
    .num_offset = vmstate_offset_value(_state, _num, uint32_t),  \
    .size = sizeof(_type),                                       \
    .vmsd = &(_vmsd),                                            \
    .flags = VMS_POINTER | VMS_VARRAY_UINT32 | VMS_STRUCT,       \
    .offset = vmstate_offset_pointer(_state, _field, _type),     \
}

/*
 * nres goes ahead of this (the arrays are allocated for it), the WQE
 * copies after it (rdma_sim_wqes_save()).
 */
static const VMStateDescription vmstate_rdma_sim_xport = {
    .name = "rdma-sim/transport",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = rdma_sim_xport_pre_save,
    .post_load = rdma_sim_xport_post_load,
    .fields = (VMStateField[]) {
        VMSTATE_STRUCT(path, RdmaSimXport, 1, vmstate_rdma_sim_path, RocePath),
        VMSTATE_UINT32(mtu, RdmaSimXport),
        VMSTATE_UINT32(window, RdmaSimXport),
        /* requester */
        VMSTATE_UINT32(req_idx, RdmaSimXport),
        VMSTATE_UINT32(fetched, RdmaSimXport),
        VMSTATE_UINT32(next_psn, RdmaSimXport),
        VMSTATE_UINT32(comp_psn, RdmaSimXport),
        VMSTATE_UINT32(rd_atomic_out, RdmaSimXport),
        VMSTATE_UINT32(pkts_since_ackreq, RdmaSimXport),
        VMSTATE_UINT8(retry_left, RdmaSimXport),
        VMSTATE_UINT8(rnr_left, RdmaSimXport),
        VMSTATE_BOOL(rnr_wait, RdmaSimXport),
        VMSTATE_BOOL(req_error, RdmaSimXport),
        VMSTATE_BOOL(cq_stalled, RdmaSimXport),
        VMSTATE_UINT32(last_nak_psn, RdmaSimXport),
        VMSTATE_BOOL(nak_restart_valid, RdmaSimXport),
        VMSTATE_UINT32(rnr_psn, RdmaSimXport),
        VMSTATE_BOOL(go_back, RdmaSimXport),
        VMSTATE_UINT32(go_back_psn, RdmaSimXport),
        /* flow control and loss recovery */
        VMSTATE_UINT32(tx_psn, RdmaSimXport),
        VMSTATE_UINT32(tx_high, RdmaSimXport),
        VMSTATE_UINT64(charged, RdmaSimXport),
        VMSTATE_UINT32(ackreq_psn, RdmaSimXport),
        VMSTATE_BOOL(ackreq_valid, RdmaSimXport),
        VMSTATE_INT64(srtt_ns, RdmaSimXport),
        VMSTATE_INT64(rttvar_ns, RdmaSimXport),
        VMSTATE_UINT32(rtt_psn, RdmaSimXport),
        VMSTATE_INT64(saved_rtt_age_ns, RdmaSimXport),
        VMSTATE_BOOL(probing, RdmaSimXport),
        VMSTATE_UINT32(probe_high, RdmaSimXport),
        VMSTATE_UINT32(probe_backoff, RdmaSimXport),
        VMSTATE_INT64_ARRAY(saved_timer_ns, RdmaSimXport, 3),
        /* responder */
        VMSTATE_UINT32(epsn, RdmaSimXport),
        VMSTATE_UINT32(ack_psn, RdmaSimXport),
        VMSTATE_BOOL(ack_pending, RdmaSimXport),
        VMSTATE_UINT32(msn, RdmaSimXport),
        VMSTATE_BOOL(seq_nak_sent, RdmaSimXport),
        VMSTATE_BOOL(uc_drop, RdmaSimXport),
        VMSTATE_BOOL(comm_est, RdmaSimXport),
        VMSTATE_SINGLE(msg, RdmaSimXport, 1, vmstate_info_uint32,
                       enum rdma_sim_resp_msg),
        VMSTATE_BOOL(have_rwqe, RdmaSimXport),
        VMSTATE_BOOL(rwqe_from_srq, RdmaSimXport),
        VMSTATE_UINT32(recv_len, RdmaSimXport),
        VMSTATE_UINT64(rwqe_id, RdmaSimXport),
        VMSTATE_UINT32(rwqe_nsge, RdmaSimXport),
        VMSTATE_VALIDATE("receive WQE SGEs", rdma_sim_rwqe_nsge_ok),
        RDMA_SIM_STRUCT_VARRAY(rwqe_sge, RdmaSimXport, rwqe_nsge,
                               vmstate_rdma_sim_sgl, RdmaSimSgl),
        VMSTATE_UINT32(rwqe_pdn, RdmaSimXport),
        VMSTATE_UINT64(write_va, RdmaSimXport),
        VMSTATE_UINT32(write_rkey, RdmaSimXport),
        VMSTATE_UINT32(write_len, RdmaSimXport),
        VMSTATE_UINT32(write_resid, RdmaSimXport),
        RDMA_SIM_STRUCT_VARRAY(res, RdmaSimXport, nres,
                               vmstate_rdma_sim_resource, RdmaSimResource),
        VMSTATE_UINT32(res_next, RdmaSimXport),
        VMSTATE_VARRAY_UINT32(rd_fifo, RdmaSimXport, nres, 0,
                              vmstate_info_uint32, uint32_t),
        VMSTATE_UINT32(rd_head, RdmaSimXport),
        VMSTATE_UINT32(rd_count, RdmaSimXport),
        VMSTATE_END_OF_LIST()
    }
};

/* SQ indices sq_cons .. fetched: the WQEs the device copied and holds */
static uint32_t rdma_sim_wqes_held(const RdmaSimQp *qp)
{
    return (qp->x->fetched - qp->sq_cons) & qp->sq.mask;
}

/* SGEs of a WQE copy: an erroneous one may claim more than were read */
static uint32_t rdma_sim_wqe_nsgl(const RdmaSimQp *qp, const RdmaSimWqe *w)
{
    return w->is_inline ? 0 : MIN(w->num_sge, qp->max_send_sge);
}

static int rdma_sim_wqes_save(QEMUFile *f, RdmaSimQp *qp)
{
    RdmaSimXport *x = qp->x;
    uint32_t n = rdma_sim_wqes_held(qp);

    qemu_put_be32(f, n);
    for (uint32_t i = 0; i < n; i++) {
        RdmaSimWqe *w = rdma_sim_wqe_slot(x, qp->sq_cons + i);
        const RdmaSimSgl *sgl = rdma_sim_wqe_sgl(w);
        int ret = rdma_sim_vmsd_save(f, &vmstate_rdma_sim_wqe, w);

        if (ret) {
            return ret;
        }
        if (w->is_inline) {
            qemu_put_buffer(f, w->data, w->length);
        }
        for (uint32_t j = 0; j < rdma_sim_wqe_nsgl(qp, w); j++) {
            ret = rdma_sim_vmsd_save(f, &vmstate_rdma_sim_sgl,
                                     (void *)&sgl[j]);
            if (ret) {
                return ret;
            }
        }
    }
    return 0;
}

static int rdma_sim_wqes_load(QEMUFile *f, RdmaSimQp *qp)
{
    RdmaSimXport *x = qp->x;
    uint32_t room = x->slot_size - sizeof(RdmaSimWqe);
    uint32_t n = qemu_get_be32(f);

    if (n > x->nslots || n != rdma_sim_wqes_held(qp)) {
        return rdma_sim_mig_refuse("QP", qp->qpn, "WQE copies do not fit");
    }
    for (uint32_t i = 0; i < n; i++) {
        RdmaSimWqe *w = rdma_sim_wqe_slot(x, qp->sq_cons + i);
        RdmaSimSgl *sgl = (RdmaSimSgl *)w->data;
        int ret = rdma_sim_vmsd_load(f, &vmstate_rdma_sim_wqe, w);

        if (ret) {
            return ret;
        }
        if (w->is_inline && w->length > room) {
            return rdma_sim_mig_refuse("QP", qp->qpn, "inline data too long");
        }
        if (w->is_inline) {
            qemu_get_buffer(f, w->data, w->length);
        }
        for (uint32_t j = 0; j < rdma_sim_wqe_nsgl(qp, w); j++) {
            ret = rdma_sim_vmsd_load(f, &vmstate_rdma_sim_sgl, &sgl[j]);
            if (ret) {
                return ret;
            }
        }
    }
    return 0;
}

/*
 * The object tables: (index, entry) for each entry in use, then
 * RDMA_SIM_MIG_END.  Loading an entry checks it, links it to the objects
 * it names (loaded before it: EQs, PDs, CQs and SRQs go ahead of what
 * refers to them), takes its references and host memory and installs it;
 * a QP's transport state follows it.
 */
enum rdma_sim_mig_table {
    RDMA_SIM_MIG_EQS,
    RDMA_SIM_MIG_GIDS,
    RDMA_SIM_MIG_PDS,
    RDMA_SIM_MIG_MRS,
    RDMA_SIM_MIG_AHS,
    RDMA_SIM_MIG_CQS,
    RDMA_SIM_MIG_SRQS,
    RDMA_SIM_MIG_QPS,
    RDMA_SIM_MIG_TABLES
};

typedef struct RdmaSimTable {
    const char *name;
    const VMStateDescription *vmsd;
    size_t offset;              /* of the table in RdmaSimState */
    size_t entry_size;          /* by-value tables */
    size_t alloc_size;          /* tables of pointers: entries' size */
    uint32_t (*length)(RdmaSimState *s);
    bool (*in_use)(const void *entry);  /* by-value tables */
    int (*save_more)(QEMUFile *f, RdmaSimState *s, void *entry);
    /* check and install; on failure a pointer table's entry is freed */
    int (*load_done)(QEMUFile *f, RdmaSimState *s, uint32_t index,
                     void *entry);
} RdmaSimTable;

static void *rdma_sim_table_entry(RdmaSimState *s, const RdmaSimTable *t,
                                  uint32_t i)
{
    uint8_t *base = *(uint8_t **)((uint8_t *)s + t->offset);

    if (t->alloc_size) {
        return ((void **)base)[i];
    }
    return base + (size_t)i * t->entry_size;
}

static const RdmaSimTable rdma_sim_tables[RDMA_SIM_MIG_TABLES];

static int rdma_sim_table_put(QEMUFile *f, void *pv, size_t size,
                              const VMStateField *field, JSONWriter *vmdesc)
{
    RdmaSimState *s = pv;
    const RdmaSimTable *t = &rdma_sim_tables[field->start];
    int ret = 0;

    for (uint32_t i = 0; i < t->length(s) && !ret; i++) {
        void *e = rdma_sim_table_entry(s, t, i);

        if (!e || (t->in_use && !t->in_use(e))) {
            continue;
        }
        qemu_put_be32(f, i);
        ret = rdma_sim_vmsd_save(f, t->vmsd, e);
        if (!ret && t->save_more) {
            ret = t->save_more(f, s, e);
        }
    }
    qemu_put_be32(f, RDMA_SIM_MIG_END);
    return ret;
}

static int rdma_sim_table_get(QEMUFile *f, void *pv, size_t size,
                              const VMStateField *field)
{
    RdmaSimState *s = pv;
    const RdmaSimTable *t = &rdma_sim_tables[field->start];
    uint32_t i;

    while ((i = qemu_get_be32(f)) != RDMA_SIM_MIG_END) {
        void *e;
        int ret;

        if (qemu_file_get_error(f)) {
            return qemu_file_get_error(f);
        }
        if (i >= t->length(s)) {
            return rdma_sim_mig_refuse(t->name, i, "beyond the table");
        }
        e = rdma_sim_table_entry(s, t, i);
        if (t->alloc_size ? e != NULL : t->in_use(e)) {
            return rdma_sim_mig_refuse(t->name, i, "twice in the stream");
        }
        if (t->alloc_size) {
            e = g_malloc0(t->alloc_size);
        }
        ret = rdma_sim_vmsd_load(f, t->vmsd, e);
        ret = ret ? ret : t->load_done(f, s, i, e);
        if (ret) {
            return ret;
        }
    }
    return qemu_file_get_error(f);
}

static const VMStateInfo rdma_sim_table_info = {
    .name = "rdma-sim-table",
    .get = rdma_sim_table_get,
    .put = rdma_sim_table_put,
};

/*
 * The field of a table: its info gets the whole device state and finds
 * the table by the number in .start (which only VMS_VBUFFER fields use).
 */
#define RDMA_SIM_TABLE(_name, _id) {                             \
    .name = (_name),                                             \
    .info = &rdma_sim_table_info,                                \
    .flags = VMS_SINGLE,                                         \
    .start = (_id),                                              \
}

static int rdma_sim_no_entry(RdmaSimState *s, const char *what, uint32_t i,
                             const char *why, void *e, RdmaSimRing *r1,
                             RdmaSimRing *r2)
{
    /* not charged yet: only freed */
    if (r1) {
        g_free(r1->pages);
    }
    if (r2) {
        g_free(r2->pages);
    }
    g_free(e);
    return rdma_sim_mig_refuse(what, i, why);
}

static uint32_t rdma_sim_eq_count(RdmaSimState *s)
{
    return rdma_sim_num_eqs(s);
}

static bool rdma_sim_eq_in_use(const void *e)
{
    return ((const RdmaSimEq *)e)->valid;
}

static int rdma_sim_eq_loaded(QEMUFile *f, RdmaSimState *s, uint32_t i,
                              void *e)
{
    RdmaSimEq *eq = e;

    if (!eq->valid || !eq->vector || eq->vector >= s->props.msix_vectors ||
        !is_power_of_2(eq->depth) || eq->depth > RDMA_SIM_MAX_EQ_DEPTH) {
        return rdma_sim_mig_refuse("EQ", i, "bad vector or depth");
    }
    return 0;
}


static uint32_t rdma_sim_gid_count(RdmaSimState *s)
{
    return s->props.max_gid;
}

static bool rdma_sim_gid_in_use(const void *e)
{
    return ((const RdmaSimGid *)e)->valid;
}

static int rdma_sim_gid_loaded(QEMUFile *f, RdmaSimState *s, uint32_t i,
                               void *e)
{
    return ((RdmaSimGid *)e)->valid ? 0
           : rdma_sim_mig_refuse("GID", i, "not valid");
}


static uint32_t rdma_sim_pd_count(RdmaSimState *s)
{
    return s->props.max_pd;
}

static bool rdma_sim_pd_in_use(const void *e)
{
    return ((const RdmaSimPd *)e)->valid;
}

static int rdma_sim_pd_loaded(QEMUFile *f, RdmaSimState *s, uint32_t i,
                              void *e)
{
    return ((RdmaSimPd *)e)->valid ? 0
           : rdma_sim_mig_refuse("PD", i, "not valid");
}


static uint32_t rdma_sim_mr_count(RdmaSimState *s)
{
    return s->props.max_mr;
}

/* An invalid entry's key still counts: the next key of its index follows */
static bool rdma_sim_mr_in_use(const void *e)
{
    const RdmaSimMr *mr = e;

    return mr->state != RSIM_MR_STATE_INVALID || mr->key;
}

static int rdma_sim_mr_loaded(QEMUFile *f, RdmaSimState *s, uint32_t i,
                              void *e)
{
    RdmaSimMr *mr = e;

    if (!rdma_sim_mr_in_use(mr) || mr->state > RSIM_MR_STATE_VALID ||
        mr->pl.level > RSIM_PBL_LEVEL2 ||
        (mr->pl.page_shift && !rdma_sim_page_shift_ok(mr->pl.page_shift))) {
        return rdma_sim_mig_refuse("MR", i, "bad state or page list");
    }
    if (mr->state != RSIM_MR_STATE_INVALID) {
        if (!rdma_sim_pd_valid(s, mr->pdn)) {
            return rdma_sim_mig_refuse("MR", i, "no such PD");
        }
        s->pds[mr->pdn].refs++;
    }
    return 0;
}


static uint32_t rdma_sim_ah_count(RdmaSimState *s)
{
    return s->props.max_ah;
}

static bool rdma_sim_ah_in_use(const void *e)
{
    return ((const RdmaSimAh *)e)->valid;
}

static int rdma_sim_ah_loaded(QEMUFile *f, RdmaSimState *s, uint32_t i,
                              void *e)
{
    RdmaSimAh *ah = e;

    if (!ah->valid || !i || !rdma_sim_pd_valid(s, ah->pdn)) {
        return rdma_sim_mig_refuse("AH", i, "not valid or no such PD");
    }
    s->pds[ah->pdn].refs++;
    return 0;
}


static uint32_t rdma_sim_cq_count(RdmaSimState *s)
{
    return s->props.max_cq;
}

static int rdma_sim_cq_loaded(QEMUFile *f, RdmaSimState *s, uint32_t i,
                              void *e)
{
    RdmaSimCq *cq = e;
    const char *why;

    /* what CREATE_CQ checks (queue.c), then what only a stream can */
    if (rdma_sim_cq_new_check(s, cq, &why) != RSIM_STS_OK) {
        return rdma_sim_no_entry(s, "CQ", i, why, cq, &cq->ring, NULL);
    }
    if (cq->cqn != i || cq->arm > RSIM_CQ_ARM_SOLICITED || !cq->ring.depth ||
        cq->prod >= cq->ring.depth) {
        return rdma_sim_no_entry(s, "CQ", i, "bad number, arm or ring", cq,
                                 &cq->ring, NULL);
    }
    if (!rdma_sim_host_mem_get(s, cq->ring.host_mem)) {
        return rdma_sim_no_entry(s, "CQ", i, "host memory budget exceeded",
                                 cq, &cq->ring, NULL);
    }
    rdma_sim_cq_attach(s, cq);
    if (cq->event_waiting) {
        QTAILQ_INSERT_TAIL(&s->eqs[cq->eqn].waiting, cq, wait_link);
    }
    return 0;
}


static uint32_t rdma_sim_srq_count(RdmaSimState *s)
{
    return s->props.max_srq;
}

static int rdma_sim_srq_loaded(QEMUFile *f, RdmaSimState *s, uint32_t i,
                               void *e)
{
    RdmaSimSrq *srq = e;
    const char *why;

    /* what CREATE_SRQ checks (queue.c), then what only a stream can */
    if (rdma_sim_srq_new_check(s, srq, &why) != RSIM_STS_OK) {
        return rdma_sim_no_entry(s, "SRQ", i, why, srq, &srq->ring, NULL);
    }
    if (srq->srqn != i || !srq->ring.depth || srq->limit >= srq->ring.depth ||
        srq->cons >= srq->ring.depth) {
        return rdma_sim_no_entry(s, "SRQ", i, "bad number, limit or ring",
                                 srq, &srq->ring, NULL);
    }
    if (!rdma_sim_host_mem_get(s, srq->ring.host_mem)) {
        return rdma_sim_no_entry(s, "SRQ", i, "host memory budget exceeded",
                                 srq, &srq->ring, NULL);
    }
    rdma_sim_srq_attach(s, srq);
    return 0;
}


static uint32_t rdma_sim_qp_count(RdmaSimState *s)
{
    return s->props.max_qp;
}

/* After a QP: whether it has transport state, and that state */
static int rdma_sim_qp_save_xport(QEMUFile *f, RdmaSimState *s, void *e)
{
    RdmaSimQp *qp = e;
    int ret;

    qemu_put_byte(f, qp->x != NULL);
    if (!qp->x) {
        return 0;
    }
    qemu_put_be32(f, qp->x->nres);
    ret = rdma_sim_vmsd_save(f, &vmstate_rdma_sim_xport, qp->x);
    return ret ? ret : rdma_sim_wqes_save(f, qp);
}

static int rdma_sim_qp_load_xport(QEMUFile *f, RdmaSimState *s,
                                  RdmaSimQp *qp)
{
    uint32_t nres;
    int ret;

    if (!qemu_get_byte(f)) {
        return 0;
    }
    nres = qemu_get_be32(f);
    if (qp->state < RSIM_QPS_RTR || !nres ||
        nres > MAX(1, s->props.max_rd_atom)) {
        return rdma_sim_mig_refuse("QP", qp->qpn, "bad transport state");
    }
    qp->x = rdma_sim_xport_new(s, qp);
    rdma_sim_resp_resources(qp->x, nres);
    ret = rdma_sim_vmsd_load(f, &vmstate_rdma_sim_xport, qp->x);
    if (ret) {
        return ret;
    }
    if (qp->x->req_idx > qp->sq.mask || qp->x->fetched > qp->sq.mask) {
        return rdma_sim_mig_refuse("QP", qp->qpn, "SQ index out of range");
    }
    return rdma_sim_wqes_load(f, qp);
}

static int rdma_sim_qp_loaded(QEMUFile *f, RdmaSimState *s, uint32_t i,
                              void *e)
{
    RdmaSimQp *qp = e;
    RdmaSimSrq *srq = rdma_sim_srq_lookup(s, qp->srqn);
    bool on_work_list = qp->on_work_list, flow_blocked = qp->flow_blocked;
    const char *why;

    /* what CREATE_QP checks (qp.c), then what only a stream can get wrong */
    if (rdma_sim_qp_new_check(s, qp, &why) != RSIM_STS_OK) {
        return rdma_sim_no_entry(s, "QP", i, why, qp, &qp->sq, &qp->rq);
    }
    if (qp->qpn != i || !i || qp->state > RSIM_QPS_ERR ||
        qp->max_dest_rd_atomic > s->props.max_rd_atom ||
        !qp->sq.depth || !qp->rq.depth != !!srq ||
        qp->sq_cons >= qp->sq.depth ||
        (qp->rq.depth && qp->rq_cons >= qp->rq.depth)) {
        return rdma_sim_no_entry(s, "QP", i, "bad number, state or rings",
                                 qp, &qp->sq, &qp->rq);
    }
    /* charged as CREATE_QP does, so that destroying it gives it back */
    qp->xport_mem = rdma_sim_xport_mem(qp, srq, s->props.max_rd_atom);
    if (!rdma_sim_host_mem_get(s, qp->sq.host_mem + qp->rq.host_mem +
                               qp->xport_mem)) {
        return rdma_sim_no_entry(s, "QP", i, "host memory budget exceeded",
                                 qp, &qp->sq, &qp->rq);
    }
    qp->on_work_list = false;
    qp->flow_blocked = false;
    rdma_sim_qp_attach(s, qp);

    if (rdma_sim_qp_load_xport(f, s, qp)) {
        return -EINVAL;
    }
    if (flow_blocked && qp->x) {
        qp->flow_blocked = true;
        QTAILQ_INSERT_TAIL(&s->tx_blocked, qp, flow_link);
    }
    if (on_work_list) {
        rdma_sim_qp_schedule(s, qp);
    }
    return 0;
}


static const RdmaSimTable rdma_sim_tables[RDMA_SIM_MIG_TABLES] = {
    [RDMA_SIM_MIG_EQS] = {
        .name = "eqs",
        .vmsd = &vmstate_rdma_sim_eq,
        .offset = offsetof(RdmaSimState, eqs),
        .entry_size = sizeof(RdmaSimEq),
        .length = rdma_sim_eq_count,
        .in_use = rdma_sim_eq_in_use,
        .load_done = rdma_sim_eq_loaded,
    },
    [RDMA_SIM_MIG_GIDS] = {
        .name = "gids",
        .vmsd = &vmstate_rdma_sim_gid,
        .offset = offsetof(RdmaSimState, gids),
        .entry_size = sizeof(RdmaSimGid),
        .length = rdma_sim_gid_count,
        .in_use = rdma_sim_gid_in_use,
        .load_done = rdma_sim_gid_loaded,
    },
    [RDMA_SIM_MIG_PDS] = {
        .name = "pds",
        .vmsd = &vmstate_rdma_sim_pd,
        .offset = offsetof(RdmaSimState, pds),
        .entry_size = sizeof(RdmaSimPd),
        .length = rdma_sim_pd_count,
        .in_use = rdma_sim_pd_in_use,
        .load_done = rdma_sim_pd_loaded,
    },
    [RDMA_SIM_MIG_MRS] = {
        .name = "mrs",
        .vmsd = &vmstate_rdma_sim_mr,
        .offset = offsetof(RdmaSimState, mrs),
        .entry_size = sizeof(RdmaSimMr),
        .length = rdma_sim_mr_count,
        .in_use = rdma_sim_mr_in_use,
        .load_done = rdma_sim_mr_loaded,
    },
    [RDMA_SIM_MIG_AHS] = {
        .name = "ahs",
        .vmsd = &vmstate_rdma_sim_ah,
        .offset = offsetof(RdmaSimState, ahs),
        .entry_size = sizeof(RdmaSimAh),
        .length = rdma_sim_ah_count,
        .in_use = rdma_sim_ah_in_use,
        .load_done = rdma_sim_ah_loaded,
    },
    [RDMA_SIM_MIG_CQS] = {
        .name = "cqs",
        .vmsd = &vmstate_rdma_sim_cq,
        .offset = offsetof(RdmaSimState, cqs),
        .alloc_size = sizeof(RdmaSimCq),
        .length = rdma_sim_cq_count,
        .load_done = rdma_sim_cq_loaded,
    },
    [RDMA_SIM_MIG_SRQS] = {
        .name = "srqs",
        .vmsd = &vmstate_rdma_sim_srq,
        .offset = offsetof(RdmaSimState, srqs),
        .alloc_size = sizeof(RdmaSimSrq),
        .length = rdma_sim_srq_count,
        .load_done = rdma_sim_srq_loaded,
    },
    [RDMA_SIM_MIG_QPS] = {
        .name = "qps",
        .vmsd = &vmstate_rdma_sim_qp,
        .offset = offsetof(RdmaSimState, qps),
        .alloc_size = sizeof(RdmaSimQp),
        .length = rdma_sim_qp_count,
        .save_more = rdma_sim_qp_save_xport,
        .load_done = rdma_sim_qp_loaded,
    },
};

/*
 * Frames the device holds: looped back and deferred ones waiting for its
 * bottom half, and one held back by fault-reorder.  Each queue goes as
 * (length, bytes) per frame, then RDMA_SIM_MIG_END.
 */
static void rdma_sim_frame_put(QEMUFile *f, const GByteArray *frame)
{
    qemu_put_be32(f, frame->len);
    qemu_put_buffer(f, frame->data, frame->len);
}

static GByteArray *rdma_sim_frame_get(QEMUFile *f, uint32_t len)
{
    GByteArray *frame;

    if (len > NET_BUFSIZE) {
        rdma_sim_mig_refuse("frame of length", len, "too long for a frame");
        return NULL;
    }
    frame = g_byte_array_sized_new(len);
    g_byte_array_set_size(frame, len);
    qemu_get_buffer(f, frame->data, len);
    return frame;
}

static int rdma_sim_frames_put(QEMUFile *f, void *pv, size_t size,
                               const VMStateField *field, JSONWriter *vmdesc)
{
    GQueue *q = pv;

    for (GList *l = q->head; l; l = l->next) {
        rdma_sim_frame_put(f, l->data);
    }
    qemu_put_be32(f, RDMA_SIM_MIG_END);
    return 0;
}

/* field->start: how many frames the queue holds at most */
static int rdma_sim_frames_get(QEMUFile *f, void *pv, size_t size,
                               const VMStateField *field)
{
    GQueue *q = pv;
    uint32_t len;

    while ((len = qemu_get_be32(f)) != RDMA_SIM_MIG_END) {
        GByteArray *frame = rdma_sim_frame_get(f, len);

        if (!frame) {
            return -EINVAL;
        }
        g_queue_push_tail(q, frame);
        if (g_queue_get_length(q) > field->start) {
            return rdma_sim_mig_refuse("frame queue of", field->start,
                                       "frames at most: more frames");
        }
    }
    return qemu_file_get_error(f);
}

static const VMStateInfo rdma_sim_frames_info = {
    .name = "rdma-sim-frames",
    .get = rdma_sim_frames_get,
    .put = rdma_sim_frames_put,
};

#define RDMA_SIM_FRAMES(_field, _max) {                          \
    .name = stringify(_field),                                   \
    .info = &rdma_sim_frames_info,                               \
    .flags = VMS_SINGLE,                                         \
    .offset = offsetof(RdmaSimState, _field),                    \
    .start = (_max),                                             \
}

static int rdma_sim_held_put(QEMUFile *f, void *pv, size_t size,
                             const VMStateField *field, JSONWriter *vmdesc)
{
    GByteArray **held = pv;

    if (*held) {
        rdma_sim_frame_put(f, *held);
    } else {
        qemu_put_be32(f, RDMA_SIM_MIG_END);
    }
    return 0;
}

static int rdma_sim_held_get(QEMUFile *f, void *pv, size_t size,
                             const VMStateField *field)
{
    GByteArray **held = pv;
    uint32_t len = qemu_get_be32(f);

    if (len != RDMA_SIM_MIG_END) {
        *held = rdma_sim_frame_get(f, len);
        if (!*held) {
            return -EINVAL;
        }
    }
    return qemu_file_get_error(f);
}

static const VMStateInfo rdma_sim_held_info = {
    .name = "rdma-sim-held-frame",
    .get = rdma_sim_held_get,
    .put = rdma_sim_held_put,
};

static bool rdma_sim_frames_needed(void *opaque)
{
    RdmaSimState *s = opaque;

    return !g_queue_is_empty(&s->loop_frames) ||
           !g_queue_is_empty(&s->rx_deferred) || s->held_frame;
}

static const VMStateDescription vmstate_rdma_sim_frames = {
    .name = "rdma-sim/frames",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = rdma_sim_frames_needed,
    .fields = (VMStateField[]) {
        RDMA_SIM_FRAMES(loop_frames, RDMA_SIM_LOOP_MAX),
        RDMA_SIM_FRAMES(rx_deferred, RDMA_SIM_RX_DEFER_MAX),
        {
            .name = "held_frame",
            .info = &rdma_sim_held_info,
            .flags = VMS_SINGLE,
            .offset = offsetof(RdmaSimState, held_frame),
        },
        VMSTATE_BOOL(held_loop, RdmaSimState),
        VMSTATE_END_OF_LIST()
    }
};

/*
 * The READ responses the port's budget counts (flow.c): bytes, the age of
 * their last drain, the port's round trip and the pace timer's time left.
 * Loaded before rdma_sim_post_load(), which adds the bytes to tx_inflight.
 */
static bool rdma_sim_pacing_needed(void *opaque)
{
    RdmaSimState *s = opaque;

    return s->tx_resp_inflight || s->tx_srtt_ns ||
           timer_pending(s->tx_pace_timer);
}

static int rdma_sim_pacing_pre_save(void *opaque)
{
    RdmaSimState *s = opaque;

    s->saved_drained_age_ns = rdma_sim_mig_now() - s->tx_resp_drained_ns;
    s->saved_pace_ns = rdma_sim_timer_save(s->tx_pace_timer);
    return 0;
}

static int rdma_sim_pacing_post_load(void *opaque, int version_id)
{
    RdmaSimState *s = opaque;

    /* what flow.c lets in: the budget at most, or a packet when empty */
    if (s->tx_resp_inflight > MAX((uint64_t)s->props.tx_window * KiB,
                                  ROCE_MAX_PAYLOAD) ||
        s->tx_srtt_ns < 0 || s->saved_drained_age_ns < 0) {
        return rdma_sim_mig_refuse("port budget of", s->props.tx_window,
                                   "KiB: bad READ response state");
    }
    s->tx_resp_drained_ns = rdma_sim_mig_now() - s->saved_drained_age_ns;
    rdma_sim_timer_load(s->tx_pace_timer, s->saved_pace_ns);
    return 0;
}

static const VMStateDescription vmstate_rdma_sim_pacing = {
    .name = "rdma-sim/read-pacing",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = rdma_sim_pacing_needed,
    .pre_save = rdma_sim_pacing_pre_save,
    .post_load = rdma_sim_pacing_post_load,
    .fields = (VMStateField[]) {
        VMSTATE_UINT64(tx_resp_inflight, RdmaSimState),
        VMSTATE_INT64(saved_drained_age_ns, RdmaSimState),
        VMSTATE_INT64(tx_srtt_ns, RdmaSimState),
        VMSTATE_INT64(saved_pace_ns, RdmaSimState),
        VMSTATE_END_OF_LIST()
    }
};

/*
 * The round trip the READ response pace assumes while the port has
 * measured none (flow.c), when it learned one: a stream without it keeps
 * the power-on pace.
 */
static bool rdma_sim_pace_rtt_needed(void *opaque)
{
    return rdma_sim_flow_pace_learned(opaque);
}

static int rdma_sim_pace_rtt_post_load(void *opaque, int version_id)
{
    RdmaSimState *s = opaque;

    if (!rdma_sim_flow_pace_valid(s)) {
        return rdma_sim_mig_refuse("port budget of", s->props.tx_window,
                                   "KiB: bad READ response pace");
    }
    return 0;
}

static const VMStateDescription vmstate_rdma_sim_pace_rtt = {
    .name = "rdma-sim/read-pace-rtt",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = rdma_sim_pace_rtt_needed,
    .post_load = rdma_sim_pace_rtt_post_load,
    .fields = (VMStateField[]) {
        VMSTATE_INT64(tx_pace_rtt_ns, RdmaSimState),
        VMSTATE_UINT64(tx_pace_acc, RdmaSimState),
        VMSTATE_END_OF_LIST()
    }
};

/*
 * The counters: a version 1 stream has those before READ_RESP_WAITS in
 * its main section, those added since go in a subsection (when one of
 * them is not 0), so that either stream loads.
 */
#define RDMA_SIM_MIG_STATS_V1   RSIM_STAT_READ_RESP_WAITS
#define RDMA_SIM_MIG_STATS_MORE (RSIM_STAT_COUNT - RDMA_SIM_MIG_STATS_V1)
/* version 1 had 40: a new counter goes at the end of RSIM_STATS_LIST */
QEMU_BUILD_BUG_ON(RDMA_SIM_MIG_STATS_V1 != 40);

static bool rdma_sim_more_counters_needed(void *opaque)
{
    RdmaSimState *s = opaque;

    for (unsigned i = RDMA_SIM_MIG_STATS_V1; i < RSIM_STAT_COUNT; i++) {
        if (s->stats[i]) {
            return true;
        }
    }
    return false;
}

static const VMStateDescription vmstate_rdma_sim_more_counters = {
    .name = "rdma-sim/more-counters",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = rdma_sim_more_counters_needed,
    .fields = (VMStateField[]) {
        VMSTATE_UINT64_SUB_ARRAY(stats, RdmaSimState, RDMA_SIM_MIG_STATS_V1,
                                 RDMA_SIM_MIG_STATS_MORE),
        VMSTATE_END_OF_LIST()
    }
};

/*
 * The device
 */

static const VMStateDescription vmstate_rdma_sim_ethq = {
    .name = "rdma-sim/ethernet-queue",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (VMStateField[]) {
        VMSTATE_BOOL(valid, RdmaSimEthq),
        VMSTATE_BOOL(armed, RdmaSimEthq),
        VMSTATE_UINT32(eqn, RdmaSimEthq),
        VMSTATE_UINT64(addr, RdmaSimEthq),
        VMSTATE_UINT32(depth, RdmaSimEthq),
        VMSTATE_UINT32(prod, RdmaSimEthq),
        VMSTATE_UINT32(cons, RdmaSimEthq),
        VMSTATE_END_OF_LIST()
    }
};

static int rdma_sim_pre_save(void *opaque)
{
    RdmaSimState *s = opaque;

    s->saved_cut_age_ns = s->tx_cut_ns ? rdma_sim_mig_now() - s->tx_cut_ns
                                       : -1;
    return 0;
}

/* Whatever the device did before goes: the stream says what it is now */
static int rdma_sim_pre_load(void *opaque)
{
    rdma_sim_reset_state(opaque);
    return 0;
}

static int rdma_sim_post_load(void *opaque, int version_id)
{
    RdmaSimState *s = opaque;
    int64_t cut;

    for (unsigned i = 0; i < ARRAY_SIZE(s->ethq); i++) {
        RdmaSimEthq *q = &s->ethq[i];
        RdmaSimEq *eq = rdma_sim_eq_lookup(s, q->eqn);

        if (q->valid && (!eq || !is_power_of_2(q->depth) ||
                         q->depth > RDMA_SIM_MAX_ETH_DEPTH)) {
            return rdma_sim_mig_refuse("Ethernet queue", i, "bad EQ or depth");
        }
        if (q->valid) {
            eq->refs++;
        }
    }
    if (!s->tx_cwnd || s->tx_cwnd > (uint64_t)s->props.tx_window * KiB) {
        return rdma_sim_mig_refuse("port budget of", s->props.tx_window,
                                   "KiB: bad budget");
    }
    s->tx_inflight = s->tx_resp_inflight;
    for (uint32_t i = 0; i < s->props.max_qp; i++) {
        if (s->qps[i] && s->qps[i]->x) {
            s->tx_inflight += s->qps[i]->x->charged;
        }
    }
    cut = s->saved_cut_age_ns < 0 ? 0
          : rdma_sim_mig_now() - s->saved_cut_age_ns;
    s->tx_cut_ns = MAX(cut, 0);
    s->log_sec = s->log_count = s->log_suppressed = 0;
    /* the work waiting goes on when the VM runs: rdma_sim_vm_state_change */
    trace_rdma_sim_migration_loaded(s->host_mem);
    return 0;
}

const VMStateDescription vmstate_rdma_sim = {
    .name = "rdma-sim",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = rdma_sim_pre_save,
    .pre_load = rdma_sim_pre_load,
    .post_load = rdma_sim_post_load,
    .fields = (VMStateField[]) {
        /*
         * First: the tables, the MSI-X table and what the driver was told
         * must be the same size
         */
        VMSTATE_UINT32_EQUAL(props.max_qp, RdmaSimState),
        VMSTATE_UINT32_EQUAL(props.max_cq, RdmaSimState),
        VMSTATE_UINT32_EQUAL(props.max_srq, RdmaSimState),
        VMSTATE_UINT32_EQUAL(props.max_mr, RdmaSimState),
        VMSTATE_UINT32_EQUAL(props.max_pd, RdmaSimState),
        VMSTATE_UINT32_EQUAL(props.max_ah, RdmaSimState),
        VMSTATE_UINT32_EQUAL(props.max_gid, RdmaSimState),
        VMSTATE_UINT32_EQUAL(props.max_sge, RdmaSimState),
        VMSTATE_UINT32_EQUAL(props.max_qp_wr, RdmaSimState),
        VMSTATE_UINT32_EQUAL(props.max_cqe, RdmaSimState),
        VMSTATE_UINT32_EQUAL(props.max_inline, RdmaSimState),
        VMSTATE_UINT32_EQUAL(props.max_rd_atom, RdmaSimState),
        VMSTATE_UINT32_EQUAL(props.db_pages, RdmaSimState),
        VMSTATE_UINT32_EQUAL(props.msix_vectors, RdmaSimState),
        VMSTATE_UINT32_EQUAL(props.tx_window, RdmaSimState),
        VMSTATE_PCI_DEVICE(parent_obj, RdmaSimState),
        VMSTATE_MSIX(parent_obj, RdmaSimState),
        /* registers */
        VMSTATE_UINT32(dev_ctrl, RdmaSimState),
        VMSTATE_UINT32(dev_status, RdmaSimState),
        VMSTATE_UINT32(intr_mask, RdmaSimState),
        VMSTATE_UINT64(aq_base, RdmaSimState),
        VMSTATE_UINT64(acq_base, RdmaSimState),
        VMSTATE_UINT64(aeq_base, RdmaSimState),
        VMSTATE_UINT32(aq_depth, RdmaSimState),
        VMSTATE_UINT32(acq_depth, RdmaSimState),
        VMSTATE_UINT32(aeq_depth, RdmaSimState),
        VMSTATE_UINT32(aq_tail, RdmaSimState),
        VMSTATE_UINT32(aq_head, RdmaSimState),
        VMSTATE_UINT32(acq_tail, RdmaSimState),
        VMSTATE_UINT32(acq_head, RdmaSimState),
        VMSTATE_BOOL(acq_phase, RdmaSimState),
        VMSTATE_UINT32(aeq_tail, RdmaSimState),
        VMSTATE_UINT32(aeq_head, RdmaSimState),
        VMSTATE_BOOL(aeq_phase, RdmaSimState),
        /* port */
        VMSTATE_BUFFER(mac, RdmaSimState),
        VMSTATE_UINT32(eth_mtu, RdmaSimState),
        VMSTATE_BOOL(port_active, RdmaSimState),
        VMSTATE_STRUCT_ARRAY(ethq, RdmaSimState, 2, 1, vmstate_rdma_sim_ethq,
                             RdmaSimEthq),
        VMSTATE_UINT32(next_qpn, RdmaSimState),
        VMSTATE_UINT32(key_seed, RdmaSimState),
        VMSTATE_UINT64(fault_rng, RdmaSimState),
        VMSTATE_UINT64(tx_cwnd, RdmaSimState),
        VMSTATE_UINT64(tx_cwnd_acc, RdmaSimState),
        VMSTATE_INT64(saved_cut_age_ns, RdmaSimState),
        VMSTATE_UINT64_SUB_ARRAY(stats, RdmaSimState, 0,
                                 RDMA_SIM_MIG_STATS_V1),
        /* referenced objects ahead of those referring to them */
        RDMA_SIM_TABLE("eqs", RDMA_SIM_MIG_EQS),
        RDMA_SIM_TABLE("gids", RDMA_SIM_MIG_GIDS),
        RDMA_SIM_TABLE("pds", RDMA_SIM_MIG_PDS),
        RDMA_SIM_TABLE("mrs", RDMA_SIM_MIG_MRS),
        RDMA_SIM_TABLE("ahs", RDMA_SIM_MIG_AHS),
        RDMA_SIM_TABLE("cqs", RDMA_SIM_MIG_CQS),
        RDMA_SIM_TABLE("srqs", RDMA_SIM_MIG_SRQS),
        RDMA_SIM_TABLE("qps", RDMA_SIM_MIG_QPS),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * []) {
        &vmstate_rdma_sim_frames,
        &vmstate_rdma_sim_pacing,
        &vmstate_rdma_sim_pace_rtt,
        &vmstate_rdma_sim_more_counters,
        NULL
    }
};
