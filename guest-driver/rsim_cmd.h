/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdma-sim guest driver: admin commands (rsim_cmd.c).
 *
 * One function per command of docs/datasheet.md section 5.  Parameters are
 * CPU-endian structures (or plain arguments); the functions build the
 * 64-byte command, run it through the admin queue and return an errno
 * (the device status mapped by rsim_status_to_errno()).
 */
#ifndef _RSIM_CMD_H_
#define _RSIM_CMD_H_

#include <linux/types.h>
#include <rdma-sim/rdma_sim_hw.h>

struct rsim_dev;

struct rsim_cmd_ring {
	u64 addr;		/* buffer (level 0), list or root */
	u8 level;
	u8 page_shift;
	u8 log2_elem_size;
	u8 log2_depth;
	u32 npages;
};

struct rsim_create_cq_params {
	u32 eqn;
	u32 db_page;
	struct rsim_cmd_ring ring;
};

struct rsim_create_qp_params {
	u8 qp_type;		/* enum rsim_qp_type */
	bool sq_sig_all;
	u8 max_send_sge;
	u8 max_recv_sge;
	u16 max_inline;
	u16 db_page;
	u32 pdn;
	u32 send_cqn;
	u32 recv_cqn;
	u32 srqn;		/* RSIM_NO_SRQ without an SRQ */
	struct rsim_cmd_ring sq;
	struct rsim_cmd_ring rq;	/* ignored with an SRQ */
};

struct rsim_create_srq_params {
	u32 pdn;
	u32 limit;
	u8 max_sge;
	u16 db_page;
	struct rsim_cmd_ring ring;
};

struct rsim_reg_mr_params {
	u32 pdn;
	u32 access;		/* RSIM_ACCESS_* */
	bool phys;
	u64 iova;
	u64 length;
	u64 pbl_addr;
	u32 npages;
	u8 level;
	u8 page_shift;
	u32 fbo;
};

struct rsim_mr_translate_result {
	u64 addr;
	u64 contig;
	u8 level;
	u8 page_shift;
	u8 state;
};

struct rsim_query_srq_result {
	u32 max_wr;
	u32 max_sge;
	u32 limit;
};

int rsim_cmd_nop(struct rsim_dev *dev);
int rsim_cmd_query_device(struct rsim_dev *dev,
			  struct rsim_query_device_resp *resp);
int rsim_cmd_query_port(struct rsim_dev *dev,
			struct rsim_query_port_resp *resp);
int rsim_cmd_set_port(struct rsim_dev *dev, u32 mask, u32 eth_mtu,
		      const u8 *mac);
int rsim_cmd_query_stats(struct rsim_dev *dev, dma_addr_t addr, u32 len,
			 u32 *count);
int rsim_cmd_create_eq(struct rsim_dev *dev, u32 vector, dma_addr_t addr,
		       u32 depth, u32 *eqn);
int rsim_cmd_destroy_eq(struct rsim_dev *dev, u32 eqn);
int rsim_cmd_create_ethq(struct rsim_dev *dev, u8 kind, u32 eqn,
			 dma_addr_t addr, u32 depth);
int rsim_cmd_destroy_ethq(struct rsim_dev *dev, u8 kind);
int rsim_cmd_alloc_pd(struct rsim_dev *dev, u32 *pdn);
int rsim_cmd_dealloc_pd(struct rsim_dev *dev, u32 pdn);
int rsim_cmd_create_cq(struct rsim_dev *dev,
		       const struct rsim_create_cq_params *p, u32 *cqn);
int rsim_cmd_resize_cq(struct rsim_dev *dev, u32 cqn,
		       const struct rsim_cmd_ring *ring);
int rsim_cmd_destroy_cq(struct rsim_dev *dev, u32 cqn);
int rsim_cmd_arm_cq(struct rsim_dev *dev, u32 cqn, u32 arm);
int rsim_cmd_create_qp(struct rsim_dev *dev,
		       const struct rsim_create_qp_params *p, u32 *qpn);
int rsim_cmd_modify_qp(struct rsim_dev *dev, u32 qpn, dma_addr_t attr);
int rsim_cmd_query_qp(struct rsim_dev *dev, u32 qpn, dma_addr_t attr);
int rsim_cmd_destroy_qp(struct rsim_dev *dev, u32 qpn);
int rsim_cmd_create_srq(struct rsim_dev *dev,
			const struct rsim_create_srq_params *p, u32 *srqn);
int rsim_cmd_modify_srq(struct rsim_dev *dev, u32 srqn, u32 mask, u32 limit,
			const struct rsim_cmd_ring *ring);
int rsim_cmd_query_srq(struct rsim_dev *dev, u32 srqn,
		       struct rsim_query_srq_result *res);
int rsim_cmd_destroy_srq(struct rsim_dev *dev, u32 srqn);
int rsim_cmd_create_ah(struct rsim_dev *dev, u32 pdn,
		       const struct rsim_av *av, bool atomic, u32 *ahn);
int rsim_cmd_destroy_ah(struct rsim_dev *dev, u32 ahn, bool atomic);
int rsim_cmd_reg_mr(struct rsim_dev *dev, const struct rsim_reg_mr_params *p,
		    u32 *lkey, u32 *rkey);
int rsim_cmd_dereg_mr(struct rsim_dev *dev, u32 lkey);
int rsim_cmd_alloc_stag(struct rsim_dev *dev, u32 pdn, u32 max_pages,
			dma_addr_t pbl_addr, u32 *key);
int rsim_cmd_mr_translate(struct rsim_dev *dev, u32 key, u32 pdn, u32 access,
			  u64 iova, u64 length,
			  struct rsim_mr_translate_result *res);
int rsim_cmd_add_gid(struct rsim_dev *dev, u32 index, const u8 *gid);
int rsim_cmd_del_gid(struct rsim_dev *dev, u32 index);

#endif /* _RSIM_CMD_H_ */
