// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma-sim guest driver: PCI function, bring-up, interrupts, event queues.
 *
 * Bring-up follows docs/datasheet.md section 4: check the interface
 * version, read the capabilities, reset, MSI-X, admin queues, ENABLE,
 * QUERY_DEVICE/QUERY_PORT, completion EQs, then the Ethernet net_device
 * and the RDMA device.  MSI-X vector 0 serves the admin completion queue
 * and the async event queue (AEQ); vectors 1..n serve one completion EQ
 * each.  Remove undoes it all and resets the device, so it stops every
 * DMA before its memory is freed.
 */

#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/dmapool.h>
#include <linux/etherdevice.h>
#include <linux/module.h>

#include "rsim.h"

MODULE_AUTHOR("rdma-sim developers");
MODULE_DESCRIPTION("rdma-sim RoCEv2 RDMA NIC (QEMU -device rdma-sim) driver");
MODULE_LICENSE("Dual BSD/GPL");

static const struct pci_device_id rsim_pci_tbl[] = {
	{ PCI_DEVICE_SUB(RSIM_PCI_VENDOR_ID, RSIM_PCI_DEVICE_ID,
			 PCI_ANY_ID, PCI_ANY_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, rsim_pci_tbl);

#define RSIM_BARS	(BIT(RSIM_BAR_REGS) | BIT(RSIM_BAR_DOORBELL))

/* ---- Fatal: what follows the device's failure in process context ------- */

static void rsim_fatal_work(struct work_struct *work)
{
	struct rsim_dev *dev = container_of(work, struct rsim_dev, fatal_work);
	struct ib_event ev = {};

	rsim_port_update(dev);
	if (test_bit(RSIM_FLAG_IB_REGISTERED, &dev->flags)) {
		ev.device = &dev->ibdev;
		ev.element.port_num = 1;
		ev.event = IB_EVENT_DEVICE_FATAL;
		ib_dispatch_event(&ev);
	}
	/* Kernel users wait for their work to complete: flush it. */
	rsim_flush_kernel_qps(dev);
}

/* ---- Port state: the device's link, the net_device and the IB port ----- */

static void rsim_link_set(struct rsim_dev *dev, u8 state)
{
	bool up = state == RSIM_PORT_ACTIVE, changed;
	unsigned long flags;

	spin_lock_irqsave(&dev->port_lock, flags);
	changed = dev->link_up != up;
	dev->link_up = up;
	spin_unlock_irqrestore(&dev->port_lock, flags);
	if (changed)
		rsim_log(info, dev, "port link %s\n", up ? "up" : "down");
	rsim_port_update(dev);
}

/* A port event only says when to ask: the state is QUERY_PORT's. */
static void rsim_port_work(struct work_struct *work)
{
	struct rsim_dev *dev = container_of(work, struct rsim_dev, port_work);
	struct rsim_query_port_resp p;
	int err;

	if (rsim_dead(dev))
		return;
	err = rsim_cmd_query_port(dev, &p);
	if (err)
		rsim_log(warn_ratelimited, dev,
			 "QUERY_PORT after a port event failed (%d): port state unchanged\n",
			 err);
	else
		rsim_link_set(dev, p.state);
}

/* ---- Async event queue (MSI-X vector 0, with admin completions) -------- */

static void rsim_async_event(struct rsim_dev *dev, u8 type, u32 obj, u64 data)
{
	switch (type) {
	case RSIM_EV_PORT_ACTIVE:
	case RSIM_EV_PORT_DOWN:
		schedule_work(&dev->port_work);
		break;
	case RSIM_EV_CQ_ERR:
		rsim_log(warn_ratelimited, dev,
			 "CQ %u overflowed or its ring is not accessible\n",
			 obj);
		rsim_cq_event(dev, obj, IB_EVENT_CQ_ERR);
		break;
	case RSIM_EV_QP_FATAL:
		rsim_qp_event(dev, obj, IB_EVENT_QP_FATAL);
		break;
	case RSIM_EV_QP_REQ_ERR:
		rsim_qp_event(dev, obj, IB_EVENT_QP_REQ_ERR);
		break;
	case RSIM_EV_QP_ACCESS_ERR:
		rsim_qp_event(dev, obj, IB_EVENT_QP_ACCESS_ERR);
		break;
	case RSIM_EV_COMM_EST:
		rsim_qp_event(dev, obj, IB_EVENT_COMM_EST);
		break;
	case RSIM_EV_SQ_DRAINED:
		rsim_qp_event(dev, obj, IB_EVENT_SQ_DRAINED);
		break;
	case RSIM_EV_QP_LAST_WQE:
		rsim_qp_event(dev, obj, IB_EVENT_QP_LAST_WQE_REACHED);
		break;
	case RSIM_EV_SRQ_LIMIT:
		rsim_srq_event(dev, obj, IB_EVENT_SRQ_LIMIT_REACHED);
		break;
	case RSIM_EV_SRQ_ERR:
		rsim_srq_event(dev, obj, IB_EVENT_SRQ_ERR);
		break;
	case RSIM_EV_DEVICE_FATAL:
		/* The device has stopped if DEV_STATUS says so. */
		if (rsim_check_health(dev))
			rsim_log(warn_ratelimited, dev,
				 "DEVICE_FATAL event, but DEV_STATUS says the device works: ignored\n");
		break;
	default:
		rsim_log(warn_ratelimited, dev,
			 "unknown async event type 0x%02x (object %u, data 0x%llx)\n",
			 type, obj, data);
		break;
	}
}

static void rsim_aeq_process(struct rsim_dev *dev)
{
	struct rsim_aeq *aeq = &dev->aeq;
	struct rsim_eqe *eqe;
	unsigned long flags;
	u32 dw0, n = 0;

	if (!aeq->buf.va)
		return;
	spin_lock_irqsave(&aeq->lock, flags);
	for (;;) {
		eqe = aeq->buf.va + aeq->head * RSIM_EQ_ENTRY_SIZE;
		dw0 = le32_to_cpu(READ_ONCE(eqe->dw0));
		if (!!FIELD_GET(R_RSIM_EQE_HDR_PHASE_MASK, dw0) != aeq->phase)
			break;
		dma_rmb();
		rsim_async_event(dev, FIELD_GET(R_RSIM_EQE_HDR_TYPE_MASK, dw0),
				 le32_to_cpu(eqe->object),
				 le64_to_cpu(eqe->data));
		aeq->head = (aeq->head + 1) & (aeq->depth - 1);
		if (!aeq->head)
			aeq->phase = !aeq->phase;
		n++;
	}
	if (n && !rsim_dead(dev)) {
		rsim_wr32(dev, A_RSIM_AEQ_HEAD, aeq->head);
		if (!dev->aeq_overflow_reported &&
		    (rsim_rd32(dev, A_RSIM_DEV_STATUS) &
		     R_RSIM_DEV_STATUS_AEQ_OVERFLOW_MASK)) {
			dev->aeq_overflow_reported = true;
			rsim_log(warn, dev,
				 "async event queue overflowed (%u entries): some QP/CQ/port events were lost\n",
				 aeq->depth);
		}
	}
	spin_unlock_irqrestore(&aeq->lock, flags);
}

static irqreturn_t rsim_admin_irq(int irq, void *data)
{
	struct rsim_dev *dev = data;

	atomic_inc(&dev->admin_irqs);
	rsim_admin_process(dev);
	rsim_aeq_process(dev);
	return IRQ_HANDLED;
}

/* ---- Completion event queues (MSI-X vectors 1..n) ---------------------- */

static void rsim_eq_arm(struct rsim_eq *eq)
{
	rsim_wr32(eq->dev, A_RSIM_EQ_DB,
		  FIELD_PREP(R_RSIM_EQ_DB_CONS_MASK, eq->head) |
		  FIELD_PREP(R_RSIM_EQ_DB_EQN_MASK, eq->eqn) |
		  R_RSIM_EQ_DB_ARM_MASK);
}

static irqreturn_t rsim_eq_irq(int irq, void *data)
{
	struct rsim_eq *eq = data;
	struct rsim_dev *dev = eq->dev;
	bool taken, refused = false;
	struct rsim_eqe *eqe;
	u32 dw0, obj, type;

	for (;;) {
		eqe = eq->buf.va + eq->head * RSIM_EQ_ENTRY_SIZE;
		dw0 = le32_to_cpu(READ_ONCE(eqe->dw0));
		if (!!FIELD_GET(R_RSIM_EQE_HDR_PHASE_MASK, dw0) != eq->phase)
			break;
		dma_rmb();
		obj = le32_to_cpu(eqe->object);
		type = FIELD_GET(R_RSIM_EQE_HDR_TYPE_MASK, dw0);
		if (type == RSIM_EV_COMPLETION) {
			taken = rsim_cq_comp_event(dev, obj);
		} else {
			taken = type == RSIM_EV_ETH && obj <= RSIM_ETHQ_RX;
			if (taken)
				rsim_netdev_eth_event(dev, obj);
		}
		if (!taken) {
			rsim_log(warn_ratelimited, dev,
				 "EQ %u: event type 0x%02x for object %u refused: every CQ of the EQ and the Ethernet rings get one instead\n",
				 eq->eqn, type, obj);
			refused = true;
		}
		eq->head = (eq->head + 1) & (eq->depth - 1);
		if (!eq->head)
			eq->phase = !eq->phase;
	}
	if (refused) {
		rsim_cq_comp_event_all(dev, eq - dev->eqs);
		rsim_netdev_eth_event(dev, RSIM_ETHQ_RX);
	}
	/* Re-arm: the device signals at once if entries arrived meanwhile. */
	if (!rsim_dead(dev))
		rsim_eq_arm(eq);
	return IRQ_HANDLED;
}

static void rsim_eqs_destroy(struct rsim_dev *dev)
{
	struct rsim_eq *eq;
	u32 i;

	if (!dev->eqs)
		return;
	for (i = 0; i < dev->num_eqs; i++) {
		eq = &dev->eqs[i];
		if (eq->created && !rsim_dead(dev))
			rsim_cmd_destroy_eq(dev, eq->eqn);
		eq->created = false;
		if (eq->irq_requested)
			free_irq(pci_irq_vector(dev->pdev, eq->vector), eq);
		eq->irq_requested = false;
	}
}

/* Memory only after the device was reset (it may still write to EQs). */
static void rsim_eqs_free(struct rsim_dev *dev)
{
	u32 i;

	if (!dev->eqs)
		return;
	for (i = 0; i < dev->num_eqs; i++)
		rsim_dma_free(dev, &dev->eqs[i].buf);
	kfree(dev->eqs);
	dev->eqs = NULL;
}

static int rsim_eqs_create(struct rsim_dev *dev)
{
	u32 depth = rounddown_pow_of_two(min_t(u32, RSIM_EQ_DEPTH,
					       dev->caps.max_eqe));
	struct rsim_eq *eq;
	u32 i;
	int err;

	dev->num_eqs = dev->nvec - 1;
	dev->eqs = kcalloc(dev->num_eqs, sizeof(*dev->eqs), GFP_KERNEL);
	if (!dev->eqs)
		return -ENOMEM;
	for (i = 0; i < dev->num_eqs; i++) {
		eq = &dev->eqs[i];
		eq->dev = dev;
		eq->vector = i + 1;
		eq->depth = depth;
		eq->phase = true;
		err = rsim_dma_alloc(dev, &eq->buf, depth * RSIM_EQ_ENTRY_SIZE);
		if (err)
			return err;
		snprintf(eq->irq_name, sizeof(eq->irq_name), "rdma_sim-eq%u@%s",
			 i, pci_name(dev->pdev));
		err = request_irq(pci_irq_vector(dev->pdev, eq->vector),
				  rsim_eq_irq, 0, eq->irq_name, eq);
		if (err) {
			dev_err(&dev->pdev->dev,
				"request_irq for EQ %u (vector %u) failed: %d\n",
				i, eq->vector, err);
			return err;
		}
		eq->irq_requested = true;
		err = rsim_cmd_create_eq(dev, eq->vector, eq->buf.dma, depth,
					 &eq->eqn);
		if (err) {
			dev_err(&dev->pdev->dev,
				"CREATE_EQ (vector %u, depth %u) failed: %d\n",
				eq->vector, depth, err);
			return err;
		}
		eq->created = true;
		rsim_eq_arm(eq);
	}
	return 0;
}

/* ---- Bring-up ---------------------------------------------------------- */

static int rsim_read_caps(struct rsim_dev *dev)
{
	struct rsim_caps *c = &dev->caps;

	c->features = rsim_rd32(dev, A_RSIM_FEATURES);
	c->dma_width = rsim_rd32(dev, A_RSIM_DMA_WIDTH);
	c->max_qp = rsim_rd32(dev, A_RSIM_CAP_MAX_QP);
	c->max_cq = rsim_rd32(dev, A_RSIM_CAP_MAX_CQ);
	c->max_srq = rsim_rd32(dev, A_RSIM_CAP_MAX_SRQ);
	c->max_mr = rsim_rd32(dev, A_RSIM_CAP_MAX_MR);
	c->max_pd = rsim_rd32(dev, A_RSIM_CAP_MAX_PD);
	c->max_ah = rsim_rd32(dev, A_RSIM_CAP_MAX_AH);
	c->max_gid = rsim_rd32(dev, A_RSIM_CAP_MAX_GID);
	c->max_send_sge = rsim_rd32(dev, A_RSIM_CAP_MAX_SEND_SGE);
	c->max_recv_sge = rsim_rd32(dev, A_RSIM_CAP_MAX_RECV_SGE);
	c->max_srq_sge = rsim_rd32(dev, A_RSIM_CAP_MAX_SRQ_SGE);
	c->max_qp_wr = rsim_rd32(dev, A_RSIM_CAP_MAX_QP_WR);
	c->max_cqe = rsim_rd32(dev, A_RSIM_CAP_MAX_CQE);
	c->max_srq_wr = rsim_rd32(dev, A_RSIM_CAP_MAX_SRQ_WR);
	c->max_inline = rsim_rd32(dev, A_RSIM_CAP_MAX_INLINE);
	c->max_mr_size = (u64)rsim_rd32(dev, A_RSIM_CAP_MAX_MR_SIZE_HI) << 32 |
			 rsim_rd32(dev, A_RSIM_CAP_MAX_MR_SIZE_LO);
	c->page_sizes = rsim_rd32(dev, A_RSIM_CAP_PAGE_SIZES);
	c->max_path_mtu = FIELD_GET(R_RSIM_CAP_MTU_MAX_PATH_MTU_MASK,
				    rsim_rd32(dev, A_RSIM_CAP_MTU));
	c->max_rd_atom = rsim_rd32(dev, A_RSIM_CAP_MAX_RD_ATOM);
	c->max_init_rd_atom = rsim_rd32(dev, A_RSIM_CAP_MAX_INIT_RD_ATOM);
	c->max_eq = rsim_rd32(dev, A_RSIM_CAP_MAX_EQ);
	c->max_eqe = rsim_rd32(dev, A_RSIM_CAP_MAX_EQE);
	c->max_pbl_l1 = rsim_rd32(dev, A_RSIM_CAP_MAX_PBL_L1);
	c->max_pbl_root = rsim_rd32(dev, A_RSIM_CAP_MAX_PBL_ROOT);
	c->max_fast_reg_pages = rsim_rd32(dev, A_RSIM_CAP_MAX_FAST_REG_PAGES);
	c->max_aq_depth = rsim_rd32(dev, A_RSIM_CAP_MAX_AQ_DEPTH);
	c->max_eth_depth = rsim_rd32(dev, A_RSIM_CAP_MAX_ETH_DEPTH);
	c->max_pkeys = rsim_rd32(dev, A_RSIM_CAP_MAX_PKEYS);
	c->db_pages = rsim_rd32(dev, A_RSIM_DB_PAGES);
	c->msix_vectors = rsim_rd32(dev, A_RSIM_MSIX_VECTORS);
	c->admin_timeout_ms = rsim_rd32(dev, A_RSIM_ADMIN_TIMEOUT);
	c->reset_timeout_ms = rsim_rd32(dev, A_RSIM_RESET_TIMEOUT);

	/* The driver needs these to be sane; anything else is the device's. */
	if (c->max_qp < 2 || !c->max_cq || !c->max_pd || !c->max_mr ||
	    !c->max_gid || !c->max_qp_wr || !c->max_cqe || !c->max_eqe ||
	    c->max_eq < 1 || c->msix_vectors < 2 || !c->db_pages ||
	    c->max_aq_depth < 2 || c->max_eth_depth < 2 ||
	    !(c->page_sizes & SZ_4K) || !c->max_pbl_l1 ||
	    !c->max_pbl_root || c->max_path_mtu < IB_MTU_256) {
		dev_err(&dev->pdev->dev,
			"device reports unusable capabilities (max_qp %u max_cq %u max_pd %u max_mr %u max_gid %u max_qp_wr %u max_cqe %u max_eq %u max_eqe %u msix %u page_sizes 0x%x): refusing it\n",
			c->max_qp, c->max_cq, c->max_pd, c->max_mr, c->max_gid,
			c->max_qp_wr, c->max_cqe, c->max_eq, c->max_eqe,
			c->msix_vectors, c->page_sizes);
		return -EINVAL;
	}
	if (!c->admin_timeout_ms || c->admin_timeout_ms > RSIM_TIMEOUT_MAX_MS) {
		dev_warn(&dev->pdev->dev,
			 "ADMIN_TIMEOUT %u ms out of range, using %u ms\n",
			 c->admin_timeout_ms, RSIM_ADMIN_TIMEOUT_MS);
		c->admin_timeout_ms = RSIM_ADMIN_TIMEOUT_MS;
	}
	if (!c->reset_timeout_ms || c->reset_timeout_ms > RSIM_TIMEOUT_MAX_MS)
		c->reset_timeout_ms = RSIM_RESET_TIMEOUT_MS;
	return 0;
}

static int rsim_check_version(struct rsim_dev *dev)
{
	u32 ver = rsim_rd32(dev, A_RSIM_VERSION);
	u32 major = FIELD_GET(R_RSIM_VERSION_MAJOR_MASK, ver);
	u32 minor = FIELD_GET(R_RSIM_VERSION_MINOR_MASK, ver);

	if (ver == ~0u) {
		dev_err(&dev->pdev->dev,
			"device does not respond (VERSION reads all ones)\n");
		return -ENODEV;
	}
	if (major != RSIM_VERSION_MAJOR) {
		dev_err(&dev->pdev->dev,
			"device interface version %u.%u is not supported (this driver supports %u.x): refusing the device\n",
			major, minor, RSIM_VERSION_MAJOR);
		return -ENODEV;
	}
	dev_info(&dev->pdev->dev, "rdma-sim interface version %u.%u\n",
		 major, minor);
	return 0;
}

/* DEV_CTRL.RESET; the device is idle and at power-on state afterwards. */
static int rsim_reset(struct rsim_dev *dev)
{
	unsigned long deadline;
	u32 status;

	rsim_wr32(dev, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_RESET_MASK);
	deadline = jiffies + msecs_to_jiffies(dev->caps.reset_timeout_ms);
	for (;;) {
		status = rsim_rd32(dev, A_RSIM_DEV_STATUS);
		if (status == ~0u)
			return -ENODEV;
		if (!status)
			return 0;
		if (time_after(jiffies, deadline)) {
			dev_err(&dev->pdev->dev,
				"reset did not complete within %u ms (DEV_STATUS 0x%08x)\n",
				dev->caps.reset_timeout_ms, status);
			return -ETIMEDOUT;
		}
		usleep_range(100, 200);
	}
}

static int rsim_aeq_init(struct rsim_dev *dev)
{
	struct rsim_aeq *aeq = &dev->aeq;
	u32 depth;
	int err;

	/* Sized for an event per QP and CQ, within the device's limit. */
	depth = roundup_pow_of_two(dev->caps.max_qp + dev->caps.max_cq + 16);
	depth = clamp_t(u32, depth, 64, RSIM_AEQ_DEPTH_MAX);
	depth = min_t(u32, depth, rounddown_pow_of_two(dev->caps.max_eqe));
	spin_lock_init(&aeq->lock);
	aeq->depth = depth;
	aeq->head = 0;
	aeq->phase = true;
	err = rsim_dma_alloc(dev, &aeq->buf, depth * RSIM_EQ_ENTRY_SIZE);
	if (err)
		return err;
	rsim_wr32(dev, A_RSIM_AEQ_BASE_LO, lower_32_bits(aeq->buf.dma));
	rsim_wr32(dev, A_RSIM_AEQ_BASE_HI, upper_32_bits(aeq->buf.dma));
	rsim_wr32(dev, A_RSIM_AEQ_DEPTH, depth);
	return 0;
}

static int rsim_enable(struct rsim_dev *dev)
{
	u32 status;

	rsim_wr32(dev, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_ENABLE_MASK);
	status = rsim_rd32(dev, A_RSIM_DEV_STATUS);
	if (status & R_RSIM_DEV_STATUS_FATAL_MASK) {
		dev_err(&dev->pdev->dev,
			"device refused the admin queue setup (DEV_STATUS 0x%08x, reason %u: %s)\n",
			status,
			(u32)FIELD_GET(R_RSIM_DEV_STATUS_FATAL_REASON_MASK,
				       status),
			rsim_fatal_reason_name(FIELD_GET(R_RSIM_DEV_STATUS_FATAL_REASON_MASK,
							 status)));
		return -EIO;
	}
	if (!(status & R_RSIM_DEV_STATUS_READY_MASK)) {
		dev_err(&dev->pdev->dev,
			"device not ready after ENABLE (DEV_STATUS 0x%08x)\n",
			status);
		return -EIO;
	}
	return 0;
}

/*
 * The admin queue works polled (interrupts still masked), then with
 * vector 0 unmasked.  Should its interrupt not arrive, admin commands keep
 * working by polling, with a warning.
 */
static int rsim_admin_selftest(struct rsim_dev *dev)
{
	int err;

	err = rsim_cmd_nop(dev);
	if (err) {
		dev_err(&dev->pdev->dev,
			"admin queue does not work: NOP failed (%d)\n", err);
		return err;
	}
	atomic_set(&dev->admin_irqs, 0);
	rsim_wr32(dev, A_RSIM_INTR_MASK, 0);
	set_bit(RSIM_FLAG_ADMIN_IRQ, &dev->flags);
	/* Events posted while masked (the port state) did not interrupt. */
	rsim_aeq_process(dev);
	err = rsim_cmd_nop(dev);
	if (err) {
		dev_err(&dev->pdev->dev,
			"admin queue fails with interrupts enabled (%d)\n", err);
		return err;
	}
	if (!atomic_read(&dev->admin_irqs)) {
		dev_warn(&dev->pdev->dev,
			 "no MSI-X interrupt for admin completions: polling the admin queue\n");
		clear_bit(RSIM_FLAG_ADMIN_IRQ, &dev->flags);
	}
	return 0;
}

static int rsim_query(struct rsim_dev *dev)
{
	struct rsim_query_device_resp d;
	struct rsim_query_port_resp p;
	int err;

	err = rsim_cmd_query_device(dev, &d);
	if (err) {
		dev_err(&dev->pdev->dev, "QUERY_DEVICE failed: %d\n", err);
		return err;
	}
	dev->node_guid = le64_to_cpu(d.node_guid);
	dev->sys_image_guid = le64_to_cpu(d.sys_image_guid);
	dev->fw_ver = le64_to_cpu(d.fw_ver);
	dev->vendor_id = le32_to_cpu(d.vendor_id);
	dev->vendor_part_id = le32_to_cpu(d.vendor_part_id);
	dev->hw_ver = le32_to_cpu(d.hw_ver);

	err = rsim_cmd_query_port(dev, &p);
	if (err) {
		dev_err(&dev->pdev->dev, "QUERY_PORT failed: %d\n", err);
		return err;
	}
	ether_addr_copy(dev->mac, p.mac);
	dev->eth_mtu = le32_to_cpu(p.eth_mtu);
	rsim_link_set(dev, p.state);
	return 0;
}

/*
 * Vector 0 (admin and async events) plus one completion vector per online
 * CPU, as far as the device has vectors and EQs.  The kernel spreads the
 * completion vectors over the CPUs (PCI_IRQ_AFFINITY; vector 0 is left out
 * of the spread), and ib_get_vector_affinity() tells ULPs such as
 * nvme-rdma which CPUs each completion vector serves.
 */
static int rsim_alloc_irqs(struct rsim_dev *dev)
{
	struct irq_affinity affd = { .pre_vectors = 1 };
	int want = 1 + min3(num_online_cpus(), dev->caps.max_eq,
			    dev->caps.msix_vectors - 1);

	dev->nvec = pci_alloc_irq_vectors_affinity(dev->pdev, 2, want,
						   PCI_IRQ_MSIX |
						   PCI_IRQ_AFFINITY, &affd);
	if (dev->nvec < 0) {
		dev_err(&dev->pdev->dev,
			"cannot enable MSI-X (%d): the driver needs vector 0 and at least one completion vector\n",
			dev->nvec);
		return dev->nvec;
	}
	return 0;
}

static int rsim_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct rsim_dev *dev;
	int err;

	dev = ib_alloc_device(rsim_dev, ibdev);
	if (!dev)
		return -ENOMEM;
	dev->pdev = pdev;
	pci_set_drvdata(pdev, dev);
	xa_init_flags(&dev->qps, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->cqs, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->srqs, XA_FLAGS_LOCK_IRQ);
	mutex_init(&dev->kqp_lock);
	INIT_LIST_HEAD(&dev->kernel_qps);
	mutex_init(&dev->mr_lock);
	INIT_LIST_HEAD(&dev->mrs);
	mutex_init(&dev->stats_lock);
	spin_lock_init(&dev->port_lock);
	INIT_WORK(&dev->fatal_work, rsim_fatal_work);
	INIT_WORK(&dev->flush_work, rsim_flush_work);
	INIT_WORK(&dev->port_work, rsim_port_work);

	err = pci_enable_device_mem(pdev);
	if (err) {
		dev_err(&pdev->dev, "pci_enable_device_mem failed: %d\n", err);
		goto err_dealloc;
	}
	err = pci_request_selected_regions(pdev, RSIM_BARS, DRV_MODULE_NAME);
	if (err) {
		dev_err(&pdev->dev, "cannot claim BARs 0 and 2: %d\n", err);
		goto err_disable;
	}
	pci_set_master(pdev);
	dev->regs = pci_iomap(pdev, RSIM_BAR_REGS, RSIM_REGS_SIZE);
	dev->db = pci_iomap(pdev, RSIM_BAR_DOORBELL, RSIM_DB_PAGE_SIZE);
	if (!dev->regs || !dev->db) {
		dev_err(&pdev->dev, "cannot map BAR0/BAR2\n");
		err = -ENOMEM;
		goto err_unmap;
	}

	err = rsim_check_version(dev);
	if (err)
		goto err_unmap;
	err = rsim_read_caps(dev);
	if (err)
		goto err_unmap;
	err = dma_set_mask_and_coherent(&pdev->dev,
					DMA_BIT_MASK(min_t(u32, 64,
							   dev->caps.dma_width)));
	if (err) {
		dev_err(&pdev->dev, "cannot use %u-bit DMA: %d\n",
			dev->caps.dma_width, err);
		goto err_unmap;
	}
	err = rsim_reset(dev);
	if (err) {
		dev_err(&pdev->dev, "device reset failed: %d\n", err);
		goto err_unmap;
	}
	err = rsim_alloc_irqs(dev);
	if (err)
		goto err_unmap;

	err = rsim_admin_init(dev);
	if (err)
		goto err_irqs;
	err = rsim_aeq_init(dev);
	if (err)
		goto err_admin;
	err = request_irq(pci_irq_vector(pdev, RSIM_MSIX_VECTOR_ADMIN),
			  rsim_admin_irq, 0, "rdma_sim-admin", dev);
	if (err) {
		dev_err(&pdev->dev, "request_irq for vector 0 failed: %d\n",
			err);
		goto err_admin;
	}
	dev->admin_irq_requested = true;
	err = rsim_enable(dev);
	if (err)
		goto err_reset;
	err = rsim_admin_selftest(dev);
	if (err)
		goto err_reset;

	err = rsim_query(dev);
	if (err)
		goto err_reset;
	err = rsim_eqs_create(dev);
	if (err)
		goto err_eqs;
	dev->attr_pool = dma_pool_create("rdma_sim_qp_attr", &pdev->dev,
					 sizeof(struct rsim_qp_attr), 64, 0);
	if (!dev->attr_pool) {
		err = -ENOMEM;
		goto err_eqs;
	}
	err = rsim_dma_alloc(dev, &dev->stats_buf, RSIM_STAT_COUNT * 8);
	if (err)
		goto err_pool;

	err = rsim_netdev_create(dev);
	if (err)
		goto err_stats;
	err = rsim_ib_register(dev);
	if (err)
		goto err_netdev;
	rsim_port_update(dev);
	rsim_debugfs_add(dev);
	ibdev_info(&dev->ibdev,
		   "%u completion vectors, MAC %pM, node GUID %016llx\n",
		   dev->num_eqs, dev->mac, dev->node_guid);
	return 0;

err_netdev:
	rsim_netdev_destroy(dev);
err_stats:
	rsim_dma_free(dev, &dev->stats_buf);
err_pool:
	dma_pool_destroy(dev->attr_pool);
err_eqs:
	rsim_eqs_destroy(dev);
err_reset:
	set_bit(RSIM_FLAG_DEAD, &dev->flags);
	rsim_reset(dev);
	cancel_work_sync(&dev->fatal_work);
	rsim_eqs_free(dev);
	if (dev->admin_irq_requested)
		free_irq(pci_irq_vector(pdev, RSIM_MSIX_VECTOR_ADMIN), dev);
	/* No port event can schedule it again. */
	cancel_work_sync(&dev->port_work);
err_admin:
	rsim_dma_free(dev, &dev->aeq.buf);
	rsim_admin_destroy(dev);
err_irqs:
	pci_free_irq_vectors(pdev);
err_unmap:
	if (dev->db)
		pci_iounmap(pdev, dev->db);
	if (dev->regs)
		pci_iounmap(pdev, dev->regs);
	pci_release_selected_regions(pdev, RSIM_BARS);
err_disable:
	pci_disable_device(pdev);
err_dealloc:
	ib_dealloc_device(&dev->ibdev);
	return err;
}

static void rsim_remove(struct pci_dev *pdev)
{
	struct rsim_dev *dev = pci_get_drvdata(pdev);

	rsim_debugfs_remove(dev);
	/* Destroys every object, including those of user processes. */
	rsim_ib_unregister(dev);
	rsim_netdev_destroy(dev);
	cancel_work_sync(&dev->fatal_work);
	cancel_work_sync(&dev->flush_work);
	/* Events the core queued for the device must run before it goes. */
	flush_workqueue(ib_wq);

	rsim_eqs_destroy(dev);
	/* Stop all DMA, then free what the device used. */
	set_bit(RSIM_FLAG_DEAD, &dev->flags);
	if (rsim_reset(dev))
		dev_warn(&pdev->dev, "reset on remove failed\n");
	free_irq(pci_irq_vector(pdev, RSIM_MSIX_VECTOR_ADMIN), dev);
	cancel_work_sync(&dev->port_work);
	rsim_eqs_free(dev);
	rsim_dma_free(dev, &dev->stats_buf);
	dma_pool_destroy(dev->attr_pool);
	rsim_dma_free(dev, &dev->aeq.buf);
	rsim_admin_destroy(dev);
	pci_free_irq_vectors(pdev);
	pci_iounmap(pdev, dev->db);
	pci_iounmap(pdev, dev->regs);
	pci_release_selected_regions(pdev, RSIM_BARS);
	pci_disable_device(pdev);
	WARN_ON(!xa_empty(&dev->qps) || !xa_empty(&dev->cqs) ||
		!xa_empty(&dev->srqs));
	xa_destroy(&dev->qps);
	xa_destroy(&dev->cqs);
	xa_destroy(&dev->srqs);
	ib_dealloc_device(&dev->ibdev);
}

/* Reboot/kexec: the device must not write into the next kernel's memory. */
static void rsim_shutdown(struct pci_dev *pdev)
{
	struct rsim_dev *dev = pci_get_drvdata(pdev);

	if (dev && dev->regs)
		rsim_wr32(dev, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_RESET_MASK);
}

static struct pci_driver rsim_pci_driver = {
	.name = DRV_MODULE_NAME,
	.id_table = rsim_pci_tbl,
	.probe = rsim_probe,
	.remove = rsim_remove,
	.shutdown = rsim_shutdown,
};

static int __init rsim_init(void)
{
	int err;

	rsim_debugfs_init();
	err = pci_register_driver(&rsim_pci_driver);
	if (err)
		rsim_debugfs_cleanup();
	return err;
}

static void __exit rsim_exit(void)
{
	pci_unregister_driver(&rsim_pci_driver);
	rsim_debugfs_cleanup();
}

module_init(rsim_init);
module_exit(rsim_exit);
