/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdma-sim guest driver: what differs between the kernels it builds for,
 * Debian 12's 6.1 and 6.12 (bookworm-backports/-security), compared in
 * their headers (include/rdma/ib_verbs.h: struct ib_device_ops).  The
 * driver's code has no version checks; they are all here.
 *
 *   create_cq      its third argument is the uverbs_attr_bundle of the
 *                  command since 6.11 (NULL for a kernel CQ), the udata
 *                  before: rsim_create_cq takes the udata, and the
 *                  ib_device_ops entry is rsim_create_cq_op.
 *
 * Values that moved are not handled here but mapped where they are used:
 * IB_WC_REG_MR is 8 in 6.1 and 10 in 6.12 (rsim_ib_wc_opcode).
 */
#ifndef RSIM_COMPAT_H
#define RSIM_COMPAT_H

#include <linux/version.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

int rsim_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata);

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
static inline int rsim_create_cq_op(struct ib_cq *ibcq,
				    const struct ib_cq_init_attr *attr,
				    struct uverbs_attr_bundle *attrs)
{
	return rsim_create_cq(ibcq, attr, attrs ? &attrs->driver_udata : NULL);
}
#else
static inline int rsim_create_cq_op(struct ib_cq *ibcq,
				    const struct ib_cq_init_attr *attr,
				    struct ib_udata *udata)
{
	return rsim_create_cq(ibcq, attr, udata);
}
#endif

#endif /* RSIM_COMPAT_H */
