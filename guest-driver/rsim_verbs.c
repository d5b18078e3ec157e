// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma-sim guest driver: verbs (device, port, GIDs, contexts, PDs, CQs,
 * QPs, SRQs, AHs, statistics).  Memory registration is in rsim_mr.c.
 *
 * User space talks to the device with the Soft-RoCE (rxe) user ABI: the
 * driver registers as RDMA_DRIVER_RXE with uverbs ABI version 2, creates
 * each queue as an rxe ring, returns its mmap offset and size in the rxe
 * response structures, and turns the POST_SEND doorbell command of the
 * rxe provider into a DB_SQ doorbell.  Kernel users (the MAD layer's GSI
 * QP, ULPs) post through the same rings.
 */

#include <linux/vmalloc.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/uverbs_ioctl.h>

#include "rsim.h"
#include "rsim_verbs_compat.h"

/* The Soft-RoCE uverbs ABI version the rxe provider accepts */
#define RSIM_UVERBS_ABI_VERSION		2

/* The user context of a verb called from user space (udata != NULL) */
static struct ib_ucontext *rsim_uctx(struct ib_udata *udata)
{
	return &rdma_udata_to_drv_context(udata, struct rsim_ucontext,
					  ibucontext)->ibucontext;
}

/*
 * Last step of creating a CQ, QP or SRQ: insert it in its table (where
 * events look it up) and, for user space, copy the response out.  On
 * failure it is no longer in the table.  -EBUSY: the device handed out
 * the number of an object that still exists (reported here); the caller
 * must not destroy that number, it is the other object's.
 */
static int rsim_publish(struct rsim_dev *dev, const char *what,
			struct xarray *xa, u32 num, void *obj,
			struct ib_udata *udata, void *resp, size_t len)
{
	int err;

	err = xa_insert_irq(xa, num, obj, GFP_KERNEL);
	if (err == -EBUSY)
		rsim_log(warn_ratelimited, dev,
			 "the device created %s %u, which exists: failing the command\n",
			 what, num);
	if (err || !udata)
		return err;
	err = ib_copy_to_udata(udata, resp, len);
	if (err)
		xa_erase_irq(xa, num);
	return err;
}

/* ---- Device and port --------------------------------------------------- */

static int rsim_query_device(struct ib_device *ibdev,
			     struct ib_device_attr *a, struct ib_udata *udata)
{
	struct rsim_dev *dev = to_rdev(ibdev);
	const struct rsim_caps *c = &dev->caps;

	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;

	memset(a, 0, sizeof(*a));
	a->fw_ver = dev->fw_ver;
	a->sys_image_guid = cpu_to_be64(dev->sys_image_guid);
	a->max_mr_size = c->max_mr_size;
	a->page_size_cap = c->page_sizes;
	a->vendor_id = dev->vendor_id;
	a->vendor_part_id = dev->vendor_part_id;
	a->hw_ver = dev->hw_ver;
	/* QPN 0, AH 0 and MR index 0 are never handed out. */
	a->max_qp = c->max_qp - 1;
	a->max_qp_wr = c->max_qp_wr;
	a->device_cap_flags = IB_DEVICE_SYS_IMAGE_GUID |
			      IB_DEVICE_PORT_ACTIVE_EVENT |
			      IB_DEVICE_RC_RNR_NAK_GEN |
			      IB_DEVICE_CURR_QP_STATE_MOD;
	if (c->features & R_RSIM_FEATURES_SRQ_MASK)
		a->device_cap_flags |= IB_DEVICE_SRQ_RESIZE;
	if (c->features & R_RSIM_FEATURES_FAST_REG_MASK)
		a->device_cap_flags |= IB_DEVICE_MEM_MGT_EXTENSIONS;
	/* No IBK_LOCAL_DMA_LKEY: MRs are per PD, the core asks get_dma_mr. */
	a->kernel_cap_flags = 0;
	a->max_send_sge = c->max_send_sge;
	a->max_recv_sge = c->max_recv_sge;
	a->max_sge_rd = c->max_send_sge;
	a->max_cq = c->max_cq;
	a->max_cqe = c->max_cqe;
	a->max_mr = c->max_mr - 1;
	a->max_pd = c->max_pd;
	a->max_qp_rd_atom = c->max_rd_atom;
	a->max_qp_init_rd_atom = c->max_init_rd_atom;
	a->max_res_rd_atom = c->max_rd_atom * (c->max_qp - 1);
	a->atomic_cap = (c->features & R_RSIM_FEATURES_ATOMIC_MASK) ?
			IB_ATOMIC_HCA : IB_ATOMIC_NONE;
	a->max_ah = c->max_ah - 1;
	if (c->features & R_RSIM_FEATURES_SRQ_MASK) {
		a->max_srq = c->max_srq;
		a->max_srq_wr = c->max_srq_wr;
		a->max_srq_sge = c->max_srq_sge;
	}
	if (c->features & R_RSIM_FEATURES_FAST_REG_MASK)
		a->max_fast_reg_page_list_len = c->max_fast_reg_pages;
	a->max_pkeys = c->max_pkeys;
	a->local_ca_ack_delay = 15;
	return 0;
}

/* The CPUs completion vector @comp_vector's interrupt is spread to. */
const struct cpumask *rsim_get_vector_affinity(struct ib_device *ibdev,
					       int comp_vector)
{
	struct rsim_dev *dev = to_rdev(ibdev);

	if (comp_vector < 0 || comp_vector >= dev->num_eqs)
		return NULL;
	return pci_irq_get_affinity(dev->pdev, dev->eqs[comp_vector].vector);
}

static enum ib_port_phys_state rsim_phys_state(u8 state)
{
	return state == 5 ? IB_PORT_PHYS_STATE_LINK_UP :
			    IB_PORT_PHYS_STATE_DISABLED;
}

static int rsim_query_port(struct ib_device *ibdev, u32 port,
			   struct ib_port_attr *a)
{
	struct rsim_dev *dev = to_rdev(ibdev);
	struct rsim_query_port_resp p = {};
	int err;

	err = rsim_cmd_query_port(dev, &p);
	if (err) {
		if (!rsim_dead(dev))
			return err;
		/* A dead device still has a (down) port. */
		p.state = RSIM_PORT_DOWN;
		p.phys_state = 3;
		p.max_mtu = dev->caps.max_path_mtu;
		p.active_mtu = IB_MTU_256;
		p.gid_tbl_len = cpu_to_le32(dev->caps.max_gid);
		p.active_speed = IB_SPEED_SDR;
		p.active_width = IB_WIDTH_1X;
	}
	memset(a, 0, sizeof(*a));
	a->state = (p.state == RSIM_PORT_ACTIVE && rsim_netdev_running(dev)) ?
		   IB_PORT_ACTIVE : IB_PORT_DOWN;
	a->phys_state = rsim_phys_state(p.phys_state);
	a->max_mtu = min_t(u32, p.max_mtu, dev->caps.max_path_mtu);
	a->active_mtu = min_t(u32, p.active_mtu, a->max_mtu);
	a->gid_tbl_len = min_t(u32, le32_to_cpu(p.gid_tbl_len),
			       dev->caps.max_gid);
	a->port_cap_flags = IB_PORT_CM_SUP;
	a->max_msg_sz = 1U << 31;
	a->pkey_tbl_len = 1;
	a->max_vl_num = 1;
	a->active_speed = p.active_speed;
	a->active_width = p.active_width;
	a->ip_gids = true;
	return 0;
}

static int rsim_get_port_immutable(struct ib_device *ibdev, u32 port,
				   struct ib_port_immutable *imm)
{
	struct ib_port_attr attr;
	int err;

	err = ib_query_port(ibdev, port, &attr);
	if (err)
		return err;
	imm->pkey_tbl_len = attr.pkey_tbl_len;
	imm->gid_tbl_len = attr.gid_tbl_len;
	imm->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	imm->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer rsim_get_link_layer(struct ib_device *ibdev,
						u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int rsim_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			   u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

/* RoCE GIDs live in the core's table, fed by add_gid/del_gid. */
static int rsim_query_gid(struct ib_device *ibdev, u32 port, int index,
			  union ib_gid *gid)
{
	return rdma_query_gid(ibdev, port, index, gid);
}

static int rsim_add_gid(const struct ib_gid_attr *attr, void **context)
{
	struct rsim_dev *dev = to_rdev(attr->device);

	if (attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EOPNOTSUPP;
	/* IPv4 addresses arrive as IPv4-mapped GIDs already. */
	return rsim_cmd_add_gid(dev, attr->index, attr->gid.raw);
}

static int rsim_del_gid(const struct ib_gid_attr *attr, void **context)
{
	struct rsim_dev *dev = to_rdev(attr->device);
	int err;

	err = rsim_cmd_del_gid(dev, attr->index);
	return rsim_dead(dev) ? 0 : err;
}

static void rsim_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	struct rsim_dev *dev = to_rdev(ibdev);

	snprintf(str, IB_FW_VERSION_NAME_MAX, "%u.%u.%u",
		 (u32)(dev->fw_ver >> 32), (u32)(dev->fw_ver >> 16) & 0xffff,
		 (u32)dev->fw_ver & 0xffff);
}

/* ---- User contexts and mmap -------------------------------------------- */

static int rsim_alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata)
{
	return rsim_dead(to_rdev(uctx->device)) ? -EIO : 0;
}

static void rsim_dealloc_ucontext(struct ib_ucontext *uctx)
{
}

/*
 * Called when the device goes away under a live process: the core then
 * destroys every object of the context; ring pages the process still maps
 * stay valid (they hold page references) until it unmaps them.
 */
static void rsim_disassociate_ucontext(struct ib_ucontext *uctx)
{
}

static int rsim_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rentry;
	struct rsim_mmap_entry *e;
	int err;

	rentry = rdma_user_mmap_entry_get(uctx, vma);
	if (!rentry)
		return -EINVAL;
	e = to_rmentry(rentry);
	if (vma->vm_end - vma->vm_start > e->size)
		err = -EINVAL;
	else
		err = remap_vmalloc_range(vma, e->buf, 0);
	rdma_user_mmap_entry_put(rentry);
	return err;
}

static void rsim_mmap_free(struct rdma_user_mmap_entry *rentry)
{
	struct rsim_mmap_entry *e = to_rmentry(rentry);

	vfree(e->buf);
	kfree(e);
}

/* ---- Protection domains ------------------------------------------------ */

static int rsim_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return rsim_cmd_alloc_pd(to_rdev(ibpd->device), &to_rpd(ibpd)->pdn);
}

static int rsim_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct rsim_dev *dev = to_rdev(ibpd->device);
	int err;

	err = rsim_cmd_dealloc_pd(dev, to_rpd(ibpd)->pdn);
	if (err && !rsim_dead(dev))
		ibdev_err(&dev->ibdev, "DEALLOC_PD %u failed: %d\n",
			  to_rpd(ibpd)->pdn, err);
	return 0;
}

/* ---- Completion queues ------------------------------------------------- */

static struct rsim_cq *rsim_cq_get(struct rsim_dev *dev, u32 cqn)
{
	unsigned long flags;
	struct rsim_cq *cq;

	xa_lock_irqsave(&dev->cqs, flags);
	cq = xa_load(&dev->cqs, cqn);
	if (cq && !refcount_inc_not_zero(&cq->refcnt))
		cq = NULL;
	xa_unlock_irqrestore(&dev->cqs, flags);
	return cq;
}

static void rsim_cq_put(struct rsim_cq *cq)
{
	if (refcount_dec_and_test(&cq->refcnt))
		complete(&cq->free);
}

/*
 * Call the completion handler of a CQ.  A CQ its kernel user polls itself
 * is never armed and takes no events (the core calls one a bug: WARN).
 */
static bool rsim_cq_notify(struct rsim_cq *cq)
{
	if (!cq->ibcq.comp_handler || cq->ibcq.poll_ctx == IB_POLL_DIRECT)
		return false;
	cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	return true;
}

/*
 * COMPLETION event of a completion EQ (interrupt context); false if it
 * names no CQ that takes events.
 */
bool rsim_cq_comp_event(struct rsim_dev *dev, u32 cqn)
{
	struct rsim_cq *cq = rsim_cq_get(dev, cqn);
	bool taken;

	if (!cq)
		return false;
	taken = rsim_cq_notify(cq);
	rsim_cq_put(cq);
	return taken;
}

/*
 * An event of a completion vector was refused: it may have been any of its
 * CQs'.  They all get one: a spurious event costs a poll, a lost one can
 * leave a kernel user waiting for ever.
 */
void rsim_cq_comp_event_all(struct rsim_dev *dev, u32 vector)
{
	unsigned long index;
	struct rsim_cq *cq;
	void *entry;

	xa_for_each(&dev->cqs, index, entry) {
		cq = rsim_cq_get(dev, index);
		if (!cq)
			continue;
		if (cq->vector == vector)
			rsim_cq_notify(cq);
		rsim_cq_put(cq);
	}
}

void rsim_cq_event(struct rsim_dev *dev, u32 cqn, enum ib_event_type type)
{
	struct rsim_cq *cq = rsim_cq_get(dev, cqn);
	struct ib_event ev = {};

	if (!cq) {
		rsim_log(warn_ratelimited, dev,
			 "async event %d for no CQ %u ignored\n", type, cqn);
		return;
	}
	if (cq->ibcq.event_handler) {
		ev.device = &dev->ibdev;
		ev.element.cq = &cq->ibcq;
		ev.event = type;
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	}
	rsim_cq_put(cq);
}

static bool rsim_cq_empty(struct rsim_cq *cq)
{
	u32 cons = cq->user ? rsim_ring_load_cons(&cq->ring) : cq->cons;

	return rsim_ring_load_prod(&cq->ring) == cons;
}

/* Call the handler of every kernel CQ with completions (process context). */
void rsim_flush_work(struct work_struct *work)
{
	struct rsim_dev *dev = container_of(work, struct rsim_dev, flush_work);
	unsigned long index;
	struct rsim_cq *cq;
	unsigned long flags;
	bool pending;
	void *entry;

	xa_for_each(&dev->cqs, index, entry) {
		cq = rsim_cq_get(dev, index);
		if (!cq)
			continue;
		if (!cq->user) {
			spin_lock_irqsave(&cq->lock, flags);
			pending = !cq->resizing && !rsim_cq_empty(cq);
			spin_unlock_irqrestore(&cq->lock, flags);
			if (pending)
				rsim_cq_notify(cq);
		}
		rsim_cq_put(cq);
	}
}

/* ib_device_ops' CQ creation, through rsim_verbs_compat.h's adapters */
int rsim_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata)
{
	struct rsim_dev *dev = to_rdev(ibcq->device);
	struct rsim_cq *cq = to_rcq(ibcq);
	struct rsim_create_cq_params p = {};
	struct rxe_create_cq_resp resp = {};
	u32 depth;
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > dev->caps.max_cqe ||
	    attr->comp_vector >= dev->num_eqs)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	cq->user = !!udata;
	spin_lock_init(&cq->lock);
	mutex_init(&cq->resize_lock);
	refcount_set(&cq->refcnt, 1);
	init_completion(&cq->free);
	depth = rsim_ring_depth(attr->cqe);
	err = rsim_ring_alloc(dev, &cq->ring, depth, 1 << RSIM_CQE_LOG2_SLOT);
	if (err)
		return err;

	cq->vector = attr->comp_vector;
	p.eqn = dev->eqs[cq->vector].eqn;
	p.db_page = 0;
	rsim_ring_cmd(&cq->ring, &p.ring);
	err = rsim_cmd_create_cq(dev, &p, &cq->cqn);
	if (err)
		goto err_ring;
	if (udata) {
		err = rsim_ring_map_user(dev, &cq->ring, rsim_uctx(udata),
					 &resp.mi);
		if (err)
			goto err_destroy;
	}
	err = rsim_publish(dev, "CQ", &dev->cqs, cq->cqn, cq, udata, &resp,
			   sizeof(resp));
	if (err == -EBUSY) {
		err = -EIO;
		goto err_ring;
	}
	if (err)
		goto err_destroy;
	ibcq->cqe = depth - 1;
	return 0;

err_destroy:
	if (rsim_cmd_destroy_cq(dev, cq->cqn))
		rsim_destroy_refused(dev, "CQ", cq->cqn, -EIO);
err_ring:
	rsim_ring_free(dev, &cq->ring);
	return err;
}

static int rsim_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct rsim_dev *dev = to_rdev(ibcq->device);
	struct rsim_cq *cq = to_rcq(ibcq);
	int err;

	err = rsim_cmd_destroy_cq(dev, cq->cqn);
	if (err)
		rsim_destroy_refused(dev, "CQ", cq->cqn, err);
	xa_erase_irq(&dev->cqs, cq->cqn);
	rsim_cq_put(cq);
	wait_for_completion(&cq->free);
	rsim_ring_free(dev, &cq->ring);
	return 0;
}

int rsim_resize_cq(struct ib_cq *ibcq, u32 cqe, struct ib_udata *udata)
{
	struct rsim_dev *dev = to_rdev(ibcq->device);
	struct rsim_cq *cq = to_rcq(ibcq);
	struct rxe_resize_cq_resp resp = {};
	struct rsim_cmd_ring r;
	struct rsim_ring ring, old;
	unsigned long flags;
	u32 depth;
	int err;

	if (cqe < 1 || cqe > dev->caps.max_cqe)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	depth = rsim_ring_depth(cqe);

	mutex_lock(&cq->resize_lock);
	err = rsim_ring_alloc(dev, &ring, depth, 1 << RSIM_CQE_LOG2_SLOT);
	if (err)
		goto out;
	if (udata) {
		err = rsim_ring_map_user(dev, &ring, rsim_uctx(udata),
					 &resp.mi);
		if (err)
			goto err_ring;
	}
	/* Kernel CQ: the consumer index stays put while the device moves. */
	spin_lock_irqsave(&cq->lock, flags);
	cq->resizing = true;
	spin_unlock_irqrestore(&cq->lock, flags);

	rsim_ring_cmd(&ring, &r);
	rsim_ring_mark_new(&ring);
	err = rsim_cmd_resize_cq(dev, cq->cqn, &r);
	err = rsim_ring_move_result(dev, "RESIZE_CQ", cq->cqn, err, &ring);
	/* BUSY: the pending completions do not fit; verbs say EINVAL. */
	if (err == -EBUSY)
		err = -EINVAL;
	if (err) {
		spin_lock_irqsave(&cq->lock, flags);
		cq->resizing = false;
		spin_unlock_irqrestore(&cq->lock, flags);
		goto err_ring;
	}
	/* The device moved the pending completions to slot 0 onwards. */
	spin_lock_irqsave(&cq->lock, flags);
	old = cq->ring;
	cq->ring = ring;
	cq->cons = 0;
	cq->resizing = false;
	spin_unlock_irqrestore(&cq->lock, flags);
	rsim_ring_free(dev, &old);
	ibcq->cqe = depth - 1;
	if (udata)
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	else
		schedule_work(&dev->flush_work);
	mutex_unlock(&cq->resize_lock);
	return err;

err_ring:
	rsim_ring_free(dev, &ring);
out:
	mutex_unlock(&cq->resize_lock);
	return err;
}

/*
 * A user CQ polled through uverbs: the completions hold the process's own
 * wr_ids; only the QP must be one of the CQ's.
 */
static int rsim_ucq_poll(struct rsim_dev *dev, struct rsim_cq *cq, int num,
			 struct ib_wc *wc)
{
	u32 cons = rsim_ring_load_cons(&cq->ring);
	u32 prod = rsim_ring_load_prod(&cq->ring);
	struct rsim_cqe cqe;
	struct rsim_qp *qp;
	int n = 0;

	for (; n < num && cons != prod; cons = (cons + 1) & cq->ring.mask) {
		/* Read the entry once; a user CQ is writable by its process. */
		memcpy(&cqe, rsim_ring_elem(&cq->ring, cons), sizeof(cqe));
		qp = xa_load(&dev->qps, le32_to_cpu(cqe.qp_num));
		if (!qp || (qp->ibqp.send_cq != &cq->ibcq &&
			    qp->ibqp.recv_cq != &cq->ibcq)) {
			ibdev_warn_ratelimited(&dev->ibdev,
					       "CQ %u: completion for QP %u, not one of its QPs, dropped\n",
					       cq->cqn, le32_to_cpu(cqe.qp_num));
			continue;
		}
		memset(&wc[n], 0, sizeof(wc[n]));
		rsim_cqe_to_wc(&cqe, &wc[n]);
		wc[n].wr_id = le64_to_cpu(cqe.wr_id);
		wc[n].qp = &qp->ibqp;
		n++;
	}
	rsim_ring_store_cons(&cq->ring, cons);
	return n;
}

static int rsim_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	struct rsim_dev *dev = to_rdev(ibcq->device);
	struct rsim_cq *cq = to_rcq(ibcq);
	unsigned long flags;
	int n = 0;

	spin_lock_irqsave(&cq->lock, flags);
	if (!cq->resizing)
		n = cq->user ? rsim_ucq_poll(dev, cq, num, wc) :
		    rsim_kcq_poll(dev, cq, num, wc);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

static int rsim_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags f)
{
	struct rsim_dev *dev = to_rdev(ibcq->device);
	struct rsim_cq *cq = to_rcq(ibcq);
	unsigned long flags;
	u32 arm;
	int ret = 0;

	arm = (f & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ?
	      RSIM_CQ_ARM_SOLICITED : RSIM_CQ_ARM_NEXT;
	if (!rsim_dead(dev))
		writel(FIELD_PREP(R_RSIM_DB_CQ_CQN_MASK, cq->cqn) |
		       FIELD_PREP(R_RSIM_DB_CQ_ARM_MASK, arm),
		       dev->db + A_RSIM_DB_CQ);
	if (f & IB_CQ_REPORT_MISSED_EVENTS) {
		spin_lock_irqsave(&cq->lock, flags);
		ret = !cq->resizing && !rsim_cq_empty(cq);
		spin_unlock_irqrestore(&cq->lock, flags);
	}
	return ret;
}

/* ---- Queue pairs ------------------------------------------------------- */

void rsim_qp_event(struct rsim_dev *dev, u32 qpn, enum ib_event_type type)
{
	struct rsim_qp *qp = rsim_qp_get(dev, qpn);
	struct ib_event ev = {};

	if (!qp) {
		rsim_log(warn_ratelimited, dev,
			 "async event %d for no QP %u ignored\n", type, qpn);
		return;
	}
	if (type == IB_EVENT_QP_FATAL || type == IB_EVENT_QP_REQ_ERR ||
	    type == IB_EVENT_QP_ACCESS_ERR)
		WRITE_ONCE(qp->state, IB_QPS_ERR);
	if (qp->ibqp.event_handler) {
		ev.device = &dev->ibdev;
		ev.element.qp = &qp->ibqp;
		ev.event = type;
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	}
	rsim_qp_put(qp);
}

void rsim_flush_kernel_qps(struct rsim_dev *dev)
{
	struct rsim_qp *qp;

	mutex_lock(&dev->kqp_lock);
	list_for_each_entry(qp, &dev->kernel_qps, kqp_link)
		rsim_qp_sw_flush(dev, qp);
	mutex_unlock(&dev->kqp_lock);
	schedule_work(&dev->flush_work);
}

static int rsim_qp_type(enum ib_qp_type type, u8 *hw)
{
	switch (type) {
	case IB_QPT_RC:
		*hw = RSIM_QPT_RC;
		return 0;
	case IB_QPT_UC:
		*hw = RSIM_QPT_UC;
		return 0;
	case IB_QPT_UD:
		*hw = RSIM_QPT_UD;
		return 0;
	case IB_QPT_GSI:
		*hw = RSIM_QPT_GSI;
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

static int rsim_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
			  struct ib_udata *udata)
{
	struct rsim_dev *dev = to_rdev(ibqp->device);
	const struct rsim_caps *c = &dev->caps;
	struct rsim_qp *qp = to_rqp(ibqp);
	struct rsim_create_qp_params p = {};
	struct rxe_create_qp_resp resp = {};
	struct ib_ucontext *uctx = NULL;
	u32 payload, sq_depth, rq_depth = 0;
	int err;

	err = rsim_qp_type(init->qp_type, &p.qp_type);
	if (err)
		return err;
	if (init->create_flags)
		return -EOPNOTSUPP;
	if (init->srq && !(c->features & R_RSIM_FEATURES_SRQ_MASK))
		return -EOPNOTSUPP;
	if (init->cap.max_send_wr > c->max_qp_wr ||
	    init->cap.max_send_sge > c->max_send_sge ||
	    init->cap.max_inline_data > c->max_inline ||
	    (!init->srq && (init->cap.max_recv_wr > c->max_qp_wr ||
			    init->cap.max_recv_sge > c->max_recv_sge)))
		return -EINVAL;
	if (udata) {
		if (udata->outlen < sizeof(resp))
			return -EINVAL;
		uctx = rsim_uctx(udata);
	}

	qp->user = !!udata;
	qp->has_rq = !init->srq;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->state = IB_QPS_RESET;
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	INIT_LIST_HEAD(&qp->kqp_link);
	refcount_set(&qp->refcnt, 1);
	init_completion(&qp->free);

	/* As Soft-RoCE: SGE and inline room share the WQE's tail. */
	payload = max_t(u32, init->cap.max_send_sge * sizeof(struct rsim_sge),
			init->cap.max_inline_data);
	qp->max_send_sge = min_t(u32, payload / sizeof(struct rsim_sge),
				 c->max_send_sge);
	qp->max_inline = min_t(u32, payload, c->max_inline);
	sq_depth = rsim_ring_depth(init->cap.max_send_wr);
	err = rsim_ring_alloc(dev, &qp->sq, sq_depth,
			      rsim_sq_elem_size(qp->max_send_sge,
						qp->max_inline));
	if (err)
		return err;
	qp->max_send_wr = sq_depth - 1;
	if (qp->has_rq) {
		qp->max_recv_sge = init->cap.max_recv_sge;
		rq_depth = rsim_ring_depth(init->cap.max_recv_wr);
		err = rsim_ring_alloc(dev, &qp->rq, rq_depth,
				      rsim_rq_elem_size(qp->max_recv_sge));
		if (err)
			goto err_sq;
		qp->max_recv_wr = rq_depth - 1;
	}

	p.sq_sig_all = qp->sig_all;
	p.max_send_sge = qp->max_send_sge;
	p.max_recv_sge = qp->max_recv_sge;
	p.max_inline = qp->max_inline;
	p.db_page = 0;
	p.pdn = to_rpd(ibqp->pd)->pdn;
	p.send_cqn = to_rcq(init->send_cq)->cqn;
	p.recv_cqn = to_rcq(init->recv_cq)->cqn;
	p.srqn = init->srq ? to_rsrq(init->srq)->srqn : RSIM_NO_SRQ;
	rsim_ring_cmd(&qp->sq, &p.sq);
	if (qp->has_rq)
		rsim_ring_cmd(&qp->rq, &p.rq);
	err = rsim_cmd_create_qp(dev, &p, &qp->qpn);
	if (err)
		goto err_rq;
	ibqp->qp_num = qp->qpn;

	if (!udata) {
		err = rsim_kwq_init(&qp->skwq, RSIM_KWQ_SQ, qp->qpn, sq_depth);
		if (!err && qp->has_rq)
			err = rsim_kwq_init(&qp->rkwq, RSIM_KWQ_RQ, qp->qpn,
					    rq_depth);
		if (err)
			goto err_destroy;
	} else {
		err = rsim_ring_map_user(dev, &qp->sq, uctx, &resp.sq_mi);
		if (!err && qp->has_rq)
			err = rsim_ring_map_user(dev, &qp->rq, uctx,
						 &resp.rq_mi);
		if (err)
			goto err_destroy;
	}
	err = rsim_publish(dev, "QP", &dev->qps, qp->qpn, qp, udata, &resp,
			   sizeof(resp));
	if (err == -EBUSY) {
		err = -EIO;
		goto err_kwq;
	}
	if (err)
		goto err_destroy;
	if (!udata) {
		mutex_lock(&dev->kqp_lock);
		list_add_tail(&qp->kqp_link, &dev->kernel_qps);
		mutex_unlock(&dev->kqp_lock);
	}

	init->cap.max_send_wr = qp->max_send_wr;
	init->cap.max_send_sge = qp->max_send_sge;
	init->cap.max_inline_data = qp->max_inline;
	init->cap.max_recv_wr = qp->max_recv_wr;
	init->cap.max_recv_sge = qp->max_recv_sge;
	return 0;

err_destroy:
	if (rsim_cmd_destroy_qp(dev, qp->qpn))
		rsim_destroy_refused(dev, "QP", qp->qpn, -EIO);
err_kwq:
	rsim_kwq_free(&qp->rkwq);
	rsim_kwq_free(&qp->skwq);
err_rq:
	rsim_ring_free(dev, &qp->rq);
err_sq:
	rsim_ring_free(dev, &qp->sq);
	return err;
}

static int rsim_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct rsim_dev *dev = to_rdev(ibqp->device);
	struct rsim_qp *qp = to_rqp(ibqp);
	int err;

	err = rsim_cmd_destroy_qp(dev, qp->qpn);
	if (err)
		rsim_destroy_refused(dev, "QP", qp->qpn, err);
	if (!qp->user) {
		mutex_lock(&dev->kqp_lock);
		list_del_init(&qp->kqp_link);
		mutex_unlock(&dev->kqp_lock);
	}
	xa_erase_irq(&dev->qps, qp->qpn);
	rsim_qp_put(qp);
	wait_for_completion(&qp->free);
	rsim_kwq_free(&qp->rkwq);
	rsim_kwq_free(&qp->skwq);
	rsim_ring_free(dev, &qp->rq);
	rsim_ring_free(dev, &qp->sq);
	return 0;
}

static int rsim_network_type(const struct ib_global_route *grh, u8 *type)
{
	enum rdma_network_type nt;

	if (grh->sgid_attr)
		nt = rdma_gid_attr_network_type(grh->sgid_attr);
	else
		nt = ipv6_addr_v4mapped((const struct in6_addr *)grh->dgid.raw) ?
		     RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6;
	switch (nt) {
	case RDMA_NETWORK_IPV4:
		*type = RSIM_NET_IPV4;
		return 0;
	case RDMA_NETWORK_IPV6:
		*type = RSIM_NET_IPV6;
		return 0;
	default:
		return -EINVAL;		/* RoCEv1 or IB: not this device */
	}
}

static int rsim_ah_attr_to_av(const struct rdma_ah_attr *ah,
			      struct rsim_av *av)
{
	const struct ib_global_route *grh;

	if (ah->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(ah) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(ah);
	memset(av, 0, sizeof(*av));
	memcpy(av->dgid, grh->dgid.raw, sizeof(av->dgid));
	memcpy(av->dmac, ah->roce.dmac, ETH_ALEN);
	av->sgid_index = grh->sgid_index;
	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	av->sl = rdma_ah_get_sl(ah);
	/*
	 * The verbs carry 32 bits and the GRH has 20: hardware keeps the low
	 * 20, and users rely on it (UCX sets ~0 on RoCE).  The device refuses
	 * a wider value.
	 */
	av->flow_label = cpu_to_le32(grh->flow_label & IB_GRH_FLOWLABEL_MASK);
	return rsim_network_type(grh, &av->network_type);
}

static void rsim_av_to_ah_attr(struct rsim_dev *dev, const struct rsim_av *av,
			       struct rdma_ah_attr *ah)
{
	union ib_gid dgid;

	memset(ah, 0, sizeof(*ah));
	ah->type = rdma_ah_find_type(&dev->ibdev, 1);
	rdma_ah_set_port_num(ah, 1);
	rdma_ah_set_sl(ah, av->sl);
	memcpy(dgid.raw, av->dgid, sizeof(dgid.raw));
	rdma_ah_set_grh(ah, &dgid,
			le32_to_cpu(av->flow_label), av->sgid_index,
			av->hop_limit, av->traffic_class);
	memcpy(ah->roce.dmac, av->dmac, ETH_ALEN);
}

static bool rsim_sq_state_ok(u8 state)
{
	return state == IB_QPS_RTS || state == IB_QPS_SQD ||
	       state == IB_QPS_SQE || state == IB_QPS_ERR;
}

/* Dead device: let kernel users tear down, ERR and RESET still work. */
static int rsim_modify_qp_dead(struct rsim_dev *dev, struct rsim_qp *qp,
			       struct ib_qp_attr *attr, int mask)
{
	if (!(mask & IB_QP_STATE) || (attr->qp_state != IB_QPS_ERR &&
				      attr->qp_state != IB_QPS_RESET))
		return -EIO;
	WRITE_ONCE(qp->state, attr->qp_state);
	if (attr->qp_state == IB_QPS_ERR) {
		rsim_qp_sw_flush(dev, qp);
		schedule_work(&dev->flush_work);
	}
	return 0;
}

/*
 * Moving a QP to RESET, or to ERR from any state but RESET, without other
 * attributes, is always legal and doing it twice changes nothing: when it
 * fails the device damaged its completion (or died).  Tries this often;
 * the core cannot cope with such a failure (ib_drain_qp WARNs and leaves
 * the QP undrained).
 */
#define RSIM_MODIFY_TRIES	3

static bool rsim_modify_qp_repeatable(struct rsim_qp *qp,
				      const struct ib_qp_attr *attr, int mask)
{
	return mask == IB_QP_STATE &&
	       (attr->qp_state == IB_QPS_RESET ||
		(attr->qp_state == IB_QPS_ERR &&
		 READ_ONCE(qp->state) != IB_QPS_RESET));
}

static int rsim_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			  int mask, struct ib_udata *udata)
{
	struct rsim_dev *dev = to_rdev(ibqp->device);
	struct rsim_qp *qp = to_rqp(ibqp);
	struct rsim_qp_attr *a;
	unsigned int tries;
	dma_addr_t dma;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;

	if (rsim_dead(dev))
		return rsim_modify_qp_dead(dev, qp, attr, mask);

	a = dma_pool_zalloc(dev->attr_pool, GFP_KERNEL, &dma);
	if (!a)
		return -ENOMEM;
	a->attr_mask = cpu_to_le32(mask);
	if (mask & IB_QP_STATE)
		a->qp_state = attr->qp_state;
	if (mask & IB_QP_CUR_STATE)
		a->cur_qp_state = attr->cur_qp_state;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		a->en_sqd_async_notify = attr->en_sqd_async_notify;
	if (mask & IB_QP_ACCESS_FLAGS)
		a->qp_access_flags = cpu_to_le32(attr->qp_access_flags);
	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = cpu_to_le16(attr->pkey_index);
	if (mask & IB_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		a->qkey = cpu_to_le32(attr->qkey);
	if (mask & IB_QP_AV) {
		err = rsim_ah_attr_to_av(&attr->ah_attr, &a->av);
		if (err)
			goto out;
	}
	if (mask & IB_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = cpu_to_le32(attr->rq_psn);
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = cpu_to_le32(attr->sq_psn);
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_PATH_MIG_STATE)
		a->path_mig_state = attr->path_mig_state;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = cpu_to_le32(attr->dest_qp_num);

	for (tries = 1; ; tries++) {
		err = rsim_cmd_modify_qp(dev, qp->qpn, dma);
		if (!err || rsim_dead(dev) || tries == RSIM_MODIFY_TRIES ||
		    !rsim_modify_qp_repeatable(qp, attr, mask))
			break;
		rsim_log(warn_ratelimited, dev,
			 "QP %u: MODIFY_QP to %s failed (%d), which cannot fail: trying again\n",
			 qp->qpn, attr->qp_state == IB_QPS_ERR ? "ERR" : "RESET",
			 err);
	}
	if (err && rsim_dead(dev) && rsim_modify_qp_repeatable(qp, attr, mask))
		err = rsim_modify_qp_dead(dev, qp, attr, mask);
	if (err)
		goto out;
	if (mask & IB_QP_STATE) {
		/* The device emptied both rings. */
		if (attr->qp_state == IB_QPS_RESET)
			rsim_qp_kwq_reset(qp);
		WRITE_ONCE(qp->state, attr->qp_state);
	}
out:
	dma_pool_free(dev->attr_pool, a, dma);
	return err;
}

static int rsim_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			 int mask, struct ib_qp_init_attr *init)
{
	struct rsim_dev *dev = to_rdev(ibqp->device);
	struct rsim_qp *qp = to_rqp(ibqp);
	struct rsim_qp_attr *a;
	dma_addr_t dma;
	int err;

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	a = dma_pool_zalloc(dev->attr_pool, GFP_KERNEL, &dma);
	if (!a)
		return -ENOMEM;
	err = rsim_cmd_query_qp(dev, qp->qpn, dma);
	if (err && !rsim_dead(dev))
		goto out;
	if (err) {
		/* Dead device: what the driver knows. */
		attr->qp_state = READ_ONCE(qp->state);
		attr->cur_qp_state = attr->qp_state;
		err = 0;
	} else {
		attr->qp_state = a->qp_state;
		attr->cur_qp_state = a->cur_qp_state;
		attr->path_mtu = a->path_mtu;
		attr->path_mig_state = a->path_mig_state;
		attr->qkey = le32_to_cpu(a->qkey);
		attr->rq_psn = le32_to_cpu(a->rq_psn);
		attr->sq_psn = le32_to_cpu(a->sq_psn);
		attr->dest_qp_num = le32_to_cpu(a->dest_qp_num);
		attr->qp_access_flags = le32_to_cpu(a->qp_access_flags);
		attr->pkey_index = le16_to_cpu(a->pkey_index);
		attr->port_num = a->port_num;
		attr->sq_draining = a->sq_draining;
		attr->max_rd_atomic = a->max_rd_atomic;
		attr->max_dest_rd_atomic = a->max_dest_rd_atomic;
		attr->min_rnr_timer = a->min_rnr_timer;
		attr->timeout = a->timeout;
		attr->retry_cnt = a->retry_cnt;
		attr->rnr_retry = a->rnr_retry;
		attr->en_sqd_async_notify = a->en_sqd_async_notify;
		if (ibqp->qp_type == IB_QPT_RC || ibqp->qp_type == IB_QPT_UC)
			rsim_av_to_ah_attr(dev, &a->av, &attr->ah_attr);
		WRITE_ONCE(qp->state, a->qp_state);
	}
	attr->cap.max_send_wr = qp->max_send_wr;
	attr->cap.max_recv_wr = qp->max_recv_wr;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_recv_sge = qp->max_recv_sge;
	attr->cap.max_inline_data = qp->max_inline;

	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->event_handler = ibqp->event_handler;
	init->qp_context = ibqp->qp_context;
out:
	dma_pool_free(dev->attr_pool, a, dma);
	return err;
}

static void rsim_wqe_sges(struct rsim_sge *dst, const struct ib_sge *src,
			  int num, u32 *length)
{
	u32 total = 0;
	int i;

	for (i = 0; i < num; i++) {
		dst[i].addr = cpu_to_le64(src[i].addr);
		dst[i].length = cpu_to_le32(src[i].length);
		dst[i].lkey = cpu_to_le32(src[i].lkey);
		total += src[i].length;
	}
	*length = total;
}

/* Build a kernel send WQE in its ring slot. */
static int rsim_build_send_wqe(struct rsim_qp *qp, const struct ib_send_wr *wr,
			       struct rsim_send_wqe *wqe)
{
	enum ib_qp_type type = qp->ibqp.qp_type;
	bool ud = type == IB_QPT_UD || type == IB_QPT_GSI;
	u32 flags = wr->send_flags & (IB_SEND_FENCE | IB_SEND_SIGNALED |
				      IB_SEND_SOLICITED | IB_SEND_INLINE);
	bool data = true;
	u32 length = 0;
	int i;

	memset(wqe, 0, sizeof(*wqe));
	switch (wr->opcode) {
	case IB_WR_SEND_WITH_INV:
		if (type != IB_QPT_RC)
			return -EINVAL;
		wqe->ex = cpu_to_le32(wr->ex.invalidate_rkey);
		break;
	case IB_WR_SEND_WITH_IMM:
		wqe->ex = (__force __le32)wr->ex.imm_data;
		fallthrough;
	case IB_WR_SEND:
		if (ud) {
			const struct ib_ud_wr *u = ud_wr(wr);

			wqe->wr.ud.remote_qpn = cpu_to_le32(u->remote_qpn);
			wqe->wr.ud.remote_qkey = cpu_to_le32(u->remote_qkey);
			wqe->wr.ud.pkey_index = cpu_to_le16(u->pkey_index);
			wqe->wr.ud.ah_num = cpu_to_le32(to_rah(u->ah)->ahn);
		}
		break;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		wqe->ex = (__force __le32)wr->ex.imm_data;
		fallthrough;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_READ:
		if (ud || (type == IB_QPT_UC && wr->opcode == IB_WR_RDMA_READ))
			return -EINVAL;
		wqe->wr.rdma.remote_addr = cpu_to_le64(rdma_wr(wr)->remote_addr);
		wqe->wr.rdma.rkey = cpu_to_le32(rdma_wr(wr)->rkey);
		if (wr->opcode == IB_WR_RDMA_READ)
			flags &= ~IB_SEND_INLINE;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		if (type != IB_QPT_RC)
			return -EINVAL;
		wqe->wr.atomic.remote_addr =
			cpu_to_le64(atomic_wr(wr)->remote_addr);
		wqe->wr.atomic.compare_add =
			cpu_to_le64(atomic_wr(wr)->compare_add);
		wqe->wr.atomic.swap = cpu_to_le64(atomic_wr(wr)->swap);
		wqe->wr.atomic.rkey = cpu_to_le32(atomic_wr(wr)->rkey);
		flags &= ~IB_SEND_INLINE;
		break;
	case IB_WR_LOCAL_INV:
		wqe->ex = cpu_to_le32(wr->ex.invalidate_rkey);
		data = false;
		break;
	case IB_WR_REG_MR: {
		const struct ib_reg_wr *r = reg_wr(wr);
		struct rsim_mr *mr = to_rmr(r->mr);

		if (!mr->fast_reg)
			return -EINVAL;
		wqe->wr.reg.iova = cpu_to_le64(mr->ibmr.iova);
		wqe->wr.reg.length = cpu_to_le64(mr->ibmr.length);
		wqe->wr.reg.key = cpu_to_le32(r->key);
		wqe->wr.reg.access = cpu_to_le32(rsim_access_to_hw(r->access));
		wqe->wr.reg.npages = cpu_to_le32(mr->fr_npages);
		wqe->wr.reg.page_shift = ilog2(mr->ibmr.page_size);
		wqe->wr.reg.fbo = cpu_to_le32(mr->fr_fbo);
		data = false;
		break;
	}
	default:
		return -EINVAL;
	}

	wqe->opcode = cpu_to_le32(wr->opcode);
	if (!data) {
		flags &= ~IB_SEND_INLINE;
	} else if (flags & IB_SEND_INLINE) {
		u8 *p = (u8 *)wqe->sge;

		/* Kernel inline data: the SGEs hold kernel virtual addresses. */
		for (i = 0; i < wr->num_sge; i++)
			length += wr->sg_list[i].length;
		if (length > qp->max_inline)
			return -EINVAL;
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(p, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			p += wr->sg_list[i].length;
		}
		wqe->dma.num_sge = cpu_to_le32(wr->num_sge);
	} else {
		if (wr->num_sge < 0 || wr->num_sge > qp->max_send_sge)
			return -EINVAL;
		rsim_wqe_sges(wqe->sge, wr->sg_list, wr->num_sge, &length);
		wqe->dma.num_sge = cpu_to_le32(wr->num_sge);
	}
	wqe->send_flags = cpu_to_le32(flags);
	wqe->dma.length = cpu_to_le32(length);
	wqe->dma.resid = cpu_to_le32(length);
	return 0;
}

static int rsim_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			  const struct ib_send_wr **bad_wr)
{
	struct rsim_dev *dev = to_rdev(ibqp->device);
	struct rsim_qp *qp = to_rqp(ibqp);
	unsigned long flags;
	u32 n = 0;
	int err = 0;

	if (qp->user) {
		/* The rxe provider wrote the WQEs: this is its doorbell. */
		if (wr) {
			*bad_wr = wr;
			return -EINVAL;
		}
		if (!rsim_sq_state_ok(READ_ONCE(qp->state)))
			return -EINVAL;
		if (rsim_dead(dev))
			return -EIO;
		writel(qp->qpn, dev->db + A_RSIM_DB_SQ);
		return 0;
	}

	spin_lock_irqsave(&qp->sq_lock, flags);
	if (!rsim_sq_state_ok(READ_ONCE(qp->state))) {
		err = -EINVAL;
		goto out;
	}
	for (; wr; wr = wr->next) {
		struct rsim_send_wqe *wqe = rsim_ring_elem(&qp->sq, qp->sq_prod);

		if (rsim_kwq_full(&qp->skwq, qp->sq_prod)) {
			err = -ENOMEM;
			break;
		}
		err = rsim_build_send_wqe(qp, wr, wqe);
		if (err)
			break;
		wqe->wr_id = cpu_to_le64(rsim_kwq_post(&qp->skwq, qp->sq_prod,
						       wr->wr_id,
						       rsim_wc_opcode(wr->opcode),
						       le32_to_cpu(wqe->dma.length),
						       qp->sig_all ||
						       (wr->send_flags & IB_SEND_SIGNALED)));
		WRITE_ONCE(qp->sq_prod, (qp->sq_prod + 1) & qp->sq.mask);
		n++;
	}
	if (n) {
		rsim_ring_store_prod(&qp->sq, qp->sq_prod);
		if (!rsim_dead(dev))
			writel(qp->qpn, dev->db + A_RSIM_DB_SQ);
	}
out:
	if (err)
		*bad_wr = wr;
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (n && rsim_dead(dev)) {
		rsim_qp_sw_flush(dev, qp);
		schedule_work(&dev->flush_work);
	}
	return err;
}

/*
 * Write receive WQEs into a ring; returns how many (*err on failure).  An
 * RQ's record is its ring slot; an SRQ's ring has room when the device
 * has read its WQEs, and a receive takes any free record.
 */
static u32 rsim_post_recv_ring(struct rsim_ring *ring, struct rsim_kwq *q,
			       u32 *prod, u32 max_sge,
			       const struct ib_recv_wr *wr,
			       const struct ib_recv_wr **bad_wr, int *err)
{
	bool srq = q->kind == RSIM_KWQ_SRQ;
	struct rsim_recv_wqe *wqe;
	u32 n = 0, length;
	int slot;

	*err = 0;
	for (; wr; wr = wr->next) {
		if (srq ? ((*prod + 1) & ring->mask) == rsim_ring_load_cons(ring) :
		    rsim_kwq_full(q, *prod)) {
			*err = -ENOMEM;
			break;
		}
		if (wr->num_sge < 0 || wr->num_sge > max_sge) {
			*err = -EINVAL;
			break;
		}
		if (srq) {
			slot = rsim_kwq_srq_slot(q);
			if (slot < 0) {
				*err = -ENOMEM;
				break;
			}
		} else {
			slot = *prod;
		}
		wqe = rsim_ring_elem(ring, *prod);
		memset(wqe, 0, sizeof(*wqe));
		rsim_wqe_sges(wqe->sge, wr->sg_list, wr->num_sge, &length);
		wqe->wr_id = cpu_to_le64(rsim_kwq_post(q, slot, wr->wr_id,
						       IB_WC_RECV, length,
						       true));
		wqe->dma.length = cpu_to_le32(length);
		wqe->dma.resid = cpu_to_le32(length);
		wqe->dma.num_sge = cpu_to_le32(wr->num_sge);
		WRITE_ONCE(*prod, (*prod + 1) & ring->mask);
		n++;
	}
	if (*err)
		*bad_wr = wr;
	if (n)
		rsim_ring_store_prod(ring, *prod);
	return n;
}

static int rsim_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr)
{
	struct rsim_dev *dev = to_rdev(ibqp->device);
	struct rsim_qp *qp = to_rqp(ibqp);
	unsigned long flags;
	int err;
	u32 n;

	if (qp->user) {
		/* The rxe provider posts receives without a system call. */
		if (wr) {
			*bad_wr = wr;
			return -EINVAL;
		}
		if (!rsim_dead(dev) && qp->has_rq)
			writel(qp->qpn, dev->db + A_RSIM_DB_RQ);
		return 0;
	}
	if (!qp->has_rq || READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->rq_lock, flags);
	n = rsim_post_recv_ring(&qp->rq, &qp->rkwq, &qp->rq_prod,
				qp->max_recv_sge, wr, bad_wr, &err);
	/* A hint only: the device reads the producer index when it needs. */
	if (n && !rsim_dead(dev))
		writel(qp->qpn, dev->db + A_RSIM_DB_RQ);
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	if (n && rsim_dead(dev) && READ_ONCE(qp->state) == IB_QPS_ERR) {
		rsim_qp_sw_flush(dev, qp);
		schedule_work(&dev->flush_work);
	}
	return err;
}

/* ---- Shared receive queues --------------------------------------------- */

void rsim_srq_event(struct rsim_dev *dev, u32 srqn, enum ib_event_type type)
{
	struct rsim_srq *srq = rsim_srq_get(dev, srqn);
	struct ib_event ev = {};

	if (!srq) {
		rsim_log(warn_ratelimited, dev,
			 "async event %d for no SRQ %u ignored\n", type, srqn);
		return;
	}
	if (srq->ibsrq.event_handler) {
		ev.device = &dev->ibdev;
		ev.element.srq = &srq->ibsrq;
		ev.event = type;
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
	}
	rsim_srq_put(srq);
}

static int rsim_create_srq(struct ib_srq *ibsrq,
			   struct ib_srq_init_attr *init,
			   struct ib_udata *udata)
{
	struct rsim_dev *dev = to_rdev(ibsrq->device);
	const struct rsim_caps *c = &dev->caps;
	struct rsim_srq *srq = to_rsrq(ibsrq);
	struct ib_srq_attr *attr = &init->attr;
	struct rsim_create_srq_params p = {};
	struct rxe_create_srq_resp resp = {};
	u32 depth;
	int err;

	if (!(c->features & R_RSIM_FEATURES_SRQ_MASK) ||
	    init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (attr->max_wr > c->max_srq_wr || attr->max_sge > c->max_srq_sge)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	srq->user = !!udata;
	srq->max_sge = max_t(u32, attr->max_sge, 1);
	spin_lock_init(&srq->lock);
	refcount_set(&srq->refcnt, 1);
	init_completion(&srq->free);
	depth = rsim_ring_depth(attr->max_wr);
	if (attr->srq_limit >= depth)
		return -EINVAL;
	err = rsim_ring_alloc(dev, &srq->ring, depth,
			      rsim_rq_elem_size(srq->max_sge));
	if (err)
		return err;
	p.pdn = to_rpd(ibsrq->pd)->pdn;
	p.limit = attr->srq_limit;
	p.max_sge = srq->max_sge;
	p.db_page = 0;
	rsim_ring_cmd(&srq->ring, &p.ring);
	err = rsim_cmd_create_srq(dev, &p, &srq->srqn);
	if (err)
		goto err_ring;
	if (!udata) {
		err = rsim_kwq_init(&srq->kwq, RSIM_KWQ_SRQ, srq->srqn, depth);
		if (err)
			goto err_destroy;
	} else {
		err = rsim_ring_map_user(dev, &srq->ring, rsim_uctx(udata),
					 &resp.mi);
		if (err)
			goto err_destroy;
		resp.srq_num = srq->srqn;
	}
	err = rsim_publish(dev, "SRQ", &dev->srqs, srq->srqn, srq, udata,
			   &resp, sizeof(resp));
	if (err == -EBUSY) {
		err = -EIO;
		goto err_kwq;
	}
	if (err)
		goto err_destroy;
	srq->max_wr = depth - 1;
	srq->limit = attr->srq_limit;
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	return 0;

err_destroy:
	if (rsim_cmd_destroy_srq(dev, srq->srqn))
		rsim_destroy_refused(dev, "SRQ", srq->srqn, -EIO);
err_kwq:
	rsim_kwq_free(&srq->kwq);
err_ring:
	rsim_ring_free(dev, &srq->ring);
	return err;
}

static int rsim_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			   enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct rsim_dev *dev = to_rdev(ibsrq->device);
	struct rsim_srq *srq = to_rsrq(ibsrq);
	struct rxe_modify_srq_cmd ucmd = {};
	struct rsim_ring ring = {}, old;
	struct rsim_cmd_ring r = {};
	struct mminfo mi = {};
	u32 hw_mask = 0, limit = 0, depth = 0;
	unsigned long flags;
	int err;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (mask & IB_SRQ_LIMIT) {
		hw_mask |= RSIM_SRQ_LIMIT;
		limit = attr->srq_limit;
	}
	if (mask & IB_SRQ_MAX_WR) {
		if (attr->max_wr > dev->caps.max_srq_wr)
			return -EINVAL;
		if (udata) {
			if (udata->inlen < sizeof(ucmd))
				return -EINVAL;
			err = ib_copy_from_udata(&ucmd, udata, sizeof(ucmd));
			if (err)
				return err;
		} else {
			/* Kernel SRQ: posts must not race with the move. */
			return -EOPNOTSUPP;
		}
		depth = rsim_ring_depth(attr->max_wr);
		err = rsim_ring_alloc(dev, &ring, depth,
				      rsim_rq_elem_size(srq->max_sge));
		if (err)
			return err;
		err = rsim_ring_map_user(dev, &ring, rsim_uctx(udata), &mi);
		if (err)
			goto err_ring;
		rsim_ring_cmd(&ring, &r);
		hw_mask |= RSIM_SRQ_MAX_WR;
	}
	if (mask & IB_SRQ_MAX_WR)
		rsim_ring_mark_new(&ring);
	err = rsim_cmd_modify_srq(dev, srq->srqn, hw_mask, limit, &r);
	if (mask & IB_SRQ_MAX_WR)
		err = rsim_ring_move_result(dev, "MODIFY_SRQ", srq->srqn, err,
					    &ring);
	/* BUSY: the posted receives do not fit the new ring (EINVAL). */
	if (err == -EBUSY)
		err = -EINVAL;
	if (err)
		goto err_ring;
	if (mask & IB_SRQ_LIMIT)
		srq->limit = limit;
	if (!(mask & IB_SRQ_MAX_WR))
		return 0;

	spin_lock_irqsave(&srq->lock, flags);
	old = srq->ring;
	srq->ring = ring;
	srq->prod = rsim_ring_load_prod(&srq->ring);
	srq->max_wr = depth - 1;
	spin_unlock_irqrestore(&srq->lock, flags);
	rsim_ring_free(dev, &old);
	attr->max_wr = srq->max_wr;
	if (copy_to_user(u64_to_user_ptr(ucmd.mmap_info_addr), &mi,
			 sizeof(mi)))
		return -EFAULT;
	return 0;

err_ring:
	rsim_ring_free(dev, &ring);
	return err;
}

static int rsim_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct rsim_dev *dev = to_rdev(ibsrq->device);
	struct rsim_srq *srq = to_rsrq(ibsrq);
	struct rsim_query_srq_result res;
	int err;

	err = rsim_cmd_query_srq(dev, srq->srqn, &res);
	if (err) {
		if (!rsim_dead(dev))
			return err;
		res.max_wr = srq->max_wr;
		res.max_sge = srq->max_sge;
		res.limit = srq->limit;
	}
	attr->max_wr = res.max_wr;
	attr->max_sge = res.max_sge;
	attr->srq_limit = res.limit;
	return 0;
}

static int rsim_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct rsim_dev *dev = to_rdev(ibsrq->device);
	struct rsim_srq *srq = to_rsrq(ibsrq);
	int err;

	err = rsim_cmd_destroy_srq(dev, srq->srqn);
	if (err)
		rsim_destroy_refused(dev, "SRQ", srq->srqn, err);
	xa_erase_irq(&dev->srqs, srq->srqn);
	rsim_srq_put(srq);
	wait_for_completion(&srq->free);
	rsim_kwq_free(&srq->kwq);
	rsim_ring_free(dev, &srq->ring);
	return 0;
}

static int rsim_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			      const struct ib_recv_wr **bad_wr)
{
	struct rsim_dev *dev = to_rdev(ibsrq->device);
	struct rsim_srq *srq = to_rsrq(ibsrq);
	unsigned long flags;
	int err;
	u32 n;

	if (srq->user) {
		if (wr) {
			*bad_wr = wr;
			return -EINVAL;
		}
		if (!rsim_dead(dev))
			writel(srq->srqn, dev->db + A_RSIM_DB_SRQ);
		return 0;
	}
	spin_lock_irqsave(&srq->lock, flags);
	n = rsim_post_recv_ring(&srq->ring, &srq->kwq, &srq->prod,
				srq->max_sge, wr, bad_wr, &err);
	if (n && !rsim_dead(dev))
		writel(srq->srqn, dev->db + A_RSIM_DB_SRQ);
	spin_unlock_irqrestore(&srq->lock, flags);
	return err;
}

/* ---- Address handles --------------------------------------------------- */

static int rsim_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
			  struct ib_udata *udata)
{
	struct rsim_dev *dev = to_rdev(ibah->device);
	struct rsim_ah *ah = to_rah(ibah);
	struct rxe_create_ah_resp resp = {};
	struct rsim_av av;
	int err;

	err = rsim_ah_attr_to_av(init->ah_attr, &av);
	if (err)
		return err;
	err = rsim_cmd_create_ah(dev, to_rpd(ibah->pd)->pdn, &av,
				 !(init->flags & RDMA_CREATE_AH_SLEEPABLE),
				 &ah->ahn);
	if (err)
		return err;
	/* Providers older than the ah_num response pass no buffer for it. */
	if (udata && udata->outlen >= sizeof(resp)) {
		resp.ah_num = ah->ahn;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err) {
			rsim_cmd_destroy_ah(dev, ah->ahn, false);
			return err;
		}
	}
	return 0;
}

static int rsim_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct rsim_dev *dev = to_rdev(ibah->device);
	int err;

	err = rsim_cmd_destroy_ah(dev, to_rah(ibah)->ahn,
				  !(flags & RDMA_DESTROY_AH_SLEEPABLE));
	if (err && !rsim_dead(dev))
		ibdev_err(&dev->ibdev, "DESTROY_AH %u failed: %d\n",
			  to_rah(ibah)->ahn, err);
	return 0;
}

/* ---- Statistics (QUERY_STATS, in RSIM_STATS_LIST order) ---------------- */

/* In enum rsim_stat order: both come from RSIM_STATS_LIST. */
#define RSIM_STAT_DESC(n, s) { .name = s }
static const struct rdma_stat_desc rsim_stat_descs[] =
	RSIM_STATS_LIST(RSIM_STAT_DESC);
#undef RSIM_STAT_DESC

static_assert(ARRAY_SIZE(rsim_stat_descs) == RSIM_STAT_COUNT);

static struct rdma_hw_stats *rsim_alloc_hw_port_stats(struct ib_device *ibdev,
						      u32 port)
{
	return rdma_alloc_hw_stats_struct(rsim_stat_descs,
					  ARRAY_SIZE(rsim_stat_descs),
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static int rsim_get_hw_stats(struct ib_device *ibdev,
			     struct rdma_hw_stats *stats, u32 port, int index)
{
	struct rsim_dev *dev = to_rdev(ibdev);
	__le64 *v = dev->stats_buf.va;
	u32 count, i;
	int err;

	mutex_lock(&dev->stats_lock);
	err = rsim_cmd_query_stats(dev, dev->stats_buf.dma,
				   RSIM_STAT_COUNT * sizeof(u64), &count);
	if (!err) {
		/*
		 * An older device has fewer counters: the others read 0.
		 * The core wants every counter it was told about.
		 */
		count = min_t(u32, count, stats->num_counters);
		for (i = 0; i < stats->num_counters; i++)
			stats->value[i] = i < count ? le64_to_cpu(v[i]) : 0;
	}
	mutex_unlock(&dev->stats_lock);
	return err ? err : stats->num_counters;
}

/* ---- Registration ------------------------------------------------------ */

/*
 * The port's net_device, for the core's RoCE GID table, netlink and
 * rdma_cm.  Through this op, not ib_device_set_netdev(): that also files
 * the device in the core's netdev hash, where rdma_rxe finds its own
 * devices by driver id (ib_device_get_by_netdev(ndev, RDMA_DRIVER_RXE)).
 * rsim0 has rxe's driver id, so that rdma-core's librxe drives it: found
 * there, it would be taken for a struct rxe_dev by rxe's netdev notifier,
 * its UDP receive path and `rdma link add`, which then write into memory
 * that is not theirs.  None while the net_device is being unregistered.
 */
static struct net_device *rsim_get_netdev(struct ib_device *ibdev, u32 port)
{
	struct rsim_dev *dev = to_rdev(ibdev);
	struct net_device *nd;
	unsigned long flags;

	spin_lock_irqsave(&dev->port_lock, flags);
	nd = dev->netdev;
	if (nd && nd->reg_state == NETREG_REGISTERED)
		dev_hold(nd);
	else
		nd = NULL;
	spin_unlock_irqrestore(&dev->port_lock, flags);
	return nd;
}

const struct ib_device_ops rsim_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_RXE,
	.uverbs_abi_ver = RSIM_UVERBS_ABI_VERSION,

	.add_gid = rsim_add_gid,
	.alloc_hw_port_stats = rsim_alloc_hw_port_stats,
	.alloc_mr = rsim_alloc_mr,
	.alloc_pd = rsim_alloc_pd,
	.alloc_ucontext = rsim_alloc_ucontext,
	.create_ah = rsim_create_ah,
	.create_qp = rsim_create_qp,
	.create_srq = rsim_create_srq,
	.create_user_ah = rsim_create_ah,
	.dealloc_pd = rsim_dealloc_pd,
	.dealloc_ucontext = rsim_dealloc_ucontext,
	.del_gid = rsim_del_gid,
	.dereg_mr = rsim_dereg_mr,
	.destroy_ah = rsim_destroy_ah,
	.destroy_cq = rsim_destroy_cq,
	.destroy_qp = rsim_destroy_qp,
	.destroy_srq = rsim_destroy_srq,
	.disassociate_ucontext = rsim_disassociate_ucontext,
	.fill_res_cq_entry = rsim_fill_res_cq_entry,
	.fill_res_mr_entry = rsim_fill_res_mr_entry,
	.fill_res_qp_entry = rsim_fill_res_qp_entry,
	.get_dev_fw_str = rsim_get_dev_fw_str,
	.get_dma_mr = rsim_get_dma_mr,
	.get_hw_stats = rsim_get_hw_stats,
	.get_link_layer = rsim_get_link_layer,
	.get_netdev = rsim_get_netdev,
	.get_port_immutable = rsim_get_port_immutable,
	.map_mr_sg = rsim_map_mr_sg,
	.mmap = rsim_mmap,
	.mmap_free = rsim_mmap_free,
	.modify_qp = rsim_modify_qp,
	.modify_srq = rsim_modify_srq,
	.poll_cq = rsim_poll_cq,
	.post_recv = rsim_post_recv,
	.post_send = rsim_post_send,
	.post_srq_recv = rsim_post_srq_recv,
	.query_device = rsim_query_device,
	.query_gid = rsim_query_gid,
	.query_pkey = rsim_query_pkey,
	.query_port = rsim_query_port,
	.query_qp = rsim_query_qp,
	.query_srq = rsim_query_srq,
	.req_notify_cq = rsim_req_notify_cq,
	/* create_cq, reg_user_mr, resize: as the kernel takes them */
	RSIM_VERSION_OPS,

	INIT_RDMA_OBJ_SIZE(ib_ah, rsim_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, rsim_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_pd, rsim_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, rsim_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, rsim_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, rsim_ucontext, ibucontext),
};

int rsim_ib_register(struct rsim_dev *dev)
{
	struct ib_device *ibdev = &dev->ibdev;
	int err;

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = dev->num_eqs;
	ibdev->dev.parent = &dev->pdev->dev;
	ibdev->node_guid = cpu_to_be64(dev->node_guid);
	strscpy(ibdev->node_desc, "rdma-sim", sizeof(ibdev->node_desc));
	/* The rxe provider uses these write commands; 6.1 has them off. */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_SRQ_RECV) |
				  BIT_ULL(IB_USER_VERBS_CMD_POLL_CQ) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ib_set_device_ops(ibdev, &rsim_dev_ops);
	err = ib_register_device(ibdev, RSIM_IBDEV_NAME, &dev->pdev->dev);
	if (err) {
		dev_err(&dev->pdev->dev, "ib_register_device failed: %d\n",
			err);
		return err;
	}
	set_bit(RSIM_FLAG_IB_REGISTERED, &dev->flags);
	return 0;
}

void rsim_ib_unregister(struct rsim_dev *dev)
{
	clear_bit(RSIM_FLAG_IB_REGISTERED, &dev->flags);
	ib_unregister_device(&dev->ibdev);
}
