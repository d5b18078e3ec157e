/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdma-sim guest driver: what differs between the kernels it builds for,
 * Debian's 6.1, 6.12 and 7.3, compared in their headers (include/rdma/:
 * struct ib_device_ops, ib_umem.h).  The driver's code has no version
 * checks; they are all here.  The driver implements each verb once, with
 * the arguments all kernels can give it; the ops of the kernel it is built
 * for reach it through the adapters below, which rsim_verbs.c installs
 * with RSIM_VERSION_OPS.
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
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

int rsim_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata);
int rsim_resize_cq(struct ib_cq *ibcq, u32 cqe, struct ib_udata *udata);
struct ib_mr *rsim_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 virt_addr, int access,
			       struct ib_udata *udata);
const struct cpumask *rsim_get_vector_affinity(struct ib_device *ibdev,
					       int comp_vector);

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

static inline struct ib_umem *ib_umem_get_va(struct ib_device *device,
					     unsigned long addr, size_t size,
					     int access)
{
	return ib_umem_get(device, addr, size, access);
}

#define RSIM_VERSION_OPS					\
	.create_cq = rsim_create_cq_op,				\
	.get_vector_affinity = rsim_get_vector_affinity,	\
	.reg_user_mr = rsim_reg_user_mr,			\
	.resize_cq = rsim_resize_cq_op

#endif /* before 7.2 */

#endif /* RSIM_COMPAT_H */
