// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma-sim guest driver: the work requests of kernel users, and what the
 * device says about them.
 *
 * A kernel user's wr_id is usually a pointer (struct ib_cqe) that the core
 * calls through when the work request completes, so the device is never
 * asked to give one back: each kernel SQ, RQ and SRQ keeps its work
 * requests in a table with an entry per ring slot, and the WQE carries a
 * cookie in place of the wr_id: the queue (kind and number), the slot and
 * a sequence number.  A completion counts for the work request its cookie
 * names if that one is outstanding.  The rest of it is checked against
 * the record (the QP, the opcode of a send, a receive's length within its
 * buffers, a known status); one that disagrees is reported and completes
 * its work request with an error.  A completion whose cookie is damaged
 * goes to the work request its QP and direction have next, as an error.
 *
 * An SQ and an RQ complete in order, so a completion also retires the work
 * requests before it: unsignaled sends silently, the others (whose
 * completion the device lost) with an error completion each; nothing is
 * left waiting for a completion that will not come.  A slot is reused
 * only when its work request is retired.  An SRQ completes out of order
 * (its receives go to several QPs): its records are not its ring slots, a
 * receive takes any free one, so a receive whose completion the device
 * lost keeps one record, not the ring slot the ring comes back to.
 *
 * Each queue has one consumer, the poller of its CQ (CQ lock held; an SRQ
 * also takes its own lock, as several CQs complete its work requests),
 * and one producer, the poster (the SQ's, RQ's or SRQ's lock).  The
 * producer writes an entry before the device can see the WQE; the
 * consumer reads it after the device's completion, and publishes a
 * retirement (done) after it cleared the entries.
 */

#include <linux/random.h>

#include "rsim.h"

/* A cookie: the device hands it back in the completion's wr_id. */
#define RSIM_COOKIE_SLOT	GENMASK_ULL(15, 0)
#define RSIM_COOKIE_KIND	GENMASK_ULL(17, 16)
#define RSIM_COOKIE_OWNER	GENMASK_ULL(41, 18)
#define RSIM_COOKIE_SEQ		GENMASK_ULL(63, 42)

int rsim_kwq_init(struct rsim_kwq *q, u8 kind, u32 owner, u32 depth)
{
	/* The owner's number comes from the device: it must fit. */
	if (owner > FIELD_MAX(RSIM_COOKIE_OWNER) ||
	    depth - 1 > FIELD_MAX(RSIM_COOKIE_SLOT))
		return -EIO;
	q->wrs = kvcalloc(depth, sizeof(*q->wrs), GFP_KERNEL);
	if (!q->wrs)
		return -ENOMEM;
	q->mask = depth - 1;
	q->done = 0;
	q->flushed = 0;
	/* a queue of a reused QPN does not take the old one's cookies */
	q->seq = get_random_u32();
	q->owner = owner;
	q->kind = kind;
	return 0;
}

void rsim_kwq_free(struct rsim_kwq *q)
{
	kvfree(q->wrs);
	q->wrs = NULL;
}

/* No room at prod: the slot after it holds the oldest unretired request. */
bool rsim_kwq_full(const struct rsim_kwq *q, u32 prod)
{
	/* Pairs with the release in rsim_kwq_retire: its entries are free. */
	return ((prod + 1) & q->mask) == smp_load_acquire(&q->done);
}

/*
 * A free record of an SRQ (its lock held), searched from the one after
 * the last taken; -1 if there is none.
 */
int rsim_kwq_srq_slot(struct rsim_kwq *q)
{
	u32 i, r;

	for (i = 0; i <= q->mask; i++) {
		r = (q->done + i) & q->mask;
		if (!q->wrs[r].seq) {
			q->done = (r + 1) & q->mask;
			return r;
		}
	}
	return -1;
}

static u64 rsim_cookie(const struct rsim_kwq *q, u32 slot)
{
	return FIELD_PREP(RSIM_COOKIE_SLOT, slot) |
	       FIELD_PREP(RSIM_COOKIE_KIND, q->kind) |
	       FIELD_PREP(RSIM_COOKIE_OWNER, q->owner) |
	       FIELD_PREP(RSIM_COOKIE_SEQ, q->wrs[slot].seq);
}

/* Record a work request in slot; returns the cookie for its WQE. */
u64 rsim_kwq_post(struct rsim_kwq *q, u32 slot, u64 wr_id, u8 opcode,
		  u32 len, bool signaled)
{
	struct rsim_kwr *w = &q->wrs[slot];

	q->seq = (q->seq + 1) & FIELD_MAX(RSIM_COOKIE_SEQ);
	if (!q->seq)
		q->seq = 1;
	w->wr_id = wr_id;
	w->opcode = opcode;
	w->len = len;
	w->signaled = signaled;
	w->seq = q->seq;
	return rsim_cookie(q, slot);
}

/*
 * The opcode the device gives the completion of a send work request: its
 * own (RSIM_WC_*), which the kernel's need not be (rsim_ib_wc_opcode).
 */
u8 rsim_wc_opcode(enum ib_wr_opcode opcode)
{
	switch (opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return RSIM_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return RSIM_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return RSIM_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return RSIM_WC_FETCH_ADD;
	case IB_WR_LOCAL_INV:
		return RSIM_WC_LOCAL_INV;
	case IB_WR_REG_MR:
		return RSIM_WC_REG_MR;
	default:
		return RSIM_WC_SEND;
	}
}

/*
 * The kernel's opcode for a send completion of opcode (rsim_wc_opcode's).
 * IB_WC_REG_MR moved (8 in 6.1, 10 in 6.12, after IB_WC_ATOMIC_WRITE), so
 * the values are mapped, not assumed equal.
 */
static enum ib_wc_opcode rsim_ib_wc_opcode(u8 opcode)
{
	switch (opcode) {
	case RSIM_WC_RDMA_WRITE:
		return IB_WC_RDMA_WRITE;
	case RSIM_WC_RDMA_READ:
		return IB_WC_RDMA_READ;
	case RSIM_WC_COMP_SWAP:
		return IB_WC_COMP_SWAP;
	case RSIM_WC_FETCH_ADD:
		return IB_WC_FETCH_ADD;
	case RSIM_WC_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case RSIM_WC_REG_MR:
		return IB_WC_REG_MR;
	default:
		return IB_WC_SEND;
	}
}

static bool rsim_wc_status_known(u32 status)
{
	switch (status) {
	case RSIM_WC_SUCCESS:
	case RSIM_WC_LOC_LEN_ERR:
	case RSIM_WC_LOC_QP_OP_ERR:
	case RSIM_WC_LOC_PROT_ERR:
	case RSIM_WC_WR_FLUSH_ERR:
	case RSIM_WC_BAD_RESP_ERR:
	case RSIM_WC_LOC_ACCESS_ERR:
	case RSIM_WC_REM_INV_REQ_ERR:
	case RSIM_WC_REM_ACCESS_ERR:
	case RSIM_WC_REM_OP_ERR:
	case RSIM_WC_RETRY_EXC_ERR:
	case RSIM_WC_RNR_RETRY_EXC_ERR:
	case RSIM_WC_FATAL_ERR:
	case RSIM_WC_GENERAL_ERR:
		return true;
	default:
		return false;
	}
}

static bool rsim_wc_is_recv(u32 opcode)
{
	return opcode == RSIM_WC_RECV || opcode == RSIM_WC_RECV_RDMA_WITH_IMM;
}

/* All that a completion says but its wr_id and QP. */
void rsim_cqe_to_wc(const struct rsim_cqe *cqe, struct ib_wc *wc)
{
	u32 flags = le32_to_cpu(cqe->wc_flags);

	wc->status = le32_to_cpu(cqe->status);
	wc->opcode = le32_to_cpu(cqe->opcode);
	wc->vendor_err = le32_to_cpu(cqe->vendor_err);
	wc->byte_len = le32_to_cpu(cqe->byte_len);
	wc->src_qp = le32_to_cpu(cqe->src_qp);
	wc->wc_flags = 0;
	if (flags & RSIM_WC_GRH)
		wc->wc_flags |= IB_WC_GRH;
	if (flags & RSIM_WC_WITH_IMM) {
		wc->wc_flags |= IB_WC_WITH_IMM;
		wc->ex.imm_data = (__force __be32)cqe->ex;
	} else if (flags & RSIM_WC_WITH_INV) {
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
		wc->ex.invalidate_rkey = le32_to_cpu(cqe->ex);
	}
	wc->pkey_index = le16_to_cpu(cqe->pkey_index);
	wc->slid = le16_to_cpu(cqe->slid);
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
	wc->port_num = cqe->port_num ?: 1;
}

/*
 * RoCE has no SL: a UD completion's sl says how the datagram came, which a
 * kernel consumer reads as network_hdr_type (a process reads sl itself).
 */
static void rsim_wc_net_type(struct ib_wc *wc)
{
	u8 sl = wc->sl;

	wc->sl = 0;
	if (!(sl & RSIM_CQE_SL_UDP))
		return;
	switch (sl & RSIM_CQE_SL_L3_MASK) {
	case RSIM_CQE_SL_L3_IPV4:
		wc->network_hdr_type = RDMA_NETWORK_IPV4;
		wc->wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
		break;
	case RSIM_CQE_SL_L3_IPV6:
		wc->network_hdr_type = RDMA_NETWORK_IPV6;
		wc->wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
		break;
	default:	/* the core reads the type from the GRH */
		break;
	}
}

/* What one completion of a kernel CQ is about */
struct rsim_kcqe {
	struct rsim_cqe cqe;
	struct rsim_qp *qp;	/* referenced */
	struct rsim_srq *srq;	/* referenced */
	struct rsim_kwq *q;
	u32 slot;
	const char *bad;	/* the field that disagrees, if one does */
};

static void rsim_kcqe_put(struct rsim_kcqe *k)
{
	if (k->qp)
		rsim_qp_put(k->qp);
	if (k->srq)
		rsim_srq_put(k->srq);
	k->qp = NULL;
	k->srq = NULL;
}

/* The kernel queue on this CQ a cookie names, or NULL */
static struct rsim_kwq *rsim_cookie_queue(struct rsim_dev *dev,
					  struct rsim_cq *cq,
					  struct rsim_kcqe *k, u64 cookie)
{
	u32 owner = FIELD_GET(RSIM_COOKIE_OWNER, cookie);
	struct rsim_qp *qp;

	switch (FIELD_GET(RSIM_COOKIE_KIND, cookie)) {
	case RSIM_KWQ_SQ:
	case RSIM_KWQ_RQ:
		qp = rsim_qp_get(dev, owner);
		k->qp = qp;
		if (!qp || qp->user)
			return NULL;
		if (FIELD_GET(RSIM_COOKIE_KIND, cookie) == RSIM_KWQ_SQ)
			return qp->ibqp.send_cq == &cq->ibcq ? &qp->skwq : NULL;
		return qp->has_rq && qp->ibqp.recv_cq == &cq->ibcq ?
		       &qp->rkwq : NULL;
	case RSIM_KWQ_SRQ:
		k->srq = rsim_srq_get(dev, owner);
		return k->srq && !k->srq->user ? &k->srq->kwq : NULL;
	default:
		return NULL;
	}
}

/* The slot of the oldest outstanding request a completion can be for */
static bool rsim_kwq_next(const struct rsim_kwq *q, u32 prod, bool flush,
			  u32 *slot)
{
	u32 i;

	for (i = q->done; i != prod; i = (i + 1) & q->mask) {
		if (q->wrs[i].seq && (flush || q->wrs[i].signaled)) {
			*slot = i;
			return true;
		}
	}
	return false;
}

/* The producer index of a QP's SQ or RQ */
static u32 rsim_kwq_prod(const struct rsim_kcqe *k)
{
	if (k->q->kind == RSIM_KWQ_SQ)
		return READ_ONCE(k->qp->sq_prod);
	return READ_ONCE(k->qp->rq_prod);
}

/*
 * Find the work request a completion is for.  Returns false if it is for
 * none: the completion is dropped.
 */
static bool rsim_kcqe_find(struct rsim_dev *dev, struct rsim_cq *cq,
			   struct rsim_kcqe *k)
{
	u64 cookie = le64_to_cpu(k->cqe.wr_id);
	u32 qpn = le32_to_cpu(k->cqe.qp_num);
	u32 status = le32_to_cpu(k->cqe.status);
	struct rsim_qp *qp;

	k->q = rsim_cookie_queue(dev, cq, k, cookie);
	if (k->q) {
		k->slot = FIELD_GET(RSIM_COOKIE_SLOT, cookie);
		if (k->slot <= k->q->mask && k->q->wrs[k->slot].seq &&
		    k->q->wrs[k->slot].seq == FIELD_GET(RSIM_COOKIE_SEQ, cookie))
			return true;
		/* A software flush repeats what the device completed. */
		if (status != RSIM_WC_WR_FLUSH_ERR)
			ibdev_warn_ratelimited(&dev->ibdev,
					       "CQ %u: completion (QP %u, status %u) for a work request no longer outstanding dropped\n",
					       cq->cqn, qpn, status);
		return false;
	}
	rsim_kcqe_put(k);

	/* The cookie is damaged: the QP's next request in that direction */
	qp = rsim_qp_get(dev, qpn);
	k->qp = qp;
	if (qp && !qp->user &&
	    rsim_wc_is_recv(le32_to_cpu(k->cqe.opcode)) && qp->has_rq &&
	    qp->ibqp.recv_cq == &cq->ibcq)
		k->q = &qp->rkwq;
	else if (qp && !qp->user &&
		 !rsim_wc_is_recv(le32_to_cpu(k->cqe.opcode)) &&
		 qp->ibqp.send_cq == &cq->ibcq)
		k->q = &qp->skwq;
	if (!k->q || !rsim_kwq_next(k->q, rsim_kwq_prod(k),
				    status == RSIM_WC_WR_FLUSH_ERR,
				    &k->slot)) {
		ibdev_warn_ratelimited(&dev->ibdev,
				       "CQ %u: completion for no work request (wr_id 0x%llx, QP %u, opcode %u) dropped\n",
				       cq->cqn, cookie, qpn,
				       le32_to_cpu(k->cqe.opcode));
		return false;
	}
	k->bad = "wr_id";
	return true;
}

/* Whether the rest of a completion agrees with its work request */
static void rsim_kcqe_check(struct rsim_dev *dev, struct rsim_cq *cq,
			    struct rsim_kcqe *k)
{
	const struct rsim_kwr *w = &k->q->wrs[k->slot];
	u32 status = le32_to_cpu(k->cqe.status);
	u32 opcode = le32_to_cpu(k->cqe.opcode);
	struct rsim_qp *qp;

	if (k->srq) {
		/* The QP of an SRQ's receive is only in the completion. */
		qp = rsim_qp_get(dev, le32_to_cpu(k->cqe.qp_num));
		k->qp = qp;
		if (!qp || qp->user || qp->ibqp.srq != &k->srq->ibsrq ||
		    qp->ibqp.recv_cq != &cq->ibcq)
			k->bad = "qp_num";
	} else if (le32_to_cpu(k->cqe.qp_num) != k->qp->qpn) {
		k->bad = "qp_num";
	}
	if (k->bad)
		return;
	if (!rsim_wc_status_known(status))
		k->bad = "status";
	else if ((status == RSIM_WC_SUCCESS ||
		  status == RSIM_WC_WR_FLUSH_ERR) &&
		 (k->q->kind == RSIM_KWQ_SQ ? opcode != w->opcode :
		  !rsim_wc_is_recv(opcode)))
		k->bad = "opcode";
	else if (status == RSIM_WC_SUCCESS &&
		 le32_to_cpu(k->cqe.byte_len) > w->len)
		k->bad = "byte_len";
}

/*
 * Retire slot, and with it those before it in an SQ or RQ.  An SRQ's
 * record is free again (its lock held).
 */
static void rsim_kwq_retire(struct rsim_kwq *q, u32 slot)
{
	u32 done = q->done;

	q->wrs[slot].seq = 0;
	if (q->kind == RSIM_KWQ_SRQ)
		return;
	for (; done != slot; done = (done + 1) & q->mask)
		q->wrs[done].seq = 0;
	/* Pairs with the acquire in rsim_kwq_full. */
	smp_store_release(&q->done, (slot + 1) & q->mask);
}

static void rsim_kwr_to_wc(const struct rsim_kcqe *k, u32 slot,
			   struct ib_wc *wc)
{
	const struct rsim_kwr *w = &k->q->wrs[slot];

	wc->wr_id = w->wr_id;
	wc->qp = &k->qp->ibqp;
	if (k->q->kind == RSIM_KWQ_SQ)
		wc->opcode = rsim_ib_wc_opcode(w->opcode);
	else if (!rsim_wc_is_recv(wc->opcode))
		wc->opcode = IB_WC_RECV;
}

/*
 * One work completion from k, the completion of a kernel CQ found for its
 * work request (CQ lock held; an SRQ's lock as well).  Returns whether the
 * completion is used up; *filled, whether *wc is.  A request before it
 * that lost its completion is reported first, and the completion stays for
 * the next call.
 */
static bool rsim_kcqe_complete(struct rsim_dev *dev, struct rsim_cq *cq,
			       struct rsim_kcqe *k, struct ib_wc *wc,
			       bool *filled)
{
	const struct rsim_cqe *cqe = &k->cqe;
	u32 lost;

	/* In order: requests before it are done, and tell if they lost one */
	while (k->q->kind != RSIM_KWQ_SRQ && k->q->done != k->slot) {
		lost = k->q->done;
		if (!k->q->wrs[lost].signaled) {
			rsim_kwq_retire(k->q, lost);
			continue;
		}
		ibdev_warn_ratelimited(&dev->ibdev,
				       "CQ %u: the device lost the completion of a work request of QP %u: it completes with an error\n",
				       cq->cqn, k->q->owner);
		memset(wc, 0, sizeof(*wc));
		wc->status = IB_WC_GENERAL_ERR;
		wc->port_num = 1;
		rsim_kwr_to_wc(k, lost, wc);
		rsim_kwq_retire(k->q, lost);
		*filled = true;
		return false;
	}
	rsim_kcqe_check(dev, cq, k);
	memset(wc, 0, sizeof(*wc));
	if (k->bad) {
		/* An SRQ's receive without its QP cannot be reported. */
		ibdev_warn_ratelimited(&dev->ibdev,
				       "CQ %u: completion with a damaged %s (wr_id 0x%llx, status %u, opcode %u, QP %u, length %u): %s\n",
				       cq->cqn, k->bad, le64_to_cpu(cqe->wr_id),
				       le32_to_cpu(cqe->status),
				       le32_to_cpu(cqe->opcode),
				       le32_to_cpu(cqe->qp_num),
				       le32_to_cpu(cqe->byte_len),
				       k->srq ? "dropped" :
				       "its work request completes with an error");
		wc->status = IB_WC_GENERAL_ERR;
		wc->port_num = 1;
	} else {
		rsim_cqe_to_wc(cqe, wc);
		rsim_wc_net_type(wc);
	}
	if (k->qp && (!k->srq || !k->bad)) {
		rsim_kwr_to_wc(k, k->slot, wc);
		*filled = true;
	}
	rsim_kwq_retire(k->q, k->slot);
	return true;
}

/*
 * One work completion from the completion cqe of a kernel CQ (lock held):
 * rsim_kcqe_complete() with the SRQ's lock if the completion is an SRQ's.
 */
static bool rsim_kcqe_poll(struct rsim_dev *dev, struct rsim_cq *cq,
			   const struct rsim_cqe *cqe, struct ib_wc *wc,
			   bool *filled)
{
	struct rsim_kcqe k = { .cqe = *cqe };
	unsigned long flags;
	bool used = true;

	*filled = false;
	if (!rsim_kcqe_find(dev, cq, &k))
		goto out;
	if (!k.srq) {
		used = rsim_kcqe_complete(dev, cq, &k, wc, filled);
		goto out;
	}
	spin_lock_irqsave(&k.srq->lock, flags);
	/* The poller of another CQ may have retired it meanwhile. */
	if (k.q->wrs[k.slot].seq ==
	    FIELD_GET(RSIM_COOKIE_SEQ, le64_to_cpu(cqe->wr_id)))
		used = rsim_kcqe_complete(dev, cq, &k, wc, filled);
	spin_unlock_irqrestore(&k.srq->lock, flags);
out:
	rsim_kcqe_put(&k);
	return used;
}

/* Poll a kernel CQ (its lock held). */
int rsim_kcq_poll(struct rsim_dev *dev, struct rsim_cq *cq, int num,
		  struct ib_wc *wc)
{
	u32 prod = rsim_ring_load_prod(&cq->ring);
	struct rsim_cqe cqe;
	bool filled;
	int n = 0;

	while (n < num && cq->cons != prod) {
		/* Read the entry once: the checks see what is used. */
		memcpy(&cqe, rsim_ring_elem(&cq->ring, cq->cons), sizeof(cqe));
		if (rsim_kcqe_poll(dev, cq, &cqe, &wc[n], &filled))
			cq->cons = (cq->cons + 1) & cq->ring.mask;
		n += filled;
	}
	rsim_ring_store_cons(&cq->ring, cq->cons);
	return n;
}

/* Dead device: write a completion in place of the device (CQ lock held). */
static bool rsim_cq_sw_post(struct rsim_cq *cq, const struct rsim_cqe *cqe)
{
	u32 prod = rsim_ring_load_prod(&cq->ring);

	if (cq->user || ((prod + 1) & cq->ring.mask) == cq->cons)
		return false;
	memcpy(rsim_ring_elem(&cq->ring, prod), cqe, sizeof(*cqe));
	rsim_ring_store_prod(&cq->ring, prod + 1);
	return true;
}

/*
 * Dead device: complete the outstanding work requests of a kernel queue
 * with WR_FLUSH_ERR in software, as the device would have.  A completion
 * the device wrote and nobody polled yet is repeated; the repetition is
 * dropped when polled.
 */
static void rsim_kwq_sw_flush(struct rsim_qp *qp, struct rsim_kwq *q,
			      spinlock_t *lock, const u32 *prod,
			      struct ib_cq *ibcq)
{
	struct rsim_cq *cq = to_rcq(ibcq);
	unsigned long flags, cflags;
	struct rsim_cqe cqe;
	u32 i;

	spin_lock_irqsave(lock, flags);
	spin_lock_irqsave(&cq->lock, cflags);
	/* From the oldest unretired, or past what an earlier flush did */
	i = ((q->flushed - q->done) & q->mask) <= ((*prod - q->done) & q->mask) ?
	    q->flushed : q->done;
	for (; i != *prod && !cq->resizing; i = (i + 1) & q->mask) {
		if (!q->wrs[i].seq)
			continue;
		memset(&cqe, 0, sizeof(cqe));
		cqe.wr_id = cpu_to_le64(rsim_cookie(q, i));
		cqe.status = cpu_to_le32(RSIM_WC_WR_FLUSH_ERR);
		cqe.opcode = cpu_to_le32(q->kind == RSIM_KWQ_SQ ?
					 q->wrs[i].opcode : RSIM_WC_RECV);
		cqe.qp_num = cpu_to_le32(qp->qpn);
		cqe.port_num = 1;
		if (!rsim_cq_sw_post(cq, &cqe))
			break;
	}
	q->flushed = i;
	spin_unlock_irqrestore(&cq->lock, cflags);
	spin_unlock_irqrestore(lock, flags);
}

void rsim_qp_sw_flush(struct rsim_dev *dev, struct rsim_qp *qp)
{
	if (qp->user)
		return;
	rsim_kwq_sw_flush(qp, &qp->skwq, &qp->sq_lock, &qp->sq_prod,
			  qp->ibqp.send_cq);
	if (qp->has_rq)
		rsim_kwq_sw_flush(qp, &qp->rkwq, &qp->rq_lock, &qp->rq_prod,
				  qp->ibqp.recv_cq);
}

/*
 * A kernel QP went to RESET: the device emptied its rings, and their work
 * requests went with them (no completions, as IBTA says for RESET).  The
 * records start again at slot 0 with the rings; a completion of an old
 * request still in the CQ names a cookie no record has and is dropped.
 * Before, the records kept the old requests: the next completion reported
 * them as lost, with their wr_id, and the ring filled up early.
 */
static void rsim_kwq_reset(struct rsim_kwq *q, spinlock_t *lock, u32 *prod,
			   struct ib_cq *ibcq)
{
	struct rsim_cq *cq = to_rcq(ibcq);
	unsigned long flags, cflags;
	u32 i;

	spin_lock_irqsave(lock, flags);
	spin_lock_irqsave(&cq->lock, cflags);
	/* Its poster's and its poller's locks are held: plain stores do. */
	for (i = 0; i <= q->mask; i++)
		q->wrs[i].seq = 0;
	q->flushed = 0;
	q->done = 0;
	*prod = 0;
	spin_unlock_irqrestore(&cq->lock, cflags);
	spin_unlock_irqrestore(lock, flags);
}

void rsim_qp_kwq_reset(struct rsim_qp *qp)
{
	if (qp->user)
		return;
	rsim_kwq_reset(&qp->skwq, &qp->sq_lock, &qp->sq_prod,
		       qp->ibqp.send_cq);
	if (qp->has_rq)
		rsim_kwq_reset(&qp->rkwq, &qp->rq_lock, &qp->rq_prod,
			       qp->ibqp.recv_cq);
}
