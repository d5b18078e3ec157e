// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma-sim guest driver: one function per admin command.
 *
 * Each builds the command of <rdma-sim/rdma_sim_hw.h> from CPU-endian
 * parameters, runs it (rsim_admin_exec) and converts the result back.
 */

#include "rsim.h"

static void rsim_cmd_init(void *cmd, size_t size, u8 opcode)
{
	BUILD_BUG_ON(sizeof(struct rsim_admin_cmd) != RSIM_AQ_ENTRY_SIZE);
	WARN_ON_ONCE(size != RSIM_AQ_ENTRY_SIZE);
	memset(cmd, 0, RSIM_AQ_ENTRY_SIZE);
	((struct rsim_cmd_hdr *)cmd)->dw0 =
		cpu_to_le32(FIELD_PREP(R_RSIM_CMD_HDR_OPCODE_MASK, opcode));
}

static int rsim_exec(struct rsim_dev *dev, void *cmd,
		     struct rsim_admin_cqe *cqe)
{
	return rsim_admin_exec(dev, cmd, cqe, false);
}

/*
 * Run a command that creates an object; *handle is the object's number,
 * which must lie in [first, end): the device's table for its kind.  A
 * number outside (a status the device damaged into OK, or a made-up
 * number) fails the command with -EIO; what the device made, if it made
 * anything, stays until the device is reset.
 */
static int rsim_exec_create(struct rsim_dev *dev, void *cmd, bool atomic,
			    u32 first, u64 end, u32 *handle)
{
	const struct rsim_cmd_hdr *hdr = cmd;
	const struct rsim_create_resp *r;
	struct rsim_admin_cqe cqe;
	u32 h;
	int err;

	err = rsim_admin_exec(dev, cmd, &cqe, atomic);
	if (err)
		return err;
	r = (const void *)cqe.result;
	h = le32_to_cpu(r->handle);
	if (h < first || h >= end) {
		rsim_log(warn_ratelimited, dev,
			 "%s returned number %u, outside %u..%llu: failing the command\n",
			 rsim_opcode_name(FIELD_GET(R_RSIM_CMD_HDR_OPCODE_MASK,
						    le32_to_cpu(hdr->dw0))),
			 h, first, end - 1);
		return -EIO;
	}
	*handle = h;
	return 0;
}

/* Run a command without arguments; its result is the response. */
static int rsim_exec_query(struct rsim_dev *dev, u8 opcode, void *resp,
			   size_t len)
{
	struct rsim_admin_cmd c;
	struct rsim_admin_cqe cqe;
	int err;

	rsim_cmd_init(&c, sizeof(c), opcode);
	err = rsim_exec(dev, &c, &cqe);
	if (!err)
		memcpy(resp, cqe.result, len);
	return err;
}

static int rsim_cmd_handle_only(struct rsim_dev *dev, u8 opcode, u32 handle,
				bool atomic)
{
	struct rsim_cmd_handle c;

	rsim_cmd_init(&c, sizeof(c), opcode);
	c.handle = cpu_to_le32(handle);
	return rsim_admin_exec(dev, (struct rsim_admin_cmd *)&c, NULL, atomic);
}

static void rsim_ring_to_desc(const struct rsim_cmd_ring *r,
			      struct rsim_queue_desc *d)
{
	d->addr = cpu_to_le64(r->addr);
	d->level = r->level;
	d->page_shift = r->page_shift;
	d->log2_elem_size = r->log2_elem_size;
	d->log2_depth = r->log2_depth;
	d->npages = cpu_to_le32(r->npages);
}

int rsim_cmd_nop(struct rsim_dev *dev)
{
	struct rsim_admin_cmd c;

	rsim_cmd_init(&c, sizeof(c), RSIM_CMD_NOP);
	return rsim_exec(dev, &c, NULL);
}

int rsim_cmd_query_device(struct rsim_dev *dev,
			  struct rsim_query_device_resp *resp)
{
	return rsim_exec_query(dev, RSIM_CMD_QUERY_DEVICE, resp, sizeof(*resp));
}

int rsim_cmd_query_port(struct rsim_dev *dev, struct rsim_query_port_resp *resp)
{
	return rsim_exec_query(dev, RSIM_CMD_QUERY_PORT, resp, sizeof(*resp));
}

int rsim_cmd_set_port(struct rsim_dev *dev, u32 mask, u32 eth_mtu,
		      const u8 *mac)
{
	struct rsim_cmd_set_port c;

	rsim_cmd_init(&c, sizeof(c), RSIM_CMD_SET_PORT);
	c.mask = cpu_to_le32(mask);
	if (mask & RSIM_SET_PORT_MTU)
		c.eth_mtu = cpu_to_le32(eth_mtu);
	if (mask & RSIM_SET_PORT_MAC)
		memcpy(c.mac, mac, sizeof(c.mac));
	return rsim_exec(dev, &c, NULL);
}

int rsim_cmd_query_stats(struct rsim_dev *dev, dma_addr_t addr, u32 len,
			 u32 *count)
{
	struct rsim_cmd_query_stats c;
	struct rsim_admin_cqe cqe;
	int err;

	rsim_cmd_init(&c, sizeof(c), RSIM_CMD_QUERY_STATS);
	c.addr = cpu_to_le64(addr);
	c.len = cpu_to_le32(len);
	err = rsim_exec(dev, &c, &cqe);
	if (!err)
		*count = le32_to_cpu(((struct rsim_query_stats_resp *)
				      cqe.result)->count);
	return err;
}

int rsim_cmd_create_eq(struct rsim_dev *dev, u32 vector, dma_addr_t addr,
		       u32 depth, u32 *eqn)
{
	struct rsim_cmd_create_eq c;

	rsim_cmd_init(&c, sizeof(c), RSIM_CMD_CREATE_EQ);
	c.vector = cpu_to_le32(vector);
	c.addr = cpu_to_le64(addr);
	c.depth = cpu_to_le32(depth);
	return rsim_exec_create(dev, &c, false, 0, dev->caps.max_eq, eqn);
}

int rsim_cmd_destroy_eq(struct rsim_dev *dev, u32 eqn)
{
	return rsim_cmd_handle_only(dev, RSIM_CMD_DESTROY_EQ, eqn, false);
}

int rsim_cmd_create_ethq(struct rsim_dev *dev, u8 kind, u32 eqn,
			 dma_addr_t addr, u32 depth)
{
	struct rsim_cmd_create_ethq c;

	rsim_cmd_init(&c, sizeof(c), RSIM_CMD_CREATE_ETHQ);
	c.kind = kind;
	c.eqn = cpu_to_le32(eqn);
	c.addr = cpu_to_le64(addr);
	c.depth = cpu_to_le32(depth);
	return rsim_exec(dev, &c, NULL);
}

int rsim_cmd_destroy_ethq(struct rsim_dev *dev, u8 kind)
{
	return rsim_cmd_handle_only(dev, RSIM_CMD_DESTROY_ETHQ, kind, false);
}

int rsim_cmd_alloc_pd(struct rsim_dev *dev, u32 *pdn)
{
	struct rsim_admin_cmd c;

	rsim_cmd_init(&c, sizeof(c), RSIM_CMD_ALLOC_PD);
	return rsim_exec_create(dev, &c, false, 0, dev->caps.max_pd, pdn);
}

int rsim_cmd_dealloc_pd(struct rsim_dev *dev, u32 pdn)
{
	return rsim_cmd_handle_only(dev, RSIM_CMD_DEALLOC_PD, pdn, false);
}

int rsim_cmd_create_cq(struct rsim_dev *dev,
		       const struct rsim_create_cq_params *p, u32 *cqn)
{
	struct rsim_cmd_create_cq c;

	rsim_cmd_init(&c, sizeof(c), RSIM_CMD_CREATE_CQ);
	c.eqn = cpu_to_le32(p->eqn);
	c.db_page = cpu_to_le32(p->db_page);
	rsim_ring_to_desc(&p->ring, &c.q);
	return rsim_exec_create(dev, &c, false, 0, dev->caps.max_cq, cqn);
}

int rsim_cmd_resize_cq(struct rsim_dev *dev, u32 cqn,
		       const struct rsim_cmd_ring *ring)
{
	struct rsim_cmd_resize_cq c;

	rsim_cmd_init(&c, sizeof(c), RSIM_CMD_RESIZE_CQ);
	c.cqn = cpu_to_le32(cqn);
	rsim_ring_to_desc(ring, &c.q);
	return rsim_exec(dev, &c, NULL);
}

int rsim_cmd_destroy_cq(struct rsim_dev *dev, u32 cqn)
{
	return rsim_cmd_handle_only(dev, RSIM_CMD_DESTROY_CQ, cqn, false);
}

int rsim_cmd_arm_cq(struct rsim_dev *dev, u32 cqn, u32 arm)
{
	struct rsim_cmd_arm_cq c;

	rsim_cmd_init(&c, sizeof(c), RSIM_CMD_ARM_CQ);
	c.cqn = cpu_to_le32(cqn);
	c.arm = cpu_to_le32(arm);
	return rsim_exec(dev, &c, NULL);
}

int rsim_cmd_create_qp(struct rsim_dev *dev,
		       const struct rsim_create_qp_params *p, u32 *qpn)
{
	struct rsim_cmd_create_qp c;

	rsim_cmd_init(&c, sizeof(c), RSIM_CMD_CREATE_QP);
	c.qp_type = p->qp_type;
	c.flags = p->sq_sig_all ? RSIM_QP_FLAG_SQ_SIG_ALL : 0;
	c.max_send_sge = p->max_send_sge;
	c.max_recv_sge = p->max_recv_sge;
	c.pdn = cpu_to_le32(p->pdn);
	c.send_cqn = cpu_to_le32(p->send_cqn);
	c.recv_cqn = cpu_to_le32(p->recv_cqn);
	c.srqn = cpu_to_le32(p->srqn);
	rsim_ring_to_desc(&p->sq, &c.sq);
	if (p->srqn == RSIM_NO_SRQ)
		rsim_ring_to_desc(&p->rq, &c.rq);
	c.max_inline = cpu_to_le16(p->max_inline);
	c.db_page = cpu_to_le16(p->db_page);
	/* The GSI QP is QPN 1, the others 2 .. CAP_MAX_QP - 1. */
	if (p->qp_type == RSIM_QPT_GSI)
		return rsim_exec_create(dev, &c, false, RSIM_GSI_QPN,
					RSIM_GSI_QPN + 1, qpn);
	return rsim_exec_create(dev, &c, false, RSIM_GSI_QPN + 1,
				dev->caps.max_qp, qpn);
}

int rsim_cmd_modify_qp(struct rsim_dev *dev, u32 qpn, dma_addr_t attr)
{
	struct rsim_cmd_qp_attr c;

	rsim_cmd_init(&c, sizeof(c), RSIM_CMD_MODIFY_QP);
	c.qpn = cpu_to_le32(qpn);
	c.addr = cpu_to_le64(attr);
	return rsim_exec(dev, &c, NULL);
}

int rsim_cmd_query_qp(struct rsim_dev *dev, u32 qpn, dma_addr_t attr)
{
	struct rsim_cmd_qp_attr c;

	rsim_cmd_init(&c, sizeof(c), RSIM_CMD_QUERY_QP);
	c.qpn = cpu_to_le32(qpn);
	c.addr = cpu_to_le64(attr);
	return rsim_exec(dev, &c, NULL);
}

int rsim_cmd_destroy_qp(struct rsim_dev *dev, u32 qpn)
{
	return rsim_cmd_handle_only(dev, RSIM_CMD_DESTROY_QP, qpn, false);
}

int rsim_cmd_create_srq(struct rsim_dev *dev,
			const struct rsim_create_srq_params *p, u32 *srqn)
{
	struct rsim_cmd_create_srq c;

	rsim_cmd_init(&c, sizeof(c), RSIM_CMD_CREATE_SRQ);
	c.pdn = cpu_to_le32(p->pdn);
	rsim_ring_to_desc(&p->ring, &c.q);
	c.limit = cpu_to_le32(p->limit);
	c.max_sge = p->max_sge;
	c.db_page = cpu_to_le16(p->db_page);
	return rsim_exec_create(dev, &c, false, 0, dev->caps.max_srq,
				srqn);
}

int rsim_cmd_modify_srq(struct rsim_dev *dev, u32 srqn, u32 mask, u32 limit,
			const struct rsim_cmd_ring *ring)
{
	struct rsim_cmd_modify_srq c;

	rsim_cmd_init(&c, sizeof(c), RSIM_CMD_MODIFY_SRQ);
	c.srqn = cpu_to_le32(srqn);
	c.mask = cpu_to_le32(mask);
	c.limit = cpu_to_le32(limit);
	if (mask & RSIM_SRQ_MAX_WR)
		rsim_ring_to_desc(ring, &c.q);
	return rsim_exec(dev, &c, NULL);
}

int rsim_cmd_query_srq(struct rsim_dev *dev, u32 srqn,
		       struct rsim_query_srq_result *res)
{
	struct rsim_cmd_handle c;
	const struct rsim_query_srq_resp *r;
	struct rsim_admin_cqe cqe;
	int err;

	rsim_cmd_init(&c, sizeof(c), RSIM_CMD_QUERY_SRQ);
	c.handle = cpu_to_le32(srqn);
	err = rsim_exec(dev, &c, &cqe);
	if (err)
		return err;
	r = (const void *)cqe.result;
	res->max_wr = le32_to_cpu(r->max_wr);
	res->max_sge = le32_to_cpu(r->max_sge);
	res->limit = le32_to_cpu(r->limit);
	return 0;
}

int rsim_cmd_destroy_srq(struct rsim_dev *dev, u32 srqn)
{
	return rsim_cmd_handle_only(dev, RSIM_CMD_DESTROY_SRQ, srqn, false);
}

int rsim_cmd_create_ah(struct rsim_dev *dev, u32 pdn,
		       const struct rsim_av *av, bool atomic, u32 *ahn)
{
	struct rsim_cmd_create_ah c;

	rsim_cmd_init(&c, sizeof(c), RSIM_CMD_CREATE_AH);
	c.pdn = cpu_to_le32(pdn);
	c.av = *av;
	return rsim_exec_create(dev, &c, atomic, 1, dev->caps.max_ah, ahn);
}

int rsim_cmd_destroy_ah(struct rsim_dev *dev, u32 ahn, bool atomic)
{
	return rsim_cmd_handle_only(dev, RSIM_CMD_DESTROY_AH, ahn, atomic);
}

int rsim_cmd_reg_mr(struct rsim_dev *dev, const struct rsim_reg_mr_params *p,
		    u32 *lkey, u32 *rkey)
{
	struct rsim_cmd_reg_mr c;
	const struct rsim_create_resp *r;
	struct rsim_admin_cqe cqe;
	int err;

	rsim_cmd_init(&c, sizeof(c), RSIM_CMD_REG_MR);
	c.pdn = cpu_to_le32(p->pdn);
	c.access = cpu_to_le32(p->access);
	if (p->phys) {
		c.flags = cpu_to_le32(RSIM_MR_FLAG_PHYS);
	} else {
		c.iova = cpu_to_le64(p->iova);
		c.length = cpu_to_le64(p->length);
		c.pbl_addr = cpu_to_le64(p->pbl_addr);
		c.npages = cpu_to_le32(p->npages);
		c.level = p->level;
		c.page_shift = p->page_shift;
		c.fbo = cpu_to_le32(p->fbo);
	}
	err = rsim_exec(dev, &c, &cqe);
	if (err)
		return err;
	r = (const void *)cqe.result;
	*lkey = le32_to_cpu(r->handle);
	*rkey = le32_to_cpu(r->handle2);
	return 0;
}

int rsim_cmd_dereg_mr(struct rsim_dev *dev, u32 lkey)
{
	return rsim_cmd_handle_only(dev, RSIM_CMD_DEREG_MR, lkey, false);
}

int rsim_cmd_alloc_stag(struct rsim_dev *dev, u32 pdn, u32 max_pages,
			dma_addr_t pbl_addr, u32 *key)
{
	struct rsim_cmd_alloc_stag c;

	rsim_cmd_init(&c, sizeof(c), RSIM_CMD_ALLOC_STAG);
	c.pdn = cpu_to_le32(pdn);
	c.max_pages = cpu_to_le32(max_pages);
	c.pbl_addr = cpu_to_le64(pbl_addr);
	/* any key: the device chooses them */
	return rsim_exec_create(dev, &c, false, 0, (u64)U32_MAX + 1, key);
}

int rsim_cmd_mr_translate(struct rsim_dev *dev, u32 key, u32 pdn, u32 access,
			  u64 iova, u64 length,
			  struct rsim_mr_translate_result *res)
{
	struct rsim_cmd_mr_translate c;
	const struct rsim_mr_translate_resp *r;
	struct rsim_admin_cqe cqe;
	int err;

	rsim_cmd_init(&c, sizeof(c), RSIM_CMD_MR_TRANSLATE);
	c.key = cpu_to_le32(key);
	c.pdn = cpu_to_le32(pdn);
	c.access = cpu_to_le32(access);
	c.iova = cpu_to_le64(iova);
	c.length = cpu_to_le64(length);
	err = rsim_exec(dev, &c, &cqe);
	if (err)
		return err;
	r = (const void *)cqe.result;
	res->addr = le64_to_cpu(r->addr);
	res->contig = le64_to_cpu(r->contig);
	res->level = r->level;
	res->page_shift = r->page_shift;
	res->state = r->state;
	return 0;
}

int rsim_cmd_add_gid(struct rsim_dev *dev, u32 index, const u8 *gid)
{
	struct rsim_cmd_gid c;

	rsim_cmd_init(&c, sizeof(c), RSIM_CMD_ADD_GID);
	c.index = cpu_to_le32(index);
	memcpy(c.gid, gid, sizeof(c.gid));
	c.type = RSIM_GID_TYPE_ROCE_V2;
	return rsim_exec(dev, &c, NULL);
}

int rsim_cmd_del_gid(struct rsim_dev *dev, u32 index)
{
	struct rsim_cmd_gid c;

	rsim_cmd_init(&c, sizeof(c), RSIM_CMD_DEL_GID);
	c.index = cpu_to_le32(index);
	return rsim_exec(dev, &c, NULL);
}
