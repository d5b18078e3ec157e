/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kverbs_test: what differs between the kernels it builds for (6.1, 6.12,
 * 7.3), as guest-driver/rsim_compat.h does for the driver.
 *
 *   ib_resize_cq   gone in 7.2: the core resizes user CQs only
 *                  (ib_device_ops.resize_user_cq); kt_resize_cq says
 *                  -EOPNOTSUPP there.
 */
#ifndef KVERBS_COMPAT_H
#define KVERBS_COMPAT_H

#include <linux/version.h>
#include <rdma/ib_verbs.h>

static inline int kt_resize_cq(struct ib_cq *cq, int cqe)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 2, 0)
	return -EOPNOTSUPP;
#else
	return ib_resize_cq(cq, cqe);
#endif
}

#endif /* KVERBS_COMPAT_H */
