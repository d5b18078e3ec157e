/*
 * rdma-sim: the device's status, as DEV_STATUS shows it: every file asks
 * it, so it uses nothing but the shared header's bits (device.h includes
 * it after the state it reads)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_SIM_STATUS_H
#define HW_RDMA_SIM_STATUS_H

/* Enabled (DEV_CTRL.ENABLE) and not stopped */
static inline bool rdma_sim_ready(RdmaSimState *s)
{
    return (s->dev_status & R_RSIM_DEV_STATUS_READY_MASK) &&
           !(s->dev_status & R_RSIM_DEV_STATUS_FATAL_MASK);
}

/* FATAL: stopped until reset, no DMA, no traffic, no timers */
static inline bool rdma_sim_stopped(RdmaSimState *s)
{
    return s->dev_status & R_RSIM_DEV_STATUS_FATAL_MASK;
}

/*
 * Refuse a DMA transfer of len bytes at addr: the range wraps, or the
 * device is stopped (every host's DMA applies this rule)
 */
static inline bool rdma_sim_dma_refused(RdmaSimState *s, uint64_t addr,
                                        uint64_t len)
{
    return (len && addr + len - 1 < addr) || rdma_sim_stopped(s);
}

#endif /* HW_RDMA_SIM_STATUS_H */
