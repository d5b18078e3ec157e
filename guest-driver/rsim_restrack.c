// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma-sim guest driver: its attributes in `rdma resource show -d`.
 *
 * The RDMA core's resource tracking lists what ib_core knows of each QP,
 * CQ and MR (numbers, states, PSNs, keys).  These callbacks add what only
 * this driver knows: the rings it gave the device (depth, element size,
 * page-list level) with the two indexes in each ring's header - the
 * producer's and the consumer's, whose difference is the work waiting -
 * and how an MR is laid out (kind, page-list level, page size, pages).
 * Nothing here asks the device, so a listing never waits for it.
 */

#include <rdma/restrack.h>

#include "rsim.h"

/* PREFIX-depth, -elem, -level, -prod, -cons of a ring */
static int rsim_res_ring(struct sk_buff *msg, const char *prefix,
			 const struct rsim_ring *ring)
{
	static const char *const names[] = {
		"depth", "elem", "level", "prod", "cons",
	};
	u32 vals[] = {
		ring->depth,
		1u << ring->log2_elem,
		ring->pbl.level,
		le32_to_cpu(READ_ONCE(ring->hdr->producer_index)),
		le32_to_cpu(READ_ONCE(ring->hdr->consumer_index)),
	};
	char name[16];
	int i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(name, sizeof(name), "%s-%s", prefix, names[i]);
		if (rdma_nl_put_driver_u32(msg, name, vals[i]))
			return -EMSGSIZE;
	}
	return 0;
}

/*
 * The driver's attributes go in a nest of their own, which the callback
 * opens; on failure the nest is cancelled and ib_core drops the entry.
 */
static struct nlattr *rsim_res_begin(struct sk_buff *msg)
{
	return nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
}

static int rsim_res_end(struct sk_buff *msg, struct nlattr *nest, int err)
{
	if (err) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}

int rsim_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct rsim_qp *qp = to_rqp(ibqp);
	struct nlattr *nest = rsim_res_begin(msg);

	if (!nest)
		return -EMSGSIZE;
	return rsim_res_end(msg, nest,
			    rsim_res_ring(msg, "sq", &qp->sq) ||
			    (qp->has_rq && rsim_res_ring(msg, "rq", &qp->rq)) ||
			    rdma_nl_put_driver_u32(msg, "max-inline",
						   qp->max_inline));
}

int rsim_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct rsim_cq *cq = to_rcq(ibcq);
	struct nlattr *nest = rsim_res_begin(msg);

	if (!nest)
		return -EMSGSIZE;
	return rsim_res_end(msg, nest,
			    rdma_nl_put_driver_u32(msg, "vector", cq->vector) ||
			    rsim_res_ring(msg, "ring", &cq->ring));
}

int rsim_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct rsim_mr *mr = to_rmr(ibmr);
	struct nlattr *nest = rsim_res_begin(msg);
	int err;

	if (!nest)
		return -EMSGSIZE;
	err = rdma_nl_put_driver_string(msg, "kind", rsim_mr_kind(mr)) ||
	      rdma_nl_put_driver_u32_hex(msg, "access", mr->access);
	if (!err && !mr->phys)
		err = rdma_nl_put_driver_u32(msg, "level", mr->level) ||
		      rdma_nl_put_driver_u32(msg, "page-shift",
					     mr->page_shift) ||
		      rdma_nl_put_driver_u32(msg, "pages", mr->npages);
	return rsim_res_end(msg, nest, err);
}
