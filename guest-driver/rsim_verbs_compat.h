/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdma-sim guest driver: the adapters between each supported kernel's
 * struct ib_device_ops and the driver's verbs, which rsim_verbs.c installs
 * with RSIM_VERSION_OPS.  What differs and why: rsim_compat.h.
 */
#ifndef RSIM_VERBS_COMPAT_H
#define RSIM_VERBS_COMPAT_H

#include <linux/version.h>
#include <rdma/uverbs_ioctl.h>

#include "rsim.h"

#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 2, 0)

static inline int rsim_create_kernel_cq_op(struct ib_cq *ibcq,
					   const struct ib_cq_init_attr *attr,
					   struct uverbs_attr_bundle *attrs)
{
	return rsim_create_cq(ibcq, attr, NULL);
}

static inline int rsim_create_user_cq_op(struct ib_cq *ibcq,
					 const struct ib_cq_init_attr *attr,
					 struct uverbs_attr_bundle *attrs)
{
	if (uverbs_attr_is_valid(attrs, UVERBS_ATTR_CREATE_CQ_BUFFER_VA) ||
	    uverbs_attr_is_valid(attrs, UVERBS_ATTR_CREATE_CQ_BUFFER_FD))
		return -EOPNOTSUPP;
	return rsim_create_cq(ibcq, attr, &attrs->driver_udata);
}

static inline int rsim_resize_cq_op(struct ib_cq *ibcq, unsigned int cqe,
				    struct ib_udata *udata)
{
	return rsim_resize_cq(ibcq, cqe, udata);
}

static inline struct ib_mr *rsim_reg_user_mr_op(struct ib_pd *ibpd, u64 start,
						u64 length, u64 virt_addr,
						int access,
						struct ib_dmah *dmah,
						struct ib_udata *udata)
{
	if (dmah)
		return ERR_PTR(-EOPNOTSUPP);
	return rsim_reg_user_mr(ibpd, start, length, virt_addr, access, udata);
}

#define RSIM_VERSION_OPS					\
	.create_cq = rsim_create_kernel_cq_op,			\
	.create_user_cq = rsim_create_user_cq_op,		\
	.reg_user_mr = rsim_reg_user_mr_op,			\
	.resize_user_cq = rsim_resize_cq_op

#else /* before 7.2 */

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

/* A negative count becomes one above any limit: rsim_resize_cq refuses it. */
static inline int rsim_resize_cq_op(struct ib_cq *ibcq, int cqe,
				    struct ib_udata *udata)
{
	return rsim_resize_cq(ibcq, cqe, udata);
}

#define RSIM_VERSION_OPS					\
	.create_cq = rsim_create_cq_op,				\
	.get_vector_affinity = rsim_get_vector_affinity,	\
	.reg_user_mr = rsim_reg_user_mr,			\
	.resize_cq = rsim_resize_cq_op

#endif /* before 7.2 */

#endif /* RSIM_VERBS_COMPAT_H */
