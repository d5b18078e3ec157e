// SPDX-License-Identifier: GPL-2.0
/*
 * rsim_bringup: a teaching driver for the rdma-sim RDMA NIC.
 *
 * It brings the device up in ten numbered steps, from the PCI function to
 * a SEND that comes back through the device's internal loopback, and
 * prints what it does.  It uses no RDMA core (ib_*) API: only PCI, DMA,
 * MSI-X and the programming model of docs/datasheet.md, with the layouts
 * of include/rdma-sim/rdma_sim_hw.h.  docs/bring-up.md walks through it.
 *
 * Load it only where rdma_sim.ko is not loaded: one driver per device.
 *   insmod rsim_bringup.ko [exercise=read|write_imm] [mistake=NAME]
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitfield.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <rdma-sim/rdma_sim_hw.h>

static char *exercise = "";
module_param(exercise, charp, 0444);
MODULE_PARM_DESC(exercise, "exercise to run after the bring-up: read, write_imm");
static char *mistake = "";
module_param(mistake, charp, 0444);
MODULE_PARM_DESC(mistake, "a learner's mistake, on purpose: aq_depth, cq_page_shift, rtr_no_av, psn_mismatch, post_before_rts, bad_lkey");

#define RB_NONE		U32_MAX	/* no object: every handle starts so */
#define RB_AQ_DEPTH	16	/* admin queue and its completion queue */
#define RB_AEQ_DEPTH	16	/* async events: port, CQ, QP errors */
#define RB_EQ_DEPTH	16	/* completion events */
#define RB_CQ_LOG2	4	/* 16 CQEs, holds 15 */
#define RB_WQ_LOG2	4	/* 16 WQEs per SQ and RQ */
#define RB_SQ_ELEM_LOG2	8	/* 256 >= 208-byte header + one SGE */
#define RB_RQ_ELEM_LOG2	6	/* 64 >= 40-byte header + one SGE */
#define RB_MR_SIZE	(4 * PAGE_SIZE)	/* send, receive, exercise areas */
#define RB_MR_IOVA	0x10000000ULL	/* any number: the MR translates it */
#define RB_MSG_LEN	4000	/* four packets at path MTU 1024 */
#define RB_PSN		0x1234	/* requester and responder must agree */
#define RB_WAIT_MS	2000	/* a completion over loopback takes ms */

#define RB_SEND_OFF	0
#define RB_RECV_OFF	PAGE_SIZE
#define RB_EX_OFF	(2 * PAGE_SIZE)

struct rb_buf {			/* one DMA-coherent buffer */
	void *va;
	dma_addr_t dma;
	size_t size;
};

struct rb_dev {
	struct pci_dev *pdev;
	void __iomem *regs;	/* BAR0 */
	void __iomem *db;	/* BAR2, doorbell page 0 */
	u32 admin_timeout_ms;
	struct rb_buf aq, acq, aeq, eq, cq, sq, rq, mr, attr;
	u32 aq_tail, acq_head, aeq_head, eq_head;
	u8 acq_phase, aeq_phase, eq_phase;
	u16 cmd_id;
	u8 port_mac[6], active_mtu;
	u8 gid[16];
	u32 gid_added, eqn, pdn, cqn, qpn, lkey, rkey;
	u32 cq_cons, sq_prod, rq_prod;
	int nr_irqs;
	bool regions;		/* BARs claimed */
	unsigned int cq_events;
	struct completion cq_event;
};

/* FIELD_GET() of the header's enum masks, as a u32 for printing. */
#define RB_GET(mask, v)	((u32)FIELD_GET(mask, v))

#define step(t, n, fmt, ...) \
	dev_info(&(t)->pdev->dev, "step %d: " fmt, n, ##__VA_ARGS__)

static bool rb_mistake(const char *name)
{
	return !strcmp(mistake, name);
}

/* Statuses by name and errno, as the datasheet's table in section 5. */
static const struct {
	const char *name;
	int err;
} rb_status[] = {
	{ "OK", 0 }, { "BAD_OPCODE", -EOPNOTSUPP }, { "INVALID", -EINVAL },
	{ "RESERVED", -EINVAL }, { "BAD_HANDLE", -EINVAL }, { "BAD_STATE", -EINVAL },
	{ "NO_RESOURCES", -ENOMEM }, { "LIMIT", -EINVAL }, { "BUSY", -EBUSY },
	{ "DMA", -EFAULT }, { "ACCESS", -EACCES }, { "UNSUPPORTED", -EOPNOTSUPP },
	{ "RANGE", -ERANGE }, { "EXISTS", -EEXIST },
};

static int rb_alloc(struct rb_dev *t, struct rb_buf *b, size_t size)
{
	/* Coherent memory is page aligned and zeroed: every queue needs both. */
	b->va = dma_alloc_coherent(&t->pdev->dev, size, &b->dma, GFP_KERNEL);
	if (!b->va)
		return -ENOMEM;
	b->size = size;
	return 0;
}

static void rb_free(struct rb_dev *t, struct rb_buf *b)
{
	if (b->va)
		dma_free_coherent(&t->pdev->dev, b->size, b->va, b->dma);
	b->va = NULL;
}

static void rb_write64(struct rb_dev *t, u32 lo_reg, u64 val)
{
	writel(lower_32_bits(val), t->regs + lo_reg);
	writel(upper_32_bits(val), t->regs + lo_reg + 4);
}

/*
 * One admin command, synchronously: write it into the AQ slot at the tail,
 * ring AQ_TAIL, then poll the ACQ slot at our head until its phase bit says
 * the device wrote it (datasheet section 5).  Polling keeps this simple;
 * the device completes every command within ADMIN_TIMEOUT.
 */
static int rb_cmd(struct rb_dev *t, const char *name, u8 opcode, void *cmd,
		  struct rsim_admin_cqe *out)
{
	struct rsim_admin_cmd *slot = t->aq.va + t->aq_tail * RSIM_AQ_ENTRY_SIZE;
	struct rsim_admin_cqe *cqe = t->acq.va + t->acq_head * RSIM_ACQ_ENTRY_SIZE;
	unsigned long end = jiffies + msecs_to_jiffies(t->admin_timeout_ms);
	u16 id = ++t->cmd_id;
	u32 dw0;
	u8 status;

	memcpy(slot, cmd, RSIM_AQ_ENTRY_SIZE);
	slot->dw0 = cpu_to_le32(FIELD_PREP(R_RSIM_CMD_HDR_OPCODE_MASK, opcode) |
				FIELD_PREP(R_RSIM_CMD_HDR_ID_MASK, id));
	t->aq_tail = (t->aq_tail + 1) % RB_AQ_DEPTH;
	/* writel() orders the command's memory writes before the doorbell. */
	writel(t->aq_tail, t->regs + A_RSIM_AQ_TAIL);

	for (;;) {
		dw0 = le32_to_cpu(READ_ONCE(cqe->dw0));
		if (RB_GET(R_RSIM_CQE_HDR_PHASE_MASK, dw0) == t->acq_phase)
			break;
		if (time_after(jiffies, end)) {
			dev_err(&t->pdev->dev, "%s: no completion within %u ms (DEV_STATUS 0x%x)\n",
				name, t->admin_timeout_ms,
				readl(t->regs + A_RSIM_DEV_STATUS));
			return -ETIMEDOUT;
		}
		usleep_range(20, 100);
	}
	/* The device writes dword 0 last: read the rest only after it. */
	dma_rmb();
	if (out)
		memcpy(out, cqe, sizeof(*out));
	t->acq_head = (t->acq_head + 1) % RB_AQ_DEPTH;
	if (!t->acq_head)
		t->acq_phase ^= 1;	/* the phase flips on every wrap */
	writel(t->acq_head, t->regs + A_RSIM_ACQ_HEAD);

	if (RB_GET(R_RSIM_CQE_HDR_ID_MASK, dw0) != id) {
		dev_err(&t->pdev->dev, "%s: completion for command %u, expected %u\n",
			name, RB_GET(R_RSIM_CQE_HDR_ID_MASK, dw0), id);
		return -EIO;
	}
	status = RB_GET(R_RSIM_CQE_HDR_STATUS_MASK, dw0);
	if (status == RSIM_STS_OK)
		return 0;
	dev_err(&t->pdev->dev, "%s failed: status %s (0x%02x)\n", name,
		status < ARRAY_SIZE(rb_status) ? rb_status[status].name : "unknown", status);
	return status < ARRAY_SIZE(rb_status) ? rb_status[status].err : -EIO;
}

/* Commands that create an object return its number in result[0..3]. */
static int rb_create(struct rb_dev *t, const char *name, u8 opcode,
		     void *cmd, u32 *handle, u32 *handle2)
{
	struct rsim_admin_cqe cqe;
	struct rsim_create_resp *resp = (void *)cqe.result;
	int err = rb_cmd(t, name, opcode, cmd, &cqe);

	if (err)
		return err;
	*handle = le32_to_cpu(resp->handle);
	if (handle2)
		*handle2 = le32_to_cpu(resp->handle2);
	return 0;
}

/* Destroy commands name one object; a failure is printed by rb_cmd(). */
static void rb_destroy(struct rb_dev *t, const char *name, u8 opcode, u32 *handle)
{
	struct rsim_cmd_handle cmd = { .handle = cpu_to_le32(*handle) };

	if (*handle == RB_NONE)
		return;
	if (!rb_cmd(t, name, opcode, &cmd, NULL))
		dev_info(&t->pdev->dev, "teardown: %s %u\n", name, *handle);
	*handle = RB_NONE;
}

/*
 * The next entry of an event queue (the AEQ and EQs share the format), or
 * NULL.  An entry is new when its phase bit is the one this pass expects.
 */
static struct rsim_eqe *rb_next_eqe(struct rb_buf *q, u32 *head, u8 *phase, u32 depth)
{
	struct rsim_eqe *e = q->va + *head * RSIM_EQ_ENTRY_SIZE;

	if (RB_GET(R_RSIM_EQE_HDR_PHASE_MASK, le32_to_cpu(READ_ONCE(e->dw0))) != *phase)
		return NULL;
	dma_rmb();	/* dword 0 is written last: the rest is valid now */
	*head = (*head + 1) % depth;
	if (!*head)
		*phase ^= 1;	/* the phase flips on every wrap */
	return e;
}

/* Vector 0: async events (the admin queue is polled, its cause masked). */
static irqreturn_t rb_async_irq(int irq, void *data)
{
	struct rb_dev *t = data;
	struct rsim_eqe *e;

	if (!t->aeq.va)		/* not ours: the AEQ does not exist yet */
		return IRQ_NONE;
	while ((e = rb_next_eqe(&t->aeq, &t->aeq_head, &t->aeq_phase, RB_AEQ_DEPTH)))
		dev_info(&t->pdev->dev, "async event type 0x%02x object %u (vector 0)\n",
			 RB_GET(R_RSIM_EQE_HDR_TYPE_MASK, le32_to_cpu(e->dw0)),
			 le32_to_cpu(e->object));
	writel(t->aeq_head, t->regs + A_RSIM_AEQ_HEAD);
	return IRQ_HANDLED;
}

/* Vector 1: our completion EQ.  A COMPLETION event names the CQ. */
static irqreturn_t rb_eq_irq(int irq, void *data)
{
	struct rb_dev *t = data;
	struct rsim_eqe *e;

	if (!t->eq.va)
		return IRQ_NONE;
	while ((e = rb_next_eqe(&t->eq, &t->eq_head, &t->eq_phase, RB_EQ_DEPTH))) {
		if (RB_GET(R_RSIM_EQE_HDR_TYPE_MASK, le32_to_cpu(e->dw0)) == RSIM_EV_COMPLETION &&
		    le32_to_cpu(e->object) == t->cqn) {
			t->cq_events++;
			complete(&t->cq_event);
		}
	}
	/* Report progress without ARM: the waiter re-arms when it sleeps. */
	writel(FIELD_PREP(R_RSIM_EQ_DB_CONS_MASK, t->eq_head) |
	       FIELD_PREP(R_RSIM_EQ_DB_EQN_MASK, t->eqn), t->regs + A_RSIM_EQ_DB);
	return IRQ_HANDLED;
}

static __le32 *rb_index(struct rb_buf *ring, unsigned int offset)
{
	return ring->va + offset;
}

/* Take the next CQE, if the device has produced one. */
static bool rb_poll_cq(struct rb_dev *t, struct rsim_cqe *out)
{
	u32 prod = le32_to_cpu(READ_ONCE(*rb_index(&t->cq, RSIM_QUEUE_PROD_OFFSET)));

	if (prod == t->cq_cons)
		return false;
	dma_rmb();	/* the CQE is complete once the producer index says so */
	memcpy(out, t->cq.va + RSIM_QUEUE_DATA_OFFSET +
	       (t->cq_cons << RSIM_CQE_LOG2_SLOT), sizeof(*out));
	t->cq_cons = (t->cq_cons + 1) & ((1 << RB_CQ_LOG2) - 1);
	mb();		/* done reading the slot before giving it back */
	WRITE_ONCE(*rb_index(&t->cq, RSIM_QUEUE_CONS_OFFSET), cpu_to_le32(t->cq_cons));
	return true;
}

/*
 * Arm the CQ (its next completion makes an event) and the EQ (its next
 * event makes an MSI-X interrupt).  Both fire once and must be re-armed.
 */
static void rb_arm(struct rb_dev *t)
{
	reinit_completion(&t->cq_event);
	writel(FIELD_PREP(R_RSIM_DB_CQ_CQN_MASK, t->cqn) |
	       FIELD_PREP(R_RSIM_DB_CQ_ARM_MASK, RSIM_CQ_ARM_NEXT), t->db + A_RSIM_DB_CQ);
	writel(FIELD_PREP(R_RSIM_EQ_DB_CONS_MASK, t->eq_head) |
	       FIELD_PREP(R_RSIM_EQ_DB_EQN_MASK, t->eqn) | R_RSIM_EQ_DB_ARM_MASK,
	       t->regs + A_RSIM_EQ_DB);
}

static int rb_wait_event(struct rb_dev *t)
{
	if (wait_for_completion_timeout(&t->cq_event, msecs_to_jiffies(RB_WAIT_MS)))
		return 0;
	dev_err(&t->pdev->dev, "no completion event within %d ms\n", RB_WAIT_MS);
	return -ETIMEDOUT;
}

/*
 * Wait for the next completion: poll; if there is none, arm, poll again
 * (it may have come before the arming), then sleep until the interrupt.
 */
static int rb_wait_cqe(struct rb_dev *t, struct rsim_cqe *out)
{
	int err;

	while (!rb_poll_cq(t, out)) {
		rb_arm(t);
		if (rb_poll_cq(t, out))
			break;
		err = rb_wait_event(t);
		if (err)
			return err;
	}
	dev_info(&t->pdev->dev, "  CQE: wr_id %llu opcode %u status %u byte_len %u qp %u src_qp %u\n",
		 le64_to_cpu(out->wr_id), le32_to_cpu(out->opcode),
		 le32_to_cpu(out->status), le32_to_cpu(out->byte_len),
		 le32_to_cpu(out->qp_num), le32_to_cpu(out->src_qp));
	return 0;
}

/* Wait for n completions; any status but SUCCESS is an error. */
static int rb_wait_cqes(struct rb_dev *t, struct rsim_cqe *cqes, int n)
{
	int i, err;

	for (i = 0; i < n; i++) {
		err = rb_wait_cqe(t, &cqes[i]);
		if (err)
			return err;
		if (le32_to_cpu(cqes[i].status) != RSIM_WC_SUCCESS) {
			dev_err(&t->pdev->dev, "completion of wr_id %llu: status %u\n",
				le64_to_cpu(cqes[i].wr_id), le32_to_cpu(cqes[i].status));
			return -EIO;
		}
	}
	return 0;
}

/* A receive WQE with one SGE at offset off of the MR. */
static void rb_post_recv(struct rb_dev *t, u64 wr_id, u32 off, u32 len)
{
	struct rsim_recv_wqe *wqe = t->rq.va + RSIM_QUEUE_DATA_OFFSET +
				    (t->rq_prod << RB_RQ_ELEM_LOG2);

	memset(wqe, 0, 1 << RB_RQ_ELEM_LOG2);
	wqe->wr_id = cpu_to_le64(wr_id);
	wqe->dma.num_sge = cpu_to_le32(1);
	wqe->dma.length = cpu_to_le32(len);
	wqe->sge[0].addr = cpu_to_le64(RB_MR_IOVA + off);
	wqe->sge[0].length = cpu_to_le32(len);
	wqe->sge[0].lkey = cpu_to_le32(t->lkey);
	t->rq_prod = (t->rq_prod + 1) & ((1 << RB_WQ_LOG2) - 1);
	dma_wmb();	/* the WQE before the producer index that shows it */
	WRITE_ONCE(*rb_index(&t->rq, RSIM_QUEUE_PROD_OFFSET), cpu_to_le32(t->rq_prod));
	writel(t->qpn, t->db + A_RSIM_DB_RQ);	/* a hint; the device polls */
}

/*
 * A signaled send WQE with one SGE (off, len) of our MR.  remote is the
 * target iova of an RDMA opcode (our own MR: the QP talks to itself).
 */
static void rb_post_send(struct rb_dev *t, u64 wr_id, u32 opcode, u32 off,
			 u32 len, u64 remote, __be32 imm)
{
	struct rsim_send_wqe *wqe = t->sq.va + RSIM_QUEUE_DATA_OFFSET +
				    (t->sq_prod << RB_SQ_ELEM_LOG2);

	memset(wqe, 0, 1 << RB_SQ_ELEM_LOG2);
	wqe->wr_id = cpu_to_le64(wr_id);
	wqe->opcode = cpu_to_le32(opcode);
	wqe->send_flags = cpu_to_le32(RSIM_SEND_SIGNALED);
	wqe->ex = (__force __le32)imm;	/* big-endian on the wire, untouched */
	wqe->wr.rdma.remote_addr = cpu_to_le64(remote);
	wqe->wr.rdma.rkey = cpu_to_le32(t->rkey);
	wqe->dma.num_sge = cpu_to_le32(1);
	wqe->sge[0].addr = cpu_to_le64(RB_MR_IOVA + off);
	wqe->sge[0].length = cpu_to_le32(len);
	wqe->sge[0].lkey = cpu_to_le32(rb_mistake("bad_lkey") ? t->lkey + 1 : t->lkey);
	t->sq_prod = (t->sq_prod + 1) & ((1 << RB_WQ_LOG2) - 1);
	dma_wmb();
	WRITE_ONCE(*rb_index(&t->sq, RSIM_QUEUE_PROD_OFFSET), cpu_to_le32(t->sq_prod));
	writel(t->qpn, t->db + A_RSIM_DB_SQ);	/* the device starts sending */
}

static int rb_modify_qp(struct rb_dev *t, const char *name, struct rsim_qp_attr *a)
{
	struct rsim_cmd_qp_attr cmd = {
		.qpn = cpu_to_le32(t->qpn),
		.addr = cpu_to_le64(t->attr.dma),
	};

	memcpy(t->attr.va, a, sizeof(*a));	/* the device reads it by DMA */
	return rb_cmd(t, name, RSIM_CMD_MODIFY_QP, &cmd, NULL);
}

/* Step 9: RESET -> INIT -> RTR -> RTS, the QP connected to itself. */
static int rb_qp_to_rts(struct rb_dev *t)
{
	struct rsim_qp_attr a = {};
	int err;

	a.attr_mask = cpu_to_le32(RSIM_QP_STATE | RSIM_QP_PKEY_INDEX |
				  RSIM_QP_PORT | RSIM_QP_ACCESS_FLAGS);
	a.qp_state = RSIM_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = cpu_to_le32(RSIM_ACCESS_REMOTE_READ | RSIM_ACCESS_REMOTE_WRITE);
	err = rb_modify_qp(t, "MODIFY_QP RESET->INIT", &a);
	if (err)
		return err;

	/* The address vector: our own GID, so every frame loops back. */
	memset(&a, 0, sizeof(a));
	a.attr_mask = cpu_to_le32(RSIM_QP_STATE | RSIM_QP_AV | RSIM_QP_PATH_MTU |
				  RSIM_QP_DEST_QPN | RSIM_QP_RQ_PSN |
				  RSIM_QP_MAX_DEST_RD_ATOMIC | RSIM_QP_MIN_RNR_TIMER);
	if (rb_mistake("rtr_no_av"))
		a.attr_mask &= cpu_to_le32(~RSIM_QP_AV);
	a.qp_state = RSIM_QPS_RTR;
	a.path_mtu = t->active_mtu;
	a.dest_qp_num = cpu_to_le32(t->qpn);
	a.rq_psn = cpu_to_le32(RB_PSN);
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;		/* 0.64 ms */
	memcpy(a.av.dgid, t->gid, sizeof(t->gid));
	memcpy(a.av.dmac, t->port_mac, sizeof(t->port_mac)); /* not used by loopback */
	a.av.sgid_index = 0;
	a.av.hop_limit = 64;
	a.av.network_type = RSIM_NET_IPV4;
	err = rb_modify_qp(t, "MODIFY_QP INIT->RTR", &a);
	if (err)
		return err;

	if (rb_mistake("post_before_rts"))
		rb_post_send(t, 99, RSIM_WR_SEND, RB_SEND_OFF, RB_MSG_LEN, 0, 0);

	memset(&a, 0, sizeof(a));
	a.attr_mask = cpu_to_le32(RSIM_QP_STATE | RSIM_QP_TIMEOUT | RSIM_QP_RETRY_CNT |
				  RSIM_QP_RNR_RETRY | RSIM_QP_SQ_PSN |
				  RSIM_QP_MAX_QP_RD_ATOMIC);
	a.qp_state = RSIM_QPS_RTS;
	a.timeout = 14;			/* 67 ms */
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	/* We send to ourselves: our SQ PSN is what our responder expects. */
	a.sq_psn = cpu_to_le32(rb_mistake("psn_mismatch") ? RB_PSN + 5 : RB_PSN);
	a.max_rd_atomic = 1;
	err = rb_modify_qp(t, "MODIFY_QP RTR->RTS", &a);
	if (!err)
		step(t, 9, "QP %u: RESET -> INIT -> RTR -> RTS, path MTU %u, connected to itself\n",
		     t->qpn, 128 << t->active_mtu);
	return err;
}

/* Step 10: a receive, then a SEND from the first page to the second. */
static int rb_send_loopback(struct rb_dev *t)
{
	u8 *src = t->mr.va + RB_SEND_OFF, *dst = t->mr.va + RB_RECV_OFF;
	struct rsim_cqe cqe[2];
	int i, err;

	for (i = 0; i < RB_MSG_LEN; i++)
		src[i] = i * 7 + 3;
	memset(dst, 0, RB_MSG_LEN);
	/* Armed before posting, so that the first completion interrupts. */
	rb_arm(t);
	rb_post_recv(t, 1, RB_RECV_OFF, RB_MSG_LEN);
	rb_post_send(t, 2, RSIM_WR_SEND, RB_SEND_OFF, RB_MSG_LEN, 0, 0);
	step(t, 10, "posted a receive and a SEND of %d bytes, DB_SQ <- QPN %u\n",
	     RB_MSG_LEN, t->qpn);
	err = rb_wait_event(t);
	err = err ?: rb_wait_cqes(t, cqe, 2);
	if (err)
		return err;
	step(t, 10, "completion interrupt on vector 1 (%u so far); 2 CQEs polled\n",
	     t->cq_events);
	for (i = 0; i < 2; i++) {
		u32 op = le32_to_cpu(cqe[i].opcode);

		if ((op == RSIM_WC_RECV && le32_to_cpu(cqe[i].byte_len) != RB_MSG_LEN) ||
		    (op != RSIM_WC_RECV && op != RSIM_WC_SEND)) {
			dev_err(&t->pdev->dev, "unexpected completion: opcode %u length %u\n",
				op, le32_to_cpu(cqe[i].byte_len));
			return -EIO;
		}
	}
	if (memcmp(src, dst, RB_MSG_LEN)) {
		dev_err(&t->pdev->dev, "received data differs from what was sent\n");
		return -EIO;
	}
	step(t, 10, "SEND of %d bytes came back through loopback, data matches\n", RB_MSG_LEN);
	return 0;
}

/*
 * Exercise "read": RDMA READ the first RB_MSG_LEN bytes of the MR (the
 * SEND's source, remote address RB_MR_IOVA, t->rkey) into RB_EX_OFF, wait
 * for the completion and check it and the data.  On success print
 * "exercise read: ok, RDMA READ of <bytes> bytes, data matches".
 */
static int rb_ex_read(struct rb_dev *t)
{
	pr_info("exercise read: not done\n");
	return -EOPNOTSUPP;
}

/*
 * Exercise "write_imm": RDMA WRITE with immediate data 0x1234abcd of the
 * first RB_MSG_LEN bytes of the MR to RB_EX_OFF.  It consumes a receive
 * WQE: post one first.  Check both completions (the receiver's says
 * RECV_RDMA_WITH_IMM, with the immediate in ex), the immediate and the
 * data.  On success print "exercise write_imm: ok, <bytes> bytes written,
 * immediate 0x1234abcd received".
 */
static int rb_ex_write_imm(struct rb_dev *t)
{
	pr_info("exercise write_imm: not done\n");
	return -EOPNOTSUPP;
}

static void rb_exercise(struct rb_dev *t)
{
	int err;

	if (!*exercise)
		return;
	memset(t->mr.va + RB_EX_OFF, 0, PAGE_SIZE);
	if (!strcmp(exercise, "read"))
		err = rb_ex_read(t);
	else if (!strcmp(exercise, "write_imm"))
		err = rb_ex_write_imm(t);
	else
		err = -EINVAL;
	if (err)
		pr_info("exercise %s: failed (%d)\n", exercise, err);
}

/* Step 1: the PCI function, its BARs, bus mastering and the DMA mask. */
static int rb_step_pci(struct rb_dev *t)
{
	struct pci_dev *pdev = t->pdev;
	int err;

	err = pci_enable_device(pdev);
	if (err)
		return err;
	err = pci_request_regions(pdev, KBUILD_MODNAME);
	if (err)
		return err;
	t->regions = true;
	pci_set_master(pdev);	/* the device reads and writes our queues */
	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (err)
		return err;
	t->regs = pci_iomap(pdev, RSIM_BAR_REGS, RSIM_REGS_SIZE);
	t->db = pci_iomap(pdev, RSIM_BAR_DOORBELL, RSIM_DB_PAGE_SIZE);
	if (!t->regs || !t->db)
		return -ENOMEM;
	step(t, 1, "PCI %04x:%04x rev %u class %06x, BAR0 %pR, BAR2 %pR\n",
	     pdev->vendor, pdev->device, pdev->revision, pdev->class,
	     &pdev->resource[RSIM_BAR_REGS], &pdev->resource[RSIM_BAR_DOORBELL]);
	return 0;
}

/* A timeout register that reads 0 or absurdly much is taken as broken. */
static u32 rb_timeout(struct rb_dev *t, u32 reg, u32 fallback)
{
	u32 ms = readl(t->regs + reg);

	return ms && ms <= RSIM_TIMEOUT_MAX_MS ? ms : fallback;
}

/* Step 2: check the interface version, then reset to a known state. */
static int rb_step_reset(struct rb_dev *t)
{
	u32 ver = readl(t->regs + A_RSIM_VERSION), reset_ms, st;
	unsigned long end;

	if (RB_GET(R_RSIM_VERSION_MAJOR_MASK, ver) != RSIM_VERSION_MAJOR) {
		dev_err(&t->pdev->dev, "VERSION 0x%08x: major %u, this driver knows %d\n",
			ver, RB_GET(R_RSIM_VERSION_MAJOR_MASK, ver), RSIM_VERSION_MAJOR);
		return -ENODEV;
	}
	reset_ms = rb_timeout(t, A_RSIM_RESET_TIMEOUT, RSIM_RESET_TIMEOUT_MS);
	t->admin_timeout_ms = rb_timeout(t, A_RSIM_ADMIN_TIMEOUT, RSIM_ADMIN_TIMEOUT_MS);
	writel(R_RSIM_DEV_CTRL_RESET_MASK, t->regs + A_RSIM_DEV_CTRL);
	/* The reset is done when the write returns; poll anyway, bounded. */
	end = jiffies + msecs_to_jiffies(reset_ms);
	while ((st = readl(t->regs + A_RSIM_DEV_STATUS))) {
		if (time_after(jiffies, end)) {
			dev_err(&t->pdev->dev, "reset: DEV_STATUS 0x%x after %u ms\n",
				st, reset_ms);
			return -ETIMEDOUT;
		}
		usleep_range(100, 200);
	}
	step(t, 2, "VERSION 0x%08x (%u.%u), FEATURES 0x%x; reset: DEV_STATUS 0x%x\n",
	     ver, RB_GET(R_RSIM_VERSION_MAJOR_MASK, ver),
	     RB_GET(R_RSIM_VERSION_MINOR_MASK, ver),
	     readl(t->regs + A_RSIM_FEATURES), st);
	step(t, 2, "CAP_MAX_QP %u CAP_MAX_CQE %u CAP_MTU %u MSIX_VECTORS %u\n",
	     readl(t->regs + A_RSIM_CAP_MAX_QP), readl(t->regs + A_RSIM_CAP_MAX_CQE),
	     readl(t->regs + A_RSIM_CAP_MTU), readl(t->regs + A_RSIM_MSIX_VECTORS));
	return 0;
}

/* Step 3: MSI-X vector 0 for async events, vector 1 for our EQ. */
static int rb_step_msix(struct rb_dev *t)
{
	int n, err;

	n = pci_alloc_irq_vectors(t->pdev, 2, 2, PCI_IRQ_MSIX);
	if (n < 0)
		return n;
	err = request_irq(pci_irq_vector(t->pdev, 0), rb_async_irq, 0,
			  KBUILD_MODNAME "-async", t);
	if (err)
		return err;
	t->nr_irqs = 1;
	err = request_irq(pci_irq_vector(t->pdev, 1), rb_eq_irq, 0,
			  KBUILD_MODNAME "-eq", t);
	if (err)
		return err;
	t->nr_irqs = 2;
	step(t, 3, "MSI-X: %d vectors: IRQ %d (0: async events), IRQ %d (1: our EQ)\n",
	     n, pci_irq_vector(t->pdev, 0), pci_irq_vector(t->pdev, 1));
	return 0;
}

/* Step 4: admin queue, its completion queue and the async EQ; ENABLE. */
static int rb_step_admin(struct rb_dev *t)
{
	struct rsim_cmd_handle nop = {};
	u32 st;
	int err;

	err = rb_alloc(t, &t->aq, RB_AQ_DEPTH * RSIM_AQ_ENTRY_SIZE);
	err = err ?: rb_alloc(t, &t->acq, RB_AQ_DEPTH * RSIM_ACQ_ENTRY_SIZE);
	err = err ?: rb_alloc(t, &t->aeq, RB_AEQ_DEPTH * RSIM_EQ_ENTRY_SIZE);
	if (err)
		return err;
	rb_write64(t, A_RSIM_AQ_BASE_LO, t->aq.dma);
	writel(rb_mistake("aq_depth") ? 12 : RB_AQ_DEPTH, t->regs + A_RSIM_AQ_DEPTH);
	rb_write64(t, A_RSIM_ACQ_BASE_LO, t->acq.dma);
	writel(RB_AQ_DEPTH, t->regs + A_RSIM_ACQ_DEPTH);
	rb_write64(t, A_RSIM_AEQ_BASE_LO, t->aeq.dma);
	writel(RB_AEQ_DEPTH, t->regs + A_RSIM_AEQ_DEPTH);
	t->acq_phase = 1;	/* the first pass through a ring has phase 1 */
	t->aeq_phase = 1;
	writel(R_RSIM_DEV_CTRL_ENABLE_MASK, t->regs + A_RSIM_DEV_CTRL);
	st = readl(t->regs + A_RSIM_DEV_STATUS);
	if (!(st & R_RSIM_DEV_STATUS_READY_MASK)) {
		dev_err(&t->pdev->dev, "ENABLE: not READY, DEV_STATUS 0x%x (fatal reason %u)\n",
			st, RB_GET(R_RSIM_DEV_STATUS_FATAL_REASON_MASK, st));
		return -EIO;
	}
	/* Async events interrupt; admin completions stay masked: we poll. */
	writel(R_RSIM_INTR_MASK_ADMIN_MASK, t->regs + A_RSIM_INTR_MASK);
	err = rb_cmd(t, "NOP", RSIM_CMD_NOP, &nop, NULL);
	if (err)
		return err;
	step(t, 4, "AQ, ACQ: %d x 64 bytes at %pad, %pad; AEQ: %d x 16 at %pad\n",
	     RB_AQ_DEPTH, &t->aq.dma, &t->acq.dma, RB_AEQ_DEPTH, &t->aeq.dma);
	step(t, 4, "ENABLE -> DEV_STATUS 0x%x (READY); NOP: OK\n", st);
	return 0;
}

/* Step 5: what the device and its port say, and our loopback GID. */
static int rb_step_port(struct rb_dev *t)
{
	struct rsim_cmd_handle q = {};
	struct rsim_admin_cqe cqe;
	struct rsim_query_device_resp *dev = (void *)cqe.result;
	struct rsim_query_port_resp *port = (void *)cqe.result;
	struct rsim_cmd_gid gid = { .type = RSIM_GID_TYPE_ROCE_V2 };
	u64 guid;
	int err;

	err = rb_cmd(t, "QUERY_DEVICE", RSIM_CMD_QUERY_DEVICE, &q, &cqe);
	if (err)
		return err;
	guid = le64_to_cpu(dev->node_guid);
	err = rb_cmd(t, "QUERY_PORT", RSIM_CMD_QUERY_PORT, &q, &cqe);
	if (err)
		return err;
	memcpy(t->port_mac, port->mac, sizeof(t->port_mac));
	t->active_mtu = port->active_mtu;
	/*
	 * An IPv4-mapped RoCEv2 GID (::ffff:192.0.2.1, a documentation
	 * address).  Frames to an address of the device's own GID table
	 * never leave it: this is how the QP talks to itself.
	 */
	t->gid[10] = 0xff;
	t->gid[11] = 0xff;
	t->gid[12] = 192;
	t->gid[13] = 0;
	t->gid[14] = 2;
	t->gid[15] = 1;
	memcpy(gid.gid, t->gid, sizeof(t->gid));
	err = rb_cmd(t, "ADD_GID", RSIM_CMD_ADD_GID, &gid, NULL);
	if (err)
		return err;
	t->gid_added = 0;
	step(t, 5, "node GUID %016llx; port 1 state %u, MAC %pM, MTU %u -> path MTU %u\n",
	     guid, port->state, t->port_mac, le32_to_cpu(port->eth_mtu),
	     128 << t->active_mtu);
	step(t, 5, "GID 0 = %pI6: our loopback address\n", t->gid);
	return 0;
}

/* Step 6: a completion EQ on vector 1; CQs report to it. */
static int rb_step_eq(struct rb_dev *t)
{
	struct rsim_cmd_create_eq c = {
		.vector = cpu_to_le32(1),
		.depth = cpu_to_le32(RB_EQ_DEPTH),
	};
	int err;

	err = rb_alloc(t, &t->eq, RB_EQ_DEPTH * RSIM_EQ_ENTRY_SIZE);
	if (err)
		return err;
	t->eq_phase = 1;
	c.addr = cpu_to_le64(t->eq.dma);
	err = rb_create(t, "CREATE_EQ", RSIM_CMD_CREATE_EQ, &c, &t->eqn, NULL);
	if (!err)
		step(t, 6, "completion EQ %u: %d entries at %pad, MSI-X vector 1\n",
		     t->eqn, RB_EQ_DEPTH, &t->eq.dma);
	return err;
}

/* A ring: the Soft-RoCE header (indices) and 2^log2 elements after it. */
static int rb_ring(struct rb_dev *t, struct rb_buf *b, struct rsim_queue_desc *q,
		   int log2_depth, int log2_elem)
{
	int err = rb_alloc(t, b, RSIM_QUEUE_DATA_OFFSET + (1 << (log2_depth + log2_elem)));

	if (err)
		return err;
	*rb_index(b, RSIM_QUEUE_LOG2_ELEM_OFFSET) = cpu_to_le32(log2_elem);
	*rb_index(b, RSIM_QUEUE_MASK_OFFSET) = cpu_to_le32((1 << log2_depth) - 1);
	q->addr = cpu_to_le64(b->dma);
	q->level = RSIM_PBL_LEVEL0;	/* one contiguous buffer, no page list */
	q->page_shift = 0;		/* level 0: must be 0 (and npages too) */
	q->log2_elem_size = log2_elem;
	q->log2_depth = log2_depth;
	return 0;
}

/* Step 7: a protection domain and a CQ. */
static int rb_step_pd_cq(struct rb_dev *t)
{
	struct rsim_cmd_handle pd = {};
	struct rsim_cmd_create_cq c = { .eqn = cpu_to_le32(t->eqn) };
	int err;

	err = rb_create(t, "ALLOC_PD", RSIM_CMD_ALLOC_PD, &pd, &t->pdn, NULL);
	err = err ?: rb_ring(t, &t->cq, &c.q, RB_CQ_LOG2, RSIM_CQE_LOG2_SLOT);
	if (err)
		return err;
	if (rb_mistake("cq_page_shift"))
		c.q.page_shift = PAGE_SHIFT;
	err = rb_create(t, "CREATE_CQ", RSIM_CMD_CREATE_CQ, &c, &t->cqn, NULL);
	if (!err)
		step(t, 7, "PD %u; CQ %u: %d slots of 64 bytes at %pad, reports to EQ %u\n",
		     t->pdn, t->cqn, 1 << RB_CQ_LOG2, &t->cq.dma, t->eqn);
	return err;
}

/* Step 8: an RC QP (it starts in RESET) and an MR over our buffer. */
static int rb_step_qp_mr(struct rb_dev *t)
{
	struct rsim_cmd_create_qp c = {
		.qp_type = RSIM_QPT_RC,
		.max_send_sge = 1,
		.max_recv_sge = 1,
		.pdn = cpu_to_le32(t->pdn),
		.send_cqn = cpu_to_le32(t->cqn),
		.recv_cqn = cpu_to_le32(t->cqn),
		.srqn = cpu_to_le32(RSIM_NO_SRQ),
	};
	struct rsim_cmd_reg_mr m = {
		.pdn = cpu_to_le32(t->pdn),
		.access = cpu_to_le32(RSIM_ACCESS_LOCAL_WRITE | RSIM_ACCESS_REMOTE_READ |
				      RSIM_ACCESS_REMOTE_WRITE),
		.iova = cpu_to_le64(RB_MR_IOVA),
		.length = cpu_to_le64(RB_MR_SIZE),
		.level = RSIM_PBL_LEVEL0,
	};
	int err;

	err = rb_ring(t, &t->sq, &c.sq, RB_WQ_LOG2, RB_SQ_ELEM_LOG2);
	err = err ?: rb_ring(t, &t->rq, &c.rq, RB_WQ_LOG2, RB_RQ_ELEM_LOG2);
	err = err ?: rb_alloc(t, &t->attr, sizeof(struct rsim_qp_attr));
	err = err ?: rb_create(t, "CREATE_QP", RSIM_CMD_CREATE_QP, &c, &t->qpn, NULL);
	err = err ?: rb_alloc(t, &t->mr, RB_MR_SIZE);
	if (err)
		return err;
	m.pbl_addr = cpu_to_le64(t->mr.dma);
	err = rb_create(t, "REG_MR", RSIM_CMD_REG_MR, &m, &t->lkey, &t->rkey);
	if (err)
		return err;
	step(t, 8, "QP %u: RC, in RESET, SQ/RQ %d WQEs; MR lkey 0x%x rkey 0x%x\n",
	     t->qpn, 1 << RB_WQ_LOG2, t->lkey, t->rkey);
	step(t, 8, "MR: %lu bytes at iova 0x%llx (DMA %pad)\n", RB_MR_SIZE, RB_MR_IOVA, &t->mr.dma);
	return 0;
}

/* Undo whatever was done, newest first; safe after a partial probe. */
static void rb_teardown(struct rb_dev *t)
{
	struct pci_dev *pdev = t->pdev;
	int i;

	if (t->acq.va && (readl(t->regs + A_RSIM_DEV_STATUS) & R_RSIM_DEV_STATUS_READY_MASK)) {
		rb_destroy(t, "DESTROY_QP", RSIM_CMD_DESTROY_QP, &t->qpn);
		rb_destroy(t, "DEREG_MR", RSIM_CMD_DEREG_MR, &t->lkey);
		rb_destroy(t, "DESTROY_CQ", RSIM_CMD_DESTROY_CQ, &t->cqn);
		rb_destroy(t, "DEALLOC_PD", RSIM_CMD_DEALLOC_PD, &t->pdn);
		if (t->gid_added != RB_NONE) {
			struct rsim_cmd_gid gid = { .index = cpu_to_le32(t->gid_added) };

			if (!rb_cmd(t, "DEL_GID", RSIM_CMD_DEL_GID, &gid, NULL))
				dev_info(&pdev->dev, "teardown: DEL_GID %u\n", t->gid_added);
		}
		rb_destroy(t, "DESTROY_EQ", RSIM_CMD_DESTROY_EQ, &t->eqn);
	}
	/* A reset stops all DMA and interrupts before we free the memory. */
	if (t->regs)
		writel(R_RSIM_DEV_CTRL_RESET_MASK, t->regs + A_RSIM_DEV_CTRL);
	for (i = t->nr_irqs - 1; i >= 0; i--)
		free_irq(pci_irq_vector(pdev, i), t);
	pci_free_irq_vectors(pdev);
	rb_free(t, &t->mr);
	rb_free(t, &t->attr);
	rb_free(t, &t->rq);
	rb_free(t, &t->sq);
	rb_free(t, &t->cq);
	rb_free(t, &t->eq);
	rb_free(t, &t->aeq);
	rb_free(t, &t->acq);
	rb_free(t, &t->aq);
	if (t->db)
		pci_iounmap(pdev, t->db);
	if (t->regs)
		pci_iounmap(pdev, t->regs);
	if (t->regions)
		pci_release_regions(pdev);
	if (pci_is_enabled(pdev))
		pci_disable_device(pdev);
	kfree(t);
}

static int rb_probed;

static int rb_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct rb_dev *t = kzalloc(sizeof(*t), GFP_KERNEL);
	int err;

	if (!t)
		return -ENOMEM;
	t->pdev = pdev;
	t->gid_added = RB_NONE;
	t->eqn = RB_NONE;
	t->pdn = RB_NONE;
	t->cqn = RB_NONE;
	t->qpn = RB_NONE;
	t->lkey = RB_NONE;
	init_completion(&t->cq_event);
	rb_probed++;

	err = rb_step_pci(t);
	err = err ?: rb_step_reset(t);
	err = err ?: rb_step_msix(t);
	err = err ?: rb_step_admin(t);
	err = err ?: rb_step_port(t);
	err = err ?: rb_step_eq(t);
	err = err ?: rb_step_pd_cq(t);
	err = err ?: rb_step_qp_mr(t);
	err = err ?: rb_qp_to_rts(t);
	err = err ?: rb_send_loopback(t);
	if (err) {
		dev_err(&pdev->dev, "bring-up failed (%d), undoing it\n", err);
		rb_teardown(t);
		return err;
	}
	rb_exercise(t);
	pci_set_drvdata(pdev, t);
	return 0;
}

static void rb_remove(struct pci_dev *pdev)
{
	rb_teardown(pci_get_drvdata(pdev));
	dev_info(&pdev->dev, "removed: objects destroyed, device reset, memory and IRQs freed\n");
}

static const struct pci_device_id rb_ids[] = {
	{ PCI_DEVICE(RSIM_PCI_VENDOR_ID, RSIM_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, rb_ids);

static struct pci_driver rb_driver = {
	.name = KBUILD_MODNAME,
	.id_table = rb_ids,
	.probe = rb_probe,
	.remove = rb_remove,
};

static int __init rb_init(void)
{
	int err = pci_register_driver(&rb_driver);

	/* Probing is synchronous: no probe means no free rdma-sim device. */
	if (!err && !rb_probed)
		pr_info("no unbound rdma-sim device (is rdma_sim.ko loaded?)\n");
	return err;
}
module_init(rb_init);

static void __exit rb_exit(void)
{
	pci_unregister_driver(&rb_driver);
}
module_exit(rb_exit);

MODULE_DESCRIPTION("rdma-sim bring-up tutorial driver (no RDMA core)");
MODULE_LICENSE("GPL");
