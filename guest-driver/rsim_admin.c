// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma-sim guest driver: admin queue mechanics (datasheet section 5).
 *
 * Commands go into the admin queue (AQ), completions come back in the
 * admin completion queue (ACQ) with a phase bit.  Each submitter owns a
 * slot; the slot index and a generation number form the command id.  The
 * device executes commands in order and completes each one, so the
 * completion in ACQ entry n is the one of the command in AQ entry n (the
 * two queues have one depth): the driver finds the command by its own
 * position, and the id and AQ head in the completion must agree with it.
 * A completion that does not fails its command with -EIO at once.  At
 * most depth - 1 commands are outstanding (a semaphore counts free slots).
 *
 * Waiting: with interrupts (after probe has enabled them) a sleeping
 * submitter waits on its slot's completion, checking the ACQ itself every
 * 100 ms in case an interrupt went missing.  Before interrupts work, and
 * for callers that cannot sleep, the submitter polls the ACQ.  Every
 * command is bounded by the device's ADMIN_TIMEOUT; a timeout means the
 * device no longer works: it is declared dead (and reset, so it stops all
 * DMA) and every later command fails at once with -EIO.
 *
 * Below the admin queue is nothing of the driver's: this file also holds
 * the device's health (rsim_dev_fatal, for whoever finds it failed) and
 * the DMA buffers the device shares, so that the files above call down
 * only.  What a failure means for the ib_device's users is rsim_main.c's
 * fatal_work, queued here, not called.
 */

#include <linux/delay.h>
#include <linux/ktime.h>

#include "rsim.h"

#define RSIM_ADMIN_IRQ_RECHECK_MS	100
/* Callers that cannot sleep busy-wait this long between looks at the ACQ. */
#define RSIM_ADMIN_POLL_US		10

static const char *const rsim_opcode_names[RSIM_CMD_MAX] = {
	[RSIM_CMD_NOP] = "NOP",
	[RSIM_CMD_QUERY_DEVICE] = "QUERY_DEVICE",
	[RSIM_CMD_QUERY_PORT] = "QUERY_PORT",
	[RSIM_CMD_SET_PORT] = "SET_PORT",
	[RSIM_CMD_QUERY_STATS] = "QUERY_STATS",
	[RSIM_CMD_CREATE_EQ] = "CREATE_EQ",
	[RSIM_CMD_DESTROY_EQ] = "DESTROY_EQ",
	[RSIM_CMD_CREATE_ETHQ] = "CREATE_ETHQ",
	[RSIM_CMD_DESTROY_ETHQ] = "DESTROY_ETHQ",
	[RSIM_CMD_ALLOC_PD] = "ALLOC_PD",
	[RSIM_CMD_DEALLOC_PD] = "DEALLOC_PD",
	[RSIM_CMD_CREATE_CQ] = "CREATE_CQ",
	[RSIM_CMD_RESIZE_CQ] = "RESIZE_CQ",
	[RSIM_CMD_DESTROY_CQ] = "DESTROY_CQ",
	[RSIM_CMD_ARM_CQ] = "ARM_CQ",
	[RSIM_CMD_CREATE_QP] = "CREATE_QP",
	[RSIM_CMD_MODIFY_QP] = "MODIFY_QP",
	[RSIM_CMD_QUERY_QP] = "QUERY_QP",
	[RSIM_CMD_DESTROY_QP] = "DESTROY_QP",
	[RSIM_CMD_CREATE_SRQ] = "CREATE_SRQ",
	[RSIM_CMD_MODIFY_SRQ] = "MODIFY_SRQ",
	[RSIM_CMD_QUERY_SRQ] = "QUERY_SRQ",
	[RSIM_CMD_DESTROY_SRQ] = "DESTROY_SRQ",
	[RSIM_CMD_CREATE_AH] = "CREATE_AH",
	[RSIM_CMD_DESTROY_AH] = "DESTROY_AH",
	[RSIM_CMD_REG_MR] = "REG_MR",
	[RSIM_CMD_DEREG_MR] = "DEREG_MR",
	[RSIM_CMD_ALLOC_STAG] = "ALLOC_STAG",
	[RSIM_CMD_MR_TRANSLATE] = "MR_TRANSLATE",
	[RSIM_CMD_ADD_GID] = "ADD_GID",
	[RSIM_CMD_DEL_GID] = "DEL_GID",
};

const char *rsim_opcode_name(u8 opcode)
{
	if (opcode < RSIM_CMD_MAX && rsim_opcode_names[opcode])
		return rsim_opcode_names[opcode];
	return "UNKNOWN";
}

/* The status table of datasheet section 5 */
int rsim_status_to_errno(u8 status)
{
	switch (status) {
	case RSIM_STS_OK:
		return 0;
	case RSIM_STS_BAD_OPCODE:
	case RSIM_STS_UNSUPPORTED:
		return -EOPNOTSUPP;
	case RSIM_STS_INVALID:
	case RSIM_STS_RESERVED:
	case RSIM_STS_BAD_HANDLE:
	case RSIM_STS_BAD_STATE:
	case RSIM_STS_LIMIT:
		return -EINVAL;
	case RSIM_STS_NO_RESOURCES:
		return -ENOMEM;
	case RSIM_STS_BUSY:
		return -EBUSY;
	case RSIM_STS_DMA:
		return -EFAULT;
	case RSIM_STS_ACCESS:
		return -EACCES;
	case RSIM_STS_RANGE:
		return -ERANGE;
	case RSIM_STS_EXISTS:
		return -EEXIST;
	default:
		return -EIO;
	}
}

int rsim_admin_init(struct rsim_dev *dev)
{
	struct rsim_admin *aq = &dev->aq;
	u32 depth = min_t(u32, RSIM_AQ_DEPTH, dev->caps.max_aq_depth);
	int err;
	u32 i;

	depth = rounddown_pow_of_two(depth);
	if (depth < 2) {
		dev_err(&dev->pdev->dev, "CAP_MAX_AQ_DEPTH %u is below 2\n",
			dev->caps.max_aq_depth);
		return -EINVAL;
	}
	aq->depth = depth;
	err = rsim_dma_alloc(dev, &aq->sq, depth * RSIM_AQ_ENTRY_SIZE);
	if (err)
		return err;
	err = rsim_dma_alloc(dev, &aq->cq, depth * RSIM_ACQ_ENTRY_SIZE);
	if (err)
		goto err_sq;
	aq->slots = kcalloc(depth, sizeof(*aq->slots), GFP_KERNEL);
	aq->at = kcalloc(depth, sizeof(*aq->at), GFP_KERNEL);
	if (!aq->slots || !aq->at) {
		err = -ENOMEM;
		goto err_slots;
	}
	for (i = 0; i < depth; i++)
		init_completion(&aq->slots[i].done);
	spin_lock_init(&aq->lock);
	sema_init(&aq->avail, depth - 1);
	aq->sq_tail = 0;
	aq->cq_head = 0;
	aq->cq_phase = true;

	rsim_wr32(dev, A_RSIM_AQ_BASE_LO, lower_32_bits(aq->sq.dma));
	rsim_wr32(dev, A_RSIM_AQ_BASE_HI, upper_32_bits(aq->sq.dma));
	rsim_wr32(dev, A_RSIM_AQ_DEPTH, depth);
	rsim_wr32(dev, A_RSIM_ACQ_BASE_LO, lower_32_bits(aq->cq.dma));
	rsim_wr32(dev, A_RSIM_ACQ_BASE_HI, upper_32_bits(aq->cq.dma));
	rsim_wr32(dev, A_RSIM_ACQ_DEPTH, depth);
	return 0;

err_slots:
	kfree(aq->at);
	kfree(aq->slots);
	rsim_dma_free(dev, &aq->cq);
err_sq:
	rsim_dma_free(dev, &aq->sq);
	return err;
}

/* Only after the device has been reset: it no longer touches the queues. */
void rsim_admin_destroy(struct rsim_dev *dev)
{
	struct rsim_admin *aq = &dev->aq;

	kfree(aq->slots);
	aq->slots = NULL;
	kfree(aq->at);
	aq->at = NULL;
	rsim_dma_free(dev, &aq->cq);
	rsim_dma_free(dev, &aq->sq);
}

/* Consume new completions; called with aq->lock held. */
static void __rsim_admin_process(struct rsim_dev *dev)
{
	struct rsim_admin *aq = &dev->aq;
	struct rsim_admin_cqe *cqe;
	struct rsim_admin_slot *slot;
	u32 dw0, n = 0, next;
	u16 id, sq_head;

	for (;;) {
		cqe = aq->cq.va + aq->cq_head * RSIM_ACQ_ENTRY_SIZE;
		dw0 = le32_to_cpu(READ_ONCE(cqe->dw0));
		if (!!FIELD_GET(R_RSIM_CQE_HDR_PHASE_MASK, dw0) != aq->cq_phase)
			break;
		/* The rest of the entry was written before dword 0. */
		dma_rmb();
		id = FIELD_GET(R_RSIM_CQE_HDR_ID_MASK, dw0);
		sq_head = le16_to_cpu(READ_ONCE(cqe->sq_head));
		next = (aq->cq_head + 1) & (aq->depth - 1);
		slot = aq->at[aq->cq_head];
		aq->at[aq->cq_head] = NULL;
		if (!slot || !slot->busy || slot->completed) {
			rsim_log(warn_ratelimited, dev,
				 "admin completion %u (id 0x%04x, status 0x%02x) for no command ignored\n",
				 aq->cq_head, id,
				 (u32)FIELD_GET(R_RSIM_CQE_HDR_STATUS_MASK, dw0));
		} else {
			memcpy(&slot->cqe, cqe, sizeof(*cqe));
			slot->cqe.dw0 = cpu_to_le32(dw0);
			slot->damaged = slot->id != id || sq_head != next;
			if (slot->damaged)
				rsim_log(warn_ratelimited, dev,
					 "admin completion %u has id 0x%04x and AQ head %u, not 0x%04x and %u: failing the command\n",
					 aq->cq_head, id, sq_head, slot->id,
					 next);
			slot->completed = true;
			complete(&slot->done);
		}
		aq->cq_head = next;
		if (!aq->cq_head)
			aq->cq_phase = !aq->cq_phase;
		n++;
	}
	if (n)
		rsim_wr32(dev, A_RSIM_ACQ_HEAD, aq->cq_head);
}

void rsim_admin_process(struct rsim_dev *dev)
{
	unsigned long flags;

	if (!dev->aq.slots)
		return;
	spin_lock_irqsave(&dev->aq.lock, flags);
	__rsim_admin_process(dev);
	spin_unlock_irqrestore(&dev->aq.lock, flags);
}

/* The device is dead: wake every waiter, it will see the flag. */
void rsim_admin_fail_all(struct rsim_dev *dev)
{
	struct rsim_admin *aq = &dev->aq;
	unsigned long flags;
	u32 i;

	if (!aq->slots)
		return;
	spin_lock_irqsave(&aq->lock, flags);
	for (i = 0; i < aq->depth; i++)
		if (aq->slots[i].busy)
			complete(&aq->slots[i].done);
	spin_unlock_irqrestore(&aq->lock, flags);
}

static int rsim_admin_take_slot(struct rsim_dev *dev, bool atomic,
				ktime_t deadline)
{
	struct rsim_admin *aq = &dev->aq;

	if (!atomic) {
		long left = ktime_ms_delta(deadline, ktime_get());

		if (down_timeout(&aq->avail,
				 msecs_to_jiffies(max_t(long, left, 1))))
			return -ETIMEDOUT;
		return 0;
	}
	while (down_trylock(&aq->avail)) {
		if (rsim_dead(dev))
			return -EIO;
		if (ktime_after(ktime_get(), deadline))
			return -ETIMEDOUT;
		rsim_admin_process(dev);
		udelay(RSIM_ADMIN_POLL_US);
	}
	return 0;
}

static void rsim_admin_release_slot(struct rsim_dev *dev,
				    struct rsim_admin_slot *slot)
{
	unsigned long flags;

	spin_lock_irqsave(&dev->aq.lock, flags);
	slot->busy = false;
	spin_unlock_irqrestore(&dev->aq.lock, flags);
	up(&dev->aq.avail);
}

/*
 * Wait for the completion of slot.  Returns 0 when it completed, -EIO when
 * the device died meanwhile, -ETIMEDOUT after the deadline.
 */
static int rsim_admin_wait(struct rsim_dev *dev, struct rsim_admin_slot *slot,
			   bool atomic, ktime_t deadline)
{
	bool use_irq = !atomic && test_bit(RSIM_FLAG_ADMIN_IRQ, &dev->flags);
	unsigned long recheck = msecs_to_jiffies(RSIM_ADMIN_IRQ_RECHECK_MS);
	unsigned int polls = 0;

	for (;;) {
		if (use_irq)
			wait_for_completion_timeout(&slot->done, recheck);
		/* Polling, or an interrupt that got lost: look ourselves. */
		if (!READ_ONCE(slot->completed))
			rsim_admin_process(dev);
		if (READ_ONCE(slot->completed))
			return 0;
		if (rsim_dead(dev))
			return -EIO;
		if (ktime_after(ktime_get(), deadline))
			return -ETIMEDOUT;
		if (use_irq || !(++polls % 64)) {
			/* A device that stopped never completes: notice. */
			if (!rsim_check_health(dev))
				return -EIO;
		}
		if (use_irq)
			continue;
		if (atomic)
			udelay(RSIM_ADMIN_POLL_US);
		else
			usleep_range(20, 100);
	}
}

/*
 * Run one admin command.  cmd is the 64-byte command with the opcode set
 * in dword 0 (the id is filled in here); the completion is copied to cqe.
 * atomic: the caller cannot sleep (polls instead).  Returns 0 or the errno
 * of the completion status; -EIO if the device is dead; -ETIMEDOUT (and
 * the device is declared dead) if no completion came within ADMIN_TIMEOUT.
 */
int rsim_admin_exec(struct rsim_dev *dev, struct rsim_admin_cmd *cmd,
		    struct rsim_admin_cqe *cqe, bool atomic)
{
	struct rsim_admin *aq = &dev->aq;
	u8 opcode = FIELD_GET(R_RSIM_CMD_HDR_OPCODE_MASK,
			      le32_to_cpu(cmd->dw0));
	struct rsim_admin_slot *slot = NULL;
	unsigned long flags;
	ktime_t deadline;
	u32 i, dw0;
	u8 status;
	int err;

	if (rsim_dead(dev))
		return -EIO;
	deadline = ktime_add_ms(ktime_get(), dev->caps.admin_timeout_ms);
	err = rsim_admin_take_slot(dev, atomic, deadline);
	if (err) {
		if (err == -ETIMEDOUT)
			rsim_log(err, dev,
				 "admin queue stuck: no free slot for %s within %u ms\n",
				 rsim_opcode_name(opcode),
				 dev->caps.admin_timeout_ms);
		return rsim_dead(dev) ? -EIO : err;
	}

	spin_lock_irqsave(&aq->lock, flags);
	if (rsim_dead(dev)) {
		spin_unlock_irqrestore(&aq->lock, flags);
		up(&aq->avail);
		return -EIO;
	}
	for (i = 0; i < aq->depth; i++) {
		if (!aq->slots[i].busy) {
			slot = &aq->slots[i];
			break;
		}
	}
	if (WARN_ON(!slot)) {
		spin_unlock_irqrestore(&aq->lock, flags);
		up(&aq->avail);
		return -EIO;
	}
	slot->busy = true;
	slot->completed = false;
	reinit_completion(&slot->done);
	aq->gen++;
	slot->id = i | (u16)aq->gen << 8;
	dw0 = le32_to_cpu(cmd->dw0) & ~R_RSIM_CMD_HDR_ID_MASK;
	dw0 |= FIELD_PREP(R_RSIM_CMD_HDR_ID_MASK, slot->id);
	cmd->dw0 = cpu_to_le32(dw0);
	memcpy(aq->sq.va + aq->sq_tail * RSIM_AQ_ENTRY_SIZE, cmd, sizeof(*cmd));
	aq->at[aq->sq_tail] = slot;
	aq->sq_tail = (aq->sq_tail + 1) & (aq->depth - 1);
	/* writel orders the command in memory before the doorbell. */
	rsim_wr32(dev, A_RSIM_AQ_TAIL, aq->sq_tail);
	spin_unlock_irqrestore(&aq->lock, flags);

	err = rsim_admin_wait(dev, slot, atomic, deadline);
	if (err) {
		rsim_admin_release_slot(dev, slot);
		if (err == -ETIMEDOUT) {
			rsim_log(err, dev,
				 "admin command %s (id 0x%04x) timed out after %u ms (AQ head %u tail %u, ACQ tail %u head %u)\n",
				 rsim_opcode_name(opcode), slot->id,
				 dev->caps.admin_timeout_ms,
				 rsim_rd32(dev, A_RSIM_AQ_HEAD), aq->sq_tail,
				 rsim_rd32(dev, A_RSIM_ACQ_TAIL), aq->cq_head);
			rsim_dev_fatal(dev, "admin command timeout");
			return -ETIMEDOUT;
		}
		return err;
	}
	if (slot->damaged) {
		rsim_admin_release_slot(dev, slot);
		return -EIO;
	}
	if (cqe)
		memcpy(cqe, &slot->cqe, sizeof(*cqe));
	status = FIELD_GET(R_RSIM_CQE_HDR_STATUS_MASK,
			   le32_to_cpu(slot->cqe.dw0));
	rsim_admin_release_slot(dev, slot);
	err = rsim_status_to_errno(status);
	/* Only a status the datasheet does not define maps to -EIO. */
	if (err == -EIO)
		rsim_log(warn_ratelimited, dev,
			 "admin command %s completed with unknown status 0x%02x: it fails with -EIO\n",
			 rsim_opcode_name(opcode), status);
	else if (err)
		rsim_log(dbg, dev, "admin command %s failed: status 0x%02x (%d)\n",
			 rsim_opcode_name(opcode), status, err);
	return err;
}

/* ---- Health ------------------------------------------------------------ */

const char *rsim_fatal_reason_name(u32 reason)
{
	switch (reason) {
	case RSIM_FATAL_NONE:
		return "none";
	case RSIM_FATAL_BAD_ADMIN_CONFIG:
		return "bad admin queue configuration";
	case RSIM_FATAL_ADMIN_DMA:
		return "admin queue DMA failed";
	case RSIM_FATAL_AEQ_DMA:
		return "async event queue DMA failed";
	case RSIM_FATAL_EQ_DMA:
		return "completion event queue DMA failed";
	default:
		return "unknown";
	}
}

/*
 * The device cannot be used any more (fatal error, no answer, gone).
 * Any context.  The device is reset so that it stops touching memory;
 * from now on commands fail with -EIO, destroys only free host resources
 * and kernel work requests complete with WR_FLUSH_ERR in software.
 */
void rsim_dev_fatal(struct rsim_dev *dev, const char *why)
{
	u32 status;

	if (test_and_set_bit(RSIM_FLAG_DEAD, &dev->flags))
		return;
	status = rsim_rd32(dev, A_RSIM_DEV_STATUS);
	if (status == ~0u)
		rsim_log(err, dev,
			 "device lost (%s; registers read all ones): RDMA and Ethernet stop; remove the driver\n",
			 why);
	else
		rsim_log(err, dev,
			 "device failed (%s; DEV_STATUS 0x%08x, fatal reason %u: %s): resetting it; RDMA and Ethernet stop until the driver is reloaded\n",
			 why, status,
			 (u32)FIELD_GET(R_RSIM_DEV_STATUS_FATAL_REASON_MASK,
					status),
			 rsim_fatal_reason_name(FIELD_GET(R_RSIM_DEV_STATUS_FATAL_REASON_MASK,
							  status)));
	/* After a reset the device never touches guest memory again. */
	rsim_wr32(dev, A_RSIM_DEV_CTRL, R_RSIM_DEV_CTRL_RESET_MASK);
	rsim_admin_fail_all(dev);
	schedule_work(&dev->fatal_work);
}

/* Returns false (and declares the device dead) if it stopped working. */
bool rsim_check_health(struct rsim_dev *dev)
{
	u32 status;

	if (rsim_dead(dev))
		return false;
	status = rsim_rd32(dev, A_RSIM_DEV_STATUS);
	if (status == ~0u) {
		rsim_dev_fatal(dev, "DEV_STATUS reads all ones");
		return false;
	}
	if (status & R_RSIM_DEV_STATUS_FATAL_MASK) {
		rsim_dev_fatal(dev, "DEV_STATUS.FATAL is set");
		return false;
	}
	if (!(status & R_RSIM_DEV_STATUS_READY_MASK)) {
		rsim_dev_fatal(dev, "DEV_STATUS.READY went to 0");
		return false;
	}
	return true;
}

void rsim_destroy_refused(struct rsim_dev *dev, const char *what, u32 num,
			  int err)
{
	if (rsim_dead(dev))
		return;
	/*
	 * The device still holds an object the verbs layer destroys: it may
	 * keep using memory we are about to free.  Stop it.
	 */
	rsim_log(err, dev, "device refused to destroy %s %u (%d)\n",
		 what, num, err);
	rsim_dev_fatal(dev, "destroy refused");
}

/* ---- DMA buffers shared with the device -------------------------------- */

void rsim_dma_free(struct rsim_dev *dev, struct rsim_dma_buf *b)
{
	if (b->va)
		dma_free_coherent(&dev->pdev->dev, b->size, b->va, b->dma);
	b->va = NULL;
}

int rsim_dma_alloc(struct rsim_dev *dev, struct rsim_dma_buf *b, size_t size)
{
	b->size = size;
	b->va = dma_alloc_coherent(&dev->pdev->dev, size, &b->dma, GFP_KERNEL);
	return b->va ? 0 : -ENOMEM;
}
