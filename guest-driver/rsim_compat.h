/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdma-sim guest driver: what differs between the kernels it builds for,
 * Debian's 6.1, 6.12 and 7.3, compared in their headers (include/rdma/:
 * struct ib_device_ops, ib_umem.h).  The driver's code has no version
 * checks; they are all here and in rsim_verbs_compat.h.  The driver
 * implements each verb once, with the arguments all kernels can give it;
 * the ops of the kernel it is built for reach it through the adapters of
 * rsim_verbs_compat.h, which rsim_verbs.c installs with RSIM_VERSION_OPS.
 * This header keeps what the files below the verbs use (ib_umem_get_va),
 * so that including it adds no call up into the verbs.
 *
 *   create_cq      its third argument is the uverbs_attr_bundle of the
 *                  command since 6.11 (NULL for a kernel CQ), the udata
 *                  before: rsim_create_cq takes the udata.
 *   create_user_cq (7.2) the user CQs; create_cq then only makes kernel
 *                  CQs.  A user CQ whose ring the user allocated (a VA or
 *                  dma-buf attribute) is refused: in the rxe ABI the
 *                  driver allocates the ring and the user maps it.
 *   resize_user_cq (7.2) replaces resize_cq (the count is unsigned; the
 *                  core no longer resizes kernel CQs).
 *   reg_user_mr    (7.2) takes the registration's DMA handle (struct
 *                  ib_dmah); rdma-sim has none (no alloc_dmah), so one
 *                  given is refused.
 *   ib_umem_get_va (7.2) replaces ib_umem_get; the driver uses the new name.
 *   get_vector_affinity  gone in 7.2: the core asks the IRQ layer itself.
 *   ib_device_attr's max_* are u32 in 7.3, int before: the device's
 *                  limits fit both (rsim_query_device).
 * "7.2": present in Debian's 7.2.13 and 7.3.4 headers, absent in 6.12.118;
 * the kernels between 6.12 and 7.2 are not supported.
 *
 * Values that moved are not handled here but mapped where they are used:
 * IB_WC_REG_MR is 8 in 6.1 and 10 in 6.12 (rsim_ib_wc_opcode).
 */
#ifndef RSIM_COMPAT_H
#define RSIM_COMPAT_H

#include <linux/version.h>
#include <rdma/ib_umem.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(7, 2, 0)
static inline struct ib_umem *ib_umem_get_va(struct ib_device *device,
					     unsigned long addr, size_t size,
					     int access)
{
	return ib_umem_get(device, addr, size, access);
}
#endif

#endif /* RSIM_COMPAT_H */
